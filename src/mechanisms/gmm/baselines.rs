//! Baselines (the GMM paper's §V-A), in unit-ball units:
//! * `iid-gaussian`: i.i.d. Gaussian noise on every weight, mean coordinate and
//!   upper-triangular covariance entry, calibrated by the Gaussian's RDP curve (capped by the
//!   classic rule; [`super::design::max_mahalanobis_sensitivity`]) to each group's
//!   worst-case L2 sensitivity, ε and δ split equally over (weights, means, covariances);
//! * `iid-laplace`: i.i.d. Laplace noise with the groups' L1 sensitivities, ε split equally
//!   ((ε, 0)-DP);
//! * `colored-gaussian`: `iid-gaussian` with the means replaced by the MSE-optimal colored
//!   Gaussian (the SDP with C = I).
//!
//! Each result is projected back: weights onto {π_k ≥ 1/N, Σ π_k = 1}, covariances by
//! clipping eigenvalues at the noise standard deviation (a data-independent floor).
//!
//! Worst-case sensitivities (‖x‖ ≤ 1; a neighbour flips one label or replaces one record, so it
//! removes a point from one class and adds one to another, or replaces one inside a class):
//! * weights: L2 √2/N, L1 2/N;
//! * means: removing x from class k moves μ_k by (x − μ_k)/(N_k − 1), norm ≤ 2/(N_k − 1) =: s_k;
//!   two classes at once: L2 ≤ √2·max s_k, L1 ≤ 2√d·max s_k;
//! * covariances: removing a point changes Σ_k by Σ′/(N_k − 1) − v vᵀ/N_k, Frobenius norm
//!   ≤ 1/(N_k − 2) + 4/N_k =: f_k; a replacement inside a class is at most 2f_k, so L2 ≤ 2·max f_k
//!   and L1 ≤ 2√(d(d+1)/2)·max f_k over the upper triangle.

use super::design::max_mahalanobis_sensitivity;
use super::exactnoise::{
    covering_gaussian, covering_laplace, float_margin_l1, float_margin_l2, upper_pairs,
};
use super::linalg::{sym_fn, Mat};
use crate::error::Result;
use crate::mechanisms::noise::{GridGaussian, GridLaplace};
use rand::RngCore;

/// The σ of a Gaussian mechanism (ε, δ)-DP for L2 sensitivity `delta2`, by the RDP bound the
/// exact noise is proven to have ([`max_mahalanobis_sensitivity`]).
pub fn gaussian_sigma(delta2: f64, eps: f64, delta: f64) -> f64 {
    delta2 / max_mahalanobis_sensitivity(eps, delta)
}

/// Worst-case sensitivities of the baseline groups.
#[derive(Debug, Clone, Copy)]
pub struct Sensitivities {
    /// Weights, L2.
    pub w2: f64,
    /// Weights, L1.
    pub w1: f64,
    /// Means, L2.
    pub m2: f64,
    /// Means, L1.
    pub m1: f64,
    /// Covariances, L2.
    pub c2: f64,
    /// Covariances, L1.
    pub c1: f64,
}

/// The bounds of the module docs.
pub fn sensitivities(counts: &[usize], d: usize) -> Sensitivities {
    let n: usize = counts.iter().sum();
    let smax = counts
        .iter()
        .map(|&c| 2.0 / (c as f64 - 1.0))
        .fold(0.0, f64::max);
    let fmax = counts
        .iter()
        .map(|&c| 1.0 / (c as f64 - 2.0) + 4.0 / c as f64)
        .fold(0.0, f64::max);
    let p = (d * (d + 1) / 2) as f64;
    Sensitivities {
        w2: 2f64.sqrt() / n as f64,
        w1: 2.0 / n as f64,
        m2: 2f64.sqrt() * smax,
        m1: 2.0 * (d as f64).sqrt() * smax,
        c2: 2.0 * fmax,
        c1: 2.0 * p.sqrt() * fmax,
    }
}

/// Exact i.i.d. noise of one kind on a power-of-two grid ([`super::exactnoise`]): the
/// drop-in for i.i.d. N(0, σ²) or Laplace(0, b) noise, with the same accounting.
#[derive(Debug, Clone)]
pub enum GridNoise {
    /// Discrete Gaussian on a grid (`GridGaussian::covering`).
    Gaussian(GridGaussian),
    /// Discrete Laplace on a grid.
    Laplace(GridLaplace),
}

impl GridNoise {
    /// Gaussian N(0, σ²) on a float statistic of L2 sensitivity `sensitivity` over `coords`
    /// coordinates that a neighbour can change (rounding margin included).
    pub fn gaussian(sigma: f64, sensitivity: f64, coords: usize) -> Result<GridNoise> {
        covering_gaussian(sigma, sensitivity, float_margin_l2(coords), coords)
            .map(GridNoise::Gaussian)
    }

