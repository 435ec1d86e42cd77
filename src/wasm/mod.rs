//! JavaScript bindings: conversions between JS values and the typed requests and responses
//! of [`crate::api`], and library errors as JS `Error`s. No logic lives here. One file per
//! concept, each with its TypeScript types:
//! * [`accountant`] (feature `wasm-accountant`): `rdp`, `account`, `calibrate`,
//!   `noisePreview`, and `version` here;
//! * [`dataset`] and [`images`] (feature `wasm`): CSV and image synthesis, the `Dataset` class;
//! * [`gmm`], [`federated`] and [`audit`] (feature `wasm-extra`).
//!
//! Request objects go through JSON text into serde types, so a misspelt key is rejected by
//! name. Every thrown value is an `Error` whose `name` is `ParameterError`, `DataError`,
//! `AbortError` or `InternalError` and whose `param` is the option key at fault (camelCase),
//! or undefined. If an `onProgress` callback throws, the operation stops at that report and
//! its exception is rethrown unchanged.

pub mod accountant;
#[cfg(feature = "wasm-extra")]
pub mod audit;
#[cfg(feature = "wasm")]
pub mod dataset;
#[cfg(feature = "wasm-extra")]
pub mod federated;
#[cfg(feature = "wasm-extra")]
pub mod gmm;
#[cfg(feature = "wasm")]
pub mod images;

use crate::error::{Error, ErrorKind, ParamStyle};
use serde::de::DeserializeOwned;
use serde::Serialize;
#[cfg(feature = "wasm")]
use std::cell::RefCell;
#[cfg(feature = "wasm")]
use std::rc::Rc;
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// A JS `Error` with `name` = `kind` and `param` = `param` (when given).
pub(crate) fn js_error(kind: ErrorKind, message: &str, param: Option<&str>) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name(kind.js_name());
    if let Some(p) = param {
        let _ = js_sys::Reflect::set(&e, &JsValue::from_str("param"), &JsValue::from_str(p));
    }
    e.into()
}

/// A library error as a JS `Error` (parameters named by their JS keys).
pub(crate) fn js_err(e: Error) -> JsValue {
    let param = e.param_id().map(|p| p.js_key());
    js_error(e.kind(), &e.render(ParamStyle::Js), param.as_deref())
}

/// An `InternalError`.
pub(crate) fn internal(message: &str) -> JsValue {
    js_error(ErrorKind::Internal, message, None)
}

/// A `ParameterError` without a parameter identity (a malformed argument).
pub(crate) fn bad_argument(message: &str) -> JsValue {
    js_error(ErrorKind::Parameter, message, None)
}

pub(crate) fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| internal(&format!("internal: cannot convert the result: {e}")))
}

/// The JSON text of an options object (`{}` for undefined or null). Going through JSON lets
/// serde see every key, so a misspelt option is rejected by name, and keeps one deserializer
/// (serde_json's) in the shipped wasm.
pub(crate) fn json_of(v: &JsValue, what: &str) -> Result<String, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok("{}".into());
    }
    js_sys::JSON::stringify(v)
        .map(String::from)
        .map_err(|_| bad_argument(&format!("{what}: pass a plain options object")))
}

/// The key a serde message names (`unknown field `x``, `missing field `x``), if any.
fn serde_key(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    rest.split('`').next()
}

/// Reads an options object into a request type (`ParameterError` naming a bad key).
pub(crate) fn from_js<T: DeserializeOwned>(v: JsValue, what: &str) -> Result<T, JsValue> {
    from_json(&json_of(&v, what)?, what)
}

/// Reads one-line JSON (as `JSON.stringify` writes it) into a request type, as [`from_js`].
pub(crate) fn from_json<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, JsValue> {
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        if let Some(key) = serde_key(&message) {
            return js_error(
                ErrorKind::Parameter,
                &format!("{what}: {message}"),
                Some(key),
            );
        }
        // JSON.stringify writes one line, so the column is the byte offset of the error.
        match key_at(text, e.column()) {
            Some(key) => js_error(
                ErrorKind::Parameter,
                &format!("{what}: {key}: {}", plain_serde_message(&message)),
                Some(&key),
            ),
            None => js_error(ErrorKind::Parameter, &format!("{what}: {message}"), None),
        }
    })
}

/// The top-level key of the one-line JSON object `text` whose value holds byte `at` (serde's
/// error position), if any: a scan of strings, nesting and `:` (not generic over the request
/// type, so it adds no deserializer per type to the wasm).
fn key_at(text: &str, at: usize) -> Option<String> {
    let b = text.as_bytes();
    let (mut depth, mut i) = (0i32, 0usize);
    // Byte ranges of the last string read and of the last key (a string before a `:`).
    let mut last: Option<(usize, usize)> = None;
    let mut key = None;
    while i < b.len() && i < at {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                last = Some((start, i.min(b.len())));
            }
            b':' if depth == 1 => key = last,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    key.and_then(|(s, e)| text.get(s..e)).map(str::to_owned)
}

