//! The fast exact discrete Gaussian sampler: rejection from a dyadic "histogram" proposal
//! (a discrete ziggurat), every acceptance an exact Bernoulli coin.
//!
//! # Algorithm
//!
//! Target: f(z) = e^{−c(z)} on ℤ with c(z) = z²/(2σ²), σ = num/den. Write Z = |z|·den, so
//! c(z) = Z²/B with B = 2·num² (integers). Fix a bin width w = 2^m (w ≤ σ/32, or 1), J core
//! bins [jw, (j+1)w) of |z| covering |z| < Z_c = Jw (Z_c ≥ 12σ), and a tail width
//! w_t = 2^{m_t} ≥ max(w, σ). Pick a positive integer F and, with rigorous upper bounds,
//! integers n_j ≥ F·e^{−c(jw)} (j < J) and n_T ≥ F·2^{1+ℓ}·e^{−c(Z_c)}, ℓ = m_t − m,
//! with Σ n_j + n_T ≤ 2^{22}; the remainder n_R = 2^{22} − Σ n_j − n_T is a "reject" weight.
//!
//! One proposal: pick index i ∈ {0..J−1, T, R} with probability n_i/2^{22} (a Walker alias
//! table with integer weights: a uniform slot and a uniform threshold, both pure bits, so
//! the probability is exactly n_i/2^{22}); R restarts.
//! * Core bin j: r uniform in [0, w), a sign bit s; z = ±(jw + r); z = 0 with s = − restarts.
//!   Accept with probability a(z) = D_j·e^{−δ(z)}, D_j = F·e^{−c(jw)}/n_j ≤ 1 and
//!   δ(z) = c(z) − c(jw) ∈ [0, 1] (checked at construction from w ≤ σ/32 and Z_c ≤ 12σ + w):
//!   two independent coins, Bernoulli(D_j) and Bernoulli(e^{−δ}).
//! * Tail T: g ≥ 0 with P(g) = 2^{−(g+1)} (count of 1 bits before a 0), r uniform in
//!   [0, w_t), a sign bit; z = ±(Z_c + g·w_t + r). Accept with probability
//!   D_g·e^{−δ}, D_g = F·2^{g+1+ℓ}·e^{−c(Z_c + g w_t)}/n_T and δ = c(z) − c(Z_c + g w_t) ≥ 0.
//!
//! **Correctness.** For z ≠ 0 in core bin j the proposal mass is q(z) = n_j/(2^{22}·2w), and
//! q(z)·a(z) = F·e^{−c(z)}/(2^{23}·w); for z = 0 the mass is n_0/(2^{22}·2w) (one sign) and
//! the same product results. In the tail, q(z) = n_T·2^{−(g+1)}/(2^{22}·2w_t) and
//! q(z)·a(z) = F·2^ℓ·e^{−c(z)}/(2^{23}·w_t) = F·e^{−c(z)}/(2^{23}·w) (w_t = 2^ℓ·w). So every
//! z ∈ ℤ is output by one round with probability exactly proportional to e^{−c(z)}, and
//! rejection sampling returns the discrete Gaussian N_ℤ(0, σ²) exactly — provided every
//! acceptance probability is ≤ 1: e^{−δ} ≤ 1 as δ ≥ 0; D_j ≤ 1 by the choice of n_j; and
//! D_g ≤ D_0 ≤ 1 in the tail because D_{g+1}/D_g = 2·e^{−(2(Z_c+g w_t)w_t + w_t²)/(2σ²)}
//! ≤ 2·e^{−0.7} < 1 when 10·(2Z_c w_t + w_t²)·den² ≥ 14·num² (checked at construction;
//! 0.7 > ln 2).
//!
//! **The coins.** Bernoulli(D) for D = M·e^{−a/B}/n (M, n integers): a uniform U ∈ [0, 1) is
//! compared with D through its binary digits (U < D ⇒ accept). The table holds integers
//! lo ≤ D·2^64 and hi with hi + 1 ≥ D·2^64 (rigorous bounds, [`super::expbounds`]). With the
//! first 16 bits u of U: u < ⌊lo/2^48⌋ proves U < (u+1)/2^16 ≤ lo/2^64 ≤ D, and
//! u > ⌊hi/2^48⌋ proves U ≥ u/2^16 > hi/2^64, i.e. U ≥ (hi+1)/2^64 ≥ D. Otherwise the same two
//! tests are made with the first 64 bits; otherwise (a "tie", probability at most
//! (hi − lo + 2)/2^64, hi − lo ≤ 4 in practice) the comparison continues exactly: bounds on D
//! at precision 2^{−p}, p = 64, 128, …, computed in exact integer arithmetic, compared with
//! the first p bits of U (one more 64-bit word each round) until they decide.
//!
//! Bernoulli(e^{−δ}) with δ = A/B ≤ 1 is CKS20 Algorithm 1 (K = the number of successes of
//! Bernoulli(δ/k), k = 1, 2, … until the first failure; accept iff K is even; P(K ≥ k) =
//! δ^k/k!, so P(K even) = e^{−δ}). Each Bernoulli of a rational is exact: the first is decided
//! by 8 random bits u when (u+1)·B ≤ A·2^8 (U < A/B) or u·B ≥ A·2^8 (U ≥ A/B), else by an
//! exact Bernoulli((A·2^8 − u·B)/B) of U's further bits (long division); the others by long
//! division ([`Bits::bernoulli`]).
//!
//! Every random bit is used once: the proposal, the first stages of both coins and the
//! further stages draw disjoint bits (from one 64-bit word for σ < 2^23, the proposal's
//! 22 + m + 1 bits and then 16 + 8), so the coins are independent of each other and of the
//! proposal, as the correctness argument requires.
//!
//! **Cost.** At σ = 2^17 (w = 2^12, J = 384 bins, 512 slots) about 98 % of proposals are
//! accepted and almost all decisions take one 64-bit word: see `bench/noise/README.md`.
//!
//! **Events resolved otherwise** (both far below any observable scale): a tail proposal with
//! g ≥ 2^20 is rejected, which conditions the output on |z| < Z_c + 2^20·w_t (> 2^20·σ), a
//! change of total variation ≤ P(|Z| ≥ 2^20σ) < e^{−2^39}; a tie still unresolved at
//! precision 2^{−4096} is resolved as "reject", probability below 2^{−4000} per coin.

