//! Rigorous bounds on e^{−a/b} (a, b integers) in fixed point of any precision, in exact
//! integer arithmetic. Used to build the discrete Gaussian's tables and to resolve, exactly,
//! the rare comparisons that 64 random bits leave undecided ([`super::table`]).
//!
//! # Proof note
//!
//! Every quantity is a natural number N standing for N/2^W. Each operation is done twice,
//! once rounding down (floor) and once up (ceil); since every operand is ≥ 0 and every
//! operation used (+, ·, division by a positive integer, halving) is monotone in its
//! operands, a lower bound computed from lower bounds with floors is a lower bound, and
//! likewise for upper bounds with ceilings. No other approximation is made.
//!
//! **Fractional part (Leibniz).** For 0 ≤ f ≤ 1 the terms T_k = f^k/k! are non-increasing
//! (T_{k+1} = T_k·f/(k+1) ≤ T_k) and tend to 0, so the partial sums of
//! e^{−f} = Σ (−1)^k T_k bracket it: S_{2m+1} ≤ e^{−f} ≤ S_{2m} for every m. With
//! T_k^lo ≤ T_k ≤ T_k^hi (computed by T_k^lo = ⌊⌊T_{k−1}^lo·a/b⌋/k⌋ and the ceiling twin;
//! ⌊⌊x/b⌋/k⌋ = ⌊x/(bk)⌋), S_{2m+1} ≥ Σ_{even k ≤ 2m} T_k^lo − Σ_{odd k ≤ 2m+1} T_k^hi and
//! S_{2m} ≤ Σ_{even k ≤ 2m} T_k^hi − Σ_{odd k ≤ 2m−1} T_k^lo (a negative lower bound is
//! replaced by 0, also a lower bound).
//!
//! **Integer part.** e^{−q} = (e^{−1})^q, by square-and-multiply on the bounds of e^{−1}
//! (the series with f = 1), each product floored (lower) or ceiled (upper) back to W bits.
//!
//! **Width.** Every floor/ceil moves a bound by at most one unit of 2^{−W}; there are
//! O(W) of them, each amplified at most by the q-fold product's factor (≤ q + 1 for bounds
//! ≤ 1), so the width is at most (W + 1)²·(q + 1)·2^{−W + 2}, which tends to 0 as W grows:
//! comparisons with a random number resolve with probability 1 (they are only used on
//! prefixes of a uniform real, which equals a bound with probability 0).

use std::cmp::Ordering;

/// A natural number in base 2^64, little-endian, without trailing zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Nat(Vec<u64>);

impl Nat {
    pub(crate) fn zero() -> Self {
        Nat(Vec::new())
    }

    pub(crate) fn from_u128(x: u128) -> Self {
        let mut n = Nat(vec![x as u64, (x >> 64) as u64]);
        n.trim();
        n
    }

    /// 2^k.
    pub(crate) fn pow2(k: u32) -> Self {
        let mut v = vec![0u64; (k / 64) as usize + 1];
        v[(k / 64) as usize] = 1u64 << (k % 64);
        Nat(v)
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The value if it fits in u128.
    pub(crate) fn to_u128(&self) -> Option<u128> {
        match self.0.len() {
            0 => Some(0),
            1 => Some(self.0[0] as u128),
            2 => Some(self.0[0] as u128 | (self.0[1] as u128) << 64),
            _ => None,
        }
    }

    pub(crate) fn add(&self, o: &Nat) -> Nat {
        let n = self.0.len().max(o.0.len());
        let mut v = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let a = *self.0.get(i).unwrap_or(&0);
            let b = *o.0.get(i).unwrap_or(&0);
            let (s1, c1) = a.overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(carry);
            v.push(s2);
            carry = (c1 as u64) + (c2 as u64);
        }
        v.push(carry);
        let mut r = Nat(v);
        r.trim();
        r
    }

