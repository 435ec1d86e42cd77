//! DP feature marginals for the default GMM release (`marginals` with a public box): each
//! feature's histogram on equal bins of its public interval, released with the class
//! statistics in one budget, and a sampler step that maps every sampled value onto it.
//!
//! # Proof note
//!
//! *Setting.* As in [`super::suffstats`] (a neighbour replaces one record, label included, or
//! adds or removes one); the box [lo_j, hi_j] and the number of bins b are public (given with
//! the request, chosen without looking at the data).
//!
//! *Release.* For every feature j, b + 1 cells: the count of rows whose value is exactly the
//! interval's lower end lo_j (an atom: zero-inflated columns, an image's background), then of
//! each of b equal bins of (lo_j, hi_j]; a value outside the box counts in the nearest end
//! cell (a fixed map of each record). Every labelled row adds exactly one count to each
//! feature's histogram, so a replaced record moves 2·d counts by 1 (L2 change √(2d)), an added
//! or removed one d counts (√d). The d·(b + 1) counts (integers) are released as
//! G·(round(c/G) + Z) with Z an exact discrete Gaussian from
//! `GridGaussian::covering(σ_H, √(2d), d·(b + 1))`: a Gaussian mechanism with the RDP curve of
//! its grid sensitivity Δ_g = √(2d)/G + √(d·(b + 1)), composed with the other Gaussian
//! releases of the model in one ρ (a public share [`MARGINAL_SHARE`] of it; see
//! [`super::suffstats::Split::with_extras`]).
//!
//! *Post-processing.* Counts below 2σ_H are set to 0 (most are noise on an empty bin), and the
//! rest normalized: each feature's marginal is an atom at lo_j and piecewise uniform on its
//! bins (a feature with no count left keeps the model's own marginal, clamped into its
//! interval). A sampled value x of feature j (drawn from
//! the released model, itself post-processing) is mapped to F_H⁻¹(F_M(x)), where F_M is the
//! released model's marginal CDF of feature j (a mixture of the classes' normal marginals)
//! and F_H the released histogram's: if x follows F_M, the result follows F_H. The rows keep
//! the model's dependence through the ranks of their values; nothing reads the data.

use super::exactnoise::release_fixed;
use super::suffstats::Split;
use super::Support;
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::normal_cdf;
use crate::rng::ReleaseRng;
use serde::{Deserialize, Serialize};

/// Share of the Gaussian releases' ρ taken by the marginals (public).
pub const MARGINAL_SHARE: f64 = 0.1;
/// Default number of bins per feature.
pub const DEFAULT_BINS: usize = 32;
/// Largest number of bins per feature accepted.
pub const MAX_BINS: usize = 1024;
/// Points of the tabulated model CDF per feature.
const CDF_POINTS: usize = 2048;

/// L2 sensitivity of the d features' histograms (a replaced record).
pub fn sensitivity(d: usize) -> f64 {
    (2.0 * d as f64).sqrt()
}

/// The number of released counts for `d` features of `bins` bins each: the atom and the bins.
pub fn cells(d: usize, bins: usize) -> usize {
    d * (bins + 1)
}

/// Checks the number of bins.
pub fn check_bins(bins: usize) -> Result<()> {
    if !(2..=MAX_BINS).contains(&bins) {
        return Err(Error::param(
            "marginals",
            bins,
            format!("the number of bins per feature must be between 2 and {MAX_BINS}, e.g. {DEFAULT_BINS}"),
        ));
    }
    Ok(())
}

/// Released feature marginals: per feature, the probability of its interval's lower end (an
/// atom) and of b equal bins above it (empty: no marginal for that feature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureMarginals {
    /// Lower end of each feature's interval (the public box).
    pub lower: Vec<f64>,
    /// Upper end of each feature's interval.
    pub upper: Vec<f64>,
    /// Per feature: the atom's probability, then the b bins' (summing to 1), or empty.
    pub probs: Vec<Vec<f64>>,
}

/// What the release adds to the receipt.
#[derive(Debug, Clone)]
pub struct ReleasedMarginals {
    /// The marginals.
    pub marginals: FeatureMarginals,
    /// Features left without a marginal (no count above 2σ).
    pub empty: usize,
}

