//! Normalization statistics, with the privacy of each one stated.
//!
//! * `public`: bounds and categories come from the schema; nothing is learned from the data.
//! * `dp` (default): every statistic the schema does not give is read off one Gaussian
//!   mechanism over per-column histograms, whose RDP is composed into the accountant:
//!   - numeric columns: counts over a fixed, data-independent grid of 1,185 bins (sign ×
//!     power of two × quarter, plus a bin for |x| < 2⁻²⁰), plus a count of non-integral values;
//!     the range is the span of the bins whose noisy count clears a threshold (false
//!     detections across all bins and columns ≤ 0.1%: one false bin far out would stretch a
//!     range to ±1e38), and the column is integral when the noisy
//!     non-integral count does not;
//!   - categorical columns: counts of the observed levels; a level is released only if its
//!     noisy count exceeds τ = 2 + σ·t with P(N(0,1) > t) ≤ δ_cat / (#categorical columns), so a
//!     level held by a single record appears with probability ≤ δ_cat in total, which is added
//!     to δ (the standard thresholded-histogram argument). Conditioning on that event not
//!     happening also scales the other direction's probabilities by at most 1/(1 − δ_cat), so
//!     ln(1/(1 − δ_cat)) is added to ε ([`DpHistogramReport::epsilon_categories`], computed by
//!     [`crate::preprocess::dp_counts::threshold_epsilon`]; the pipeline adds it to the
//!     receipt's ε and subtracts it from the target before calibrating).
//!
//!   Replacing one record moves one count between two bins of each histogram and changes each
//!   non-integral count by at most one, so the L2 sensitivity is √(3·m_num + 2·m_cat).
//! * `dp`, many numeric columns (m_num ≥ 27, [`pooled_range_worth_it`]): one more histogram,
//!   the fine-grid counts of all those columns' values together, released in the same
//!   Gaussian mechanism with its own, larger noise ([`NormPlan::pooled_sensitivity`]: it adds
//!   0.1·3·m_num to Δ², raising the columns' noise by under 5 %). A column whose own noisy
//!   counts leave more of its rows outside its range than their noise explains (values
//!   spread over bins too thin to clear the threshold: a pixel column that is 0 in half the
//!   images and 1–16 in the rest, at a few thousand rows) takes the union of its range and
//!   the pooled one instead of coming out constant; a column with no bin of its own that
//!   stands out takes the pooled range. The pooled range's ends are placed to a fine bin
//!   where the data allow (the digits' 16: [0, 20], where coarse bins say [0, 32]). Both are
//!   post-processing, said in the warnings and the report.
//!
//!   **Exact noise.** Every count gets discrete Gaussian noise N_ℤ(0, σ²), σ ≥ z·Δ, drawn in
//!   integer arithmetic ([`crate::preprocess::dp_counts::CountNoise`]): the counts are
//!   integers and neighbours differ by integer vectors, so by CKS20 (Lemma D of the proof
//!   note in [`crate::preprocess::dp_counts`]) the release has the Gaussian mechanism's RDP
//!   curve with noise multiplier z, unchanged. Released counts lie on the count grid 2^-k
//!   ([`crate::preprocess::dp_counts::CountNoise::grid`]). The thresholds
//!   whose rates are stated (range bins, integrality, categorical levels) sit one unit higher
//!   than for continuous noise (Lemma T there): the range and integrality thresholds are
//!   σ·t + 1 and the categorical one τ = 2 + σ·t (a level held by one record where present).
//!   The mean-norm statistic, a sum of reals, is released on an integer grid
//!   ([`fit_feature_space_with`], step 3).
//! * `data`: the paper's exact z-scores and all observed levels. NOT protected; the receipt says
//!   so.

use super::dp_counts::{CountNoise, DISCRETE_TAIL_MARGIN};
use super::encode::{ColumnCodec, FeatureSpace};
use super::quantile::NumericMarginal;
use crate::data::{Column, ColumnSpec, Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::gaussian::upper_quantile_conservative;
use crate::mechanisms::noise::DiscreteGaussian;
use rand::Rng;
use serde::Serialize;

/// Normalization mode: where the ranges and scales come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NormalizeMode {
    /// Bounds and categories from the schema.
    Public,
    /// Statistics estimated under DP with a share of the budget (default).
    Dp,
    /// The paper's exact statistics, not protected.
    Data,
}

impl std::str::FromStr for NormalizeMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "public" => Ok(NormalizeMode::Public),
            "dp" => Ok(NormalizeMode::Dp),
            "data" => Ok(NormalizeMode::Data),
            other => Err(Error::param(
                "normalize",
                other,
                "use 'dp' (default), 'public' (bounds from the schema) or 'data'",
            )),
        }
    }
}

/// The DP histogram mechanism's parameters (set by the caller from its budget split).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DpHistogramBudget {
    /// Noise multiplier of the joint Gaussian mechanism (σ / L2 sensitivity).
    pub noise_multiplier: f64,
    /// δ spent on releasing categorical levels through the threshold.
    pub delta_categories: f64,
}

/// How one column's statistics were obtained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnReport {
    /// Column name.
    pub name: String,
    /// "numeric", "categorical" or "label".
    pub kind: &'static str,
    /// "schema" (public), "dp" (protected), "data" (unprotected) or "public (class labels)".
    pub source: &'static str,
    /// Numeric range used, in original units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Categorical: number of levels released / observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels_released: Option<usize>,
}

/// What the receipt says about normalization.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormalizationReport {
    /// The mode used.
    pub mode: NormalizeMode,
    /// True when every statistic is public or DP (accounted).
    pub protected: bool,
    /// A sentence for people.
    pub statement: String,
    /// The DP histogram mechanism, when used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dp_histogram: Option<DpHistogramReport>,
    /// Per-column details.
    pub columns: Vec<ColumnReport>,
    /// Things the user should know (e.g. a range that had to fall back).
    pub warnings: Vec<String>,
}

/// Parameters of the DP histogram mechanism as released.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DpHistogramReport {
    /// Noise multiplier (σ / sensitivity).
    pub noise_multiplier: f64,
    /// L2 sensitivity √(3·m_num + 2·m_cat).
    pub l2_sensitivity: f64,
    /// Noise standard deviation on each count.
    pub noise_std: f64,
    /// Numeric columns estimated.
    pub numeric_columns: usize,
    /// Categorical columns estimated.
    pub categorical_columns: usize,
    /// δ spent on the categorical thresholds.
    pub delta_categories: f64,
    /// ε term of the categorical thresholds, ln(1/(1 − δ_cat)) (0 without categorical columns).
    pub epsilon_categories: f64,
    /// Columns whose marginal was released (for quantile mapping / proportional categories).
    pub marginal_columns: usize,
    /// The DP mean norm of the encoded rows, when released.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_norm: Option<f64>,
    /// The share of ε this release was sized for (set by the synthesis, which chooses it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon_share: Option<f64>,
    /// Why the share differs from the default, when it was raised automatically.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_note: Option<String>,
    /// The pooled range histogram's noise standard deviation, when it was released
    /// ([`NormPlan::pooled_range`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled_noise_std: Option<f64>,
    /// The range the pooled histogram found, when it found one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled_range: Option<[f64; 2]>,
}

/// Numbers of (numeric, categorical) feature columns whose statistics `dp` mode must estimate.
pub fn dp_columns(table: &Table, schema: Option<&Schema>) -> (usize, usize) {
    let cat = feature_columns(table, schema)
        .filter(|(_, col, spec)| {
            matches!(col, Column::Categorical { .. })
                && !matches!(
                    spec,
                    Some(ColumnSpec::Categorical {
                        categories: Some(_)
                    })
                )
        })
        .count();
    (range_estimated(table, schema).count(), cat)
}

/// The feature columns of `table` (the label left out), each with its index and its schema
/// entry.
fn feature_columns<'a>(
    table: &'a Table,
    schema: Option<&'a Schema>,
) -> impl Iterator<Item = (usize, &'a Column, Option<&'a ColumnSpec>)> {
    (table.names.iter().zip(&table.columns).enumerate())
        .filter(move |&(j, _)| Some(j) != table.label_index)
        .map(move |(j, (name, col))| (j, col, schema.and_then(|s| s.columns.get(name))))
}

/// The values of the numeric feature columns whose range `dp` mode estimates: those whose
/// schema entry does not give both bounds (min and max make a column public; without
/// `integer` it is real-valued). Their number is the m of the range histograms' and the
/// pooled histogram's sensitivity.
fn range_estimated<'a>(
    table: &'a Table,
    schema: Option<&'a Schema>,
) -> impl Iterator<Item = &'a [f32]> {
    range_estimated_at(table, schema).map(|(_, values)| values)
}

/// [`range_estimated`] with each column's index in the table.
fn range_estimated_at<'a>(
    table: &'a Table,
    schema: Option<&'a Schema>,
) -> impl Iterator<Item = (usize, &'a [f32])> {
    feature_columns(table, schema).filter_map(|(j, col, spec)| match (col, spec) {
        (
            _,
            Some(ColumnSpec::Numeric {
                min: Some(_),
                max: Some(_),
                ..
            }),
        ) => None,
        (Column::Numeric { values, .. }, _) => Some((j, &values[..])),
        _ => None,
    })
}

// ---- the fixed numeric grid -------------------------------------------------------------

const MIN_EXP: i32 = -20;
const MAX_EXP: i32 = 127;
const SUB: usize = 4;
const HALF: usize = ((MAX_EXP - MIN_EXP + 1) as usize) * SUB;
/// Number of bins of the numeric grid.
pub const GRID_BINS: usize = 2 * HALF + 1;

/// Chance, per run, that noise alone puts a bin (or a non-integral count) over the threshold
/// in any numeric column.
pub const FALSE_DETECTION_RATE: f64 = 1e-3;

fn bin_of(x: f32) -> usize {
    let a = x.abs();
    if a < 2f32.powi(MIN_EXP) {
        return HALF;
    }
    let bits = a.to_bits();
    let exp = (((bits >> 23) & 0xff) as i32 - 127).clamp(MIN_EXP, MAX_EXP);
    let sub = ((bits >> 21) & 3) as usize;
    let off = (exp - MIN_EXP) as usize * SUB + sub;
    if x > 0.0 {
        HALF + 1 + off
    } else {
        HALF - 1 - off
    }
}

/// [lower, upper] edges of a bin.
fn bin_edges(b: usize) -> (f64, f64) {
    if b == HALF {
        let e = 2f64.powi(MIN_EXP);
        return (-e, e);
    }
    let (off, sign) = if b > HALF {
        (b - HALF - 1, 1.0)
    } else {
        (HALF - 1 - b, -1.0)
    };
    let exp = (off / SUB) as i32 + MIN_EXP;
    let sub = (off % SUB) as f64;
    let lo = 2f64.powi(exp) * (1.0 + sub / SUB as f64);
    let hi = 2f64.powi(exp) * (1.0 + (sub + 1.0) / SUB as f64);
    if sign > 0.0 {
        (lo, hi)
    } else {
        (-hi, -lo)
    }
}

// ---- the coarse grid (ranges) ----------------------------------------------------------

const COARSE_HALF: usize = (MAX_EXP - MIN_EXP + 1) as usize;
/// Number of bins of the coarse (sign × power of two) grid the ranges are read from.
pub const COARSE_BINS: usize = 2 * COARSE_HALF + 1;

fn coarse_of_fine(b: usize) -> usize {
    if b == HALF {
        COARSE_HALF
    } else if b > HALF {
        COARSE_HALF + 1 + (b - HALF - 1) / SUB
    } else {
        COARSE_HALF - 1 - (HALF - 1 - b) / SUB
    }
}

/// The fine bins inside a coarse bin, increasing.
fn fine_of_coarse(cb: usize) -> std::ops::RangeInclusive<usize> {
    if cb == COARSE_HALF {
        HALF..=HALF
    } else if cb > COARSE_HALF {
        let s = HALF + 1 + (cb - COARSE_HALF - 1) * SUB;
        s..=s + SUB - 1
    } else {
        let e = HALF - 1 - (COARSE_HALF - 1 - cb) * SUB;
        e + 1 - SUB..=e
    }
}

fn coarse_edges(cb: usize) -> (f64, f64) {
    let r = fine_of_coarse(cb);
    (bin_edges(*r.start()).0, bin_edges(*r.end()).1)
}

// ---- fitting ---------------------------------------------------------------------------

/// The range threshold in noise standard deviations for `m_num` numeric columns: a coarse
/// bin counts toward a column's range when its noisy count exceeds this many σ plus one count
/// (family-wise false-detection rate [`FALSE_DETECTION_RATE`] over every bin of every column;
/// the extra count makes the continuous Gaussian's rate hold for the discrete noise, Lemma T
/// of [`crate::preprocess::dp_counts`]).
pub fn range_threshold_sigmas(m_num: usize) -> f64 {
    upper_quantile_conservative(FALSE_DETECTION_RATE / ((COARSE_BINS + 1) * m_num.max(1)) as f64)
}

/// What [`fit_feature_space_with`] should release besides ranges and categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtraStats {
    /// DP marginals of every feature column (for quantile mapping and proportional
    /// categories), when [`plan_extras`] finds them worth their noise.
    pub marginals: bool,
    /// A DP mean of the encoded rows' L2 norms (to restore the scale after row scaling).
    pub mean_norm: bool,
}

/// The DP releases a normalization makes, as counted for its sensitivity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NormPlan {
    /// Numeric columns whose range and integrality are estimated (3 coordinates change).
    pub numeric_ranges: usize,
    /// Categorical columns whose levels are estimated (2 coordinates change).
    pub categorical_levels: usize,
    /// Numeric columns with a marginal histogram (2 coordinates change).
    pub numeric_marginals: usize,
    /// Categorical columns with schema levels whose counts are released (2 coordinates).
    pub categorical_marginals: usize,
    /// Whether the mean-norm statistic is released (1 coordinate, scaled to sensitivity 1).
    pub mean_norm: bool,
    /// Whether the pooled range histogram is released: the fine-grid histogram of every
    /// range-estimated numeric column's values together ([`pooled_range_worth_it`]), with
    /// the noise [`NormPlan::pooled_sensitivity`] sets, so that it adds
    /// [`POOLED_RANGE_SHARE`]·3·`numeric_ranges` to Δ².
    pub pooled_range: bool,
}

