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
use crate::accountant::{check_delta, check_epsilon};
use crate::error::{Error, Result};
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
        check_delta(delta)?;
        let mut worst = PldEpsilon {
            epsilon: 0.0,
            delta,
            charge: 0.0,
            grid_step: 0.0,
            fft_len: 0,
        };
        for b in &self.branches {
            let (eps, c) = branch_epsilon(b, delta, opts)?;
            let eps = no_nan(eps);
            if eps >= worst.epsilon {
                worst = PldEpsilon {
                    epsilon: eps,
                    delta,
                    charge: c.charge,
                    grid_step: c.h,
                    fft_len: c.fft_len,
                };
            }
        }
        Ok(worst)
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

/// Discretises and composes one branch. `refine` divides the automatic grid step.
pub fn branch_composed(parts: &[Part], opts: &PldOptions, refine: f64) -> Result<super::Composed> {
    let parts: Vec<&Part> = parts.iter().filter(|p| p.count > 0).collect();
    if parts.is_empty() {
        return compose(&[], opts.tail, opts.max_len);
    }
    let total: f64 = parts.iter().map(|p| p.count as f64).sum();
    let tau = (opts.tail / total).max(1e-300);
    // Coarse pass: moments of each step.
    let mut var = 0.0;
    let mut widest: f64 = 0.0;
    for p in &parts {
        let (lo, hi) = p.pair.support(tau);
        let w = (hi - lo).max(1e-12);
        widest = widest.max(w);
        let coarse = discretize(p.pair.as_ref(), w / 4096.0, tau)?;
        let (_, v) = coarse.moments();
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

fn branch_epsilon(parts: &[Part], delta: f64, opts: &PldOptions) -> Result<(f64, super::Composed)> {
    let c = branch_composed(parts, opts, 1.0)?;
    Ok((c.epsilon(delta), c))
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

/// The smallest noise s (σ or z, with ε non-increasing in s) whose ε at δ is ≤ `target`.
///
/// The true ε is non-increasing in the noise (a larger-σ Gaussian pair is a post-processing of
/// a smaller one, and subsampling and composition preserve that order), so bisection applies;
/// whatever the discretisation does, the returned s has been accounted with `opts` and meets
/// the target (the upper end of the bracket is only ever a verified point).
///
/// Two phases for speed: a coarse grid (4× coarser, itself a valid upper bound) brackets and
/// solves to 1e-3; the fine grid then only searches around that point.
pub fn calibrate(
    target: f64,
    delta: f64,
    opts: &PldOptions,
    plan: impl Fn(f64) -> Result<Plan>,
) -> Result<(f64, PldEpsilon)> {
    check_epsilon(target)?;
    check_delta(delta)?;
    let coarse = PldOptions {
        step_fraction: opts.step_fraction / 4.0,
        total_fraction: opts.total_fraction / 4.0,
        ..*opts
    };
    let (s1, _) = solve(target, delta, &coarse, &plan, None, 1e-3)?;
    solve(target, delta, opts, &plan, Some(s1), 1e-5)
}

fn solve(
    target: f64,
    delta: f64,
    opts: &PldOptions,
    plan: &impl Fn(f64) -> Result<Plan>,
    start: Option<f64>,
    tol: f64,
) -> Result<(f64, PldEpsilon)> {
    let eval = |s: f64| -> Result<PldEpsilon> { plan(s)?.epsilon(delta, opts) };
    let (s_min, s_max) = (1e-6, 1e8);
    let step = if start.is_some() { 1.03 } else { 4.0 };
    let mut hi = start.unwrap_or(1.0);
    let mut e_hi = eval(hi)?;
    while e_hi.epsilon > target {
        if hi >= s_max {
            return Err(Error::param(
                "epsilon",
                target,
                format!(
                    "this target cannot be reached at δ = {delta} with any amount of noise (ε stays ≥ {:.4}); raise ε or δ",
                    e_hi.epsilon
                ),
            ));
        }
        hi *= step;
        e_hi = eval(hi)?;
    }
    let mut lo = hi / step;
    let mut e_lo;
    loop {
        let s = lo.max(s_min);
        let e = eval(s)?;
        if e.epsilon > target {
            lo = s;
            e_lo = e.epsilon;
            break;
        }
        if s <= s_min {
            return Ok((s, e));
        }
        hi = s;
        e_hi = e;
        lo /= step;
    }
    // Illinois regula falsi on g(x) = ln ε(e^x) − ln target, bracket [lo, hi].
    let lt = target.ln();
    let g = |e: f64| {
        if e.is_finite() {
            e.max(1e-300).ln() - lt
        } else {
            50.0
        }
    };
    let (mut xl, mut xh) = (lo.ln(), hi.ln());
    let (mut gl, mut gh) = (g(e_lo), g(e_hi.epsilon));
    let mut side = 0;
    let mut it = 0;
    while (xh - xl) > tol && it < 60 {
        it += 1;
        let mut x = if it % 6 == 0 || gl.partial_cmp(&gh) != Some(std::cmp::Ordering::Greater) {
            0.5 * (xl + xh)
        } else {
            xl + (xh - xl) * gl / (gl - gh)
        };
        if !(x > xl && x < xh) {
            x = 0.5 * (xl + xh);
        }
        let s = x.exp();
        let e = eval(s)?;
        if e.epsilon <= target {
            xh = x;
            hi = s;
            e_hi = e;
            gh = g(e.epsilon);
            if side == 1 {
                gl /= 2.0;
            }
            side = 1;
        } else {
            xl = x;
            e_lo = e.epsilon;
            gl = g(e_lo);
            if side == -1 {
                gh /= 2.0;
            }
            side = -1;
        }
    }
    Ok((hi, e_hi))
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