    /// (ε, 0)-DP Laplace on a float statistic of L1 sensitivity `l1` over `coords` coordinates.
    pub fn laplace(epsilon: f64, l1: f64, coords: usize) -> Result<GridNoise> {
        covering_laplace(epsilon, l1, float_margin_l1(coords), coords).map(GridNoise::Laplace)
    }

    /// Replaces every entry of `xs` by its release.
    pub fn add_noise<R: RngCore + ?Sized>(&self, xs: &mut [f64], rng: &mut R) -> Result<()> {
        match self {
            GridNoise::Gaussian(g) => g.add_noise(xs, rng),
            GridNoise::Laplace(l) => l.add_noise(xs, rng),
        }
    }

    /// Standard deviation of the noise actually added.
    pub fn std(&self) -> f64 {
        match self {
            GridNoise::Gaussian(g) => g.sigma_units() * g.grid(),
            GridNoise::Laplace(l) => l.scale_units() * l.grid() * 2f64.sqrt(),
        }
    }

    /// The grid.
    pub fn grid(&self) -> f64 {
        match self {
            GridNoise::Gaussian(g) => g.grid(),
            GridNoise::Laplace(l) => l.grid(),
        }
    }

    /// "discrete Gaussian" or "discrete Laplace".
    pub fn kind(&self) -> &'static str {
        match self {
            GridNoise::Gaussian(_) => "discrete Gaussian",
            GridNoise::Laplace(_) => "discrete Laplace",
        }
    }
}

/// Euclidean projection onto {x_k ≥ floor, Σ x_k = 1}.
pub fn project_simplex_floor(y: &[f64], floor: f64) -> Vec<f64> {
    let k = y.len();
    let target = 1.0 - floor * k as f64;
    let z: Vec<f64> = y.iter().map(|v| v - floor).collect();
    let mut s = z.clone();
    s.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
    let mut cum = 0.0;
    let mut theta = 0.0;
    for (i, &si) in s.iter().enumerate() {
        cum += si;
        let t = (cum - target) / (i + 1) as f64;
        if si - t > 0.0 {
            theta = t;
        }
    }
    let x: Vec<f64> = z.iter().map(|v| (v - theta).max(0.0) + floor).collect();
    let sum: f64 = x.iter().sum();
    x.iter().map(|v| v / sum).collect()
}

/// Adds symmetric exact noise to the upper triangle and clips eigenvalues at `floor`.
pub fn noisy_psd<R: RngCore + ?Sized>(
    cov: &Mat,
    noise: &GridNoise,
    floor: f64,
    rng: &mut R,
) -> Result<Mat> {
    let d = cov.n;
    let pairs = upper_pairs(d);
    let mut v: Vec<f64> = pairs.iter().map(|&(i, j)| cov.get(i, j)).collect();
    noise.add_noise(&mut v, rng)?;
    let mut m = Mat::zeros(d);
    for (&(i, j), &x) in pairs.iter().zip(&v) {
        m.set(i, j, x);
        m.set(j, i, x);
    }
    Ok(sym_fn(&m, |l| l.max(floor)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn simplex_projection_is_feasible_and_idempotent() {
        let p = project_simplex_floor(&[0.5, -0.2, 0.9], 0.01);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(p.iter().all(|&x| x >= 0.01 - 1e-15));
        let q = project_simplex_floor(&p, 0.01);
        for (a, b) in p.iter().zip(&q) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn gaussian_sigma_meets_the_target_and_laplace_has_right_scale() {
        use super::super::design::analytic_gaussian_delta;
        use crate::accountant::{default_orders, Conversion, RdpCurve};
        for &(eps, delta) in &[(0.3, 1e-5), (1.0, 1e-5), (3.0, 1e-6)] {
            let s = gaussian_sigma(2.0, eps, delta);
            assert!(analytic_gaussian_delta(2.0 / s, eps) <= delta);
            // By the accountant's RDP path at z = σ/Δ: within ε.
            let e = RdpCurve::gaussian(s / 2.0, &default_orders())
                .unwrap()
                .epsilon(delta, Conversion::Improved)
                .unwrap()
                .epsilon;
            assert!(e <= eps, "{e} > {eps}");
        }
        let mut rng = ReleaseRng::seeded(2);
        let n = 200_000;
        // ε = 2 at L1 sensitivity 3: scale b = 1.5 (raised by < 0.2 % for the grid)
        let l = GridNoise::laplace(2.0, 3.0, 1).unwrap();
        let mut xs = vec![0.25; n];
        l.add_noise(&mut xs, &mut rng).unwrap();
        let mean_abs: f64 = xs.iter().map(|x| (x - 0.25).abs()).sum::<f64>() / n as f64;
        assert!((mean_abs / 1.5 - 1.0).abs() < 0.02, "{mean_abs}");
        assert!(xs.iter().all(|x| (x / l.grid()).fract() == 0.0));
        let g = GridNoise::gaussian(0.5, 2.0, 3).unwrap();
        assert!(g.std() >= 0.5 && g.std() < 0.5 * 1.002);
    }
}