use super::exact::Bits;
use super::expbounds::{exp_neg, Nat};
use rand::RngCore;
use std::cmp::Ordering;

/// log2 of the alias table's total weight.
const TOTAL_BITS: u32 = 22;
/// Where the first-stage D thresholds start in a slot word (keep and alias take
/// t + 1 + s = TOTAL_BITS + 1 bits).
const SLOT_THR: u32 = TOTAL_BITS + 1;
/// Precision (bits) at which an undecided comparison stops (resolved as reject).
const MAX_PREC: u32 = 4096;
/// Tail blocks g ≥ this are rejected (see the module docs).
const MAX_TAIL_BLOCK: u64 = 1 << 20;

#[derive(Clone, Copy, Debug)]
struct Bin {
    /// lo ≤ D_j·2^64 (U < lo ⇒ accept).
    lo: u64,
    /// hi + 1 ≥ D_j·2^64 (U > hi ⇒ reject).
    hi: u64,
    /// n_j.
    n: u64,
}

/// Precomputed tables for one σ = num/den.
#[derive(Debug)]
pub(crate) struct Table {
    den: u64,
    /// B = 2·num².
    b: u64,
    /// log2 w.
    m: u32,
    /// J (core bins).
    j: u64,
    /// log2 of the alias slot count, and of the per-slot threshold range.
    s_bits: u32,
    t_bits: u32,
    /// Alias table, one word per slot: keep threshold (bits 0..t+1) | alias index (bits
    /// t+1..27) | ⌊lo/2^48⌋ of the slot's own bin (27..43) | the same for the alias (43..59);
    /// 0 for the tail and reject pseudo-bins. The last two let most D coins be decided
    /// without touching `bins`.
    slot: Vec<u64>,
    bins: Vec<Bin>,
    f: u64,
    n_tail: u64,
    /// log2 w_t.
    mt: u32,
    /// Z_c = J·w.
    zc: u64,
}

fn ceil_shr(x: &Nat, k: u32) -> u128 {
    x.shr(k, true).to_u128().expect("bound fits 128 bits")
}