    /// self − o, or None when o > self.
    pub(crate) fn checked_sub(&self, o: &Nat) -> Option<Nat> {
        if self.cmp_nat(o) == Ordering::Less {
            return None;
        }
        let mut v = Vec::with_capacity(self.0.len());
        let mut borrow = 0u64;
        for i in 0..self.0.len() {
            let a = self.0[i];
            let b = *o.0.get(i).unwrap_or(&0);
            let (d1, b1) = a.overflowing_sub(b);
            let (d2, b2) = d1.overflowing_sub(borrow);
            v.push(d2);
            borrow = (b1 as u64) + (b2 as u64);
        }
        let mut r = Nat(v);
        r.trim();
        Some(r)
    }

    pub(crate) fn cmp_nat(&self, o: &Nat) -> Ordering {
        if self.0.len() != o.0.len() {
            return self.0.len().cmp(&o.0.len());
        }
        for i in (0..self.0.len()).rev() {
            match self.0[i].cmp(&o.0[i]) {
                Ordering::Equal => {}
                c => return c,
            }
        }
        Ordering::Equal
    }

    pub(crate) fn mul_u64(&self, m: u64) -> Nat {
        let mut v = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u128;
        for &a in &self.0 {
            let p = a as u128 * m as u128 + carry;
            v.push(p as u64);
            carry = p >> 64;
        }
        v.push(carry as u64);
        let mut r = Nat(v);
        r.trim();
        r
    }

    pub(crate) fn mul(&self, o: &Nat) -> Nat {
        if self.is_zero() || o.is_zero() {
            return Nat::zero();
        }
        let mut v = vec![0u64; self.0.len() + o.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in o.0.iter().enumerate() {
                let t = a as u128 * b as u128 + v[i + j] as u128 + carry;
                v[i + j] = t as u64;
                carry = t >> 64;
            }
            let mut k = i + o.0.len();
            while carry != 0 {
                let t = v[k] as u128 + carry;
                v[k] = t as u64;
                carry = t >> 64;
                k += 1;
            }
        }
        let mut r = Nat(v);
        r.trim();
        r
    }

    /// (⌊self/d⌋, self mod d) for d ≥ 1.
    pub(crate) fn divrem_u64(&self, d: u64) -> (Nat, u64) {
        debug_assert!(d > 0);
        let mut v = vec![0u64; self.0.len()];
        let mut r = 0u128;
        for i in (0..self.0.len()).rev() {
            let cur = (r << 64) | self.0[i] as u128;
            v[i] = (cur / d as u128) as u64;
            r = cur % d as u128;
        }
        let mut q = Nat(v);
        q.trim();
        (q, r as u64)
    }

    /// ⌊self/d⌋ (up = false) or ⌈self/d⌉ (up = true).
    pub(crate) fn div_u64(&self, d: u64, up: bool) -> Nat {
        let (q, r) = self.divrem_u64(d);
        if up && r != 0 {
            q.add(&Nat::from_u128(1))
        } else {
            q
        }
    }

    pub(crate) fn shl(&self, k: u32) -> Nat {
        if self.is_zero() {
            return Nat::zero();
        }
        let limbs = (k / 64) as usize;
        let bits = k % 64;
        let mut v = vec![0u64; limbs];
        if bits == 0 {
            v.extend_from_slice(&self.0);
        } else {
            let mut carry = 0u64;
            for &a in &self.0 {
                v.push((a << bits) | carry);
                carry = a >> (64 - bits);
            }
            v.push(carry);
        }
        let mut r = Nat(v);
        r.trim();
        r
    }

    /// ⌊self/2^k⌋ (up = false) or ⌈self/2^k⌉ (up = true).
    pub(crate) fn shr(&self, k: u32, up: bool) -> Nat {
        let limbs = (k / 64) as usize;
        let bits = k % 64;
        if limbs >= self.0.len() {
            return if up && !self.is_zero() {
                Nat::from_u128(1)
            } else {
                Nat::zero()
            };
        }
        let mut lost = self.0[..limbs].iter().any(|&x| x != 0);
        let src = &self.0[limbs..];
        let mut v = Vec::with_capacity(src.len());
        if bits == 0 {
            v.extend_from_slice(src);
        } else {
            lost |= src[0] & ((1u64 << bits) - 1) != 0;
            for i in 0..src.len() {
                let hi = if i + 1 < src.len() {
                    src[i + 1] << (64 - bits)
                } else {
                    0
                };
                v.push((src[i] >> bits) | hi);
            }
        }
        let mut r = Nat(v);
        r.trim();
        if up && lost {
            r.add(&Nat::from_u128(1))
        } else {
            r
        }
    }
}

