//! Exact noise for the GMM releases (issue 11, "Exact noise"): every Gaussian-noised
//! statistic is released on a grid with discrete Gaussian noise
//! ([`crate::mechanisms::noise::GridGaussian`]), every Laplace-noised one with discrete
//! Laplace noise ([`crate::mechanisms::noise::GridLaplace`]); the released numbers are
//! G·(integer), and everything the model holds is post-processing of them.
//!
//! # Proof note
//!
//! **Rows on a fine grid.** A unit-ball row z (clipped and scaled in floating point, so
//! ‖z‖₂ ≤ 1 holds only up to a few ulps) is replaced by u = trunc(z·2^30) ∈ ℤ^d (truncation
//! toward zero; the product by 2^30 is exact), then, while Σ u_i² > 2^60 (checked exactly in
//! integers), the largest |u_i| is decreased by one. Hence ‖2^{−30}u‖₂ ≤ 1 holds *exactly*, and
//! every sensitivity bound proven for rows in the unit ball holds for the rows 2^{−30}u. The
//! map z ↦ u is a deterministic function of one record, so neighbouring datasets map to
//! neighbouring datasets. (The shift toward zero is below 2^{−30} per coordinate.)
//!
//! **Exact statistics.** Per class, the count N_k, the sum S_k = Σ u (units 2^{−30}) and the
//! upper triangle of the second moment M_k = Σ u uᵀ (units 2^{−60}) are computed in i128
//! without any rounding ([`ClassStats`]; N < 2^30 keeps every intermediate below 2^127). Their
//! sensitivities are the exact real-number bounds of the unit ball.
//!
//! **Releasing an exact statistic** ([`release_fixed`]). For an exact statistic f (a vector
//! of integers times 2^{−s}) and the grid G = 2^k of `GridGaussian::covering(σ, Δ, m)`, the
//! release is G·(r + Z) with r = round(f/G) computed by an integer shift (half away from
//! zero) and Z the covering's discrete Gaussian. This is exactly the setting of Lemma 1 of
//! the noise module (rounding of an exact statistic of L2 sensitivity Δ over m coordinates),
//! so the grid sensitivity is Δ/G + √m and the covering's noise multiplier is at least σ/Δ:
//! the caller's accounting at (σ, Δ) is unchanged. The product (r + Z)·G is a deterministic
//! function of the integer r + Z (post-processing).
//!
//! **Releasing a floating-point statistic** ([`covering_gaussian`], [`covering_laplace`]).
//! Where the released statistic is a float function of the exact statistics (a class mean
//! S/N_k, a covariance (N_k·M − S Sᵀ)/(N_k(N_k − 1)), a weight N_k/N), each coordinate is a
//! correctly rounded operation on an exact rational, at most three roundings of relative size
//! u = 2^{−53}:
//! * weight fl(N_k/N) ∈ [0, 1]: one rounding, error ≤ 2^{−53};
//! * mean: fl(fl(S_i)·2^{−30}/N_k) with |μ_i| ≤ 1: two roundings, error ≤ 2.01·2^{−53} < 2^{−51};
//! * covariance entry: fl(fl(num)/fl(N_k(N_k − 1)))·2^{−60} with |Σ_ij| ≤ N_k/(N_k − 1) ≤ 1.5:
//!   three roundings, error ≤ 1.5·3.01·2^{−53} < 2^{−50}.
//!
//! A coordinate whose exact value is the same on both neighbours is computed identically.
//! So the computed statistic's L2 sensitivity is at most Δ + 2·2^{−50}·√m = Δ + √m·2^{−49}
//! over m coordinates, and its L1 sensitivity at most Δ₁ + m·2^{−49}. We use the margins
//! √m·2^{−48} and m·2^{−48} ([`float_margin_l2`], [`float_margin_l1`]), and further raise Δ by
//! the relative 2^{−40}, which covers the few ulps of rounding in the computation of Δ itself
//! (e.g. √2/N). The noise is raised by the same factor (σ' = σ·Δ'/Δ, rounded up) so that
//! σ'/Δ' ≥ σ/Δ: the accountant's noise multiplier is unchanged.
//!
//! **Laplace.** [`covering_laplace`] takes the grid G = 2^k with G·m ≤ Δ₁'·2^{−10} (coarser if
//! the scale in grid units would exceed 2^30) and the scale b with (Δ₁'/G + m)/b_G ≤ ε (Lemma 1
//! in L1, as in the noise module's proof note); it checks that bound on the sampler's actual
//! rational scale before use.

use super::linalg::Mat;
use crate::error::{Error, Result};
use crate::mechanisms::noise::{up, Bits, GridGaussian, GridLaplace};
use rand::RngCore;

