//! Decoding that keeps the marginals: numeric columns are quantile-mapped onto their DP
//! marginal, categorical columns are assigned levels in the DP proportions.
//!
#![doc = include_str!("quantile.proof.md")]

use crate::preprocess::dp_counts::CountNoise;
use rand::Rng;

/// A released marginal of one numeric column: bin edges and bin probabilities.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NumericMarginal {
    /// Bin edges, non-decreasing (two equal edges: a point bin, decoded as that value),
    /// `probs.len() + 1` of them.
    pub edges: Vec<f64>,
    /// Bin probabilities (sum 1).
    pub probs: Vec<f64>,
}

impl NumericMarginal {
    /// Builds a marginal from exact (integer) counts on `edges` plus exact discrete Gaussian
    /// noise N_ℤ(0, σ²) on each count, then post-processes ([`NumericMarginal::from_noisy`]:
    /// bins below their cuts, usually 2σ, pooled or set to 0; normalize). The cuts must not
    /// depend on the exact counts. None when nothing clears its cut.
    pub fn dp<R: Rng + ?Sized>(
        exact_counts: &[f64],
        edges: Vec<f64>,
        noise: &CountNoise,
        cuts: &[f64],
        rng: &mut R,
    ) -> Option<Self> {
        let noisy: Vec<f64> = exact_counts.iter().map(|&c| noise.add(c, rng)).collect();
        Self::from_noisy(&noisy, edges, cuts)
    }

    /// The post-processing step of [`NumericMarginal::dp`] on already noisy counts: a bin
    /// whose noisy count clears its cut keeps it; each run of consecutive bins that do not is
    /// pooled (its noisy sum against the cut √(Σ cut²) of a sum, then its halves the same
    /// way), so that mass spread thinly over many bins (a pixel that is 0 in 60 % of the rows
    /// and anything in 1..16 in the others) is not cut away bin by bin. When
    /// the bins below their cuts, all together, clear the cut of their sum (there is real mass
    /// among them), a run that does not clear on its own keeps its noisy sum if positive,
    /// instead of nothing: without this the short runs between bins that cleared (those whose
    /// noise was high) lost their mass (the median nonzero share of the 60 %-zero pixel in
    /// `normalize`'s tests was 0.353 of 0.40 over 400 seeds; with it, 0.403). A run's test and
    /// its mass use only the noisy counts and the public cuts.
    pub fn from_noisy(noisy: &[f64], edges: Vec<f64>, cuts: &[f64]) -> Option<Self> {
        debug_assert_eq!(edges.len(), noisy.len() + 1);
        debug_assert_eq!(cuts.len(), noisy.len());
        // A non-finite count (the noise cannot produce one) counts as nothing.
        let noisy: Vec<f64> = noisy
            .iter()
            .map(|&c| if c.is_finite() { c } else { 0.0 })
            .collect();
        // Whether the bins below their cuts, together, clear the cut of their sum: then each
        // run of them keeps its noisy sum where it does not clear on its own.
        let (below, below_cut2) = noisy
            .iter()
            .zip(cuts)
            .filter(|(c, t)| c <= t)
            .fold((0.0, 0.0), |(s, q), (c, t)| (s + c, q + t * t));
        let together = below > f64::sqrt(below_cut2);
        let mut out_edges = vec![edges[0]];
        let mut mass = Vec::with_capacity(noisy.len());
        let mut b = 0;
        while b < noisy.len() {
            if noisy[b] > cuts[b] {
                out_edges.push(edges[b + 1]);
                mass.push(noisy[b]);
                b += 1;
                continue;
            }
            let end = (b..noisy.len())
                .find(|&j| noisy[j] > cuts[j])
                .unwrap_or(noisy.len());
            for (i, j, m) in pool_run(&noisy, cuts, b, end, together).0 {
                debug_assert!(i >= b && j <= end);
                out_edges.push(edges[j]);
                mass.push(m);
            }
            b = end;
        }
        let total: f64 = mass.iter().sum();
        if total <= 0.0 || !total.is_finite() {
            return None;
        }
        Some(NumericMarginal {
            edges: out_edges,
            probs: mass.iter().map(|c| c / total).collect(),
        })
    }

    /// The inverse CDF at p ∈ [0, 1], linear inside each bin.
    pub fn inverse_cdf(&self, p: f64) -> f64 {
        QuantileCursor::new(self).at(p)
    }

    /// The mixture Σ wᵢ·Fᵢ of weighted marginals (weights ≥ 0, not all 0; they are
    /// normalized): each bin's mass spread evenly over its width, a point bin's kept at its
    /// point, on the union of all the edges. Post-processing of the parts; None when no
    /// part has mass or a weight or edge is not finite.
    pub fn mixture(parts: &[(f64, &NumericMarginal)]) -> Option<Self> {
        let total: f64 = parts.iter().map(|(w, _)| w).sum();
        if !(total > 0.0 && total.is_finite())
            || parts.iter().any(|(w, m)| {
                *w < 0.0
                    || m.edges.len() != m.probs.len() + 1
                    || m.edges.iter().any(|e| !e.is_finite())
            })
        {
            return None;
        }
        let mut cuts: Vec<f64> = parts
            .iter()
            .flat_map(|(_, m)| m.edges.iter().copied())
            .collect();
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        // points[i]: the mass at cuts[i]; spans[i]: the mass spread over [cuts[i], cuts[i+1]].
        let mut points = vec![0.0; cuts.len()];
        let mut spans = vec![0.0; cuts.len().saturating_sub(1)];
        let at = |x: f64| cuts.partition_point(|&c| c < x);
        for (w, m) in parts {
            let w = w / total;
            for (b, &q) in m.probs.iter().enumerate() {
                let (lo, hi) = (m.edges[b], m.edges[b + 1]);
                if q.is_nan() || q <= 0.0 {
                    continue;
                }
                if hi <= lo {
                    points[at(lo)] += w * q;
                    continue;
                }
                let mut i = at(lo);
                while i + 1 < cuts.len() && cuts[i] < hi {
                    spans[i] += w * q * (cuts[i + 1] - cuts[i]) / (hi - lo);
                    i += 1;
                }
            }
        }
        let mut edges = vec![*cuts.first()?];
        let mut probs = Vec::with_capacity(2 * cuts.len());
        for (i, &c) in cuts.iter().enumerate() {
            if points[i] > 0.0 {
                edges.push(c);
                probs.push(points[i]);
            }
            if let Some(&next) = cuts.get(i + 1) {
                edges.push(next);
                probs.push(spans[i]);
            }
        }
        let mass: f64 = probs.iter().sum();
        if !(mass > 0.0 && mass.is_finite()) {
            return None;
        }
        probs.iter_mut().for_each(|q| *q /= mass);
        Some(NumericMarginal { edges, probs })
    }

