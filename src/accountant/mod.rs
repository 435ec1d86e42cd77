//! The privacy accountant: RDP curves as composable pieces, conversion to (ε, δ), presets and
//! calibration.
//!
//! * [`subsampled_gaussian`]: RDP of the Gaussian mechanism under sampling without
//!   replacement (WBK 2019 Theorems 9 and 27), with its proof note.
//! * [`moments`]: the stable evaluation of the moments B(2m) those bounds need.
//! * [`calibrate`]: the smallest noise meeting a target ε, never overshooting.
//!
//! Every value is rounded towards more privacy loss; no function returns NaN.

pub mod calibrate;
pub mod moments;
pub mod pld;
mod recent;
pub mod subsampled_gaussian;

use crate::enums::named_enum;
use crate::error::{Error, Result};
use crate::math::DetFloat;
use serde::{Deserialize, Serialize};
pub use subsampled_gaussian::WorBound;

/// How an RDP curve becomes (ε, δ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conversion {
    /// Balle et al. 2020, Prop. 12: ε = rdp + ln(1 − 1/α) − ln(δ·α)/(α − 1).
    Improved,
    /// Mironov 2017: ε = rdp + ln(1/δ)/(α − 1) (the DP-CDA paper's Proposition 1).
    Classic,
}

named_enum! {
    /// Which accountant certifies a release.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum AccountantKind: "accountant" {
        /// Rényi DP only (the preset's subsampling bound and conversion).
        Rdp = "rdp" ("Rényi DP only"),
        /// The privacy-loss-distribution accountant ([`pld`]) where it covers the mechanism,
        /// with RDP as a cross-check: the guarantee is the smaller of the two upper bounds.
        Pld = "pld" ("privacy-loss distribution, with RDP as a cross-check"),
    }
}

impl AccountantKind {
    /// The name used in responses and receipts.
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

named_enum! {
    /// A named pair (subsampling bound, conversion).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Preset: "preset" {
        /// WBK Theorem 27 + improved conversion (the product default).
        Default = "default",
        /// WBK Theorem 9 as printed in the DP-CDA paper (index typo fixed) + classic conversion.
        Paper = "paper",
    }
}

impl Preset {
    /// The subsampling bound of this preset.
    pub fn bound(self) -> WorBound {
        match self {
            Preset::Default => WorBound::Theorem27,
            Preset::Paper => WorBound::Theorem9,
        }
    }
    /// The RDP → (ε, δ) conversion of this preset.
    pub fn conversion(self) -> Conversion {
        match self {
            Preset::Default => Conversion::Improved,
            Preset::Paper => Conversion::Classic,
        }
    }
    /// The other preset, for side-by-side reporting.
    pub fn other(self) -> Preset {
        match self {
            Preset::Default => Preset::Paper,
            Preset::Paper => Preset::Default,
        }
    }
    /// Lower-case name as used on the CLI and in receipts.
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

/// Forgets what the accountant remembers on this thread (the RDP bound's terms of recent
/// noise multipliers, the PLD's recent compositions), so that a benchmark repeating one
/// calibration times the work. Answers are the same bits either way.
pub fn forget_remembered() {
    subsampled_gaussian::forget_terms();
    pld::mechanisms::forget_compositions();
}

/// The default integer orders 2..=256.
pub fn default_orders() -> Vec<u32> {
    (2..=256).collect()
}

/// Checks δ ∈ (0, 1).
pub fn check_delta(delta: f64) -> Result<()> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "delta",
            delta,
            "δ must lie strictly between 0 and 1, e.g. 1e-5 (at most 1/n for n records)",
        ))
    }
}

/// Checks ε > 0 and finite.
pub fn check_epsilon(epsilon: f64) -> Result<()> {
    if epsilon > 0.0 && epsilon.is_finite() {
        Ok(())
    } else {
        Err(Error::param(
            "epsilon",
            epsilon,
            "ε must be a positive finite number, e.g. 1 or 10",
        ))
    }
}

