//! Encoding that keeps the signal: every row is scaled to a common L2 norm c (not only the
//! long ones shrunk), and the scale is restored after the noise from a DP statistic.
//!
#![doc = include_str!("rownorm.proof.md")]

use crate::error::Result;
use crate::preprocess::clip::check_clip;
use crate::preprocess::encode::{ColumnCodec, FeatureSpace};

/// The factor by which the replace-one distance of two encoded rows of norm ≤ c is below 2c
/// when every entry is non-negative: √2 / 2.
pub const NONNEG_SENSITIVITY_FACTOR: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// The clip norm to hand to an accountant that charges Δx = 2·c_acc/l, so that it charges
/// √2·c/l for non-negative rows of norm ≤ c (see the proof note), and 2c/l otherwise.
pub fn accounting_clip(c: f64, nonnegative: bool) -> f64 {
    if nonnegative {
        c * NONNEG_SENSITIVITY_FACTOR
    } else {
        c
    }
}

/// D of the proof note: the diameter of the encoded box [0, 1]^numeric × one-hot segments,
/// from the feature space's codecs (public: the column types and released levels).
pub fn box_diameter(space: &FeatureSpace) -> f64 {
    let sq: usize = space
        .codecs
        .iter()
        .map(|c| match c {
            ColumnCodec::Label => 0,
            ColumnCodec::Numeric { .. } => column_diameter_sq(None),
            ColumnCodec::Categorical { levels, .. } => column_diameter_sq(Some(levels.len())),
        })
        .sum();
    (sq as f64).sqrt()
}

/// One feature column's share of D²: 1 for a numeric column ([0, 1]); for a categorical
/// one with `levels` (its one-hot segment), 2 — two rows' hot entries differ in two places —
/// or 1 with a single level, 0 with none.
pub fn column_diameter_sq(categorical_levels: Option<usize>) -> usize {
    match categorical_levels {
        None => 1,
        Some(levels) => levels.min(2),
    }
}

/// The clip norm to hand to an accountant that charges Δx = 2·c_acc/l for rows in the box
/// of the proof note scaled by c/M: c·D/(2M) (with a relative margin of 1e-6 for the f32
/// rounding of the scaled entries), never more than `accounting_clip(c, true)`.
pub fn box_accounting_clip(c: f64, max_norm: f64, diameter: f64) -> f64 {
    let nonneg = accounting_clip(c, true);
    if !(max_norm > 0.0 && diameter.is_finite() && diameter >= 0.0) {
        return nonneg;
    }
    (c * diameter / (2.0 * max_norm) * (1.0 + 1e-6)).min(nonneg)
}

/// Scales each of the `features.len() / d` rows to L2 norm c (up to one f32 ulp below), in
/// place; zero rows stay zero. Returns the number of zero rows.
pub fn scale_rows_to_norm(features: &mut [f32], d: usize, c: f64) -> Result<usize> {
    check_clip(c)?;
    if d == 0 {
        return Ok(0);
    }
    let mut zeros = 0;
    for row in features.chunks_exact_mut(d) {
        let norm = row_norm(row);
        if norm > 0.0 && norm.is_finite() {
            let s = super::clip::shaved_scale(c, norm);
            for x in row.iter_mut() {
                *x = (f64::from(*x) * s) as f32;
            }
        } else {
            row.iter_mut().for_each(|x| *x = 0.0);
            zeros += 1;
        }
    }
    Ok(zeros)
}

/// True when every entry is ≥ 0 (and none is NaN).
pub fn all_nonnegative(features: &[f32]) -> bool {
    features.iter().all(|&x| x >= 0.0)
}

