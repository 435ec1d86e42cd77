//! The standard adjacency for class-centric mixing: the label set, the class counts, the
//! output class proportions and the pools, all from public or DP quantities.
//!
//! # Mechanism
//!
//! Neighbouring datasets differ in one whole record, label included (replace one record; the
//! argument below covers adding or removing one too).
//!
//! 1. **Noisy class counts.** For each candidate label (the schema's categories for the label
//!    column, or else every level observed), ñ_k = n_k + Z_k with Z_k independent discrete
//!    Gaussians N_ℤ(0, σ_c²), σ_c ≥ z_c·√2 ([`CountNoise`], sampled exactly in integer
//!    arithmetic; see "Exact noise" below). A replaced record moves one unit between two
//!    counts (L2 sensitivity √2; adding/removing one record changes one count by 1). This is
//!    the Gaussian mechanism's RDP curve with noise multiplier z_c (α/(2z_c²)), composed into
//!    the accountant.
//! 2. **Label set.** With schema labels, all of them are released. Otherwise a label is released
//!    only if ñ_k > 2 + σ_c·t with P(N(0,1) > t) ≤ δ_thr/2. A neighbour can make at most two
//!    labels present in one dataset and absent from the other, each with count ≤ 1 where
//!    present, so the release differs only on an event of probability
//!    ≤ 2·P(Z > 1 + σ_c·t) ≤ 2·P(N(0, σ_c²) ≥ σ_c·t) ≤ δ_thr (Lemma T below, with
//!    m = ⌊1 + σ_c·t⌋ + 1 ≥ σ_c·t + 1). Conditioned on the complement (probability
//!    ≥ 1 − δ_thr, independent of the other counts' noise) the release is the Gaussian
//!    mechanism on the common labels, so the thresholded release is
//!    (ε_G + ln(1/(1 − δ_thr)), δ_G + δ_thr)-DP; the receipt adds both terms.
//! 3. **Pool floors.** m_k = ⌊ñ_k − σ_c⌋ (or a public floor given by the user); a released
//!    class with m_k < l is not synthesized (a post-processing decision, warned about).
//! 4. **Fixed-size pools.** Class k's pool has exactly m_k rows: a uniformly random m_k-subset
//!    of its n_k records when n_k ≥ m_k, else all n_k records plus m_k − n_k zero rows (zero is
//!    the centre of the clip ball, a public value).
//! 5. **Mixing.** T_k rows of class k, each the mean of l distinct pool rows plus
//!    N(0, σx² I); T_k ∝ ñ_k (largest remainders; post-processing), T public or ⌊Σ ñ_k⌉.
//!
//! # Why each class is charged the replace-one WOR curve at q_k = l/m_k
//!
//! Fix everything but one class's records and compare its pools. (i) Same size n on both
//! sides (the record changed within the class): choose the same positions on both sides; the
//! pools are a replace-one pair of size m_k (when n < m_k, the padding is identical). (ii) One
//! record x removed (n vs n − 1 records): if n − 1 ≥ m_k, write the size-m_k subset of the n
//! records as, with probability 1 − m_k/n, a uniform m_k-subset S of the other n − 1, and
//! otherwise S'' ∪ {x} with S'' a uniform (m_k − 1)-subset of them; the subset of the n − 1
//! records is, with the same probabilities, S, or S'' ∪ {y} with y uniform outside S''. The
//! mixtures pair up component by component into identical pools and replace-one pools of size
//! m_k; by the joint quasi-convexity of the Rényi divergence (D_α(Σwᵢpᵢ‖Σwᵢqᵢ) ≤ maxᵢ
//! D_α(pᵢ‖qᵢ)) the divergence is at most that of a replace-one pair. If n − 1 < m_k, the
//! pools are x vs a zero row at the same position, a replace-one pair. Given its pool, class
//! k's T_k mixing steps are the subsampled (without replacement, rate l/m_k) Gaussian with
//! sensitivity 2c/l, so the replace-one RDP is T_k·ρ_WOR(α; l/m_k, z) (Wang–Balle–Kasiviswanathan 2019, Theorem 27). A record
//! touches at most two classes (its old and its new one), whose noises are independent, so the
//! mixing costs at most max_{a≠b} (T_a·ρ_a + T_b·ρ_b) at each order α ([`two_class_max`]).
//! Everything else (decoding, proportions, which classes are synthesized) is post-processing
//! of DP quantities.
//!
//! # Exact noise (shared by the data path's counts)
//!
//! Floating-point noise n + fl(σ·z) leaks through its low bits (Mironov 2012). Every count of
//! the data path (these class counts; the column-type decision counts of
//! [`crate::data::decide`]; the normalization histograms of [`crate::preprocess::normalize`])
//! is an integer whose neighbours differ by an *integer* vector. [`CountNoise`] scales the
//! counts by 2^k (k ≥ 0, so they stay integers and the shifts integer vectors of norm
//! ≤ 2^k·Δ; no rounding, so no sensitivity inflation), adds a discrete Gaussian
//! N_ℤ(0, (2^k σ)²) drawn in integer arithmetic ([`crate::mechanisms::noise::DiscreteGaussian`],
//! CKS20) and divides by 2^k (post-processing). k is the smallest with 2^k σ ≥ 2^30: the
//! statements below hold in grid units with the factors 2^k cancelling, and at that scale the
//! receipt's PLD figure charges the discrete noise's gap to the continuous Gaussian
//! ([`crate::accountant::pld::coupling`]; total variation ≤ 1.8·10⁻²⁰ per draw):
//!
//! * **Lemma D (CKS20, Proposition 6 / Theorem 14, Corollary 9).** For μ, ν ∈ ℤ^m and Z with
//!   independent N_ℤ(0, σ²) coordinates, D_α(μ + Z ‖ ν + Z) ≤ α‖μ − ν‖₂²/(2σ²) for every
//!   α > 1: the continuous Gaussian mechanism's RDP curve. (The PLD figure for the continuous
//!   Gaussian holds after the coupling charge of [`crate::accountant::pld::coupling`].) So
//!   a count vector of L2 sensitivity Δ with noise σ ≥ z·Δ has the curve the
//!   accountant charges for noise multiplier z. [`CountNoise::new`] takes z and Δ and uses
//!   σ = z·Δ·(1 + 2^-48), then rounded up to a dyadic rational by the sampler: the factor
//!   covers the (at most three) roundings of z·Δ in f64, so σ ≥ z·Δ exactly and the caller's
//!   accounting holds unchanged.
//! * **Lemma T (tails).** For Z ~ N_ℤ(0, σ²), an integer m ≥ 1 and Y ~ N(0, σ²):
//!   P(Z ≥ m) ≤ P(Y ≥ m − 1). *Proof.* With w(x) = e^{−x²/(2σ²)}, decreasing on x ≥ 0,
//!   Σ_{k≥m} w(k) ≤ ∫_{m−1}^∞ w(x)dx (each term is below the integral over [k−1, k]); and by
//!   Poisson summation Σ_{k∈ℤ} w(k) = √(2π)σ·Σ_{j∈ℤ} e^{−2π²σ²j²} ≥ √(2π)σ = ∫_ℝ w. Divide. ∎
//!   Hence, for t ≥ 0 and an integer statistic s ≤ b (b an integer), s + Z exceeds
//!   b + σt + 1 only if Z ≥ m := ⌊σt + 1⌋ + 1, so with probability at most
//!   P(Y ≥ ⌊σt + 1⌋) ≤ P(Y ≥ σt) = Φ̄(t): the continuous Gaussian's rate, for one more unit
//!   of threshold ([`DISCRETE_TAIL_MARGIN`]). Every threshold of the data path whose error
//!   rate is stated carries that unit: this label threshold and the categorical level
//!   threshold of normalization (privacy claims, δ), and the range, integrality, type and
//!   indicator thresholds (utility claims, their stated false-detection rates). On the grid
//!   2^-k the lemma needs only one grid unit (2^-k of a count); the thresholds keep a whole
//!   count, which is more.
//!
//! The released counts are multiples of 2^-k ([`CountNoise::grid`]).

