//! The PLD (fast) and RDP calibrations of label-free DP-CDA as plain wasm exports, for timing
//! from Node (`run.mjs`): no bindings, numbers in, σ out (NaN on error).

use privmix::accountant::calibrate::Goal;
use privmix::accountant::default_orders;
use privmix::accountant::pld::mechanisms::{calibrate_cda, Adjacency};
use privmix::accountant::pld::PldOptions;
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy, CdaShape};

/// σx calibrated by the PLD accountant (`standard` ≠ 0: standard adjacency).
#[no_mangle]
pub extern "C" fn pld_sigma(pool: u32, mix: u32, samples: u32, eps: f64, standard: u32) -> f64 {
    let p = CdaPrivacy {
        pool: pool as u64,
        mix,
        clip: 1.0,
        sigma_x: 1.0,
        sigma_y: None,
        samples: samples as u64,
    };
    let adj = if standard != 0 {
        Adjacency::Standard
    } else {
        Adjacency::LabelKept
    };
    calibrate_cda(&p, adj, eps, 1e-5, &PldOptions::calibration()).map_or(f64::NAN, |r| r.0)
}

/// σx calibrated by the RDP accountant.
#[no_mangle]
pub extern "C" fn rdp_sigma(pool: u32, mix: u32, samples: u32, eps: f64) -> f64 {
    calibrate_sigma_x(
        &CdaShape {
            pool: pool as u64,
            mix,
            clip: 1.0,
            sigma_y: None,
            samples: samples as u64,
        },
        &Goal::new(eps, 1e-5, &default_orders()),
    )
    .map_or(f64::NAN, |c| c.sigma_x)
}

/// σx of the page's live readout (`noisePreview`, PLD by default): `classes` classes of `pool`
/// rows, 784 features, l = 4, T = the input's rows (`standard` ≠ 0: standard adjacency).
#[no_mangle]
pub extern "C" fn preview_sigma(pool: u32, classes: u32, eps: f64, standard: u32) -> f64 {
    let r = privmix::api::PreviewRequest {
        class_sizes: vec![u64::from(pool); classes as usize],
        epsilon: eps,
        delta: 1e-5,
        features: 784,
        mix: Some(privmix::api::MixChoice::Fixed(4)),
        samples: None,
        clip: None,
        normalize_share: Some(0.1),
        preset: None,
        accountant: None,
        adjacency: Some(
            if standard != 0 {
                "standard"
            } else {
                "keep-label"
            }
            .into(),
        ),
    };
    privmix::api::preview(&r).map_or(f64::NAN, |p| p.sigma_x)
}
