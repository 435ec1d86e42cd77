//! RDP of the Gaussian mechanism under sampling without replacement (Wang, Balle and
//! Kasiviswanathan, AISTATS 2019; "WBK").
//!
//! # Proof note
//!
//! Let M be the Gaussian mechanism with noise multiplier z (noise std / L2 sensitivity) applied
//! to a uniformly random subset of size m = q·n of an n-record dataset, under replace-one
//! adjacency. M's base RDP is ε(α) = α/(2z²). WBK Theorem 9 bounds the subsampled RDP at
//! integer α ≥ 2 by (1/(α−1))·ln A(α) with
//!
//! ```text
//! A(α) = 1 + q²·C(α,2)·min{4(e^{ε(2)} − 1), 2e^{ε(2)}} + Σ_{j=3}^{α} q^j·C(α,j)·T_j
//! ```
//!
//! * `paper` preset (the DP-CDA paper's Theorem 1, with its index typo fixed: the paper prints
//!   B(⌈j/2⌉) where B(2⌈j/2⌉) is meant):
//!   T_j = 4·√(B(2⌊j/2⌋)·B(2⌈j/2⌉)), where B(2m) = E[(L − 1)^{2m}] is the 2m-th central-ish
//!   moment of the privacy-loss ratio (see [`super::moments`]).
//! * `default` preset (WBK Theorem 27, the strengthened bound that Google's dp_accounting
//!   implements for `SampledWithoutReplacementDpEvent`): T_j = min{4·√(B(2⌊j/2⌋)·B(2⌈j/2⌉)),
//!   2·e^{(j−1)ε(j)}}. Each term is ≤ the paper's, so the default is never looser.
//!
//! Special cases: q = 0 gives 0 (nothing is looked at); q = 1 gives the plain Gaussian
//! α/(2z²), as in dp_accounting; z = ∞ gives 0; z ≤ 0 gives +∞.
//!
//! Both bounds are checked against `../shared/reference/rdp_wor_reference.json` (mpmath at 60
//! digits) to 1e-9 relative error in `tests/accountant_reference.rs`.
//!
//! # Numerics
//!
//! Everything is summed in log space; the moments never use the alternating sum. The result is
//! rounded up by a relative [`ROUND_UP`] to cover the floating-point error of the evaluation,
//! so the reported value is never below the exact bound. A term far below the largest of its
//! sum is replaced by its upper bound instead of being exponentiated (below e^{−45} of it), and a
//! thread keeps the rate-independent terms of its last few noise multipliers, which the
//! calibrations evaluate again and again; neither changes a value.

use super::moments::ln_b_even;
use super::recent::Recent;
use crate::error::{Error, Result};
use crate::math::DetFloat;
use std::cell::RefCell;
use std::rc::Rc;

/// Relative upward slack applied to every RDP value (covers f64 evaluation error, which is
/// below 1e-13 relative in all our checks).
pub const ROUND_UP: f64 = 1e-11;

/// Which of WBK's bounds to use for the j ≥ 3 terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorBound {
    /// The DP-CDA paper's Theorem 1 (WBK Theorem 9 with the B-moment terms), index typo fixed.
    Theorem9,
    /// WBK Theorem 27, the strengthened bound (dp_accounting's choice).
    Theorem27,
}

/// Rounds a non-negative quantity up by [`ROUND_UP`].
pub(crate) fn round_up(x: f64) -> f64 {
    if x > 0.0 && x.is_finite() {
        x * (1.0 + ROUND_UP)
    } else {
        x
    }
}

/// ln C(n, k) from a table of ln k!.
pub(crate) struct LnFactorials(Vec<f64>);

impl LnFactorials {
    pub(crate) fn new(max: u32) -> Self {
        let mut v = Vec::with_capacity(max as usize + 1);
        let mut acc = 0.0f64;
        v.push(0.0);
        for k in 1..=max {
            acc += f64::from(k).dln();
            v.push(acc);
        }
        LnFactorials(v)
    }
    pub(crate) fn ln_choose(&self, n: u32, k: u32) -> f64 {
        self.0[n as usize] - self.0[k as usize] - self.0[(n - k) as usize]
    }
}

