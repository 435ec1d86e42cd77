//! The mixture weights: a randomized mapping f(π̃ | π) on S, the compositions of N into K
//! positive parts (eq. 3), smoothed as in eq. (15): f = (1 − λ)·f′ + λ·Uniform(S).
//!
//! f′ is **not** the paper's Prop. 2 matrix: that f′ is supported on {π(D)} ∪ S′(D), a
//! data-dependent support, so for an output π̃ ∈ S′(D) that is two moves away from a
//! neighbour π(D′) the likelihood ratio is ((1 − λ) f′ + λ/|S|)/(λ/|S|), about |S|/λ
//! (|S| = C(N−1, K−1) ≈ 4·10¹⁰ for N = 1000, K = 5): the smoothing does not bound ε0.
//! Here f′ adds discrete Laplace (two-sided geometric) noise P(Z = z) ∝ e^{−|z|/b} to each
//! class count and projects the noisy counts onto S (positive integers summing to the public
//! N); the projection is post-processing. A neighbour (one label flipped, or one record
//! replaced) moves one unit between two counts (L1 sensitivity 2), so f′ is (2/b, 0)-DP, and
//! the mixture with the data-independent Uniform(S) keeps it:
//! P_D(E) = λU(E) + (1 − λ)Q_D(E) ≤ λU(E) + (1 − λ)e^{ε0}Q_D′(E) ≤ e^{ε0}P_D′(E).
//!
//! **Exact sampling and the rounded scale** ([`count_noise`]). The noise is drawn by the exact
//! sampler [`DiscreteLaplace`] (CKS20 Algorithm 2: integer arithmetic and exact coins, no
//! floating-point uniform is inverted). Its scale is the rational b = t/s ≥ 2/ε0: the float
//! quotient fl(2/ε0) is correctly rounded, so its successor is ≥ 2/ε0 exactly, and the sampler
//! rounds that number *up* to t/s (s a power of two). For counts c, c′ with ‖c − c′‖₁ ≤ 2 and
//! every z, P(c + Z = z)/P(c′ + Z = z) = Π_k e^{(|z_k − c′_k| − |z_k − c_k|)/b} ≤ e^{‖c − c′‖₁/b}
//! ≤ e^{2/b}; so f′ is (ε0′, 0)-DP with ε0′ = 2/b ≤ ε0, and the accounted ε0 is an upper bound.
//! (Below 2/ε0 = 2^{−20}, i.e. ε0 > 2^21, the scale is raised to 2^{−20}: more noise, the same
//! bound.) The branch coin P(uniform) = λ uses a float uniform: its bias changes the mixing
//! weight by at most 2^{−53}, the same weight on both neighbours, so the bound above holds for
//! the weight actually used.
//!
//! **Records without a label** ([`release_counts`]). The counts carry one more cell, always:
//! the records without a label, U = N − Σ N_k (0 for most data). f runs on the K + 1 cells
//! (compositions of N into K + 1 positive parts), and the last cell is dropped afterwards
//! (post-processing). A record that loses or gains its label moves one unit between a class
//! cell and that cell, L1 sensitivity 2 as above; the cell is there whether or not U = 0, so
//! the mechanism's shape does not depend on the data. The classes' released counts then
//! estimate N_k itself (not N_k plus a share of U), and the weights are renormalized over the
//! classes.
//!
//! **The default release** ([`release_counts_noisy_total`]). N is not public there (the
//! adjacency also adds or removes a record, which moves one cell by 1: L1 sensitivity 1, so
//! the same noise gives (ε0/2, 0) for that neighbour and (ε0, 0) for a replacement). The
//! noisy counts are drawn first, and the compositions are those of their own noisy total
//! instead of N (post-processing of the noisy counts). When the class labels are not listed
//! with the request, only the labels whose noisy count reaches a threshold are released
//! ([`label_threshold`]: the label of a single record passes with probability below its
//! share of δ); the others' noisy counts join the unlabelled cell.
//!
//! A uniform draw from S is a uniform (K − 1)-subset of {1, …, N − 1} (stars and bars): the
//! gaps between the sorted cut points are the parts.

