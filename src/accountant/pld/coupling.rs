//! The charge that lets a PLD computed for the continuous Gaussian cover exact discrete
//! Gaussian noise.
//!
//! # Why a charge is needed
//! The releases add N_ℤ(0, σ²) (σ in grid units) to an integer statistic. Canonne, Kamath
//! and Steinke (2020) prove its *Rényi* curve is at most the continuous Gaussian's, but its
//! privacy profile δ(ε) is not below the continuous one's: computed exactly in one dimension
//! the discrete δ(ε) is larger by up to 0.016 at σ = Δ = 1, falling about as 1/σ². A PLD
//! accountant run on the continuous Gaussian's loss distribution therefore needs a charge
//! before its ε can be claimed for the discrete noise.
//!
//! # The coupling
//! Let R(σ) be the law of round(Y), Y ~ N(0, σ²) (nearest integer). For an integer statistic
//! S, round(S + Y) = S + round(Y), so releasing S + round(Y) is post-processing of the
//! continuous Gaussian mechanism S + Y and has every (ε, δ) guarantee the continuous PLD
//! certifies. Replacing, one draw at a time, R(σ) by N_ℤ(0, σ²) changes the law of the whole
//! (adaptively composed) output by at most τ(σ) in total variation per draw (the hybrid
//! argument: each switch is a TV-τ change of one kernel), so the two outputs are within
//! T = Σ τ(σ_i) ≤ N·τ(σ_min) for N draws. For any event E and neighbours x, x′:
//! P_d(x)(E) ≤ P_r(x)(E) + T ≤ e^ε·P_r(x′)(E) + δ_c(ε) + T ≤ e^ε·P_d(x′)(E) + δ_c(ε) + (1 + e^ε)·T.
//! So the discrete release is (ε, δ_c(ε) + (1 + e^ε)·T)-DP, with δ_c the continuous profile.
//!
//! # The bound on τ(σ) ([`rounding_tv_bound`])
//! With φ_σ the N(0, σ²) density, q(k) = ∫_{k−½}^{k+½} φ_σ and p(k) = φ_σ(k)/Z,
//! Z = Σ_k φ_σ(k):
//! * |q(k) − φ_σ(k)| = |∫_{−½}^{½} (φ_σ(k + t) − φ_σ(k)) dt| ≤ (1/24)·sup_{|t|≤½} |φ_σ″(k + t)|
//!   (Taylor at k; the linear term integrates to 0, and ∫ t²/2 = 1/24).
//! * Σ_k sup over [k − ½, k + ½] of |φ_σ″| ≤ ∫|φ_σ″| + TV(|φ_σ″|) (on each unit interval
//!   the supremum is at most the mean plus the variation there), and ∫|φ_σ″| = 4φ(1)/σ²
//!   ≤ 0.9680/σ², TV(|φ_σ″|) = (2φ(0) + 8φ(√3))/σ³ ≤ 1.5100/σ³ (|φ″(u)| = |u² − 1|φ(u) has
//!   its peaks φ(0) at 0 and 2φ(√3) at ±√3 and its zeros at ±1, ±∞).
//! * Σ_k |p(k) − φ_σ(k)| = Z − 1 = 2Σ_{j≥1} e^{−2π²σ²j²} ≤ 3e^{−2π²σ²} for σ ≥ ½ (Poisson
//!   summation).
//!
//! Hence τ(σ) = ½Σ|p − q| ≤ (0.9680/σ² + 1.5100/σ³)/48 + 1.5·e^{−2π²σ²}. The exact TV (40
//! digits) is 0.01650 at σ = 1 (bound 0.0516), 8.00·10⁻⁴ at σ = 5 (bound 1.06·10⁻³) and
//! 2.24·10⁻⁵ at σ = 30 (bound 2.36·10⁻⁵); the tests recompute it. At σ ≥ 2^30 grid units
//! (the exact releases of a synthesis, [`COUPLED_MIN_SIGMA_UNITS`]) τ ≤ 1.76·10⁻²⁰.
//!
//! # Many draws: the Hellinger bound ([`rounding_hellinger_sq_bound`], [`product_tv_bound`])
//! Adding τ per draw grows linearly in the number of draws N. The squared Hellinger distance
//! H² = 1 − Σ_k √(p(k)q(k)) grows at most linearly too, but TV ≤ √(2H²), so N draws cost
//! only √N:
//! * *Composition.* For adaptively composed kernels the Bhattacharyya coefficient
//!   BC = 1 − H² of the joint laws is at least the product of the per-step infima
//!   (BC(P_XY, Q_XY) = Σ_x √(p(x)q(x))·BC(P_Y|x, Q_Y|x)), so with at most N draws, each with
//!   H² ≤ h², 1 − BC_joint ≤ 1 − (1 − h²)^N ≤ N·h² (fewer draws: pad with identical ones).
//!   Then TV ≤ √(1 − BC²) ≤ √(2(1 − BC)) ≤ √(2N·h²).
//! * *One draw, σ ≥ 30.* 2H² = Σ(√p − √q)² = Σ (q − p)²/(√p + √q)² with r = q/p
//!   = Z·I_k, I_k = ∫_{−½}^{½} e^{−kt/σ² − t²/(2σ²)} dt. With c = |k|/σ²:
//!   1 − cosh(c/2)/(24σ²) ≤ I_k ≤ sinh(c/2)/(c/2) ≤ 1 + c²·cosh(c/2)/24 (e^{−bt²} ≥ 1 − bt²,
//!   ∫t² = 1/12; e^{−bt²} ≤ 1; sinh x/x ≤ 1 + x²cosh(x)/6), and 1 ≤ Z ≤ 1 + ζ, ζ = 3e^{−2π²σ²}.
//!   So for |k| ≤ 40σ, |r − 1| ≤ A·(1 + k²/σ²)/σ² with A = (1 + ζ)·cosh(20/σ)/24 + ζσ²;
//!   then r ≥ 1 − η, η = 1601·A/σ² < 1, so (√p + √q)² = p(1 + √r)² ≥ 4p(1 − η) and
//!   Σ_{|k|≤40σ} (√p − √q)² ≤ Σ p(r − 1)²/(4(1 − η)) ≤ A²·M/(4(1 − η)σ⁴), with
//!   M = Σ_k φ_σ(k)(1 + k²/σ²)² ≤ ∫ + TV = 6 + 4.917/σ
//!   (p ≤ φ_σ as Z ≥ 1; the sum of a function over ℤ is within its total variation of its
//!   integral; g(u) = φ(u)(1 + u²)² rises to g(√3) = 16φ(√3) and has TV 4·g(√3) − 2g(0)).
//!   Beyond 40σ, (√p − √q)² ≤ p + q, whose sum is below 10⁻³⁰⁰ (both tails are below
//!   4Q(39.9) < 10⁻³⁴⁰). Hence H² ≤ A²(6 + 4.917/σ)/(8(1 − η)σ⁴) + 10⁻³⁰⁰, about
//!   1/(768σ⁴) (the exact value is about 1/(2304σ⁴), from E[(U² − 1)²] = 2 in place of 6):
//!   at σ = 2^30, H² ≤ 9.8·10⁻⁴⁰.
//!
//! A synthesis makes at most 2^48 draws ([`MAX_SYNTH_DRAWS`], checked where the draws are
//! planned), so its total variation is at most √(2·2^48·9.8·10⁻⁴⁰) = 7.4·10⁻¹³: the charge
//! (1 + e^ε)·7.4·10⁻¹³ is 2.8·10⁻¹² at ε = 1, 1.1·10⁻¹⁰ at ε = 5 and 1.6·10⁻⁸ at ε = 10.
//!
//! # Solving for ε ([`coupled_epsilon`])
//! A claim (ε, δ) needs E(δ − (1 + e^ε)·T) ≤ ε, E(·) the continuous accountant's ε at a given
//! δ (decreasing in δ). The smallest such ε is found by iterating ε ← E(δ − (1 + e^ε)·T)
//! from E(δ) (an increasing sequence) and returning the first iterate that passes the check
//! exactly; +∞ when δ − (1 + e^ε)·T ≤ 0.

