//! The federated DP-CDA pipelines (SPEC §1.3), shared by the CLI and the browser build:
//!
//! * [`simulate`]: one process holds all partitions (IID or class-skewed) and plays every
//!   party and the aggregator;
//! * [`keygen`], [`contribute`], [`aggregate`]: the real multi-party protocol with no server.
//!   Each party makes a key pair and shares the public half, makes its contribution file from
//!   its own data, and anyone averages the files.
//!
//! The mechanism, its noise and its privacy views are in [`crate::mechanisms::federated`].
//!
//! **Common space.** The parties' mixes must be averaged in one space. With a `--schema`
//! giving bounds (`--normalize public`), every party uses the same public bounds and the
//! correlated noise cancels exactly. Without one (`dp`, the default), each party estimates its
//! column ranges under DP from its own rows (cost composed into its accounting), rounded
//! outward to powers of two so that parties with similar data agree; the aggregator maps each
//! party's mixes back to original units before averaging. Where two parties' ranges (or
//! released categorical levels) still differ, part of the correlated noise does not cancel:
//! that residual is data-independent (it depends only on DP outputs and the noise), so privacy
//! does not suffer, and the receipt states its size per column. In a simulation, one DP
//! estimate over the union of the partitions is made (as a trusted simulator can), so the
//! space is common.

use crate::accountant::calibrate::smallest_z;
use crate::accountant::{check_delta, check_epsilon, Preset, RdpCurve};
use crate::data::{natural_cmp, Column, Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::cda::{self, accounting::check_mix, Mixer};
use crate::mechanisms::federated::pairwise::{
    coordinate_stream, level_coordinate, numeric_coordinate, PublicKeyFile, SecretKeyFile,
};
use crate::mechanisms::federated::zero_sum::{centered, PairStreams};
use crate::mechanisms::federated::{
    self as fed, calibrate_tau_g_for, check_clients, check_known, paper_claim, public_tau_e,
    sensitivity, Accounting, PaperClaim, Variant, ViewReport, Views,
};
use crate::mechanisms::gaussian::Gaussian;
use crate::preprocess::clip::{check_clip, clip_rows};
use crate::preprocess::encode::write_number;
use crate::preprocess::normalize::{dp_columns, DpHistogramBudget};
use crate::preprocess::{fit_feature_space, ColumnCodec, FeatureSpace, NormalizeMode};
use crate::receipt::{preset_parts, Guarantee, Randomness, BUILD_ID, VERSION};
use crate::rng::ReleaseRng;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use crate::mechanisms::federated::pairwise::keygen as keygen_files;

/// Format tag of a contribution file.
pub const CONTRIBUTION_FORMAT: &str = "privmix-federated-contribution-v2";

const DELTA_CATEGORY_SHARE: f64 = 0.1;

/// Options shared by `simulate` and `contribute` (CLI flags / JS options).
#[derive(Debug, Clone)]
pub struct FedOptions {
    /// CAPE or conventional.
    pub variant: Variant,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Mix order l.
    pub mix: usize,
    /// Clip norm c (normalized units); None: [`auto_clip`] of the header.
    pub clip: Option<f64>,
    /// Rows to release, T (simulation default: the input's row count; required to contribute).
    pub samples: Option<usize>,
    /// Normalization (`dp` default, `public` with a schema; `data` in simulation only).
    pub normalize: NormalizeMode,
    /// Share of ε for DP normalization.
    pub normalize_share: f64,
    /// Accountant preset.
    pub preset: Preset,
    /// RDP orders.
    pub orders: Vec<u32>,
    /// Multi-party: an agreed lower bound on every party's smallest class. With it every party
    /// calibrates CAPE's independent noise for the same floor and relies on the others' noise;
    /// without it (None) each party uses its own smallest class and relies on no one else's
    /// noise (safe, but no gain over conventional).
    pub pool: Option<usize>,
    /// Multi-party: an agreed session label, bound into the pairwise streams.
    pub session: Option<String>,
    /// t: the aggregator is assumed to hold the pairwise seeds of this many parties. 1
    /// (default): the aggregator is one of the parties; 0: a seedless aggregator (an
    /// assumption the product cannot enforce, stated in the receipt); up to S − 1.
    pub aggregator_seeds: usize,
}

impl Default for FedOptions {
    fn default() -> Self {
        FedOptions {
            variant: Variant::Cape,
            epsilon: 10.0,
            delta: 1e-5,
            mix: 4,
            clip: None,
            samples: None,
            normalize: NormalizeMode::Dp,
            normalize_share: 0.1,
            preset: Preset::Default,
            orders: crate::accountant::default_orders(),
            pool: None,
            session: None,
            aggregator_seeds: 1,
        }
    }
}

/// How a simulation splits the rows among the parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Partition {
    /// Each class's rows shuffled and dealt round-robin (IID, stratified).
    Iid,
    /// Class-skewed: half of class k's rows go to party (k mod S), the rest are dealt
    /// round-robin.
    Skewed,
}

impl std::str::FromStr for Partition {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "iid" => Ok(Partition::Iid),
            "skewed" => Ok(Partition::Skewed),
            o => Err(Error::param(
                "partition",
                o,
                "use 'iid' (default) or 'skewed'",
            )),
        }
    }
}

fn check_options(opts: &FedOptions) -> Result<()> {
    check_epsilon(opts.epsilon)?;
    check_delta(opts.delta)?;
    check_mix(opts.mix as u64)?;
    if let Some(c) = opts.clip {
        check_clip(c)?;
    }
    if !(opts.normalize_share > 0.0 && opts.normalize_share < 1.0) {
        return Err(Error::param(
            "normalize-share",
            opts.normalize_share,
            "the share of ε for normalization must lie in (0, 1), e.g. 0.1",
        ));
    }
    crate::accountant::subsampled_gaussian::validate_orders(&opts.orders)?;
    Ok(())
}

/// The default clip norm: max(1, √m / 8) with m the number of feature columns of the header
/// (public, so every party computes the same value). Rows normalized to [0, 1] per feature
/// have norms up to √m; with c = 1 wide rows (images) are all scaled down a lot, so the signal
/// left is small next to the noise of the aggregate; √m/8 keeps more of it (MNIST: c = 3.5).
pub fn auto_clip(table: &Table) -> f64 {
    let m = table.n_cols().saturating_sub(1) as f64;
    (m.sqrt() / 8.0).max(1.0)
}

fn clip_of(table: &Table, opts: &FedOptions) -> f64 {
    opts.clip.unwrap_or_else(|| auto_clip(table))
}

/// Class labels and row indices per class of a labelled table.
fn classes_of(table: &Table) -> Result<(Vec<String>, Vec<Vec<u32>>)> {
    let li = table
        .label_index
        .ok_or_else(|| Error::Data("no label column was chosen; name the label column".into()))?;
    match &table.columns[li] {
        Column::Categorical { codes, levels } => {
            let mut classes = vec![Vec::new(); levels.len()];
            for (i, &c) in codes.iter().enumerate() {
                classes[c as usize].push(i as u32);
            }
            Ok((levels.clone(), classes))
        }
        Column::Numeric { .. } => Err(Error::Data(
            "internal: the label column must be categorical".into(),
        )),
    }
}

/// The normalization step, its RDP cost and the δ left for the RDP conversion.
struct Norm {
    space: FeatureSpace,
    report: crate::preprocess::NormalizationReport,
    curve: RdpCurve,
    z: Option<f64>,
    delta_rdp: f64,
}

fn normalize(
    table: &Table,
    schema: Option<&Schema>,
    opts: &FedOptions,
    rng: &mut ReleaseRng,
) -> Result<Norm> {
    let (m_num, m_cat) = dp_columns(table, schema);
    let dp_norm = opts.normalize == NormalizeMode::Dp && m_num + m_cat > 0;
    let delta_cat = if dp_norm && m_cat > 0 {
        opts.delta * DELTA_CATEGORY_SHARE
    } else {
        0.0
    };
    let delta_rdp = opts.delta - delta_cat;
    let (curve, budget, z) = if dp_norm {
        let cal = smallest_z(
            opts.epsilon * opts.normalize_share,
            delta_rdp,
            opts.preset.conversion(),
            |z| RdpCurve::gaussian(z, &opts.orders),
        )?;
        (
            RdpCurve::gaussian(cal.z, &opts.orders)?,
            Some(DpHistogramBudget {
                noise_multiplier: cal.z,
                delta_categories: delta_cat,
            }),
            Some(cal.z),
        )
    } else {
        (RdpCurve::zero(&opts.orders), None, None)
    };
    let (space, report) = fit_feature_space(table, schema, opts.normalize, budget.as_ref(), rng)?;
    if space.dim == 0 {
        return Err(Error::Data(
            "there are no feature columns besides the label; add at least one feature column"
                .into(),
        ));
    }
    Ok(Norm {
        space,
        report,
        curve,
        z,
        delta_rdp,
    })
}

/// Rounds x outward to a power of two (toward +∞ when `up`), with |x| ≤ 2⁻²⁰ mapped to 0.
fn snap(x: f64, up: bool) -> f64 {
    let tiny = 2f64.powi(-20);
    if x.abs() <= tiny {
        return 0.0;
    }
    let mag = x.abs().log2();
    // Away from zero when x has the sign we round toward, toward zero otherwise.
    let away = (x > 0.0) == up;
    let e = if away { mag.ceil() } else { mag.floor() };
    x.signum() * 2f64.powf(e)
}

