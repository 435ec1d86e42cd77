//! [`Plan`]s: which dominating pairs compose, how many times, and under which neighbouring
//! directions — one builder per mechanism the product offers — and [`calibrate`].
//!
//! A plan has one or more *branches*; δ(ε) is the maximum over branches (each branch is one
//! worst-case way a pair of neighbouring datasets can differ; PROOF.md §4). A *directional*
//! plan has exactly two branches, [remove, add] (D' = D minus a record, D' = D plus a
//! record): composing two directional plans pairs remove with remove and add with add (one
//! pair of neighbours is the same pair for every mechanism); any other composition takes all
//! combinations (always valid, possibly looser).

use super::pairs::{
    DiscretePair, GaussianPair, LaplacePair, LossPair, MixtureAdd, MixtureRemove, Symmetrized,
};
use super::{compose, discretize, no_nan, PldEpsilon, PldOptions, StepPmf};
use crate::accountant::recent::Recent;
use crate::accountant::{check_delta, check_epsilon};
use crate::error::{Error, Result};
use crate::math::DetFloat;
use crate::mechanisms::cda::accounting::CdaPrivacy;
use crate::mechanisms::gaussian_steps::GaussianSteps;
use std::sync::Arc;

/// One component of a branch: a pair composed `count` times.
#[derive(Debug, Clone)]
pub struct Part {
    /// The dominating pair of one step.
    pub pair: Arc<dyn LossPair>,
    /// Number of steps.
    pub count: u64,
}

/// A composition to account (see the module docs).
#[derive(Debug, Clone)]
pub struct Plan {
    /// Branches; δ is the maximum over them.
    pub branches: Vec<Vec<Part>>,
    /// Whether the branches are [remove, add].
    pub directional: bool,
}

/// Which neighbouring datasets DP-CDA protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adjacency {
    /// Replace one record, keeping its label (class): replace-one inside one class pool.
    LabelKept,
    /// Replace one whole record, label included (the product default): either inside one
    /// class (as above) or moving from class k to class k′ (k's pool loses a record, k′'s
    /// gains one).
    Standard,
}

fn mu_of(z: f64) -> f64 {
    if z.is_nan() || z <= 0.0 {
        f64::INFINITY
    } else {
        1.0 / z
    }
}

fn one(pair: Arc<dyn LossPair>, count: u64) -> Plan {
    Plan {
        branches: vec![vec![Part { pair, count }]],
        directional: false,
    }
}

fn check_q(q: f64) -> Result<f64> {
    if q > 0.0 && q <= 1.0 {
        Ok(q)
    } else {
        Err(Error::Accountant(format!(
            "sampling rate must lie in (0, 1] (got {q})"
        )))
    }
}

impl Plan {
    /// Nothing released: δ(ε) = 0.
    pub fn empty() -> Self {
        Plan {
            branches: vec![vec![]],
            directional: false,
        }
    }

    /// The Gaussian mechanism with noise multiplier z (σ / L2 sensitivity), `count` times.
    /// Symmetric: valid for add/remove and replace-one with the matching sensitivity.
    pub fn gaussian(z: f64, count: u64) -> Self {
        one(Arc::new(GaussianPair { mu: mu_of(z) }), count)
    }

    /// Poisson-subsampled Gaussian (rate q) under add/remove: branches [remove, add]
    /// (Zhu–Dong–Wang 2022, Theorem 11; what Google's dp_accounting computes).
    pub fn poisson_gaussian(q: f64, z: f64, count: u64) -> Result<Self> {
        let gamma = check_q(q)?;
        let mu = mu_of(z);
        Ok(Plan {
            branches: vec![
                vec![Part {
                    pair: Arc::new(MixtureRemove { gamma, mu }),
                    count,
                }],
                vec![Part {
                    pair: Arc::new(MixtureAdd { gamma, mu }),
                    count,
                }],
            ],
            directional: true,
        })
    }

