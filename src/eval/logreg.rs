//! Multinomial logistic regression (softmax regression) trained with L-BFGS.
//!
//! The objective is the per-sample averaged softmax cross-entropy plus `l2/2 * ||W||^2`
//! (the bias is not penalised), on internally standardised features. It is minimised by
//! full-batch L-BFGS with a strong-Wolfe line search (bracketing + safeguarded cubic zoom).
//!
//! The two matrix products per objective evaluation (`X·W` and `Xᵀ·(P − Y)`) run through
//! ndarray's pure-Rust `matrixmultiply` kernels. Large problems use `f32` products (with the
//! loss, log-sum-exp and all optimiser state in `f64`); small problems use `f64` throughout,
//! where the cost does not matter and the extra precision lets the gradient reach tight
//! tolerances.

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array2, ArrayView2, LinalgScalar};

use crate::error::{Error, Result};

/// Problems with `n * d * k` at most this large are solved in `f64`, larger ones in `f32`.
const F64_WORK_LIMIT: usize = 20_000_000;
/// L-BFGS memory (number of stored correction pairs).
const MEMORY: usize = 10;
/// Armijo (sufficient decrease) constant of the line search.
const C1: f64 = 1e-4;
/// Curvature constant of the strong-Wolfe line search.
const C2: f64 = 0.9;
/// Maximum objective evaluations per line search.
const MAX_LINE_SEARCH: usize = 12;
/// Rows standardised at once in [`LogReg::predict_proba`].
const PREDICT_CHUNK: usize = 4096;
/// Rows per block in the objective's matrix products (about 1.5 MiB of `f32` at d = 784).
const ROW_BLOCK: usize = 512;

/// Hyper-parameters of [`LogReg::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct LogRegParams {
    /// L2 penalty strength: the objective is the mean cross-entropy plus `l2/2 * ||W||^2`
    /// (bias excluded). Must be finite and `>= 0`. Default `1e-4`.
    pub l2: f64,
    /// Maximum number of L-BFGS iterations. Default `200`.
    pub max_iter: usize,
    /// Convergence tolerance: stop when `||grad||_2 <= tol * max(1, ||grad_0||_2)`, where
    /// `grad_0` is the gradient at the all-zero start. Must be finite and `> 0`.
    /// Default `1e-6`.
    pub tol: f64,
}

impl Default for LogRegParams {
    fn default() -> Self {
        LogRegParams {
            l2: 1e-4,
            max_iter: 200,
            tol: 1e-6,
        }
    }
}

/// Why the optimiser stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The relative gradient norm fell below `tol`: converged.
    GradientTol,
    /// `max_iter` iterations were done without reaching `tol`.
    MaxIter,
    /// The objective could not be decreased meaningfully any more before `tol` was reached:
    /// the line search failed (even from steepest descent), or a step only met sufficient
    /// decrease by an amount at the rounding level of the matrix products (the noise floor
    /// of the `f32` path is typically reached around `1e-6` relative gradient norm).
    NoProgress,
}

/// What happened during [`LogReg::fit`].
#[derive(Debug, Clone)]
pub struct FitInfo {
    /// Number of L-BFGS iterations performed (accepted steps).
    pub iterations: usize,
    /// Number of objective + gradient evaluations.
    pub evaluations: usize,
    /// `true` iff the gradient tolerance was reached ([`StopReason::GradientTol`]).
    pub converged: bool,
    /// Why the optimiser stopped.
    pub stop: StopReason,
    /// Objective value at the returned parameters.
    pub loss: f64,
    /// Euclidean norm of the gradient at the returned parameters.
    pub grad_norm: f64,
    /// Gradient norm at the starting point (all-zero parameters).
    pub initial_grad_norm: f64,
    /// Objective value at the start and after every iteration (`iterations + 1` entries).
    pub loss_history: Vec<f64>,
}

/// A fitted multinomial logistic regression model.
#[derive(Debug, Clone)]
pub struct LogReg {
    /// Per-feature training mean.
    mean: Vec<f64>,
    /// Per-feature divisor (training std, or 1 for constant features).
    scale: Vec<f64>,
    /// Weights in standardised feature space, `d x k`.
    weights: Array2<f64>,
    /// Bias per class.
    bias: Vec<f64>,
    /// Optimisation report.
    info: FitInfo,
}

