//! Speckle removal for the GMM's synthetic images (post-processing of released data).
//!
//! The GMM draws each image in a DP principal subspace and maps every pixel onto its column's
//! DP histogram. Where a pixel's histogram has an atom at 0 (the background) inside an
//! object, pixels fall on either side of it one by one, and the object comes out salt-and-
//! pepper speckled. A switching median filter removes such impulses and leaves the rest: a
//! pixel more than `tau` from the median of its 3×3 neighbourhood (edges replicated, each
//! channel on its own) is replaced by that median; every other pixel is kept. Flat regions,
//! edges and strokes two or more pixels wide are unchanged; an isolated pixel, a one-pixel
//! line and the outer pixel of a convex corner can change.
//!
//! It reads only the synthetic image, so it is post-processing and costs no privacy. The
//! image pipeline runs it on the GMM's images of sets of 20,000 or more images (the size at
//! which the defaults take the GMM, and where it was measured); on a few hundred tiny images
//! the GMM's noise can leave the signal itself as sparse bright pixels, which it would take.

/// The threshold in pixel levels (of 255) above which a pixel counts as speckle.
///
/// Chosen on 25,000 Fashion-MNIST training images as PNGs (ε = 10, seed 1, the GMM at k = 50;
/// logistic regression trained on the synthetic images, tested on the 10,000 test images,
/// plain / standardized): unfiltered 0.7305 / 0.6393; τ = 24, 32, 48, 64, 96 all give
/// 0.740–0.744 / 0.672–0.679 (48: 0.7428 / 0.6757); a plain 3×3 median 0.7435 / 0.6226
/// (blurred). `bench/utility/README.md` has the table.
pub const TAU: u8 = 48;

/// Replaces, in the `w`×`h` image `px` of `c` interleaved channels, every pixel more than
/// `tau` from the median of its 3×3 neighbourhood (edges replicated) by that median. The
/// medians are of the image as given (one pass; `scratch` holds a copy of it).
pub fn despeckle(px: &mut [u8], w: usize, h: usize, c: usize, tau: u8, scratch: &mut Vec<u8>) {
    debug_assert_eq!(px.len(), w * h * c);
    if w == 0 || h == 0 {
        return;
    }
    scratch.clear();
    scratch.extend_from_slice(px);
    let at = |x: usize, y: usize, ch: usize| scratch[(y * w + x) * c + ch];
    for y in 0..h {
        let ys = [y.saturating_sub(1), y, (y + 1).min(h - 1)];
        for x in 0..w {
            let xs = [x.saturating_sub(1), x, (x + 1).min(w - 1)];
            for ch in 0..c {
                let mut win = [0u8; 9];
                for (i, &yy) in ys.iter().enumerate() {
                    for (j, &xx) in xs.iter().enumerate() {
                        win[i * 3 + j] = at(xx, yy, ch);
                    }
                }
                let (_, &mut med, _) = win.select_nth_unstable(4);
                let v = &mut px[(y * w + x) * c + ch];
                if v.abs_diff(med) > tau {
                    *v = med;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(px: &[u8], w: usize, h: usize, c: usize) -> Vec<u8> {
        let mut out = px.to_vec();
        despeckle(&mut out, w, h, c, TAU, &mut Vec::new());
        out
    }

    #[test]
    fn isolated_speckles_go_and_flat_regions_stay() {
        // 6×6 at 200 with two dark border columns, a dark pixel inside, a bright one in the
        // dark columns, and a small step (30 < τ) that is kept.
        let (w, h) = (6, 6);
        let mut px = vec![200u8; w * h];
        for y in 0..h {
            px[y * w] = 10;
            px[y * w + 1] = 10;
        }
        px[2 * w + 3] = 0;
        px[4 * w] = 255;
        px[5 * w + 5] = 170;
        let out = run(&px, w, h, 1);
        assert_eq!(out[2 * w + 3], 200, "dark speckle");
        assert_eq!(out[4 * w], 10, "bright speckle in the dark columns");
        assert_eq!(out[5 * w + 5], 170, "a change within τ is kept");
        for y in 0..h {
            for x in 0..w {
                if (x, y) != (3, 2) && (x, y) != (0, 4) {
                    assert_eq!(out[y * w + x], px[y * w + x], "({x}, {y}) changed");
                }
            }
        }
    }

    #[test]
    fn edges_and_two_pixel_strokes_stay() {
        // A 2-pixel vertical bar and a half-bright image (a straight edge).
        let (w, h) = (8, 5);
        let bar: Vec<u8> = (0..w * h)
            .map(|i| if (3..5).contains(&(i % w)) { 240 } else { 5 })
            .collect();
        assert_eq!(run(&bar, w, h, 1), bar);
        let half: Vec<u8> = (0..w * h)
            .map(|i| if i % w < 4 { 250 } else { 0 })
            .collect();
        assert_eq!(run(&half, w, h, 1), half);
    }

    #[test]
    fn channels_are_filtered_apart() {
        // RGB 3×3, all (10, 100, 200) but the centre's green at 255: only that value changes.
        let mut px: Vec<u8> = (0..9).flat_map(|_| [10u8, 100, 200]).collect();
        px[4 * 3 + 1] = 255;
        let out = run(&px, 3, 3, 3);
        let want: Vec<u8> = (0..9).flat_map(|_| [10u8, 100, 200]).collect();
        assert_eq!(out, want);
        // The medians are of the image as given: two speckles side by side on a flat field
        // both go, whatever the order they are visited in.
        let mut two = vec![50u8; 25];
        two[12] = 250;
        two[13] = 250;
        assert_eq!(run(&two, 5, 5, 1), vec![50u8; 25]);
    }
}