    /// Fixed-size sampling without replacement (rate q = m/n) of a Gaussian step under
    /// replace-one, `count` times: the symmetrised remove pair (PROOF.md §2–3).
    pub fn wor_replace_one(q: f64, z: f64, count: u64) -> Result<Self> {
        let gamma = check_q(q)?;
        let mu = mu_of(z);
        if gamma >= 1.0 {
            return Ok(Self::gaussian(z, count));
        }
        let inner: Arc<dyn LossPair> = Arc::new(MixtureRemove { gamma, mu });
        let s = Symmetrized::new(inner).ok_or_else(|| {
            Error::Accountant("internal: the without-replacement pair has no symmetrisation".into())
        })?;
        Ok(one(Arc::new(s), count))
    }

    /// Fixed-size sampling without replacement when the pool gains or loses a record
    /// (q = m / size of the larger pool): branches [remove, add] (PROOF.md §2).
    pub fn wor_add_remove(q: f64, z: f64, count: u64) -> Result<Self> {
        // Same pairs as Poisson subsampling.
        Self::poisson_gaussian(q, z, count)
    }

    /// The Laplace mechanism with ε₀ = sensitivity/scale, `count` times.
    pub fn laplace(eps0: f64, count: u64) -> Result<Self> {
        if eps0.is_nan() || eps0 <= 0.0 {
            return Err(Error::Accountant(format!(
                "Laplace needs ε₀ > 0 (got {eps0})"
            )));
        }
        Ok(one(Arc::new(LaplacePair { eps0 }), count))
    }

    /// The geometric (discrete Laplace) mechanism with ε₀ = sensitivity/scale.
    pub fn geometric(eps0: f64, count: u64) -> Result<Self> {
        Ok(one(Arc::new(DiscretePair::geometric(eps0)?), count))
    }

    /// The discrete Gaussian N_Z(0, σ²) with integer L2 sensitivity Δ (one coordinate; for
    /// a vector use the worst-case shift, PROOF.md §5), on the noise's own integer grid.
    pub fn discrete_gaussian(sigma: f64, sensitivity: u64, count: u64) -> Result<Self> {
        Ok(one(
            Arc::new(DiscretePair::discrete_gaussian(sigma, sensitivity)?),
            count,
        ))
    }

    /// A dominating pair given by two discrete distributions (A-mass, B-mass per atom).
    pub fn discrete(atoms: &[(f64, f64)], count: u64) -> Result<Self> {
        Ok(one(Arc::new(DiscretePair::new(atoms)?), count))
    }

    /// Any dominating pair given by its loss tails (it must dominate the mechanism for
    /// every order α ≥ 0, both directions if the relation is symmetric).
    pub fn custom(pair: Arc<dyn LossPair>, count: u64) -> Self {
        one(pair, count)
    }

    /// The composition of two plans.
    pub fn compose(&self, other: &Plan) -> Plan {
        if self.directional && other.directional {
            let branches = self
                .branches
                .iter()
                .zip(&other.branches)
                .map(|(a, b)| a.iter().chain(b).cloned().collect())
                .collect();
            return Plan {
                branches,
                directional: true,
            };
        }
        let mut branches = Vec::new();
        for a in &self.branches {
            for b in &other.branches {
                branches.push(a.iter().chain(b).cloned().collect());
            }
        }
        let directional = (self.directional && other.branches.len() == 1)
            || (other.directional && self.branches.len() == 1);
        Plan {
            branches,
            directional,
        }
    }

    /// ε(δ): the maximum over branches; never NaN (+∞ when nothing finite is valid).
    pub fn epsilon(&self, delta: f64, opts: &PldOptions) -> Result<PldEpsilon> {
        Ok(self.epsilon_until(delta, opts, f64::INFINITY, 0)?.0)
    }

    /// ε(δ) over the branches taken from index `first` on (cyclically), stopping at the first
    /// branch whose ε exceeds `stop_above`: then the result is that branch's ε, a lower bound
    /// on the plan's ε that already exceeds `stop_above` (enough to reject a trial noise in
    /// calibration). Also returns the index of the branch that gave the result.
    pub fn epsilon_until(
        &self,
        delta: f64,
        opts: &PldOptions,
        stop_above: f64,
        first: usize,
    ) -> Result<(PldEpsilon, usize)> {
        self.scan(delta, opts, stop_above, first, 0.0)
    }