/// Rows are put on the grid 2^{−ROW_BITS}.
pub const ROW_BITS: u32 = 30;
const ROW_ONE: i64 = 1 << ROW_BITS;
/// Largest N accepted by the exact statistics (every i128 intermediate stays below 2^127).
pub const MAX_ROWS: usize = 1 << 30;

/// A unit-ball row on the grid 2^{−30}: truncated toward zero, then ‖u‖₂ ≤ 2^30 enforced
/// exactly (see the proof note).
pub fn row_units(z: &[f64]) -> Vec<i64> {
    row_units_at(z, ROW_BITS)
}

/// [`row_units`] on the grid 2^{−bits} (1 ≤ bits ≤ 30): truncated toward zero, then
/// ‖u‖₂ ≤ 2^bits enforced exactly.
pub fn row_units_at(z: &[f64], bits: u32) -> Vec<i64> {
    debug_assert!((1..=ROW_BITS).contains(&bits));
    let one: i64 = 1 << bits;
    let mut u: Vec<i64> = z
        .iter()
        .map(|&x| {
            let v = x * one as f64; // exact (power of two); NaN → 0 below
            if v.is_nan() {
                0
            } else {
                (v as i64).clamp(-one, one) // `as` truncates toward zero
            }
        })
        .collect();
    let limit: u128 = 1u128 << (2 * bits);
    loop {
        let n2: u128 = u.iter().map(|&x| (x.unsigned_abs() as u128).pow(2)).sum();
        if n2 <= limit {
            return u;
        }
        let j = (0..u.len())
            .max_by_key(|&j| u[j].unsigned_abs())
            .unwrap_or(0);
        u[j] -= u[j].signum();
    }
}

/// Exact statistics of one class (rows on the grid 2^{−30}).
#[derive(Debug, Clone, PartialEq)]
pub struct ClassStats {
    /// N_k.
    pub count: usize,
    /// Σ u (units 2^{−30}).
    pub sum: Vec<i128>,
    /// Upper triangle of Σ u uᵀ, row-major (i ≤ j), units 2^{−60}.
    pub moment: Vec<i128>,
}

/// Index pairs (i, j), i ≤ j, in the order of [`ClassStats::moment`].
pub fn upper_pairs(d: usize) -> Vec<(usize, usize)> {
    (0..d).flat_map(|i| (i..d).map(move |j| (i, j))).collect()
}

/// The exact per-class statistics of unit-ball rows `z` (labels in 0..k).
///
/// Computed in parts of the rows (on all cores natively) whose integer sums are added: the
/// same numbers as one pass, whatever the parts. Within a part, each class's products are
/// first added in i64 and moved into the i128 sums every 7 rows of the class: on the
/// grid, ‖u‖₂ ≤ 2^30, so every product u_i·u_j is at most 2^60 in magnitude (2^59 off the
/// diagonal, as 2|u_i u_j| ≤ u_i² + u_j² ≤ 2^60), and 7 of them stay below 2^63.
/// (In wasm an i128 multiplication is a library call; this keeps it out of the inner loop.)
pub fn class_stats(
    z: &[Vec<f64>],
    labels: &[usize],
    k: usize,
    d: usize,
) -> Result<Vec<ClassStats>> {
    if z.len() >= MAX_ROWS {
        return Err(Error::Data(format!(
            "{} rows: the exact-noise GMM release accepts fewer than 2^30 rows",
            z.len()
        )));
    }
    let n = z.len().min(labels.len());
    let part = n.div_ceil(crate::par::threads()).max(1);
    let parts = crate::par::map_range(0..n.div_ceil(part), |p| {
        let rows = p * part..((p + 1) * part).min(n);
        class_stats_of(&z[rows.clone()], &labels[rows], k, d)
    });
    let merged = parts.into_iter().reduce(|mut st, part| {
        for (s, p) in st.iter_mut().zip(part) {
            s.count += p.count;
            s.sum.iter_mut().zip(&p.sum).for_each(|(a, b)| *a += b);
            s.moment
                .iter_mut()
                .zip(&p.moment)
                .for_each(|(a, b)| *a += b);
        }
        st
    });
    // No rows: every class empty.
    Ok(merged.unwrap_or_else(|| class_stats_of(&[], &[], k, d)))
}

/// Rows of one class whose products are added in i64 before they move to the i128 sums
/// (see [`class_stats`]).
const BATCH: usize = 7;

