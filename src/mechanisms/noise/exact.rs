//! Exact samplers in integer arithmetic (Canonne, Kamath, Steinke 2020, "The discrete
//! Gaussian for differential privacy", Algorithms 1–3).
//!
//! Every probability used here is a rational number (or e^{−rational}) and every coin is
//! resolved by comparing lazily drawn random bits with the exact binary expansion of that
//! rational, so the output distribution is the stated one exactly: no floating-point number
//! and no transcendental function is evaluated on the sampling path. The only departure is
//! stated where it happens ([`DiscreteGaussian`]): an event of probability below e^{−2^64}
//! is resolved as a rejection.

use super::table::Table;
use crate::error::{Error, Result};
use crate::rng::Streams;
use rand::RngCore;
use std::sync::{Arc, Mutex};

/// The most recent sampler tables, by (num, den): building one takes a few milliseconds, and
/// repeated runs at the same σ (the audit's many runs, a page re-run) share it. A table is a
/// pure function of (num, den), so sharing it changes no output.
static TABLES: Mutex<Vec<CachedTable>> = Mutex::new(Vec::new());

/// One cached table and its σ = num/den.
type CachedTable = ((u64, u64), Arc<Table>);

/// How many tables [`TABLES`] keeps.
const CACHED_TABLES: usize = 8;

fn cached_table(num: u64, den: u64) -> Arc<Table> {
    if let Ok(cache) = TABLES.lock() {
        if let Some((_, t)) = cache.iter().find(|(k, _)| *k == (num, den)) {
            return Arc::clone(t);
        }
    }
    let t = Arc::new(Table::new(num, den));
    if let Ok(mut cache) = TABLES.lock() {
        if cache.len() >= CACHED_TABLES {
            cache.remove(0);
        }
        cache.push(((num, den), Arc::clone(&t)));
    }
    t
}

/// Random bits drawn 64 at a time from a generator and handed out one (or a few) at a time,
/// so that a coin of probability 3/7 costs two bits on average instead of a 64-bit word.
pub struct Bits<'a, R: RngCore + ?Sized> {
    rng: &'a mut R,
    buf: u64,
    left: u32,
}

impl<'a, R: RngCore + ?Sized> Bits<'a, R> {
    /// A bit source over `rng` (keep it alive across many draws: leftover bits are reused).
    pub fn new(rng: &'a mut R) -> Self {
        Bits {
            rng,
            buf: 0,
            left: 0,
        }
    }

    /// One fair bit.
    #[inline]
    pub fn bit(&mut self) -> bool {
        if self.left == 0 {
            self.buf = self.rng.next_u64();
            self.left = 64;
        }
        let b = self.buf & 1 == 1;
        self.buf >>= 1;
        self.left -= 1;
        b
    }

    /// 64 fresh fair bits straight from the generator (the buffered bits stay for later).
    #[inline]
    pub fn word(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// `k` ≤ 64 fair bits as an integer in [0, 2^k).
    #[inline]
    pub fn bits(&mut self, k: u32) -> u64 {
        debug_assert!(k <= 64);
        if k == 0 {
            return 0;
        }
        if self.left >= k {
            let v = if k == 64 {
                self.buf
            } else {
                self.buf & ((1u64 << k) - 1)
            };
            self.buf = if k == 64 { 0 } else { self.buf >> k };
            self.left -= k;
            v
        } else {
            let have = self.left;
            let lo = self.buf; // `have` < 64 valid bits
            let need = k - have;
            let w = self.rng.next_u64();
            let hi = if need == 64 {
                w
            } else {
                w & ((1u64 << need) - 1)
            };
            self.buf = if need == 64 { 0 } else { w >> need };
            self.left = 64 - need;
            if have == 0 {
                hi
            } else {
                lo | (hi << have)
            }
        }
    }

    /// Uniform on {0, …, n − 1} (n ≥ 1), by rejection of ⌈log2 n⌉-bit integers.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n >= 1);
        if n == 1 {
            return 0;
        }
        let k = 64 - (n - 1).leading_zeros();
        loop {
            let v = self.bits(k);
            if v < n {
                return v;
            }
        }
    }