use crate::math::DetFloat;

/// Every exact discrete Gaussian release of a synthesis that the headline PLD covers draws
/// with at least this scale in grid units (2^30): per draw, τ ≤ [`rounding_tv_bound`] of it,
/// about 1.76·10⁻²⁰.
pub const COUPLED_MIN_SIGMA_UNITS: f64 = 1_073_741_824.0;

/// An upper bound on the total variation between N_ℤ(0, σ²) and the rounded N(0, σ²), σ in
/// grid units (module docs); 1 (trivial) for σ < ½ or NaN. Rounded up.
pub fn rounding_tv_bound(sigma: f64) -> f64 {
    if sigma.is_nan() || sigma < 0.5 {
        return 1.0;
    }
    if sigma.is_infinite() {
        return 0.0;
    }
    let s2 = sigma * sigma;
    let poly = (0.9680 / s2 + 1.5100 / (s2 * sigma)) / 48.0;
    let lattice = 1.5 * (-2.0 * std::f64::consts::PI * std::f64::consts::PI * s2).dexp();
    ((poly + lattice) * (1.0 + 1e-12)).min(1.0)
}

/// The most discrete Gaussian draws one synthesis makes (2^48; the synthesis checks its
/// plan against it): the N of the coupling charge.
pub const MAX_SYNTH_DRAWS: f64 = 281_474_976_710_656.0;

