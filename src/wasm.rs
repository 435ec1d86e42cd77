//! JavaScript bindings (feature `wasm`): conversions between JS values and the library's
//! types in [`crate::ops`], and Rust errors as JS `Error`s. No logic lives here.
//!
//! Request objects are read with `serde-wasm-bindgen` (unknown keys are rejected with the
//! key's name); results are plain JS objects. The receipt keeps the CLI's snake_case keys, so
//! the browser and the CLI write the same document.

use crate::data::{read_csv_bytes, Table};
use crate::error::Error;
use crate::ops::{self, ImageInput, MechanismRequest, PreviewRequest, RdpRequest, SynthRequest};
#[cfg(feature = "wasm-extra")]
use crate::ops::{FedRequest, GmmRequest};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Accountant preset: WBK Thm 27 + improved conversion (`default`), or the DP-CDA paper's Thm 9 + classic conversion (`paper`). */
export type Preset = "default" | "paper";

export interface RdpParams { samplingRate: number; noiseMultiplier: number; preset?: Preset; orders?: number[]; }
export interface RdpResult { orders: number[]; rdp: number[]; preset: Preset; }

export interface MechanismParams {
  mechanism?: "cda";
  /** Pool size n: the smallest class size. */
  pool: number;
  /** Mix order l. */
  mix: number;
  /** L2 clip norm c (default 1). */
  clip?: number;
  /** Label noise σy: paper mode. Omit for label-free mode. */
  sigmaY?: number;
  /** Number of mixes T drawn from the pool. */
  samples: number;
  delta: number;
  preset?: Preset;
  orders?: number[];
}
export interface AccountParams extends MechanismParams { sigmaX: number; }
export interface CalibrateParams extends MechanismParams { epsilon: number; }
export interface AccountResult {
  epsilon: number; order: number; delta: number; preset: Preset; mechanism: "cda";
  mode: "label-free" | "paper"; noiseMultiplier: number; samplingRate: number;
  epsilonOtherPreset: { preset: Preset; epsilon: number; order: number };
}
export interface CalibrateResult {
  sigmaX: number; epsilon: number; order: number; targetEpsilon: number; delta: number;
  noiseMultiplier: number; preset: Preset; mechanism: "cda"; mode: "label-free" | "paper";
}

export interface SynthOptions {
  /** Label column (CSV input). */
  label?: string;
  mechanism?: "cda";
  /** Target ε: the noise is calibrated to it. */
  epsilon?: number;
  /** δ (default 1e-5). */
  delta?: number;
  /** Mix order l (default 4), or "auto". */
  mix?: number | "auto";
  /** L2 clip norm in normalized units (default 1). */
  clip?: number;
  /** Synthetic rows T (default: the input's row count). */
  samples?: number;
  /** `dp` (default, protected), `public` (bounds from `schema`) or `data` (NOT protected). */
  normalize?: "dp" | "public" | "data";
  normalizeShare?: number;
  /** Schema object (as the CLI's schema JSON). */
  schema?: object | string;
  sigmaX?: number;
  sigmaY?: number;
  /** Fixed seed for tests only: the receipt then says "seeded, not for release". */
  seed?: number;
  preset?: Preset;
  orders?: number[];
  /** utilityCheck: held-out share (default 0.2). */
  testShare?: number;
  /** utilityCheck: `logreg` (default) or `tree`. */
  model?: "logreg" | "tree";
}

/** The privacy receipt (the same JSON document the CLI writes; snake_case keys). */
export interface Receipt {
  epsilon: number;
  delta: number;
  mechanism: string;
  guarantee: { adjacency: string; public_information: string[]; unprotected: string[]; limitations: string[] };
  parameters: Record<string, unknown>;
  accountant: Record<string, unknown>;
  normalization: Record<string, unknown>;
  data: { rows_used: number; rows_dropped: number; columns: string[]; label: string; class_labels: string[]; class_counts: number[] };
  randomness: { source: string; seeded: boolean; fit_for_release: boolean };
  warnings: string[];
  version: string;
  build_id: string;
  [key: string]: unknown;
}

