//! The accounting shape shared by DPMix and the baselines: T identical Gaussian steps, each
//! applied to a uniform size-m sample drawn without replacement from n rows (or to the whole
//! data when m = n), whose noise multiplier depends on one free noise standard deviation σ
//! through 1/z² = a/σ² + b.
//!
//! * DPMix: a = dx/l², b = dy/(l²σy²) with σy fixed (or a = (dx + dy)/l², b = 0 with σx = σy).
//! * Local perturbation and projection: a = (2c)², b = 0.
//!
//! One step is the Gaussian mechanism with noise multiplier z, (α, α/(2z²))-RDP (Mironov 2017,
//! Prop. 7); subsampling without replacement at rate q = m/n under replace-one adjacency is
//! bounded by WBK 2019 (Theorem 27 or 9 by preset, [`crate::accountant::subsampled_gaussian`]);
//! T steps with fresh randomness compose to T × that curve. When m = n there is no sampling
//! and the plain Gaussian curve is used (no amplification is claimed).
//!
//! Calibration inverts z ↦ σ and re-accounts the σ it reports, nudging it up until the
//! re-accounted ε is ≤ the target, so it never overshoots.

use super::gaussian::Gaussian;
use crate::accountant::calibrate::{certify_upward, smallest_z, Goal};
use crate::accountant::{check_delta, check_epsilon, EpsDelta, Preset, RdpCurve};
use crate::error::{Error, Result};
use serde::Serialize;

/// T identical, optionally subsampled, Gaussian steps with 1/z² = a/σ² + b.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GaussianSteps {
    /// Rows the sample is drawn from, n ≥ 1.
    pub pool: u64,
    /// Rows in each sample, 1 ≤ m ≤ n (m = n: no sampling).
    pub sample: u64,
    /// Number of steps T ≥ 1.
    pub compositions: u64,
    /// Coefficient of 1/σ² in 1/z² (> 0).
    pub a: f64,
    /// Constant part of 1/z² (≥ 0; e.g. a fixed label-noise term).
    pub b: f64,
}

/// What calibration returns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepCalibration {
    /// The smallest σ found (re-accounted: its ε is ≤ the target).
    pub sigma: f64,
    /// Its noise multiplier z.
    pub noise_multiplier: f64,
    /// The re-accounted ε.
    pub epsilon: f64,
    /// The order attaining it.
    pub order: u32,
}

impl GaussianSteps {
    /// Sampling rate q = m/n.
    pub fn sampling_rate(&self) -> f64 {
        self.sample as f64 / self.pool as f64
    }

    fn check(&self) -> Result<()> {
        if self.pool < 1 || self.sample < 1 || self.sample > self.pool {
            return Err(Error::Accountant(format!(
                "internal: a sample of {} rows from a pool of {} rows",
                self.sample, self.pool
            )));
        }
        if self.compositions < 1 {
            return Err(Error::param(
                "samples",
                self.compositions,
                "the number of synthetic rows T must be at least 1",
            ));
        }
        if !(self.a > 0.0 && self.a.is_finite() && self.b >= 0.0 && self.b.is_finite()) {
            return Err(Error::Accountant(format!(
                "internal: sensitivity coefficients a = {}, b = {}",
                self.a, self.b
            )));
        }
        Ok(())
    }

    /// Noise multiplier z for noise std `sigma` (`name` is used in error messages).
    pub fn noise_multiplier(&self, name: &str, sigma: f64) -> Result<f64> {
        self.check()?;
        Gaussian::new(name, sigma)?;
        let inv_z2 = self.a / (sigma * sigma) + self.b;
        let z = 1.0 / inv_z2.sqrt();
        if z.is_nan() || z <= 0.0 {
            return Err(Error::param(
                name,
                sigma,
                "this noise is too small to account; use a larger value",
            ));
        }
        Ok(z)
    }

    /// The composed curve at noise multiplier `z`.
    pub fn curve_z(&self, z: f64, orders: &[u32], preset: Preset) -> Result<RdpCurve> {
        self.check()?;
        let one = if self.sample == self.pool {
            RdpCurve::gaussian(z, orders)?
        } else {
            RdpCurve::subsampled_gaussian(self.sampling_rate(), z, orders, preset.bound())?
        };
        Ok(one.times(self.compositions))
    }

    /// The composed curve at noise std `sigma`.
    pub fn rdp(&self, name: &str, sigma: f64, orders: &[u32], preset: Preset) -> Result<RdpCurve> {
        let z = self.noise_multiplier(name, sigma)?;
        self.curve_z(z, orders, preset)
    }