use crate::error::{Error, Result};
use crate::math::DetFloat;
use crate::mechanisms::noise::{up, Bits, DiscreteLaplace};
use rand::{Rng, RngCore};

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

/// The exact count noise of scale b ≥ 2/ε0 (rounded up to a rational; see the module docs).
pub fn count_noise(eps0: f64) -> Result<DiscreteLaplace> {
    if !(eps0 > 0.0 && eps0.is_finite()) {
        return Err(Error::param(
            "epsilon",
            eps0,
            "the weights' ε must be a positive finite number",
        ));
    }
    // 2/ε0 one ulp up (the division may round down). A subnormal ε0 makes it +∞: refused
    // below (the one-ulp step of +∞ would be NaN, and NaN.max(·) a tiny scale).
    let b = 2.0 / eps0;
    let b = if b.is_finite() {
        up(b).max(MIN_SCALE)
    } else {
        b
    };
    DiscreteLaplace::new("epsilon", b).map_err(|_| {
        Error::param(
            "epsilon",
            eps0,
            format!("the weights' ε = {eps0} is too small for exact count noise (2/ε ≤ 2^31 is needed); raise ε"),
        )
    })
}

/// Smallest scale of the count noise (the exact sampler's lower limit).
const MIN_SCALE: f64 = 1.0 / (1u64 << 20) as f64;

