//! A privacy-loss-distribution (PLD) accountant: pessimistic connect-the-dots discretisation
//! (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022), FFT composition with tail bounds, and
//! ε(δ) / δ(ε) queries that never undershoot the truth.
//!
//! * [`pairs`]: dominating pairs given by the tails of their privacy loss — Gaussian, Poisson
//!   and without-replacement subsampled Gaussians (remove, add, replace-one), Laplace,
//!   geometric, discrete Gaussian, and generic discrete/continuous hooks.
//! * [`mechanisms`]: a [`Plan`] for every mechanism the product offers, and [`calibrate`].
//! * [`fft`]: the radix-2 FFT and its error bound.
//!
//! The proofs (why each pair dominates its mechanism, why every step rounds towards more
//! privacy loss, what is charged to δ) are in `PROOF.md` beside this file, included below.
//!
//! # What is charged
//! A [`Composed`] PLD carries `charge`, an additive δ term that covers: the +∞ mass of each
//! step (including the upper truncation), the Chernoff bounds on the composed mass outside
//! the FFT window (wrap-around), and the floating-point error of the FFT (componentwise
//! bound, propagated through the powers). Every finite mass is rounded upward in loss
//! (stochastic dominance) where it is not exact, so δ(ε) = Σ p_i (1 − e^{ε−y_i})₊ + charge is
//! an upper bound on the true δ of the composition for every ε.
//!
#![doc = include_str!("PROOF.md")]

pub mod coupling;
pub mod fft;
pub mod mechanisms;
pub mod pairs;

use crate::error::{Error, Result};
use crate::math::DetFloat;
pub use mechanisms::{calibrate, calibrate_from, Plan};
use pairs::LossPair;
use serde::Serialize;

/// Discretisation settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PldOptions {
    /// The grid step is at most √(Var_total / Σ T_j) / `step_fraction`: connect-the-dots adds
    /// at most h²/4 variance per step, so the composed variance grows by ≤ 1/(4·k²) relative
    /// (k = 25: 0.04 %).
    pub step_fraction: f64,
    /// The grid step is also at most sd_total / `total_fraction` (matters for few steps).
    pub total_fraction: f64,
    /// Tail mass allowed outside the grid per step (to +∞) and outside the FFT window (each
    /// side), both charged to δ.
    pub tail: f64,
    /// Largest FFT length (the step grows if needed; the result stays an upper bound).
    pub max_len: usize,
}

impl Default for PldOptions {
    fn default() -> Self {
        PldOptions {
            step_fraction: 25.0,
            total_fraction: 300.0,
            tail: 1e-13,
            max_len: 1 << 22,
        }
    }
}

impl PldOptions {
    /// The grid [`calibrate`] certifies its answer on by default: 6.25× coarser than
    /// [`PldOptions::default`] (ε about 0.1–0.4 % higher at T = 6·10³…6·10⁴, σ about
    /// 0.1–0.3 % higher), a few ms per evaluation at T = 60,000. Every ε it gives is still an
    /// upper bound.
    pub fn calibration() -> Self {
        PldOptions {
            step_fraction: 4.0,
            total_fraction: 48.0,
            ..PldOptions::default()
        }
    }
}

/// A single step's PLD on the grid y_i = i·h: `pmf[k]` is the mass at index `offset + k`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepPmf {
    /// Grid step h.
    pub h: f64,
    /// Index of `pmf[0]`.
    pub offset: i64,
    /// Finite masses.
    pub pmf: Vec<f64>,
    /// Mass at +∞ (charged to δ).
    pub inf: f64,
}

const U: f64 = fft::U;

/// Largest grid of one step.
pub const MAX_STEP_POINTS: usize = 1 << 23;

