//! The synthesis receipt with the PLD accountant wired in (DP-CDA): σx is calibrated with the
//! PLD accountant, the receipt's ε is the smaller of the PLD and RDP bounds, both are shown,
//! and the expectations are recomputed here from the library's independent pieces (the RDP
//! accountant re-accounts the σ in the receipt; the PLD plan is rebuilt from the receipt's
//! parameters).

use privmix::accountant::pld::mechanisms::{cda_z, Adjacency, Plan};
use privmix::accountant::pld::PldOptions;
use privmix::accountant::{default_orders, Preset, RdpCurve};
use privmix::mechanisms::cda::accounting::calibrate_sigma_x;
use serde_json::Value;
use std::process::Command;

#[test]
fn cda_receipt_reports_pld_and_rdp_and_takes_the_smaller() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/iris.csv");
    let out = dir.path().join("out.csv");
    let rec = dir.path().join("r.json");
    let target = 2.0;
    let o = Command::new(env!("CARGO_BIN_EXE_privmix"))
        .args([
            "synth",
            "--input",
            data.to_str().unwrap(),
            "--label",
            "species",
            "--epsilon",
            "2",
            "--delta",
            "1e-5",
            "--samples",
            "3000",
            "--output",
            out.to_str().unwrap(),
            "--receipt",
            rec.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let eps = r["epsilon"].as_f64().unwrap();
    let acc = &r["accountant"];
    let e_pld = acc["pld"]["epsilon"].as_f64().expect("pld section");
    let e_rdp = acc["epsilon_rdp"].as_f64().unwrap();
    assert_eq!(eps, e_pld.min(e_rdp));
    assert!(eps <= target && eps > 0.99 * target, "{eps}");
    assert!(acc["pld"]["charge"].as_f64().unwrap() < 1e-7);
    assert!(acc["pld"]["grid_step"].as_f64().unwrap() > 0.0);

    // Recompute both from the receipt's parameters.
    let p = &r["parameters"];
    let sx = p["sigma_x"].as_f64().unwrap();
    let pool = p["pool"].as_u64().unwrap();
    let mix = p["mix"].as_u64().unwrap() as u32;
    let clip = p["clip"].as_f64().unwrap();
    let t = p["compositions"].as_u64().unwrap();
    let z = p["noise_multiplier"].as_f64().unwrap();
    assert!((z - sx / (2.0 * clip / mix as f64)).abs() < 1e-9 * z);
    let delta_rdp = acc["delta_rdp"].as_f64().unwrap();
    let orders = default_orders();
    let norm_z = acc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "dp normalization histograms")
        .map(|c| {
            // The normalization's curve is Gaussian: rdp(α) = α/(2z²).
            let r2 = c["rdp"][0].as_f64().unwrap();
            (2.0 / (2.0 * r2)).sqrt()
        });
    let mut curve = RdpCurve::subsampled_gaussian(
        mix as f64 / pool as f64,
        z,
        &orders,
        Preset::Default.bound(),
    )
    .unwrap()
    .times(t);
    let mut plan = cda_z(mix as f64 / pool as f64, z, t, Adjacency::LabelKept).unwrap();
    if let Some(nz) = norm_z {
        curve = curve
            .compose(&RdpCurve::gaussian(nz, &orders).unwrap())
            .unwrap();
        plan = plan.compose(&Plan::gaussian(nz, 1));
    }
    let rdp_again = curve
        .epsilon(delta_rdp, Preset::Default.conversion())
        .unwrap()
        .epsilon;
    assert!(
        (rdp_again - e_rdp).abs() <= 1e-9 * e_rdp,
        "{rdp_again} vs {e_rdp}"
    );
    let pld_again = plan
        .epsilon(delta_rdp, &PldOptions::default())
        .unwrap()
        .epsilon;
    assert!(
        (pld_again - e_pld).abs() <= 1e-6 * e_pld,
        "{pld_again} vs {e_pld}"
    );
    // PLD is the tighter bound here, so σx is below what RDP calibration alone gives.
    assert!(e_pld < e_rdp);
    let extra = norm_z.map(|nz| RdpCurve::gaussian(nz, &orders).unwrap());
    let rdp_sigma = calibrate_sigma_x(
        pool,
        mix,
        clip,
        None,
        t,
        delta_rdp,
        target,
        &orders,
        Preset::Default,
        extra.as_ref(),
    )
    .unwrap()
    .sigma_x;
    assert!(sx < rdp_sigma, "{sx} vs {rdp_sigma}");
}
