//! The DP Gaussian-mixture release (feature `wasm-extra`): `gmmRelease` and `gmmSample`.

use super::{bad_argument, bytes_of, from_js, js_err, to_js};
use crate::api::{self, GmmRequest};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
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
  model: GmmModel; epsilon: number; delta: number; receipt: Record<string, unknown>;
  csv: string | null; marginals: unknown[] | null;
  /** Computed from the data without protection: for the data owner's eyes only. */
  private: { kl: number; referenceMarginals: unknown[] | null };
}
"#;

/// Releases a DP Gaussian mixture model of a CSV: `{model, epsilon, delta, receipt, csv,
/// marginals, private: {kl, referenceMarginals}}`.
#[wasm_bindgen(js_name = gmmRelease, unchecked_return_type = "GmmResult")]
pub fn gmm_release(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "GmmOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let bytes = bytes_of(&input, "gmmRelease")?;
    let r: GmmRequest = from_js(options, "gmmRelease options")?;
    to_js(&api::gmm_release(&bytes, &r).map_err(js_err)?)
}

/// Samples rows (CSV text) from a released model (its JSON text or object).
#[wasm_bindgen(js_name = gmmSample)]
pub fn gmm_sample(
    #[wasm_bindgen(unchecked_param_type = "GmmModel | string")] model: JsValue,
    samples: u32,
    seed: Option<f64>,
) -> Result<String, JsValue> {
    let text = match model.as_string() {
        Some(s) => s,
        None => js_sys::JSON::stringify(&model)
            .map_err(|_| bad_argument("gmmSample: the model is not JSON"))?
            .into(),
    };
    api::gmm_sample(&text, samples as usize, seed).map_err(js_err)
}