/// The cell of x: 0 for x ≤ lo (the atom; NaN too), else 1 + its bin of (lo, hi] (values
/// above hi in the last).
fn cell_of(x: f64, lo: f64, hi: f64, bins: usize) -> usize {
    if !(x > lo) {
        return 0;
    }
    let t = ((x - lo) / (hi - lo) * bins as f64).ceil();
    if t.is_nan() || t < 1.0 {
        1
    } else {
        (t as usize).min(bins)
    }
}

/// Releases the histograms of `rows` (input units, one row per labelled record) on
/// `bins` equal bins of `support` (see the proof note).
pub fn release(
    rows: &[Vec<f64>],
    support: &Support,
    bins: usize,
    split: &Split,
    rng: &mut ReleaseRng,
) -> Result<ReleasedMarginals> {
    let mut h = CellCounts::new(&support.lower, &support.upper, bins)?;
    for r in rows {
        h.push(r);
    }
    h.release(split, rng)
}

/// The exact cell counts of every feature, one record at a time ([`release`]'s statistic).
#[derive(Debug, Clone)]
pub struct CellCounts {
    lower: Vec<f64>,
    upper: Vec<f64>,
    bins: usize,
    counts: Vec<i128>,
}

impl CellCounts {
    /// Empty counts for the box [lower, upper] (one interval per feature) and `bins` bins.
    pub fn new(lower: &[f64], upper: &[f64], bins: usize) -> Result<CellCounts> {
        check_bins(bins)?;
        if lower.len() != upper.len() {
            return Err(Error::Data(
                "internal: the box's lower and upper ends differ in length".into(),
            ));
        }
        Ok(CellCounts {
            lower: lower.to_vec(),
            upper: upper.to_vec(),
            bins,
            counts: vec![0; cells(lower.len(), bins)],
        })
    }

    /// Counts one record's row (its first d features).
    pub fn push(&mut self, row: &[f64]) {
        let cells = self.bins + 1;
        for (j, &x) in row.iter().enumerate().take(self.lower.len()) {
            self.counts[j * cells + cell_of(x, self.lower[j], self.upper[j], self.bins)] += 1;
        }
    }

    /// Adds counts made for the same box and bins (exact).
    pub fn merge(&mut self, other: &CellCounts) -> Result<()> {
        if other.lower != self.lower || other.upper != self.upper || other.bins != self.bins {
            return Err(Error::Data(
                "internal: merging counts made for other boxes or bins".into(),
            ));
        }
        self.counts
            .iter_mut()
            .zip(&other.counts)
            .for_each(|(a, b)| *a += b);
        Ok(())
    }

    /// Releases the counts with the split's noise; post-processing as in the proof note.
    pub fn release(self, split: &Split, rng: &mut ReleaseRng) -> Result<ReleasedMarginals> {
        let (d, bins) = (self.lower.len(), self.bins);
        if split.marginal_features != d || split.marginal_bins != bins {
            return Err(Error::Data(
                "internal: the split was made for other marginals".into(),
            ));
        }
        let cells = bins + 1;
        let released = release_fixed(&self.counts, 0, &split.marginal_noise()?, rng)?;
        let cut = 2.0 * split.sigma_marginals;
        let mut empty = 0;
        let probs = released
            .chunks_exact(cells)
            .map(|c| {
                let kept: Vec<f64> = c.iter().map(|&v| if v >= cut { v } else { 0.0 }).collect();
                let total: f64 = kept.iter().sum();
                if total > 0.0 {
                    kept.iter().map(|v| v / total).collect()
                } else {
                    empty += 1;
                    Vec::new()
                }
            })
            .collect();
        Ok(ReleasedMarginals {
            marginals: FeatureMarginals {
                lower: self.lower,
                upper: self.upper,
                probs,
            },
            empty,
        })
    }
}

impl FeatureMarginals {
    /// Checks the shapes against `d` output features: finite intervals lo < hi, and each
    /// feature's probabilities non-negative, finite and summing to 1 (or empty).
    pub fn check(&self, d: usize) -> Result<()> {
        if self.lower.len() != d || self.upper.len() != d || self.probs.len() != d {
            return Err(Error::Data(format!(
                "model: marginals: give one interval and one histogram per feature ({d})"
            )));
        }
        for j in 0..d {
            let (lo, hi, p) = (self.lower[j], self.upper[j], &self.probs[j]);
            let sum: f64 = p.iter().sum();
            if !(lo.is_finite() && hi.is_finite() && lo < hi)
                || p.iter().any(|v| !(v.is_finite() && *v >= 0.0))
                || (!p.is_empty() && (sum - 1.0).abs() > 1e-9)
            {
                return Err(Error::Data(format!(
                    "model: marginals: feature {j} needs a finite interval lower < upper and bin probabilities summing to 1"
                )));
            }
        }
        Ok(())
    }
}

