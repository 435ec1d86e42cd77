//! Small dense symmetric-matrix helpers (d is small: Cholesky, inverse, log-determinant and a
//! cyclic Jacobi eigen-decomposition). Pure Rust, no LAPACK, so they build for wasm32.

use crate::math::DetFloat;

/// A row-major n×n matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Mat {
    /// Dimension.
    pub n: usize,
    /// Row-major entries, length n².
    pub a: Vec<f64>,
}

impl Mat {
    /// The n×n zero matrix.
    pub fn zeros(n: usize) -> Mat {
        Mat {
            n,
            a: vec![0.0; n * n],
        }
    }
    /// The n×n identity times `s`.
    pub fn eye(n: usize, s: f64) -> Mat {
        let mut m = Mat::zeros(n);
        for i in 0..n {
            m.a[i * n + i] = s;
        }
        m
    }
    /// From nested rows (must be square).
    pub fn from_rows(rows: &[Vec<f64>]) -> Mat {
        let n = rows.len();
        let mut m = Mat::zeros(n);
        for (i, r) in rows.iter().enumerate() {
            m.a[i * n..(i + 1) * n].copy_from_slice(&r[..n]);
        }
        m
    }
    /// As nested rows.
    pub fn to_rows(&self) -> Vec<Vec<f64>> {
        (0..self.n)
            .map(|i| self.a[i * self.n..(i + 1) * self.n].to_vec())
            .collect()
    }
    /// Entry (i, j).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }
    /// Sets entry (i, j).
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] = v;
    }
    /// Trace.
    pub fn trace(&self) -> f64 {
        (0..self.n).map(|i| self.get(i, i)).sum()
    }
    /// self · other.
    pub fn mul(&self, o: &Mat) -> Mat {
        let n = self.n;
        let mut m = Mat::zeros(n);
        for i in 0..n {
            for k in 0..n {
                let x = self.get(i, k);
                if x == 0.0 {
                    continue;
                }
                for j in 0..n {
                    m.a[i * n + j] += x * o.get(k, j);
                }
            }
        }
        m
    }
    /// Transpose.
    pub fn t(&self) -> Mat {
        let n = self.n;
        let mut m = Mat::zeros(n);
        for i in 0..n {
            for j in 0..n {
                m.a[j * n + i] = self.get(i, j);
            }
        }
        m
    }
    /// self · s.
    pub fn scale(&self, s: f64) -> Mat {
        Mat {
            n: self.n,
            a: self.a.iter().map(|x| x * s).collect(),
        }
    }
    /// self + other.
    pub fn add(&self, o: &Mat) -> Mat {
        Mat {
            n: self.n,
            a: self.a.iter().zip(&o.a).map(|(x, y)| x + y).collect(),
        }
    }
    /// (self + selfᵀ)/2.
    pub fn symmetrize(&self) -> Mat {
        let n = self.n;
        let mut m = self.clone();
        for i in 0..n {
            for j in i + 1..n {
                let v = 0.5 * (self.get(i, j) + self.get(j, i));
                m.set(i, j, v);
                m.set(j, i, v);
            }
        }
        m
    }
    /// self · v.
    pub fn mul_vec(&self, v: &[f64]) -> Vec<f64> {
        (0..self.n)
            .map(|i| (0..self.n).map(|j| self.get(i, j) * v[j]).sum())
            .collect()
    }
    /// Whether every entry is finite and the matrix is exactly symmetric.
    pub fn is_symmetric(&self) -> bool {
        let n = self.n;
        self.a.iter().all(|x| x.is_finite())
            && (0..n).all(|i| (0..i).all(|j| self.get(i, j) == self.get(j, i)))
    }
}

/// Lower Cholesky factor L (A = L Lᵀ), or None when A is not numerically positive definite.
pub fn cholesky(a: &Mat) -> Option<Mat> {
    let n = a.n;
    let mut l = Mat::zeros(n);
    for j in 0..n {
        let mut s = a.get(j, j);
        for k in 0..j {
            s -= l.get(j, k) * l.get(j, k);
        }
        if !(s > 0.0) || !s.is_finite() {
            return None;
        }
        let d = s.sqrt();
        l.set(j, j, d);
        for i in j + 1..n {
            let mut s = a.get(i, j);
            for k in 0..j {
                s -= l.get(i, k) * l.get(j, k);
            }
            l.set(i, j, s / d);
        }
    }
    Some(l)
}

/// Solves L y = b for lower-triangular L.
pub fn forward_solve(l: &Mat, b: &[f64]) -> Vec<f64> {
    let n = l.n;
    let mut y = vec![0.0; n];
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l.get(i, k) * y[k];
        }
        y[i] = s / l.get(i, i);
    }
    y
}