/// An RDP curve: ε_RDP(α) at each integer order α.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RdpCurve {
    /// Integer orders α ≥ 2.
    pub orders: Vec<u32>,
    /// RDP value at each order (≥ 0, possibly +∞).
    pub rdp: Vec<f64>,
}

/// The (ε, δ) guarantee read off a curve, with the order that attains it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EpsDelta {
    /// ε (rounded up; +∞ if no order gives a finite value).
    pub epsilon: f64,
    /// δ as given.
    pub delta: f64,
    /// The order attaining the minimum (0 if ε is +∞).
    pub order: u32,
}

impl RdpCurve {
    /// The zero curve (no privacy loss) at the given orders.
    pub fn zero(orders: &[u32]) -> Self {
        RdpCurve {
            orders: orders.to_vec(),
            rdp: vec![0.0; orders.len()],
        }
    }

    /// [`RdpCurve::gaussian`] for a release that may not have happened: the zero curve when
    /// `z` is None.
    pub fn gaussian_or_zero(z: Option<f64>, orders: &[u32]) -> Result<Self> {
        match z {
            Some(z) => Self::gaussian(z, orders),
            None => Ok(Self::zero(orders)),
        }
    }

    /// The Gaussian mechanism with noise multiplier `z` (std / L2 sensitivity): α/(2z²).
    pub fn gaussian(z: f64, orders: &[u32]) -> Result<Self> {
        subsampled_gaussian::validate_orders(orders)?;
        let rdp = orders
            .iter()
            .map(|&a| {
                if z.is_nan() || z <= 0.0 {
                    f64::INFINITY
                } else {
                    subsampled_gaussian::round_up(f64::from(a) / (2.0 * z * z))
                }
            })
            .collect();
        Ok(RdpCurve {
            orders: orders.to_vec(),
            rdp,
        })
    }

    /// The subsampled-without-replacement Gaussian at rate `q` with noise multiplier `z`.
    pub fn subsampled_gaussian(q: f64, z: f64, orders: &[u32], bound: WorBound) -> Result<Self> {
        Ok(RdpCurve {
            orders: orders.to_vec(),
            rdp: subsampled_gaussian::rdp_curve(q, z, orders, bound)?,
        })
    }

    /// [`RdpCurve::subsampled_gaussian`] at several rates and one noise multiplier, sharing
    /// the work that depends on z alone; the same curves as one call per rate.
    pub fn subsampled_gaussian_rates(
        qs: &[f64],
        z: f64,
        orders: &[u32],
        bound: WorBound,
    ) -> Result<Vec<Self>> {
        Ok(subsampled_gaussian::rdp_curves(qs, z, orders, bound)?
            .into_iter()
            .map(|rdp| RdpCurve {
                orders: orders.to_vec(),
                rdp,
            })
            .collect())
    }

    /// Composition of `times` identical runs (RDP × times).
    pub fn times(mut self, times: u64) -> Self {
        let t = times as f64;
        for v in &mut self.rdp {
            *v = if *v == 0.0 {
                0.0
            } else {
                subsampled_gaussian::round_up(*v * t)
            };
        }
        self
    }

    /// Composition with another mechanism measured at the same orders (pointwise sum).
    pub fn compose(mut self, other: &RdpCurve) -> Result<Self> {
        if self.orders != other.orders {
            return Err(Error::Accountant(
                "cannot compose RDP curves measured at different orders".into(),
            ));
        }
        for (v, w) in self.rdp.iter_mut().zip(&other.rdp) {
            *v = subsampled_gaussian::round_up(*v + *w);
        }
        Ok(self)
    }

    /// ε at one order under a conversion (may be +∞, never NaN, never below 0).
    pub fn epsilon_at(rdp: f64, alpha: u32, delta: f64, conversion: Conversion) -> f64 {
        if rdp.is_nan() || rdp == f64::INFINITY {
            return f64::INFINITY;
        }
        let a = f64::from(alpha);
        let eps = match conversion {
            Conversion::Classic => rdp + (-delta.dln()) / (a - 1.0),
            Conversion::Improved => rdp + (-1.0 / a).dln_1p() - (delta.dln() + a.dln()) / (a - 1.0),
        };
        let eps = eps.max(0.0);
        // Round up by a few ulps to cover the arithmetic above.
        if eps > 0.0 {
            eps * (1.0 + 1e-14)
        } else {
            eps
        }
    }

