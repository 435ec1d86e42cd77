//! Random projection, the DP-CDA paper's second baseline (DPPro, Xu et al. 2017, its
//! reference \[53\]), in the form we can account exactly.
//!
//! A d × k matrix P with orthonormal columns is drawn from the release generator (Gaussian
//! entries, then Gram–Schmidt, so span(P) is a uniformly random k-dimensional subspace),
//! independently of the data. Each released row is
//!
//!   x̂_i = P · (clip_c(Pᵀ x_i) + N(0, σ² I_k)),
//!
//! i.e. the row is projected to k dimensions, perturbed there, and lifted back to the input's
//! feature space so the pipeline can decode it into the input's columns and units. The noise
//! energy is kσ² instead of local perturbation's dσ², at the price of losing the part of x_i
//! outside span(P). DPPro bounds the sensitivity of x ↦ Pᵀx probabilistically (via
//! Johnson–Lindenstrauss); we instead clip the projected row, which makes the sensitivity 2c
//! exactly for every P.
//!
#![doc = include_str!("projection.proof.md")]

use super::local::{each_row, row_noise, RowRelease};
use super::noise::GridGaussian;
use crate::error::{Error, Result};
use rand::Rng;
use rand_distr::StandardNormal;

/// Default projected dimension: ⌈d/2⌉, capped at 64 (and at least 1).
pub fn default_dim(d: usize) -> usize {
    d.div_ceil(2).clamp(1, 64).min(d.max(1))
}

/// Checks the projected dimension 1 ≤ k ≤ d.
pub fn check_dim(k: usize, d: usize) -> Result<()> {
    if k < 1 || k > d {
        return Err(Error::param(
            "projection-dim",
            k,
            format!("the projected dimension k must satisfy 1 ≤ k ≤ d = {d} (the encoded feature dimension)"),
        ));
    }
    Ok(())
}

/// A d × k matrix with orthonormal columns, row-major (`basis[j * k + c]`).
#[derive(Debug, Clone)]
pub struct Projection {
    d: usize,
    k: usize,
    basis: Vec<f64>,
}

impl Projection {
    /// Draws a uniformly random k-dimensional subspace of R^d (data-independent).
    pub fn random<R: Rng + ?Sized>(d: usize, k: usize, rng: &mut R) -> Result<Self> {
        check_dim(k, d)?;
        // Columns stored contiguously while orthonormalizing.
        let mut cols: Vec<Vec<f64>> = Vec::with_capacity(k);
        while cols.len() < k {
            let mut v: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
            // Modified Gram–Schmidt, twice ("twice is enough") for orthogonality to ~1e-15.
            for _ in 0..2 {
                for c in &cols {
                    let dot: f64 = v.iter().zip(c).map(|(a, b)| a * b).sum();
                    for (a, b) in v.iter_mut().zip(c) {
                        *a -= dot * b;
                    }
                }
            }
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            if norm > 1e-6 {
                v.iter_mut().for_each(|a| *a /= norm);
                cols.push(v);
            }
        }
        let mut basis = vec![0f64; d * k];
        for (c, col) in cols.iter().enumerate() {
            for (j, &x) in col.iter().enumerate() {
                basis[j * k + c] = x;
            }
        }
        Ok(Projection { d, k, basis })
    }

    /// Input dimension d.
    pub fn dim_in(&self) -> usize {
        self.d
    }

    /// Projected dimension k.
    pub fn dim_out(&self) -> usize {
        self.k
    }

    /// y = Pᵀ x.
    pub fn project(&self, x: &[f32], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for (j, &xj) in x.iter().enumerate() {
            let xj = f64::from(xj);
            if xj != 0.0 {
                for (v, &p) in y.iter_mut().zip(&self.basis[j * self.k..(j + 1) * self.k]) {
                    *v += xj * p;
                }
            }
        }
    }

    /// x̂ = P y.
    pub fn lift(&self, y: &[f64], out: &mut [f32]) {
        for (j, o) in out.iter_mut().enumerate() {
            let row = &self.basis[j * self.k..(j + 1) * self.k];
            *o = row.iter().zip(y).map(|(p, v)| p * v).sum::<f64>() as f32;
        }
    }
}

/// The released projected row: ỹ = g·(round(clip_c(Pᵀx)/g) + Z), Z exact discrete Gaussian
/// (`noise` from [`row_noise`] at k coordinates), written into `y` (length k).
pub fn release_projected<R: Rng + ?Sized>(
    proj: &Projection,
    x: &[f32],
    clip: f64,
    noise: &GridGaussian,
    y: &mut [f64],
    rng: &mut R,
) -> Result<()> {
    proj.project(x, y);
    let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > clip {
        let s = clip / norm;
        y.iter_mut().for_each(|v| *v *= s);
    }
    noise.add_noise(y, rng)
}

