//! Automatic parameters (`--mix auto`, the default): the mix order l for DP-CDA, chosen from
//! public information only, and what the receipt says about the encoding.
//!
//! # Rule
//!
//! With rows scaled to norm c and non-negative (sensitivity √2·c/l, see
//! [`crate::preprocess::rownorm`]), a synthetic row is the mean of l rows of one class, drawn
//! without replacement from its pool of n, plus N(0, σx(l)² I_d), with σx(l) calibrated to the
//! target ε for the public pool (smallest class size, or its public floor), the rows per
//! class, δ and the normalization's share. [`auto_mix`] returns the candidate l minimizing
//! [`mix_score`], which depends on the pool:
//!
//! * **Pools of at least [`STRUCTURE_POOL_FROM`] rows: the spread around the class mean
//!   times the noise per unit of structure, `(A + N)·N/A`**, with N = d·σx(l)² the noise and
//!   A = c²/l·(n − l)/(n − 1) the most the mean of l rows drawn without replacement from a
//!   pool of n can vary along all directions together. A + N (the rule below) is the spread
//!   of a synthetic row around its class mean, which the class means need small; N/A is the
//!   noise per unit of the row's own within-class variation (along any direction in which
//!   the class varies with variance s², the mean of l rows varies with
//!   s²·(n − l)/(l·(n − 1)) and the noise adds σx(l)², whatever s), which the structure
//!   between columns needs small. Larger l makes σx smaller but averages the rows' own
//!   structure away: on Adult at ε = 1, σx falls only from 0.192 to 0.142 between l = 6 and
//!   64 while A shrinks 11×. Measured (bench/utility/README.md): Adult at ε = 1, gradient
//!   boosting 0.814 at the old rule's l = 64 against 0.827 at l = 8 (10 seeds); MNIST 8k at
//!   ε = 10, logistic regression 0.790 at l = 64 against 0.817 at l = 16, the choice here.
//! * **Smaller pools: the spread around the class mean, `c²/l + d·σx(l)²`**, with l = the
//!   whole pool a candidate below [`FULL_POOL_BELOW`] (below). With a few hundred rows per
//!   class the noise swamps any one row's structure and the class means are what the budget
//!   buys: the digits 8×8 demo (pools of 161 at ε = 5) gives 0.860 at this rule's l = 64
//!   and 0.831 at the product's l = 4.
//!
//! For speed (the page's live readout ranks every candidate on each change of a control) the
//! ranking's σx(l) uses the RDP orders up to 128 and a 0.1 % tolerance; the run calibrates
//! the chosen l in full.
//!
//! Candidates: [`CANDIDATES`] with l ≤ pool/2 (sampling rate ≤ 1/2) and, when that cap binds
//! (pool < [`FULL_POOL_BELOW`] = 2 × the largest candidate), also l = pool: every mix is then
//! the mean of its (fixed-size) pool plus noise, sampling rate 1. On small data the
//! without-replacement subsampled bound at rates between 1/2 and 1 is no better — often
//! worse — than the plain Gaussian bound at rate 1 (e.g. z = 8, α = 8: 0.063 at q = 0.5, 0.166
//! at q = 0.9, 0.0625 at q = 1), so a mix of the whole pool has less noise per row for the same
//! ε and its class means are the best the budget buys (issue 12: Iris, the digits demos); the
//! rows' spread then comes from the noise only. Under the standard adjacency the caller cuts
//! every pool to that size (a random subset; the size is the public minimum of the DP
//! floors), so every class is accounted at rate 1. Larger data keep l ≤ 64 and their spread.
//!
//! The clip norm c needs no choice: scaling every row to norm
//! c and restoring the scale afterwards makes the output independent of c (σx scales with c).
//!
//! Privacy: l is a function of public numbers (pool floor, T, d, ε, δ, the preset and the
//! orders), so choosing it releases nothing.