    /// Lowest and highest edge with mass.
    pub fn support(&self) -> (f64, f64) {
        let first = self.probs.iter().position(|&q| q > 0.0).unwrap_or(0);
        let last = self.probs.iter().rposition(|&q| q > 0.0).unwrap_or(0);
        (self.edges[first], self.edges[last + 1])
    }
}

/// Pools the run `lo..hi` of bins whose noisy counts did not clear their cuts, returning its
/// bins as contiguous pieces `(first, end, mass)` that cover it in order, and whether the run
/// cleared its cut. The run's noisy sum is cut at √(Σ cut²) (the cut in σ units of a sum of
/// independent noisy counts: the same false-detection rate as one bin). Below it the run has
/// no mass, unless `in_cleared` (it is a half of a run that cleared, or a top-level run when
/// all the bins below their cuts cleared together): then it keeps its noisy sum, if
/// positive, so that real mass is not lost run by run or half by half. Above
/// it, each half is pooled the same way, and the run stays one bin holding its sum when
/// neither half clears. A function of the noisy counts and the public cuts only:
/// post-processing.
fn pool_run(
    noisy: &[f64],
    cuts: &[f64],
    lo: usize,
    hi: usize,
    in_cleared: bool,
) -> (Vec<(usize, usize, f64)>, bool) {
    let sum: f64 = noisy[lo..hi].iter().sum();
    let cut = cuts[lo..hi].iter().map(|c| c * c).sum::<f64>().sqrt();
    if sum <= cut {
        let kept = if in_cleared { sum.max(0.0) } else { 0.0 };
        return (vec![(lo, hi, kept)], false);
    }
    if hi - lo == 1 {
        return (vec![(lo, hi, sum)], true);
    }
    let mid = lo + (hi - lo) / 2;
    let (mut pieces, left) = pool_run(noisy, cuts, lo, mid, true);
    let (right_pieces, right) = pool_run(noisy, cuts, mid, hi, true);
    if !(left || right) {
        return (vec![(lo, hi, sum)], true);
    }
    pieces.extend(right_pieces);
    (pieces, true)
}

/// [`NumericMarginal::inverse_cdf`] for a non-decreasing sequence of p: the bin found for one
/// p is where the search for the next one starts, so T increasing queries cost O(T + bins)
/// instead of O(T · bins). The cumulative mass is summed in the same order as a fresh search
/// would sum it, so every answer is bit for bit that of `inverse_cdf`.
struct QuantileCursor<'a> {
    m: &'a NumericMarginal,
    /// The first bin that can still answer.
    bin: usize,
    /// The mass of the bins before `bin`, summed from bin 0.
    below: f64,
}

impl<'a> QuantileCursor<'a> {
    fn new(m: &'a NumericMarginal) -> Self {
        QuantileCursor {
            m,
            bin: 0,
            below: 0.0,
        }
    }

    /// F⁻¹(p); p must not be smaller than the previous call's p.
    fn at(&mut self, p: f64) -> f64 {
        let p = p.clamp(0.0, 1.0);
        let probs = &self.m.probs;
        let edges = &self.m.edges;
        // A bin that cannot answer p (no mass, or its cumulative mass below p) cannot answer
        // a larger p either, so skipping it for good is safe.
        while self.bin < probs.len() {
            let (b, q) = (self.bin, probs[self.bin]);
            if q > 0.0 && (self.below + q >= p || b + 1 == probs.len()) {
                let f = ((p - self.below) / q).clamp(0.0, 1.0);
                return edges[b] + f * (edges[b + 1] - edges[b]);
            }
            self.below += q;
            self.bin += 1;
        }
        // Only reachable when the last bins have zero mass: the top of the last mass.
        let last = probs.iter().rposition(|&q| q > 0.0).unwrap_or(0);
        edges[last + 1]
    }
}

/// The key under which `u64` order is `f64::total_cmp` order.
fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The key under which ascending `u32` order is `f32::total_cmp` order.
fn ascending_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    }
}

/// The f32 whose [`ascending_key`] is `k`.
fn from_ascending_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

/// The key under which ascending `u32` order is descending `f32::total_cmp` order.
fn descending_key(x: f32) -> u32 {
    !ascending_key(x)
}

/// The row indices of `keys` in stable ascending order (equal keys keep their input order):
/// a least-significant-digit radix sort on 11-bit digits, skipping the digits on which every
/// key agrees. `K` is `u64` or `u32` (a 32-bit key needs 3 passes instead of 6).
fn stable_order<K: Copy + Into<u64>>(keys: Vec<K>) -> Vec<u32> {
    stable_order_with_keys(keys).0
}

/// [`stable_order`] and the keys in that order (sorted in the memory of `keys`).
fn stable_order_with_keys<K: Copy + Into<u64>>(keys: Vec<K>) -> (Vec<u32>, Vec<K>) {
    const BITS: usize = 11;
    const BUCKETS: usize = 1 << BITS;
    let digits = (8 * std::mem::size_of::<K>()).div_ceil(BITS);
    let t = keys.len();
    let digit = |k: K, p: usize| ((k.into() >> (p * BITS)) as usize) & (BUCKETS - 1);
    let mut counts = vec![[0u32; BUCKETS]; digits];
    for &k in &keys {
        for (p, c) in counts.iter_mut().enumerate() {
            c[digit(k, p)] += 1;
        }
    }
    let mut src_k = keys;
    let mut src_i: Vec<u32> = (0..t as u32).collect();
    let mut dst_k = src_k.clone();
    let mut dst_i = vec![0u32; t];
    for (p, c) in counts.iter().enumerate() {
        if c.iter().any(|&n| n as usize == t) {
            continue;
        }
        let mut next = [0u32; BUCKETS];
        let mut acc = 0u32;
        for (b, &n) in c.iter().enumerate() {
            next[b] = acc;
            acc += n;
        }
        for (&k, &i) in src_k.iter().zip(&src_i) {
            let b = digit(k, p);
            let at = next[b] as usize;
            next[b] += 1;
            dst_k[at] = k;
            dst_i[at] = i;
        }
        std::mem::swap(&mut src_k, &mut dst_k);
        std::mem::swap(&mut src_i, &mut dst_i);
    }
    (src_i, src_k)
}

