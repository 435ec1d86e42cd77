//! Images in and out, with the same code for the CLI and the browser build (bytes in, bytes
//! out; no file system access here).
//!
//! * Input: a ZIP of class folders ([`load_zip`]) or a list of (relative path, bytes) files,
//!   e.g. a browser folder pick ([`load_files`]). The class of an image is the folder directly
//!   containing it (`digits/3/a.png` is class `3`); see [`input`] for what is skipped and
//!   what is an error. PNG (every color type and bit depth) and JPEG (baseline and
//!   progressive) are decoded ([`decode`]); alpha is composited on white or dropped.
//!   MNIST IDX files ([`load_idx`]) are read too.
//! * Shape: every image is resized ([`resize`]) to one shape `width × height`, in gray
//!   (`channels` = 1) or RGB (3). Unless given, the shape is the input's most common size,
//!   shrunk (keeping its aspect ratio) so that its longer side is at most
//!   [`ImageOptions::max_side`] (default [`DEFAULT_MAX_SIDE`] = 32: DP-CDA's per-pixel noise
//!   does not depend on the dimension, but clipping to a fixed norm shrinks large images more);
//!   `channels` defaults to 1 when every file is stored as grayscale, else 3. That is the
//!   rule for showing the data's owner what was loaded ([`ShapeRule::Data`]); a synthesis
//!   decides the shape the options leave open under DP ([`ShapeRule::Dp`], [`shape`]'s proof
//!   note), and a shape taken from the data without it is declared in the receipt as not
//!   protected.
//! * Synthesis ([`synthesize_images`]): the images become a [`Table`] of pixel columns with
//!   the PUBLIC bounds 0..=255 (the pixel range is fixed by the image format, so no budget is spent on
//!   normalization), and the ordinary DP-CDA pipeline [`crate::pipelines::synth::synthesize`] runs on
//!   it, so the accounting and the receipt are the same as for a CSV. Each synthetic row is
//!   encoded as a PNG and written into a ZIP (`<class>/<index>.png`) as it comes; the first
//!   rows of each class also go into a preview grid.
//! * Previews of real data ([`preview_grid`], [`table_as_images`]) are for the data owner's
//!   own screen: they show private images and are not a release.

pub mod decode;
pub mod despeckle;
pub mod input;
pub mod output;
pub mod resize;
pub mod shape;
pub mod zipfile;

use std::collections::BTreeMap;
use std::io::Write;

use serde::{Deserialize, Serialize};

pub use self::decode::AlphaMode;
use crate::data::{natural_cmp, Column, ColumnSpec, Schema, Table};
use crate::error::{Error, Result};
use crate::pipelines::synth::gmm_synth::{image_components, AUTO_MIN_ROWS};
use crate::pipelines::synth::{
    runs_gmm, synthesize_denoised, GmmSynthOptions, Mechanism, PriorRelease, SynthOptions,
};
use crate::receipt::{Parameters, Receipt};
use crate::rng::ReleaseRng;

/// The mechanisms images take, as an error's fix.
pub const MECHANISMS: &str = "images take the cda mechanism (DP-CDA; left to its defaults, 20,000 or more images of at least 100 pixel values get the gmm) or the gmm; name one of them, or leave the mechanism out";

/// Default cap on the longer side of a shape taken from the data.
pub const DEFAULT_MAX_SIDE: usize = 32;
/// Default cap on the decompressed bytes read from a ZIP: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// Synthetic images per class in the preview grid of [`synthesize_images`].
pub const PREVIEW_PER_CLASS: usize = 10;
/// Largest width or height of the output shape.
pub const MAX_OUTPUT_SIDE: usize = 1024;