/// Bounds (lo, hi) with lo ≤ e^{−a/b}·2^w ≤ hi, for a ≤ b, b ≥ 1 (the Leibniz bracket).
fn exp_neg_frac(a: u64, b: u64, w: u32) -> (Nat, Nat) {
    debug_assert!(a <= b && b > 0);
    let one = Nat::pow2(w);
    if a == 0 {
        return (one.clone(), one);
    }
    let (mut tlo, mut thi) = (one.clone(), one.clone());
    let (mut even_lo, mut even_hi) = (one.clone(), one);
    let (mut odd_lo, mut odd_hi) = (Nat::zero(), Nat::zero());
    let mut k = 1u64;
    loop {
        tlo = tlo.mul_u64(a).div_u64(b, false).div_u64(k, false);
        thi = thi.mul_u64(a).div_u64(b, true).div_u64(k, true);
        let odd = k % 2 == 1;
        if odd {
            odd_lo = odd_lo.add(&tlo);
            odd_hi = odd_hi.add(&thi);
        } else {
            even_lo = even_lo.add(&tlo);
            even_hi = even_hi.add(&thi);
        }
        // Stop after an odd index once the terms are at most one unit.
        if odd && thi.cmp_nat(&Nat::from_u128(1)) != Ordering::Greater {
            break;
        }
        k += 1;
    }
    // k odd: lower bound S_k = Σ_{even ≤ k−1} − Σ_{odd ≤ k}; upper bound S_{k−1} =
    // Σ_{even ≤ k−1} − Σ_{odd ≤ k−2} (odd sums without the last term, added back by
    // subtracting it from odd_lo).
    let lo = even_lo.checked_sub(&odd_hi).unwrap_or_else(Nat::zero);
    let odd_lo_prev = odd_lo.checked_sub(&tlo).unwrap_or_else(Nat::zero);
    let hi = even_hi
        .checked_sub(&odd_lo_prev)
        .expect("upper partial sum is positive");
    (lo, hi)
}

/// Bounds (lo, hi) with lo ≤ e^{−a/b}·2^w ≤ hi, for any a ≥ 0 and b ≥ 1.
pub(crate) fn exp_neg(a: u128, b: u64, w: u32) -> (Nat, Nat) {
    debug_assert!(b > 0);
    let q = a / b as u128;
    let r = (a % b as u128) as u64;
    let (mut lo, mut hi) = exp_neg_frac(r, b, w);
    if q > 0 {
        let (e_lo, e_hi) = exp_neg_frac(1, 1, w);
        // Square-and-multiply over the bits of q, most significant first.
        let (mut p_lo, mut p_hi) = (Nat::pow2(w), Nat::pow2(w));
        for i in (0..(128 - q.leading_zeros())).rev() {
            p_lo = p_lo.mul(&p_lo).shr(w, false);
            p_hi = p_hi.mul(&p_hi).shr(w, true);
            if (q >> i) & 1 == 1 {
                p_lo = p_lo.mul(&e_lo).shr(w, false);
                p_hi = p_hi.mul(&e_hi).shr(w, true);
            }
        }
        lo = lo.mul(&p_lo).shr(w, false);
        hi = hi.mul(&p_hi).shr(w, true);
    }
    (lo, hi)
}

