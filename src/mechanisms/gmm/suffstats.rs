//! The default GMM release under record adjacency: noisy sufficient statistics, with every
//! noise scale and the budget split fixed from public quantities (ε, δ, d, the public bound B)
//! and every data-dependent quantity released under DP (issue 11, item 6).
//!
//! # Proof note
//!
//! *Setting.* Rows are clipped to ‖x‖₂ ≤ B with B public (given by the user; never computed
//! from the data) and scaled by 1/B, so every row z lies in the unit ball. Adjacency: replace
//! one record, label included; N is public. K classes (labels public as a set).
//!
//! *Statistics.* Per class k: the count N_k, the sum S_k = Σ z and the second moment
//! M_k = Σ z zᵀ. A neighbour either replaces a record inside one class (S_k moves by
//! ‖z − z′‖ ≤ 2, M_k by ‖zzᵀ − z′z′ᵀ‖_F ≤ √2, since ‖zzᵀ − z′z′ᵀ‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(z·z′)²
//! ≤ 2) or moves one record from class a to class b (N_a, N_b move by 1; S_a, S_b by ≤ 1;
//! M_a, M_b by ≤ 1 in Frobenius norm). So with per-class sensitivities Δ_S = 2 and Δ_M = √2,
//! one neighbour changes at most two classes, each within these sensitivities.
//!
//! *Mechanisms* (all noise exact: integer arithmetic, no floating-point noise; the proof of
//! the grid releases is in [`super::exactnoise`]).
//! * Rows on the grid: every unit-ball row is truncated toward zero onto the grid 2^{−30},
//!   with ‖row‖₂ ≤ 1 enforced exactly; N_k, S_k and M_k are then computed exactly in integers
//!   ([`super::exactnoise::class_stats`]), so Δ_S = 2 and Δ_M = √2 hold for the computed
//!   statistics with no rounding margin.
//! * Counts: the weights mapping of [`super::weights`] with ε_cnt (exact discrete Laplace
//!   noise of scale ≥ 2/ε_cnt on every count: L1 sensitivity 2; projected onto the
//!   compositions of N; smoothed by λ·Uniform, a data-independent branch): (ε_cnt, 0)-DP.
//! * Sums: S̃_k = G_S·(round(S_k/G_S) + Z), Z discrete Gaussian, from
//!   `GridGaussian::covering(σ_S, Δ_S, d)` with σ_S = Δ_S / r(ε_mean, δ_m): its noise multiplier
//!   is ≥ σ_S/Δ_S, so it is at least as private as the Gaussian mechanism whose sensitivity is
//!   r noise standard deviations, hence (ε_mean, δ_m)-DP per class, r from
//!   [`super::design::max_mahalanobis_sensitivity`] (the smaller of the classic rule and the
//!   analytic Gaussian bound). The discrete Gaussian's privacy-loss bounds (CKS20) are those
//!   of the continuous one for the same multiplier, so r applies unchanged.
//! * Second moments: the upper triangle of M_k (diagonal included, m = d(d+1)/2 coordinates)
//!   released the same way with `GridGaussian::covering(σ_M, Δ_M, m)`, σ_M = Δ_M / r(ε_cov, δ_c);
//!   the upper-triangle vector's L2 change is at most the Frobenius change, so it is
//!   (ε_cov, δ_c)-DP per class.
//!
//! *Composition* (basic): ε = ε_cnt + 2·(ε_mean + ε_cov), δ = 2·(δ_m + δ_c) with
//! ε_cnt = ε/10, ε_mean = ε_cov = (ε − ε_cnt)/4 (times 1 − 10⁻¹², so the sum never exceeds
//! the target after rounding), δ_m = δ_c = δ/4. The split is the same for every class and
//! every dataset: nothing about the data chooses it.
//!
//! *Post-processing.* The released numbers are Ñ (integers), S̃_k (multiples of G_S) and M̃_k
//! (multiples of G_M); everything below is computed from them. π̃ = Ñ/N; μ̃_k = S̃_k / Ñ_k; Σ̃_k = (M̃_k − Ñ_k μ̃_k μ̃_kᵀ)/max(Ñ_k − 1, 1),
//! symmetrized, eigenvalues clipped below at σ_M / max(Ñ_k − 1, 1) (a function of released
//! and public numbers only); then mapped back to input units (μ·B, Σ·B²). Nothing else about
//! the data reaches the model or the receipt.

