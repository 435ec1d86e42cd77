//! Dense symmetric-matrix helpers (Cholesky, inverse, log-determinant, and an
//! eigen-decomposition: cyclic Jacobi for small d, Householder + implicit QL for large). Pure Rust, no LAPACK, so they build for wasm32.

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

/// Above this dimension [`sym_eigen`] uses [`sym_eigen_tridiagonal`] (O(n³) once instead of
/// per Jacobi sweep); at or below it, the cyclic Jacobi method (whose results the released
/// models of d ≤ 64 were made with).
pub const JACOBI_MAX_DIM: usize = 64;

/// Eigen-decomposition of a symmetric matrix: (eigenvalues, V) with A = V diag(λ) Vᵀ and V's
/// columns the eigenvectors. Cyclic Jacobi up to [`JACOBI_MAX_DIM`] (converges to machine
/// precision for small n), Householder tridiagonalization and implicit QL above.
pub fn sym_eigen(a: &Mat) -> (Vec<f64>, Mat) {
    if a.n > JACOBI_MAX_DIM {
        return sym_eigen_tridiagonal(a);
    }
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

/// Eigen-decomposition of a symmetric matrix by Householder reduction to tridiagonal form and
/// the implicit QL method with Wilkinson-style shifts (the EISPACK tred2/tql2 pair): the same
/// contract as [`sym_eigen`], eigenvalues in ascending order. O(n³) in all, for the large
/// matrices (a d × d second moment of images) where a Jacobi sweep per O(n³) is too slow.
pub fn sym_eigen_tridiagonal(a: &Mat) -> (Vec<f64>, Mat) {
    let n = a.n;
    if n == 0 {
        return (Vec::new(), Mat::zeros(0));
    }
    // The symmetrized input (exactly symmetric, so it reads the same in either order).
    let mut w = a.symmetrize().a;
    let mut d = vec![0f64; n];
    let mut e = vec![0f64; n];
    // EISPACK's v, stored column by column: on return `w` holds its transpose row-major,
    // whose contiguous rows the QL rotations act on.
    tridiagonalize(n, &mut w, &mut d, &mut e);
    ql_implicit(n, &mut w, &mut d, &mut e);
    // Ascending eigenvalues, eigenvectors as the columns of V.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| d[x].total_cmp(&d[y]));
    let mut out = Mat::zeros(n);
    for (c, &src) in order.iter().enumerate() {
        for k in 0..n {
            out.a[k * n + c] = w[src * n + k];
        }
    }
    (order.iter().map(|&i| d[i]).collect(), out)
}

/// Householder reduction of the symmetric `v` (n × n) to tridiagonal form: on return `d` is
/// the diagonal, `e[1..]` the subdiagonal and `v` the accumulated orthogonal transformation
/// (tred2). `v` is stored column by column (v[i][j] at j·n + i): the algorithm's inner loops
/// run down columns (k in v[k][j]), which are then contiguous; the arithmetic is EISPACK's
/// in its order.
fn tridiagonalize(n: usize, v: &mut [f64], d: &mut [f64], e: &mut [f64]) {
    let at = |i: usize, j: usize| j * n + i;
    for (j, dj) in d.iter_mut().enumerate() {
        *dj = v[at(n - 1, j)];
    }
    for i in (1..n).rev() {
        let scale: f64 = d[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
                v[at(j, i)] = 0.0;
            }
        } else {
            for x in d[..i].iter_mut() {
                *x /= scale;
                h += *x * *x;
            }
            let f = d[i - 1];
            let g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            e[..i].iter_mut().for_each(|x| *x = 0.0);
            for j in 0..i {
                let f = d[j];
                v[at(j, i)] = f;
                let mut g = e[j] + v[at(j, j)] * f;
                for k in j + 1..i {
                    g += v[at(k, j)] * d[k];
                    e[k] += v[at(k, j)] * f;
                }
                e[j] = g;
            }
            let mut f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                let (f, g) = (d[j], e[j]);
                for k in j..i {
                    v[at(k, j)] -= f * e[k] + g * d[k];
                }
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
            }
        }
        d[i] = h;
    }
    // Accumulate the transformations.
    for i in 0..n - 1 {
        v[at(n - 1, i)] = v[at(i, i)];
        v[at(i, i)] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[at(k, i + 1)] / h;
            }
            let (cols, rest) = v.split_at_mut((i + 1) * n);
            subtract_projections(cols, n, &rest[..=i], &d[..=i]);
        }
        for k in 0..=i {
            v[at(k, i + 1)] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[at(n - 1, j)];
        v[at(n - 1, j)] = 0.0;
    }
    v[at(n - 1, n - 1)] = 1.0;
    e[0] = 0.0;
}

/// For each column c of `cols` (columns of `n` entries; the first `q.len()` of each are
/// read): g = Σ_k q_k·c_k, then c_k −= g·s_k for every k (tred2's accumulation step, `q` its
/// column i + 1, `s` = q/h). Each g reads only its own column, so the sums run four columns
/// at a time, four independent chains of additions, each in k order from −0.0 (as the
/// one-column `Iterator::sum` adds f64 in current Rust, 1.95 here; an older toolchain whose
/// sum starts at +0.0 differs only in the sign of an all-zero sum): the same numbers as one
/// column at a time.
fn subtract_projections(cols: &mut [f64], n: usize, q: &[f64], s: &[f64]) {
    let len = q.len();
    for group in cols.chunks_mut(4 * n) {
        let mut g = [-0.0f64; 4];
        let m = group.len() / n;
        if m == 4 {
            let (c0, r) = group.split_at(n);
            let (c1, r) = r.split_at(n);
            let (c2, c3) = r.split_at(n);
            for k in 0..len {
                g[0] += q[k] * c0[k];
                g[1] += q[k] * c1[k];
                g[2] += q[k] * c2[k];
                g[3] += q[k] * c3[k];
            }
        } else {
            for (c, gc) in g.iter_mut().enumerate().take(m) {
                let col = &group[c * n..c * n + len];
                *gc = q.iter().zip(col).fold(-0.0, |a, (&x, &y)| a + x * y);
            }
        }
        for (c, &gc) in g.iter().enumerate().take(m) {
            for (x, &sk) in group[c * n..c * n + len].iter_mut().zip(s) {
                *x -= gc * sk;
            }
        }
    }
}