export interface CsvSummary {
  columns: { name: string; kind: "numeric" | "integer" | "categorical"; distinct: number }[];
  rowsRead: number; truncated: boolean; delimiter: string;
  suggestedLabel: string | null; imageSide: number | null;
}
export interface PreviewParams {
  classSizes: number[]; epsilon: number; delta: number; features: number;
  mix?: number | "auto"; samples?: number; clip?: number; normalizeShare?: number; preset?: Preset;
}
export interface PreviewResult {
  mix: number; suggestedMix: number; sigmaX: number; noiseMultiplier: number;
  epsilonMixing: number; samplesPerClass: number; curve: [number, number][];
}
export interface UtilityReport {
  syntheticAccuracy: number; realAccuracy: number; majorityAccuracy: number;
  trainRows: number; testRows: number; syntheticRows: number; model: string; epsilon: number;
}
export interface ColumnHistogram {
  name: string; kind: "numeric" | "categorical"; bins: string[]; real: number[]; synthetic: number[];
}
export type ProgressCallback = (fraction: number) => void;

"#;

#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(typescript_custom_section)]
const TS_EXTRA_TYPES: &'static str = r#"
export interface GmmOptions {
  label: string; epsilon: number; delta?: number;
  noise?: "optimized" | "iid-gaussian" | "iid-laplace" | "colored-gaussian";
  /** `record` (default, worst-case DP with bound B) or `label` (the paper's; local sensitivity). */
  adjacency?: "record" | "label";
  bound?: number; pca?: number;
  /** `gaussian` (default, a valid guarantee) or `wishart` (the paper's; declared unprotected). */
  covarianceNoise?: "gaussian" | "wishart";
  lambda?: number;
  /** Rows to sample from the released model. */
  samples?: number;
  /** Grid points of the marginal-density curves (for plots). */
  marginalPoints?: number;
  seed?: number;
}
/** The released GMM: the same JSON as `privmix gmm --model-out`. */
export interface GmmModel {
  classes: string[]; weights: number[]; means: number[][]; covariances: number[][][];
  [key: string]: unknown;
}
export interface GmmResult {
  model: GmmModel; kl: number; epsilon: number; delta: number; receipt: Record<string, unknown>;
  csv: string | null; marginals: unknown[] | null; referenceMarginals: unknown[] | null;
}
export interface FederatedOptions {
  label: string; epsilon: number; delta?: number; variant?: "cape" | "conventional";
  mix?: number; clip?: number; samples?: number; normalize?: "dp" | "public";
  normalizeShare?: number; schema?: object | string; preset?: Preset;
  /** Simulation: the number of parties and how rows are split. */
  clients?: number; partition?: "iid" | "skewed";
  /** Multi-party: an agreed floor on every party's smallest class (CAPE's gain needs it), and a session label. */
  pool?: number; session?: string;
  /** t: the aggregator may hold the pairwise seeds of t parties (default 1: any one party aggregates; 0: a seedless aggregator, assumed). */
  aggregatorSeeds?: number;
  seed?: number;
}
/** Image input: a ZIP of class folders, or files whose paths end in `<class>/<name>.png|jpg`. */
export type ImageInput = Uint8Array | ArrayBuffer | { name: string; data: Uint8Array }[];
export interface ImageSummary {
  images: number; width: number; height: number; channels: number;
  classNames: string[]; classCounts: number[]; shapeFromData: boolean; warnings: string[];
}
/** Options of synthesizeImages: the synthesis options plus the image shape. */
export interface ImageOptions extends SynthOptions {
  /** Output width and height in pixels (default: the input's most common size, longer side at most 32). */
  width?: number; height?: number;
  /** 1 (grayscale) or 3 (RGB); default: 1 when every file is grayscale. */
  channels?: 1 | 3;
  /** Alpha: composite on white (default) or drop. */
  alpha?: "white" | "drop";
  /** Cap on the longer side of a shape taken from the data (default 32). */
  maxSide?: number;
}
"#;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

fn js_err(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("internal: cannot convert the result: {e}")))
}

