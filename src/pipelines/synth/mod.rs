//! The end-to-end synthesis pipeline shared by the CLI and the browser build, for every
//! mechanism: table → normalization (with its privacy cost) → encode → clip (L2 ball, or the
//! [0, 1] box for DPMix) → calibrate → noise step → decode → rows, plus the receipt.
//!
//! [`synthesize`] runs DP-CDA (the default); [`synthesize_with`] takes a [`Mechanism`]. The
//! mechanisms differ only in the feature preparation, the accounting plan and the noise step;
//! the budget split, normalization, the ε check, decoding and the receipt are shared.

use std::borrow::Cow;

mod emit;
pub use emit::{CellSink, ProgressSink, Sinks};
pub mod gmm_synth;
pub use gmm_synth::{auto_gmm, wide_enough as gmm_wide_enough};
mod receipt;

use crate::accountant::calibrate::{smallest_z, Goal};
use crate::accountant::pld::mechanisms::Adjacency as PldAdjacency;
use crate::accountant::{
    check_delta, check_epsilon, default_orders, AccountantKind, Preset, RdpCurve,
};
use crate::data::decide::{
    decide_columns, decide_from_data, decision_z, undecided_columns, DecisionReport, Release,
    MAX_TYPES_SHARE,
};
use crate::data::ColumnSpec;
use crate::data::{Column, Schema, Table};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use crate::mechanisms::cda;
use crate::mechanisms::cda::accounting::{calibrate_sigma_x, check_mix, check_sigma, CdaShape};
use crate::mechanisms::dpmix::accounting::{calibrate_dpmix, DpMixShape};
use crate::mechanisms::dpmix::{self, LabelOutput};
use crate::mechanisms::local::{self, calibrate_local, LocalPrivacy};
use crate::mechanisms::pld_plan::{LabelSigma, SynthPld};
use crate::mechanisms::projection;
use crate::preprocess::auto::{
    auto_mix, use_common_norm, EncodingReport, FIXED_MIX_FALLBACK, MIX_AUTO,
};
use crate::preprocess::clip::{check_clip, clamp_unit_box, clip_rows};
use crate::preprocess::compact::CompactRows;
use crate::preprocess::dp_counts::{
    build_pools, calibrate_standard, dp_classes, split_samples, standard_curve, ClassCountReport,
    CountRelease,
};
use crate::preprocess::missing::{encode_missing, MissingReport};
use crate::preprocess::normalize::{
    dp_columns, fit_feature_space_with, plan_extras, range_threshold_sigmas, ColumnMarginal,
    DpHistogramBudget, ExtraStats, Released,
};
use crate::preprocess::rownorm::{
    accounting_clip, box_accounting_clip, box_diameter, scale_rows_to_norm,
};
use crate::preprocess::{FeatureSpace, NormalizationReport, NormalizeMode};
use crate::receipt::{BaselineParameters, CdaParameters, DpMixParameters, Parameters, Receipt};
use crate::rng::ReleaseRng;
use serde::{Deserialize, Serialize};

/// Options of a synthesis (CLI flags / JS options); which of them a mechanism uses is stated
/// on [`Mechanism`].
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Target ε (calibrates σx); required unless `sigma_x` is given.
    pub epsilon: Option<f64>,
    /// δ ∈ (0, 1).
    pub delta: f64,
    /// Mix order l; [`MIX_AUTO`] (0, the default) chooses it ([`crate::preprocess::auto`]).
    pub mix: usize,
    /// Clip norm c in normalized units (default 1).
    pub clip: f64,
    /// Rows to make, T (default: as many as the input has).
    pub samples: Option<usize>,
    /// Normalization mode (default `dp`).
    pub normalize: NormalizeMode,
    /// Share of ε for DP normalization (default 0.2: ranges, categories, the marginals the
    /// decoder maps onto and the mean norm).
    pub normalize_share: f64,
    /// True when the caller chose `normalize_share`. Otherwise (the default) a small table
    /// without public ranges gets a larger share, up to [`MAX_AUTO_NORMALIZE_SHARE`], when the
    /// default one could not see its ranges, and a table whose column marginals would be
    /// noisy gets [`MARGINAL_NORMALIZE_SHARE`] (see `auto_share`).
    pub normalize_share_given: bool,
    /// Explicit σx instead of calibration.
    pub sigma_x: Option<f64>,
    /// σy: paper mode with label noise; None: label-free mode (default).
    pub sigma_y: Option<f64>,
    /// Accountant preset (default `default`).
    pub preset: Preset,
    /// RDP orders (default 2..=256).
    pub orders: Vec<u32>,
    /// The neighbouring relation (default: the standard one, label included).
    pub adjacency: Adjacency,
    /// A public lower bound on every class's size; replaces the DP pool floors.
    pub pool_floor: Option<usize>,
    /// How columns the schema does not type get their type (default: a DP decision).
    pub column_types: ColumnTypes,
    /// The accountant (default PLD with RDP as a cross-check, for every mechanism under the
    /// default preset; the paper preset uses RDP).
    pub accountant: AccountantKind,
    /// A DP release made from the same records before this synthesis, composed into its
    /// accounting (the image path's shape decision); None for a table.
    pub prior: Option<PriorRelease>,
    /// True when the caller named the mechanism. Otherwise (the default) DP-CDA's defaults
    /// hand a wide numeric table to the GMM ([`auto_gmm`]).
    pub mechanism_given: bool,
}

named_enum! {
    /// The neighbouring relation a synthesis is private under.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Adjacency: "adjacency" {
        /// Replace one whole record, label included (default). DP-CDA: the label set, class
        /// counts, output class proportions and pool sizes come from DP counts (or the schema
        /// and a public floor), and a record that changes class is charged to both classes
        /// ([`crate::preprocess::dp_counts`]). Other mechanisms keep their own adjacency,
        /// declared in the receipt.
        #[default]
        Standard = "standard" ("default: replace one whole record, label included"),
        /// Replace one record's features, keeping its label: the label set and the class
        /// counts are public (declared in the receipt).
        KeepLabel = "keep-label" ("labels and class counts public"),
    }
}

named_enum! {
    /// How columns the schema does not type get their type.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum ColumnTypes: "column_types", "; or type every column in a schema" {
        /// Decided under DP with a share of ε ([`crate::data::decide`]); default.
        #[default]
        Dp = "dp" ("default: decided under DP"),
        /// Inferred from the data: NOT protected (declared in the receipt).
        Data = "data" ("inferred from the data, not protected"),
    }
}

/// Share of ε spent on the column-type and missing-indicator decisions (when any is needed);
/// a table too small for it to tell a text column gets the larger share it needs, up to
/// [`MAX_TYPES_SHARE`] ([`crate::data::decide::decision_z`]).
pub const TYPES_SHARE: f64 = 0.02;
/// Share of ε spent on the noisy class counts (standard adjacency).
pub const COUNTS_SHARE: f64 = 0.05;
/// Share of δ spent on the label threshold (standard adjacency, labels not in the schema).
pub const DELTA_LABEL_SHARE: f64 = 0.1;
/// The largest share of ε the normalization takes on its own (small tables without public
/// ranges; see `normalize`).
pub const MAX_AUTO_NORMALIZE_SHARE: f64 = 0.5;
/// The normalization's share of ε when its marginals would be noisy (see `auto_share`).
pub const MARGINAL_NORMALIZE_SHARE: f64 = 0.3;
/// Rows per σ of the marginals' noise below which the share is raised to
/// [`MARGINAL_NORMALIZE_SHARE`].
pub const MARGINAL_SHARE_ROWS_PER_SIGMA: f64 = 500.0;

/// Noise multiplier of the type and count mechanisms when no target ε is given.
pub const DEFAULT_SHAPE_Z: f64 = 20.0;

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            epsilon: None,
            delta: 1e-5,
            mix: MIX_AUTO,
            clip: 1.0,
            samples: None,
            normalize: NormalizeMode::Dp,
            normalize_share: 0.2,
            normalize_share_given: false,
            sigma_x: None,
            sigma_y: None,
            preset: Preset::Default,
            orders: default_orders(),
            adjacency: Adjacency::Standard,
            pool_floor: None,
            column_types: ColumnTypes::Dp,
            accountant: AccountantKind::Pld,
            prior: None,
            mechanism_given: false,
        }
    }
}

/// A Gaussian release made from the same records before the synthesis (the image shape
/// decision, [`crate::images::shape`]), which the synthesis composes into its accounting as a
/// data-path component.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriorRelease {
    /// The receipt's name of its RDP component.
    pub name: &'static str,
    /// Its noise multiplier z (RDP curve α/(2z²)).
    pub noise_multiplier: f64,
}

/// Which mechanism a synthesis runs, with its own options.
///
/// | | uses `mix` | uses `clip` | `sigma_y` |
/// |---|---|---|---|
/// | `Cda` | yes | yes (L2) | paper mode label noise |
/// | `DpMix` | yes | no (features are clamped to [0, 1]) | label noise (global; default σy = σx) |
/// | `Local`, `Projection` | no | yes (L2) | not allowed |
///
/// Serialized (for JS options) as `{"mechanism": "cda" | "dpmix" | "local" | "projection", ...}`
/// with the variant's options beside the tag, e.g. `{"mechanism": "dpmix", "labels": "soft",
/// "class_wise": false}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "mechanism", rename_all = "lowercase")]
pub enum Mechanism {
    /// DP-CDA, the default.
    #[default]
    Cda,
    /// DPMix (Lee et al. 2019).
    DpMix(DpMixOptions),
    /// Local perturbation (a baseline of the DP-CDA paper).
    Local,
    /// Random projection (a baseline of the DP-CDA paper).
    Projection(ProjectionOptions),
    /// Gaussian class models in a DP principal subspace ([`gmm_synth`]): the default for
    /// wide numeric tables ([`auto_gmm`]).
    Gmm(GmmSynthOptions),
}

/// The GMM mechanism's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GmmSynthOptions {
    /// Principal components k (default: [`gmm_synth::components`] of d).
    pub components: Option<usize>,
}

/// DPMix's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DpMixOptions {
    /// Hard (argmax) or soft (probability columns) labels.
    pub labels: LabelOutput,
    /// Mix within each class instead of over the whole dataset.
    pub class_wise: bool,
}

impl Default for DpMixOptions {
    fn default() -> Self {
        DpMixOptions {
            labels: LabelOutput::Hard,
            class_wise: false,
        }
    }
}

/// Random projection's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectionOptions {
    /// Projected dimension k (default [`projection::default_dim`]).
    pub dim: Option<usize>,
}

impl Mechanism {
    /// The name written in the receipt.
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Cda => "dp-cda",
            Mechanism::DpMix(_) => "dpmix",
            Mechanism::Local => "local-perturbation",
            Mechanism::Projection(_) => "random-projection",
            Mechanism::Gmm(_) => "dp-gmm",
        }
    }
}

// `cda`, `dpmix`, `local` or `projection`, with default options.
named_enum! {
    impl FromStr for Mechanism: "mechanism" {
        "cda" ("DP-CDA, default") => Mechanism::Cda,
        "dpmix" => Mechanism::DpMix(DpMixOptions::default()),
        "local" ("local perturbation") => Mechanism::Local,
        "projection" ("random projection") => Mechanism::Projection(ProjectionOptions::default()),
        "gmm" ("Gaussian class models in a DP principal subspace") => Mechanism::Gmm(GmmSynthOptions::default()),
    }
}

const DELTA_CATEGORY_SHARE: f64 = 0.1;

/// Name of the soft-label probability column of `class` for label column `label`.
pub fn soft_label_column(label: &str, class: &str) -> String {
    format!("P({label}={class})")
}

/// Runs DP-CDA on `table` (whose label column must be set), calling `header` once with the
/// output column names and `row` for each synthetic row (cells in the input's column order),
/// and `progress` with the finished fraction. An error from any of the three stops the run at
/// that call and is returned (a caller cancels by returning [`Error::Abort`] from `progress`).
pub fn synthesize<'t>(
    table: impl Into<Cow<'t, Table>>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    rng: &mut ReleaseRng,
    header: impl FnOnce(&[String]) -> Result<()>,
    row: impl FnMut(&[String]) -> Result<()>,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<Receipt> {
    let sinks = (header, row, progress);
    with_sinks(
        table.into(),
        schema,
        opts,
        &Mechanism::Cda,
        rng,
        sinks,
        false,
    )
}