use rand::Rng;
use serde::Serialize;

use crate::accountant::calibrate::{smallest_z, Goal};
use crate::accountant::{check_delta, check_epsilon, Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::upper_quantile_conservative;
use crate::mechanisms::noise::DiscreteGaussian;

/// Exact discrete Gaussian noise on integer counts (module docs, "Exact noise"), drawn on the
/// fine grid 2^-k of a count: the counts are scaled by 2^k (still integers) and the noise has
/// at least 2^30 grid units of σ, the scale at which the PLD figure charges the discrete
/// Gaussian's gap to the continuous one ([`crate::accountant::pld::coupling`]).
#[derive(Debug, Clone)]
pub struct CountNoise {
    dg: DiscreteGaussian,
    /// The grid 2^-k of a count.
    grid: f64,
}

/// The smallest σ, in grid units, that [`CountNoise`] draws with (unless σ itself needs a
/// coarser grid than one count, which it never does: σ ≤ 2^31): the scale at which the
/// receipt's PLD figure charges the discrete noise's gap to the continuous Gaussian.
const MIN_GRID_SIGMA: f64 = crate::accountant::pld::coupling::COUPLED_MIN_SIGMA_UNITS; // 2^30

/// The smallest k in [0, `max_k`] with σ·2^k ≥ 2^30 (exact: powers of two), σ in counts: the
/// count grid 2^-k on which σ has at least the coupling scale of
/// [`crate::accountant::pld::coupling`], and below 2^31 (the sampler's range) unless σ itself
/// is beyond it. Public (a function of σ).
pub(crate) fn coupled_grid_exponent(sigma: f64, max_k: i32) -> i32 {
    let mut k = 0;
    while k < max_k && sigma * 2f64.powi(k) < MIN_GRID_SIGMA {
        k += 1;
    }
    k
}

impl CountNoise {
    /// Noise σ ≥ `z`·`sensitivity` (rounded up; see Lemma D), for counts whose neighbours
    /// differ by an integer vector of L2 norm ≤ `sensitivity`. `name` names the release in
    /// errors.
    pub fn new(name: &str, z: f64, sensitivity: f64) -> Result<Self> {
        let sigma = z * sensitivity * (1.0 + 2f64.powi(-48));
        if !(sigma > 0.0 && sigma.is_finite()) {
            return Err(Error::Data(format!(
                "internal: the {name} needs a positive finite noise scale, got z = {z}, Δ = {sensitivity}"
            )));
        }
        // Counts scaled by 2^k, k ≤ 62.
        let scale = 2f64.powi(coupled_grid_exponent(sigma, 62));
        let dg = DiscreteGaussian::new(name, sigma * scale).map_err(|_| {
            Error::Data(format!(
                "the {name} would need noise σ = {sigma:e}, outside the exact sampler's range (counts); {}",
                if sigma > 1.0 { "raise ε (or its share for this release)" } else { "lower ε (or its share for this release)" }
            ))
        })?;
        Ok(CountNoise {
            dg,
            grid: 1.0 / scale,
        })
    }

    /// The noise standard deviation actually used, in counts (≥ z·Δ).
    pub fn sigma(&self) -> f64 {
        self.dg.sigma() * self.grid
    }

    /// The grid 2^-k of a count on which the noise is drawn (released counts are multiples
    /// of it).
    pub fn grid(&self) -> f64 {
        self.grid
    }

    /// The exact sampler (grid units).
    pub fn sampler(&self) -> &DiscreteGaussian {
        &self.dg
    }

    /// One noise draw, in grid units (an integer).
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        self.dg.sample(rng)
    }

    /// `count` + one draw, in counts: (count·2^k + Z)·2^-k. `count` must be an integer (a
    /// count held in an f64); the result is a multiple of [`Self::grid`], rounded to f64 as a
    /// function of the integer count·2^k + Z (post-processing).
    pub fn add<R: Rng + ?Sized>(&self, count: f64, rng: &mut R) -> f64 {
        debug_assert!(count.fract() == 0.0 && count.abs() < 2f64.powi(52));
        count + self.draw(rng) as f64 * self.grid
    }
}