/// A term of a log-sum-exp more than this far (in ln) below the largest is not evaluated:
/// each is below 2.9e-20 of the largest, so even 255 of them stay below 7.4e-18 of the sum,
/// under half an ulp of it. Each counts as [`SKIPPED_TERM`] instead, its upper bound, so in
/// exact arithmetic the sum is still never below the full one (in f64 the two agree to within
/// the rounding that [`ROUND_UP`] covers; `pruned_evaluation_returns_the_same_values_as_the_full_sum`
/// finds them bit for bit equal). In a 60,000-row readout, 5 in 6 of the exponentials that
/// were evaluated before were such terms.
const SKIP_BELOW: f64 = -45.0;

/// e^{SKIP_BELOW}, rounded up: the bound added for each skipped term.
const SKIPPED_TERM: f64 = 2.8625185805493937e-20;

/// A lower bound on ln B(2m) (−∞ where it says nothing).
///
/// x ↦ x^{2m} is convex, so (x − 1)^{2m} ≥ x^{2m} − 2m·x^{2m−1}; with x = L, the privacy-loss
/// ratio, and E[L^k] = e^{k(k−1)s²/2}: B(2m) ≥ e^{m(2m−1)s²}·(1 − 2m·e^{−(2m−1)s²}).
fn ln_b_floor(m: u32, s2: f64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let n = f64::from(2 * m);
    let r = n * (-(n - 1.0) * s2).dexp();
    if r < 1.0 {
        f64::from(m) * (n - 1.0) * s2 + (-r).dln_1p()
    } else {
        f64::NEG_INFINITY
    }
}

/// The largest RDP order a curve may be evaluated at.
pub const MAX_ORDER: u32 = 100_000;

/// Checks that every order is an integer ≥ 2 and returns the largest.
pub fn validate_orders(orders: &[u32]) -> Result<u32> {
    if orders.is_empty() {
        return Err(Error::param(
            "orders",
            "[]",
            "give at least one integer order ≥ 2, e.g. 2,3,8",
        ));
    }
    if let Some(&bad) = orders.iter().find(|&&a| a < 2) {
        return Err(Error::param(
            "orders",
            bad,
            "RDP orders must be integers ≥ 2",
        ));
    }
    if let Some(&bad) = orders.iter().find(|&&a| a > MAX_ORDER) {
        return Err(Error::param(
            "orders",
            bad,
            format!("orders above {MAX_ORDER} are not supported; use ≤ 1024"),
        ));
    }
    Ok(*orders.iter().max().expect("non-empty"))
}

/// RDP ε'(α) of the subsampled-without-replacement Gaussian at each integer order.
///
/// `q` is the sampling rate m/n in [0, 1]; `z` the noise multiplier (std / L2 sensitivity).
/// Values are rounded up (see [`ROUND_UP`]); +∞ where no finite bound exists; never NaN.
pub fn rdp_curve(q: f64, z: f64, orders: &[u32], bound: WorBound) -> Result<Vec<f64>> {
    Ok(rdp_curves(&[q], z, orders, bound)?.remove(0))
}

/// [`rdp_curve`] at several rates and one noise multiplier: the moments, which depend on z
/// alone, are evaluated once for all of them. The same values as one call per rate.
pub fn rdp_curves(qs: &[f64], z: f64, orders: &[u32], bound: WorBound) -> Result<Vec<Vec<f64>>> {
    let max_order = validate_orders(orders)?;
    if let Some(&q) = qs
        .iter()
        .find(|&&q| !(0.0..=1.0).contains(&q) || q.is_nan())
    {
        return Err(Error::param(
            "sampling rate",
            q,
            "the sampling rate (mix size / pool size) must lie in [0, 1]; make the mix l no larger than the smallest class",
        ));
    }
    if z.is_nan() {
        return Err(Error::param(
            "noise multiplier",
            z,
            "must be a positive number",
        ));
    }
    let s2 = 1.0 / (z * z);
    let mut terms: Option<Rc<WorTerms>> = None;
    qs.iter()
        .map(|&q| {
            Ok(if q == 0.0 || z == f64::INFINITY {
                vec![0.0; orders.len()]
            } else if z <= 0.0 {
                vec![f64::INFINITY; orders.len()]
            } else if q == 1.0 {
                orders
                    .iter()
                    .map(|&a| round_up(f64::from(a) * s2 / 2.0))
                    .collect()
            } else {
                terms
                    .get_or_insert_with(|| wor_terms(z, max_order, bound))
                    .curve(q, orders)
            })
        })
        .collect()
}

