//! The privacy receipt: a JSON document that states the guarantee and everything needed to
//! check it. Top-level `epsilon` and `delta` are the guarantee; the rest explains them.

use crate::accountant::{Preset, RdpCurve};
use crate::preprocess::NormalizationReport;
use serde::Serialize;

/// Library version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Build id (git commit when built from a checkout).
pub const BUILD_ID: &str = env!("PRIVMIX_BUILD_ID");

/// The warning of a seeded synthesis (synth and federated simulate receipts).
pub const SEEDED_RUN_WARNING: &str = "seeded, not for release: this run used a fixed seed";

/// What `normalize = data` leaves unprotected (synth and federated simulate receipts).
pub const UNPROTECTED_DATA_NORMALIZATION: &str =
    "normalization statistics (means, standard deviations, ranges, categories): normalize = data";

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
    /// `pld` when the privacy-loss-distribution accountant certified the guarantee too (the
    /// receipt's ε is then the smaller of the two bounds), else `rdp`.
    pub accountant: &'static str,
    /// ε from RDP (the curve above, under the preset's conversion, plus any threshold terms).
    pub epsilon_rdp: f64,
    /// The PLD accountant's bound, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pld: Option<PldReport>,
}

/// The PLD accountant's bound on a release.
#[derive(Debug, Clone, Serialize)]
pub struct PldReport {
    /// ε at the receipt's δ (an upper bound).
    pub epsilon: f64,
    /// Grid step of the discretised privacy-loss distribution.
    pub grid_step: f64,
    /// FFT length of the composition.
    pub fft_len: usize,
    /// The δ charged for truncation, window tails and floating point, and for exact discrete
    /// noise the coupling term (1 + e^ε)·T (included in δ).
    pub delta_charge: f64,
    /// Sampling rate charged to every class.
    pub sampling_rate: f64,
    /// Compositions charged to every class.
    pub compositions: u64,
    /// What the bound covers and how.
    pub scope: &'static str,
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
    /// DP-CDA's encoding and automatic choices (rows scaled or clipped, sensitivity,
    /// rescaling, decoding, how l was chosen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<crate::preprocess::auto::EncodingReport>,
}

/// DPMix's parameters.
#[derive(Debug, Clone, Serialize)]
pub struct DpMixParameters {
    /// "global" (mix over the whole dataset) or "class-wise" (mix within each class).
    pub variant: &'static str,
    /// How labels are written: "hard" (argmax) or "soft" (one probability column per class).
    pub label_output: &'static str,
    /// The probability columns that replace the label column when labels are soft.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_label_columns: Option<Vec<String>>,
    /// Mix order l.
    pub mix: usize,
    /// Feature noise std σx (features in [0, 1]).
    pub sigma_x: f64,
    /// Label noise std σy (global variant; none in the class-wise variant).
    pub sigma_y: Option<f64>,
    /// True when σx = σy was used because no separate σy was given.
    pub shared_sigma: bool,
    /// Feature dimension dx after encoding.
    pub dim_x: usize,
    /// Label dimension dy (K one-hot classes; 0 when labels are not noised).
    pub dim_y: usize,
    /// Δ² = dx/σx² + dy/σy².
    pub delta_squared: f64,
    /// Noise multiplier z = l/Δ of one row.
    pub noise_multiplier: f64,
    /// Whether σx was calibrated to a target ε.
    pub calibrated: bool,
    /// Target ε, if any.
    pub target_epsilon: Option<f64>,
    /// Requested T.
    pub samples_requested: usize,
    /// Rows written.
    pub rows_written: usize,
    /// Pool n the rows are drawn from (global: all rows; class-wise: the smallest class).
    pub pool: usize,
    /// p = l/n.
    pub sampling_rate: f64,
    /// Number of rows composed for one record (global: T; class-wise: ⌊T/K⌋).
    pub compositions: usize,
    /// Number of classes K.
    pub classes: usize,
    /// Entries of the encoded input moved into [0, 1] (count of the private data; not released).
    #[serde(skip)]
    pub entries_clamped: usize,
}

/// Parameters of the baselines of the DP-CDA paper's tables: local perturbation and random projection.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineParameters {
    /// What each released row is.
    pub released: String,
    /// L2 clip norm c (sensitivity 2c).
    pub clip: f64,
    /// Noise std σ on each coordinate (of the projected row, for projection).
    pub sigma_x: f64,
    /// Noise multiplier z = σ/(2c).
    pub noise_multiplier: f64,
    /// Whether σ was calibrated to a target ε.
    pub calibrated: bool,
    /// Target ε, if any.
    pub target_epsilon: Option<f64>,
    /// Requested T.
    pub samples_requested: usize,
    /// Rows written (T ≤ n).
    pub rows_written: usize,
    /// Input rows n.
    pub pool: usize,
    /// T/n (sampling without replacement when < 1).
    pub sampling_rate: f64,
    /// Gaussian steps composed for one record (always 1: each row depends on one record).
    pub compositions: usize,
    /// Number of classes K.
    pub classes: usize,
    /// Feature dimension after encoding.
    pub feature_dim: usize,
    /// Projected dimension k (projection only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection_dim: Option<usize>,
    /// Input rows scaled down by clipping (count of the private data; not released).
    #[serde(skip)]
    pub rows_clipped: usize,
}