/// serde's message without its position (which points into JSON the caller never wrote) and
/// with JS names for Rust's number types.
fn plain_serde_message(message: &str) -> String {
    let m = message
        .rfind(" at line ")
        .map_or(message, |at| &message[..at]);
    // usize is 32 bits in wasm32, like u32.
    m.replace("expected f64", "expected a number")
        .replace(
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        )
        .replace(
            "expected usize",
            "expected a whole number from 0 to 4294967295",
        )
        .replace("expected u64", "expected a whole number ≥ 0")
}

#[cfg(feature = "wasm")]
/// A string, Uint8Array or ArrayBuffer as bytes.
pub(crate) fn bytes_of(v: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    if let Some(s) = v.as_string() {
        return Ok(s.into_bytes());
    }
    if v.is_instance_of::<js_sys::Uint8Array>() || v.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(v).to_vec());
    }
    Err(bad_argument(&format!(
        "{what}: expected a string, Uint8Array or ArrayBuffer"
    )))
}

#[cfg(feature = "wasm")]
/// The first exception thrown by an `onProgress` callback, to rethrow unchanged.
#[derive(Clone, Default)]
pub(crate) struct Thrown(Rc<RefCell<Option<JsValue>>>);

#[cfg(feature = "wasm")]
impl Thrown {
    /// The operation's result, unless the callback threw: then its exception.
    pub fn result<T>(self, r: crate::error::Result<T>) -> Result<T, JsValue> {
        if let Some(e) = self.0.borrow_mut().take() {
            return Err(e);
        }
        r.map_err(js_err)
    }
}

#[cfg(feature = "wasm")]
/// A progress reporter that calls `f(fraction)` at most every 0.5 %. If `f` throws, the
/// operation stops at that report (the reporter returns [`crate::error::Error::Abort`], which
/// every pipeline propagates before doing more work), `f` is not called again, and
/// [`Thrown::result`] rethrows the exception unchanged.
pub(crate) fn progress(
    f: Option<js_sys::Function>,
) -> (impl FnMut(f64) -> crate::error::Result<()>, Thrown) {
    let thrown = Thrown::default();
    let slot = thrown.clone();
    let mut last = -1.0f64;
    let report = move |x: f64| {
        if slot.0.borrow().is_some() {
            return Err(stopped());
        }
        if let Some(f) = &f {
            if x - last >= 0.005 || x >= 1.0 {
                last = x;
                if let Err(e) = f.call1(&JsValue::NULL, &JsValue::from_f64(x)) {
                    *slot.0.borrow_mut() = Some(e);
                    return Err(stopped());
                }
            }
        }
        Ok(())
    };
    (report, thrown)
}

#[cfg(feature = "wasm")]
/// Bytes handed to `f` as `Uint8Array`s of about [`JsChunks::CHUNK`] bytes, in order (the
/// last one on `flush`). If `f` throws, the write fails, `f` is not called again and the
/// [`Thrown`] shared with the operation's progress reporter rethrows the exception
/// unchanged.
pub(crate) struct JsChunks {
    f: js_sys::Function,
    buf: Vec<u8>,
    thrown: Thrown,
}

#[cfg(feature = "wasm")]
impl JsChunks {
    /// A chunk's size: few enough calls for a 100 MB output, little held at a time.
    const CHUNK: usize = 4 << 20;

    pub fn new(f: js_sys::Function, thrown: Thrown) -> Self {
        JsChunks {
            f,
            buf: Vec::new(),
            thrown,
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let stopped = || std::io::Error::other("stopped: onChunk threw");
        if self.thrown.0.borrow().is_some() {
            return Err(stopped());
        }
        // A copy owned by JavaScript: the wasm buffer is reused for the next chunk.
        let chunk = js_sys::Uint8Array::from(&self.buf[..]);
        self.buf.clear();
        if let Err(e) = self.f.call1(&JsValue::NULL, &chunk) {
            *self.thrown.0.borrow_mut() = Some(e);
            return Err(stopped());
        }
        Ok(())
    }
}

#[cfg(feature = "wasm")]
impl std::io::Write for JsChunks {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(Self::CHUNK + b.len());
        }
        self.buf.extend_from_slice(b);
        if self.buf.len() >= Self::CHUNK {
            self.send()?;
        }
        Ok(b.len())
    }

    /// Hands over what is held.
    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

#[cfg(feature = "wasm")]
fn stopped() -> crate::error::Error {
    crate::error::Error::Abort("stopped: onProgress threw".into())
}

#[cfg(feature = "wasm")]
/// A plain object from key/value pairs.
pub(crate) fn object(pairs: &[(&str, JsValue)]) -> Result<JsValue, JsValue> {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        js_sys::Reflect::set(&o, &JsValue::from_str(k), v)
            .map_err(|_| internal("internal: cannot build the result object"))?;
    }
    Ok(o.into())
}

/// The library version.
#[wasm_bindgen]
pub fn version() -> String {
    format!("{} ({})", crate::receipt::VERSION, crate::receipt::BUILD_ID)
}