/// [`synthesize_dyn`] with the three sinks as closures (the header called at most once).
fn with_sinks(
    table: Cow<'_, Table>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
    (header, mut row, mut progress): (
        impl FnOnce(&[String]) -> Result<()>,
        impl FnMut(&[String]) -> Result<()>,
        impl FnMut(f64) -> Result<()>,
    ),
    denoise: bool,
) -> Result<Receipt> {
    let sinks = Sinks {
        header: &mut once(header),
        row: &mut row,
        progress: &mut progress,
    };
    synthesize_dyn(table, schema, opts, mechanism, rng, sinks, denoise)
}

/// A header sink that may be called only once (the pipeline calls it once; a second call
/// is an internal error, not a second header).
fn once(header: impl FnOnce(&[String]) -> Result<()>) -> impl FnMut(&[String]) -> Result<()> {
    let mut header = Some(header);
    move |names: &[String]| match header.take() {
        Some(h) => h(names),
        None => Err(Error::Data("internal: the header was written twice".into())),
    }
}

/// The label column's classes.
struct Classes {
    index: usize,
    /// Each row's class (a copy: the encoded table is freed before the rows are made).
    codes: Vec<u32>,
    labels: Vec<String>,
    members: Vec<Vec<u32>>,
    sizes: Vec<usize>,
}

/// Noise draws the data path may make per column, besides one per category: two for the
/// column-type decision, the range histogram and its non-integral count, and a marginal's
/// bins (at most the fine and coarse grids' bins).
const DATA_DRAWS_PER_COLUMN: usize = 2048;
const _: () = assert!(
    2 + crate::preprocess::normalize::COARSE_BINS
        + 1
        + crate::preprocess::normalize::GRID_BINS
        + crate::preprocess::normalize::COARSE_BINS
        + 66
        <= DATA_DRAWS_PER_COLUMN
);

/// Half of [`crate::accountant::pld::coupling::MAX_SYNTH_DRAWS`]: the data path's share and
/// the mixing's.
const HALF_DRAWS: f64 = crate::accountant::pld::coupling::MAX_SYNTH_DRAWS / 2.0;

/// The categories a schema lists (labels included): public.
fn schema_levels(schema: Option<&Schema>) -> usize {
    schema.map_or(0, |s| {
        s.columns
            .values()
            .map(|c| match c {
                ColumnSpec::Categorical {
                    categories: Some(c),
                } => c.len(),
                _ => 0,
            })
            .sum()
    })
}

/// The data path's noise draws are at most (columns + 1)·(n + 2048) plus twice the schema's
/// categories plus one, a public bound: per column, the fixed draws of
/// [`DATA_DRAWS_PER_COLUMN`] and one per category seen (at most n) or listed; the class
/// counts, one per label seen or listed; the mean norm, one. It must stay within 2^47 for the
/// coupling charge (never near in practice: 2^47 is 1.4·10¹⁴).
fn check_data_draws(n: usize, cols: usize, schema_levels: usize) -> Result<()> {
    let bound = (cols as f64 + 1.0) * (n as f64 + DATA_DRAWS_PER_COLUMN as f64)
        + 2.0 * schema_levels as f64
        + 1.0;
    if bound > HALF_DRAWS {
        return Err(Error::param(
            "input",
            format!("{n} rows × {cols} columns"),
            "the table is too large for one synthesis (its DP statistics would need more than 2^47 noise draws); split it",
        ));
    }
    Ok(())
}

/// The mixing's noise draws, rows × noised coordinates, must stay within 2^47 for the
/// coupling charge (2^47 values would be an output of about 10¹⁵ bytes).
fn check_mix_draws(rows: usize, dim: usize) -> Result<()> {
    if rows as f64 * dim as f64 > HALF_DRAWS {
        return Err(Error::param(
            "samples",
            rows,
            format!("{rows} rows × {dim} encoded features would need more than 2^47 noise draws; ask for fewer rows"),
        ));
    }
    Ok(())
}

/// The label column's public categories, from the schema.
fn schema_labels(table: &Table, schema: Option<&Schema>) -> Option<Vec<String>> {
    let name = &table.names[table.label_index?];
    match schema.and_then(|s| s.columns.get(name)) {
        Some(ColumnSpec::Categorical {
            categories: Some(c),
        }) => Some(c.clone()),
        _ => None,
    }
}

fn classes_of(table: &Table) -> Result<Classes> {
    let index = table
        .label_index
        .ok_or_else(|| Error::Data("no label column was chosen; name the label column".into()))?;
    let (codes, labels) = match &table.columns[index] {
        Column::Categorical { codes, levels } => (codes.clone(), levels.clone()),
        Column::Numeric { .. } => {
            return Err(Error::Data(
                "internal: the label column must be categorical".into(),
            ))
        }
    };
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); labels.len()];
    for (i, &c) in codes.iter().enumerate() {
        members[c as usize].push(i as u32);
    }
    let sizes = members.iter().map(Vec::len).collect();
    Ok(Classes {
        index,
        codes,
        labels,
        members,
        sizes,
    })
}

/// Cuts every pool to a random subset of `size` members (post-DP: `size` is public), for
/// `mix` auto's full-pool choice.
fn equalize_pools(pools: &mut [Vec<u32>], sizes: &mut [usize], size: usize, rng: &mut ReleaseRng) {
    use rand::seq::SliceRandom;
    for (p, s) in pools.iter_mut().zip(sizes.iter_mut()) {
        if p.len() > size {
            p.shuffle(rng);
            p.truncate(size);
        }
        *s = p.len();
    }
}

/// Normalization and its place in the budget.
struct Normalized {
    space: FeatureSpace,
    report: NormalizationReport,
    released: Released,
    curve: RdpCurve,
    /// The histograms' noise multiplier when they were released.
    z: Option<f64>,
    dp: bool,
    delta_rdp: f64,
}

fn normalize(
    table: &Table,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    delta_avail: f64,
    want: ExtraStats,
    rng: &mut ReleaseRng,
) -> Result<Normalized> {
    let ShareChoice {
        dp,
        z,
        share,
        note: share_note,
        delta_cat,
        delta_rdp,
        plan,
    } = choose_share(table, schema, opts, delta_avail, want)?;
    let orders = &opts.orders;
    let (curve, budget) = if dp {
        (
            RdpCurve::gaussian(z, orders)?,
            Some(DpHistogramBudget {
                noise_multiplier: z,
                delta_categories: delta_cat,
            }),
        )
    } else {
        (RdpCurve::zero(orders), None)
    };
    let (space, mut report, released) =
        fit_feature_space_with(table, schema, opts.normalize, budget.as_ref(), &plan, rng)?;
    if let Some(h) = report.dp_histogram.as_mut() {
        h.epsilon_share = Some(share);
        if let Some(ShareNote::Ranges(w)) = &share_note {
            report.warnings.push(w.clone());
        }
        h.share_note = share_note.map(ShareNote::into_text);
    }
    if space.dim == 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label; add at least one feature column"
                .into(),
        ));
    }
    Ok(Normalized {
        space,
        report,
        released,
        curve,
        z: dp.then_some(z),
        dp,
        delta_rdp,
    })
}

/// The normalization's place in the budget: whether it releases anything, its noise
/// multiplier and share of ε (raised by [`auto_share`] unless the caller gave one), its δ
/// split and its plan. A function of public numbers only (see [`auto_share`]).
struct ShareChoice {
    /// Whether DP normalization releases anything.
    dp: bool,
    /// The histograms' noise multiplier (+∞ when nothing is released).
    z: f64,
    share: f64,
    note: Option<ShareNote>,
    /// δ of the categories' thresholds, and the rest (the RDP conversions').
    delta_cat: f64,
    delta_rdp: f64,
    plan: crate::preprocess::normalize::NormPlan,
}

fn choose_share(
    table: &Table,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    delta_avail: f64,
    want: ExtraStats,
) -> Result<ShareChoice> {
    let (m_num, m_cat) = dp_columns(table, schema);
    // Extras (marginals, mean norm) need a target ε to size the normalization share.
    let want = if opts.normalize == NormalizeMode::Dp && opts.epsilon.is_some() {
        want
    } else {
        ExtraStats::default()
    };
    let dp = opts.normalize == NormalizeMode::Dp
        && (m_num + m_cat > 0 || want.mean_norm || want.marginals);
    let delta_cat = if dp && m_cat > 0 {
        delta_avail * DELTA_CATEGORY_SHARE
    } else {
        0.0
    };
    let delta_rdp = delta_avail - delta_cat;
    let (z, share, note) = if dp {
        let eps = opts.epsilon.ok_or_else(|| {
            Error::param("epsilon", "(none)", "DP normalization needs a target ε to size its share; give ε, or use public normalization with a schema")
        })?;
        let z_of = |share: f64| normalize_z(opts, eps * share, delta_rdp);
        let z0 = z_of(opts.normalize_share)?;
        if opts.normalize_share_given {
            (z0, opts.normalize_share, None)
        } else {
            auto_share(table, schema, want, opts.normalize_share, z0, &z_of)?
        }
    } else {
        (f64::INFINITY, opts.normalize_share, None)
    };
    // The plan depends only on public numbers and z; when it releases nothing (a complete
    // schema and no extras worth their noise), no budget is spent on normalization.
    let plan = if dp {
        plan_extras(table, schema, want, z)
    } else {
        plan_extras(table, schema, ExtraStats::default(), f64::INFINITY)
    };
    Ok(ShareChoice {
        dp: dp && plan.any(),
        z,
        share,
        note,
        delta_cat,
        delta_rdp,
        plan,
    })
}

/// The data path's releases as the synthesis's accounting composes them with the mixing:
/// what a readout of the noise before a run (the page's live readout,
/// [`mod@crate::api::preview`]) needs to calibrate as the run will.
#[derive(Debug, Clone)]
pub struct DataPathBudget {
    /// The normalization's share of ε (0 when it releases nothing) and the noise multiplier
    /// of its histograms (sized for that share of ε alone, as the synthesis sizes it).
    pub normalize_share: f64,
    pub normalize_z: Option<f64>,
    /// The noise multiplier of the DP column-type decisions (when a type is left to decide).
    pub types_z: Option<f64>,
    /// The noise multiplier of the DP class counts (standard adjacency); their noise sets
    /// the pool floors.
    pub counts_z: Option<f64>,
    /// δ left to the RDP and PLD conversions once the thresholds have theirs.
    pub delta_rdp: f64,
    /// The thresholds' ε terms (labels, categories): ln(1/(1 − δ_thr)) each.
    pub epsilon_thresholds: f64,
    /// δ of the label threshold (0: the labels are public, or the keep-label adjacency).
    pub label_delta: f64,
    /// The noise multiplier of a release made before the synthesis ([`SynthOptions::prior`]:
    /// the image shape decision).
    pub prior_z: Option<f64>,
}