/// How images are read and shaped (JS: camelCase keys, all optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImageOptions {
    /// Output width in pixels (default: from the data, see the module doc).
    pub width: Option<usize>,
    /// Output height in pixels (default: from the data).
    pub height: Option<usize>,
    /// 1 (gray) or 3 (RGB) (default: 1 when every file is grayscale, else 3).
    pub channels: Option<usize>,
    /// Alpha handling (default: composite on white).
    pub alpha: AlphaMode,
    /// Cap on the longer side of a shape taken from the data (default 32).
    pub max_side: usize,
    /// Cap on the decompressed bytes read from a ZIP (default 1 GiB).
    pub max_bytes: u64,
}

impl Default for ImageOptions {
    fn default() -> Self {
        ImageOptions {
            width: None,
            height: None,
            channels: None,
            alpha: AlphaMode::White,
            max_side: DEFAULT_MAX_SIDE,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Labelled images of one shape, pixels as f32 in 0..=255.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageSet {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 (gray) or 3 (RGB, interleaved).
    pub channels: usize,
    /// Class names in natural order ([`natural_cmp`]); `labels` index this.
    pub class_names: Vec<String>,
    /// Class of each image.
    pub labels: Vec<u32>,
    /// Row-major pixels, `width · height · channels` per image, images in `paths` order.
    pub pixels: Vec<f32>,
    /// Source path of each image.
    pub paths: Vec<String>,
    /// Whether the shape or the channel count was chosen from the data without DP (not
    /// given, and not decided under DP).
    pub shape_from_data: bool,
    /// The DP decision of the shape ([`ShapeRule::Dp`]), when one was made.
    pub shape_decision: Option<shape::ShapeReport>,
    /// Notes for the data owner (e.g. images resized from other sizes). Not for release.
    pub warnings: Vec<String>,
}

/// How the shape the options leave open is chosen.
pub enum ShapeRule<'a> {
    /// From the data (the most common size; gray iff every file is): for the data owner's own
    /// view of what was loaded. A synthesis with it declares the shape unprotected.
    Data,
    /// Under DP with noise multiplier `z` (the [`shape`] module); the synthesis composes its cost.
    Dp {
        /// Noise multiplier.
        z: f64,
        /// The release's random generator.
        rng: &'a mut ReleaseRng,
    },
}

/// A serializable summary of an [`ImageSet`] (what a UI shows after loading).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSetSummary {
    /// Number of images.
    pub images: usize,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 or 3.
    pub channels: usize,
    /// Class names.
    pub class_names: Vec<String>,
    /// Images per class.
    pub class_counts: Vec<usize>,
    /// Whether the shape was chosen from the data.
    pub shape_from_data: bool,
    /// Notes for the data owner.
    pub warnings: Vec<String>,
}

impl ImageSet {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Values per image (`width · height · channels`).
    pub fn dim(&self) -> usize {
        self.width * self.height * self.channels
    }

    /// The pixels of image `i`.
    pub fn image(&self, i: usize) -> &[f32] {
        let d = self.dim();
        &self.pixels[i * d..(i + 1) * d]
    }

    /// Images per class.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.class_names.len()];
        for &l in &self.labels {
            c[l as usize] += 1;
        }
        c
    }

    /// The summary for a UI.
    pub fn summary(&self) -> ImageSetSummary {
        ImageSetSummary {
            images: self.len(),
            width: self.width,
            height: self.height,
            channels: self.channels,
            class_names: self.class_names.clone(),
            class_counts: self.class_counts(),
            shape_from_data: self.shape_from_data,
            warnings: self.warnings.clone(),
        }
    }

    /// Names of the pixel columns: `px{i}` (gray) or `px{i}_r`, `px{i}_g`, `px{i}_b` (RGB),
    /// pixel i = y·width + x.
    pub fn column_names(&self) -> Vec<String> {
        let n = self.width * self.height;
        if self.channels == 1 {
            (0..n).map(|i| format!("px{i}")).collect()
        } else {
            (0..n)
                .flat_map(|i| ["r", "g", "b"].map(|c| format!("px{i}_{c}")))
                .collect()
        }
    }

