// The privmix browser app. All computation runs in a Web Worker (app-worker.js) on the same
// Rust core as the CLI; this file only drives the page. Nothing here opens a connection.
//
// Page weight: the first load is this page's HTML, CSS and small scripts only. The engine (the
// worker with the inlined wasm) starts on the first file choice or demo click, and the demo
// datasets are imported when a demo is clicked: both are the app's own files, fetched once.
//
// Loads are serialized: every file choice, demo click or label change gets a generation
// number; a load that a newer one has superseded stops touching the page, and Synthesize is
// enabled only when the dataset shown is the one loaded in the worker (`readyGen === loadGen`).
import { PrivmixWorker } from "./vendor/worker-client.mjs";
import { $, download, friendly, num, setStatus } from "./common.js";

const pm = new PrivmixWorker({
  createWorker: () => new Worker(new URL("./app-worker.js", import.meta.url), { type: "module" }),
});
let engineStarted = false;
function startEngine() {
  if (engineStarted) return;
  engineStarted = true;
  pm.version()
    .then((v) => ($("version").textContent = v))
    .catch((e) => setStatus("error", friendly(e, "The privmix engine did not start")));
}

const state = {
  kind: null, // "csv" | "images"
  name: "data",
  source: null, // File | string | Uint8Array (CSV), or File[] / ZIP bytes (images)
  summary: null,
  dataset: null, // {rows, rowsDropped, columns, labels, counts}
  images: null, // {classes, counts, width, height, channels, images}
  result: null, // {kind, data: Uint8Array, receipt, ...}
  busy: false, // a synthesis or utility check is running
  urls: [],
  schema: null, // {json, source}: public bounds (a schema file, a demo's schema, or pixels)
  fileSchema: null,
  // What the table on screen was read with (undefined: none read yet): each call's label and
  // schema; a different schema reads the CSV again (setSchema).
  datasetSchema: undefined,
  datasetLabel: undefined,
};

const PIXEL_SCHEMA_SOURCE = "pixels";

// A schema acts when the table is read (its "ignore" columns are dropped, its types applied):
// a new one reads the CSV again (`reload`: false where the caller is about to read it).
function setSchema(schema, { reload = true } = {}) {
  state.schema = schema;
  const publicOpt = $("normalize-select").querySelector('option[value="public"]');
  publicOpt.disabled = !schema;
  publicOpt.textContent = schema
    ? `public: ranges from ${schema.source} only, no budget (the columns' distributions are not released)`
    : "public: ranges from a schema (load one below)";
  // dp stays the default with a schema too (as in the CLI and the npm API): the schema's
  // bounds are used as given, and each column's distribution is released under DP where the
  // data can afford it, which keeps the synthetic columns' shapes (either way the values
  // stay inside the ranges).
  if (!schema && $("normalize-select").value === "public") $("normalize-select").value = "dp";
  scheduleReadout();
  if (reload && state.kind === "csv" && state.source !== null && state.datasetSchema !== schema) {
    chooseLabel($("label-select").value);
  }
}

// Load generations (see the top of this file).
let loadGen = 0;
let readyGen = -1;
let loadChain = Promise.resolve();
function enqueueLoad(fn) {
  const gen = ++loadGen;
  startEngine();
  clearResult();
  setBusy(state.busy);
  const run = loadChain.then(() => (gen === loadGen ? fn(gen) : undefined));
  loadChain = run.catch(() => {});
  return run;
}
const current = (gen) => gen === loadGen;

function pixelSchema(columns, label) {
  const cols = {};
  for (const c of columns) if (c !== label) cols[c] = { type: "numeric", min: 0, max: 255, integer: true };
  return { columns: cols };
}

// ---------------------------------------------------------------- status and messages
function setBusy(busy) {
  state.busy = busy;
  $("synthesize-button").disabled = busy || !readyToRun();
  $("utility-button").disabled = busy || !(readyToRun() && state.kind === "csv");
  for (const b of document.querySelectorAll("button.demo")) b.disabled = busy;
  $("file-input").disabled = busy;
  $("folder-input").disabled = busy;
  $("label-select").disabled = busy;
}

function readyToRun() {
  if (readyGen !== loadGen) return false;
  return (state.kind === "csv" && state.dataset) || (state.kind === "images" && state.images);
}

