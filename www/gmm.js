// The GMM release page: fit and release a DP class-conditional Gaussian mixture in the
// worker, plot its marginal densities against the data's histograms, download the model, the
// sampled rows and the receipt.
import { demos } from "./vendor/demo-data.js";
import { $, download, fillLabels, friendly, fullWorker, num, setStatus } from "./common.js";

const pm = fullWorker();
// `schema`: the user's schema file ({json, name}), kept for every file they load; `frame`:
// where the loaded data's public frame comes from ({json, from}: that schema, or a demo's own).
const state = { source: null, name: "data", result: null, hists: null, schema: null, frame: null, columns: [], info: "" };
const FRAME_IDS = ["bound-input", "center-input", "lower-input", "upper-input"];

/**
 * A public frame from a schema's public ranges (no data read): the ranges themselves (the
 * sampled rows stay within them), the centre of each feature's range, and B = the largest
 * distance from that centre the ranges allow (rounded up to 0.1). `missing`: the features the
 * schema gives no numeric min and max for (then there is no frame).
 */
function frameFromSchema(schema, features) {
  const range = (name) => {
    const c = schema?.columns?.[name];
    return c?.type === "numeric" && Number.isFinite(c.min) && Number.isFinite(c.max) ? c : undefined;
  };
  const missing = features.filter((name) => !range(name));
  if (missing.length || !features.length) return { missing };
  const center = [], lower = [], upper = [];
  let s = 0;
  for (const { min, max } of features.map(range)) {
    center.push((min + max) / 2);
    lower.push(min);
    upper.push(max);
    s += ((max - min) / 2) ** 2;
  }
  return { center, lower, upper, bound: Math.ceil(Math.sqrt(s) * 10) / 10, missing };
}

/**
 * The class labels the frame's schema lists for the chosen label column (public: they come
 * with the schema, not from the data), or undefined. Without them the release reads the labels
 * from the data and keeps only those whose noisy count clears a DP threshold.
 */
function frameClasses() {
  const c = state.frame?.json?.columns?.[$("label-select").value];
  const list = c?.type === "categorical" ? c.categories : undefined;
  return Array.isArray(list) && list.length && list.every((x) => typeof x === "string" && x) ? list : undefined;
}

/**
 * Fills the centre, B and the ranges from `state.frame` for the features the chosen label
 * leaves, or clears them, and says so under the data.
 */
function applyFrame() {
  for (const id of FRAME_IDS) $(id).value = "";
  let note = "";
  const f = state.frame;
  if (f) {
    const features = state.columns.filter((c) => c !== $("label-select").value);
    const frame = frameFromSchema(f.json, features);
    if (frame.center) {
      $("center-input").value = frame.center.join(", ");
      $("bound-input").value = String(frame.bound);
      $("lower-input").value = frame.lower.join(", ");
      $("upper-input").value = frame.upper.join(", ");
      note = ` From ${f.from} (no data read): rows are centred on the middle of each range (${frame.center.join(", ")}), B = ${frame.bound} bounds their distance from it, and the sampled rows stay within the ranges.`;
    } else if (frame.missing.length) {
      note = ` ${f.from[0].toUpperCase()}${f.from.slice(1)} gives no numeric min and max for ${frame.missing.map((m) => `“${m}”`).join(", ")}: add them there, or enter B (and, if you like, the centre and ranges) below.`;
    }
    const classes = frameClasses();
    if (classes) note += ` The classes (${classes.join(", ")}) come from it too, so every one of them gets a component.`;
  }
  $("data-info").textContent = state.info + note;
  updateClassHint();
}

// What a class read from the data needs at these settings (the default release thresholds
// labels not listed in a schema), before the user presses Release; from ε and δ only.
let hintSeq = 0;
async function updateClassHint() {
  const seq = ++hintSeq;
  const el = $("class-hint");
  const fromData = state.columns.length && !frameClasses()
    && $("adjacency-select").value === "record" && $("noise-select").value === "optimized"
    && $("covariance-select").value === "gaussian";
  const epsilon = Number($("epsilon-input").value), delta = Number($("delta-input").value);
  let text = "";
  if (fromData && epsilon > 0 && delta > 0 && delta < 1) {
    try {
      const t = await pm.gmmLabelThreshold(epsilon, delta);
      text = `The classes are read from this file: at ε = ${epsilon} a class is released only when its noisy count reaches ${t} records (a DP threshold; smaller classes are left out, and if none reaches it nothing is released). If the classes are public, choose a schema that lists the label's categories.`;
    } catch {
      text = "";
    }
  }
  if (seq !== hintSeq) return;
  el.textContent = text;
  el.hidden = !text;
}
for (const id of ["epsilon-input", "delta-input"]) $(id).addEventListener("input", updateClassHint);
for (const id of ["adjacency-select", "noise-select", "covariance-select"]) $(id).addEventListener("change", updateClassHint);

/** The numbers of a list input (comma- or space-separated), or undefined when it is empty. */
function numberList(id, what, example) {
  const text = $(id).value.trim();
  if (!text) return undefined;
  const v = text.split(/[\s,;]+/).filter(Boolean).map(Number);
  if (!v.every(Number.isFinite)) throw new Error(`${what} “${text}” is not a list of numbers; enter e.g. ${example}`);
  return v;
}

