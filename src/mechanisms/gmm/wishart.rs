//! Wishart_d(I/γ, n) sampling by the Bartlett decomposition.
//!
//! If A is lower triangular with A_ii = sqrt(χ²_{n−i}) (i = 0..d−1, 0-based) and A_ij ~ N(0, 1)
//! below the diagonal, all independent, then A Aᵀ ~ Wishart_d(I, n) (Bartlett 1933), and
//! A Aᵀ / γ ~ Wishart_d(I/γ, n). χ²_k is drawn as 2·Gamma(k/2, 1) by Marsaglia–Tsang with the deterministic
//! `crate::math` logarithm (same bits natively and in wasm for a seeded run).
//! `E[W] = n·I/γ`.

use super::linalg::Mat;
use crate::error::{Error, Result};
use crate::math::DetFloat;
use rand::Rng;
use rand_distr::StandardNormal;

/// One draw from Wishart_d(I/γ, n). Needs γ > 0 finite and n ≥ d (integer degrees of freedom).
pub fn sample_wishart<R: Rng + ?Sized>(
    d: usize,
    dof: usize,
    gamma: f64,
    rng: &mut R,
) -> Result<Mat> {
    if !(gamma > 0.0 && gamma.is_finite()) {
        return Err(Error::param(
            "gamma",
            gamma,
            "the Wishart precision γ must be a positive finite number",
        ));
    }
    if d == 0 || dof < d {
        return Err(Error::param(
            "dof",
            dof,
            format!("the Wishart degrees of freedom must be at least d = {d}"),
        ));
    }
    let mut a = Mat::zeros(d);
    for i in 0..d {
        let k = (dof - i) as f64;
        a.set(i, i, (2.0 * gamma_sample(k / 2.0, rng)).sqrt());
        for j in 0..i {
            let z: f64 = rng.sample(StandardNormal);
            a.set(i, j, z);
        }
    }
    let mut w = a.mul(&a.t()).scale(1.0 / gamma);
    w = w.symmetrize();
    Ok(w)
}