/// The counts plus independent exact count noise ([`count_noise`]), one draw per class.
pub fn noisy_counts<R: RngCore + ?Sized>(
    counts: &[usize],
    eps0: f64,
    rng: &mut R,
) -> Result<Vec<i64>> {
    let lap = count_noise(eps0)?;
    let mut bits = Bits::new(rng);
    Ok(counts
        .iter()
        .map(|&c| (c as i64).saturating_add(lap.sample_bits(&mut bits)))
        .collect())
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

/// Share of δ spent on releasing the labels read from the data ([`label_threshold`]); the
/// Gaussian releases get the rest.
pub const LABEL_DELTA_SHARE: f64 = 0.1;

/// The count a label read from the data must reach, with its count noise (scale
/// b = [`count_noise`]`(eps0)`), to be released: τ = 1 + ⌈b·(ln(1/δ₁) − ln(1 + p))⌉ with
/// δ₁ = `delta_labels`/(1 + e^{ε0}) and p = e^{−1/b}.
///
/// *Why.* A neighbour (one record replaced, label included) can make one label vanish (its
/// only record gets another label) and one appear. Such a label has count 1 on one side and
/// is not a candidate on the other; it is released only if 1 + Z ≥ τ, and
/// P(Z ≥ τ − 1) = p^{τ−1}/(1 + p) ≤ δ₁ since τ − 1 ≥ b·ln(1/(δ₁(1 + p))) (the smallest such
/// τ, up to rounding).
/// Off those events the output is a function of the noisy counts of the labels both sides
/// share (and of the unlabelled cell), L1 sensitivity 2 as before, so for every output set E:
/// P_D(E) ≤ e^{ε0}·(P_D′(E) + δ₁) + δ₁ — (ε0, (1 + e^{ε0})·δ₁)-DP, i.e. (ε0, `delta_labels`).
/// The arithmetic rounds toward a larger τ: b and ln(1/δ₁) one ulp up, ln(1 + p) taken a
/// millionth low.
pub fn label_threshold(eps0: f64, delta_labels: f64) -> Result<i64> {
    if !(delta_labels > 0.0 && delta_labels < 1.0) {
        return Err(Error::param(
            "delta",
            delta_labels,
            "the labels' share of δ must be in (0, 1)",
        ));
    }
    let b = up(count_noise(eps0)?.scale());
    let delta_one = delta_labels / up(1.0 + up(eps0.dexp()));
    // ln(1 + p) from below: p's error is far under a millionth.
    let ln_1p = (-1.0 / b).dexp().dln_1p() * (1.0 - 1e-6);
    let t = up(b * up(up((1.0 / delta_one).dln()) - ln_1p));
    if !(t.is_finite() && t < 1e15) {
        return Err(Error::param(
            "epsilon",
            eps0,
            "the budget is too small to release labels read from the data; list the classes instead",
        ));
    }
    Ok(1 + t.ceil() as i64)
}

/// The default release's counts ([`super::suffstats`]), where N is not public: the adjacency
/// is add or remove one record as well as replace one. Every class's noisy count and the
/// unlabelled cell's are drawn first. With `threshold` (labels read from the data,
/// [`label_threshold`]) only the classes whose noisy count reaches it are kept, and the
/// others' noisy counts join the unlabelled cell (their records belong to no class); without
/// it every class is kept. The kept counts and that cell are then mapped onto the
/// compositions of their own noisy total M = max(Σ y, cells) (with probability λ a uniform
/// composition of M; otherwise the noisy cells projected, which leaves them as they are when
/// every one is ≥ 1), and the cell is dropped. Every step after the noise reads only the noisy
/// counts and fresh randomness (post-processing), so nothing here depends on N itself.
///
/// Returns the kept classes (indices into `counts`, in order), their released counts and the
/// branch. No class kept is an error that says how many records a class needs.
pub fn release_counts_noisy_total<R: Rng + ?Sized>(
    counts: &[usize],
    records: usize,
    eps0: f64,
    lambda: f64,
    threshold: Option<i64>,
    rng: &mut R,
) -> Result<(Vec<usize>, Vec<usize>, Branch)> {
    let cells = with_unlabelled_cell(counts, records)?;
    let y = noisy_counts(&cells, eps0, rng)?;
    let k = counts.len();
    let kept: Vec<usize> = (0..k)
        .filter(|&c| threshold.map_or(true, |t| y[c] >= t))
        .collect();
    if kept.is_empty() {
        let t = threshold.unwrap_or(0);
        return Err(Error::Data(format!(
            "no class has enough records to be released at this budget: a label read from the data is released only when its noisy count reaches {t} (ε of the counts {eps0:.4}, so that the label of a single record is released with probability below the labels' share of δ). \
             If the class labels are public (known without looking at the data), list them (classes); otherwise raise ε or use more rows"
        )));
    }
    let mut noisy: Vec<i64> = kept.iter().map(|&c| y[c]).collect();
    let no_class = (0..k)
        .filter(|c| !kept.contains(c))
        .fold(y[k], |a, c| a.saturating_add(y[c]));
    noisy.push(no_class);
    // At least one per cell (positive after the max, so the cast is exact).
    let total = noisy
        .iter()
        .fold(0i64, |a, &v| a.saturating_add(v))
        .max(noisy.len() as i64) as usize;
    let (released, branch) = compose(total, noisy.len(), lambda, rng, |_| {
        Ok(noisy.iter().map(|&v| v as f64).collect())
    })?;
    Ok((kept, released, branch))
}

/// The class counts with the cell of the N − Σ counts records without a label appended.
fn with_unlabelled_cell(counts: &[usize], n: usize) -> Result<Vec<usize>> {
    let labelled: usize = counts.iter().sum();
    if n < labelled {
        return Err(Error::Data(format!(
            "internal: {n} records cannot hold the class counts {counts:?}"
        )));
    }
    let mut cells = counts.to_vec();
    cells.push(n - labelled);
    Ok(cells)
}

/// f on `parts` cells (the classes' and, last, the unlabelled cell's) summing to `n`: with
/// probability λ a uniform composition, otherwise the noisy cells `noisy` gives projected onto
/// the compositions; the unlabelled part is then dropped.
fn compose<R: Rng + ?Sized>(
    n: usize,
    parts: usize,
    lambda: f64,
    rng: &mut R,
    noisy: impl FnOnce(&mut R) -> Result<Vec<f64>>,
) -> Result<(Vec<usize>, Branch)> {
    if n < parts {
        return Err(Error::Data(format!(
            "internal: {n} records cannot hold {} classes and the unlabelled cell",
            parts - 1
        )));
    }
    let (mut released, branch) = if rng.gen::<f64>() < lambda {
        (uniform_composition(n, parts, rng), Branch::Uniform)
    } else {
        (project_counts(&noisy(rng)?, n), Branch::NoisyCounts)
    };
    released.pop();
    Ok((released, branch))
}

/// Which branch of f produced π̃.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// The (ε0, 0)-DP noisy-count mapping f′.
    NoisyCounts,
    /// The λ-smoothing: a uniform draw from S.
    Uniform,
}

