//! Stable evaluation of the moments B(2m) that appear in the subsampled-Gaussian RDP bounds.
//!
//! The papers write B(n) = Σ_{i=0}^{n} (−1)^i C(n,i) e^{(i−1) i / (2z²)}. That alternating sum
//! cancels catastrophically (for z = 4 and n = 128 it subtracts numbers near e^{500} to get a
//! result many orders of magnitude smaller) and overflows f64 for small z. We never evaluate it.
//!
//! Instead note that e^{(i−1)i/(2z²)} = E[L^i] for the privacy-loss ratio L = e^Y with
//! Y ~ N(−s²/2, s²), s = 1/z. Hence, by the binomial theorem,
//!
//! ```text
//! B(n) = E[(1 − L)^n] = E[(e^Y − 1)^n]      (n even, so this is a positive moment)
//! ```
//!
//! We integrate that moment numerically in log space. For even n the integrand
//! f(y) = (e^y − 1)^n φ(y) is analytic and log-concave on each side of its zero at y = 0, with
//! curvature at least that of the Gaussian factor (1/s²). So each side has one peak, found by
//! bisection on the derivative of log f, and is bounded by a Gaussian envelope of standard
//! deviation s around it. We walk a uniform grid outwards from each peak until ln f has dropped
//! by 40; by concavity the slope there is at least 40/(9 s), so the neglected tails are below
//! e^{−40}·s/(4h) of the peak term. The step h is 1/8 of the narrowest of s and the two peak
//! widths (curvature^{−1/2} of ln f at each peak), and the trapezoidal rule — which converges
//! geometrically for analytic integrands on the whole line — is then accurate to far below
//! f64 round-off.
//! The result is checked against 1,200-digit evaluations of the alternating sum in the tests
//! and against the shared reference file in `tests/accountant_reference.rs`.
use crate::math::DetFloat;

/// Grid steps per (narrowest) peak width.
const STEPS_PER_WIDTH: f64 = 8.0;
/// Walk away from a peak until the log-integrand is this far below the peak value.
const TAIL_DROP: f64 = 40.0;

/// ln|e^y − 1|, accurate for every finite y (−∞ at y = 0).
pub(crate) fn ln_abs_expm1(y: f64) -> f64 {
    if y > 1.0 {
        y + (-(-y).dexp()).dln_1p()
    } else if y < -1.0 {
        (-(y.dexp())).dln_1p()
    } else {
        y.dexp_m1().abs().dln()
    }
}

