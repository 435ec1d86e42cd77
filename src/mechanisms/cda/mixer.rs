//! The mixing kernel: one noisy mix of l distinct rows of a pool.
//!
//! DP-CDA ([`super::generate`]), the federated simulation and a federated party's contribution
//! ([`crate::pipelines::federated`]), and DPMix ([`crate::mechanisms::dpmix::generate`], whose pool is
//! the whole dataset) all make their rows with [`Mixer::draw`]: draw a uniform size-l
//! subset of a pool of row indices (Floyd's algorithm, rand's `index::sample`: O(l), never an
//! n-length weight vector), average those rows' features, and add N(0, σ²) to every
//! coordinate.
//!
//! # Privacy proof note
//!
//! One draw is the subsampled Gaussian mechanism of the DP-CDA proof note ([`super`]): the
//! subset S is uniform over the size-l subsets of the pool (sampling without replacement at
//! rate l/n), the mean (1/l)Σ_{i∈S} x_i of rows clipped to ‖x‖₂ ≤ c moves by at most 2c/l when
//! one row is replaced, and the noise is N(0, σ² I) drawn from the caller's generator, fresh
//! for every draw. The kernel adds no other use of the data or of the randomness, so every
//! caller's accounting (per class, per party) is that of the mechanism it already documents.
//!
//! # Randomness and arithmetic
//!
//! A draw consumes the generator in one fixed order: the subset first, then one standard
//! normal per coordinate, in coordinate order. The arithmetic is the caller's choice of
//! [`MixCell`]: `f32` accumulates and averages in single precision and adds the (f64) noise
//! before rounding to f32 (DP-CDA's rows); `f64` accumulates, averages and adds the noise in
//! double precision (the federated messages, which are summed with further noise before they
//! are rounded, and DPMix's rows). The order and both arithmetics are those the pipelines used
//! before they shared this kernel, so their seeded outputs are unchanged.
//!
//! # Exact noise ([`ExactMixer::new`])
//!
//! The releases of DP-CDA and DPMix use the exact path: no floating-point Gaussian reaches
//! their output (Mironov 2012), and the mean is not summed in f32 (whose rounding could move
//! a mix by more than 2c/l). With a grid h = 2^k:
//!
//! 1. every feature value x of a drawn row becomes the integer u = trunc(x/h) (x/h is exact,
//!    h being a power of two; truncation is toward zero). A row whose integer norm exceeds
//!    B = ⌊c/h⌋ (checked once, in exact integer arithmetic, when the mixer is built) is
//!    shrunk to trunc(u·B/N), N = ⌈‖u‖⌉, so ‖u‖ ≤ B ≤ c/h for every row;
//! 2. the l rows' integers are summed exactly (i64);
//! 3. the sum gets independent discrete Gaussian noise N_ℤ(0, σ_u²) per coordinate with
//!    σ_u ≥ σ·l/h (the sampler rounds σ_u up to a rational; more noise is safe);
//! 4. the release is (S + Z)·h/l, computed in f64: a fixed function of the integer S + Z
//!    (post-processing).
//!
//! *Proof note.* Steps 1's maps act on one record at a time and never increase a
//! coordinate's magnitude or change its sign, so every geometric fact the accountant uses
//! about the real rows (‖x‖ ≤ c; non-negative entries; entries in a box [0, b]) holds for the
//! integer rows scaled by h, and B bounds their norm independently of any floating-point
//! reasoning upstream. Replacing one record therefore moves S by at most Δ/h in L2, where
//! Δ = l·(the mean's sensitivity the accountant charges, 2·c_acc/l), and S moves on ℤ^d. By
//! Canonne–Kamath–Steinke 2020 (Prop. 6 / Thm 14 with Cor. 9: for integer shifts the
//! discrete Gaussian's Rényi divergence is at most that of the continuous one,
//! α‖v‖²/(2σ_u²), coordinates adding up), S + Z is (α, α(Δ/h)²/(2σ_u²))-RDP
//! ≤ (α, α(Δ/l)²/(2σ²))-RDP: the curve of the continuous Gaussian mix the accountant charges,
//! so the subsampling and composition arguments of the callers apply unchanged. The RDP
//! curve holds as is; the privacy-loss-distribution (PLD) figure, computed for the continuous
//! Gaussian, holds after the coupling charge of [`crate::accountant::pld::coupling`].
//!
//! The grid starts at the largest 2^k ≤ c·2^-20 (the truncation moves a mix by less than
//! h·√d ≤ c·√d·2^-20), is coarsened while σ·l/h ≥ 2^31 (the sampler's range) and refined
//! while σ·l/h < 2^30 and c/h < 2^40, so the noise has 2^30 ≤ σ_u < 2^31 grid units unless
//! the noise multiplier is below about 2^-11: the scale at which the total variation from a
//! rounded continuous Gaussian is below 1.8·10⁻²⁰ per draw, on which DP-CDA's PLD figure
//! charges the discrete noise ([`crate::accountant::pld::coupling`]).

