//! The Gaussian noise sampler, validated at construction and tested statistically.
//!
//! Samples come from rand_distr's ziggurat `StandardNormal` (exact up to f64 rounding) driven
//! by the release CSPRNG, scaled by σ. Like most DP libraries that use continuous noise, this
//! does not defend against floating-point side channels of the least significant bits; the
//! receipt says so.

use crate::error::{Error, Result};
use crate::math::DetFloat;
use rand::Rng;
use rand_distr::StandardNormal;

/// N(0, σ²) noise.
#[derive(Debug, Clone, Copy)]
pub struct Gaussian {
    sigma: f64,
}

impl Gaussian {
    /// σ must be finite and > 0 (the name is used in the error message).
    pub fn new(name: &str, sigma: f64) -> Result<Self> {
        if sigma > 0.0 && sigma.is_finite() {
            Ok(Gaussian { sigma })
        } else {
            Err(Error::param(
                name,
                sigma,
                "a noise standard deviation must be a positive finite number",
            ))
        }
    }

    /// Standard deviation.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let n: f64 = rng.sample(StandardNormal);
        n * self.sigma
    }

    /// Adds independent noise to every entry.
    pub fn add_to<R: Rng + ?Sized>(&self, xs: &mut [f32], rng: &mut R) {
        for x in xs {
            *x = (f64::from(*x) + self.sample(rng)) as f32;
        }
    }
}

/// Standard normal CDF Φ(x), via a high-accuracy erfc (|rel. err| < 1.2e-7 in the tails,
/// far below the statistical tolerances it is used with).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, rel. err < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .dexp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Upper-tail quantile: the smallest t with P(N(0,1) > t) ≤ p, rounded up (conservative), for
/// p in (0, 0.5]. Found by bisection on Mills-ratio-free log tail bounds, so it is valid far in
/// the tail where Φ rounds to 1.
pub fn upper_quantile_conservative(p: f64) -> f64 {
    debug_assert!(p > 0.0 && p <= 0.5);
    // Upper bound on the tail: P(N > t) ≤ φ(t)/t for t > 0, and ≤ 1/2 at 0.
    let log_tail_bound = |t: f64| -0.5 * t * t - (t * (2.0 * std::f64::consts::PI).sqrt()).dln();
    let lp = p.dln();
    let (mut lo, mut hi) = (1.0f64, 2.0f64);
    while log_tail_bound(hi) > lp {
        hi *= 2.0;
    }
    if log_tail_bound(lo) <= lp {
        return lo;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if log_tail_bound(mid) > lp {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Kolmogorov–Smirnov statistic of `xs` (sorted in place) against N(0, σ²). Test helper
/// shared by the mechanisms' statistical tests.
#[cfg(test)]
pub(crate) fn ks_normal(xs: &mut [f64], sigma: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        let f = normal_cdf(x / sigma);
        d = d
            .max((f - i as f64 / n).abs())
            .max(((i + 1) as f64 / n - f).abs());
    }
    d
}

/// The KS critical value at α = 1e-6 for n draws: sqrt(ln(2/α)/(2n)).
#[cfg(test)]
pub(crate) fn ks_crit(n: usize) -> f64 {
    ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    /// Kolmogorov–Smirnov test of the sampler against Φ at α = 1e-6 with a fixed seed: the
    /// critical value is sqrt(ln(2/α) / (2n)). A wrong σ, a biased mean or a non-Gaussian
    /// shape at this n fails it.
    #[test]
    fn ks_test_against_normal_cdf() {
        let n = 200_000;
        let sigma = 2.5;
        let g = Gaussian::new("sigma", sigma).unwrap();
        let mut rng = ReleaseRng::seeded(20261121);
        let mut xs: Vec<f64> = (0..n).map(|_| g.sample(&mut rng) / sigma).collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let nf = n as f64;
        let mut d = 0.0f64;
        for (i, &x) in xs.iter().enumerate() {
            let f = normal_cdf(x);
            d = d
                .max((f - i as f64 / nf).abs())
                .max(((i + 1) as f64 / nf - f).abs());
        }
        let crit = ((2.0f64 / 1e-6).dln() / (2.0 * nf)).sqrt();
        assert!(d < crit, "KS statistic {d} ≥ critical {crit}");
        // The same test must reject a wrong scale.
        let mut d_wrong = 0.0f64;
        for (i, &x) in xs.iter().enumerate() {
            let f = normal_cdf(x / 1.05);
            d_wrong = d_wrong.max((f - i as f64 / nf).abs());
        }
        assert!(d_wrong > crit, "KS test has no power: {d_wrong}");
    }

    #[test]
    fn validates_sigma() {
        assert!(Gaussian::new("sigma-x", 0.0)
            .unwrap_err()
            .to_string()
            .contains("sigma-x = 0"));
        assert!(Gaussian::new("sigma-x", f64::NAN).is_err());
        assert!(Gaussian::new("sigma-x", f64::INFINITY).is_err());
    }

    #[test]
    fn cdf_and_quantile() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-7);
        let t = upper_quantile_conservative(1e-10);
        // True quantile is 6.3613...; the bound must be at or above it and close.
        assert!((6.3613..6.5).contains(&t), "{t}");
        assert!(1.0 - normal_cdf(upper_quantile_conservative(0.01)) <= 0.01);
    }
}
