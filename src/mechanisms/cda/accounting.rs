//! DP-CDA's privacy accounting: sensitivities, the RDP curve, ε, and calibration.
//!
//! One synthetic row averages l rows drawn without replacement from a pool of n rows and adds
//! N(0, σx² I) to the features (and, in paper mode, N(0, σy² I) to the averaged one-hot label).
//! Replacing one record changes the feature average by at most 2c/l in L2 (every row is
//! clipped to norm c) and the label average by at most √2/l. So the Gaussian step has noise
//! multiplier z with 1/z² = (2c/l)²/σx² + (√2/l)²/σy² (label term absent in label-free mode),
//! the pool is subsampled at rate q = l/n, and T rows compose to T × the subsampled RDP.

use crate::accountant::calibrate::{certify_upward, smallest_z, Goal};
use crate::accountant::{check_delta, check_epsilon, EpsDelta, Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::Gaussian;
use crate::preprocess::clip::check_clip;
use serde::Serialize;

/// Parameters that determine DP-CDA's privacy loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CdaPrivacy {
    /// Pool size n (for synthesis: the smallest class).
    pub pool: u64,
    /// Mix order l.
    pub mix: u32,
    /// L2 clip norm c.
    pub clip: f64,
    /// Feature noise std σx.
    pub sigma_x: f64,
    /// Label noise std σy (paper mode) or None (label-free mode).
    pub sigma_y: Option<f64>,
    /// Number of mixes T drawn from the pool (composition count).
    pub samples: u64,
}

/// Checks that the mix order l is at least 1.
pub fn check_mix(mix: u64) -> Result<()> {
    if mix < 1 {
        return Err(Error::param(
            "mix",
            mix,
            "the mix order l must be at least 1 (the paper's best is l = 4)",
        ));
    }
    Ok(())
}

/// Checks a noise standard deviation (the sampler's own construction check).
pub fn check_sigma(name: &str, s: f64) -> Result<()> {
    Gaussian::new(name, s).map(|_| ())
}

/// Validates the structural parameters shared by `account` and `calibrate`.
pub fn check_structure(pool: u64, mix: u32, clip: f64, samples: u64) -> Result<()> {
    check_mix(u64::from(mix))?;
    if pool < u64::from(mix) {
        return Err(Error::param(
            "mix",
            mix,
            format!(
                "l is larger than the pool of {pool} rows (the smallest class); use l ≤ {pool}"
            ),
        ));
    }
    check_clip(clip)?;
    if samples < 1 {
        return Err(Error::param(
            "samples",
            samples,
            "the number of synthetic rows T must be at least 1",
        ));
    }
    Ok(())
}

impl CdaPrivacy {
    /// Sampling rate q = l / pool.
    pub fn sampling_rate(&self) -> f64 {
        f64::from(self.mix) / self.pool as f64
    }

    /// The label term (√2/l)²/σy² of 1/z², or 0 in label-free mode.
    fn label_term(mix: u32, sigma_y: Option<f64>) -> f64 {
        sigma_y.map_or(0.0, |sy| 2.0 / (f64::from(mix).powi(2) * sy * sy))
    }

    /// Noise multiplier z of one Gaussian step.
    pub fn noise_multiplier(&self) -> Result<f64> {
        check_structure(self.pool, self.mix, self.clip, self.samples)?;
        check_sigma("sigma-x", self.sigma_x)?;
        if let Some(sy) = self.sigma_y {
            check_sigma("sigma-y", sy)?;
        }
        let dx = 2.0 * self.clip / f64::from(self.mix);
        let inv_z2 =
            dx * dx / (self.sigma_x * self.sigma_x) + Self::label_term(self.mix, self.sigma_y);
        Ok(1.0 / inv_z2.sqrt())
    }

    /// The composed RDP curve of all T steps.
    pub fn rdp(&self, orders: &[u32], preset: Preset) -> Result<RdpCurve> {
        let z = self.noise_multiplier()?;
        Ok(
            RdpCurve::subsampled_gaussian(self.sampling_rate(), z, orders, preset.bound())?
                .times(self.samples),
        )
    }