function clearResult() {
  state.result = null;
  for (const u of state.urls) URL.revokeObjectURL(u);
  state.urls = [];
  $("preview").replaceChildren();
  $("hist-controls").hidden = true;
  $("download-data").disabled = true;
  $("download-receipt").disabled = true;
  $("receipt-summary").textContent = "";
  $("utility-result").textContent = "";
  $("progress").hidden = true;
}

// ---------------------------------------------------------------- loading data
const IMAGE_RE = /\.(png|jpe?g)$/i;

// wasm32 memory tops out at 4 GiB, and the table, the output and the input share it.
const MAX_CSV_BYTES = 1024 * 1024 * 1024;
const MAX_IMAGE_BYTES = 1024 * 1024 * 1024;

async function loadFiles(files) {
  if (!files.length) return;
  // Whatever happens next, the data shown before this choice is no longer the one to run on.
  ++loadGen;
  clearResult();
  setBusy(state.busy);
  const total = files.reduce((s, f) => s + f.size, 0);
  const isCsv = files.length === 1 && !/\.(zip|png|jpe?g)$/i.test(files[0].name);
  if (total > (isCsv ? MAX_CSV_BYTES : MAX_IMAGE_BYTES)) {
    setStatus("error", `This input is ${(total / 2 ** 30).toFixed(2)} GiB; the browser app reads up to 1 GiB. Use the privmix command line for larger files, or split the data.`);
    return;
  }
  if (total === 0) {
    setStatus("error", `${files[0].name} is empty: choose a file with a header row and data rows.`);
    return;
  }
  const first = files[0];
  const base = first.name.replace(/\.(csv|tsv|txt|gz|zip|png|jpe?g)$/gi, "") || "data";
  if (files.length === 1 && /\.zip$/i.test(first.name)) {
    await loadImages(base, first);
  } else if (files.every((f) => IMAGE_RE.test(f.name))) {
    await loadImages("images", files);
  } else if (files.length === 1) {
    await loadCsv(base, first);
  } else {
    setStatus("error", "Choose one CSV/TSV file, one ZIP of class folders, or image files (PNG/JPEG) from class folders.");
  }
}

function loadCsv(name, source, demoSchema = null) {
  return enqueueLoad((gen) => loadCsvNow(gen, name, source, demoSchema));
}

async function loadCsvNow(gen, name, source, demoSchema) {
  state.kind = "csv";
  $("pixels-row").hidden = true;
  $("pixels-public").checked = false;
  setSchema(demoSchema ? { json: demoSchema, source: `the ${name} schema (public bounds)` } : state.fileSchema, { reload: false });
  state.name = name;
  state.source = source;
  state.dataset = null;
  state.images = null;
  $("label-select").hidden = true;
  $("class-info").textContent = "";
  $("data-info").textContent = "";
  setStatus("idle", "Reading the header…");
  try {
    const head = source.slice(0, 1 << 20);
    const summary = await pm.inspectCsv(head, 2000);
    if (!current(gen)) return;
    state.summary = summary;
    const sel = $("label-select");
    sel.replaceChildren(
      ...summary.columns.map((c) => {
        const o = document.createElement("option");
        o.value = c.name;
        o.textContent = `${c.name} (${c.kind}${c.distinct ? `, ${c.distinct} values` : ""})`;
        return o;
      }),
    );
    sel.value = summary.suggestedLabel ?? summary.columns[summary.columns.length - 1].name;
    sel.hidden = false;
    $("data-info").textContent = `${name}: ${summary.columns.length} columns${summary.imageSide ? `, looks like ${summary.imageSide}×${summary.imageSide} images` : ""}.`;
    // Whether the columns are public 0–255 pixels is the user's call: the header only
    // prompts the question (nothing is ticked for them: that would be a data-dependent choice).
    if (summary.imageSide && !demoSchema) $("pixels-row").hidden = false;
    await loadDatasetNow(gen, sel.value);
  } catch (e) {
    if (current(gen)) setStatus("error", friendly(e, "Could not read this file"));
  }
}

function chooseLabel(label) {
  if (state.kind !== "csv" || state.source === null) return Promise.resolve();
  return enqueueLoad((gen) => loadDatasetNow(gen, label));
}