use crate::accountant::pld::coupling::COUPLED_MIN_SIGMA_UNITS;
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::Gaussian;
use crate::mechanisms::noise::{pow2_floor, up, Bits, DiscreteGaussian};
use crate::preprocess::compact::{CompactRows, Slot};
use rand::Rng;

/// The number type a mix is accumulated in (see the module docs).
pub trait MixCell: Copy {
    /// 0.
    const ZERO: Self;
    /// 1/l in this type.
    fn reciprocal(l: usize) -> Self;
    /// Adds one feature value of a drawn row.
    fn accumulate(&mut self, x: f32);
    /// The sum times 1/l, plus one noise draw.
    fn average_plus(self, inv_l: Self, noise: f64) -> Self;
}

impl MixCell for f32 {
    const ZERO: Self = 0.0;
    fn reciprocal(l: usize) -> Self {
        1.0 / l as f32
    }
    #[inline]
    fn accumulate(&mut self, x: f32) {
        *self += x;
    }
    #[inline]
    fn average_plus(self, inv_l: Self, noise: f64) -> Self {
        (f64::from(self * inv_l) + noise) as f32
    }
}

impl MixCell for f64 {
    const ZERO: Self = 0.0;
    fn reciprocal(l: usize) -> Self {
        1.0 / l as f64
    }
    #[inline]
    fn accumulate(&mut self, x: f32) {
        *self += f64::from(x);
    }
    #[inline]
    fn average_plus(self, inv_l: Self, noise: f64) -> Self {
        self * inv_l + noise
    }
}

/// The grid of the exact path for rows of norm ≤ `clip` mixed l at a time with noise σ on
/// the mean (module docs).
pub fn exact_grid(clip: f64, sigma: f64, mix: usize) -> Result<f64> {
    grid_for("sigma-x", clip, sigma, mix)
}

/// The exact path's grid h and its noise on a sum of l entries of norm ≤ `clip`: discrete
/// Gaussian of scale σ_u ≥ σ·l/h (module docs). `name` names σ in errors.
pub(crate) fn exact_sum_noise(
    name: &str,
    clip: f64,
    sigma: f64,
    mix: usize,
) -> Result<(f64, DiscreteGaussian)> {
    let h = grid_for(name, clip, sigma, mix)?;
    // σ·l rounded up (one ulp above the f64 product, which may round down), over h (exact):
    // σ_u ≥ σ·l/h, and the sampler rounds it up again to a rational.
    let noise = DiscreteGaussian::new(name, up(sigma * mix as f64) / h)?;
    Ok((h, noise))
}

fn grid_for(name: &str, clip: f64, sigma: f64, mix: usize) -> Result<f64> {
    if !(clip > 0.0 && clip.is_finite()) {
        return Err(Error::param(
            "clip",
            clip,
            "the clip norm must be a positive finite number",
        ));
    }
    let s = sigma * mix as f64;
    if !(sigma > 0.0 && s.is_finite()) {
        return Err(Error::param(
            name,
            sigma,
            "a noise standard deviation must be a positive finite number",
        ));
    }
    let mut h = pow2_floor(clip / 1_048_576.0);
    // σ·l/h in [2^30, 2^31): at least the coupling scale of the PLD charge
    // (accountant::pld::coupling::COUPLED_MIN_SIGMA_UNITS) and inside the sampler's range.
    while s / h >= (1u64 << 31) as f64 {
        h *= 2.0;
    }
    // ... while the rows stay within 2^40 grid units (c/h ≤ 2^40, so l rows sum within
    // i64): only at a noise multiplier below about 2^-11 (ε in the thousands) does this
    // stop σ·l/h short of 2^30.
    while s / h < COUPLED_MIN_SIGMA_UNITS && clip / h < 2f64.powi(40) {
        h *= 0.5;
    }
    Ok(h)
}

/// A bound on the L2 norm of rows in the unit box [0, 1]^d: √d, one ulp up (covers the
/// rounding of the square root). DPMix's features and its class-wise variant.
pub fn unit_box_radius(d: usize) -> f64 {
    f64::from_bits((d as f64).sqrt().to_bits() + 1)
}

/// trunc(x/h) for one feature value (x·(1/h) is exact; `as` truncates toward zero).
#[inline]
fn unit(x: f32, inv_h: f64) -> i64 {
    (f64::from(x) * inv_h) as i64
}

