//! Dominating pairs (A, B) described by the upper tails of their privacy loss
//! L = ln(dA/dB): G_A(y) = A(L > y) and G_B(y) = B(L > y), each with an absolute error bound.
//!
//! The discretiser ([`super::discretize`]) needs nothing else. See `PROOF.md` beside this file
//! for why each pair dominates its mechanism.

use crate::math::DetFloat;
use std::sync::Arc;

/// Relative accuracy assumed for a normal tail Φ̄(x) evaluated with `libm::erfc` at an argument
/// that carries a few ulps of error (|x| ≤ 40: u·x² ≲ 2e-13), with a 5× margin.
pub const TAIL_REL: f64 = 1e-12;

/// Upper tails of the loss at one point, with absolute error bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tails {
    /// A(L > y) (the +∞ atom included).
    pub ga: f64,
    /// Error bound on `ga`.
    pub ea: f64,
    /// B(L > y).
    pub gb: f64,
    /// Error bound on `gb`.
    pub eb: f64,
}

impl Tails {
    fn exact(ga: f64, gb: f64) -> Self {
        Tails {
            ga,
            ea: TAIL_REL * ga,
            gb,
            eb: TAIL_REL * gb,
        }
    }
}

/// A dominating pair given by the tails of its privacy loss (the generic continuous hook).
pub trait LossPair: Send + Sync + std::fmt::Debug {
    /// Tails at a finite y.
    fn tails(&self, y: f64) -> Tails;
    /// A bracket [lo, hi] outside which A has (essentially) no finite loss mass, used only to
    /// place the grid (mass below is moved up, mass above goes to +∞: both pessimistic).
    /// The default searches with the tails.
    fn support(&self, tau: f64) -> (f64, f64) {
        default_support(self, tau)
    }
    /// Tails at every point y_k = (i_lo + k)·h, k < n, of the discretiser's grid (the
    /// default evaluates [`LossPair::tails`] at each; a pair may share work between points,
    /// returning the same values).
    fn tails_grid(&self, i_lo: i64, n: usize, h: f64) -> Vec<Tails> {
        (0..n)
            .map(|k| self.tails((i_lo + k as i64) as f64 * h))
            .collect()
    }
    /// The variance of one step's loss under A, where the pair can give it without the
    /// tails (used only to choose the grid step, which never affects validity: every grid
    /// step gives an upper bound). None: the discretiser estimates it from a coarse grid.
    fn step_variance(&self) -> Option<f64> {
        None
    }
    /// ([E_A[L·1{L>0}], E_A[L²·1{L>0}]], [the same under B]), where the pair can give them
    /// without the tails (for [`Symmetrized`]'s variance); None otherwise.
    fn positive_moments(&self) -> Option<([f64; 2], [f64; 2])> {
        None
    }
}

/// The parts of the loss's first two moments above a threshold y₀: E_P[L·1{L > y₀}] and
/// E_P[L²·1{L > y₀}] for P = A (`a`) and P = B (`b`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PartialMoments {
    a: [f64; 2],
    b: [f64; 2],
}

/// The most points the moment quadrature takes before it leaves the variance to the coarse
/// grid (which it does for μ above about 50: noise multipliers below 0.02).
const QUAD_MAX_POINTS: usize = 20_000;