    /// Bernoulli(num/den), exactly, for den ≤ 2^127: the random bits of a uniform U ∈ [0, 1)
    /// are compared one by one with the binary expansion of num/den (long division); the
    /// first difference decides U < num/den. Two bits on average.
    #[inline]
    pub fn bernoulli(&mut self, num: u128, den: u128) -> bool {
        debug_assert!(den > 0 && den <= 1u128 << 127);
        if num >= den {
            return true;
        }
        if num == 0 {
            return false;
        }
        let mut r = num;
        loop {
            r <<= 1;
            let p = r >= den;
            if p {
                r -= den;
            }
            if self.bit() != p {
                // p = 1, U's bit 0: U < num/den. p = 0, U's bit 1: U > num/den.
                return p;
            }
        }
    }

    /// Bernoulli(e^{−num/den}) for 0 ≤ num ≤ den ≤ 2^127 (CKS20 Algorithm 1): K counts the
    /// successes of Bernoulli(γ/k), k = 1, 2, …; P(K ≥ k) = γ^k/k!, so P(K even) = e^{−γ}.
    #[inline]
    pub fn bernoulli_exp_neg_frac(&mut self, num: u128, den: u128) -> bool {
        debug_assert!(num <= den);
        let mut k: u128 = 1;
        loop {
            let a = match den.checked_mul(k) {
                Some(dk) if dk <= 1u128 << 127 => self.bernoulli(num, dk),
                // γ/k = (num/den)·(1/k): two independent coins.
                _ => self.bernoulli(num, den) && self.bernoulli(1, k),
            };
            if !a {
                break;
            }
            k += 1;
        }
        k % 2 == 1
    }

    /// Bernoulli(e^{−1}).
    #[inline]
    pub fn bernoulli_exp_neg_one(&mut self) -> bool {
        self.bernoulli_exp_neg_frac(1, 1)
    }

    /// Bernoulli(e^{−a/b}) for any a and 0 < b ≤ 2^127: ⌊a/b⌋ independent Bernoulli(e^{−1})
    /// coins and one Bernoulli(e^{−(a mod b)/b}).
    pub fn bernoulli_exp_neg(&mut self, a: u128, b: u128) -> bool {
        let mut q = a / b;
        while q > 0 {
            if !self.bernoulli_exp_neg_one() {
                return false;
            }
            q -= 1;
        }
        self.bernoulli_exp_neg_frac(a % b, b)
    }

    /// Bernoulli(e^{−γ}) for γ = a²/b (a any u128, 0 < b ≤ 2^127): e^{−γ} = e^{−⌊γ⌋}·e^{−{γ}},
    /// ⌊γ⌋ independent Bernoulli(e^{−1}) coins and one Bernoulli(e^{−{γ}}); the quotient and
    /// remainder of a²/b are exact (256-bit when a² does not fit 128 bits).
    pub fn bernoulli_exp_neg_square(&mut self, a: u128, b: u128) -> bool {
        let (mut qhi, mut qlo, r) = div_square(a, b);
        while qhi != 0 || qlo != 0 {
            if !self.bernoulli_exp_neg_one() {
                return false;
            }
            if qlo == 0 {
                qhi -= 1;
            }
            qlo = qlo.wrapping_sub(1);
        }
        self.bernoulli_exp_neg_frac(r, b)
    }
}

/// (a·a) as a 256-bit number (hi, lo).
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let m = u64::MAX as u128;
    let (a0, a1) = (a & m, a >> 64);
    let (b0, b1) = (b & m, b >> 64);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & m) + (p10 & m);
    let lo = (p00 & m) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

/// ⌊a²/b⌋ as (hi, lo) and a² mod b, for 0 < b ≤ 2^127.
fn div_square(a: u128, b: u128) -> (u128, u128, u128) {
    if a >> 64 == 0 {
        let s = a * a;
        return (0, s / b, s % b);
    }
    let (hi, lo) = mul_wide(a, a);
    // Binary long division, most significant bit first; r < b ≤ 2^127 so 2r + 1 fits.
    let (mut qhi, mut qlo, mut r) = (0u128, 0u128, 0u128);
    for i in (0..256u32).rev() {
        let bit = if i >= 128 {
            (hi >> (i - 128)) & 1
        } else {
            (lo >> i) & 1
        };
        r = (r << 1) | bit;
        if r >= b {
            r -= b;
            if i >= 128 {
                qhi |= 1 << (i - 128);
            } else {
                qlo |= 1 << i;
            }
        }
    }
    (qhi, qlo, r)
}