    /// The images as a [`Table`] (column `label` first, then the pixel columns, all numeric
    /// and integral) and the [`Schema`] giving every pixel column the public bounds 0..=255.
    pub fn to_table(&self) -> (Table, Schema) {
        let d = self.dim();
        let n = self.len();
        let names = self.column_names();
        let mut columns = Vec::with_capacity(d + 1);
        columns.push(Column::Categorical {
            codes: self.labels.clone(),
            levels: self.class_names.clone(),
        });
        for j in 0..d {
            let values: Vec<f32> = (0..n).map(|i| self.pixels[i * d + j]).collect();
            columns.push(Column::Numeric {
                values,
                integer: true,
            });
        }
        let mut schema = BTreeMap::new();
        for name in &names {
            schema.insert(
                name.clone(),
                ColumnSpec::Numeric {
                    integer: Some(true),
                    min: Some(0.0),
                    max: Some(255.0),
                },
            );
        }
        let mut all = Vec::with_capacity(d + 1);
        all.push(LABEL_COLUMN.to_string());
        all.extend(names);
        (
            Table {
                names: all,
                columns,
                n_rows: n,
                rows_dropped: 0,
                label_index: Some(0),
                delimiter: b',',
            },
            Schema { columns: schema },
        )
    }
}

/// Name of the label column of [`ImageSet::to_table`].
pub const LABEL_COLUMN: &str = "label";

fn check_options(opts: &ImageOptions) -> Result<()> {
    for (name, v) in [("width", opts.width), ("height", opts.height)] {
        if let Some(v) = v {
            if v == 0 || v > MAX_OUTPUT_SIDE {
                return Err(Error::param(
                    name,
                    v,
                    format!("give a size from 1 to {MAX_OUTPUT_SIDE} pixels, e.g. 28"),
                ));
            }
        }
    }
    if let Some(c) = opts.channels {
        if c != 1 && c != 3 {
            return Err(Error::param("channels", c, "use 1 (grayscale) or 3 (RGB)"));
        }
    }
    if opts.max_side == 0 || opts.max_side > MAX_OUTPUT_SIDE {
        return Err(Error::param(
            "max-side",
            opts.max_side,
            format!("give a size from 1 to {MAX_OUTPUT_SIDE} pixels, e.g. 32"),
        ));
    }
    Ok(())
}

/// Reads a ZIP of class folders (see [`input`]). `source` names the archive in errors. The
/// shape the options leave open follows the data ([`ShapeRule::Data`]).
pub fn load_zip(bytes: &[u8], opts: &ImageOptions, source: &str) -> Result<ImageSet> {
    load_zip_with(bytes, opts, source, ShapeRule::Data)
}

/// [`load_zip`] with the shape chosen by `rule`.
pub fn load_zip_with(
    bytes: &[u8],
    opts: &ImageOptions,
    source: &str,
    rule: ShapeRule<'_>,
) -> Result<ImageSet> {
    check_options(opts)?;
    let files = input::read_zip(bytes, opts.max_bytes, source)?;
    load_files_with(files, opts, source, rule)
}

/// Reads labelled images from (relative path, bytes) pairs, e.g. a browser folder pick
/// (`digits/3/img1.png`) or a directory walked by the CLI. `source` names the input in
/// errors. The shape the options leave open follows the data ([`ShapeRule::Data`]).
pub fn load_files(
    files: Vec<(String, Vec<u8>)>,
    opts: &ImageOptions,
    source: &str,
) -> Result<ImageSet> {
    load_files_with(files, opts, source, ShapeRule::Data)
}