// `demoSchema`: public ranges that come with the data (the demo's). They give a public centre,
// B and ranges (no data read). A file of the user's own takes them from the user's schema
// file, if one was chosen, and otherwise clears them, since a frame chosen for other data
// would be wrong for it.
async function load(name, source, demoSchema = undefined) {
  for (const id of FRAME_IDS) $(id).value = "";
  state.frame = demoSchema
    ? { json: demoSchema, from: "the demo's public ranges" }
    : state.schema && { json: state.schema.json, from: `the schema ${state.schema.name}` };
  state.columns = [];
  state.info = "";
  updateClassHint(); // no data yet: hidden until the header is read
  state.source = source;
  state.name = name;
  state.result = null;
  for (const id of ["download-model", "download-data", "download-receipt"]) $(id).disabled = true;
  $("release-button").disabled = true;
  setStatus("idle", "Reading the header…");
  try {
    const s = await fillLabels(pm, source, $("label-select"));
    state.columns = s.columns.map((c) => c.name);
    state.info = `${name}: ${s.columns.length} columns.`;
    applyFrame();
    $("release-button").disabled = false;
    setStatus("idle", "Ready. Set ε and press Release.");
  } catch (e) {
    setStatus("error", friendly(e, "Could not read this file"));
  }
}

async function release() {
  let o;
  try {
    o = {
      label: $("label-select").value,
      epsilon: num("epsilon-input", "ε"),
      delta: num("delta-input", "δ"),
      adjacency: $("adjacency-select").value,
      noise: $("noise-select").value,
      covarianceNoise: $("covariance-select").value,
      marginalPoints: 120,
    };
    if (o.adjacency !== "label" && $("bound-input").value.trim() === "") {
      throw new Error(
        "record adjacency needs a public bound B on each row's L2 norm: enter one chosen without looking at the data (e.g. from your columns' known ranges: √(Σ max|x_j|²)), or choose label adjacency",
      );
    }
    const bound = num("bound-input", "B", { optional: o.adjacency === "label" });
    if (bound !== undefined) o.bound = bound;
    const center = numberList("center-input", "centre", "6, 3.25, 4, 1.25");
    if (center) o.center = center;
    const lower = numberList("lower-input", "lowest values", "4, 2, 1, 0");
    const upper = numberList("upper-input", "highest values", "8, 4.5, 7, 2.5");
    if (lower || upper) Object.assign(o, { lower, upper });
    // Without a number, as many rows as the released class counts sum to (a DP number: the
    // input's row count itself is not public under the default adjacency).
    const t = num("samples-input", "T", { integer: true, optional: true, min: 1 });
    o.samples = t ?? "released";
    const classes = frameClasses();
    if (classes) o.classes = classes;
  } catch (e) {
    setStatus("error", friendly(e, "Check the settings"));
    return;
  }
  $("release-button").disabled = true;
  setStatus("running", "Releasing the model…");
  try {
    const r = await pm.gmmRelease(state.source, o);
    state.result = r;
    // The data's histograms on the same bins as the samples (for the plot only: the owner's
    // eyes). The worker reads the table for them; without it there are no grey bars.
    state.hists = await pm.loadDataset(state.source, { label: o.label })
      .then(() => pm.histograms(r.csv))
      .catch(() => null);
    // The KL is undefined when a class's non-private covariance is singular (the release
    // itself does not need it); klUnavailable says why.
    const kl = typeof r.private?.kl === "number"
      ? `KL to the non-private fit (computed without protection, not for release) = ${r.private.kl.toPrecision(4)}`
      : `no KL to the non-private fit (${r.private?.klUnavailable ?? "not computed"}); the release does not depend on it`;
    // Cells that were missing or not numbers took the centre value (owner only: a text
    // column left in by mistake shows here).
    const filled = (r.private?.filledCells ?? []).map((f) => `${f.feature} (${f.cells})`).join(", ");
    const fillNote = (filled ? ` Not numbers, set to the centre value (not for release): ${filled}; leave text columns out.` : "")
      + (r.private?.unlabelled ? ` ${r.private.unlabelled} record(s) without a label (or with one the schema does not list) belong to no class (not for release).` : "")
      + (r.private?.classesLeftOut?.length
        ? ` Left out (not for release): ${r.private.classesLeftOut.join(", ")}, too few records for this budget (a label read from the data is released only when its noisy count clears the threshold in the receipt); if the labels are public, list them in a schema.`
        : "");
    setStatus("done", `Released: ε = ${r.epsilon.toFixed(4)}, δ = ${r.delta}; ${kl}; ${r.samples} rows sampled.${fillNote}`);
    $("summary").textContent = [
      `classes: ${r.model.classes.join(", ")}`,
      `weights: ${r.model.weights.map((w) => w.toFixed(4)).join(", ")}`,
      ...(r.receipt.warnings ?? []).map((w) => `warning: ${w}`),
    ].join("\n");
    for (const id of ["download-model", "download-data", "download-receipt"]) $(id).disabled = false;
    drawControls();
  } catch (e) {
    // Labels read from the data, none above the threshold: the page's way to list them.
    const hint = /no class has enough records/.test(String(e?.message))
      ? " On this page, a schema whose label column lists its categories (“Public ranges and classes” above) makes the classes public."
      : "";
    setStatus("error", friendly(e, "Could not release") + hint);
  } finally {
    $("release-button").disabled = false;
  }
}