/// The implicit QL method on the tridiagonal (`d`, `e[1..]`), rotating the rows of `w` (the
/// transpose of the accumulated transformation): on return `d` holds the eigenvalues and row
/// i of `w` the eigenvector of `d[i]` (tql2).
fn ql_implicit(n: usize, w: &mut [f64], d: &mut [f64], e: &mut [f64]) {
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1 = 0f64;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            // At most 64 iterations per eigenvalue (EISPACK allows 30; it converges in 1–3).
            for _ in 0..64 {
                let g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = p.hypot(1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let mut h = g - d[l];
                for x in d[l + 2..].iter_mut() {
                    *x -= h;
                }
                f += h;
                p = d[m];
                let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
                let el1 = e[l + 1];
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    h = c * p;
                    r = p.hypot(e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    let (lo, hi) = w.split_at_mut((i + 1) * n);
                    let (row_i, row_i1) = (&mut lo[i * n..], &mut hi[..n]);
                    for (wi, wi1) in row_i.iter_mut().zip(row_i1.iter_mut()) {
                        let h = *wi1;
                        *wi1 = s * *wi + c * h;
                        *wi = c * *wi - s * h;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if e[l].abs() <= eps * tst1 {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
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

    /// A symmetric matrix with entries from a fixed LCG (no RNG crate needed), with a few
    /// repeated eigenvalues when `degenerate` (a block of equal diagonal entries).
    fn lcg_symmetric(n: usize, seed: u64, degenerate: bool) -> Mat {
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut m = Mat::zeros(n);
        for i in 0..n {
            for j in i..n {
                let v = if degenerate && i != j { 0.0 } else { next() };
                m.set(i, j, v);
                m.set(j, i, v);
            }
        }
        if degenerate {
            for i in 0..n / 2 {
                m.set(i, i, 0.25);
            }
        }
        m
    }

    #[test]
    fn tridiagonal_eigen_decomposes_and_agrees_with_jacobi() {
        for (n, seed, degenerate) in [
            (1, 1, false),
            (2, 2, false),
            (7, 3, false),
            (40, 4, false),
            (40, 5, true),
            (130, 6, false),
        ] {
            let a = lcg_symmetric(n, seed, degenerate);
            let (lam, v) = sym_eigen_tridiagonal(&a);
            assert!(
                lam.windows(2).all(|w| w[0] <= w[1]),
                "n = {n}: not ascending"
            );
            // A V = V Λ and VᵀV = I, to 1e-12 of the scale.
            let av = a.mul(&v);
            let vtv = v.t().mul(&v);
            for i in 0..n {
                for j in 0..n {
                    let r = av.get(i, j) - v.get(i, j) * lam[j];
                    assert!(
                        r.abs() < 1e-12 * n as f64,
                        "n = {n}: residual {r} at ({i}, {j})"
                    );
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!(
                        (vtv.get(i, j) - e).abs() < 1e-12,
                        "n = {n}: VᵀV at ({i}, {j})"
                    );
                }
            }
            if n <= JACOBI_MAX_DIM {
                let mut jac = sym_eigen(&a).0;
                jac.sort_by(f64::total_cmp);
                for (x, y) in jac.iter().zip(&lam) {
                    assert!((x - y).abs() < 1e-12, "n = {n}: Jacobi {x} vs QL {y}");
                }
            }
        }
        // Above the threshold, sym_eigen is this method.
        let a = lcg_symmetric(JACOBI_MAX_DIM + 1, 7, false);
        assert_eq!(sym_eigen(&a), sym_eigen_tridiagonal(&a));
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

    /// Four columns at a time give the one-column loop's numbers bit for bit: 1 to 9 columns
    /// (around the group of 4), lengths 1 to n, entries with ±0.0 among them.
    #[test]
    fn subtract_projections_is_the_column_loop_bit_for_bit() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 11 {
                0 => 0.0,
                1 => -0.0,
                r => (x >> 11) as f64 / (1u64 << 53) as f64 * if r % 2 == 0 { 3.0 } else { -1e-3 },
            }
        };
        for n in [1usize, 2, 5, 13] {
            for m in 1..=9 {
                for len in 1..=n {
                    let cols: Vec<f64> = (0..m * n).map(|_| next()).collect();
                    let q: Vec<f64> = (0..len).map(|_| next()).collect();
                    let s: Vec<f64> = (0..len).map(|_| next()).collect();
                    let mut want = cols.clone();
                    for c in 0..m {
                        let g: f64 = (0..len).map(|k| q[k] * want[c * n + k]).sum();
                        for k in 0..len {
                            want[c * n + k] -= g * s[k];
                        }
                    }
                    let mut got = cols;
                    subtract_projections(&mut got, n, &q, &s);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "n {n}, {m} columns, length {len}");
                }
            }
        }
    }

    #[test]
    fn cholesky_rejects_indefinite() {
        let a = Mat::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]);
        assert!(cholesky(&a).is_none());
    }
}