use crate::accountant::calibrate::{smallest_z_near, Goal};
use crate::accountant::pld::PldOptions;
use crate::accountant::RdpCurve;
use crate::error::{Error, Result};
use crate::mechanisms::cda::accounting::{check_structure, mixing_curve};
use serde::Serialize;

/// `SynthOptions::mix` value meaning "choose l automatically" (the default).
pub const MIX_AUTO: usize = 0;

/// The mix order non-DP-CDA mechanisms use when asked for `auto`.
pub const FIXED_MIX_FALLBACK: usize = 4;

/// Feature columns from which rows are scaled to a common norm (images, wide tables). Below
/// it rows are divided by the public maximum norm M = √(feature columns) instead: no row's
/// direction or length is changed (on short tables the length carries class information:
/// scaling it away distorts the output), at the price of noise relative to M, not ‖u‖.
pub const COMMON_NORM_MIN_COLUMNS: usize = 32;

/// Whether rows are scaled to a common norm (see [`COMMON_NORM_MIN_COLUMNS`]); public: the
/// number of feature columns.
pub fn use_common_norm(feature_columns: usize) -> bool {
    feature_columns >= COMMON_NORM_MIN_COLUMNS
}

/// Candidate mix orders.
pub const CANDIDATES: [u32; 12] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

/// Below this smallest pool, l = pool is a candidate too (see the module note): 2 × 64, where
/// the cap l ≤ pool/2 starts to cut the candidate list.
pub const FULL_POOL_BELOW: u64 = 128;

/// The automatic l (see the module note), with the ranking's σx for it (label-free, on the
/// ranking's orders, to 0.1 %): where the run's calibration starts
/// ([`SynthPld::calibrate_pld_first`](crate::mechanisms::pld_plan::SynthPld::calibrate_pld_first)).
/// `acc_clip` is the clip norm the accountant is given (c/√2 for non-negative rows), `clip`
/// the norm rows are scaled to, `dim` the encoded dimension, `extra` the RDP already spent
/// (normalization).
pub fn auto_mix(
    pool: u64,
    per_class: u64,
    dim: u64,
    clip: f64,
    acc_clip: f64,
    goal: &Goal<'_>,
) -> Result<(usize, f64)> {
    let ranked = rank_candidates(pool, per_class, dim, clip, acc_clip, goal, true)?;
    best_of(&ranked)
        .map(|(l, sigma_x)| (l as usize, sigma_x))
        .ok_or_else(|| {
            Error::param(
                "mix",
                "auto",
                format!("the smallest class has {pool} rows; every class needs at least one row"),
            )
        })
}

/// The candidate of smallest score (the first on ties) among `(l, σx, score)`, with its σx.
fn best_of(ranked: &[(u32, f64, f64)]) -> Option<(u32, f64)> {
    let mut best: Option<(f64, u32, f64)> = None;
    for &(l, sigma_x, score) in ranked {
        if best.map_or(true, |(s, _, _)| score < s) {
            best = Some((score, l, sigma_x));
        }
    }
    best.map(|(_, l, sigma_x)| (l, sigma_x))
}

