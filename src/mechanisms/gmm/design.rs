//! Algorithm 1: choosing the budget split (ε0 for the weights; per class ε_k for the mean and
//! ε_W,k for the Wishart step), the mean-noise covariances Γ_k⁻¹ (SDP, eq. 23) and the Wishart
//! precisions γ_k, by alternating block updates of a design objective, stopped when the
//! objective changes by ≤ 1e−3.
//!
//! All quantities are in unit-ball units (features scaled by 1/B). The design objective is the
//! expected KL (eq. 12) with two corrections:
//! * covariance term: ½ Σ_i [a_i − ln(1 + a_i)], a_i = (d + 1)/(γ λ_i(Σ_k)) (the exact
//!   Gaussian KL with W replaced by its mean). The paper's d·ln γ + (d+1)tr(Σ⁻¹)/γ comes from
//!   the bound −ln|Σ + W| ≤ −ln|W| and has an interior minimum, eq. (22), which would add
//!   more noise than the budget requires; the true expected KL decreases in γ, so γ_k takes its
//!   whole share of the budget;
//! * weight term: the noisy-count mapping of [`super::weights`] instead of Prop. 2.
//!
//! Because the mean constraint is X ⪰ v vᵀ/r(ε_k)² (r: the largest Mahalanobis sensitivity a
//! Gaussian mechanism may have at (ε_k, δ_m)), the SDP is solved once per class with r = 1
//! and rescaled: X_k(ε_k) = X_k(1)/r(ε_k)².

use super::linalg::{sym_eigen, Mat};
use super::weights::expected_weight_kl;
use crate::accountant::{Conversion, RdpCurve};
use crate::math::DetFloat;
use crate::mechanisms::gaussian::normal_cdf;

