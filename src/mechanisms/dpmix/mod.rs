//! DPMix: random mixing with additive noise (Lee et al. 2019; the BSc thesis "Implementation
//! and Performance Analysis of DPMix Algorithm", 2024, chapter 3).
//!
//! Each synthetic row t draws l distinct rows uniformly from the whole dataset (not per class),
//! and releases
//!
//!   X'_t = (1/l) Σ_{i∈S_t} x_i + N(0, σx² I_dx),   Y'_t = (1/l) Σ_{i∈S_t} y_i + N(0, σy² I_dy),
//!
//! where x_i ∈ [0, 1]^dx are the features and y_i ∈ {0, 1}^dy the one-hot labels (dy = K
//! classes). The noisy label vector is then post-processed: `hard` labels take its argmax;
//! `soft` labels keep it as a probability vector (its Euclidean projection onto the probability
//! simplex), one column per class. The work per row is O(l·(dx + dy)): indices come from
//! Floyd's algorithm, never an n-length weight vector (the thesis code builds one per row: O(n·d)).
//! The feature mix and its noise are drawn by the mixing kernel shared with DP-CDA and the
//! federated pipelines ([`crate::mechanisms::cda::Mixer`]), over the pool of all rows.
//!
//! The class-wise variant (thesis §3.5) mixes l rows of one class and keeps the class as the
//! label; it is [`crate::mechanisms::cda::generate`] in label-free mode on [0, 1]-box features,
//! accounted with DPMix's dimension-dependent sensitivity.
//!
#![doc = include_str!("PROOF.md")]

pub mod accounting;

use super::cda::{unit_box_radius, ExactMixer};
use super::noise::{Bits, DiscreteGaussian};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

named_enum! {
    /// How the noisy label vector is written.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum LabelOutput: "labels" {
        /// The argmax of the noisy mean one-hot vector (one label column).
        Hard = "hard" ("argmax, default"),
        /// The noisy mean one-hot vector projected onto the probability simplex (one column
        /// per class).
        Soft = "soft" ("one probability column per class"),
    }
}

/// What the global noise step needs.
#[derive(Debug, Clone)]
pub struct DpMixConfig {
    /// Mix order l ≥ 1.
    pub mix: usize,
    /// Feature noise std σx > 0.
    pub sigma_x: f64,
    /// Label noise std σy > 0.
    pub sigma_y: f64,
    /// Rows to make, T.
    pub samples: usize,
}

/// The rows DPMix mixes: `features` row-major n × `d` with every entry in [0, 1], and
/// `labels[i] < k` row i's class.
#[derive(Debug, Clone, Copy)]
pub struct LabeledRows<'a> {
    /// Row-major n × d.
    pub features: &'a [f32],
    /// Columns per row.
    pub d: usize,
    /// Each row's class.
    pub labels: &'a [u32],
    /// Classes.
    pub k: usize,
}

