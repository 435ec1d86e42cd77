//! CSV synthesis (feature `wasm`): `inspectCsv`, `synthesizeCsv` and the `Dataset` class.

use super::{bytes_of, from_js, internal, js_err, object, progress, to_js, JsChunks};
use crate::api::{self, SynthParams, SynthRequest};
use crate::data::{read_csv_bytes, read_csv_stream, ByteStream, CsvOptions, Table};
use serde::Serialize;
use std::io::Write;
use wasm_bindgen::prelude::*;

// The TypeScript types of these bindings are hand-written once, in js/types.d.ts (the build
// runs wasm-bindgen with --no-typescript; tests/js/types.test.mjs checks them against the core).

/// Checked parameters of an options object.
fn params(options: JsValue, what: &str) -> Result<SynthParams, JsValue> {
    let req: SynthRequest = from_js(options, what)?;
    SynthParams::try_from(&req).map_err(js_err)
}

/// Header, column types and a label guess from the first `maxRows` rows (default 2000).
#[wasm_bindgen(js_name = inspectCsv, unchecked_return_type = "CsvSummary")]
pub fn inspect_csv(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(js_name = maxRows)] max_rows: Option<f64>,
) -> Result<JsValue, JsValue> {
    let bytes = bytes_of(&input, "inspectCsv")?;
    let rows = api::inspect_rows(max_rows).map_err(js_err)?;
    to_js(&api::inspect_csv(&bytes, rows).map_err(js_err)?)
}

/// Synthesizes a DP dataset from CSV text: returns `{csv, receipt}`.
#[wasm_bindgen(
    js_name = synthesizeCsv,
    unchecked_return_type = "{ csv: string; receipt: Receipt }"
)]
pub fn synthesize_csv(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] input: JsValue,
    #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
    #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
    on_progress: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let bytes = bytes_of(&input, "synthesizeCsv")?;
    let req: SynthRequest = from_js(options, "synthesizeCsv options")?;
    let (report, thrown) = progress(on_progress);
    let (csv, receipt) = thrown.result(api::synthesize_csv(&bytes, &req, report))?;
    drop(bytes);
    let text = String::from_utf8(csv).map_err(|_| internal("internal: the output is not UTF-8"))?;
    object(&[
        ("csv", JsValue::from_str(&text)),
        ("receipt", to_js(&receipt)?),
    ])
}

/// A Blob read a slice at a time ([`BLOB_SLICE`] bytes) with `FileReaderSync`.
struct BlobRead {
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
    at: f64,
}

/// Bytes a `FileReaderSync` call reads at most.
const BLOB_SLICE: usize = 8 << 20;

impl std::io::Read for BlobRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.blob.size();
        if buf.is_empty() || self.at >= size {
            return Ok(0);
        }
        let end = size.min(self.at + buf.len().min(BLOB_SLICE) as f64);
        let io = |e: JsValue| {
            std::io::Error::other(format!(
                "the file could not be read (was it changed or moved after it was chosen? choose it again): {e:?}"
            ))
        };
        let part = self.blob.slice_with_f64_and_f64(self.at, end).map_err(io)?;
        let bytes = self.reader.read_as_array_buffer(&part).map_err(io)?;
        let bytes = js_sys::Uint8Array::new(&bytes);
        // A slice holds at most `end - at` bytes, which fit `buf`.
        let n = (bytes.length() as usize).min(buf.len());
        bytes.subarray(0, n as u32).copy_to(&mut buf[..n]);
        self.at += n as f64;
        Ok(n)
    }
}

/// Reads the CSV of a Blob (a File the user chose) without holding its bytes: the table is
/// parsed as the slices are read, so memory holds the table alone. `FileReaderSync` is
/// there in Web Workers only.
fn read_blob(blob: &web_sys::Blob, opts: &CsvOptions) -> Result<Table, JsValue> {
    let reader = web_sys::FileReaderSync::new().map_err(|_| {
        super::bad_argument("Dataset: a Blob or File is read in a Web Worker only; on the main thread pass its bytes (new Uint8Array(await file.arrayBuffer()))")
    })?;
    let open = || -> std::io::Result<Box<dyn ByteStream>> {
        Ok(Box::new(std::io::BufReader::with_capacity(
            BLOB_SLICE,
            BlobRead {
                blob: blob.clone(),
                reader: reader.clone(),
                at: 0.0,
            },
        )))
    };
    read_csv_stream(&open, blob.size() as u64, opts).map_err(js_err)
}

/// A CSV read once and kept in memory, for the page and the worker: class counts for the
/// live readout, synthesis, the utility check and the preview histograms without re-parsing.
#[wasm_bindgen]
pub struct Dataset {
    table: Table,
    label: String,
    schema: Option<crate::data::Schema>,
}