/// Walker's alias table for integer `weight`s that sum to exactly `weight.len()`·2^`t_bits`
/// (one slot per weight, each holding 2^`t_bits`): slot i keeps its own outcome for the
/// first `keep[i]` of its 2^`t_bits` values and sends the rest to `alias[i]`. Integer
/// arithmetic throughout, so every outcome's probability is its weight over the total,
/// exactly.
fn alias_table(mut weight: Vec<u64>, t_bits: u32) -> (Vec<u32>, Vec<u32>) {
    let per_slot = 1u64 << t_bits;
    let slots = weight.len();
    let mut keep = vec![per_slot as u32; slots];
    let mut alias: Vec<u32> = (0..slots as u32).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) =
        (0..slots).partition(|&i| weight[i] < per_slot);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        keep[s] = weight[s] as u32;
        alias[s] = l as u32;
        weight[l] -= per_slot - weight[s];
        if weight[l] < per_slot {
            large.pop();
            small.push(l);
        }
    }
    // Whatever remains has weight exactly per_slot (integer weights, exact sum).
    for &i in small.iter().chain(&large) {
        debug_assert_eq!(weight[i], per_slot);
        keep[i] = per_slot as u32;
    }
    (keep, alias)
}

/// The core bins' D_j = F·e^{−c_j}/n_j, bounded at 2^{−64} from `exps` (e^{−c_j} bounds at
/// 2^{−`w`}), the slot counts `ns` and F.
fn bin_bounds(exps: &[(Nat, Nat)], ns: &[u64], f: u64, w: u32) -> Vec<Bin> {
    exps.iter()
        .zip(ns)
        .map(|((lo, hi), &n)| {
            let l = lo.mul_u64(f).div_u64(n, false).shr(w - 64, false);
            let h = hi.mul_u64(f).div_u64(n, true).shr(w - 64, true);
            let l = l.to_u128().unwrap().min(u64::MAX as u128) as u64;
            let h = h.to_u128().unwrap().min(1u128 << 64);
            debug_assert!(h >= 1);
            Bin {
                lo: l,
                hi: (h - 1) as u64,
                n,
            }
        })
        .collect()
}

/// Each slot's word: its kept count, its alias and the top 16 bits of both bins' lower
/// bounds (0 for the tail, rejection and empty slots).
fn pack_slots(keep: &[u32], alias: &[u32], bins: &[Bin], t_bits: u32) -> Vec<u64> {
    let thr = |i: u32| -> u64 { bins.get(i as usize).map_or(0, |b: &Bin| b.lo >> 48) };
    keep.iter()
        .zip(alias)
        .enumerate()
        .map(|(i, (&k, &a))| {
            k as u64
                | (a as u64) << (t_bits + 1)
                | thr(i as u32) << SLOT_THR
                | thr(a) << (SLOT_THR + 16)
        })
        .collect()
}

impl Table {
    /// σ = num/den with 1 ≤ num, den ≤ 2^31 (checked by the caller).
    pub(crate) fn new(num: u64, den: u64) -> Table {
        Self::with_cover(num, den, 12)
    }