/// The sampler's map x ↦ F_H⁻¹(F_M(x)) per feature, from the model's per-class normal
/// marginals of each feature (weights, means, standard deviations).
pub struct MarginalMap {
    features: Vec<Option<FeatureMap>>,
    /// Each feature's interval: a feature without a marginal is clamped into it.
    intervals: Vec<(f64, f64)>,
}

struct FeatureMap {
    /// The model's CDF tabulated at `start + i·step`.
    start: f64,
    step: f64,
    cdf: Vec<f64>,
    /// The histogram: its interval, and its cumulative probabilities at the bin edges.
    lo: f64,
    width: f64,
    cum: Vec<f64>,
    /// For each tabulated interval i of the CDF (between points i and i + 1), the range of
    /// `cum` indices [a, b] that the search for any u interpolated inside it can return (see
    /// [`FeatureMap::spans`]); empty when `cum` is not sorted (then the whole of `cum` is
    /// searched).
    spans: Vec<(u16, u16)>,
}

impl MarginalMap {
    /// `classes[k] = (weight, means, sds)` of the model's class k, in output coordinates.
    pub fn new(marginals: &FeatureMarginals, classes: &[(f64, Vec<f64>, Vec<f64>)]) -> Self {
        let features = marginals
            .probs
            .iter()
            .enumerate()
            .map(|(j, p)| {
                if p.is_empty() {
                    return None;
                }
                let lo_m = classes
                    .iter()
                    .map(|(_, m, s)| m[j] - 8.0 * s[j])
                    .fold(f64::INFINITY, f64::min);
                let hi_m = classes
                    .iter()
                    .map(|(_, m, s)| m[j] + 8.0 * s[j])
                    .fold(f64::NEG_INFINITY, f64::max);
                let total: f64 = classes.iter().map(|c| c.0).sum();
                let step = ((hi_m - lo_m) / (CDF_POINTS - 1) as f64).max(f64::MIN_POSITIVE);
                let cdf: Vec<f64> = (0..CDF_POINTS)
                    .map(|i| {
                        let x = lo_m + i as f64 * step;
                        classes
                            .iter()
                            .map(|(w, m, s)| w * normal_cdf((x - m[j]) / s[j].max(1e-300)))
                            .sum::<f64>()
                            / total
                    })
                    .collect();
                let mut cum = Vec::with_capacity(p.len() + 1);
                let mut acc = 0.0;
                cum.push(0.0);
                for v in p {
                    acc += v;
                    cum.push(acc);
                }
                let (lo, hi) = (marginals.lower[j], marginals.upper[j]);
                let spans = FeatureMap::spans(&cdf, &cum);
                Some(FeatureMap {
                    start: lo_m,
                    step,
                    cdf,
                    lo,
                    width: (hi - lo) / (p.len() - 1).max(1) as f64,
                    cum,
                    spans,
                })
            })
            .collect();
        let intervals = marginals
            .lower
            .iter()
            .zip(&marginals.upper)
            .map(|(&lo, &hi)| (lo, hi))
            .collect();
        MarginalMap {
            features,
            intervals,
        }
    }

    /// Maps a sampled row in place.
    pub fn apply(&self, row: &mut [f64]) {
        self.apply_rows(row);
    }

    /// Maps sampled rows (one after another, each of as many features as the map has) in
    /// place, one feature at a time so that its tables stay in cache: the same values as
    /// [`MarginalMap::apply`] on each row.
    pub fn apply_rows(&self, rows: &mut [f64]) {
        let d = self.features.len();
        if d == 0 {
            return;
        }
        for (j, (f, &(lo, hi))) in self.features.iter().zip(&self.intervals).enumerate() {
            for x in rows.iter_mut().skip(j).step_by(d) {
                *x = match f {
                    Some(f) => f.map(*x),
                    None => x.clamp(lo, hi),
                };
            }
        }
    }
}

