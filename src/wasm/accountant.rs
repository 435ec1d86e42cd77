//! `rdp`, `account`, `calibrate` and `noisePreview` (feature `wasm-accountant`).

use super::{from_js, js_err, to_js};
use crate::api::{self, MechanismRequest, PreviewRequest, RdpRequest};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
export interface RdpParams { samplingRate: number; noiseMultiplier: number; preset?: Preset; orders?: number[]; }
export interface RdpResult { orders: number[]; rdp: number[]; preset: Preset; samplingRate: number; noiseMultiplier: number; }

export interface MechanismParams {
  /** `cda` (DP-CDA, default), `dpmix`, `local` or `projection` (accounted like local). */
  mechanism?: "cda" | "dpmix" | "local" | "projection";
  /** Pool size n: cda: the smallest class size; dpmix: the rows mixes are drawn from; local/projection: the input rows. */
  pool: number;
  /** Mix order l (cda and dpmix; required there). */
  mix?: number;
  /** L2 clip norm c (default 1; cda, local, projection). */
  clip?: number;
  /** cda: label noise σy (paper mode; omit for label-free). dpmix: label noise (account: required unless dimY = 0; calibrate: held fixed, or omit for one shared σ). */
  sigmaY?: number;
  /** dpmix: feature dimension dx. */
  dimX?: number;
  /** dpmix: label dimension dy (0: class-wise). */
  dimY?: number;
  /** Number of mixes T (local/projection: rows released). */
  samples: number;
  delta: number;
  preset?: Preset;
  orders?: number[];
}
export interface AccountParams extends MechanismParams { sigmaX: number; }
export interface CalibrateParams extends MechanismParams { epsilon: number; }
export interface AccountResult {
  epsilon: number; order: number; delta: number; preset: Preset;
  mechanism: "cda" | "dpmix" | "local" | "projection";
  noiseMultiplier: number; samplingRate: number;
  epsilonOtherPreset: { preset: Preset; epsilon: number; order: number };
  /** cda. */
  mode?: "label-free" | "paper";
  /** dpmix, local, projection. */
  sigmaX?: number;
  /** dpmix (null when dimY = 0). */
  sigmaY?: number | null; dimX?: number; dimY?: number; deltaSquared?: number;
  samples?: number; pool?: number; mix?: number;
  /** local, projection. */
  clip?: number;
}
export interface CalibrateResult {
  sigmaX: number; epsilon: number; order: number; targetEpsilon: number; delta: number;
  noiseMultiplier: number; preset: Preset; mechanism: "cda" | "dpmix" | "local" | "projection";
  /** cda. */
  mode?: "label-free" | "paper";
  /** dpmix. */
  sigmaY?: number | null; sharedSigma?: boolean; dimX?: number; dimY?: number;
  /** local, projection. */
  clip?: number;
}
export interface PreviewParams {
  classSizes: number[]; epsilon: number; delta: number; features: number;
  mix?: number | "auto"; samples?: number; clip?: number; normalizeShare?: number; preset?: Preset;
}
export interface PreviewResult {
  mix: number; suggestedMix: number; sigmaX: number; noiseMultiplier: number;
  epsilonMixing: number; samplesPerClass: number; curve: [number, number][];
}
"#;

/// Raw RDP curve of the subsampled-without-replacement Gaussian.
#[wasm_bindgen(unchecked_return_type = "RdpResult")]
pub fn rdp(
    #[wasm_bindgen(unchecked_param_type = "RdpParams")] params: JsValue,
) -> Result<JsValue, JsValue> {
    let r: RdpRequest = from_js(params, "rdp")?;
    to_js(&api::rdp(&r).map_err(js_err)?)
}

/// ε of a mechanism with the given noise.
#[wasm_bindgen(unchecked_return_type = "AccountResult")]
pub fn account(
    #[wasm_bindgen(unchecked_param_type = "AccountParams")] params: JsValue,
) -> Result<JsValue, JsValue> {
    let r: MechanismRequest = from_js(params, "account")?;
    to_js(&api::account(&r).map_err(js_err)?)
}

/// Smallest σx meeting a target ε.
#[wasm_bindgen(unchecked_return_type = "CalibrateResult")]
pub fn calibrate(
    #[wasm_bindgen(unchecked_param_type = "CalibrateParams")] params: JsValue,
) -> Result<JsValue, JsValue> {
    let r: MechanismRequest = from_js(params, "calibrate")?;
    to_js(&api::calibrate(&r).map_err(js_err)?)
}

/// The live noise readout for the page (public numbers only).
#[wasm_bindgen(js_name = noisePreview, unchecked_return_type = "PreviewResult")]
pub fn noise_preview(
    #[wasm_bindgen(unchecked_param_type = "PreviewParams")] params: JsValue,
) -> Result<JsValue, JsValue> {
    let r: PreviewRequest = from_js(params, "noisePreview")?;
    to_js(&api::preview(&r).map_err(js_err)?)
}