impl NormPlan {
    /// The ranges and categories of `numeric_ranges` and `categorical_levels` columns only:
    /// no marginal, mean norm or pooled range histogram.
    pub fn ranges_only(numeric_ranges: usize, categorical_levels: usize) -> Self {
        NormPlan {
            numeric_ranges,
            categorical_levels,
            numeric_marginals: 0,
            categorical_marginals: 0,
            mean_norm: false,
            pooled_range: false,
        }
    }

    /// L2 sensitivity of the whole (adaptively composed) Gaussian release under replace-one.
    pub fn l2_sensitivity(&self) -> f64 {
        let counts = (3 * self.numeric_ranges
            + 2 * (self.categorical_levels + self.numeric_marginals + self.categorical_marginals)
            + usize::from(self.mean_norm)) as f64;
        (counts + self.pooled_weight()).sqrt()
    }

    /// The pooled histogram's term P in Δ² (0 when it is not released).
    fn pooled_weight(&self) -> f64 {
        if self.pooled_range {
            POOLED_RANGE_SHARE * 3.0 * self.numeric_ranges as f64
        } else {
            0.0
        }
    }

    /// The sensitivity the pooled histogram's noise is sized with, z times which is its
    /// noise σ_p (None when it is not released).
    ///
    /// Replacing one record moves each of its m = `numeric_ranges` values from one bin of
    /// the grid to another, so the pooled counts change by a − b with a, b ≥ 0 holding m units
    /// each: ‖a − b‖² ≤ ‖a‖² + ‖b‖² ≤ 2m² (adding or removing one: m²). With σ = z·Δ the
    /// whole release's noise, σ_p = σ·m·√(2/P) makes the pooled counts' Rényi term
    /// α·2m²/(2σ_p²) = α·P/(2σ²): exactly the P that [`Self::l2_sensitivity`] counts in Δ²,
    /// so the release stays one Gaussian mechanism with noise multiplier z (the discrete
    /// Gaussian's bound is the same per coordinate, Lemma D of the counts' proof note).
    pub fn pooled_sensitivity(&self) -> Option<f64> {
        let p = self.pooled_weight();
        (p > 0.0).then(|| self.l2_sensitivity() * self.numeric_ranges as f64 * (2.0 / p).sqrt())
    }
    /// True when anything is released.
    pub fn any(&self) -> bool {
        self.l2_sensitivity() > 0.0
    }
}

/// The pooled range histogram's share of Δ², relative to the per-column range histograms'
/// 3·m: it raises their noise by √(1 + this) (5 % at 0.1).
pub const POOLED_RANGE_SHARE: f64 = 0.1;

/// Whether the pooled range histogram is worth its cost for `m_num` range-estimated numeric
/// columns: its signal-to-noise ratio over one column's is √(1.5·[`POOLED_RANGE_SHARE`]·m)
/// (m times the counts, noise σ·m·√(2/P) against σ), released when that is at least 2
/// (m ≥ 27 at a share of 0.1: tables of pixels, scores or counts, where many columns share a
/// scale and, at a few thousand rows, each column alone is too thin for its range to stand
/// out of the noise).
pub fn pooled_range_worth_it(m_num: usize) -> bool {
    1.5 * POOLED_RANGE_SHARE * m_num as f64 >= 4.0
}

/// Rows per marginal bin the noise must leave: marginals are released only when the noise
/// standard deviation on a count is at most n / this.
pub const MARGINAL_ROWS_PER_SIGMA: f64 = 32.0;

/// Decides, from public numbers only (n, the columns, the schema and the noise multiplier z of
/// the normalization budget), what normalization releases: marginals only when their noise
/// σ = z·Δ is ≤ n / [`MARGINAL_ROWS_PER_SIGMA`] (otherwise they would be mostly noise).
pub fn plan_extras(
    table: &Table,
    schema: Option<&Schema>,
    want: ExtraStats,
    noise_multiplier: f64,
) -> NormPlan {
    let (m_num, m_cat) = dp_columns(table, schema);
    let mut num_all = 0;
    let mut cat_all = 0;
    for (j, col) in table.columns.iter().enumerate() {
        if Some(j) == table.label_index {
            continue;
        }
        match col {
            Column::Numeric { .. } => num_all += 1,
            Column::Categorical { .. } => cat_all += 1,
        }
    }
    let base = NormPlan {
        numeric_ranges: m_num,
        categorical_levels: m_cat,
        numeric_marginals: 0,
        categorical_marginals: 0,
        mean_norm: want.mean_norm,
        pooled_range: pooled_range_worth_it(m_num),
    };
    if !want.marginals || num_all + cat_all == 0 {
        return base;
    }
    let with = NormPlan {
        numeric_marginals: num_all,
        categorical_marginals: cat_all - m_cat,
        ..base
    };
    let sigma = noise_multiplier * with.l2_sensitivity();
    if sigma.is_finite() && sigma * MARGINAL_ROWS_PER_SIGMA <= table.n_rows as f64 {
        with
    } else {
        base
    }
}

/// Released marginal of one column (for decoding).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnMarginal {
    /// A numeric column's histogram.
    Numeric(NumericMarginal),
    /// A categorical column's level proportions, one per released level (noisy, ≥ 0), and
    /// possibly one more: the pooled mass of the levels below the release threshold, decoded
    /// as [`super::encode::OTHER`].
    Categorical(Vec<f64>),
}

/// What normalization releases besides the feature space.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Released {
    /// One entry per input column (None: no marginal; always None for the label).
    pub marginals: Vec<Option<ColumnMarginal>>,
    /// DP mean of ‖u_i‖ over the encoded rows, when asked for.
    pub mean_norm: Option<f64>,
    /// Public maximum norm of an encoded row (√(numeric columns + categorical columns)).
    pub max_norm: f64,
}

/// Learns the feature space of `table` under `mode`.
///
/// `budget` must be given when `mode` is `Dp` and [`dp_columns`] is non-zero.
pub fn fit_feature_space<R: Rng + ?Sized>(
    table: &Table,
    schema: Option<&Schema>,
    mode: NormalizeMode,
    budget: Option<&DpHistogramBudget>,
    rng: &mut R,
) -> Result<(FeatureSpace, NormalizationReport)> {
    let (m_num, m_cat) = dp_columns(table, schema);
    let plan = NormPlan::ranges_only(m_num, m_cat);
    fit_feature_space_with(table, schema, mode, budget, &plan, rng).map(|(f, r, _)| (f, r))
}

/// [`fit_feature_space`] that also releases what `plan` (from [`plan_extras`]) asks for, in
/// `dp` mode. The whole release is one adaptively composed Gaussian mechanism with noise
/// σ ≥ z·[`NormPlan::l2_sensitivity`] on every coordinate: (1) the coarse range histograms,
/// non-integral counts and categorical level counts; (2) given (1), the marginal histograms on
/// bin edges fixed by (1) and the schema; (3) given (1)–(2), Σ_i ‖u_i‖/M. Composing Gaussian
/// mechanisms adds their RDP, α·Σ Δ_i²/(2σ²) ≤ α/(2z²), which is the curve the caller charges.
///
/// All noise is exact (discrete Gaussian, integer arithmetic). (1)–(2) are integer counts
/// with integer shifts: N_ℤ(0, σ²) on each (module docs). (3) is a sum of reals, so it is
/// computed in integers on the grid 2^-k: each term t_i = min(‖u_i‖/M, 1) (clamped into
/// [0, 1] *as computed*, whatever the floating-point error of the norm) becomes
/// ⌊2^k·t_i⌋ ∈ [0, 2^k] (rounded toward zero, which raises no term), the sum S of these
/// integers is exact (u64), and replacing or adding/removing one record changes S by at most
/// 2^k — exactly, with no rounding margin. S + N_ℤ(0, (2^k·σ)²) has, for an integer shift of
/// at most 2^k, the RDP α·2^{2k}/(2·2^{2k}σ²) = α/(2σ²) of a sensitivity-1 coordinate with
/// noise σ: the term the plan's Δ² counts (Lemma D). The released value is
/// (S + Z)/2^k·M/n (post-processing).
pub fn fit_feature_space_with<R: Rng + ?Sized>(
    table: &Table,
    schema: Option<&Schema>,
    mode: NormalizeMode,
    budget: Option<&DpHistogramBudget>,
    plan: &NormPlan,
    rng: &mut R,
) -> Result<(FeatureSpace, NormalizationReport, Released)> {
    let (m_num, m_cat) = (plan.numeric_ranges, plan.categorical_levels);
    let dp_hist = if mode == NormalizeMode::Dp && plan.any() {
        let b = budget
            .ok_or_else(|| Error::Data("internal: dp normalization needs a budget".into()))?;
        let sens = plan.l2_sensitivity();
        Some((
            b,
            sens,
            CountNoise::new("normalization noise", b.noise_multiplier, sens)?,
        ))
    } else {
        None
    };
    let marginals_on = dp_hist.is_some() && plan.numeric_marginals + plan.categorical_marginals > 0;
    let t_num = range_threshold_sigmas(m_num);
    let t_int = crate::data::decide::margin(3.0, m_num);
    let t_cat = dp_hist
        .as_ref()
        .filter(|_| m_cat > 0)
        .map(|(b, _, _)| upper_quantile_conservative(b.delta_categories / m_cat as f64));

    let pooled = match (&dp_hist, plan.pooled_sensitivity()) {
        (Some((b, _, _)), Some(sens_p)) => Some(pooled_range(table, schema, b, sens_p, rng)?),
        _ => None,
    };
    let rules = ColumnRules {
        mode,
        noise: dp_hist.as_ref().map(|(_, _, g)| g),
        pooled: pooled.as_ref().and_then(|p| p.span),
        counted: pooled.as_ref().map_or(&[], |p| &p.counted[..]),
        marginals_on,
        t_num,
        t_int,
        t_cat,
        n_rows: table.n_rows,
    };
    let mut notes = FitNotes::default();
    let Fitted {
        codecs,
        marginals,
        reports,
        dim,
    } = rules.fit_columns(table, schema, rng, &mut notes)?;
    let mut released = Released {
        marginals,
        mean_norm: None,
        max_norm: 0.0,
    };
    let space = FeatureSpace {
        names: table.names.clone(),
        codecs,
        dim,
    };
    let n_features = space
        .codecs
        .iter()
        .filter(|c| !matches!(c, ColumnCodec::Label))
        .count();
    released.max_norm = (n_features as f64).sqrt();
    if plan.mean_norm {
        if let Some((_, _, g)) = dp_hist.as_ref() {
            released.mean_norm = dp_mean_norm(&space, table, released.max_norm, g, rng)?;
        }
    }
    let protected = mode != NormalizeMode::Data;
    let statement = statement_of(mode);
    let dp_histogram = dp_hist.map(|(b, sens, g)| {
        let mut r = histogram_report(b, sens, &g, plan, marginals_on, released.mean_norm);
        if let Some(p) = &pooled {
            r.pooled_noise_std = Some(p.noise_std);
            r.pooled_range = p.span.map(|s| [s.lo, s.hi]);
        }
        r
    });
    let warnings = notes.into_warnings(pooled.as_ref().and_then(|p| p.span));
    Ok((
        space,
        NormalizationReport {
            mode,
            protected,
            statement,
            dp_histogram,
            columns: reports,
            warnings,
        },
        released,
    ))
}

/// What the receipt says the normalization protects, by mode.
fn statement_of(mode: NormalizeMode) -> String {
    match mode {
        NormalizeMode::Dp => "Normalization statistics (ranges, integrality, categories, marginals, the mean row norm) the schema does not give were estimated under differential privacy; their cost is composed into ε and δ.".into(),
        NormalizeMode::Public => "Normalization uses only public bounds and categories from the schema; nothing was learned from the data.".into(),
        NormalizeMode::Data => "WARNING: normalization statistics (means, standard deviations, ranges, categories) were computed exactly from the data and are NOT protected by differential privacy; the output reveals them. Use normalize = dp (default) or public for a release.".into(),
    }
}

/// The receipt's account of the DP histograms: their noise, what they covered and the
/// thresholds' cost.
fn histogram_report(
    b: &DpHistogramBudget,
    sens: f64,
    g: &CountNoise,
    plan: &NormPlan,
    marginals_on: bool,
    mean_norm: Option<f64>,
) -> DpHistogramReport {
    let (m_num, m_cat) = (plan.numeric_ranges, plan.categorical_levels);
    DpHistogramReport {
        noise_multiplier: b.noise_multiplier,
        l2_sensitivity: sens,
        noise_std: g.sigma(),
        numeric_columns: m_num,
        categorical_columns: m_cat,
        delta_categories: if m_cat > 0 { b.delta_categories } else { 0.0 },
        epsilon_categories: if m_cat > 0 {
            super::dp_counts::threshold_epsilon(b.delta_categories)
        } else {
            0.0
        },
        marginal_columns: plan.numeric_marginals
            + plan.categorical_marginals
            + if marginals_on { m_cat } else { 0 },
        mean_norm,
        epsilon_share: None,
        share_note: None,
        pooled_noise_std: None,
        pooled_range: None,
    }
}

/// The pooled range histogram as released: its noise and the range it found, if any.
struct PooledRange {
    noise_std: f64,
    span: Option<PooledSpan>,
    /// Each range-estimated column's coarse-grid counts and non-integral count (by column
    /// index; None for the others), counted in the same pass as the pooled counts: the
    /// columns' own histograms ([`dp_range`]) take them instead of a second pass.
    counted: Vec<Option<ColumnCounts>>,
}

/// A numeric column's exact coarse-grid counts and its count of non-integral values (what
/// [`dp_range`] adds noise to).
type ColumnCounts = (Vec<f64>, f64);

/// The range the pooled histogram found.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PooledSpan {
    lo: f64,
    hi: f64,
}

