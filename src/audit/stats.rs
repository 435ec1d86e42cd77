//! Clopper–Pearson bounds and the ε lower bound of a hypothesis test.

/// ln(k!) for k ≤ n, as a table (exact sums of logs; n is at most a few million here).
fn ln_factorials(n: usize) -> Vec<f64> {
    let mut t = vec![0.0f64; n + 1];
    for k in 1..=n {
        t[k] = t[k - 1] + (k as f64).ln();
    }
    t
}

/// P(Bin(n, p) ≤ k).
fn binom_cdf(k: usize, n: usize, p: f64, lf: &[f64]) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut s = 0.0;
    for i in 0..=k.min(n) {
        s += (lf[n] - lf[i] - lf[n - i] + i as f64 * lp + (n - i) as f64 * lq).exp();
    }
    s.min(1.0)
}

/// One-sided Clopper–Pearson upper bound on p from k successes in n trials at confidence
/// 1 − a: the p with P(Bin(n, p) ≤ k) = a (1 when k = n). Bisection, rounded up.
pub fn cp_upper(k: usize, n: usize, a: f64) -> f64 {
    if n == 0 || k >= n {
        return 1.0;
    }
    let lf = ln_factorials(n);
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if binom_cdf(k, n, mid, &lf) > a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// One-sided Clopper–Pearson lower bound on p at confidence 1 − a (0 when k = 0), rounded
/// down: 1 − the upper bound on the failure rate.
pub fn cp_lower(k: usize, n: usize, a: f64) -> f64 {
    if n == 0 || k == 0 {
        return 0.0;
    }
    (1.0 - cp_upper(n - k, n, a)).max(0.0)
}

/// The ε lower bound a test with (fp of n0) false and (tp of n1) true positives certifies at
/// confidence 1 − alpha (alpha split over the two proportions): for an (ε, δ)-DP mechanism
/// every test has TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε·(1 − TPR) + δ, so
/// ε ≥ max(ln((TPR_lo − δ)/FPR_hi), ln((TNR_lo − δ)/FNR_hi)). 0 when nothing is certified.
pub fn epsilon_lower_bound(
    tp: usize,
    n1: usize,
    fp: usize,
    n0: usize,
    delta: f64,
    alpha: f64,
) -> f64 {
    let a = alpha / 2.0;
    let tpr_lo = cp_lower(tp, n1, a);
    let fpr_hi = cp_upper(fp, n0, a);
    let tnr_lo = cp_lower(n0 - fp, n0, a);
    let fnr_hi = cp_upper(n1 - tp, n1, a);
    let one = |num: f64, den: f64| {
        if num - delta > 0.0 && den > 0.0 {
            ((num - delta) / den).ln()
        } else {
            0.0
        }
    };
    one(tpr_lo, fpr_hi).max(one(tnr_lo, fnr_hi)).max(0.0)
}

/// A fast approximation of [`epsilon_lower_bound`] with Wilson score intervals (z = 1.96),
/// used only to choose among candidate tests on the calibration half.
pub fn epsilon_lower_bound_approx(tp: usize, n1: usize, fp: usize, n0: usize, delta: f64) -> f64 {
    let z = 1.96f64;
    let wilson = |k: usize, n: usize, upper: bool| {
        let (k, n) = (k as f64, n as f64);
        let p = k / n;
        let c = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        if upper {
            (c + h).min(1.0)
        } else {
            (c - h).max(0.0)
        }
    };
    let one = |num: f64, den: f64| {
        if num - delta > 0.0 && den > 0.0 {
            ((num - delta) / den).ln()
        } else {
            0.0
        }
    };
    one(wilson(tp, n1, false), wilson(fp, n0, true))
        .max(one(wilson(n0 - fp, n0, false), wilson(n1 - tp, n1, true)))
        .max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_known_values() {
        // k = 0: upper bound solves (1 − p)^n = a.
        let u = cp_upper(0, 100, 0.025);
        assert!((u - (1.0 - 0.025f64.powf(0.01))).abs() < 1e-9, "{u}");
        // k = n: lower bound solves p^n = a.
        let l = cp_lower(100, 100, 0.025);
        assert!((l - 0.025f64.powf(0.01)).abs() < 1e-9, "{l}");
        // 5 of 20 at 97.5 %: [0.0866, 0.4910] (R's binom.test).
        assert!((cp_lower(5, 20, 0.025) - 0.08657).abs() < 1e-4);
        assert!((cp_upper(5, 20, 0.025) - 0.49105).abs() < 1e-4);
    }

    #[test]
    fn epsilon_bound() {
        // A perfect test on 500 + 500 runs certifies ln(TPR_lo/FPR_hi) ≈ ln(0.9926/0.00735).
        let e = epsilon_lower_bound(500, 500, 0, 500, 1e-5, 0.05);
        assert!((4.8..5.0).contains(&e), "{e}");
        // A useless test certifies nothing.
        assert_eq!(epsilon_lower_bound(250, 500, 250, 500, 1e-5, 0.05), 0.0);
    }
}
