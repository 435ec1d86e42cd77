//! The two products that turn a block of standard normal draws into sampled rows: y = μ + L·e
//! (a class's Cholesky factor) and x = Σ_c y_c·V_c (the basis), computed several rows and
//! several features at a time.
//!
//! Both are plain post-processing arithmetic: every output entry is the same sum, of the same
//! terms, added in the same order, as the one-row loops they replace (y_i starts at μ_i and
//! adds L_ij·e_j for j = 0..=i in turn; x_j starts at 0 and adds y_c·V_c(j) for c = 0..k in
//! turn), so the values are the same bits. What changes is the order in which independent
//! entries are computed: [`LANES`] rows go together (independent sums, so the additions
//! overlap instead of waiting on each other) and the basis is read one tile of [`TILE`]
//! features at a time, packed so that a tile stays in cache while every row of the block uses
//! it. In wasm the one-row loops had been most of the GMM's sampling time (bench/README.md).

use super::linalg::Mat;

/// Rows computed together.
pub const LANES: usize = 4;
/// Features of the basis per packed tile.
pub const TILE: usize = 4;

/// y = (μ + L·e)·`scale` for each row of draws `e` (row-major, m rows of k = μ's length) into
/// `y` (the same shape). `l` is lower triangular (k × k; entries above the diagonal are not
/// read).
pub fn correlate_rows(mu: &[f64], l: &Mat, scale: f64, e: &[f64], y: &mut [f64]) {
    let k = mu.len();
    debug_assert_eq!(l.n, k);
    debug_assert_eq!(e.len(), y.len());
    if k == 0 {
        return;
    }
    let mut et = vec![0.0f64; k * LANES];
    for (eg, yg) in e.chunks(LANES * k).zip(y.chunks_mut(LANES * k)) {
        if eg.len() < LANES * k {
            for (er, yr) in eg.chunks_exact(k).zip(yg.chunks_exact_mut(k)) {
                for (i, yi) in yr.iter_mut().enumerate() {
                    let mut s = mu[i];
                    for (lij, ej) in l.a[i * k..=i * k + i].iter().zip(er) {
                        s += lij * ej;
                    }
                    *yi = s * scale;
                }
            }
            continue;
        }
        // The group's draws transposed: et[j·LANES + r] = e_r[j].
        for (r, er) in eg.chunks_exact(k).enumerate() {
            for (j, &v) in er.iter().enumerate() {
                et[j * LANES + r] = v;
            }
        }
        for i in 0..k {
            let mut s = [mu[i]; LANES];
            for (&lij, ej) in l.a[i * k..=i * k + i].iter().zip(et.chunks_exact(LANES)) {
                for (sr, &er) in s.iter_mut().zip(ej) {
                    *sr += lij * er;
                }
            }
            for (r, sr) in s.iter().enumerate() {
                yg[r * k + i] = sr * scale;
            }
        }
    }
}

/// A basis (k components of d features) packed for [`PackedBasis::project_rows`].
#[derive(Debug, Clone)]
pub struct PackedBasis {
    k: usize,
    d: usize,
    /// Whole tiles: tile t holds V_c[t·TILE .. (t+1)·TILE] for c = 0..k, one after another.
    tiles: Vec<f64>,
    /// The features after the last whole tile, by feature: tail[(j − j0)·k + c] = V_c[j].
    tail: Vec<f64>,
}

impl PackedBasis {
    /// Packs `basis` (k rows of d entries each).
    pub fn new(basis: &[Vec<f64>], d: usize) -> PackedBasis {
        let k = basis.len();
        debug_assert!(basis.iter().all(|v| v.len() == d));
        let whole = d / TILE;
        let mut tiles = Vec::with_capacity(whole * k * TILE);
        for t in 0..whole {
            for v in basis {
                tiles.extend_from_slice(&v[t * TILE..(t + 1) * TILE]);
            }
        }
        let mut tail = Vec::with_capacity((d - whole * TILE) * k);
        for j in whole * TILE..d {
            tail.extend(basis.iter().map(|v| v[j]));
        }
        PackedBasis { k, d, tiles, tail }
    }