/// Gamma(shape, 1) by Marsaglia & Tsang (2000): for shape ≥ 1, with d = shape − 1/3 and
/// c = 1/√(9d), accept d·v, v = (1 + c·x)³, x ~ N(0, 1), when ln u < x²/2 + d − d·v + d·ln v;
/// for shape < 1, Gamma(shape + 1)·u^{1/shape}.
pub fn gamma_sample<R: Rng + ?Sized>(shape: f64, rng: &mut R) -> f64 {
    if shape < 1.0 {
        let u: f64 = 1.0 - rng.gen::<f64>();
        return gamma_sample(shape + 1.0, rng) * u.dpowf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x: f64 = rng.sample(StandardNormal);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u: f64 = 1.0 - rng.gen::<f64>();
        if u.dln() < 0.5 * x * x + d - d * v + d * v.dln() {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    /// Sample mean of W vs E[W] = (d+1)·I/γ, and the variance of the entries vs the Wishart
    /// formula Var(W_ij) = n(Σ_ij² + Σ_ii Σ_jj) with Σ = I/γ. With 40 000 draws the standard
    /// error of the mean of W_00 is sqrt(2n)/γ/200; we allow 6 standard errors (two-sided
    /// error rate ≈ 2e-9 per check under normality of the mean).
    #[test]
    fn moments_match_wishart() {
        let (d, gamma) = (3usize, 2.5f64);
        let n = d + 1;
        let reps = 40_000;
        let mut rng = ReleaseRng::seeded(91);
        let mut sum = Mat::zeros(d);
        let mut sumsq = Mat::zeros(d);
        for _ in 0..reps {
            let w = sample_wishart(d, n, gamma, &mut rng).unwrap();
            assert!(w.is_symmetric());
            for k in 0..d * d {
                sum.a[k] += w.a[k];
                sumsq.a[k] += w.a[k] * w.a[k];
            }
        }
        let r = reps as f64;
        for i in 0..d {
            for j in 0..d {
                let mean = sum.get(i, j) / r;
                let var = sumsq.get(i, j) / r - mean * mean;
                let s_ij = if i == j { 1.0 / gamma } else { 0.0 };
                let want_mean = n as f64 * s_ij;
                let want_var = n as f64 * (s_ij * s_ij + 1.0 / (gamma * gamma));
                let se = (want_var / r).sqrt();
                assert!(
                    (mean - want_mean).abs() < 6.0 * se,
                    "E[W_{i}{j}] = {mean}, want {want_mean} ± {se}"
                );
                // variance: 4th moments are finite; allow 10% relative
                assert!(
                    (var / want_var - 1.0).abs() < 0.1,
                    "Var[W_{i}{j}] = {var}, want {want_var}"
                );
            }
        }
    }

    /// KS tests at α = 1e-6: γ·W_00 ~ χ²_n (the (0,0) entry of a Wishart(I, n)), and
    /// γ·tr(W) ~ χ²_{n·d} (the trace of Wishart(I, n) is a sum of n·d squared normals).
    #[test]
    fn ks_diagonal_and_trace_are_chi_square() {
        let (d, gamma) = (3usize, 0.7f64);
        let n = d + 1;
        let reps = 20_000;
        let mut rng = ReleaseRng::seeded(4242);
        let mut w00 = Vec::with_capacity(reps);
        let mut tr = Vec::with_capacity(reps);
        for _ in 0..reps {
            let w = sample_wishart(d, n, gamma, &mut rng).unwrap();
            w00.push(gamma * w.get(0, 0));
            tr.push(gamma * w.trace());
        }
        let crit = ((2.0f64 / 1e-6).dln() / (2.0 * reps as f64)).sqrt();
        for (xs, k) in [(w00, n), (tr, n * d)] {
            let mut xs = xs;
            xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut dmax = 0.0f64;
            for (i, &x) in xs.iter().enumerate() {
                let f = chi2_cdf(x, k);
                let lo = i as f64 / reps as f64;
                let hi = (i + 1) as f64 / reps as f64;
                dmax = dmax.max((f - lo).abs()).max((hi - f).abs());
            }
            assert!(dmax < crit, "KS D = {dmax} ≥ {crit} for χ²_{k}");
        }
    }

    /// The Gamma sampler's shape < 1 branch: 2·Gamma(1/2) ~ χ²_1, KS at α = 1e-6.
    #[test]
    fn ks_gamma_small_shape() {
        let reps = 20_000;
        let mut rng = ReleaseRng::seeded(77);
        let mut xs: Vec<f64> = (0..reps)
            .map(|_| 2.0 * gamma_sample(0.5, &mut rng))
            .collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let crit = ((2.0f64 / 1e-6).ln() / (2.0 * reps as f64)).sqrt();
        let mut dmax = 0.0f64;
        for (i, &x) in xs.iter().enumerate() {
            let f = chi2_cdf(x, 1);
            dmax = dmax
                .max((f - i as f64 / reps as f64).abs())
                .max(((i + 1) as f64 / reps as f64 - f).abs());
        }
        assert!(dmax < crit, "KS D = {dmax} ≥ {crit}");
    }

    /// χ² CDF for integer k by the closed forms of the regularized lower incomplete gamma
    /// (even k: Poisson sum; odd k: erf plus a finite series), independent of the sampler.
    fn chi2_cdf(x: f64, k: usize) -> f64 {
        let h = x / 2.0;
        if k % 2 == 0 {
            // P(k/2, h) = 1 − e^{−h} Σ_{j<k/2} h^j / j!
            let mut term = 1.0;
            let mut s = 1.0;
            for j in 1..k / 2 {
                term *= h / j as f64;
                s += term;
            }
            1.0 - (-h).dexp() * s
        } else {
            // P(1/2, h) = erf(√h); P(a+1, h) = P(a, h) − h^a e^{−h}/Γ(a+1)
            let mut p = erf(h.sqrt());
            let mut a = 0.5f64;
            // h^a e^{-h} / Γ(a+1), starting at a = 1/2: Γ(3/2) = √π/2
            let mut t = h.sqrt() * (-h).dexp() / (std::f64::consts::PI.sqrt() / 2.0);
            for _ in 0..(k - 1) / 2 {
                p -= t;
                a += 1.0;
                t *= h / a;
            }
            p
        }
    }

    /// erf via its Taylor series (small x) or continued-fraction-free complement; accurate to
    /// ~1e-13 on the range used (x ≤ 6).
    fn erf(x: f64) -> f64 {
        if x < 3.0 {
            // Taylor: erf x = 2/√π Σ (−1)^n x^{2n+1} / (n! (2n+1))
            let mut sum = 0.0f64;
            let mut term = x;
            let mut n = 0.0;
            while term.abs() > 1e-17 * sum.abs().max(1e-300) || n < 5.0 {
                sum += term / (2.0 * n + 1.0);
                n += 1.0;
                term *= -x * x / n;
                if n > 200.0 {
                    break;
                }
            }
            2.0 / std::f64::consts::PI.sqrt() * sum
        } else {
            // asymptotic: erfc x ≈ e^{−x²}/(x√π) (1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶))
            let x2 = x * x;
            let s = 1.0 - 1.0 / (2.0 * x2) + 3.0 / (4.0 * x2 * x2) - 15.0 / (8.0 * x2 * x2 * x2);
            1.0 - (-x2).dexp() / (x * std::f64::consts::PI.sqrt()) * s
        }
    }
}