/// How many noise multipliers' [`WorTerms`] a thread keeps.
const RECENT_TERMS: usize = 8;

thread_local! {
    /// The terms of the last few noise multipliers (z's bits, the bound, the largest order),
    /// most recent last. Every calibration brackets from z = 1 by factors of 4, and the
    /// automatic l calibrates a dozen candidates in a row, so the same z comes back; its
    /// moments (one numerical integral per order) are the costly part.
    static RECENT: RefCell<Recent<(u64, WorBound, u32), Rc<WorTerms>>> =
        const { RefCell::new(Recent::new(RECENT_TERMS)) };
}

/// [`WorTerms::new`], or the same terms remembered on this thread (computed for these z and
/// bound, up to at least `max_order`: a term depends only on its own j).
fn wor_terms(z: f64, max_order: u32, bound: WorBound) -> Rc<WorTerms> {
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        // Keys: z's bits, the bound, the largest order the terms reach.
        if let Some(t) = r.find(|k| k.0 == z.to_bits() && k.1 == bound && k.2 >= max_order) {
            return t;
        }
        let t = Rc::new(WorTerms::new(z, max_order, bound));
        r.keep((z.to_bits(), bound, max_order), Rc::clone(&t));
        t
    })
}

/// Forgets the terms [`rdp_curves`] remembers on this thread (for benchmarks that repeat one
/// calibration).
pub fn forget_terms() {
    RECENT.with(|r| r.borrow_mut().clear());
}

/// The rate-independent part of the bound at one noise multiplier: ln T_j for every j.
struct WorTerms {
    lf: LnFactorials,
    /// ln of the j = 2 term's bracket, min{4(e^{s²} − 1), 2e^{s²}}.
    t2: f64,
    /// ln T_j for j = 3..=max (−∞ below 3).
    ln_t: Vec<f64>,
    /// j as f64, j = 0..=max (read beside the other tables, so the terms' loop vectorizes).
    j: Vec<f64>,
}

impl WorTerms {
    /// For a finite z > 0 and orders up to `max_order`.
    fn new(z: f64, max_order: u32, bound: WorBound) -> Self {
        let s2 = 1.0 / (z * z);
        // ln B(2m) for m = 1..=ceil(max/2), each evaluated at most once, and only where needed.
        let m_max = max_order.div_ceil(2);
        let mut ln_b: Vec<Option<f64>> = vec![None; m_max as usize + 1];
        ln_b[0] = Some(0.0);
        let mut ln_b_at =
            |m: u32| -> f64 { *ln_b[m as usize].get_or_insert_with(|| ln_b_even(2 * m, z)) };
        let ln4 = 4f64.dln();
        let ln2 = 2f64.dln();
        let t2 = (ln4 + s2.dexp_m1().dln()).min(ln2 + s2);
        let mut ln_t = vec![f64::NEG_INFINITY; max_order as usize + 1];
        for j in 3..=max_order {
            let (lo, hi) = (j / 2, j.div_ceil(2));
            let jf = f64::from(j);
            ln_t[j as usize] = match bound {
                WorBound::Theorem9 => ln4 + 0.5 * (ln_b_at(lo) + ln_b_at(hi)),
                WorBound::Theorem27 => {
                    let other = ln2 + (jf - 1.0) * jf * s2 / 2.0;
                    // Where a lower bound on the moment term already exceeds the other term,
                    // the minimum is the other term: the moments need not be evaluated (same
                    // value).
                    let floor = ln4 + 0.5 * (ln_b_floor(lo, s2) + ln_b_floor(hi, s2));
                    if floor > other + 1e-9 * other.abs().max(1.0) {
                        other
                    } else {
                        (ln4 + 0.5 * (ln_b_at(lo) + ln_b_at(hi))).min(other)
                    }
                }
            };
        }
        WorTerms {
            lf: LnFactorials::new(max_order),
            t2,
            ln_t,
            j: (0..=max_order).map(f64::from).collect(),
        }
    }