/// Pessimistic connect-the-dots discretisation of a pair on the grid of step `h`.
///
/// Mass of A's loss in (y_i, y_{i+1}] is split between y_i and y_{i+1} keeping its B-mass
/// (the connect-the-dots rule); the upper share is then raised by a bound on every rounding
/// error (moving mass up is pessimistic), mass at or below the grid's bottom goes to the
/// bottom point, and mass above the top goes to +∞.
pub fn discretize(pair: &dyn LossPair, h: f64, tau: f64) -> Result<StepPmf> {
    if !(h > 0.0 && h.is_finite()) {
        return Err(Error::Accountant(format!(
            "PLD grid step must be > 0 (got {h})"
        )));
    }
    let (lo, hi) = pair.support(tau);
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(Error::Accountant("PLD support is not finite".into()));
    }
    let i_lo = (lo / h).floor() as i64;
    let i_hi = ((hi / h).ceil() as i64).max(i_lo + 1);
    let n = (i_hi - i_lo + 1) as usize;
    if n > MAX_STEP_POINTS {
        return Err(Error::Accountant(format!(
            "PLD grid too fine: {n} points for one step (h = {h:e})"
        )));
    }
    let mut ga = Vec::with_capacity(n);
    let mut ea = Vec::with_capacity(n);
    let mut gb = Vec::with_capacity(n);
    let mut eb = Vec::with_capacity(n);
    for t in pair.tails_grid(i_lo, n, h) {
        ga.push(t.ga);
        ea.push(t.ea);
        gb.push(t.gb);
        eb.push(t.eb);
    }
    // Upper bounds on A's tails, non-increasing.
    let mut up: Vec<f64> = (0..n).map(|k| (ga[k] + ea[k]).min(1.0)).collect();
    for k in (0..n - 1).rev() {
        if up[k] < up[k + 1] {
            up[k] = up[k + 1];
        }
    }
    let denom = -(-h).dexp_m1(); // 1 − e^{−h}
    let mut pmf = vec![0.0; n];
    pmf[0] = 1.0 - up[0];
    for k in 0..n - 1 {
        let m = up[k] - up[k + 1];
        if m <= 0.0 {
            continue;
        }
        let b = (gb[k] - gb[k + 1]).max(0.0);
        let ey = ((i_lo + k as i64) as f64 * h).dexp();
        let num = m - ey * b;
        // Error of m (tails moved up and evaluation errors at both ends) and of b.
        let dm = (up[k] - ga[k]).abs() + ea[k] + (up[k + 1] - ga[k + 1]).abs() + ea[k + 1];
        let db = eb[k] + eb[k + 1];
        let slack = (dm + ey * db + 8.0 * U * (m + ey * b)) / denom;
        let upper = if num.is_nan() {
            m
        } else {
            (num / denom + slack).clamp(0.0, m)
        };
        pmf[k + 1] += upper;
        pmf[k] += m - upper;
    }
    Ok(StepPmf {
        h,
        offset: i_lo,
        pmf,
        inf: up[n - 1],
    })
}

impl StepPmf {
    /// Mean and variance of the finite part (normalised).
    pub fn moments(&self) -> (f64, f64) {
        let mut s = 0.0;
        let mut m1 = 0.0;
        for (k, &p) in self.pmf.iter().enumerate() {
            let y = (self.offset + k as i64) as f64 * self.h;
            s += p;
            m1 += p * y;
        }
        if s <= 0.0 {
            return (0.0, 0.0);
        }
        let mean = m1 / s;
        let mut v = 0.0;
        for (k, &p) in self.pmf.iter().enumerate() {
            let y = (self.offset + k as i64) as f64 * self.h - mean;
            v += p * y * y;
        }
        (mean, v / s)
    }