/// The JSON text of an options object (`{}` for undefined or null). Going through JSON lets
/// serde see every key, so a misspelt option is rejected by name, and keeps one deserializer
/// (serde_json's) in the shipped wasm.
fn json_of(v: &JsValue, what: &str) -> Result<String, JsError> {
    if v.is_undefined() || v.is_null() {
        return Ok("{}".into());
    }
    js_sys::JSON::stringify(v)
        .map(String::from)
        .map_err(|_| JsError::new(&format!("{what}: pass a plain options object")))
}

/// Reads an options object into a request type.
fn from_js<T: DeserializeOwned>(v: JsValue, what: &str) -> Result<T, JsError> {
    serde_json::from_str(&json_of(&v, what)?).map_err(|e| JsError::new(&format!("{what}: {e}")))
}

/// A string, Uint8Array or ArrayBuffer as bytes.
fn bytes_of(v: &JsValue, what: &str) -> Result<Vec<u8>, JsError> {
    if let Some(s) = v.as_string() {
        return Ok(s.into_bytes());
    }
    if v.is_instance_of::<js_sys::Uint8Array>() {
        return Ok(js_sys::Uint8Array::new(v).to_vec());
    }
    if v.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(v).to_vec());
    }
    Err(JsError::new(&format!(
        "{what}: expected a string, Uint8Array or ArrayBuffer"
    )))
}

/// A progress reporter that calls `f(fraction)` at most every 0.5 %.
fn progress(f: Option<js_sys::Function>) -> impl FnMut(f64) {
    let mut last = -1.0f64;
    move |x: f64| {
        if let Some(f) = &f {
            if x - last >= 0.005 || x >= 1.0 {
                last = x;
                let _ = f.call1(&JsValue::NULL, &JsValue::from_f64(x));
            }
        }
    }
}

fn object(pairs: &[(&str, JsValue)]) -> Result<JsValue, JsError> {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        js_sys::Reflect::set(&o, &JsValue::from_str(k), v)
            .map_err(|_| JsError::new("internal: cannot build the result object"))?;
    }
    Ok(o.into())
}

/// The library version.
#[wasm_bindgen]
pub fn version() -> String {
    format!("{} ({})", crate::receipt::VERSION, crate::receipt::BUILD_ID)
}

/// Raw RDP curve of the subsampled-without-replacement Gaussian.
#[wasm_bindgen(unchecked_return_type = "RdpResult")]
pub fn rdp(
    #[wasm_bindgen(unchecked_param_type = "RdpParams")] params: JsValue,
) -> Result<JsValue, JsError> {
    let r: RdpRequest = from_js(params, "rdp")?;
    to_js(&ops::rdp(&r).map_err(js_err)?)
}

/// ε of DP-CDA with the given noise.
#[wasm_bindgen(unchecked_return_type = "AccountResult")]
pub fn account(
    #[wasm_bindgen(unchecked_param_type = "AccountParams")] params: JsValue,
) -> Result<JsValue, JsError> {
    let r: MechanismRequest = from_js(params, "account")?;
    to_js(&ops::account(&r).map_err(js_err)?)
}

/// Smallest σx meeting a target ε.
#[wasm_bindgen(unchecked_return_type = "CalibrateResult")]
pub fn calibrate(
    #[wasm_bindgen(unchecked_param_type = "CalibrateParams")] params: JsValue,
) -> Result<JsValue, JsError> {
    let r: MechanismRequest = from_js(params, "calibrate")?;
    to_js(&ops::calibrate(&r).map_err(js_err)?)
}

/// The live noise readout for the page (public numbers only).
#[wasm_bindgen(js_name = noisePreview, unchecked_return_type = "PreviewResult")]
pub fn noise_preview(
    #[wasm_bindgen(unchecked_param_type = "PreviewParams")] params: JsValue,
) -> Result<JsValue, JsError> {
    let r: PreviewRequest = from_js(params, "noisePreview")?;
    to_js(&ops::preview(&r).map_err(js_err)?)
}