impl FeatureMap {
    /// [`FeatureMap::spans`]: for each interval i of the tabulated CDF, the smallest and
    /// largest number of `cum` entries below a u that [`FeatureMap::map`] interpolates in it.
    /// There u = clamp(cdf_i + f·(cdf_{i+1} − cdf_i), 0, 1) with 0 ≤ f < 1: rounding is
    /// monotone, so u is monotone in f and lies between its values at f = 0 and f = 1, and
    /// with `cum` sorted the count of entries below u (the search's answer) lies between
    /// theirs. The search then needs only the entries in that range, and returns what it
    /// would over all of `cum`. Empty when `cum` is not sorted or too long for u16.
    fn spans(cdf: &[f64], cum: &[f64]) -> Vec<(u16, u16)> {
        if cum.len() > usize::from(u16::MAX) || cum.windows(2).any(|w| !(w[0] <= w[1])) {
            return Vec::new();
        }
        let below = |u: f64| cum.partition_point(|&c| c < u) as u16;
        cdf.windows(2)
            .map(|w| {
                let u0 = (w[0] + 0.0 * (w[1] - w[0])).clamp(0.0, 1.0);
                let u1 = (w[0] + (w[1] - w[0])).clamp(0.0, 1.0);
                let (a, b) = (below(u0), below(u1));
                (a.min(b), a.max(b))
            })
            .collect()
    }

    fn map(&self, x: f64) -> f64 {
        let (u, interval) = self.quantile(x);
        // F_H⁻¹(u): the cell whose cumulative range holds u, searched among the cells the
        // interval's values can reach.
        let below = match interval.and_then(|i| self.spans.get(i)) {
            Some(&(a, b)) => {
                let (a, b) = (usize::from(a), usize::from(b));
                a + self.cum[a..b].partition_point(|&c| c < u)
            }
            None => self.cum.partition_point(|&c| c < u),
        };
        self.in_cell(below, u)
    }

    /// u = F_M(x), linear between the tabulated points, and the interval of the table it was
    /// interpolated in (none outside the table).
    fn quantile(&self, x: f64) -> (f64, Option<usize>) {
        let t = (x - self.start) / self.step;
        let (u, interval) = if !(t > 0.0) {
            (self.cdf[0], None)
        } else if t >= (self.cdf.len() - 1) as f64 {
            (self.cdf[self.cdf.len() - 1], None)
        } else {
            let i = t as usize;
            let f = t - i as f64;
            (self.cdf[i] + f * (self.cdf[i + 1] - self.cdf[i]), Some(i))
        };
        (u.clamp(0.0, 1.0), interval)
    }