impl DataPathBudget {
    /// The Gaussian releases' noise multipliers (column types, class counts, normalization,
    /// then a prior release), in the synthesis's order.
    pub fn noise_multipliers(&self) -> Vec<f64> {
        [self.types_z, self.counts_z, self.normalize_z, self.prior_z]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The RDP curve of the normalization alone (automatic l's goal, as in the synthesis) and
    /// of every release of the data path (`compose_data_path`, as the synthesis composes
    /// them).
    pub fn curves(&self, orders: &[u32]) -> Result<(RdpCurve, RdpCurve)> {
        let norm = RdpCurve::gaussian_or_zero(self.normalize_z, orders)?;
        let mut all = compose_data_path(
            &norm,
            &RdpCurve::gaussian_or_zero(self.types_z, orders)?,
            &RdpCurve::gaussian_or_zero(self.counts_z, orders)?,
        )?;
        if let Some(z) = self.prior_z {
            all = all.compose(&RdpCurve::gaussian(z, orders)?)?;
        }
        Ok((norm, all))
    }

    /// The budget from public numbers only, for a readout without the data: the standard
    /// adjacency's class counts (labels not in a schema), a normalization at `share` of ε
    /// (none at 0), no categorical column and no column type left to decide (a schema, or
    /// images), and the prior release `opts` names (an image shape decided under DP).
    pub fn assumed(opts: &SynthOptions, standard: bool, share: f64) -> Result<Self> {
        let delta_lab = label_delta(opts, standard, false);
        let delta_rdp = opts.delta - delta_lab;
        let normalize_z = match opts.epsilon {
            Some(eps) if share > 0.0 => Some(normalize_z(opts, eps * share, delta_rdp)?),
            _ => None,
        };
        Ok(DataPathBudget {
            normalize_share: if normalize_z.is_some() { share } else { 0.0 },
            normalize_z,
            types_z: None,
            counts_z: standard.then(|| shape_z(opts, COUNTS_SHARE)),
            delta_rdp,
            epsilon_thresholds: label_threshold_epsilon(delta_lab),
            label_delta: delta_lab,
            prior_z: opts.prior.map(|p| p.noise_multiplier),
        })
    }
}

/// The noise multiplier of the normalization's histograms sized for `eps` alone at `delta`
/// (the smallest Gaussian z with that ε).
fn normalize_z(opts: &SynthOptions, eps: f64, delta: f64) -> Result<f64> {
    Ok(smallest_z(eps, delta, opts.preset.conversion(), |z| {
        RdpCurve::gaussian(z, &opts.orders)
    })?
    .z)
}

/// The data path's RDP curve, composed with the mixing's by every plan: the normalization,
/// then the column types with the class counts. One order for the synthesis and its readout
/// (composition rounds up, so the order matters to the last bit).
fn compose_data_path(norm: &RdpCurve, types: &RdpCurve, counts: &RdpCurve) -> Result<RdpCurve> {
    norm.clone().compose(&types.clone().compose(counts)?)
}

/// The ε term of the label threshold (0 without one).
fn label_threshold_epsilon(delta_lab: f64) -> f64 {
    if delta_lab > 0.0 {
        crate::preprocess::dp_counts::threshold_epsilon(delta_lab)
    } else {
        0.0
    }
}

/// The [`DataPathBudget`] of a synthesis of `table` with `opts` by `mechanism`. It is
/// computed on `table` as read — its column types before the DP type decisions and without
/// missing-value indicator columns — so where those change the table's shape the run's
/// budget can differ a little; the receipt states the run's. It depends on the data only
/// through that shape, is shown to the data's owner and is released nowhere.
pub fn data_path_budget(
    table: &Table,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
) -> Result<DataPathBudget> {
    let standard = is_standard(opts, mechanism);
    let labels_public = schema_labels(table, schema).is_some();
    let delta_lab = label_delta(opts, standard, labels_public);
    let want = extra_stats(table, opts, mechanism);
    let c = choose_share(table, schema, opts, opts.delta - delta_lab, want)?;
    let types_z = (opts.column_types == ColumnTypes::Dp && undecided_columns(table, schema) > 0)
        .then(|| types_z(opts, table, schema));
    let epsilon_categories = if c.dp && c.delta_cat > 0.0 {
        crate::preprocess::dp_counts::threshold_epsilon(c.delta_cat)
    } else {
        0.0
    };
    Ok(DataPathBudget {
        normalize_share: if c.dp { c.share } else { 0.0 },
        normalize_z: c.dp.then_some(c.z),
        types_z,
        counts_z: standard.then(|| shape_z(opts, COUNTS_SHARE)),
        // As the synthesis: its normalization's δ, which is what it converts at.
        delta_rdp: c.delta_rdp,
        epsilon_thresholds: label_threshold_epsilon(delta_lab) + epsilon_categories,
        label_delta: delta_lab,
        prior_z: opts.prior.map(|p| p.noise_multiplier),
    })
}

/// δ spent on the label threshold: under the standard adjacency when the schema does not
/// list the labels.
fn label_delta(opts: &SynthOptions, standard: bool, labels_public: bool) -> f64 {
    if standard && !labels_public {
        opts.delta * DELTA_LABEL_SHARE
    } else {
        0.0
    }
}

/// The statistics beyond the ranges that normalization releases for `mechanism`: DP-CDA's
/// marginals (decoding maps each column onto its marginal) and, for rows scaled to a common
/// norm, the mean row norm that restores their scale.
fn extra_stats(table: &Table, opts: &SynthOptions, mechanism: &Mechanism) -> ExtraStats {
    let is_cda = matches!(mechanism, Mechanism::Cda);
    let gmm = matches!(mechanism, Mechanism::Gmm(_));
    ExtraStats {
        // The GMM releases its own marginals (gmm_synth) and divides the rows by the mean norm.
        marginals: is_cda,
        mean_norm: (gmm || (is_cda && use_common_norm(table.n_cols().saturating_sub(1))))
            && opts.normalize != NormalizeMode::Data,
    }
}

/// The normalization's noise multiplier and share of ε when the caller left the share at its
/// default (`share0`, noise multiplier `z0`; `z_of` maps a share to its noise multiplier),
/// and the receipt's note when it was raised. Two rules, each a function of public numbers
/// only (n, the columns and their DP-decided types, the schema, ε, δ), so the choice
/// releases nothing:
///
/// 1. Ranges. A range is found when a power-of-two bin holds more rows than the threshold
///    t·σ. When the default share leaves t·σ above n/4 (small tables without public ranges;
///    n is public: the adjacency replaces records), the share is raised in steps of 0.05 up
///    to [`MAX_AUTO_NORMALIZE_SHARE`] until it does not — the mixing, whose noise is averaged
///    over l rows, can spare it. When no share does, the largest is taken if its t·σ is at
///    most n/2 (a column with half its rows in one power of two is seen, and its range then
///    widens to the rest): Iris without a schema at ε = 3 kept 0.2 and one or both petal
///    columns fell back to [0, 1] (bench/utility/README.md).
/// 2. Marginals. When the plan releases marginals but their noise leaves fewer than
///    [`MARGINAL_SHARE_ROWS_PER_SIGMA`] rows per σ, the share is raised to
///    [`MARGINAL_NORMALIZE_SHARE`]: decoding maps every column onto its marginal, so their
///    noise sets the 1- and 2-way fidelity (measured in bench/utility/README.md).
fn auto_share(
    table: &Table,
    schema: Option<&Schema>,
    want: ExtraStats,
    share0: f64,
    z0: f64,
    z_of: &impl Fn(f64) -> Result<f64>,
) -> Result<(f64, f64, Option<ShareNote>)> {
    let (m_num, _) = dp_columns(table, schema);
    let n = table.n_rows as f64;
    let sigma_of = |z: f64| z * plan_extras(table, schema, want, z).l2_sensitivity();
    let reach = |sigma: f64| range_threshold_sigmas(m_num) * sigma <= n / 4.0;
    let plan = plan_extras(table, schema, want, z0);
    let sigma0 = z0 * plan.l2_sensitivity();
    if m_num > 0 && !reach(sigma0) {
        // Steps of 0.05 from share0, each share rounded to the nearest 0.01 (0.4, not the
        // 0.39999999999999997 of repeated additions) so that the receipt states it plainly.
        for step in 1.. {
            let share = ((share0 + 0.05 * f64::from(step)) * 100.0).round() / 100.0;
            if share > MAX_AUTO_NORMALIZE_SHARE + 1e-12 {
                break;
            }
            let z = z_of(share)?;
            if reach(sigma_of(z)) {
                let note = format!(
                    "the normalization's share of ε was raised from {share0:.2} to {share:.2}: with {} rows and no public ranges for {m_num} numeric column(s), the default share could not see their ranges (give min/max in a schema to keep the default)",
                    table.n_rows
                );
                return Ok((z, share, Some(ShareNote::Ranges(note))));
            }
        }
        // No share sees a bin of n/4 rows. The largest still sees one of n/2 (a column whose
        // values lie mostly in one power of two; the range then widens to the rest), where
        // the default would leave most columns at [0, 1].
        let z = z_of(MAX_AUTO_NORMALIZE_SHARE)?;
        if range_threshold_sigmas(m_num) * sigma_of(z) <= n / 2.0 {
            let note = format!(
                "the normalization's share of ε was raised from {share0:.2} to {MAX_AUTO_NORMALIZE_SHARE:.2}: with {} rows and no public ranges for {m_num} numeric column(s), the default share could not see their ranges (give min/max in a schema to keep the default)",
                table.n_rows
            );
            return Ok((z, MAX_AUTO_NORMALIZE_SHARE, Some(ShareNote::Ranges(note))));
        }
        return Ok((z0, share0, None));
    }
    let marginals = plan.numeric_marginals + plan.categorical_marginals > 0;
    if marginals && share0 < MARGINAL_NORMALIZE_SHARE && sigma0 * MARGINAL_SHARE_ROWS_PER_SIGMA > n
    {
        let note = format!(
            "the normalization's share of ε was raised from {share0:.2} to {MARGINAL_NORMALIZE_SHARE:.2}: with {} rows its noise (σ = {sigma0:.1}) left fewer than {MARGINAL_SHARE_ROWS_PER_SIGMA} rows per σ in the column marginals the output is mapped onto (give a share to keep another)",
            table.n_rows
        );
        let z = z_of(MARGINAL_NORMALIZE_SHARE)?;
        return Ok((
            z,
            MARGINAL_NORMALIZE_SHARE,
            Some(ShareNote::Marginals(note)),
        ));
    }
    Ok((z0, share0, None))
}

/// Why [`auto_share`] raised the normalization's share.
enum ShareNote {
    /// The default share could not see the ranges: also a warning (a schema would help).
    Ranges(String),
    /// The marginals would be noisy at the default share.
    Marginals(String),
}

impl ShareNote {
    fn into_text(self) -> String {
        match self {
            ShareNote::Ranges(s) | ShareNote::Marginals(s) => s,
        }
    }
}

/// Missing-value indicator columns without a released marginal get one from the DP count of
/// missing cells that the type decision already released (`noisy_missing`, accounted there):
/// a two-point marginal with mass p̂ = clamp(noisy_missing / n, 0, 1) at 1 (n is public).
/// Decoding then marks the p̂·T rows with the highest noisy indicator as missing (quantile
/// mapping; post-processing) instead of thresholding the noisy value at 0.5, which under the
/// mixing noise marks a large share of rows missing in columns that have none.
fn indicator_marginals(table: &Table, decisions: &DecisionReport, released: &mut Released) {
    use crate::preprocess::missing::INDICATOR_SUFFIX;
    use crate::preprocess::quantile::NumericMarginal;
    let n = table.n_rows.max(1) as f64;
    for (j, name) in table.names.iter().enumerate() {
        let Some(base) = name.strip_suffix(INDICATOR_SUFFIX) else {
            continue;
        };
        if released.marginals.get(j).is_some_and(Option::is_some) {
            continue;
        }
        let Some(b) = decisions
            .columns
            .iter()
            .find(|c| c.name == base)
            .and_then(|c| c.noisy_missing)
        else {
            continue;
        };
        let p = if b.is_finite() {
            (b / n).clamp(0.0, 1.0)
        } else {
            0.0
        };
        if released.marginals.len() <= j {
            released.marginals.resize(j + 1, None);
        }
        released.marginals[j] = Some(ColumnMarginal::Numeric(NumericMarginal {
            edges: vec![0.0, 0.0, 1.0, 1.0],
            probs: vec![1.0 - p, 0.0, p],
        }));
    }
}

/// A mechanism's accounting, fixed before any row is made.
struct Plan {
    /// The mechanism's own RDP curve under the chosen preset and under the other one.
    curve: RdpCurve,
    curve_other: RdpCurve,
    component: &'static str,
    sigma_x: f64,
    parameters: Parameters,
    adjacency: String,
    public_information: Vec<String>,
    class_counts_public: bool,
    warnings: Vec<String>,
    /// The PLD side of the accounting (when the PLD accountant covers the mechanism).
    pld: Option<SynthPld>,
    /// The GMM's noise ([`Mechanism::Gmm`] only).
    gmm: Option<crate::mechanisms::gmm::suffstats::Split>,
}

/// What a mechanism's accounting [`Plan`] is built from: everything [`synthesize_dyn`] has
/// fixed before the calibration (classes and pools, T, the encoding, the budget left after
/// the data path's releases, the accountant's choices).
#[derive(Clone, Copy)]
struct PlanInputs<'a> {
    /// The label column's name.
    label_name: &'a str,
    /// The options with `mix` resolved (auto l applied).
    opts: &'a SynthOptions,
    mechanism: &'a Mechanism,
    cls: &'a Classes,
    /// Input rows, classes, encoded feature dimension, synthetic rows requested.
    n: usize,
    k: usize,
    d: usize,
    t: usize,
    /// T / K, and the rows each class gets (from the DP counts under the standard adjacency).
    per_class: usize,
    per_class_counts: &'a [usize],
    rows_total: usize,
    /// The smallest pool.
    pool_min: usize,
    /// The clip norm the accountant is given (the encoding's sensitivity bound).
    acc_clip: f64,
    /// The GMM's row bound B: the DP mean norm, else the public maximum norm.
    row_bound: f64,
    rows_clipped: usize,
    entries_clamped: usize,
    encoding: &'a EncodingReport,
    label_free_public: &'a [String],
    /// An explicit σx (no calibration), else the target ε left for the mixing.
    given_sigma: Option<f64>,
    /// The automatic l's ranking σx, where DP-CDA's calibration starts
    /// ([`SynthPld::calibrate_sigma`]); None when l was given.
    sigma_guess: Option<f64>,
    target: f64,
    delta_rdp: f64,
    /// ε terms of the thresholded releases.
    eps_terms: f64,
    /// The data path's releases: their RDP curve, and their Gaussian noise multipliers.
    extra_curve: &'a RdpCurve,
    extra_zs: &'a [f64],
    /// DP-CDA's paper mode: the label noise's term of 1/z².
    label_term: f64,
    use_pld: bool,
}

impl PlanInputs<'_> {
    /// The mixing's calibration goal: the ε left for it at δ_rdp, on top of the data path's
    /// curve.
    fn goal(&self) -> Goal<'_> {
        Goal {
            epsilon: self.target,
            delta: self.delta_rdp,
            orders: &self.opts.orders,
            preset: self.opts.preset,
            extra: Some(self.extra_curve),
        }
    }

    /// σx and whether it was calibrated: the given σx, else the RDP calibration `rdp` (of
    /// [`Self::goal`]), lowered by the PLD accountant when it applies; with an automatic l,
    /// PLD first from the ranking's σx and RDP only where it might certify less noise
    /// ([`SynthPld::calibrate_sigma`]: the same σx up to the calibrations' tolerance). Every
    /// plan's one calibration path. `rdp_epsilon(σx)` is RDP's ε at σx on [`Self::goal`]'s
    /// terms.
    fn sigma_x(
        &self,
        pld: Option<&SynthPld>,
        rdp: impl FnOnce(&Goal<'_>) -> Result<f64>,
        rdp_epsilon: impl FnOnce(f64) -> Result<f64>,
    ) -> Result<(f64, bool)> {
        if let Some(s) = self.given_sigma {
            return Ok((s, false));
        }
        let goal = self.goal();
        let sigma = match pld {
            Some(p) => {
                let rdp_sigma = || rdp(&goal);
                let guess = self.sigma_guess;
                p.calibrate_sigma(guess, self.target, self.delta_rdp, rdp_epsilon, rdp_sigma)?
                    .0
            }
            None => rdp(&goal)?,
        };
        Ok((sigma, true))
    }
}