/// Header, column types and a label guess from the first `maxRows` rows (default 2000).
#[wasm_bindgen(js_name = inspectCsv, unchecked_return_type = "CsvSummary")]
pub fn inspect_csv(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(js_name = maxRows)] max_rows: Option<u32>,
) -> Result<JsValue, JsError> {
    let bytes = bytes_of(&input, "inspectCsv")?;
    to_js(&ops::inspect_csv(&bytes, max_rows.unwrap_or(2000) as usize).map_err(js_err)?)
}

/// Synthesizes a DP dataset from CSV text: returns `{csv, receipt}`.
#[wasm_bindgen(
    js_name = synthesizeCsv,
    unchecked_return_type = "{ csv: string; receipt: Receipt }"
)]
pub fn synthesize_csv(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
    on_progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let bytes = bytes_of(&input, "synthesizeCsv")?;
    let req: SynthRequest = from_js(options, "synthesizeCsv options")?;
    let (csv, receipt) =
        ops::synthesize_csv(&bytes, &req, progress(on_progress)).map_err(js_err)?;
    drop(bytes);
    let text =
        String::from_utf8(csv).map_err(|_| JsError::new("internal: the output is not UTF-8"))?;
    object(&[
        ("csv", JsValue::from_str(&text)),
        ("receipt", to_js(&receipt)?),
    ])
}

/// A CSV read once and kept in memory, for the page and the worker: class counts for the
/// live readout, synthesis, the utility check and the preview histograms without re-parsing.
#[wasm_bindgen]
pub struct Dataset {
    table: Table,
    label: String,
}

#[wasm_bindgen]
impl Dataset {
    /// Reads CSV text or bytes with `{label, schema?}`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ label: string; schema?: object | string }")]
        options: JsValue,
    ) -> Result<Dataset, JsError> {
        let req: SynthRequest = from_js(options, "Dataset options")?;
        let bytes = bytes_of(&input, "Dataset")?;
        let table =
            read_csv_bytes(&bytes, &req.csv_options("input").map_err(js_err)?).map_err(js_err)?;
        Ok(Dataset {
            table,
            label: req.label.unwrap_or_default(),
        })
    }

    /// Rows kept.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> u32 {
        self.table.n_rows as u32
    }

    /// Rows dropped for missing values.
    #[wasm_bindgen(getter, js_name = rowsDropped)]
    pub fn rows_dropped(&self) -> u32 {
        self.table.rows_dropped as u32
    }

    /// Column names.
    #[wasm_bindgen(getter)]
    pub fn columns(&self) -> Vec<String> {
        self.table.names.clone()
    }

    /// `{labels, counts}`: the classes and their sizes (public under the adjacency).
    #[wasm_bindgen(
        js_name = classCounts,
        unchecked_return_type = "{ labels: string[]; counts: number[] }"
    )]
    pub fn class_counts(&self) -> Result<JsValue, JsError> {
        let counts = ops::class_counts(&self.table).map_err(js_err)?;
        let li = self.table.label_index.unwrap_or(0);
        let labels = match &self.table.columns[li] {
            crate::data::Column::Categorical { levels, .. } => levels.clone(),
            crate::data::Column::Numeric { .. } => Vec::new(),
        };
        #[derive(Serialize)]
        struct Out {
            labels: Vec<String>,
            counts: Vec<usize>,
        }
        to_js(&Out { labels, counts })
    }

    /// Synthesizes: `{csv: Uint8Array, receipt}` (bytes, to hand to a Blob without copies).
    #[wasm_bindgen(unchecked_return_type = "{ csv: Uint8Array; receipt: Receipt }")]
    pub fn synthesize(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
        on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let mut req: SynthRequest = from_js(options, "synthesize options")?;
        req.label.get_or_insert_with(|| self.label.clone());
        let mut rng = ops::rng_for(req.seed).map_err(js_err)?;
        let (csv, receipt) =
            ops::synthesize_table_csv(&self.table, &req, &mut rng, progress(on_progress))
                .map_err(js_err)?;
        let arr = js_sys::Uint8Array::from(csv.as_slice());
        drop(csv);
        object(&[("csv", arr.into()), ("receipt", to_js(&receipt)?)])
    }

    /// Train on synthetic, test on a held-out real split (a separate run on the training
    /// split; nothing from it is released).
    #[wasm_bindgen(js_name = utilityCheck, unchecked_return_type = "UtilityReport")]
    pub fn utility_check(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
        on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let mut req: SynthRequest = from_js(options, "utilityCheck options")?;
        req.label.get_or_insert_with(|| self.label.clone());
        let mut rng = ops::rng_for(req.seed).map_err(js_err)?;
        let r = ops::utility_check(&self.table, &req, &mut rng, progress(on_progress))
            .map_err(js_err)?;
        to_js(&r)
    }

    /// Per-column histograms, real against a synthetic CSV with the same header.
    #[wasm_bindgen(unchecked_return_type = "ColumnHistogram[]")]
    pub fn histograms(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] synthetic: JsValue,
    ) -> Result<JsValue, JsError> {
        let bytes = bytes_of(&synthetic, "histograms")?;
        let opts = crate::data::CsvOptions {
            label: Some(self.label.clone()),
            source_name: "synthetic".into(),
            ..Default::default()
        };
        let s = read_csv_bytes(&bytes, &opts).map_err(js_err)?;
        to_js(&ops::histograms(&self.table, &s).map_err(js_err)?)
    }
}

