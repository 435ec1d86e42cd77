//! Image operations: inspecting an image set and DP-CDA on images (`inspectImages`,
//! `synthesizeImages` in JS; `privmix synth` on a ZIP or a folder in the CLI).

use super::synth::{SynthParams, SynthRequest};
use crate::error::{Error, Result};
use crate::images::{self, ImageOptions, ImageSet, ImageSetSummary};
use crate::pipelines::synth::Mechanism;
use crate::receipt::Receipt;
use crate::rng::ReleaseRng;

/// Image input from JS: a ZIP, or (relative path, bytes) pairs from a folder pick.
pub enum ImageInput {
    /// A ZIP of class folders.
    Zip(Vec<u8>),
    /// Files whose paths end in `<class>/<name>.png|jpg`.
    Files(Vec<(String, Vec<u8>)>),
}

/// Splits an options object (JSON text) into the JSON texts of its image keys (for
/// [`ImageOptions`]) and of its synthesis keys (for [`SynthRequest`]), each on one line, so
/// that the caller's deserializer can name the key at fault by its position.
pub fn split_image_options(json: &str) -> Result<(String, String)> {
    let mut all: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)
        .map_err(|e| Error::param("options", e.to_string(), "pass a plain options object"))?;
    let mut img = serde_json::Map::new();
    for key in [
        "width", "height", "channels", "alpha", "maxSide", "maxBytes",
    ] {
        if let Some(v) = all.remove(key) {
            img.insert(key.to_string(), v);
        }
    }
    Ok((
        serde_json::Value::Object(img).to_string(),
        serde_json::Value::Object(all).to_string(),
    ))
}

/// Refuses a label in the synthesis keys of an image call: images take their class from the
/// folder name.
pub fn check_image_synth(synth: &SynthRequest) -> Result<()> {
    match &synth.label {
        Some(l) => Err(Error::param(
            "label",
            l,
            "images take their class from the folder name; leave it out",
        )),
        None => Ok(()),
    }
}

/// Reads an image set, the shape the options leave open chosen by `rule`.
pub fn load_images(
    input: ImageInput,
    opts: &ImageOptions,
    rule: images::ShapeRule<'_>,
) -> Result<ImageSet> {
    match input {
        ImageInput::Zip(bytes) => images::load_zip_with(&bytes, opts, "the ZIP", rule),
        ImageInput::Files(files) => images::load_files_with(files, opts, "the chosen files", rule),
    }
}

/// The rule a synthesis reads its images with: the shape the options leave open decided
/// under DP at the synthesis's share ([`crate::pipelines::synth::image_shape_z`]).
pub fn shape_rule<'a>(p: &SynthParams, rng: &'a mut ReleaseRng) -> images::ShapeRule<'a> {
    images::ShapeRule::Dp {
        z: crate::pipelines::synth::image_shape_z(&p.options),
        rng,
    }
}

/// `inspectImages`: what the page shows after loading images (for the data's owner: the shape
/// follows the data, and nothing is released).
pub fn inspect_images(input: ImageInput, opts: &ImageOptions) -> Result<ImageSetSummary> {
    Ok(load_images(input, opts, images::ShapeRule::Data)?.summary())
}

/// The result of [`synthesize_images`].
pub struct ImagesResult {
    /// ZIP of PNGs in class folders.
    pub zip: Vec<u8>,
    /// Preview grid of synthetic images.
    pub preview: Vec<u8>,
    /// The same grid of real images (for the data owner's eyes only).
    pub real_preview: Vec<u8>,
    /// The receipt.
    pub receipt: Receipt,
}

/// Checks that a synthesis request suits images: DP-CDA (whose defaults hand a large image
/// set to the GMM, [`crate::pipelines::synth::auto_gmm`]) or the GMM, no schema, no label.
pub fn image_params(req: &SynthRequest) -> Result<SynthParams> {
    let p = SynthParams::try_from(req)?;
    if !matches!(p.mechanism, Mechanism::Cda | Mechanism::Gmm(_)) {
        return Err(Error::param(
            "mechanism",
            req.mechanism.clone().unwrap_or_default(),
            images::MECHANISMS,
        ));
    }
    if req.schema.is_some() {
        return Err(Error::param(
            "schema",
            "(given)",
            "images use the public pixel range 0..255 and need no schema; leave it out",
        ));
    }
    Ok(p)
}

/// Synthesizes from a loaded image set into `sink` (a ZIP of PNGs in class folders);
/// returns the sink, the preview grid PNG, the receipt and the number of files written.
pub fn synthesize_image_set_to<W: std::io::Write>(
    set: &ImageSet,
    p: &SynthParams,
    rng: &mut ReleaseRng,
    sink: W,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(W, Vec<u8>, Receipt, usize)> {
    let opts = p.synth_options();
    images::synthesize_images_to(
        set,
        &opts,
        &p.mechanism,
        rng,
        sink,
        images::PREVIEW_PER_CLASS,
        progress,
    )
}

/// `synthesizeImages`: DP-CDA or the GMM on images (the pixel range 0..255 is public).
pub fn synthesize_images(
    input: ImageInput,
    image: &ImageOptions,
    req: &SynthRequest,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<ImagesResult> {
    let p = image_params(req)?;
    let mut rng = super::rng_for_seed(p.seed)?;
    let set = load_images(input, image, shape_rule(&p, &mut rng))?;
    let real_preview = images::preview_grid(&set, images::PREVIEW_PER_CLASS)?;
    let (zip, preview, receipt, _) =
        synthesize_image_set_to(&set, &p, &mut rng, Vec::new(), progress)?;
    Ok(ImagesResult {
        zip,
        preview,
        real_preview,
        receipt,
    })
}