/// Tail bound margin of Lemma T: a threshold in noise units t, on a statistic that is ≤ 0
/// where it should not fire, is set at σ·t + this.
pub const DISCRETE_TAIL_MARGIN: f64 = 1.0;

/// Pool floors sit this many noise standard deviations below the noisy counts. Any value is
/// private (the floor is post-processing of the noisy count, and a pool larger than its class
/// is padded with zero rows, step 4); it trades padding against pool size. At 1σ a class is
/// padded with probability 0.16, by 0.08σ rows on average (E[(Z − σ)⁺]); at 2σ, 0.02. On the
/// Iris and digits demos (ε = 5, demo schemas, 12 splits 80/20) the utility check rose from
/// 0.842 to 0.883 and from 0.886 to 0.894 going from 2σ to 1σ: at n = 120 every pool is cut to
/// the smallest floor, which 2σ = 9.5 rows put at 25 instead of 30 (split 1: noisy counts
/// 47, 35, 40), and the mixing's sensitivity 2c/l, with l the pool, grew 1.2×.
pub const FLOOR_SIGMAS: f64 = 1.0;

/// ε term of a thresholded release that fails with probability `delta_thr`: ln(1/(1 − δ)),
/// rounded up.
pub fn threshold_epsilon(delta_thr: f64) -> f64 {
    if delta_thr <= 0.0 {
        0.0
    } else if delta_thr >= 1.0 {
        f64::INFINITY
    } else {
        let v = -(-delta_thr).ln_1p();
        v * (1.0 + 1e-12) + f64::MIN_POSITIVE
    }
}

/// The released classes.
#[derive(Debug, Clone, PartialEq)]
pub struct DpClasses {
    /// Released labels that are synthesized (floor ≥ l), in label order.
    pub labels: Vec<String>,
    /// For each of them, its level code in the table's label column (None: not in the data).
    pub level: Vec<Option<u32>>,
    /// Their noisy counts.
    pub noisy_counts: Vec<f64>,
    /// Their pool sizes m_k.
    pub floors: Vec<usize>,
}

/// What the receipt says about the class counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassCountReport {
    /// "schema" (public labels) or "dp" (thresholded noisy counts).
    pub labels_source: &'static str,
    /// Noise multiplier z_c of the count mechanism.
    pub noise_multiplier: f64,
    /// L2 sensitivity (√2).
    pub l2_sensitivity: f64,
    /// Noise standard deviation on each count (exact discrete Gaussian, ≥ z_c·√2).
    pub noise_std: f64,
    /// Release threshold (DP labels only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// δ spent on the threshold.
    pub delta_threshold: f64,
    /// ε term ln(1/(1 − δ_thr)).
    pub epsilon_threshold: f64,
    /// Labels synthesized.
    pub labels: Vec<String>,
    /// Their noisy counts (DP).
    pub noisy_counts: Vec<f64>,
    /// Their pool sizes (from the noisy counts, or the public floor).
    pub pool_sizes: Vec<usize>,
    /// The public floor, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_floor: Option<usize>,
    /// Released labels not synthesized because their floor is below l.
    pub labels_too_small: Vec<String>,
}

/// How the class counts are released and turned into pools.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountRelease {
    /// l: a class whose pool would be smaller is not synthesized.
    pub mix: usize,
    /// A public lower bound on every class size (replaces the DP floors).
    pub public_floor: Option<usize>,
    /// Noise multiplier z_c of the counts.
    pub z: f64,
    /// δ spent on the label threshold (labels read from the data; unused with schema labels).
    pub delta_thr: f64,
}