/// Draws the classes' released counts (each ≥ 1) from f(· | counts, U) on the compositions of
/// the public N = `records` into K + 1 parts, the last part for the U = N − Σ counts records
/// without a label, which is dropped (see the module docs): the K counts sum to less than N.
pub fn release_counts<R: Rng + ?Sized>(
    counts: &[usize],
    records: usize,
    eps0: f64,
    lambda: f64,
    rng: &mut R,
) -> Result<(Vec<usize>, Branch)> {
    let cells = with_unlabelled_cell(counts, records)?;
    compose(records, cells.len(), lambda, rng, |rng| {
        Ok(noisy_counts(&cells, eps0, rng)?
            .into_iter()
            .map(|c| c as f64)
            .collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    /// The threshold's δ, computed exactly from the sampler's own scale: (1 + e^{ε0})·
    /// P(Z ≥ τ − 1) ≤ δ_labels, with P(Z ≥ m) = p^m/(1 + p), p = e^{−1/b}; and τ − 1 would not keep
    /// it (τ is the smallest threshold that does).
    #[test]
    fn the_label_threshold_keeps_a_single_records_label_below_its_delta() {
        for &(eps0, dl) in &[
            (0.5, 1e-6),
            (0.1, 1e-7),
            (1.0, 1e-9),
            (0.02, 1e-6),
            (5.0, 1e-6),
        ] {
            let t = label_threshold(eps0, dl).unwrap();
            let b = count_noise(eps0).unwrap().scale();
            let p = (-1.0 / b).exp();
            let tail = |m: i64| p.powi(m as i32) / (1.0 + p);
            let delta = (1.0 + eps0.exp()) * tail(t - 1);
            assert!(delta <= dl, "ε0 {eps0}: δ {delta} > {dl} at τ = {t}");
            // τ − 1 would not do: τ is the smallest threshold that keeps δ_labels.
            assert!(
                (1.0 + eps0.exp()) * tail(t - 2) > dl,
                "ε0 {eps0}: τ = {t} is loose"
            );
        }
        assert_eq!(label_threshold(0.5, 1e-6).unwrap(), 58);
        assert!(label_threshold(0.5, 0.0).is_err());
        assert!(label_threshold(0.5, 1.0).is_err());
    }

    /// The selection: over 400 seeded draws a label held by one record is never released
    /// (chance ≤ 4·10⁻⁷ each), labels far above the threshold always are, and the released
    /// counts are positive and (with the unlabelled cell) a composition of N; a label near the
    /// threshold is kept about half the time (its noise is symmetric: 5σ bounds at α ≈ 1e-6).
    #[test]
    fn selection_keeps_large_classes_and_drops_a_single_record() {
        let t = label_threshold(0.5, 1e-6).unwrap();
        let counts = [1usize, 5000, t as usize, 3000];
        let n = 9000;
        let mut kept_near = 0;
        for seed in 0..400 {
            let mut rng = ReleaseRng::seeded(seed);
            let (kept, released, _) =
                release_counts_noisy_total(&counts, n, 0.5, 1e-3, Some(t), &mut rng).unwrap();
            assert!(
                !kept.contains(&0) && kept.contains(&1) && kept.contains(&3),
                "{kept:?}"
            );
            kept_near += usize::from(kept.contains(&2));
            assert_eq!(released.len(), kept.len());
            assert!(released.iter().all(|&c| c >= 1) && released.iter().sum::<usize>() < n);
        }
        // Kept when its noise Z ≥ 0: P = 1/2 + P(Z = 0)/2 ≈ 0.56 (b = 4); σ of the count of
        // 400 draws ≈ 10.
        assert!((170..=280).contains(&kept_near), "{kept_near}");
        let e =
            release_counts_noisy_total(&[3, 5], 20, 0.5, 1e-3, Some(t), &mut ReleaseRng::seeded(1))
                .unwrap_err();
        assert!(e.to_string().contains(&format!("reaches {t}")), "{e}");
    }

    /// The default release's counts read N only through their noise: the same seed gives the
    /// noisy cells projected onto the compositions of their own noisy total (with every cell
    /// ≥ 1 that leaves them as they are), a record without a class added changes no class's
    /// released count, and a record added to a class moves that class's count by exactly 1.
    /// (Projected onto the compositions of N, as before, the added unlabelled record changed
    /// the classes' counts.)
    #[test]
    fn the_default_counts_do_not_read_n() {
        let release = |counts: &[usize], records| {
            release_counts_noisy_total(counts, records, 0.5, 0.0, None, &mut ReleaseRng::seeded(9))
                .unwrap()
        };
        let noisy = |cells: &[usize]| -> Vec<f64> {
            let y = noisy_counts(cells, 0.5, &mut ReleaseRng::seeded(9)).unwrap();
            y.into_iter().map(|v| v as f64).collect()
        };
        // 10 records without a class: every noisy cell is ≥ 1 at this seed.
        let y = noisy(&[500, 300, 200, 10]);
        assert!(y.iter().all(|&v| v >= 1.0), "{y:?}");
        let (kept, r, branch) = release(&[500, 300, 200], 1010);
        assert_eq!((kept, branch), (vec![0, 1, 2], Branch::NoisyCounts));
        let want: Vec<usize> = y[..3].iter().map(|&v| v as usize).collect();
        assert_eq!(r, want);
        assert_ne!(y.iter().sum::<f64>(), 1010.0, "{y:?}");
        // One more record, without a class: the classes' counts are unchanged.
        assert_eq!(release(&[500, 300, 200], 1011).1, r);
        // One more record, in class 0: only that class moves, by one.
        let (_, r2, _) = release(&[501, 300, 200], 1011);
        assert_eq!((r2[0], &r2[1..]), (r[0] + 1, &r[1..]));
        // A noisy cell below 1 (no record without a class): the projection onto the
        // compositions of max(Σ y, 4) lifts it, and the classes give up the difference.
        let y0 = noisy(&[500, 300, 200, 0]);
        let total = y0.iter().sum::<f64>().max(4.0) as usize;
        assert_eq!(
            release(&[500, 300, 200], 1000).1,
            project_counts(&y0, total)[..3]
        );
        // The λ branch: a uniform composition of the noisy total, every class ≥ 1.
        let (_, u, branch) = release_counts_noisy_total(
            &[500, 300, 200],
            1000,
            0.5,
            1.0,
            None,
            &mut ReleaseRng::seeded(9),
        )
        .unwrap();
        assert_eq!(branch, Branch::Uniform);
        assert!(u.len() == 3 && u.iter().all(|&c| c >= 1));
    }

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

    /// P(Z = z) of the discrete Laplace of scale b: (1 − p)/(1 + p)·p^|z|, p = e^{−1/b}.
    fn dlap_pmf(z: i64, b: f64) -> f64 {
        let p = (-1.0 / b).exp();
        (1.0 - p) / (1.0 + p) * p.powi(z.unsigned_abs() as i32)
    }

    /// Pearson χ² of `zs` against the discrete Laplace of scale b, cells −w..=w and two tails.
    fn chi2(zs: &[i64], b: f64, w: i64) -> (f64, usize) {
        let n = zs.len() as f64;
        let mut obs = vec![0usize; (2 * w + 3) as usize];
        for &z in zs {
            let i = if z < -w {
                0
            } else if z > w {
                obs.len() - 1
            } else {
                (z + w + 1) as usize
            };
            obs[i] += 1;
        }
        let p = (-1.0 / b).exp();
        let tail = p.powi(w as i32 + 1) / (1.0 + p);
        let mut stat = 0.0;
        for (i, &o) in obs.iter().enumerate() {
            let e = n * if i == 0 || i == obs.len() - 1 {
                tail
            } else {
                dlap_pmf(i as i64 - w - 1, b)
            };
            stat += (o as f64 - e).powi(2) / e;
        }
        (stat, obs.len() - 1)
    }

    /// The count noise is the exact discrete Laplace of scale 2/ε0 (rounded up by less than
    /// 2^{−20} relative): Pearson χ² at α = 1e-6 on 200 000 draws from the release path's
    /// [`noisy_counts`] (fixed seed), and the same test rejects a scale off by 5 % (power
    /// check), so it can fail.
    #[test]
    fn count_noise_is_the_exact_discrete_laplace() {
        for &eps0 in &[0.8, 0.1] {
            let lap = count_noise(eps0).unwrap();
            let b = 2.0 / eps0;
            assert!(lap.scale() >= b && lap.scale() <= b * (1.0 + 2f64.powi(-20)));
            let mut rng = ReleaseRng::seeded(8);
            let reps = 200_000;
            let counts = vec![0usize; 1000];
            let zs: Vec<i64> = (0..reps / 1000)
                .flat_map(|_| noisy_counts(&counts, eps0, &mut rng).unwrap())
                .collect();
            // cells with expected count ≥ ~50: |z| ≤ w
            let w = (b * 6.0).round() as i64;
            let (stat, df) = chi2(&zs, b, w);
            // χ² critical value at α = 1e-6 by the Wilson–Hilferty approximation (z = 4.753)
            let k = df as f64;
            let crit = k * (1.0 - 2.0 / (9.0 * k) + 4.753 * (2.0 / (9.0 * k)).sqrt()).powi(3);
            assert!(stat < crit, "eps0 {eps0}: chi2 {stat} ≥ {crit} (df {df})");
            let (off, _) = chi2(&zs, b * 1.05, w);
            assert!(
                off > crit,
                "eps0 {eps0}: a 5 % scale error is not detected ({off})"
            );
        }
    }

    /// The release path draws exactly the sampler's stream: the same seed gives the counts
    /// plus [`DiscreteLaplace::sample_bits`] draws of the rounded-up scale.
    #[test]
    fn release_counts_uses_the_exact_sampler() {
        let counts = [500usize, 300, 200];
        let mut a = ReleaseRng::seeded(9);
        let got = noisy_counts(&counts, 0.5, &mut a).unwrap();
        let mut b = ReleaseRng::seeded(9);
        let lap = DiscreteLaplace::new("t", f64::from_bits(4.0f64.to_bits() + 1)).unwrap();
        let mut bits = Bits::new(&mut b);
        let want: Vec<i64> = counts
            .iter()
            .map(|&c| c as i64 + lap.sample_bits(&mut bits))
            .collect();
        assert_eq!(got, want);
        // The counts and the unlabelled cell (0 here) are noised alike, projected onto the
        // compositions of N into four parts, and the last part dropped.
        let (r, branch) =
            release_counts(&counts, 1000, 0.5, 0.0, &mut ReleaseRng::seeded(9)).unwrap();
        assert_eq!(branch, Branch::NoisyCounts);
        let mut c = ReleaseRng::seeded(9);
        let _coin: f64 = c.gen();
        let y: Vec<f64> = noisy_counts(&[500, 300, 200, 0], 0.5, &mut c)
            .unwrap()
            .into_iter()
            .map(|v| v as f64)
            .collect();
        assert_eq!(r[..], project_counts(&y, 1000)[..3]);
        assert!(r.len() == 3 && r.iter().sum::<usize>() < 1000);
        // Records without a label are the last cell: the classes' counts leave them out.
        let (r, _) = release_counts(&counts, 1300, 0.5, 0.0, &mut ReleaseRng::seeded(9)).unwrap();
        assert_eq!(r.len(), 3);
        let total = r.iter().sum::<usize>() as f64;
        assert!((total - 1000.0).abs() < 100.0, "{r:?}");
        let (r, _) = release_counts(&counts, 1003, 0.5, 1.0, &mut ReleaseRng::seeded(9)).unwrap();
        assert!(r.len() == 3 && r.iter().all(|&c| c >= 1) && r.iter().sum::<usize>() < 1003);
        assert!(release_counts(&counts, 999, 0.5, 0.0, &mut ReleaseRng::seeded(9)).is_err());
        assert!(count_noise(0.0).is_err() && count_noise(1e-12).is_err());
        // A subnormal ε0 (2/ε0 overflows): refused, never a tiny scale.
        assert!(count_noise(1e-310).is_err());
        assert!(count_noise(1e9).is_ok());
    }
}