/// E_P[L(X)·1{lo < X < hi}] and E_P[L(X)²·1{lo < X < hi}] for the laws A = (1−wa)N(0,1) +
/// wa·N(μ,1) and B = (1−wb)N(0,1) + wb·N(μ,1) of X, by composite Simpson over x in [lo, hi] ∩
/// [−14, μ + 14] (the normal mass beyond is < 1e-44), step ≤ 0.05 and ≤ 0.2/μ (the loss bends
/// over about 1/μ in x). None when that would take more than [`QUAD_MAX_POINTS`] points.
fn loss_moments(
    loss: impl Fn(f64) -> f64,
    mu: f64,
    (wa, wb): (f64, f64),
    (lo, hi): (f64, f64),
) -> Option<PartialMoments> {
    let lo = lo.max(-14.0);
    let hi = hi.min(mu + 14.0);
    if !(mu.is_finite() && mu >= 0.0) || lo.is_nan() || hi.is_nan() {
        return None;
    }
    if hi <= lo {
        return Some(PartialMoments {
            a: [0.0; 2],
            b: [0.0; 2],
        });
    }
    let step = 0.05f64.min(0.2 / mu.max(1e-300));
    let n = ((hi - lo) / step).ceil() as usize;
    if n > QUAD_MAX_POINTS {
        return None;
    }
    let n = (n.max(2) + 1) & !1; // even
    let h = (hi - lo) / n as f64;
    let c = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    let mut m = PartialMoments {
        a: [0.0; 2],
        b: [0.0; 2],
    };
    for i in 0..=n {
        let x = lo + i as f64 * h;
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let p0 = c * (-0.5 * x * x).dexp();
        let p1 = c * (-0.5 * (x - mu) * (x - mu)).dexp();
        let l = loss(x);
        let (fa, fb) = ((1.0 - wa) * p0 + wa * p1, (1.0 - wb) * p0 + wb * p1);
        m.a[0] += w * fa * l;
        m.a[1] += w * fa * l * l;
        m.b[0] += w * fb * l;
        m.b[1] += w * fb * l * l;
    }
    for v in m.a.iter_mut().chain(m.b.iter_mut()) {
        *v *= h / 3.0;
    }
    Some(m)
}

fn variance_of(m: [f64; 2]) -> Option<f64> {
    let v = m[1] - m[0] * m[0];
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// Finds hi with G_A(hi) ≤ τ (or 1e4) and lo with 1 − G_A(lo) ≤ τ (or −1e4) by doubling and
/// bisection.
pub fn default_support<P: LossPair + ?Sized>(p: &P, tau: f64) -> (f64, f64) {
    let up = |y: f64| p.tails(y).ga <= tau;
    let down = |y: f64| 1.0 - p.tails(y).ga <= tau;
    let mut hi = 1e-3;
    while !up(hi) && hi < 1e4 {
        hi *= 2.0;
    }
    let mut a = if hi > 1e-3 { hi / 2.0 } else { -1e-3 };
    if up(a) {
        a = -1e4;
    }
    let mut b = hi;
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if up(m) {
            b = m;
        } else {
            a = m;
        }
    }
    let hi = b;
    let mut lo = -1e-3;
    while !down(lo) && lo > -1e4 {
        lo *= 2.0;
    }
    let (mut a, mut b) = (lo, hi);
    for _ in 0..60 {
        let m = 0.5 * (a + b);
        if down(m) {
            a = m;
        } else {
            b = m;
        }
    }
    (a.min(hi), hi)
}

/// Φ̄(x) = P(N(0,1) > x).
pub fn norm_sf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    0.5 * libm::erfc(x * std::f64::consts::FRAC_1_SQRT_2)
}

/// The Gaussian pair A = N(μ, 1), B = N(0, 1), μ = Δ/σ = 1/z: L ~ N(μ²/2, μ²) under A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianPair {
    /// μ = sensitivity / σ ≥ 0.
    pub mu: f64,
}

impl LossPair for GaussianPair {
    fn tails(&self, y: f64) -> Tails {
        let mu = self.mu;
        if mu == 0.0 {
            let g = if y < 0.0 { 1.0 } else { 0.0 };
            return Tails::exact(g, g);
        }
        if mu.is_infinite() {
            return Tails::exact(1.0, 0.0);
        }
        Tails::exact(norm_sf(y / mu - mu / 2.0), norm_sf(y / mu + mu / 2.0))
    }
    fn support(&self, tau: f64) -> (f64, f64) {
        let mu = self.mu;
        if mu == 0.0 || !mu.is_finite() {
            return (-1e-3, 1e-3);
        }
        // Φ̄(k) ≤ τ for k = sqrt(2 ln(1/τ)) + 1.
        let k = (2.0 * (-tau.dln())).sqrt() + 1.0;
        (mu * mu / 2.0 - k * mu, mu * mu / 2.0 + k * mu)
    }
    fn step_variance(&self) -> Option<f64> {
        // L ~ N(μ²/2, μ²) under A.
        self.mu.is_finite().then_some(self.mu * self.mu)
    }
}

