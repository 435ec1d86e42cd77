//! A DP principal subspace for the default GMM release (`pca` with record adjacency, the
//! default noise and Gaussian covariance noise): wide inputs (images) are modelled in the top
//! k eigenvectors of a noisy second moment instead of a basis computed from the raw data.
//!
//! # Proof note
//!
//! *Setting.* As in [`super::suffstats`]: rows clipped to ‖x‖₂ ≤ B (B public) and scaled by
//! 1/B, so every row z of d_in features lies in the unit ball; a neighbour replaces one record
//! (label included), or adds or removes one.
//!
//! *The basis release.* Every row is truncated toward zero onto the grid 2^{−15} with
//! ‖z‖₂ ≤ 1 enforced exactly ([`super::exactnoise::row_units_at`]), and the second moment
//! M = Σ_i z_i z_iᵀ over all labelled rows (whatever their label; the features of a record
//! without one are not read) is computed exactly in integers (each product
//! is at most 2^30 grid units², each sum at most N·2^30 < 2^60: no overflow below 2^30 rows).
//! A replaced record moves M by z′z′ᵀ − zzᵀ, whose Frobenius norm is at most √2
//! (‖zzᵀ − z′z′ᵀ‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(z·z′)² ≤ 2); an added or removed record by
//! ‖zzᵀ‖_F = ‖z‖² ≤ 1. Its upper triangle (diagonal included, m = d_in(d_in + 1)/2
//! coordinates; the vector's L2 change is at most the Frobenius change) is released as
//! G·(round(M/G) + Z), Z an exact discrete Gaussian from `GridGaussian::covering(σ_B, √2, m)`,
//! σ_B = √2·z_B: a Gaussian mechanism with the RDP curve α·Δ_g²/(2σ_g²) at its grid
//! sensitivity Δ_g = √2/G + √m ([`crate::mechanisms::noise`], as for the class statistics).
//!
//! *What follows is post-processing of the released M̃ and composition.* The basis V (d_in × k)
//! is the top k eigenvectors of M̃ (a function of released numbers only). Each row is then
//! projected, y = Vᵀz: a fixed map once V is released, so neighbours stay neighbours, and
//! ‖y‖ ≤ ‖z‖ ≤ 1 (V has orthonormal columns; the class statistics' own grid truncation
//! enforces ‖y‖ ≤ 1 exactly against rounding). The class counts, sums and second moments of
//! the projected rows are released by [`super::suffstats`] with its sensitivities, which hold
//! for any rows in the unit ball. The Gaussian releases are chosen adaptively (V depends on
//! the first), which RDP composition allows: one neighbour moves the basis release and the
//! class releases it touches, so the Gaussian part is ρ-zCDP with ρ = ρ_basis + max(ρ_a, ρ_b)
//! (the class statistics' worst case, see there), computed on the grids actually used and
//! converted by the accountant. The split is public: the basis takes
//! [`BASIS_SHARE`] of the Gaussian ρ (z_B = z·√((1 − f)/(2f))), fixed from (ε, δ, k, d_in)
//! only ([`super::suffstats::Split::with_extras`]).
//!
//! *What the model holds.* The components V (in input units they are the same vectors), the
//! class means and covariances in the subspace's coordinates (times B), and no centre: the
//! second moment is uncentred, so the leading component carries the data's mean direction.
//! Sampled rows are V·y, in the input's columns.

use super::exactnoise::{release_fixed, row_units_at, MAX_ROWS};
use super::linalg::{sym_eigen, Mat};
use super::suffstats::Split;
use crate::error::{Error, Result};
use crate::rng::ReleaseRng;

/// Share of the Gaussian releases' ρ taken by the basis (public).
pub const BASIS_SHARE: f64 = 0.2;
/// Frobenius sensitivity of the basis's second moment (unit ball, a replaced record).
pub const BASIS_SENSITIVITY: f64 = std::f64::consts::SQRT_2;
/// The rows' grid 2^{−BASIS_BITS} for the basis's second moment.
pub const BASIS_BITS: u32 = 15;

/// A released basis.
#[derive(Debug, Clone)]
pub struct Basis {
    /// k orthonormal rows of length d_in: the eigenvectors of the released second moment with
    /// the k largest eigenvalues, in decreasing order of eigenvalue.
    pub components: Vec<Vec<f64>>,
    /// Those k eigenvalues (of the noisy matrix, unit-ball units).
    pub eigenvalues: Vec<f64>,
    /// The release grid G.
    pub grid: f64,
    /// The noise standard deviation on each coordinate (≥ σ_B).
    pub scale: f64,
    /// The components transposed (d_in × k, row-major), for [`Basis::project`].
    by_feature: Vec<f64>,
}

