//! The output shape of an image synthesis, decided under differential privacy.
//!
//! Every image is resized to one shape `width × height × channels`. Where the options leave
//! any of the three open, the shape depends on the images, and since it is part of the output
//! (the PNGs' size, the receipt, the noise scale through the dimension) it may depend on them
//! only through a DP release. This is that release.
//!
//! * **Candidates (public).** An image of size w × h would give the output size
//!   `capped(w, h)`: itself when its longer side is at most `max_side` (an option: public),
//!   else shrunk to `max_side` on its longer side keeping its aspect ratio
//!   (`capped` in the parent module). Every candidate lies in `{1, …, M}²` with `M = max_side`, a set
//!   fixed by the options alone: `M²` bins (1,024 at the default `M` = 32).
//! * **Statistics.** `H_b` = the number of images whose candidate is bin b (for every b of
//!   the M² bins, most of them 0), and `G` = the number of images stored in colour.
//! * **Sensitivity.** Replacing one image moves it from one bin to another (two entries of H
//!   change by 1) and may change whether it is in colour (G changes by at most 1): the L2
//!   sensitivity of (H, G) is at most `√(2·s + c)`, with `s` = 1 when the size is decided and
//!   `c` = 1 when the channel count is (0 otherwise; both fixed by the options).
//! * **Mechanism.** Each statistic gets independent discrete Gaussian noise N_ℤ(0, σ²),
//!   σ ≥ z·Δ, sampled exactly in integer arithmetic
//!   ([`crate::preprocess::dp_counts::CountNoise`]). The statistics are integers and
//!   neighbours differ by an integer vector, so the release has the Gaussian mechanism's RDP
//!   curve α/(2z²), which the synthesis composes into its accounting (component
//!   [`COMPONENT`], through [`crate::pipelines::synth::PriorRelease`]). Every bin gets noise,
//!   also those no image falls in, so the set of bins released does not depend on the data
//!   and no δ is spent.
//! * **Decisions (post-processing).** The size is the bin with the largest noisy count (ties
//!   to the smaller width, then height) if that count clears `margin(4, M²)·σ + 1`
//!   ([`crate::data::decide::margin`]: over M² empty bins the largest noise exceeds it with
//!   probability at most 10⁻³); otherwise no size stood out of the noise and the public
//!   default `M × M` is used, with a warning. The images are in colour (3 channels) iff
//!   the noisy G clears `3σ + 1`, else gray. A width or height the options give wins; the
//!   other follows the decided size's aspect ratio (`shape` in the parent module). All of this reads
//!   only the noisy statistics and public options.
//!
//! The rule without DP ([`super::ShapeRule::Data`]: the most common size, gray iff every
//! file is gray) remains for showing the data's owner what was loaded
//! (`inspectImages`), which releases nothing.

use serde::Serialize;

use super::decode::Header;
use super::{capped, ImageOptions};
use crate::data::decide::{margin, T_INDICATOR, T_TYPE};
use crate::error::Result;
use crate::preprocess::dp_counts::{CountNoise, DISCRETE_TAIL_MARGIN};
use crate::rng::ReleaseRng;

/// The receipt's name of this release's RDP component.
pub const COMPONENT: &str = "dp image shape";

/// What the receipt says about the shape decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeReport {
    /// Noise multiplier z of the Gaussian mechanism.
    pub noise_multiplier: f64,
    /// L2 sensitivity √(2·s + c).
    pub l2_sensitivity: f64,
    /// Noise standard deviation on each count (exact discrete Gaussian, ≥ z·Δ).
    pub noise_std: f64,
    /// Whether the size was decided (not given by the options).
    pub size_decided: bool,
    /// Whether the channel count was decided.
    pub channels_decided: bool,
    /// Number of candidate sizes (M²) that got noise.
    pub candidates: usize,
    /// The decided size (before a given width or height is applied), and its noisy count.
    pub size: Option<(usize, usize)>,
    /// The noisy count of colour images, when the channel count was decided.
    pub noisy_colour: Option<f64>,
    /// Said when no size stood out of the noise (the public default was used).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The outcome of [`decide`]: the size is the report's (a candidate, to which the options'
/// width or height apply: `shape` in the parent module; None when the options give both).
pub(super) struct Decided {
    /// 1 or 3.
    pub channels: usize,
    pub report: ShapeReport,
}