async function loadDatasetNow(gen, label) {
  state.dataset = null;
  setStatus("idle", "Reading the data…");
  try {
    // The pixel range for this label, from the header (the table is read with it).
    if ($("pixels-public").checked && !$("pixels-row").hidden && state.summary) {
      const names = state.summary.columns.map((c) => c.name);
      setSchema({ json: pixelSchema(names, label), source: "the pixel range 0–255", kind: PIXEL_SCHEMA_SOURCE }, { reload: false });
    }
    const schema = state.schema;
    const ds = await pm.loadDataset(state.source, schema ? { label, schema: schema.json } : { label });
    if (!current(gen)) return;
    state.dataset = ds;
    state.datasetSchema = schema;
    state.datasetLabel = label;
    const classes = ds.labels.map((l, i) => `${l} (${ds.counts[i]})`);
    const shown = classes.length > 12 ? classes.slice(0, 12).join(", ") + ", …" : classes.join(", ");
    $("class-info").textContent =
      `${ds.rows} rows in ${ds.labels.length} classes: ${shown}.` +
      (ds.rowsDropped ? ` ${ds.rowsDropped} rows with missing values were dropped.` : "");
    $("samples-input").placeholder = `same as input (${ds.rows})`;
    readyGen = gen;
    setStatus("idle", "Ready. Set the privacy budget and press Synthesize.");
  } catch (e) {
    if (!current(gen)) return;
    state.dataset = null;
    setStatus("error", friendly(e, state.schema ? `Could not read the data with this label and ${state.schema.source}` : "Could not use this label"));
  } finally {
    if (current(gen)) {
      setBusy(state.busy);
      scheduleReadout();
    }
  }
}

function loadImages(name, source) {
  return enqueueLoad((gen) => loadImagesNow(gen, name, source));
}

async function loadImagesNow(gen, name, source) {
  state.kind = "images";
  state.name = name;
  state.source = source;
  state.dataset = null;
  state.images = null;
  $("label-select").hidden = true;
  $("class-info").textContent = "";
  $("data-info").textContent = "";
  $("pixels-row").hidden = true;
  $("pixels-public").checked = false;
  setSchema(null, { reload: false });
  setStatus("idle", "Reading the images…");
  try {
    const io = imageOptions();
    const info = await pm.inspectImages(source, io);
    if (!current(gen)) return;
    state.images = info;
    const classes = info.classNames.map((c, i) => `${c} (${info.classCounts[i]})`);
    const open = shapeOpen(io);
    $("data-info").textContent = `${name}: ${info.images} images, resized to ${info.width}×${info.height} ${info.channels === 3 ? "RGB" : "grayscale"}` +
      (open ? " (their most common shape; the synthesis confirms it under DP, a small share of ε, unless you give size and color below)." : ".");
    $("class-info").textContent = `Classes from the folder names: ${classes.join(", ")}.`;
    $("samples-input").placeholder = `same as input (${info.images})`;
    readyGen = gen;
    setStatus("idle", "Ready. Set the privacy budget and press Synthesize.");
  } catch (e) {
    if (!current(gen)) return;
    state.images = null;
    setStatus("error", friendly(e, "Could not read these images"));
  } finally {
    if (current(gen)) {
      setBusy(state.busy);
      scheduleReadout();
    }
  }
}

// ---------------------------------------------------------------- options and readout
function options() {
  const epsilon = num("epsilon-input", "ε");
  const delta = num("delta-input", "δ");
  const mixRaw = $("mix-input").value.trim().toLowerCase();
  const mix = mixRaw === "auto" ? "auto" : num("mix-input", "l", { integer: true, min: 1 });
  const samples = num("samples-input", "T", { integer: true, optional: true, min: 1 });
  const clip = num("clip-input", "c");
  const seed = num("seed-input", "seed", { integer: true, optional: true });
  const o = { epsilon, delta, mix, clip, preset: $("preset-select").value };
  if (samples !== undefined) o.samples = samples;
  if (seed !== undefined) o.seed = seed;
  o.adjacency = $("adjacency-select").value;
  if (state.kind === "csv") {
    // The label and the schema the shown table was read with (a new choice reads it again,
    // and the table refuses any other).
    const shown = state.dataset !== null;
    o.label = shown ? state.datasetLabel : $("label-select").value;
    o.normalize = $("normalize-select").value;
    const schema = shown ? state.datasetSchema : state.schema;
    if (o.normalize === "public" && !schema) {
      throw new Error("public normalization needs a schema with bounds: load one, or choose dp");
    }
    // A schema is public information: its labels, types and bounds are used whatever the
    // normalization (under dp, only the columns it leaves unbounded spend budget).
    if (schema) o.schema = schema.json;
  }
  return o;
}