    /// ln Σ p_i e^{λ y_i} over the finite part (a sub-probability) for each λ in `lambdas`,
    /// by Horner's rule from the end that dominates (no overflow). One pass over the masses
    /// for all λ of one sign (independent accumulators; per λ the same operations in the same
    /// order as a separate pass).
    fn log_mgfs(&self, lambdas: &[f64; CHERNOFF_POINTS]) -> [f64; CHERNOFF_POINTS] {
        let n = self.pmf.len();
        let mut rho = [0.0; CHERNOFF_POINTS];
        for (r, &l) in rho.iter_mut().zip(lambdas) {
            *r = (-(l.abs()) * self.h).dexp();
        }
        let mut out = [0.0; CHERNOFF_POINTS];
        if lambdas.iter().all(|&l| l >= 0.0) {
            // Σ p_k e^{λ y_k} = e^{λ y_top} Σ p_k ρ^{n−1−k}.
            let mut acc = [0.0; CHERNOFF_POINTS];
            for &p in &self.pmf {
                for j in 0..CHERNOFF_POINTS {
                    acc[j] = acc[j] * rho[j] + p;
                }
            }
            let ytop = (self.offset + n as i64 - 1) as f64 * self.h;
            for j in 0..CHERNOFF_POINTS {
                out[j] = lambdas[j] * ytop + acc[j].dln();
            }
        } else if lambdas.iter().all(|&l| l < 0.0) {
            // Σ p_k e^{λ y_k} = e^{λ y_bot} Σ p_k ρ^k.
            let mut acc = [0.0; CHERNOFF_POINTS];
            for &p in self.pmf.iter().rev() {
                for j in 0..CHERNOFF_POINTS {
                    acc[j] = acc[j] * rho[j] + p;
                }
            }
            let ybot = self.offset as f64 * self.h;
            for j in 0..CHERNOFF_POINTS {
                out[j] = lambdas[j] * ybot + acc[j].dln();
            }
        } else {
            // Mixed signs: one λ at a time.
            for j in 0..CHERNOFF_POINTS {
                out[j] = self.log_mgfs(&[lambdas[j]; CHERNOFF_POINTS])[0];
            }
        }
        out
    }
}

/// Number of λ values the Chernoff window bound tries (each side).
const CHERNOFF_POINTS: usize = 10;
/// The λ values, in units of 1/sd of the composed loss.
const CHERNOFF_SCALES: [f64; CHERNOFF_POINTS] =
    [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

thread_local! {
    /// FFT plans (twiddle tables) of recently used lengths, reused across evaluations (a
    /// calibration evaluates the same few lengths many times).
    static PLANS: std::cell::RefCell<Vec<std::rc::Rc<fft::Fft>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Largest FFT length whose plan is kept between calls (its twiddles take 8·L bytes).
const CACHED_PLAN_MAX: usize = 1 << 20;

fn fft_plan(len: usize) -> std::rc::Rc<fft::Fft> {
    PLANS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(i) = c.iter().position(|p| p.len() == len) {
            let p = c.remove(i);
            c.push(p.clone());
            return p;
        }
        let p = std::rc::Rc::new(fft::Fft::new(len));
        if len <= CACHED_PLAN_MAX {
            if c.len() >= 4 {
                c.remove(0);
            }
            c.push(p.clone());
        }
        p
    })
}

/// The composition of steps, on one grid, with its δ charge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Composed {
    /// Grid step h.
    pub h: f64,
    /// Index of `pmf[0]`.
    pub offset: i64,
    /// Finite masses (an upper bound on the true ones on this window, up to `charge`).
    #[serde(skip)]
    pub pmf: Vec<f64>,
    /// Additive δ charge: +∞ mass, window tails, floating-point error.
    pub charge: f64,
    /// Of which floating-point error.
    pub fp_error: f64,
    /// Of which +∞ mass.
    pub inf_mass: f64,
    /// Of which window tails.
    pub tail_mass: f64,
    /// FFT length.
    pub fft_len: usize,
}