/// Offset of row i of the upper triangle (row-major, i ≤ j) of a d × d matrix.
fn row_offset(i: usize, d: usize) -> usize {
    i * (2 * d - i + 1) / 2
}

/// The exact upper triangle of Σ u uᵀ (row-major, i ≤ j), units 2^{−2·BASIS_BITS}, of the
/// unit-ball rows `z` (d features) on the grid 2^{−BASIS_BITS}. Zero entries are skipped,
/// so sparse rows (images with a blank background) cost their non-zeros squared.
pub fn second_moment(z: &[Vec<f64>], d: usize) -> Result<Vec<i128>> {
    let mut acc = MomentSum::new(d);
    for row in z {
        acc.push(row)?;
    }
    acc.finish()
}

/// Rows [`MomentSum`] holds before adding them to its sums: each row of the sums' upper
/// triangle (at most d = 784 entries, 6 KiB) then takes the products of this many rows while
/// it is in cache, instead of the whole triangle (2.4 MB at d = 784) being read and written
/// once per row.
const MOMENT_BATCH: usize = 32;

/// A run of non-zero entries takes in gaps of fewer zeros than this: their products add 0,
/// and one longer run costs less than two short ones (each run is a vector loop with its own
/// start and tail; 8 measured fastest of 8, 32, 128 and 1,000 on Fashion-MNIST's rows).
const RUN_GAP: usize = 8;

// Every entry of a unit-ball row on the grid 2^{−BASIS_BITS} is at most 2^BASIS_BITS in
// magnitude (‖u‖ ≤ 2^BASIS_BITS exactly), so a product of two is at most 2^30: it is formed
// exactly in an i32 and widened into the i64 sums (x86 has no packed 64-bit multiply below
// AVX-512, so neither has wasm's lowering of i64x2.mul).
const _: () = assert!(BASIS_BITS <= 15);

/// [`second_moment`] one row at a time (rows need not be held together).
#[derive(Debug, Clone)]
pub struct MomentSum {
    d: usize,
    rows: usize,
    acc: Vec<i64>,
    /// Rows not yet added: their grid units (d each) ...
    pending: Vec<i32>,
    /// ... their runs of non-zero entries [start, end) (with gaps of fewer than RUN_GAP
    /// zeros inside) ...
    runs: Vec<(u32, u32)>,
    /// ... and where each row's runs end in `runs`.
    run_ends: Vec<usize>,
}

impl MomentSum {
    /// An empty sum for rows of `d` features.
    pub fn new(d: usize) -> MomentSum {
        MomentSum {
            d,
            rows: 0,
            acc: vec![0; d * (d + 1) / 2],
            pending: Vec::with_capacity(MOMENT_BATCH * d),
            runs: Vec::new(),
            run_ends: Vec::with_capacity(MOMENT_BATCH),
        }
    }

    /// Adds one unit-ball row.
    pub fn push(&mut self, row: &[f64]) -> Result<()> {
        let d = self.d;
        if row.len() != d {
            return Err(Error::Data(format!(
                "internal: a row has {} features, the basis {d}",
                row.len()
            )));
        }
        self.count(1)?;
        let at = self.pending.len();
        self.pending
            .extend(row_units_at(row, BASIS_BITS).into_iter().map(|x| x as i32));
        // The runs of non-zero entries (with gaps of fewer than RUN_GAP zeros): every product
        // u_i·u_j, i ≤ j, of two non-zero entries is added a run at a time (contiguous, where
        // pixels of one object sit side by side).
        let u = &self.pending[at..];
        let mut j = 0;
        while j < d {
            if u[j] == 0 {
                j += 1;
                continue;
            }
            let start = j;
            let mut end = j;
            while j < d && j < end + RUN_GAP {
                if u[j] != 0 {
                    end = j + 1;
                }
                j += 1;
            }
            j = end;
            self.runs.push((start as u32, end as u32));
        }
        self.run_ends.push(self.runs.len());
        if self.run_ends.len() == MOMENT_BATCH {
            self.flush();
        }
        Ok(())
    }

    fn count(&mut self, rows: usize) -> Result<()> {
        self.rows += rows;
        if self.rows >= MAX_ROWS {
            return Err(Error::Data(format!(
                "{} rows: the exact-noise GMM release accepts fewer than 2^30 rows",
                self.rows
            )));
        }
        Ok(())
    }