/// ln det A from its Cholesky factor.
pub fn logdet_chol(l: &Mat) -> f64 {
    (0..l.n).map(|i| 2.0 * l.get(i, i).dln()).sum()
}

/// A⁻¹ for symmetric positive definite A (symmetrized), or None.
pub fn spd_inverse(a: &Mat) -> Option<Mat> {
    let l = cholesky(a)?;
    let n = a.n;
    let mut inv = Mat::zeros(n);
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let y = forward_solve(&l, &e);
        // back-substitution Lᵀ x = y
        let mut x = vec![0.0; n];
        for i in (0..n).rev() {
            let mut s = y[i];
            for k in i + 1..n {
                s -= l.get(k, i) * x[k];
            }
            x[i] = s / l.get(i, i);
        }
        for i in 0..n {
            inv.set(i, j, x[i]);
        }
    }
    Some(inv.symmetrize())
}

/// Eigen-decomposition of a symmetric matrix by cyclic Jacobi: (eigenvalues, V) with
/// A = V diag(λ) Vᵀ and V's columns the eigenvectors. Converges to machine precision for the
/// small d used here.
pub fn sym_eigen(a: &Mat) -> (Vec<f64>, Mat) {
    let n = a.n;
    let mut m = a.symmetrize();
    let mut v = Mat::eye(n, 1.0);
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m.get(i, j) * m.get(i, j))
            .sum();
        let scale: f64 = m.a.iter().map(|x| x * x).sum::<f64>();
        if off <= 1e-30 * scale.max(f64::MIN_POSITIVE) {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m.get(p, q);
                if apq == 0.0 {
                    continue;
                }
                let app = m.get(p, p);
                let aqq = m.get(q, q);
                let theta = (aqq - app) / (2.0 * apq);
                let t = theta.signum().max(0.0) * 2.0 - 1.0; // sign with sign(0)=+1
                let t = t / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let mkp = m.get(k, p);
                    let mkq = m.get(k, q);
                    m.set(k, p, c * mkp - s * mkq);
                    m.set(k, q, s * mkp + c * mkq);
                }
                for k in 0..n {
                    let mpk = m.get(p, k);
                    let mqk = m.get(q, k);
                    m.set(p, k, c * mpk - s * mqk);
                    m.set(q, k, s * mpk + c * mqk);
                }
                for k in 0..n {
                    let vkp = v.get(k, p);
                    let vkq = v.get(k, q);
                    v.set(k, p, c * vkp - s * vkq);
                    v.set(k, q, s * vkp + c * vkq);
                }
            }
        }
    }
    ((0..n).map(|i| m.get(i, i)).collect(), v)
}

/// V diag(f(λ)) Vᵀ (symmetrized).
pub fn sym_fn(a: &Mat, f: impl Fn(f64) -> f64) -> Mat {
    let (lam, v) = sym_eigen(a);
    let n = a.n;
    let mut m = Mat::zeros(n);
    for (k, &l) in lam.iter().enumerate() {
        let fl = f(l);
        for i in 0..n {
            let vik = v.get(i, k) * fl;
            for j in 0..n {
                m.a[i * n + j] += vik * v.get(j, k);
            }
        }
    }
    m.symmetrize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd() -> Mat {
        Mat::from_rows(&[
            vec![4.0, 1.0, 0.5],
            vec![1.0, 3.0, 0.2],
            vec![0.5, 0.2, 2.0],
        ])
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let a = spd();
        let p = a.mul(&spd_inverse(&a).unwrap());
        for i in 0..3 {
            for j in 0..3 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((p.get(i, j) - e).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn eigen_reconstructs_and_matches_logdet() {
        let a = spd();
        let (lam, _) = sym_eigen(&a);
        let back = sym_fn(&a, |x| x);
        for (x, y) in back.a.iter().zip(&a.a) {
            assert!((x - y).abs() < 1e-12);
        }
        let ld: f64 = lam.iter().map(|l| l.dln()).sum();
        assert!((ld - logdet_chol(&cholesky(&a).unwrap())).abs() < 1e-12);
        // det by cofactor expansion, computed independently
        let det = 4.0 * (3.0 * 2.0 - 0.2 * 0.2) - 1.0 * (1.0 * 2.0 - 0.2 * 0.5)
            + 0.5 * (1.0 * 0.2 - 3.0 * 0.5);
        assert!((ld - f64::ln(det)).abs() < 1e-12);
        let s = sym_fn(&a, f64::sqrt);
        let ss = s.mul(&s);
        for (x, y) in ss.a.iter().zip(&a.a) {
            assert!((x - y).abs() < 1e-12);
        }
    }

    #[test]
    fn cholesky_rejects_indefinite() {
        let a = Mat::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]);
        assert!(cholesky(&a).is_none());
    }
}