    /// x = Σ_c y_c·V_c for each row of `y` (row-major, m rows of k) into `x` (m rows of d).
    pub fn project_rows(&self, y: &[f64], x: &mut [f64]) {
        let (k, d) = (self.k, self.d);
        debug_assert_eq!(y.len() / k.max(1), x.len() / d.max(1));
        if k == 0 {
            x.fill(0.0);
            return;
        }
        let whole = d / TILE;
        let mut yt = vec![0.0f64; k * LANES];
        for (yg, xg) in y.chunks(LANES * k).zip(x.chunks_mut(LANES * d)) {
            let m = yg.len() / k;
            // The group's y transposed (yt[c·LANES + r] = y_r[c]); missing rows are zeros and
            // their sums are not stored.
            yt.fill(0.0);
            for (r, yr) in yg.chunks_exact(k).enumerate() {
                for (c, &v) in yr.iter().enumerate() {
                    yt[c * LANES + r] = v;
                }
            }
            for (t, tile) in self.tiles.chunks_exact(k * TILE).take(whole).enumerate() {
                let mut acc = [[0.0f64; TILE]; LANES];
                for (v, yc) in tile.chunks_exact(TILE).zip(yt.chunks_exact(LANES)) {
                    for (ar, &yr) in acc.iter_mut().zip(yc) {
                        for (a, &vj) in ar.iter_mut().zip(v) {
                            *a += yr * vj;
                        }
                    }
                }
                for (r, ar) in acc.iter().enumerate().take(m) {
                    xg[r * d + t * TILE..r * d + (t + 1) * TILE].copy_from_slice(ar);
                }
            }
            for (jt, v) in self.tail.chunks_exact(k).enumerate() {
                let j = whole * TILE + jt;
                for (r, yr) in yg.chunks_exact(k).enumerate() {
                    let mut s = 0.0f64;
                    for (&yc, &vc) in yr.iter().zip(v) {
                        s += yc * vc;
                    }
                    xg[r * d + j] = s;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;
    use rand::Rng;
    use rand_distr::StandardNormal;

    fn normals(n: usize, rng: &mut ReleaseRng) -> Vec<f64> {
        (0..n).map(|_| rng.sample(StandardNormal)).collect()
    }

    /// The blocked products give the one-row loops' values bit for bit, for every number of
    /// rows around the group size and features around the tile size (the exact equality is
    /// what keeps seeded outputs unchanged; a reordered sum would differ in the last bits).
    #[test]
    fn the_blocked_products_are_the_one_row_loops_bit_for_bit() {
        let mut rng = ReleaseRng::seeded(21);
        for (k, d) in [(1, 1), (3, 4), (5, 7), (8, 13), (17, 36), (30, 33)] {
            let mu = normals(k, &mut rng);
            let mut l = Mat::zeros(k);
            for i in 0..k {
                for j in 0..=i {
                    l.a[i * k + j] = rng.sample(StandardNormal);
                }
                // Above the diagonal: never read.
                for j in i + 1..k {
                    l.a[i * k + j] = f64::NAN;
                }
            }
            let basis: Vec<Vec<f64>> = (0..k).map(|_| normals(d, &mut rng)).collect();
            let packed = PackedBasis::new(&basis, d);
            for m in [1, 2, 3, 4, 5, 7, 8, 9, 13] {
                let e = normals(m * k, &mut rng);
                let mut y = vec![f64::NAN; m * k];
                correlate_rows(&mu, &l, 1.7, &e, &mut y);
                let mut x = vec![f64::NAN; m * d];
                packed.project_rows(&y, &mut x);
                for r in 0..m {
                    for i in 0..k {
                        let mut s = mu[i];
                        for j in 0..=i {
                            s += l.get(i, j) * e[r * k + j];
                        }
                        assert_eq!(
                            (s * 1.7).to_bits(),
                            y[r * k + i].to_bits(),
                            "y k={k} m={m} r={r} i={i}"
                        );
                    }
                    let mut one = vec![0.0f64; d];
                    for (yc, v) in y[r * k..(r + 1) * k].iter().zip(&basis) {
                        for (o, vj) in one.iter_mut().zip(v) {
                            *o += yc * vj;
                        }
                    }
                    for j in 0..d {
                        assert_eq!(
                            one[j].to_bits(),
                            x[r * d + j].to_bits(),
                            "x k={k} d={d} m={m} r={r} j={j}"
                        );
                    }
                }
            }
        }
    }
}