/// [`class_stats`] of one part of the rows, in one pass.
fn class_stats_of(z: &[Vec<f64>], labels: &[usize], k: usize, d: usize) -> Vec<ClassStats> {
    let m = d * (d + 1) / 2;
    let mut st = vec![
        ClassStats {
            count: 0,
            sum: vec![0; d],
            moment: vec![0; m],
        };
        k
    ];
    // Each class's i64 sums of up to BATCH rows' products, and how many rows they hold.
    let mut batch: Vec<(usize, Vec<i64>)> = vec![(0, vec![0; m]); k];
    let flush = |s: &mut ClassStats, b: &mut (usize, Vec<i64>)| {
        s.moment
            .iter_mut()
            .zip(b.1.iter_mut())
            .for_each(|(a, v)| *a += i128::from(std::mem::take(v)));
        b.0 = 0;
    };
    for (row, &c) in z.iter().zip(labels) {
        let u = row_units(row);
        let (s, b) = (&mut st[c], &mut batch[c]);
        s.count += 1;
        let mut t = 0;
        for i in 0..d {
            s.sum[i] += i128::from(u[i]);
            let ui = u[i];
            for (a, &uj) in b.1[t..t + d - i].iter_mut().zip(&u[i..]) {
                *a += ui * uj;
            }
            t += d - i;
        }
        b.0 += 1;
        if b.0 == BATCH {
            flush(s, b);
        }
    }
    for (s, b) in st.iter_mut().zip(batch.iter_mut()) {
        if b.0 > 0 {
            flush(s, b);
        }
    }
    st
}

impl ClassStats {
    /// The class mean S/N_k in f64 (each coordinate within 2^{−51} of the exact value).
    pub fn mean(&self) -> Vec<f64> {
        let n = self.count as f64;
        let inv = 1.0 / ROW_ONE as f64;
        self.sum.iter().map(|&s| (s as f64 * inv) / n).collect()
    }

    /// The unbiased covariance (N_k·M − S Sᵀ)/(N_k(N_k − 1)) in f64 (each entry within
    /// 2^{−50} of the exact value). Needs N_k ≥ 2.
    pub fn cov(&self) -> Mat {
        let d = self.sum.len();
        let n = self.count as i128;
        let den = (self.count as f64) * (self.count as f64 - 1.0);
        let inv = 1.0 / (1u128 << (2 * ROW_BITS)) as f64;
        let mut c = Mat::zeros(d);
        for (t, (i, j)) in upper_pairs(d).into_iter().enumerate() {
            let num = n * self.moment[t] - self.sum[i] * self.sum[j];
            let v = (num as f64 / den) * inv;
            c.set(i, j, v);
            c.set(j, i, v);
        }
        c
    }
}

/// L2 margin for the float rounding of a statistic over `m` coordinates (proof note).
pub fn float_margin_l2(m: usize) -> f64 {
    (m as f64).sqrt() * 2f64.powi(-48)
}

/// L1 margin for the float rounding of a statistic over `m` coordinates (proof note).
pub fn float_margin_l1(m: usize) -> f64 {
    m as f64 * 2f64.powi(-48)
}

/// Δ raised by the relative 2^{−40} and the margin, rounded up.
fn raised(sensitivity: f64, margin: f64) -> f64 {
    up(up(sensitivity * (1.0 + 2f64.powi(-40))) + margin)
}

/// The exact-noise drop-in for N(0, σ²) per coordinate on a float statistic of L2
/// sensitivity Δ over m coordinates, computed with the rounding margin `margin`.
pub fn covering_gaussian(
    sigma: f64,
    sensitivity: f64,
    margin: f64,
    coords: usize,
) -> Result<GridGaussian> {
    let d2 = raised(sensitivity, margin);
    let s2 = up(up(sigma / sensitivity) * d2);
    GridGaussian::covering(s2, d2, coords)
}

/// The exact-noise drop-in for (ε, 0)-DP Laplace noise on a float statistic of L1
/// sensitivity Δ₁ over m coordinates, computed with the rounding margin `margin`.
pub fn covering_laplace(
    epsilon: f64,
    l1_sensitivity: f64,
    margin: f64,
    coords: usize,
) -> Result<GridLaplace> {
    let d1 = raised(l1_sensitivity, margin);
    let m = coords.max(1) as f64;
    let mut g = 1.0f64;
    while g * m > d1 / 1024.0 {
        g *= 0.5;
    }
    while g * 2.0 * m <= d1 / 1024.0 {
        g *= 2.0;
    }
    let mut b = up((d1 + g * m) / epsilon);
    while b / g > (1u64 << 30) as f64 {
        g *= 2.0;
        b = up((d1 + g * m) / epsilon);
    }
    for _ in 0..64 {
        let gl = GridLaplace::new(b, g)?;
        if gl.epsilon(d1, coords) <= epsilon {
            return Ok(gl);
        }
        b = up(b * (1.0 + 1e-12));
    }
    Err(Error::Data(format!(
        "internal: no exact Laplace scale meets ε = {epsilon} at sensitivity {l1_sensitivity}"
    )))
}