/// Bounds (lo, hi) on m·2^s·e^{−a/b}/n·2^p for m, n ≥ 1, computed with `guard` extra bits.
pub(crate) fn scaled_exp_neg(
    m: u64,
    s: u32,
    n: u64,
    a: u128,
    b: u64,
    p: u32,
    guard: u32,
) -> (Nat, Nat) {
    let w = p + guard;
    let (lo, hi) = exp_neg(a, b, w);
    let lo = lo.mul_u64(m).shl(s).div_u64(n, false).shr(guard, false);
    let hi = hi.mul_u64(m).shl(s).div_u64(n, true).shr(guard, true);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(n: &Nat) -> String {
        let mut s = String::new();
        for (i, l) in n.0.iter().rev().enumerate() {
            if i == 0 {
                s.push_str(&format!("{l:x}"));
            } else {
                s.push_str(&format!("{l:016x}"));
            }
        }
        s
    }

    /// ⌊e^{−x}·2^256⌋ in hexadecimal, computed independently with Python's `decimal` module
    /// at 200 significant digits (`int((-x).exp() * 2**256)` under `getcontext().prec = 200`).
    const REF: [(u128, u64, &str); 5] = [
        (
            1,
            1,
            "5e2d58d8b3bcdf1abadec7829054f90dda9805aab56c77333024b9d0a507daed",
        ),
        (
            1,
            2,
            "9b4597e37cb04ff3d675a35530cdd767e347bf8ad0e80abbce4ae95861014318",
        ),
        (
            3,
            7,
            "a6c4b5c76ed590fa515b4c45aec303f48a4e6ed9ba579db051ab796e1b2f187c",
        ),
        (
            49,
            20,
            "16175623de8d4b294192920c5a9857efcfb12abc82ff799c619484b7c1b14172",
        ),
        (1000, 7, "3bbe52311a865"),
    ];

    #[test]
    fn nat_arithmetic() {
        let a = Nat::from_u128(u128::MAX);
        let b = a.mul(&a);
        // (2^128 − 1)² = 2^256 − 2^129 + 1.
        let expect = Nat::pow2(256)
            .checked_sub(&Nat::pow2(129))
            .unwrap()
            .add(&Nat::from_u128(1));
        assert_eq!(b, expect);
        assert_eq!(b.divrem_u64(3).1, 0); // 2^128 − 1 ≡ 0 (mod 3)
        assert_eq!(Nat::from_u128(7).shr(1, true), Nat::from_u128(4));
        assert_eq!(Nat::from_u128(7).shr(1, false), Nat::from_u128(3));
        assert_eq!(Nat::from_u128(8).shr(3, true), Nat::from_u128(1));
        assert_eq!(
            Nat::from_u128(5).shl(130).shr(130, false),
            Nat::from_u128(5)
        );
        assert!(Nat::from_u128(3).checked_sub(&Nat::from_u128(4)).is_none());
        assert_eq!(Nat::from_u128(10).div_u64(4, true), Nat::from_u128(3));
    }

    #[test]
    fn exp_bounds_bracket_reference_values() {
        let _ = hex;
        for &(a, b, want) in REF.iter() {
            let reference = parse_hex(want);
            for w in [64u32, 200, 256, 300] {
                let (lo, hi) = exp_neg(a, b, w);
                // Compare at 2^256: scale the bounds (or the reference) to a common exponent.
                let (lo, hi, r_lo, r_hi) = if w >= 256 {
                    (
                        lo,
                        hi,
                        reference.shl(w - 256),
                        reference.add(&Nat::from_u128(1)).shl(w - 256),
                    )
                } else {
                    (
                        lo.shl(256 - w),
                        hi.shl(256 - w),
                        reference.clone(),
                        reference.add(&Nat::from_u128(1)),
                    )
                };
                // lo ≤ true < reference + 1 and hi ≥ true ≥ reference.
                assert!(lo.cmp_nat(&r_hi) == Ordering::Less, "lo {a}/{b} w={w}");
                assert!(hi.cmp_nat(&r_lo) != Ordering::Less, "hi {a}/{b} w={w}");
                // Tight: width ≤ 2^-(w−32).
                let width = hi.checked_sub(&lo).unwrap();
                assert!(
                    width.cmp_nat(&Nat::pow2(256 - w.min(256) + 32)) == Ordering::Less,
                    "width {a}/{b} w={w}"
                );
            }
        }
    }

    fn parse_hex(s: &str) -> Nat {
        let mut n = Nat::zero();
        for c in s.chars() {
            n = n
                .mul_u64(16)
                .add(&Nat::from_u128(c.to_digit(16).unwrap() as u128));
        }
        n
    }
}