/// Rounds every DP-estimated numeric range outward to powers of two and to include 0
/// (post-processing), so that parties with similar data end up with the same ranges. A column whose range DP could
/// not see (the data-independent fallback [0, 1]), or of which it saw only the bin around 0,
/// borrows the widest range estimated for the party's other numeric columns (still
/// post-processing of DP outputs): for images, where all pixels share a range and most pixels
/// are mostly 0, this keeps the parties' spaces equal so the correlated noise cancels.
/// Returns a warning per borrowed range.
fn snap_dp_ranges(
    space: &mut FeatureSpace,
    report: &crate::preprocess::NormalizationReport,
) -> Vec<String> {
    let mut fallback = Vec::new();
    let mut wide: Option<(f64, f64)> = None;
    for (i, (codec, col)) in space.codecs.iter_mut().zip(&report.columns).enumerate() {
        if let ColumnCodec::Numeric {
            offset,
            scale,
            lo,
            hi,
            ..
        } = codec
        {
            if col.source != "dp" {
                continue;
            }
            if *lo == 0.0 && *hi == 1.0 {
                fallback.push(i);
                continue;
            }
            // Outward to powers of two, and to include 0 (at most a factor 2 in scale): the
            // coarser the grid, the likelier parties agree.
            let l = snap(*lo, false).min(0.0);
            let h = snap(*hi, true).max(0.0);
            if h <= l {
                // Only the bin around 0 was seen: a (mostly) zero column whose other values
                // DP could not see; it borrows too.
                fallback.push(i);
                continue;
            }
            *lo = l;
            *hi = h;
            *offset = l;
            *scale = if h > l { h - l } else { 1.0 };
            wide = Some(wide.map_or((l, h), |(a, b)| (a.min(l), b.max(h))));
        }
    }
    let mut warnings = Vec::new();
    if let Some((l, h)) = wide.filter(|(l, h)| h > l) {
        for i in fallback {
            if let ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                ..
            } = &mut space.codecs[i]
            {
                *lo = l;
                *hi = h;
                *offset = l;
                *scale = h - l;
                warnings.push(format!(
                    "column '{}': DP saw too little of its range at this party; it uses the widest range estimated for the other numeric columns, [{l}, {h}]",
                    space.names[i]
                ));
            }
        }
    }
    warnings
}

// ---- receipts ------------------------------------------------------------------------

/// The views of the receipt, including the paper's claim.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReceiptViews {
    /// (a) one party's message alone (worst party).
    pub client: ViewReport,
    /// (b) the released aggregate.
    pub aggregate: ViewReport,
    /// All messages jointly, seen by an aggregator holding no pairwise seed (cross-check).
    pub aggregator: ViewReport,
    /// All messages plus the pairwise seeds of t parties (`parameters.aggregator_seeds`):
    /// the guarantee (top-level ε).
    pub party_aggregator: ViewReport,
    /// Aggregator + all other parties colluding: reported, not promised.
    pub collusion: ViewReport,
    /// The paper's Theorem 1 claim, labelled as such.
    pub paper_claim: PaperClaim,
}

/// One party's numbers in the receipt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartyReport {
    /// Party id (simulation: 1..=S).
    pub party: u32,
    /// Smallest class at this party (or the agreed floor), used for its sampling rate.
    pub pool: usize,
    /// p_s = l / pool.
    pub sampling_rate: f64,
    /// Its independent noise std τ_g (conventional: τ_s).
    pub tau_g: f64,
    /// Rows per class at this party (public under the adjacency).
    pub class_counts: Vec<usize>,
    /// ε of each view for this party's records.
    pub epsilon_client: f64,
    /// ε of the aggregate view for this party's records.
    pub epsilon_aggregate: f64,
    /// ε of the seedless aggregator's joint view for this party's records.
    pub epsilon_aggregator: f64,
    /// ε against an aggregator holding t parties' seeds (the guarantee) for this party's
    /// records.
    pub epsilon_party_aggregator: f64,
}

/// Noise the aggregation leaves uncancelled in one column.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResidualNoise {
    /// Column name.
    pub column: String,
    /// Largest std over the column's coordinates (numeric: original units; categorical:
    /// one-hot units before the argmax).
    pub std: f64,
    /// Why it does not cancel.
    pub cause: String,
}

/// Parameters in the receipt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FedParameters {
    /// Parties in the federation, S.
    pub clients: usize,
    /// t: the guarantee holds against an aggregator holding the pairwise seeds of this many
    /// parties (1: the aggregator is one of the parties; 0: a seedless aggregator, assumed).
    pub aggregator_seeds: usize,
    /// What `aggregator_seeds` means, in words.
    pub aggregator_trust: String,
    /// Parties whose contributions were averaged.
    pub parties_present: Vec<u32>,
    /// Parties missing (their correlated noise does not cancel).
    pub parties_missing: Vec<u32>,
    /// Mix order l.
    pub mix: usize,
    /// Clip c.
    pub clip: f64,
    /// Δ = 2c/l.
    pub sensitivity: f64,
    /// Correlated noise marginal std τ_e (0 for conventional).
    pub tau_e: f64,
    /// Noise std left in the released average, per coordinate: √(Σ τ_g²)/|P| (conventional:
    /// τ_pool, with τ_s = √S·τ_pool).
    pub tau_release: f64,
    /// Target ε.
    pub target_epsilon: f64,
    /// T requested.
    pub samples_requested: usize,
    /// T_k = ⌊T/K⌋.
    pub samples_per_class: usize,
    /// Rows written.
    pub rows_written: usize,
    /// K.
    pub classes: usize,
    /// Feature dimension.
    pub feature_dim: usize,
    /// Simulation partition scheme.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// The pool floor every party calibrated for: the agreed `--pool` (multi-party), or the
    /// smallest class over all parties (simulation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_floor: Option<usize>,
}

/// Accountant settings in the receipt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FedAccountant {
    /// Preset.
    pub preset: Preset,
    /// Its subsampling bound.
    pub bound: String,
    /// Its conversion.
    pub conversion: String,
    /// Orders.
    pub orders: Vec<u32>,
    /// Smallest δ used for the RDP conversion over the parties (δ minus the categorical
    /// threshold share).
    pub delta_rdp: f64,
}

/// The federated privacy receipt.
#[derive(Debug, Clone, Serialize)]
pub struct FedReceipt {
    /// The guarantee: the largest ε over the parties of the view of an aggregator holding t
    /// parties' pairwise seeds (`parameters.aggregator_seeds`; t = 1 by default).
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// "federated-dp-cda".
    pub mechanism: String,
    /// cape or conventional.
    pub variant: Variant,
    /// "simulation" or "multi-party".
    pub mode: String,
    /// Whether `epsilon` ≤ the target.
    pub meets_target: bool,
    /// What the guarantee covers.
    pub guarantee: Guarantee,
    /// Parameters.
    pub parameters: FedParameters,
    /// The views for the party whose records are least protected, and the paper's claim.
    pub views: ReceiptViews,
    /// Per-party numbers.
    pub per_party: Vec<PartyReport>,
    /// Noise that did not cancel (empty when everything cancelled).
    pub residual_noise: Vec<ResidualNoise>,
    /// Accountant.
    pub accountant: FedAccountant,
    /// Normalization (per party in multi-party mode).
    pub normalization: serde_json::Value,
    /// Input columns, label and classes.
    pub data: FedData,
    /// True when any randomness was seeded (not for release).
    pub seeded: bool,
    /// The randomness, as every receipt states it (`randomness.seeded`).
    pub randomness: Randomness,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Library version.
    pub version: String,
    /// Build id.
    pub build_id: String,
}

/// Input facts in the receipt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FedData {
    /// Columns.
    pub columns: Vec<String>,
    /// Label column.
    pub label: String,
    /// Class labels (output order).
    pub class_labels: Vec<String>,
    /// Rows used over all parties present.
    pub rows_used: usize,
    /// Rows dropped for missing values (NOT protected).
    pub rows_dropped: usize,
}

impl FedReceipt {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("receipt serializes")
    }
}

/// What t means, in words (the receipt's `aggregator_trust`).
pub fn aggregator_trust(known: usize) -> String {
    match known {
        0 => "a seedless aggregator: the guarantee ASSUMES the aggregator holds no party's pairwise seeds (it is not one of the parties and colludes with none); privmix cannot enforce this. Against any party aggregating, see views.party_aggregator of a receipt made with t = 1".into(),
        1 => "any one party may aggregate: the guarantee holds against an aggregator that is one of the parties (it holds its own pairwise seeds) and sees every message".into(),
        t => format!("the guarantee holds against an aggregator holding the pairwise seeds of {t} parties (itself and {} colluding parties) and seeing every message", t - 1),
    }
}

fn guarantee(variant: Variant, mode: &str, known: usize) -> Guarantee {
    let mut limitations = vec![
        "Gaussian noise is sampled in floating point (ziggurat); floating-point side channels are not mitigated".to_string(),
        format!("honest-but-curious model: parties follow the protocol; {} (views.party_aggregator; views.collusion is the aggregator colluding with every other party)", aggregator_trust(known)),
    ];
    if mode == "multi-party" {
        limitations.push("the per-file integrity digest detects corruption and edits that do not recompute it; it is not a signature".into());
    }
    if variant == Variant::Cape {
        limitations.push("the correlated noise cancels only in the average; any single message alone is protected by e_s + g_s (views.client)".into());
    }
    Guarantee {
        adjacency: "replace one record's features, keeping its label and its party".into(),
        public_information: vec![
            "the class labels, the number of rows of each class at each party, the number of parties".into(),
            "the column names and types".into(),
        ],
        unprotected: vec!["rows_dropped: rows with missing values are dropped before the mechanism; the count is computed from the raw data".into()],
        limitations,
    }
}

/// Writes the view of the least protected party and the per-party table.
struct PartyInput {
    party: u32,
    pool: usize,
    tau_g: f64,
    class_counts: Vec<usize>,
    norm_curve: RdpCurve,
    delta_rdp: f64,
}