/// A positive rational scale num/den with den a power of two: the smallest such number ≥ x
/// with num ≤ 2^31, den ≤ 2^31 (rounded up, so the noise is never smaller than asked).
fn rational_at_least(name: &str, x: f64, min: f64, max: f64) -> Result<(u64, u64)> {
    if !(x.is_finite() && x >= min && x <= max) {
        return Err(Error::param(
            name,
            x,
            format!("an exact noise scale must be a finite number in [{min:e}, {max:e}]"),
        ));
    }
    let mut f = 31i32;
    loop {
        let den = (1u64 << f) as f64;
        let scaled = (x * den).ceil(); // x·2^f is exact; ceil is exact
        if scaled <= (1u64 << 31) as f64 || f == 0 {
            if scaled > (1u64 << 31) as f64 {
                return Err(Error::param(
                    name,
                    x,
                    format!("an exact noise scale must be at most {max:e}"),
                ));
            }
            return Ok((scaled as u64, 1u64 << f));
        }
        f -= 1;
    }
}

/// The discrete Laplace distribution on ℤ, P(z) ∝ e^{−|z|/b}, with b = t/s rational
/// (two-sided geometric; CKS20 Algorithm 2), sampled exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    t: u64,
    s: u64,
}

impl DiscreteLaplace {
    /// Scale b = t/s with t, s ≥ 1 and t, s ≤ 2^62.
    pub fn from_ratio(name: &str, t: u64, s: u64) -> Result<Self> {
        if t == 0 || s == 0 || t > 1 << 62 || s > 1 << 62 {
            return Err(Error::param(
                name,
                format!("{t}/{s}"),
                "a discrete Laplace scale t/s needs 1 ≤ t, s ≤ 2^62",
            ));
        }
        Ok(DiscreteLaplace { t, s })
    }

    /// Scale b (rounded up to a rational with a power-of-two denominator; b ∈ [2^-20, 2^31]).
    pub fn new(name: &str, b: f64) -> Result<Self> {
        let (t, s) = rational_at_least(name, b, 1.0 / (1u64 << 20) as f64, (1u64 << 31) as f64)?;
        Self::from_ratio(name, t, s)
    }

    /// The scale b = t/s actually used.
    pub fn scale(&self) -> f64 {
        self.t as f64 / self.s as f64
    }

    /// (t, s).
    pub fn ratio(&self) -> (u64, u64) {
        (self.t, self.s)
    }

    /// One draw (CKS20 Algorithm 2).
    pub fn sample_bits<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> i64 {
        loop {
            let u = bits.below(self.t);
            if !bits.bernoulli_exp_neg_frac(u as u128, self.t as u128) {
                continue;
            }
            let mut v: u64 = 0;
            while bits.bernoulli_exp_neg_one() {
                v += 1;
            }
            // X = U + t·V is geometric with ratio e^{−1/t}; Y = ⌊X/s⌋ with ratio e^{−s/t}.
            let x = (u as u128) + (self.t as u128) * (v as u128);
            let y = x / self.s as u128;
            let neg = bits.bit();
            if neg && y == 0 {
                continue;
            }
            let y = y.min(i64::MAX as u128) as i64;
            return if neg { -y } else { y };
        }
    }

    /// One draw from a fresh bit source.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        self.sample_bits(&mut Bits::new(rng))
    }
}

/// The discrete Gaussian on ℤ, P(z) ∝ e^{−z²/(2σ²)}, with σ = num/den rational, sampled
/// exactly.
///
/// [`Self::sample_bits`] is the fast sampler of `super::table` (a discrete ziggurat: a
/// dyadic proposal and exact acceptance coins; its proof note is there). The tables are
/// built once in [`Self::from_ratio`] (shared by clones: build once, clone freely) and take
/// about 5–25 ms (exact big-integer bounds for each of ≤ 769 bins).
///
/// [`Self::sample_cks_bits`] is CKS20 Algorithm 3 (kept as a reference and for the
/// benchmark): a discrete Laplace proposal of scale t = ⌊σ⌋ + 1 accepted with probability
/// e^{−(|Y| − σ²/t)²/(2σ²)}. In integers: (|Y| − σ²/t)²/(2σ²) = a²/b with
/// a = | |Y|·t·den² − num² | and b = 2·(num·t·den)² ≤ 2^127. If |Y|·t·den² overflows 128
/// bits (|Y| > 2^128/(t·den²), a proposal of probability below e^{−2^64}), the proposal is
/// rejected; its acceptance probability would be below e^{−2^127}.
#[derive(Clone)]
pub struct DiscreteGaussian {
    num: u64,
    den: u64,
    t: u64,
    table: Arc<Table>,
}

