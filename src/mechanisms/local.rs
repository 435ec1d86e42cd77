//! Local perturbation, the DP-CDA paper's first baseline (its reference \[5\]): clip
//! each row to L2 norm ≤ c, then add N(0, σ² I_d) to it.
//!
#![doc = include_str!("local.proof.md")]

use super::gaussian_steps::{GaussianSteps, StepCalibration};
use super::noise::GridGaussian;
use crate::accountant::calibrate::Goal;
use crate::accountant::{EpsDelta, Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::preprocess::clip::check_clip;
use rand::seq::SliceRandom;
use rand::Rng;
use serde::Serialize;

/// Parameters that determine the privacy loss of one Gaussian step per released row (local
/// perturbation and random projection).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalPrivacy {
    /// Input rows n.
    pub rows: u64,
    /// Released rows T ≤ n (a uniform sample without replacement when T < n).
    pub samples: u64,
    /// L2 clip norm c (sensitivity 2c).
    pub clip: f64,
    /// Noise std σ.
    pub sigma: f64,
}

/// Validates n, T and c.
pub fn check_structure(rows: u64, samples: u64, clip: f64) -> Result<()> {
    check_clip(clip)?;
    if samples < 1 {
        return Err(Error::param(
            "samples",
            samples,
            "the number of released rows T must be at least 1",
        ));
    }
    if samples > rows {
        return Err(Error::param(
            "samples",
            samples,
            format!("local perturbation releases each input row at most once; use T ≤ n = {rows} (or leave T out)"),
        ));
    }
    Ok(())
}

impl LocalPrivacy {
    /// The accounting shape: one Gaussian step, 1/z² = (2c)²/σ², on a size-T sample of n.
    pub fn steps(&self) -> Result<GaussianSteps> {
        check_structure(self.rows, self.samples, self.clip)?;
        Ok(steps(self.rows, self.samples, self.clip))
    }

    /// Sampling rate T/n.
    pub fn sampling_rate(&self) -> f64 {
        self.samples as f64 / self.rows as f64
    }

    /// Noise multiplier z = σ/(2c).
    pub fn noise_multiplier(&self) -> Result<f64> {
        self.steps()?.noise_multiplier("sigma-x", self.sigma)
    }

    /// The RDP curve of the release.
    pub fn rdp(&self, orders: &[u32], preset: Preset) -> Result<RdpCurve> {
        self.steps()?.rdp("sigma-x", self.sigma, orders, preset)
    }

    /// ε at δ, optionally composed with other releases.
    pub fn epsilon(
        &self,
        delta: f64,
        orders: &[u32],
        preset: Preset,
        extra: Option<&RdpCurve>,
    ) -> Result<EpsDelta> {
        self.steps()?
            .epsilon("sigma-x", self.sigma, delta, orders, preset, extra)
    }
}

fn steps(rows: u64, samples: u64, clip: f64) -> GaussianSteps {
    GaussianSteps {
        pool: rows,
        sample: samples,
        compositions: 1,
        a: 4.0 * clip * clip,
        b: 0.0,
    }
}

/// Smallest σ meeting `goal` (never overshoots).
pub fn calibrate_local(
    rows: u64,
    samples: u64,
    clip: f64,
    goal: &Goal<'_>,
) -> Result<StepCalibration> {
    check_structure(rows, samples, clip)?;
    steps(rows, samples, clip).calibrate("sigma-x", "sigma-x", goal)
}

/// The released rows: a uniform size-T subset of 0..n in uniformly random order.
pub fn select_rows<R: Rng + ?Sized>(n: usize, samples: usize, rng: &mut R) -> Result<Vec<usize>> {
    check_structure(n as u64, samples as u64, 1.0)?;
    let mut idx = rand::seq::index::sample(rng, n, samples).into_vec();
    idx.shuffle(rng);
    Ok(idx)
}