#[allow(clippy::too_many_arguments)]
fn account_parties(
    variant: Variant,
    delta_l2: f64,
    tau_e: f64,
    s_total: usize,
    known: usize,
    mix: usize,
    compositions: u64,
    preset: Preset,
    orders: &[u32],
    parties: &[PartyInput],
) -> Result<(Views, Vec<PartyReport>)> {
    let tau_gs: Vec<f64> = parties.iter().map(|p| p.tau_g).collect();
    let mut worst: Option<(f64, Views)> = None;
    let mut reports = Vec::new();
    for (i, p) in parties.iter().enumerate() {
        let acc = Accounting {
            sampling_rate: mix as f64 / p.pool as f64,
            compositions,
            delta_rdp: p.delta_rdp,
            orders,
            preset,
            extra: Some(&p.norm_curve),
        };
        let v = fed::views_for(variant, delta_l2, &tau_gs, tau_e, s_total, i, known, &acc)?;
        reports.push(PartyReport {
            party: p.party,
            pool: p.pool,
            sampling_rate: acc.sampling_rate,
            tau_g: p.tau_g,
            class_counts: p.class_counts.clone(),
            epsilon_client: v.client.epsilon,
            epsilon_aggregate: v.aggregate.epsilon,
            epsilon_aggregator: v.aggregator.epsilon,
            epsilon_party_aggregator: v.party_aggregator.epsilon,
        });
        let e = headline(&v);
        if worst.as_ref().map_or(true, |(w, _)| e > *w) {
            worst = Some((e, v));
        }
    }
    let (_, v) = worst.ok_or_else(|| Error::Data("no party to account".into()))?;
    Ok((v, reports))
}

/// The guarantee: the view of an aggregator holding t parties' seeds. It dominates the
/// seedless joint view and views (a), (b) (they are its post-processings); the max is taken
/// anyway so the headline is never below any of them.
fn headline(v: &Views) -> f64 {
    v.party_aggregator
        .epsilon
        .max(v.aggregator.epsilon)
        .max(v.client.epsilon)
        .max(v.aggregate.epsilon)
}

// ---- simulation ----------------------------------------------------------------------

/// Splits each class's rows among `s` parties.
fn partition_rows(
    classes: &[Vec<u32>],
    s: usize,
    how: Partition,
    rng: &mut ReleaseRng,
) -> Vec<Vec<Vec<u32>>> {
    let mut out = vec![vec![Vec::new(); classes.len()]; s];
    for (k, rows) in classes.iter().enumerate() {
        let mut r = rows.clone();
        r.shuffle(rng);
        let (head, tail) = match how {
            Partition::Iid => (0, &r[..]),
            Partition::Skewed => (r.len() / 2, &r[r.len() / 2..]),
        };
        out[k % s][k].extend_from_slice(&r[..head]);
        for (i, &x) in tail.iter().enumerate() {
            out[i % s][k].push(x);
        }
    }
    out
}

/// Simulates a federation of `clients` parties on `table` (label column set), calling
/// `header` once and `row` for each released row; returns the receipt.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    table: &Table,
    schema: Option<&Schema>,
    opts: &FedOptions,
    clients: usize,
    partition: Partition,
    rng: &mut ReleaseRng,
    header: impl FnOnce(&[String]) -> Result<()>,
    mut row: impl FnMut(&[String]) -> Result<()>,
) -> Result<FedReceipt> {
    check_options(opts)?;
    check_clients(clients)?;
    check_known(opts.aggregator_seeds, clients)?;
    let (class_labels, classes) = classes_of(table)?;
    let k = class_labels.len();
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    cda::check_pools(&sizes, &class_labels, opts.mix)?;
    let t = opts.samples.unwrap_or(table.n_rows);
    if t < k {
        return Err(Error::param(
            "samples",
            t,
            format!("T must be at least the number of classes K = {k}; ask for {k} rows or more"),
        ));
    }
    let per_class = t / k;
    let parts = partition_rows(&classes, clients, partition, rng);
    for (s, p) in parts.iter().enumerate() {
        for (c, rows) in p.iter().enumerate() {
            if rows.len() < opts.mix {
                return Err(Error::param(
                    "clients",
                    clients,
                    format!(
                        "party {} gets only {} rows of class '{}', fewer than l = {}; use fewer parties, a smaller mix order, or the iid partition",
                        s + 1,
                        rows.len(),
                        class_labels[c],
                        opts.mix
                    ),
                ));
            }
        }
    }
    let clip = clip_of(table, opts);
    let norm = normalize(table, schema, opts, rng)?;
    let d = norm.space.dim;
    let mut features = norm.space.encode(table)?;
    clip_rows(&mut features, d, clip)?;

    let delta_l2 = sensitivity(opts.mix, clip);
    let pool = parts
        .iter()
        .flat_map(|p| p.iter().map(Vec::len))
        .min()
        .expect("at least one party and class");
    let acc = Accounting {
        sampling_rate: opts.mix as f64 / pool as f64,
        compositions: per_class as u64,
        delta_rdp: norm.delta_rdp,
        orders: &opts.orders,
        preset: opts.preset,
        extra: Some(&norm.curve),
    };
    let tau_e = match opts.variant {
        Variant::Cape => public_tau_e(
            delta_l2,
            per_class as u64,
            opts.epsilon,
            norm.delta_rdp,
            &opts.orders,
            opts.preset,
        )?,
        Variant::Conventional => 0.0,
    };
    let tau_g = calibrate_tau_g_for(
        opts.variant,
        clients,
        opts.aggregator_seeds,
        delta_l2,
        tau_e,
        &acc,
        opts.epsilon,
    )?;

    // ---- generate: every party's mix of (t, k), its noise, and the average -------------
    header(&norm.space.names)?;
    let mixer = Mixer::new(&features, d, opts.mix, Gaussian::new("tau-g", tau_g)?);
    let mut msgs = vec![0f64; clients * d];
    let mut e = vec![0f64; clients];
    let mut avg = vec![0f32; d];
    let mut cells = Vec::with_capacity(norm.space.names.len());
    for _t in 0..per_class {
        for (c, label) in class_labels.iter().enumerate() {
            for (s, part) in parts.iter().enumerate() {
                mixer.draw(&part[c], &mut msgs[s * d..(s + 1) * d], rng);
            }
            if opts.variant == Variant::Cape {
                for j in 0..d {
                    centered(rng, tau_e, &mut e)?;
                    for (s, es) in e.iter().enumerate() {
                        msgs[s * d + j] += es;
                    }
                }
            }
            for (j, a) in avg.iter_mut().enumerate() {
                let sum: f64 = (0..clients).map(|s| msgs[s * d + j]).sum();
                *a = (sum / clients as f64) as f32;
            }
            norm.space.decode_row(&avg, label, &mut cells);
            row(&cells)?;
        }
    }
    drop(features);

    // ---- receipt -----------------------------------------------------------------------
    let parties: Vec<PartyInput> = parts
        .iter()
        .enumerate()
        .map(|(s, p)| PartyInput {
            party: s as u32 + 1,
            pool,
            tau_g,
            class_counts: p.iter().map(Vec::len).collect(),
            norm_curve: norm.curve.clone(),
            delta_rdp: norm.delta_rdp,
        })
        .collect();
    let (views, per_party) = account_parties(
        opts.variant,
        delta_l2,
        tau_e,
        clients,
        opts.aggregator_seeds,
        opts.mix,
        per_class as u64,
        opts.preset,
        &opts.orders,
        &parties,
    )?;
    let rows_written = per_class * k;
    let claim = paper_claim(
        opts.variant,
        opts.mix,
        k,
        table.n_rows,
        delta_l2,
        tau_g,
        clients,
        rows_written as u64,
        opts.delta,
        &opts.orders,
    )?;
    let mut warnings = norm.report.warnings.clone();
    let mut guarantee = guarantee(opts.variant, "simulation", opts.aggregator_seeds);
    if opts.normalize == NormalizeMode::Data {
        warnings.push(norm.report.statement.clone());
        guarantee.unprotected.push(
            "normalization statistics (means, standard deviations, ranges, categories): normalize = data".into(),
        );
    }
    warnings.push("simulation: the normalization statistics are estimated once over the union of the partitions (as a trusted simulator can); a real federation estimates them per party (`federated contribute`)".into());
    if rng.seed().is_some() {
        warnings.push("seeded, not for release: this run used a fixed seed".into());
    }
    let epsilon = headline(&views);
    let (bound, conversion) = preset_parts(opts.preset);
    Ok(FedReceipt {
        epsilon,
        delta: opts.delta,
        mechanism: "federated-dp-cda".into(),
        variant: opts.variant,
        mode: "simulation".into(),
        meets_target: epsilon <= opts.epsilon,
        guarantee,
        parameters: FedParameters {
            clients,
            aggregator_seeds: opts.aggregator_seeds,
            aggregator_trust: aggregator_trust(opts.aggregator_seeds),
            parties_present: (1..=clients as u32).collect(),
            parties_missing: vec![],
            mix: opts.mix,
            clip,
            sensitivity: delta_l2,
            tau_e,
            tau_release: tau_g / (clients as f64).sqrt(),
            target_epsilon: opts.epsilon,
            samples_requested: t,
            samples_per_class: per_class,
            rows_written,
            classes: k,
            feature_dim: d,
            partition: Some(partition),
            // The simulator knows every party's classes: all parties are calibrated for the
            // smallest class over all of them, as if they had agreed on it with `--pool`.
            pool_floor: Some(pool),
        },
        views: ReceiptViews {
            client: views.client,
            aggregate: views.aggregate,
            aggregator: views.aggregator,
            party_aggregator: views.party_aggregator,
            collusion: views.collusion,
            paper_claim: claim,
        },
        per_party,
        residual_noise: vec![],
        accountant: FedAccountant {
            preset: opts.preset,
            bound: bound.into(),
            conversion: conversion.into(),
            orders: opts.orders.clone(),
            delta_rdp: norm.delta_rdp,
        },
        normalization: serde_json::to_value(&norm.report).expect("serializes"),
        data: FedData {
            columns: table.names.clone(),
            label: table.names[table.label_index.expect("checked")].clone(),
            class_labels,
            rows_used: table.n_rows,
            rows_dropped: table.rows_dropped,
        },
        seeded: rng.seed().is_some(),
        randomness: Randomness::of(rng),
        warnings,
        version: VERSION.into(),
        build_id: BUILD_ID.into(),
    })
}

// ---- real multi-party ----------------------------------------------------------------