/// Fills `u` with the grid units of `row` and returns Σ u_i², saturating at u128::MAX. The
/// sum runs in u64 while every square and partial sum fits (the usual case: u128
/// multiplication is a software routine on wasm32, where this loop took 5 % of a 60k MNIST
/// synthesis), and in u128 from the first term that does not fit; the result is the same.
fn units_and_square_norm(u: &mut [i64], row: &[f32], inv_h: f64) -> u128 {
    let mut narrow: u64 = 0;
    let mut i = 0;
    while i < u.len() {
        u[i] = unit(row[i], inv_h);
        let m = u[i].unsigned_abs();
        match m.checked_mul(m).and_then(|p| narrow.checked_add(p)) {
            Some(s) => narrow = s,
            None => break,
        }
        i += 1;
    }
    let mut sq = u128::from(narrow);
    for j in i..u.len() {
        if j > i {
            u[j] = unit(row[j], inv_h);
        }
        let a = u128::from(u[j].unsigned_abs());
        sq = sq.saturating_add(a * a);
    }
    sq
}

/// Draws noisy mixes of l distinct rows of a feature matrix (floating-point noise: the
/// federated pipelines).
#[derive(Debug, Clone, Copy)]
pub struct Mixer<'a> {
    features: &'a [f32],
    d: usize,
    mix: usize,
    noise: Gaussian,
}

/// The rows a mixer reads: a dense row-major matrix, or the same matrix without its zeros
/// ([`CompactRows`]; the same values, so the same mixes).
#[derive(Debug, Clone, Copy)]
pub enum Rows<'a> {
    /// Row-major n × d.
    Dense(&'a [f32]),
    /// Compact rows of width d.
    Compact(&'a CompactRows),
}

impl Rows<'_> {
    /// Rows held, for rows of width `d` (> 0).
    pub fn n_rows(&self, d: usize) -> usize {
        match self {
            Rows::Dense(f) => f.len() / d,
            Rows::Compact(c) => c.n_rows(),
        }
    }

    /// Whether the rows are whole rows of width `d` (> 0).
    pub fn fits(&self, d: usize) -> bool {
        d > 0
            && match self {
                Rows::Dense(f) => f.len() % d == 0,
                Rows::Compact(c) => c.dim() == d,
            }
    }
}

/// Draws noisy mixes of l distinct rows with exact noise (module docs, "Exact noise"): the
/// kernel of the DP-CDA and DPMix releases.
#[derive(Debug, Clone)]
pub struct ExactMixer<'a> {
    rows: Rows<'a>,
    d: usize,
    mix: usize,
    sigma: f64,
    /// The grid h = 2^k and 1/h.
    grid: f64,
    inv_grid: f64,
    /// Discrete Gaussian noise on the integer sum, σ_u ≥ σ·l/h.
    noise: DiscreteGaussian,
    /// Rows whose truncated integer norm exceeded ⌊c/h⌋, with their shrunk integers (sorted
    /// by row; empty on rows clipped as the pipeline clips them).
    shrunk: Vec<(u32, Vec<i64>)>,
}

impl<'a> Mixer<'a> {
    /// A mixer over `features` (row-major n × d, already normalized and clipped) that averages
    /// `mix` = l rows and adds `noise`. The caller has checked l ≥ 1 and that every pool it
    /// draws from has at least l rows ([`super::check_pools`]).
    pub fn new(features: &'a [f32], d: usize, mix: usize, noise: Gaussian) -> Self {
        debug_assert!(d == 0 || features.len() % d == 0);
        Mixer {
            features,
            d,
            mix,
            noise,
        }
    }

    /// The feature dimension d (the length of a mix).
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The mix order l.
    pub fn mix(&self) -> usize {
        self.mix
    }

    /// The noise.
    pub fn noise(&self) -> Gaussian {
        self.noise
    }

    /// Writes one mix of `pool` (row indices into the features, at least l of them) into
    /// `out` (length d): the mean of l distinct rows of the pool drawn uniformly, plus
    /// N(0, σ²) on every coordinate. Draws the subset, then the d noise values in order.
    pub fn draw<C: MixCell, R: Rng + ?Sized>(&self, pool: &[u32], out: &mut [C], rng: &mut R) {
        self.draw_visiting(pool, out, rng, |_| {});
    }

    /// [`Mixer::draw`], also handing each drawn row's index to `visit` (in draw order, before
    /// the noise is drawn): DPMix averages the drawn rows' labels with it.
    pub fn draw_visiting<C: MixCell, R: Rng + ?Sized>(
        &self,
        pool: &[u32],
        out: &mut [C],
        rng: &mut R,
        mut visit: impl FnMut(usize),
    ) {
        let d = self.d;
        debug_assert_eq!(out.len(), d);
        out.fill(C::ZERO);
        for i in rand::seq::index::sample(rng, pool.len(), self.mix).into_iter() {
            let r = pool[i] as usize;
            visit(r);
            for (a, &x) in out.iter_mut().zip(&self.features[r * d..(r + 1) * d]) {
                a.accumulate(x);
            }
        }
        let inv_l = C::reciprocal(self.mix);
        for a in out.iter_mut() {
            *a = a.average_plus(inv_l, self.noise.sample(rng));
        }
    }
}