function imageOptions() {
  const o = {};
  const size = $("image-size-input").value.trim();
  if (size) {
    const m = /^(\d+)\s*[x×*,]\s*(\d+)$/i.exec(size) ?? /^(\d+)$/.exec(size);
    if (!m) throw new Error(`image size “${size}” is not W×H; enter e.g. 28x28`);
    o.width = Number(m[1]);
    o.height = Number(m[2] ?? m[1]);
  }
  const ch = $("image-channels-select").value;
  if (ch) o.channels = Number(ch);
  return o;
}

// Whether image options `io` leave the shape (size or channels) open: the synthesis then
// decides it under DP.
function shapeOpen(io) {
  return !(io.width && io.height && io.channels);
}

let readoutTimer = 0;
let readoutSeq = 0;
function scheduleReadout() {
  clearTimeout(readoutTimer);
  readoutTimer = setTimeout(updateReadout, 120);
}

// The readout's warnings (classes a run will most likely leave out), set apart from its numbers.
function showReadoutWarnings(list = []) {
  $("readout-warning").textContent = list.map((w) => `Warning: ${w}`).join(" ");
  $("readout-warning").hidden = list.length === 0;
}

async function updateReadout() {
  const el = $("noise-readout");
  const counts = !readyToRun() ? null : state.kind === "csv" ? state.dataset?.counts : state.images?.classCounts;
  if (!counts) {
    el.textContent = "Load data to see the noise.";
    showReadoutWarnings();
    drawCurve(null);
    return;
  }
  const seq = ++readoutSeq;
  try {
    const o = options();
    // A CSV: the loaded table's own readout (the run's normalization share and column-type
    // decisions, from the table). Images: public numbers only (public pixel bounds; their DP
    // mean norm and marginals at the synthesis's default share; the DP shape decision unless
    // the size and the channels are given).
    const imageShape = state.kind !== "csv" && shapeOpen(imageOptions());
    const readout = (view) => state.kind === "csv"
      ? pm.datasetNoisePreview(o, view)
      : pm.noisePreview({
        classSizes: counts, classNames: state.images.classNames, epsilon: o.epsilon, delta: o.delta,
        features: state.images.width * state.images.height * state.images.channels, mix: o.mix,
        samples: o.samples, clip: o.clip, preset: o.preset, adjacency: o.adjacency,
        imageShape, ...view,
      });
    // The numbers first; then the curve, which reuses their calibration (about a fifth of
    // the time of the whole readout).
    const r = await readout({ curve: false });
    if (seq !== readoutSeq) return;
    const accountantName = (a) => a === "pld" ? "privacy-loss-distribution accountant, RDP as a cross-check" : "RDP accountant";
    if (r.gmm) {
      // The defaults give a large set of many numeric columns (or images) to the GMM: its
      // noise, and DP-CDA's figures as the alternative the mix order l selects.
      const g = r.gmm;
      el.textContent =
        `This ${state.kind === "csv" ? "table" : "image set"} is large enough for class models: the run uses the dp-gmm mechanism ` +
        `(each class a Gaussian in a DP principal subspace of ${g.components} components), noise multiplier z = ${g.noiseMultiplier.toPrecision(4)} ` +
        `(ρ = ${g.rho.toPrecision(4)} zCDP). ε = ${g.epsilon.toPrecision(4)} in all at δ = ${o.delta} (${accountantName(g.accountant)}).` +
        ` To run DP-CDA instead, give the mix order l (it would add noise σx = ${r.sigmaX.toPrecision(4)} per feature at l = ${r.mix}).`;
      showReadoutWarnings(r.warnings);
      $("mix-suggestion").textContent =
        `auto: the dp-gmm mechanism runs here (l does not apply); giving l runs DP-CDA (suggested l = ${r.suggestedMix}).`;
      drawCurve(null);
      // The GMM's curve: ε against its noise multiplier z.
      const withCurve = await readout({});
      if (seq !== readoutSeq) return;
      const gc = withCurve.gmm;
      drawCurve(gc?.curve?.length ? { curve: gc.curve, at: gc.noiseMultiplier, epsilon: gc.epsilon } : null, "z");
      return;
    }
    el.textContent =
      `Noise σx = ${r.sigmaX.toPrecision(4)} per feature (noise multiplier z = ${r.noiseMultiplier.toPrecision(4)}) ` +
      // Rows in all: of the classes the run will keep (the warnings name any it will likely leave out).
      `with l = ${r.mix}, mixing from pools of at least ${r.pool} rows; ${r.samples} rows in all. ` +
      `ε = ${r.epsilon.toPrecision(4)} in all at δ = ${o.delta}` +
      (r.normalizeShare ? `, the private normalization statistics (ranges, marginals, mean norm) sized for a share of ${+r.normalizeShare.toFixed(2)} of it` : "") +
      ` (${accountantName(r.accountant)}).` +
      (o.adjacency === "standard"
        ? " Approximate: under the standard adjacency the pools are private floors of noisy class counts; the readout takes them at their expected values, so the run's l and σx can differ a little (the receipt states them)."
        : "");
    showReadoutWarnings(r.warnings);
    $("mix-suggestion").textContent =
      o.mix === "auto"
        ? `auto: l = ${r.mix} here; the run chooses it again from the private class sizes (the receipt states it).`
        : `Suggested: l = ${r.suggestedMix} (uses only class sizes, T and the budget; “auto” chooses it).`;
    const withCurve = await readout({});
    if (seq !== readoutSeq) return;
    drawCurve({ curve: withCurve.curve, at: withCurve.sigmaX, epsilon: withCurve.epsilon }, "σx");
  } catch (e) {
    if (seq !== readoutSeq) return;
    el.textContent = friendly(e, "Check the settings");
    showReadoutWarnings();
    drawCurve(null);
  }
}

