//! L2 clipping: every row is scaled so that ‖x‖₂ ≤ c. This is what bounds DP-CDA's
//! sensitivity (see the proof note in `mechanisms::cda`). DPMix instead clamps every entry to
//! [0, 1] ([`clamp_unit_box`]).

use crate::error::{Error, Result};

/// Checks that the clip norm c is positive and finite.
pub fn check_clip(c: f64) -> Result<()> {
    if c > 0.0 && c.is_finite() {
        Ok(())
    } else {
        Err(Error::param(
            "clip",
            c,
            "the clip norm c must be a positive finite number, e.g. 1",
        ))
    }
}

/// The factor that takes a row of L2 norm `norm` to norm `c`, computed in f64 and shaved by
/// four f32 epsilons so that the row, scaled in f64 and stored as f32, stays within `c`
/// after rounding. Every row map that scales to a norm (clipping, scaling to norm c, on
/// dense or compact rows) uses it, so they store the same values.
pub(crate) fn shaved_scale(c: f64, norm: f64) -> f64 {
    c / norm * (1.0 - 4.0 * f64::from(f32::EPSILON))
}

/// Clips one row to L2 norm ≤ `c` in place (scaled by [`shaved_scale`] when its norm
/// exceeds `c`; a no-op on a row this already clipped). True when the row was scaled.
pub(crate) fn clip_row(row: &mut [f32], c: f64) -> bool {
    let norm = super::rownorm::row_norm(row);
    if norm <= c {
        return false;
    }
    let s = shaved_scale(c, norm);
    for x in row.iter_mut() {
        *x = (f64::from(*x) * s) as f32;
    }
    true
}

/// Clips each of the `features.len() / d` rows to L2 norm ≤ `c`, in place. Returns how many
/// rows were scaled down.
pub fn clip_rows(features: &mut [f32], d: usize, c: f64) -> Result<usize> {
    check_clip(c)?;
    if d == 0 {
        return Ok(0);
    }
    // Rows are independent: blocks of 64 rows on all cores.
    let clipped = crate::par::blocks_mut(features, 64 * d, |_, block| {
        let mut clipped = 0;
        for row in block.chunks_exact_mut(d) {
            clipped += usize::from(clip_row(row, c));
        }
        clipped
    });
    Ok(clipped)
}

/// Clamps every entry to [0, 1] in place (the box DPMix's sensitivity assumes; NaN becomes 0).
/// Returns how many entries were moved.
pub fn clamp_unit_box(features: &mut [f32]) -> usize {
    let mut moved = 0;
    for x in features.iter_mut() {
        let c = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        if c != *x || x.is_nan() {
            moved += 1;
        }
        *x = c;
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn clipped_norm_never_exceeds_c_property() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..300 {
            let d = rng.gen_range(1..50);
            let n = rng.gen_range(1..20);
            let scale: f64 = 10f64.powf(rng.gen_range(-3.0..4.0));
            let c: f64 = 10f64.powf(rng.gen_range(-2.0..2.0));
            let mut f: Vec<f32> = (0..n * d)
                .map(|_| (rng.gen_range(-1.0..1.0) * scale) as f32)
                .collect();
            let before = f.clone();
            clip_rows(&mut f, d, c).unwrap();
            for (row, orig) in f.chunks(d).zip(before.chunks(d)) {
                let norm: f64 = row
                    .iter()
                    .map(|&x| f64::from(x).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(norm <= c, "norm {norm} > c {c}");
                let on: f64 = orig
                    .iter()
                    .map(|&x| f64::from(x).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if on <= c {
                    assert_eq!(row, orig, "rows within the ball are untouched");
                }
            }
        }
    }

    #[test]
    fn unit_box_clamp() {
        let mut f = vec![-0.5f32, 0.25, 1.5, f32::NAN, 1.0];
        assert_eq!(clamp_unit_box(&mut f), 3);
        assert_eq!(f, vec![0.0, 0.25, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn bad_clip_is_rejected() {
        let mut f = vec![1.0f32];
        assert!(clip_rows(&mut f, 1, 0.0)
            .unwrap_err()
            .to_string()
            .contains("clip = 0"));
        assert!(clip_rows(&mut f, 1, f64::NAN).is_err());
    }
}