/// Writes the marginal's quantile at each mid-rank: the r-th index of `order` (the values'
/// stable ascending order, t of them) gets F⁻¹((r + ½)/t).
fn place_quantiles(
    order: impl Iterator<Item = usize>,
    t: usize,
    m: &NumericMarginal,
    out: &mut [f64],
) {
    let mut cursor = QuantileCursor::new(m);
    for (r, i) in order.enumerate() {
        out[i] = cursor.at((r as f64 + 0.5) / t as f64);
    }
}

/// Replaces each value by the marginal's quantile at its mid-rank (see the module note).
/// Ties keep their input order.
pub fn quantile_map(values: &mut [f64], m: &NumericMarginal) {
    let t = values.len();
    if t == 0 {
        return;
    }
    if t >= 256 && u32::try_from(t).is_ok() {
        let keys: Vec<u64> = values.iter().map(|&x| total_order_key(x)).collect();
        let order = stable_order(keys);
        place_quantiles(order.into_iter().map(|i| i as usize), t, m, values);
        return;
    }
    // Short columns (and, in principle, columns of more than 2^32 rows): (key, index) packed
    // into one u128, whose unstable sort is the stable sort by value.
    let mut order: Vec<u128> = values
        .iter()
        .enumerate()
        .map(|(i, &x)| (u128::from(total_order_key(x)) << 64) | i as u128)
        .collect();
    order.sort_unstable();
    place_quantiles(
        order.into_iter().map(|key| key as u64 as usize),
        t,
        m,
        values,
    );
}

/// [`quantile_map`] of the t values `value(x(i))`, returned, for a `value` that does not
/// decrease as the f32 feature x grows (a numeric column decoded from the synthetic
/// features: offset + x·scale with scale > 0). The values then follow the order of the
/// features, so they are sorted by the 32-bit features (a 3-pass radix sort instead of up
/// to 6 on 64-bit keys) and each run of equal values is put back in index order; the values
/// are computed along that order from the sorted features and checked to be non-decreasing,
/// and the plain [`quantile_map`] is used when they are not (or a feature is not finite).
/// The result is [`quantile_map`]'s bit for bit either way.
pub fn quantile_map_monotone(
    t: usize,
    x: impl Fn(usize) -> f32,
    value: impl Fn(f32) -> f64,
    m: &NumericMarginal,
) -> Vec<f64> {
    let plain = || {
        let mut v: Vec<f64> = (0..t).map(|i| value(x(i))).collect();
        quantile_map(&mut v, m);
        v
    };
    if t < 256 || u32::try_from(t).is_err() {
        return plain();
    }
    let mut keys = Vec::with_capacity(t);
    for i in 0..t {
        let xi = x(i);
        if !xi.is_finite() {
            return plain();
        }
        keys.push(ascending_key(xi));
    }
    let (mut order, sorted) = stable_order_with_keys(keys);
    let along: Vec<f64> = sorted
        .iter()
        .map(|&k| value(from_ascending_key(k)))
        .collect();
    drop(sorted);
    if !ties_in_index_order(&mut order, &along) {
        return plain();
    }
    drop(along);
    let mut out = vec![0f64; t];
    place_quantiles(order.into_iter().map(|i| i as usize), t, m, &mut out);
    out
}

/// Puts in index order each run of `order` whose values (`along[r]`: the value of
/// `order[r]`) are equal; false when the values decrease somewhere (then `order` is not
/// their sorted order).
fn ties_in_index_order(order: &mut [u32], along: &[f64]) -> bool {
    let key = |r: usize| total_order_key(along[r]);
    let mut s = 0;
    while s < order.len() {
        let k = key(s);
        let mut e = s + 1;
        while e < order.len() && key(e) == k {
            e += 1;
        }
        if e < order.len() && key(e) < k {
            return false;
        }
        if e - s > 1 {
            order[s..e].sort_unstable();
        }
        s = e;
    }
    true
}

/// Largest-remainder quotas: non-negative integers summing to `t`, proportional to `probs`
/// (which need not be normalized; all-zero gives equal shares).
pub fn quotas(probs: &[f64], t: usize) -> Vec<usize> {
    let l = probs.len();
    if l == 0 {
        return Vec::new();
    }
    let clean: Vec<f64> = probs
        .iter()
        .map(|&p| if p.is_finite() && p > 0.0 { p } else { 0.0 })
        .collect();
    let total: f64 = clean.iter().sum();
    let w: Vec<f64> = if total > 0.0 {
        clean.iter().map(|p| p / total).collect()
    } else {
        vec![1.0 / l as f64; l]
    };
    let raw: Vec<f64> = w.iter().map(|p| p * t as f64).collect();
    let mut q: Vec<usize> = raw.iter().map(|r| r.floor() as usize).collect();
    let mut left = t.saturating_sub(q.iter().sum());
    let mut by_rem: Vec<usize> = (0..l).collect();
    by_rem.sort_by(|&a, &b| (raw[b] - raw[b].floor()).total_cmp(&(raw[a] - raw[a].floor())));
    for &j in by_rem.iter().cycle() {
        if left == 0 {
            break;
        }
        q[j] += 1;
        left -= 1;
    }
    q
}

/// The quotas of the next `rows` rows out of the `left` quotas still to give (one per level,
/// summing to the rows not yet assigned, at least `rows`): all of them when the chunk is the
/// last (`rows` = their sum), otherwise the largest-remainder share of `rows` in proportion
/// to them, never above any of them. Chunk by chunk, every level gets exactly its `left`
/// total, and each chunk about its proportional part of it. `left` is reduced by the share.
pub fn chunk_quotas(left: &mut [usize], rows: usize) -> Vec<usize> {
    let total: usize = left.iter().sum();
    if rows >= total {
        return left.iter_mut().map(std::mem::take).collect();
    }
    let weights: Vec<f64> = left.iter().map(|&q| q as f64).collect();
    let mut share = quotas(&weights, rows);
    // Never more than a level has left (largest remainders cannot exceed it but for
    // rounding): any excess goes to the levels with room, in order.
    let mut excess = 0;
    for (s, &l) in share.iter_mut().zip(left.iter()) {
        if *s > l {
            excess += *s - l;
            *s = l;
        }
    }
    for (s, &l) in share.iter_mut().zip(left.iter()) {
        let room = (l - *s).min(excess);
        *s += room;
        excess -= room;
    }
    for (l, s) in left.iter_mut().zip(&share) {
        *l -= s;
    }
    share
}

/// Each row's scores for `levels` levels: `levels` consecutive values of a row-major matrix
/// whose rows are `stride` values apart, from `offset` in each row (a one-hot segment of the
/// synthetic rows, read in place).
#[derive(Debug, Clone, Copy)]
pub struct Scores<'a> {
    data: &'a [f32],
    levels: usize,
    stride: usize,
    offset: usize,
}