impl std::fmt::Debug for DiscreteGaussian {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscreteGaussian")
            .field("num", &self.num)
            .field("den", &self.den)
            .finish()
    }
}

impl PartialEq for DiscreteGaussian {
    fn eq(&self, o: &Self) -> bool {
        (self.num, self.den) == (o.num, o.den)
    }
}

impl Eq for DiscreteGaussian {}

impl DiscreteGaussian {
    /// σ = num/den with 1 ≤ num, den ≤ 2^31 and num·(⌊num/den⌋ + 1)·den ≤ 2^63.
    pub fn from_ratio(name: &str, num: u64, den: u64) -> Result<Self> {
        let bad = || {
            Err(Error::param(
                name,
                format!("{num}/{den}"),
                "an exact Gaussian scale num/den needs 1 ≤ num, den ≤ 2^31 and num·(⌊num/den⌋+1)·den ≤ 2^63",
            ))
        };
        if num == 0 || den == 0 || num > 1 << 31 || den > 1 << 31 {
            return bad();
        }
        let t = (num / den).saturating_add(1);
        match (num as u128)
            .checked_mul(t as u128)
            .and_then(|x| x.checked_mul(den as u128))
        {
            Some(p) if p <= 1u128 << 63 => Ok(DiscreteGaussian {
                num,
                den,
                t,
                table: cached_table(num, den),
            }),
            _ => bad(),
        }
    }

    /// σ in [2^-20, 2^31], rounded up to a rational with a power-of-two denominator
    /// (relative increase below 2^-30 for σ ≥ 1).
    pub fn new(name: &str, sigma: f64) -> Result<Self> {
        let (num, den) =
            rational_at_least(name, sigma, 1.0 / (1u64 << 20) as f64, (1u64 << 31) as f64)?;
        Self::from_ratio(name, num, den)
    }