fn image_input(v: &JsValue) -> Result<ImageInput, JsError> {
    if js_sys::Array::is_array(v) {
        let arr = js_sys::Array::from(v);
        let mut files = Vec::with_capacity(arr.length() as usize);
        for item in arr.iter() {
            let name = js_sys::Reflect::get(&item, &JsValue::from_str("name"))
                .ok()
                .and_then(|n| n.as_string())
                .ok_or_else(|| {
                    JsError::new(
                        "synthesizeImages: each file needs a name (its path, e.g. digits/3/a.png)",
                    )
                })?;
            let data = js_sys::Reflect::get(&item, &JsValue::from_str("data"))
                .map_err(|_| JsError::new("synthesizeImages: each file needs data"))?;
            files.push((name, bytes_of(&data, "image file data")?));
        }
        Ok(ImageInput::Files(files))
    } else {
        Ok(ImageInput::Zip(bytes_of(v, "image input")?))
    }
}

fn image_options(v: JsValue) -> Result<(crate::images::ImageOptions, SynthRequest), JsError> {
    ops::image_request(&json_of(&v, "options")?).map_err(js_err)
}

/// Classes, counts and the output shape of a ZIP or a list of image files.
#[wasm_bindgen(js_name = inspectImages, unchecked_return_type = "ImageSummary")]
pub fn inspect_images(
    #[wasm_bindgen(unchecked_param_type = "ImageInput")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ImageOptions")] options: JsValue,
) -> Result<JsValue, JsError> {
    let (image, _) = image_options(options)?;
    to_js(&ops::inspect_images(image_input(&input)?, &image).map_err(js_err)?)
}

/// DP synthetic images: `{zip, preview, realPreview, receipt}` (a ZIP of PNGs in class
/// folders, preview grids as PNG bytes).
#[wasm_bindgen(
    js_name = synthesizeImages,
    unchecked_return_type = "{ zip: Uint8Array; preview: Uint8Array; realPreview: Uint8Array; receipt: Receipt }"
)]
pub fn synthesize_images(
    #[wasm_bindgen(unchecked_param_type = "ImageInput")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ImageOptions")] options: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
    on_progress: Option<js_sys::Function>,
) -> Result<JsValue, JsError> {
    let (image, req) = image_options(options)?;
    let r = ops::synthesize_images(image_input(&input)?, &image, &req, progress(on_progress))
        .map_err(js_err)?;
    object(&[
        ("zip", js_sys::Uint8Array::from(r.zip.as_slice()).into()),
        (
            "preview",
            js_sys::Uint8Array::from(r.preview.as_slice()).into(),
        ),
        (
            "realPreview",
            js_sys::Uint8Array::from(r.real_preview.as_slice()).into(),
        ),
        ("receipt", to_js(&r.receipt)?),
    ])
}