/// [`load_files`] with the shape chosen by `rule`.
pub fn load_files_with(
    files: Vec<(String, Vec<u8>)>,
    opts: &ImageOptions,
    source: &str,
    rule: ShapeRule<'_>,
) -> Result<ImageSet> {
    check_options(opts)?;
    let files = input::labelled_files(files, source)?;
    // Pass 1: headers only.
    let mut headers = Vec::with_capacity(files.len());
    for f in &files {
        headers.push(decode::header(&f.path, &f.bytes)?);
    }
    let mut sizes: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for h in &headers {
        *sizes.entry((h.width, h.height)).or_default() += 1;
    }
    // Most common size; ties go to the smaller (w, h) (BTreeMap order, strict >). Used by the
    // data rule, and by either rule for the owner's note on resized images.
    let mut common = (0, 0);
    let mut best = 0;
    for (&s, &c) in &sizes {
        if c > best {
            best = c;
            common = s;
        }
    }
    let open = opts.width.is_none() || opts.height.is_none() || opts.channels.is_none();
    let decided = match rule {
        ShapeRule::Dp { z, rng } => shape::decide(&headers, opts, z, rng)?,
        ShapeRule::Data => None,
    };
    // The decided size and channels, else (the data rule, or everything given) the most
    // common size and the channels given or gray iff every file is.
    let (size, channels) = match &decided {
        Some(d) => (d.report.size.unwrap_or(common), d.channels),
        None => (
            common,
            opts.channels
                .unwrap_or_else(|| if headers.iter().all(|h| h.gray) { 1 } else { 3 }),
        ),
    };
    let (width, height) = shape(size, opts);
    let shape_from_data = open && decided.is_none();
    let shape_decision = decided.map(|d| d.report);

    let mut class_names: Vec<String> = files.iter().map(|f| f.class.clone()).collect();
    class_names.sort_unstable_by(|a, b| natural_cmp(a, b));
    class_names.dedup();
    let index: BTreeMap<&str, u32> = class_names
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i as u32))
        .collect();
    let labels: Vec<u32> = files.iter().map(|f| index[f.class.as_str()]).collect();

    // Pass 2: decode, convert, resize, one file at a time.
    let d = width * height * channels;
    let mut pixels = Vec::with_capacity(files.len() * d);
    let mut paths = Vec::with_capacity(files.len());
    let mut other_size = 0usize;
    let mut example = None;
    for f in files {
        let img = decode::decode(&f.path, &f.bytes, opts.alpha)?;
        drop(f.bytes);
        if (img.width, img.height) != common {
            other_size += 1;
            if example.is_none() {
                example = Some(format!("'{}' is {}×{}", f.path, img.width, img.height));
            }
        }
        let px = img.to_f32(channels);
        pixels.extend(resize::resize(
            &px, img.width, img.height, channels, width, height,
        ));
        paths.push(f.path);
    }
    let mut warnings = Vec::new();
    if other_size > 0 {
        warnings.push(format!(
            "{other_size} of {} images differ from the most common size {}×{} (e.g. {}); all were resized to {width}×{height}",
            paths.len(),
            common.0,
            common.1,
            example.unwrap_or_default()
        ));
    }
    Ok(ImageSet {
        width,
        height,
        channels,
        class_names,
        labels,
        pixels,
        paths,
        shape_from_data,
        shape_decision,
        warnings,
    })
}

/// `a · num / den`, rounded, within 1..=[`MAX_OUTPUT_SIDE`].
fn ratio(a: usize, num: usize, den: usize) -> usize {
    ((a as f64 * num as f64 / den as f64).round() as usize).clamp(1, MAX_OUTPUT_SIDE)
}

/// The output shape: given sizes win; a missing one follows the aspect ratio of `common`
/// (the most common size, or the size decided under DP); with neither, `common` capped to
/// `max_side` on its longer side ([`capped`]).
fn shape(common: (usize, usize), opts: &ImageOptions) -> (usize, usize) {
    let (cw, ch) = common;
    match (opts.width, opts.height) {
        (Some(w), Some(h)) => (w, h),
        (Some(w), None) => (w, ratio(w, ch, cw)),
        (None, Some(h)) => (ratio(h, cw, ch), h),
        (None, None) => capped(common, opts.max_side),
    }
}