/// What differs between the two DP-CDA plans' reported parameters: how the T rows are split
/// and charged.
struct CdaSplit {
    samples_per_class: usize,
    rows_written: usize,
    sampling_rate: f64,
    compositions: usize,
}

impl PlanInputs<'_> {
    /// DP-CDA's reported parameters at σx (noise multiplier `z`), with `split`.
    fn cda_parameters(
        &self,
        sigma_x: f64,
        z: f64,
        calibrated: bool,
        split: CdaSplit,
    ) -> CdaParameters {
        let opts = self.opts;
        CdaParameters {
            label_mode: if opts.sigma_y.is_some() {
                "paper"
            } else {
                "label-free"
            },
            mix: opts.mix,
            clip: opts.clip,
            sigma_x,
            sigma_y: opts.sigma_y,
            noise_multiplier: z,
            calibrated,
            target_epsilon: opts.epsilon,
            samples_requested: self.t,
            samples_per_class: split.samples_per_class,
            rows_written: split.rows_written,
            pool: self.pool_min,
            sampling_rate: split.sampling_rate,
            compositions: split.compositions,
            classes: self.k,
            feature_dim: self.d,
            rows_clipped: self.rows_clipped,
            encoding: Some(self.encoding.clone()),
        }
    }
}

/// DP-CDA under the standard adjacency (a record may change class): the DP pools, the
/// per-class compositions, σx calibrated (RDP, then PLD when it applies; PLD first from the
/// automatic l's ranking, [`PlanInputs::sigma_x`]).
fn plan_cda_standard(p: &PlanInputs<'_>) -> Result<Plan> {
    let PlanInputs {
        opts,
        cls,
        k,
        per_class_counts,
        rows_total,
        pool_min,
        acc_clip,
        eps_terms,
        extra_zs,
        label_term,
        use_pld,
        ..
    } = *p;
    let orders = &opts.orders;
    let other = opts.preset.other();
    let paper_mode = opts.sigma_y.is_some();
    let comps: Vec<u64> = if paper_mode {
        vec![rows_total as u64; k]
    } else {
        per_class_counts.iter().map(|&c| c as u64).collect()
    };
    let mix = opts.mix as u32;
    // Replace-one inside a pool (a member, or the zero padding row, for another):
    // √2·c/l for non-negative rows (preprocess::rownorm), 2c/l otherwise.
    let dx = 2.0 * acc_clip / opts.mix as f64;
    let max_comp = comps.iter().copied().max().unwrap_or(0) as usize;
    let pld = use_pld.then(|| {
        SynthPld::new(
            f64::from(mix) / pool_min.max(1) as f64,
            max_comp as u64,
            PldAdjacency::Standard,
            extra_zs,
            dx,
            label_term,
        )
        .with_exact_noise(opts.clip, opts.mix, eps_terms)
    });
    let (sigma_x, calibrated) = p.sigma_x(
        pld.as_ref(),
        |goal| calibrate_standard(&cls.sizes, &comps, mix, acc_clip, label_term, goal),
        |sx| {
            let z = 1.0 / (dx * dx / (sx * sx) + label_term).sqrt();
            let goal = p.goal();
            Ok(goal
                .with_extra(standard_curve(
                    &cls.sizes,
                    &comps,
                    mix,
                    z,
                    orders,
                    opts.preset,
                )?)?
                .epsilon(goal.delta, opts.preset.conversion())?
                .epsilon)
        },
    )?;
    let z = 1.0 / (dx * dx / (sigma_x * sigma_x) + label_term).sqrt();
    Ok(Plan {
        curve: standard_curve(&cls.sizes, &comps, mix, z, orders, opts.preset)?,
        curve_other: standard_curve(&cls.sizes, &comps, mix, z, orders, other)?,
        component: "dp-cda mixing (standard adjacency: the two classes a record can touch)",
        sigma_x,
        parameters: Parameters::Cda(p.cda_parameters(
            sigma_x,
            z,
            calibrated,
            CdaSplit {
                samples_per_class: per_class_counts.iter().copied().max().unwrap_or(0),
                rows_written: rows_total,
                sampling_rate: opts.mix as f64 / pool_min.max(1) as f64,
                compositions: max_comp,
            },
        )),
        adjacency: "replace one whole record, label included (the label set, class counts, output class proportions and pool sizes are DP; a record that changes class is charged to both classes)".into(),
        public_information: vec![
            "the number of input records (invariant under replacing one record)".into(),
            "the column names (the header) and what the schema states".into(),
        ],
        class_counts_public: false,
        // Nothing here counts the zero rows that pad a pool whose DP floor exceeds its class:
        // whether a pool was padded, and by how many rows, is a function of the exact class
        // counts (with the pool sizes, it would publish them).
        warnings: Vec::new(),
        pld,
        gmm: None,
    })
}

/// DP-CDA keeping each record's label (or the paper's label-noise mode): one pool per class,
/// σx calibrated (RDP, then PLD when it applies; PLD first from the automatic l's ranking,
/// [`PlanInputs::sigma_x`]).
fn plan_cda_keep_label(p: &PlanInputs<'_>) -> Result<Plan> {
    let PlanInputs {
        opts,
        k,
        per_class,
        pool_min,
        acc_clip,
        label_free_public,
        eps_terms,
        extra_zs,
        label_term,
        use_pld,
        ..
    } = *p;
    let orders = &opts.orders;
    let other = opts.preset.other();
    let paper_mode = opts.sigma_y.is_some();
    let compositions = if paper_mode { per_class * k } else { per_class };
    let pld = use_pld.then(|| {
        SynthPld::new(
            opts.mix as f64 / pool_min.max(1) as f64,
            compositions as u64,
            PldAdjacency::LabelKept,
            extra_zs,
            2.0 * acc_clip / opts.mix as f64,
            label_term,
        )
        .with_exact_noise(opts.clip, opts.mix, eps_terms)
    });
    let shape = CdaShape {
        pool: pool_min as u64,
        mix: opts.mix as u32,
        clip: acc_clip,
        sigma_y: opts.sigma_y,
        samples: compositions as u64,
    };
    let (sigma_x, calibrated) = p.sigma_x(
        pld.as_ref(),
        |goal| Ok(calibrate_sigma_x(&shape, goal)?.sigma_x),
        |sx| {
            let goal = p.goal();
            Ok(shape
                .with_sigma_x(sx)
                .epsilon(goal.delta, goal.orders, goal.preset, goal.extra)?
                .epsilon)
        },
    )?;
    let privacy = shape.with_sigma_x(sigma_x);
    Ok(Plan {
        curve: privacy.rdp(orders, opts.preset)?,
        curve_other: privacy.rdp(orders, other)?,
        component: "dp-cda mixing",
        sigma_x,
        parameters: Parameters::Cda(p.cda_parameters(
            sigma_x,
            privacy.noise_multiplier()?,
            calibrated,
            CdaSplit {
                samples_per_class: per_class,
                rows_written: per_class * k,
                sampling_rate: privacy.sampling_rate(),
                compositions,
            },
        )),
        adjacency: if paper_mode {
            "replace one record (the paper's accounting: feature and label noise charged; class sizes taken as public)"
        } else {
            "replace one record's features, keeping its label"
        }
        .into(),
        public_information: label_free_public.to_vec(),
        class_counts_public: true,
        warnings: Vec::new(),
        pld,
        gmm: None,
    })
}

/// DPMix's (σx, σy, whether σy = σx, whether calibrated): the given σx (σy given or equal
/// to it), else RDP's calibration of `shape`, σx lowered by the PLD accountant when it
/// applies.
fn dpmix_sigmas(
    p: &PlanInputs<'_>,
    shape: &DpMixShape,
    pld: Option<&SynthPld>,
) -> Result<(f64, f64, bool, bool)> {
    let opts = p.opts;
    Ok(match p.given_sigma {
        Some(s) => (s, opts.sigma_y.unwrap_or(s), opts.sigma_y.is_none(), false),
        None => {
            let c = calibrate_dpmix(shape, &p.goal())?;
            let sigma_x = match pld {
                Some(pl) => pl.calibrate(c.sigma_x, p.target, p.delta_rdp)?,
                None => c.sigma_x,
            };
            let sigma_y = if c.shared { sigma_x } else { c.sigma_y };
            (sigma_x, sigma_y, c.shared, true)
        }
    })
}