/// Every candidate l with its ranked σx and score, in [`CANDIDATES`] order (then the whole
/// pool, below [`FULL_POOL_BELOW`]); `guessed`: each calibration starts from the z the
/// previous candidates point to ([`next_z`]) rather than from 1.
fn rank_candidates(
    pool: u64,
    per_class: u64,
    dim: u64,
    clip: f64,
    acc_clip: f64,
    goal: &Goal<'_>,
    guessed: bool,
) -> Result<Vec<(u32, f64, f64)>> {
    // The ranking calibrates each candidate's σx on the orders of `rank_orders` only (an
    // upper bound on ε, so σx at least the full grid's) and to a relative tolerance of
    // RANK_TOL: about a third of the work per candidate, which matters to the page's live
    // readout. The run then calibrates the chosen l on every order, to full precision.
    let (rank, extra_sub) = rank_orders(goal.orders, goal.extra);
    let goal = goal.on(&rank, extra_sub.as_ref());
    // At most half of the smallest class per mix (sampling rate ≤ 1/2).
    let full = (2..FULL_POOL_BELOW).contains(&pool).then_some(pool as u32);
    // Each candidate's calibration starts from the z the previous ones point to (z grows
    // with l about as a power of it): a third fewer evaluations, each σx still an upper bound
    // within RANK_TOL of the smallest (as from a start at 1).
    let mut seen: Vec<(f64, f64)> = Vec::new();
    let mut ranked = Vec::new();
    for l in CANDIDATES
        .iter()
        .copied()
        .filter(|&l| l == 1 || u64::from(l) * 2 <= pool)
        .chain(full)
    {
        let guess = if guessed { next_z(&seen, l) } else { None };
        let (sigma_x, z) = rank_sigma_x(pool, l, acc_clip, per_class, &goal, guess)?;
        seen.push((f64::from(l), z));
        ranked.push((l, sigma_x, mix_score(pool, l, sigma_x, clip, dim)));
    }
    Ok(ranked)
}

/// From this smallest pool on, [`auto_mix`] weighs the structure of the rows as well as the
/// spread around the class means (see the module note).
pub const STRUCTURE_POOL_FROM: u64 = 512;

/// The score [`auto_mix`] minimizes for mix order `l` with noise `sigma_x` (see the module
/// note): from [`STRUCTURE_POOL_FROM`] rows per pool, `(A + N)·N/A` with N = d·σx² and
/// A = c²/l·(pool − l)/(pool − 1) (+∞ for l = pool, whose mixes do not vary); below, the
/// spread around the class mean, `c²/l + d·σx²`.
pub fn mix_score(pool: u64, l: u32, sigma_x: f64, clip: f64, dim: u64) -> f64 {
    let lf = f64::from(l);
    if pool >= STRUCTURE_POOL_FROM {
        let n = pool as f64;
        if lf >= n {
            return f64::INFINITY;
        }
        let data = clip * clip / lf * (n - lf) / (n - 1.0);
        let noise = dim as f64 * sigma_x * sigma_x;
        (data + noise) * noise / data
    } else {
        clip * clip / lf + dim as f64 * sigma_x * sigma_x
    }
}

/// Relative tolerance of the ranking's σx (candidates' scores differ by far more).
const RANK_TOL: f64 = 1e-3;

/// σx for candidate l as the ranking sees it: label-free DP-CDA (σx = 2c/l · z) calibrated
/// to [`RANK_TOL`] on the ranking's orders; the same checks as
/// [`calibrate_sigma_x`](crate::mechanisms::cda::accounting::calibrate_sigma_x), which the
/// run then applies to the chosen l on every order.
/// Also returns the noise multiplier z; `guess` is where its calibration starts.
fn rank_sigma_x(
    pool: u64,
    mix: u32,
    acc_clip: f64,
    samples: u64,
    goal: &Goal<'_>,
    guess: Option<f64>,
) -> Result<(f64, f64)> {
    check_structure(pool, mix, acc_clip, samples)?;
    let q = f64::from(mix) / pool as f64;
    let cal = smallest_z_near(
        goal.epsilon,
        goal.delta,
        goal.preset.conversion(),
        |z| mixing_curve(q, z, samples, goal.orders, goal.preset, goal.extra),
        RANK_TOL,
        guess,
    )?;
    Ok((2.0 * acc_clip / f64::from(mix) * cal.z, cal.z))
}

/// Where candidate `l`'s calibration starts, from the (l, z) already ranked: z extrapolated
/// as a power of l through the last two (the power kept in [0, 1.5]), or z ∝ √l from one.
fn next_z(seen: &[(f64, f64)], l: u32) -> Option<f64> {
    let l = f64::from(l);
    match seen {
        [] => None,
        [(l1, z1)] => Some(z1 * (l / l1).sqrt()),
        [.., (l0, z0), (l1, z1)] => {
            let power = ((z1 / z0).ln() / (l1 / l0).ln()).clamp(0.0, 1.5);
            let power = if power.is_finite() { power } else { 0.5 };
            Some(z1 * (l / l1).powf(power))
        }
    }
}