/// The pooled range histogram ([`NormPlan::pooled_range`]): the fine-grid counts of every
/// range-estimated numeric column's values together, each count plus N_ℤ(0, σ_p²) with
/// σ_p = z·`sens_p` ([`NormPlan::pooled_sensitivity`]). A coarse bin is in the range when
/// one of its fine bins' noisy counts clears σ_p·t_f + 1, or the sum of its four (noise 2σ_p)
/// clears 2σ_p·t_c + 4 (each t for half of [`FALSE_DETECTION_RATE`] over its bins; the sum's
/// margin is Lemma T's per count): the sums see data spread too thinly for any fine bin.
/// Each end of the range is placed to a fine bin where the end coarse bin's outermost
/// cleared fine bin leaves nothing beyond it that the noise does not explain (the digits'
/// 16 in [16, 20), not [16, 32)), else at the coarse bin's edge. Everything after the
/// release is post-processing.
fn pooled_range<R: Rng + ?Sized>(
    table: &Table,
    schema: Option<&Schema>,
    b: &DpHistogramBudget,
    sens_p: f64,
    rng: &mut R,
) -> Result<PooledRange> {
    let g = CountNoise::new("pooled range noise", b.noise_multiplier, sens_p)?;
    let mut counts = vec![0f64; GRID_BINS];
    // One pass per column gives its fine counts (added to the pooled ones) and its own
    // coarse counts (see `fine_and_coarse_counts`).
    let mut counted = vec![None; table.n_cols()];
    for (j, values) in range_estimated_at(table, schema) {
        let (fine, own) = fine_and_coarse_counts(values);
        counts.iter_mut().zip(&fine).for_each(|(a, x)| *a += x);
        counted[j] = Some(own);
    }
    let noisy: Vec<f64> = counts.iter().map(|&c| g.add(c, rng)).collect();
    let rate = FALSE_DETECTION_RATE / 2.0;
    let tau_fine =
        g.sigma() * upper_quantile_conservative(rate / GRID_BINS as f64) + DISCRETE_TAIL_MARGIN;
    let t_coarse = upper_quantile_conservative(rate / COARSE_BINS as f64);
    let tau_coarse = 2.0 * g.sigma() * t_coarse + SUB as f64 * DISCRETE_TAIL_MARGIN;
    let fine_clears = |fb: usize| noisy[fb] > tau_fine;
    // A coarse bin is in the range when its sum clears, or one of its fine bins does (the
    // zero bin is one fine bin: its own test).
    let in_range = |cb: usize| {
        let sum: f64 = fine_of_coarse(cb).map(|fb| noisy[fb]).sum();
        (cb != COARSE_HALF && sum > tau_coarse) || fine_of_coarse(cb).any(fine_clears)
    };
    // Fine bins `rest` hold nothing the noise does not explain: their noisy sum stays below
    // the coarse test's margin for that many counts.
    let explained = |rest: &[usize]| {
        let k = rest.len() as f64;
        rest.iter().map(|&fb| noisy[fb]).sum::<f64>()
            <= g.sigma() * t_coarse * k.sqrt() + k * DISCRETE_TAIL_MARGIN
    };
    let (Some(c0), Some(c1)) = (
        (0..COARSE_BINS).find(|&cb| in_range(cb)),
        (0..COARSE_BINS).rev().find(|&cb| in_range(cb)),
    ) else {
        return Ok(PooledRange {
            noise_std: g.sigma(),
            span: None,
            counted,
        });
    };
    // Each end to a fine bin where the end bin's cleared fine bin leaves nothing beyond it
    // unexplained, else to the coarse bin's edge; the zero bin's edges are 0 (as `span_of`).
    let fine: Vec<usize> = fine_of_coarse(c1).collect();
    let hi = match fine.iter().rposition(|&fb| fine_clears(fb)) {
        Some(_) if c1 == COARSE_HALF => 0.0,
        Some(i) if explained(&fine[i + 1..]) => bin_edges(fine[i]).1,
        _ => span_of(c1, c1).1,
    };
    let fine: Vec<usize> = fine_of_coarse(c0).collect();
    let lo = match fine.iter().position(|&fb| fine_clears(fb)) {
        Some(_) if c0 == COARSE_HALF => 0.0,
        Some(i) if explained(&fine[..i]) => bin_edges(fine[i]).0,
        _ => span_of(c0, c0).0,
    };
    Ok(PooledRange {
        noise_std: g.sigma(),
        span: Some(PooledSpan { lo, hi }),
        counted,
    })
}

/// A numeric column's exact counts on the coarse grid and of its non-integral values: what
/// [`dp_range`] adds noise to.
fn coarse_counts(values: &[f32]) -> ColumnCounts {
    crate::par::histogram(
        values,
        COARSE_BINS,
        |v| coarse_of_fine(bin_of(v)),
        |v| v.fract() != 0.0,
    )
}

/// A column's counts on the fine grid and, summed per coarse bin, its coarse counts with its
/// non-integral count: one pass over the values, and exactly the numbers (integers in f64)
/// of [`coarse_counts`].
fn fine_and_coarse_counts(values: &[f32]) -> (Vec<f64>, ColumnCounts) {
    let (fine, non_integral) =
        crate::par::histogram(values, GRID_BINS, bin_of, |v| v.fract() != 0.0);
    let mut coarse = vec![0f64; COARSE_BINS];
    for (fb, &x) in fine.iter().enumerate() {
        coarse[coarse_of_fine(fb)] += x;
    }
    (fine, (coarse, non_integral))
}

/// The range spanned by coarse bins `b0..=b1`. A range that starts (or ends) in the bin
/// around zero, [−2^-20, 2^-20], starts (ends) at 0: the data there are zeros or within
/// 2^-20 of it, and an output column of non-negative data should not begin at
/// −9.5367431640625e-7.
fn span_of(b0: usize, b1: usize) -> (f64, f64) {
    let lo = if b0 == COARSE_HALF {
        0.0
    } else {
        coarse_edges(b0).0
    };
    let hi = if b1 == COARSE_HALF {
        0.0
    } else {
        coarse_edges(b1).1
    };
    (lo, hi)
}

/// The columns fitted: each one's codec, released marginal and report, and the encoded
/// dimension.
struct Fitted {
    codecs: Vec<ColumnCodec>,
    marginals: Vec<Option<ColumnMarginal>>,
    reports: Vec<ColumnReport>,
    dim: usize,
}

impl ColumnRules<'_> {
    /// Fits every column of `table` in order (the label is public and passed through).
    fn fit_columns<R: Rng + ?Sized>(
        &self,
        table: &Table,
        schema: Option<&Schema>,
        rng: &mut R,
        notes: &mut FitNotes,
    ) -> Result<Fitted> {
        let mut codecs = Vec::with_capacity(table.n_cols());
        let mut reports = Vec::new();
        let mut marginals = Vec::with_capacity(table.n_cols());
        let mut dim = 0usize;
        for (j, (name, col)) in table.names.iter().zip(&table.columns).enumerate() {
            if Some(j) == table.label_index {
                codecs.push(ColumnCodec::Label);
                marginals.push(None);
                reports.push(ColumnReport {
                    name: name.clone(),
                    kind: "label",
                    source: "public (class labels)",
                    range: None,
                    levels_released: None,
                });
                continue;
            }
            let spec = schema.and_then(|s| s.columns.get(name));
            match col {
                Column::Numeric { values, integer } => {
                    let column = NumericColumn {
                        name,
                        values,
                        integer: *integer,
                        counted: self.counted.get(j).and_then(Option::as_ref),
                    };
                    let f = self.numeric(&column, spec, rng, notes)?;
                    codecs.push(ColumnCodec::Numeric {
                        offset: f.offset,
                        scale: f.scale,
                        lo: f.lo,
                        hi: f.hi,
                        integer: f.integer,
                        start: dim,
                    });
                    marginals.push(f.marginal.map(ColumnMarginal::Numeric));
                    dim += 1;
                    reports.push(ColumnReport {
                        name: name.clone(),
                        kind: "numeric",
                        source: f.source,
                        range: Some([f.lo, f.hi]),
                        levels_released: None,
                    });
                }
                Column::Categorical { codes, levels } => {
                    let CategoricalFit {
                        levels: released_levels,
                        props,
                        source,
                    } = self.categorical(name, codes, levels, spec, rng, notes)?;
                    let slot_of_code = levels
                        .iter()
                        .map(|l| released_levels.iter().position(|r| r == l))
                        .collect();
                    let width = released_levels.len();
                    reports.push(ColumnReport {
                        name: name.clone(),
                        kind: "categorical",
                        source,
                        range: None,
                        levels_released: Some(width),
                    });
                    marginals.push(
                        props
                            .filter(|p| width > 0 && p.iter().sum::<f64>() > 0.0)
                            .map(ColumnMarginal::Categorical),
                    );
                    codecs.push(ColumnCodec::Categorical {
                        levels: released_levels,
                        slot_of_code,
                        start: dim,
                    });
                    dim += width;
                }
            }
        }
        Ok(Fitted {
            codecs,
            marginals,
            reports,
            dim,
        })
    }
}

/// What every column's fit reads: the mode, the histograms' noise and thresholds (DP mode),
/// and the public row count.
struct ColumnRules<'a> {
    mode: NormalizeMode,
    /// The histograms' noise, when they are released.
    noise: Option<&'a CountNoise>,
    /// The range the pooled histogram found, when it was released and found one.
    pooled: Option<PooledSpan>,
    /// The range-estimated columns' exact counts, when the pooled pass counted them (by
    /// column index).
    counted: &'a [Option<ColumnCounts>],
    /// Marginal histograms are released too.
    marginals_on: bool,
    /// The range, integrality and category thresholds, in σ.
    t_num: f64,
    t_int: f64,
    t_cat: Option<f64>,
    n_rows: usize,
}

/// What the columns' fits say besides their codecs, for the report.
#[derive(Default)]
struct FitNotes {
    warnings: Vec<String>,
    /// Columns whose DP range came out as one value (said once, after the loop).
    constant: Vec<String>,
    /// Columns that took in the pooled range (said once, after the loop).
    pooled: Vec<String>,
}

impl FitNotes {
    /// The warnings, with one for the columns that come out constant. Loud, never silent: a
    /// constant output column is data a user would discard unless the column really is
    /// constant. Which columns these are is post-processing of the noisy histograms (DP).
    ///
    /// `pooled_range` is the pooled histogram's range, when it found one.
    fn into_warnings(self, pooled_range: Option<PooledSpan>) -> Vec<String> {
        let FitNotes {
            mut warnings,
            constant,
            pooled,
        } = self;
        if let (false, Some(PooledSpan { lo, hi })) = (pooled.is_empty(), pooled_range) {
            warnings.push(format!(
                "{} numeric column(s) take in the range [{lo}, {hi}] found under DP over all the numeric columns together (each one's range is the union of that and its own): their own values were spread too thinly for the normalization budget to see their whole range (their noisy counts left more rows unaccounted for than the noise explains): {}. If a column has other bounds, give them in a schema ({{\"column\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}}), raise ε, or use more rows",
                pooled.len(),
                pooled.join(", ")
            ));
        }
        if !constant.is_empty() {
            warnings.push(format!(
                "{} numeric column(s) come out constant: under DP only one value stood out of the noise (too few rows for the normalization budget to see the others), so every output row has that value: {}. If a column takes other values, give its public bounds in a schema where it has none ({{\"column\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}}), raise ε, or use more rows",
                constant.len(),
                constant.join(", ")
            ));
        }
        warnings
    }
}

/// A categorical column's released levels, their DP proportions (when released) and where
/// they came from.
struct CategoricalFit {
    levels: Vec<String>,
    props: Option<Vec<f64>>,
    source: &'static str,
}

/// A numeric column's place in the feature space: x ↦ (x − offset)/scale, its range, its
/// integrality, where they came from, and its DP marginal.
struct NumericFit {
    offset: f64,
    scale: f64,
    lo: f64,
    hi: f64,
    integer: bool,
    source: &'static str,
    marginal: Option<NumericMarginal>,
}

/// A numeric column as [`ColumnRules::numeric`] fits it.
struct NumericColumn<'v> {
    name: &'v str,
    values: &'v [f32],
    /// Whether every value is a whole number (the data's; `data` mode only).
    integer: bool,
    /// Its exact coarse-grid counts, when the pooled pass counted them.
    counted: Option<&'v ColumnCounts>,
}