#[wasm_bindgen]
impl Dataset {
    /// Reads CSV text or bytes, or (in a Web Worker) a Blob or File, with `{label, schema?}`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | Blob")] input: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ label: string; schema?: object | string }")]
        options: JsValue,
    ) -> Result<Dataset, JsValue> {
        let p = params(options, "Dataset options")?;
        let opts = p.csv_options("input").map_err(js_err)?;
        let table = match input.dyn_ref::<web_sys::Blob>() {
            Some(blob) => read_blob(blob, &opts)?,
            None => read_csv_bytes(&bytes_of(&input, "Dataset")?, &opts).map_err(js_err)?,
        };
        Ok(Dataset {
            table,
            label: p.label.unwrap_or_default(),
            schema: p.schema,
        })
    }

    /// Checked parameters of a call on this table ([`SynthParams::on_table`]).
    fn params(&self, options: JsValue, what: &str) -> Result<SynthParams, JsValue> {
        params(options, what)?
            .on_table(&self.table, &self.label, self.schema.as_ref())
            .map_err(js_err)
    }

    /// Rows kept.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> u32 {
        self.table.n_rows as u32
    }

    /// Rows dropped for missing values.
    #[wasm_bindgen(getter, js_name = rowsDropped)]
    pub fn rows_dropped(&self) -> u32 {
        self.table.rows_dropped as u32
    }

    /// Column names.
    #[wasm_bindgen(getter)]
    pub fn columns(&self) -> Vec<String> {
        self.table.names.clone()
    }

    /// `{labels, counts}`: the classes and their sizes (public under the adjacency).
    #[wasm_bindgen(
        js_name = classCounts,
        unchecked_return_type = "{ labels: string[]; counts: number[] }"
    )]
    pub fn class_counts(&self) -> Result<JsValue, JsValue> {
        let counts = api::class_counts(&self.table).map_err(js_err)?;
        let li = self.table.label_index.unwrap_or(0);
        let labels = match &self.table.columns[li] {
            crate::data::Column::Categorical { levels, .. } => levels.clone(),
            crate::data::Column::Numeric { .. } => Vec::new(),
        };
        #[derive(Serialize)]
        struct Out {
            labels: Vec<String>,
            counts: Vec<usize>,
        }
        to_js(&Out { labels, counts })
    }

    /// The noise a synthesis with `options` would calibrate (the live readout): the
    /// `noisePreview` of this table's class sizes, columns and data path; `view`
    /// (`{curve: false}`: the calibrated point only) as `api::PreviewView`.
    #[wasm_bindgen(js_name = noisePreview, unchecked_return_type = "PreviewResult")]
    pub fn noise_preview(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(unchecked_param_type = "PreviewView")] view: JsValue,
    ) -> Result<JsValue, JsValue> {
        let p = self.params(options, "noisePreview options")?;
        // Undefined or null reads as `{}`: the defaults (`from_js`).
        let view: api::PreviewView = from_js(view, "noisePreview view")?;
        to_js(&api::dataset_preview_as(&self.table, &p, view).map_err(js_err)?)
    }

    /// Synthesizes: `{csv: Uint8Array, receipt}` (bytes, to hand to a Blob without copies).
    #[wasm_bindgen(unchecked_return_type = "{ csv: Uint8Array; receipt: Receipt }")]
    pub fn synthesize(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
        on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsValue> {
        let p = self.params(options, "synthesize options")?;
        let mut rng = api::rng_for_seed(p.seed).map_err(js_err)?;
        let (report, thrown) = progress(on_progress);
        let (csv, receipt) = thrown.result(api::synthesize_table_pieces(
            &self.table,
            &p,
            &mut rng,
            report,
        ))?;
        let len = u32::try_from(csv.len())
            .map_err(|_| internal("internal: the output is larger than 4 GiB"))?;
        let arr = js_sys::Uint8Array::new_with_length(len);
        let mut at = 0u32;
        for piece in csv.into_pieces() {
            // Pieces are at most a few hundred KiB; their sum fits u32 (checked above).
            let end = at + piece.len() as u32;
            arr.subarray(at, end).copy_from(&piece);
            at = end;
        }
        object(&[("csv", arr.into()), ("receipt", to_js(&receipt)?)])
    }

    /// Synthesizes into `onChunk`: the CSV (header included) handed over in order as
    /// `Uint8Array`s of about 4 MiB while the rows are made, so the whole output never sits in
    /// the wasm memory (whose size never shrinks). Returns the receipt. If `onChunk` or
    /// `onProgress` throws, the synthesis stops and the exception is rethrown; the chunks
    /// already handed over are then not a complete output.
    #[wasm_bindgen(js_name = synthesizeChunks, unchecked_return_type = "Receipt")]
    pub fn synthesize_chunks(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(js_name = onChunk, unchecked_param_type = "(chunk: Uint8Array) => void")]
        on_chunk: js_sys::Function,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
        on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsValue> {
        let p = self.params(options, "synthesizeChunks options")?;
        let mut rng = api::rng_for_seed(p.seed).map_err(js_err)?;
        let (report, thrown) = progress(on_progress);
        let sink = JsChunks::new(on_chunk, thrown.clone());
        let r = api::synthesize_table_to(&self.table, &p, &mut rng, sink, report);
        let r = r.and_then(|(mut sink, receipt)| {
            sink.flush().map_err(api::csv_write_err)?;
            Ok(receipt)
        });
        to_js(&thrown.result(r)?)
    }

    /// Train on synthetic, test on a held-out real split (a separate run on the training
    /// split; nothing from it is released).
    #[wasm_bindgen(js_name = utilityCheck, unchecked_return_type = "UtilityReport")]
    pub fn utility_check(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SynthOptions")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "ProgressCallback")]
        on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsValue> {
        let p = self.params(options, "utilityCheck options")?;
        let mut rng = api::rng_for_seed(p.seed).map_err(js_err)?;
        let (report, thrown) = progress(on_progress);
        let r = thrown.result(api::utility_check(&self.table, &p, &mut rng, report))?;
        to_js(&r)
    }

    /// Per-column histograms, real against a synthetic CSV with the same header.
    #[wasm_bindgen(unchecked_return_type = "ColumnHistogram[]")]
    pub fn histograms(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] synthetic: JsValue,
    ) -> Result<JsValue, JsValue> {
        let bytes = bytes_of(&synthetic, "histograms")?;
        let opts = crate::data::CsvOptions {
            label: Some(self.label.clone()),
            source_name: "synthetic".into(),
            ..Default::default()
        };
        let s = read_csv_bytes(&bytes, &opts).map_err(js_err)?;
        to_js(&api::histograms(&self.table, &s).map_err(js_err)?)
    }
}