/// The global DPMix noise step on `rows`.
///
/// For each of the T rows, `sink(features, label_vector)` gets the noisy feature mix and the
/// noisy mean one-hot label vector (length k, not yet post-processed).
pub fn generate<R: Rng + ?Sized>(
    rows: &LabeledRows<'_>,
    cfg: &DpMixConfig,
    rng: &mut R,
    mut sink: impl FnMut(&[f32], &[f64]) -> Result<()>,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    let &LabeledRows {
        features,
        d,
        labels,
        k,
    } = rows;
    if d == 0 || features.len() != labels.len() * d {
        return Err(Error::Data(
            "internal: DPMix features and labels do not match".into(),
        ));
    }
    let n = labels.len();
    accounting::check_structure(n as u64, cfg.mix as u32, d as u64, cfg.samples as u64)?;
    if cfg.mix > u32::MAX as usize || labels.iter().any(|&c| c as usize >= k) {
        return Err(Error::Data("internal: DPMix label out of range".into()));
    }
    let pool: Vec<u32> = (0..u32::try_from(n).map_err(|_| {
        Error::Data(format!(
            "{n} rows are more than DPMix handles ({}); use fewer rows",
            u32::MAX
        ))
    })?)
        .collect();
    // Features in [0, 1]^d.
    let mixer = ExactMixer::new(features, d, cfg.mix, cfg.sigma_x, unit_box_radius(d))?;
    let labels_noise = LabelNoise::new(cfg.sigma_y, cfg.mix)?;
    let mut acc = vec![0f64; d];
    let mut sum = vec![0i64; d];
    let mut row = vec![0f32; d];
    let mut counts = vec![0i64; k];
    let mut y = vec![0f64; k];
    let step = (cfg.samples / 100).max(1);
    for t in 0..cfg.samples {
        counts.iter_mut().for_each(|v| *v = 0);
        mixer.draw(&pool, &mut acc, &mut sum, rng, |i| {
            counts[labels[i] as usize] += 1
        });
        for (r, a) in row.iter_mut().zip(&acc) {
            *r = *a as f32;
        }
        labels_noise.release(&counts, &mut y, rng);
        sink(&row, &y)?;
        if (t + 1) % step == 0 {
            progress((t + 1) as f64 / cfg.samples as f64)?;
        }
    }
    progress(1.0)?;
    Ok(())
}

/// The label half of a DPMix row with exact noise: the l drawn rows' one-hot labels summed
/// as integer class counts c (exact), scaled to the exact path's grid h_y = 2^-k ≤ 1 (σy·l/h_y in [2^30, 2^31) unless σy·l is extreme; c/h_y is an integer),
/// plus discrete Gaussian noise of scale ≥ σy·l/h_y per class, released as (c/h_y + Z)·h_y/l.
/// Replacing one record moves c/h_y by at most √2/h_y in L2 on ℤ^K, so by CKS20 (integer
/// shifts) the RDP is at most α·(√2/l)²/(2σy²), the label term of the module's proof note.
struct LabelNoise {
    noise: DiscreteGaussian,
    inv_grid: i64,
    scale: f64,
}

impl LabelNoise {
    fn new(sigma_y: f64, mix: usize) -> Result<Self> {
        // The features' grid rule for entries ≤ 1 (σy·l/h in [2^30, 2^31), the features'
        // scale; h ≥ 2^-41). h ≤ 1 keeps c/h an integer (only σy·l ≥ 2^31, beyond the
        // sampler's range, makes h coarser), and l/h < 2^61 keeps c/h within i64 with room
        // for the noise.
        let (h, noise) = crate::mechanisms::cda::exact_sum_noise("sigma-y", 1.0, sigma_y, mix)?;
        if h > 1.0 {
            return Err(Error::param(
                "sigma-y",
                sigma_y,
                "σy·l is beyond the exact sampler's range (2^31); lower σy",
            ));
        }
        if mix as f64 / h >= 2f64.powi(61) {
            return Err(Error::param(
                "sigma-y",
                sigma_y,
                "the label noise is too small for the exact sampler at this mix order; raise σy",
            ));
        }
        Ok(LabelNoise {
            noise,
            inv_grid: (1.0 / h) as i64,
            scale: h / mix as f64,
        })
    }

    fn release<R: Rng + ?Sized>(&self, counts: &[i64], y: &mut [f64], rng: &mut R) {
        let mut bits = Bits::new(rng);
        for (v, &c) in y.iter_mut().zip(counts) {
            *v = (c * self.inv_grid + self.noise.sample_bits(&mut bits)) as f64 * self.scale;
        }
    }
}

/// Index of the largest entry (the first one on ties).
pub fn argmax(xs: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in xs.iter().enumerate() {
        if x > xs[best] {
            best = i;
        }
    }
    best
}