/// Composes `count` copies of each step (all on the same grid step h) by one FFT power:
/// the window the composition is kept on (a Chernoff bound), each step's transform, their
/// pointwise power product with its error bound, and the inverse transform.
pub fn compose(steps: &[(&StepPmf, u64)], tail: f64, max_len: usize) -> Result<Composed> {
    let steps: Vec<(&StepPmf, u64)> = steps.iter().copied().filter(|s| s.1 > 0).collect();
    if steps.is_empty() {
        return Ok(Composed {
            h: 1.0,
            offset: 0,
            pmf: vec![1.0],
            charge: 0.0,
            fp_error: 0.0,
            inf_mass: 0.0,
            tail_mass: 0.0,
            fft_len: 1,
        });
    }
    let h = steps[0].0.h;
    if steps.iter().any(|s| s.0.h != h) {
        return Err(Error::Accountant("PLD steps on different grids".into()));
    }
    // +∞ mass: 1 − Π(1 − inf_j)^{T_j} ≤ Σ T_j inf_j.
    let inf_mass: f64 = steps
        .iter()
        .map(|&(s, t)| s.inf * t as f64)
        .sum::<f64>()
        .min(1.0);
    let Window {
        idx_lo,
        len,
        tail_mass,
    } = window(&steps, h, tail, max_len)?;
    let plan = fft_plan(len);
    let specs = spectra(&steps, &plan, len);
    let Product {
        mut re,
        mut im,
        err_sq,
        l1,
    } = power_product(&specs, len);
    plan.inverse(&mut re, &mut im);
    // Parseval: the inverse transform maps an error vector e to one of ℓ2 norm ‖e‖₂/√L, so
    // its ℓ1 norm is at most ‖e‖₂.
    let fp_error = (err_sq.sqrt() + fft::entry_error_bound(len, l1)) * (1.0 + 1e-6);
    let lenu = len as i64;
    let mut pmf = vec![0.0; len];
    for (b, &v) in re.iter().enumerate() {
        let a = idx_lo + (b as i64 - idx_lo).rem_euclid(lenu);
        let pos = (a - idx_lo) as usize;
        pmf[pos] = v.max(0.0);
    }
    let charge = ((inf_mass + tail_mass + fp_error) * (1.0 + 1e-9)).min(1.0);
    Ok(Composed {
        h,
        offset: idx_lo,
        pmf,
        charge,
        fp_error,
        inf_mass,
        tail_mass,
        fft_len: len,
    })
}

/// Where the composition is kept: grid indices `idx_lo..idx_lo + len` (len a power of two).
struct Window {
    idx_lo: i64,
    len: usize,
    /// The mass left outside, both sides together.
    tail_mass: f64,
}

/// The composition's window: its support cut by Chernoff bounds (at a few λ scaled by the
/// composition's standard deviation) to where each side's mass outside is at most `tail`.
fn window(steps: &[(&StepPmf, u64)], h: f64, tail: f64, max_len: usize) -> Result<Window> {
    // Support and variance.
    let (mut smin, mut smax, mut var) = (0i64, 0i64, 0.0);
    for &(s, t) in steps {
        smin = smin.saturating_add(s.offset.saturating_mul(t as i64));
        smax = smax.saturating_add((s.offset + s.pmf.len() as i64 - 1).saturating_mul(t as i64));
        var += s.moments().1 * t as f64;
    }
    let sd = var.sqrt().max(h);
    // Chernoff window.
    let lt = tail.dln();
    let mut s_hi = smax as f64 * h;
    let mut s_lo = smin as f64 * h;
    let lam_p = CHERNOFF_SCALES.map(|c| c / sd);
    let lam_m = lam_p.map(|l| -l);
    let mut kps = [0.0; CHERNOFF_POINTS];
    let mut kms = [0.0; CHERNOFF_POINTS];
    for &(s, t) in steps {
        let (p, m) = (s.log_mgfs(&lam_p), s.log_mgfs(&lam_m));
        for j in 0..CHERNOFF_POINTS {
            kps[j] += t as f64 * p[j];
            kms[j] += t as f64 * m[j];
        }
    }
    for j in 0..CHERNOFF_POINTS {
        let (lam, kp, km) = (lam_p[j], kps[j], kms[j]);
        if kp.is_finite() {
            s_hi = s_hi.min((kp - lt) / lam);
        }
        if km.is_finite() {
            s_lo = s_lo.max((lt - km) / lam);
        }
    }
    let idx_lo = ((s_lo / h).floor() as i64).max(smin);
    let idx_hi = ((s_hi / h).ceil() as i64).min(smax).max(idx_lo);
    let need = (idx_hi - idx_lo + 1) as usize;
    let len = need.next_power_of_two().max(2);
    if len > max_len {
        return Err(Error::Accountant(format!(
            "PLD window too long ({need} points at h = {h:e})"
        )));
    }
    // Tail mass outside [idx_lo, idx_hi]: each side ≤ tail (or exactly 0 at the support ends).
    let tail_mass = if idx_hi < smax {
        tail * (1.0 + 1e-6)
    } else {
        0.0
    } + if idx_lo > smin {
        tail * (1.0 + 1e-6)
    } else {
        0.0
    };
    Ok(Window {
        idx_lo,
        len,
        tail_mass,
    })
}