/// The "remove" pair of a γ-subsampled Gaussian: A = (1−γ)N(0,1) + γN(μ,1), B = N(0,1).
/// Its loss L(x) = ln(1 − γ + γ e^{μx − μ²/2}) is increasing in x, bounded below by ln(1−γ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureRemove {
    /// Sampling probability γ ∈ (0, 1].
    pub gamma: f64,
    /// μ = 1/z.
    pub mu: f64,
}

impl MixtureRemove {
    /// The x at which L(x) = y, or None if y ≤ ln(1−γ) (then L > y everywhere).
    fn x_of(&self, y: f64) -> Option<f64> {
        let (g, mu) = (self.gamma, self.mu);
        let t = y.dexp_m1() + g; // e^y − (1 − γ)
        if t <= 0.0 {
            return None;
        }
        Some(((t.dln() - g.dln()) + mu * mu / 2.0) / mu)
    }
    /// (A(L > y), B(L > y)) with error bounds.
    fn raw(&self, y: f64) -> Tails {
        let (g, mu) = (self.gamma, self.mu);
        match self.x_of(y) {
            None => Tails {
                ga: 1.0,
                ea: 0.0,
                gb: 1.0,
                eb: 0.0,
            },
            Some(x) => {
                let gb = norm_sf(x);
                let ga = (1.0 - g) * gb + g * norm_sf(x - mu);
                Tails::exact(ga, gb)
            }
        }
    }
    /// The loss at x: ln(1 − γ + γe^{μx − μ²/2}), without overflow.
    fn loss(&self, x: f64) -> f64 {
        let (g, mu) = (self.gamma, self.mu);
        let a = mu * x - mu * mu / 2.0;
        if a > 0.0 {
            a + g.dln() + ((1.0 - g) / g * (-a).dexp()).dln_1p()
        } else {
            (g * a.dexp_m1()).dln_1p()
        }
    }
    /// A's and B's moments of L on L > y₀ (x above x(y₀); everything when y₀ ≤ ln(1−γ)).
    fn moments_above(&self, y0: f64) -> Option<PartialMoments> {
        if !(self.gamma > 0.0 && self.gamma < 1.0 && self.mu > 0.0) {
            return None;
        }
        let lo = self.x_of(y0).unwrap_or(f64::NEG_INFINITY);
        loss_moments(
            |x| self.loss(x),
            self.mu,
            (self.gamma, 0.0),
            (lo, f64::INFINITY),
        )
    }
    /// Lower tails (A(L ≤ y), B(L ≤ y)) computed directly (accurate when small).
    fn raw_lower(&self, y: f64) -> Tails {
        let (g, mu) = (self.gamma, self.mu);
        match self.x_of(y) {
            None => Tails::exact(0.0, 0.0),
            Some(x) => {
                let fb = norm_sf(-x);
                let fa = (1.0 - g) * fb + g * norm_sf(mu - x);
                Tails::exact(fa, fb)
            }
        }
    }
}

impl LossPair for MixtureRemove {
    fn tails(&self, y: f64) -> Tails {
        if self.gamma >= 1.0 {
            return GaussianPair { mu: self.mu }.tails(y);
        }
        if self.mu == 0.0 || self.gamma <= 0.0 {
            return GaussianPair { mu: 0.0 }.tails(y);
        }
        if !self.mu.is_finite() {
            // A has an atom γ at +∞, the rest is B.
            let (ga, gb) = if y < 0.0 {
                (1.0, 1.0)
            } else {
                (self.gamma, 0.0)
            };
            return Tails::exact(ga, gb);
        }
        self.raw(y)
    }
    fn support(&self, tau: f64) -> (f64, f64) {
        if self.gamma >= 1.0 || self.mu == 0.0 || self.gamma <= 0.0 || !self.mu.is_finite() {
            return GaussianPair { mu: self.mu }.support(tau);
        }
        let k = (2.0 * (-tau.dln())).sqrt() + 1.0;
        let (g, mu) = (self.gamma, self.mu);
        // ln(1 − γ + γe^a), without overflow for large a (μ ≫ 1).
        let l = |x: f64| {
            let a = mu * x - mu * mu / 2.0;
            if a > 700.0 {
                a + g.dln() + ((1.0 - g) / g * (-a).dexp()).dln_1p()
            } else {
                (1.0 - g + g * a.dexp()).dln()
            }
        };
        (l(-k), l(self.mu + k))
    }
    fn step_variance(&self) -> Option<f64> {
        if self.gamma >= 1.0 {
            return GaussianPair { mu: self.mu }.step_variance();
        }
        variance_of(self.moments_above(f64::NEG_INFINITY)?.a)
    }
    fn positive_moments(&self) -> Option<([f64; 2], [f64; 2])> {
        let m = self.moments_above(0.0)?;
        Some((m.a, m.b))
    }
}