    /// The value at u of the cell that `below` (the number of cumulative sums below u)
    /// points to: the atom is lo, a bin is uniform inside.
    fn in_cell(&self, below: usize, u: f64) -> f64 {
        let b = below.clamp(1, self.cum.len() - 1) - 1;
        if b == 0 {
            return self.lo;
        }
        let p = self.cum[b + 1] - self.cum[b];
        let within = if p > 0.0 {
            ((u - self.cum[b]) / p).clamp(0.0, 1.0)
        } else {
            0.5
        };
        self.lo + ((b - 1) as f64 + within) * self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gmm::suffstats::Split;
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// Counts made in parts and merged are the one-pass counts; another box is refused.
    #[test]
    fn merged_counts_are_the_one_pass_counts() {
        let mut rng = ReleaseRng::seeded(8);
        let rows: Vec<Vec<f64>> = (0..500)
            .map(|_| (0..3).map(|_| rng.gen_range(-0.2..1.2)).collect())
            .collect();
        let (lo, hi) = ([0.0; 3], [1.0; 3]);
        let mut all = CellCounts::new(&lo, &hi, 8).unwrap();
        let (mut a, mut b) = (all.clone(), all.clone());
        for (i, r) in rows.iter().enumerate() {
            all.push(r);
            if i < 170 { &mut a } else { &mut b }.push(r);
        }
        a.merge(&b).unwrap();
        assert_eq!(a.counts, all.counts);
        assert_eq!(all.counts.iter().sum::<i128>(), 1500);
        let other = CellCounts::new(&lo, &[2.0; 3], 8).unwrap();
        assert!(a.merge(&other).is_err());
        assert!(a.merge(&CellCounts::new(&lo, &hi, 4).unwrap()).is_err());
    }

    /// A block of rows mapped feature by feature gets each row's own map.
    #[test]
    fn mapping_rows_together_is_mapping_each_row() {
        let m = FeatureMarginals {
            lower: vec![0.0, 0.0, 1.0],
            upper: vec![4.0, 1.0, 2.0],
            probs: vec![vec![0.1, 0.2, 0.0, 0.0, 0.7], vec![], vec![0.5, 0.25, 0.25]],
        };
        let classes = [
            (2.0, vec![0.0, 0.5, 1.5], vec![1.0, 0.3, 0.2]),
            (1.0, vec![1.0, 0.2, 1.2], vec![0.5, 0.1, 0.4]),
        ];
        let map = MarginalMap::new(&m, &classes);
        let mut rng = ReleaseRng::seeded(9);
        let rows: Vec<f64> = (0..3 * 50).map(|_| rng.gen_range(-3.0..4.0)).collect();
        let mut together = rows.clone();
        map.apply_rows(&mut together);
        for (r, t) in rows.chunks_exact(3).zip(together.chunks_exact(3)) {
            let mut one = r.to_vec();
            for (j, x) in one.iter_mut().enumerate() {
                *x = match &map.features[j] {
                    Some(f) => f.map(*x),
                    None => x.clamp(m.lower[j], m.upper[j]),
                };
            }
            assert_eq!(one, t);
        }
        assert!(together
            .chunks_exact(3)
            .all(|t| (0.0..=1.0).contains(&t[1])));
    }

    /// The map with every search over all of `cum` (the definition the spans shortcut).
    fn map_searching_everything(f: &FeatureMap, x: f64) -> f64 {
        let (u, _) = f.quantile(x);
        f.in_cell(f.cum.partition_point(|&c| c < u), u)
    }

    /// The search restricted to each CDF interval's span returns what the search over all of
    /// `cum` returns, bit for bit: at random points, at the tabulated points themselves,
    /// outside the table, at NaN and ±∞; for histograms with empty bins, an atom, many bins,
    /// and (spans off) one whose cumulative sums are not sorted.
    #[test]
    fn the_spans_give_the_full_search_bit_for_bit() {
        let mut rng = ReleaseRng::seeded(17);
        let mut probs: Vec<Vec<f64>> = vec![
            vec![0.1, 0.2, 0.0, 0.0, 0.7],
            vec![0.9, 0.0, 0.05, 0.0, 0.05],
            (0..300)
                .map(|i| if i % 7 == 0 { 0.0 } else { 1.0 / 256.0 })
                .collect(),
            vec![0.3, -0.1, 0.5, 0.3],
        ];
        probs.push((0..33).map(|_| rng.gen::<f64>()).collect());
        let d = probs.len();
        let m = FeatureMarginals {
            lower: vec![0.0; d],
            upper: (1..=d).map(|j| j as f64).collect(),
            probs,
        };
        let classes = [
            (
                3.0,
                vec![0.2, 0.5, 1.0, 2.0, 1.0],
                vec![0.3, 0.1, 0.7, 0.01, 2.0],
            ),
            (
                1.0,
                vec![0.9, -0.5, 2.5, 2.0, 4.0],
                vec![0.05, 0.4, 0.2, 0.5, 0.1],
            ),
        ];
        let map = MarginalMap::new(&m, &classes);
        let mut checked = 0;
        for (j, f) in map.features.iter().enumerate() {
            let f = f.as_ref().expect("every feature has a marginal");
            assert_eq!(f.spans.is_empty(), j == 3, "feature {j}");
            let n = f.cdf.len() as f64;
            let mut xs: Vec<f64> = (0..20_000)
                .map(|_| f.start + (rng.gen::<f64>() * 1.2 - 0.1) * n * f.step)
                .collect();
            xs.extend((0..f.cdf.len()).map(|i| f.start + i as f64 * f.step));
            xs.extend([
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f.start,
                -1e300,
                1e300,
            ]);
            for x in xs {
                assert_eq!(
                    f.map(x).to_bits(),
                    map_searching_everything(f, x).to_bits(),
                    "feature {j}, x = {x}"
                );
                checked += 1;
            }
        }
        assert!(checked > 5 * 20_000);
    }

    #[test]
    fn a_value_from_the_model_lands_on_the_histogram() {
        // One feature, one class N(0, 1); histogram on [0, 4]: 10 % at 0 (the atom), 20 % on
        // (0, 1], 70 % on (3, 4].
        let m = FeatureMarginals {
            lower: vec![0.0],
            upper: vec![4.0],
            probs: vec![vec![0.1, 0.2, 0.0, 0.0, 0.7]],
        };
        let map = MarginalMap::new(&m, &[(1.0, vec![0.0], vec![1.0])]);
        let mut rng = ReleaseRng::seeded(4);
        let n = 20000;
        let (mut atom, mut low) = (0, 0);
        for _ in 0..n {
            let mut r = [rng.sample::<f64, _>(StandardNormal)];
            map.apply(&mut r);
            let y = r[0];
            assert!((0.0..=1.0).contains(&y) || (3.0..=4.0).contains(&y), "{y}");
            atom += usize::from(y == 0.0);
            low += usize::from(y > 0.0 && y <= 1.0);
        }
        // Binomial(20000, p): within 6 sd (α ≈ 1e-9 each).
        for (count, p) in [(atom, 0.1), (low, 0.2)] {
            let frac = count as f64 / n as f64;
            assert!(
                (frac - p).abs() < 6.0 * (p * (1.0 - p) / n as f64).sqrt(),
                "{frac} vs {p}"
            );
        }
        // A feature without a marginal is clamped into its interval.
        let two = FeatureMarginals {
            lower: vec![0.0, 0.0],
            upper: vec![4.0, 1.0],
            probs: vec![vec![0.1, 0.2, 0.0, 0.0, 0.7], Vec::new()],
        };
        let map2 = MarginalMap::new(&two, &[(1.0, vec![0.0, 0.0], vec![1.0, 1.0])]);
        let mut r = [0.0, -2.5];
        map2.apply(&mut r);
        assert_eq!(r[1], 0.0);
        let mut r = [0.0, 0.5];
        map2.apply(&mut r);
        assert_eq!(r[1], 0.5);
        // Monotone: a larger draw never maps lower.
        let xs = [-3.0, -1.0, -0.1, 0.0, 0.4, 2.0];
        let ys: Vec<f64> = xs
            .iter()
            .map(|&x| map.features[0].as_ref().unwrap().map(x))
            .collect();
        assert!(ys.windows(2).all(|w| w[0] <= w[1]), "{ys:?}");
    }

    #[test]
    fn the_released_histograms_follow_the_data_and_empty_bins_drop() {
        let mut rng = ReleaseRng::seeded(8);
        // 2 features: f0 uniform on (0, 10], f1 always 2.5 (bin 1 of 4 on (0, 10]), and a
        // quarter of the rows at 0 in both (the atom).
        let rows: Vec<Vec<f64>> = (0..20000)
            .map(|i| {
                if i % 4 == 0 {
                    vec![0.0, 0.0]
                } else {
                    vec![10.0 - rng.gen_range(0.0..10.0), 2.5]
                }
            })
            .collect();
        let support = Support {
            lower: vec![0.0, 0.0],
            upper: vec![10.0, 10.0],
        };
        let split = Split::with_extras(4.0, 1e-6, 2, false, None, Some((2, 4))).unwrap();
        assert!(split.epsilon() <= 4.0);
        let r = release(&rows, &support, 4, &split, &mut rng).unwrap();
        r.marginals.check(2).unwrap();
        let p0 = &r.marginals.probs[0];
        assert_eq!(p0.len(), 5);
        assert!((p0[0] - 0.25).abs() < 0.02, "{p0:?}");
        for p in &p0[1..] {
            assert!((p - 0.1875).abs() < 0.02, "{p0:?}");
        }
        let p1 = &r.marginals.probs[1];
        assert!(
            (p1[0] - 0.25).abs() < 0.02 && (p1[1] - 0.75).abs() < 0.02,
            "{p1:?}"
        );
        assert_eq!(r.empty, 0);
        // The wrong split or bins are refused.
        assert!(release(&rows, &support, 8, &split, &mut rng).is_err());
        assert!(check_bins(1).is_err() && check_bins(MAX_BINS + 1).is_err());
        // The noise covers every released count (the atoms too).
        assert_eq!(cells(2, 4), 10);
        assert_eq!(
            r.marginals.probs.iter().map(Vec::len).sum::<usize>(),
            cells(2, 4)
        );
        // Sensitivity: √(2d).
        assert_eq!(sensitivity(8), 4.0);
    }
}