impl<'a> ExactMixer<'a> {
    /// A mixer on the exact path (module docs, "Exact noise"): rows of norm ≤ `clip`,
    /// discrete Gaussian noise of scale ≥ `sigma` on every coordinate of the mean. Draw with
    /// [`ExactMixer::draw`].
    pub fn new(features: &'a [f32], d: usize, mix: usize, sigma: f64, clip: f64) -> Result<Self> {
        Self::over(Rows::Dense(features), d, mix, sigma, clip)
    }

    /// [`ExactMixer::new`] over `rows` (dense or compact: the same rows give the same mixes).
    pub fn over(rows: Rows<'a>, d: usize, mix: usize, sigma: f64, clip: f64) -> Result<Self> {
        let (h, noise) = exact_sum_noise("sigma-x", clip, sigma, mix)?;
        let inv_h = 1.0 / h;
        // B = ⌊c/h⌋ (c/h is exact); rows whose integer norm exceeds it are shrunk.
        let bound = (clip * inv_h).floor();
        if !(bound >= 1.0 && bound < (1u64 << 52) as f64) {
            return Err(Error::Data(format!(
                "internal: the exact-noise grid {h:e} does not fit the clip norm {clip}"
            )));
        }
        let b = bound as u128;
        let mut shrunk = Vec::new();
        if d > 0 {
            let mut u = vec![0i64; d];
            // A compact row expanded, where it must be shrunk.
            let mut dense = Vec::new();
            for r in 0..rows.n_rows(d) {
                let row = match rows {
                    Rows::Dense(f) => &f[r * d..(r + 1) * d],
                    Rows::Compact(c) => {
                        // Σ u² over the row's entries (its zeros add nothing); the units
                        // themselves only where the row is shrunk.
                        if compact_square_norm(c, r, inv_h) <= b * b {
                            continue;
                        }
                        dense.resize(d, 0.0);
                        c.dense_row(r, &mut dense);
                        &dense[..]
                    }
                };
                let sq = units_and_square_norm(&mut u, row, inv_h);
                if sq > b * b {
                    let n = isqrt_ceil(sq);
                    for ui in u.iter_mut() {
                        // |u|·B/N ≤ |u|, truncated toward zero: the sign and the box kept.
                        let m = (ui.unsigned_abs() as u128 * b / n) as i64;
                        *ui = if *ui < 0 { -m } else { m };
                    }
                    let r = u32::try_from(r).map_err(|_| {
                        Error::Data("the table has too many rows for the mixer".into())
                    })?;
                    shrunk.push((r, u.clone()));
                }
            }
        }
        Ok(ExactMixer {
            rows,
            d,
            mix,
            sigma,
            grid: h,
            inv_grid: inv_h,
            noise,
            shrunk,
        })
    }

    /// The grid h.
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// How many rows the exact path shrank into the ball of radius ⌊c/h⌋·h.
    pub fn rows_shrunk(&self) -> usize {
        self.shrunk.len()
    }

    /// The feature dimension d.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The mix order l.
    pub fn mix(&self) -> usize {
        self.mix
    }

    /// The σ asked for on the mean (the noise used is at least this).
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The noise scale in grid units of the sum, σ_u (≥ σ·l/h, and ≥ 2^30: module docs).
    pub fn sampler_sigma(&self) -> f64 {
        self.noise.sigma()
    }

    /// One mix on the exact path (module docs, "Exact noise"): a uniform size-l subset of
    /// `pool`, its rows' integers summed exactly into `sum`, discrete Gaussian noise on every
    /// coordinate, and the release (S + Z)·h/l written to `out` (length d). `sum` is scratch
    /// of length d. Draws the subset (handing each row to `visit`), then the d noise values in
    /// order.
    pub fn draw<R: Rng + ?Sized>(
        &self,
        pool: &[u32],
        out: &mut [f64],
        sum: &mut [i64],
        rng: &mut R,
        mut visit: impl FnMut(usize),
    ) {
        let e = self;
        let d = self.d;
        debug_assert!(out.len() == d && sum.len() == d);
        sum.fill(0);
        // The drawn rows' indices are looked up a batch at a time, then the rows are summed
        // four at a time: the pool and the rows are random reads from memory, and independent
        // reads overlap where one row after another waited on each (1M × 20 mixed table,
        // l = 64: most of the synthesis was those waits). Integer sums are exact, so the
        // order of the additions does not change S.
        let mut drawn = rand::seq::index::sample(rng, pool.len(), self.mix).into_iter();
        let mut rows = [0usize; 64];
        loop {
            let mut m = 0;
            for i in drawn.by_ref().take(rows.len()) {
                rows[m] = pool[i] as usize;
                m += 1;
            }
            if m == 0 {
                break;
            }
            for &r in &rows[..m] {
                visit(r);
            }
            self.accumulate(&rows[..m], sum);
        }
        let mut bits = Bits::new(rng);
        let mut z = [0i64; 256];
        let scale = e.grid / self.mix as f64;
        for (o, s) in out.chunks_mut(256).zip(sum.chunks(256)) {
            let k = o.len();
            e.noise.fill_bits(&mut z[..k], &mut bits);
            for ((o, &s), &z) in o.iter_mut().zip(s).zip(&z[..k]) {
                *o = (s + z) as f64 * scale;
            }
        }
    }
}