/// The "add" pair: A = N(0,1), B = (1−γ)N(0,1) + γN(μ,1) (the remove pair reversed). Its loss
/// is −L(x), bounded above by −ln(1−γ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixtureAdd {
    /// Sampling probability γ ∈ (0, 1].
    pub gamma: f64,
    /// μ = 1/z.
    pub mu: f64,
}

impl LossPair for MixtureAdd {
    fn tails(&self, y: f64) -> Tails {
        let r = MixtureRemove {
            gamma: self.gamma,
            mu: self.mu,
        };
        if self.gamma >= 1.0 || self.mu == 0.0 || self.gamma <= 0.0 {
            return r.tails(y); // symmetric (Gaussian) or degenerate
        }
        if !self.mu.is_finite() {
            // A = N(0,1) vs B with an atom at +∞: loss −ln(1−γ) everywhere A lives.
            let top = -(1.0 - self.gamma).dln();
            let g = if y < top { 1.0 } else { 0.0 };
            return Tails::exact(g, g * (1.0 - self.gamma));
        }
        // A(−L > y) = A_r-lower... : under A = N(0,1) = B_r, P(L_r < −y) = B_r(L_r ≤ −y).
        let low = r.raw_lower(-y);
        // ga = B_r(L_r ≤ −y), gb = A_r(L_r ≤ −y).
        Tails {
            ga: low.gb,
            ea: low.eb,
            gb: low.ga,
            eb: low.ea,
        }
    }
    fn support(&self, tau: f64) -> (f64, f64) {
        let (lo, hi) = MixtureRemove {
            gamma: self.gamma,
            mu: self.mu,
        }
        .support(tau);
        // The reversed pair's loss is −L; its A (= N(0,1)) has lighter upper tails.
        (-hi, -lo)
    }
    fn step_variance(&self) -> Option<f64> {
        let r = MixtureRemove {
            gamma: self.gamma,
            mu: self.mu,
        };
        if self.gamma >= 1.0 {
            return r.step_variance();
        }
        // A is the remove pair's B; the loss −L has the same variance.
        variance_of(r.moments_above(f64::NEG_INFINITY)?.b)
    }
}

/// The symmetrised pair of a pair (A, B) that dominates a *symmetric* relation only for
/// orders α ≥ 1 (PROOF.md §3): loss law ω with ω = A-law of L on (0, ∞), ω(−l) = B-law of L at
/// l for l > 0, and an atom at 0 with the rest of the mass.
#[derive(Debug, Clone)]
pub struct Symmetrized {
    inner: Arc<dyn LossPair>,
}

impl Symmetrized {
    /// Wraps a pair; `None` if the atom at 0 would be negative (A(L>0) + B(L>0) > 1), in
    /// which case no symmetric pair with these positive tails exists.
    pub fn new(inner: Arc<dyn LossPair>) -> Option<Self> {
        let t = inner.tails(0.0);
        if t.ga + t.gb > 1.0 + t.ea + t.eb {
            return None;
        }
        Some(Symmetrized { inner })
    }
}

/// The symmetrised tails at −y < 0 from the inner tails `t` at y > 0.
fn mirrored(t: Tails) -> Tails {
    // ω(L > −y) = 1 − B(L ≥ y); B'(L > −y) = 1 − A(L ≥ y) (continuous laws).
    Tails {
        ga: (1.0 - t.gb).max(0.0),
        ea: t.eb + f64::EPSILON,
        gb: (1.0 - t.ga).max(0.0),
        eb: t.ea + f64::EPSILON,
    }
}

