//! Calibration: the smallest noise multiplier whose ε does not exceed a target.
//!
//! ε is non-increasing in the noise multiplier z for every bound we use (each RDP term is
//! non-increasing in z, and the conversions are monotone in RDP). We bracket the target and
//! bisect in log z, always keeping an upper end z_hi with ε(z_hi) ≤ target, and return that
//! upper end — so the answer never overshoots. Callers that turn z into a σ re-account the σ
//! they report (see `mechanisms::cda::calibrate`).

use super::{check_delta, check_epsilon, Conversion, EpsDelta, Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::math::DetFloat;

/// What a calibration aims at: the smallest noise whose ε at `delta`, on `orders` under
/// `preset` and composed with `extra` (the RDP already spent by the run's other releases), is
/// at most `epsilon`. Every mechanism's calibration takes one (instead of five positional
/// arguments, two of them bare f64s that different functions took in different orders).
#[derive(Debug, Clone, Copy)]
pub struct Goal<'a> {
    /// Target ε.
    pub epsilon: f64,
    /// δ of the conversion.
    pub delta: f64,
    /// RDP orders.
    pub orders: &'a [u32],
    /// Conversion preset.
    pub preset: Preset,
    /// RDP spent elsewhere in the same run (composed before converting).
    pub extra: Option<&'a RdpCurve>,
}

impl<'a> Goal<'a> {
    /// ε at δ on `orders` under the default preset, with nothing else spent in the run.
    pub fn new(epsilon: f64, delta: f64, orders: &'a [u32]) -> Self {
        Goal {
            epsilon,
            delta,
            orders,
            preset: Preset::Default,
            extra: None,
        }
    }

    /// The same goal with other orders and `extra` (a coarser grid for rankings).
    pub fn on(self, orders: &'a [u32], extra: Option<&'a RdpCurve>) -> Self {
        Goal {
            orders,
            extra,
            ..self
        }
    }

    /// `curve` composed with `extra`.
    pub fn with_extra(&self, curve: RdpCurve) -> Result<RdpCurve> {
        match self.extra {
            Some(e) => curve.compose(e),
            None => Ok(curve),
        }
    }
}

/// Relative width of the final bracket on z.
pub const Z_REL_TOL: f64 = 1e-9;
const Z_MIN: f64 = 1e-6;
const Z_MAX: f64 = 1e8;

/// Re-accounts a noise scale and raises it until the accountant certifies it: `check(x)` for
/// x = `start`, `start`·(1 + `step`), `start`·(1 + `step`)², … (`tries` values at most),
/// returning the first `Some`, or `None` when none was certified.
///
/// Calibration inverts the accountant in floating point (bisection on z, then z turned into
/// the σ a mechanism draws, or a grid rounding), so the scale it finds can miss its target by
/// an ulp or two. Every calibration in the crate ends in this loop, so the number it reports
/// is one the accountant itself certified. The step and the number of tries stay each
/// caller's (they fix which σ is reported, so changing them changes seeded outputs).
pub fn certify_upward<T>(
    start: f64,
    step: f64,
    tries: usize,
    mut check: impl FnMut(f64) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let mut x = start;
    for _ in 0..tries {
        if let Some(t) = check(x)? {
            return Ok(Some(t));
        }
        x *= 1.0 + step;
    }
    Ok(None)
}

/// Result of a calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibrated {
    /// The noise multiplier (std / L2 sensitivity).
    pub z: f64,
    /// The guarantee at `z` (ε ≤ target).
    pub eps: EpsDelta,
}

/// Smallest z with ε(curve(z), δ) ≤ `target` (up to [`Z_REL_TOL`] relative).
///
/// `curve` must be non-increasing in z. Errors if even z = 1e8 cannot meet the target (e.g. the
/// target is below what δ allows at these orders, or a fixed part of the budget already
/// exceeds it).
pub fn smallest_z(
    target: f64,
    delta: f64,
    conversion: Conversion,
    curve: impl Fn(f64) -> Result<RdpCurve>,
) -> Result<Calibrated> {
    smallest_z_within(target, delta, conversion, curve, Z_REL_TOL)
}