impl<'a> Scores<'a> {
    /// Row-major scores, `levels` a row.
    pub fn contiguous(data: &'a [f32], levels: usize) -> Self {
        Scores::segment(data, levels, 0, levels)
    }

    /// The `levels` values from `offset` of every row of width `stride` (offset + levels ≤
    /// stride).
    pub fn segment(data: &'a [f32], stride: usize, offset: usize, levels: usize) -> Self {
        debug_assert!(offset + levels <= stride);
        Scores {
            data,
            levels,
            stride,
            offset,
        }
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.stride).unwrap_or(0)
    }

    /// Levels a row.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// Row i's scores.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [f32] {
        let at = i * self.stride + self.offset;
        &self.data[at..at + self.levels]
    }

    /// Row i's score for level j.
    #[inline]
    fn at(&self, i: usize, j: usize) -> f32 {
        self.data[i * self.stride + self.offset + j]
    }

    /// Every row's scores, in order.
    fn iter(&self) -> impl Iterator<Item = &'a [f32]> + '_ {
        (0..self.rows()).map(|i| self.row(i))
    }
}

/// Assigns one of `levels` levels to each of the `scores.len() / levels` rows (row-major
/// scores: the noisy one-hot segment of each row), with exactly the [`quotas`] of `probs`, by
/// greedy matching on per-level standardized scores (see the module note).
pub fn assign_in_proportion(scores: &[f32], levels: usize, probs: &[f64]) -> Vec<usize> {
    let scores = Scores::contiguous(scores, levels);
    let quota = quotas(probs, scores.rows());
    assign_with_quotas(scores, quota)
}

/// [`assign_in_proportion`] on scores read in place ([`Scores`]), with the rows each level
/// gets given: `quota` (one per level, summing to the rows; a shortfall leaves rows at
/// level 0, a surplus is not reached). A batch decoded a chunk of rows at a time gives each
/// chunk its share of the whole batch's quotas ([`chunk_quotas`]).
pub fn assign_with_quotas(scores: Scores<'_>, mut quota: Vec<usize>) -> Vec<usize> {
    let levels = scores.levels();
    if levels == 0 {
        return Vec::new();
    }
    debug_assert_eq!(quota.len(), levels);
    let t = scores.rows();
    let z = standardizer(scores);
    // Greedy: the candidates (row i, level j) by decreasing standardized score, ties in
    // (i, j) order; each takes its row if the row is free and the level has quota left.
    let mut out = vec![usize::MAX; t];
    if t <= u32::MAX as usize {
        greedy_merged(scores, &z, &mut quota, &mut out, None);
    } else {
        // More rows than a u32 indexes.
        greedy_sorted(scores, &z, &mut quota, &mut out);
    }
    // Quotas sum to t and every row is a candidate for every level with quota, so every row
    // is assigned; this is a guard for the degenerate all-zero-quota case only.
    for o in out.iter_mut() {
        if *o == usize::MAX {
            *o = 0;
        }
    }
    out
}

/// Each level's scores standardized over the rows (NaN → 0), so levels are compared by how
/// much a row stands out for them, not by their overall frequency: `z(v, j)`.
fn standardizer(scores: Scores<'_>) -> impl Fn(f32, usize) -> f32 {
    let (t, levels) = (scores.rows(), scores.levels());
    let mut mean = vec![0f64; levels];
    let mut sq = vec![0f64; levels];
    for row in scores.iter() {
        for (j, &v) in row.iter().enumerate() {
            mean[j] += f64::from(v);
            sq[j] += f64::from(v) * f64::from(v);
        }
    }
    let tf = t.max(1) as f64;
    let sd: Vec<f64> = (0..levels)
        .map(|j| {
            mean[j] /= tf;
            let v = (sq[j] / tf - mean[j] * mean[j]).max(0.0);
            if v > 0.0 {
                v.sqrt()
            } else {
                1.0
            }
        })
        .collect();
    move |v: f32, j: usize| {
        let z = (f64::from(v) - mean[j]) / sd[j];
        if z.is_nan() {
            0.0
        } else {
            z as f32
        }
    }
}

/// [`assign_in_proportion`]'s greedy by its definition: one list of (score, row, level)
/// triples for every level with quota, stably sorted by decreasing score (12 bytes a
/// candidate). Used beyond 2^32 rows, and as the reference [`greedy_merged`] is tested against.
fn greedy_sorted(
    scores: Scores<'_>,
    z: &impl Fn(f32, usize) -> f32,
    quota: &mut [usize],
    out: &mut [usize],
) {
    let t = out.len();
    let mut cand: Vec<(f32, usize, usize)> = Vec::with_capacity(t * scores.levels());
    for (i, row) in scores.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if quota[j] > 0 {
                cand.push((z(v, j), i, j));
            }
        }
    }
    cand.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut done = 0;
    for (_, i, j) in cand {
        if out[i] == usize::MAX && quota[j] > 0 {
            out[i] = j;
            quota[j] -= 1;
            done += 1;
            if done == t {
                break;
            }
        }
    }
}

/// Candidates a level's first chunk holds beyond twice its quota ([`greedy_merged`]).
const CHUNK_SLACK: usize = 1024;

/// How many candidates [`greedy_merged`] fetches for a level at least: `Some(n)`, n (tests,
/// to exercise the refills); `None`, twice the level's remaining quota plus [`CHUNK_SLACK`].
/// A refill also fetches at least twice the level's previous chunk.
type ChunkRule = Option<usize>;

/// One candidate of level j: its descending-score key in the high 32 bits and its row in the
/// low 32, so the integer order is the order of (descending score, row).
#[inline]
fn candidate(key: u32, row: usize) -> u64 {
    (u64::from(key) << 32) | row as u64
}

/// The row of a [`candidate`].
#[inline]
fn row_of(c: u64) -> usize {
    (c & 0xffff_ffff) as usize
}

/// Whether row i is set in the bitset `taken`.
#[inline]
fn is_taken(taken: &[u64], i: usize) -> bool {
    (taken[i >> 6] >> (i & 63)) & 1 == 1
}