/// Euclidean projection of `v` onto the probability simplex {p ≥ 0, Σp = 1}, in place
/// (Held–Wolfe–Crowder; Duchi et al. 2008). Non-finite entries count as 0.
pub fn project_to_simplex(v: &mut [f64]) {
    if v.is_empty() {
        return;
    }
    for x in v.iter_mut() {
        if !x.is_finite() {
            *x = 0.0;
        }
    }
    let mut u: Vec<f64> = v.to_vec();
    u.sort_by(|a, b| b.total_cmp(a));
    let mut css = 0.0;
    let mut theta = 0.0;
    for (j, &uj) in u.iter().enumerate() {
        css += uj;
        let t = (css - 1.0) / (j + 1) as f64;
        if uj - t > 0.0 {
            theta = t;
        }
    }
    for x in v.iter_mut() {
        *x = (*x - theta).max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gaussian::normal_cdf;
    use crate::rng::ReleaseRng;

    #[test]
    fn simplex_projection_matches_hand_cases() {
        let mut a = [0.2, 0.3, 0.5];
        project_to_simplex(&mut a);
        assert!((a[0] - 0.2).abs() < 1e-15 && (a[2] - 0.5).abs() < 1e-15);
        // (2, 0): subtract θ = 0.5 ⇒ (1.5, −0.5) ⇒ clip: (1, 0).
        let mut b = [2.0, 0.0];
        project_to_simplex(&mut b);
        assert_eq!(b, [1.0, 0.0]);
        // (0.5, 0.5, 0.5): θ = 1/6 ⇒ each 1/3.
        let mut c = [0.5, 0.5, 0.5];
        project_to_simplex(&mut c);
        assert!(c.iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-15));
        // (−1, 0.4, 0.2): θ = −0.2 on the last two ⇒ (0, 0.6, 0.4).
        let mut d = [-1.0, 0.4, 0.2];
        project_to_simplex(&mut d);
        assert!(d[0] == 0.0 && (d[1] - 0.6).abs() < 1e-15 && (d[2] - 0.4).abs() < 1e-15);
    }

    /// Statistical test of the noise: with l = n every mix is the exact data mean, so the
    /// output minus the mean must be N(0, σx²) per feature and N(0, σy²) per label entry.
    /// Kolmogorov–Smirnov against the exact normal CDF, each at α = 1e-6
    /// (critical value √(ln(2/α)/2)/√m).
    #[test]
    fn noise_is_gaussian_with_the_stated_scales_ks() {
        let features: Vec<f32> = vec![0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75, 0.5];
        let labels = vec![0u32, 1, 1, 0];
        let (d, k, n) = (2, 2, 4);
        let mean_x = [
            (0.0 + 0.5 + 1.0 + 0.75) / 4.0,
            (1.0 + 0.25 + 0.0 + 0.5) / 4.0,
        ];
        let mean_y = [0.5, 0.5];
        let cfg = DpMixConfig {
            mix: n,
            sigma_x: 0.3,
            sigma_y: 1.7,
            samples: 20000,
        };
        let mut zx = Vec::new();
        let mut zy = Vec::new();
        generate(
            &LabeledRows {
                features: &features,
                d,
                labels: &labels,
                k,
            },
            &cfg,
            &mut ReleaseRng::seeded(11),
            |x, y| {
                for j in 0..d {
                    zx.push((f64::from(x[j]) - mean_x[j]) / 0.3);
                }
                for c in 0..k {
                    zy.push((y[c] - mean_y[c]) / 1.7);
                }
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
        for (name, mut z) in [("features", zx), ("labels", zy)] {
            z.sort_by(f64::total_cmp);
            let m = z.len() as f64;
            let mut ks: f64 = 0.0;
            for (i, &v) in z.iter().enumerate() {
                let f = normal_cdf(v);
                ks = ks
                    .max((f - i as f64 / m).abs())
                    .max(((i + 1) as f64 / m - f).abs());
            }
            let crit = ((2.0f64 / 1e-6).ln() / 2.0).sqrt() / m.sqrt();
            assert!(ks < crit, "{name}: KS = {ks} ≥ {crit}");
        }
    }

    #[test]
    fn mixes_average_l_distinct_rows() {
        // Rows are one-hot-like markers: row i has feature i = 1. With σ tiny, every mix must
        // show exactly l entries of 1/l, i.e. l distinct rows, and the label vector must be
        // the share of each class among them.
        let n = 6;
        let mut features = vec![0f32; n * n];
        for i in 0..n {
            features[i * n + i] = 1.0;
        }
        let labels = vec![0u32, 0, 0, 1, 1, 2];
        let cfg = DpMixConfig {
            mix: 3,
            sigma_x: 1e-9,
            sigma_y: 1e-9,
            samples: 200,
        };
        generate(
            &LabeledRows {
                features: &features,
                d: n,
                labels: &labels,
                k: 3,
            },
            &cfg,
            &mut ReleaseRng::seeded(2),
            |x, y| {
                let picked: Vec<usize> = (0..n).filter(|&j| x[j] > 0.3).collect();
                assert_eq!(picked.len(), 3, "{x:?}");
                assert!(picked.iter().all(|&j| (x[j] - 1.0 / 3.0).abs() < 1e-6));
                let mut want = [0f64; 3];
                for &j in &picked {
                    want[labels[j] as usize] += 1.0 / 3.0;
                }
                for c in 0..3 {
                    assert!((y[c] - want[c]).abs() < 1e-6);
                }
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
    }

    #[test]
    fn l_larger_than_n_is_rejected() {
        let e = generate(
            &LabeledRows {
                features: &[0.0, 1.0],
                d: 1,
                labels: &[0, 1],
                k: 2,
            },
            &DpMixConfig {
                mix: 3,
                sigma_x: 1.0,
                sigma_y: 1.0,
                samples: 1,
            },
            &mut ReleaseRng::seeded(1),
            |_, _| Ok(()),
            |_| Ok(()),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("mix = 3") && e.contains("l ≤ 2"), "{e}");
    }

    /// The label half is exact: the released label vector times l/h_y is an integer vector
    /// (the class counts on the grid plus discrete Gaussian noise), and that noise is
    /// N_ℤ(0, σ_u²) with σ_u = σy·l/h_y: KS at α = 1e-6 over 40,000 draws, fixed seed, with a
    /// 5 % error in σ rejected.
    #[test]
    fn label_noise_is_exact_on_the_count_grid() {
        // σy·l = 1.2: the grid h = 2^-30 puts σ_u = σy·l/h in [2^30, 2^31).
        let h = 2f64.powi(-30);
        let ln = LabelNoise::new(0.3, 4).unwrap();
        assert_eq!(ln.scale, h / 4.0);
        let s_u = ln.noise.sigma();
        assert!(s_u >= 1.2 / h && s_u < 2f64.powi(31), "{s_u}");
        let mut rng = ReleaseRng::seeded(20261124);
        let counts = [3i64, 1, 0, 0];
        let mut y = [0f64; 4];
        let mut z = Vec::with_capacity(100_000);
        while z.len() < 100_000 {
            ln.release(&counts, &mut y, &mut rng);
            for (v, &c) in y.iter().zip(&counts) {
                // u ≈ 10⁹: the f64 rounding of v moves it by ≤ 10⁻⁶.
                let u = v * 4.0 / h;
                assert!((u - u.round()).abs() < 1e-3, "{v} is not on the grid");
                z.push(u.round() as i64 - c * (1 << 30));
            }
        }
        let crit = crate::mechanisms::gaussian::ks_crit(z.len());
        let ks = crate::mechanisms::noise::ks_discrete_gaussian(&z, s_u);
        assert!(ks < crit, "KS {ks} ≥ {crit}");
        assert!(crate::mechanisms::noise::ks_discrete_gaussian(&z, s_u * 1.05) > crit);
        assert!(LabelNoise::new(0.0, 4).is_err());
    }
}