use super::design::max_mahalanobis_sensitivity;
use super::exactnoise::{class_stats, release_fixed, upper_pairs, ROW_BITS};
use super::linalg::{sym_fn, Mat};
use super::weights::{self, Branch};
use crate::error::{Error, Result};
use crate::mechanisms::noise::GridGaussian;
use crate::rng::ReleaseRng;

/// Share of ε for the class counts.
pub const COUNT_SHARE: f64 = 0.1;
/// Per-class L2 sensitivity of a class sum (unit ball).
pub const SUM_SENSITIVITY: f64 = 2.0;
/// Per-class Frobenius sensitivity of a class second moment (unit ball).
pub const MOMENT_SENSITIVITY: f64 = std::f64::consts::SQRT_2;

/// The public split of (ε, δ).
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// ε of the counts.
    pub eps_counts: f64,
    /// ε of one class's sum.
    pub eps_mean: f64,
    /// ε of one class's second moment.
    pub eps_cov: f64,
    /// δ of one class's sum.
    pub delta_mean: f64,
    /// δ of one class's second moment.
    pub delta_cov: f64,
    /// σ of the sum noise.
    pub sigma_sum: f64,
    /// σ of the second-moment noise.
    pub sigma_moment: f64,
}

impl Split {
    /// The split for a target (ε, δ); public.
    pub fn new(epsilon: f64, delta: f64) -> Split {
        let shrink = 1.0 - 1e-12;
        let eps_counts = epsilon * COUNT_SHARE * shrink;
        let b = (epsilon - eps_counts) / 4.0 * shrink;
        let dm = delta / 4.0;
        Split {
            eps_counts,
            eps_mean: b,
            eps_cov: b,
            delta_mean: dm,
            delta_cov: dm,
            sigma_sum: SUM_SENSITIVITY / max_mahalanobis_sensitivity(b, dm),
            sigma_moment: MOMENT_SENSITIVITY / max_mahalanobis_sensitivity(b, dm),
        }
    }

    /// The exact-noise release of one class sum (d coordinates): grid and discrete Gaussian
    /// (public: from σ_S, Δ_S and d only).
    pub fn sum_noise(&self, d: usize) -> Result<GridGaussian> {
        GridGaussian::covering(self.sigma_sum, SUM_SENSITIVITY, d)
    }

    /// The exact-noise release of one class second moment (d(d+1)/2 coordinates).
    pub fn moment_noise(&self, d: usize) -> Result<GridGaussian> {
        GridGaussian::covering(self.sigma_moment, MOMENT_SENSITIVITY, d * (d + 1) / 2)
    }

    /// Total ε = ε_cnt + 2(ε_mean + ε_cov).
    pub fn epsilon(&self) -> f64 {
        self.eps_counts + 2.0 * (self.eps_mean + self.eps_cov)
    }

    /// Total δ = 2(δ_m + δ_c).
    pub fn delta(&self) -> f64 {
        2.0 * (self.delta_mean + self.delta_cov)
    }
}