/// δ(ε) of a Gaussian mechanism whose sensitivity is `mu` noise standard deviations (Balle &
/// Wang 2018, Thm. 8), plus a safety margin covering the error of `normal_cdf`: it is never
/// below the exact value.
pub fn analytic_gaussian_delta(mu: f64, eps: f64) -> f64 {
    if mu <= 0.0 {
        return 0.0;
    }
    let a = normal_cdf(mu / 2.0 - eps / mu);
    let b = eps.dexp() * normal_cdf(-mu / 2.0 - eps / mu);
    let v = a - b + 1e-6 * (a + b);
    if v.is_nan() {
        1.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

/// The RDP orders of the GMM Gaussian releases: 2..=256, then a geometric grid (×1.05) below
/// `up_to`. A small ε needs a large order (about 1 + 2 ln(1/δ)/ε: 740 at ε = 0.05,
/// δ = 1e-8), and any order gives a valid bound, so the grid only ever lowers ε.
pub(crate) fn gaussian_orders(up_to: u32) -> Vec<u32> {
    let geometric = std::iter::successors(Some(256.0f64), |&a| Some(a * 1.05))
        .skip(1)
        .take_while(|&a| a < f64::from(up_to))
        .map(|a| a as u32);
    (2..=256u32).chain(geometric).collect()
}

/// The largest Mahalanobis sensitivity r such that a Gaussian mechanism with sensitivity r
/// (in noise units) is (ε, δ)-DP, capped by the classic Gaussian-mechanism rule r² = ε²/(2 ln(2/δ)).
///
/// The bound is the RDP curve α·r²/2 converted by the accountant's conversion (Balle et al.
/// 2020) at the orders 2..=256 and a geometric grid above: r² = 2·max_α (ε − c_δ(α))/α, where
/// c_δ(α) is the conversion's
/// term at RDP 0. That curve is the one proven for the exact noise every GMM release uses (the
/// discrete Gaussian on a grid: the noise module's Lemma 2, CKS20); the continuous Gaussian's
/// analytic profile (Balle & Wang 2018), used before, is not proven for that noise.
pub fn max_mahalanobis_sensitivity(eps: f64, delta: f64) -> f64 {
    if !(eps > 0.0 && delta > 0.0 && delta < 1.0) {
        return 0.0;
    }
    let classic = eps / (2.0 * (2.0 / delta).dln()).sqrt();
    // Up to 2^31 (this bound needs no RDP curve, only the conversion at each order).
    let rho = gaussian_orders(1 << 31)
        .into_iter()
        .map(|a| (eps - RdpCurve::epsilon_at(0.0, a, delta, Conversion::Improved)) / f64::from(a))
        .fold(0.0, f64::max);
    // Shrunk by 1e-9 relative: more than the accountant's upward rounding (1e-11 on RDP, 1e-14 on ε).
    classic.min((2.0 * rho * (1.0 - 1e-9)).sqrt())
}

/// Per-class inputs of the design.
#[derive(Debug, Clone)]
pub struct ClassDesignInput {
    /// N_k.
    pub count: usize,
    /// Eigenvalues of Σ_k (unit-ball units).
    pub cov_eigs: Vec<f64>,
    /// ½ tr(Σ_k⁻¹ X_k(1)): the mean KL at r = 1.
    pub mean_kl_unit: f64,
    /// How the covariance's share of the budget buys noise.
    pub cov_cost: CovCost,
}

/// The covariance mechanism's price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CovCost {
    /// Wishart_d(I/γ, d + 1): ε_W = `rate`·γ.
    Wishart {
        /// ε per unit of γ.
        rate: f64,
    },
    /// Gaussian noise on the upper triangle: σ = `sensitivity`/r(ε, `delta`).
    Gaussian {
        /// Worst-case L2 (Frobenius) sensitivity of the class covariance.
        sensitivity: f64,
        /// δ of one class's covariance release.
        delta: f64,
    },
}

/// The chosen design.
#[derive(Debug, Clone)]
pub struct Design {
    /// ε0 (weights).
    pub eps0: f64,
    /// Per class: ε_k (mean).
    pub eps_mean: Vec<f64>,
    /// Per class: ε_W,k (covariance).
    pub eps_cov: Vec<f64>,
    /// Per class: γ_k (Wishart; 0 with Gaussian covariance noise).
    pub gamma: Vec<f64>,
    /// Per class: σ_k of the Gaussian covariance noise (0 with Wishart).
    pub sigma_cov: Vec<f64>,
    /// Per class: r(ε_k).
    pub r: Vec<f64>,
    /// Design objective (approximate expected KL) at the solution.
    pub objective: f64,
    /// Alternating iterations.
    pub iterations: usize,
}

/// Covariance term of the design objective.
pub fn wishart_kl(gamma: f64, d: usize, eigs: &[f64]) -> f64 {
    if gamma <= 0.0 {
        return f64::INFINITY;
    }
    0.5 * eigs
        .iter()
        .map(|&l| {
            let a = (d as f64 + 1.0) / (gamma * l);
            a - a.dln_1p()
        })
        .sum::<f64>()
}

/// Covariance term for symmetric Gaussian noise of entry std σ followed by eigenvalue
/// clipping: the Wishart form with a_i = σ·√(d + 1)/λ_i (the noise's spectral scale is about
/// σ√d; ≈ ¼Σa_i² for small noise, linear for large).
pub fn gaussian_cov_kl(sigma: f64, d: usize, eigs: &[f64]) -> f64 {
    if !(sigma.is_finite()) {
        return f64::INFINITY;
    }
    0.5 * eigs
        .iter()
        .map(|&l| {
            let a = sigma * (d as f64 + 1.0).sqrt() / l;
            a - a.dln_1p()
        })
        .sum::<f64>()
}

/// (γ, σ) bought by `eps_cov` under `cost`.
pub fn cov_params(cost: CovCost, eps_cov: f64) -> (f64, f64) {
    match cost {
        CovCost::Wishart { rate } => (eps_cov / rate, 0.0),
        CovCost::Gaussian { sensitivity, delta } => {
            // A class's covariance moves by ≤ f when a point is added or removed (a label
            // flip, or a record replaced across classes) and by ≤ 2f when a record is replaced
            // inside the class: the noise makes the first (ε, δ)-DP and the second
            // (2ε, 2δ)-DP, which is what the per-class accounting (two class-costs per
            // neighbour) charges for it.
            let s1 = sensitivity / max_mahalanobis_sensitivity(eps_cov, delta);
            let s2 = 2.0 * sensitivity / max_mahalanobis_sensitivity(2.0 * eps_cov, 2.0 * delta);
            (0.0, s1.max(s2))
        }
    }
}

fn class_cost(c: &ClassDesignInput, d: usize, eps_mean: f64, eps_cov: f64, delta_m: f64) -> f64 {
    if eps_mean <= 0.0 || eps_cov <= 0.0 {
        return f64::INFINITY;
    }
    let r = max_mahalanobis_sensitivity(eps_mean, delta_m);
    let cov = match c.cov_cost {
        CovCost::Wishart { rate } => wishart_kl(eps_cov / rate, d, &c.cov_eigs),
        CovCost::Gaussian { .. } => {
            gaussian_cov_kl(cov_params(c.cov_cost, eps_cov).1, d, &c.cov_eigs)
        }
    };
    c.mean_kl_unit / (r * r) + cov
}

/// Golden-section minimization of f on [lo, hi].
fn golden(mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut x1 = hi - g * (hi - lo);
    let mut x2 = lo + g * (hi - lo);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..80 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        }
        if hi - lo < 1e-9 * hi.abs().max(1e-12) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Algorithm 1 (alternating): block A — per class, the split of the class budget
/// b = (ε − ε0)/2 into ε_k and ε_W,k (hence Γ_k⁻¹ and γ_k); block B — ε0 with the per-class
/// split fractions held fixed. Starts from ε0 = ε_k = ε_W,k = ε/3-like shares, stops when
/// the objective changes by ≤ `tol`.
///
/// `classes_per_neighbour` is 2: one neighbour changes at most two classes, so the per-class
/// budgets compose as ε0 + 2b ≤ ε.
pub fn optimize(
    classes: &[ClassDesignInput],
    weights: &[f64],
    d: usize,
    epsilon: f64,
    delta_m: f64,
    lambda: f64,
    tol: f64,
) -> Design {
    let counts: Vec<usize> = classes.iter().map(|c| c.count).collect();
    let shrink = 1.0 - 1e-12;
    let budget = |eps0: f64| (epsilon - eps0) / 2.0 * shrink;
    let objective = |eps0: f64, frac: &[f64]| -> f64 {
        let b = budget(eps0);
        let mut tot = (1.0 - lambda) * expected_weight_kl(eps0, &counts);
        for (k, c) in classes.iter().enumerate() {
            tot += weights[k] * class_cost(c, d, frac[k] * b, (1.0 - frac[k]) * b, delta_m);
        }
        tot
    };
    let mut eps0 = epsilon / 3.0;
    let mut frac = vec![0.5; classes.len()];
    let mut obj = objective(eps0, &frac);
    let mut iterations = 0;
    for it in 1..=100 {
        iterations = it;
        // block A: per-class split given ε0
        let b = budget(eps0);
        for (k, c) in classes.iter().enumerate() {
            frac[k] = golden(1e-6, 1.0 - 1e-6, |f| {
                class_cost(c, d, f * b, (1.0 - f) * b, delta_m)
            });
        }
        // block B: ε0 given the split fractions
        let fr = frac.clone();
        eps0 = golden(1e-6 * epsilon, epsilon * (1.0 - 1e-6), |e| {
            objective(e, &fr)
        });
        let new = objective(eps0, &frac);
        let change = (obj - new).abs();
        obj = new;
        if change <= tol {
            break;
        }
    }
    let b = budget(eps0);
    let eps_mean: Vec<f64> = frac.iter().map(|f| f * b).collect();
    let eps_cov: Vec<f64> = frac.iter().map(|f| (1.0 - f) * b).collect();
    let params: Vec<(f64, f64)> = classes
        .iter()
        .zip(&eps_cov)
        .map(|(c, &e)| cov_params(c.cov_cost, e))
        .collect();
    let gamma: Vec<f64> = params.iter().map(|p| p.0).collect();
    let sigma_cov: Vec<f64> = params.iter().map(|p| p.1).collect();
    let r: Vec<f64> = eps_mean
        .iter()
        .map(|&e| max_mahalanobis_sensitivity(e, delta_m))
        .collect();
    Design {
        eps0,
        eps_mean,
        eps_cov,
        gamma,
        sigma_cov,
        r,
        objective: obj,
        iterations,
    }
}

/// Eigenvalues of a symmetric matrix (convenience).
pub fn eigenvalues(m: &Mat) -> Vec<f64> {
    sym_eigen(m).0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known values of the analytic Gaussian mechanism: for σ = 1, Δ = 1, ε = 1 the exact δ
    /// is Φ(−0.5) − e·Φ(−1.5) = 0.30853754 − 2.71828183·0.06680720 = 0.12693674.
    #[test]
    fn analytic_gaussian_matches_known_value() {
        let d = analytic_gaussian_delta(1.0, 1.0);
        assert!((d - 0.126_936_74).abs() < 1e-6, "{d}");
        assert!(d >= 0.126_936_7);
    }

    /// r never exceeds the classic rule; the Gaussian mechanism's RDP curve at r, converted
    /// by the accountant (an independent path: `RdpCurve::gaussian` and `epsilon`), is within
    /// (ε, δ), and so is the analytic δ (continuous noise); and r is tight for the RDP bound
    /// wherever the classic rule does not cap it.
    #[test]
    fn sensitivity_budget_is_conservative() {
        // The accountant's orders (it accepts up to 100,000): 2..=256, then ×1.1 steps.
        let mut orders: Vec<u32> = (2..=256).collect();
        while let Some(&a) = orders.last().filter(|&&a| a < 90_000) {
            orders.push((f64::from(a) * 1.1) as u32);
        }
        for &eps in &[1e-4, 0.01, 0.05, 0.3, 1.0, 2.0, 5.0] {
            for &delta in &[1e-3, 1e-5, 1e-8] {
                let r = max_mahalanobis_sensitivity(eps, delta);
                let classic = eps / (2.0 * (2.0f64 / delta).dln()).sqrt();
                assert!(r <= classic * (1.0 + 1e-15));
                assert!(analytic_gaussian_delta(r, eps) <= delta);
                assert!(r > 0.0, "ε = {eps}, δ = {delta}");
                if eps < 0.01 {
                    // Its best order is beyond what the accountant's curves accept.
                    continue;
                }
                let at = |r: f64| {
                    RdpCurve::gaussian(1.0 / r, &orders)
                        .unwrap()
                        .epsilon(delta, Conversion::Improved)
                        .unwrap()
                        .epsilon
                };
                assert!(at(r) <= eps, "ε = {eps}, δ = {delta}: {} > {eps}", at(r));
                if r < classic {
                    assert!(at(r * 1.01) > eps, "ε = {eps}, δ = {delta}: r not tight");
                }
            }
        }
    }

    /// The Gaussian covariance noise covers both neighbour shapes.
    #[test]
    fn gaussian_covariance_noise_covers_replacement_inside_a_class() {
        for &eps in &[0.05, 0.4, 1.5, 4.0] {
            let f = 0.03;
            let delta = 2.5e-6;
            let (_, sigma) = cov_params(
                CovCost::Gaussian {
                    sensitivity: f,
                    delta,
                },
                eps,
            );
            assert!(analytic_gaussian_delta(f / sigma, eps) <= delta);
            assert!(analytic_gaussian_delta(2.0 * f / sigma, 2.0 * eps) <= 2.0 * delta);
            assert!(sigma >= f / max_mahalanobis_sensitivity(eps, delta));
            assert!(sigma >= 2.0 * f / max_mahalanobis_sensitivity(2.0 * eps, 2.0 * delta));
        }
    }

    #[test]
    fn design_spends_exactly_the_budget_and_improves_on_the_start() {
        let classes: Vec<ClassDesignInput> = [200usize, 300, 50]
            .iter()
            .map(|&n| ClassDesignInput {
                count: n,
                cov_eigs: vec![0.01, 0.02, 0.005],
                mean_kl_unit: 0.5 * 3.0 * (2.0 / (n as f64 - 1.0)).powi(2) / 0.01,
                cov_cost: CovCost::Wishart {
                    rate: 2.0 / n as f64,
                },
            })
            .collect();
        let w = vec![200.0 / 550.0, 300.0 / 550.0, 50.0 / 550.0];
        let des = optimize(&classes, &w, 3, 1.0, 5e-6, 1e-3, 1e-3);
        for k in 0..3 {
            let tot = des.eps0 + 2.0 * (des.eps_mean[k] + des.eps_cov[k]);
            assert!(tot <= 1.0 && tot > 1.0 - 1e-9, "{tot}");
            assert!((des.eps_cov[k] - des.gamma[k] * 2.0 / classes[k].count as f64).abs() < 1e-12);
        }
        // the equal split (ε/3 each) is feasible; the design must not be worse
        let b = (1.0 - 1.0 / 3.0) / 2.0;
        let start: f64 = (1.0 - 1e-3) * expected_weight_kl(1.0 / 3.0, &[200, 300, 50])
            + classes
                .iter()
                .zip(&w)
                .map(|(c, wk)| wk * class_cost(c, 3, b / 2.0, b / 2.0, 5e-6))
                .sum::<f64>();
        assert!(
            des.objective <= start + 1e-12,
            "{} > {start}",
            des.objective
        );
    }
}