/// DPMix (global or class-wise): σx (and σy, shared or given) calibrated with RDP, then with
/// PLD when it applies (T identical Gaussian steps on l of the pool's rows drawn without
/// replacement, with the coupling charge of its exact feature and label noise).
fn plan_dpmix(p: &PlanInputs<'_>, o: &DpMixOptions) -> Result<Plan> {
    let PlanInputs {
        label_name,
        opts,
        cls,
        n,
        k,
        d,
        t,
        per_class,
        pool_min,
        entries_clamped,
        label_free_public,
        eps_terms,
        extra_zs,
        use_pld,
        ..
    } = *p;
    let orders = &opts.orders;
    let other = opts.preset.other();
    let (pool, dim_y, compositions, rows_written) = if o.class_wise {
        (pool_min, 0usize, per_class, per_class * k)
    } else {
        (n, k, t, t)
    };
    // The accounting shape with σx free (the RDP calibration's), and the label noise as the
    // coupling sees it: none (class-wise), σy given, or σy = σx.
    let shape = DpMixShape {
        pool: pool as u64,
        mix: opts.mix as u32,
        dim_x: d as u64,
        dim_y: dim_y as u64,
        sigma_y: opts.sigma_y,
        samples: compositions as u64,
    };
    let (steps, shared_steps) = shape.free_sigma_steps()?;
    let labels = (dim_y > 0).then_some(match opts.sigma_y {
        Some(s) if !shared_steps => LabelSigma::Fixed(s),
        _ => LabelSigma::Shared,
    });
    let pld = use_pld.then(|| {
        let p = SynthPld::gaussian_steps(steps, extra_zs).with_exact_noise(
            cda::unit_box_radius(d),
            opts.mix,
            eps_terms,
        );
        match labels {
            Some(l) => p.with_exact_labels(l),
            None => p,
        }
    });
    let (sigma_x, sigma_y, shared, calibrated) = dpmix_sigmas(p, &shape, pld.as_ref())?;
    let privacy = shape.with_sigmas(sigma_x, sigma_y);
    let soft = o.labels == LabelOutput::Soft;
    let (adjacency, public_information, warnings) = dpmix_statement(o, label_free_public);
    Ok(Plan {
        curve: privacy.rdp(orders, opts.preset)?,
        curve_other: privacy.rdp(orders, other)?,
        component: "dpmix mixing",
        sigma_x,
        parameters: Parameters::DpMix(DpMixParameters {
            variant: if o.class_wise { "class-wise" } else { "global" },
            label_output: if soft { "soft" } else { "hard" },
            soft_label_columns: soft.then(|| {
                cls.labels
                    .iter()
                    .map(|c| soft_label_column(label_name, c))
                    .collect()
            }),
            mix: opts.mix,
            sigma_x,
            sigma_y: (!o.class_wise).then_some(sigma_y),
            shared_sigma: !o.class_wise && shared,
            dim_x: d,
            dim_y,
            delta_squared: privacy.delta_squared()?,
            noise_multiplier: privacy.noise_multiplier()?,
            calibrated,
            target_epsilon: opts.epsilon,
            samples_requested: t,
            rows_written,
            pool,
            sampling_rate: privacy.sampling_rate(),
            compositions,
            classes: k,
            entries_clamped,
        }),
        adjacency,
        public_information,
        class_counts_public: o.class_wise,
        warnings,
        pld,
        gmm: None,
    })
}

/// DPMix's adjacency, public information and warnings: class-wise DPMix keeps each record's
/// label (the label-free statement); global DPMix replaces whole records.
fn dpmix_statement(
    o: &DpMixOptions,
    label_free_public: &[String],
) -> (String, Vec<String>, Vec<String>) {
    if o.class_wise {
        let warnings = if o.labels == LabelOutput::Soft {
            vec!["class-wise DPMix: every row's label is its class, so the soft label columns are one-hot".into()]
        } else {
            Vec::new()
        };
        (
            "replace one record's features, keeping its label".into(),
            label_free_public.to_vec(),
            warnings,
        )
    } else {
        (
            "replace one record (features and label)".into(),
            vec![
                "the set of class labels (read from the data and ASSUMED public: this adjacency does not make a label held by one record public; give the classes in a schema if they are not) — the number of rows in each class is protected and not reported".into(),
                "the number of input rows and the column names and types".into(),
            ],
            Vec::new(),
        )
    }
}

/// The baselines (local perturbation, random projection): one Gaussian step per released
/// record.
fn plan_baseline(p: &PlanInputs<'_>) -> Result<Plan> {
    let PlanInputs {
        opts,
        mechanism,
        n,
        k,
        d,
        t,
        rows_clipped,
        label_free_public,
        extra_zs,
        use_pld,
        ..
    } = *p;
    let orders = &opts.orders;
    let other = opts.preset.other();
    let proj_dim = match mechanism {
        Mechanism::Projection(p) => {
            let kd = p.dim.unwrap_or_else(|| projection::default_dim(d));
            projection::check_dim(kd, d)?;
            Some(kd)
        }
        _ => None,
    };
    let local_at = |sigma| LocalPrivacy {
        rows: n as u64,
        samples: t as u64,
        clip: opts.clip,
        sigma,
    };
    let steps = local_at(f64::NAN).steps()?;
    let pld = use_pld.then(|| SynthPld::gaussian_steps(steps, extra_zs));
    let (sigma_x, calibrated) = p.sigma_x(
        pld.as_ref(),
        |goal| Ok(calibrate_local(n as u64, t as u64, opts.clip, goal)?.sigma),
        |sx| {
            let goal = p.goal();
            Ok(local_at(sx)
                .epsilon(goal.delta, goal.orders, goal.preset, goal.extra)?
                .epsilon)
        },
    )?;
    let privacy = local_at(sigma_x);
    let released = match proj_dim {
        None => format!("x_i clipped to L2 norm ≤ {} plus N(0, σ² I_{d}), for {t} of the {n} input rows (a uniform sample without replacement when fewer), in random order, with their labels", opts.clip),
        Some(kd) => format!("P·(clip(Pᵀx_i) + N(0, σ² I_{kd})) with P a random d × {kd} orthonormal matrix (data-independent), the projected row clipped to L2 norm ≤ {}, for {t} of the {n} input rows (a uniform sample without replacement when fewer), in random order, with their labels", opts.clip),
    };
    Ok(Plan {
        curve: privacy.rdp(orders, opts.preset)?,
        curve_other: privacy.rdp(orders, other)?,
        component: if proj_dim.is_some() {
            "random projection (one Gaussian step per record)"
        } else {
            "local perturbation (one Gaussian step per record)"
        },
        sigma_x,
        parameters: Parameters::Baseline(BaselineParameters {
            released,
            clip: opts.clip,
            sigma_x,
            noise_multiplier: privacy.noise_multiplier()?,
            calibrated,
            target_epsilon: opts.epsilon,
            samples_requested: t,
            rows_written: t,
            pool: n,
            sampling_rate: privacy.sampling_rate(),
            compositions: 1,
            classes: k,
            feature_dim: d,
            projection_dim: proj_dim,
            rows_clipped,
        }),
        adjacency: "replace one record's features, keeping its label".into(),
        public_information: label_free_public.to_vec(),
        class_counts_public: true,
        warnings: Vec::new(),
        pld,
        gmm: None,
    })
}

fn sigma_for_target(opts: &SynthOptions) -> Result<(Option<f64>, f64)> {
    match (opts.sigma_x, opts.epsilon) {
        (Some(s), _) => Ok((Some(s), f64::NAN)),
        (None, Some(eps)) => Ok((None, eps)),
        (None, None) => Err(Error::param(
            "epsilon",
            "(none)",
            "give a target ε (or an explicit σx)",
        )),
    }
}

/// Runs `mechanism` on `table` (whose label column must be set), writing to `out` (the
/// header once, then each synthetic row).
///
/// Output columns are the input's, in its order and units; with DPMix soft labels the label
/// column is replaced, in place, by one column per class named `P(label=class)` (see
/// [`soft_label_column`]) holding the noisy mean one-hot vector projected onto the probability
/// simplex (each row's entries are ≥ 0 and sum to 1).
pub fn synthesize_with<'t>(
    table: impl Into<Cow<'t, Table>>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<Receipt> {
    synthesize_dyn(table.into(), schema, opts, mechanism, rng, out, false)
}

/// [`synthesize_with`] `mechanism` (DP-CDA, whose defaults may hand a large set to the GMM,
/// or the GMM) whose DP-CDA rows are also shrunk toward their class's mean after the noise
/// ([`crate::preprocess::quantile::shrink_to_class_means`], post-processing): cleaner
/// individual rows (the image path uses it, so synthetic images are recognisable) with less
/// spread, which a classifier trained on the rows does not always like.
#[allow(clippy::too_many_arguments)]
pub fn synthesize_denoised<'t>(
    table: impl Into<Cow<'t, Table>>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
    header: impl FnOnce(&[String]) -> Result<()>,
    row: impl FnMut(&[String]) -> Result<()>,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<Receipt> {
    let sinks = (header, row, progress);
    with_sinks(table.into(), schema, opts, mechanism, rng, sinks, true)
}

/// How the encoded rows are brought into the mechanism's bounded set. DP-CDA's rows are
/// non-negative outside `data` mode, which gives the √2·c bound (proof note in
/// preprocess::rownorm).
#[derive(Clone, Copy, Debug, PartialEq)]
enum RowScaling {
    /// DPMix: entries clamped into the unit box [0, 1]^d.
    UnitBox,
    /// Every row scaled to norm c; after the noise, × the DP mean norm / c.
    CommonNorm { mean_norm: f64 },
    /// Entries clamped into [0, 1] and divided by the public maximum norm M / c (no row
    /// changes direction or relative length); × M / c after the noise.
    PublicNorm { max_norm: f64 },
    /// Rows clipped to norm ≤ c.
    Clipped,
    /// Entries kept in [0, 1] (the GMM bounds the rows itself: gmm_synth).
    Unscaled,
}

impl RowScaling {
    /// A common norm when a DP mean norm lets the scale be restored, else the public
    /// maximum norm when there is one (non-negative rows only), else clipping.
    fn choose(unit_box: bool, nonneg: bool, released: &Released) -> Self {
        match (unit_box, nonneg, released.mean_norm) {
            (true, _, _) => RowScaling::UnitBox,
            (false, true, Some(mean_norm)) => RowScaling::CommonNorm { mean_norm },
            (false, true, None) if released.max_norm > 0.0 => RowScaling::PublicNorm {
                max_norm: released.max_norm,
            },
            _ => RowScaling::Clipped,
        }
    }

    /// The factor that restores the rows' scale after the noise (post-processing).
    fn rescale(self, clip: f64) -> Option<f64> {
        match self {
            RowScaling::CommonNorm { mean_norm } => Some(mean_norm / clip),
            RowScaling::PublicNorm { max_norm } => Some(max_norm / clip),
            RowScaling::UnitBox | RowScaling::Clipped | RowScaling::Unscaled => None,
        }
    }

    /// Scales the rows of `features` (width `dim`) to clip `c`: (rows clipped, entries
    /// clamped).
    fn apply(self, features: &mut Encoded, dim: usize, clip: f64) -> Result<(usize, usize)> {
        Ok(match self {
            RowScaling::UnitBox => match features {
                Encoded::Dense(f) => (0, clamp_unit_box(f)),
                Encoded::Compact(_) => {
                    return Err(Error::Data(
                        "internal: the unit box is applied to dense rows only".into(),
                    ))
                }
            },
            RowScaling::CommonNorm { .. } => {
                features.scale_rows_to_norm(dim, clip)?;
                (0, 0)
            }
            RowScaling::PublicNorm { max_norm } => {
                // ‖u‖ ≤ M for every encoded row; dividing by M/c puts every row in the ball
                // of radius c without changing any row's direction or relative length.
                // Entries clamped into [0, 1] first (a per-record map, a no-op on this
                // encoding), so the box bound of preprocess::rownorm never rests on the data.
                let s = (clip / max_norm) as f32;
                features.map_values(|x| x.min(1.0) * s);
                (features.clip_rows(dim, clip)?, 0)
            }
            RowScaling::Clipped => (features.clip_rows(dim, clip)?, 0),
            RowScaling::Unscaled => {
                // A per-record map, a no-op on this encoding: the box never rests on the data.
                features.map_values(|x| x.min(1.0));
                (0, 0)
            }
        })
    }

    /// The receipt's line on the rows (the unit box is described by DPMix's parameters).
    fn describe(self) -> &'static str {
        match self {
            RowScaling::CommonNorm { .. } => {
                "scaled to L2 norm c (every row), rescaled after the noise by the DP mean norm / c"
            }
            RowScaling::PublicNorm { .. } => {
                "entries clamped into [0, 1], divided by the public maximum norm M = √(feature columns) / c (no row changes direction or relative length), multiplied back by M / c after the noise; sensitivity: the diameter c·D/M of that box over l"
            }
            RowScaling::UnitBox | RowScaling::Clipped => "clipped to L2 norm ≤ c",
            RowScaling::Unscaled => {
                "every entry in [0, 1] (the columns mapped by their DP ranges); each row divided by B, the DP mean norm (else the public maximum norm), and clipped into the unit ball by the GMM"
            }
        }
    }
}