/// `size` shrunk, keeping its aspect ratio, so that its longer side is at most `max_side`
/// (unchanged when it already is): both sides in 1..=`max_side`.
pub(crate) fn capped(size: (usize, usize), max_side: usize) -> (usize, usize) {
    let (cw, ch) = size;
    if cw.max(ch) <= max_side {
        (cw, ch)
    } else if cw >= ch {
        (max_side, ratio(max_side, ch, cw).min(max_side))
    } else {
        (ratio(max_side, cw, ch).min(max_side), max_side)
    }
}

/// Reads MNIST IDX files: `images` (magic 0x00000803: u8 images n × rows × cols) and
/// `labels` (magic 0x00000801: n u8 labels). Each may be gzip-compressed. The images are
/// gray at their stored size unless `opts` gives a shape (they are resized then).
pub fn load_idx(images: &[u8], labels: &[u8], opts: &ImageOptions) -> Result<ImageSet> {
    check_options(opts)?;
    let images = gunzip_if_needed(images, opts.max_bytes, "IDX images")?;
    let labels = gunzip_if_needed(labels, opts.max_bytes, "IDX labels")?;
    let be = |b: &[u8], i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize;
    if images.len() < 16 || be(&images, 0) != 0x803 {
        return Err(Error::Data(
            "IDX images: not an MNIST image file (magic 0x00000803 expected, e.g. train-images-idx3-ubyte); give the image file first and the label file second".into(),
        ));
    }
    if labels.len() < 8 || be(&labels, 0) != 0x801 {
        return Err(Error::Data(
            "IDX labels: not an MNIST label file (magic 0x00000801 expected, e.g. train-labels-idx1-ubyte)".into(),
        ));
    }
    let (n, rows, cols) = (be(&images, 4), be(&images, 8), be(&images, 12));
    let nl = be(&labels, 4);
    if rows == 0 || cols == 0 || rows > decode::MAX_SIDE || cols > decode::MAX_SIDE {
        return Err(Error::Data(format!(
            "IDX images: image size {cols}×{rows} is not usable; the file is damaged"
        )));
    }
    if n != nl {
        return Err(Error::Data(format!(
            "IDX: {n} images but {nl} labels; give the label file that belongs to the image file"
        )));
    }
    let per = rows * cols;
    if images.len() != 16 + n * per || labels.len() != 8 + n {
        return Err(Error::Data(format!(
            "IDX: the files are truncated or damaged ({} image bytes for {n} images of {cols}×{rows}, {} label bytes); download them again",
            images.len(),
            labels.len()
        )));
    }
    let (width, height) = shape(
        (cols, rows),
        &ImageOptions {
            max_side: MAX_OUTPUT_SIDE,
            ..opts.clone()
        },
    );
    let channels = opts.channels.unwrap_or(1);
    let mut seen = [false; 256];
    for &l in &labels[8..] {
        seen[l as usize] = true;
    }
    let levels: Vec<u8> = (0..=255u8).filter(|&l| seen[l as usize]).collect();
    let class_names: Vec<String> = levels.iter().map(|l| l.to_string()).collect();
    let mut code = [0u32; 256];
    for (i, &l) in levels.iter().enumerate() {
        code[l as usize] = i as u32;
    }
    let mut pixels = Vec::with_capacity(n * width * height * channels);
    for i in 0..n {
        let img = decode::Decoded {
            width: cols,
            height: rows,
            channels: 1,
            data: images[16 + i * per..16 + (i + 1) * per].to_vec(),
        };
        pixels.extend(resize::resize(
            &img.to_f32(channels),
            cols,
            rows,
            channels,
            width,
            height,
        ));
    }
    Ok(ImageSet {
        width,
        height,
        channels,
        class_names,
        labels: labels[8..].iter().map(|&l| code[l as usize]).collect(),
        pixels,
        paths: (0..n).map(|i| format!("idx/{i}")).collect(),
        shape_from_data: false,
        shape_decision: None,
        warnings: Vec::new(),
    })
}