/// The first `want` (≥ 1) candidates of level j after `after` (exclusive; all when None), in
/// order, rows already `taken` left out (they would be stepped over). One pass over the rows
/// in at most 16 bytes a wanted candidate: the buffer keeps the `want` smallest candidates
/// seen so far, cut back to them whenever it fills.
fn next_chunk(
    scores: Scores<'_>,
    z: &impl Fn(f32, usize) -> f32,
    j: usize,
    after: Option<u64>,
    want: usize,
    taken: &[u64],
) -> Vec<u64> {
    let t = scores.rows();
    let want = want.clamp(1, t.max(1));
    let cap = want.saturating_mul(2).min(t.max(1));
    let mut c: Vec<u64> = Vec::with_capacity(cap);
    for i in 0..t {
        if is_taken(taken, i) {
            continue;
        }
        let p = candidate(descending_key(z(scores.at(i, j), j)), i);
        if after.map_or(true, |a| p > a) {
            if c.len() == cap {
                c.select_nth_unstable(want - 1);
                c.truncate(want);
            }
            c.push(p);
        }
    }
    if c.len() > want {
        c.select_nth_unstable(want - 1);
        c.truncate(want);
    }
    // Candidates are distinct (one per row), so the unstable sort is deterministic.
    c.sort_unstable();
    c
}

/// [`assign_in_proportion`]'s greedy, in the same candidate order without materializing it:
/// each level with quota walks its rows by (descending score, row) and a heap merges the
/// levels by (descending score, position i·levels + j), which is the global order. A level
/// whose quota is spent leaves the merge and rows already assigned are stepped over: their
/// candidates would all be refused, so the accepted ones and their order are unchanged.
///
/// A level holds only the next chunk of its order (at first twice its quota plus 1,024: 8
/// bytes a candidate, the key kept beside the row so the merge never re-reads the scores)
/// and fetches the following chunk, at least twice as long and without the rows taken
/// since, when it walks past the end (one pass over the rows per chunk).
/// The memory is then about 16 bytes a row whatever the number of levels (a 30-level column
/// of 1M rows: about 30 MB where a full order per level held 120 MB).
fn greedy_merged(
    scores: Scores<'_>,
    z: &(impl Fn(f32, usize) -> f32 + Sync),
    quota: &mut [usize],
    out: &mut [usize],
    chunk: ChunkRule,
) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let t = out.len();
    if t == 0 {
        return;
    }
    let levels = scores.levels();
    let want = |q: usize| chunk.unwrap_or(q.saturating_mul(2).saturating_add(CHUNK_SLACK));
    let live: Vec<usize> = (0..levels).filter(|&j| quota[j] > 0).collect();
    // The rows assigned so far, one bit each (a cache-resident copy of `out != usize::MAX`:
    // stepping over assigned rows reads it for up to every candidate).
    let mut taken = vec![0u64; t.div_ceil(64)];
    // Each level's first chunk, the levels on all cores natively.
    let mut chunks: Vec<Vec<u64>> = crate::par::map_range(0..live.len(), |slot| {
        let j = live[slot];
        next_chunk(scores, z, j, None, want(quota[j]), &taken)
    });
    let mut at = vec![0usize; live.len()];
    let mut size: Vec<usize> = live.iter().map(|&j| want(quota[j])).collect();
    // Heap entries: ((descending score key, position), slot in `live`).
    let entry = |slot: usize, c: u64| {
        let key = (c >> 32) as u32;
        Reverse(((key, (row_of(c) * levels + live[slot]) as u64), slot))
    };
    let mut heap: BinaryHeap<_> = (0..live.len())
        .filter_map(|slot| chunks[slot].first().map(|&c| entry(slot, c)))
        .collect();
    let mut done = 0;
    while let Some(Reverse((_, slot))) = heap.pop() {
        let j = live[slot];
        let i = row_of(chunks[slot][at[slot]]);
        // A level is in the heap only while it has quota.
        debug_assert!(quota[j] > 0);
        if !is_taken(&taken, i) {
            taken[i >> 6] |= 1 << (i & 63);
            out[i] = j;
            quota[j] -= 1;
            done += 1;
            if done == t {
                return;
            }
        }
        if quota[j] == 0 {
            chunks[slot] = Vec::new();
            continue;
        }
        // The level's next candidate whose row is free, fetching the next chunk at the end.
        loop {
            at[slot] += 1;
            if at[slot] == chunks[slot].len() {
                // Each chunk at least doubles, so a level whose candidates keep being
                // taken by others fetches O(log t) chunks, not O(t / chunk).
                let last = chunks[slot].last().copied();
                size[slot] = want(quota[j]).max(size[slot].saturating_mul(2));
                chunks[slot] = next_chunk(scores, z, j, last, size[slot], &taken);
                at[slot] = 0;
                if chunks[slot].is_empty() {
                    break;
                }
            }
            let c = chunks[slot][at[slot]];
            if !is_taken(&taken, row_of(c)) {
                heap.push(entry(slot, c));
                break;
            }
        }
    }
}