    /// ε(δ) for exact discrete Gaussian noise: the continuous plan's ε charged with the
    /// coupling budget `tv` ([`super::coupling`]): per branch the smallest ε with
    /// ε_branch(δ − (1 + e^ε)·tv) ≤ ε, then the maximum (valid for every branch, as each
    /// branch's ε is non-increasing in δ). `charge` includes (1 + e^ε)·tv. `tv` = 0 is
    /// [`Plan::epsilon`].
    pub fn epsilon_coupled(&self, delta: f64, opts: &PldOptions, tv: f64) -> Result<PldEpsilon> {
        Ok(self.scan(delta, opts, f64::INFINITY, 0, tv)?.0)
    }

    /// [`Plan::epsilon_until`] with the coupling budget `tv` (0: none).
    fn scan(
        &self,
        delta: f64,
        opts: &PldOptions,
        stop_above: f64,
        first: usize,
        tv: f64,
    ) -> Result<(PldEpsilon, usize)> {
        check_delta(delta)?;
        let mut worst = PldEpsilon {
            epsilon: 0.0,
            delta,
            charge: 0.0,
            grid_step: 0.0,
            fft_len: 0,
        };
        let n = self.branches.len();
        let mut at = 0;
        for i in 0..n {
            let j = (first + i) % n;
            let (eps, charge, c) = branch_epsilon(&self.branches[j], delta, opts, tv)?;
            if eps >= worst.epsilon {
                worst = PldEpsilon {
                    epsilon: eps,
                    delta,
                    charge,
                    grid_step: c.h,
                    fft_len: c.fft_len,
                };
                at = j;
            }
            if eps > stop_above {
                break;
            }
        }
        Ok((worst, at))
    }

    /// δ(ε): the maximum over branches (an upper bound; ≤ 1).
    pub fn delta(&self, eps: f64, opts: &PldOptions) -> Result<f64> {
        if eps.is_nan() || eps < 0.0 {
            return Err(Error::Accountant(format!("ε must be ≥ 0 (got {eps})")));
        }
        let mut worst: f64 = 0.0;
        for b in &self.branches {
            let c = branch_composed(b, opts, 1.0)?;
            worst = worst.max(c.delta(eps));
        }
        Ok(worst)
    }
}

/// How many branch compositions [`branch_composed`] remembers (per thread), and the longest
/// it keeps (2^17 points, 1 MiB).
const MEMO_ENTRIES: usize = 8;
const MEMO_MAX_LEN: usize = 1 << 17;

thread_local! {
    /// The last compositions, keyed by their whole input written out (`Debug` prints every
    /// pair's parameters and every count exactly; f64s round-trip). A calibration certifies
    /// its answer at the noise it last accounted, and a receipt accounts that noise again:
    /// both get the composition back instead of redoing it. The same input gives the same
    /// bits either way.
    static MEMO: std::cell::RefCell<Recent<String, super::Composed>> =
        const { std::cell::RefCell::new(Recent::new(MEMO_ENTRIES)) };
}

/// Forgets the compositions [`branch_composed`] remembers on this thread, so that a benchmark
/// repeating one calibration times the work and not the memory.
pub fn forget_compositions() {
    MEMO.with(|m| m.borrow_mut().clear());
}

/// Discretises and composes one branch. `refine` divides the automatic grid step. Remembers
/// its last eight answers on each thread ([`forget_compositions`] clears them).
pub fn branch_composed(parts: &[Part], opts: &PldOptions, refine: f64) -> Result<super::Composed> {
    let key = format!("{parts:?}|{opts:?}|{refine:?}");
    if let Some(c) = MEMO.with(|m| m.borrow_mut().find(|k| *k == key)) {
        return Ok(c);
    }
    let c = compose_branch(parts, opts, refine)?;
    if c.pmf.len() <= MEMO_MAX_LEN {
        MEMO.with(|m| m.borrow_mut().keep(key, c.clone()));
    }
    Ok(c)
}

