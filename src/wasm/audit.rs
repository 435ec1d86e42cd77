//! The built-in privacy audit (feature `wasm-extra`): `audit`.

use super::{from_js, progress, to_js};
use crate::api::audit::AuditRequest;
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

/// Audits a configuration on the audit's own neighbouring datasets (no user data): runs the
/// real pipeline many times and returns the report, with a lower bound on ε beside the claim.
#[wasm_bindgen(js_name = audit, unchecked_return_type = "AuditReport")]
pub fn audit(
    #[wasm_bindgen(unchecked_param_type = "AuditOptions")] options: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
    on_progress: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let req: AuditRequest = from_js(options, "audit options")?;
    let (report, thrown) = progress(on_progress);
    to_js(&thrown.result(crate::api::audit::audit(&req, report))?)
}