    /// The curve at rate q ∈ (0, 1).
    fn curve(&self, q: f64, orders: &[u32]) -> Vec<f64> {
        let (lf, ln_t) = (&self.lf, &self.ln_t);
        let ln_q = q.dln();
        let mut out = Vec::with_capacity(orders.len());
        let mut terms = Vec::with_capacity(ln_t.len());
        let lnf = &lf.0;
        for &alpha in orders {
            // Log-sum-exp over j = 2..=α: one exp per term.
            terms.clear();
            terms.push(2.0 * ln_q + lf.ln_choose(alpha, 2) + self.t2);
            // j = 3..=α, the same arithmetic as `j·ln q + ln_choose(α, j) + ln T_j`, over
            // slices (ln (α − j)! read backwards) so that it vectorizes.
            let a = alpha as usize;
            if a >= 3 {
                let (la, from) = (lnf[a], terms.len());
                terms.resize(from + a - 2, 0.0);
                let rest = lnf[..=a - 3].iter().rev();
                let js = (self.j[3..=a].iter().zip(&lnf[3..=a]))
                    .zip(rest)
                    .zip(&ln_t[3..=a]);
                for (out, (((&j, &lj), &lr), &t)) in terms[from..].iter_mut().zip(js) {
                    *out = j * ln_q + (la - lj - lr) + t;
                }
            }
            let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let ln_sum = if m.is_finite() {
                // Terms below e^{SKIP_BELOW} of the largest are not evaluated; their bound
                // e^{SKIP_BELOW} each is added instead, so the sum stays an upper bound.
                let mut skipped = 0u32;
                let mut sum = 0.0;
                for &t in &terms {
                    if t - m >= SKIP_BELOW {
                        sum += (t - m).dexp();
                    } else {
                        skipped += 1;
                    }
                }
                m + (sum + f64::from(skipped) * SKIPPED_TERM).dln()
            } else {
                m
            };
            // ln A = ln(1 + e^{ln_sum})
            let ln_a = if ln_sum > 0.0 {
                ln_sum + (-ln_sum).dexp().dln_1p()
            } else {
                ln_sum.dexp().dln_1p()
            };
            let v = ln_a / f64::from(alpha - 1);
            out.push(if v.is_nan() {
                f64::INFINITY
            } else {
                round_up(v)
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound as written, every moment and every term evaluated: the pruned evaluation
    /// must return the same f64s (the pruning only skips work whose result is discarded).
    fn rdp_curve_unpruned(q: f64, z: f64, orders: &[u32], bound: WorBound) -> Vec<f64> {
        let max_order = *orders.iter().max().unwrap();
        let s2 = 1.0 / (z * z);
        let ln_b: Vec<f64> = (0..=max_order.div_ceil(2))
            .map(|m| if m == 0 { 0.0 } else { ln_b_even(2 * m, z) })
            .collect();
        let lf = LnFactorials::new(max_order);
        let (ln_q, ln4, ln2) = (q.dln(), 4f64.dln(), 2f64.dln());
        let t2 = (ln4 + s2.dexp_m1().dln()).min(ln2 + s2);
        let ln_t = |j: u32| {
            let moment = ln4 + 0.5 * (ln_b[(j / 2) as usize] + ln_b[j.div_ceil(2) as usize]);
            let jf = f64::from(j);
            match bound {
                WorBound::Theorem9 => moment,
                WorBound::Theorem27 => moment.min(ln2 + (jf - 1.0) * jf * s2 / 2.0),
            }
        };
        orders
            .iter()
            .map(|&alpha| {
                let mut terms = vec![2.0 * ln_q + lf.ln_choose(alpha, 2) + t2];
                terms.extend(
                    (3..=alpha).map(|j| f64::from(j) * ln_q + lf.ln_choose(alpha, j) + ln_t(j)),
                );
                let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let ln_sum = m + terms.iter().map(|t| (t - m).dexp()).sum::<f64>().dln();
                let ln_a = if ln_sum > 0.0 {
                    ln_sum + (-ln_sum).dexp().dln_1p()
                } else {
                    ln_sum.dexp().dln_1p()
                };
                round_up(ln_a / f64::from(alpha - 1))
            })
            .collect()
    }

    #[test]
    fn pruned_evaluation_returns_the_same_values_as_the_full_sum() {
        let orders: Vec<u32> = (2..=256).collect();
        let mut pruned_moments = 0;
        for &q in &[1e-4, 0.004, 0.0082, 0.05, 0.3, 0.9] {
            for &z in &[0.2, 0.45, 0.7, 1.0, 1.6, 3.0, 8.0, 40.0] {
                for bound in [WorBound::Theorem9, WorBound::Theorem27] {
                    let got = rdp_curve(q, z, &orders, bound).unwrap();
                    let want = rdp_curve_unpruned(q, z, &orders, bound);
                    // …and at several rates at once (shared moments), the same values.
                    let many = rdp_curves(&[0.5 * q, q, 0.0, 1.0], z, &orders, bound).unwrap();
                    assert_eq!(many[1], got);
                    assert_eq!(many[0], rdp_curve(0.5 * q, z, &orders, bound).unwrap());
                    assert_eq!(many[2], rdp_curve(0.0, z, &orders, bound).unwrap());
                    assert_eq!(many[3], rdp_curve(1.0, z, &orders, bound).unwrap());
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(
                            g.to_bits(),
                            w.to_bits(),
                            "q={q} z={z} {bound:?} α={}",
                            orders[i]
                        );
                    }
                }
                let s2 = 1.0 / (z * z);
                pruned_moments += (2..=128u32)
                    .filter(|&m| {
                        let j = f64::from(2 * m);
                        let other = 2f64.dln() + (j - 1.0) * j * s2 / 2.0;
                        4f64.dln() + ln_b_floor(m, s2) > other + 1e-9 * other.abs().max(1.0)
                    })
                    .count();
            }
        }
        // The comparison covers configurations where moments are actually skipped.
        assert!(pruned_moments > 100, "{pruned_moments}");
    }

    /// The terms a thread remembers are the terms it would compute: served for the same z
    /// and bound up to at least the orders asked for, evicted after eight others, and the
    /// curves from them equal those computed on a fresh thread.
    #[test]
    fn remembered_terms_give_the_same_curves() {
        let b = WorBound::Theorem27;
        forget_terms();
        let first = wor_terms(0.8, 256, b);
        assert!(
            Rc::ptr_eq(&first, &wor_terms(0.8, 64, b)),
            "a smaller order is served"
        );
        assert!(
            !Rc::ptr_eq(&first, &wor_terms(0.8, 300, b)),
            "a larger one is computed"
        );
        assert!(!Rc::ptr_eq(&wor_terms(0.8, 64, WorBound::Theorem9), &first));
        assert!(!Rc::ptr_eq(&wor_terms(0.8 + 1e-16, 64, b), &first));
        let orders: Vec<u32> = (2..=100).collect();
        for z in [0.8, 0.5, 1.0, 4.0, 0.8] {
            let here = rdp_curves(&[0.01, 0.2], z, &orders, b).unwrap();
            let o = orders.clone();
            let fresh = std::thread::spawn(move || rdp_curves(&[0.01, 0.2], z, &o, b).unwrap())
                .join()
                .unwrap();
            assert_eq!(here, fresh, "z = {z}");
        }
        for k in 0..RECENT_TERMS {
            wor_terms(2.0 + k as f64, 64, b);
        }
        assert!(
            !Rc::ptr_eq(&first, &wor_terms(0.8, 64, b)),
            "evicted after eight others"
        );
        forget_terms();
        RECENT.with(|r| assert!(r.borrow().is_empty()));
    }

    #[test]
    fn moment_floor_is_below_the_moment() {
        for &z in &[0.1, 0.3, 0.5, 0.8, 1.0, 2.0, 5.0, 20.0] {
            let s2 = 1.0 / (z * z);
            for m in 1..=128u32 {
                let exact = ln_b_even(2 * m, z);
                let floor = ln_b_floor(m, s2);
                assert!(
                    floor <= exact + 1e-12 * exact.abs().max(1.0),
                    "z={z} m={m}: floor {floor} above ln B = {exact}"
                );
            }
            // …and close to it where the moment grows fastest (the floor is what prunes).
            let (exact, floor) = (ln_b_even(256, z), ln_b_floor(128, s2));
            if s2 * 255.0 > 20.0 {
                assert!(
                    (exact - floor).abs() < 1e-6 * exact,
                    "z={z}: {floor} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn special_cases() {
        let o = [2, 3, 10];
        assert_eq!(
            rdp_curve(0.0, 1.0, &o, WorBound::Theorem27).unwrap(),
            vec![0.0; 3]
        );
        assert_eq!(
            rdp_curve(0.1, f64::INFINITY, &o, WorBound::Theorem27).unwrap(),
            vec![0.0; 3]
        );
        assert!(rdp_curve(0.1, 0.0, &o, WorBound::Theorem27)
            .unwrap()
            .iter()
            .all(|v| v.is_infinite()));
        let full = rdp_curve(1.0, 2.0, &o, WorBound::Theorem9).unwrap();
        assert!((full[2] - 10.0 / 8.0).abs() < 1e-9);
        assert!(rdp_curve(1.5, 1.0, &o, WorBound::Theorem27).is_err());
        assert!(rdp_curve(f64::NAN, 1.0, &o, WorBound::Theorem27).is_err());
        assert!(rdp_curve(0.1, 1.0, &[1], WorBound::Theorem27).is_err());
        assert!(rdp_curve(0.1, 1.0, &[], WorBound::Theorem27).is_err());
    }

    #[test]
    fn strengthened_never_above_paper_and_below_plain_gaussian() {
        let orders: Vec<u32> = (2..=64).collect();
        for &(q, z) in &[
            (0.001, 0.5),
            (0.01, 1.0),
            (0.1, 2.0),
            (0.5, 0.7),
            (0.03, 8.0),
        ] {
            let p = rdp_curve(q, z, &orders, WorBound::Theorem9).unwrap();
            let s = rdp_curve(q, z, &orders, WorBound::Theorem27).unwrap();
            for (i, &a) in orders.iter().enumerate() {
                assert!(s[i] <= p[i] * (1.0 + 1e-15), "q={q} z={z} a={a}");
                assert!(s[i].is_finite() && s[i] >= 0.0);
            }
        }
    }

    #[test]
    fn monotone_in_noise_and_rate() {
        let orders: Vec<u32> = vec![2, 3, 5, 8, 16, 32, 64, 128, 256];
        for bound in [WorBound::Theorem9, WorBound::Theorem27] {
            let mut prev = vec![f64::INFINITY; orders.len()];
            for &z in &[0.3, 0.5, 0.8, 1.0, 1.5, 2.5, 4.0, 10.0, 100.0] {
                let c = rdp_curve(0.01, z, &orders, bound).unwrap();
                for i in 0..orders.len() {
                    assert!(
                        c[i] <= prev[i],
                        "{bound:?} not decreasing in z at order {}",
                        orders[i]
                    );
                }
                prev = c;
            }
            let lo = rdp_curve(0.001, 1.0, &orders, bound).unwrap();
            let hi = rdp_curve(0.01, 1.0, &orders, bound).unwrap();
            assert!(lo.iter().zip(&hi).all(|(a, b)| a <= b));
        }
    }

    #[test]
    fn extreme_parameters_are_finite_or_infinite_never_nan() {
        let orders: Vec<u32> = (2..=256).collect();
        for &(q, z) in &[
            (1e-9, 1e-3),
            (0.999999, 1e-2),
            (1e-6, 1e6),
            (0.5, 1e-4),
            (0.5, 1e4),
        ] {
            for bound in [WorBound::Theorem9, WorBound::Theorem27] {
                let c = rdp_curve(q, z, &orders, bound).unwrap();
                assert!(
                    c.iter().all(|v| !v.is_nan() && *v >= 0.0),
                    "q={q} z={z}: {c:?}"
                );
            }
        }
    }
}