fn gunzip_if_needed(bytes: &[u8], max: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .take(max + 1)
            .read_to_end(&mut out)
            .map_err(|e| Error::Data(format!("{what}: cannot decompress the gzip file ({e})")))?;
        if out.len() as u64 > max {
            return Err(Error::Data(format!(
                "{what}: decompresses to more than {max} bytes"
            )));
        }
        Ok(out)
    } else {
        Ok(bytes.to_vec())
    }
}

/// A table whose non-label columns are s² numeric pixel columns (e.g. an MNIST-style CSV)
/// as s × s gray images, for previews: values in 0..=1 are scaled by 255, values in 0..=255
/// (with a maximum above 16) are kept, anything else is min–max scaled to 0..=255. These
/// scalings look at the data: for display to the data owner only, not for release.
/// Errors when there is no label column, a non-numeric feature column, or a column count
/// that is not a square.
pub fn table_as_images(table: &Table) -> Result<ImageSet> {
    let li = table.label_index.ok_or_else(|| {
        Error::Data("no label column was chosen; choose the label column first".into())
    })?;
    let (codes, levels) = match &table.columns[li] {
        Column::Categorical { codes, levels } => (codes, levels),
        Column::Numeric { .. } => {
            return Err(Error::Data(
                "internal: the label column must be categorical".into(),
            ))
        }
    };
    let mut cols = Vec::new();
    for (j, (name, c)) in table.names.iter().zip(&table.columns).enumerate() {
        if j == li {
            continue;
        }
        match c {
            Column::Numeric { values, .. } => cols.push(values),
            Column::Categorical { .. } => {
                return Err(Error::Data(format!(
                    "column '{name}' is not numeric, so the table is not an image table (label + pixel columns)"
                )))
            }
        }
    }
    let d = cols.len();
    let s = (d as f64).sqrt().round() as usize;
    if d == 0 || s * s != d {
        return Err(Error::Data(format!(
            "the table has {d} pixel columns besides the label, not a square number (e.g. 784 = 28×28), so it cannot be shown as images"
        )));
    }
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for c in &cols {
        for &v in c.iter() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let (offset, scale) = if lo >= 0.0 && hi <= 1.0 {
        (0.0, 255.0)
    } else if lo >= 0.0 && hi <= 255.0 && hi > 16.0 {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, 255.0 / (hi - lo))
    } else {
        (lo, 1.0)
    };
    let n = table.n_rows;
    let mut pixels = vec![0f32; n * d];
    for (j, c) in cols.iter().enumerate() {
        for (i, &v) in c.iter().enumerate() {
            pixels[i * d + j] = ((v - offset) * scale).clamp(0.0, 255.0);
        }
    }
    Ok(ImageSet {
        width: s,
        height: s,
        channels: 1,
        class_names: levels.clone(),
        labels: codes.clone(),
        pixels,
        paths: (0..n).map(|i| format!("row {}", i + 1)).collect(),
        shape_from_data: false,
        shape_decision: None,
        warnings: Vec::new(),
    })
}

/// A preview grid PNG of real images: one row per class, the first `per_class` images of each
/// (in path order). It shows private images: for the data owner's screen, not for release.
pub fn preview_grid(set: &ImageSet, per_class: usize) -> Result<Vec<u8>> {
    let mut rows: Vec<Vec<Vec<u8>>> = vec![Vec::new(); set.class_names.len()];
    for (i, &l) in set.labels.iter().enumerate() {
        let row = &mut rows[l as usize];
        if row.len() < per_class {
            row.push(output::to_u8(set.image(i)));
        }
    }
    output::grid_png(&rows, set.width, set.height, set.channels)
}

/// The result of [`synthesize_images`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSynthOutput {
    /// A ZIP of PNGs, `<class>/<index>.png`.
    pub zip: Vec<u8>,
    /// A grid PNG: one row per class, up to [`PREVIEW_PER_CLASS`] synthetic images each.
    pub preview_png: Vec<u8>,
    /// The privacy receipt.
    pub receipt: Receipt,
    /// Number of PNGs in the ZIP.
    pub files: usize,
}