    /// ε at δ, optionally composed with other releases (`extra`, e.g. DP normalization).
    pub fn epsilon(
        &self,
        delta: f64,
        orders: &[u32],
        preset: Preset,
        extra: Option<&RdpCurve>,
    ) -> Result<EpsDelta> {
        check_delta(delta)?;
        let mut curve = self.rdp(orders, preset)?;
        if let Some(e) = extra {
            curve = curve.compose(e)?;
        }
        curve.epsilon(delta, preset.conversion())
    }
}

/// What calibration returns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CdaCalibration {
    /// The smallest σx found (re-accounted: its ε is ≤ the target).
    pub sigma_x: f64,
    /// The noise multiplier z it corresponds to.
    pub noise_multiplier: f64,
    /// The re-accounted guarantee at `sigma_x`.
    pub epsilon: f64,
    /// The order attaining it.
    pub order: u32,
}

/// The RDP curve of T = `samples` mixing steps at sampling rate `q` and noise multiplier `z`,
/// composed with `extra` (other releases, e.g. DP normalization) when given: what
/// [`calibrate_sigma_x`] and the automatic l's ranking calibrate against.
pub fn mixing_curve(
    q: f64,
    z: f64,
    samples: u64,
    orders: &[u32],
    preset: Preset,
    extra: Option<&RdpCurve>,
) -> Result<RdpCurve> {
    let c = RdpCurve::subsampled_gaussian(q, z, orders, preset.bound())?.times(samples);
    match extra {
        Some(e) => c.compose(e),
        None => Ok(c),
    }
}

/// DP-CDA's accounting shape: everything that fixes its privacy loss except σx (which
/// calibration finds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CdaShape {
    /// Pool size n (for synthesis: the smallest class).
    pub pool: u64,
    /// Mix order l.
    pub mix: u32,
    /// L2 clip norm c.
    pub clip: f64,
    /// Label noise std σy (paper mode) or None (label-free mode).
    pub sigma_y: Option<f64>,
    /// Number of mixes T drawn from the pool (composition count).
    pub samples: u64,
}

impl CdaShape {
    /// The release with feature noise σx.
    pub fn with_sigma_x(&self, sigma_x: f64) -> CdaPrivacy {
        CdaPrivacy {
            pool: self.pool,
            mix: self.mix,
            clip: self.clip,
            sigma_x,
            sigma_y: self.sigma_y,
            samples: self.samples,
        }
    }
}