impl LogReg {
    /// Fits the model on `x` (`n x d`) with labels `y` in `0..n_classes`.
    ///
    /// Errors on empty data, `y.len() != x.nrows()`, a label `>= n_classes`, non-finite
    /// features, or invalid parameters. Not converging within `max_iter` is not an error:
    /// check [`LogReg::info`].
    pub fn fit(x: ArrayView2<f32>, y: &[u32], n_classes: usize, p: &LogRegParams) -> Result<Self> {
        let work = x
            .nrows()
            .saturating_mul(x.ncols())
            .saturating_mul(n_classes);
        if work <= F64_WORK_LIMIT {
            Self::fit_with::<f64>(x, y, n_classes, p)
        } else {
            Self::fit_with::<f32>(x, y, n_classes, p)
        }
    }

    /// Fits with a forced arithmetic type for the matrix products.
    fn fit_with<T: Real>(
        x: ArrayView2<f32>,
        y: &[u32],
        n_classes: usize,
        p: &LogRegParams,
    ) -> Result<Self> {
        check_params(p)?;
        super::check_xy(x, y, n_classes)?;
        let (mean, scale) = standardization(x);
        let mut obj = Objective::<T>::new(x, &mean, &scale, y, n_classes, p.l2);
        let (theta, info) = lbfgs(&mut obj, p);
        let (d, k) = (x.ncols(), n_classes);
        let weights = Array2::from_shape_vec((d, k), theta[..d * k].to_vec()).expect("shape d x k");
        let bias = theta[d * k..].to_vec();
        Ok(LogReg {
            mean,
            scale,
            weights,
            bias,
            info,
        })
    }

    /// The optimisation report (iterations, convergence, loss history).
    pub fn info(&self) -> &FitInfo {
        &self.info
    }

    /// Number of features the model was trained on.
    pub fn n_features(&self) -> usize {
        self.mean.len()
    }

    /// Number of classes.
    pub fn n_classes(&self) -> usize {
        self.bias.len()
    }

    /// Class probabilities, `n x n_classes`.
    ///
    /// # Panics
    /// If `x.ncols()` differs from the number of training features.
    pub fn predict_proba(&self, x: ArrayView2<f32>) -> Array2<f64> {
        let mut out = self.decision_function(x);
        for mut row in out.rows_mut() {
            let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mut s = 0.0;
            for v in row.iter_mut() {
                *v = (*v - m).exp();
                s += *v;
            }
            row.mapv_inplace(|v| v / s);
        }
        out
    }

    /// Most probable class per row (ties go to the smallest class index).
    ///
    /// # Panics
    /// If `x.ncols()` differs from the number of training features.
    pub fn predict(&self, x: ArrayView2<f32>) -> Vec<u32> {
        self.decision_function(x)
            .rows()
            .into_iter()
            .map(|r| super::argmax(r.iter().cloned()))
            .collect()
    }

    /// Logits `standardise(x) · W + b`, computed in `f64` chunk by chunk.
    fn decision_function(&self, x: ArrayView2<f32>) -> Array2<f64> {
        let d = self.n_features();
        assert_eq!(
            x.ncols(),
            d,
            "LogReg::predict: x has {} columns but the model was trained on {d}",
            x.ncols()
        );
        let n = x.nrows();
        let mut out = Array2::<f64>::zeros((n, self.n_classes()));
        let mut buf = Array2::<f64>::zeros((PREDICT_CHUNK.min(n), d));
        let mut start = 0;
        while start < n {
            let end = (start + PREDICT_CHUNK).min(n);
            let mut b = buf.slice_mut(s![..end - start, ..]);
            for (mut brow, xrow) in b
                .rows_mut()
                .into_iter()
                .zip(x.slice(s![start..end, ..]).rows())
            {
                for j in 0..d {
                    brow[j] = (xrow[j] as f64 - self.mean[j]) / self.scale[j];
                }
            }
            let mut o = out.slice_mut(s![start..end, ..]);
            general_mat_mul(1.0, &b, &self.weights, 0.0, &mut o);
            for mut row in o.rows_mut() {
                row.iter_mut().zip(&self.bias).for_each(|(v, b)| *v += b);
            }
            start = end;
        }
        out
    }
}