/// What the receipt says about the rows' encoding, its sensitivity and the decoding.
fn encoding_report(
    opts: &SynthOptions,
    scaling: RowScaling,
    nonneg: bool,
    acc_clip: f64,
    marginals: &[Option<ColumnMarginal>],
    denoise: bool,
    mix_choice: String,
) -> EncodingReport {
    EncodingReport {
        rows: scaling.describe(),
        nonnegative: nonneg,
        sensitivity: 2.0 * acc_clip / opts.mix as f64,
        rescale: scaling.rescale(opts.clip),
        decoding: {
            let m = marginals.iter().filter(|m| m.is_some()).count();
            let shrink = if opts.sigma_y.is_some() || !denoise {
                ""
            } else {
                "rows shrunk toward their class's mean by the empirical-Bayes factor max(v − σx², 0)/v per feature (post-processing); "
            };
            let numeric = if denoise && opts.sigma_y.is_none() {
                "mapped back linearly (pixels are clamped to their range when written)"
            } else {
                "mapped back linearly, then into their range [min, max], class by class, by an increasing map that keeps the class's mean (post-processing): non-integer columns x ↦ m + s·(x − m), s ≤ 1 fitting the 1 %–99 % quantiles, the rest clamped; integer columns x ↦ clamp(x + λ, min, max), λ keeping the mean, then rounded (a column whose range is one point is that constant)"
            };
            shrink.to_string()
                + &if m > 0 {
                    format!("{m} column(s) mapped onto their DP marginals (numeric: quantile mapping; categorical: levels in DP proportions); the others {numeric} (categorical: argmax)")
                } else {
                    format!("numeric columns {numeric}; categorical: argmax (no DP marginals: too few rows for their noise, or no target ε)")
                }
        },
        mix_choice,
    }
}

/// The standard adjacency's classes: the DP label set, counts and pool floors replace the
/// data's (each released class keeps its members; a class not in the data has none).
fn release_classes(
    cls: &mut Classes,
    opts: &SynthOptions,
    label_schema: Option<&[String]>,
    z: f64,
    delta_lab: f64,
    rng: &mut ReleaseRng,
) -> Result<ClassCountReport> {
    let params = CountRelease {
        mix: opts.mix,
        public_floor: opts.pool_floor,
        z,
        delta_thr: delta_lab,
    };
    let (dpc, rep) = dp_classes(&cls.labels, &cls.codes, label_schema, &params, rng)?;
    cls.members = dpc
        .level
        .iter()
        .map(|l| l.map_or_else(Vec::new, |c| cls.members[c as usize].clone()))
        .collect();
    cls.labels = dpc.labels.clone();
    cls.sizes = dpc.floors.clone();
    Ok(rep)
}

/// T and the rows each class gets: the requested T, else (standard adjacency) the rounded
/// sum of the DP class counts, split in their proportions, else the input's row count,
/// split evenly. Public either way.
fn rows_per_class(
    samples: Option<usize>,
    count_report: Option<&ClassCountReport>,
    k: usize,
    n: usize,
) -> (usize, Vec<usize>) {
    let t = match (samples, count_report) {
        (Some(t), _) => t,
        // Public by construction: the rounded sum of the DP class counts.
        (None, Some(r)) => r.noisy_counts.iter().sum::<f64>().round().max(k as f64) as usize,
        (None, None) => n,
    };
    let per_class_counts: Vec<usize> = match count_report {
        Some(r) => split_samples(t, &r.noisy_counts),
        None => vec![t.checked_div(k).unwrap_or(0); k],
    };
    (t, per_class_counts)
}

/// DP-CDA's automatic l (preprocess::auto) from public numbers only: the smallest pool (the
/// class sizes under keep-label, their DP floors under the standard adjacency), the most
/// rows any class gets (from T and the DP counts), d, c, and the budget left after the data
/// path's releases (`norm.curve`, at `norm.delta_rdp`). When l is the smallest pool (small
/// data, standard adjacency), every pool is cut to that size.
fn auto_l(
    opts: &SynthOptions,
    cls: &mut Classes,
    per_class_counts: &[usize],
    rows: &EncodedRows,
    norm: &Normalized,
    rng: &mut ReleaseRng,
) -> Result<(usize, f64)> {
    let smallest = *cls.sizes.iter().min().unwrap_or(&0);
    let per_class = per_class_counts.iter().copied().max().unwrap_or(0) as u64;
    let goal = Goal {
        epsilon: opts.epsilon.unwrap_or(f64::NAN),
        delta: norm.delta_rdp,
        orders: &opts.orders,
        preset: opts.preset,
        extra: Some(&norm.curve),
    };
    let d = norm.space.dim as u64;
    let (l, sigma_guess) = auto_mix(
        smallest as u64,
        per_class,
        d,
        opts.clip,
        rows.acc_clip,
        &goal,
    )?;
    if rows.fixed_pools && l == smallest {
        // l = the smallest pool: every pool is cut to that size (a random subset of the
        // pool, whose size is the public minimum of the DP floors), so every class has
        // sampling rate 1 (preprocess::auto).
        equalize_pools(&mut cls.members, &mut cls.sizes, l, rng);
    }
    Ok((l, sigma_guess))
}

/// The receipt's statement of how the automatic l was chosen.
fn auto_statement(l: usize) -> String {
    use crate::preprocess::auto::{CANDIDATES, FULL_POOL_BELOW, STRUCTURE_POOL_FROM};
    format!("auto: l = {l} over {CANDIDATES:?} (l ≤ smallest pool n / 2; below n = {FULL_POOL_BELOW} also l = n, pools cut to that size, sampling rate 1), σx(l) from the RDP accountant on its orders up to 128, to 0.1 %; l minimizes the spread of a synthetic row around its class mean, c²/l + d·σx(l)², or from n = {STRUCTURE_POOL_FROM} on that spread times the noise per unit of the row's own structure, (A + N)·N/A with A = c²/l·(n − l)/(n − 1) and N = d·σx(l)²; from public numbers only")
}

/// The options' own rules (budget, noise, normalization share, l, c), before the data are
/// read. `opts.mix` is already resolved (auto → a placeholder).
fn check_options(opts: &SynthOptions, mechanism: &Mechanism) -> Result<()> {
    check_delta(opts.delta)?;
    if let Some(e) = opts.epsilon {
        check_epsilon(e)?;
    }
    if let Some(s) = opts.sigma_x {
        check_sigma("sigma-x", s)?;
    }
    if let Some(s) = opts.sigma_y {
        check_sigma("sigma_y", s)?;
    }
    sigma_for_target(opts)?;
    if !(opts.normalize_share > 0.0 && opts.normalize_share < 1.0) {
        return Err(Error::param(
            "normalize-share",
            opts.normalize_share,
            "the share of ε for normalization must lie in (0, 1), e.g. 0.1",
        ));
    }
    match mechanism {
        Mechanism::Cda | Mechanism::DpMix(_) => check_mix(opts.mix as u64)?,
        Mechanism::Local | Mechanism::Projection(_) => {}
        Mechanism::Gmm(o) => gmm_synth::check_options(opts, o)?,
    }
    match mechanism {
        Mechanism::Cda | Mechanism::Local | Mechanism::Projection(_) | Mechanism::Gmm(_) => {
            check_clip(opts.clip)?
        }
        Mechanism::DpMix(_) => {}
    }
    Ok(())
}

/// Structural checks that need only the classes and T, before any budget is spent.
fn check_structure(
    mechanism: &Mechanism,
    opts: &SynthOptions,
    standard: bool,
    cls: &Classes,
    n: usize,
    t: usize,
) -> Result<()> {
    let k = cls.labels.len();
    match mechanism {
        Mechanism::Cda
        | Mechanism::DpMix(DpMixOptions {
            class_wise: true, ..
        }) => {
            if !standard {
                cda::check_pools(&cls.sizes, &cls.labels, opts.mix)?;
            }
            cda::check_samples(t as u64, k as u64)?;
        }
        Mechanism::DpMix(_) => {
            dpmix::accounting::check_structure(n as u64, opts.mix as u32, 1, t as u64)?;
        }
        Mechanism::Local | Mechanism::Projection(_) => {
            local::check_structure(n as u64, t as u64, opts.clip)?;
        }
        Mechanism::Gmm(_) => cda::check_samples(t as u64, k as u64)?,
    }
    match mechanism {
        Mechanism::DpMix(DpMixOptions {
            class_wise: true, ..
        }) if opts.sigma_y.is_some() => {
            return Err(Error::param(
                "sigma_y",
                opts.sigma_y.unwrap_or_default(),
                "the class-wise DPMix variant writes each row's class as its label and adds no label noise; leave σy out",
            ));
        }
        Mechanism::Local | Mechanism::Projection(_) if opts.sigma_y.is_some() => {
            return Err(Error::param(
                "sigma_y",
                opts.sigma_y.unwrap_or_default(),
                "local perturbation and random projection keep each row's label and add no label noise; leave σy out",
            ));
        }
        _ => {}
    }
    Ok(())
}

/// Whether a synthesis of `table` (`images`: an image set's) with `opts` by `mechanism` runs
/// the GMM: named, or chosen by the defaults ([`auto_gmm`], as the run's data path calls it).
/// The run reads the column types after the DP type decisions, so for a table with types
/// left to decide this is a forecast; an image set's pixel columns are typed by its schema,
/// and there it is the run's choice.
pub fn runs_gmm(opts: &SynthOptions, mechanism: &Mechanism, images: bool, table: &Table) -> bool {
    matches!(mechanism, Mechanism::Gmm(_)) || chosen_gmm(opts, mechanism, images, table).is_some()
}

/// The defaults' GMM ([`auto_gmm`]) for `opts` as given (an automatic l not yet resolved).
fn chosen_gmm(
    opts: &SynthOptions,
    mechanism: &Mechanism,
    images: bool,
    table: &Table,
) -> Option<Mechanism> {
    let early = early_mix(opts, mechanism);
    let resolved = early.as_ref().unwrap_or(opts);
    auto_gmm(resolved, mechanism, early.is_some(), images, table)
}

/// The options with `mix` 0 (auto) resolved as far as it can be before normalization: DP-CDA
/// with a target ε chooses l after normalization (preprocess::auto; 1 until then, so no class
/// is refused for being smaller than a guess); the other mechanisms use a fixed order. None:
/// `mix` was given.
fn early_mix(opts: &SynthOptions, mechanism: &Mechanism) -> Option<SynthOptions> {
    (opts.mix == MIX_AUTO).then(|| SynthOptions {
        mix: if matches!(mechanism, Mechanism::Cda)
            && opts.epsilon.is_some()
            && opts.sigma_x.is_none()
        {
            1
        } else {
            FIXED_MIX_FALLBACK
        },
        ..opts.clone()
    })
}

/// The noise multiplier of the image shape decision ([`crate::images::shape`]): the type
/// decision's standard share [`TYPES_SHARE`] of ε (images have no column type to decide),
/// else [`DEFAULT_SHAPE_Z`].
pub fn image_shape_z(opts: &SynthOptions) -> f64 {
    shape_z(opts, TYPES_SHARE)
}

/// Noise multiplier of a small Gaussian release of the data path given a share of ε: its RDP
/// α/(2z²) is `share`·ε at the order α* = 1 + 2·ln(1/δ)/ε where a release at ε typically
/// converts (half of ε for the δ term). Sizing only: the final guarantee composes the exact
/// curves and the mixing's calibration absorbs the cost, so ε never exceeds the target.
fn shape_z(opts: &SynthOptions, share: f64) -> f64 {
    match opts.epsilon {
        Some(e) => shape_z_at(e, opts.delta, share),
        None => DEFAULT_SHAPE_Z,
    }
}

/// The column-type decision's noise multiplier for `table` (as read): [`types_z_at`] at the
/// target ε, else [`DEFAULT_SHAPE_Z`].
fn types_z(opts: &SynthOptions, table: &Table, schema: Option<&Schema>) -> f64 {
    match opts.epsilon {
        Some(e) => types_z_at(e, opts.delta, table, schema, Release::TypesAndIndicators),
        None => DEFAULT_SHAPE_Z,
    }
}

/// The column-type decision's noise multiplier at a target (`epsilon`, `delta`) for `table`
/// (as read): a share [`TYPES_SHARE`] of ε, raised (up to [`MAX_TYPES_SHARE`]) where the
/// table's record count (public) is too small for that share to tell a text column and the
/// larger share suffices ([`decision_z`]). The federated parties size their decision with it
/// too.
pub(crate) fn types_z_at(
    epsilon: f64,
    delta: f64,
    table: &Table,
    schema: Option<&Schema>,
    release: Release,
) -> f64 {
    decision_z(
        table.n_rows,
        undecided_columns(table, schema),
        release,
        shape_z_at(epsilon, delta, TYPES_SHARE),
        shape_z_at(epsilon, delta, MAX_TYPES_SHARE),
    )
}

