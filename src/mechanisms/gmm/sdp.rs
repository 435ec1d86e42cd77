//! The SDP of eq. (23) (and of the colored-Gaussian baseline), solved in pure Rust:
//!
//! minimize tr(C X) subject to X ⪰ v_i v_iᵀ for every sensitivity vector v_i, C ≻ 0.
//!
//! For X ≻ 0 the constraint is v_iᵀ X⁻¹ v_i ≤ 1 (Schur complement), so X is the shape of the
//! cheapest ellipsoid {x : xᵀX⁻¹x ≤ 1} containing every v_i. (A scaled constraint
//! X ⪰ c·v vᵀ is the same problem with v scaled by √c, and its solution is c times this one.)
//!
//! **Dual.** With u_i = C^{½} v_i and multipliers λ ≥ 0, minimizing the Lagrangian over X gives
//! g(λ) = 2 tr((Σ λ_i u_i u_iᵀ)^{½}) − Σ λ_i. Writing λ = t·w with w on the simplex and
//! maximizing over t gives g = T(w)², where T(w) = tr(M(w)^{½}), M(w) = Σ w_i u_i u_iᵀ. Every w
//! on the simplex therefore certifies the lower bound T(w)² ≤ optimum (weak duality).
//!
//! **Primal from dual.** Y = T(w)·M(w)^{½} and X = C^{−½} Y C^{−½} have tr(C X) = T(w)². X is
//! made feasible by a conservative inflation: X ← ρ·(1 + 1e−12)·X with
//! ρ = max_i v_iᵀ X⁻¹ v_i, recomputed after the inflation until every constraint holds in
//! floating point; then tr(C X) = ρ(1+1e−12)·T² and the certified relative duality gap is
//! (tr(C X) − T²)/T².
//!
//! **Algorithm.** w is improved by the multiplicative update w_i ← w_i·g_i/T with
//! g_i = u_iᵀ M^{−½} u_i (Σ w_i g_i = T, so w stays on the simplex; the optimality condition
//! is max_i g_i ≤ T), which is the classical algorithm for optimal-design problems of this
//! form. Points whose weight underflows are dropped from the working set; the certificate
//! is always checked against every constraint, and violated ones re-enter the working set.

use super::linalg::{cholesky, forward_solve, sym_eigen, sym_fn, Mat};
use crate::error::{Error, Result};

/// A certified solution.
#[derive(Debug, Clone)]
pub struct SdpSolution {
    /// Feasible X (after inflation).
    pub x: Mat,
    /// tr(C X) of the feasible X.
    pub primal: f64,
    /// T(w)², a certified lower bound on the optimum.
    pub dual: f64,
    /// (primal − dual)/dual.
    pub relative_gap: f64,
    /// The feasibility inflation ρ(1 + 1e−12) applied to the dual-derived X.
    pub inflation: f64,
    /// max_i v_iᵀ X⁻¹ v_i of the returned X (≤ 1).
    pub max_constraint: f64,
    /// Multiplicative-update iterations.
    pub iterations: usize,
}

/// M(w) = Σ_i w_i u_i u_iᵀ over the active constraints.
fn weighted_gram(us: &[Vec<f64>], w: &[f64], active: &[bool], d: usize) -> Mat {
    let mut mm = Mat::zeros(d);
    for (i, u) in us.iter().enumerate() {
        if !active[i] {
            continue;
        }
        for a in 0..d {
            let wa = w[i] * u[a];
            for b in 0..=a {
                mm.a[a * d + b] += wa * u[b];
            }
        }
    }
    for a in 0..d {
        for b in 0..a {
            mm.a[b * d + a] = mm.a[a * d + b];
        }
    }
    mm
}