// ε against the noise (`axis`: σx for DP-CDA, the noise multiplier z for the GMM), through
// the calibrated point (`at`, `epsilon`); null clears it.
function drawCurve(r, axis = "σx") {
  const c = $("eps-curve");
  const g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (!r) return;
  c.setAttribute("aria-label", axis === "z" ? "ε against the noise multiplier z" : "ε against the noise σx");
  const xs = r.curve.map((p) => p[0]);
  const ys = r.curve.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y1 = Math.max(...ys) * 1.05;
  const px = (x) => 40 + ((x - x0) / (x1 - x0 || 1)) * (c.width - 50);
  const py = (y) => c.height - 20 - (y / (y1 || 1)) * (c.height - 30);
  g.strokeStyle = "#888";
  g.beginPath();
  g.moveTo(40, 10);
  g.lineTo(40, c.height - 20);
  g.lineTo(c.width - 10, c.height - 20);
  g.stroke();
  g.fillStyle = "#333";
  g.font = "11px sans-serif";
  g.fillText("ε", 4, 16);
  g.fillText(y1.toPrecision(3), 4, 28);
  g.fillText(`${axis} →`, c.width - 44, c.height - 4);
  g.strokeStyle = "#1f5fa8";
  g.lineWidth = 2;
  g.beginPath();
  r.curve.forEach(([x, y], i) => (i ? g.lineTo(px(x), py(y)) : g.moveTo(px(x), py(y))));
  g.stroke();
  g.fillStyle = "#c0392b";
  g.beginPath();
  g.arc(px(r.at), py(r.epsilon), 4, 0, 2 * Math.PI);
  g.fill();
}

