//! The mixture weights: a randomized mapping f(π̃ | π) on S, the compositions of N into K
//! positive parts (eq. 3), smoothed as in eq. (15): f = (1 − λ)·f′ + λ·Uniform(S).
//!
//! f′ is **not** the paper's Prop. 2 matrix: that f′ is supported on {π(D)} ∪ S′(D), a
//! data-dependent support, so for an output π̃ ∈ S′(D) that is two moves away from a
//! neighbour π(D′) the likelihood ratio is ((1 − λ) f′ + λ/|S|)/(λ/|S|), about |S|/λ
//! (|S| = C(N−1, K−1) ≈ 4·10¹⁰ for N = 1000, K = 5): the smoothing does not bound ε0.
//! Here f′ adds two-sided geometric noise P(Z = z) ∝ e^{−ε0|z|/2} to each class count and
//! projects the noisy counts onto S (positive integers summing to the public N); the
//! projection is post-processing. A neighbour (one label flipped, or one record replaced)
//! moves one unit between two counts (L1 sensitivity 2), so f′ is (ε0, 0)-DP, and the
//! mixture with the data-independent Uniform(S) keeps (ε0, 0)-DP:
//! P_D(E) = λU(E) + (1 − λ)Q_D(E) ≤ λU(E) + (1 − λ)e^{ε0}Q_D′(E) ≤ e^{ε0}P_D′(E).
//!
//! A uniform draw from S is a uniform (K − 1)-subset of {1, …, N − 1} (stars and bars): the
//! gaps between the sorted cut points are the parts.

use crate::math::DetFloat;
use rand::Rng;

/// Variance of the two-sided geometric noise with P(z) ∝ e^{−ε0|z|/2}: 2p/(1 − p)², p = e^{−ε0/2}.
pub fn count_noise_variance(eps0: f64) -> f64 {
    let p = (-eps0 / 2.0).dexp();
    2.0 * p / ((1.0 - p) * (1.0 - p))
}

/// Design-time approximation of E[KL(π̃ ‖ π)] of the noisy-count branch:
/// Σ_k Var(Z)/(2 N N_k) (second-order expansion of the KL of π̃ = π + Z/N).
pub fn expected_weight_kl(eps0: f64, counts: &[usize]) -> f64 {
    let n: usize = counts.iter().sum();
    let v = count_noise_variance(eps0);
    counts
        .iter()
        .map(|&c| v / (2.0 * n as f64 * c as f64))
        .sum()
}

/// One draw of the two-sided geometric noise (difference of two geometric variables).
fn two_sided_geometric<R: Rng + ?Sized>(eps0: f64, rng: &mut R) -> i64 {
    let lnp = -eps0 / 2.0;
    let geo = |rng: &mut R| -> i64 {
        // P(G = g) = (1 − p) p^g; G = ⌊ln U / ln p⌋ with U ∈ (0, 1]
        let u: f64 = 1.0 - rng.gen::<f64>();
        let g = (u.dln() / lnp).floor();
        if g.is_finite() && g < 1e15 {
            g as i64
        } else {
            i64::MAX / 4
        }
    };
    geo(rng) - geo(rng)
}

/// Euclidean projection of y onto {x : x_k ≥ 1, Σ x_k = n}, then rounding to integers that
/// keep the sum (largest remainders) and stay ≥ 1.
pub fn project_counts(y: &[f64], n: usize) -> Vec<usize> {
    let k = y.len();
    // projection onto the shifted simplex {z ≥ 0, Σ z = n − k}, z = x − 1
    let target = (n - k) as f64;
    let z: Vec<f64> = y.iter().map(|v| v - 1.0).collect();
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
    let proj: Vec<f64> = z.iter().map(|v| (v - theta).max(0.0)).collect();
    let mut base: Vec<usize> = proj.iter().map(|v| v.floor() as usize).collect();
    let mut left = (n - k) as i64 - base.iter().sum::<usize>() as i64;
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&a, &b| {
        let fa = proj[a] - proj[a].floor();
        let fb = proj[b] - proj[b].floor();
        fb.partial_cmp(&fa)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut i = 0;
    while left > 0 {
        base[order[i % k]] += 1;
        left -= 1;
        i += 1;
    }
    while left < 0 {
        // cannot happen with floors, kept for safety
        let j = (0..k).max_by_key(|&j| base[j]).unwrap_or(0);
        base[j] -= 1;
        left += 1;
    }
    base.iter().map(|b| b + 1).collect()
}

/// A uniform composition of n into k positive parts: a uniform (k − 1)-subset of {1..n−1}
/// (Floyd's algorithm), sorted; the parts are the gaps.
pub fn uniform_composition<R: Rng + ?Sized>(n: usize, k: usize, rng: &mut R) -> Vec<usize> {
    let m = n - 1; // universe {1..m}
    let mut chosen: Vec<usize> = Vec::with_capacity(k - 1);
    for j in (m + 2 - k)..=m {
        let t = rng.gen_range(1..=j);
        if chosen.contains(&t) {
            chosen.push(j);
        } else {
            chosen.push(t);
        }
    }
    chosen.sort_unstable();
    let mut parts = Vec::with_capacity(k);
    let mut prev = 0;
    for &c in &chosen {
        parts.push(c - prev);
        prev = c;
    }
    parts.push(n - prev);
    parts
}

/// Which branch of f produced π̃.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// The (ε0, 0)-DP noisy-count mapping f′.
    NoisyCounts,
    /// The λ-smoothing: a uniform draw from S.
    Uniform,
}