/// Empirical-Bayes shrinkage of noisy rows toward their class's mean, per class and feature
/// (post-processing: it reads only the released rows, their public labels and the public
/// noise σ). For class k and feature j, with m̂ the mean and v the variance of the released
/// values and σ² the noise variance, the value x becomes m̂ + λ(x − m̂) with
/// λ = max(v − σ², 0)/v: the linear minimum-mean-square-error estimate of the noise-free value
/// when the noise is independent of it. Classes with fewer than 2 rows are left as they are.
pub fn shrink_to_class_means(rows: &mut [f32], d: usize, labels: &[u32], sigma: f64) {
    if d == 0 || sigma.is_nan() || sigma <= 0.0 {
        return;
    }
    let k = labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0);
    let mut cnt = vec![0f64; k];
    let mut sum = vec![0f64; k * d];
    let mut sq = vec![0f64; k * d];
    for (row, &l) in rows.chunks_exact(d).zip(labels) {
        let l = l as usize;
        cnt[l] += 1.0;
        for (j, &x) in row.iter().enumerate() {
            sum[l * d + j] += f64::from(x);
            sq[l * d + j] += f64::from(x) * f64::from(x);
        }
    }
    let s2 = sigma * sigma;
    let mut lambda = vec![1f64; k * d];
    for l in 0..k {
        if cnt[l] < 2.0 {
            continue;
        }
        for j in 0..d {
            let m = sum[l * d + j] / cnt[l];
            let v = (sq[l * d + j] / cnt[l] - m * m).max(0.0);
            sum[l * d + j] = m;
            lambda[l * d + j] = if v > 0.0 {
                ((v - s2) / v).max(0.0)
            } else {
                0.0
            };
        }
    }
    for (row, &l) in rows.chunks_exact_mut(d).zip(labels) {
        let l = l as usize;
        if cnt[l] < 2.0 {
            continue;
        }
        for (j, x) in row.iter_mut().enumerate() {
            let m = sum[l * d + j];
            *x = (m + lambda[l * d + j] * (f64::from(*x) - m)) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn inverse_cdf_is_piecewise_linear() {
        let m = NumericMarginal {
            edges: vec![0.0, 1.0, 2.0, 4.0],
            probs: vec![0.5, 0.0, 0.5],
        };
        assert_eq!(m.inverse_cdf(0.0), 0.0);
        assert_eq!(m.inverse_cdf(0.25), 0.5);
        assert_eq!(m.inverse_cdf(0.5), 1.0);
        assert_eq!(m.inverse_cdf(0.75), 3.0);
        assert_eq!(m.inverse_cdf(1.0), 4.0);
        assert_eq!(m.support(), (0.0, 4.0));
    }

    /// The mixture's CDF is the weighted CDFs' sum at every edge and between them; point
    /// bins keep their mass at their point; weights are normalized; bad parts give None.
    #[test]
    fn mixture_is_the_weighted_sum_of_the_cdfs() {
        fn cdf(m: &NumericMarginal, x: f64) -> f64 {
            m.probs
                .iter()
                .enumerate()
                .map(|(b, &q)| {
                    let (lo, hi) = (m.edges[b], m.edges[b + 1]);
                    if x >= hi {
                        q
                    } else if x < lo || hi <= lo {
                        0.0
                    } else {
                        q * (x - lo) / (hi - lo)
                    }
                })
                .sum()
        }
        let a = NumericMarginal {
            edges: vec![0.0, 0.0, 4.0, 10.0],
            probs: vec![0.5, 0.3, 0.2],
        };
        let b = NumericMarginal {
            edges: vec![2.0, 3.0, 3.0, 8.0, 20.0],
            probs: vec![0.25, 0.25, 0.0, 0.5],
        };
        let m = NumericMarginal::mixture(&[(3.0, &a), (1.0, &b)]).unwrap();
        assert!(m.edges.windows(2).all(|e| e[0] <= e[1]), "{m:?}");
        assert_eq!(m.edges.len(), m.probs.len() + 1);
        assert!((m.probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for i in 0..=220 {
            let x = -1.0 + 0.1 * i as f64;
            let want = 0.75 * cdf(&a, x) + 0.25 * cdf(&b, x);
            assert!(
                (cdf(&m, x) - want).abs() < 1e-12,
                "x = {x}: {} vs {want}",
                cdf(&m, x)
            );
        }
        // The atoms: 0.375 at 0 and 0.0625 at 3, each a point bin.
        let atom = |v: f64| -> f64 {
            (0..m.probs.len())
                .filter(|&b| m.edges[b] == v && m.edges[b + 1] == v)
                .map(|b| m.probs[b])
                .sum()
        };
        assert!((atom(0.0) - 0.375).abs() < 1e-12 && (atom(3.0) - 0.0625).abs() < 1e-12);
        assert_eq!(m.inverse_cdf(0.2), 0.0);
        assert!((m.inverse_cdf(1.0) - 20.0).abs() < 1e-9);
        // One part: the same distribution.
        let one = NumericMarginal::mixture(&[(2.0, &b)]).unwrap();
        for i in 0..=220 {
            let x = -1.0 + 0.1 * i as f64;
            assert!((cdf(&one, x) - cdf(&b, x)).abs() < 1e-12);
        }
        assert!(NumericMarginal::mixture(&[]).is_none());
        assert!(NumericMarginal::mixture(&[(0.0, &a)]).is_none());
        assert!(NumericMarginal::mixture(&[(-1.0, &a), (2.0, &b)]).is_none());
        assert!(NumericMarginal::mixture(&[(f64::NAN, &a)]).is_none());
    }

    #[test]
    fn thresholding_and_empty_marginals() {
        // σ = 1: counts ≤ 2 are dropped.
        let m = NumericMarginal::from_noisy(
            &[1.5, 10.0, -3.0, 30.0],
            vec![0., 1., 2., 3., 4.],
            &[2.0; 4],
        )
        .unwrap();
        assert_eq!(m.probs, vec![0.0, 0.25, 0.0, 0.75]);
        assert!(
            NumericMarginal::from_noisy(&[1.0, f64::NAN], vec![0., 1., 2.], &[2.0; 2]).is_none()
        );
    }

    #[test]
    fn runs_below_their_cuts_are_pooled_dyadically() {
        // σ = 1, cut 2 per bin. Sixteen bins of 1.5: none clears alone; the run (24 > 2·4),
        // its halves (12 > 2·√8), quarters (6 > 4) and eighths (3 > 2·√2) clear, single bins
        // do not, so the run becomes eight two-bin pieces of equal mass.
        let edges: Vec<f64> = (0..=16).map(f64::from).collect();
        let m = NumericMarginal::from_noisy(&[1.5; 16], edges.clone(), &[2.0; 16]).unwrap();
        let even: Vec<f64> = (0..=8).map(|i| f64::from(2 * i)).collect();
        assert_eq!(m.edges, even);
        assert_eq!(m.probs, vec![0.125; 8]);
        // Noise only (sum 0 against 2·4): nothing is released.
        let noise = [1.0, -1.0, 0.5, -0.5, 1.9, -1.9, 0.3, -0.3];
        assert!(NumericMarginal::from_noisy(&noise, edges[..9].to_vec(), &[2.0; 8]).is_none());
        // A big bin 0, then a run of eight (6.3 > 2·√8): its left half is below its cut
        // (1.5 < 2·2) but keeps its noisy sum as the half of a run that cleared; its right
        // half holds 4.8 > 2·2 while no pair (2.4 < 2·√2) or bin of it clears: one bin.
        let noisy = [100.0, 0.5, 0.5, 0.5, 0.0, 1.2, 1.2, 1.2, 1.2];
        let m = NumericMarginal::from_noisy(&noisy, edges[..10].to_vec(), &[2.0; 9]).unwrap();
        assert_eq!(m.edges, vec![0.0, 1.0, 5.0, 9.0]);
        let total = 100.0 + 1.5 + 1.2 * 4.0;
        assert_eq!(m.probs, vec![100.0 / total, 1.5 / total, 1.2 * 4.0 / total]);
        // Two runs split by a bin that clears: the first (3.5 > 2·√2) is one bin, the second
        // (0.5 < 2·√2) keeps nothing, as the bins below their cuts together do not clear
        // (4.0 < 2·√4). When they do (the second run at 2.0: 5.5 > 4), it keeps its 2.0.
        let pair = |second: f64| {
            let noisy = [1.75, 1.75, 50.0, second / 2.0, second / 2.0];
            NumericMarginal::from_noisy(&noisy, edges[..6].to_vec(), &[2.0; 5]).unwrap()
        };
        let m = pair(0.5);
        assert_eq!(m.edges, vec![0.0, 2.0, 3.0, 5.0]);
        assert_eq!(m.probs, vec![3.5 / 53.5, 50.0 / 53.5, 0.0]);
        let m = pair(2.0);
        assert_eq!(m.probs, vec![3.5 / 55.5, 50.0 / 55.5, 2.0 / 55.5]);
        // A run's cut is √(Σ cut²): two bins cut at 1 and 3 pool at √10 ≈ 3.16.
        let m = NumericMarginal::from_noisy(&[0.9, 2.4], vec![0.0, 1.0, 2.0], &[1.0, 3.0]).unwrap();
        assert_eq!(
            (m.edges.clone(), m.probs.clone()),
            (vec![0.0, 2.0], vec![1.0])
        );
        assert!(
            NumericMarginal::from_noisy(&[0.9, 2.2], vec![0.0, 1.0, 2.0], &[1.0, 3.0]).is_none()
        );
    }

    /// The definition, written plainly: a stable sort of the indices by `total_cmp`, and a
    /// fresh linear search of the CDF for every rank.
    fn quantile_map_by_definition(values: &[f64], m: &NumericMarginal) -> Vec<f64> {
        let inverse = |p: f64| {
            let p = p.clamp(0.0, 1.0);
            let mut acc = 0.0;
            for (b, &q) in m.probs.iter().enumerate() {
                if q > 0.0 && (acc + q >= p || b + 1 == m.probs.len()) {
                    let f = ((p - acc) / q).clamp(0.0, 1.0);
                    return m.edges[b] + f * (m.edges[b + 1] - m.edges[b]);
                }
                acc += q;
            }
            let last = m.probs.iter().rposition(|&q| q > 0.0).unwrap_or(0);
            m.edges[last + 1]
        };
        let t = values.len();
        let mut order: Vec<usize> = (0..t).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut out = vec![0.0; t];
        for (r, &i) in order.iter().enumerate() {
            out[i] = inverse((r as f64 + 0.5) / t as f64);
        }
        out
    }

    #[test]
    fn quantile_map_equals_its_definition_bit_for_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        // Masses with empty bins at both ends and inside, and a mass that does not sum
        // exactly to 1 in floating point.
        let marginals = [
            NumericMarginal {
                edges: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                probs: vec![0.0, 0.1, 0.0, 0.6, 0.3, 0.0],
            },
            NumericMarginal {
                edges: (0..=40).map(|e| f64::from(e) * 0.7 - 3.0).collect(),
                probs: (0..40)
                    .map(|b| if b % 7 == 3 { 0.0 } else { 1.0 / 34.0 })
                    .collect(),
            },
        ];
        for m in &marginals {
            for &t in &[1usize, 2, 3, 10, 255, 256, 999, 4096, 70_000] {
                // Ties (values from a small set), both zeros, both signs, infinities.
                let pool = [
                    -2.5,
                    -0.0,
                    0.0,
                    1.0,
                    1.0 + 1e-12,
                    7.0,
                    f64::INFINITY,
                    -1e300,
                ];
                let mut v: Vec<f64> = (0..t)
                    .map(|_| {
                        if rng.gen_bool(0.5) {
                            pool[rng.gen_range(0..pool.len())]
                        } else {
                            rng.gen_range(-10.0..10.0)
                        }
                    })
                    .collect();
                let want = quantile_map_by_definition(&v, m);
                quantile_map(&mut v, m);
                let same = v.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "t = {t}: {v:?} != {want:?}");
            }
        }
        // The key orders as total_cmp does.
        let xs = [
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1e-300,
            1.0,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(total_order_key(w[0]) < total_order_key(w[1]), "{w:?}");
        }
    }

    /// `quantile_map_monotone` (on the decoder's offset + x·scale) gives the definition's result bit for bit: scales whose
    /// rounding merges nearby features into ties (a huge offset merges many), both zeros,
    /// and the cases that take the plain sort (a negative scale, a non-finite feature,
    /// short columns).
    #[test]
    fn quantile_map_monotone_equals_the_definition_bit_for_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let m = NumericMarginal {
            edges: (0..=30).map(|e| f64::from(e) * 0.5 - 2.0).collect(),
            probs: (0..30)
                .map(|b| if b % 5 == 2 { 0.0 } else { 1.0 / 24.0 })
                .collect(),
        };
        let maps: [(f64, f64); 5] = [
            (0.0, 1.0),
            (3.0, 0.25),
            (1e10, 1e-3),
            (-0.0, 2.0),
            (1.0, -1.5),
        ];
        for &t in &[10usize, 255, 256, 257, 1000, 20_000] {
            for (case, &(offset, scale)) in maps.iter().enumerate() {
                for nan in [false, true] {
                    let mut x: Vec<f32> = (0..t)
                        .map(|_| match rng.gen_range(0..4) {
                            0 => [0.0f32, -0.0, 1.0, 1.0 + f32::EPSILON][rng.gen_range(0..4)],
                            _ => rng.gen_range(-3.0f32..3.0),
                        })
                        .collect();
                    if nan {
                        x[t / 2] = f32::NAN;
                    }
                    let v: Vec<f64> = x.iter().map(|&xi| offset + f64::from(xi) * scale).collect();
                    let want = quantile_map_by_definition(&v, &m);
                    let got =
                        quantile_map_monotone(t, |i| x[i], |xi| offset + f64::from(xi) * scale, &m);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "t = {t}, map {case}, NaN {nan}");
                }
            }
        }
        // The huge offset does merge distinct features into ties (what the repair is for).
        let v: Vec<f64> = (0..1000)
            .map(|i| 1e10 + f64::from(i as f32 * 1e-4) * 1e-3)
            .collect();
        assert!(v.windows(2).any(|w| w[0] == w[1]));
        // The 32-bit keys order as total_cmp does, and invert.
        let xs = [
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1e-30,
            1.0,
            f32::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(ascending_key(w[0]) < ascending_key(w[1]), "{w:?}");
            assert!(descending_key(w[0]) > descending_key(w[1]), "{w:?}");
        }
        for &x in &xs {
            assert_eq!(from_ascending_key(ascending_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn quantile_map_reproduces_the_marginal_and_keeps_order() {
        let m = NumericMarginal {
            edges: vec![0.0, 10.0, 20.0],
            probs: vec![0.8, 0.2],
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut v: Vec<f64> = (0..1000).map(|_| rng.gen_range(-5.0..5.0)).collect();
        let before = v.clone();
        quantile_map(&mut v, &m);
        let below = v.iter().filter(|&&x| x < 10.0).count();
        assert_eq!(below, 800, "exactly 80 % of the mass in the first bin");
        for i in 0..999 {
            if before[i] < before[i + 1] {
                assert!(v[i] <= v[i + 1]);
            }
        }
    }

    #[test]
    fn shrinkage_removes_most_of_the_noise() {
        // Two classes, true values 1 and 3 on one feature with true spread 0.5, noise σ = 2.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let normal = |rng: &mut rand_chacha::ChaCha8Rng| -> f64 {
            // Box–Muller, enough for a test.
            let u: f64 = rng.gen_range(1e-12..1.0);
            let v: f64 = rng.gen_range(0.0..1.0);
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let n = 20_000;
        let mut truth = Vec::new();
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..n {
            let l = (i % 2) as u32;
            let t = 1.0 + 2.0 * f64::from(l) + 0.5 * normal(&mut rng);
            truth.push(t);
            rows.push((t + 2.0 * normal(&mut rng)) as f32);
            labels.push(l);
        }
        let mse = |r: &[f32]| {
            r.iter()
                .zip(&truth)
                .map(|(a, b)| (f64::from(*a) - b).powi(2))
                .sum::<f64>()
                / n as f64
        };
        let before = mse(&rows);
        shrink_to_class_means(&mut rows, 1, &labels, 2.0);
        let after = mse(&rows);
        // Noise variance 4; the LMMSE error is 0.25·4/4.25 ≈ 0.235.
        assert!((before - 4.0).abs() < 0.2, "{before}");
        assert!(after < 0.3, "{after}");
    }

    #[test]
    fn quotas_sum_to_t() {
        assert_eq!(quotas(&[0.5, 0.3, 0.2], 10), vec![5, 3, 2]);
        assert_eq!(quotas(&[1.0, 1.0, 1.0], 10).iter().sum::<usize>(), 10);
        assert_eq!(quotas(&[0.0, 0.0], 3).iter().sum::<usize>(), 3);
        assert_eq!(quotas(&[2.0, f64::NAN], 4), vec![4, 0]);
    }

    #[test]
    fn assignment_matches_quotas_and_follows_scores() {
        // 10 rows: rows 0..3 clearly favour level 1, the rest level 0; quotas 70/30.
        let mut s = Vec::new();
        for i in 0..10 {
            if i < 3 {
                s.extend_from_slice(&[0.1f32, 0.9]);
            } else {
                s.extend_from_slice(&[0.8f32, 0.2]);
            }
        }
        let a = assign_in_proportion(&s, 2, &[0.7, 0.3]);
        assert_eq!(a, vec![1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
        // Argmax would give every row level 0 here; proportions are kept.
        let s2: Vec<f32> = (0..100)
            .flat_map(|i| [0.6f32 + i as f32 * 1e-3, 0.3])
            .collect();
        let a2 = assign_in_proportion(&s2, 2, &[0.75, 0.25]);
        assert_eq!(a2.iter().filter(|&&j| j == 1).count(), 25);
    }

    /// The merged per-level order is the (score, i, j) stable sort's, and leaving spent levels
    /// and assigned rows out changes nothing: compared with that plain implementation
    /// ([`greedy_sorted`]) on scores with many ties, ±0, NaN, infinities and a level with no
    /// quota.
    #[test]
    fn assignment_equals_the_stable_sort_of_triples() {
        fn reference(scores: &[f32], levels: usize, probs: &[f64]) -> Vec<usize> {
            let t = scores.len() / levels;
            let mut quota = quotas(probs, t);
            // The standardization is shared; the order and the greedy are what is compared,
            // against the definition (the path kept beyond 2^32 rows).
            let scores = Scores::contiguous(scores, levels);
            let z = standardizer(scores);
            let mut out = vec![usize::MAX; t];
            greedy_sorted(scores, &z, &mut quota, &mut out);
            out.iter()
                .map(|&o| if o == usize::MAX { 0 } else { o })
                .collect()
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let specials = [0.0f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        for (levels, probs) in [
            (2, vec![0.7, 0.3]),
            (3, vec![0.5, 0.0, 0.5]),
            (5, vec![0.1, 0.2, 0.3, 0.25, 0.15]),
        ] {
            for case in 0..4 {
                let t = 200 + 37 * case;
                let scores: Vec<f32> = (0..t * levels)
                    .map(|_| match (case, rng.gen_range(0..10)) {
                        (3, 0) => specials[rng.gen_range(0..specials.len())],
                        (0 | 1, _) => rng.gen_range(0..4) as f32 * 0.25, // many ties
                        _ => rng.gen_range(-1.0f32..1.0),
                    })
                    .collect();
                let want = reference(&scores, levels, &probs);
                assert_eq!(
                    assign_in_proportion(&scores, levels, &probs),
                    want,
                    "levels {levels}, case {case}"
                );
                // The merge with first chunks of 1, 3 and 17 candidates: every level
                // refills several times, rows taken since its last chunk left out.
                for chunk in [1, 3, 17] {
                    let s = Scores::contiguous(&scores, levels);
                    let mut quota = quotas(&probs, t);
                    let mut out = vec![usize::MAX; t];
                    greedy_merged(s, &standardizer(s), &mut quota, &mut out, Some(chunk));
                    let out: Vec<usize> = out
                        .iter()
                        .map(|&o| if o == usize::MAX { 0 } else { o })
                        .collect();
                    assert_eq!(out, want, "levels {levels}, case {case}, chunk {chunk}");
                }
            }
        }
        // A 30-level column of 20,000 rows with correlated scores, at the default chunks
        // (twice the quota plus 1,024): the rare levels' best rows are taken by the common
        // ones, so they walk past their first chunk and fetch more.
        let levels = 30;
        let probs: Vec<f64> = (0..levels).map(|j| 0.5f64.powi(j as i32 / 3 + 1)).collect();
        let total: f64 = probs.iter().sum();
        let probs: Vec<f64> = probs.iter().map(|p| p / total).collect();
        let t = 20_000;
        let scores: Vec<f32> = (0..t)
            .flat_map(|_| {
                let shared: f32 = rng.gen_range(-1.0f32..1.0);
                let mut row = vec![0f32; levels];
                for (j, v) in row.iter_mut().enumerate() {
                    *v = shared * (j as f32 / levels as f32) + rng.gen_range(-0.3f32..0.3);
                }
                row
            })
            .collect();
        assert_eq!(
            assign_in_proportion(&scores, levels, &probs),
            reference(&scores, levels, &probs),
            "30 levels, default chunks"
        );
    }
}