// ---------------------------------------------------------------- synthesis
async function synthesize() {
  if (state.busy || !readyToRun()) return;
  let o;
  try {
    o = options();
  } catch (e) {
    setStatus("error", friendly(e, "Check the settings"));
    return;
  }
  clearResult();
  setBusy(true);
  const gen = loadGen;
  const bar = $("progress");
  bar.hidden = false;
  bar.value = 0;
  setStatus("running", "Synthesizing… 0%");
  const onProgress = (p) => {
    bar.value = p;
    $("status").textContent = `Synthesizing… ${Math.floor(p * 100)}%`;
  };
  try {
    if (state.kind === "csv") {
      // The CSV as the worker's chunks: a large output is never held whole in the wasm
      // memory or in one buffer; the Blob is made on download.
      const r = await pm.synthesizeDatasetChunks(o, onProgress);
      state.result = { kind: "csv", data: r.chunks, receipt: r.receipt };
      const rows = r.receipt.parameters.rows_written;
      setStatus("done", `Done: ${rows} synthetic rows with ε = ${r.receipt.epsilon.toFixed(4)}, δ = ${r.receipt.delta}.`);
      showReceipt(r.receipt);
      enableDownloads();
      await showHistograms(r.chunks);
    } else {
      const r = await pm.synthesizeImages(state.source, { ...o, ...imageOptions() }, onProgress);
      state.result = { kind: "images", data: r.zip, receipt: r.receipt };
      const rows = r.receipt.parameters.rows_written;
      setStatus("done", `Done: ${rows} synthetic images with ε = ${r.receipt.epsilon.toFixed(4)}, δ = ${r.receipt.delta}.`);
      showReceipt(r.receipt);
      enableDownloads();
      showImages(r.private?.realPreview ?? r.realPreview, r.preview);
    }
  } catch (e) {
    setStatus("error", friendly(e, "Could not synthesize"));
  } finally {
    bar.hidden = true;
    setBusy(false);
    if (gen !== loadGen) clearResult();
  }
}

function enableDownloads() {
  $("download-data").disabled = false;
  $("download-receipt").disabled = false;
}

function showReceipt(r) {
  const lines = [
    `ε = ${r.epsilon}, δ = ${r.delta} (${r.mechanism}, ${r.accountant?.accountant === "pld" ? `PLD accountant; RDP cross-check ε = ${r.accountant.epsilon_rdp}` : "RDP accountant"}, preset ${r.accountant?.preset})`,
    `Adjacency: ${r.guarantee.adjacency}`,
    `Public: ${r.guarantee.public_information.join("; ")}`,
    `Not protected: ${r.guarantee.unprotected.length ? r.guarantee.unprotected.join("; ") : "nothing beyond the public information above"}`,
    `Randomness: ${r.randomness.source}`,
  ];
  $("receipt-summary").textContent = lines.join("\n");
  if (r.warnings?.length) {
    const d = document.createElement("details");
    d.className = "warnings";
    // Open: a warning (a column on a default range, a class too small to release) changes
    // what the data are worth, so it is shown, not folded away.
    d.open = true;
    const sum = document.createElement("summary");
    sum.textContent = `${r.warnings.length} warning${r.warnings.length > 1 ? "s" : ""} in the receipt`;
    const ul = document.createElement("ul");
    for (const w of r.warnings) {
      const li = document.createElement("li");
      li.textContent = w;
      ul.append(li);
    }
    d.append(sum, ul);
    $("receipt-summary").append(d);
  }
}

// The header and the first `n` rows of a CSV held as bytes, and no more than `maxBytes` of it
// once the header and one row are in (whole lines; for the preview: the output is round-robin over the
// classes, so its head is representative). indexOf is a native scan: a loop over the bytes
// in JS took about 18 ms on 10 MB.
function headLines(bytes, n, maxBytes) {
  let end = 0;
  for (let seen = 0; seen <= n; seen++) {
    const nl = bytes.indexOf(10, end);
    // The rest is one last line without a newline.
    if (nl < 0) return bytes.length <= maxBytes || seen < 2 ? bytes : bytes.subarray(0, end);
    if (nl + 1 > maxBytes && seen >= 2) break;
    end = nl + 1;
  }
  return bytes.subarray(0, end);
}

// The preview's share of the output: 5,000 rows, or fewer for wide tables (4 MB is about
// 2,000 MNIST rows), so the copy handed to the worker stays small.
const PREVIEW_ROWS = 5000;
const PREVIEW_BYTES = 4 << 20;