/// Draws π̃·N (released counts, each ≥ 1, summing to N) from f(· | counts).
pub fn release_counts<R: Rng + ?Sized>(
    counts: &[usize],
    eps0: f64,
    lambda: f64,
    rng: &mut R,
) -> (Vec<usize>, Branch) {
    let n: usize = counts.iter().sum();
    let k = counts.len();
    if rng.gen::<f64>() < lambda {
        return (uniform_composition(n, k, rng), Branch::Uniform);
    }
    let y: Vec<f64> = counts
        .iter()
        .map(|&c| c as f64 + two_sided_geometric(eps0, rng) as f64)
        .collect();
    (project_counts(&y, n), Branch::NoisyCounts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn projection_keeps_sum_and_positivity() {
        assert_eq!(project_counts(&[10.0, 20.0, 30.0], 60), vec![10, 20, 30]);
        let p = project_counts(&[-50.0, 3.0, 200.0], 60);
        assert_eq!(p.iter().sum::<usize>(), 60);
        assert!(p.iter().all(|&x| x >= 1));
        assert_eq!(p[0], 1);
        let p = project_counts(&[10.4, 10.4, 10.2], 30);
        assert_eq!(p.iter().sum::<usize>(), 30);
    }

    /// Every composition of 6 into 3 positive parts (C(5,2) = 10 of them) is equally likely:
    /// χ² goodness of fit at α = 1e-6 (critical value of χ²_9 at 1e-6 is 46.1).
    #[test]
    fn uniform_composition_is_uniform() {
        let mut rng = ReleaseRng::seeded(3);
        let mut hist = std::collections::HashMap::new();
        let reps = 100_000;
        for _ in 0..reps {
            let c = uniform_composition(6, 3, &mut rng);
            assert_eq!(c.iter().sum::<usize>(), 6);
            assert!(c.iter().all(|&x| x >= 1));
            *hist.entry(c).or_insert(0usize) += 1;
        }
        assert_eq!(hist.len(), 10);
        let e = reps as f64 / 10.0;
        let chi2: f64 = hist.values().map(|&o| (o as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 46.1, "chi2 = {chi2}");
    }

    /// The two-sided geometric noise has the stated variance and the probability ratio of
    /// neighbouring values is e^{−ε0/2} (checked on the empirical P(0)/P(1) within 5%).
    #[test]
    fn count_noise_has_the_dp_shape() {
        let mut rng = ReleaseRng::seeded(8);
        let eps0 = 0.8;
        let reps = 400_000;
        let zs: Vec<i64> = (0..reps)
            .map(|_| two_sided_geometric(eps0, &mut rng))
            .collect();
        let var = zs.iter().map(|&z| (z * z) as f64).sum::<f64>() / reps as f64;
        let want = count_noise_variance(eps0);
        assert!((var / want - 1.0).abs() < 0.03, "var {var} want {want}");
        let p0 = zs.iter().filter(|&&z| z == 0).count() as f64;
        let p1 = zs.iter().filter(|&&z| z == 1).count() as f64;
        assert!(((p1 / p0) / (-eps0 / 2.0).dexp() - 1.0).abs() < 0.05);
    }
}