/// One step's Fourier transform with its error bound and count.
struct Spec {
    re: Vec<f64>,
    im: Vec<f64>,
    ef: f64,
    t: f64,
    /// ρ below this: ρ^T · (others ≤ (1 + 2ef)^{ΣT}) < e^{−745}.
    thr: f64,
}

/// Each step's masses folded modulo `len` and transformed, two steps per transform, with a
/// bound `ef` on every entry's error.
fn spectra(steps: &[(&StepPmf, u64)], plan: &fft::Fft, len: usize) -> Vec<Spec> {
    let lenu = len as i64;
    // Fold a step's masses modulo L into `out`; returns (ℓ1 bound, folding error).
    let fold = |s: &StepPmf, out: &mut [f64]| {
        let mut l1 = 0.0;
        for (k, &p) in s.pmf.iter().enumerate() {
            let b = (s.offset + k as i64).rem_euclid(lenu) as usize;
            out[b] += p;
            l1 += p;
        }
        // Folding adds at most ⌈n/L⌉ values per bin (exact when n ≤ L).
        let per_bin = s.pmf.len().div_ceil(len) as f64;
        let fold_err = if per_bin > 1.0 { l1 * per_bin * U } else { 0.0 };
        (l1 * (1.0 + per_bin * U), fold_err)
    };
    let mut specs = Vec::with_capacity(steps.len());
    for chunk in steps.chunks(2) {
        let mut re = vec![0.0; len];
        let mut im = vec![0.0; len];
        let (l1, fold_err) = fold(chunk[0].0, &mut re);
        if let [(_, t)] = chunk {
            plan.forward(&mut re, &mut im);
            specs.push(Spec {
                re,
                im,
                ef: fft::entry_error_bound(len, l1) + fold_err,
                t: *t as f64,
                thr: 0.0,
            });
            continue;
        }
        // Two real inputs in one transform: z = a + ib, then A_k = (Z_k + conj Z_{−k})/2 and
        // B_k = (Z_k − conj Z_{−k})/(2i). With |Ẑ_k − Z_k| ≤ E (the transform's bound on an
        // input of ℓ1 norm ≤ ℓ1(a) + ℓ1(b), plus both folding errors), each separated value
        // is off by ≤ E from the exact error terms, plus ≤ 2u(|Ẑ_k| + |Ẑ_{−k}|)/2 ≤
        // 2u(S + E) from the additions (×½ and ×(1/i) are exact), S = ℓ1(a) + ℓ1(b).
        let (l1b, fold_err_b) = fold(chunk[1].0, &mut im);
        plan.forward(&mut re, &mut im);
        let sum = l1 + l1b;
        let e = fft::entry_error_bound(len, sum) + fold_err + fold_err_b;
        let ef = (e + 2.0 * U * (sum + e)) * (1.0 + 1e-6);
        let (mut ar, mut ai) = (vec![0.0; len], vec![0.0; len]);
        let (mut br, mut bi) = (vec![0.0; len], vec![0.0; len]);
        for k in 0..len {
            let m = (len - k) % len;
            let (zr, zi, wr, wi) = (re[k], im[k], re[m], im[m]);
            ar[k] = 0.5 * (zr + wr);
            ai[k] = 0.5 * (zi - wi);
            br[k] = 0.5 * (zi + wi);
            bi[k] = 0.5 * (wr - zr);
        }
        specs.push(Spec {
            re: ar,
            im: ai,
            ef,
            t: chunk[0].1 as f64,
            thr: 0.0,
        });
        specs.push(Spec {
            re: br,
            im: bi,
            ef,
            t: chunk[1].1 as f64,
            thr: 0.0,
        });
    }
    let slack: f64 = specs.iter().map(|sp| sp.t * 2.0 * sp.ef).sum::<f64>() + 1.0;
    for sp in &mut specs {
        sp.thr = ((-745.0 - slack) / sp.t).dexp();
    }
    specs
}