/// [`smallest_z`] to a relative tolerance `tol` (≥ [`Z_REL_TOL`]): the returned z still
/// meets the target, and is at most a factor 1 + `tol` above the smallest that does. For
/// rankings (the automatic l), where a coarse z is enough and each evaluation is costly.
pub fn smallest_z_within(
    target: f64,
    delta: f64,
    conversion: Conversion,
    curve: impl Fn(f64) -> Result<RdpCurve>,
    tol: f64,
) -> Result<Calibrated> {
    smallest_z_near(target, delta, conversion, curve, tol, None)
}

/// [`smallest_z_within`], bracketing from `guess` (a z expected near the answer) instead of
/// from 1: steps of 2 %, each the square of the last, up to the factor of 4 that
/// [`smallest_z_within`] steps by. The guess changes the number of evaluations and, inside
/// the tolerance, which z is returned; that z meets the same two conditions. `None` is
/// [`smallest_z_within`] itself.
pub fn smallest_z_near(
    target: f64,
    delta: f64,
    conversion: Conversion,
    curve: impl Fn(f64) -> Result<RdpCurve>,
    tol: f64,
    guess: Option<f64>,
) -> Result<Calibrated> {
    let tol = tol.max(Z_REL_TOL);
    check_epsilon(target)?;
    check_delta(delta)?;
    let eval = |z: f64| -> Result<EpsDelta> { curve(z)?.epsilon(delta, conversion) };
    let guess = guess.filter(|g| g.is_finite() && *g > 0.0);
    let grow = |f: f64| {
        if guess.is_some() {
            (f * f).min(4.0)
        } else {
            4.0
        }
    };
    let mut step = if guess.is_some() { 1.02 } else { 4.0 };
    // Bracket: up from the start until the target is met, remembering the last miss.
    let mut hi = guess.map_or(1.0, |g| g.clamp(Z_MIN, Z_MAX));
    let mut e_hi = eval(hi)?;
    let mut missed: Option<(f64, f64)> = None;
    while e_hi.epsilon > target {
        if hi >= Z_MAX {
            // The floor is either fixed releases composed in, or the conversion at the
            // largest order (ε ≥ about ln(1/δ)/(α_max − 1)): only the PLD accountant or higher
            // orders get below the latter, so the message names both ways out.
            let max_order = curve(hi)?.orders.iter().copied().max().unwrap_or(0);
            return Err(Error::param(
                "epsilon",
                target,
                format!(
                    "the RDP accountant cannot certify this target at δ = {delta}: with any amount of noise its bound stays ≥ {:.4} \
                     (noise multiplier {hi:e}, orders up to α = {max_order}); raise ε or δ, give higher orders, or choose the PLD accountant where the mechanism offers it",
                    e_hi.epsilon
                ),
            ));
        }
        missed = Some((hi, e_hi.epsilon));
        hi *= step;
        step = grow(step);
        e_hi = eval(hi)?;
    }
    // Else walk down until the target is missed: ε(lo) > target ≥ ε(hi).
    let (mut lo, eps_lo) = match missed {
        Some(m) => m,
        None => {
            let mut lo = hi / step;
            loop {
                let z = lo.max(Z_MIN);
                let e = eval(z)?;
                if e.epsilon > target {
                    break (z, e.epsilon);
                }
                if z <= Z_MIN {
                    // Essentially no noise is needed; report the tiny z that meets the target.
                    return Ok(Calibrated { z, eps: e });
                }
                hi = z;
                e_hi = e;
                step = grow(step);
                lo /= step;
            }
        }
    };
    // Shrink the bracket in log z with the Illinois variant of regula falsi on
    // g(x) = ln ε(e^x) − ln target (decreasing), keeping ε(lo) > target ≥ ε(hi). Every eighth
    // step is a plain bisection, which guarantees progress if regula falsi stalls.
    let g = |e: f64| e.dln() - target.dln();
    let (mut x_lo, mut x_hi) = (lo.dln(), hi.dln());
    let (mut g_lo, mut g_hi) = (g(eps_lo), g(e_hi.epsilon));
    let mut side = 0i32;
    let mut step = 0u32;
    while hi / lo - 1.0 > tol {
        step += 1;
        let width = x_hi - x_lo;
        let mut x = if g_lo.is_finite() && g_hi.is_finite() && g_lo > g_hi && step % 8 != 0 {
            x_hi - g_hi * width / (g_hi - g_lo)
        } else {
            0.5 * (x_lo + x_hi)
        };
        // Stay strictly inside, at least a small fraction of the width from either end.
        let margin = (width * 1e-3).max(x_hi.abs().max(1.0) * f64::EPSILON * 4.0);
        x = x.clamp(x_lo + margin, x_hi - margin);
        if !(x > x_lo && x < x_hi) {
            break;
        }
        let z = x.dexp();
        let e = eval(z)?;
        let gx = g(e.epsilon);
        if e.epsilon <= target {
            (hi, x_hi, g_hi, e_hi) = (z, x, gx, e);
            if side == 1 {
                g_lo /= 2.0;
            }
            side = 1;
        } else {
            (lo, x_lo, g_lo) = (z, x, gx);
            if side == -1 {
                g_hi /= 2.0;
            }
            side = -1;
        }
        // Close the gap from the feasible side once regula falsi converges from one end.
        if hi / lo - 1.0 > tol && side == 1 && x_hi - x_lo < 1e-3 {
            let probe = hi * (1.0 - tol * 0.5);
            if probe > lo {
                let ep = eval(probe)?;
                if ep.epsilon > target {
                    (lo, x_lo, g_lo) = (probe, probe.dln(), g(ep.epsilon));
                }
            }
        }
    }
    Ok(Calibrated { z: hi, eps: e_hi })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first certified value of start·(1 + step)^i, in that order, each checked once;
    /// none after `tries`; the check's error passes through.
    #[test]
    fn certify_upward_returns_the_first_certified_step() {
        let mut seen = Vec::new();
        let got = certify_upward(1.0, 0.5, 10, |x| {
            seen.push(x);
            Ok((x >= 3.0).then_some(x))
        })
        .unwrap();
        assert_eq!(got, Some(3.375));
        assert_eq!(seen, [1.0, 1.5, 2.25, 3.375]);
        let mut n = 0;
        let none: Option<f64> = certify_upward(1.0, 1e-9, 7, |_| {
            n += 1;
            Ok(None)
        })
        .unwrap();
        assert_eq!((none, n), (None, 7));
        let err = certify_upward(1.0, 1e-9, 7, |_| -> Result<Option<()>> {
            Err(Error::Accountant("no".into()))
        });
        assert!(err.is_err());
    }
    use crate::accountant::default_orders;

    #[test]
    fn gaussian_calibration_round_trips_and_never_overshoots() {
        let orders = default_orders();
        for &target in &[0.3, 1.0, 3.0, 10.0] {
            let c = smallest_z(target, 1e-5, Conversion::Improved, |z| {
                RdpCurve::gaussian(z, &orders)
            })
            .unwrap();
            let again = RdpCurve::gaussian(c.z, &orders)
                .unwrap()
                .epsilon(1e-5, Conversion::Improved)
                .unwrap();
            assert!(again.epsilon <= target, "{} > {target}", again.epsilon);
            // Tight: a slightly smaller z overshoots.
            let below = RdpCurve::gaussian(c.z * (1.0 - 1e-6), &orders)
                .unwrap()
                .epsilon(1e-5, Conversion::Improved)
                .unwrap();
            assert!(below.epsilon > target);
        }
    }

    /// The RDP curve of `t` subsampled Gaussian steps at rate `q` on the default orders,
    /// counting its evaluations in `count`.
    fn counted_curve(
        q: f64,
        t: u64,
        count: &std::cell::Cell<usize>,
    ) -> impl Fn(f64) -> Result<RdpCurve> + Copy + '_ {
        move |z| {
            count.set(count.get() + 1);
            Ok(RdpCurve::subsampled_gaussian(
                q,
                z,
                &default_orders(),
                super::super::WorBound::Theorem27,
            )?
            .times(t))
        }
    }

    #[test]
    fn converges_in_few_accountant_evaluations() {
        // Calibration cost is dominated by curve evaluations; regula falsi must need far
        // fewer than bisection to 1e-9 (about 30 after bracketing).
        let count = std::cell::Cell::new(0);
        let curve = counted_curve(4.0 / 6000.0, 6000, &count);
        let c = smallest_z(10.0, 1e-5, Conversion::Improved, curve).unwrap();
        assert!(c.eps.epsilon <= 10.0 && c.eps.epsilon > 9.9999);
        assert!(count.get() <= 16, "{} evaluations", count.get());
    }

    /// From any guess (far below, far above, near, non-finite) the z meets the target and is
    /// within a factor 1 + tol of the smallest that does; a guess within 2 % of the answer
    /// takes fewer evaluations than bracketing from 1; no guess is `smallest_z_within`.
    #[test]
    fn from_any_guess_the_z_meets_the_same_conditions_and_a_near_guess_is_cheaper() {
        let tol = 1e-3;
        let count = std::cell::Cell::new(0);
        let curve = counted_curve(6.0 / 5000.0, 6000, &count);
        let eps_at = |z: f64| {
            curve(z)
                .unwrap()
                .epsilon(1e-5, Conversion::Improved)
                .unwrap()
        };
        for target in [0.5, 1.0, 5.0] {
            let best = smallest_z(target, 1e-5, Conversion::Improved, curve)
                .unwrap()
                .z;
            count.set(0);
            let plain = smallest_z_within(target, 1e-5, Conversion::Improved, curve, tol).unwrap();
            let plain_evals = count.get();
            let none =
                smallest_z_near(target, 1e-5, Conversion::Improved, curve, tol, None).unwrap();
            assert_eq!(none, plain);
            for guess in [
                best * 1e-3,
                best * 0.99,
                best * 1.015,
                best * 50.0,
                f64::NAN,
                -1.0,
            ] {
                count.set(0);
                let c =
                    smallest_z_near(target, 1e-5, Conversion::Improved, curve, tol, Some(guess))
                        .unwrap();
                let evals = count.get();
                let case = format!("ε {target}, guess {guess}: z {} vs {best}", c.z);
                assert!(
                    c.eps.epsilon <= target && eps_at(c.z).epsilon <= target,
                    "{case}"
                );
                assert!(
                    c.z >= best * (1.0 - 1e-9) && c.z <= best * (1.0 + tol),
                    "{case}"
                );
                if (0.98..1.02).contains(&(guess / best)) {
                    assert!(
                        evals < plain_evals,
                        "{case}: {evals} vs {plain_evals} evaluations"
                    );
                }
            }
        }
    }

    #[test]
    fn unreachable_target_is_an_error() {
        let orders: Vec<u32> = (2..=16).collect();
        let err = smallest_z(0.01, 1e-5, Conversion::Classic, |z| {
            RdpCurve::gaussian(z, &orders)
        })
        .unwrap_err();
        assert!(err.to_string().contains("epsilon = 0.01"), "{err}");
        assert!(
            smallest_z(-1.0, 1e-5, Conversion::Classic, |z| RdpCurve::gaussian(
                z, &orders
            ))
            .is_err()
        );
        assert!(
            smallest_z(1.0, 2.0, Conversion::Classic, |z| RdpCurve::gaussian(
                z, &orders
            ))
            .is_err()
        );
    }
}