/// Parameters of `synth`'s Gaussian class models in a DP principal subspace
/// ([`crate::pipelines::synth::Mechanism::Gmm`]; the noise is that of
/// [`crate::mechanisms::gmm::suffstats::Split::within_rho`]; σ of the basis and the class
/// statistics in unit-ball units, the encoded rows divided by `bound`).
#[derive(Debug, Clone, Serialize)]
pub struct GmmSynthParameters {
    /// The principal components k the class models live in.
    pub components: usize,
    /// Feature dimension d after encoding (the basis's input dimension).
    pub feature_dim: usize,
    /// B: each encoded row (entries in [0, 1]) is divided by it and clipped into the unit
    /// ball (the DP mean norm, else the public maximum norm).
    pub bound: f64,
    /// The share of the Gaussian releases' ρ taken by the basis.
    pub basis_share: f64,
    /// The weight of the classes' pooled covariance in each class's (post-processing).
    pub pooled_share: f64,
    /// Bins per feature of the DP feature histograms (an atom at 0 and this many bins of
    /// (0, 1]), and their share of ρ.
    pub marginal_bins: usize,
    pub marginal_share: f64,
    /// σ of the histograms' noise (in counts).
    pub sigma_marginals: f64,
    /// σ of the basis's second-moment noise.
    pub sigma_basis: f64,
    /// σ of each class sum's noise.
    pub sigma_sum: f64,
    /// σ of each class second moment's noise.
    pub sigma_moment: f64,
    /// Noise multiplier z of the class statistics.
    pub noise_multiplier: f64,
    /// ρ (zCDP) of the mechanism's worst neighbour, on the grids actually used.
    pub rho: f64,
    /// Whether the noise was calibrated to a target ε (always, for this mechanism).
    pub calibrated: bool,
    /// Target ε.
    pub target_epsilon: Option<f64>,
    /// Requested T.
    pub samples_requested: usize,
    /// Rows written (the DP class counts' shares of T).
    pub rows_written: usize,
    /// Number of classes K.
    pub classes: usize,
    /// The encoding, the decoding and how the mechanism was chosen (its `sensitivity` is a
    /// class sum's, in unit-ball units).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<crate::preprocess::auto::EncodingReport>,
}

/// The parameters of whichever mechanism made the release (serialized without a tag; the
/// receipt's `mechanism` says which).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Parameters {
    /// DP-CDA.
    Cda(CdaParameters),
    /// DPMix.
    DpMix(DpMixParameters),
    /// Local perturbation or random projection.
    Baseline(BaselineParameters),
    /// Gaussian class models in a DP principal subspace.
    Gmm(GmmSynthParameters),
}

impl Parameters {
    /// The feature noise std (the class sums' for the GMM).
    pub fn sigma_x(&self) -> f64 {
        match self {
            Parameters::Cda(p) => p.sigma_x,
            Parameters::DpMix(p) => p.sigma_x,
            Parameters::Baseline(p) => p.sigma_x,
            Parameters::Gmm(p) => p.sigma_sum,
        }
    }
    /// Rows written.
    pub fn rows_written(&self) -> usize {
        match self {
            Parameters::Cda(p) => p.rows_written,
            Parameters::DpMix(p) => p.rows_written,
            Parameters::Baseline(p) => p.rows_written,
            Parameters::Gmm(p) => p.rows_written,
        }
    }
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
    /// Rows per class, when public under the adjacency (absent for DPMix's global variant,
    /// whose adjacency protects labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_counts: Option<Vec<usize>>,
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

impl Randomness {
    /// The randomness of one generator.
    pub fn of(rng: &crate::rng::ReleaseRng) -> Self {
        Randomness {
            source: rng.description(),
            seeded: rng.seed().is_some(),
            fit_for_release: rng.seed().is_none(),
        }
    }

    /// The randomness of an aggregate of parties' releases: seeded when any party's was.
    pub fn of_parties(seeded: bool) -> Self {
        Randomness {
            source: if seeded {
                "seeded, not for release (a party used a fixed seed)".into()
            } else {
                "each party's ChaCha20 CSPRNG keyed by getrandom (OS / crypto.getRandomValues)"
                    .into()
            },
            seeded,
            fit_for_release: !seeded,
        }
    }
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
    pub parameters: Parameters,
    /// Accountant details and the RDP curve.
    pub accountant: AccountantReport,
    /// Normalization: mode, what it protects, per-column sources.
    pub normalization: NormalizationReport,
    /// Input facts.
    pub data: DataReport,
    /// Randomness source.
    pub randomness: Randomness,
    /// How column types and missing indicators were decided (public, DP or data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_types: Option<crate::data::decide::DecisionReport>,
    /// How missing values were encoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<crate::preprocess::missing::MissingReport>,
    /// The DP class counts, label set and pool sizes (standard adjacency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_counts: Option<crate::preprocess::dp_counts::ClassCountReport>,
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