impl LossPair for Symmetrized {
    fn tails(&self, y: f64) -> Tails {
        if y >= 0.0 {
            self.inner.tails(y)
        } else {
            mirrored(self.inner.tails(-y))
        }
    }
    /// The inner tails once per |index| (the grid ±j·h is symmetric: (−j)·h = −(j·h)
    /// exactly), so the values equal those of [`Symmetrized::tails`] bit for bit.
    fn tails_grid(&self, i_lo: i64, n: usize, h: f64) -> Vec<Tails> {
        let i_hi = i_lo + n as i64 - 1;
        let (a, m) = if i_lo >= 0 {
            (i_lo, i_hi)
        } else if i_hi <= 0 {
            (-i_hi, -i_lo)
        } else {
            (0, i_hi.max(-i_lo))
        };
        let inner = self.inner.tails_grid(a, (m - a + 1) as usize, h);
        (i_lo..=i_hi)
            .map(|i| {
                if i >= 0 {
                    inner[(i - a) as usize]
                } else {
                    mirrored(inner[(-i - a) as usize])
                }
            })
            .collect()
    }
    fn support(&self, tau: f64) -> (f64, f64) {
        let (_, hi) = self.inner.support(tau);
        (-hi, hi)
    }
    fn step_variance(&self) -> Option<f64> {
        // ω is A's law of L on L > 0, B's law of −L on L > 0, and an atom at 0.
        let (a, b) = self.inner.positive_moments()?;
        variance_of([a[0] - b[0], a[1] + b[1]])
    }
}

/// The Laplace pair A = Lap(1, b), B = Lap(0, b) with ε₀ = 1/b (sensitivity 1): loss in
/// [−ε₀, ε₀] with atoms at both ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaplacePair {
    /// ε₀ = sensitivity / scale.
    pub eps0: f64,
}

impl LossPair for LaplacePair {
    fn tails(&self, y: f64) -> Tails {
        let e = self.eps0;
        if y < -e {
            return Tails::exact(1.0, 1.0);
        }
        if y >= e {
            return Tails::exact(0.0, 0.0);
        }
        // L > y ⇔ x > t with t = (y/ε₀ + 1)/2 ∈ [0, 1).
        let t = (y / e + 1.0) / 2.0;
        let ga = 1.0 - 0.5 * (-(1.0 - t) * e).dexp();
        let gb = 0.5 * (-t * e).dexp();
        Tails {
            ga,
            ea: 4.0 * f64::EPSILON,
            gb,
            eb: 4.0 * f64::EPSILON * gb,
        }
    }
    fn support(&self, _tau: f64) -> (f64, f64) {
        (-self.eps0, self.eps0)
    }
}

/// A pair of discrete distributions on a common finite support (the generic discrete hook):
/// atoms with A-mass a_k and B-mass b_k. Loss ln(a_k/b_k) (+∞ where b_k = 0).
#[derive(Debug, Clone)]
pub struct DiscretePair {
    /// Finite losses, ascending.
    loss: Vec<f64>,
    /// Suffix sums of A and B masses over `loss` (index k: Σ_{j ≥ k}).
    suf_a: Vec<f64>,
    suf_b: Vec<f64>,
    /// A-mass at +∞.
    inf_a: f64,
}

impl DiscretePair {
    /// Builds from (a_k, b_k) atoms; the masses are normalised to sum to 1 each. Errors on
    /// negative/NaN masses or empty sums.
    pub fn new(atoms: &[(f64, f64)]) -> crate::error::Result<Self> {
        let bad = atoms
            .iter()
            .any(|&(a, b)| !(a >= 0.0 && b >= 0.0 && a.is_finite() && b.is_finite()));
        let sa: f64 = atoms.iter().map(|p| p.0).sum();
        let sb: f64 = atoms.iter().map(|p| p.1).sum();
        if bad || sa.is_nan() || sb.is_nan() || sa <= 0.0 || sb <= 0.0 {
            return Err(crate::error::Error::Accountant(
                "a discrete dominating pair needs nonnegative finite masses with positive sums"
                    .into(),
            ));
        }
        let mut v: Vec<(f64, f64, f64)> = Vec::new();
        let mut inf_a = 0.0;
        for &(a, b) in atoms {
            let (a, b) = (a / sa, b / sb);
            if a == 0.0 {
                continue;
            }
            if b == 0.0 {
                inf_a += a;
                continue;
            }
            v.push((a.dln() - b.dln(), a, b));
        }
        v.sort_by(|x, y| x.0.total_cmp(&y.0));
        let n = v.len();
        let mut suf_a = vec![0.0; n + 1];
        let mut suf_b = vec![0.0; n + 1];
        for k in (0..n).rev() {
            suf_a[k] = suf_a[k + 1] + v[k].1;
            suf_b[k] = suf_b[k + 1] + v[k].2;
        }
        Ok(DiscretePair {
            loss: v.iter().map(|t| t.0).collect(),
            suf_a,
            suf_b,
            inf_a,
        })
    }