/// [`branch_composed`], computed.
fn compose_branch(parts: &[Part], opts: &PldOptions, refine: f64) -> Result<super::Composed> {
    let parts: Vec<&Part> = parts.iter().filter(|p| p.count > 0).collect();
    if parts.is_empty() {
        return compose(&[], opts.tail, opts.max_len);
    }
    let total: f64 = parts.iter().map(|p| p.count as f64).sum();
    let tau = (opts.tail / total).max(1e-300);
    // The steps' variances set the grid step (any step gives an upper bound).
    let mut var = 0.0;
    let mut widest: f64 = 0.0;
    for p in &parts {
        let (lo, hi) = p.pair.support(tau);
        let w = (hi - lo).max(1e-12);
        widest = widest.max(w);
        // The step's variance from the pair when it knows it (floored at a 4096-point grid's
        // resolution, as the coarse grid's own estimate is: a loss that is almost an atom
        // needs no finer step), else from a coarse grid.
        let v = match p.pair.step_variance() {
            Some(v) => v.max((w / 4096.0).powi(2) / 48.0),
            None => {
                let coarse = discretize(p.pair.as_ref(), w / 4096.0, tau)?;
                coarse.moments().1
            }
        };
        var += v * p.count as f64;
    }
    let mut h = if var > 0.0 {
        ((var / total).sqrt() / opts.step_fraction).min(var.sqrt() / opts.total_fraction)
    } else {
        widest / 64.0
    };
    h /= refine;
    // Keep every step's grid within bounds.
    h = h.max(widest / (super::MAX_STEP_POINTS as f64 / 2.0));
    for _ in 0..12 {
        let pmfs: Vec<StepPmf> = parts
            .iter()
            .map(|p| discretize(p.pair.as_ref(), h, tau))
            .collect::<Result<_>>()?;
        let list: Vec<(&StepPmf, u64)> =
            pmfs.iter().zip(&parts).map(|(s, p)| (s, p.count)).collect();
        match compose(&list, opts.tail, opts.max_len) {
            Ok(c) => return Ok(c),
            Err(_) => h *= 2.0,
        }
    }
    Err(Error::Accountant(
        "the PLD accountant could not fit this composition in memory".into(),
    ))
}

/// One branch's ε at δ with the coupling budget `tv` (0: none), its δ charge (the
/// composition's, plus (1 + e^ε)·tv) and its composed PLD.
fn branch_epsilon(
    parts: &[Part],
    delta: f64,
    opts: &PldOptions,
    tv: f64,
) -> Result<(f64, f64, super::Composed)> {
    let c = branch_composed(parts, opts, 1.0)?;
    let eps = no_nan(super::coupling::coupled_epsilon(delta, tv, |d| {
        c.epsilon(d)
    }));
    let coupling = delta - super::coupling::remaining_delta(delta, eps, tv);
    let charge = if coupling.is_finite() {
        c.charge + coupling
    } else {
        f64::INFINITY
    };
    Ok((eps, charge, c))
}

/// DP-CDA (label-free or with label noise, as `p` says): T = `p.samples` mixes from a pool of
/// `p.pool` rows (the smallest class), noise multiplier from `p`.
pub fn cda(p: &CdaPrivacy, adjacency: Adjacency) -> Result<Plan> {
    let z = p.noise_multiplier()?;
    cda_z(p.sampling_rate(), z, p.samples, adjacency)
}

/// DP-CDA at sampling rate q = l/n_pool and noise multiplier z, T mixes per class.
pub fn cda_z(q: f64, z: f64, samples: u64, adjacency: Adjacency) -> Result<Plan> {
    let within = Plan::wor_replace_one(q, z, samples)?;
    match adjacency {
        Adjacency::LabelKept => Ok(within),
        Adjacency::Standard => {
            // Moving classes: remove from k's pool and add to k′'s (either order gives the
            // same composition), each at rate ≤ q and T mixes.
            let gamma = check_q(q)?;
            let mu = mu_of(z);
            let cross = vec![
                Part {
                    pair: Arc::new(MixtureRemove { gamma, mu }),
                    count: samples,
                },
                Part {
                    pair: Arc::new(MixtureAdd { gamma, mu }),
                    count: samples,
                },
            ];
            let mut branches = within.branches;
            branches.push(cross);
            Ok(Plan {
                branches,
                directional: false,
            })
        }
    }
}

