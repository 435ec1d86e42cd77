//! Resizing to a fixed shape, one axis at a time:
//!
//! * shrinking an axis averages the source pixels each output pixel covers, weighted by the
//!   covered length (area averaging: a constant image stays constant, a 2×2 block becomes its
//!   mean);
//! * enlarging an axis interpolates linearly between the two nearest source pixel centres
//!   (bilinear, with pixel centres at half-integers and edges clamped);
//! * an axis of equal size is copied.
//!
//! Both are convex combinations, so outputs stay within the input's range.

/// The source taps of each output position along one axis: (index, weight), weights sum to 1.
fn taps(src: usize, dst: usize) -> Vec<Vec<(usize, f32)>> {
    let mut out = Vec::with_capacity(dst);
    if dst == src {
        for i in 0..dst {
            out.push(vec![(i, 1.0)]);
        }
    } else if dst < src {
        let scale = src as f64 / dst as f64;
        for i in 0..dst {
            let a = i as f64 * scale;
            let b = ((i + 1) as f64 * scale).min(src as f64);
            let mut t = Vec::new();
            let mut j = a.floor() as usize;
            while (j as f64) < b && j < src {
                let lo = a.max(j as f64);
                let hi = b.min((j + 1) as f64);
                let w = hi - lo;
                if w > 1e-12 {
                    t.push((j, (w / (b - a)) as f32));
                }
                j += 1;
            }
            out.push(t);
        }
    } else {
        let scale = src as f64 / dst as f64;
        for i in 0..dst {
            let x = ((i as f64 + 0.5) * scale - 0.5).clamp(0.0, (src - 1) as f64);
            let j0 = x.floor() as usize;
            let j1 = (j0 + 1).min(src - 1);
            let f = x - j0 as f64;
            if j1 == j0 || f <= 0.0 {
                out.push(vec![(j0, 1.0)]);
            } else {
                out.push(vec![(j0, (1.0 - f) as f32), (j1, f as f32)]);
            }
        }
    }
    out
}

/// Resizes an interleaved `w × h × c` image (row-major) to `dw × dh × c`.
///
/// All sizes must be positive and `src.len() == w·h·c`.
pub fn resize(src: &[f32], w: usize, h: usize, c: usize, dw: usize, dh: usize) -> Vec<f32> {
    assert!(w > 0 && h > 0 && dw > 0 && dh > 0 && c > 0 && src.len() == w * h * c);
    if w == dw && h == dh {
        return src.to_vec();
    }
    // Horizontal pass: h rows of dw pixels.
    let tx = taps(w, dw);
    let mut mid = vec![0f32; h * dw * c];
    for y in 0..h {
        let row = &src[y * w * c..(y + 1) * w * c];
        let out = &mut mid[y * dw * c..(y + 1) * dw * c];
        for (x, t) in tx.iter().enumerate() {
            for ch in 0..c {
                let mut acc = 0f32;
                for &(j, wt) in t {
                    acc += wt * row[j * c + ch];
                }
                out[x * c + ch] = acc;
            }
        }
    }
    // Vertical pass.
    let ty = taps(h, dh);
    let stride = dw * c;
    let mut out = vec![0f32; dh * stride];
    for (y, t) in ty.iter().enumerate() {
        let dst = &mut out[y * stride..(y + 1) * stride];
        for &(j, wt) in t {
            let s = &mid[j * stride..(j + 1) * stride];
            for (d, &v) in dst.iter_mut().zip(s) {
                *d += wt * v;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    #[test]
    fn constant_image_stays_constant_at_every_shape() {
        for &(w, h) in &[(1, 1), (5, 3), (28, 28), (7, 13)] {
            for &(dw, dh) in &[(1, 1), (4, 4), (28, 28), (9, 2), (64, 5)] {
                let src = vec![137.0f32; w * h * 3];
                let out = resize(&src, w, h, 3, dw, dh);
                assert_eq!(out.len(), dw * dh * 3);
                assert!(
                    out.iter().all(|&v| (v - 137.0).abs() < 1e-3),
                    "{w}x{h} -> {dw}x{dh}: {out:?}"
                );
            }
        }
    }

    #[test]
    fn halving_averages_each_2x2_block() {
        // 4×2 gray: blocks [0,2;8,10]->5 and [4,6;12,14]->9
        let src = [0., 2., 4., 6., 8., 10., 12., 14.];
        assert!(close(&resize(&src, 4, 2, 1, 2, 1), &[5.0, 9.0], 1e-5));
        // 2×2 -> 1×1 per channel of an RGB image
        let rgb = [
            10., 0., 255., 20., 0., 255., //
            30., 100., 0., 40., 100., 0.,
        ];
        assert!(close(
            &resize(&rgb, 2, 2, 3, 1, 1),
            &[25.0, 50.0, 127.5],
            1e-4
        ));
    }

    #[test]
    fn non_integer_shrink_weights_by_covered_length() {
        // 3 -> 2: output 0 covers [0, 1.5): (a + b/2)/1.5; output 1 covers [1.5, 3).
        let src = [3., 6., 9.];
        let out = resize(&src, 3, 1, 1, 2, 1);
        assert!(
            close(&out, &[(3.0 + 3.0) / 1.5, (3.0 + 9.0) / 1.5], 1e-5),
            "{out:?}"
        );
    }

    #[test]
    fn doubling_interpolates_between_centres() {
        // 2 -> 4: centres at 0.25·… : x = (i+0.5)/2 − 0.5 = -0.25, 0.25, 0.75, 1.25 → clamp.
        let out = resize(&[0.0, 100.0], 2, 1, 1, 4, 1);
        assert!(close(&out, &[0.0, 25.0, 75.0, 100.0], 1e-4), "{out:?}");
        // vertical axis too
        let out = resize(&[0.0, 100.0], 1, 2, 1, 1, 4);
        assert!(close(&out, &[0.0, 25.0, 75.0, 100.0], 1e-4), "{out:?}");
    }

    #[test]
    fn same_shape_is_a_copy_and_range_is_kept() {
        let src: Vec<f32> = (0..30).map(|v| (v * 8) as f32).collect();
        assert_eq!(resize(&src, 5, 6, 1, 5, 6), src);
        let out = resize(&src, 5, 6, 1, 3, 11);
        assert!(out.iter().all(|&v| (0.0..=232.0).contains(&v)));
    }
}