    /// The same with the core covering |z| < `cover`·σ (rounded up to whole bins; tests
    /// use a small cover to exercise the tail), 1 ≤ cover ≤ 12.
    pub(crate) fn with_cover(num: u64, den: u64, cover: u64) -> Table {
        assert!((1..=12).contains(&cover));
        assert!((1..=1 << 31).contains(&num) && (1..=1 << 31).contains(&den));
        // k = ⌊log2 σ⌋: the largest k with num ≥ den·2^k (σ ∈ [2^-31, 2^31]).
        let ge = |k: i32| {
            if k >= 0 {
                num as u128 >= (den as u128) << k
            } else {
                (num as u128) << (-k) >= den as u128
            }
        };
        let k = (-32..=31).rev().find(|&k| ge(k)).expect("σ ≥ 2^-31");
        let m = (k - 5).max(0) as u32;
        let mt = m.max((k + 1).max(0) as u32);
        let w = 1u64 << m;
        let wt = 1u64 << mt;
        let j = ((cover as u128 * num as u128).div_ceil(den as u128 * w as u128) as u64).max(1);
        let zc = j * w;
        let b = 2 * num * num;
        let den2 = den as u128 * den as u128;
        if m > 0 {
            // δ ≤ 1 in every core bin: ((j+1)w−1)² − (jw)² ≤ (2Z_c − w)·w, times den², ≤ B.
            assert!((2 * zc - w) as u128 * w as u128 * den2 <= b as u128);
        }
        // Tail ratio D_{g+1}/D_g < 1.
        assert!(
            10 * (2 * zc as u128 * wt as u128 + wt as u128 * wt as u128) * den2
                >= 14 * (num as u128 * num as u128)
        );
        let slots = (j + 2).next_power_of_two();
        let s_bits = slots.trailing_zeros();
        let t_bits = TOTAL_BITS - s_bits;
        let total = 1u64 << TOTAL_BITS;

        // e^{−c(jw)} bounds at 2^{−128}.
        const W: u32 = 128;
        let exps: Vec<(Nat, Nat)> = (0..j)
            .map(|i| {
                let zd = (i * w) as u128 * den as u128;
                exp_neg(zd * zd, b, W)
            })
            .collect();
        let zcd = zc as u128 * den as u128;
        let tail_exp = exp_neg(zcd * zcd, b, W);
        let ell = mt - m;
        // Upper bounds at 2^{−64} (u128), then F.
        let his: Vec<u128> = exps.iter().map(|(_, h)| ceil_shr(h, W - 64)).collect();
        let tail_hi = ceil_shr(&tail_exp.1.shl(1 + ell), W - 64);
        let sum_hi: u128 = his.iter().sum::<u128>() + tail_hi;
        let f = ((((total - j - 2) as u128) << 64) / sum_hi) as u64;
        assert!(f >= 1);
        let ns: Vec<u64> = his
            .iter()
            .map(|&h| (f as u128 * h).div_ceil(1u128 << 64) as u64)
            .collect();
        let n_tail = (f as u128 * tail_hi).div_ceil(1u128 << 64) as u64;
        let used: u64 = ns.iter().sum::<u64>() + n_tail;
        assert!(used <= total);
        let n_reject = total - used;

        let bins = bin_bounds(&exps, &ns, f, W);

        // Slots: the core bins, the tail, the rejection mass, then empty slots.
        let mut weight = vec![0u64; slots as usize];
        weight[..j as usize].copy_from_slice(&ns);
        weight[j as usize] = n_tail;
        weight[j as usize + 1] = n_reject;
        let (keep, alias) = alias_table(weight, t_bits);
        let slot = pack_slots(&keep, &alias, &bins, t_bits);
        Table {
            den,
            b,
            m,
            j,
            s_bits,
            t_bits,
            slot,
            bins,
            f,
            n_tail,
            mt,
            zc,
        }
    }

    /// The number of core bins J.
    pub(crate) fn core_bins(&self) -> u64 {
        self.j
    }

    /// One draw.
    #[inline]
    pub(crate) fn sample<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> i64 {
        self.sample_inner(bits)
    }

    /// Fills `out` with independent draws (the per-draw setup hoisted out of the loop).
    pub(crate) fn fill<R: RngCore + ?Sized>(&self, out: &mut [i64], bits: &mut Bits<'_, R>) {
        for x in out {
            *x = self.sample_inner(bits);
        }
    }

    #[inline(always)]
    fn sample_inner<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> i64 {
        let head = TOTAL_BITS + self.m + 1;
        // Up to σ < 2^23 (m ≤ 17) the proposal and both first stages fit one 64-bit word.
        let one_word = head + 24 <= 64;
        loop {
            let (x, y) = if one_word {
                let x = bits.word();
                (x, x >> head)
            } else {
                (bits.bits(head), bits.bits(24))
            };
            let slot = (x & ((1u64 << self.s_bits) - 1)) as usize;
            let v = (x >> self.s_bits) & ((1u64 << self.t_bits) - 1);
            let r = (x >> TOTAL_BITS) & ((1u64 << self.m) - 1);
            let neg = (x >> (TOTAL_BITS + self.m)) & 1 == 1;
            let e = self.slot[slot];
            // Branch-free select: slot when v < keep, else its alias.
            let kw = self.t_bits + 1;
            let take_alias = (v >= (e & ((1u64 << kw) - 1))) as u64;
            let keep_mask = take_alias.wrapping_sub(1);
            let i =
                (slot as u64 & keep_mask) | ((e >> kw) & ((1u64 << self.s_bits) - 1) & !keep_mask);
            let thr = (e >> (SLOT_THR + 16 * take_alias as u32)) & 0xffff;
            if i >= self.j {
                if i == self.j {
                    if let Some(z) = self.tail(bits) {
                        return z;
                    }
                }
                continue;
            }
            let za = i * (1u64 << self.m) + r;
            if neg && za == 0 {
                continue;
            }
            // y: 16 bits for the first stage of the D_j coin, 8 for the first δ coin.
            // u < ⌊lo/2^48⌋ accepts at once (the common case); otherwise the full coin.
            let u16 = y & 0xffff;
            if u16 >= thr && !self.d_coin(i, u16, bits) {
                continue;
            }
            if r != 0 {
                // A = (Z − Z_j)(Z + Z_j) = δ·B ≤ B < 2^63; Z, Z_j < 2^37, so the u64
                // product is exact.
                let zj = (i << self.m) * self.den;
                let z = za * self.den;
                let a = (z - zj).wrapping_mul(z + zj);
                if !exp_neg_small(a as u128, self.b, (y >> 16) & 0xff, bits) {
                    continue;
                }
            }
            return if neg { -(za as i64) } else { za as i64 };
        }
    }