    /// ε at δ, optionally composed with other releases (`extra`).
    pub fn epsilon(
        &self,
        name: &str,
        sigma: f64,
        delta: f64,
        orders: &[u32],
        preset: Preset,
        extra: Option<&RdpCurve>,
    ) -> Result<EpsDelta> {
        check_delta(delta)?;
        let mut curve = self.rdp(name, sigma, orders, preset)?;
        if let Some(e) = extra {
            curve = curve.compose(e)?;
        }
        curve.epsilon(delta, preset.conversion())
    }

    /// Smallest σ meeting `goal`. `fixed` names the parameter behind `b` for the error raised
    /// when `b` alone spends more than the target.
    pub fn calibrate(&self, name: &str, fixed: &str, goal: &Goal<'_>) -> Result<StepCalibration> {
        let &Goal {
            epsilon: target,
            delta,
            orders,
            preset,
            extra,
        } = goal;
        self.check()?;
        check_epsilon(target)?;
        check_delta(delta)?;
        let curve = |z: f64| -> Result<RdpCurve> {
            let mut c = self.curve_z(z, orders, preset)?;
            if let Some(e) = extra {
                c = c.compose(e)?;
            }
            Ok(c)
        };
        let cal = smallest_z(target, delta, preset.conversion(), curve)?;
        let inv_z2 = 1.0 / (cal.z * cal.z);
        if inv_z2 <= self.b * (1.0 + 1e-12) {
            return Err(Error::param(
                fixed,
                "(given)",
                format!("the noise on this part alone already spends more than ε = {target}; increase --{fixed}"),
            ));
        }
        let sigma = (self.a / (inv_z2 - self.b)).sqrt();
        certify_upward(sigma, 1e-10, 64, |sigma| {
            let e = self.epsilon(name, sigma, delta, orders, preset, extra)?;
            Ok((e.epsilon <= target).then_some((sigma, e)))
        })?
        .map(|(sigma, e)| {
            Ok(StepCalibration {
                sigma,
                noise_multiplier: self.noise_multiplier(name, sigma)?,
                epsilon: e.epsilon,
                order: e.order,
            })
        })
        .unwrap_or_else(|| {
            Err(Error::Accountant(format!(
                "calibration could not certify ε ≤ {target}; please report this"
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::default_orders;

    #[test]
    fn full_sample_is_the_plain_gaussian_composed() {
        let s = GaussianSteps {
            pool: 10,
            sample: 10,
            compositions: 3,
            a: 4.0,
            b: 0.0,
        };
        // σ = 4, a = 4 ⇒ z = 2 ⇒ α/(2·4) per step, ×3.
        let c = s.rdp("sigma", 4.0, &[2, 10], Preset::Default).unwrap();
        // (The accountant rounds every value up by a relative 1e-11.)
        assert!((c.rdp[0] / (3.0 * 2.0 / 8.0) - 1.0).abs() < 1e-9);
        assert!((c.rdp[1] / (3.0 * 10.0 / 8.0) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn calibration_never_overshoots_and_is_tight() {
        let orders = default_orders();
        for (pool, sample, t, a, b) in [
            (1000u64, 10u64, 1000u64, 0.04, 0.0),
            (60000, 256, 10000, 784.0 / 65536.0, 10.0 / 65536.0 / 0.01),
            (500, 500, 1, 4.0, 0.0),
        ] {
            let s = GaussianSteps {
                pool,
                sample,
                compositions: t,
                a,
                b,
            };
            for preset in [Preset::Default, Preset::Paper] {
                let c = s
                    .calibrate(
                        "sigma",
                        "sigma-y",
                        &Goal {
                            epsilon: 5.0,
                            delta: 1e-5,
                            orders: &orders,
                            preset,
                            extra: None,
                        },
                    )
                    .unwrap();
                let e = s
                    .epsilon("sigma", c.sigma, 1e-5, &orders, preset, None)
                    .unwrap()
                    .epsilon;
                assert!(e <= 5.0 && e > 5.0 * 0.999, "{e}");
                let less = s
                    .epsilon("sigma", c.sigma * 0.999, 1e-5, &orders, preset, None)
                    .unwrap()
                    .epsilon;
                assert!(less > 5.0);
            }
        }
    }

    #[test]
    fn fixed_part_that_spends_everything_is_reported() {
        let s = GaussianSteps {
            pool: 100,
            sample: 100,
            compositions: 1,
            a: 1.0,
            b: 100.0,
        };
        let e = s
            .calibrate(
                "sigma-x",
                "sigma-y",
                &Goal::new(1.0, 1e-5, &default_orders()),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("sigma-y"), "{e}");
    }
}