    /// The σ actually used (≥ the one asked for).
    pub fn sigma(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// (num, den) with σ = num/den.
    pub fn ratio(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// One draw, from a bit source that can be kept across draws.
    #[inline]
    pub fn sample_bits<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> i64 {
        self.table.sample(bits)
    }

    /// Fills `out` with independent draws.
    pub fn fill<R: RngCore + ?Sized>(&self, out: &mut [i64], rng: &mut R) {
        self.table.fill(out, &mut Bits::new(rng));
    }

    /// [`Self::fill`] from a bit source that can be kept across calls.
    pub fn fill_bits<R: RngCore + ?Sized>(&self, out: &mut [i64], bits: &mut Bits<'_, R>) {
        self.table.fill(out, bits);
    }

    /// Fills `out` on all cores (natively; in order on wasm32): block i of `block_len`
    /// entries draws from stream i of `streams`, so the result depends only on the streams'
    /// key and `block_len`, never on the thread count.
    pub fn fill_par(&self, out: &mut [i64], streams: &Streams, block_len: usize) {
        crate::par::blocks_mut(out, block_len, |i, block| {
            let mut rng = streams.stream(i as u64);
            self.fill(block, &mut rng);
            0
        });
    }

    /// The number of core bins of the fast sampler's table (for the benchmark).
    pub fn table_bins(&self) -> u64 {
        self.table.core_bins()
    }

    /// One draw by CKS20 Algorithm 3 (the reference sampler; slower).
    pub fn sample_cks_bits<R: RngCore + ?Sized>(&self, bits: &mut Bits<'_, R>) -> i64 {
        let lap = DiscreteLaplace { t: self.t, s: 1 };
        let num2 = (self.num as u128) * (self.num as u128);
        let tden2 = (self.t as u128) * (self.den as u128) * (self.den as u128);
        let ntd = (self.num as u128) * (self.t as u128) * (self.den as u128);
        let b = 2 * ntd * ntd;
        loop {
            let y = lap.sample_bits(bits);
            let Some(m) = (y.unsigned_abs() as u128).checked_mul(tden2) else {
                continue;
            };
            let a = m.abs_diff(num2);
            if bits.bernoulli_exp_neg_square(a, b) {
                return y;
            }
        }
    }

    /// One draw from a fresh bit source.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        self.sample_bits(&mut Bits::new(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::noise::ks_discrete_gaussian as ks_dist;
    use crate::rng::ReleaseRng;

    /// Chi-square critical value at α = 1e-6 for `df` degrees of freedom (Wilson–Hilferty,
    /// z = 4.7534, accurate to a few percent for df ≥ 5 and conservative enough at α = 1e-6).
    fn chi2_crit(df: usize) -> f64 {
        let k = df as f64;
        let z = 4.7534;
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    /// Pearson chi-square of `counts` (keys z) against the pmf `p(z)` ∝ w(z) on [lo, hi],
    /// pooling the two tails into one bin each.
    fn chi2(samples: &[i64], lo: i64, hi: i64, w: impl Fn(i64) -> f64, wide: i64) -> (f64, usize) {
        let z_total: f64 = (-wide..=wide).map(&w).sum();
        let n = samples.len() as f64;
        let mut counts = vec![0f64; (hi - lo + 3) as usize];
        for &s in samples {
            let i = if s < lo {
                0
            } else if s > hi {
                (hi - lo + 2) as usize
            } else {
                (s - lo + 1) as usize
            };
            counts[i] += 1.0;
        }
        let mut probs = vec![0f64; counts.len()];
        for z in -wide..=wide {
            let i = if z < lo {
                0
            } else if z > hi {
                (hi - lo + 2) as usize
            } else {
                (z - lo + 1) as usize
            };
            probs[i] += w(z) / z_total;
        }
        let mut stat = 0.0;
        let mut df = 0usize;
        for (c, p) in counts.iter().zip(&probs) {
            let e = p * n;
            if e > 0.0 {
                stat += (c - e) * (c - e) / e;
                df += 1;
            }
        }
        (stat, df - 1)
    }

    #[test]
    fn bits_are_uniform_and_below_is_in_range() {
        let mut rng = ReleaseRng::seeded(1);
        let mut b = Bits::new(&mut rng);
        let n = 120_000;
        let mut counts = [0f64; 7];
        for _ in 0..n {
            let v = b.below(7);
            assert!(v < 7);
            counts[v as usize] += 1.0;
        }
        let e = n as f64 / 7.0;
        let stat: f64 = counts.iter().map(|c| (c - e) * (c - e) / e).sum();
        assert!(stat < chi2_crit(6), "{stat}");
        // Mixed widths reassemble words correctly: 3 + 61 bits, then 64.
        let mut r1 = ReleaseRng::seeded(5);
        let w = rand::RngCore::next_u64(&mut ReleaseRng::seeded(5));
        let mut b1 = Bits::new(&mut r1);
        let lo = b1.bits(3);
        let hi = b1.bits(61);
        assert_eq!(lo | (hi << 3), w);
    }

    /// Binomial check at α = 1e-6 (|count − np| ≤ 5.33·sqrt(np(1−p)), two-sided).
    fn assert_rate(hits: usize, n: usize, p: f64) {
        let m = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (hits as f64 - m).abs() <= 5.33 * sd,
            "rate {} vs {p}",
            hits as f64 / n as f64
        );
    }

    #[test]
    fn bernoulli_rational_and_exp() {
        let mut rng = ReleaseRng::seeded(2);
        let mut b = Bits::new(&mut rng);
        let n = 200_000;
        let hits = (0..n).filter(|_| b.bernoulli(3, 7)).count();
        assert_rate(hits, n, 3.0 / 7.0);
        // A wrong probability is rejected by the same check (power).
        let m = n as f64 * 0.45;
        assert!((hits as f64 - m).abs() > 5.33 * (m * 0.55).sqrt());
        for (num, den) in [(3u128, 10u128), (1, 1), (0, 5)] {
            let hits = (0..n)
                .filter(|_| b.bernoulli_exp_neg_frac(num, den))
                .count();
            assert_rate(hits, n, (-(num as f64) / den as f64).exp());
        }
        // γ = a²/b = 49/20 = 2.45 (integer part and remainder).
        let hits = (0..n).filter(|_| b.bernoulli_exp_neg_square(7, 20)).count();
        assert_rate(hits, n, (-2.45f64).exp());
        // e^{−7/3}: two e^{−1} coins and e^{−1/3}.
        let hits = (0..n).filter(|_| b.bernoulli_exp_neg(7, 3)).count();
        assert_rate(hits, n, (-7.0f64 / 3.0).exp());
        let m = n as f64 * (-2.2f64).exp();
        assert!((hits as f64 - m).abs() > 5.33 * m.sqrt(), "no power");
        // Huge denominators take the two-coin path.
        let big = 1u128 << 126;
        let hits = (0..n)
            .filter(|_| b.bernoulli_exp_neg_frac(big / 2, big))
            .count();
        assert_rate(hits, n, (-0.5f64).exp());
    }

    #[test]
    fn wide_division_is_exact() {
        for (a, bb) in [
            ((1u128 << 100) + 12345, (1u128 << 127) - 1),
            (u128::MAX, 3u128),
            (u128::MAX / 7, (1u128 << 90) + 77),
        ] {
            let (qhi, qlo, r) = div_square(a, bb);
            assert!(r < bb);
            // q·b + r == a², checked in 256-bit arithmetic.
            let (h1, l1) = mul_wide(qlo, bb);
            let (h2, l2) = mul_wide(qhi, bb);
            assert_eq!(h2, 0, "quotient·b overflows 256 bits");
            let (lo, c1) = l1.overflowing_add(r);
            let hi = h1 + l2 + c1 as u128;
            assert_eq!((hi, lo), mul_wide(a, a));
        }
        assert_eq!(mul_wide(u128::MAX, u128::MAX), (u128::MAX - 1, 1));
    }

    #[test]
    fn discrete_laplace_pmf() {
        let mut rng = ReleaseRng::seeded(3);
        let lap = DiscreteLaplace::from_ratio("scale", 5, 2).unwrap(); // b = 2.5
        let mut bits = Bits::new(&mut rng);
        let xs: Vec<i64> = (0..200_000).map(|_| lap.sample_bits(&mut bits)).collect();
        let w = |z: i64| (-(z.abs() as f64) / 2.5).exp();
        let (stat, df) = chi2(&xs, -15, 15, w, 200);
        assert!(stat < chi2_crit(df), "chi2 {stat} df {df}");
        let w_wrong = |z: i64| (-(z.abs() as f64) / 2.7).exp();
        let (stat, df) = chi2(&xs, -15, 15, w_wrong, 200);
        assert!(stat > chi2_crit(df), "no power: {stat}");
    }

    fn check_gaussian(sigma: f64, seed: u64, n: usize) {
        let g = DiscreteGaussian::new("sigma", sigma).unwrap();
        assert!(g.sigma() >= sigma && g.sigma() <= sigma * (1.0 + 1e-6));
        let mut rng = ReleaseRng::seeded(seed);
        let mut bits = Bits::new(&mut rng);
        let xs: Vec<i64> = (0..n).map(|_| g.sample_bits(&mut bits)).collect();
        let s = g.sigma();
        let range = (4.0 * s).ceil() as i64;
        let wide = (12.0 * s).ceil() as i64 + 2;
        if s < 30.0 {
            let w = |z: i64| (-((z * z) as f64) / (2.0 * s * s)).exp();
            let (stat, df) = chi2(&xs, -range, range, w, wide);
            assert!(stat < chi2_crit(df), "σ={sigma}: chi2 {stat} df {df}");
            let sw = s * 1.05;
            let w = |z: i64| (-((z * z) as f64) / (2.0 * sw * sw)).exp();
            let (stat, df) = chi2(&xs, -range, range, w, wide);
            assert!(stat > chi2_crit(df), "σ={sigma}: no power ({stat})");
        } else {
            // Large σ: KS against the exact discrete CDF (critical value
            // sqrt(ln(2/α)/(2n)) at α = 1e-6), and against a 5 % wider one.
            let ks = |sc: f64| {
                let w: Vec<f64> = (-wide..=wide)
                    .map(|z| (-((z * z) as f64) / (2.0 * sc * sc)).exp())
                    .collect();
                let tot: f64 = w.iter().sum();
                let mut sorted = xs.clone();
                sorted.sort_unstable();
                let nf = n as f64;
                let mut d = 0.0f64;
                let mut cdf = 0.0;
                let mut i = 0usize;
                for (j, z) in (-wide..=wide).enumerate() {
                    cdf += w[j] / tot;
                    while i < sorted.len() && sorted[i] <= z {
                        i += 1;
                    }
                    d = d.max((cdf - i as f64 / nf).abs());
                }
                d
            };
            let crit = ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt();
            let d = ks(s);
            assert!(d < crit, "σ={sigma}: KS {d} ≥ {crit}");
            assert!(ks(s * 1.05) > crit, "σ={sigma}: KS has no power");
        }
    }

    #[test]
    fn discrete_gaussian_pmf_small_and_rational_sigma() {
        check_gaussian(1.0, 11, 200_000);
        check_gaussian(0.6, 12, 200_000);
        check_gaussian(3.3, 13, 200_000);
    }

    #[test]
    fn discrete_gaussian_large_sigma() {
        check_gaussian(70_000.0, 14, 200_000);
        check_gaussian(1234.567, 15, 200_000);
        check_gaussian(100.0, 16, 200_000);
        check_gaussian(0.3, 17, 200_000);
    }

    /// The integer-σ configuration of the MNIST-scale release (σ = 2^17 grid units, den = 1),
    /// through the batch API and the all-core API: KS at α = 1e-6, and power against σ ± 5 %.
    #[test]
    fn integer_sigma_batch_and_parallel() {
        let g = DiscreteGaussian::from_ratio("sigma", 131_072, 1).unwrap();
        assert_eq!(g.sigma(), 131_072.0);
        let n = 200_000;
        let crit = ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt();
        let mut xs = vec![0i64; n];
        g.fill(&mut xs, &mut ReleaseRng::seeded(51));
        assert!(ks_dist(&xs, 131_072.0) < crit);
        assert!(ks_dist(&xs, 131_072.0 * 1.05) > crit);
        assert!(ks_dist(&xs, 131_072.0 / 1.05) > crit);
        // All cores: same distribution, and the same numbers as the blocks drawn in order.
        let streams = Streams::from_rng(&mut ReleaseRng::seeded(52));
        let mut ys = vec![0i64; n];
        g.fill_par(&mut ys, &streams, 784);
        assert!(ks_dist(&ys, 131_072.0) < crit);
        assert!(ks_dist(&ys, 131_072.0 * 1.05) > crit);
        let mut seq = vec![0i64; n];
        for (i, block) in seq.chunks_mut(784).enumerate() {
            g.fill(block, &mut streams.stream(i as u64));
        }
        assert_eq!(ys, seq);
        // The reference sampler (CKS20) agrees in distribution.
        let mut rng = ReleaseRng::seeded(53);
        let mut bits = Bits::new(&mut rng);
        let cks: Vec<i64> = (0..50_000).map(|_| g.sample_cks_bits(&mut bits)).collect();
        let crit50 = ((2.0f64 / 1e-6).ln() / (2.0 * 50_000f64)).sqrt();
        assert!(ks_dist(&cks, 131_072.0) < crit50);
    }

    #[test]
    fn validates_parameters() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e12, 1e-9] {
            let e = DiscreteGaussian::new("sigma-x", s).unwrap_err().to_string();
            assert!(e.contains("sigma-x"), "{e}");
        }
        assert!(DiscreteGaussian::from_ratio("s", 0, 1).is_err());
        assert!(DiscreteGaussian::from_ratio("s", u64::MAX, 1).is_err());
        assert!(DiscreteGaussian::from_ratio("s", (1 << 31) + 1, 1).is_err());
        assert!(DiscreteGaussian::from_ratio("s", 1, (1 << 31) + 1).is_err());
        assert!(DiscreteGaussian::from_ratio("s", 1 << 31, 1).is_ok());
        assert!(DiscreteLaplace::from_ratio("b", 0, 1).is_err());
        assert!(DiscreteLaplace::new("b", f64::NAN).is_err());
        let g = DiscreteGaussian::new("s", 2.5).unwrap();
        assert_eq!(g.ratio().0 as f64 / g.ratio().1 as f64, 2.5);
    }
}