    /// Adds the held rows' products to the sums, one row of the triangle at a time.
    fn flush(&mut self) {
        let d = self.d;
        // Each held row's runs, and the first of them that ends after the current i.
        let mut next: Vec<usize> = (0..self.run_ends.len())
            .map(|r| if r == 0 { 0 } else { self.run_ends[r - 1] })
            .collect();
        for i in 0..d {
            let seg = &mut self.acc[row_offset(i, d)..row_offset(i + 1, d)];
            for (r, first) in next.iter_mut().enumerate() {
                let u = &self.pending[r * d..(r + 1) * d];
                let ui = u[i];
                if ui == 0 {
                    continue;
                }
                let runs = &self.runs[*first..self.run_ends[r]];
                // i is in a run (u_i ≠ 0): skip the runs that end at or before it.
                let skip = runs.iter().take_while(|&&(_, e)| e as usize <= i).count();
                *first += skip;
                let runs = &runs[skip..];
                let (_, end) = runs[0];
                for &(s, e) in std::iter::once(&(i as u32, end)).chain(&runs[1..]) {
                    let (s, e) = (s as usize, e as usize);
                    for (a, &uj) in seg[s - i..e - i].iter_mut().zip(&u[s..e]) {
                        *a += i64::from(ui * uj);
                    }
                }
            }
        }
        self.pending.clear();
        self.runs.clear();
        self.run_ends.clear();
    }

    /// Adds another sum of rows of the same width (exact: the result does not depend on how
    /// the rows were divided between the two).
    pub fn merge(&mut self, mut other: MomentSum) -> Result<()> {
        if other.d != self.d {
            return Err(Error::Data(format!(
                "internal: merging second moments of {} and {} features",
                self.d, other.d
            )));
        }
        self.count(other.rows)?;
        other.flush();
        self.acc
            .iter_mut()
            .zip(&other.acc)
            .for_each(|(a, b)| *a += b);
        Ok(())
    }

    /// The exact sum ([`second_moment`]'s units).
    pub fn finish(mut self) -> Result<Vec<i128>> {
        self.flush();
        Ok(self.acc.into_iter().map(i128::from).collect())
    }
}

/// Releases the second moment of the unit-ball rows `z` (d_in = `split.basis_dim` features)
/// and returns its top `k` eigenvectors (see the proof note).
pub fn release_basis(
    z: &[Vec<f64>],
    k: usize,
    split: &Split,
    rng: &mut ReleaseRng,
) -> Result<Basis> {
    check_components(k, split.basis_dim)?;
    release_basis_of(&second_moment(z, split.basis_dim)?, k, split, rng)
}

fn check_components(k: usize, d: usize) -> Result<()> {
    if k == 0 || k > d {
        return Err(Error::param(
            "pca",
            k,
            format!("the number of components must be between 1 and the number of features ({d})"),
        ));
    }
    Ok(())
}

/// [`release_basis`] of an exact second moment ([`MomentSum`]).
pub fn release_basis_of(
    stat: &[i128],
    k: usize,
    split: &Split,
    rng: &mut ReleaseRng,
) -> Result<Basis> {
    let d = split.basis_dim;
    check_components(k, d)?;
    if stat.len() != d * (d + 1) / 2 {
        return Err(Error::Data(format!(
            "internal: a second moment of {} entries for a basis of {d} features",
            stat.len()
        )));
    }
    let noise = split.basis_noise()?;
    let released = release_fixed(stat, 2 * BASIS_BITS, &noise, rng)?;
    let mut m = Mat::zeros(d);
    let mut t = 0;
    for i in 0..d {
        for j in i..d {
            m.set(i, j, released[t]);
            m.set(j, i, released[t]);
            t += 1;
        }
    }
    let (lam, v) = sym_eigen(&m);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| lam[b].total_cmp(&lam[a]));
    order.truncate(k);
    let by_feature = (0..d)
        .flat_map(|i| order.iter().map(move |&c| (i, c)))
        .map(|(i, c)| v.get(i, c))
        .collect();
    Ok(Basis {
        components: order
            .iter()
            .map(|&c| (0..d).map(|i| v.get(i, c)).collect())
            .collect(),
        by_feature,
        eigenvalues: order.iter().map(|&c| lam[c]).collect(),
        grid: noise.grid(),
        scale: noise.sigma_units() * noise.grid(),
    })
}