/// Releases a DP Gaussian mixture model of a CSV: `{model, kl, epsilon, delta, receipt, csv,
/// marginals, referenceMarginals}`.
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(js_name = gmmRelease, unchecked_return_type = "GmmResult")]
pub fn gmm_release(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "GmmOptions")] options: JsValue,
) -> Result<JsValue, JsError> {
    let bytes = bytes_of(&input, "gmmRelease")?;
    let r: GmmRequest = from_js(options, "gmmRelease options")?;
    to_js(&ops::gmm_release(&bytes, &r).map_err(js_err)?)
}

/// Samples rows (CSV text) from a released model (its JSON text or object).
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(js_name = gmmSample)]
pub fn gmm_sample(
    #[wasm_bindgen(unchecked_param_type = "GmmModel | string")] model: JsValue,
    samples: u32,
    seed: Option<f64>,
) -> Result<String, JsError> {
    let text = match model.as_string() {
        Some(s) => s,
        None => js_sys::JSON::stringify(&model)
            .map_err(|_| JsError::new("gmmSample: the model is not JSON"))?
            .into(),
    };
    ops::gmm_sample(&text, samples as usize, seed).map_err(js_err)
}

/// Simulated federated DP-CDA (CAPE or conventional): `{csv, receipt}` with both views.
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(
    js_name = federatedSimulate,
    unchecked_return_type = "{ csv: string; receipt: Record<string, unknown> }"
)]
pub fn federated_simulate(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "FederatedOptions")] options: JsValue,
) -> Result<JsValue, JsError> {
    let bytes = bytes_of(&input, "federatedSimulate")?;
    let r: FedRequest = from_js(options, "federatedSimulate options")?;
    let (csv, receipt) = ops::federated_simulate(&bytes, &r).map_err(js_err)?;
    object(&[
        ("csv", JsValue::from_str(&csv)),
        ("receipt", to_js(&receipt)?),
    ])
}

/// A party's key pair: `{secretKey, publicKey}` as JSON texts (keep the first, share the second).
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(
    js_name = federatedKeygen,
    unchecked_return_type = "{ secretKey: string; publicKey: string }"
)]
pub fn federated_keygen(party: u32) -> Result<JsValue, JsError> {
    let (secret, public) = ops::federated_keygen(party).map_err(js_err)?;
    object(&[
        ("secretKey", JsValue::from_str(&secret)),
        ("publicKey", JsValue::from_str(&public)),
    ])
}

/// This party's contribution: `{contribution, secretKey}` (JSON texts; save the updated key,
/// which records the run so the key is never reused for it).
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(
    js_name = federatedContribute,
    unchecked_return_type = "{ contribution: string; secretKey: string }"
)]
pub fn federated_contribute(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(js_name = secretKey)] secret_key: String,
    peers: Vec<String>,
    #[wasm_bindgen(unchecked_param_type = "FederatedOptions")] options: JsValue,
) -> Result<JsValue, JsError> {
    let bytes = bytes_of(&input, "federatedContribute")?;
    let r: FedRequest = from_js(options, "federatedContribute options")?;
    let (contribution, key) =
        ops::federated_contribute(&bytes, &secret_key, &peers, &r).map_err(js_err)?;
    object(&[
        ("contribution", JsValue::from_str(&contribution)),
        ("secretKey", JsValue::from_str(&key)),
    ])
}

/// Averages the parties' contribution files: `{csv, receipt}`.
#[cfg(feature = "wasm-extra")]
#[wasm_bindgen(
    js_name = federatedAggregate,
    unchecked_return_type = "{ csv: string; receipt: Record<string, unknown> }"
)]
pub fn federated_aggregate(contributions: Vec<String>) -> Result<JsValue, JsError> {
    let (csv, receipt) = ops::federated_aggregate(&contributions).map_err(js_err)?;
    object(&[
        ("csv", JsValue::from_str(&csv)),
        ("receipt", to_js(&receipt)?),
    ])
}