/// The noise step: for each index i in `r.rows`, `sink(i, P (clip_c(Pᵀ x_i) + N(0, σ² I_k)))`.
pub fn generate<R: Rng + ?Sized>(
    features: &[f32],
    proj: &Projection,
    r: &RowRelease<'_>,
    rng: &mut R,
    sink: impl FnMut(usize, &[f32]) -> Result<()>,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<()> {
    let d = proj.d;
    if d == 0 || features.len() % d != 0 {
        return Err(Error::Data(
            "internal: projection dimension does not match the features".into(),
        ));
    }
    crate::preprocess::clip::check_clip(r.clip)?;
    let g = row_noise(r.sigma, r.clip, proj.k)?;
    let mut y = vec![0f64; proj.k];
    let release = |x: &[f32], out: &mut [f32]| {
        release_projected(proj, x, r.clip, &g, &mut y, rng)?;
        proj.lift(&y, out);
        Ok(())
    };
    each_row(features, d, r.rows, release, sink, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gaussian::ks_normal;
    use crate::rng::ReleaseRng;

    #[test]
    fn basis_is_orthonormal_and_dimensions_are_checked() {
        let p = Projection::random(30, 7, &mut ReleaseRng::seeded(1)).unwrap();
        for a in 0..7 {
            for b in 0..7 {
                let dot: f64 = (0..30)
                    .map(|j| p.basis[j * 7 + a] * p.basis[j * 7 + b])
                    .sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((dot - want).abs() < 1e-12, "({a},{b}) = {dot}");
            }
        }
        assert!(check_dim(0, 5).is_err());
        let e = check_dim(6, 5).unwrap_err().to_string();
        assert!(
            e.contains("projection-dim = 6") && e.contains("d = 5"),
            "{e}"
        );
        assert_eq!(default_dim(784), 64);
        assert_eq!(default_dim(5), 3);
        assert_eq!(default_dim(1), 1);
    }

    /// In projected coordinates the output is Pᵀx̂ = clip(Pᵀx) + N(0, σ² I_k) (PᵀP = I): KS of
    /// the standardized residuals at α = 1e-6, and x̂ stays in span(P).
    #[test]
    fn projected_noise_is_gaussian_ks() {
        let d = 12;
        let k = 4;
        let n = 3000;
        let mut rng = ReleaseRng::seeded(21);
        let features: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919) % 13) as f32 / 60.0)
            .collect();
        let mut clipped = features.clone();
        crate::preprocess::clip::clip_rows(&mut clipped, d, 1.0).unwrap();
        let proj = Projection::random(d, k, &mut rng).unwrap();
        let rows: Vec<usize> = (0..n).collect();
        let sigma = 0.6;
        let used = row_noise(sigma, 1.0, k).unwrap();
        let s_used = used.sigma_units() * used.grid();
        assert!(
            s_used >= sigma && s_used <= sigma * (1.0 + 2f64.powi(-9)),
            "{s_used}"
        );
        let mut z = Vec::new();
        let mut y_out = vec![0f64; k];
        let mut y_in = vec![0f64; k];
        let mut back = vec![0f32; d];
        generate(
            &clipped,
            &proj,
            &RowRelease {
                rows: &rows,
                clip: 1.0,
                sigma,
            },
            &mut rng,
            |i, out| {
                proj.project(out, &mut y_out);
                proj.project(&clipped[i * d..(i + 1) * d], &mut y_in);
                for c in 0..k {
                    z.push((y_out[c] - y_in[c]) / s_used);
                }
                proj.lift(&y_out, &mut back);
                for j in 0..d {
                    assert!((back[j] - out[j]).abs() < 1e-4, "left span(P)");
                }
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
        let m = z.len() as f64;
        let ks = ks_normal(&mut z, 1.0);
        let crit = ((2.0f64 / 1e-6).ln() / 2.0).sqrt() / m.sqrt();
        assert!(ks < crit, "KS = {ks} ≥ {crit}");
    }

    #[test]
    fn projected_rows_are_clipped() {
        // A huge row must be clipped in projected space: with tiny noise ‖Pᵀx̂‖ ≤ c.
        let d = 5;
        let proj = Projection::random(d, 3, &mut ReleaseRng::seeded(3)).unwrap();
        let features = vec![100f32; d];
        let mut y = vec![0f64; 3];
        generate(
            &features,
            &proj,
            &RowRelease {
                rows: &[0],
                clip: 0.5,
                sigma: 1e-9,
            },
            &mut ReleaseRng::seeded(4),
            |_, out| {
                proj.project(out, &mut y);
                let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
                // c, plus the grid rounding (≤ g·√k/2) and f32 lifting.
                let g = row_noise(1e-9, 0.5, 3).unwrap().grid();
                assert!(norm <= 0.5 + g * 3f64.sqrt() / 2.0 + 1e-6, "{norm}");
                Ok(())
            },
            |_| Ok(()),
        )
        .unwrap();
    }

    /// The released projected coordinates ỹ lie on the noise grid (exact noise); with the
    /// float ziggurat they almost never do.
    #[test]
    fn released_projected_values_lie_on_the_grid() {
        let d = 20;
        let k = 6;
        let mut rng = ReleaseRng::seeded(9);
        let proj = Projection::random(d, k, &mut rng).unwrap();
        let x: Vec<f32> = (0..d).map(|j| (j as f32 - 7.0) / 3.0).collect();
        for (clip, sigma) in [(1.0, 0.3), (2.0, 50.0)] {
            let noise = row_noise(sigma, clip, k).unwrap();
            let g = noise.grid();
            let mut y = vec![0f64; k];
            for _ in 0..200 {
                release_projected(&proj, &x, clip, &noise, &mut y, &mut rng).unwrap();
                for &v in &y {
                    assert_eq!((v / g).fract(), 0.0, "{v} is not on the grid {g}");
                }
            }
        }
    }
}