/// Whether an order is kept for ranking candidates: every order up to 32, then every 4th up
/// to 64 and every 8th up to 128. A missing order only raises ε, so every candidate's σx is
/// an upper bound; orders above 128 (optimal only for ε below about 0.2 at δ = 1e-5) are left
/// out because the moments behind them cost most of a curve's time (measured: 2.7 ms per
/// curve on all 255 default orders, 1.05 ms on these 47).
fn kept_for_ranking(a: u32) -> bool {
    a <= 32 || (a <= 64 && a % 4 == 0) || (a <= 128 && a % 8 == 0)
}

/// The ranking's orders (every order up to 32, every 4th to 64, every 8th to 128): also the
/// live readout's chart, where an upper bound on ε at fewer orders is enough. All of
/// `orders` when fewer than two would be kept (custom order lists).
pub fn coarse_orders(orders: &[u32]) -> Vec<u32> {
    rank_orders(orders, None).0
}

/// The live readout's chart: its points' noise as multiples of the calibrated noise (1: the
/// calibrated point itself).
pub const CHART_FACTORS: [f64; 7] = [0.5, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0];

/// The chart's points through the calibrated point (`x`, `at`): (x·f, ε) for each f of
/// [`CHART_FACTORS`], ε from `epsilon_at(f)` (ε at the noise scaled by f; not called at 1).
pub fn chart_points(
    x: f64,
    at: f64,
    mut epsilon_at: impl FnMut(f64) -> Result<f64>,
) -> Result<Vec<(f64, f64)>> {
    CHART_FACTORS
        .iter()
        .map(|&f| Ok((x * f, if f == 1.0 { at } else { epsilon_at(f)? })))
        .collect()
}

/// The PLD grid of the chart's other points: 4× coarser than the calibration's, so upper
/// bounds still, at a fraction of the cost.
pub fn chart_pld_options() -> PldOptions {
    PldOptions {
        step_fraction: 1.0,
        total_fraction: 12.0,
        ..PldOptions::calibration()
    }
}

/// The ranking's orders and the `extra` curve restricted to them. Falls back to all orders
/// when fewer than two would be kept (custom order lists).
fn rank_orders(orders: &[u32], extra: Option<&RdpCurve>) -> (Vec<u32>, Option<RdpCurve>) {
    let keep: Vec<usize> = (0..orders.len())
        .filter(|&i| kept_for_ranking(orders[i]))
        .collect();
    let keep: Vec<usize> = if keep.len() < 2 {
        (0..orders.len()).collect()
    } else {
        keep
    };
    let sub = keep.iter().map(|&i| orders[i]).collect();
    let extra = extra.map(|e| {
        if e.orders == orders {
            RdpCurve {
                orders: keep.iter().map(|&i| e.orders[i]).collect(),
                rdp: keep.iter().map(|&i| e.rdp[i]).collect(),
            }
        } else {
            e.clone()
        }
    });
    (sub, extra)
}

