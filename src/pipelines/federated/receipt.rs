//! The federated privacy receipt (simulation and multi-party) and the accounting of the
//! parties' views that fills it.

use super::options::Partition;
use crate::accountant::{Preset, RdpCurve};
use crate::error::{Error, Result};
use crate::mechanisms::federated::{
    self as fed, Accounting, ClaimSizes, Federation, PaperClaim, Variant, ViewReport, Views,
};
use crate::receipt::{preset_parts, Guarantee, Randomness};
use serde::{Deserialize, Serialize};

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

impl ReceiptViews {
    /// The accounted views of the least protected party, and the paper's claim.
    pub(super) fn new(v: Views, paper_claim: PaperClaim) -> Self {
        ReceiptViews {
            client: v.client,
            aggregate: v.aggregate,
            aggregator: v.aggregator,
            party_aggregator: v.party_aggregator,
            collusion: v.collusion,
            paper_claim,
        }
    }
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

impl FedAccountant {
    /// The settings of `preset` with `orders`, converting at δ = `delta_rdp`.
    pub(super) fn new(preset: Preset, orders: &[u32], delta_rdp: f64) -> Self {
        let (bound, conversion) = preset_parts(preset);
        FedAccountant {
            preset,
            bound: bound.into(),
            conversion: conversion.into(),
            orders: orders.to_vec(),
            delta_rdp,
        }
    }
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
    /// How the column types the schema leaves open were decided (per party in multi-party
    /// mode): under DP (`type_source: "dp"`, with the noisy statistics), by the schema, or from
    /// the data (NOT protected; then `guarantee.unprotected` says so).
    pub column_types: serde_json::Value,
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
    /// Records dropped because they have no label (public: the labels are).
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

/// What the receipt declares when the column types were taken from the data (the column
/// types option `data`; by default they are decided under DP, and a schema that types every
/// column keeps them public).
pub const UNPROTECTED_TYPES: &str = "column types: a column the schema does not type took its type from the data (one unparsable cell makes a numeric column categorical); decide the types under DP (the default) or type every column in the schema to keep them protected";

/// The federated guarantee; `types_from_data` declares the column types unprotected.
pub(super) fn guarantee(
    variant: Variant,
    mode: &str,
    known: usize,
    types_from_data: bool,
) -> Guarantee {
    let mut limitations = vec![
        "the message noise (g_s and the pairwise e_s) is sampled in floating point (ziggurat); its floating-point side channels are not mitigated (the DP normalization's counts get exact discrete Gaussian noise)".to_string(),
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
            "the column names, and the column types the schema gives (the others are decided under DP at each party: column_types)".into(),
            super::records::MISSING_STATEMENT.into(),
        ],
        unprotected: types_from_data
            .then_some(UNPROTECTED_TYPES)
            .into_iter()
            .map(String::from)
            .collect(),
        limitations,
    }
}

/// Writes the view of the least protected party and the per-party table.
pub(super) struct PartyInput {
    pub(super) party: u32,
    pub(super) pool: usize,
    pub(super) tau_g: f64,
    pub(super) class_counts: Vec<usize>,
    pub(super) norm_curve: RdpCurve,
    pub(super) delta_rdp: f64,
    /// The categorical threshold's ε term (0 without one).
    pub(super) threshold_epsilon: f64,
}

/// Accounts every view for each party's records in `fed` (its parties all present in
/// `parties`, S counted in `fed`); returns the views of the party whose headline ε is
/// largest, and one report per party.
pub(super) fn account_parties(
    fed: &Federation,
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
            threshold_epsilon: p.threshold_epsilon,
        };
        let v = fed::views_for(fed, &tau_gs, i, &acc)?;
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

/// The receipt's accounting of a release of `sizes.rows_written` rows: every view for each
/// party's records (as [`account_parties`], `sizes.rows_written / sizes.classes`
/// compositions), the paper's claim beside them for parties adding noise `tau_g`, and the
/// headline ε.
pub(super) fn accounted_views(
    fed: &Federation,
    sizes: &ClaimSizes,
    tau_g: f64,
    preset: Preset,
    orders: &[u32],
    delta: f64,
    parties: &[PartyInput],
) -> Result<(ReceiptViews, Vec<PartyReport>, f64)> {
    let per_class = sizes.rows_written / sizes.classes as u64;
    let (views, per_party) = account_parties(fed, sizes.mix, per_class, preset, orders, parties)?;
    let claim = fed::paper_claim(fed, tau_g, sizes, delta, orders)?;
    let epsilon = headline(&views);
    Ok((ReceiptViews::new(views, claim), per_party, epsilon))
}

/// The guarantee: the view of an aggregator holding t parties' seeds. It dominates the
/// seedless joint view and views (a), (b) (they are its post-processings); the max is taken
/// anyway so the headline is never below any of them.
pub(super) fn headline(v: &Views) -> f64 {
    v.party_aggregator
        .epsilon
        .max(v.aggregator.epsilon)
        .max(v.client.epsilon)
        .max(v.aggregate.epsilon)
}