/// Finds the root of a strictly decreasing function on (lo, hi) to within `tol`.
fn bisect_decreasing(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64, tol: f64) -> f64 {
    for _ in 0..200 {
        if hi - lo <= tol {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// ln B(n) for even n ≥ 2 and noise multiplier z > 0 (finite).
///
/// Returns a value with relative error far below 1e-12 (see the module docs).
pub fn ln_b_even(n: u32, z: f64) -> f64 {
    debug_assert!(n >= 2 && n % 2 == 0);
    debug_assert!(z > 0.0 && z.is_finite());
    let s = 1.0 / z;
    let s2 = s * s;
    if n == 2 {
        // B(2) = E[(L−1)²] = e^{s²} − 1, in closed form.
        return s2.dexp_m1().dln();
    }
    let nf = f64::from(n);
    let mu = -0.5 * s2;
    // d/dy ln f(y) = n e^y/(e^y − 1) − (y − μ)/s², strictly decreasing on each side of 0.
    let dlogf = |y: f64| nf / (-(-y).dexp_m1()) - (y - mu) / s2;
    let logf = |y: f64| nf * ln_abs_expm1(y) - (y - mu) * (y - mu) / (2.0 * s2);
    let tol = 0.01 * s;

    // Positive side: derivative is +∞ at 0⁺ and → −∞.
    let mut hi = (nf * s2 + 1.0).max(1.0);
    while dlogf(hi) > 0.0 {
        hi *= 2.0;
    }
    let peak_pos = bisect_decreasing(dlogf, 0.0, hi, tol);
    // Negative side: derivative → +∞ as y → −∞ and → −∞ at 0⁻.
    let mut lo = -(s + 1.0);
    while dlogf(lo) < 0.0 {
        lo *= 2.0;
    }
    let peak_neg = bisect_decreasing(dlogf, lo, 0.0, tol);

    // Curvature of −ln f at each peak: 1/s² + n e^y/(e^y − 1)²; width = curvature^{-1/2}.
    let curv = |y: f64| {
        let e = (-y.abs()).dexp();
        1.0 / s2 + nf * e / ((1.0 - e) * (1.0 - e))
    };
    let width = s
        .min(curv(peak_pos).dpowf(-0.5))
        .min(curv(peak_neg).dpowf(-0.5));
    let h = width / STEPS_PER_WIDTH;
    let mut values: Vec<f64> = Vec::with_capacity(1024);
    let (top_neg, top_pos) = (logf(peak_neg), logf(peak_pos));
    let top = top_neg.max(top_pos);
    for (peak, peak_value) in [(peak_neg, top_neg), (peak_pos, top_pos)] {
        // A side whose whole mass (at most its peak value times its ±10 s support) is below
        // e^{−TAIL_DROP} of the other side's peak term cannot change the sum: skip it.
        if peak_value + (20.0 * s / h).dln() < top - TAIL_DROP {
            continue;
        }
        let start = (peak / h).round() as i64;
        let threshold = logf(peak) - TAIL_DROP;
        // On each side of 0, ln f is concave, so it decreases monotonically away from its peak:
        // the first grid point below the threshold ends the walk. Walking towards 0 always
        // stops by 0 itself, where ln f = −∞, so the two sides never count a point twice.
        for dir in [-1i64, 1] {
            let mut i = if dir < 0 { start } else { start + 1 };
            loop {
                let y = i as f64 * h;
                if (peak < 0.0 && y > 0.0) || (peak > 0.0 && y < 0.0) {
                    break;
                }
                let v = logf(y);
                if v < threshold {
                    break;
                }
                values.push(v);
                i += dir;
            }
        }
    }
    let m = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let acc: f64 = values.iter().map(|v| (v - m).dexp()).sum();
    m + acc.dln() + h.dln() - 0.5 * (2.0 * std::f64::consts::PI * s2).dln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ln B(n) at 1,200 digits by the alternating sum, from `tests/reference/make_moments.py`
    /// (mpmath). Columns: n, z, ln B(n).
    #[allow(clippy::excessive_precision)]
    const EXACT: &[(u32, f64, f64)] = include!("../../tests/reference/moments_table.rs.in");

    #[test]
    fn matches_high_precision_alternating_sum() {
        assert!(EXACT.len() >= 40);
        for &(n, z, want) in EXACT {
            let got = ln_b_even(n, z);
            let err = (got - want).abs() / want.abs().max(1.0);
            assert!(
                err < 1e-13,
                "n={n} z={z}: got {got}, want {want}, err {err}"
            );
        }
    }

    #[test]
    fn b2_closed_form_agrees_with_quadrature_path() {
        // Evaluate B(4) two ways: quadrature, and the short alternating sum, which is
        // well-conditioned at moderate z.
        for &z in &[0.5, 0.8, 1.0, 1.5] {
            let a = |i: f64| ((i - 1.0) * i / (2.0 * z * z)).dexp();
            let direct = a(0.0) - 4.0 * a(1.0) + 6.0 * a(2.0) - 4.0 * a(3.0) + a(4.0);
            let got = ln_b_even(4, z).dexp();
            assert!(
                (got / direct - 1.0).abs() < 1e-10,
                "z={z}: {got} vs {direct}"
            );
        }
    }

    #[test]
    fn log_helpers() {
        assert!((ln_abs_expm1(1e-10) - (1e-10f64).dln()).abs() < 1e-9);
        assert!((ln_abs_expm1(800.0) - 800.0).abs() < 1e-12);
        assert!((ln_abs_expm1(-800.0)).abs() < 1e-12);
        assert_eq!(ln_abs_expm1(0.0), f64::NEG_INFINITY);
    }
}