/// What the receipt says about the encoding and the automatic choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EncodingReport {
    /// How rows were bounded: "scaled to norm c" or "clipped to norm ≤ c".
    pub rows: &'static str,
    /// True when every encoded entry is ≥ 0, so the sensitivity is √2·c/l.
    pub nonnegative: bool,
    /// The L2 sensitivity of one mix, Δx.
    pub sensitivity: f64,
    /// The factor the noisy rows were multiplied by (DP mean norm / c), when rescaled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rescale: Option<f64>,
    /// How the output was decoded.
    pub decoding: String,
    /// How l was chosen: "auto (…)" or "given".
    pub mix_choice: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::{default_orders, Preset};
    use crate::mechanisms::cda::accounting::{calibrate_sigma_x, CdaShape};

    /// The accounting clip of the tests (c/√2 with c = 1).
    const ACC: f64 = std::f64::consts::FRAC_1_SQRT_2;

    /// Starting each candidate's calibration from the previous candidates' z changes neither
    /// the bound nor its precision: every candidate's ranked σx is within RANK_TOL of the one
    /// bracketed from 1 (both upper bounds at that tolerance), so the choice is the same.
    #[test]
    fn guessed_starts_rank_as_plain_ones() {
        let orders = default_orders();
        for (pool, t, d, eps) in [
            (5400u64, 6000u64, 784u64, 1.0),
            (5400, 6000, 784, 10.0),
            (7828, 24732, 50, 1.0),
            (40, 50, 4, 5.0),
            (120, 150, 64, 0.5),
        ] {
            let goal = Goal::new(eps, 1e-5, &orders);
            let choice = |guessed: bool| -> (u32, Vec<f64>) {
                let ranked = rank_candidates(pool, t, d, 1.0, ACC, &goal, guessed).unwrap();
                let sigmas = ranked.iter().map(|&(_, s, _)| s).collect();
                (best_of(&ranked).unwrap().0, sigmas)
            };
            let (plain_l, plain) = choice(false);
            let (guessed_l, guessed) = choice(true);
            for (a, b) in plain.iter().zip(&guessed) {
                assert!(
                    (a / b - 1.0).abs() <= RANK_TOL,
                    "pool {pool} ε {eps}: {a} vs {b}"
                );
            }
            assert_eq!(plain_l, guessed_l, "pool {pool} ε {eps}");
            assert_eq!(
                auto_mix(pool, t, d, 1.0, ACC, &goal).unwrap().0 as u32,
                guessed_l
            );
        }
    }

    /// σx of label-free DP-CDA from the full calibration (every default order, full
    /// precision): what a candidate's score is checked against.
    fn full_sigma_x(
        pool: u64,
        l: u32,
        t: u64,
        delta: f64,
        eps: f64,
        extra: Option<&RdpCurve>,
    ) -> f64 {
        let shape = CdaShape {
            pool,
            mix: l,
            clip: ACC,
            sigma_y: None,
            samples: t,
        };
        calibrate_sigma_x(
            &shape,
            &Goal {
                epsilon: eps,
                delta,
                orders: &default_orders(),
                preset: Preset::Default,
                extra,
            },
        )
        .unwrap()
        .sigma_x
    }

    #[test]
    fn the_coarse_ranking_chooses_as_well_as_the_full_accountant() {
        // The ranking's shortcuts (orders ≤ 128, σx to 0.1 %) against the full calibration
        // on every default order: the l it picks scores within 1 % of the best candidate's
        // full-precision score, on configurations from Iris-sized to MNIST-sized pools, with
        // and without a normalization share spent.
        let orders = default_orders();
        let acc = ACC;
        let norm = RdpCurve::gaussian(20.0, &orders).unwrap();
        for &(pool, t, d, eps, with_norm) in &[
            (30u64, 40u64, 4u64, 5.0, false),
            (150, 150, 4, 0.5, true),
            (1000, 1000, 64, 2.0, false),
            (5400, 6000, 784, 10.0, true),
            (130, 20000, 784, 0.5, true),
            (300, 100000, 784, 2.0, false),
        ] {
            let extra = with_norm.then_some(&norm);
            let full_score = |l: u32| {
                let s = full_sigma_x(pool, l, t, 1e-5, eps, extra);
                mix_score(pool, l, s, 1.0, d)
            };
            let full = (2..FULL_POOL_BELOW).contains(&pool).then_some(pool as u32);
            let scores: Vec<(f64, u32)> = CANDIDATES
                .iter()
                .copied()
                .filter(|&l| l == 1 || u64::from(l) * 2 <= pool)
                .chain(full)
                .map(|l| (full_score(l), l))
                .collect();
            let (best, best_l) = scores
                .iter()
                .copied()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            let l = auto_mix(
                pool,
                t,
                d,
                1.0,
                acc,
                &Goal {
                    epsilon: eps,
                    delta: 1e-5,
                    orders: &orders,
                    preset: Preset::Default,
                    extra,
                },
            )
            .unwrap()
            .0 as u32;
            let got = scores.iter().find(|s| s.1 == l).unwrap().0;
            assert!(
                got <= best * 1.01,
                "pool {pool}, T {t}, d {d}, ε {eps}: l = {l} scores {got}, best l = {best_l} {best}"
            );
        }
    }

    #[test]
    fn auto_mix_minimizes_the_stated_score_among_candidates() {
        let orders = default_orders();
        let (pool, t, d, delta, eps) = (2000u64, 2000u64, 20u64, 1e-5, 2.0);
        let acc = ACC;
        let auto = |pool: u64, t: u64| {
            auto_mix(pool, t, d, 1.0, acc, &Goal::new(eps, delta, &orders))
                .unwrap()
                .0
        };
        let l = auto(pool, t);
        // From STRUCTURE_POOL_FROM rows: (A + N)·N/A, written out here.
        let score = |l: u32| {
            let s = full_sigma_x(pool, l, t, delta, eps, None);
            let (lf, n) = (f64::from(l), pool as f64);
            let a = 1.0 / lf * (n - lf) / (n - 1.0);
            let noise = d as f64 * s * s;
            (a + noise) * noise / a
        };
        let s = score(l as u32);
        for &other in CANDIDATES.iter().filter(|&&c| u64::from(c) * 2 <= pool) {
            assert!(s <= score(other) + 1e-12, "l = {l} loses to {other}");
        }
        // An Adult-sized table at ε = 1 (pool 7,828, T = 24,732, d = 50): the spread around
        // the class mean alone is smallest at l = 64; weighing the structure takes l ≤ 16.
        let adult = auto_mix(7828, 24732, 50, 1.0, acc, &Goal::new(1.0, delta, &orders))
            .unwrap()
            .0;
        let spread = |l: u32| {
            let s = full_sigma_x(7828, l, 24732, delta, 1.0, None);
            1.0 / f64::from(l) + 50.0 * s * s
        };
        let by_spread = CANDIDATES
            .iter()
            .copied()
            .min_by(|&a, &b| spread(a).total_cmp(&spread(b)))
            .unwrap();
        assert_eq!(by_spread, 64);
        assert!((4..=16).contains(&adult), "{adult}");
        // Small pools are respected.
        let small = auto(12, 12);
        assert!(small * 2 <= 12 || small == 1 || small == 12, "{small}");
        // Below FULL_POOL_BELOW the whole pool is a candidate, and it is chosen when its
        // score is the smallest (checked against the stated score, computed here).
        let score = |pool: u64, l: u32| {
            let s = full_sigma_x(pool, l, 40, delta, 5.0, None);
            1.0 / f64::from(l) + 4.0 * s * s
        };
        let iris_like = |pool: u64| {
            auto_mix(pool, 40, 4, 1.0, acc, &Goal::new(5.0, delta, &orders))
                .unwrap()
                .0
        };
        let l30 = iris_like(30);
        let best = [1u32, 2, 3, 4, 6, 8, 12, 30]
            .into_iter()
            .min_by(|&a, &b| score(30, a).total_cmp(&score(30, b)))
            .unwrap();
        assert_eq!(l30 as u32, best);
        assert_eq!(l30, 30, "Iris-sized pools take the whole pool");
        // At and above FULL_POOL_BELOW the list is not extended.
        let big = iris_like(FULL_POOL_BELOW);
        assert!(
            CANDIDATES.contains(&(big as u32)) && big as u64 * 2 <= FULL_POOL_BELOW,
            "{big}"
        );
    }
}