    /// Bernoulli(D_i), `u_hi` the first 16 bits of the uniform.
    #[inline]
    fn d_coin<R: RngCore + ?Sized>(&self, i: u64, u_hi: u64, bits: &mut Bits<'_, R>) -> bool {
        let bin = self.bins[i as usize];
        if u_hi < bin.lo >> 48 {
            return true;
        }
        if u_hi > bin.hi >> 48 {
            return false;
        }
        let u = (u_hi << 48) | bits.bits(48);
        if u < bin.lo {
            return true;
        }
        if u > bin.hi {
            return false;
        }
        let zd = (i << self.m) as u128 * self.den as u128;
        bernoulli_scaled_exp(u, self.f, 0, bin.n, zd * zd, self.b, bits)
    }

    /// A tail proposal and its acceptance; None on rejection.
    #[cold]
    fn tail<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Option<i64> {
        let mut g = 0u64;
        while bits.bit() {
            g += 1;
            if g >= MAX_TAIL_BLOCK {
                return None;
            }
        }
        let r = bits.bits(self.mt);
        let neg = bits.bit();
        // g < 2^20, w_t·den ≤ 2^33, Z_c·den ≤ 2^36: all below 2^64, squares below 2^128.
        let zg = self.zc + (g << self.mt);
        let za = zg + r;
        let zgd = zg as u128 * self.den as u128;
        let zd = za as u128 * self.den as u128;
        let u = bits.bits(64);
        let shift = (g + 1) as u32 + (self.mt - self.m);
        if !bernoulli_scaled_exp(u, self.f, shift, self.n_tail, zgd * zgd, self.b, bits) {
            return None;
        }
        if !bits.bernoulli_exp_neg(zd * zd - zgd * zgd, self.b as u128) {
            return None;
        }
        Some(if neg { -(za as i64) } else { za as i64 })
    }
}

/// Bernoulli(e^{−A/B}) for 0 ≤ A ≤ B (CKS20 Algorithm 1), the first rational coin decided
/// by the 8 random bits `u8` (and more when they do not decide).
#[inline]
fn exp_neg_small<R: RngCore + ?Sized>(a: u128, b: u64, u8: u64, bits: &mut Bits<'_, R>) -> bool {
    debug_assert!(a <= b as u128 && u8 < 256);
    let u = u8 as u128;
    let target = a << 8;
    let low = u * b as u128;
    let first = if low + b as u128 <= target {
        true
    } else if low >= target {
        false
    } else {
        bits.bernoulli(target - low, b as u128)
    };
    if !first {
        return true; // K = 0
    }
    let mut k = 2u128;
    while bits.bernoulli(a, b as u128 * k) {
        k += 1;
    }
    // K = k − 1 successes.
    (k - 1) % 2 == 0
}