/// [`shape_z`] at a target (`epsilon`, `delta`).
fn shape_z_at(epsilon: f64, delta: f64, share: f64) -> f64 {
    let alpha = 1.0 + 2.0 * (1.0 / delta).ln() / epsilon;
    (alpha / (2.0 * share * epsilon)).sqrt().max(0.5)
}

/// The column types the schema leaves open, decided under DP (a share of ε) or from the data
/// (declared unprotected), with the decision's RDP curve.
fn decide_types(
    table: Cow<'_, Table>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    rng: &mut ReleaseRng,
) -> Result<(Table, DecisionReport, RdpCurve)> {
    let (decided, decisions) = match opts.column_types {
        ColumnTypes::Dp => {
            // With nothing to decide, decide_columns draws nothing and does not read z.
            let z = types_z(opts, &table, schema);
            decide_columns(table, schema, Release::TypesAndIndicators, z, rng)?
        }
        ColumnTypes::Data => decide_from_data(table, schema),
    };
    let curve = RdpCurve::gaussian_or_zero(decisions.noise_multiplier, &opts.orders)?;
    Ok((decided, decisions, curve))
}

/// The encoded rows: dense, or compact ([`CompactRows`]: the same values without the
/// one-hot zeros) for DP-CDA on a table with categorical columns.
enum Encoded {
    Dense(Vec<f32>),
    Compact(CompactRows),
}

impl Encoded {
    /// Applies `f` (which maps 0 to 0) to every entry.
    fn map_values(&mut self, f: impl Fn(f32) -> f32) {
        match self {
            Encoded::Dense(v) => v.iter_mut().for_each(|x| *x = f(*x)),
            Encoded::Compact(c) => c.map_values(f),
        }
    }

    /// [`clip_rows`] on rows of width `dim`.
    fn clip_rows(&mut self, dim: usize, clip: f64) -> Result<usize> {
        match self {
            Encoded::Dense(v) => clip_rows(v, dim, clip),
            Encoded::Compact(c) => c.clip_rows(clip),
        }
    }

    /// [`scale_rows_to_norm`] on rows of width `dim`.
    fn scale_rows_to_norm(&mut self, dim: usize, clip: f64) -> Result<usize> {
        match self {
            Encoded::Dense(v) => scale_rows_to_norm(v, dim, clip),
            Encoded::Compact(c) => c.scale_rows_to_norm(clip),
        }
    }

    /// Appends a zero row of width `dim`.
    fn push_zero_row(&mut self, dim: usize) {
        match self {
            Encoded::Dense(v) => v.resize(v.len() + dim, 0.0),
            Encoded::Compact(c) => c.push_zero_row(),
        }
    }

    /// The rows as the mixer reads them.
    fn rows(&self) -> cda::Rows<'_> {
        match self {
            Encoded::Dense(v) => cda::Rows::Dense(v),
            Encoded::Compact(c) => cda::Rows::Compact(c),
        }
    }

    /// The dense matrix (the mechanisms other than DP-CDA are given dense rows).
    fn dense(&self) -> Result<&[f32]> {
        match self {
            Encoded::Dense(v) => Ok(v),
            Encoded::Compact(_) => Err(Error::Data(
                "internal: this mechanism reads dense rows".into(),
            )),
        }
    }
}

/// The encoded rows in the mechanism's bounded set, and what the accounting and the receipt
/// need to know about how they got there.
struct EncodedRows {
    features: Encoded,
    scaling: RowScaling,
    /// Every entry ≥ 0 (the √2·c bound; preprocess::rownorm).
    nonneg: bool,
    rows_clipped: usize,
    entries_clamped: usize,
    /// The clip norm the accountant is given (the encoding's sensitivity bound).
    acc_clip: f64,
    /// The classes' members were replaced by fixed-size pools, padded with a zero row where a
    /// DP floor exceeds the class (standard adjacency).
    fixed_pools: bool,
}

/// Encodes `table` in `norm`'s feature space (the unit box for DPMix), brings the rows into
/// the mechanism's bounded set ([`RowScaling`]) and, under the standard adjacency, replaces
/// each class's members by its fixed-size pool (zero rows where a DP floor exceeds the class).
fn encode_rows(
    table: &Table,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    norm: &mut Normalized,
    cls: &mut Classes,
    rng: &mut ReleaseRng,
) -> Result<EncodedRows> {
    let is_cda = matches!(mechanism, Mechanism::Cda);
    // The GMM reads DP-CDA's non-negative rows, dense, unscaled (entries in [0, 1]) and
    // without pools.
    let cda_rows = is_cda || matches!(mechanism, Mechanism::Gmm(_));
    let standard = is_standard(opts, mechanism) && is_cda;
    let unit_box = matches!(mechanism, Mechanism::DpMix(_));
    if unit_box {
        norm.space.to_unit_box()?;
        if opts.normalize == NormalizeMode::Data {
            norm.report.warnings.push("dpmix maps numeric columns onto [0, 1] with their observed (unprotected) minimum and maximum instead of z-scores".into());
        }
    }
    // Room for the padding row of the standard adjacency's pools (appended below). DP-CDA
    // reads compact rows where the table has categorical columns (the same values).
    let spare = usize::from(standard);
    let compact = if is_cda {
        CompactRows::encode(&norm.space, table, spare)?
    } else {
        None
    };
    let mut features = match compact {
        Some(c) => Encoded::Compact(c),
        None => Encoded::Dense(norm.space.encode_with_room(table, spare)?),
    };
    // DP-CDA on a non-negative encoding (ranges public or DP, one-hot): rows scaled to norm c
    // when a DP mean norm lets the scale be restored, clipped otherwise; either way the
    // replace-one sensitivity is √2·c/l (proof note in preprocess::rownorm).
    // Public: the encoding (ranges fixed before the data are read, inputs clamped into them,
    // one-hot segments) is non-negative by construction outside `data` mode; negative entries
    // are set to 0 row by row anyway (a per-record map), so the √2·c bound never rests on the
    // data.
    let nonneg = cda_rows && opts.normalize != NormalizeMode::Data;
    if nonneg {
        features.map_values(|x| x.max(0.0));
    }
    let space = &norm.space;
    let scaling = if matches!(mechanism, Mechanism::Gmm(_)) {
        RowScaling::Unscaled
    } else {
        RowScaling::choose(unit_box, nonneg, &norm.released)
    };
    let (rows_clipped, entries_clamped) = scaling.apply(&mut features, space.dim, opts.clip)?;
    // Rows in the box [0, c/M]^d (one-hot segments aside) differ by at most c·D/M ≤ √2·c.
    let acc_clip = match scaling {
        RowScaling::PublicNorm { max_norm } => {
            box_accounting_clip(opts.clip, max_norm, box_diameter(space))
        }
        _ => accounting_clip(opts.clip, nonneg),
    };

    if standard {
        // Fixed-size pools; padding rows are the zero vector (the clip ball's centre).
        features.push_zero_row(space.dim);
        let zero_row = u32::try_from(table.n_rows)
            .map_err(|_| Error::Data("the table has too many rows".into()))?;
        cls.members = build_pools(&cls.members, &cls.sizes, zero_row, rng);
    }
    Ok(EncodedRows {
        features,
        scaling,
        nonneg,
        rows_clipped,
        entries_clamped,
        acc_clip,
        fixed_pools: standard,
    })
}

/// A public class-size floor is a parameter of the standard adjacency's DP class counts;
/// anywhere else it is refused rather than ignored.
fn no_pool_floor(opts: &SynthOptions) -> Result<()> {
    match opts.pool_floor {
        Some(floor) => Err(Error::param(
            "pool_floor",
            floor,
            "a public class-size floor applies to DP-CDA under the standard adjacency; drop it",
        )),
        None => Ok(()),
    }
}

/// The receipt's word on l when it was not chosen by `auto_l`.
fn given_mix_statement(opts: &SynthOptions, auto_requested: bool) -> String {
    if auto_requested {
        format!(
            "fixed l = {} (auto applies to DP-CDA with a target ε)",
            opts.mix
        )
    } else {
        "given".to_string()
    }
}

/// The ε terms of the thresholded releases (categorical levels, labels): ln(1/(1 − δ_thr)).
fn threshold_terms(norm: &Normalized, counts: Option<&ClassCountReport>) -> f64 {
    norm.report
        .dp_histogram
        .as_ref()
        .map_or(0.0, |h| h.epsilon_categories)
        + counts.map_or(0.0, |r| r.epsilon_threshold)
}

/// The target ε left for the mechanism once the thresholds' terms are paid; an error when
/// they spend it all (a given σx has no target: NaN passes through).
fn target_after_thresholds(opts: &SynthOptions, target: f64, eps_terms: f64) -> Result<f64> {
    let target = target - eps_terms;
    if opts.sigma_x.is_none() && (target.is_nan() || target <= 0.0) {
        return Err(Error::param(
            "delta",
            opts.delta,
            "δ is so large that the thresholds alone spend the target ε; lower δ",
        ));
    }
    Ok(target)
}

/// The standard adjacency (label included) is implemented for DP-CDA and the GMM; the other
/// mechanisms keep their own, declared in the receipt.
fn is_standard(opts: &SynthOptions, mechanism: &Mechanism) -> bool {
    opts.adjacency == Adjacency::Standard && matches!(mechanism, Mechanism::Cda | Mechanism::Gmm(_))
}

/// What the data path hands the release: the records typed, their missing cells encoded,
/// the classes (and their DP counts), the DP normalization and the encoded rows, with the
/// options as resolved (an automatic l chosen).
struct Prepared {
    /// The options with an automatic l resolved.
    opts: SynthOptions,
    /// The mechanism that runs: the one asked for, or the GMM where [`auto_gmm`] chose it.
    mechanism: Mechanism,
    /// How l was chosen, in words (the receipt).
    mix_choice: String,
    /// The automatic l's ranking σx (None when l was given).
    sigma_guess: Option<f64>,
    /// The label's column in the input's order (the generation writes rows in that order).
    original_label_index: usize,
    standard: bool,
    decisions: DecisionReport,
    /// The RDP of the column-type decision (zero when the types are public).
    types_curve: RdpCurve,
    /// What the receipt and the plan need of the table with its missing cells encoded: its
    /// rows, the rows dropped and the label's name. The table itself is dropped by
    /// [`prepare`] once the rows are encoded: the accounting and the generation never read it.
    rows_used: usize,
    rows_dropped: usize,
    label_name: String,
    missing_codec: crate::preprocess::missing::MissingCodec,
    missing_report: MissingReport,
    cls: Classes,
    /// The DP class counts (standard adjacency) and their noise multiplier.
    count_report: Option<ClassCountReport>,
    counts_z: Option<f64>,
    counts_curve: RdpCurve,
    /// The RDP of a release made before the synthesis ([`SynthOptions::prior`]).
    prior_curve: Option<RdpCurve>,
    /// Classes, input rows, rows requested and the rows each class gets.
    k: usize,
    n: usize,
    t: usize,
    per_class_counts: Vec<usize>,
    norm: Normalized,
    rows: EncodedRows,
}

impl Prepared {
    /// (input rows, classes, encoded dimension, rows requested).
    fn sizes(&self) -> (usize, usize, usize, usize) {
        (self.n, self.k, self.norm.space.dim, self.t)
    }

    /// T / K: the rows each class gets with equal shares.
    fn per_class(&self) -> usize {
        self.t.checked_div(self.k).unwrap_or(0)
    }
}