/// DPMix, local perturbation and projection: T identical Gaussian steps on a size-m sample
/// drawn without replacement from n rows (replace-one), no amplification when m = n.
pub fn gaussian_steps(s: &GaussianSteps, name: &str, sigma: f64) -> Result<Plan> {
    let z = s.noise_multiplier(name, sigma)?;
    gaussian_steps_z(s, z)
}

/// [`gaussian_steps`] at a given noise multiplier.
pub fn gaussian_steps_z(s: &GaussianSteps, z: f64) -> Result<Plan> {
    if s.sample >= s.pool {
        Ok(Plan::gaussian(z, s.compositions))
    } else {
        Plan::wor_replace_one(s.sampling_rate(), z, s.compositions)
    }
}

/// One federated view (what the aggregator sees from a client, or the released aggregate):
/// a Gaussian with noise multiplier z on mixes sampled at the local rate q, T mixes.
pub fn federated_view(q: f64, z: f64, samples: u64) -> Result<Plan> {
    Plan::wor_replace_one(q, z, samples)
}

/// The GMM release's Gaussian on the means: one non-subsampled Gaussian with multiplier z.
pub fn gmm_means(z: f64) -> Plan {
    Plan::gaussian(z, 1)
}

/// DP histograms / counts of the normalization extras: `releases` Laplace releases each with
/// ε₀ = sensitivity/scale.
pub fn laplace_extras(eps0: f64, releases: u64) -> Result<Plan> {
    Plan::laplace(eps0, releases)
}

/// The smallest noise s (σ or z, with ε non-increasing in s) whose ε at δ is ≤ `target`, up to
/// a relative tolerance of 0.1 % (the returned s is at most e^{0.001} times the smallest s that
/// `opts`'s grid certifies).
///
/// The true ε is non-increasing in the noise (a larger-σ Gaussian pair is a post-processing of
/// a smaller one, and subsampling and composition preserve that order), so bracketing applies;
/// whatever the discretisation does, the returned s has been accounted with `opts` and meets
/// the target (the upper end of the bracket is only ever a verified point, and the returned
/// [`PldEpsilon`] is that verification).
///
/// Two grids for speed (PROOF.md §9): a grid 4× coarser than `opts` (itself a valid,
/// more pessimistic upper bound) brackets and solves to 2 %; on `opts`'s grid a secant step
/// from the coarse answer (with the coarse slope of ln ε in ln s) then needs two or three
/// evaluations. Use [`PldOptions::calibration`] for interactive speed.
pub fn calibrate(
    target: f64,
    delta: f64,
    opts: &PldOptions,
    plan: impl Fn(f64) -> Result<Plan>,
) -> Result<(f64, PldEpsilon)> {
    calibrate_from(target, delta, opts, None, plan)
}

/// [`calibrate`] starting from a guess of the answer (e.g. the RDP σ); only the speed depends
/// on the guess.
pub fn calibrate_from(
    target: f64,
    delta: f64,
    opts: &PldOptions,
    guess: Option<f64>,
    plan: impl Fn(f64) -> Result<Plan>,
) -> Result<(f64, PldEpsilon)> {
    check_epsilon(target)?;
    check_delta(delta)?;
    let coarse = PldOptions {
        step_fraction: opts.step_fraction / 4.0,
        total_fraction: opts.total_fraction / 4.0,
        ..*opts
    };
    let start = guess.filter(|g| g.is_finite() && *g >= S_MIN && *g <= S_MAX);
    let mut c = Solver::new(target, delta, &coarse, &plan);
    let first = c.eval(start.unwrap_or(1.0))?;
    // Prior slope d ln ε / d ln s = −1.5 (measured −1…−4 for subsampled Gaussians).
    let (lo, hi) = c.bracket_with(first, Some(-1.5), 0.2, 1e-3)?;
    let (lo, hi) = c.narrow(lo, hi, 2e-2)?;
    let slope = lo.and_then(|lo| slope_of(&lo, &hi));
    let mut f = Solver::new(target, delta, opts, &plan);
    let at = f.eval(hi.s)?;
    // Aim 0.4·tol beyond the secant's root: with an accurate slope the step crosses the
    // target by little, and the next secant step closes the bracket.
    let (lo_f, hi_f) = f.bracket_with(at, slope, 0.0, 4e-4)?;
    let (_, hi_f) = f.narrow(lo_f, hi_f, 1e-3)?;
    Ok((hi_f.s, hi_f.e))
}

