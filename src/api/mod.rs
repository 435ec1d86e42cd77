//! The application layer: every operation the CLI and the JS bindings offer, as typed
//! requests and responses over plain Rust values (bytes, tables, structs).
//!
//! The front ends contain no domain logic: the CLI (`src/cli/`) turns flags into these
//! requests and prints the responses; the wasm bindings (`src/wasm/`) turn JS objects into
//! them and the responses back into JS objects. One module per concept:
//! * [`accountant`]: `rdp`, `account`, `calibrate` (all mechanisms) and the live noise preview;
//! * [`synth`]: tabular synthesis (DP-CDA, DPMix, local, projection);
//! * [`dataset`]: CSV inspection, the utility check and the histograms;
//! * [`images`]: image-set inspection and synthesis;
//! * [`gmm`]: the DP Gaussian-mixture release and sampling;
//! * [`federated`]: federated DP-CDA (simulate, keygen, contribute, aggregate).
//!
//! Requests deserialize from camelCase JSON (the JS option keys; unknown keys are rejected
//! by name). Each pipeline runs on a checked parameter type built once from its request by
//! `TryFrom` (the pattern of linfa's `ParamGuard`): every rule and every default lives in that
//! conversion, so no layer re-checks. Errors carry the parameter's identity
//! ([`crate::error::Param`]); the front ends render it as `--sigma-x` or `sigmaX`.

pub mod accountant;
pub mod audit;
pub mod dataset;
pub mod federated;
pub mod gmm;
pub mod images;
pub mod preview;
pub mod synth;

pub use accountant::{
    account, calibrate, parse_orders, rdp, AccountDetail, AccountResponse, AccountedMechanism,
    CalibrateDetail, CalibrateResponse, MechanismParams, MechanismRequest, RdpRequest, RdpResponse,
};
pub use dataset::{
    histograms, inspect_csv, inspect_rows, utility_check, ColumnHistogram, ColumnSummary,
    CsvSummary, UtilityReport,
};
pub use federated::{
    federated_aggregate, federated_contribute, federated_keygen, federated_simulate, FedParams,
    FedRequest,
};
pub use gmm::{
    gmm_csv_options, gmm_data_exact, gmm_label_threshold, gmm_release, gmm_sample, gmm_samples_csv,
    GmmParams, GmmPrivate, GmmReleaseResult, GmmRequest, SampleCount, Samples,
};
pub use images::{
    check_image_synth, inspect_images, load_images, split_image_options, synthesize_images,
    ImageInput, ImagesResult,
};
pub use preview::{
    dataset_preview, dataset_preview_as, preview, PreviewRequest, PreviewResponse, PreviewView,
};
pub use synth::{
    class_counts, synthesize_csv, synthesize_table, synthesize_table_csv, synthesize_table_out,
    synthesize_table_pieces, synthesize_table_to, MixChoice, SynthParams, SynthRequest,
};

use crate::accountant::subsampled_gaussian::validate_orders;
use crate::accountant::{default_orders, Preset};
use crate::data::Schema;
use crate::error::{Error, Result};
use crate::rng::ReleaseRng;

/// Default δ of every operation that takes one.
pub const DEFAULT_DELTA: f64 = 1e-5;
/// Default L2 clip norm (normalized units).
pub const DEFAULT_CLIP: f64 = 1.0;

/// The accountant preset a request names (default: `default`).
pub(crate) fn preset_of(p: &Option<String>) -> Result<Preset> {
    match p {
        None => Ok(Preset::Default),
        Some(s) => s.parse(),
    }
}

/// The RDP orders a request lists (default 2..=256), checked.
pub(crate) fn orders_of(o: &Option<Vec<u32>>) -> Result<Vec<u32>> {
    match o {
        None => Ok(default_orders()),
        Some(v) => {
            validate_orders(v)?;
            Ok(v.clone())
        }
    }
}

/// A schema given as an object or as JSON text (the CLI's schema file format).
pub(crate) fn schema_of(v: &Option<serde_json::Value>) -> Result<Option<Schema>> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Schema::from_json(s).map(Some),
        Some(v) => Schema::from_json(&v.to_string()).map(Some),
    }
}

/// Whether a number from JS is a whole number ≥ `lo` (NaN and ±∞ are not): the one test of
/// the numbers a binding takes as `f64` (a wasm-bindgen `u32` wraps −1 to 4294967295 and
/// cuts 1.5 to 1 without a word).
pub(crate) fn whole_at_least(v: f64, lo: f64) -> bool {
    v.fract() == 0.0 && v >= lo
}

/// A seed from JS (a number): an integer in [0, 2^53).
pub fn check_seed(seed: Option<f64>) -> Result<Option<u64>> {
    match seed {
        None => Ok(None),
        Some(s) => {
            if !(whole_at_least(s, 0.0) && s < 9_007_199_254_740_992.0) {
                return Err(Error::param(
                    "seed",
                    s,
                    "a seed is an integer in [0, 2^53); leave it out for a release",
                ));
            }
            Ok(Some(s as u64))
        }
    }
}

/// The most rows one call may ask to synthesize or sample (`samples`): 2^31. More would not
/// fit in memory anyway, and in wasm32 a larger count would not even fit its 32-bit sizes.
pub const MAX_ROWS: u64 = 1 << 31;

/// A requested number of rows (`samples`): a whole number from 1 to [`MAX_ROWS`].
pub fn check_rows(rows: u64) -> Result<usize> {
    if (1..=MAX_ROWS).contains(&rows) {
        // MAX_ROWS fits every usize, wasm32's 32 bits included.
        Ok(rows as usize)
    } else {
        Err(Error::param(
            "samples",
            rows,
            format!("ask for 1 to {MAX_ROWS} rows, or leave samples out"),
        ))
    }
}

/// A row count given as a number (JS): a whole number, then [`check_rows`].
pub fn check_rows_of_number(rows: f64) -> Result<usize> {
    if whole_at_least(rows, 0.0) {
        // Saturating: anything past 2^64 is past the limit all the same.
        check_rows(rows as u64)
    } else {
        Err(Error::param(
            "samples",
            rows,
            format!("ask for a whole number of rows from 1 to {MAX_ROWS}"),
        ))
    }
}

/// The random generator a request asks for: the CSPRNG, or a seeded one for tests.
pub fn rng_for(seed: Option<f64>) -> Result<ReleaseRng> {
    rng_for_seed(check_seed(seed)?)
}

/// The random generator for a checked seed: the CSPRNG, or a seeded one for tests.
pub fn rng_for_seed(seed: Option<u64>) -> Result<ReleaseRng> {
    match seed {
        None => ReleaseRng::from_entropy(),
        Some(s) => Ok(ReleaseRng::seeded(s)),
    }
}

/// A CSV writer into memory, shared by the operations that return CSV bytes.
pub(crate) fn csv_sink() -> std::cell::RefCell<crate::data::CsvOut<Vec<u8>>> {
    std::cell::RefCell::new(crate::data::CsvOut::new(Vec::new()))
}

/// The text of a [`csv_sink`].
pub(crate) fn csv_string(w: std::cell::RefCell<crate::data::CsvOut<Vec<u8>>>) -> Result<String> {
    String::from_utf8(w.into_inner().into_bytes())
        .map_err(|_| Error::Internal("the output is not UTF-8".into()))
}

/// The error of a CSV write.
pub(crate) fn csv_write_err(e: std::io::Error) -> Error {
    Error::Data(format!("cannot write the output: {e}"))
}