impl Basis {
    /// y = Vᵀz (k coordinates), as Σ_j z_j·V_j over the non-zero z_j.
    pub fn project(&self, z: &[f64]) -> Vec<f64> {
        let k = self.components.len();
        let mut y = vec![0.0; k];
        for (&zj, vj) in z.iter().zip(self.by_feature.chunks_exact(k)) {
            if zj != 0.0 {
                for (a, &b) in y.iter_mut().zip(vj) {
                    *a += zj * b;
                }
            }
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gmm::exactnoise::{class_stats, upper_pairs};
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// Rows in the unit ball with most of their energy in the plane of e_0 and e_1 (plus
    /// zeros, so the sparse path is exercised).
    fn planted(n: usize, d: usize, rng: &mut ReleaseRng) -> Vec<Vec<f64>> {
        (0..n)
            .map(|_| {
                let mut r = vec![0.0; d];
                r[0] = 0.5 * rng.sample::<f64, _>(StandardNormal);
                r[1] = 0.3 * rng.sample::<f64, _>(StandardNormal);
                for x in r.iter_mut().skip(2) {
                    if rng.gen_bool(0.3) {
                        *x = 0.02 * rng.sample::<f64, _>(StandardNormal);
                    }
                }
                let nr = r.iter().map(|x| x * x).sum::<f64>().sqrt();
                if nr > 1.0 {
                    r.iter_mut().for_each(|x| *x /= nr);
                }
                r
            })
            .collect()
    }

    /// Σ u uᵀ of the rows' grid units, summed directly in i128 over every pair i ≤ j.
    fn direct_moment(rows: &[Vec<f64>], d: usize) -> Vec<i128> {
        let pairs = upper_pairs(d);
        let mut want = vec![0i128; pairs.len()];
        for r in rows {
            let u = row_units_at(r, BASIS_BITS);
            for (w, &(i, j)) in want.iter_mut().zip(&pairs) {
                *w += u[i] as i128 * u[j] as i128;
            }
        }
        want
    }

    #[test]
    fn the_sparse_second_moment_is_the_exact_one() {
        let mut rng = ReleaseRng::seeded(3);
        let z = planted(300, 9, &mut rng);
        let got = second_moment(&z, 9).unwrap();
        // The same rows through the class statistics' dense exact path, on the finer grid
        // 2^{−30}, agree after truncation to 2^{−15}: compare with a direct dense sum here.
        assert_eq!(got, direct_moment(&z, 9));
        // And the class statistics' moment (grid 2^{−30}) is the same matrix to 2^{−14}.
        let dense = &class_stats(&z, &vec![0; z.len()], 1, 9).unwrap()[0].moment;
        for (a, b) in got.iter().zip(dense) {
            let (a, b) = (*a as f64 / 2f64.powi(30), *b as f64 / 2f64.powi(60));
            assert!((a - b).abs() < 300.0 * 2.0 * 2f64.powi(-14), "{a} vs {b}");
        }
        assert!(second_moment(&[vec![0.0; 3]], 4).is_err());
    }

    /// Rows summed in parts and merged give the one-pass sum; other widths are refused.
    #[test]
    fn merged_parts_are_the_one_pass_sum() {
        let mut rng = ReleaseRng::seeded(5);
        let z = planted(200, 7, &mut rng);
        let (mut a, mut b) = (MomentSum::new(7), MomentSum::new(7));
        for (i, r) in z.iter().enumerate() {
            if i % 3 == 0 { a.push(r) } else { b.push(r) }.unwrap();
        }
        a.merge(b).unwrap();
        assert_eq!(a.rows, 200);
        assert_eq!(a.finish().unwrap(), second_moment(&z, 7).unwrap());
        assert!(MomentSum::new(7).merge(MomentSum::new(6)).is_err());
    }

    /// Sparse rows of every shape (runs and gaps longer and shorter than RUN_GAP, empty rows,
    /// one full-scale entry, whose square 2^30 is the largest i32 product), held and added a
    /// batch at a time, in parts merged with rows still held: the sums are the direct i128
    /// ones.
    #[test]
    fn batched_runs_give_the_direct_sum() {
        let mut rng = ReleaseRng::seeded(11);
        let d = 97;
        let mut rows: Vec<Vec<f64>> = Vec::new();
        for n in 0..150 {
            let mut r = vec![0.0; d];
            match n % 5 {
                0 => {}
                1 => r[rng.gen_range(0..d)] = if rng.gen_bool(0.5) { 1.0 } else { -1.0 },
                _ => {
                    let mut j = rng.gen_range(0..20);
                    while j < d {
                        let len = rng.gen_range(1..12);
                        for x in r.iter_mut().skip(j).take(len) {
                            *x = rng.gen_range(-1.0..1.0);
                        }
                        j += len + rng.gen_range(1..3 * RUN_GAP);
                    }
                }
            }
            let nr = r.iter().map(|x| x * x).sum::<f64>().sqrt();
            if nr > 1.0 {
                r.iter_mut().for_each(|x| *x /= nr);
            }
            rows.push(r);
        }
        assert!(rows.iter().any(|r| r.contains(&1.0) || r.contains(&-1.0)));
        for n in [1, MOMENT_BATCH - 1, MOMENT_BATCH, MOMENT_BATCH + 1, 150] {
            assert_eq!(
                second_moment(&rows[..n], d).unwrap(),
                direct_moment(&rows[..n], d),
                "{n} rows"
            );
        }
        // Parts of 0, 45 (one batch added, 13 rows held) and 105 rows.
        let (mut a, mut b, c) = (MomentSum::new(d), MomentSum::new(d), MomentSum::new(d));
        for (i, r) in rows.iter().enumerate() {
            if i < 45 { a.push(r) } else { b.push(r) }.unwrap();
        }
        a.merge(c).unwrap();
        b.merge(a).unwrap();
        assert_eq!(b.rows, 150);
        assert_eq!(b.finish().unwrap(), direct_moment(&rows, d));
    }

    #[test]
    fn the_released_basis_finds_the_planted_plane() {
        let mut rng = ReleaseRng::seeded(5);
        let (n, d) = (4000, 30);
        let z = planted(n, d, &mut rng);
        let split = Split::with_extras(4.0, 1e-6, 2, false, Some(d), None).unwrap();
        assert!(split.sigma_basis > 0.0 && split.eps_basis_alone > 0.0);
        assert!(split.epsilon() <= 4.0, "{}", split.epsilon());
        let b = release_basis(&z, 2, &split, &mut rng).unwrap();
        assert!(b.eigenvalues[0] >= b.eigenvalues[1]);
        // Orthonormal rows.
        for (i, a) in b.components.iter().enumerate() {
            for (j, c) in b.components.iter().enumerate() {
                let dot: f64 = a.iter().zip(c).map(|(x, y)| x * y).sum();
                assert!((dot - f64::from(u8::from(i == j))).abs() < 1e-9);
            }
        }
        // The noise (σ_B ≈ a few units against eigenvalues n·0.25 and n·0.09) leaves the
        // plane: the first component is ±e_0, the second ±e_1, each to within 0.05.
        assert!(
            b.components[0][0].abs() > 0.95,
            "{:?}",
            &b.components[0][..3]
        );
        assert!(
            b.components[1][1].abs() > 0.95,
            "{:?}",
            &b.components[1][..3]
        );
        assert!(b.grid > 0.0 && b.scale >= split.sigma_basis * (1.0 - 1e-12));
        // A projected row is no longer than the row, and is Vᵀz.
        for r in &z[..50] {
            let y = b.project(r);
            for (yc, c) in y.iter().zip(&b.components) {
                let dot: f64 = c.iter().zip(r).map(|(a, b)| a * b).sum();
                assert!((yc - dot).abs() < 1e-12);
            }
            let ny: f64 = y.iter().map(|x| x * x).sum();
            let nr: f64 = r.iter().map(|x| x * x).sum();
            assert!(ny <= nr * (1.0 + 1e-12));
        }
        assert!(release_basis(&z, d + 1, &split, &mut rng).is_err());
        assert!(release_basis(&z, 2, &Split::new(4.0, 1e-6, 2).unwrap(), &mut rng).is_err());
    }

    #[test]
    fn the_basis_takes_its_share_and_the_total_stays_within_epsilon() {
        for (eps, delta, k, d_in) in [
            (10.0, 1e-5, 150, 784),
            (1.0, 1e-6, 8, 64),
            (0.3, 1e-5, 4, 10),
        ] {
            let plain = Split::new(eps, delta, k).unwrap();
            let with = Split::with_extras(eps, delta, k, false, Some(d_in), None).unwrap();
            // Never over the target; the class statistics pay for the basis with more noise.
            assert!(with.epsilon() <= eps && plain.epsilon() <= eps);
            assert!(with.z > plain.z, "{} vs {}", with.z, plain.z);
            // The basis's share of ρ is about BASIS_SHARE (the grids round it up a little).
            let basis_rho = with.rho - 1.0 / (with.z * with.z);
            let share = basis_rho / with.rho;
            assert!((share - BASIS_SHARE).abs() < 0.02, "share {share}");
            assert!(with.eps_basis_alone > 0.0 && with.eps_basis_alone < with.eps_gaussian);
        }
    }
}