fn check_params(p: &LogRegParams) -> Result<()> {
    if !(p.l2.is_finite() && p.l2 >= 0.0) {
        return Err(Error::param(
            "l2",
            p.l2,
            "use a finite L2 penalty >= 0 (e.g. 1e-4)",
        ));
    }
    if !(p.tol.is_finite() && p.tol > 0.0) {
        return Err(Error::param(
            "tol",
            p.tol,
            "use a finite tolerance > 0 (e.g. 1e-6)",
        ));
    }
    Ok(())
}

/// Per-column mean and divisor (population std; 1 where the std is 0 or tiny).
fn standardization(x: ArrayView2<f32>) -> (Vec<f64>, Vec<f64>) {
    let (n, d) = x.dim();
    let mut mean = vec![0.0f64; d];
    for row in x.rows() {
        for (m, v) in mean.iter_mut().zip(row.iter()) {
            *m += *v as f64;
        }
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let mut var = vec![0.0f64; d];
    for row in x.rows() {
        for ((s, v), m) in var.iter_mut().zip(row.iter()).zip(&mean) {
            let c = *v as f64 - m;
            *s += c * c;
        }
    }
    let scale = var
        .iter()
        .zip(&mean)
        .map(|(s, m)| {
            let sd = (s / n as f64).sqrt();
            // A (numerically) constant column: centre only.
            if sd <= 1e-12 * m.abs().max(1.0) {
                1.0
            } else {
                sd
            }
        })
        .collect();
    (mean, scale)
}

/// Floating-point type used for the matrix products.
pub(crate) trait Real: LinalgScalar + Into<f64> + Send + Sync + std::fmt::Debug {
    /// Machine epsilon of the type.
    const EPS: f64;
    fn from_f64(v: f64) -> Self;
}
impl Real for f32 {
    const EPS: f64 = f32::EPSILON as f64;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl Real for f64 {
    const EPS: f64 = f64::EPSILON;
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// The regularised softmax cross-entropy on standardised data, with reusable buffers.
///
/// Parameters are a flat `f64` vector: `W` (`d x k`, row-major) followed by `b` (`k`).
pub(crate) struct Objective<T: Real> {
    xs: Array2<T>,
    y: Vec<u32>,
    k: usize,
    l2: f64,
    /// `d x k` weights in `T`.
    w: Array2<T>,
    /// Logits of one row block, then `(P - Y) / n` (`ROW_BLOCK x k`).
    z: Array2<T>,
    /// `d x k` gradient of the data term.
    gw: Array2<T>,
    evaluations: usize,
}

impl<T: Real> Objective<T> {
    pub(crate) fn new(
        x: ArrayView2<f32>,
        mean: &[f64],
        scale: &[f64],
        y: &[u32],
        k: usize,
        l2: f64,
    ) -> Self {
        let (n, d) = x.dim();
        let mut xs = Array2::<T>::zeros((n, d));
        for (mut r, xr) in xs.rows_mut().into_iter().zip(x.rows()) {
            for j in 0..d {
                r[j] = T::from_f64((xr[j] as f64 - mean[j]) / scale[j]);
            }
        }
        Objective {
            xs,
            y: y.to_vec(),
            k,
            l2,
            w: Array2::zeros((d, k)),
            z: Array2::zeros((ROW_BLOCK.min(n), k)),
            gw: Array2::zeros((d, k)),
            evaluations: 0,
        }
    }

    /// Number of parameters (`d * k + k`).
    pub(crate) fn dim(&self) -> usize {
        (self.xs.ncols() + 1) * self.k
    }

    /// Objective value at `theta`; writes the gradient into `grad`.
    pub(crate) fn eval(&mut self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.evaluations += 1;
        let (n, d) = self.xs.dim();
        let k = self.k;
        let dk = d * k;
        for (w, t) in self.w.iter_mut().zip(&theta[..dk]) {
            *w = T::from_f64(*t);
        }
        let bias = &theta[dk..];
        let inv_n = 1.0 / n as f64;
        let mut data_loss = 0.0f64;
        let mut logits = vec![0.0f64; k];
        let gb = &mut grad[dk..];
        gb.iter_mut().for_each(|g| *g = 0.0);
        // Row blocks small enough to stay in cache between the two products, so `X` is
        // streamed from memory once per evaluation.
        let mut start = 0;
        while start < n {
            let end = (start + ROW_BLOCK).min(n);
            let xb = self.xs.slice(s![start..end, ..]);
            let mut zb = self.z.slice_mut(s![..end - start, ..]);
            general_mat_mul(T::one(), &xb, &self.w, T::zero(), &mut zb);
            for (mut zr, &yi) in zb.rows_mut().into_iter().zip(&self.y[start..end]) {
                let mut m = f64::NEG_INFINITY;
                for (l, (zv, b)) in logits.iter_mut().zip(zr.iter().zip(bias)) {
                    *l = (*zv).into() + b;
                    m = m.max(*l);
                }
                let mut s = 0.0;
                for l in &logits {
                    s += (l - m).exp();
                }
                let lse = m + s.ln();
                data_loss += lse - logits[yi as usize];
                for (c, (zv, l)) in zr.iter_mut().zip(&logits).enumerate() {
                    let mut r = (l - lse).exp();
                    if c == yi as usize {
                        r -= 1.0;
                    }
                    r *= inv_n;
                    gb[c] += r;
                    *zv = T::from_f64(r);
                }
            }
            let beta = if start == 0 { T::zero() } else { T::one() };
            general_mat_mul(T::one(), &xb.t(), &zb, beta, &mut self.gw);
            start = end;
        }
        let mut penalty = 0.0;
        for ((g, gw), t) in grad[..dk].iter_mut().zip(self.gw.iter()).zip(&theta[..dk]) {
            *g = (*gw).into() + self.l2 * t;
            penalty += t * t;
        }
        data_loss * inv_n + 0.5 * self.l2 * penalty
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// One evaluated point along the search line.
#[derive(Clone, Copy)]
struct LinePoint {
    step: f64,
    f: f64,
    /// Directional derivative `grad · direction`.
    dg: f64,
}

/// Minimiser of the cubic interpolating `(a.step, a.f, a.dg)` and `(b.step, b.f, b.dg)`,
/// safeguarded to the inner 80% of the interval (bisection if the cubic is degenerate).
fn cubic_step(a: LinePoint, b: LinePoint) -> f64 {
    let (lo, hi) = if a.step < b.step {
        (a.step, b.step)
    } else {
        (b.step, a.step)
    };
    let width = hi - lo;
    let d1 = a.dg + b.dg - 3.0 * (a.f - b.f) / (a.step - b.step);
    let disc = d1 * d1 - a.dg * b.dg;
    let mut t = f64::NAN;
    if disc >= 0.0 {
        let d2 = (b.step - a.step).signum() * disc.sqrt();
        let denom = b.dg - a.dg + 2.0 * d2;
        if denom != 0.0 {
            t = b.step - (b.step - a.step) * (b.dg + d2 - d1) / denom;
        }
    }
    if !t.is_finite() {
        t = lo + 0.5 * width;
    }
    t.clamp(lo + 0.1 * width, hi - 0.1 * width)
}

/// Outcome of a line search: the accepted point is in `x_new`/`g_new`.
enum Search {
    /// Strong Wolfe conditions hold.
    Wolfe(f64),
    /// Only sufficient decrease holds (accepted, but the curvature pair may be skipped).
    Armijo(f64),
    /// No decrease found.
    Failed,
}

/// The line a search walks: from `x` (objective `f0`, slope `dg0` = ∇f(x)·dir < 0) along
/// `dir`.
struct Ray<'a> {
    x: &'a [f64],
    f0: f64,
    dg0: f64,
    dir: &'a [f64],
}

/// Strong-Wolfe line search (Nocedal & Wright, Algorithms 3.5 and 3.6) along `ray`, trying
/// `step0` first.
///
/// On success `x_new`, `g_new` hold the accepted point and its gradient.
fn line_search<T: Real>(
    obj: &mut Objective<T>,
    ray: &Ray<'_>,
    step0: f64,
    x_new: &mut [f64],
    g_new: &mut [f64],
) -> Search {
    let &Ray { x, f0, dg0, dir } = ray;
    let mut eval_at = |step: f64, x_new: &mut [f64], g_new: &mut [f64]| -> LinePoint {
        for ((xn, xi), di) in x_new.iter_mut().zip(x).zip(dir) {
            *xn = xi + step * di;
        }
        let f = obj.eval(x_new, g_new);
        LinePoint {
            step,
            f,
            dg: dot(g_new, dir),
        }
    };
    let armijo = |p: &LinePoint| p.f <= f0 + C1 * p.step * dg0;
    let curvature = |p: &LinePoint| p.dg.abs() <= -C2 * dg0;

    let start = LinePoint {
        step: 0.0,
        f: f0,
        dg: dg0,
    };
    let mut prev = start;
    let mut step = step0;
    let mut evals = 0;
    // Best point satisfying sufficient decrease seen so far (for a fallback).
    let mut best: Option<LinePoint> = None;
    let (mut lo, mut hi);
    loop {
        let p = eval_at(step, x_new, g_new);
        evals += 1;
        if !p.f.is_finite() || !armijo(&p) || (evals > 1 && p.f >= prev.f) {
            lo = prev;
            hi = p;
            break;
        }
        best = Some(p);
        if curvature(&p) {
            return Search::Wolfe(p.f);
        }
        if p.dg >= 0.0 {
            lo = p;
            hi = prev;
            break;
        }
        if evals >= MAX_LINE_SEARCH {
            return Search::Armijo(p.f);
        }
        prev = p;
        step *= 2.0;
    }
    // Zoom: `lo` satisfies sufficient decrease and has the lowest value so far.
    while evals < MAX_LINE_SEARCH {
        let t = if hi.f.is_finite() {
            cubic_step(lo, hi)
        } else {
            0.5 * (lo.step + hi.step)
        };
        if (hi.step - lo.step).abs() <= 1e-12 * lo.step.abs().max(hi.step.abs()) {
            break;
        }
        let p = eval_at(t, x_new, g_new);
        evals += 1;
        if !p.f.is_finite() || !armijo(&p) || p.f >= lo.f {
            hi = p;
        } else {
            best = Some(p);
            if curvature(&p) {
                return Search::Wolfe(p.f);
            }
            if p.dg * (hi.step - lo.step) >= 0.0 {
                hi = lo;
            }
            lo = p;
        }
    }
    match best {
        Some(b) if b.step > 0.0 => {
            // Re-evaluate the best point so that x_new/g_new hold it.
            let p = eval_at(b.step, x_new, g_new);
            if p.f < f0 {
                Search::Armijo(p.f)
            } else {
                Search::Failed
            }
        }
        _ => Search::Failed,
    }
}

/// L-BFGS's memory: the last (at most [`MEMORY`]) curvature pairs s = Δx, y = Δg and
/// ρ = 1/(s·y).
#[derive(Default)]
struct Memory {
    s: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
    rho: Vec<f64>,
}

impl Memory {
    fn clear(&mut self) {
        self.s.clear();
        self.y.clear();
        self.rho.clear();
    }

    fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// `dir` = −H·`g` by the two-loop recursion (H the inverse-Hessian estimate of the stored
    /// pairs, scaled by γ = s·y / y·y of the newest; −`g` when there is none).
    fn direction(&self, g: &[f64], dir: &mut [f64]) {
        let mut alpha = [0.0; MEMORY];
        dir.copy_from_slice(g);
        let m = self.s.len();
        for i in (0..m).rev() {
            alpha[i] = self.rho[i] * dot(&self.s[i], dir);
            dir.iter_mut()
                .zip(&self.y[i])
                .for_each(|(d, y)| *d -= alpha[i] * y);
        }
        let gamma = if m > 0 {
            dot(&self.s[m - 1], &self.y[m - 1]) / dot(&self.y[m - 1], &self.y[m - 1])
        } else {
            1.0
        };
        dir.iter_mut().for_each(|d| *d *= gamma);
        for (i, &a) in alpha.iter().enumerate().take(m) {
            let beta = self.rho[i] * dot(&self.y[i], dir);
            dir.iter_mut()
                .zip(&self.s[i])
                .for_each(|(d, s)| *d += (a - beta) * s);
        }
        dir.iter_mut().for_each(|d| *d = -*d);
    }

    /// Adds the pair s = `x_new` − `x`, y = `g_new` − `g` when its curvature is usable
    /// (`wolfe` or s·y > 0, and s·y not negligible). A full memory drops its oldest pair
    /// first, whose buffers the new pair reuses (dropped even when the new pair is not kept).
    fn update(&mut self, x: &[f64], x_new: &[f64], g: &[f64], g_new: &[f64], wolfe: bool) {
        let dim = x.len();
        let (mut s_vec, mut y_vec) = if self.s.len() == MEMORY {
            self.rho.remove(0);
            (self.s.remove(0), self.y.remove(0))
        } else {
            (vec![0.0; dim], vec![0.0; dim])
        };
        for i in 0..dim {
            s_vec[i] = x_new[i] - x[i];
            y_vec[i] = g_new[i] - g[i];
        }
        let sy = dot(&s_vec, &y_vec);
        if (wolfe || sy > 0.0) && sy > 1e-10 * norm(&s_vec) * norm(&y_vec) {
            self.rho.push(1.0 / sy);
            self.s.push(s_vec);
            self.y.push(y_vec);
        }
    }
}

/// L-BFGS from `theta = 0`. Returns the final parameters and the report.
pub(crate) fn lbfgs<T: Real>(obj: &mut Objective<T>, p: &LogRegParams) -> (Vec<f64>, FitInfo) {
    let dim = obj.dim();
    let mut x = vec![0.0; dim];
    let mut g = vec![0.0; dim];
    let mut x_new = vec![0.0; dim];
    let mut g_new = vec![0.0; dim];
    let mut dir = vec![0.0; dim];
    let mut mem = Memory::default();

    let mut f = obj.eval(&x, &mut g);
    let g0_norm = norm(&g);
    let target = p.tol * g0_norm.max(1.0);
    let mut history = vec![f];
    let mut g_norm = g0_norm;
    let mut iterations = 0;
    let stop;
    loop {
        if g_norm <= target {
            stop = StopReason::GradientTol;
            break;
        }
        if iterations >= p.max_iter {
            stop = StopReason::MaxIter;
            break;
        }
        mem.direction(&g, &mut dir);
        let mut dg0 = dot(&g, &dir);
        if !dg0.is_finite() || dg0 >= 0.0 {
            // Not a descent direction: restart from steepest descent.
            mem.clear();
            dir.iter_mut().zip(&g).for_each(|(d, gi)| *d = -gi);
            dg0 = -g_norm * g_norm;
        }
        let step0 = if mem.is_empty() {
            1.0 / g_norm.max(1.0)
        } else {
            1.0
        };
        let ray = Ray {
            x: &x,
            f0: f,
            dg0,
            dir: &dir,
        };
        let outcome = line_search(obj, &ray, step0, &mut x_new, &mut g_new);
        let (f_new, wolfe) = match outcome {
            Search::Wolfe(v) => (v, true),
            Search::Armijo(v) => (v, false),
            Search::Failed => {
                if mem.is_empty() {
                    stop = StopReason::NoProgress;
                    break;
                }
                // Retry once with steepest descent and a fresh memory.
                mem.clear();
                continue;
            }
        };
        mem.update(&x, &x_new, &g, &g_new, wolfe);
        // Only sufficient decrease, by an amount at the rounding level of the products: the
        // objective's noise floor is reached and further line searches would be wasted.
        let at_noise_floor = !wolfe && f - f_new <= 10.0 * T::EPS * f.abs().max(1.0);
        std::mem::swap(&mut x, &mut x_new);
        std::mem::swap(&mut g, &mut g_new);
        f = f_new;
        g_norm = norm(&g);
        iterations += 1;
        history.push(f);
        if at_noise_floor && g_norm > target {
            stop = StopReason::NoProgress;
            break;
        }
    }
    let info = FitInfo {
        iterations,
        evaluations: obj.evaluations,
        converged: stop == StopReason::GradientTol,
        stop,
        loss: f,
        grad_norm: g_norm,
        initial_grad_norm: g0_norm,
        loss_history: history,
    };
    (x, info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::accuracy;
    use ndarray::{array, Array2};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, Normal};

    /// `n` points from `k` Gaussian blobs in `d` dimensions (class means `spread * N(0, I)`).
    fn blobs(n: usize, d: usize, k: usize, spread: f32, seed: u64) -> (Array2<f32>, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0f32, 1.0).unwrap();
        let mut mean_rng = ChaCha8Rng::seed_from_u64(12345);
        let means = Array2::from_shape_fn((k, d), |_| spread * normal.sample(&mut mean_rng));
        let y: Vec<u32> = (0..n).map(|i| (i % k) as u32).collect();
        let x = Array2::from_shape_fn((n, d), |(i, j)| {
            means[[y[i] as usize, j]] + normal.sample(&mut rng)
        });
        (x, y)
    }

    #[test]
    fn logreg_blobs_accuracy() {
        let (xtr, ytr) = blobs(600, 5, 3, 2.0, 1);
        let (xte, yte) = blobs(600, 5, 3, 2.0, 2);
        let m = LogReg::fit(xtr.view(), &ytr, 3, &LogRegParams::default()).unwrap();
        let acc = accuracy(&m.predict(xte.view()), &yte);
        assert!(acc > 0.95, "accuracy {acc}, info {:?}", m.info());
        let proba = m.predict_proba(xte.view());
        for r in proba.rows() {
            assert!((r.sum() - 1.0).abs() < 1e-9);
        }
    }

    fn check_convergence(info: &FitInfo, tol: f64) {
        assert!(info.converged, "{info:?}");
        assert_eq!(info.stop, StopReason::GradientTol);
        assert!(
            info.grad_norm <= tol * info.initial_grad_norm.max(1.0),
            "{info:?}"
        );
        assert_eq!(info.loss_history.len(), info.iterations + 1);
        assert!(info.iterations >= 3, "{info:?}");
        for w in info.loss_history.windows(2) {
            assert!(w[1] < w[0], "loss increased: {:?}", info.loss_history);
        }
        assert_eq!(*info.loss_history.last().unwrap(), info.loss);
    }

    #[test]
    fn logreg_converges_monotonically() {
        let (x, y) = blobs(500, 8, 4, 0.7, 3);
        let p = LogRegParams {
            l2: 1e-3,
            max_iter: 500,
            tol: 1e-6,
        };
        let m = LogReg::fit(x.view(), &y, 4, &p).unwrap();
        check_convergence(m.info(), p.tol);
        // The f32 path converges too on a well-conditioned problem at a looser tolerance.
        let p32 = LogRegParams {
            l2: 1e-2,
            max_iter: 500,
            tol: 1e-4,
        };
        let m32 = LogReg::fit_with::<f32>(x.view(), &y, 4, &p32).unwrap();
        check_convergence(m32.info(), p32.tol);
        // Both precisions agree on the optimum.
        let m64 = LogReg::fit_with::<f64>(x.view(), &y, 4, &p32).unwrap();
        assert!(
            (m32.info().loss - m64.info().loss).abs() < 1e-5,
            "{} vs {}",
            m32.info().loss,
            m64.info().loss
        );
    }

    #[test]
    fn logreg_max_iter_is_reported() {
        let (x, y) = blobs(300, 6, 3, 0.7, 4);
        let p = LogRegParams {
            max_iter: 2,
            ..Default::default()
        };
        let m = LogReg::fit(x.view(), &y, 3, &p).unwrap();
        assert_eq!(m.info().stop, StopReason::MaxIter);
        assert!(!m.info().converged);
        assert_eq!(m.info().iterations, 2);
    }

    fn gradient_check<T: Real>(rel_tol: f64, h: f64) {
        // More rows than ROW_BLOCK, so that the blocked products are exercised.
        let (x, y) = blobs(ROW_BLOCK * 2 + 77, 3, 3, 1.0, 5);
        let x = x.mapv(|v| v * 3.0 + 1.0);
        let (mean, scale) = standardization(x.view());
        let mut obj = Objective::<T>::new(x.view(), &mean, &scale, &y, 3, 0.3);
        let dim = obj.dim();
        assert_eq!(dim, 12);
        let theta: Vec<f64> = (0..dim)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.15)
            .collect();
        let mut g = vec![0.0; dim];
        obj.eval(&theta, &mut g);
        let mut scratch = vec![0.0; dim];
        for i in 0..dim {
            let mut tp = theta.clone();
            tp[i] += h;
            let fp = obj.eval(&tp, &mut scratch);
            tp[i] -= 2.0 * h;
            let fm = obj.eval(&tp, &mut scratch);
            let fd = (fp - fm) / (2.0 * h);
            assert!(
                (fd - g[i]).abs() <= rel_tol * (1e-2 + g[i].abs()),
                "component {i}: analytic {} vs finite difference {fd}",
                g[i]
            );
        }
    }

    #[test]
    fn logreg_gradient_matches_finite_differences() {
        gradient_check::<f64>(1e-6, 1e-5);
        gradient_check::<f32>(2e-2, 1e-2);
    }

    #[test]
    fn standardization_constant_column() {
        let x = array![
            [1.0f32, 5.0, 0.0],
            [2.0, 5.0, 0.0],
            [3.0, 5.0, 0.0],
            [4.0, 5.0, 0.0]
        ];
        let (mean, scale) = standardization(x.view());
        assert_eq!(mean, vec![2.5, 5.0, 0.0]);
        assert!((scale[0] - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(&scale[1..], &[1.0, 1.0]);
        let y = [0, 0, 1, 1];
        let m = LogReg::fit(x.view(), &y, 2, &LogRegParams::default()).unwrap();
        assert!(m.info().loss.is_finite());
        assert_eq!(m.predict(x.view()), y.to_vec());
        // Unseen values of the constant column shift the logits but stay finite.
        let p = m.predict_proba(array![[1.0f32, 6.0, -1.0]].view());
        assert!(p.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn logreg_absent_class_and_single_class() {
        let (x, y) = blobs(90, 2, 3, 3.0, 6);
        // Declared 4 classes, class 3 never seen: still fits and never predicts it.
        let m = LogReg::fit(x.view(), &y, 4, &LogRegParams::default()).unwrap();
        assert!(m.predict(x.view()).iter().all(|&c| c < 3));
        let ones = [0u32; 90];
        let m = LogReg::fit(x.view(), &ones, 1, &LogRegParams::default()).unwrap();
        assert!(m.info().converged);
        assert!(m.predict(x.view()).iter().all(|&c| c == 0));
    }

    #[test]
    fn logreg_errors() {
        let x = array![[0.0f32, 1.0], [1.0, 0.0]];
        let d = LogRegParams::default();
        let e = LogReg::fit(x.view(), &[0, 2], 2, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("label 2") && e.contains("2 classes"), "{e}");
        let e = LogReg::fit(x.view(), &[0], 2, &d).unwrap_err().to_string();
        assert!(e.contains("1 labels for 2 feature rows"), "{e}");
        let e = LogReg::fit(Array2::<f32>::zeros((0, 2)).view(), &[], 2, &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
        let bad = array![[0.0f32, 1.0], [f32::NEG_INFINITY, 0.0]];
        let e = LogReg::fit(bad.view(), &[0, 1], 2, &d)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("row 2") && e.contains("column 1") && e.contains("-inf"),
            "{e}"
        );
        let e = LogReg::fit(
            x.view(),
            &[0, 1],
            2,
            &LogRegParams {
                l2: -1.0,
                ..d.clone()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("l2 = -1"), "{e}");
        let e = LogReg::fit(x.view(), &[0, 1], 2, &LogRegParams { tol: 0.0, ..d })
            .unwrap_err()
            .to_string();
        assert!(e.contains("tol = 0"), "{e}");
    }
}
