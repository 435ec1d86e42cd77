//! Encoding that keeps the signal: every row is scaled to a common L2 norm c (not only the
//! long ones shrunk), and the scale is restored after the noise from a DP statistic.
//!
//! # Proof note
//!
//! *Non-negative rows: Δ = √2·c, not 2c.* Let x, x′ ∈ ℝ^d with every entry ≥ 0 and
//! ‖x‖₂, ‖x′‖₂ ≤ c. Then ⟨x, x′⟩ = Σ_j x_j x′_j ≥ 0 (a sum of products of non-negative
//! numbers), so
//! ‖x − x′‖² = ‖x‖² + ‖x′‖² − 2⟨x, x′⟩ ≤ c² + c² − 0 = 2c²,
//! i.e. ‖x − x′‖ ≤ √2·c. The bound is tight (two orthogonal rows of norm c, e.g. two different
//! one-hot levels). For DP-CDA's mix f(S) = (1/l)Σ_{i∈S} x_i, replacing one record moves f by
//! ‖x_i − x_i′‖/l ≤ √2·c/l, so the Gaussian step N(0, σx² I) has noise multiplier
//! z = σx·l/(√2·c), which is what the accountant is given (as the clip norm c/√2 in its
//! Δx = 2·c_acc/l; the accountant itself is unchanged). The argument holds for any mechanism
//! whose per-record input is such a row; it is used only where the encoding guarantees
//! non-negativity: numeric columns min–max mapped onto [0, 1] by a range fixed before the
//! data are read (public or DP) with inputs clamped into it, one-hot categorical segments
//! (entries in {0, 1}), and the positive rescaling below, which keeps signs. Encodings that
//! can produce a negative entry (the `data` mode's z-scores) keep Δ = 2c/l.
//!
//! *Scaling to a common norm* is a per-record map u ↦ c·u/‖u‖ (a zero row stays zero); the
//! result has norm exactly c (or 0), entries ≥ 0 when u's are, so the bound above applies
//! unchanged. It depends only on the record itself, so it does not change the adjacency.
//!
//! *Restoring the scale* multiplies each released (noisy) row by m̂/c, where m̂ is a DP mean
//! of ‖u_i‖ (released by [`crate::preprocess::normalize`] as one more coordinate of its
//! Gaussian histogram mechanism: Σ_i ‖u_i‖/M with M = the public maximum norm of an encoded
//! row, sensitivity 1 under replace-one, and n public) or a public value. That is
//! post-processing of two DP releases.

use crate::error::Result;
use crate::preprocess::clip::check_clip;

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
            // Shave a few f32 ulps so the stored f32 row is ≤ c after rounding.
            let s = c / norm * (1.0 - 4.0 * f64::from(f32::EPSILON));
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