const S_MIN: f64 = 1e-6;
const S_MAX: f64 = 1e8;

/// One evaluated point: the noise and its ε.
#[derive(Debug, Clone, Copy)]
struct Point {
    s: f64,
    e: PldEpsilon,
}

impl Point {
    /// ln ε, finite for finite ε (+50 stands for +∞, a point far above any target).
    fn g(&self) -> f64 {
        if self.e.epsilon.is_finite() {
            self.e.epsilon.max(1e-300).dln()
        } else {
            50.0
        }
    }
}

/// d ln ε / d ln s between two points, if finite and negative.
fn slope_of(a: &Point, b: &Point) -> Option<f64> {
    if !(a.e.epsilon.is_finite() && b.e.epsilon.is_finite()) || a.s == b.s {
        return None;
    }
    let k = (b.g() - a.g()) / (b.s.dln() - a.s.dln());
    (k.is_finite() && k < -1e-3).then_some(k)
}

struct Solver<'a, F: Fn(f64) -> Result<Plan>> {
    /// The branch that gave the last ε (tried first next time: a trial above the target
    /// then usually costs one branch).
    first: usize,
    /// The last accountant failure at a trial point.
    failure: Option<String>,
    target: f64,
    delta: f64,
    opts: &'a PldOptions,
    plan: &'a F,
}

impl<'a, F: Fn(f64) -> Result<Plan>> Solver<'a, F> {
    fn new(target: f64, delta: f64, opts: &'a PldOptions, plan: &'a F) -> Self {
        Solver {
            first: 0,
            failure: None,
            target,
            delta,
            opts,
            plan,
        }
    }

    fn eval(&mut self, s: f64) -> Result<Point> {
        let s = s.clamp(S_MIN, S_MAX);
        let plan = (self.plan)(s)?;
        match plan.epsilon_until(self.delta, self.opts, self.target, self.first) {
            Ok((e, at)) => {
                self.first = at;
                Ok(Point { s, e })
            }
            // The accountant cannot represent this noise (e.g. a composition too wide for
            // memory at a tiny noise): a rejected trial point, as if ε = +∞ (only ever a
            // lower end; the error is reported if no noise works).
            Err(Error::Accountant(m)) => {
                self.failure = Some(m);
                Ok(Point {
                    s,
                    e: PldEpsilon {
                        epsilon: f64::INFINITY,
                        delta: self.delta,
                        charge: 0.0,
                        grid_step: 0.0,
                        fft_len: 0,
                    },
                })
            }
            Err(e) => Err(e),
        }
    }

    fn ok(&self, p: &Point) -> bool {
        p.e.epsilon <= self.target
    }