/// An upper bound on the squared Hellinger distance 1 − Σ√(p(k)q(k)) between N_ℤ(0, σ²) and
/// the rounded N(0, σ²), σ in grid units (module docs); 1 (trivial) below σ = 30 or for NaN.
/// Rounded up.
pub fn rounding_hellinger_sq_bound(sigma: f64) -> f64 {
    if sigma.is_nan() || sigma < 30.0 {
        return 1.0;
    }
    if sigma.is_infinite() {
        return 0.0;
    }
    let s2 = sigma * sigma;
    let zeta = 3.0 * (-2.0 * std::f64::consts::PI * std::f64::consts::PI * s2).dexp();
    let a = (1.0 + zeta) * (20.0 / sigma).cosh() / 24.0 + zeta * s2;
    let eta = 1601.0 * a / s2;
    let m = 6.0 + 4.917 / sigma;
    ((a * a * m / (8.0 * (1.0 - eta) * s2 * s2) + 1e-300) * (1.0 + 1e-12)).min(1.0)
}

/// An upper bound on the total variation between an adaptively composed run of at most
/// `draws` discrete Gaussian draws, each of scale ≥ `sigma_min` grid units, and the same run
/// with rounded continuous Gaussians: the smaller of N·τ and √(2N·H²) (module docs).
/// Rounded up; +∞ for a NaN or negative count.
pub fn product_tv_bound(draws: f64, sigma_min: f64) -> f64 {
    if draws.is_nan() || draws < 0.0 {
        return f64::INFINITY;
    }
    let linear = draws * rounding_tv_bound(sigma_min);
    let hellinger = (2.0 * draws * rounding_hellinger_sq_bound(sigma_min)).sqrt();
    (linear.min(hellinger) * (1.0 + 1e-12)).min(1.0)
}

/// The δ left for the continuous accountant when ε is claimed with coupling budget `tv`:
/// δ − (1 + e^ε)·tv, rounded down; ≤ 0 (or NaN-free −∞) when nothing is left.
pub fn remaining_delta(delta: f64, epsilon: f64, tv: f64) -> f64 {
    if tv == 0.0 {
        return delta;
    }
    let charge = (1.0 + epsilon.dexp()) * tv * (1.0 + 1e-12);
    let left = delta - charge;
    if left.is_nan() {
        f64::NEG_INFINITY
    } else {
        left * (1.0 - 1e-15)
    }
}