// The output's first chunks, at least `maxBytes` of them (or all) and a header and a row,
// joined and cut after their last whole line when more follows.
function headBytes(chunks, maxBytes) {
  let head = new Uint8Array(0);
  let k = 0;
  const lines = () => head.indexOf(10, head.indexOf(10) + 1) > 0;
  while (k < chunks.length && (head.length < maxBytes || !lines())) {
    const next = new Uint8Array(head.length + chunks[k].length);
    next.set(head);
    next.set(chunks[k], head.length);
    head = next;
    k++;
  }
  return k === chunks.length ? head : head.subarray(0, head.lastIndexOf(10) + 1);
}

async function showHistograms(chunks) {
  try {
    // Let the page paint the status and the receipt first: the preview is a separate task.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const head = headBytes(chunks, PREVIEW_BYTES);
    const hists = await pm.histograms(headLines(head, PREVIEW_ROWS, PREVIEW_BYTES).slice());
    const sel = $("hist-column");
    const label = $("label-select").value;
    const usable = hists.filter((h) => h.name !== label);
    sel.replaceChildren(
      ...usable.map((h, i) => {
        const o = document.createElement("option");
        o.value = String(i);
        o.textContent = h.name;
        return o;
      }),
    );
    $("hist-controls").hidden = usable.length === 0;
    const draw = () => {
      const h = usable[Number(sel.value)];
      $("preview").replaceChildren(histogramCanvas(h));
    };
    sel.onchange = draw;
    // First shown: the first column whose real values fill more than one bin (a pixel table's
    // first columns are often all 0).
    const varied = usable.findIndex((h) => h.real.filter((v) => v > 0).length > 1);
    sel.value = String(Math.max(varied, 0));
    if (usable.length) draw();
  } catch (e) {
    $("preview").textContent = friendly(e, "No preview");
  }
}

function histogramCanvas(h) {
  const c = document.createElement("canvas");
  c.width = 560;
  c.height = 200;
  c.setAttribute("aria-label", `Histogram of ${h.name}: real (grey) against synthetic (blue)`);
  const g = c.getContext("2d");
  const sr = h.real.reduce((a, b) => a + b, 0) || 1;
  const ss = h.synthetic.reduce((a, b) => a + b, 0) || 1;
  const pr = h.real.map((v) => v / sr);
  const ps = h.synthetic.map((v) => v / ss);
  const top = Math.max(...pr, ...ps) || 1;
  const n = h.bins.length;
  const w = (c.width - 40) / n;
  g.font = "11px sans-serif";
  for (let i = 0; i < n; i++) {
    const x = 30 + i * w;
    const hr = (pr[i] / top) * (c.height - 40);
    const hs = (ps[i] / top) * (c.height - 40);
    g.fillStyle = "#9a9a9a";
    g.fillRect(x, c.height - 20 - hr, w * 0.45, hr);
    g.fillStyle = "#1f5fa8";
    g.fillRect(x + w * 0.45, c.height - 20 - hs, w * 0.45, hs);
  }
  g.fillStyle = "#333";
  g.fillText(`${h.name}: real (grey) vs synthetic (blue), share of rows per bin`, 30, 12);
  g.fillText(h.bins[0] ?? "", 30, c.height - 6);
  // Numeric bins are labelled by their lower edges: the axis ends at the last bin's upper one.
  const upper = h.kind === "numeric" && n > 1
    ? String(+(2 * Number(h.bins[n - 1]) - Number(h.bins[n - 2])).toPrecision(6))
    : h.bins[n - 1] ?? "";
  g.fillText(upper, c.width - 60, c.height - 6);
  return c;
}

function showImages(realPng, synthPng) {
  const box = $("preview");
  const fig = (png, caption) => {
    const f = document.createElement("figure");
    const img = document.createElement("img");
    const url = URL.createObjectURL(new Blob([png], { type: "image/png" }));
    state.urls.push(url);
    img.src = url;
    img.alt = caption;
    const cap = document.createElement("figcaption");
    cap.textContent = caption;
    f.append(img, cap);
    return f;
  };
  box.replaceChildren(fig(realPng, "Real (a few per class)"), fig(synthPng, "Synthetic (a few per class)"));
}