impl ExactMixer<'_> {
    /// Adds the integer units of `rows` to `sum` (a shrunk row adds its shrunk units).
    fn accumulate(&self, rows: &[usize], sum: &mut [i64]) {
        let d = self.d;
        let inv = self.inv_grid;
        let features = match self.rows {
            Rows::Dense(f) => f,
            Rows::Compact(c) => {
                if !self.shrunk.is_empty() {
                    for &r in rows {
                        match self.shrunk_units(r) {
                            Some(u) => sum.iter_mut().zip(u).for_each(|(s, &u)| *s += u),
                            None => c.for_each_entry(r, |j, x| sum[j] += unit(x, inv)),
                        }
                    }
                    return;
                }
                // Eight rows at a time, slot by slot (the dense rows are summed four at a
                // time): the rows are random reads from memory, and independent reads
                // overlap. Eight measured faster than four in wasm (1M × 20 mixed, l = 64:
                // synthesize 17.9 s → 16.1 s in Node), sixteen no faster than eight.
                let slots = c.slots();
                let hot_at = slots.len();
                let mut groups = rows.chunks_exact(8);
                for q in &mut groups {
                    let rs: [&[f32]; 8] = std::array::from_fn(|i| c.row(q[i]));
                    let hot = rs.map(|r| unit(r[hot_at], inv));
                    for (k, slot) in slots.iter().enumerate() {
                        match *slot {
                            Slot::Numeric { pos } => {
                                sum[pos] += rs.iter().map(|r| unit(r[k], inv)).sum::<i64>();
                            }
                            Slot::OneHot { start, .. } => {
                                for (r, h) in rs.iter().zip(hot) {
                                    if r[k] >= 0.0 {
                                        sum[start + r[k] as usize] += h;
                                    }
                                }
                            }
                        }
                    }
                }
                for &r in groups.remainder() {
                    c.for_each_entry(r, |j, x| sum[j] += unit(x, inv));
                }
                return;
            }
        };
        let row = |r: usize| &features[r * d..(r + 1) * d];
        if !self.shrunk.is_empty() {
            for &r in rows {
                match self.shrunk_units(r) {
                    Some(u) => sum.iter_mut().zip(u).for_each(|(s, &u)| *s += u),
                    None => sum
                        .iter_mut()
                        .zip(row(r))
                        .for_each(|(s, &x)| *s += unit(x, inv)),
                }
            }
            return;
        }
        let mut quads = rows.chunks_exact(4);
        for q in &mut quads {
            let (a, b, c, e) = (row(q[0]), row(q[1]), row(q[2]), row(q[3]));
            for (j, s) in sum.iter_mut().enumerate() {
                *s += unit(a[j], inv) + unit(b[j], inv) + unit(c[j], inv) + unit(e[j], inv);
            }
        }
        for &r in quads.remainder() {
            sum.iter_mut()
                .zip(row(r))
                .for_each(|(s, &x)| *s += unit(x, inv));
        }
    }
}

impl ExactMixer<'_> {
    /// Row `r`'s shrunk units, if the mixer shrank it.
    #[inline]
    fn shrunk_units(&self, r: usize) -> Option<&[i64]> {
        if self.shrunk.is_empty() {
            return None;
        }
        self.shrunk
            .binary_search_by_key(&(r as u32), |(k, _)| *k)
            .ok()
            .map(|j| &self.shrunk[j].1[..])
    }
}

/// Σ u² of compact row `r`'s units, saturating at u128::MAX: what
/// [`units_and_square_norm`] returns for the dense row (its zeros add nothing, and an exact
/// integer sum does not depend on the order).
fn compact_square_norm(c: &CompactRows, r: usize, inv_h: f64) -> u128 {
    // In u64 while every term fits (u128 products are a software routine on wasm32).
    let mut narrow = Some(0u64);
    c.for_each_entry(r, |_, x| {
        if let Some(s) = narrow {
            let m = unit(x, inv_h).unsigned_abs();
            narrow = m.checked_mul(m).and_then(|p| s.checked_add(p));
        }
    });
    if let Some(s) = narrow {
        return u128::from(s);
    }
    let mut sq: u128 = 0;
    c.for_each_entry(r, |_, x| {
        let a = u128::from(unit(x, inv_h).unsigned_abs());
        sq = sq.saturating_add(a * a);
    });
    sq
}

