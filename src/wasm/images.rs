//! Image synthesis (feature `wasm`): `inspectImages` and `synthesizeImages`.

use super::{bad_argument, bytes_of, from_json, js_err, json_of, object, progress, to_js};
use crate::api::{self, ImageInput, SynthRequest};
use crate::images::ImageOptions;
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

fn image_input(v: &JsValue) -> Result<ImageInput, JsValue> {
    if js_sys::Array::is_array(v) {
        let arr = js_sys::Array::from(v);
        let mut files = Vec::with_capacity(arr.length() as usize);
        for item in arr.iter() {
            let name = js_sys::Reflect::get(&item, &JsValue::from_str("name"))
                .ok()
                .and_then(|n| n.as_string())
                .ok_or_else(|| {
                    bad_argument(
                        "synthesizeImages: each file needs a name (its path, e.g. digits/3/a.png)",
                    )
                })?;
            let data = js_sys::Reflect::get(&item, &JsValue::from_str("data"))
                .map_err(|_| bad_argument("synthesizeImages: each file needs data"))?;
            files.push((name, bytes_of(&data, "image file data")?));
        }
        Ok(ImageInput::Files(files))
    } else {
        Ok(ImageInput::Zip(bytes_of(v, "image input")?))
    }
}

fn image_options(v: JsValue) -> Result<(ImageOptions, SynthRequest), JsValue> {
    let (image, synth) = api::split_image_options(&json_of(&v, "options")?).map_err(js_err)?;
    let image: ImageOptions = from_json(&image, "options")?;
    let synth: SynthRequest = from_json(&synth, "options")?;
    api::check_image_synth(&synth).map_err(js_err)?;
    Ok((image, synth))
}

/// Classes, counts and the output shape of a ZIP or a list of image files.
#[wasm_bindgen(js_name = inspectImages, unchecked_return_type = "ImageSummary")]
pub fn inspect_images(
    #[wasm_bindgen(unchecked_param_type = "ImageInput")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ImageOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    let (image, _) = image_options(options)?;
    to_js(&api::inspect_images(image_input(&input)?, &image).map_err(js_err)?)
}

/// DP synthetic images: `{zip, preview, receipt, private: {realPreview}}` (a ZIP of PNGs in
/// class folders, preview grids as PNG bytes; the real-data grid is for the data owner only).
#[wasm_bindgen(
    js_name = synthesizeImages,
    unchecked_return_type = "{ zip: Uint8Array; preview: Uint8Array; receipt: Receipt; private: { realPreview: Uint8Array } }"
)]
pub fn synthesize_images(
    #[wasm_bindgen(unchecked_param_type = "ImageInput")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ImageOptions")] options: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
    on_progress: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let (image, req) = image_options(options)?;
    let input = image_input(&input)?;
    let (report, thrown) = progress(on_progress);
    let r = thrown.result(api::synthesize_images(input, &image, &req, report))?;
    let private = object(&[(
        "realPreview",
        js_sys::Uint8Array::from(r.real_preview.as_slice()).into(),
    )])?;
    object(&[
        ("zip", js_sys::Uint8Array::from(r.zip.as_slice()).into()),
        (
            "preview",
            js_sys::Uint8Array::from(r.preview.as_slice()).into(),
        ),
        ("receipt", to_js(&r.receipt)?),
        ("private", private),
    ])
}