/// A release in unit-ball units.
pub struct Released {
    /// Released counts (a composition of N).
    pub counts: Vec<usize>,
    /// Which branch of the count mapping was drawn.
    pub branch: Branch,
    /// Means.
    pub means: Vec<Vec<f64>>,
    /// Covariances (symmetric positive definite).
    pub covs: Vec<Mat>,
    /// The released sums S̃_k (multiples of `sum_grid`).
    pub sums: Vec<Vec<f64>>,
    /// The released second moments M̃_k, upper triangle row-major (multiples of `moment_grid`).
    pub moments: Vec<Vec<f64>>,
    /// The grid G_S of the sums.
    pub sum_grid: f64,
    /// The grid G_M of the second moments.
    pub moment_grid: f64,
    /// The noise standard deviation on the sums (≥ σ_S; data units of the unit ball).
    pub sum_scale: f64,
    /// The noise standard deviation on the second moments (≥ σ_M).
    pub moment_scale: f64,
}

/// Releases counts, means and covariances of the unit-ball rows `z` (labels in 0..k).
pub fn release(
    z: &[Vec<f64>],
    labels: &[usize],
    k: usize,
    split: &Split,
    lambda: f64,
    rng: &mut ReleaseRng,
) -> Result<Released> {
    let d = z.first().map_or(0, Vec::len);
    if d == 0 || k == 0 {
        return Err(Error::Data("no rows or no features to model".into()));
    }
    let stats = class_stats(z, labels, k, d)?;
    let counts: Vec<usize> = stats.iter().map(|s| s.count).collect();
    let n: usize = counts.iter().sum();
    let (released, branch) = weights::release_counts(&counts, split.eps_counts, lambda, rng)?;
    debug_assert_eq!(released.iter().sum::<usize>(), n);
    let sum_noise = split.sum_noise(d)?;
    let moment_noise = split.moment_noise(d)?;
    let mut means = Vec::with_capacity(k);
    let mut covs = Vec::with_capacity(k);
    let mut sums = Vec::with_capacity(k);
    let mut moments = Vec::with_capacity(k);
    for (st, &nk) in stats.iter().zip(&released) {
        let nk = nk as f64;
        let s = release_fixed(&st.sum, ROW_BITS, &sum_noise, rng)?;
        let mv = release_fixed(&st.moment, 2 * ROW_BITS, &moment_noise, rng)?;
        let mut m = Mat::zeros(d);
        for (t, (i, j)) in upper_pairs(d).into_iter().enumerate() {
            m.set(i, j, mv[t]);
            m.set(j, i, mv[t]);
        }
        let mu: Vec<f64> = s.iter().map(|v| v / nk).collect();
        let denom = (nk - 1.0).max(1.0);
        let mut cov = Mat::zeros(d);
        for i in 0..d {
            for j in 0..d {
                cov.set(i, j, (m.get(i, j) - nk * mu[i] * mu[j]) / denom);
            }
        }
        let floor = split.sigma_moment / denom;
        covs.push(sym_fn(&cov.symmetrize(), |l| l.max(floor)).symmetrize());
        means.push(mu);
        sums.push(s);
        moments.push(mv);
    }
    Ok(Released {
        counts: released,
        branch,
        means,
        covs,
        sums,
        moments,
        sum_grid: sum_noise.grid(),
        moment_grid: moment_noise.grid(),
        sum_scale: sum_noise.sigma_units() * sum_noise.grid(),
        moment_scale: moment_noise.sigma_units() * moment_noise.grid(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gmm::exactnoise::on_grid;
    use rand::Rng;

    #[test]
    fn split_meets_the_target_and_noise_does_not_depend_on_the_data() {
        for &(e, dl) in &[(0.5, 1e-5), (1.0, 1e-6), (8.0, 1e-5)] {
            let s = Split::new(e, dl);
            assert!(s.epsilon() <= e && s.epsilon() > e * (1.0 - 1e-9));
            assert!(s.delta() <= dl * (1.0 + 1e-15));
            // The sum's Gaussian mechanism meets (ε_mean, δ_m) by the exact (analytic) Gaussian
            // privacy profile, δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) with μ = Δ/σ, and the
            // second moment's likewise; and σ is no larger than the classic rule
            // Δ·√(2 ln(2/δ))/ε (the rule the design uses as its upper bound).
            use super::super::design::analytic_gaussian_delta;
            assert!(analytic_gaussian_delta(2.0 / s.sigma_sum, s.eps_mean) <= s.delta_mean);
            assert!(
                analytic_gaussian_delta(std::f64::consts::SQRT_2 / s.sigma_moment, s.eps_cov)
                    <= s.delta_cov
            );
            let classic = 2.0 * (2.0 * (2.0 / s.delta_mean).ln()).sqrt() / s.eps_mean;
            assert!(
                s.sigma_sum <= classic * (1.0 + 1e-9),
                "{} vs {classic}",
                s.sigma_sum
            );
        }
        // The same (ε, δ) on two different datasets gives the same noise: a neighbour that
        // moves a record to another class changes nothing in the split.
        let a = Split::new(1.0, 1e-5);
        let b = Split::new(1.0, 1e-5);
        assert_eq!(a.sigma_sum, b.sigma_sum);
        assert_eq!(a.sigma_moment, b.sigma_moment);
    }

    #[test]
    fn release_is_unbiased_enough_and_psd() {
        // 2 classes, 2000 rows each, d = 2, at a large ε the release is close to the truth.
        let mut rng = ReleaseRng::seeded(5);
        let mut z = Vec::new();
        let mut labels = Vec::new();
        for i in 0..4000 {
            let c = i % 2;
            let u: f64 = rng.gen::<f64>() - 0.5;
            let v: f64 = rng.gen::<f64>() - 0.5;
            z.push(vec![0.3 * c as f64 + 0.2 * u, -0.2 + 0.2 * v]);
            labels.push(c);
        }
        let s = Split::new(50.0, 1e-5);
        let r = release(&z, &labels, 2, &s, 0.0, &mut rng).unwrap();
        assert_eq!(r.counts.iter().sum::<usize>(), 4000);
        assert!((r.means[1][0] - 0.3).abs() < 0.01, "{:?}", r.means);
        assert!((r.means[0][1] + 0.2).abs() < 0.01);
        // Var of 0.2·U(−½, ½) = 0.04/12.
        assert!(
            (r.covs[0].get(0, 0) - 0.04 / 12.0).abs() < 0.001,
            "{}",
            r.covs[0].get(0, 0)
        );
        for c in &r.covs {
            assert!(super::super::linalg::cholesky(c).is_some());
        }
    }

    /// The released sums and moments are integer multiples of their public grids, the grids
    /// depend only on (ε, δ, d), and the means are S̃_k/Ñ_k (post-processing).
    #[test]
    fn released_statistics_are_grid_multiples() {
        let mut rng = ReleaseRng::seeded(6);
        let z: Vec<Vec<f64>> = (0..300)
            .map(|_| (0..3).map(|_| rng.gen::<f64>() * 0.4 - 0.2).collect())
            .collect();
        let labels: Vec<usize> = (0..300).map(|i| i % 3).collect();
        let s = Split::new(1.0, 1e-5);
        let r = release(&z, &labels, 3, &s, 0.0, &mut rng).unwrap();
        assert_eq!(r.sum_grid, s.sum_noise(3).unwrap().grid());
        assert_eq!(r.moment_grid, s.moment_noise(3).unwrap().grid());
        assert!(r.sum_grid < 0.01 && r.moment_grid < 0.01);
        for c in 0..3 {
            assert_eq!(r.sums[c].len(), 3);
            assert_eq!(r.moments[c].len(), 6);
            assert!(on_grid(&r.sums[c], r.sum_grid), "{:?}", r.sums[c]);
            assert!(on_grid(&r.moments[c], r.moment_grid));
            for (m, v) in r.means[c].iter().zip(&r.sums[c]) {
                assert_eq!(*m, v / r.counts[c] as f64);
            }
        }
    }
}