/// The transform of the composition, Π_j F_j^{T_j}, with the sum of its entries' squared
/// error bounds and its ℓ1 norm.
struct Product {
    re: Vec<f64>,
    im: Vec<f64>,
    err_sq: f64,
    l1: f64,
}

/// Π_j F_j^{T_j} entry by entry, in polar form, with each entry's error bound.
fn power_product(specs: &[Spec], len: usize) -> Product {
    let mut gre = vec![0.0; len];
    let mut gim = vec![0.0; len];
    let mut fourier_err_sq = 0.0;
    let mut g_l1 = 0.0;
    // The inputs are real, so the exact product is Hermitian (G_{−k} = conj G_k): it is
    // computed for k ≤ L/2 and mirrored; the mirrored entry's error equals its partner's, so
    // both count in the error sums (weight 2).
    for k in 0..=len / 2 {
        let w = if k == 0 || 2 * k == len { 1.0 } else { 2.0 };
        // Cheap test first: one factor alone below its threshold makes Π ρ^T < e^{−745}.
        if specs
            .iter()
            .any(|sp| (sp.re[k] * sp.re[k] + sp.im[k] * sp.im[k]).sqrt() + sp.ef < sp.thr)
        {
            fourier_err_sq += w * 1e-300;
            continue;
        }
        // log of Π ρ^T and of Π |F̂|^T.
        let mut log_rho = 0.0;
        let mut skip = false;
        for sp in specs {
            let r2 = sp.re[k] * sp.re[k] + sp.im[k] * sp.im[k];
            let rho = r2.sqrt() + sp.ef;
            let l = sp.t * rho.dln();
            log_rho += l.min(sp.t * sp.ef * 2.0); // ρ ≤ 1 + ef in exact arithmetic
            if log_rho < -745.0 {
                skip = true;
                break;
            }
        }
        if skip {
            // |G_k| and its error are below e^{−745}·(Σ T)·…: charge a tiny amount.
            fourier_err_sq += w * 1e-300;
            continue;
        }
        let mut lmag = 0.0;
        let mut arg = 0.0;
        let mut err_sum = 0.0; // Σ T_j ef_j / ρ_j
        let mut rel = 8.0 * U;
        for sp in specs {
            let r = (sp.re[k] * sp.re[k] + sp.im[k] * sp.im[k]).sqrt();
            let rho = r + sp.ef;
            err_sum += sp.t * sp.ef / rho;
            if r == 0.0 {
                lmag = f64::NEG_INFINITY;
                continue;
            }
            let lr = r.dln();
            let th = libm::atan2(sp.im[k], sp.re[k]);
            lmag += sp.t * lr;
            arg += sp.t * th;
            rel += sp.t * 8.0 * U * (1.0 + th.abs() + lr.abs());
        }
        let mag = if lmag == f64::NEG_INFINITY {
            0.0
        } else {
            lmag.dexp()
        };
        let (sn, cs) = libm::sincos(arg);
        gre[k] = mag * cs;
        gim[k] = mag * sn;
        g_l1 += w * mag;
        let ek = log_rho.dexp() * err_sum + mag * rel;
        fourier_err_sq += w * ek * ek;
    }
    for k in 1..len.div_ceil(2) {
        gre[len - k] = gre[k];
        gim[len - k] = -gim[k];
    }
    Product {
        re: gre,
        im: gim,
        err_sq: fourier_err_sq,
        l1: g_l1,
    }
}