function drawControls() {
  const r = state.result;
  const sel = $("feature-select");
  const curves = r.marginals ?? [];
  sel.replaceChildren(
    ...curves.map((c, i) => {
      const o = document.createElement("option");
      o.value = String(i);
      o.textContent = c.feature;
      return o;
    }),
  );
  $("plot-controls").hidden = curves.length === 0;
  sel.onchange = () => draw(Number(sel.value));
  if (curves.length) draw(0);
}

const COLORS = ["#1f5fa8", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#2c3e50", "#f39c12"];

function draw(i) {
  const r = state.result;
  const curve = r.marginals[i];
  const hist = state.hists?.find((h) => h.name === curve.feature && h.kind === "numeric");
  const c = document.createElement("canvas");
  c.width = 620;
  c.height = 240;
  c.setAttribute("aria-label", `${curve.feature}: released per-class densities over the data's histogram`);
  const g = c.getContext("2d");
  const xs = curve.grid;
  const x0 = Math.min(xs[0], ...(hist ? [Number(hist.bins[0])] : []));
  const x1 = xs[xs.length - 1];
  const px = (x) => 40 + ((x - x0) / (x1 - x0 || 1)) * (c.width - 60);
  // Data histogram as a density (grey), over the same axis.
  let top = 0;
  const dens = curve.density.map((d, k) => d.map((v) => v * r.model.weights[k]));
  for (const d of dens) top = Math.max(top, ...d);
  let bars = [];
  if (hist) {
    const n = hist.real.reduce((a, b) => a + b, 0) || 1;
    const edges = hist.bins.map(Number);
    const w = edges.length > 1 ? edges[1] - edges[0] : 1;
    bars = hist.real.map((v, j) => [edges[j], w, v / n / w]);
    for (const b of bars) top = Math.max(top, b[2]);
  }
  const py = (y) => c.height - 24 - (y / (top || 1)) * (c.height - 44);
  g.fillStyle = "#d5d8dc";
  for (const [x, w, y] of bars) g.fillRect(px(x), py(y), Math.max(1, px(x + w) - px(x) - 1), c.height - 24 - py(y));
  dens.forEach((d, k) => {
    g.strokeStyle = COLORS[k % COLORS.length];
    g.lineWidth = 2;
    g.beginPath();
    d.forEach((y, j) => (j ? g.lineTo(px(xs[j]), py(y)) : g.moveTo(px(xs[j]), py(y))));
    g.stroke();
  });
  g.fillStyle = "#333";
  g.font = "11px sans-serif";
  g.fillText(`${curve.feature}: data histogram (grey) and the released model's π̃_k·density per class`, 40, 12);
  r.model.classes.forEach((name, k) => {
    g.fillStyle = COLORS[k % COLORS.length];
    g.fillText(name, 40 + k * 90, c.height - 6);
  });
  $("plot").replaceChildren(c);
}

$("file-input").addEventListener("change", (e) => {
  const f = e.target.files[0];
  if (f) load(f.name.replace(/\.(csv|tsv|txt|gz)$/gi, ""), f);
});
$("demo-iris").addEventListener("click", () => load("iris", demos.iris.text, demos.iris.schema));
// Another label leaves other features: their frame is taken again.
$("label-select").addEventListener("change", () => {
  if (state.columns.length) applyFrame();
});
$("schema-input").addEventListener("change", async (e) => {
  const f = e.target.files[0];
  if (!f) return;
  let json;
  try {
    json = JSON.parse(await f.text());
  } catch (err) {
    setStatus("error", friendly(err, `The schema ${f.name} is not valid JSON`));
    return;
  }
  state.schema = { json, name: f.name };
  // It applies to the data on the page too (the user chose it for that data).
  state.frame = { json, from: `the schema ${f.name}` };
  if (state.columns.length) applyFrame();
  setStatus("idle", `Public ranges from ${f.name}${state.columns.length ? "" : "; now choose the CSV it describes"}.`);
});
$("release-button").addEventListener("click", release);
$("download-model").addEventListener("click", () =>
  download(JSON.stringify(state.result.model, null, 2) + "\n", `${state.name}-gmm-model.json`, "application/json"));
$("download-data").addEventListener("click", () => download(state.result.csv, `${state.name}-gmm-synthetic.csv`, "text/csv"));
$("download-receipt").addEventListener("click", () =>
  download(JSON.stringify(state.result.receipt, null, 2) + "\n", `${state.name}-gmm-receipt.json`, "application/json"));
pm.ready()
  .then(() => (document.body.dataset.ready = "1"))
  .catch((e) => setStatus("error", friendly(e, "The privmix engine did not start")));