// ---------------------------------------------------------------- utility check
async function utilityCheck() {
  if (state.busy || state.kind !== "csv" || !readyToRun()) return;
  let o;
  try {
    o = options();
  } catch (e) {
    $("utility-result").textContent = friendly(e, "Check the settings");
    return;
  }
  setBusy(true);
  $("utility-result").textContent = "Training on synthetic data from an 80% split, testing on the other 20%…";
  try {
    const r = await pm.utilityCheck({ ...o, testShare: 0.2, model: "logreg" });
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    const [lo, hi] = r.syntheticInterval.map((x) => Math.round(100 * x));
    $("utility-result").textContent =
      `Logistic regression trained on ${r.syntheticRows} synthetic rows: accuracy ${pct(r.syntheticAccuracy)} on ${r.testRows} held-out real rows ` +
      `(95% interval ${lo}–${hi}%: the fewer the test rows, the more the figure varies from run to run). ` +
      `Trained on the real rows: ${pct(r.realAccuracy)}; always guessing the largest class: ${pct(r.majorityAccuracy)}. ` +
      `This check is a separate run on the 80% split and stays in this page.`;
  } catch (e) {
    $("utility-result").textContent = friendly(e, "Utility check failed");
  } finally {
    setBusy(false);
  }
}

// ---------------------------------------------------------------- downloads
$("download-data").addEventListener("click", () => {
  const r = state.result;
  if (!r) return;
  if (r.kind === "csv") download(r.data, `${state.name}-synthetic.csv`, "text/csv");
  else download(r.data, `${state.name}-synthetic.zip`, "application/zip");
});
$("download-receipt").addEventListener("click", () => {
  const r = state.result;
  if (!r) return;
  download(JSON.stringify(r.receipt, null, 2) + "\n", `${state.name}-receipt.json`, "application/json");
});

// ---------------------------------------------------------------- wiring
$("file-input").addEventListener("change", (e) => loadFiles([...e.target.files]));
$("folder-input").addEventListener("change", (e) =>
  loadImages(e.target.files[0]?.webkitRelativePath.split("/")[0] || "images", [...e.target.files].filter((f) => IMAGE_RE.test(f.name))),
);
$("label-select").addEventListener("change", (e) => chooseLabel(e.target.value));
$("pixels-public").addEventListener("change", (e) => {
  if (e.target.checked && state.dataset && readyToRun()) {
    setSchema({ json: pixelSchema(state.dataset.columns, $("label-select").value), source: "the pixel range 0–255", kind: PIXEL_SCHEMA_SOURCE });
  } else {
    setSchema(state.fileSchema);
  }
});
$("schema-input").addEventListener("change", async (e) => {
  const f = e.target.files[0];
  if (!f) return;
  try {
    const json = JSON.parse(await f.text());
    state.fileSchema = { json, source: f.name };
    setSchema(state.fileSchema);
  } catch (err) {
    setStatus("error", friendly(err, `The schema ${f.name} is not valid JSON`));
  }
});
for (const id of ["epsilon-input", "delta-input", "mix-input", "samples-input", "clip-input"]) {
  $(id).addEventListener("input", scheduleReadout);
}
for (const id of ["normalize-select", "preset-select", "adjacency-select"]) $(id).addEventListener("change", scheduleReadout);
// A new image shape changes the feature count: read the images again.
for (const id of ["image-size-input", "image-channels-select"]) {
  $(id).addEventListener("change", () => {
    if (state.kind === "images" && state.source) loadImages(state.name, state.source);
  });
}
$("synthesize-button").addEventListener("click", synthesize);
$("utility-button").addEventListener("click", utilityCheck);
// The demo datasets (about 110 KiB gzipped) are imported on the first click, not on every visit.
let demoModule = null;
for (const b of document.querySelectorAll("button.demo")) {
  b.addEventListener("click", async () => {
    startEngine();
    try {
      demoModule ??= import("./vendor/demo-data.js");
      const d = (await demoModule).demos[b.dataset.demo];
      if (!d) return;
      if (d.kind === "csv") await loadCsv(d.name, d.text, d.schema ?? null);
      else await loadImages(d.name, d.bytes());
    } catch (e) {
      demoModule = null;
      setStatus("error", friendly(e, "Could not load the demo"));
    }
  });
}
// The engine starts when the user first reaches for data (pointer or keyboard on the data
// step), so that it is usually warm by the time a file is chosen.
for (const id of ["file-input", "folder-input"]) $(id).addEventListener("click", startEngine);
setStatus("idle", "Choose data to begin.");
document.body.dataset.ready = "1";