impl Composed {
    /// δ(ε) (an upper bound; ≤ 1).
    pub fn delta(&self, eps: f64) -> f64 {
        if eps.is_nan() {
            return 1.0;
        }
        let mut s = 0.0;
        for (k, &p) in self.pmf.iter().enumerate().rev() {
            let y = (self.offset + k as i64) as f64 * self.h;
            if y <= eps {
                break;
            }
            s += p * (-(eps - y).dexp_m1());
        }
        let n = self.pmf.len() as f64;
        (s * (1.0 + 4.0 * n * U) + self.charge).min(1.0)
    }

    /// The smallest ε ≥ 0 (up to rounding, always upward) with δ(ε) ≤ `delta`; +∞ if none.
    pub fn epsilon(&self, delta: f64) -> f64 {
        if delta.is_nan() || delta <= self.charge {
            return f64::INFINITY;
        }
        let n = self.pmf.len();
        let h = self.h;
        let inflate = 1.0 + 4.0 * n as f64 * U;
        let budget = delta - self.charge;
        let e_h = (-h).dexp();
        let om = -(-h).dexp_m1();
        // Scan down: D_j = δ_finite(y_j), A_j = Σ_{i>j} p_i.
        let mut a = 0.0;
        let mut d = 0.0;
        let mut j = n as i64 - 1;
        // At the top point, D = 0.
        while j > 0 {
            let p = self.pmf[j as usize];
            let a_new = a + p;
            let d_new = e_h * d + om * a_new; // D_{j-1}
            if d_new * inflate > budget {
                break;
            }
            a = a_new;
            d = d_new;
            j -= 1;
        }
        let y = |k: i64| (self.offset + k) as f64 * h;
        if j == 0 {
            // Every grid point meets the budget.
            return y(0).max(0.0);
        }
        // ε ∈ (y_{j−1}, y_j]: δ(ε) = A' − e^{ε − y_{j−1}} B', over i ≥ j.
        let a_full = a + self.pmf[j as usize];
        let b_full = a_full - (e_h * d + om * a_full); // Σ_{i≥j} p_i e^{y_{j−1} − y_i}
        let mut eps = y(j);
        if b_full > 0.0 {
            let t = ((a_full - budget / inflate) / b_full).dln();
            if t.is_finite() && t >= 0.0 {
                let cand = y(j - 1) + t;
                let cand = cand + cand.abs() * 1e-12 + 1e-12;
                if cand < eps && self.delta(cand) <= delta {
                    eps = cand;
                }
            }
        }
        eps.max(0.0)
    }
}

/// The result of an ε query on a [`Plan`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PldEpsilon {
    /// ε (an upper bound; +∞ if none).
    pub epsilon: f64,
    /// δ as given.
    pub delta: f64,
    /// The δ charge included (truncation, window tails, floating point) of the worst branch.
    pub charge: f64,
    /// Grid step used.
    pub grid_step: f64,
    /// FFT length used.
    pub fft_len: usize,
}