impl ColumnRules<'_> {
    /// A numeric column: its range from the schema, from the DP histograms (with its DP
    /// marginal, refined to whole numbers for an integer column) or, in `data` mode, from the
    /// data (unprotected).
    fn numeric<R: Rng + ?Sized>(
        &self,
        column: &NumericColumn<'_>,
        spec: Option<&ColumnSpec>,
        rng: &mut R,
        notes: &mut FitNotes,
    ) -> Result<NumericFit> {
        let NumericColumn {
            name,
            values,
            integer,
            ..
        } = *column;
        let (s_int, s_min, s_max) = match spec {
            Some(ColumnSpec::Numeric { integer, min, max }) => (*integer, *min, *max),
            _ => (None, None, None),
        };
        let mut marginal = None;
        let (lo, hi, integer, source) = match (self.mode, s_min, s_max) {
            (NormalizeMode::Data, _, _) => {
                let (mean, std, mn, mx) = moments(values);
                return Ok(NumericFit {
                    offset: mean,
                    scale: if std > 0.0 { std } else { 1.0 },
                    lo: mn,
                    hi: mx,
                    integer,
                    source: "data",
                    marginal: None,
                });
            }
            (_, Some(mn), Some(mx)) => {
                if !(mn.is_finite() && mx.is_finite() && mn <= mx) {
                    return Err(Error::param(
                        "schema",
                        format!("{name}: [{mn}, {mx}]"),
                        format!("column '{name}' needs finite bounds with min ≤ max in the schema"),
                    ));
                }
                // Public bounds; real-valued unless the schema says integer: true.
                if self.marginals_on {
                    let g = self.noise.expect("marginals imply a budget");
                    let bins = MarginalBins::cut_at_two_sigma(
                        public_edges(mn, mx, s_int == Some(true)),
                        g.sigma(),
                    );
                    marginal = dp_marginal(values, &bins, g, rng);
                    // Public bounds, but a marginal with one value left after the cut makes
                    // the output column constant all the same: said as loudly as a DP range
                    // of one value (post-processing of the noisy histogram).
                    if let Some(v) = marginal.as_ref().and_then(|m| single_value(m, s_int)) {
                        notes.constant.push(format!("{name} ({v})"));
                    }
                }
                (mn, mx, s_int.unwrap_or(false), "schema")
            }
            (NormalizeMode::Public, _, _) => {
                return Err(Error::param(
                    "normalize",
                    "public",
                    format!(
                        "column '{name}' has no public bounds; add {{\"{name}\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}} to the schema, or use normalize = dp"
                    ),
                ));
            }
            (NormalizeMode::Dp, _, _) => {
                let (range, m) = self.dp_numeric(column, s_int, rng, notes);
                marginal = m;
                range
            }
        };
        let (offset, scale) = if hi > lo { (lo, hi - lo) } else { (lo, 1.0) };
        Ok(NumericFit {
            offset,
            scale,
            lo,
            hi,
            integer,
            source,
            marginal,
        })
    }

    /// A numeric column's range, integrality and source from the DP histograms (`s_int`: the
    /// schema's integrality, if it gives one), with its DP marginal when marginals are on.
    fn dp_numeric<R: Rng + ?Sized>(
        &self,
        column: &NumericColumn<'_>,
        s_int: Option<bool>,
        rng: &mut R,
        notes: &mut FitNotes,
    ) -> ((f64, f64, bool, &'static str), Option<NumericMarginal>) {
        let NumericColumn {
            name,
            values,
            counted,
            ..
        } = *column;
        let g = self.noise.expect("dp columns imply a budget");
        let counting;
        let counts = match counted {
            Some(c) => c,
            None => {
                counting = coarse_counts(values);
                &counting
            }
        };
        match dp_range(counts, g, self.t_num, self.t_int, rng) {
            Ok(mut r) => {
                let mut source = "dp";
                if self.pooled.is_none() && r.unexplained(values.len(), g.sigma(), self.t_int) {
                    // Post-processing, as the pooled range below: values lie in bins too
                    // thin to clear the threshold. Without a pooled range the column's own
                    // noisy counts say where; else it is said, never silently clamped.
                    let (lo0, hi0) = (r.lo, r.hi);
                    match r.widen_to_explain(values.len(), g.sigma(), self.t_int) {
                        Some(_) => source = "dp (widened to hold its row count)",
                        None => notes.warnings.push(format!(
                            "column '{name}': its DP range [{lo0}, {hi0}] leaves out more of its {} values than the noise explains, spread too thinly for the normalization budget to see where; they are clamped into that range. Give public bounds in a schema ({{\"{name}\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}}), raise ε, or use more rows",
                            values.len()
                        )),
                    }
                }
                let (mut lo, mut hi) = (r.lo, r.hi);
                let mut marginal = None;
                if let Some(p) = self
                    .pooled
                    .filter(|_| r.unexplained(values.len(), g.sigma(), self.t_int))
                {
                    // Post-processing: the column's noisy counts in its range fall short of
                    // its (public) row count by more than their noise, so values lie in bins
                    // too thin to clear the threshold. Its range becomes the union with the
                    // pooled range, without a marginal (whose bins would cover only its own).
                    // Only widened, never narrowed: a column's own bin says values are there.
                    notes.pooled.push(name.to_string());
                    let (lo, hi) = (lo.min(p.lo), hi.max(p.hi));
                    let integer = s_int.unwrap_or(r.integral);
                    return ((lo, hi, integer, "dp (pooled range)"), None);
                }
                if self.marginals_on {
                    // An integer column (the schema's word, else the DP
                    // decision above): bins that hold whole integers, one
                    // per integer where the data are dense enough.
                    let refine = |integer| {
                        refined_bins(&r.coarse_noisy, r.first, r.last, g.sigma(), integer)
                    };
                    let whole = s_int.unwrap_or(r.integral).then(|| refine(true));
                    let unit = matches!(whole, Some(Some(_)));
                    marginal = whole
                        .flatten()
                        .or_else(|| refine(false))
                        .and_then(|bins| dp_marginal(values, &bins, g, rng));
                    if let Some(m) = &marginal {
                        // Refinement: the range shrinks to the marginal's support
                        // (to whole numbers on half-integer edges; + 0.0 turns
                        // ⌈−½⌉ = −0 into 0).
                        let (a, b) = m.support();
                        (lo, hi) = if unit {
                            (a.ceil() + 0.0, b.floor() + 0.0)
                        } else {
                            (a, b)
                        };
                    }
                }
                if lo == hi {
                    notes.constant.push(format!("{name} ({lo})"));
                }
                ((lo, hi, s_int.unwrap_or(r.integral), source), marginal)
            }
            Err(integral) => {
                if let Some(p) = self.pooled {
                    // No bin of its own stood out: the pooled range (post-processing), said
                    // once.
                    notes.pooled.push(name.to_string());
                    let range = (p.lo, p.hi, s_int.unwrap_or(integral), "dp (pooled range)");
                    return (range, None);
                }
                // Loud, never silent: the receipt's warnings (printed by the
                // CLI) and the column's source say the range is a default.
                // Which columns fall back is post-processing of the noisy
                // histogram (DP), so it releases nothing more.
                notes.warnings.push(format!(
                    "column '{name}': too few rows for the normalization budget to find its range under DP (no bin of the power-of-two grid stands out of the noise), so its output uses the DEFAULT range [0, 1], which is almost certainly wrong for this column. Give public bounds in a schema ({{\"{name}\": {{\"type\": \"numeric\", \"min\": …, \"max\": …}}}}), raise the normalization share, raise ε, or use more rows"
                ));
                let range = (
                    0.0,
                    1.0,
                    s_int.unwrap_or(integral),
                    "default [0, 1]: no DP range found",
                );
                (range, None)
            }
        }
    }

    /// A categorical column: its released levels (the schema's, the data's in `data` mode,
    /// or those whose noisy count clears the threshold, plus OTHER for the rest when that
    /// clears it too), their DP proportions when released, and where they came from.
    fn categorical<R: Rng + ?Sized>(
        &self,
        name: &str,
        codes: &[u32],
        levels: &[String],
        spec: Option<&ColumnSpec>,
        rng: &mut R,
        notes: &mut FitNotes,
    ) -> Result<CategoricalFit> {
        let schema_levels = match spec {
            Some(ColumnSpec::Categorical {
                categories: Some(c),
            }) => Some(c.clone()),
            _ => None,
        };
        let mut counts = vec![0f64; levels.len()];
        for &c in codes {
            counts[c as usize] += 1.0;
        }
        let (released, props, source) = match (self.mode, schema_levels) {
            (NormalizeMode::Data, _) => (levels.to_vec(), None, "data"),
            (_, Some(c)) => {
                let props = if self.marginals_on {
                    let g = self.noise.expect("marginals imply a budget");
                    Some(
                        c.iter()
                            .map(|l| {
                                let exact = levels
                                    .iter()
                                    .position(|x| x == l)
                                    .map_or(0.0, |i| counts[i]);
                                g.add(exact, rng).max(0.0)
                            })
                            .collect(),
                    )
                } else {
                    None
                };
                (c, props, "schema")
            }
            (NormalizeMode::Public, None) => {
                return Err(Error::param(
                        "normalize",
                        "public",
                        format!(
                            "column '{name}' has no public categories; add {{\"{name}\": {{\"type\": \"categorical\", \"categories\": […]}}}} to the schema, or use normalize = dp"
                        ),
                    ));
            }
            (NormalizeMode::Dp, None) => {
                let g = self.noise.expect("dp columns imply a budget");
                let t = self
                    .t_cat
                    .expect("categorical dp columns imply a threshold");
                // Held by ≤ 1 record where present: 1 + (σt + 1) (Lemma T).
                let tau = 1.0 + g.sigma() * t + DISCRETE_TAIL_MARGIN;
                let mut kept = Vec::new();
                let mut props = Vec::new();
                for (l, &c) in levels.iter().zip(&counts) {
                    let noisy = g.add(c, rng);
                    if noisy > tau {
                        kept.push(l.clone());
                        props.push(noisy);
                    }
                }
                // The rows of the levels below the threshold, pooled: n (public)
                // minus the released noisy counts, itself released only when it
                // clears the same threshold (post-processing). The decoder writes
                // them as OTHER instead of folding them into the released levels,
                // which at a small ε left a column with one value (Adult,
                // native-country at ε = 1: only "United-States" clears).
                let residual = self.n_rows as f64 - props.iter().sum::<f64>();
                if !kept.is_empty() && residual > tau {
                    props.push(residual);
                }
                if kept.is_empty() {
                    notes.warnings.push(format!(
                        "column '{name}': no category was frequent enough to release under DP; it is written as '{}'. Give its categories in a schema to keep it",
                        super::encode::SUPPRESSED
                    ));
                }
                (kept, Some(props), "dp")
            }
        };
        Ok(CategoricalFit {
            levels: released,
            props,
            source,
        })
    }
}

/// The one value every output row of a column decoded onto `m` takes, if there is one: the
/// support is one point, or (an integer column on half-integer edges, as [`public_edges`]
/// makes them) holds one integer.
fn single_value(m: &NumericMarginal, integer: Option<bool>) -> Option<f64> {
    let (a, b) = m.support();
    if a == b {
        return Some(a + 0.0);
    }
    // + 0.0 turns −0 into 0.
    (integer == Some(true) && a.ceil() == b.floor()).then_some(a.ceil() + 0.0)
}

/// Bin edges for a public range: one bin per integer for integer columns spanning ≤ 64
/// values, else 32 equal bins.
fn public_edges(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    if hi <= lo {
        return vec![lo, lo + 1.0];
    }
    let span = hi.floor() - lo.ceil();
    if integer && (0.0..=MAX_UNIT_BINS as f64).contains(&span) {
        let a = lo.ceil();
        let n = span as usize + 1;
        let mut e: Vec<f64> = (0..=n).map(|i| a - 0.5 + i as f64).collect();
        e[0] = e[0].max(lo);
        e[n] = e[n].min(hi);
        return e;
    }
    (0..=32).map(|i| lo + (hi - lo) * i as f64 / 32.0).collect()
}

/// The grid's bin around 0, (−2^MIN_EXP, 2^MIN_EXP), holds the values that are 0 up to the
/// grid's resolution (in practice: exact zeros); its mass is decoded as exactly 0 instead of
/// spread linearly over the bin (which wrote 0 as 0.000000043941768 or −0.00000014655157).
/// The bin's edges become 0 (a point bin of width 0; the neighbours widen by 2^MIN_EXP):
/// post-processing of the released marginal, after the counts were made on the grid. Bins
/// without that exact pair of edges (one per integer, a public range's) are left as they are.
fn zero_bin_to_point(m: &mut NumericMarginal) {
    let (a, b) = bin_edges(HALF);
    if let Some(i) = m.edges.windows(2).position(|w| w[0] == a && w[1] == b) {
        m.edges[i] = 0.0;
        m.edges[i + 1] = 0.0;
    }
}

/// A marginal's bins: increasing edges, and per bin the count cut of
/// [`NumericMarginal::dp`] (noisy counts at most the cut are set to 0).
struct MarginalBins {
    edges: Vec<f64>,
    cuts: Vec<f64>,
}

impl MarginalBins {
    /// Bins on `edges`, every one cut at 2σ.
    fn cut_at_two_sigma(edges: Vec<f64>, sigma: f64) -> Self {
        let cuts = vec![2.0 * sigma; edges.len().saturating_sub(1)];
        MarginalBins { edges, cuts }
    }

    /// Appends the bin ending at `e` (none when `e` does not pass the last edge).
    fn push(&mut self, e: f64, cut: f64) {
        if self.edges.last().map_or(true, |&last| e > last) {
            self.edges.push(e);
            self.cuts.push(cut);
        }
    }
}

/// An integer column whose DP range holds at most this many integers gets one marginal bin
/// per integer; so does a public range whose ends are at most this far apart
/// (`public_edges`).
pub const MAX_UNIT_BINS: usize = 64;

/// A coarse bin of an integer column is split into one bin per integer when its noisy count
/// is at least this many σ per integer it holds (the marginal bins of an integer column).
pub const UNIT_BIN_SIGMAS: f64 = 8.0;

/// The half-integer edge that puts the integers of a grid bin on the same side as the grid
/// edge `e` does: bins are `[e, …)` for e ≥ 0 and `(…, e]` below 0 (see `bin_of`).
fn half_integer_edge(e: f64) -> f64 {
    if e >= 0.0 {
        e.ceil() - 0.5
    } else {
        e.floor() + 0.5
    }
}

/// A coarse bin of the range grid is split into its fine bins when its noisy count exceeds
/// this many σ. At 1σ, 16 % of the empty coarse bins were split, and each of their four fine
/// bins then cleared its own 2σ cut with probability 0.023: on a 3,000-row column that is 0
/// or in [0.5, 10], 13 of seeds 1..=40 put 18–72 output rows in the empty gap (0, 0.5), and
/// Adult's capital-gain put 66–103 rows (3 seeds) in its empty (0, 114). At 2σ: 4 of 40, and
/// 0–11, with Adult's and MNIST's scores unchanged (bench/utility/README.md).
pub const SPLIT_SIGMAS: f64 = 2.0;

