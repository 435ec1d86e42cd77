//! `rdp`, `account`, `calibrate` and `noisePreview` (feature `wasm-accountant`).

use super::{from_js, js_err, to_js};
use crate::api::{self, MechanismRequest, PreviewRequest, RdpRequest};
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

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
