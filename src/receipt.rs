//! The privacy receipt: a JSON document that states the guarantee and everything needed to
//! check it. Top-level `epsilon` and `delta` are the guarantee; the rest explains them.

use crate::accountant::{Preset, RdpCurve};
use crate::preprocess::NormalizationReport;
use serde::Serialize;

/// Library version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Build id (git commit when built from a checkout).
pub const BUILD_ID: &str = env!("PRIVMIX_BUILD_ID");

/// A named piece of the composed RDP curve.
#[derive(Debug, Clone, Serialize)]
pub struct RdpComponent {
    /// What it is.
    pub name: String,
    /// Its RDP at each order of the receipt's `accountant.orders`.
    pub rdp: Vec<f64>,
}

/// Accountant details.
#[derive(Debug, Clone, Serialize)]
pub struct AccountantReport {
    /// Preset used for the guarantee.
    pub preset: Preset,
    /// Subsampling bound of that preset.
    pub bound: &'static str,
    /// Conversion of that preset.
    pub conversion: &'static str,
    /// Orders.
    pub orders: Vec<u32>,
    /// The composed RDP curve at those orders.
    pub rdp: Vec<f64>,
    /// The order attaining ε.
    pub order: u32,
    /// δ used for the RDP → (ε, δ) conversion (δ minus any δ spent elsewhere).
    pub delta_rdp: f64,
    /// ε of the same release under each preset, side by side.
    pub epsilon_by_preset: EpsByPreset,
    /// The pieces composed into `rdp`.
    pub components: Vec<RdpComponent>,
}

/// ε under both presets.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct EpsByPreset {
    /// WBK Theorem 27 + improved conversion.
    pub default: f64,
    /// The paper's Theorem 1 + classic conversion.
    pub paper: f64,
}

/// The mechanism's parameters.
#[derive(Debug, Clone, Serialize)]
pub struct CdaParameters {
    /// "label-free" or "paper".
    pub label_mode: &'static str,
    /// Mix order l.
    pub mix: usize,
    /// Clip norm c (in normalized units).
    pub clip: f64,
    /// Feature noise std σx.
    pub sigma_x: f64,
    /// Label noise std σy (paper mode).
    pub sigma_y: Option<f64>,
    /// Noise multiplier z of one step.
    pub noise_multiplier: f64,
    /// Whether σx was calibrated to a target ε (true) or given.
    pub calibrated: bool,
    /// Target ε, if any.
    pub target_epsilon: Option<f64>,
    /// Requested T.
    pub samples_requested: usize,
    /// T_k = ⌊T/K⌋ rows per class.
    pub samples_per_class: usize,
    /// Rows written (K · T_k).
    pub rows_written: usize,
    /// Pool used for the sampling rate: the smallest class size.
    pub pool: usize,
    /// q = l / pool.
    pub sampling_rate: f64,
    /// Number of mixes composed for one record (label-free: T_k; paper mode: all rows).
    pub compositions: usize,
    /// Number of classes K.
    pub classes: usize,
    /// Feature dimension after encoding.
    pub feature_dim: usize,
    /// Input rows scaled down by clipping (count of the private data; not released elsewhere).
    #[serde(skip)]
    pub rows_clipped: usize,
}

/// Facts about the input.
#[derive(Debug, Clone, Serialize)]
pub struct DataReport {
    /// Rows used (after dropping rows with missing values).
    pub rows_used: usize,
    /// Rows dropped for missing values (computed from the raw data; NOT protected).
    pub rows_dropped: usize,
    /// Input columns, in order.
    pub columns: Vec<String>,
    /// The label column.
    pub label: String,
    /// Class labels in output order.
    pub class_labels: Vec<String>,
    /// Rows per class (public under the adjacency).
    pub class_counts: Vec<usize>,
}

/// What the guarantee covers and what it does not.
#[derive(Debug, Clone, Serialize)]
pub struct Guarantee {
    /// The neighbouring relation the (ε, δ) refers to.
    pub adjacency: String,
    /// Data-dependent facts treated as public by that adjacency.
    pub public_information: Vec<String>,
    /// Data-dependent numbers in the output that are NOT protected.
    pub unprotected: Vec<String>,
    /// Known limitations.
    pub limitations: Vec<String>,
}

/// The randomness used.
#[derive(Debug, Clone, Serialize)]
pub struct Randomness {
    /// Human description ("seeded, not for release" when seeded).
    pub source: String,
    /// True when a fixed seed was used.
    pub seeded: bool,
    /// False when seeded.
    pub fit_for_release: bool,
}

/// The whole receipt.
#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    /// ε of the release (preset `accountant.preset`).
    pub epsilon: f64,
    /// δ of the release.
    pub delta: f64,
    /// Mechanism name.
    pub mechanism: &'static str,
    /// What (ε, δ) means here.
    pub guarantee: Guarantee,
    /// Mechanism parameters.
    pub parameters: CdaParameters,
    /// Accountant details and the RDP curve.
    pub accountant: AccountantReport,
    /// Normalization: mode, what it protects, per-column sources.
    pub normalization: NormalizationReport,
    /// Input facts.
    pub data: DataReport,
    /// Randomness source.
    pub randomness: Randomness,
    /// Warnings for the user.
    pub warnings: Vec<String>,
    /// Library version.
    pub version: &'static str,
    /// Build id.
    pub build_id: &'static str,
}

impl Receipt {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("receipt serializes")
    }
}

/// Helper: the name of a preset's bound and conversion.
pub fn preset_parts(p: Preset) -> (&'static str, &'static str) {
    match p {
        Preset::Default => (
            "WBK 2019 Theorem 27 (strengthened, sampling without replacement)",
            "improved (Balle et al. 2020, Prop. 12)",
        ),
        Preset::Paper => (
            "WBK 2019 Theorem 9 as in the DP-CDA paper (index typo fixed)",
            "classic (Mironov 2017)",
        ),
    }
}

/// Helper to make a component.
pub fn component(name: &str, c: &RdpCurve) -> RdpComponent {
    RdpComponent {
        name: name.to_string(),
        rdp: c.rdp.clone(),
    }
}
