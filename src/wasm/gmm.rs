//! The DP Gaussian-mixture release (feature `wasm-extra`): `gmmRelease`, `gmmSample` and
//! `gmmLabelThreshold`.

use super::{bad_argument, bytes_of, from_js, js_err, to_js};
use crate::api::{self, GmmRequest};
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

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

/// The noisy count a class label read from the data must reach to be released by the default
/// GMM release at (ε, δ) (δ default 1e-5); from ε and δ only.
#[wasm_bindgen(js_name = gmmLabelThreshold)]
pub fn gmm_label_threshold(epsilon: f64, delta: Option<f64>) -> Result<f64, JsValue> {
    api::gmm_label_threshold(epsilon, delta)
        .map(|t| t as f64)
        .map_err(js_err)
}

/// Samples rows (CSV text) from a released model (its JSON text or object).
#[wasm_bindgen(js_name = gmmSample)]
pub fn gmm_sample(
    #[wasm_bindgen(unchecked_param_type = "GmmModel | string")] model: JsValue,
    samples: f64,
    seed: Option<f64>,
) -> Result<String, JsValue> {
    let text = match model.as_string() {
        Some(s) => s,
        None => js_sys::JSON::stringify(&model)
            .map_err(|_| bad_argument("gmmSample: the model is not JSON"))?
            .into(),
    };
    api::gmm_sample(&text, samples, seed).map_err(js_err)
}