/// L2 norm of one row, in f64.
pub fn row_norm(row: &[f32]) -> f64 {
    row.iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_in_the_box_differ_by_at_most_c_d_over_m() {
        use crate::preprocess::encode::ColumnCodec;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..300 {
            let num = rng.gen_range(0..6);
            let cats: Vec<usize> = (0..rng.gen_range(0..4))
                .map(|_| rng.gen_range(1..5))
                .collect();
            let mut codecs = vec![ColumnCodec::Label];
            let mut start = 0;
            for _ in 0..num {
                codecs.push(ColumnCodec::Numeric {
                    offset: 0.0,
                    scale: 1.0,
                    lo: 0.0,
                    hi: 1.0,
                    integer: false,
                    start,
                });
                start += 1;
            }
            for &k in &cats {
                codecs.push(ColumnCodec::Categorical {
                    levels: (0..k).map(|i| i.to_string()).collect(),
                    slot_of_code: Vec::new(),
                    start,
                });
                start += k;
            }
            if num + cats.len() == 0 {
                continue;
            }
            let space = FeatureSpace {
                names: (0..codecs.len()).map(|i| i.to_string()).collect(),
                codecs,
                dim: start,
            };
            let m = ((num + cats.len()) as f64).sqrt();
            let dia = box_diameter(&space);
            // Independent: D² = numeric + Σ min(levels, 2).
            let want: usize = num + cats.iter().map(|&k| k.min(2)).sum::<usize>();
            assert!((dia * dia - want as f64).abs() < 1e-9);
            let c = rng.gen_range(0.1..3.0);
            // Random rows of the box (numeric in [0, 1], one-hot or all-zero segments),
            // scaled by c/M: their distance never exceeds 2·box_accounting_clip.
            let row = |rng: &mut rand_chacha::ChaCha8Rng| {
                let mut r = Vec::new();
                for _ in 0..num {
                    r.push(if rng.gen_bool(0.3) {
                        f64::from(rng.gen_range(0..2))
                    } else {
                        rng.gen::<f64>()
                    });
                }
                for &k in &cats {
                    let hot = rng.gen_range(0..=k);
                    r.extend((0..k).map(|i| if i == hot { 1.0 } else { 0.0 }));
                }
                r.iter().map(|x| x * c / m).collect::<Vec<f64>>()
            };
            let bound = 2.0 * box_accounting_clip(c, m, dia);
            assert!(bound <= 2.0 * accounting_clip(c, true) + 1e-12);
            for _ in 0..20 {
                let (a, b) = (row(&mut rng), row(&mut rng));
                let dist = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum::<f64>()
                    .sqrt();
                assert!(dist <= bound, "{dist} > {bound}");
            }
        }
        // Numeric-only: the bound is c (√2 less than the orthant bound √2·c).
        assert!((2.0 * box_accounting_clip(1.0, 2.0, 2.0) - 1.0).abs() < 1e-5);
    }

    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn rows_get_norm_c_and_keep_direction_and_sign() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let d = rng.gen_range(1..40);
            let c: f64 = 10f64.powf(rng.gen_range(-2.0..2.0));
            let mut f: Vec<f32> = (0..5 * d).map(|_| rng.gen_range(0.0..3.0)).collect();
            let before = f.clone();
            scale_rows_to_norm(&mut f, d, c).unwrap();
            assert!(all_nonnegative(&f));
            for (row, orig) in f.chunks(d).zip(before.chunks(d)) {
                let n = row_norm(row);
                assert!(n <= c && n > c * (1.0 - 1e-5), "norm {n} vs c {c}");
                // Same direction: row ∝ orig.
                let r = f64::from(row[0]) / f64::from(orig[0]).max(1e-30);
                for (a, b) in row.iter().zip(orig) {
                    assert!((f64::from(*a) - r * f64::from(*b)).abs() <= 1e-5 * c);
                }
            }
        }
        let mut z = vec![0f32, 0.0, 2.0, 0.0];
        assert_eq!(scale_rows_to_norm(&mut z, 2, 1.0).unwrap(), 1);
        assert_eq!(z[0..2], [0.0, 0.0]);
    }

    #[test]
    fn nonnegative_rows_differ_by_at_most_sqrt2_c() {
        // The proof note's bound, checked on random non-negative rows scaled to norm c and
        // on the tight case (orthogonal one-hot rows).
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let c = 1.7;
        let mut worst: f64 = 0.0;
        for _ in 0..2000 {
            let d = rng.gen_range(1..12);
            let mut f: Vec<f32> = (0..2 * d)
                .map(|_| {
                    if rng.gen_bool(0.5) {
                        0.0
                    } else {
                        rng.gen_range(0.0..1.0)
                    }
                })
                .collect();
            scale_rows_to_norm(&mut f, d, c).unwrap();
            let dist = f[..d]
                .iter()
                .zip(&f[d..])
                .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                .sum::<f64>()
                .sqrt();
            worst = worst.max(dist);
            assert!(dist <= 2f64.sqrt() * c + 1e-9, "{dist}");
        }
        assert!(
            worst > 1.3 * c,
            "the random search should approach √2·c: {worst}"
        );
        assert_eq!(accounting_clip(2.0, false), 2.0);
        // 2·c_acc = √2·c
        assert!((2.0 * accounting_clip(1.7, true) - 2f64.sqrt() * 1.7).abs() < 1e-12);
    }
}