    /// A bracket (lo with ε > target, or None when lo would be below S_MIN; hi with ε ≤
    /// target) from one point: secant steps in (ln s, ln ε), aimed beyond the target (by
    /// `rel` of the step plus `abs`, in ln s) so that they cross it, else factors of 4.
    fn bracket_with(
        &mut self,
        p: Point,
        slope: Option<f64>,
        rel: f64,
        abs: f64,
    ) -> Result<(Option<Point>, Point)> {
        let lt = self.target.dln();
        let mut prev: Option<Point> = None;
        let mut cur = p;
        let mut k = slope;
        for _ in 0..80 {
            let up = !self.ok(&cur);
            if let Some(q) = prev {
                if self.ok(&q) != self.ok(&cur) {
                    return Ok(if up { (Some(cur), q) } else { (Some(q), cur) });
                }
                k = slope_of(&q, &cur).or(k);
            }
            if up && cur.s >= S_MAX {
                if let (Some(m), false) = (&self.failure, cur.e.epsilon.is_finite()) {
                    return Err(Error::Accountant(m.clone()));
                }
                return Err(Error::param(
                    "epsilon",
                    self.target,
                    format!(
                        "this target cannot be reached at δ = {} with any amount of noise (ε stays ≥ {:.4}); raise ε or δ",
                        self.delta, cur.e.epsilon
                    ),
                ));
            }
            if !up && cur.s <= S_MIN {
                return Ok((None, cur));
            }
            // Step in ln s: the secant estimate plus the overshoot, clamped to a factor of 4
            // either way; a factor of 4 without a finite slope.
            let d = match k {
                Some(k) if cur.e.epsilon.is_finite() => {
                    let d = (lt - cur.g()) / k;
                    let d = d * (1.0 + rel) + abs * d.signum();
                    d.clamp(-4f64.dln(), 4f64.dln())
                }
                _ => {
                    if up {
                        4f64.dln()
                    } else {
                        -4f64.dln()
                    }
                }
            };
            let next = self.eval(cur.s * d.dexp())?;
            prev = Some(cur);
            cur = next;
        }
        Err(Error::Accountant(
            "PLD calibration did not bracket the target".into(),
        ))
    }

    /// Illinois regula falsi on g(x) = ln ε(e^x) − ln target until the bracket is narrower
    /// than `tol` in ln s, or until, in a bracket at most 8·`tol` wide (lo's ε finite), the
    /// chord through its ends puts the root within `tol`/2 of hi (a chord that short misses the root of a
    /// smooth g by O(width²), about 1e-5·g'' here: hi is within `tol` of the smallest
    /// noise that meets the target either way, one evaluation sooner); trial points keep
    /// 0.4·tol from the ends, so an accurate secant closes the bracket in two steps.
    /// Returns the final bracket.
    fn narrow(
        &mut self,
        lo: Option<Point>,
        mut hi: Point,
        tol: f64,
    ) -> Result<(Option<Point>, Point)> {
        let Some(mut lo) = lo else {
            return Ok((None, hi));
        };
        let lt = self.target.dln();
        let (mut gl, mut gh) = (lo.g() - lt, hi.g() - lt);
        let mut side = 0;
        for it in 1..=60 {
            let (xl, xh) = (lo.s.dln(), hi.s.dln());
            if xh - xl <= tol {
                break;
            }
            let (g_lo, g_hi) = (lo.g() - lt, hi.g() - lt);
            let finite = lo.e.epsilon.is_finite();
            if xh - xl <= 8.0 * tol && finite && g_lo > 0.0 && g_hi <= 0.0 {
                let chord_root = xl + (xh - xl) * g_lo / (g_lo - g_hi);
                if xh - chord_root <= 0.5 * tol {
                    break;
                }
            }
            let mut x = if it % 6 == 0 || gl.partial_cmp(&gh) != Some(std::cmp::Ordering::Greater) {
                0.5 * (xl + xh)
            } else {
                xl + (xh - xl) * gl / (gl - gh)
            };
            if !(x > xl && x < xh) {
                x = 0.5 * (xl + xh);
            }
            let m = (0.4 * tol).min(0.25 * (xh - xl));
            x = x.clamp(xl + m, xh - m);
            let p = self.eval(x.dexp())?;
            if self.ok(&p) {
                hi = p;
                gh = p.g() - lt;
                if side == 1 {
                    gl /= 2.0;
                }
                side = 1;
            } else {
                lo = p;
                gl = p.g() - lt;
                if side == -1 {
                    gh /= 2.0;
                }
                side = -1;
            }
        }
        Ok((Some(lo), hi))
    }
}

/// Calibrates DP-CDA's σx (σy fixed as in `p`) with the PLD accountant. The returned σx has
/// been re-accounted: its ε is ≤ `target`.
pub fn calibrate_cda(
    p: &CdaPrivacy,
    adjacency: Adjacency,
    target: f64,
    delta: f64,
    opts: &PldOptions,
) -> Result<(f64, PldEpsilon)> {
    calibrate(target, delta, opts, |sx| {
        let mut q = *p;
        q.sigma_x = sx;
        cda(&q, adjacency)
    })
}