/// Makes a key pair for `party`: (private key JSON, public key JSON).
pub fn keygen(party: u32, rng: &mut ReleaseRng) -> (String, String) {
    let (mut s, p) = keygen_files(party, rng);
    // A key made from a fixed seed is reproducible by anyone who knows the seed: it says so,
    // and every contribution made with it is marked seeded (not for release).
    s.seeded = rng.seed().is_some();
    (
        serde_json::to_string_pretty(&s).expect("serializes"),
        serde_json::to_string_pretty(&p).expect("serializes"),
    )
}

/// Everything the parties must agree on; its SHA-256 digest binds the pairwise streams and is
/// checked by the aggregator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreedParameters {
    /// Protocol version.
    pub protocol: String,
    /// cape or conventional.
    pub variant: Variant,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// l.
    pub mix: usize,
    /// c.
    pub clip: f64,
    /// T.
    pub samples: usize,
    /// Accountant preset.
    pub preset: Preset,
    /// Orders.
    pub orders: Vec<u32>,
    /// Normalization mode ("dp" or "public").
    pub normalize: String,
    /// Share of ε for DP normalization.
    pub normalize_share: f64,
    /// Agreed pool floor.
    pub pool: Option<usize>,
    /// Session label.
    pub session: Option<String>,
    /// t, the number of parties whose pairwise seeds the aggregator may hold (every party
    /// calibrates for it). None in files of earlier versions, which calibrated for a seedless
    /// aggregator; they are accounted with t = 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregator_seeds: Option<usize>,
    /// Input header (column names in order).
    pub columns: Vec<String>,
    /// Label column.
    pub label: String,
    /// Class labels.
    pub classes: Vec<String>,
    /// The schema, if any.
    pub schema: Option<Schema>,
    /// (party id, X25519 public key) of every party, sorted by id.
    pub parties: Vec<(u32, String)>,
}

impl AgreedParameters {
    /// Hex SHA-256 of the canonical JSON.
    pub fn digest(&self) -> String {
        hex(&Sha256::digest(
            serde_json::to_vec(self).expect("serializes"),
        ))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How one input column lives in a party's feature vector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColumnLayout {
    /// The label.
    Label,
    /// Numeric: value = offset + u·scale, clamp to [lo, hi].
    Numeric {
        /// Offset.
        offset: f64,
        /// Scale.
        scale: f64,
        /// Lower clamp.
        lo: f64,
        /// Upper clamp.
        hi: f64,
        /// Integral.
        integer: bool,
    },
    /// Categorical: one coordinate per released level.
    Categorical {
        /// Released levels.
        levels: Vec<String>,
    },
}

/// What the aggregator needs to account one party.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartyAccounting {
    /// Pool used (own smallest class, or the agreed floor).
    pub pool: usize,
    /// Rows per class.
    pub class_counts: Vec<usize>,
    /// Rows used.
    pub rows_used: usize,
    /// Rows dropped (NOT protected).
    pub rows_dropped: usize,
    /// Noise multiplier of the DP normalization histograms (None: none).
    pub normalization_noise_multiplier: Option<f64>,
    /// δ used for the RDP conversion.
    pub delta_rdp: f64,
    /// Independent noise std τ_g (conventional: τ_s).
    pub tau_g: f64,
    /// Correlated noise std τ_e (0 for conventional).
    pub tau_e: f64,
}

/// One party's contribution file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contribution {
    /// Format tag.
    pub format: String,
    /// This party's id.
    pub party: u32,
    /// Digest of `agreed`.
    pub context: String,
    /// The agreed parameters.
    pub agreed: AgreedParameters,
    /// Column layouts, in the input's column order.
    pub layout: Vec<ColumnLayout>,
    /// Coordinate names (`pairwise::numeric_coordinate`, `pairwise::level_coordinate`), in
    /// vector order.
    pub coordinates: Vec<String>,
    /// Rows: K·T_k, round-robin over classes (row r is class r mod K).
    pub rows: usize,
    /// Accounting inputs.
    pub accounting: PartyAccounting,
    /// This party's normalization report.
    pub normalization: serde_json::Value,
    /// Whether this contribution used a fixed seed (not for release).
    pub seeded: bool,
    /// rows × coordinates little-endian f32, base64.
    pub values: String,
    /// SHA-256 of this file's JSON with `integrity` empty.
    pub integrity: String,
}

impl Contribution {
    fn compute_integrity(&self) -> String {
        let mut c = self.clone();
        c.integrity = String::new();
        hex(&Sha256::digest(serde_json::to_vec(&c).expect("serializes")))
    }

    /// JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("serializes")
    }

    /// Parses a contribution and checks its format and integrity.
    pub fn from_json(text: &str, name: &str) -> Result<Self> {
        let c: Contribution = serde_json::from_str(text).map_err(|e| {
            Error::Data(format!(
                "{name}: not a privmix contribution file ({e}); pass the files written by `privmix federated contribute`"
            ))
        })?;
        c.check(name)?;
        Ok(c)
    }

    /// Format, integrity, agreed-digest and shape checks.
    pub fn check(&self, name: &str) -> Result<()> {
        if self.format != CONTRIBUTION_FORMAT {
            return Err(Error::Data(format!(
                "{name}: format '{}' is not '{CONTRIBUTION_FORMAT}'",
                self.format
            )));
        }
        if self.compute_integrity() != self.integrity {
            return Err(Error::Data(format!(
                "{name}: integrity check failed (the contribution of party {} was modified or damaged after `contribute` wrote it); ask that party to send it again",
                self.party
            )));
        }
        if self.agreed.digest() != self.context {
            return Err(Error::Data(format!(
                "{name}: the parameter digest does not match its parameters (tampered); ask party {} to contribute again",
                self.party
            )));
        }
        let n = self.rows * self.coordinates.len();
        let bytes = B64
            .decode(&self.values)
            .map_err(|e| Error::Data(format!("{name}: values are not valid base64 ({e})")))?;
        if bytes.len() != 4 * n {
            return Err(Error::Data(format!(
                "{name}: {} values for {} rows × {} coordinates",
                bytes.len() / 4,
                self.rows,
                self.coordinates.len()
            )));
        }
        Ok(())
    }

    fn decode_values(&self) -> Vec<f32> {
        let bytes = B64.decode(&self.values).unwrap_or_default();
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}

fn coordinate_names(space: &FeatureSpace) -> Vec<String> {
    let mut out = Vec::with_capacity(space.dim);
    for (codec, name) in space.codecs.iter().zip(&space.names) {
        match codec {
            ColumnCodec::Label => {}
            ColumnCodec::Numeric { .. } => out.push(numeric_coordinate(name)),
            ColumnCodec::Categorical { levels, .. } => {
                for l in levels {
                    out.push(level_coordinate(name, l));
                }
            }
        }
    }
    out
}