/// Noisy counts, label set and pool sizes (steps 1–3 of the module docs).
///
/// `levels`/`codes`: the table's label column; `schema_labels`: public labels.
pub fn dp_classes<R: Rng + ?Sized>(
    levels: &[String],
    codes: &[u32],
    schema_labels: Option<&[String]>,
    params: &CountRelease,
    rng: &mut R,
) -> Result<(DpClasses, ClassCountReport)> {
    let &CountRelease {
        mix,
        public_floor,
        z,
        delta_thr,
    } = params;
    if let Some(f) = public_floor {
        if f < mix.max(1) {
            return Err(Error::param(
                "pool_floor",
                f,
                format!("the public class-size floor must be at least l = {mix}"),
            ));
        }
        // A floor above the table's size (public under the adjacency) would pad every pool
        // with that many zero rows (10¹² of them aborted on allocation).
        if f > codes.len() {
            return Err(Error::param(
                "pool_floor",
                f,
                format!(
                    "the public class-size floor is a lower bound on every class's size; it cannot exceed the table's {} rows",
                    codes.len()
                ),
            ));
        }
    }
    let g = CountNoise::new("class-count noise", z, std::f64::consts::SQRT_2)?;
    let sigma = g.sigma();
    let mut exact = vec![0usize; levels.len()];
    for &c in codes {
        if let Some(e) = exact.get_mut(c as usize) {
            *e += 1;
        }
    }
    let (candidates, threshold) = candidate_labels(levels, schema_labels, sigma, delta_thr)?;
    let mut out = DpClasses {
        labels: Vec::new(),
        level: Vec::new(),
        noisy_counts: Vec::new(),
        floors: Vec::new(),
    };
    let mut too_small = Vec::new();
    for (label, level) in candidates {
        let n = level.map_or(0, |c| exact[c as usize]) as f64;
        let noisy = g.add(n, rng);
        if threshold.is_some_and(|tau| noisy <= tau) {
            continue;
        }
        let floor = match public_floor {
            Some(f) => f as f64,
            None => (noisy - FLOOR_SIGMAS * sigma).floor(),
        };
        if floor < mix as f64 || !floor.is_finite() {
            too_small.push(label);
            continue;
        }
        out.labels.push(label);
        out.level.push(level);
        out.noisy_counts.push(noisy);
        out.floors.push(floor as usize);
    }
    if out.labels.is_empty() {
        return Err(no_class_error(threshold, mix, sigma, &too_small));
    }
    let report = ClassCountReport {
        labels_source: if schema_labels.is_some() {
            "schema"
        } else {
            "dp"
        },
        noise_multiplier: z,
        l2_sensitivity: std::f64::consts::SQRT_2,
        noise_std: sigma,
        threshold,
        delta_threshold: if threshold.is_some() { delta_thr } else { 0.0 },
        epsilon_threshold: if threshold.is_some() {
            threshold_epsilon(delta_thr)
        } else {
            0.0
        },
        labels: out.labels.clone(),
        noisy_counts: out.noisy_counts.clone(),
        pool_sizes: out.floors.clone(),
        public_floor,
        labels_too_small: too_small,
    };
    Ok((out, report))
}

/// A label whose count is released, and its level in the table (None: not in the data).
type Candidate = (String, Option<u32>);

/// The labels whose counts are released, each with its level in the table (None: a schema
/// label the data do not hold), and the release threshold: none for the schema's labels,
/// else a label held by ≤ 1 record where present must clear 1 + (σt + 1) with
/// P(N(0,1) > t) ≤ δ_thr/2 (step 2 of the module docs, Lemma T).
fn candidate_labels(
    levels: &[String],
    schema_labels: Option<&[String]>,
    sigma: f64,
    delta_thr: f64,
) -> Result<(Vec<Candidate>, Option<f64>)> {
    Ok(match schema_labels {
        Some(ls) => (
            ls.iter()
                .map(|l| {
                    (
                        l.clone(),
                        levels.iter().position(|v| v == l).map(|p| p as u32),
                    )
                })
                .collect(),
            None,
        ),
        None => {
            if !(delta_thr > 0.0 && delta_thr < 1.0) {
                return Err(Error::Data(format!(
                    "internal: the label threshold needs δ in (0, 1), got {delta_thr}"
                )));
            }
            (
                levels
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (l.clone(), Some(i as u32)))
                    .collect(),
                Some(label_threshold(sigma, delta_thr)),
            )
        }
    })
}

/// The release threshold of a label read from the data, at count noise σ and threshold δ
/// (in (0, 1)): a label held by ≤ 1 record where present must clear 1 + (σt + 1) with
/// P(N(0,1) > t) ≤ δ/2 (Lemma T).
fn label_threshold(sigma: f64, delta_thr: f64) -> f64 {
    1.0 + sigma * upper_quantile_conservative(delta_thr / 2.0) + DISCRETE_TAIL_MARGIN
}

/// The error when no class is large enough to synthesize: what a label and a pool need at
/// this noise, and the fixes.
fn no_class_error(threshold: Option<f64>, mix: usize, sigma: f64, too_small: &[String]) -> Error {
    let need = match threshold {
        Some(tau) => format!(
            "a label read from the data is released only above about {tau:.0} rows, and a pool needs about l + {FLOOR_SIGMAS}·σ = {:.0} rows",
            mix as f64 + FLOOR_SIGMAS * sigma
        ),
        None => format!(
            "a pool needs about l + {FLOOR_SIGMAS}·σ = {:.0} rows",
            mix as f64 + FLOOR_SIGMAS * sigma
        ),
    };
    Error::Data(format!(
        "no class is large enough to synthesize under DP at this budget: the class labels and sizes are private (standard adjacency) and their noisy counts have standard deviation {sigma:.1}, so {need}{}. Raise ε, lower the mix order (mix), choose the keep-label adjacency, which makes the labels and class sizes public (stated in the receipt), or, for a CSV, give the labels in a schema (the label column's categories) with a public class-size floor (pool_floor)",
        if too_small.is_empty() { String::new() } else { format!(" (released but too small: {})", too_small.join(", ")) }
    ))
}