    /// The discrete Gaussian N_Z(0, σ²) vs N_Z(Δ, σ²) for an integer sensitivity Δ ≥ 1:
    /// loss at k is (2kΔ − Δ²)/(2σ²). Atoms with weight below e^{−745} (underflow) are left
    /// out of both laws symmetrically; their mass is far below every charge.
    pub fn discrete_gaussian(sigma: f64, sens: u64) -> crate::error::Result<Self> {
        if !(sigma > 0.0 && sigma.is_finite()) || sens == 0 {
            return Err(crate::error::Error::Accountant(format!(
                "the discrete Gaussian needs σ > 0 and an integer sensitivity ≥ 1 (got σ = {sigma}, Δ = {sens})"
            )));
        }
        let d = sens as i64;
        let k = (sigma * 39.0).ceil() as i64 + 1;
        if k > 2_000_000 {
            return Err(crate::error::Error::Accountant(format!(
                "σ = {sigma} is too large for the exact discrete-Gaussian loss (over 4·10⁶ atoms)"
            )));
        }
        let w = |x: i64| (-((x * x) as f64) / (2.0 * sigma * sigma)).dexp();
        let atoms: Vec<(f64, f64)> = (-k..=k + d).map(|x| (w(x - d), w(x))).collect();
        Self::new(&atoms)
    }

    /// The two-sided geometric (discrete Laplace) with P(k) ∝ e^{−ε₀|k|}, sensitivity 1.
    pub fn geometric(eps0: f64) -> crate::error::Result<Self> {
        // Loss takes only the values −ε₀ (k ≤ 0 for A centred at 1), ε₀ (k ≥ 1), exactly:
        // A(k ≥ 1) = 1/(1+e^{−ε₀}), B(k ≥ 1) = e^{−ε₀}/(1+e^{−ε₀}).
        if !(eps0 > 0.0 && eps0.is_finite()) {
            return Err(crate::error::Error::Accountant(format!(
                "the geometric mechanism needs ε₀ > 0 (got {eps0})"
            )));
        }
        let r = (-eps0).dexp();
        let hi = 1.0 / (1.0 + r);
        Self::new(&[(hi, hi * r), (1.0 - hi, 1.0 - hi * r)])
    }
}