    /// The smallest ε over the curve's orders for this δ.
    pub fn epsilon(&self, delta: f64, conversion: Conversion) -> Result<EpsDelta> {
        check_delta(delta)?;
        let mut best = EpsDelta {
            epsilon: f64::INFINITY,
            delta,
            order: 0,
        };
        for (&a, &r) in self.orders.iter().zip(&self.rdp) {
            let e = Self::epsilon_at(r, a, delta, conversion);
            if e < best.epsilon {
                best = EpsDelta {
                    epsilon: e,
                    delta,
                    order: a,
                };
            }
        }
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_curve_and_composition() {
        let o = [2, 4, 8];
        let g = RdpCurve::gaussian(2.0, &o).unwrap();
        assert!((g.rdp[1] - 0.5).abs() < 1e-10);
        let g3 = g.clone().times(3);
        assert!((g3.rdp[2] - 3.0).abs() < 1e-9);
        let c = g.clone().compose(&g3).unwrap();
        assert!((c.rdp[0] - 1.0).abs() < 1e-9);
        assert!(g.compose(&RdpCurve::zero(&[2, 3])).is_err());
        assert!(RdpCurve::gaussian(0.0, &o)
            .unwrap()
            .rdp
            .iter()
            .all(|v| v.is_infinite()));
    }

    #[test]
    fn conversions_match_their_formulas() {
        let (r, a, d) = (0.7, 9u32, 1e-5);
        let classic = RdpCurve::epsilon_at(r, a, d, Conversion::Classic);
        assert!((classic - (0.7 + (1e5f64).dln() / 8.0)).abs() < 1e-12);
        let improved = RdpCurve::epsilon_at(r, a, d, Conversion::Improved);
        let want = 0.7 + (1.0 - 1.0 / 9.0f64).dln() - ((1e-5f64 * 9.0).dln()) / 8.0;
        assert!((improved - want).abs() < 1e-12);
        assert!(improved < classic);
        assert_eq!(
            RdpCurve::epsilon_at(f64::INFINITY, a, d, Conversion::Classic),
            f64::INFINITY
        );
        assert_eq!(
            RdpCurve::epsilon_at(f64::NAN, a, d, Conversion::Classic),
            f64::INFINITY
        );
        assert!(RdpCurve::epsilon_at(0.0, 1000, 0.5, Conversion::Improved) >= 0.0);
    }

    #[test]
    fn epsilon_picks_best_order_and_checks_delta() {
        let c = RdpCurve::gaussian(1.0, &default_orders()).unwrap();
        let e = c.epsilon(1e-5, Conversion::Classic).unwrap();
        // Closed form for the Gaussian: min over α of α/2 + ln(1/δ)/(α−1).
        let mut best = f64::INFINITY;
        for a in 2..=256 {
            best = best.min(a as f64 / 2.0 + (1e5f64).dln() / (a as f64 - 1.0));
        }
        assert!(e.epsilon >= best && e.epsilon < best * (1.0 + 1e-9));
        assert!(c.epsilon(0.0, Conversion::Classic).is_err());
        assert!(c.epsilon(1.0, Conversion::Classic).is_err());
        assert!(c.epsilon(f64::NAN, Conversion::Classic).is_err());
    }

    #[test]
    fn parameter_checks_name_the_value() {
        let e = check_epsilon(-1.0).unwrap_err().to_string();
        assert!(e.contains("epsilon") && e.contains("-1"), "{e}");
        assert!(check_epsilon(0.0).is_err());
        assert!(check_epsilon(f64::INFINITY).is_err());
        let d = check_delta(1.5).unwrap_err().to_string();
        assert!(d.contains("delta") && d.contains("1.5"), "{d}");
        assert!("paper".parse::<Preset>().is_ok());
        assert!("x"
            .parse::<Preset>()
            .unwrap_err()
            .to_string()
            .contains("'default' or 'paper'"));
    }
}