/// ⌈√x⌉ for x ≥ 1, exactly.
fn isqrt_ceil(x: u128) -> u128 {
    let mut r = (x as f64).sqrt() as u128;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    if r * r < x {
        r + 1
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The u64 fast path gives the u128 sum of squares (saturating) and the same units, for
    /// rows that fit, rows that overflow u64 part-way, and rows that saturate u128.
    #[test]
    fn square_norm_fast_path_equals_the_wide_sum() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let wide = |row: &[f32], inv_h: f64| -> (Vec<i64>, u128) {
            let u: Vec<i64> = row.iter().map(|&x| unit(x, inv_h)).collect();
            let sq = u.iter().fold(0u128, |s, a| {
                let a = u128::from(a.unsigned_abs());
                s.saturating_add(a * a)
            });
            (u, sq)
        };
        let mut paths = [0usize; 3];
        for case in 0..3000 {
            let d = 1 + case % 40;
            let inv_h = [1e3, 2f64.powi(31), 2f64.powi(40), 2f64.powi(61), 1e30][case % 5];
            let row: Vec<f32> = (0..d).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
            let mut u = vec![0i64; d];
            let sq = units_and_square_norm(&mut u, &row, inv_h);
            let (want_u, want) = wide(&row, inv_h);
            assert_eq!((&u, sq), (&want_u, want), "d {d}, inv_h {inv_h}");
            paths[if want < 1 << 64 {
                0
            } else if want < u128::MAX {
                1
            } else {
                2
            }] += 1;
        }
        assert!(paths.iter().all(|&n| n > 100), "{paths:?}");
    }
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use rand_distr::StandardNormal;

    /// Pool rows 0..6 of a 6 × 3 matrix whose row r is (r, 10r, 100r); the pool lists 1..6.
    fn matrix() -> Vec<f32> {
        (0..6)
            .flat_map(|r| [r as f32, 10.0 * r as f32, 100.0 * r as f32])
            .collect()
    }

    /// The draw order is the subset, then one standard normal per coordinate: a draw equals
    /// the mean of the rows `index::sample` picks on a copy of the generator, plus σ times the
    /// standard normals that follow it, and the generator ends where that copy ends.
    #[test]
    fn a_draw_is_the_subset_mean_plus_the_following_normals_f64() {
        let f = matrix();
        let pool: Vec<u32> = (1..6).collect();
        let sigma = 0.25;
        let m = Mixer::new(&f, 3, 3, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let mut copy = rng.clone();
        let mut out = [9.0f64; 3];
        m.draw(&pool, &mut out, &mut rng);
        let picked: Vec<usize> = rand::seq::index::sample(&mut copy, 5, 3).into_vec();
        let mut distinct = picked.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{picked:?}");
        for (j, scale) in [1.0f64, 10.0, 100.0].iter().enumerate() {
            let mean = picked
                .iter()
                .map(|&i| f64::from(pool[i]) * scale)
                .sum::<f64>()
                / 3.0;
            let z: f64 = copy.sample(StandardNormal);
            let want = mean + sigma * z;
            assert!((out[j] - want).abs() <= 1e-12 * want.abs().max(1.0), "{j}");
        }
        assert_eq!(
            rng.gen::<u64>(),
            copy.gen::<u64>(),
            "generator positions differ"
        );
    }

    /// The same with f32 cells: mean in single precision, noise added in double and rounded.
    #[test]
    fn a_draw_is_the_subset_mean_plus_the_following_normals_f32() {
        let f = matrix();
        let pool: Vec<u32> = (0..6).collect();
        let sigma = 2.0;
        let m = Mixer::new(&f, 3, 2, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut copy = rng.clone();
        let mut out = [5.0f32; 3];
        m.draw(&pool, &mut out, &mut rng);
        let picked: Vec<usize> = rand::seq::index::sample(&mut copy, 6, 2).into_vec();
        assert_ne!(picked[0], picked[1]);
        for (j, scale) in [1.0f64, 10.0, 100.0].iter().enumerate() {
            let mean = picked.iter().map(|&i| i as f64 * scale).sum::<f64>() / 2.0;
            let z: f64 = copy.sample(StandardNormal);
            let want = mean + sigma * z;
            assert!(
                (f64::from(out[j]) - want).abs() <= 1e-5 * want.abs().max(1.0),
                "{j}"
            );
        }
        assert_eq!(
            rng.gen::<u64>(),
            copy.gen::<u64>(),
            "generator positions differ"
        );
    }

    /// Compact rows give the mixes of the dense matrix they stand for, bit for bit, with the
    /// generator left at the same place: rows inside the ball and rows the mixer shrinks
    /// (clip 0.5: most rows of the test table are longer), l = 1, 3 and 40.
    #[test]
    fn compact_rows_mix_as_the_dense_rows() {
        use crate::preprocess::compact::{tests::table_and_space, CompactRows};
        for (seed, clip) in [(1u64, 0.5), (2, 1e3), (3, 2.0)] {
            let (table, space) = table_and_space(seed, 120);
            let d = space.dim;
            let dense = space.encode(&table).unwrap();
            let compact = CompactRows::encode(&space, &table, 0).unwrap().unwrap();
            let a = ExactMixer::over(Rows::Dense(&dense), d, 3, 0.05, clip).unwrap();
            let b = ExactMixer::over(Rows::Compact(&compact), d, 3, 0.05, clip).unwrap();
            assert_eq!(a.rows_shrunk(), b.rows_shrunk());
            if clip < 1.0 {
                assert!(a.rows_shrunk() > 60, "{}", a.rows_shrunk());
            } else if clip > 100.0 {
                assert_eq!(a.rows_shrunk(), 0);
            }
            for l in [1usize, 3, 40] {
                let a = ExactMixer {
                    mix: l,
                    ..a.clone()
                };
                let b = ExactMixer {
                    mix: l,
                    ..b.clone()
                };
                let pool: Vec<u32> = (0..120).collect();
                let mut ra = ChaCha20Rng::seed_from_u64(seed + 10);
                let mut rb = ra.clone();
                let (mut oa, mut ob) = (vec![0f64; d], vec![0f64; d]);
                let (mut sa, mut sb) = (vec![0i64; d], vec![0i64; d]);
                for _ in 0..50 {
                    let (mut va, mut vb) = (Vec::new(), Vec::new());
                    a.draw(&pool, &mut oa, &mut sa, &mut ra, |r| va.push(r));
                    b.draw(&pool, &mut ob, &mut sb, &mut rb, |r| vb.push(r));
                    assert_eq!(va, vb);
                    assert_eq!(sa, sb);
                    let bits = |o: &[f64]| o.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&oa), bits(&ob));
                }
                assert_eq!(ra.gen::<u64>(), rb.gen::<u64>());
            }
        }
    }

    /// With l = the pool size every draw is the pool mean plus noise: over 20,000 draws the
    /// mean is within 6 standard errors (α ≈ 2e-9) of it and the spread within 4 % of σ.
    #[test]
    fn full_pool_draws_center_on_the_pool_mean() {
        let f = matrix();
        let pool: Vec<u32> = vec![0, 2, 4];
        let sigma = 0.5;
        let m = Mixer::new(&f, 3, 3, Gaussian::new("sigma", sigma).unwrap());
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 20_000;
        let (mut sum, mut sq) = (0.0f64, 0.0f64);
        let mut out = [0f64; 3];
        for _ in 0..n {
            m.draw(&pool, &mut out, &mut rng);
            sum += out[1];
            sq += (out[1] - 20.0).powi(2);
        }
        let mean = sum / n as f64;
        let sd = (sq / n as f64).sqrt();
        assert!(
            (mean - 20.0).abs() < 6.0 * sigma / (n as f64).sqrt(),
            "{mean}"
        );
        assert!((sd / sigma - 1.0).abs() < 0.04, "{sd}");
    }

    /// The exact path releases (S + Z)·h/l with S + Z an integer: every coordinate times l/h
    /// is an integer (to f64 rounding of the final scaling), where the float path's is not.
    #[test]
    fn exact_releases_lie_on_the_grid_over_l() {
        let f = matrix();
        let pool: Vec<u32> = (0..6).collect();
        let m = ExactMixer::new(&f, 3, 3, 0.25, 600.0).unwrap();
        let h = m.grid();
        // σ·l = 0.75: the grid puts σ·l/h in [2^30, 2^31) (finer than 600·2^-20).
        assert_eq!(h, 2f64.powi(-31), "0.75·2^31 ∈ [2^30, 2^31)");
        assert!(m.sampler_sigma() >= 0.75 / h && m.sampler_sigma() >= 2f64.powi(30));
        let mut rng = ChaCha20Rng::seed_from_u64(17);
        let (mut out, mut sum) = ([0f64; 3], [0i64; 3]);
        for _ in 0..200 {
            m.draw(&pool, &mut out, &mut sum, &mut rng, |_| {});
            for &v in &out {
                // k ≈ 2·10¹¹: the f64 rounding of v moves it by ≤ 5·10⁻⁵.
                let k = v * 3.0 / h;
                assert!((k - k.round()).abs() < 1e-3, "{v} is not on the grid h/l");
            }
        }
        // The float kernel's outputs are not on that grid.
        let fm = Mixer::new(&f, 3, 3, Gaussian::new("sigma", 0.25).unwrap());
        let mut o = [0f64; 3];
        fm.draw(&pool, &mut o, &mut rng);
        assert!(o
            .iter()
            .any(|&v| ((v * 3.0 / h) - (v * 3.0 / h).round()).abs() > 1e-3));
    }

    /// The noise on the integer sum is the discrete Gaussian N_ℤ(0, σ_u²), σ_u = σ·l/h
    /// (rounded up): all rows zero, so l·out/h is the noise. KS at α = 1e-6 over 60,000
    /// draws, fixed seed; a σ 5 % off is rejected at this size. A clip of 2^20 with a tiny σ
    /// stops the grid at c/h = 2^40, so σ_u is small and the discrete law far from Gaussian.
    #[test]
    fn exact_noise_is_the_discrete_gaussian_ks() {
        let d = 4;
        let f = vec![0f32; 10 * d];
        let pool: Vec<u32> = (0..10).collect();
        let h = 2f64.powi(-20);
        let sigma = 3.7 * h / 5.0; // σ_u = 3.7 grid units of the sum, l = 5
        let m = ExactMixer::new(&f, d, 5, sigma, 2f64.powi(20)).unwrap();
        assert_eq!(m.grid(), h);
        let mut rng = ChaCha20Rng::seed_from_u64(20261124);
        let (mut out, mut sum) = (vec![0f64; d], vec![0i64; d]);
        let mut z = Vec::with_capacity(60_000);
        while z.len() < 60_000 {
            m.draw(&pool, &mut out, &mut sum, &mut rng, |_| {});
            z.extend(out.iter().map(|&v| (v * 5.0 / h).round() as i64));
        }
        let crit = crate::mechanisms::gaussian::ks_crit(z.len());
        let ks = crate::mechanisms::noise::ks_discrete_gaussian(&z, 3.7);
        assert!(ks < crit, "KS {ks} ≥ {crit}");
        let off = crate::mechanisms::noise::ks_discrete_gaussian(&z, 3.7 * 1.05);
        assert!(off > crit, "a 5 % error in σ should be detected (KS {off})");
    }

    /// The exact sum S is the drawn rows' integer units added up, whatever l (batches of 64
    /// indices, groups of four rows and the remainders) and with shrunk rows in the pool;
    /// `visit` sees the rows in draw order. Reference: the same `index::sample` on a copy of
    /// the generator, one row at a time.
    #[test]
    fn exact_sum_is_the_drawn_rows_units_for_every_l() {
        let (n, d) = (300usize, 5usize);
        let f: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919) % 1000) as f32 / 2500.0)
            .collect();
        let pool: Vec<u32> = (0..n as u32).rev().collect();
        for clip in [10.0, 0.6] {
            for l in [1, 3, 4, 5, 8, 63, 64, 65, 130, 300] {
                let m = ExactMixer::new(&f, d, l, 0.5, clip).unwrap();
                assert_eq!(m.rows_shrunk() > 0, clip < 1.0, "clip {clip}");
                let mut rng = ChaCha20Rng::seed_from_u64(l as u64);
                let mut copy = rng.clone();
                let (mut out, mut sum) = (vec![0f64; d], vec![0i64; d]);
                let mut seen = Vec::new();
                m.draw(&pool, &mut out, &mut sum, &mut rng, |r| seen.push(r));
                let mut want = vec![0i64; d];
                let mut order = Vec::new();
                for i in rand::seq::index::sample(&mut copy, pool.len(), l).into_iter() {
                    let r = pool[i] as usize;
                    order.push(r);
                    match m.shrunk.iter().find(|(k, _)| *k as usize == r) {
                        Some((_, u)) => want.iter_mut().zip(u).for_each(|(w, &u)| *w += u),
                        None => want
                            .iter_mut()
                            .zip(&f[r * d..(r + 1) * d])
                            .for_each(|(w, &x)| *w += unit(x, m.inv_grid)),
                    }
                }
                assert_eq!(sum, want, "l = {l}, clip {clip}");
                assert_eq!(seen, order, "l = {l}, clip {clip}");
            }
        }
    }

    /// A row whose norm exceeds c (here 2c) is shrunk once, at construction, into the ball:
    /// with l = 1 and tiny noise the release of that row has norm ≤ c (+ the noise), while
    /// an in-ball row is released as itself truncated toward zero.
    #[test]
    fn rows_outside_the_ball_are_shrunk_exactly() {
        // (0.6, 0.8) in f32 has norm 1 + 2^-26 or so: that row is caught too (the float
        // rounding of a clip is no longer trusted).
        let f: Vec<f32> = vec![0.5, 0.5, 1.2, 1.6, 0.6, 0.8];
        let m = ExactMixer::new(&f, 2, 1, 1e-9, 1.0).unwrap();
        assert_eq!(m.rows_shrunk(), 2);
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let (mut out, mut sum) = ([0f64; 2], [0i64; 2]);
        m.draw(&[1], &mut out, &mut sum, &mut rng, |_| {});
        let norm = (out[0] * out[0] + out[1] * out[1]).sqrt();
        assert!(norm <= 1.0 + 1e-6, "{out:?}");
        assert!(norm > 1.0 - 1e-5, "{out:?}");
        m.draw(&[0], &mut out, &mut sum, &mut rng, |_| {});
        assert!(
            (out[0] - 0.5).abs() < 1e-5 && (out[1] - 0.5).abs() < 1e-5,
            "{out:?}"
        );
        assert!(ExactMixer::new(&f, 2, 1, 0.0, 1.0).is_err());
        assert!(ExactMixer::new(&f, 2, 1, 1.0, f64::NAN).is_err());
    }
}