/// Checks that a finite result is not NaN (the accountant never returns NaN).
pub(crate) fn no_nan(x: f64) -> f64 {
    if x.is_nan() {
        f64::INFINITY
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::pairs::norm_sf;
    use super::*;

    /// Exact δ(ε) of the Gaussian pair with parameter μ (Balle–Wang 2018).
    fn gauss_delta(mu: f64, eps: f64) -> f64 {
        norm_sf(eps / mu - mu / 2.0) - eps.exp() * norm_sf(eps / mu + mu / 2.0)
    }

    #[test]
    fn gaussian_composition_matches_closed_form_from_above() {
        let opts = PldOptions::default();
        for &(z, t) in &[(1.0, 1u64), (5.0, 10), (20.0, 400), (3.0, 1)] {
            let plan = Plan::gaussian(z, t);
            let mu = (t as f64).sqrt() / z;
            for &eps in &[0.1, 0.5, 1.0, 2.0] {
                let d = plan.delta(eps, &opts).unwrap();
                let truth = gauss_delta(mu, eps);
                assert!(d >= truth, "z={z} T={t} ε={eps}: {d} < {truth}");
                assert!(
                    d <= truth * 1.01 + 1e-10,
                    "z={z} T={t} ε={eps}: {d} vs {truth}"
                );
            }
        }
    }

    /// Exact composition by repeated direct convolution (long double-free: f64 sums of
    /// products of nonnegative numbers, relative error ≤ n·u each).
    fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; a.len() + b.len() - 1];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                out[i + j] += x * y;
            }
        }
        out
    }

    #[test]
    fn two_step_composition_matches_direct_convolution_within_its_charge() {
        // Two different steps on one grid (the packed two-input transform), T = 3 and 5.
        let step = |offset: i64, w: &[f64]| {
            let s: f64 = w.iter().sum();
            StepPmf {
                h: 0.1,
                offset,
                pmf: w.iter().map(|x| x / s).collect(),
                inf: 0.0,
            }
        };
        let a = step(-3, &[1.0, 4.0, 9.0, 3.0, 0.5, 0.1]);
        let b = step(2, &[0.2, 2.0, 7.0, 1.0]);
        let c = compose(&[(&a, 3), (&b, 5)], 1e-300, 1 << 12).unwrap();
        let mut exact = vec![1.0];
        for _ in 0..3 {
            exact = convolve(&exact, &a.pmf);
        }
        for _ in 0..5 {
            exact = convolve(&exact, &b.pmf);
        }
        let off = 3 * a.offset + 5 * b.offset;
        // The whole support fits the window: no tail charge, only floating point.
        assert_eq!(c.tail_mass, 0.0);
        let mut l1 = 0.0;
        for (k, &p) in exact.iter().enumerate() {
            let idx = off + k as i64 - c.offset;
            let got = if idx >= 0 && (idx as usize) < c.pmf.len() {
                c.pmf[idx as usize]
            } else {
                0.0
            };
            l1 += (got - p).abs();
        }
        assert!(
            l1 <= c.fp_error,
            "ℓ1 error {l1:e} above the charge {:e}",
            c.fp_error
        );
        assert!(c.fp_error < 1e-9, "charge {:e}", c.fp_error);
        // Agreement is close (the bound is not vacuous here).
        assert!(l1 < 1e-12, "{l1:e}");
    }

    #[test]
    fn epsilon_until_stops_at_a_branch_above_the_threshold() {
        let opts = PldOptions::calibration();
        let plan = mechanisms::cda_z(0.01, 0.8, 2000, mechanisms::Adjacency::Standard).unwrap();
        let full = plan.epsilon(1e-5, &opts).unwrap().epsilon;
        let (e0, i0) = plan.epsilon_until(1e-5, &opts, f64::INFINITY, 0).unwrap();
        assert_eq!(e0.epsilon, full);
        for first in 0..2 {
            let (e, i) = plan.epsilon_until(1e-5, &opts, 0.0, first).unwrap();
            // stops after the first branch tried: its ε, not above the plan's
            assert_eq!(i, first);
            assert!(e.epsilon <= full && e.epsilon > 0.0);
        }
        let (e, _) = plan
            .epsilon_until(1e-5, &opts, f64::INFINITY, 1 - i0)
            .unwrap();
        assert_eq!(e.epsilon, full);
    }

    #[test]
    fn epsilon_inverts_delta() {
        let opts = PldOptions::default();
        let plan = Plan::gaussian(2.0, 16);
        let e = plan.epsilon(1e-5, &opts).unwrap();
        let mu = 2.0;
        // the exact ε at δ = 1e-5 lies below the reported one, and close
        assert!(gauss_delta(mu, e.epsilon) <= 1e-5);
        assert!(gauss_delta(mu, e.epsilon * 0.995) > 1e-5, "{e:?}");
        assert!(plan.delta(e.epsilon, &opts).unwrap() <= 1e-5);
    }
}