/// What a run is likely to leave out, said before it (the page's readout): from the exact
/// class sizes `sizes` (the data owner's view; this is never released), at their expected
/// noisy counts, a label read from the data (`delta_thr` > 0) is released only above the
/// threshold of [`dp_classes`], and a class is synthesized only when its floor,
/// [`FLOOR_SIGMAS`]·σ below its count, reaches `mix` (unless the floor is public). A class
/// below either is more likely left out than kept. Returns those classes' indices and a
/// warning that names them (none when every class clears both); when every class is below,
/// the warning gives the chance that the run keeps none and stops, Π_k Φ((need − n_k)/σ).
/// `names`: the classes' labels (None: "class 1", "class 2", …).
pub fn class_outlook(
    names: Option<&[String]>,
    sizes: &[u64],
    z: f64,
    delta_thr: f64,
    mix: usize,
    public_floor: bool,
) -> Result<(Vec<usize>, Option<String>)> {
    let sigma = CountNoise::new("class-count noise", z, std::f64::consts::SQRT_2)?.sigma();
    let threshold = (delta_thr > 0.0 && delta_thr < 1.0).then(|| label_threshold(sigma, delta_thr));
    let pool = (!public_floor).then(|| mix.max(1) as f64 + FLOOR_SIGMAS * sigma);
    let need = threshold.unwrap_or(0.0).max(pool.unwrap_or(0.0));
    let out: Vec<usize> = (0..sizes.len())
        .filter(|&k| (sizes[k] as f64) < need)
        .collect();
    if out.is_empty() {
        return Ok((out, None));
    }
    let short: Vec<String> = (out.iter())
        .map(|&k| {
            let n = sizes[k];
            let records = if n == 1 { "record" } else { "records" };
            match names.and_then(|v| v.get(k)) {
                Some(l) => format!("'{l}' ({n} {records})"),
                None => format!("class {} ({n} {records})", k + 1),
            }
        })
        .collect();
    let mut needs = Vec::new();
    if let Some(tau) = threshold {
        needs.push(format!(
            "a label read from the data is released only above about {tau:.0} records"
        ));
    }
    if let Some(p) = pool {
        needs.push(format!(
            "a class needs about l + {FLOOR_SIGMAS}·σ = {p:.0} records for its pool"
        ));
    }
    const SHOWN: usize = 6;
    let mut list = short[..short.len().min(SHOWN)].join(", ");
    if short.len() > SHOWN {
        list += &format!(" and {} more", short.len() - SHOWN);
    }
    let why = format!(
        "The class counts are private (standard adjacency; their noise has σ = {sigma:.1} records): {}.",
        needs.join(", and ")
    );
    let fix = if threshold.is_some() {
        "raise ε, use more rows, or, for a CSV, list the labels in a schema (the label column's categories)"
    } else {
        "raise ε or use more rows"
    };
    let warning = if short.len() == sizes.len() {
        // Each class is dropped when its noisy count falls below `need` (about: the floor
        // is rounded down), independently.
        let dropped =
            |n: u64| 0.5 * libm::erfc((n as f64 - need) / sigma * std::f64::consts::FRAC_1_SQRT_2);
        let stop: f64 = sizes.iter().map(|&n| dropped(n)).product();
        let chance = if stop > 0.99 {
            "over 99 %".to_string()
        } else {
            format!("about {:.0} %", (100.0 * stop).max(1.0))
        };
        format!("No class here has enough records for this budget ({list}): each is more likely left out than kept, and the run stops with no class to synthesize with a chance of {chance}. {why} To keep them, {fix}.")
    } else {
        let (has, it) = if short.len() == 1 {
            ("has", "it")
        } else {
            ("have", "them")
        };
        format!("{list} {has} too few records for this budget, so the run will most likely leave {it} out (the receipt's class_counts list the classes it keeps). {why} To keep {it}, {fix}.")
    };
    Ok((out, Some(warning)))
}

