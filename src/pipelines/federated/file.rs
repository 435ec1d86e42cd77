//! The multi-party files: key pairs ([`keygen`]) and the contribution file format
//! ([`Contribution`], with the [`AgreedParameters`] whose digest binds the pairwise streams).

use crate::accountant::Preset;
use crate::data::Schema;
use crate::error::{Error, Result};
use crate::mechanisms::federated::pairwise::keygen as keygen_files;
use crate::mechanisms::federated::Variant;
use crate::rng::ReleaseRng;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Format tag of a contribution file.
pub const CONTRIBUTION_FORMAT: &str = "privmix-federated-contribution-v2";

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

/// serde's `skip_serializing_if` for an ε term that is absent when 0.
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// serde's `skip_serializing_if` for a flag that is absent when false.
fn is_false(x: &bool) -> bool {
    !*x
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
    /// Records dropped: those without a label (public under the federated adjacency); in
    /// files of earlier versions (`missing_encoded` absent), every record with a missing cell
    /// (NOT protected).
    pub rows_dropped: usize,
    /// Missing cells were encoded ([`super::federated_records`]) and only records without a
    /// label dropped (absent: a file of an earlier version).
    #[serde(default)]
    pub missing_encoded: bool,
    /// Some column's type came from the data, not the schema (NOT protected; absent: false).
    #[serde(default, skip_serializing_if = "is_false")]
    pub types_from_data: bool,
    /// Noise multiplier of this party's data-path Gaussian releases: the DP normalization
    /// histograms and the column-type decision, composed into one Gaussian mechanism
    /// (1/z² = Σ 1/z_i², rounded down by a relative 10⁻¹⁰; None: neither ran).
    pub normalization_noise_multiplier: Option<f64>,
    /// δ used for the RDP conversion.
    pub delta_rdp: f64,
    /// The categorical levels' DP threshold's ε term, ln(1/(1 − δ_cat)), added to the
    /// converted ε (absent: 0, as in files of earlier versions, which did not charge it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threshold_epsilon: f64,
    /// Independent noise std τ_g (conventional: τ_s).
    pub tau_g: f64,
    /// Correlated noise std τ_e (0 for conventional).
    pub tau_e: f64,
}

/// One party's DP marginal of one column, released in the same Gaussian mechanism as its
/// ranges (the normalization's; `plan_extras` decides, from public numbers, whether they are
/// worth their noise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PartyMarginal {
    /// Bin edges in the column's units (non-decreasing; two equal edges: a point bin) and
    /// bin probabilities (stored as `edges` and `probs` beside `kind`).
    Numeric(crate::preprocess::quantile::NumericMarginal),
    /// One probability per level of the column's layout, and possibly one more: the pooled
    /// mass of the levels below the release threshold.
    Categorical { probs: Vec<f64> },
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
    /// This party's column-type decisions (absent in files of earlier versions).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub column_types: serde_json::Value,
    /// The DP marginals this party released with its ranges, one entry per column (None:
    /// none for that column), for the aggregator's decoding; empty when none was released
    /// (small data, public or `data` normalization, files of earlier versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marginals: Vec<Option<PartyMarginal>>,
    /// Whether this contribution used a fixed seed (not for release).
    pub seeded: bool,
    /// rows × coordinates little-endian f32, base64.
    pub values: String,
    /// SHA-256 of this file's JSON with `integrity` empty.
    pub integrity: String,
}

impl Contribution {
    pub(super) fn compute_integrity(&self) -> String {
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
                "{name}: not a privmix contribution file ({e}); use the contribution files that the parties' contribute step wrote"
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

    pub(super) fn decode_values(&self) -> Vec<f32> {
        let bytes = B64.decode(&self.values).unwrap_or_default();
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}