/// Marginal bins inside a DP range: each coarse bin whose noisy count exceeded
/// [`SPLIT_SIGMAS`]·σ is split into its four fine (quarter power of two) bins; runs of the
/// others become one bin each; every bin is cut at 2σ. A function of the noisy coarse counts
/// only (post-processing); the histogram on any edges has the same sensitivity.
///
/// For an integer column (`integer`) every edge moves to the half-integer that keeps each
/// integer in its grid bin (so no bin's linear inverse CDF sends mass across an integer it
/// does not hold, as [8, 10) did to 10), and a coarse bin whose noisy count is at least
/// [`UNIT_BIN_SIGMAS`]·σ per integer it holds is split into one bin per integer instead (a
/// spike such as hours-per-week's 40 then stays at 40 instead of spreading over 40..47),
/// cut at σ: an integer there averages ≥ [`UNIT_BIN_SIGMAS`]·σ, and a 2σ cut drops too many
/// of the real ones near it (on Adult at ε = 1 it removed ages 55, 60, 62 and 63, 4 % of the
/// rows; σ still drops 84 % of the empty integers' noise).
///
/// An integer column whose range holds at most [`MAX_UNIT_BINS`] integers gets one bin per
/// integer throughout, as a public range of that size does: cut at σ inside a dense coarse
/// bin (as above), at 2σ elsewhere.
///
/// None when fewer than two edges remain (for an integer column: the span holds no integer).
fn refined_bins(
    coarse_noisy: &[f64],
    first: usize,
    last: usize,
    sigma: f64,
    integer: bool,
) -> Option<MarginalBins> {
    let edge = |e: f64| if integer { half_integer_edge(e) } else { e };
    let start = edge(coarse_edges(first).0);
    // A range of at most 64 integers gets one bin per integer, as a public range does
    // (`public_edges`): with quarter-power-of-two bins a value at the bottom of its bin was
    // spread over the empty integers above it (Adult's education-num: 413 rows of 16 came out
    // as 16, 17, 18 and 19, the last three impossible). The range is DP and the cuts follow
    // the noisy coarse counts, so the bins are post-processing.
    let span = edge(coarse_edges(last).1) - start;
    let all_units = integer && (1.0..=MAX_UNIT_BINS as f64).contains(&span);
    let mut bins = MarginalBins {
        edges: vec![start],
        cuts: Vec::new(),
    };
    let mut gap = false;
    for (cb, &noisy) in coarse_noisy.iter().enumerate().take(last + 1).skip(first) {
        if !(all_units || noisy > SPLIT_SIGMAS * sigma || cb == first || cb == last) {
            gap = true;
            continue;
        }
        let (a, b) = coarse_edges(cb);
        let (a, b) = (edge(a), edge(b));
        if gap {
            bins.push(a, 2.0 * sigma);
            gap = false;
        }
        let integers = b - a;
        let dense = integer && integers >= 1.0 && noisy >= UNIT_BIN_SIGMAS * sigma * integers;
        if dense || all_units {
            let cut = if dense { sigma } else { 2.0 * sigma };
            for i in 1..=integers as usize {
                bins.push(a + i as f64, cut);
            }
        } else {
            for fb in fine_of_coarse(cb) {
                bins.push(edge(bin_edges(fb).1), 2.0 * sigma);
            }
        }
    }
    (bins.edges.len() >= 2).then_some(bins)
}

/// A DP marginal on `bins` (values outside are counted in the end bins), its grid bin around
/// 0 (if it has one) decoded as 0 ([`zero_bin_to_point`]).
fn dp_marginal<R: Rng + ?Sized>(
    values: &[f32],
    bins: &MarginalBins,
    g: &CountNoise,
    rng: &mut R,
) -> Option<NumericMarginal> {
    let edges = &bins.edges;
    let nb = edges.len().saturating_sub(1);
    if nb == 0 {
        return None;
    }
    let (counts, _) = crate::par::histogram(
        values,
        nb,
        |v| {
            let x = f64::from(v);
            edges
                .partition_point(|&e| e <= x)
                .saturating_sub(1)
                .min(nb - 1)
        },
        |_| false,
    );
    let mut m = NumericMarginal::dp(&counts, edges.clone(), g, &bins.cuts, rng)?;
    zero_bin_to_point(&mut m);
    Some(m)
}

/// The grid exponent k of the mean-norm sum: the counts' rule
/// ([`super::dp_counts::coupled_grid_exponent`]) with k ≤ 40, so n terms of at most 2^k stay
/// within i64 for n < 2^23 (checked). Public (a function of σ).
fn mean_norm_grid_exponent(sigma: f64) -> i32 {
    super::dp_counts::coupled_grid_exponent(sigma, 40)
}

/// The exact integer sum Σ_i ⌊2^k·min(‖u_i‖/M, 1)⌋ of step (3) of
/// [`fit_feature_space_with`] (each term in [0, 2^k]; a NaN norm counts as 0).
fn mean_norm_units(u: &[f32], d: usize, max_norm: f64, k: i32) -> u64 {
    let scale = 2f64.powi(k);
    u.chunks_exact(d.max(1))
        .map(|r| {
            let t = super::rownorm::row_norm(r) / max_norm;
            let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
            // t·2^k is exact (a power of two); floor ≤ 2^k.
            (t * scale).floor() as u64
        })
        .fold(0u64, u64::saturating_add)
}

/// DP mean of the encoded rows' norms: ((S + Z)/2^k)·M/n with S the exact integer sum of
/// [`mean_norm_units`] and Z ~ N_ℤ(0, (2^k·σ)²) (step (3) of [`fit_feature_space_with`]),
/// kept in [M/100, M].
fn dp_mean_norm<R: Rng + ?Sized>(
    space: &FeatureSpace,
    table: &Table,
    max_norm: f64,
    g: &CountNoise,
    rng: &mut R,
) -> Result<Option<f64>> {
    if max_norm <= 0.0 || table.n_rows == 0 {
        return Ok(None);
    }
    let k = mean_norm_grid_exponent(g.sigma());
    // The rows are encoded a block at a time: the whole n × d matrix is never held. S is a
    // sum of non-negative integers, so summing it block by block gives the same S.
    let s = space
        .map_encoded_blocks(table, NORM_BLOCK_ROWS, |block| {
            mean_norm_units(block, space.dim, max_norm, k)
        })?
        .into_iter()
        .fold(0u64, u64::saturating_add);
    let noisy_units = noisy_norm_units(s, k, g, rng)?;
    let noisy = noisy_units as f64 / 2f64.powi(k) * max_norm / table.n_rows as f64;
    Ok(Some(noisy.clamp(max_norm / 100.0, max_norm)))
}

/// Rows encoded at a time for the mean row norm.
const NORM_BLOCK_ROWS: usize = 256;

/// S + Z of step (3) for the exact sum `s` on the grid 2^-k (the released integer; the mean
/// norm is (S + Z)/2^k·M/n).
fn noisy_norm_units<R: Rng + ?Sized>(s: u64, k: i32, g: &CountNoise, rng: &mut R) -> Result<i64> {
    // 2^k·σ is exact; the sampler rounds it up (≥ 2^k·σ ≥ 2^k·z·Δ).
    let dg = DiscreteGaussian::new("mean-norm noise", g.sigma() * 2f64.powi(k)).map_err(|_| {
        Error::Data(format!(
            "the mean row norm would need noise σ = {:e}, outside the exact sampler's range; raise or lower ε",
            g.sigma()
        ))
    })?;
    let overflow = || Error::Data("internal: the mean-norm sum overflows".into());
    let s = i64::try_from(s).map_err(|_| overflow())?;
    s.checked_add(dg.sample(rng)).ok_or_else(overflow)
}

/// Mean, std (population), min, max in f64.
fn moments(values: &[f32]) -> (f64, f64, f64, f64) {
    let n = values.len().max(1) as f64;
    let mut sum = 0.0;
    let mut mn = f64::INFINITY;
    let mut mx = f64::NEG_INFINITY;
    for &v in values {
        let v = f64::from(v);
        sum += v;
        mn = mn.min(v);
        mx = mx.max(v);
    }
    let mean = sum / n;
    let var = values
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var.sqrt(), mn, mx)
}

/// A DP range read off the coarse grid.
struct DpRange {
    lo: f64,
    hi: f64,
    integral: bool,
    first: usize,
    last: usize,
    coarse_noisy: Vec<f64>,
}

impl DpRange {
    /// Whether the noisy counts of the bins in the range, k of them, fall short of the
    /// column's `n` values by more than t·σ·√k + 1: values the range leaves out, in bins
    /// too thin to clear the threshold. With t the columns' family-wise margin (as for
    /// integrality), a column that has no values outside its range is taken for one that
    /// has with probability below that family's rate. (A statement about utility; privacy
    /// does not depend on it: this is post-processing of the noisy counts.)
    fn unexplained(&self, n: usize, sigma: f64, t: f64) -> bool {
        let bins = &self.coarse_noisy[self.first..=self.last];
        let inside: f64 = bins.iter().sum();
        n as f64 - inside > t * sigma * (bins.len() as f64).sqrt() + DISCRETE_TAIL_MARGIN
    }

    /// Widens an [`unexplained`](Self::unexplained) range to the narrowest (in value) run of
    /// coarse bins that holds it, reaches at most [`WIDEN_BINS`] bins beyond it on either
    /// side, and explains the column's `n` values by the same test (a tie goes to the larger
    /// noisy sum); `None` when no such run exists, the range then unchanged. Returns the bins the
    /// range left out that the run holds (noisy counts).
    ///
    /// This is for a column whose values are spread over several bins, each too thin to
    /// clear the family-wise threshold alone: Iris's `petal_width` at ε = 5 and n = 150 (σ
    /// of 7.5 counts against a threshold of 37) kept only [1, 2] and clamped every setosa
    /// flower's 0.1–0.6 up to 1. Privacy: post-processing of the noisy counts and the
    /// public row count; nothing more is released.
    fn widen_to_explain(&mut self, n: usize, sigma: f64, t: f64) -> Option<f64> {
        let noisy = &self.coarse_noisy;
        let sum = |a: usize, b: usize| noisy[a..=b].iter().sum::<f64>();
        let explains = |a: usize, b: usize| {
            let inside = sum(a, b);
            let k = (b - a + 1) as f64;
            (n as f64 - inside <= t * sigma * k.sqrt() + DISCRETE_TAIL_MARGIN).then_some(inside)
        };
        // An added side must hold values: its k bins' noisy sum clears 2σ√k + 1 (noise alone
        // does so with chance below 2.3 %), so that the test's tolerance, which grows with
        // the bins, is not bought with empty bins (in value, the bins toward zero are narrow).
        let holds = |a: usize, b: usize| {
            sum(a, b) > WIDEN_SIGMAS * sigma * ((b - a + 1) as f64).sqrt() + DISCRETE_TAIL_MARGIN
        };
        let lowest = self.first.saturating_sub(WIDEN_BINS);
        let highest = (self.last + WIDEN_BINS).min(noisy.len() - 1);
        let mut best: Option<(f64, f64, usize, usize)> = None;
        for a in lowest..=self.first {
            if a < self.first && !holds(a, self.first - 1) {
                continue;
            }
            for b in self.last..=highest {
                if b > self.last && !holds(self.last + 1, b) {
                    continue;
                }
                let Some(inside) = explains(a, b) else {
                    continue;
                };
                let (lo, hi) = span_of(a, b);
                let width = hi - lo;
                let better = match best {
                    None => true,
                    Some((w, s, ..)) => width < w || (width == w && inside > s),
                };
                if better {
                    best = Some((width, inside, a, b));
                }
            }
        }
        let (_, inside, a, b) = best?;
        let before: f64 = noisy[self.first..=self.last].iter().sum();
        (self.first, self.last) = (a, b);
        (self.lo, self.hi) = span_of(a, b);
        Some(inside - before)
    }
}

/// How many coarse bins (powers of two) [`DpRange::widen_to_explain`] may add on either side
/// of a range.
const WIDEN_BINS: usize = 16;

/// The margin, in σ√k, by which the k bins [`DpRange::widen_to_explain`] adds on one side
/// must hold values.
const WIDEN_SIGMAS: f64 = 2.0;