/// The smallest ε (found by the iteration of the module docs) with
/// `eps_at`(δ − (1 + e^ε)·`tv`) ≤ ε, where `eps_at` is a continuous accountant's ε at a given
/// δ (non-increasing in δ, +∞ allowed). With `tv` = 0 this is `eps_at(delta)`. +∞ when the
/// charge leaves no δ.
pub fn coupled_epsilon(delta: f64, tv: f64, eps_at: impl Fn(f64) -> f64) -> f64 {
    let mut cand = eps_at(delta);
    if tv == 0.0 {
        return cand;
    }
    let mut slack = 0.0;
    for _ in 0..64 {
        if cand.is_nan() || cand.is_infinite() {
            return f64::INFINITY;
        }
        let left = remaining_delta(delta, cand, tv);
        // remaining_delta never returns NaN.
        if left <= 0.0 {
            return f64::INFINITY;
        }
        let g = eps_at(left);
        if g <= cand {
            return cand;
        }
        // Step to g, a little beyond (the slack doubles): the iteration stops at a checked ε.
        slack = if slack == 0.0 {
            (g.abs() * 1e-12).max(1e-15)
        } else {
            slack * 2.0
        };
        cand = g + slack;
    }
    f64::INFINITY
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::accountant::pld::pairs::norm_sf;

    /// ½Σ|N_ℤ(0, σ²)(k) − P(round(N(0, σ²)) = k)|, summed directly in f64 (|k| ≤ 40σ).
    fn exact_tv(sigma: f64) -> f64 {
        let kmax = (40.0 * sigma).ceil() as i64 + 2;
        let w = |k: i64| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp();
        let z: f64 = (-kmax..=kmax).map(w).sum();
        let q = |k: i64| {
            let a = (k as f64 - 0.5) / sigma;
            let b = (k as f64 + 0.5) / sigma;
            // P(a < U ≤ b) for U ~ N(0, 1), from the side with the smaller tails.
            if a >= 0.0 {
                norm_sf(a) - norm_sf(b)
            } else {
                norm_sf(-b) - norm_sf(-a)
            }
        };
        0.5 * (-kmax..=kmax).map(|k| (w(k) / z - q(k)).abs()).sum::<f64>()
    }

    #[test]
    fn tv_bound_covers_the_exact_distance_and_is_tight() {
        // 40-digit values (mpmath) from the module docs, and the f64 sum here.
        for (sigma, exact40) in [(1.0, 0.0164981), (5.0, 0.000800464), (30.0, 2.23999e-5)] {
            let e = exact_tv(sigma);
            assert!(
                (e - exact40).abs() <= 1e-5 * exact40,
                "σ = {sigma}: {e} vs {exact40}"
            );
        }
        for sigma in [0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 30.0, 60.0] {
            let e = exact_tv(sigma);
            let b = rounding_tv_bound(sigma);
            assert!(e <= b, "σ = {sigma}: exact {e} > bound {b}");
            // Tight where it matters (the 1/σ² term is the exact leading term):
            if sigma >= 30.0 {
                assert!(b <= 1.06 * e, "σ = {sigma}: bound {b} vs exact {e}");
            }
        }
        // The leading term 0.9680/48 = 0.020167 against σ²·TV → 0.02016 (mpmath at σ = 30).
        let b = rounding_tv_bound(COUPLED_MIN_SIGMA_UNITS);
        assert!(b > 1.7e-20 && b < 1.8e-20, "{b}");
        assert_eq!(rounding_tv_bound(0.1), 1.0);
        assert_eq!(rounding_tv_bound(f64::NAN), 1.0);
        assert_eq!(product_tv_bound(f64::NAN, 1e9), f64::INFINITY);
    }

    /// ½Σ(√p − √q)², the squared Hellinger distance, summed in f64 (|k| ≤ 40σ) from the
    /// difference p − q (no cancellation in 1 − Σ√(pq)).
    fn exact_hellinger_sq(sigma: f64) -> f64 {
        let kmax = (40.0 * sigma).ceil() as i64 + 2;
        let w = |k: i64| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp();
        let z: f64 = (-kmax..=kmax).map(w).sum();
        0.5 * (-kmax..=kmax)
            .map(|k| {
                let a = (k as f64 - 0.5) / sigma;
                let b = (k as f64 + 0.5) / sigma;
                let q = if a >= 0.0 {
                    norm_sf(a) - norm_sf(b)
                } else {
                    norm_sf(-b) - norm_sf(-a)
                };
                let p = w(k) / z;
                let d = p - q;
                if p + q > 0.0 {
                    d * d / (p.sqrt() + q.sqrt()).powi(2)
                } else {
                    0.0
                }
            })
            .sum::<f64>()
    }

    #[test]
    fn hellinger_bound_covers_the_exact_distance() {
        // ≈ E[(U² − 1)²]/(8·576σ⁴) = 1/(2304σ⁴) is the exact leading term; the bound uses
        // (1 + U²)² (mean 6 instead of 2), so it sits about 3× above (more at σ = 30).
        for sigma in [30.0, 45.0, 60.0, 100.0] {
            let e = exact_hellinger_sq(sigma);
            let b = rounding_hellinger_sq_bound(sigma);
            assert!(e <= b, "σ = {sigma}: exact {e} > bound {b}");
            assert!(b <= 6.0 * e, "σ = {sigma}: bound {b} vs exact {e}");
            if sigma >= 60.0 {
                assert!(b <= 3.6 * e, "σ = {sigma}: bound {b} vs exact {e}");
            }
            // And TV ≤ √(2H²) on the exact values.
            assert!(exact_tv(sigma) <= (2.0 * e).sqrt());
        }
        let h = rounding_hellinger_sq_bound(COUPLED_MIN_SIGMA_UNITS);
        assert!(h > 9.7e-40 && h < 9.9e-40, "{h}");
        // The synthesis charge: at most 2^48 draws at σ ≥ 2^30.
        let t = product_tv_bound(MAX_SYNTH_DRAWS, COUPLED_MIN_SIGMA_UNITS);
        assert!(t > 7.3e-13 && t < 7.5e-13, "{t}");
        // Few draws: the linear bound is the smaller.
        let one = product_tv_bound(1.0, COUPLED_MIN_SIGMA_UNITS);
        assert!(one <= rounding_tv_bound(COUPLED_MIN_SIGMA_UNITS) * (1.0 + 1e-9));
        assert_eq!(rounding_hellinger_sq_bound(10.0), 1.0);
    }

    /// The analytic Gaussian mechanism's δ(ε) at μ = Δ/σ (Balle–Wang 2018).
    fn gauss_delta(mu: f64, eps: f64) -> f64 {
        norm_sf(eps / mu - mu / 2.0) - eps.exp() * norm_sf(eps / mu + mu / 2.0)
    }

    /// ε(δ) of the same by bisection, rounded up (non-increasing in δ).
    pub(crate) fn gauss_eps(mu: f64, delta: f64) -> f64 {
        if delta <= 0.0 {
            return f64::INFINITY;
        }
        let (mut lo, mut hi) = (0.0f64, 200.0f64);
        if gauss_delta(mu, 0.0) <= delta {
            return 0.0;
        }
        for _ in 0..200 {
            let m = 0.5 * (lo + hi);
            if gauss_delta(mu, m) <= delta {
                hi = m;
            } else {
                lo = m;
            }
        }
        hi
    }

    #[test]
    fn coupled_epsilon_meets_the_charged_delta() {
        let delta = 1e-5;
        // Charges from negligible to a fifth of δ.
        for (mu, tv) in [
            (1.0, 1e-12),
            (1.0, 2e-8),
            (2.0, 1e-11),
            (0.5, 3e-7),
            (4.0, 1e-18),
        ] {
            let e0 = gauss_eps(mu, delta);
            let e = coupled_epsilon(delta, tv, |d| gauss_eps(mu, d));
            assert!(e.is_finite(), "μ = {mu}, T = {tv}");
            // Valid: δ_c(ε) + (1 + e^ε)·T ≤ δ.
            let total = gauss_delta(mu, e) + (1.0 + e.exp()) * tv;
            assert!(total <= delta, "μ = {mu}, T = {tv}: δ {total} > {delta}");
            // Never below the uncharged ε, and not looser than needed: 0.1 % less fails.
            assert!(e >= e0, "{e} < {e0}");
            let less = e * 0.999;
            assert!(
                gauss_delta(mu, less) + (1.0 + less.exp()) * tv > delta || less < e0,
                "μ = {mu}, T = {tv}: ε {e} is loose"
            );
        }
        // The same through the PLD accountant (Plan::epsilon_coupled): valid against the
        // analytic curve, above the uncharged ε, and the charge reported.
        use crate::accountant::pld::{Plan, PldOptions};
        let plan = Plan::gaussian(1.0, 1);
        let opts = PldOptions::default();
        let plain = plan.epsilon(delta, &opts).unwrap();
        assert_eq!(plan.epsilon_coupled(delta, &opts, 0.0).unwrap(), plain);
        let tv = 2e-8;
        let c = plan.epsilon_coupled(delta, &opts, tv).unwrap();
        assert!(c.epsilon > plain.epsilon && c.epsilon.is_finite());
        let total = gauss_delta(1.0, c.epsilon) + (1.0 + c.epsilon.exp()) * tv;
        assert!(total <= delta, "{total}");
        assert!(c.charge >= (1.0 + c.epsilon.exp()) * tv, "{c:?}");
        assert_eq!(
            plan.epsilon_coupled(delta, &opts, 1e-5).unwrap().epsilon,
            f64::INFINITY
        );
        // No charge: the continuous answer unchanged.
        assert_eq!(
            coupled_epsilon(delta, 0.0, |d| gauss_eps(1.0, d)),
            gauss_eps(1.0, delta)
        );
        // A charge that eats δ: +∞, never NaN.
        assert_eq!(
            coupled_epsilon(delta, 1e-5, |d| gauss_eps(1.0, d)),
            f64::INFINITY
        );
        assert_eq!(
            coupled_epsilon(delta, f64::NAN, |d| gauss_eps(1.0, d)),
            f64::INFINITY
        );
    }
}