/// k with g = 2^k (g a normal power of two).
fn grid_exponent(g: f64) -> i32 {
    ((g.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// round(v / 2^s), half away from zero, exactly (s ≥ 1).
fn round_shift(v: i128, s: u32) -> i128 {
    if s >= 127 {
        return 0;
    }
    let half = 1i128 << (s - 1);
    let q = (v.unsigned_abs() + half as u128) >> s;
    let q = q as i128;
    if v < 0 {
        -q
    } else {
        q
    }
}

/// round(v·2^{−frac_bits}/G) for the grid G = 2^k, exactly.
fn to_grid(v: i128, frac_bits: u32, g: f64) -> Result<i128> {
    let s = frac_bits as i32 + grid_exponent(g);
    if s > 0 {
        Ok(round_shift(v, s as u32))
    } else {
        1i128
            .checked_shl((-s) as u32)
            .and_then(|p| v.checked_mul(p))
            .ok_or_else(|| Error::Data("internal: a statistic left the range of the grid".into()))
    }
}

/// Releases the exact statistic `vals`·2^{−frac_bits} as G·(round(·/G) + Z) with the grid and
/// the discrete Gaussian of `gg` (see the proof note).
pub fn release_fixed<R: RngCore + ?Sized>(
    vals: &[i128],
    frac_bits: u32,
    gg: &GridGaussian,
    rng: &mut R,
) -> Result<Vec<f64>> {
    let g = gg.grid();
    let mut noise = vec![0i64; vals.len()];
    gg.sampler().fill_bits(&mut noise, &mut Bits::new(rng));
    vals.iter()
        .zip(&noise)
        .map(|(&v, &z)| Ok((to_grid(v, frac_bits, g)? + z as i128) as f64 * g))
        .collect()
}

/// Whether every entry of `xs` is an integer multiple of the grid `g` (for tests).
pub fn on_grid(xs: &[f64], g: f64) -> bool {
    xs.iter().all(|&x| {
        let u = x / g;
        u.is_finite() && u == u.trunc()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;
    use rand::Rng;

    #[test]
    fn rows_land_in_the_unit_ball_exactly_and_move_toward_zero() {
        let mut rng = ReleaseRng::seeded(11);
        for d in [1usize, 2, 5, 17] {
            for _ in 0..2000 {
                let v: Vec<f64> = (0..d).map(|_| rng.gen::<f64>() * 2.0 - 1.0).collect();
                let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
                // norm exactly 1 in floating point (possibly a few ulps above in reality)
                let z: Vec<f64> = v.iter().map(|x| x / n).collect();
                let u = row_units(&z);
                let n2: u128 = u.iter().map(|&x| (x.unsigned_abs() as u128).pow(2)).sum();
                assert!(n2 <= 1u128 << 60, "{z:?}");
                for (a, b) in z.iter().zip(&u) {
                    let y = *b as f64 / ROW_ONE as f64;
                    assert!(y.abs() <= a.abs() && (a - y).abs() < 3.0 / ROW_ONE as f64);
                }
            }
        }
        // a row above the ball by a visible amount is brought back inside
        let u = row_units(&[1.0, 1e-3]);
        assert!(u[0] < ROW_ONE);
        assert_eq!(row_units(&[f64::NAN, 2.0]), vec![0, ROW_ONE]);
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_shift(5, 1), 3);
        assert_eq!(round_shift(-5, 1), -3);
        assert_eq!(round_shift(4, 2), 1);
        assert_eq!(round_shift(6, 2), 2);
        assert_eq!(round_shift(-6, 2), -2);
        assert_eq!(round_shift(-5, 2), -1);
        assert_eq!(to_grid(3, 0, 0.25).unwrap(), 12);
        assert_eq!(to_grid(3 << 30, 30, 2.0).unwrap(), 2);
    }

    /// Mean and covariance from the exact statistics agree with a direct two-pass fit.
    #[test]
    fn statistics_match_a_direct_fit() {
        let mut rng = ReleaseRng::seeded(12);
        let d = 3;
        let z: Vec<Vec<f64>> = (0..500)
            .map(|_| (0..d).map(|_| rng.gen::<f64>() * 0.5 - 0.2).collect())
            .collect();
        let labels: Vec<usize> = (0..500).map(|i| i % 2).collect();
        let st = class_stats(&z, &labels, 2, d).unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        let fits = super::super::fit::fit_classes(&z, &labels, &names, d).unwrap();
        for c in 0..2 {
            assert_eq!(st[c].count, 250);
            for (a, b) in st[c].mean().iter().zip(&fits[c].mean) {
                assert!((a - b).abs() < 1e-8, "{a} {b}");
            }
            let cv = st[c].cov();
            for i in 0..d {
                for j in 0..d {
                    assert!((cv.get(i, j) - fits[c].cov.get(i, j)).abs() < 1e-8);
                }
            }
        }
    }

    /// The batched sums are the plain i128 sums, at the largest products the grid allows
    /// (rows of norm 1 on one axis, or split between two: each batch then holds 7 products
    /// of 2^60 or 2^59), in one class and spread over several.
    #[test]
    fn batched_sums_are_the_exact_sums_at_the_largest_products() {
        let mut rng = ReleaseRng::seeded(31);
        let d = 5;
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let mut z: Vec<Vec<f64>> = Vec::new();
        for i in 0..200 {
            z.push(match i % 4 {
                0 => vec![1.0, 0.0, 0.0, 0.0, 0.0],
                1 => vec![-1.0, 0.0, 0.0, 0.0, 0.0],
                2 => vec![0.0, h, -h, 0.0, 0.0],
                _ => {
                    let r: Vec<f64> = (0..d).map(|_| rng.gen::<f64>() - 0.5).collect();
                    let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
                    r.iter().map(|v| v / norm).collect()
                }
            });
        }
        for (labels, k) in [
            (vec![0usize; 200], 1),
            ((0..200).map(|i| i % 3).collect(), 3),
        ] {
            let st = class_stats(&z, &labels, k, d).unwrap();
            for c in 0..k {
                let (mut count, mut sum, mut moment) = (0, vec![0i128; d], Vec::new());
                moment.resize(d * (d + 1) / 2, 0i128);
                for (row, _) in z.iter().zip(&labels).filter(|(_, &l)| l == c) {
                    let u = row_units(row);
                    count += 1;
                    let mut t = 0;
                    for i in 0..d {
                        sum[i] += u[i] as i128;
                        for j in i..d {
                            moment[t] += u[i] as i128 * u[j] as i128;
                            t += 1;
                        }
                    }
                }
                assert_eq!(st[c].count, count);
                assert_eq!(st[c].sum, sum);
                assert_eq!(st[c].moment, moment);
                // Beyond i64: 50 rows of 2^60 on the first diagonal entry.
                if k == 1 {
                    assert!(moment[0] > i128::from(i64::MAX));
                }
            }
        }
    }

    #[test]
    fn fixed_release_is_on_the_grid_with_the_right_noise() {
        let gg = GridGaussian::covering(0.01, 2.0, 4).unwrap();
        assert!(gg.sigma() >= 0.01);
        let mut rng = ReleaseRng::seeded(13);
        let n = 200_000;
        let v = 123_456_789i128;
        let out = release_fixed(&vec![v; n], ROW_BITS, &gg, &mut rng).unwrap();
        assert!(on_grid(&out, gg.grid()));
        let center = to_grid(v, ROW_BITS, gg.grid()).unwrap() as i64;
        let z: Vec<i64> = out
            .iter()
            .map(|x| (x / gg.grid()) as i64 - center)
            .collect();
        let crit = ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt();
        let s = gg.sigma_units();
        assert!(
            crate::mechanisms::noise::ks_discrete_gaussian(&z, s) < crit,
            "KS {} ≥ {crit}",
            crate::mechanisms::noise::ks_discrete_gaussian(&z, s)
        );
        assert!(
            crate::mechanisms::noise::ks_discrete_gaussian(&z, s * 1.05) > crit,
            "5 % scale error not detected"
        );
    }

    #[test]
    fn covering_keeps_the_noise_multiplier() {
        for &(s, d, m) in &[(0.3, 2.0, 3usize), (1e-4, 0.01, 100), (50.0, 1.0, 1)] {
            let g = covering_gaussian(s, d, float_margin_l2(m), m).unwrap();
            assert!(g.noise_multiplier() >= s / d, "{s} {d} {m}");
            assert!(g.sigma() <= s * 1.002);
        }
        for &(e, d, m) in &[(0.3, 2.0, 3usize), (5.0, 0.01, 100), (0.01, 1.0, 1)] {
            let l = covering_laplace(e, d, float_margin_l1(m), m).unwrap();
            assert!(l.epsilon(d + float_margin_l1(m), m) <= e);
            assert!(l.scale_units() * l.grid() <= d / e * 1.002, "{e} {d} {m}");
        }
    }
}