/// μ_m = (m + 4)·2^-52: the relative margin by which the true L2 norm of a row of m entries
/// whose computed norm is ≤ c (or that was scaled to c) can exceed c (module docs).
pub fn norm_margin(dims: usize) -> f64 {
    (dims as f64 + 4.0) * 2f64.powi(-52)
}

/// The exact noise for one released row of `dims` coordinates whose stored values have true
/// L2 norm ≤ c·(1 + [`norm_margin`]): its noise multiplier is ≥ σ/(2c), the one accounted.
pub fn row_noise(sigma: f64, clip: f64, dims: usize) -> Result<GridGaussian> {
    check_clip(clip)?;
    if !(sigma > 0.0 && sigma.is_finite()) {
        return Err(Error::param(
            "sigma_x",
            sigma,
            "the noise standard deviation σx must be a positive finite number",
        ));
    }
    let mu = norm_margin(dims);
    GridGaussian::covering(
        sigma * (1.0 + mu + 2f64.powi(-46)),
        2.0 * clip * (1.0 + mu),
        dims.max(1),
    )
    .map_err(|_| {
        Error::param(
            "sigma_x",
            sigma,
            format!("the exact noise needs σx ≥ about 2^-30·2c = {:e} at clip c = {clip}; choose a larger σx or a smaller clip", 2.0 * clip * 2f64.powi(-30)),
        )
    })
}

/// Which rows a baseline releases, each clipped to L2 norm ≤ `clip` with noise N(0, σ²) per
/// coordinate (local perturbation and random projection).
#[derive(Debug, Clone, Copy)]
pub struct RowRelease<'a> {
    /// Indices of the released input rows, in output order.
    pub rows: &'a [usize],
    /// c.
    pub clip: f64,
    /// σ.
    pub sigma: f64,
}

/// The noise step: for each index in `r.rows`, `sink(index, release(x_index))` with the exact
/// release g·(round(x/g) + Z) of [`row_noise`] (module docs). `features` is row-major n × d,
/// clipped to norm ≤ `r.clip` (re-checked here).
pub fn perturb<R: Rng + ?Sized>(
    features: &[f32],
    d: usize,
    r: &RowRelease<'_>,
    rng: &mut R,
    sink: impl FnMut(usize, &[f32]) -> Result<()>,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    if d == 0 || features.len() % d != 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label".into(),
        ));
    }
    let g = row_noise(r.sigma, r.clip, d)?;
    let release = |x: &[f32], out: &mut [f32]| {
        out.copy_from_slice(x);
        // Re-applies the clip (a no-op on rows `clip_rows` clipped), so the row's true norm
        // is ≤ c·(1 + [`norm_margin`]) whatever the caller did.
        crate::preprocess::clip::clip_row(out, r.clip);
        g.add_noise_f32(out, rng)
    };
    each_row(features, d, r.rows, release, sink, progress)
}