/// Bernoulli(D) for D = m·2^s·e^{−a/b}/n ≤ 1, given the first 64 bits `u` of the uniform
/// it is compared with (exact: bounds at growing precision, see the module docs).
#[cold]
fn bernoulli_scaled_exp<R: RngCore + ?Sized>(
    u: u64,
    m: u64,
    s: u32,
    n: u64,
    a: u128,
    b: u64,
    bits: &mut Bits<'_, R>,
) -> bool {
    let mut u = Nat::from_u128(u as u128);
    let mut p = 64u32;
    loop {
        let (lo, hi) = super::expbounds::scaled_exp_neg(m, s, n, a, b, p, 64);
        // U ∈ [u/2^p, (u+1)/2^p).
        if u.add(&Nat::from_u128(1)).cmp_nat(&lo) != Ordering::Greater {
            return true;
        }
        if u.cmp_nat(&hi) != Ordering::Less {
            return false;
        }
        if p >= MAX_PREC {
            return false;
        }
        u = u.shl(64).add(&Nat::from_u128(bits.bits(64) as u128));
        p += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::noise::ks_discrete_gaussian as ks;
    use crate::rng::ReleaseRng;

    /// Every outcome's mass in the alias table is exactly its weight: what its own slot keeps
    /// plus what the slots aliased to it send (integer weights summing to slots·2^t).
    #[test]
    fn alias_table_gives_each_outcome_exactly_its_weight() {
        let t_bits = 10;
        let per_slot = 1u64 << t_bits;
        for weight in [
            vec![per_slot; 4],
            vec![4 * per_slot, 0, 0, 0],
            vec![
                1,
                2 * per_slot - 1,
                per_slot + 7,
                per_slot - 7,
                0,
                2 * per_slot,
            ],
            vec![300, 500, 1000, 1200, 1300, 1500, 700, 1692],
        ] {
            assert_eq!(weight.iter().sum::<u64>(), weight.len() as u64 * per_slot);
            let (keep, alias) = alias_table(weight.clone(), t_bits);
            let mut mass = vec![0u64; weight.len()];
            for (i, (&k, &a)) in keep.iter().zip(&alias).enumerate() {
                assert!(u64::from(k) <= per_slot);
                mass[i] += u64::from(k);
                mass[a as usize] += per_slot - u64::from(k);
            }
            assert_eq!(mass, weight);
        }
    }

    /// Binomial check at α = 1e-6 (|count − np| ≤ 5.33·sqrt(np(1−p)), two-sided).
    fn within(hits: usize, n: usize, p: f64) -> bool {
        let m = n as f64 * p;
        (hits as f64 - m).abs() <= 5.33 * (m * (1.0 - p)).sqrt()
    }

    #[test]
    fn tie_resolution_is_exact() {
        // D = m·2^s·e^{−a/b}/n; ⌊D·2^64⌋ and the fraction of D·2^64 computed independently
        // (Python decimal, 120 digits).
        let cases: [(u64, u32, u64, u128, u64, u64, f64); 2] = [
            (3, 0, 4, 1, 2, 0x747431ea9d843bf6, 0.878_299_385_284_302),
            (1, 5, 40, 7, 2, 0x062f366b60ffe131, 0.316_941_285_289_489_7),
        ];
        let mut rng = ReleaseRng::seeded(21);
        let mut bits = Bits::new(&mut rng);
        for (m, s, n, a, b, floor, frac) in cases {
            // Just below / above the floor: decided without more bits, always.
            assert!(bernoulli_scaled_exp(floor - 1, m, s, n, a, b, &mut bits));
            assert!(!bernoulli_scaled_exp(floor + 1, m, s, n, a, b, &mut bits));
            // On the floor: U < D iff the further bits are below frac(D·2^64).
            let trials = 20_000;
            let hits = (0..trials)
                .filter(|_| bernoulli_scaled_exp(floor, m, s, n, a, b, &mut bits))
                .count();
            assert!(within(hits, trials, frac), "{hits} vs {frac}");
            // Power: a fraction off by 0.05 is rejected.
            assert!(!within(hits, trials, frac + 0.05));
        }
    }

    /// The table's invariants, against an independent f64 evaluation.
    #[test]
    fn table_invariants() {
        for (num, den) in [
            (1u64, 1u64 << 20),
            (1, 1),
            (33, 10),
            (131_072, 1),
            (131_073, 1),
            ((1 << 31) - 1, 1),
            (1 << 31, 1 << 31),
            (1_234_567, 1000),
            (1, 1 << 31),
            (1 << 31, 1),
            (13_107_200, 1),
        ] {
            let t = Table::new(num, den);
            let sigma = num as f64 / den as f64;
            let total = 1u64 << TOTAL_BITS;
            let per_slot = 1u64 << t.t_bits;
            // The alias table's masses reproduce the weights exactly.
            let mut mass = vec![0u64; t.slot.len()];
            let kw = t.t_bits + 1;
            let thr = |i: usize| t.bins.get(i).map_or(0, |b| b.lo >> 48);
            for (i, &e) in t.slot.iter().enumerate() {
                let keep = e & ((1 << kw) - 1);
                let alias = ((e >> kw) & ((1 << t.s_bits) - 1)) as usize;
                assert!(keep <= per_slot);
                assert_eq!((e >> SLOT_THR) & 0xffff, thr(i));
                assert_eq!(e >> (SLOT_THR + 16), thr(alias));
                mass[i] += keep;
                mass[alias] += per_slot - keep;
            }
            let n_sum: u64 = t.bins.iter().map(|b| b.n).sum();
            assert_eq!(mass.iter().sum::<u64>(), total);
            for (j, b) in t.bins.iter().enumerate() {
                assert_eq!(mass[j], b.n, "σ = {sigma}, bin {j}");
                let c = ((j as u64 * (1 << t.m)) as f64 / sigma).powi(2) / 2.0;
                let bound = t.f as f64 * (-c).exp();
                assert!(b.n as f64 >= bound * (1.0 - 1e-12), "n_j too small");
                assert!(b.n as f64 <= bound + 1.0 + 1e-6 * bound);
                // lo ≤ D·2^64 ≤ hi + 1 with D = F·e^{−c}/n.
                let d = bound / b.n as f64;
                assert!(d <= 1.0 + 1e-12);
                assert!(b.lo as f64 <= d * 2f64.powi(64) * (1.0 + 1e-12));
                assert!((b.hi as f64 + 1.0) >= d * 2f64.powi(64) * (1.0 - 1e-12));
                assert!(b.hi.saturating_sub(b.lo) <= 4, "bounds too loose");
            }
            assert_eq!(mass[t.j as usize], t.n_tail);
            assert_eq!(n_sum + t.n_tail + mass[t.j as usize + 1], total);
            // The core covers 12σ and the reject weight is small.
            assert!(t.zc as f64 >= 12.0 * sigma);
            assert!((mass[t.j as usize + 1] as f64) < 0.01 * total as f64);
        }
    }

    /// Draws from a table, for the distribution tests.
    fn draws(t: &Table, seed: u64, n: usize) -> Vec<i64> {
        let mut rng = ReleaseRng::seeded(seed);
        let mut bits = Bits::new(&mut rng);
        (0..n).map(|_| t.sample(&mut bits)).collect()
    }

    fn ks_crit(n: usize) -> f64 {
        ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt()
    }

    /// A core covering only σ sends about a third of the draws through the tail proposal.
    #[test]
    fn tail_path_is_exact() {
        for (num, den, seed) in [(33u64, 10u64, 31u64), (1000, 1, 32), (131_072, 1, 33)] {
            let t = Table::with_cover(num, den, 1);
            let s = num as f64 / den as f64;
            let n = 100_000;
            let xs = draws(&t, seed, n);
            let beyond = xs.iter().filter(|&&z| z.unsigned_abs() >= t.zc).count();
            assert!(beyond > n / 5, "the tail was not exercised");
            assert!(ks(&xs, s) < ks_crit(n), "σ = {s}: KS {}", ks(&xs, s));
            assert!(ks(&xs, s * 1.05) > ks_crit(n), "σ = {s}: no power");
            // Beyond 3σ: the tail's own shape (mass of |z| ≥ 3σ within α = 1e-6).
            let far = xs.iter().filter(|&&z| (z.abs() as f64) >= 3.0 * s).count();
            let wide = (40.0 * s) as i64;
            let (mut pf, mut tot) = (0.0, 0.0);
            for z in -wide..=wide {
                let w = (-((z * z) as f64) / (2.0 * s * s)).exp();
                tot += w;
                if (z.abs() as f64) >= 3.0 * s {
                    pf += w;
                }
            }
            assert!(within(far, n, pf / tot), "σ = {s}: {far} beyond 3σ");
        }
    }

    /// Every D coin through the big-integer path (fast bounds disabled): same distribution.
    #[test]
    fn exact_fallback_path_gives_the_same_distribution() {
        let mut t = Table::new(33, 10);
        for b in &mut t.bins {
            b.lo = 0;
            b.hi = u64::MAX;
        }
        let n = 20_000;
        let xs = draws(&t, 41, n);
        let s = 3.3;
        assert!(ks(&xs, s) < ks_crit(n), "KS {}", ks(&xs, s));
        assert!(ks(&xs, s * 1.1) > ks_crit(n), "no power");
    }
}