/// Runs DP-CDA on the images (its defaults hand a large set to the GMM) and returns the ZIP of
/// synthetic PNGs, a preview grid and the receipt. See [`synthesize_images_to`].
pub fn synthesize_images(
    set: &ImageSet,
    opts: &SynthOptions,
    rng: &mut ReleaseRng,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<ImageSynthOutput> {
    let (zip, preview_png, receipt, files) = synthesize_images_to(
        set,
        opts,
        &Mechanism::Cda,
        rng,
        Vec::new(),
        PREVIEW_PER_CLASS,
        progress,
    )?;
    Ok(ImageSynthOutput {
        zip,
        preview_png,
        receipt,
        files,
    })
}

/// Runs `mechanism` on the images, writing the ZIP of synthetic PNGs into `out` row by row:
/// DP-CDA (whose defaults hand 20,000 or more images of at least 100 pixel values to the GMM,
/// [`crate::pipelines::synth::auto_gmm`]) or, named, the GMM (with [`image_components`]
/// components unless given); any other is refused ([`MECHANISMS`]). Returns the sink, the
/// preview grid PNG (`preview_per_class` images per class), the receipt and the number of
/// PNGs written.
///
/// The pixel columns get the public bounds 0..=255, so with `normalize` `dp` (the default) or
/// `public` nothing is spent on normalization; `data` mode works too and is declared
/// unprotected in the receipt as usual. Synthetic pixels are rounded and clamped to 0..=255
/// (post-processing).
pub fn synthesize_images_to<W: Write>(
    set: &ImageSet,
    opts: &SynthOptions,
    mechanism: &Mechanism,
    rng: &mut ReleaseRng,
    out: W,
    preview_per_class: usize,
    progress: impl FnMut(f64) -> Result<()>,
) -> Result<(W, Vec<u8>, Receipt, usize)> {
    if set.is_empty() {
        return Err(Error::Data("there are no images to synthesize from".into()));
    }
    let counts = set.class_counts();
    let mechanism = match mechanism {
        Mechanism::Cda => mechanism.clone(),
        Mechanism::Gmm(o) => Mechanism::Gmm(GmmSynthOptions {
            components: o.components.or(Some(image_components(set.dim()))),
        }),
        other => return Err(Error::param("mechanism", other.name(), MECHANISMS)),
    };
    for (k, &n) in counts.iter().enumerate() {
        // l is DP-CDA's (a named GMM has none).
        if n < opts.mix && matches!(mechanism, Mechanism::Cda) {
            return Err(Error::param(
                "mix",
                opts.mix,
                format!(
                    "class folder '{}' has only {n} image(s), fewer than l = {}; use a mix order of {n} or smaller, or add images to that folder",
                    set.class_names[k], opts.mix
                ),
            ));
        }
    }
    // A shape decided under DP is a release from these images: the synthesis composes it.
    let with_prior;
    let opts = match &set.shape_decision {
        Some(d) => {
            with_prior = SynthOptions {
                prior: Some(PriorRelease {
                    name: shape::COMPONENT,
                    noise_multiplier: d.noise_multiplier,
                }),
                ..opts.clone()
            };
            &with_prior
        }
        None => opts,
    };
    let (table, schema) = set.to_table();
    // Output folder per class: made safe, and unique.
    let mut folders: Vec<String> = Vec::with_capacity(set.class_names.len());
    for name in &set.class_names {
        let mut f = output::safe_folder(name);
        while folders.contains(&f) {
            f.push('_');
        }
        folders.push(f);
    }
    let class_of: BTreeMap<&str, usize> = set
        .class_names
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let (w, h, c, d) = (set.width, set.height, set.channels, set.dim());
    let mut zip = output::PngZip::new(out);
    let mut index = vec![0usize; set.class_names.len()];
    let mut preview: Vec<Vec<Vec<u8>>> = vec![Vec::new(); set.class_names.len()];
    let mut bytes = vec![0u8; d];
    // The GMM's images of a set as large as its defaults take lose their speckle
    // (post-processing, `despeckle`, where it was measured; on a few hundred tiny images the
    // GMM's noise leaves sparse bright pixels that are the signal, and the filter takes them).
    let gmm = runs_gmm(opts, &mechanism, true, &table);
    let despeckled = gmm && set.len() >= AUTO_MIN_ROWS;
    let mut scratch = Vec::with_capacity(d);
    let mut receipt = synthesize_denoised(
        &table,
        Some(&schema),
        opts,
        &mechanism,
        rng,
        |names| {
            if names.len() != d + 1 || names[0] != LABEL_COLUMN {
                return Err(Error::Data("internal: unexpected image columns".into()));
            }
            Ok(())
        },
        |cells| {
            let k = *class_of
                .get(cells[0].as_str())
                .ok_or_else(|| Error::Data("internal: unknown class in output".into()))?;
            for (b, cell) in bytes.iter_mut().zip(&cells[1..]) {
                let v: f64 = cell
                    .parse()
                    .map_err(|_| Error::Data(format!("internal: pixel value '{cell}'")))?;
                *b = v.round().clamp(0.0, 255.0) as u8;
            }
            if despeckled {
                despeckle::despeckle(&mut bytes, w, h, c, despeckle::TAU, &mut scratch);
            }
            let png = output::encode_png(w, h, c, &bytes)?;
            zip.add(&format!("{}/{:05}.png", folders[k], index[k]), &png)?;
            index[k] += 1;
            if preview[k].len() < preview_per_class {
                preview[k].push(bytes.clone());
            }
            Ok(())
        },
        progress,
    )?;
    drop(table);
    if gmm != (receipt.mechanism == "dp-gmm") {
        return Err(Error::Internal(format!(
            "the image pipeline expected {} and the run took {}",
            if gmm { "dp-gmm" } else { "another mechanism" },
            receipt.mechanism
        )));
    }
    if let (true, Parameters::Gmm(p)) = (despeckled, &mut receipt.parameters) {
        if let Some(e) = &mut p.encoding {
            e.decoding.push_str(&format!(
                "; images: each pixel more than {} levels from the median of its 3×3 neighbourhood (per channel) is replaced by that median, which removes isolated speckles (post-processing)",
                despeckle::TAU
            ));
        }
    }
    let files = zip.files();
    let sink = zip.finish()?;
    let preview_png = output::grid_png(&preview, w, h, c)?;
    match &set.shape_decision {
        None => receipt.guarantee.public_information.push(format!(
            "images: the pixel range 0..=255 (public bounds of every pixel column, no budget spent on it) and the output shape {w}×{h}×{c}"
        )),
        Some(d) => {
            receipt.guarantee.public_information.push(
                "images: the pixel range 0..=255 (public bounds of every pixel column, no budget spent on it)".into(),
            );
            receipt.guarantee.public_information.push(format!(
                "images: the output shape {w}×{h}×{c}, decided under DP where the options left it open (noisy counts of the images' sizes over {} candidates and of the colour images; discrete Gaussian noise of standard deviation {:.3} per count, noise multiplier {:.4}; component '{}')",
                d.candidates,
                d.noise_std,
                d.noise_multiplier,
                shape::COMPONENT
            ));
            receipt.warnings.extend(d.warnings.iter().cloned());
        }
    }
    if set.shape_from_data {
        receipt.guarantee.unprotected.push(format!(
            "image shape {w}×{h}, {c} channel(s): chosen from the input (its most common image size, and whether every file is grayscale); give width, height and channels to make it data-independent"
        ));
    }
    Ok((sink, preview_png, receipt, files))
}

#[cfg(test)]
mod tests;