/// The data path of [`synthesize_dyn`]: checks, column types, missing values, classes,
/// normalization, encoding and the automatic l. Every data-dependent step in it is either
/// public (schema) or a DP release composed into a curve it returns.
fn prepare(
    table: Cow<'_, Table>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    images: bool,
    rng: &mut ReleaseRng,
) -> Result<Prepared> {
    // ---- checks ------------------------------------------------------------------------
    // The coupling charge of the exact noise counts on at most 2^48 draws (pld_plan): half
    // for the data path, bounded here before any is made, half for the mixing (below).
    check_data_draws(table.n_rows, table.n_cols(), schema_levels(schema))?;
    let given = opts;
    let resolved_early = early_mix(opts, mechanism);
    let auto_mix_requested = resolved_early.is_some();
    let opts = resolved_early.as_ref().unwrap_or(opts);
    check_options(opts, mechanism)?;
    let orders = &opts.orders;
    let original_label_index = table.label_index.ok_or_else(|| {
        Error::Data("no label column was chosen; give the label column (label)".into())
    })?;
    let standard = is_standard(opts, mechanism);
    let label_schema = schema_labels(&table, schema);
    let delta_lab = label_delta(opts, standard, label_schema.is_some());
    let delta_avail = opts.delta - delta_lab;

    // ---- column types and missing values (public or DP; never dropping a record) -------
    let (decided, decisions, types_curve) = decide_types(table, schema, opts, rng)?;
    let (encoded, effective_schema, missing_codec, missing_report): (_, _, _, MissingReport) =
        encode_missing(decided, &decisions.indicators(), schema)?;
    let table = &encoded;
    let schema = effective_schema.as_ref();

    let mut cls = classes_of(table)?;
    let (count_report, counts_z) = if standard {
        let z_c = shape_z(opts, COUNTS_SHARE);
        let rep = release_classes(&mut cls, opts, label_schema.as_deref(), z_c, delta_lab, rng)?;
        (Some(rep), Some(z_c))
    } else {
        no_pool_floor(opts)?;
        (None, None)
    };
    let counts_curve = RdpCurve::gaussian_or_zero(counts_z, orders)?;
    let prior_curve = opts
        .prior
        .map(|p| RdpCurve::gaussian(p.noise_multiplier, orders))
        .transpose()?;
    let k = cls.labels.len();
    let n = table.n_rows;
    let (t, per_class_counts) = rows_per_class(opts.samples, count_report.as_ref(), k, n);
    // The GMM for a wide numeric table, when DP-CDA was left to its defaults: a choice from
    // public numbers and DP releases only (auto_gmm). Its data path is DP-CDA's (the same
    // class counts; the normalization without marginals, which it releases itself).
    // `runs_gmm` forecasts the same choice.
    let auto = chosen_gmm(given, mechanism, images, table);
    let mechanism = auto.as_ref().unwrap_or(mechanism);
    check_structure(mechanism, opts, standard, &cls, n, t)?;

    // ---- normalization, encoding, clipping ---------------------------------------------
    let mut norm = normalize(
        table,
        schema,
        opts,
        delta_avail,
        extra_stats(table, opts, mechanism),
        rng,
    )?;
    indicator_marginals(table, &decisions, &mut norm.released);
    let is_cda = matches!(mechanism, Mechanism::Cda);
    let rows = encode_rows(table, opts, mechanism, &mut norm, &mut cls, rng)?;
    // The encoded rows hold what the release reads: the table's memory is given back before
    // the accounting (whose PLD grids are the data path's next large allocation) and the
    // generation. What the receipt needs of it is kept.
    let (rows_used, rows_dropped, label_name) = (
        encoded.n_rows,
        encoded.rows_dropped,
        encoded.names[cls.index].clone(),
    );
    drop(encoded);
    let (opts, mix_choice, sigma_guess) = if auto_mix_requested && is_cda && opts.sigma_x.is_none()
    {
        let (l, guess) = auto_l(opts, &mut cls, &per_class_counts, &rows, &norm, rng)?;
        let resolved = SynthOptions {
            mix: l,
            ..opts.clone()
        };
        (resolved, auto_statement(l), Some(guess))
    } else if let Mechanism::Gmm(o) = mechanism {
        let statement = gmm_synth::choice_statement(auto.is_some(), images, o, norm.space.dim, n);
        (opts.clone(), statement, None)
    } else {
        let statement = given_mix_statement(opts, auto_mix_requested);
        (opts.clone(), statement, None)
    };
    Ok(Prepared {
        opts,
        mechanism: mechanism.clone(),
        mix_choice,
        sigma_guess,
        original_label_index,
        standard,
        decisions,
        types_curve,
        rows_used,
        rows_dropped,
        label_name,
        missing_codec,
        missing_report,
        cls,
        count_report,
        counts_z,
        counts_curve,
        prior_curve,
        k,
        n,
        t,
        per_class_counts,
        norm,
        rows,
    })
}

/// The accounting of a prepared release: the plan of `mechanism` (σ calibrated to the
/// target, or the ε of a given σ, by PLD or RDP) and the guarantee of everything released.
fn account(
    p: &Prepared,
    mechanism: &Mechanism,
    denoise: bool,
) -> Result<(Plan, receipt::Guaranteed)> {
    let (opts, norm, cls) = (&p.opts, &p.norm, &p.cls);
    let (n, k, d, t) = p.sizes();
    let rows = &p.rows;
    let delta_rdp = norm.delta_rdp;
    let eps_terms = threshold_terms(norm, p.count_report.as_ref());
    let (given_sigma, target) = sigma_for_target(opts)?;
    let target = target_after_thresholds(opts, target, eps_terms)?;
    let mut extra_curve = compose_data_path(&norm.curve, &p.types_curve, &p.counts_curve)?;
    if let Some(c) = &p.prior_curve {
        extra_curve = extra_curve.compose(c)?;
    }
    let label_free_public = vec![
        "the set of class labels and the number of rows in each class (invariant under the adjacency)".to_string(),
        "the number of input rows and the column names and types".to_string(),
    ];
    let rows_total: usize = p.per_class_counts.iter().sum();
    check_mix_draws(
        rows_total,
        match mechanism {
            Mechanism::DpMix(_) => d + k,
            _ => d,
        },
    )?;
    let encoding = encoding_report(
        opts,
        rows.scaling,
        rows.nonneg,
        rows.acc_clip,
        &norm.released.marginals,
        denoise,
        p.mix_choice.clone(),
    );
    // DP-CDA's paper mode: the label noise's term (√2/l)²/σy² of 1/z².
    let label_term = opts
        .sigma_y
        .map_or(0.0, |sy| 2.0 / ((opts.mix * opts.mix) as f64 * sy * sy));
    let extra_zs: Vec<f64> = [
        p.decisions.noise_multiplier,
        p.counts_z,
        norm.z,
        opts.prior.map(|r| r.noise_multiplier),
    ]
    .into_iter()
    .flatten()
    .collect();
    let inputs = PlanInputs {
        label_name: &p.label_name,
        opts,
        mechanism,
        cls,
        n,
        k,
        d,
        t,
        per_class: p.per_class(),
        per_class_counts: &p.per_class_counts,
        rows_total,
        pool_min: *cls.sizes.iter().min().unwrap_or(&0),
        acc_clip: rows.acc_clip,
        row_bound: norm.released.mean_norm.unwrap_or(norm.released.max_norm),
        rows_clipped: rows.rows_clipped,
        entries_clamped: rows.entries_clamped,
        encoding: &encoding,
        label_free_public: &label_free_public,
        given_sigma,
        sigma_guess: p.sigma_guess,
        target,
        delta_rdp,
        eps_terms,
        extra_curve: &extra_curve,
        extra_zs: &extra_zs,
        label_term,
        // The PLD accountant (DP-CDA, local, projection under the default preset): the
        // Gaussian releases composed into `extra_curve`, by noise multiplier
        // (mechanisms::pld_plan).
        use_pld: opts.accountant == AccountantKind::Pld && opts.preset == Preset::Default,
    };
    let plan = match mechanism {
        Mechanism::Cda if p.standard => plan_cda_standard(&inputs)?,
        Mechanism::Cda => plan_cda_keep_label(&inputs)?,
        Mechanism::DpMix(o) => plan_dpmix(&inputs, o)?,
        Mechanism::Local | Mechanism::Projection(_) => plan_baseline(&inputs)?,
        Mechanism::Gmm(o) => gmm_synth::plan(&inputs, o)?,
    };
    let guaranteed = receipt::guarantee(&plan, &extra_curve, opts, delta_rdp, eps_terms)?;
    Ok((plan, guaranteed))
}

/// The one pipeline behind [`synthesize`], [`synthesize_with`] and [`synthesize_denoised`]
/// (the CLI, the wasm API, images): the data path ([`prepare`]), the accounting
/// ([`account`]), then generation, decoding and the receipt.
fn synthesize_dyn(
    table: Cow<'_, Table>,
    schema: Option<&Schema>,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
    denoise: bool,
) -> Result<Receipt> {
    let p = prepare(table, schema, opts, mechanism, denoise, rng)?;
    let mechanism = &p.mechanism;
    let (plan, guaranteed) = account(&p, mechanism, denoise)?;
    let opts = &p.opts;
    let (n, k, d, t) = p.sizes();
    let per_class = p.per_class();

    // ---- generate, decode, emit --------------------------------------------------------
    emit::generate_and_emit(
        &emit::Generation {
            mechanism,
            opts,
            plan: &plan,
            space: &p.norm.space,
            missing_codec: &p.missing_codec,
            cls: &p.cls,
            per_class_counts: &p.per_class_counts,
            class_counts: match &p.count_report {
                Some(r) => r.noisy_counts.clone(),
                None => p.cls.members.iter().map(|m| m.len() as f64).collect(),
            },
            rescale: p.rows.scaling.rescale(opts.clip),
            marginals: &p.norm.released.marginals,
            denoise,
            label_index: p.original_label_index,
            n,
            k,
            d,
            t,
            per_class,
        },
        p.rows.features,
        rng,
        out,
    )?;

    Ok(receipt::assemble(
        receipt::ReceiptParts {
            opts,
            mechanism,
            standard: p.standard,
            plan,
            guaranteed,
            delta_rdp: p.norm.delta_rdp,
            norm_dp: p.norm.dp,
            norm_curve: &p.norm.curve,
            norm_report: p.norm.report,
            decisions: p.decisions,
            types_curve: &p.types_curve,
            count_report: p.count_report,
            counts_curve: &p.counts_curve,
            prior_curve: p.prior_curve.as_ref(),
            missing_report: p.missing_report,
            cls: p.cls,
            rows_used: p.rows_used,
            rows_dropped: p.rows_dropped,
            label_name: p.label_name,
            columns: p.missing_codec.names().to_vec(),
        },
        rng,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header sink runs once; a second call is an internal error, not a second header.
    #[test]
    fn the_header_is_written_once() {
        let mut got = Vec::new();
        let mut h = once(|names: &[String]| {
            got.extend_from_slice(names);
            Ok(())
        });
        h(&["a".to_string()]).unwrap();
        let e = h(&["b".to_string()]).unwrap_err().to_string();
        assert!(e.contains("header was written twice"), "{e}");
        drop(h);
        assert_eq!(got, ["a"]);
    }

    /// The draw budget of the coupling charge: 2^47 for the data path and 2^47 for the mixing,
    /// refused with named errors beyond (far beyond any real table).
    #[test]
    fn draw_budget_is_checked() {
        assert!(check_data_draws(60_000, 785, 0).is_ok());
        assert!(check_data_draws(1_000_000, 20, 1 << 20).is_ok());
        let e = check_data_draws(1 << 30, 1 << 18, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2^47") && e.contains("split"), "{e}");
        assert!(check_mix_draws(60_000, 784).is_ok());
        let e = check_mix_draws(1 << 30, 1 << 18).unwrap_err().to_string();
        assert!(e.contains("2^47") && e.contains("fewer rows"), "{e}");
    }

    #[test]
    fn mechanism_options_from_cli_names_and_json() {
        assert_eq!("cda".parse::<Mechanism>().unwrap(), Mechanism::Cda);
        assert_eq!(
            "projection".parse::<Mechanism>().unwrap(),
            Mechanism::Projection(ProjectionOptions { dim: None })
        );
        assert!("gan"
            .parse::<Mechanism>()
            .unwrap_err()
            .to_string()
            .contains("mechanism = gan"));
        let m: Mechanism =
            serde_json::from_str(r#"{"mechanism": "dpmix", "labels": "soft"}"#).unwrap();
        assert_eq!(
            m,
            Mechanism::DpMix(DpMixOptions {
                labels: LabelOutput::Soft,
                class_wise: false
            })
        );
        let p: Mechanism =
            serde_json::from_str(r#"{"mechanism": "projection", "dim": 8}"#).unwrap();
        assert_eq!(p, Mechanism::Projection(ProjectionOptions { dim: Some(8) }));
        let l: Mechanism = serde_json::from_str(r#"{"mechanism": "local"}"#).unwrap();
        assert_eq!(l.name(), "local-perturbation");
        assert!(
            serde_json::from_str::<Mechanism>(r#"{"mechanism": "dpmix", "lables": "soft"}"#)
                .is_err()
        );
        assert_eq!(
            serde_json::to_string(&Mechanism::Cda).unwrap(),
            r#"{"mechanism":"cda"}"#
        );
    }
}