impl LossPair for DiscretePair {
    fn tails(&self, y: f64) -> Tails {
        let k = self.loss.partition_point(|&l| l <= y);
        let n = self.loss.len().max(1) as f64;
        let ga = self.suf_a[k] + self.inf_a;
        let gb = self.suf_b[k];
        Tails {
            ga,
            ea: n * f64::EPSILON * ga + f64::EPSILON,
            gb,
            eb: n * f64::EPSILON * gb + f64::EPSILON,
        }
    }
    fn support(&self, _tau: f64) -> (f64, f64) {
        match (self.loss.first(), self.loss.last()) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (-1e-3, 1e-3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_tails_at_zero() {
        let t = GaussianPair { mu: 1.0 }.tails(0.0);
        assert!((t.ga - norm_sf(-0.5)).abs() < 1e-15);
        assert!((t.gb - norm_sf(0.5)).abs() < 1e-15);
    }

    #[test]
    fn mixture_with_gamma_one_is_the_gaussian() {
        let a = MixtureRemove {
            gamma: 1.0,
            mu: 0.7,
        }
        .tails(0.3);
        let b = GaussianPair { mu: 0.7 }.tails(0.3);
        assert_eq!(a, b);
        // and below ln(1−γ) everything lies above
        let m = MixtureRemove {
            gamma: 0.1,
            mu: 0.7,
        };
        assert_eq!(m.tails((0.9f64).ln() - 1e-9).ga, 1.0);
    }

    #[test]
    fn symmetrized_mass_at_zero_is_nonnegative() {
        let r: Arc<dyn LossPair> = Arc::new(MixtureRemove {
            gamma: 0.3,
            mu: 2.0,
        });
        let s = Symmetrized::new(r.clone()).unwrap();
        let up = s.tails(0.0).ga;
        let below = s.tails(-1e-12).ga;
        assert!(below >= up); // atom at 0
        let t = r.tails(0.0);
        assert!((below - up - (1.0 - t.ga - t.gb)).abs() < 1e-9);
    }

    #[test]
    fn symmetrized_grid_equals_pointwise_tails() {
        let s = Symmetrized::new(Arc::new(MixtureRemove {
            gamma: 0.01,
            mu: 2.0,
        }))
        .unwrap();
        for &(i_lo, n) in &[(-50i64, 101usize), (-50, 30), (7, 40), (-80, 200), (0, 1)] {
            let h = 0.037;
            let grid = s.tails_grid(i_lo, n, h);
            assert_eq!(grid.len(), n);
            for (k, t) in grid.iter().enumerate() {
                let y = (i_lo + k as i64) as f64 * h;
                assert_eq!(*t, s.tails(y), "index {}", i_lo + k as i64);
            }
        }
    }

    /// The variance of the pmf the discretiser builds from the tails on a fine grid (a
    /// computation independent of the quadrature: the tails come from erfc).
    /// Returns it with the grid step h: connect-the-dots adds at most h²/4 to it.
    fn grid_variance(p: &dyn LossPair) -> (f64, f64) {
        let tau = 1e-16;
        let (lo, hi) = p.support(tau);
        let h = (hi - lo) / f64::from(1 << 18);
        let v = super::super::discretize(p, h, tau).unwrap().moments().1;
        (v, h)
    }

    #[test]
    fn step_variances_match_the_discretised_tails() {
        let mut checked = 0;
        for (gamma, mu) in [
            (0.01, 2.0),
            (0.001, 0.6),
            (0.3, 5.0),
            (0.01, 30.0),
            (0.5, 0.1),
        ] {
            let r: Arc<dyn LossPair> = Arc::new(MixtureRemove { gamma, mu });
            let pairs: [Arc<dyn LossPair>; 4] = [
                r.clone(),
                Arc::new(MixtureAdd { gamma, mu }),
                Arc::new(Symmetrized::new(r).unwrap()),
                Arc::new(GaussianPair { mu }),
            ];
            for p in pairs {
                let v = p.step_variance().expect("these pairs know their variance");
                let (g, h) = grid_variance(p.as_ref());
                let slack = 1e-3 * g + h * h / 4.0;
                assert!(
                    (v - g).abs() <= slack,
                    "{p:?}: {v:e} vs the grid's {g:e} (h = {h:e})"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 20);
        // Beyond the quadrature's reach, or degenerate: the discretiser's coarse grid decides.
        let far = MixtureRemove {
            gamma: 0.01,
            mu: 5000.0,
        };
        assert_eq!(far.step_variance(), None);
        assert_eq!(
            MixtureAdd {
                gamma: 0.01,
                mu: f64::INFINITY
            }
            .step_variance(),
            None
        );
        assert_eq!(LaplacePair { eps0: 1.0 }.step_variance(), None);
    }

    #[test]
    fn laplace_tails_are_consistent() {
        let p = LaplacePair { eps0: 1.0 };
        let t = p.tails(0.0); // x > 1/2
        assert!((t.ga - (1.0 - 0.5 * (-0.5f64).exp())).abs() < 1e-15);
        assert!((t.gb - 0.5 * (-0.5f64).exp()).abs() < 1e-15);
        // atom at ε0 has A-mass 1/2, B-mass e^{-1}/2
        let t = p.tails(1.0 - 1e-12);
        assert!((t.ga - 0.5).abs() < 1e-9 && (t.gb - 0.5 * (-1.0f64).exp()).abs() < 1e-9);
    }

    #[test]
    fn discrete_gaussian_is_normalised() {
        let d = DiscretePair::discrete_gaussian(3.0, 1).unwrap();
        let t = d.tails(-1e9);
        assert!((t.ga - 1.0).abs() < 1e-12 && (t.gb - 1.0).abs() < 1e-12);
        assert!(DiscretePair::discrete_gaussian(0.0, 1).is_err());
        assert!(DiscretePair::new(&[(f64::NAN, 1.0)]).is_err());
    }
}