/// The pairwise correlated noise of party `me` for `rows` rows of each coordinate
/// (column-major: out[j·rows + r]), e_s = Σ_{s'>s} r − Σ_{s'<s} r.
pub fn pairwise_noise(
    me: &SecretKeyFile,
    peers: &[PublicKeyFile],
    context: &[u8],
    coordinates: &[String],
    rows: usize,
    tau_e: f64,
) -> Result<Vec<f64>> {
    let s = peers.len() + 1;
    let keys: Vec<(f64, [u8; 32])> = peers
        .iter()
        .map(|p| {
            Ok((
                if me.party < p.party { 1.0 } else { -1.0 },
                me.pair_key(p, context)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut out = vec![0f64; coordinates.len() * rows];
    for (j, name) in coordinates.iter().enumerate() {
        let streams = keys
            .iter()
            .map(|(sign, k)| Ok((*sign, coordinate_stream(k, name)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut ps = PairStreams::new(streams, tau_e, s)?;
        for v in &mut out[j * rows..(j + 1) * rows] {
            *v = ps.draw();
        }
    }
    Ok(out)
}

/// Makes this party's contribution from its own `table` (label column set). The caller must
/// then record `contribution.context` in the key's `used_contexts` (and save the key): a key is
/// refused for a context it already contributed to.
pub fn contribute(
    table: &Table,
    schema: Option<&Schema>,
    key: &SecretKeyFile,
    peers: &[PublicKeyFile],
    opts: &FedOptions,
    rng: &mut ReleaseRng,
) -> Result<Contribution> {
    check_options(opts)?;
    if opts.normalize == NormalizeMode::Data {
        return Err(Error::param(
            "normalize",
            "data",
            "a party's exact statistics would be revealed to the aggregator; use dp (default) or public with a schema",
        ));
    }
    let t = opts.samples.ok_or_else(|| {
        Error::param(
            "samples",
            "(none)",
            "every party must use the same T; give the sample count T",
        )
    })?;
    // Parties. This party's own public key among the peers is ignored (lists are often shared
    // verbatim by all parties).
    let own = key.public();
    let peers: Vec<PublicKeyFile> = peers
        .iter()
        .filter(|p| !(p.party == own.party && p.x25519.trim() == own.x25519.trim()))
        .cloned()
        .collect();
    let peers = &peers[..];
    let mut parties: Vec<(u32, String)> = vec![(key.party, key.x25519.trim().to_string())];
    for p in peers {
        if parties.iter().any(|(id, _)| *id == p.party) {
            return Err(Error::param(
                "peers",
                p.party,
                "two keys have the same party id; every party needs a distinct party id, and do not list your own key among the peers",
            ));
        }
        if parties.iter().any(|(_, k)| k == p.x25519.trim()) {
            return Err(Error::param(
                "peers",
                p.party,
                "this public key is listed twice (or is your own key)",
            ));
        }
        parties.push((p.party, p.x25519.trim().to_string()));
    }
    parties.sort();
    check_clients(parties.len())?;
    let clients = parties.len();
    check_known(opts.aggregator_seeds, clients)?;
    let (class_labels, classes) = classes_of(table)?;
    let k = class_labels.len();
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    cda::check_pools(&sizes, &class_labels, opts.mix)?;
    if t < k {
        return Err(Error::param(
            "samples",
            t,
            format!("T must be at least the number of classes K = {k}"),
        ));
    }
    let own_min = *sizes.iter().min().expect("a class");
    let pool = match opts.pool {
        Some(p) if p > own_min => {
            return Err(Error::param(
                "pool",
                p,
                format!("this party's smallest class has only {own_min} rows; the agreed floor must be at most every party's smallest class"),
            ))
        }
        Some(p) if p < opts.mix => {
            return Err(Error::param("pool", p, format!("the pool floor must be at least l = {}", opts.mix)))
        }
        Some(p) => p,
        None => own_min,
    };
    let clip = clip_of(table, opts);
    let agreed = AgreedParameters {
        protocol: CONTRIBUTION_FORMAT.into(),
        variant: opts.variant,
        epsilon: opts.epsilon,
        delta: opts.delta,
        mix: opts.mix,
        clip,
        samples: t,
        preset: opts.preset,
        orders: opts.orders.clone(),
        normalize: match opts.normalize {
            NormalizeMode::Public => "public".into(),
            _ => "dp".into(),
        },
        normalize_share: opts.normalize_share,
        pool: opts.pool,
        session: opts.session.clone(),
        aggregator_seeds: Some(opts.aggregator_seeds),
        columns: table.names.clone(),
        label: table.names[table.label_index.expect("checked")].clone(),
        classes: class_labels.clone(),
        schema: schema.cloned(),
        parties,
    };
    let context = agreed.digest();
    if key.used_contexts.contains(&context) {
        return Err(Error::param(
            "key",
            format!("of party {}", key.party),
            "this key already contributed to a run with exactly these parameters; its correlated noise would repeat. Make fresh keys (keygen) or agree on a new session label",
        ));
    }

    let mut norm = normalize(table, schema, opts, rng)?;
    let borrowed = snap_dp_ranges(&mut norm.space, &norm.report);
    norm.report.warnings.extend(borrowed);
    let d = norm.space.dim;
    let mut features = norm.space.encode(table)?;
    clip_rows(&mut features, d, clip)?;
    let per_class = t / k;
    let rows = per_class * k;
    let delta_l2 = sensitivity(opts.mix, clip);
    let acc = Accounting {
        sampling_rate: opts.mix as f64 / pool as f64,
        compositions: per_class as u64,
        delta_rdp: norm.delta_rdp,
        orders: &opts.orders,
        preset: opts.preset,
        extra: Some(&norm.curve),
    };
    let tau_e = match opts.variant {
        Variant::Cape => public_tau_e(
            delta_l2,
            per_class as u64,
            opts.epsilon,
            // The public δ (not this party's δ_rdp, which depends on its column types).
            opts.delta * (1.0 - DELTA_CATEGORY_SHARE),
            &opts.orders,
            opts.preset,
        )?,
        Variant::Conventional => 0.0,
    };
    // Without an agreed pool floor a party cannot know how much independent noise the others
    // add (theirs depends on their own class sizes), so it relies on none: its g_s alone meets
    // ε in the aggregator's joint view (Σ ⪰ τ_{g,s}² u_s u_sᵀ, so the others' noise only
    // helps). With `--pool`, every party calibrates for the same floor and they rely on each
    // other, which is what makes CAPE's release less noisy.
    let tau_g = if opts.pool.is_some() {
        calibrate_tau_g_for(
            opts.variant,
            clients,
            opts.aggregator_seeds,
            delta_l2,
            tau_e,
            &acc,
            opts.epsilon,
        )?
    } else {
        calibrate_tau_g_for(
            Variant::Conventional,
            clients,
            0,
            delta_l2,
            0.0,
            &acc,
            opts.epsilon,
        )?
    };

    // Mixes plus independent noise, row-major.
    let mixer = Mixer::new(&features, d, opts.mix, Gaussian::new("tau-g", tau_g)?);
    let mut values = vec![0f64; rows * d];
    for r in 0..rows {
        mixer.draw(&classes[r % k], &mut values[r * d..(r + 1) * d], rng);
    }
    drop(features);
    let coordinates = coordinate_names(&norm.space);
    if opts.variant == Variant::Cape {
        let e = pairwise_noise(key, peers, context.as_bytes(), &coordinates, rows, tau_e)?;
        for j in 0..d {
            for r in 0..rows {
                values[r * d + j] += e[j * rows + r];
            }
        }
    }
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in &values {
        bytes.extend_from_slice(&(*v as f32).to_le_bytes());
    }
    let layout = norm
        .space
        .codecs
        .iter()
        .map(|c| match c {
            ColumnCodec::Label => ColumnLayout::Label,
            ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                integer,
                ..
            } => ColumnLayout::Numeric {
                offset: *offset,
                scale: *scale,
                lo: *lo,
                hi: *hi,
                integer: *integer,
            },
            ColumnCodec::Categorical { levels, .. } => ColumnLayout::Categorical {
                levels: levels.clone(),
            },
        })
        .collect();
    let mut c = Contribution {
        format: CONTRIBUTION_FORMAT.into(),
        party: key.party,
        context,
        agreed,
        layout,
        coordinates,
        rows,
        accounting: PartyAccounting {
            pool,
            class_counts: sizes,
            rows_used: table.n_rows,
            rows_dropped: table.rows_dropped,
            normalization_noise_multiplier: norm.z,
            delta_rdp: norm.delta_rdp,
            tau_g,
            tau_e,
        },
        normalization: serde_json::to_value(&norm.report).expect("serializes"),
        // A seeded key makes every derived noise reproducible: the contribution is seeded too.
        seeded: rng.seed().is_some() || key.seeded,
        values: B64.encode(&bytes),
        integrity: String::new(),
    };
    c.integrity = c.compute_integrity();
    Ok(c)
}

/// [`aggregate`] collecting the output: (header, rows, receipt).
pub fn aggregate_rows(
    contributions: &[Contribution],
) -> Result<(Vec<String>, Vec<Vec<String>>, FedReceipt)> {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    let receipt = aggregate(
        contributions,
        |h| {
            header = h.to_vec();
            Ok(())
        },
        |r| {
            rows.push(r.to_vec());
            Ok(())
        },
    )?;
    Ok((header, rows, receipt))
}

/// Names the first agreed field on which `b` differs from `a`.
fn first_difference(a: &AgreedParameters, b: &AgreedParameters) -> String {
    let va = serde_json::to_value(a).expect("serializes");
    let vb = serde_json::to_value(b).expect("serializes");
    if let (Some(ma), Some(mb)) = (va.as_object(), vb.as_object()) {
        for (key, x) in ma {
            let y = mb.get(key).unwrap_or(&serde_json::Value::Null);
            if x != y {
                let short = |v: &serde_json::Value| {
                    let s = v.to_string();
                    if s.len() > 80 {
                        format!(
                            "{}…",
                            &s[..s.char_indices().nth(77).map_or(s.len(), |(i, _)| i)]
                        )
                    } else {
                        s
                    }
                };
                return format!("'{key}' ({} vs {})", short(x), short(y));
            }
        }
    }
    "their parameters".into()
}

/// Averages the contributions (any subset of the agreed parties), calling `header` once and
/// `row` for each released row; returns the receipt.
pub fn aggregate(
    contributions: &[Contribution],
    header: impl FnOnce(&[String]) -> Result<()>,
    mut row: impl FnMut(&[String]) -> Result<()>,
) -> Result<FedReceipt> {
    let first = contributions
        .first()
        .ok_or_else(|| Error::param("inputs", "(none)", "give at least one contribution file"))?;
    for c in contributions {
        c.check(&format!("contribution of party {}", c.party))?;
        if c.context != first.context {
            return Err(Error::Data(format!(
                "the contribution of party {} disagrees with party {} on {}; every party must run `contribute` with the same parameters, input columns, classes and peer keys",
                c.party,
                first.party,
                first_difference(&first.agreed, &c.agreed)
            )));
        }
        if !first.agreed.parties.iter().any(|(id, _)| *id == c.party) {
            return Err(Error::Data(format!(
                "party {} is not one of the agreed parties",
                c.party
            )));
        }
        if c.accounting.tau_e != first.accounting.tau_e || c.rows != first.rows {
            return Err(Error::Data(format!(
                "the contribution of party {} has a different correlated-noise level or row count than party {} (tampered?)",
                c.party, first.party
            )));
        }
        if c.layout.len() != first.agreed.columns.len() {
            return Err(Error::Data(format!(
                "the contribution of party {} has {} column layouts for {} columns",
                c.party,
                c.layout.len(),
                first.agreed.columns.len()
            )));
        }
    }
    let mut present: Vec<u32> = contributions.iter().map(|c| c.party).collect();
    present.sort_unstable();
    if let Some(w) = present.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::param(
            "inputs",
            w[0],
            "the same party's contribution is given twice; give each party's file once",
        ));
    }
    let agreed = &first.agreed;
    let s_total = agreed.parties.len();
    // Files of earlier versions carry no t: they are held to the product's default, t = 1.
    let known = agreed.aggregator_seeds.unwrap_or(1);
    check_known(known, s_total)?;
    let missing: Vec<u32> = agreed
        .parties
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !present.contains(id))
        .collect();
    let np = contributions.len() as f64;
    let k = agreed.classes.len();
    let rows = first.rows;
    let variant = agreed.variant;
    let tau_e = first.accounting.tau_e;

    // Output layout: per column, union over parties.
    enum Out {
        Label,
        Numeric {
            lo: f64,
            hi: f64,
            integer: bool,
            /// per party: (coordinate index, offset, scale)
            parts: Vec<(usize, f64, f64)>,
        },
        Categorical {
            levels: Vec<String>,
            /// per party: coordinate index of each union level, if released there
            parts: Vec<Vec<Option<usize>>>,
        },
    }
    let index_of = |c: &Contribution, key: &str| c.coordinates.iter().position(|x| x == key);
    let mut outs = Vec::new();
    let mut residual = Vec::new();
    let a_cov = if s_total > 1 {
        tau_e * tau_e * s_total as f64 / (s_total as f64 - 1.0)
    } else {
        0.0
    };
    // Residual variance of Σ_s w_s e_s with w over all S parties (missing: 0).
    let resid_std = |w_present: &[f64]| -> f64 {
        if variant == Variant::Conventional {
            return 0.0;
        }
        let mut w = w_present.to_vec();
        w.resize(s_total, 0.0);
        let mean = w.iter().sum::<f64>() / s_total as f64;
        let ss: f64 = w.iter().map(|x| (x - mean).powi(2)).sum();
        (a_cov * ss).sqrt()
    };
    for (j, name) in agreed.columns.iter().enumerate() {
        let kinds: Vec<&ColumnLayout> = contributions.iter().map(|c| &c.layout[j]).collect();
        match kinds[0] {
            ColumnLayout::Label => outs.push(Out::Label),
            ColumnLayout::Numeric { .. } => {
                let key = numeric_coordinate(name);
                let mut lo = f64::INFINITY;
                let mut hi = f64::NEG_INFINITY;
                let mut integer = true;
                let mut parts = Vec::new();
                for (c, l) in contributions.iter().zip(&kinds) {
                    match l {
                        ColumnLayout::Numeric {
                            offset,
                            scale,
                            lo: a,
                            hi: b,
                            integer: i,
                        } => {
                            lo = lo.min(*a);
                            hi = hi.max(*b);
                            integer &= *i;
                            let idx = index_of(c, &key).ok_or_else(|| {
                                Error::Data(format!("party {}: coordinate '{key}' is missing (damaged contribution)", c.party))
                            })?;
                            parts.push((idx, *offset, *scale));
                        }
                        _ => {
                            return Err(Error::Data(format!(
                                "party {} treats column '{name}' as categorical and party {} as numeric; give every party the same schema",
                                c.party, first.party
                            )))
                        }
                    }
                }
                let w: Vec<f64> = parts.iter().map(|p| p.2 / np).collect();
                let r = resid_std(&w);
                if r > 1e-9 * w.iter().fold(0.0f64, |m, x| m.max(*x)) {
                    residual.push(ResidualNoise {
                        column: name.clone(),
                        std: r,
                        cause: if missing.is_empty() {
                            "the parties' DP-estimated ranges differ, so their scaled correlated noise does not cancel exactly (give every party a schema with bounds to make it exact)".into()
                        } else {
                            "missing parties' correlated noise does not cancel".into()
                        },
                    });
                }
                outs.push(Out::Numeric {
                    lo,
                    hi,
                    integer,
                    parts,
                });
            }
            ColumnLayout::Categorical { .. } => {
                let mut levels: Vec<String> = Vec::new();
                for (c, l) in contributions.iter().zip(&kinds) {
                    match l {
                        ColumnLayout::Categorical { levels: ls } => {
                            for x in ls {
                                if !levels.contains(x) {
                                    levels.push(x.clone());
                                }
                            }
                        }
                        _ => {
                            return Err(Error::Data(format!(
                                "party {} treats column '{name}' as numeric and party {} as categorical; give every party the same schema",
                                c.party, first.party
                            )))
                        }
                    }
                }
                levels.sort_by(|a, b| natural_cmp(a, b));
                let parts: Vec<Vec<Option<usize>>> = contributions
                    .iter()
                    .map(|c| {
                        levels
                            .iter()
                            .map(|l| index_of(c, &level_coordinate(name, l)))
                            .collect()
                    })
                    .collect();
                let mut worst = 0.0f64;
                for li in 0..levels.len() {
                    let w: Vec<f64> = parts
                        .iter()
                        .map(|p| if p[li].is_some() { 1.0 / np } else { 0.0 })
                        .collect();
                    worst = worst.max(resid_std(&w));
                }
                if worst > 1e-12 {
                    residual.push(ResidualNoise {
                        column: name.clone(),
                        std: worst,
                        cause: if missing.is_empty() {
                            "the parties released different category levels under DP, so the correlated noise of a level some party lacks does not cancel".into()
                        } else {
                            "missing parties' correlated noise does not cancel".into()
                        },
                    });
                }
                outs.push(Out::Categorical { levels, parts });
            }
        }
    }

    // ---- average and decode -------------------------------------------------------------
    header(&agreed.columns)?;
    let vals: Vec<Vec<f32>> = contributions.iter().map(|c| c.decode_values()).collect();
    let dims: Vec<usize> = contributions.iter().map(|c| c.coordinates.len()).collect();
    let mut cells: Vec<String> = vec![String::new(); agreed.columns.len()];
    for r in 0..rows {
        let label = &agreed.classes[r % k];
        for (cell, out) in cells.iter_mut().zip(&outs) {
            cell.clear();
            match out {
                Out::Label => cell.push_str(label),
                Out::Numeric {
                    lo,
                    hi,
                    integer,
                    parts,
                } => {
                    let mut sum = 0.0;
                    for (p, (idx, off, sc)) in parts.iter().enumerate() {
                        sum += off + f64::from(vals[p][r * dims[p] + idx]) * sc;
                    }
                    let x = (sum / np).clamp(*lo, *hi);
                    write_number(cell, x, *integer);
                }
                Out::Categorical { levels, parts } => {
                    if levels.is_empty() {
                        cell.push_str(crate::preprocess::encode::SUPPRESSED);
                        continue;
                    }
                    let mut best = (f64::NEG_INFINITY, 0usize);
                    for li in 0..levels.len() {
                        let mut sum = 0.0;
                        for (p, idx) in parts.iter().enumerate() {
                            if let Some(i) = idx[li] {
                                sum += f64::from(vals[p][r * dims[p] + i]);
                            }
                        }
                        if sum > best.0 {
                            best = (sum, li);
                        }
                    }
                    cell.push_str(&levels[best.1]);
                }
            }
        }
        row(&cells)?;
    }

    // ---- receipt ------------------------------------------------------------------------
    let delta_l2 = sensitivity(agreed.mix, agreed.clip);
    let per_class = rows / k;
    let parties: Vec<PartyInput> = contributions
        .iter()
        .map(|c| {
            let curve = match c.accounting.normalization_noise_multiplier {
                Some(z) => RdpCurve::gaussian(z, &agreed.orders),
                None => Ok(RdpCurve::zero(&agreed.orders)),
            }?;
            Ok(PartyInput {
                party: c.party,
                pool: c.accounting.pool,
                tau_g: c.accounting.tau_g,
                class_counts: c.accounting.class_counts.clone(),
                norm_curve: curve,
                delta_rdp: c.accounting.delta_rdp,
            })
        })
        .collect::<Result<_>>()?;
    let (views, per_party) = account_parties(
        variant,
        delta_l2,
        tau_e,
        s_total,
        known,
        agreed.mix,
        per_class as u64,
        agreed.preset,
        &agreed.orders,
        &parties,
    )?;
    let rows_used: usize = contributions.iter().map(|c| c.accounting.rows_used).sum();
    let rows_dropped: usize = contributions
        .iter()
        .map(|c| c.accounting.rows_dropped)
        .sum();
    let claim = paper_claim(
        variant,
        agreed.mix,
        k,
        rows_used.max(1),
        delta_l2,
        first.accounting.tau_g,
        s_total,
        rows as u64,
        agreed.delta,
        &agreed.orders,
    )?;
    let epsilon = headline(&views);
    let mut warnings = Vec::new();
    if !missing.is_empty() {
        warnings.push(format!(
            "parties {:?} did not contribute: their correlated noise does not cancel, so the result is noisier (see residual_noise); privacy does not suffer (the views are accounted over the parties present)",
            missing
        ));
    }
    if epsilon > agreed.epsilon {
        warnings.push(format!(
            "the target ε = {} is NOT met (ε = {epsilon:.4}); a contribution was not made by this version's calibration",
            agreed.epsilon
        ));
    }
    if variant == Variant::Cape && agreed.pool.is_none() {
        warnings.push("no agreed pool size: each party's independent noise alone protects its records (it cannot rely on the others' noise without knowing their class sizes), so the release is as noisy as the conventional scheme's; agree on a pool size (pool; at most every party's smallest class) to get CAPE's gain".into());
    }
    if !residual.is_empty() && missing.is_empty() {
        warnings.push("some correlated noise did not cancel (residual_noise): it is data-independent, so privacy does not suffer, but the output is noisier there; give every party the same schema with bounds to make it exact".into());
    }
    let seeded = contributions.iter().any(|c| c.seeded);
    if seeded {
        warnings.push("seeded, not for release: a contribution used a fixed seed".into());
    }
    let normalization = serde_json::Value::Array(
        contributions
            .iter()
            .map(|c| serde_json::json!({"party": c.party, "report": c.normalization}))
            .collect(),
    );
    let tau_release = contributions
        .iter()
        .map(|c| c.accounting.tau_g.powi(2))
        .sum::<f64>()
        .sqrt()
        / np;
    let (bound, conversion) = preset_parts(agreed.preset);
    let mut g = guarantee(variant, "multi-party", known);
    g.unprotected[0] = format!("rows_dropped ({rows_dropped}): rows with missing values are dropped before the mechanism; the count is computed from the raw data");
    Ok(FedReceipt {
        epsilon,
        delta: agreed.delta,
        mechanism: "federated-dp-cda".into(),
        variant,
        mode: "multi-party".into(),
        meets_target: epsilon <= agreed.epsilon,
        guarantee: g,
        parameters: FedParameters {
            clients: s_total,
            aggregator_seeds: known,
            aggregator_trust: aggregator_trust(known),
            parties_present: present,
            parties_missing: missing,
            mix: agreed.mix,
            clip: agreed.clip,
            sensitivity: delta_l2,
            tau_e,
            tau_release,
            target_epsilon: agreed.epsilon,
            samples_requested: agreed.samples,
            samples_per_class: per_class,
            rows_written: rows,
            classes: k,
            feature_dim: first.coordinates.len(),
            partition: None,
            pool_floor: agreed.pool,
        },
        views: ReceiptViews {
            client: views.client,
            aggregate: views.aggregate,
            aggregator: views.aggregator,
            party_aggregator: views.party_aggregator,
            collusion: views.collusion,
            paper_claim: claim,
        },
        per_party,
        residual_noise: residual,
        accountant: FedAccountant {
            preset: agreed.preset,
            bound: bound.into(),
            conversion: conversion.into(),
            orders: agreed.orders.clone(),
            delta_rdp: contributions
                .iter()
                .map(|c| c.accounting.delta_rdp)
                .fold(f64::INFINITY, f64::min),
        },
        normalization,
        data: FedData {
            columns: agreed.columns.clone(),
            label: agreed.label.clone(),
            class_labels: agreed.classes.clone(),
            rows_used,
            rows_dropped,
        },
        seeded,
        randomness: Randomness::of_parties(seeded),
        warnings,
        version: VERSION.into(),
        build_id: BUILD_ID.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_csv_bytes, CsvOptions};
    use crate::mechanisms::federated::pairwise;
    use crate::mechanisms::gaussian::normal_cdf;

    /// A table whose feature is the constant 0 with public bounds [−1000, 1000] (so every mix
    /// is exactly 0.5 in normalized units and the released value is pure noise × 2000).
    fn constant_table(n_per_class: usize) -> (Table, Schema) {
        let mut text = String::from("x,y\n");
        for i in 0..2 * n_per_class {
            text.push_str(&format!("0,{}\n", if i % 2 == 0 { "a" } else { "b" }));
        }
        let schema = Schema::from_json(
            r#"{"columns": {"x": {"type": "numeric", "min": -1000, "max": 1000, "integer": false}}}"#,
        )
        .unwrap();
        let t = read_csv_bytes(
            text.as_bytes(),
            &CsvOptions {
                label: Some("y".into()),
                schema: Some(schema.clone()),
                ..CsvOptions::default()
            },
        )
        .unwrap();
        (t, schema)
    }

    fn opts(variant: Variant, t: usize) -> FedOptions {
        FedOptions {
            variant,
            epsilon: 8.0,
            delta: 1e-5,
            mix: 20,
            clip: Some(1.0),
            samples: Some(t),
            normalize: NormalizeMode::Public,
            ..FedOptions::default()
        }
    }

    fn ks_normal(xs: &mut [f64], sigma: f64) -> f64 {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = xs.len() as f64;
        let mut d: f64 = 0.0;
        for (i, &x) in xs.iter().enumerate() {
            let f = normal_cdf(x / sigma);
            d = d
                .max((f - i as f64 / n).abs())
                .max(((i + 1) as f64 / n - f).abs());
        }
        d
    }
    /// KS critical value at α = 1e-6.
    fn crit(n: usize) -> f64 {
        (-(0.5e-6f64).ln() / (2.0 * n as f64)).sqrt()
    }

    fn sim_values(variant: Variant, seed: u64) -> (Vec<f64>, FedReceipt) {
        let (t, schema) = constant_table(2000);
        let mut out = Vec::new();
        let r = simulate(
            &t,
            Some(&schema),
            &opts(variant, 2000),
            5,
            Partition::Iid,
            &mut ReleaseRng::seeded(seed),
            |h| {
                assert_eq!(h, ["x", "y"]);
                Ok(())
            },
            |c| {
                out.push(c[0].parse::<f64>().unwrap());
                Ok(())
            },
        )
        .unwrap();
        (out, r)
    }

    #[test]
    fn simulated_aggregate_noise_has_the_derived_variance() {
        for variant in [Variant::Cape, Variant::Conventional] {
            let (mut xs, r) = sim_values(variant, 3);
            assert_eq!(xs.len(), 2000);
            // Released value = 2000·(mean of S messages − 0.5): std 2000·τ_g/√S, the e's
            // cancel (otherwise the spread would be ≥ 2000·τ_e/√S·… and KS would reject).
            let sd = 2000.0 * r.parameters.tau_release;
            let tg = r.per_party[0].tau_g;
            assert!((r.parameters.tau_release - tg / 5f64.sqrt()).abs() < 1e-12);
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            let v = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt();
            let d = ks_normal(&mut xs, sd);
            assert!(
                d < crit(2000),
                "{variant:?}: KS {d} mean {m} sd {v} want {sd} tau_e {} first {:?}",
                r.parameters.tau_e,
                &xs[..3]
            );
            // And a variance including the uncancelled τ_e is rejected by the same test.
            if variant == Variant::Cape {
                let wrong = 2000.0 * ((tg * tg + r.parameters.tau_e.powi(2)) / 5.0).sqrt();
                assert!(ks_normal(&mut xs, wrong) > crit(2000));
            }
            assert!(r.epsilon <= 8.0 && r.meets_target);
            assert!(r.views.client.epsilon <= r.epsilon && r.views.aggregate.epsilon <= r.epsilon);
            assert_eq!(r.views.client.sampling_rate, 20.0 / 400.0);
        }
    }

    #[test]
    fn simulation_receipt_matches_hand_derived_views() {
        let (_, r) = sim_values(Variant::Cape, 5);
        let orders = crate::accountant::default_orders();
        // Pool: 2000 rows per class dealt to 5 parties = 400; p = 20/400; T_k = 1000; Δ = 0.1.
        let acc = Accounting {
            sampling_rate: 20.0 / 400.0,
            compositions: 1000,
            delta_rdp: 1e-5,
            orders: &orders,
            preset: Preset::Default,
            extra: None,
        };
        let tg = r.per_party[0].tau_g;
        let te = r.parameters.tau_e;
        assert!((r.parameters.sensitivity - 0.1).abs() < 1e-15);
        let za = (tg * tg + te * te).sqrt() / 0.1;
        let zb = (5.0 * tg * tg).sqrt() / 0.1;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
        assert!(close(
            r.views.client.epsilon,
            acc.epsilon(za, Preset::Default).unwrap().epsilon
        ));
        assert!(close(
            r.views.aggregate.epsilon,
            acc.epsilon(zb, Preset::Default).unwrap().epsilon
        ));
        assert!((r.views.aggregate.sensitivity - 0.02).abs() < 1e-15);
        // τ_e is the no-subsampling calibration: the Gaussian alone at z = τ_e/Δ meets ε.
        let e = RdpCurve::gaussian(te / 0.1, &orders)
            .unwrap()
            .times(1000)
            .epsilon(1e-5, Preset::Default.conversion())
            .unwrap();
        assert!(e.epsilon <= 8.0 && e.epsilon > 7.99, "{}", e.epsilon);
        // The paper's claim: p = lK/N = 40/4000, σ = τ_g, T = 2000 compositions, paper preset.
        assert!((r.views.paper_claim.sampling_rate - 0.01).abs() < 1e-15);
        let pc = RdpCurve::subsampled_gaussian(0.01, tg / 0.1, &orders, Preset::Paper.bound())
            .unwrap()
            .times(2000)
            .epsilon(1e-5, Preset::Paper.conversion())
            .unwrap();
        assert!(close(r.views.paper_claim.epsilon, pc.epsilon));
        let json = r.to_json();
        for key in [
            "\"client\"",
            "\"aggregate\"",
            "\"paper_claim\"",
            "\"sampling_rate\"",
        ] {
            assert!(json.contains(key), "{key}");
        }
    }

    #[test]
    fn skewed_partition_and_too_many_clients() {
        let (t, schema) = constant_table(40);
        let mut o = opts(Variant::Cape, 20);
        o.mix = 10;
        let r = simulate(
            &t,
            Some(&schema),
            &o,
            2,
            Partition::Skewed,
            &mut ReleaseRng::seeded(1),
            |_| Ok(()),
            |_| Ok(()),
        )
        .unwrap();
        // Class a (index 0): 20 at party 1 plus 10 each dealt → 30 / 10; class b: 10 / 30.
        assert_eq!(r.per_party[0].class_counts, vec![30, 10]);
        assert_eq!(r.per_party[1].class_counts, vec![10, 30]);
        let e = simulate(
            &t,
            Some(&schema),
            &o,
            30,
            Partition::Iid,
            &mut ReleaseRng::seeded(1),
            |_| Ok(()),
            |_| Ok(()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("clients = 30") && e.contains("fewer than l = 10"),
            "{e}"
        );
    }

    struct Party {
        key: SecretKeyFile,
        public: PublicKeyFile,
    }

    fn parties(n: u32, seed: u64) -> Vec<Party> {
        let mut rng = ReleaseRng::seeded(seed);
        (1..=n)
            .map(|i| {
                let (key, public) = pairwise::keygen(i, &mut rng);
                Party { key, public }
            })
            .collect()
    }

    fn contribute_all(
        ps: &[Party],
        o: &FedOptions,
        t: &Table,
        schema: &Schema,
    ) -> Vec<Contribution> {
        ps.iter()
            .enumerate()
            .map(|(i, p)| {
                let peers: Vec<PublicKeyFile> = ps
                    .iter()
                    .filter(|q| q.key.party != p.key.party)
                    .map(|q| q.public.clone())
                    .collect();
                contribute(
                    t,
                    Some(schema),
                    &p.key,
                    &peers,
                    o,
                    &mut ReleaseRng::seeded(100 + i as u64),
                )
                .unwrap()
            })
            .collect()
    }

    fn run(cs: &[Contribution]) -> Result<(Vec<f64>, FedReceipt)> {
        let mut out = Vec::new();
        let r = aggregate(
            cs,
            |_| Ok(()),
            |c| {
                out.push(c[0].parse::<f64>().unwrap());
                Ok(())
            },
        )?;
        Ok((out, r))
    }

    #[test]
    fn pairwise_noise_cancels_to_floating_point_precision() {
        let ps = parties(4, 7);
        let coords = vec!["n:x".to_string(), "c:z=u".to_string()];
        let mut sum = vec![0f64; 2 * 500];
        let mut sq = 0.0;
        for p in &ps {
            let peers: Vec<PublicKeyFile> = ps
                .iter()
                .filter(|q| q.key.party != p.key.party)
                .map(|q| q.public.clone())
                .collect();
            let e = pairwise_noise(&p.key, &peers, b"ctx", &coords, 500, 3.0).unwrap();
            sq += e.iter().map(|v| v * v).sum::<f64>();
            for (s, v) in sum.iter_mut().zip(&e) {
                *s += v;
            }
        }
        let max = sum.iter().fold(0f64, |m, v| m.max(v.abs()));
        assert!(max < 1e-13 * 3.0 * 4.0, "{max}");
        // Not trivially zero: per-party variance ≈ τ_e² = 9 (4000 draws, ±15%).
        let var = sq / 4000.0;
        assert!((var - 9.0).abs() < 1.35, "{var}");
    }

    #[test]
    fn multi_party_aggregate_cancels_and_accounts() {
        let (t, schema) = constant_table(1000);
        let o = FedOptions {
            pool: Some(1000),
            ..opts(Variant::Cape, 2000)
        };
        let ps = parties(3, 1);
        let cs = contribute_all(&ps, &o, &t, &schema);
        let (mut xs, r) = run(&cs).unwrap();
        assert_eq!(xs.len(), 2000);
        // One party's message alone: 0.5 + e_s + g_s, marginal N(0.5, τ_e² + τ_g²) (KS, α = 1e-6).
        let a = &cs[0].accounting;
        let mut m: Vec<f64> = cs[0]
            .decode_values()
            .iter()
            .map(|&v| f64::from(v) - 0.5)
            .collect();
        let d1 = ks_normal(&mut m, (a.tau_e * a.tau_e + a.tau_g * a.tau_g).sqrt());
        assert!(d1 < crit(m.len()), "message KS {d1}");
        assert!(ks_normal(&mut m, a.tau_g) > crit(m.len()));
        // Conventional: 0.5 + g_s, marginal N(0.5, τ_s²).
        let oc = FedOptions {
            variant: Variant::Conventional,
            session: Some("c".into()),
            ..o.clone()
        };
        let cc = contribute_all(&ps, &oc, &t, &schema);
        let ac = &cc[1].accounting;
        assert_eq!(ac.tau_e, 0.0);
        let mut g: Vec<f64> = cc[1]
            .decode_values()
            .iter()
            .map(|&v| f64::from(v) - 0.5)
            .collect();
        let d2 = ks_normal(&mut g, ac.tau_g);
        assert!(d2 < crit(g.len()), "conventional message KS {d2}");
        let (h, rows, r_again) = aggregate_rows(&cs).unwrap();
        assert_eq!(h, ["x", "y"]);
        assert_eq!(rows.len(), 2000);
        assert_eq!(r_again.epsilon, r.epsilon);
        // A key that already contributed to this context is refused.
        let mut used = ps[0].key.clone();
        used.used_contexts.push(cs[0].context.clone());
        let peers: Vec<PublicKeyFile> = ps[1..].iter().map(|q| q.public.clone()).collect();
        let e = contribute(
            &t,
            Some(&schema),
            &used,
            &peers,
            &o,
            &mut ReleaseRng::seeded(9),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("already contributed"), "{e}");
        assert!(r.residual_noise.is_empty(), "{:?}", r.residual_noise);
        assert!(r.meets_target && r.epsilon <= 8.0);
        let sd = 2000.0 * r.parameters.tau_release;
        let d = ks_normal(&mut xs, sd);
        assert!(d < crit(2000), "KS {d} sd {sd}");
        assert!((r.parameters.tau_release - cs[0].accounting.tau_g / 3f64.sqrt()).abs() < 1e-12);
        // A missing party: reported, noisier, views over the two present.
        let (mut xs2, r2) = run(&cs[..2]).unwrap();
        assert_eq!(r2.parameters.parties_missing, vec![3]);
        // The release is a post-processing of the joint view: its ε (with the uncancelled e
        // counted as noise) is no larger; the joint view is a post-processing of the view of a
        // party as aggregator (t = 1), which is the headline.
        assert!(r2.views.aggregate.epsilon <= r2.views.aggregator.epsilon * (1.0 + 1e-9));
        assert!(r2.views.client.epsilon <= r2.views.aggregator.epsilon * (1.0 + 1e-9));
        assert!(r2.views.aggregator.epsilon <= r2.views.party_aggregator.epsilon * (1.0 + 1e-9));
        assert_eq!(r2.parameters.aggregator_seeds, 1);
        assert_eq!(r2.epsilon, r2.views.party_aggregator.epsilon);
        assert!(r2.warnings.iter().any(|w| w.contains("did not contribute")));
        let res = &r2.residual_noise[0];
        // Residual = −e_3/2 in normalized units × 2000: std 2000·τ_e/2.
        assert!(
            (res.std - 2000.0 * cs[0].accounting.tau_e / 2.0).abs() < 1e-6 * res.std,
            "{}",
            res.std
        );
        let spread = (xs2.iter().map(|v| v * v).sum::<f64>() / xs2.len() as f64).sqrt();
        assert!(spread > 2.0 * sd, "{spread} vs {sd}");
        assert!(ks_normal(&mut xs2, sd) > crit(2000));
        assert!((r2.views.aggregate.sensitivity - 0.05).abs() < 1e-15);
    }

    #[test]
    fn tampered_mismatched_and_duplicate_contributions_are_rejected() {
        let (t, schema) = constant_table(50);
        let o = opts(Variant::Cape, 40);
        let o = FedOptions { mix: 5, ..o };
        let ps = parties(3, 2);
        let cs = contribute_all(&ps, &o, &t, &schema);
        // Round trip through JSON keeps integrity.
        let back = Contribution::from_json(&cs[0].to_json(), "c1").unwrap();
        assert_eq!(back, cs[0]);
        // A changed value: integrity fails.
        let mut bad = cs[1].clone();
        let mut bytes = B64.decode(&bad.values).unwrap();
        bytes[0] ^= 1;
        bad.values = B64.encode(bytes);
        let e = run(&[cs[0].clone(), bad]).unwrap_err().to_string();
        assert!(
            e.contains("integrity check failed") && e.contains("party 2"),
            "{e}"
        );
        // Edited parameters with a recomputed integrity: the digest no longer matches.
        let mut bad = cs[1].clone();
        bad.agreed.epsilon = 40.0;
        bad.integrity = bad.compute_integrity();
        let e = run(&[cs[0].clone(), bad]).unwrap_err().to_string();
        assert!(e.contains("digest does not match"), "{e}");
        // An honest party run with other parameters: named field.
        let o2 = FedOptions {
            epsilon: 5.0,
            ..o.clone()
        };
        let other = contribute_all(&ps, &o2, &t, &schema);
        let e = run(&[cs[0].clone(), other[1].clone()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("disagrees") && e.contains("'epsilon'") && e.contains("8.0 vs 5.0"),
            "{e}"
        );
        // Different T.
        let o3 = FedOptions {
            samples: Some(60),
            ..o.clone()
        };
        let other = contribute_all(&ps, &o3, &t, &schema);
        let e = run(&[cs[0].clone(), other[2].clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'samples'"), "{e}");
        // Twice the same party.
        let e = run(&[cs[0].clone(), cs[0].clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(run(&[]).is_err());
        // Own key among the peers is ignored: same contribution context as without it.
        let all: Vec<PublicKeyFile> = ps.iter().map(|q| q.public.clone()).collect();
        let c = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &all,
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert_eq!(c.context, cs[0].context);
        // Alone (only own key): not a federation.
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[ps[0].public.clone()],
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("clients = 1"), "{e}");
        // Another key claiming this party's id.
        let (_, imp) = pairwise::keygen(1, &mut ReleaseRng::seeded(77));
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[imp],
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("same party id"), "{e}");
        // T is required.
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[ps[1].public.clone()],
            &FedOptions { samples: None, ..o },
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("samples"), "{e}");
    }

    #[test]
    fn dp_ranges_are_snapped_and_blind_columns_borrow_the_widest() {
        use crate::preprocess::normalize::ColumnReport;
        let num = |lo: f64, hi: f64| ColumnCodec::Numeric {
            offset: lo,
            scale: hi - lo,
            lo,
            hi,
            integer: true,
            start: 0,
        };
        let rep = |name: &str, source: &'static str| ColumnReport {
            name: name.into(),
            kind: "numeric",
            source,
            range: None,
            levels_released: None,
        };
        let mut space = FeatureSpace {
            names: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
            codecs: vec![
                num(-2f64.powi(-20), 240.0),          // → [0, 256]
                num(128.0, 256.0),                    // → [0, 256]
                num(0.0, 1.0),                        // DP fallback → borrows
                num(-2f64.powi(-20), 2f64.powi(-20)), // only the zero bin → borrows
                num(3.0, 7.0),                        // schema: untouched
            ],
            dim: 5,
        };
        let report = crate::preprocess::NormalizationReport {
            mode: NormalizeMode::Dp,
            protected: true,
            statement: String::new(),
            dp_histogram: None,
            columns: vec![
                rep("a", "dp"),
                rep("b", "dp"),
                rep("c", "dp"),
                rep("d", "dp"),
                rep("e", "schema"),
            ],
            warnings: vec![],
        };
        let w = snap_dp_ranges(&mut space, &report);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("'c'") && w[1].contains("'d'"));
        for i in 0..4 {
            match &space.codecs[i] {
                ColumnCodec::Numeric {
                    lo,
                    hi,
                    offset,
                    scale,
                    ..
                } => {
                    assert_eq!(
                        (*lo, *hi, *offset, *scale),
                        (0.0, 256.0, 0.0, 256.0),
                        "column {i}"
                    );
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(space.codecs[4], num(3.0, 7.0));
    }

    #[test]
    fn snapping_rounds_outward_to_powers_of_two() {
        assert_eq!(snap(200.0, true), 256.0);
        assert_eq!(snap(256.0, true), 256.0);
        assert_eq!(snap(3.0, false), 2.0);
        assert_eq!(snap(-3.0, false), -4.0);
        assert_eq!(snap(-3.0, true), -2.0);
        assert_eq!(snap(1e-9, false), 0.0);
        assert_eq!(snap(0.3, true), 0.5);
    }
}