/// The baselines' loop: for each index i in `rows` (in order), `release(x_i, out)` then
/// `sink(i, out)`, with the finished fraction to `progress` now and then.
pub(crate) fn each_row(
    features: &[f32],
    d: usize,
    rows: &[usize],
    mut release: impl FnMut(&[f32], &mut [f32]) -> Result<()>,
    mut sink: impl FnMut(usize, &[f32]) -> Result<()>,
    mut progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    let n = features.len() / d.max(1);
    let mut out = vec![0f32; d];
    let step = (rows.len() / 100).max(1);
    for (t, &i) in rows.iter().enumerate() {
        if i >= n {
            return Err(Error::Data("internal: row index out of range".into()));
        }
        release(&features[i * d..(i + 1) * d], &mut out)?;
        sink(i, &out)?;
        if (t + 1) % step == 0 {
            progress((t + 1) as f64 / rows.len() as f64)?;
        }
    }
    progress(1.0)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::default_orders;
    use crate::mechanisms::gaussian::ks_normal;
    use crate::rng::ReleaseRng;

    #[test]
    fn accounting_is_one_gaussian_step() {
        // T = n: exactly the Gaussian curve α/(2z²) with z = σ/(2c) = 2.
        let p = LocalPrivacy {
            rows: 1000,
            samples: 1000,
            clip: 1.0,
            sigma: 4.0,
        };
        assert!((p.noise_multiplier().unwrap() - 2.0).abs() < 1e-15);
        let c = p.rdp(&[2, 32], Preset::Default).unwrap();
        assert!((c.rdp[0] / (2.0 / 8.0) - 1.0).abs() < 1e-9);
        assert!((c.rdp[1] / (32.0 / 8.0) - 1.0).abs() < 1e-9);
        // Sampling half the rows can only help.
        let half = LocalPrivacy { samples: 500, ..p };
        let o = default_orders();
        assert!(
            half.epsilon(1e-5, &o, Preset::Default, None)
                .unwrap()
                .epsilon
                < p.epsilon(1e-5, &o, Preset::Default, None).unwrap().epsilon
        );
    }

    #[test]
    fn bad_structure_is_named() {
        let e = check_structure(10, 11, 1.0).unwrap_err().to_string();
        assert!(
            e.contains("samples = 11") && e.contains("T ≤ n = 10"),
            "{e}"
        );
        assert!(check_structure(10, 0, 1.0).is_err());
        assert!(check_structure(10, 5, 0.0)
            .unwrap_err()
            .to_string()
            .contains("clip = 0"));
    }

    #[test]
    fn calibration_round_trips() {
        let o = default_orders();
        for (n, t) in [(1000u64, 1000u64), (1000, 100)] {
            let c = calibrate_local(n, t, 1.0, &Goal::new(2.0, 1e-5, &o)).unwrap();
            let p = LocalPrivacy {
                rows: n,
                samples: t,
                clip: 1.0,
                sigma: c.sigma,
            };
            let e = p.epsilon(1e-5, &o, Preset::Default, None).unwrap().epsilon;
            assert!(e <= 2.0 && e > 1.998, "{e}");
        }
    }

    #[test]
    fn selection_is_a_permutation_or_a_distinct_sample() {
        let mut rng = ReleaseRng::seeded(4);
        let mut all = select_rows(50, 50, &mut rng).unwrap();
        assert_ne!(all, (0..50).collect::<Vec<_>>(), "not shuffled");
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        let mut some = select_rows(50, 20, &mut rng).unwrap();
        some.sort_unstable();
        some.dedup();
        assert_eq!(some.len(), 20);
        assert!(select_rows(5, 6, &mut rng).is_err());
    }

    /// Output minus input must be N(0, σ²) in every coordinate: KS at α = 1e-6.
    #[test]
    fn noise_is_gaussian_with_the_stated_scale_ks() {
        let d = 3;
        let n = 4000;
        let features: Vec<f32> = (0..n * d).map(|i| ((i % 7) as f32) / 10.0).collect();
        let rows: Vec<usize> = (0..n).collect();
        let sigma = 0.8;
        // The σ used: σ·Δ_eff/Δ rounded up, at most 2^-10 above σ (noise module).
        let used = row_noise(sigma, 1.0, d).unwrap();
        let s_used = used.sigma_units() * used.grid();
        assert!(
            s_used >= sigma && s_used <= sigma * (1.0 + 2f64.powi(-9)),
            "{s_used}"
        );
        let mut z = Vec::new();
        perturb(
            &features,
            d,
            &RowRelease {
                rows: &rows,
                clip: 1.0,
                sigma,
            },
            &mut ReleaseRng::seeded(8),
            |i, out| {
                for j in 0..d {
                    z.push((f64::from(out[j]) - f64::from(features[i * d + j])) / s_used);
                }
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
        let m = z.len() as f64;
        let ks = ks_normal(&mut z, 1.0);
        let crit = ((2.0f64 / 1e-6).ln() / 2.0).sqrt() / m.sqrt();
        assert!(ks < crit, "KS = {ks} ≥ {crit}");
        // And a wrong σ is detected by the same test (the test can fail).
        let mut wrong: Vec<f64> = z.iter().map(|v| v * 1.3).collect();
        assert!(ks_normal(&mut wrong, 1.0) > crit);
    }

    /// Every released value lies on the noise grid g = 2^k (exact noise: g·(integer)); the
    /// float ziggurat's x + σz almost never does. Rows out of the ball are clipped first.
    #[test]
    fn released_values_lie_on_the_grid() {
        let d = 10;
        let n = 300;
        let features: Vec<f32> = (0..n * d)
            .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let rows: Vec<usize> = (0..n).collect();
        for (clip, sigma) in [(1.0, 0.5), (3.0, 40.0), (0.25, 0.01)] {
            let g = row_noise(sigma, clip, d).unwrap().grid();
            // The default grid: the largest 2^k with 2^k·√d ≤ Δ·2^-10.
            assert!(g * (d as f64).sqrt() <= 2.0 * clip * (1.0 + norm_margin(d)) / 1024.0);
            assert!(2.0 * g * (d as f64).sqrt() > 2.0 * clip / 1024.0);
            let mut seen = 0;
            perturb(
                &features,
                d,
                &RowRelease {
                    rows: &rows,
                    clip,
                    sigma,
                },
                &mut ReleaseRng::seeded(5),
                |_, out| {
                    for &v in out {
                        let u = f64::from(v) / g;
                        assert_eq!(u, u.round(), "{v} is not on the grid {g}");
                        seen += 1;
                    }
                    Ok(())
                },
                |_| Ok(()),
            )
            .unwrap();
            assert_eq!(seen, n * d);
        }
    }

    /// The accounted multiplier σ/(2c) is covered by the grid's, including the norm margin,
    /// for dimensions from 1 to 10^5 and σ/(2c) from 10^-3 to 10^5.
    #[test]
    fn exact_noise_never_lowers_the_noise_multiplier() {
        for d in [1usize, 3, 64, 784, 100_000] {
            for (sigma, clip) in [(1e-3, 0.5), (0.7, 1.0), (3.0, 0.01), (1e5, 0.5)] {
                let g = row_noise(sigma, clip, d).unwrap();
                let want = sigma / (2.0 * clip);
                assert!(g.noise_multiplier() >= want, "d {d}, σ {sigma}, c {clip}");
                // At most 2^-10 more noise than asked (plus the margins) where the grid is
                // not forced coarser by the sampler's range (σ·√d/Δ ≤ 2^19; `covering`).
                if sigma * (d as f64).sqrt() / (2.0 * clip) <= 2f64.powi(19) {
                    assert!(
                        g.sigma() <= sigma * (1.0 + 2f64.powi(-10) + 1e-9),
                        "{}",
                        g.sigma()
                    );
                }
            }
        }
        assert!(row_noise(f64::NAN, 1.0, 3).is_err());
        assert!(row_noise(1.0, 0.0, 3).is_err());
        let e = row_noise(1e-12, 1.0, 3).unwrap_err().to_string();
        assert!(e.contains("sigma_x") && e.contains("larger σx"), "{e}");
    }

    /// A row outside the ball given to `perturb` is clipped there: with tiny noise its
    /// released norm is ≤ c (+ the grid's rounding).
    #[test]
    fn perturb_reclips_rows_outside_the_ball() {
        let d = 4;
        let features = vec![10f32; d];
        let g = row_noise(1e-6, 0.5, d).unwrap().grid();
        perturb(
            &features,
            d,
            &RowRelease {
                rows: &[0],
                clip: 0.5,
                sigma: 1e-6,
            },
            &mut ReleaseRng::seeded(2),
            |_, out| {
                let norm = out
                    .iter()
                    .map(|&x| f64::from(x).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(norm <= 0.5 + 8.0 * g * (d as f64).sqrt(), "{norm}");
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
    }
}