/// Smallest σx such that DP-CDA (with `shape.sigma_y` fixed, if given) meets `goal`.
pub fn calibrate_sigma_x(shape: &CdaShape, goal: &Goal<'_>) -> Result<CdaCalibration> {
    let &Goal {
        epsilon: target,
        delta,
        orders,
        preset,
        extra,
    } = goal;
    let &CdaShape {
        pool,
        mix,
        clip,
        sigma_y,
        samples,
    } = shape;
    check_structure(pool, mix, clip, samples)?;
    check_epsilon(target)?;
    check_delta(delta)?;
    if let Some(sy) = sigma_y {
        check_sigma("sigma-y", sy)?;
    }
    let q = f64::from(mix) / pool as f64;
    let label = CdaPrivacy::label_term(mix, sigma_y);
    let cal = smallest_z(target, delta, preset.conversion(), |z| {
        mixing_curve(q, z, samples, orders, preset, extra)
    })?;
    // 1/z² = dx²/σx² + label  ⇒  σx = dx / sqrt(1/z² − label).
    let inv_z2 = 1.0 / (cal.z * cal.z);
    if inv_z2 <= label * (1.0 + 1e-12) {
        return Err(Error::param(
            "sigma-y",
            sigma_y.unwrap_or(f64::NAN),
            format!(
                "the label noise alone already spends more than ε = {target}; increase σy or leave it out (label-free mode)"
            ),
        ));
    }
    let dx = 2.0 * clip / f64::from(mix);
    let sigma_x = dx / (inv_z2 - label).sqrt();
    // Re-account the σx we report; nudge it up until it provably meets the target.
    certify_upward(sigma_x, 1e-10, 64, |sigma_x| {
        let p = shape.with_sigma_x(sigma_x);
        let e = p.epsilon(delta, orders, preset, extra)?;
        if e.epsilon > target {
            return Ok(None);
        }
        Ok(Some(CdaCalibration {
            sigma_x,
            noise_multiplier: p.noise_multiplier()?,
            epsilon: e.epsilon,
            order: e.order,
        }))
    })?
    .ok_or_else(|| {
        Error::Accountant(format!(
            "calibration could not certify ε ≤ {target}; please report this"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::default_orders;

    #[test]
    fn sensitivities_give_the_papers_noise_multiplier() {
        // Reference case: σx = 0.508…, σy = 2, c = 1, l = 4 gives z = 1.
        let p = CdaPrivacy {
            pool: 20000,
            mix: 4,
            clip: 1.0,
            sigma_x: 0.508000508000762,
            sigma_y: Some(2.0),
            samples: 100,
        };
        assert!((p.noise_multiplier().unwrap() - 1.0).abs() < 1e-9);
        let lf = CdaPrivacy {
            sigma_y: None,
            sigma_x: 0.5,
            ..p
        };
        assert!((lf.noise_multiplier().unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn errors_name_the_parameter() {
        let p = CdaPrivacy {
            pool: 3,
            mix: 4,
            clip: 1.0,
            sigma_x: 1.0,
            sigma_y: None,
            samples: 10,
        };
        let e = p.noise_multiplier().unwrap_err().to_string();
        assert!(e.contains("mix = 4") && e.contains("l ≤ 3"), "{e}");
        let e = CdaPrivacy {
            clip: 0.0,
            pool: 10,
            ..p
        }
        .noise_multiplier()
        .unwrap_err()
        .to_string();
        assert!(e.contains("clip = 0"), "{e}");
        let e = CdaPrivacy {
            sigma_x: -1.0,
            pool: 10,
            ..p
        }
        .noise_multiplier()
        .unwrap_err()
        .to_string();
        assert!(e.contains("sigma-x = -1"), "{e}");
        let e = CdaPrivacy {
            mix: 0,
            pool: 10,
            ..p
        }
        .noise_multiplier()
        .unwrap_err()
        .to_string();
        assert!(e.contains("mix = 0"), "{e}");
    }

    #[test]
    fn epsilon_decreases_as_sigma_grows() {
        let orders = default_orders();
        for preset in [Preset::Default, Preset::Paper] {
            let mut prev = f64::INFINITY;
            for &s in &[0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4] {
                let p = CdaPrivacy {
                    pool: 6000,
                    mix: 4,
                    clip: 1.0,
                    sigma_x: s,
                    sigma_y: None,
                    samples: 6000,
                };
                let e = p.epsilon(1e-5, &orders, preset, None).unwrap().epsilon;
                assert!(e < prev, "{preset:?}: ε({s}) = {e} not below {prev}");
                prev = e;
            }
        }
    }

    #[test]
    fn calibration_round_trips_for_many_configurations() {
        let orders = default_orders();
        for &(pool, mix, clip, sy, t, delta, target) in &[
            (6000u64, 4u32, 1.0, None, 60000u64, 1e-5, 10.0),
            (1000, 2, 0.5, Some(1.0), 1000, 1e-5, 3.0),
            (20000, 16, 2.0, None, 100, 1e-6, 0.5),
            (500, 64, 1.0, Some(4.0), 5000, 1e-3, 20.0),
        ] {
            for preset in [Preset::Default, Preset::Paper] {
                let shape = CdaShape {
                    pool,
                    mix,
                    clip,
                    sigma_y: sy,
                    samples: t,
                };
                let c = calibrate_sigma_x(
                    &shape,
                    &Goal {
                        epsilon: target,
                        delta,
                        orders: &orders,
                        preset,
                        extra: None,
                    },
                )
                .unwrap();
                let p = CdaPrivacy {
                    pool,
                    mix,
                    clip,
                    sigma_x: c.sigma_x,
                    sigma_y: sy,
                    samples: t,
                };
                let e = p.epsilon(delta, &orders, preset, None).unwrap().epsilon;
                assert!(e <= target, "overshoot {e} > {target}");
                assert!(e > target * 0.999, "not tight: {e} vs {target}");
                let less = CdaPrivacy {
                    sigma_x: c.sigma_x * 0.999,
                    ..p
                };
                assert!(less.epsilon(delta, &orders, preset, None).unwrap().epsilon > target);
            }
        }
    }
}