/// Decides the size and the channel count of `headers` under DP with noise multiplier `z`.
/// `None` when the options give width, height and channels (nothing to decide).
pub(super) fn decide(
    headers: &[Header],
    opts: &ImageOptions,
    z: f64,
    rng: &mut ReleaseRng,
) -> Result<Option<Decided>> {
    let size_decided = opts.width.is_none() || opts.height.is_none();
    let channels_decided = opts.channels.is_none();
    if !size_decided && !channels_decided {
        return Ok(None);
    }
    let m = opts.max_side;
    let sens =
        (2.0 * f64::from(u8::from(size_decided)) + f64::from(u8::from(channels_decided))).sqrt();
    let noise = CountNoise::new("image shape decision noise", z, sens)?;
    let sigma = noise.sigma();
    let mut warnings = Vec::new();
    let (size, candidates) = if size_decided {
        let mut counts = vec![0u64; m * m];
        for h in headers {
            let (w, hh) = capped((h.width, h.height), m);
            counts[(w - 1) * m + (hh - 1)] += 1;
        }
        // Noise on every bin, empty or not, in bin order (the mechanism analysed).
        let mut best = (f64::NEG_INFINITY, 0usize);
        for (b, &c) in counts.iter().enumerate() {
            let v = noise.add(c as f64, rng);
            if v > best.0 {
                best = (v, b);
            }
        }
        let threshold = margin(T_TYPE, m * m) * sigma + DISCRETE_TAIL_MARGIN;
        let size = if best.0 > threshold {
            (best.1 / m + 1, best.1 % m + 1)
        } else {
            warnings.push(format!(
                "image shape: {} images are too few for the DP shape decision to see their size (noise of standard deviation {sigma:.0} per count over {} candidate sizes), so they are resized to the default {m}×{m}; give the width and height to choose the shape yourself",
                headers.len(),
                m * m
            ));
            (m, m)
        };
        (Some(size), m * m)
    } else {
        (None, 0)
    };
    let (channels, noisy_colour) = match opts.channels {
        Some(c) => (c, None),
        None => {
            let colour = headers.iter().filter(|h| !h.gray).count();
            let v = noise.add(colour as f64, rng);
            let rgb = v > margin(T_INDICATOR, 1) * sigma + DISCRETE_TAIL_MARGIN;
            (if rgb { 3 } else { 1 }, Some(v))
        }
    };
    let report = ShapeReport {
        noise_multiplier: z,
        l2_sensitivity: sens,
        noise_std: sigma,
        size_decided,
        channels_decided,
        candidates,
        size,
        noisy_colour,
        warnings,
    };
    Ok(Some(Decided { channels, report }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(n: usize, w: usize, h: usize, gray: bool) -> Vec<Header> {
        vec![
            Header {
                width: w,
                height: h,
                gray,
            };
            n
        ]
    }

    /// 600 gray 8×8 images (the digits demo) at z = 5.3 (2 % of ε = 5): 8×8, gray; a set
    /// of 640×480 colour photos with some other sizes: their capped size 32×24, in colour.
    #[test]
    fn a_clear_majority_size_and_colour_are_found() {
        let opts = ImageOptions::default();
        for seed in 1..=20 {
            let mut rng = ReleaseRng::seeded(seed);
            let Decided {
                channels: c,
                report: r,
            } = decide(&headers(600, 8, 8, true), &opts, 5.3, &mut rng)
                .unwrap()
                .unwrap();
            let size = r.size.unwrap();
            assert_eq!((size, c), ((8, 8), 1), "{r:?}");
            assert!(r.warnings.is_empty());
            assert_eq!(r.l2_sensitivity, 3f64.sqrt());
            assert_eq!(r.candidates, 1024);
            let mut photos = headers(300, 640, 480, false);
            photos.extend(headers(40, 500, 500, false));
            photos.extend(headers(10, 16, 16, true));
            let Decided {
                channels: c,
                report: r,
            } = decide(&photos, &opts, 5.3, &mut rng).unwrap().unwrap();
            let size = r.size.unwrap();
            assert_eq!((size, c), ((32, 24), 3));
        }
    }

    /// Too few images for any size to stand out: the public default M × M, with a warning;
    /// given sizes need only the channel decision (sensitivity 1); all given: nothing.
    #[test]
    fn small_sets_get_the_public_default_and_given_parts_are_not_decided() {
        let opts = ImageOptions::default();
        let mut rng = ReleaseRng::seeded(1);
        let Decided {
            channels: c,
            report: r,
        } = decide(&headers(12, 8, 8, true), &opts, 5.3, &mut rng)
            .unwrap()
            .unwrap();
        let size = r.size.unwrap();
        assert_eq!((size, c), ((32, 32), 1));
        assert!(r.warnings[0].contains("12 images are too few"), "{r:?}");
        let given = ImageOptions {
            width: Some(28),
            height: Some(28),
            ..ImageOptions::default()
        };
        let Decided { report: r, .. } = decide(&headers(600, 8, 8, false), &given, 5.3, &mut rng)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.l2_sensitivity, r.size_decided, r.candidates),
            (1.0, false, 0)
        );
        let all = ImageOptions {
            channels: Some(1),
            ..given
        };
        assert!(decide(&headers(5, 8, 8, true), &all, 5.3, &mut rng)
            .unwrap()
            .is_none());
    }

    /// The noisy colour count is the count plus exact discrete Gaussian noise of standard
    /// deviation σ = z·Δ on the count grid (KS at α = 1e-6 over 1,500 runs; twice σ fails).
    #[test]
    fn the_colour_count_carries_discrete_gaussian_noise_ks() {
        use crate::mechanisms::gaussian::ks_crit;
        use crate::mechanisms::noise::ks_discrete_gaussian as ks_discrete;
        let opts = ImageOptions {
            width: Some(8),
            height: Some(8),
            ..ImageOptions::default()
        };
        let (z, set) = (2.0, headers(50, 8, 8, false));
        let grid = CountNoise::new("x", z, 1.0).unwrap().grid();
        let mut sigma = 0.0;
        let xs: Vec<i64> = (0..1500)
            .map(|seed| {
                let mut rng = ReleaseRng::seeded(seed);
                let Decided { report: r, .. } = decide(&set, &opts, z, &mut rng).unwrap().unwrap();
                sigma = r.noise_std;
                let v = r.noisy_colour.unwrap();
                assert_eq!((v / grid).fract(), 0.0, "{v}");
                ((v - 50.0) / grid) as i64
            })
            .collect();
        assert!(sigma >= z && sigma <= z * (1.0 + 1e-9), "{sigma}");
        assert!(ks_discrete(&xs, sigma / grid) < ks_crit(xs.len()));
        assert!(ks_discrete(&xs, sigma / grid * 2.0) > ks_crit(xs.len()));
    }
}