/// Makes the primal X recovered from the dual feasible (max_i v_iᵀ X⁻¹ v_i ≤ 1) by scaling
/// it up by the largest constraint value (times 1 + 1e−12) at most 20 times; returns X, the
/// total inflation and the final max_i v_iᵀ X⁻¹ v_i.
fn certify(mut x: Mat, vs: &[Vec<f64>]) -> Result<(Mat, f64, f64)> {
    let mut inflation = 1.0;
    let mut maxq = f64::INFINITY;
    for _ in 0..20 {
        let Some(l) = cholesky(&x) else {
            return Err(Error::Data(
                "SDP: the recovered X is not positive definite".into(),
            ));
        };
        maxq = vs
            .iter()
            .map(|v| forward_solve(&l, v).iter().map(|z| z * z).sum::<f64>())
            .fold(0.0, f64::max);
        if maxq <= 1.0 {
            break;
        }
        let f = maxq * (1.0 + 1e-12);
        x = x.scale(f);
        inflation *= f;
    }
    if !(maxq <= 1.0) {
        return Err(Error::Data("SDP: could not certify feasibility".into()));
    }
    Ok((x, inflation, maxq))
}

/// g_i = u_iᵀ M^{-1/2} u_i for the active constraints (all of them when `full`), 0 for the
/// others.
fn constraint_values(us: &[Vec<f64>], m_mhalf: &Mat, active: &[bool], full: bool) -> Vec<f64> {
    us.iter()
        .enumerate()
        .map(|(i, u)| {
            if !(active[i] || full) {
                return 0.0;
            }
            let mu = m_mhalf.mul_vec(u);
            u.iter().zip(&mu).map(|(a, b)| a * b).sum::<f64>()
        })
        .collect()
}

/// One multiplicative-weights step on the dual weights: w_i ← w_i·g_i/T, renormalized;
/// weights below 1e-12/m leave the working set, and on a `full` pass violated constraints
/// (g_i > T) re-enter it.
fn update_weights(w: &mut [f64], active: &mut [bool], g: &[f64], big_t: f64, full: bool) {
    let m = w.len();
    if full {
        // re-activate violated constraints
        for i in 0..m {
            if !active[i] && g[i] > big_t {
                active[i] = true;
                w[i] = 1e-6 / m as f64;
            }
        }
    }
    let mut s = 0.0;
    for i in 0..m {
        if active[i] {
            w[i] *= g[i] / big_t;
            if w[i] < 1e-12 / m as f64 {
                active[i] = false;
                w[i] = 0.0;
            }
            s += w[i];
        }
    }
    for x in w.iter_mut() {
        *x /= s;
    }
}

