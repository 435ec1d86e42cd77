//! Federated DP-CDA (feature `wasm-extra`): `federatedSimulate`, `federatedKeygen`,
//! `federatedContribute` and `federatedAggregate`.

use super::{bytes_of, from_js, js_err, object, to_js};
use crate::api::{self, FedRequest};
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

/// Simulated federated DP-CDA (CAPE or conventional): `{csv, receipt}` with both views.
#[wasm_bindgen(
    js_name = federatedSimulate,
    unchecked_return_type = "{ csv: string; receipt: Record<string, unknown> }"
)]
pub fn federated_simulate(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "FederatedOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let bytes = bytes_of(&input, "federatedSimulate")?;
    let r: FedRequest = from_js(options, "federatedSimulate options")?;
    let (csv, receipt) = api::federated_simulate(&bytes, &r).map_err(js_err)?;
    object(&[
        ("csv", JsValue::from_str(&csv)),
        ("receipt", to_js(&receipt)?),
    ])
}

/// A party's key pair: `{secretKey, publicKey}` as JSON texts (keep the first, share the second).
#[wasm_bindgen(
    js_name = federatedKeygen,
    unchecked_return_type = "{ secretKey: string; publicKey: string }"
)]
pub fn federated_keygen(party: f64) -> Result<JsValue, JsValue> {
    let (secret, public) = api::federated_keygen(party).map_err(js_err)?;
    object(&[
        ("secretKey", JsValue::from_str(&secret)),
        ("publicKey", JsValue::from_str(&public)),
    ])
}

/// This party's contribution: `{contribution, secretKey}` (JSON texts; save the updated key,
/// which records the run so the key is never reused for it).
#[wasm_bindgen(
    js_name = federatedContribute,
    unchecked_return_type = "{ contribution: string; secretKey: string }"
)]
pub fn federated_contribute(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(js_name = secretKey)] secret_key: String,
    peers: Vec<String>,
    #[wasm_bindgen(unchecked_param_type = "FederatedOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let bytes = bytes_of(&input, "federatedContribute")?;
    let r: FedRequest = from_js(options, "federatedContribute options")?;
    let (contribution, key) =
        api::federated_contribute(&bytes, &secret_key, &peers, &r).map_err(js_err)?;
    object(&[
        ("contribution", JsValue::from_str(&contribution)),
        ("secretKey", JsValue::from_str(&key)),
    ])
}

/// Averages the parties' contribution files: `{csv, receipt}`.
#[wasm_bindgen(
    js_name = federatedAggregate,
    unchecked_return_type = "{ csv: string; receipt: Record<string, unknown> }"
)]
pub fn federated_aggregate(contributions: Vec<String>) -> Result<JsValue, JsValue> {
    let (csv, receipt) = api::federated_aggregate(&contributions).map_err(js_err)?;
    object(&[
        ("csv", JsValue::from_str(&csv)),
        ("receipt", to_js(&receipt)?),
    ])
}