/// DP range and integrality of one numeric column from its noisy coarse-grid histogram;
/// `Err(integral)` (the DP integrality alone, main's rule: the noisy non-integral count below
/// the threshold) when no bin stands out of the noise (the caller then uses [0, 1] with a loud
/// warning naming the fix). `(counts, non_integral)`: the column's exact counts
/// ([`coarse_counts`]).
fn dp_range<R: Rng + ?Sized>(
    (counts, non_integral): &ColumnCounts,
    g: &CountNoise,
    t: f64,
    t_int: f64,
    rng: &mut R,
) -> std::result::Result<DpRange, bool> {
    let non_integral = *non_integral;
    // σt + 1: the continuous rate for the discrete noise (Lemma T).
    let tau = g.sigma() * t + DISCRETE_TAIL_MARGIN;
    let mut first = None;
    let mut last = None;
    let mut max_noisy = f64::NEG_INFINITY;
    let noisy: Vec<f64> = counts.iter().map(|&c| g.add(c, rng)).collect();
    for (b, &c) in noisy.iter().enumerate() {
        if c > tau {
            first.get_or_insert(b);
            last = Some(b);
        }
        max_noisy = max_noisy.max(c);
    }
    let nonint_noisy = g.add(non_integral, rng);
    let (Some(b0), Some(b1)) = (first, last) else {
        return Err(nonint_noisy <= tau);
    };
    // Integral unless the noisy non-integral count is evidence of non-integral values: it
    // clears the threshold, or it clears both the noise margin `t_int`·σ (family-wise over
    // the numeric columns, as for the type decisions) and 5 % of the largest bin. A
    // real-valued column has about as many non-integral values as rows, more than any bin, so
    // it stays real-valued; an integer column (none) is integral except with probability
    // below the family-wise rate. (With the 5 % rule alone, the 64 pixel columns of the digits
    // table at ε = 5 came out real-valued one time in four each: σ = 56 against 5 % of ~700.)
    let integral = nonint_noisy <= tau
        && nonint_noisy <= (0.05 * max_noisy).max(t_int * g.sigma() + DISCRETE_TAIL_MARGIN);
    let (lo, hi) = span_of(b0, b1);
    Ok(DpRange {
        lo,
        hi,
        integral,
        first: b0,
        last: b1,
        coarse_noisy: noisy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn one_fine_pass_gives_the_coarse_counts() {
        // Zeros, ±2^-20 and beyond, fractions, integers, huge and negative values, and more
        // than one histogram block (2^14 values).
        let mut values: Vec<f32> = vec![0.0, -0.0, 9.5e-7, -9.5e-7, 3e38, -3e38, 1e-30];
        values.extend((0..40_000).map(|i| {
            let x = (i as f32 * 0.618_034).sin() * 10f32.powi(i % 9 - 3);
            if i % 3 == 0 {
                x.round()
            } else {
                x
            }
        }));
        let (fine, (coarse, non_integral)) = fine_and_coarse_counts(&values);
        let (want, want_e) = coarse_counts(&values);
        assert_eq!(coarse, want);
        assert_eq!(non_integral, want_e);
        assert_eq!(fine.iter().sum::<f64>(), values.len() as f64);
        assert!(non_integral > 10_000.0 && coarse.iter().filter(|&&c| c > 0.0).count() > 20);
    }

    #[test]
    fn grid_bins_contain_their_values() {
        for &x in &[
            0.0f32, 1e-9, 3e-6, 0.3, 1.0, 1.3, 7.9, 255.0, 256.0, 1e6, 3e38, -0.3, -255.0, -1e20,
        ] {
            let (lo, hi) = bin_edges(bin_of(x));
            let x = f64::from(x);
            assert!(lo <= x && x <= hi, "{x} not in [{lo}, {hi}]");
        }
        assert!(
            bin_of(-3e38) < bin_of(-1.0) && bin_of(-1.0) < bin_of(0.0) && bin_of(0.0) < bin_of(1.0)
        );
        assert_eq!(GRID_BINS, 1185);
    }

    fn table(values: Vec<f32>, cats: Vec<u32>, levels: Vec<&str>) -> Table {
        let n = values.len();
        Table {
            names: vec!["x".into(), "c".into(), "y".into()],
            columns: vec![
                Column::Numeric {
                    integer: values.iter().all(|v| v.fract() == 0.0),
                    values,
                },
                Column::Categorical {
                    codes: cats,
                    levels: levels.into_iter().map(String::from).collect(),
                },
                Column::Categorical {
                    codes: vec![0; n],
                    levels: vec!["a".into()],
                },
            ],
            n_rows: n,
            rows_dropped: 0,
            label_index: Some(2),
            delimiter: b',',
        }
    }

    /// A DP range over the coarse bins of `core` (values) with the given noisy counts.
    fn range_with(counts: &[(f32, f64)], core: (f32, f32)) -> DpRange {
        let cb = |x: f32| coarse_of_fine(bin_of(x));
        let mut coarse_noisy = vec![0.0; COARSE_BINS];
        for &(x, c) in counts {
            coarse_noisy[cb(x)] = c;
        }
        let (first, last) = (cb(core.0), cb(core.1));
        let (lo, hi) = span_of(first, last);
        DpRange {
            lo,
            hi,
            integral: false,
            first,
            last,
            coarse_noisy,
        }
    }

    #[test]
    fn a_range_that_leaves_values_out_widens_to_the_bins_that_hold_them() {
        // Iris's petal_width (n = 150, σ = 7.5, t = 3.5): the bins [1, 2) and [2, 4) hold
        // 77 and 23 values, [0.125, 0.25) 29, [0.25, 0.5) 14, [0.0625, 0.125) 5 and
        // [0.5, 1) 2 (noiseless here). Only [1, 2) cleared the threshold of 37.
        let iris = [
            (0.1, 5.0),
            (0.2, 29.0),
            (0.3, 14.0),
            (0.6, 2.0),
            (1.5, 77.0),
            (2.5, 23.0),
        ];
        let (sigma, t) = (7.5, 3.5);
        let mut r = range_with(&iris, (1.5, 1.5));
        assert!(r.unexplained(150, sigma, t));
        let added = r.widen_to_explain(150, sigma, t).unwrap();
        // [0.125, 2) leaves 28 out, within the tolerance 3.5·7.5·√4 + 1 = 53.5, and is the
        // narrowest run that does ([0.25, 2) leaves 57 out against 46.5; [0.25, 4), 34 out
        // of 53.5, is twice as wide). Its added side holds 45 > 2·7.5·√3 + 1.
        assert_eq!((r.lo, r.hi), (0.125, 2.0));
        assert_eq!(added, 29.0 + 14.0 + 2.0);
        assert!(!r.unexplained(150, sigma, t));
        // Mass above the core only, with empty bins toward zero: the range grows upward
        // (the empty bins below would buy tolerance for a narrower range, and are refused).
        let mut up = range_with(&[(1.5, 77.0), (3.0, 30.0), (6.0, 43.0)], (1.5, 1.5));
        assert!(up.widen_to_explain(150, sigma, t).is_some());
        assert_eq!((up.lo, up.hi), (1.0, 8.0));
        // Values far outside any run of 16 bins: unchanged, and None.
        let mut far = range_with(&[(1.5, 77.0), (1e9, 73.0)], (1.5, 1.5));
        assert!(far.unexplained(150, sigma, t));
        assert!(far.widen_to_explain(150, sigma, t).is_none());
        assert_eq!(
            (far.lo, far.hi, far.first, far.last),
            (1.0, 2.0, up.first, up.first)
        );
    }

    #[test]
    fn dp_mode_finds_the_range_and_frequent_levels_only() {
        // 20,000 integer values in 0..=255; a common level and a level held by one record.
        let values: Vec<f32> = (0..20000).map(|i| (i % 256) as f32).collect();
        let mut cats = vec![0u32; 20000];
        cats[7] = 1;
        let t = table(values, cats, vec!["common", "unique"]);
        let b = DpHistogramBudget {
            noise_multiplier: 2.0,
            delta_categories: 1e-6,
        };
        let (fs, rep) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Dp,
            Some(&b),
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        match &fs.codecs[0] {
            ColumnCodec::Numeric {
                lo, hi, integer, ..
            } => {
                // Starts at 0, not at the zero bin's edge −2^-20.
                assert_eq!(*lo, 0.0);
                assert_eq!(*hi, 256.0);
                assert!(*integer);
            }
            c => panic!("{c:?}"),
        }
        match &fs.codecs[1] {
            ColumnCodec::Categorical { levels, .. } => {
                assert_eq!(levels, &vec!["common".to_string()])
            }
            c => panic!("{c:?}"),
        }
        assert!(rep.protected);
        let h = rep.dp_histogram.unwrap();
        assert!((h.l2_sensitivity - 5f64.sqrt()).abs() < 1e-12);
        assert_eq!(fs.dim, 2);
    }

    /// The pooled histogram's noise makes its Rényi term exactly the P the plan adds to Δ²,
    /// at its worst case ‖a − b‖² = 2m² (computed here from the definitions), and it is
    /// planned only from m ≥ 27 range-estimated columns.
    #[test]
    fn the_pooled_histogram_costs_what_the_plan_counts() {
        for m in [27usize, 64, 784] {
            let plan = NormPlan {
                numeric_ranges: m,
                categorical_levels: 3,
                numeric_marginals: 0,
                categorical_marginals: 0,
                mean_norm: true,
                pooled_range: true,
            };
            let without = NormPlan {
                pooled_range: false,
                ..plan
            };
            let z = 1.7;
            let sigma = z * plan.l2_sensitivity();
            let sigma_p = z * plan.pooled_sensitivity().unwrap();
            let mf = m as f64;
            // Δ² of the whole release over σ²: the counts' part plus the pooled part.
            let counts = without.l2_sensitivity().powi(2) / sigma.powi(2);
            let pooled = 2.0 * mf * mf / sigma_p.powi(2);
            assert!((counts + pooled - 1.0 / (z * z)).abs() < 1e-12 / (z * z));
            // P = 0.1·3m: the columns' noise rises by √(1 + 0.3m/(3m + 7)) < 5 %.
            assert!(plan.l2_sensitivity() / without.l2_sensitivity() < 1.05);
            assert!(without.pooled_sensitivity().is_none());
        }
        assert!(!pooled_range_worth_it(26) && pooled_range_worth_it(27));
    }

    /// [`fit_feature_space_with`] in DP mode without a schema, seeded.
    fn fit_dp(
        t: &Table,
        b: &DpHistogramBudget,
        plan: &NormPlan,
        seed: u64,
    ) -> (FeatureSpace, NormalizationReport, Released) {
        fit_feature_space_with(
            t,
            None,
            NormalizeMode::Dp,
            Some(b),
            plan,
            &mut ReleaseRng::seeded(seed),
        )
        .unwrap()
    }

    /// `m` columns of 1,000 rows: `spread` of them hold 0 in the first 652 rows and
    /// `value(i, j)` in the other 348, the others hold 0 everywhere.
    fn many_columns(spread: usize, m: usize, value: impl Fn(usize, usize) -> f32) -> Table {
        let n = 1000;
        let mut names: Vec<String> = (0..m).map(|j| format!("px{j}")).collect();
        names.push("label".into());
        let mut columns: Vec<Column> = (0..m)
            .map(|j| Column::Numeric {
                values: (0..n)
                    .map(|i| {
                        if j < spread && i >= 652 {
                            value(i, j)
                        } else {
                            0.0
                        }
                    })
                    .collect(),
                integer: true,
            })
            .collect();
        columns.push(Column::Categorical {
            codes: vec![0; n],
            levels: vec!["a".into()],
        });
        Table {
            names,
            columns,
            n_rows: n,
            rows_dropped: 0,
            label_index: Some(m),
            delimiter: b',',
        }
    }

    /// Each spread column's values outside 0 lie in bins too thin to clear the range
    /// threshold, so alone its range is the zero bin and the column came out constant (the
    /// digits table without a schema: 27 of 64 columns, 7 of them with 34–53 % non-zero
    /// values). With the pooled histogram those columns take the shared range [0, 16]; the
    /// all-zero columns stay constant; both are said in the warnings and the report.
    ///
    /// The numbers (z = 3): each column's noise σ = 3·√(3·64·1.1) ≈ 43.5 and range threshold
    /// ≈ 5.3σ; its bin [8, 16) holds 174 = 4σ (cleared with probability ≈ 0.1, and then its
    /// own range is [0, 16] too), its zero bin 652 = 15σ; the 348 = 8σ rows outside the zero
    /// bin exceed the unexplained-mass margin (< 4σ) by > 4σ. The pooled bin [8, 16) holds
    /// 60·174 = 10,440 against a threshold of ≈ 4,100 (σ_p ≈ 900); [16, 32) and [1, 2) hold
    /// 1,305 each, below it. The other outcomes have probabilities below 1e-4 per column.
    #[test]
    fn thin_columns_take_the_pooled_range_and_constant_ones_stay_constant() {
        let (spread, m) = (60, 64);
        let t = many_columns(spread, m, |i, j| (1 + (i + j) % 16) as f32);
        let b = DpHistogramBudget {
            noise_multiplier: 3.0,
            delta_categories: 0.0,
        };
        let mut plan = plan_extras(&t, None, ExtraStats::default(), b.noise_multiplier);
        assert!(plan.pooled_range);
        for seed in 1..=4 {
            let (fs, rep, _) = fit_dp(&t, &b, &plan, seed);
            let mut pooled = 0;
            for (j, c) in fs.codecs.iter().take(m).enumerate() {
                let ColumnCodec::Numeric { lo, hi, .. } = c else {
                    panic!("{c:?}")
                };
                if j < spread {
                    assert_eq!((*lo, *hi), (0.0, 16.0), "seed {seed} column {j}");
                    pooled += usize::from(rep.columns[j].source == "dp (pooled range)");
                } else {
                    assert_eq!((*lo, *hi), (0.0, 0.0), "seed {seed} column {j}");
                    assert_eq!(rep.columns[j].source, "dp");
                }
            }
            assert!(
                pooled >= 40,
                "seed {seed}: {pooled} columns took the pooled range"
            );
            let h = rep.dp_histogram.as_ref().unwrap();
            assert_eq!(h.pooled_range, Some([0.0, 16.0]));
            assert!(h.pooled_noise_std.unwrap() > 10.0 * h.noise_std);
            let w = rep.warnings.join("\n");
            assert!(
                w.contains(&format!(
                    "{pooled} numeric column(s) take in the range [0, 16]"
                )),
                "{w}"
            );
            assert!(w.contains("4 numeric column(s) come out constant"), "{w}");
        }
        // Without the pooled histogram (the plan before it), the spread columns collapse.
        plan.pooled_range = false;
        let (fs, _, _) = fit_dp(&t, &b, &plan, 1);
        let constant = fs
            .codecs
            .iter()
            .filter(|c| matches!(c, ColumnCodec::Numeric { lo, hi, .. } if lo == hi))
            .count();
        assert!(constant >= 44, "{constant} constant columns");
    }

    /// The pooled histogram places an end to a fine bin: 60 columns whose non-zero values are
    /// all 16 (in the fine bin [16, 20) and the coarse bin [16, 32)). The pooled fine bin
    /// [16, 20) (20,880 against a threshold of ≈ 4,300) and nothing above it put the pooled
    /// range at [0, 20]. Each column's own histogram finds [0, 32] (348 = 8σ in its bin
    /// [16, 32), cleared with probability > 0.99) and leaves nothing unexplained, so it keeps
    /// its own range: the pooled range only widens a column's, it never narrows one (its
    /// own bin says values are there).
    #[test]
    fn the_pooled_fine_bins_place_a_shared_end() {
        let (spread, m) = (60, 64);
        let t = many_columns(spread, m, |_, _| 16.0);
        let b = DpHistogramBudget {
            noise_multiplier: 3.0,
            delta_categories: 0.0,
        };
        let plan = plan_extras(&t, None, ExtraStats::default(), b.noise_multiplier);
        for seed in 1..=4 {
            let (fs, rep, _) = fit_dp(&t, &b, &plan, seed);
            let h = rep.dp_histogram.as_ref().unwrap();
            assert_eq!(h.pooled_range, Some([0.0, 20.0]), "seed {seed}");
            let mut own = 0;
            for (j, c) in fs.codecs.iter().take(spread).enumerate() {
                let ColumnCodec::Numeric { lo, hi, .. } = c else {
                    panic!("{c:?}")
                };
                // A column whose own bin [16, 32) stayed under its threshold (probability
                // < 0.01) found only its zero bin and took in the pooled range.
                if rep.columns[j].source == "dp (pooled range)" {
                    assert_eq!((*lo, *hi), (0.0, 20.0), "seed {seed} column {j}");
                } else {
                    assert_eq!((*lo, *hi), (0.0, 32.0), "seed {seed} column {j}");
                    own += 1;
                }
            }
            assert!(own >= 55, "seed {seed}: {own} columns kept [0, 32]");
        }
    }

    #[test]
    fn integer_columns_stay_integral_when_the_noise_is_large_next_to_the_bins() {
        // 2,000 integers in 0..=255: the largest power-of-two bin holds ~1,000, so 5 % of it
        // is ~50, below the noise σ ≈ 60 on the non-integral count (true count 0). Deciding
        // on the 5 % rule alone made such a column real-valued in most of these seeds; the
        // family-wise margin keeps it integral. Half-integers stay real-valued.
        let b = DpHistogramBudget {
            noise_multiplier: 27.0,
            delta_categories: 1e-6,
        };
        for seed in 0..20 {
            for (shift, want) in [(0.0f32, true), (0.5, false)] {
                let values: Vec<f32> = (0..2000).map(|i| (i % 256) as f32 + shift).collect();
                let t = table(values, vec![0; 2000], vec!["a"]);
                let (fs, _) = fit_feature_space(
                    &t,
                    None,
                    NormalizeMode::Dp,
                    Some(&b),
                    &mut ReleaseRng::seeded(seed),
                )
                .unwrap();
                match &fs.codecs[0] {
                    ColumnCodec::Numeric { integer, lo, .. } => {
                        assert_eq!(*integer, want, "seed {seed}, shift {shift}");
                        assert!(*lo >= 0.0, "seed {seed}: lo {lo}");
                    }
                    c => panic!("{c:?}"),
                }
            }
        }
    }

    #[test]
    fn data_mode_is_the_papers_z_score_and_says_unprotected() {
        let t = table(vec![1.0, 3.0, 5.0, 7.0], vec![0, 1, 0, 1], vec!["p", "q"]);
        let (fs, rep) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Data,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        match &fs.codecs[0] {
            ColumnCodec::Numeric { offset, scale, .. } => {
                assert_eq!(*offset, 4.0);
                assert!((scale - 5f64.sqrt()).abs() < 1e-12);
            }
            c => panic!("{c:?}"),
        }
        assert!(!rep.protected && rep.statement.contains("NOT protected"));
    }

    #[test]
    fn constant_column_is_left_unscaled() {
        let t = table(vec![0.0; 8], vec![0; 8], vec!["p"]);
        let (fs, _) = fit_feature_space(
            &t,
            None,
            NormalizeMode::Data,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert!(matches!(fs.codecs[0], ColumnCodec::Numeric { scale, .. } if scale == 1.0));
    }

    #[test]
    fn public_mode_requires_schema_bounds_and_names_the_column() {
        let t = table(vec![1.0, 2.0], vec![0, 0], vec!["p"]);
        let e = fit_feature_space(
            &t,
            None,
            NormalizeMode::Public,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("column 'x'") && e.contains("schema"), "{e}");
        let schema = Schema::from_json(
            r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 10}, "c": {"type": "categorical", "categories": ["p", "z"]}}}"#,
        )
        .unwrap();
        let (fs, rep) = fit_feature_space(
            &t,
            Some(&schema),
            NormalizeMode::Public,
            None,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert!(
            matches!(fs.codecs[0], ColumnCodec::Numeric { lo, hi, .. } if lo == 0.0 && hi == 10.0)
        );
        assert_eq!(fs.dim, 3);
        assert!(rep.protected && rep.dp_histogram.is_none());
    }

    /// One numeric column `x` (one class) fitted under DP with a large noise multiplier (20).
    fn fit_small_dp(values: Vec<f32>) -> (FeatureSpace, NormalizationReport) {
        let n = values.len();
        let t = table(values, vec![0; n], vec!["p"]);
        let b = DpHistogramBudget {
            noise_multiplier: 20.0,
            delta_categories: 1e-6,
        };
        fit_feature_space(
            &t,
            None,
            NormalizeMode::Dp,
            Some(&b),
            &mut ReleaseRng::seeded(1),
        )
        .unwrap()
    }

    #[test]
    fn small_data_without_bounds_warns_loudly_and_says_default() {
        // 150 rows spread over [4, 8): at this budget no coarse bin clears the threshold.
        let values: Vec<f32> = (0..150).map(|i| 4.0 + (i % 40) as f32 * 0.1).collect();
        let (_, report) = fit_small_dp(values);
        let w = report
            .warnings
            .iter()
            .find(|w| w.contains("column 'x'"))
            .expect("a warning names the column");
        assert!(
            w.contains("DEFAULT range [0, 1]") && w.contains("schema"),
            "{w}"
        );
        let x = report.columns.iter().find(|c| c.name == "x").unwrap();
        assert!(x.source.starts_with("default"), "{}", x.source);
    }

    #[test]
    fn a_column_whose_dp_range_is_one_value_is_said_loudly() {
        // 300 rows: 80 % zeros, the rest spread over 1..16 (a digits pixel). At this budget
        // only the bin around 0 clears the threshold, so the column comes out as 0.
        let values: Vec<f32> = (0..300)
            .map(|i| {
                if i % 5 == 0 {
                    1.0 + (i % 16) as f32
                } else {
                    0.0
                }
            })
            .collect();
        let (fs, report) = fit_small_dp(values);
        assert!(
            matches!(fs.codecs[0], ColumnCodec::Numeric { lo, hi, .. } if lo == 0.0 && hi == 0.0)
        );
        let w = report
            .warnings
            .iter()
            .find(|w| w.contains("come out constant"))
            .expect("a warning says the column is constant");
        assert!(w.contains("x (0)") && w.contains("schema"), "{w}");
    }

    /// Pixel `x` beside a pixel `q` spread evenly over 0..15 (columns 0 and 3; 1 is a
    /// one-level categorical column, 2 the label), both with public bounds 0..16 (integer) in
    /// a schema, fitted with DP marginals at noise multiplier `z` (σ = z·√6: three marginals of
    /// sensitivity √2), seeded: the report and the released marginals.
    fn fit_pixel_pair(x: Vec<f32>, z: f64, seed: u64) -> (NormalizationReport, Released) {
        let n = x.len();
        let q: Vec<f32> = (0..n).map(|i| (i % 16) as f32).collect();
        let mut t = table(x, vec![0; n], vec!["p"]);
        t.names.push("q".into());
        t.columns.push(Column::Numeric {
            values: q,
            integer: true,
        });
        let schema = Schema::from_json(
            r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 16, "integer": true}, "q": {"type": "numeric", "min": 0, "max": 16, "integer": true}}}"#,
        )
        .unwrap();
        let want = ExtraStats {
            marginals: true,
            mean_norm: false,
        };
        let plan = plan_extras(&t, Some(&schema), want, z);
        assert_eq!(plan.numeric_marginals, 2);
        let b = DpHistogramBudget {
            noise_multiplier: z,
            delta_categories: 1e-6,
        };
        let (_, report, released) = fit_feature_space_with(
            &t,
            Some(&schema),
            NormalizeMode::Dp,
            Some(&b),
            &plan,
            &mut ReleaseRng::seeded(seed),
        )
        .unwrap();
        (report, released)
    }

    /// A digits pixel with public bounds 0..16 (integer) whose DP marginal keeps only the bin
    /// of 0 at this budget: the output column is constant although the range is public, and
    /// the warning says so; a column whose marginal keeps several values is not named.
    #[test]
    fn a_schema_column_whose_marginal_is_one_value_is_said_loudly() {
        // 3,000 rows: x is 98.4 % zeros with the rest spread thinly over 1..16 (3 rows per
        // value, far below the 2σ cut at this budget, σ ≈ 20; with seed 1 no noise lifts one
        // above it, and the 47 rows together are below the cut of a pooled run, 2σ·√16);
        // q is spread evenly over 0..15.
        let x: Vec<f32> = (0..3000)
            .map(|i| {
                if i % 64 == 0 {
                    1.0 + (i / 64 % 16) as f32
                } else {
                    0.0
                }
            })
            .collect();
        let (report, released) = fit_pixel_pair(x, 8.0, 1);
        let m = |j: usize| match &released.marginals[j] {
            Some(ColumnMarginal::Numeric(m)) => m.clone(),
            _ => panic!("column {j} has a numeric marginal"),
        };
        assert_eq!(single_value(&m(0), Some(true)), Some(0.0));
        assert_eq!(single_value(&m(3), Some(true)), None);
        let w = report
            .warnings
            .iter()
            .find(|w| w.contains("come out constant"))
            .expect("a warning says the column is constant");
        assert!(w.contains("x (0)") && !w.contains("q ("), "{w}");
    }

    /// The share of the marginal `m` on values other than 0.
    fn nonzero_share(m: &NumericMarginal) -> f64 {
        m.edges
            .windows(2)
            .zip(&m.probs)
            .filter(|(e, _)| e[1] > 0.5)
            .map(|(_, &p)| p)
            .sum()
    }

    /// A pixel that is 0 in 60 % of 4,000 rows and spread evenly over 1..16 in the others
    /// (public bounds 0..16, integer): 100 rows per value against σ = 33·√6 ≈ 81 and its 2σ cut, so
    /// most values fail alone. Cut bin by bin, the marginal keeps about 0.24 of the 0.40
    /// nonzero share (each value keeps E[(100 + N)·1{100 + N > 2σ}] ≈ 46 rows); pooled, the
    /// median share over seeds 1..=100 is within 0.03 of 0.40 (over 400 seeds the shares'
    /// spread is 0.05, so the median's is about 0.006 and 0.03 is 5 of it: a false failure
    /// rate below 1e-6), and no seed's column comes out constant.
    #[test]
    fn thinly_spread_values_are_pooled_not_cut() {
        let n = 4000;
        let x: Vec<f32> = (0..n)
            .map(|i| {
                if i % 5 < 3 {
                    0.0
                } else {
                    1.0 + (i / 5 % 16) as f32
                }
            })
            .collect();
        let mut shares: Vec<f64> = (1..=100)
            .map(|seed| {
                let (report, released) = fit_pixel_pair(x.clone(), 33.0, seed);
                let Some(ColumnMarginal::Numeric(m)) = &released.marginals[0] else {
                    panic!("column x has a numeric marginal")
                };
                assert!(
                    !report
                        .warnings
                        .iter()
                        .any(|w| w.contains("come out constant")),
                    "seed {seed}: {m:?}"
                );
                nonzero_share(m)
            })
            .collect();
        shares.sort_by(f64::total_cmp);
        let median = (shares[49] + shares[50]) / 2.0;
        assert!((median - 0.4).abs() < 0.03, "median {median} ({shares:?})");
    }

    #[test]
    fn schema_bounds_keep_a_column_real_and_public() {
        let t = table(vec![1.0, 2.0, 3.0], vec![0, 0, 0], vec!["p"]);
        let schema =
            Schema::from_json(r#"{"columns": {"x": {"type": "numeric", "min": 0, "max": 10}}}"#)
                .unwrap();
        assert_eq!(dp_columns(&t, Some(&schema)), (0, 1));
        let b = DpHistogramBudget {
            noise_multiplier: 1.0,
            delta_categories: 1e-6,
        };
        let (fs, _) = fit_feature_space(
            &t,
            Some(&schema),
            NormalizeMode::Dp,
            Some(&b),
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert!(
            matches!(fs.codecs[0], ColumnCodec::Numeric { integer: false, lo, hi, .. } if lo == 0.0 && hi == 10.0)
        );
    }

    /// The numeric column `values` beside a 60/40 categorical column, and the extras asked
    /// for (marginals, and the mean norm when `mean_norm`).
    fn marginal_table(values: Vec<f32>, mean_norm: bool) -> (Table, ExtraStats) {
        let n = values.len();
        let cats: Vec<u32> = (0..n).map(|i| u32::from(i % 5 >= 3)).collect();
        let want = ExtraStats {
            marginals: true,
            mean_norm,
        };
        (table(values, cats, vec!["p", "q"]), want)
    }

    /// [`fit_feature_space_with`] under DP at noise multiplier 2, seeded.
    fn fit_marginals(
        t: &Table,
        plan: &NormPlan,
        seed: u64,
    ) -> (FeatureSpace, NormalizationReport, Released) {
        let b = DpHistogramBudget {
            noise_multiplier: 2.0,
            delta_categories: 1e-6,
        };
        fit_feature_space_with(
            t,
            None,
            NormalizeMode::Dp,
            Some(&b),
            plan,
            &mut ReleaseRng::seeded(seed),
        )
        .unwrap()
    }

    #[test]
    fn integer_edges_hold_whole_integers_and_split_dense_bins() {
        // Coarse bins [8, 16) (noisy 10,000: dense at σ = 10, 8 integers) and [16, 32)
        // (noisy 50: sparse), a gap [32, 64) (noisy 0), [64, 128) (noisy 900, 64 integers).
        let sigma = 10.0;
        let integer_edges = |noisy: &[f64], first, last, sigma| {
            refined_bins(noisy, first, last, sigma, true).map(|b| (b.edges, b.cuts))
        };
        let mut noisy = vec![0.0; COARSE_BINS];
        let cb = |x: f32| coarse_of_fine(bin_of(x));
        noisy[cb(8.0)] = 10_000.0;
        noisy[cb(16.0)] = 50.0;
        noisy[cb(64.0)] = 900.0;
        let (edges, thr) = integer_edges(&noisy, cb(8.0), cb(64.0), sigma).unwrap();
        assert_eq!(thr.len() + 1, edges.len());
        for e in &edges {
            assert_eq!(e.fract().abs(), 0.5, "{e} is not a half-integer");
        }
        assert!(edges.windows(2).all(|w| w[0] < w[1]));
        // [8, 16): one bin per integer, cut at σ.
        assert_eq!(
            &edges[..9],
            &[7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5]
        );
        assert!(thr[..8].iter().all(|&t| t == sigma));
        // [16, 32): its quarter bins moved to half-integers, thresholded at 2σ.
        assert_eq!(&edges[9..13], &[19.5, 23.5, 27.5, 31.5]);
        // The gap is one bin, then [64, 128)'s quarters.
        assert_eq!(&edges[13..], &[63.5, 79.5, 95.5, 111.5, 127.5]);
        assert!(thr[8..].iter().all(|&t| t == 2.0 * sigma));
        // Negative bins are (a, b]: −8 stays with (−16, −8], 0 gets its own bin.
        let mut noisy = vec![0.0; COARSE_BINS];
        noisy[cb(-8.0)] = 10.0;
        noisy[cb(0.0)] = 10.0;
        let (edges, _) = integer_edges(&noisy, cb(-8.0), cb(0.0), sigma).unwrap();
        assert_eq!(edges.first(), Some(&-15.5));
        assert!(edges.contains(&-7.5) && edges.contains(&-0.5) && edges.contains(&0.5));
        // One integer: one bin; a span without an integer: none.
        let mut noisy = vec![0.0; COARSE_BINS];
        noisy[cb(0.0)] = 10.0;
        let (edges, _) = integer_edges(&noisy, cb(0.0), cb(0.0), sigma).unwrap();
        assert_eq!(edges, [-0.5, 0.5]);
        // [4, 8) holds 4 integers: its quarter bins are one integer each, but a sparse coarse
        // bin keeps the 2σ cut (σ only where the coarse count is dense).
        let mut noisy = vec![0.0; COARSE_BINS];
        noisy[cb(4.0)] = 100.0;
        let (edges, thr) = integer_edges(&noisy, cb(4.0), cb(4.0), sigma).unwrap();
        assert_eq!(edges, [3.5, 4.5, 5.5, 6.5, 7.5]);
        assert!(thr.iter().all(|&t| t == 2.0 * sigma), "{thr:?}");
        let mut noisy = vec![0.0; COARSE_BINS];
        noisy[cb(0.3)] = 10.0;
        assert!(integer_edges(&noisy, cb(0.3), cb(0.3), sigma).is_none());
    }

    /// A coarse bin is split into its fine bins only when its noisy count exceeds
    /// [`SPLIT_SIGMAS`]·σ = 2σ: at 1.5σ (an empty bin's noise does that with probability 0.07)
    /// it joins the unsplit run beside it; at 2.5σ it is split. The end bins are always split.
    #[test]
    fn coarse_bins_split_only_above_two_sigma() {
        let sigma = 10.0;
        let first = COARSE_HALF + 1;
        let last = first + 4;
        let mut noisy = vec![0.0; last + 1];
        noisy[first] = 100.0 * sigma;
        noisy[first + 1] = 1.5 * sigma;
        noisy[first + 2] = 2.5 * sigma;
        noisy[first + 3] = 0.0;
        noisy[last] = 100.0 * sigma;
        let bins = refined_bins(&noisy, first, last, sigma, false).unwrap();
        let fine =
            |cb: usize| -> Vec<f64> { fine_of_coarse(cb).map(|fb| bin_edges(fb).1).collect() };
        let mut want = vec![coarse_edges(first).0];
        want.extend(fine(first));
        // first + 1 (1.5σ) is one unsplit bin, ending where first + 2 starts.
        want.push(coarse_edges(first + 2).0);
        want.extend(fine(first + 2));
        // first + 3 (0) likewise, ending where the last bin starts.
        want.push(coarse_edges(last).0);
        want.extend(fine(last));
        assert_eq!(bins.edges, want);
        assert_eq!(bins.cuts, vec![2.0 * sigma; want.len() - 1]);
    }

    /// The DP marginal of one integer column (seed 5), and 10,000 evenly spaced quantiles of
    /// it decoded as the synthesis does: the quantile map, then rounding.
    fn decoded_integers(values: Vec<f32>) -> (NumericMarginal, Vec<f64>) {
        let (t, want) = marginal_table(values, false);
        let plan = plan_extras(&t, None, want, 2.0);
        assert_eq!(plan.numeric_marginals, 1);
        let (_, _, rel) = fit_marginals(&t, &plan, 5);
        let Some(ColumnMarginal::Numeric(m)) = &rel.marginals[0] else {
            panic!("no marginal")
        };
        let draws = 10_000;
        let decoded = (0..draws)
            .map(|r| {
                let p = (r as f64 + 0.5) / draws as f64;
                crate::preprocess::encode::round_half_away(m.inverse_cdf(p))
            })
            .collect();
        (m.clone(), decoded)
    }

    fn share(xs: &[f64], pred: impl Fn(f64) -> bool) -> f64 {
        xs.iter().filter(|&&x| pred(x)).count() as f64 / xs.len() as f64
    }

    #[test]
    fn an_integer_spike_keeps_its_share_in_the_dp_marginal() {
        // Half the rows at 40, the rest spread over 32..63 (hours-per-week's shape): decoded
        // by the quantile map and rounded, 40 keeps about half the rows. (Before: the bin
        // [40, 48) spread it evenly over 40..47, about 1/16 each.)
        let n = 40_000;
        let values: Vec<f32> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    40.0
                } else {
                    32.0 + (i % 32) as f32
                }
            }) // odd: 33, 35, …
            .collect();
        let (m, decoded) = decoded_integers(values);
        let at_40 = share(&decoded, |x| x == 40.0);
        // 0.5 (the other half are the odd integers 33..63), noise σ ≈ 6 counts on 20,000.
        assert!((at_40 - 0.5).abs() < 0.01, "{at_40} ({m:?})");
    }

    #[test]
    fn a_small_integer_range_gets_one_bin_per_integer() {
        // Adult's education-num shape: the integers 2..=16, 16 the largest and 10 % of the
        // rows, at the bottom of the coarse bin [16, 32). Decoded by the quantile map and
        // rounded, 16 keeps its share and little lands above it: only an empty integer's
        // noise that clears its 2σ cut (each of 17..=31 does with probability 0.023; this
        // seed put 0.6 % at 17). Before, the quarter bin [15.5, 19.5) held 16's mass and
        // spread it evenly over 16..19: 8 % of the rows above 16 with this seed.
        let n = 2_000;
        let values: Vec<f32> = (0..n)
            .map(|i| {
                if i % 10 == 0 {
                    16.0
                } else {
                    2.0 + (i % 14) as f32
                }
            })
            .collect();
        let (m, decoded) = decoded_integers(values);
        let above = share(&decoded, |x| x > 16.0);
        assert!(above < 0.02, "{above} ({m:?})");
        let at_16 = share(&decoded, |x| x == 16.0);
        // 0.1 of the rows (200 of 2,000; the count's noise is a few counts).
        assert!((at_16 - 0.1).abs() < 0.01, "{at_16} ({m:?})");
    }

    #[test]
    fn marginals_are_planned_from_public_numbers_and_track_the_data() {
        // 40,000 rows: 70 % at 20..24, 30 % at 60..64 (integers); a 60/40 categorical column.
        let n = 40_000;
        let values: Vec<f32> = (0..n)
            .map(|i| {
                if i % 10 < 7 {
                    20.0 + (i % 4) as f32
                } else {
                    60.0 + (i % 4) as f32
                }
            })
            .collect();
        let (t, want) = marginal_table(values, true);
        let plan = plan_extras(&t, None, want, 2.0);
        assert_eq!(plan.numeric_marginals, 1);
        assert!(plan.mean_norm);
        assert!(
            (plan.l2_sensitivity() - 8f64.sqrt()).abs() < 1e-12,
            "ranges 3 + levels 2 (also the marginal) + numeric marginal 2 + mean norm 1 = 8"
        );
        // Far too much noise for n: no marginals.
        assert_eq!(plan_extras(&t, None, want, 1e4).numeric_marginals, 0);
        let (fs, _, rel) = fit_marginals(&t, &plan, 3);
        match &rel.marginals[0] {
            Some(ColumnMarginal::Numeric(m)) => {
                // The mass below 40 is ≈ 0.7 (noise σ ≈ 6 counts on 40,000 rows).
                let below: f64 = m
                    .probs
                    .iter()
                    .zip(&m.edges)
                    .filter(|(_, &e)| e < 40.0)
                    .map(|(p, _)| p)
                    .sum();
                assert!((below - 0.7).abs() < 0.01, "{below}");
                // An integer column: bins of whole integers (one per integer in the dense
                // coarse bins), so less than 1 % of the mass is on integers the data lack
                // (noise above σ on their bins) and the range is whole numbers.
                let stray: f64 = m
                    .probs
                    .iter()
                    .zip(m.edges.windows(2))
                    .filter(|(_, w)| {
                        !(20..24)
                            .chain(60..64)
                            .any(|k| w[0] < k as f64 && (k as f64) < w[1])
                    })
                    .map(|(p, _)| p)
                    .sum();
                assert!(stray < 0.01, "{stray}");
                for e in &m.edges {
                    assert_eq!(e.fract().abs(), 0.5, "{e}");
                }
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(fs.codecs[0], ColumnCodec::Numeric { integer: true, lo, hi, .. } if lo.fract() == 0.0 && hi.fract() == 0.0 && (16.0..=20.0).contains(&lo) && (63.0..=64.0).contains(&hi)),
            "{:?}",
            fs.codecs[0]
        );
        match &rel.marginals[1] {
            Some(ColumnMarginal::Categorical(p)) => {
                let f = p[0] / (p[0] + p[1]);
                assert!((f - 0.6).abs() < 0.01, "{f}");
            }
            other => panic!("{other:?}"),
        }
        assert!(rel.marginals[2].is_none(), "the label has no marginal");
        let m = rel.mean_norm.unwrap();
        // Encoded rows: u_x ∈ [0, 1] plus one one-hot entry, so 1 ≤ ‖u‖ ≤ √2.
        assert!((1.0..=2f64.sqrt()).contains(&m), "{m}");
        assert_eq!(fs.dim, 3);
    }

    #[test]
    fn mode_parsing() {
        assert_eq!("dp".parse::<NormalizeMode>().unwrap(), NormalizeMode::Dp);
        assert!("zscore"
            .parse::<NormalizeMode>()
            .unwrap_err()
            .to_string()
            .contains("normalize = zscore"));
    }

    /// The range histogram, non-integral count and level counts are released on the count
    /// grid 2^-k (exact discrete noise; float noise almost never is), with noise
    /// 2^-k·N_ℤ(0, (2^k σ)²), σ ≥ z·Δ: KS at α = 1e-6 over the empty coarse bins (their exact
    /// count is 0).
    #[test]
    fn range_counts_lie_on_the_count_grid_with_discrete_gaussian_noise_ks() {
        use crate::mechanisms::gaussian::ks_crit;
        use crate::mechanisms::noise::ks_discrete_gaussian as ks_discrete;
        let values: Vec<f32> = (0..5000).map(|i| (i % 100) as f32 + 0.5).collect();
        let g = CountNoise::new("normalization noise", 1.5, 5f64.sqrt()).unwrap();
        assert!(g.sigma() >= 1.5 * 5f64.sqrt() && g.sigma() <= 1.5 * 5f64.sqrt() * (1.0 + 1e-9));
        let mut exact = vec![0i64; COARSE_BINS];
        for &v in &values {
            exact[coarse_of_fine(bin_of(v))] += 1;
        }
        let mut empty_noise = Vec::new();
        for seed in 0..20 {
            let r = dp_range(
                &coarse_counts(&values),
                &g,
                5.0,
                3.0,
                &mut ReleaseRng::seeded(seed),
            )
            .unwrap_or_else(|_| panic!("seed {seed}: no range"));
            assert!(!r.integral, "every value is non-integral");
            for (b, &c) in r.coarse_noisy.iter().enumerate() {
                let u = c / g.grid();
                assert_eq!(u.fract(), 0.0, "seed {seed}, bin {b}: {c}");
                if exact[b] == 0 {
                    empty_noise.push(u as i64);
                }
            }
        }
        let su = g.sigma() / g.grid();
        let d = ks_discrete(&empty_noise, su);
        assert!(d < ks_crit(empty_noise.len()), "KS {d}");
        assert!(ks_discrete(&empty_noise, su * 1.3) > ks_crit(empty_noise.len()));
    }

    /// Released categorical level counts (DP levels and schema levels) lie on the count grid.
    #[test]
    fn level_counts_lie_on_the_count_grid() {
        let n = 4000;
        let values: Vec<f32> = (0..n).map(|i| (i % 9) as f32).collect();
        let cats: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
        let t = table(values, cats, vec!["p", "q", "r"]);
        let want = ExtraStats {
            marginals: true,
            mean_norm: false,
        };
        let plan = plan_extras(&t, None, want, 1.0);
        let b = DpHistogramBudget {
            noise_multiplier: 1.0,
            delta_categories: 1e-6,
        };
        for seed in 0..5 {
            let (_, _, rel) = fit_dp(&t, &b, &plan, seed);
            match &rel.marginals[1] {
                Some(ColumnMarginal::Categorical(p)) => {
                    assert!(p.len() >= 3);
                    // Multiples of the count grid 2^-k, k ≤ 30.
                    for &c in p {
                        assert_eq!((c * 2f64.powi(30)).fract(), 0.0, "{c}");
                    }
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// Step (3): every term ⌊2^k·min(‖u‖/M, 1)⌋ lies in [0, 2^k] whatever the row (so one
    /// record moves S by ≤ 2^k exactly), and the released S + Z is S plus N_ℤ(0, (2^k·σ)²).
    #[test]
    fn mean_norm_sum_is_exact_on_its_grid() {
        let k = 20;
        let one = 2u64.pow(20);
        // Rows with norms 0, ½M, M, 3M (clamped), NaN (counted as 0).
        let m = 2.0;
        let rows: [[f32; 2]; 5] = [
            [0.0, 0.0],
            [0.6, 0.8],
            [1.2, 1.6],
            [3.6, 4.8],
            [f32::NAN, 0.0],
        ];
        let units: Vec<u64> = rows.iter().map(|r| mean_norm_units(r, 2, m, k)).collect();
        assert_eq!(units, [0, one / 2, one, one, 0]);
        let all: Vec<f32> = rows.iter().flatten().copied().collect();
        assert_eq!(mean_norm_units(&all, 2, m, k), 2 * one + one / 2);
        // Rounded toward zero: a term just below 1/3 stays below 2^k/3.
        let third = [1.0f32 / 3.0, 0.0];
        assert_eq!(
            mean_norm_units(&third, 2, 1.0, k),
            (one as f64 / 3.0).floor() as u64
        );
        // The grid exponent puts 2^k·σ in [2^30, 2^31) (the coupling scale).
        assert_eq!(mean_norm_grid_exponent(5.0), 28);
        assert_eq!(mean_norm_grid_exponent(2f64.powi(15)), 15);
        assert_eq!(mean_norm_grid_exponent(2f64.powi(40)), 0);
        // Noise: S + Z − S over 3,000 draws against N_ℤ(0, (2^k·σ)²) at α = 1e-6.
        use crate::mechanisms::gaussian::ks_crit;
        use crate::mechanisms::noise::ks_discrete_gaussian as ks_discrete;
        let g = CountNoise::new("normalization noise", 0.001, 1.0).unwrap();
        let k = mean_norm_grid_exponent(g.sigma());
        assert_eq!(k, 40);
        let s = mean_norm_units(&all, 2, m, k);
        let mut rng = ReleaseRng::seeded(4);
        let z: Vec<i64> = (0..3000)
            .map(|_| noisy_norm_units(s, k, &g, &mut rng).unwrap() - s as i64)
            .collect();
        let su = g.sigma() * 2f64.powi(k);
        assert!(ks_discrete(&z, su) < ks_crit(z.len()));
        assert!(ks_discrete(&z, su * 1.5) > ks_crit(z.len()));
    }
}