/// Splits `t` rows over classes in proportion to the (positive parts of the) noisy counts,
/// by largest remainders (ties to the lower index). Post-processing of DP counts.
pub fn split_samples(t: usize, noisy: &[f64]) -> Vec<usize> {
    let w: Vec<f64> = noisy.iter().map(|&x| x.max(0.0)).collect();
    let total: f64 = w.iter().sum();
    if noisy.is_empty() {
        return Vec::new();
    }
    if total <= 0.0 {
        let k = noisy.len();
        return (0..k).map(|i| t / k + usize::from(i < t % k)).collect();
    }
    let exact: Vec<f64> = w.iter().map(|x| t as f64 * x / total).collect();
    let mut out: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut left = t.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..noisy.len()).collect();
    order.sort_by(|&a, &b| {
        let ra = exact[a] - exact[a].floor();
        let rb = exact[b] - exact[b].floor();
        rb.partial_cmp(&ra)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}

/// Fixed-size pools (step 4): for class k, `floors[k]` row indices: a uniform subset of
/// `members[k]` when it has enough rows, else all of them plus copies of `zero_row`. How many
/// copies were added is a function of the exact class count, so it is not returned.
pub fn build_pools<R: Rng + ?Sized>(
    members: &[Vec<u32>],
    floors: &[usize],
    zero_row: u32,
    rng: &mut R,
) -> Vec<Vec<u32>> {
    members
        .iter()
        .zip(floors)
        .map(|(m, &f)| {
            if m.len() >= f {
                rand::seq::index::sample(rng, m.len(), f)
                    .into_iter()
                    .map(|i| m[i])
                    .collect()
            } else {
                let mut p = m.clone();
                p.resize(f, zero_row);
                p
            }
        })
        .collect()
}

/// At each order, the sum of the two largest per-class values (the largest alone with one
/// class): what a record that changes class can cost.
pub fn two_class_max(curves: &[RdpCurve]) -> Result<RdpCurve> {
    let first = curves
        .first()
        .ok_or_else(|| Error::Data("internal: no class to account".into()))?;
    let mut out = first.clone();
    for (i, v) in out.rdp.iter_mut().enumerate() {
        let (mut a, mut b) = (0f64, 0f64);
        for c in curves {
            let x = c.rdp[i];
            if x.is_nan() {
                return Err(Error::Accountant("NaN in a class curve".into()));
            }
            if x > a {
                b = a;
                a = x;
            } else if x > b {
                b = x;
            }
        }
        let s = a + b;
        // Rounded up (never toward less privacy loss).
        *v = if s == 0.0 { 0.0 } else { s * (1.0 + 1e-15) };
    }
    Ok(out)
}

/// The mixing's RDP under the standard adjacency: class k is charged `compositions[k]` steps
/// of the WOR-subsampled Gaussian at rate l/`floors[k]` with noise multiplier `z`.
pub fn standard_curve(
    floors: &[usize],
    compositions: &[u64],
    mix: u32,
    z: f64,
    orders: &[u32],
    preset: Preset,
) -> Result<RdpCurve> {
    // A class whose rate and step count are both at most those of two other classes can
    // never be one of the two largest at any order (the bound grows with the rate and the
    // steps): only the others are evaluated. Sorted by rate, then steps, descending, a
    // class's dominators come before it, and a dominated dominator's own two dominators
    // dominate it too, so checking against the classes kept so far is enough.
    let mut order: Vec<(usize, u64)> = floors
        .iter()
        .copied()
        .zip(compositions.iter().copied())
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut kept: Vec<(usize, u64)> = Vec::with_capacity(order.len());
    for (f, t) in order {
        if kept.iter().filter(|&&(g, u)| g <= f && u >= t).count() < 2 {
            kept.push((f, t));
        }
    }
    // One curve per distinct rate (the moments shared), × the class's steps.
    let mut rates: Vec<usize> = kept.iter().map(|&(f, _)| f).collect();
    rates.dedup();
    let qs: Vec<f64> = rates.iter().map(|&f| f64::from(mix) / f as f64).collect();
    let base = RdpCurve::subsampled_gaussian_rates(&qs, z, orders, preset.bound())?;
    let curves: Vec<RdpCurve> = kept
        .iter()
        .map(|&(f, t)| {
            let i = rates
                .binary_search(&f)
                .expect("every kept floor has a rate");
            base[i].clone().times(t)
        })
        .collect();
    two_class_max(&curves)
}

/// Smallest σx whose standard-adjacency mixing meets `goal` (re-accounted; never
/// overshoots). `label_term` is (√2/l)²/σy² in paper mode, else 0.
pub fn calibrate_standard(
    floors: &[usize],
    compositions: &[u64],
    mix: u32,
    clip: f64,
    label_term: f64,
    goal: &Goal<'_>,
) -> Result<f64> {
    let &Goal {
        epsilon: target,
        delta,
        orders,
        preset,
        ..
    } = goal;
    check_epsilon(target)?;
    check_delta(delta)?;
    let curve = |z: f64| {
        goal.with_extra(standard_curve(
            floors,
            compositions,
            mix,
            z,
            orders,
            preset,
        )?)
    };
    let cal = smallest_z(target, delta, preset.conversion(), curve)?;
    let inv_z2 = 1.0 / (cal.z * cal.z);
    if inv_z2 <= label_term * (1.0 + 1e-12) {
        return Err(Error::param(
            "sigma_y",
            "(given)",
            format!("the label noise alone already spends more than ε = {target}; increase sigma_y or drop it"),
        ));
    }
    let dx = 2.0 * clip / f64::from(mix);
    let mut sigma_x = dx / (inv_z2 - label_term).sqrt();
    for _ in 0..64 {
        let z = 1.0 / (dx * dx / (sigma_x * sigma_x) + label_term).sqrt();
        let e = curve(z)?.epsilon(delta, preset.conversion())?;
        if e.epsilon <= target {
            return Ok(sigma_x);
        }
        sigma_x *= 1.0 + 1e-10;
    }
    Err(Error::Accountant(format!(
        "calibration could not certify ε ≤ {target}; report this as a bug"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accountant::default_orders;
    use crate::mechanisms::gaussian::ks_crit;
    use crate::mechanisms::noise::ks_discrete_gaussian;
    use crate::rng::ReleaseRng;

    /// The released counts are multiples of the count grid 2^-k (exact discrete noise; a
    /// float Gaussian almost never is) and n_k + 2^-k·N_ℤ(0, (2^k σ)²) with σ ≥ z·√2, 2^k σ
    /// ≥ 2^30: KS at α = 1e-6
    /// over 4,000 draws of each of two counts.
    #[test]
    fn class_counts_lie_on_the_count_grid_with_discrete_gaussian_noise_ks() {
        let lv = labels(&["a", "b"]);
        let mut codes = vec![0u32; 300];
        codes.extend(vec![1u32; 700]);
        let s = labels(&["a", "b"]);
        let z = 3.0;
        let grid = CountNoise::new("x", z, std::f64::consts::SQRT_2)
            .unwrap()
            .grid();
        let mut noise = Vec::new();
        let mut sigma = 0.0;
        for seed in 0..2000 {
            let (c, rep) = dp_classes(
                &lv,
                &codes,
                Some(&s),
                &CountRelease {
                    mix: 2,
                    public_floor: None,
                    z,
                    delta_thr: 0.0,
                },
                &mut ReleaseRng::seeded(seed),
            )
            .unwrap();
            sigma = rep.noise_std;
            for (&x, n) in c.noisy_counts.iter().zip([300.0, 700.0]) {
                let u = (x - n) / grid;
                assert_eq!(
                    u.fract(),
                    0.0,
                    "seed {seed}: count {x} is off the grid {grid}"
                );
                noise.push(u as i64);
            }
        }
        // σ_c ≥ z·√2, and not by more than the sampler's rounding.
        assert!(sigma >= z * 2f64.sqrt() && sigma <= z * 2f64.sqrt() * (1.0 + 1e-9));
        // At least 2^30 grid units of σ (the fine grid of the counts), below 2^31.
        let units = sigma / grid;
        assert!(
            units >= 2f64.powi(30) && units < 2f64.powi(31) * (1.0 + 1e-9),
            "{units}"
        );
        let d = ks_discrete_gaussian(&noise, sigma / grid);
        assert!(d < ks_crit(noise.len()), "KS {d}");
        // The test can fail: the same draws against σ·1.5.
        assert!(ks_discrete_gaussian(&noise, sigma / grid * 1.5) > ks_crit(noise.len()));
    }

    /// Lemma T (P(Z ≥ m) ≤ P(Y ≥ m − 1)) at small σ, where the discrete law is furthest from
    /// the continuous one: exact sums, not the sampler.
    #[test]
    fn count_noise_out_of_the_samplers_range_is_a_clear_error() {
        let e = CountNoise::new("class-count noise", 1e10, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("class-count noise") && e.contains("raise ε"),
            "{e}"
        );
        // Below 2^-20 grid units even on the finest count grid 2^-62.
        let e = CountNoise::new("class-count noise", 1e-30, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lower ε"), "{e}");
        assert!(CountNoise::new("x", f64::NAN, 1.0).is_err());
        assert!(CountNoise::new("x", 1.0, 0.0).is_err());
    }

    #[test]
    fn discrete_tail_is_below_the_shifted_gaussian_tail() {
        for s in [0.3f64, 0.7, 1.0, 2.5, 10.0] {
            let wide = (40.0 * s).ceil() as i64 + 40;
            let w = |k: i64| (-((k * k) as f64) / (2.0 * s * s)).exp();
            let tot: f64 = (-wide..=wide).map(w).sum();
            for m in 1..(8.0 * s).ceil() as i64 + 2 {
                let tail: f64 = (m..=wide).map(w).sum::<f64>() / tot;
                let y = 0.5 * libm::erfc((m - 1) as f64 / s * std::f64::consts::FRAC_1_SQRT_2);
                assert!(tail <= y * (1.0 + 1e-12), "σ {s}, m {m}: {tail} > {y}");
            }
        }
    }

    fn labels(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn threshold_term_is_ln_one_over_one_minus_delta() {
        let d = 1e-6;
        let t = threshold_epsilon(d);
        // ln(1/(1-d)) = d + d²/2 + d³/3 + ... (a series, not the code under test).
        assert!(
            t >= d + d * d / 2.0 + d * d * d / 3.0 && t <= d + d * d,
            "{t}"
        );
        assert_eq!(threshold_epsilon(0.0), 0.0);
    }

    #[test]
    fn a_label_held_by_one_record_is_not_released_but_large_ones_are() {
        let lv = labels(&["a", "b", "rare"]);
        let mut codes = vec![0u32; 500];
        codes.extend(vec![1u32; 400]);
        codes.push(2);
        let mut released_rare = 0;
        let mut above = 0;
        for seed in 0..200 {
            let (c, rep) = dp_classes(
                &lv,
                &codes,
                None,
                &CountRelease {
                    mix: 4,
                    public_floor: None,
                    z: 2.0,
                    delta_thr: 1e-6,
                },
                &mut ReleaseRng::seeded(seed),
            )
            .unwrap();
            assert_eq!(&c.labels[..2], &labels(&["a", "b"])[..]);
            released_rare += usize::from(c.labels.len() == 3);
            assert!(rep.threshold.unwrap() > 1.0 + 2.0 * 2f64.sqrt() * 4.0);
            // Floors sit σ below the noisy counts: above the true size with probability
            // at most P(N(0,1) > 1) ≈ 0.159 per class (then the pool is padded).
            above += usize::from(c.floors[0] > 500) + usize::from(c.floors[1] > 400);
        }
        assert_eq!(released_rare, 0);
        // 400 draws at p ≤ 0.159 (mean ≤ 63.5, sd 7.3): more than 110 has probability < 1e-8;
        // fewer than 25 (5.3 sd below) < 1e-7, and is what floors 2σ down would give (mean 9).
        assert!((25..=110).contains(&above), "{above}");
    }

    #[test]
    fn schema_labels_are_all_released_and_a_public_floor_is_used() {
        let lv = labels(&["x", "y"]);
        let codes = vec![0u32, 0, 0, 1, 1, 1, 1];
        let s = labels(&["x", "y"]);
        let (c, rep) = dp_classes(
            &lv,
            &codes,
            Some(&s),
            &CountRelease {
                mix: 2,
                public_floor: Some(3),
                z: 1.0,
                delta_thr: 0.0,
            },
            &mut ReleaseRng::seeded(3),
        )
        .unwrap();
        assert_eq!(c.labels, s);
        assert_eq!(c.floors, [3, 3]);
        assert_eq!(rep.labels_source, "schema");
        assert_eq!(rep.epsilon_threshold, 0.0);
        let e = dp_classes(
            &lv,
            &codes,
            Some(&s),
            &CountRelease {
                mix: 4,
                public_floor: Some(3),
                z: 1.0,
                delta_thr: 0.0,
            },
            &mut ReleaseRng::seeded(3),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("pool_floor"), "{e}");
    }

    #[test]
    fn split_follows_the_counts_and_sums_to_t() {
        assert_eq!(split_samples(10, &[100.0, 300.0]), [3, 7]);
        assert_eq!(split_samples(10, &[1.0, 1.0, 1.0]), [4, 3, 3]);
        assert_eq!(split_samples(5, &[-1.0, 0.0]), [3, 2]);
    }

    #[test]
    fn pools_have_exactly_the_floor_size() {
        let members = vec![(0..10).collect::<Vec<u32>>(), vec![10, 11]];
        let p = build_pools(&members, &[6, 4], 99, &mut ReleaseRng::seeded(1));
        assert_eq!(p[0].len(), 6);
        assert!(p[0].iter().all(|i| *i < 10));
        assert_eq!(p[1], [10, 11, 99, 99]);
    }

    #[test]
    fn standard_curve_is_the_two_class_max_of_every_class_curve() {
        let o = default_orders();
        // MNIST's class sizes with equal steps (most classes dominated twice), with steps in
        // proportion (none dominated), repeated sizes, one class, and mixed cases.
        let mnist = [
            5923usize, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949,
        ];
        let cases: Vec<(Vec<usize>, Vec<u64>)> = vec![
            (mnist.to_vec(), vec![6000; 10]),
            (mnist.to_vec(), mnist.iter().map(|&n| n as u64).collect()),
            (vec![900, 900, 900], vec![50, 50, 50]),
            (vec![500], vec![70]),
            (vec![300, 900, 300, 1200], vec![10, 40, 10, 5]),
            (vec![100, 200, 300], vec![300, 200, 100]),
        ];
        for (floors, comps) in &cases {
            for z in [0.6, 1.3, 4.0] {
                let all: Vec<RdpCurve> = floors
                    .iter()
                    .zip(comps)
                    .map(|(&f, &t)| {
                        RdpCurve::subsampled_gaussian(
                            4.0 / f as f64,
                            z,
                            &o,
                            Preset::Default.bound(),
                        )
                        .unwrap()
                        .times(t)
                    })
                    .collect();
                let want = two_class_max(&all).unwrap();
                let got = standard_curve(floors, comps, 4, z, &o, Preset::Default).unwrap();
                assert_eq!(got.rdp, want.rdp, "{floors:?} {comps:?} z={z}");
            }
        }
    }

    #[test]
    fn two_classes_are_charged() {
        let o = default_orders();
        let one = standard_curve(&[100], &[50], 4, 2.0, &o, Preset::Default).unwrap();
        let two =
            standard_curve(&[100, 100, 100], &[50, 50, 50], 4, 2.0, &o, Preset::Default).unwrap();
        for (a, b) in one.rdp.iter().zip(&two.rdp) {
            assert!((b / a - 2.0).abs() < 1e-12, "{a} {b}");
        }
        // Calibration never overshoots.
        let target = 1.0;
        let s = calibrate_standard(
            &[100, 200],
            &[50, 100],
            4,
            1.0,
            0.0,
            &Goal::new(target, 1e-5, &o),
        )
        .unwrap();
        let z = s / 0.5;
        let e = standard_curve(&[100, 200], &[50, 100], 4, z, &o, Preset::Default)
            .unwrap()
            .epsilon(1e-5, Preset::Default.conversion())
            .unwrap();
        assert!(e.epsilon <= target && e.epsilon > 0.99 * target, "{e:?}");
    }

    /// The outlook names the classes below the label threshold or the pool's need, one record
    /// in the singular, and a table without names by number; with a public floor only the
    /// threshold counts, and with public labels and a public floor nothing does.
    #[test]
    fn the_outlook_names_the_classes_below_what_they_need() {
        let names = ["one".to_string(), "big".to_string(), "few".to_string()];
        let sizes = [1, 5000, 40];
        // z = 10: σ ≈ 14.1 counts; the threshold at δ = 1e-6 is about 1 + 5.0σ + 1 ≈ 73.
        let (out, w) = class_outlook(Some(&names), &sizes, 10.0, 1e-6, 4, false).unwrap();
        let w = w.unwrap();
        assert_eq!(out, vec![0, 2], "{w}");
        assert!(
            w.contains("'one' (1 record), 'few' (40 records) have too few records"),
            "{w}"
        );
        assert!(!w.contains("'big'"), "{w}");
        let (_, w) = class_outlook(None, &sizes, 10.0, 1e-6, 4, false).unwrap();
        assert!(w
            .unwrap()
            .contains("class 1 (1 record), class 3 (40 records)"));
        // Public labels: only the pool (l + σ ≈ 18) counts, so 'few' is kept.
        let (out, w) = class_outlook(Some(&names), &sizes, 10.0, 0.0, 4, false).unwrap();
        assert_eq!(out, vec![0], "{w:?}");
        // Public labels and a public floor: nothing is left out by the counts.
        assert_eq!(
            class_outlook(Some(&names), &sizes, 10.0, 0.0, 4, true).unwrap(),
            (vec![], None)
        );
    }
}