/// Solves min tr(C X) s.t. X ⪰ v vᵀ for all v in `vs`, to relative gap ≤ `tol`.
/// Errors when the v's do not span R^d (then the optimum is singular), or when C is not
/// positive definite, or when `max_iter` iterations do not reach the tolerance.
pub fn solve_min_trace(c: &Mat, vs: &[Vec<f64>], tol: f64, max_iter: usize) -> Result<SdpSolution> {
    let d = c.n;
    if cholesky(c).is_none() {
        return Err(Error::Data(
            "SDP: the objective matrix (a class precision Σ_k⁻¹) is not positive definite".into(),
        ));
    }
    let c_half = sym_fn(c, |x| x.max(0.0).sqrt());
    let c_mhalf = sym_fn(c, |x| 1.0 / x.max(f64::MIN_POSITIVE).sqrt());
    let us: Vec<Vec<f64>> = vs
        .iter()
        .filter(|v| v.iter().any(|x| *x != 0.0))
        .map(|v| c_half.mul_vec(v))
        .collect();
    if us.is_empty() {
        return Err(Error::Data("SDP: no non-zero sensitivity vector".into()));
    }
    let m = us.len();
    let mut w = vec![1.0 / m as f64; m];
    let mut active: Vec<bool> = vec![true; m];
    let mut it = 0usize;
    let (mut big_t, mut m_half, mut m_mhalf);
    loop {
        // M(w), its square root and inverse square root
        let mm = weighted_gram(&us, &w, &active, d);
        let (lam, _) = sym_eigen(&mm);
        let lmax = lam.iter().cloned().fold(0.0, f64::max);
        let lmin = lam.iter().cloned().fold(f64::MAX, f64::min);
        if !(lmin > lmax * 1e-13) {
            return Err(Error::Data(format!(
                "SDP: the sensitivity vectors do not span all {d} dimensions (the data of a class lie in a subspace); \
                 drop collinear columns or project with the pca option"
            )));
        }
        m_half = sym_fn(&mm, |x| x.max(0.0).sqrt());
        m_mhalf = sym_fn(&mm, |x| 1.0 / x.max(f64::MIN_POSITIVE).sqrt());
        big_t = lam.iter().map(|x| x.max(0.0).sqrt()).sum::<f64>();
        // g_i on the working set every iteration; on every constraint every 25 iterations
        // and before stopping (the certificate below re-checks all of them anyway)
        let full = it % 25 == 0;
        let g = constraint_values(&us, &m_mhalf, &active, full);
        let gmax = g.iter().cloned().fold(0.0, f64::max);
        if gmax / big_t - 1.0 <= 0.5 * tol || it >= max_iter {
            if full || it >= max_iter {
                break;
            }
            // converged on the working set: check everything next iteration
            it = (it / 25 + 1) * 25;
            continue;
        }
        update_weights(&mut w, &mut active, &g, big_t, full);
        it += 1;
    }
    // primal from dual
    let y = m_half.scale(big_t);
    let dual = big_t * big_t;
    let (x, inflation, maxq) = certify(c_mhalf.mul(&y).mul(&c_mhalf).symmetrize(), vs)?;
    let primal: f64 = (0..d)
        .map(|i| (0..d).map(|j| c.get(i, j) * x.get(j, i)).sum::<f64>())
        .sum();
    let relative_gap = (primal - dual) / dual;
    if !(relative_gap <= tol) {
        return Err(Error::Data(format!(
            "SDP: relative duality gap {relative_gap:.3e} above {tol:.0e} after {it} iterations"
        )));
    }
    Ok(SdpSolution {
        x,
        primal,
        dual,
        relative_gap,
        inflation,
        max_constraint: maxq,
        iterations: it,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::gmm::linalg::spd_inverse;
    use serde_json::Value;

    /// Against optima computed offline by cvxpy + Clarabel (cross-checked with SCS) with
    /// `tests/reference/make_gmm_sdp.py`; the instances are stored in full in
    /// `tests/reference/gmm_sdp_reference.json`. Checks: the certified gap is ≤ 1e−6, the
    /// certified lower bound does not exceed the reference optimum and the feasible value is
    /// not below it (both up to the reference's own accuracy, 1e−7 relative), the value
    /// matches within 2e−6 relative, and every constraint holds for X⁻¹ computed separately.
    #[test]
    fn matches_offline_reference_optima() {
        let text = include_str!("../../../tests/reference/gmm_sdp_reference.json");
        let v: Value = serde_json::from_str(text).unwrap();
        let insts = v["instances"].as_array().unwrap();
        assert_eq!(insts.len(), 8);
        let rows = |x: &Value| -> Vec<Vec<f64>> {
            x.as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|z| z.as_f64().unwrap())
                        .collect()
                })
                .collect()
        };
        for inst in insts {
            let c = Mat::from_rows(&rows(&inst["c"]));
            let vs = rows(&inst["vs"]);
            let opt = inst["optimum"].as_f64().unwrap();
            let s = solve_min_trace(&c, &vs, 1e-6, 200_000).unwrap();
            assert!(s.relative_gap <= 1e-6, "gap {}", s.relative_gap);
            assert!(
                s.dual <= opt * (1.0 + 1e-7),
                "dual {} > optimum {opt}",
                s.dual
            );
            assert!(
                s.primal >= opt * (1.0 - 1e-7),
                "primal {} < optimum {opt}",
                s.primal
            );
            assert!(
                (s.primal - opt).abs() <= 2e-6 * opt,
                "{} vs {opt}",
                s.primal
            );
            let inv = spd_inverse(&s.x).unwrap();
            for v in &vs {
                let q: f64 = (0..c.n)
                    .map(|i| (0..c.n).map(|j| v[i] * inv.get(i, j) * v[j]).sum::<f64>())
                    .sum();
                assert!(q <= 1.0 + 1e-12, "constraint {q}");
            }
        }
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        let c = Mat::eye(2, 1.0);
        // all vectors on a line: the optimum is singular
        let vs = vec![vec![1.0, 1.0], vec![-2.0, -2.0]];
        let e = solve_min_trace(&c, &vs, 1e-6, 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("span"), "{e}");
        let bad = Mat::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]);
        assert!(solve_min_trace(&bad, &[vec![1.0, 0.0], vec![0.0, 1.0]], 1e-6, 1000).is_err());
    }
}
