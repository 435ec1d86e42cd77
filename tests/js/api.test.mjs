// The npm package under Node: require and import, no init step, the CLI's numbers, errors as
// JS Error objects, progress, and wasm-vs-native parity.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, cli, messyCsv, parseCsv, runCli } from "./helpers.mjs";
import { execFileSync } from "node:child_process";

const require = createRequire(import.meta.url);
const cjs = require("privmix");
const esm = await import("privmix");

test("require and import give the same API, with no init step", async () => {
  for (const name of ["account", "calibrate", "rdp", "synthesizeCsv", "inspectCsv", "noisePreview", "Dataset"]) {
    assert.equal(typeof cjs[name], "function", `require: ${name}`);
    assert.equal(typeof esm[name], "function", `import: ${name}`);
  }
  assert.equal(typeof esm.default, "function");
  await esm.default(); // a no-op in Node, kept for isomorphic code
  assert.match(cjs.version(), /^\d+\.\d+\.\d+ /);
});

test("account, calibrate and rdp match the native CLI exactly", () => {
  const a = cjs.account({ pool: 6000, mix: 4, sigmaX: 0.5, samples: 6000, delta: 1e-5 });
  const ac = runCli(["account", "--pool", "6000", "--mix", "4", "--sigma-x", "0.5", "--samples", "6000", "--delta", "1e-5"]);
  assert.equal(a.epsilon, ac.epsilon);
  assert.equal(a.order, ac.order);
  assert.equal(a.epsilonOtherPreset.epsilon, ac.epsilon_other_preset.epsilon);
  assert.equal(a.mode, "label-free");

  const c = esm.calibrate({ pool: 6000, mix: 4, samples: 6000, delta: 1e-5, epsilon: 3 });
  const cc = runCli(["calibrate", "--pool", "6000", "--mix", "4", "--samples", "6000", "--delta", "1e-5", "--epsilon", "3"]);
  assert.equal(c.sigmaX, cc.sigma_x);
  assert.ok(c.epsilon <= 3);

  const r = cjs.rdp({ samplingRate: 0.01, noiseMultiplier: 1.5, orders: [2, 8, 32], preset: "paper" });
  const rc = runCli(["rdp", "--sampling-rate", "0.01", "--noise-multiplier", "1.5", "--orders", "2,8,32", "--preset", "paper"]);
  assert.deepEqual(r.orders, [2, 8, 32]);
  assert.deepEqual(r.rdp, rc.rdp);
});

test("the accountant matches the shared reference values to 1e-9", () => {
  const ref = JSON.parse(readFileSync(join(ROOT, "../shared/reference/rdp_wor_reference.json"), "utf8"));
  const rows = ref.raw_rdp;
  assert.ok(rows.length > 0);
  for (const row of rows) {
    const q = row.mix / row.pool;
    for (const [preset, want] of [["default", row.rdp_strengthened], ["paper", row.rdp_paper]]) {
      const got = cjs.rdp({ samplingRate: q, noiseMultiplier: row.z, orders: [row.order], preset }).rdp[0];
      assert.ok(Math.abs(got - want) <= 1e-9 * Math.abs(want), `${preset} q=${q} z=${row.z} α=${row.order}: ${got} vs ${want}`);
      assert.ok(got >= want * (1 - 1e-15), "never below the truth");
    }
  }
});

test("synthesizeCsv: a messy CSV, the input header, ⌊T/K⌋·K rows, ε ≤ target, progress", () => {
  const seen = [];
  // The label-keeping adjacency (public class counts) gives the exact ⌊T/K⌋·K split; under the
  // default standard adjacency the split follows DP class counts.
  const opts = { label: "outcome", epsilon: 4, delta: 1e-5, mix: 3, samples: 100, adjacency: "keep-label" };
  const { csv, receipt } = cjs.synthesizeCsv(messyCsv(), opts, (p) => seen.push(p));
  const rows = parseCsv(csv);
  assert.deepEqual(rows[0], ["age", "income, yearly", "city", "score", "outcome"]);
  assert.equal(rows.length - 1, 99); // K = 3, ⌊100/3⌋ = 33 per class
  assert.ok(receipt.epsilon <= 4 && receipt.epsilon > 3, `ε = ${receipt.epsilon}`);
  assert.equal(receipt.delta, 1e-5);
  assert.equal(receipt.randomness.seeded, false);
  assert.equal(receipt.data.rows_dropped, 0, "the NA cells are encoded as missing values: no row is dropped");
  assert.ok(seen.length >= 2 && seen.at(-1) === 1, `progress ${seen}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1]);
  const labels = new Set(rows.slice(1).map((r) => r[4]));
  assert.deepEqual([...labels].sort(), ["maybe", "no", "yes"]);
});

test("bad input is thrown as a JS Error carrying the Rust message", () => {
  const csv = messyCsv(60);
  const cases = [
    [{ label: "outcome", epsilon: 0 }, /epsilon/],
    [{ label: "outcome", epsilon: -1 }, /epsilon/],
    [{ label: "outcome", epsilon: 1, delta: 1.5 }, /delta/],
    [{ label: "outcome", epsilon: 1, mix: 500 }, /mix|class/],
    [{ label: "outcome", epsilon: 1, mix: 0 }, /mix/],
    [{ label: "nope", epsilon: 1 }, /nope/],
    // T < K is checked against the public class set of the label-keeping adjacency (under the
    // standard default, 60 rows at ε = 1 fail earlier: no class survives the DP label threshold).
    [{ label: "outcome", epsilon: 1, samples: 2, adjacency: "keep-label" }, /samples/],
    [{ label: "outcome", epsilon: 1, bogus: 1 }, /bogus/],
    [{ epsilon: 1 }, /label/],
  ];
  for (const [opts, re] of cases) {
    assert.throws(() => cjs.synthesizeCsv(csv, opts), (e) => e instanceof Error && re.test(e.message), JSON.stringify(opts));
  }
  assert.throws(() => cjs.synthesizeCsv('a,b\n1,"x\n', { label: "b", epsilon: 1 }), Error);
  assert.throws(() => cjs.synthesizeCsv("x,label\nNaN,a\n1,b\n", { label: "label", epsilon: 1 }), Error);
  assert.throws(() => cjs.synthesizeCsv("", { label: "label", epsilon: 1 }), Error);
  assert.throws(() => cjs.account({ pool: 10, mix: 4, sigmaX: 1, samples: 10, delta: 0 }), /delta/);
  // The module still works after errors.
  assert.ok(cjs.account({ pool: 10, mix: 4, sigmaX: 1, samples: 10, delta: 1e-5 }).epsilon > 0);
});

test("wasm and native give the same output for the same seed", () => {
  const dir = mkdtempSync(join(tmpdir(), "privmix-parity-"));
  const input = join(ROOT, "demo/digits-8x8.csv");
  const schema = JSON.parse(readFileSync(join(ROOT, "demo/digits-8x8.schema.json"), "utf8"));
  const out = join(dir, "out.csv");
  const rec = join(dir, "receipt.json");
  for (const normalize of ["public", "dp"]) {
    const args = ["synth", "--input", input, "--label", "label", "--epsilon", "3", "--delta", "1e-5",
      "--mix", "4", "--samples", "500", "--seed", "7", "--normalize", normalize, "--output", out, "--receipt", rec];
    if (normalize === "public") args.push("--schema", join(ROOT, "demo/digits-8x8.schema.json"));
    execFileSync(cli(), args, { stdio: "pipe" });
    const w = cjs.synthesizeCsv(readFileSync(input), {
      label: "label", epsilon: 3, delta: 1e-5, mix: 4, samples: 500, seed: 7, normalize,
      ...(normalize === "public" ? { schema } : {}),
    });
    assert.equal(w.csv, readFileSync(out, "utf8"), `${normalize}: byte-identical output`);
    const native = JSON.parse(readFileSync(rec, "utf8"));
    assert.equal(w.receipt.epsilon, native.epsilon);
    assert.equal(w.receipt.parameters.sigma_x, native.parameters.sigma_x);
    assert.deepEqual(w.receipt.accountant.rdp, native.accountant.rdp);
    assert.equal(w.receipt.randomness.seeded, true);
    assert.match(w.receipt.randomness.source, /seeded, not for release/);
  }
});

// A spreadsheet's `;` export with decimal commas is the same table as the `,` file with decimal
// points, and its output comes back in its own dialect: the same seeded output, byte for byte,
// with `;` and decimal commas (before, the comma columns were categorical), from the native
// CLI too.
test("a ';' file with decimal commas synthesizes as the same table, written back with ';'", () => {
  const iris = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  const semi = iris.replaceAll(",", ";").replaceAll(".", ",");
  assert.match(semi.split("\n")[1], /^\d,\d;\d,\d;/);
  const opts = { label: "species", epsilon: 5, delta: 1e-5, seed: 3 };
  const a = cjs.synthesizeCsv(iris, opts);
  const b = cjs.synthesizeCsv(semi, opts);
  assert.match(a.csv.split("\n")[1], /^\d(\.\d+)?,\d(\.\d+)?,/);
  assert.equal(b.csv, a.csv.replaceAll(",", ";").replaceAll(".", ","));
  assert.deepEqual(b.receipt.column_types, a.receipt.column_types);
  const said = (r) => r.receipt.warnings.filter((w) => /';'-delimited.*decimal comma/.test(w)).length;
  assert.deepEqual([said(a), said(b)], [0, 1]);
  // The app's "Real against synthetic" reads the ';' output back as the same numbers.
  const hist = (text, out) => new cjs.Dataset(text, { label: "species" }).histograms(new TextEncoder().encode(out));
  const h = hist(semi, b.csv);
  assert.equal(h.filter((c) => c.kind === "numeric" && c.synthetic.some((n) => n > 0)).length, 4);
  assert.deepEqual(h, hist(iris, a.csv));
  const dir = mkdtempSync(join(tmpdir(), "privmix-semicolon-"));
  writeFileSync(join(dir, "in.csv"), semi);
  execFileSync(cli(), ["synth", "--input", join(dir, "in.csv"), "--label", "species", "--epsilon", "5",
    "--delta", "1e-5", "--seed", "3", "--output", join(dir, "out.csv"), "--receipt", join(dir, "r.json")], { stdio: "pipe" });
  assert.equal(readFileSync(join(dir, "out.csv"), "utf8"), b.csv);
});

// The GMM mechanism through the binding: `mechanism` and `components` reach the core, and the
// output and guarantee are the CLI's for the same seed.
test("mechanism gmm: the CLI's output and receipt for the same seed", () => {
  const dir = mkdtempSync(join(tmpdir(), "privmix-gmm-"));
  const input = join(ROOT, "demo/digits-8x8.csv");
  const out = join(dir, "out.csv");
  const rec = join(dir, "receipt.json");
  execFileSync(cli(), ["synth", "--input", input, "--label", "label", "--epsilon", "5", "--delta", "1e-5",
    "--mechanism", "gmm", "--components", "8", "--samples", "600", "--seed", "11", "--output", out,
    "--receipt", rec], { stdio: "pipe" });
  const w = cjs.synthesizeCsv(readFileSync(input), {
    label: "label", epsilon: 5, delta: 1e-5, mechanism: "gmm", components: 8, samples: 600, seed: 11,
  });
  const native = JSON.parse(readFileSync(rec, "utf8"));
  assert.equal(w.receipt.mechanism, "dp-gmm");
  assert.equal(w.receipt.parameters.components, 8);
  assert.equal(w.receipt.parameters.pooled_share, 0.6);
  assert.equal(native.parameters.pooled_share, 0.6);
  assert.equal(w.receipt.parameters.rho, native.parameters.rho);
  assert.equal(w.receipt.epsilon, native.epsilon);
  assert.ok(w.receipt.epsilon <= 5, `${w.receipt.epsilon}`);
  assert.equal(w.csv, readFileSync(out, "utf8"), "byte-identical output");
});

// A schema given when the Dataset is made applies to every call (its bounds were dropped:
// the receipt's columns came from DP normalization). A schema acts when the file is read, so
// a call's schema other than the reading's is refused (given only to the call, its "ignore"
// columns were synthesized and released), and so is another label (it was ignored).
test("Dataset: the schema and label it was read with hold for every call", () => {
  const text = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  const schema = JSON.parse(readFileSync(join(ROOT, "demo/iris.schema.json"), "utf8"));
  const sources = (r) => r.receipt.normalization.columns.filter((c) => c.name !== "species").map((c) => c.source);
  const read = new cjs.Dataset(text, { label: "species", schema });
  assert.deepEqual(sources(read.synthesize({ epsilon: 5, seed: 1 })), Array(4).fill("schema"));
  assert.deepEqual(sources(read.synthesize({ epsilon: 5, seed: 1, schema })), Array(4).fill("schema"));
  assert.equal(read.synthesize({ epsilon: 5, seed: 1 }).receipt.class_counts.labels_source, "schema");
  // An "ignore" column is gone from the output of a Dataset read with the schema.
  const ignoring = { columns: { sepal_length: { type: "ignore" } } };
  const out = new cjs.Dataset(text, { label: "species", schema: ignoring }).synthesize({ epsilon: 5, seed: 1 });
  assert.equal(new TextDecoder().decode(out.csv).split("\n")[0], "sepal_width,petal_length,petal_width,species");
  const plain = new cjs.Dataset(text, { label: "species" });
  const refused = [
    [() => plain.synthesize({ epsilon: 5, label: "sepal_width" }), "label", /read with the label column 'species'/],
    [() => read.noisePreview({ epsilon: 5, schema: { columns: {} } }), "schema", /another schema/],
    [() => plain.synthesize({ epsilon: 5, seed: 1, schema: ignoring }), "schema", /read the file again with the schema/],
    [() => plain.utilityCheck({ epsilon: 5, schema: { columns: { nope: { type: "ignore" } } } }), undefined, /not in the header: 'nope'/],
  ];
  for (const [call, param, message] of refused) {
    assert.throws(call, (e) => e.param === param && message.test(e.message), String(message));
  }
});

// A Blob is read a slice at a time with FileReaderSync, which Web Workers have and Node has
// not: here it is refused with the fix (tests/browser/app.test.mjs reads one in a worker).
test("Dataset: a Blob outside a Web Worker is refused with the fix", () => {
  const text = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  assert.throws(
    () => new cjs.Dataset(new Blob([text]), { label: "species" }),
    /a Blob or File is read in a Web Worker only; on the main thread pass its bytes/,
  );
  assert.equal(new cjs.Dataset(new TextEncoder().encode(text), { label: "species" }).rows, 150);
});

test("Dataset: class counts, synthesis as bytes, histograms and the utility check", () => {
  const text = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  const ds = new cjs.Dataset(text, { label: "species" });
  assert.equal(ds.rows, 150);
  const cc = ds.classCounts();
  assert.deepEqual(cc.counts, [50, 50, 50]);
  // The label-keeping adjacency: T = the input's 150 rows (the standard default takes T from DP counts).
  const r = ds.synthesize({ epsilon: 5, delta: 1e-5, seed: 3, adjacency: "keep-label" });
  assert.ok(r.csv instanceof Uint8Array);
  // The table's live readout calibrates as the run: its normalization share (Iris: raised
  // above 0.2), its l and its σx (keep-label: exact class sizes).
  const shown = ds.noisePreview({ epsilon: 5, delta: 1e-5, adjacency: "keep-label" });
  assert.equal(shown.normalizeShare, r.receipt.normalization.dp_histogram.epsilon_share);
  assert.ok(shown.normalizeShare > 0.2, `share ${shown.normalizeShare}`);
  assert.equal(shown.mix, r.receipt.parameters.mix);
  assert.equal(shown.sigmaX, r.receipt.parameters.sigma_x);
  assert.ok(shown.epsilon <= 5 && shown.epsilon === shown.epsilonMixing, `${shown.epsilon}`);
  assert.equal(ds.noisePreview({ epsilon: 5, delta: 1e-5, normalize: "data" }).normalizeShare, 0);
  assert.throws(() => ds.noisePreview({ delta: 1e-5 }), /epsilon/);
  // The numbers first ({curve: false}: the calibrated point only), then the curve.
  const first = ds.noisePreview({ epsilon: 5, delta: 1e-5, adjacency: "keep-label" }, { curve: false });
  assert.deepEqual(first.curve, [[shown.sigmaX, shown.epsilon]]);
  assert.deepEqual(ds.noisePreview({ epsilon: 5, delta: 1e-5, adjacency: "keep-label" }, {}), shown);
  assert.equal(shown.curve.length, 7);
  assert.throws(() => ds.noisePreview({ epsilon: 5, delta: 1e-5 }, { chart: false }), /chart/);
  const rows = parseCsv(new TextDecoder().decode(r.csv));
  assert.equal(rows.length - 1, 150);
  const h = ds.histograms(r.csv);
  assert.equal(h.length, 5);
  const num = h.find((x) => x.kind === "numeric");
  assert.equal(num.real.reduce((a, b) => a + b), 150);
  assert.equal(num.synthetic.reduce((a, b) => a + b), 150);
  const u = ds.utilityCheck({ epsilon: 5, delta: 1e-5, seed: 3 });
  for (const k of ["syntheticAccuracy", "realAccuracy", "majorityAccuracy"]) assert.ok(u[k] >= 0 && u[k] <= 1, k);
  assert.equal(u.testRows, 30);
  assert.ok(u.realAccuracy > u.majorityAccuracy);
  // The check's 95 % interval over its 30 rows holds its accuracy and is about ±12 points wide.
  const [lo, hi] = u.syntheticInterval;
  assert.ok(0 <= lo && lo <= u.syntheticAccuracy && u.syntheticAccuracy <= hi && hi <= 1, `${lo} ${hi}`);
  assert.ok(hi - lo > 0.1 && hi - lo < 0.5, `${lo} ${hi}`);
  ds.free();
});

test("Dataset: the utility check scores every held-out row, those with a missing number too", () => {
  // Iris with every 7th petal_length and every 11th sepal_width empty. Before, a held-out row
  // with a missing number failed the check ("test set: … NaN is not finite"), and synthetic
  // rows written with an empty cell were dropped before training.
  const lines = readFileSync(join(ROOT, "demo/iris.csv"), "utf8").trimEnd().split("\n");
  const holed = lines.map((l, i) => {
    if (i === 0) return l;
    const c = l.split(",");
    if (i % 7 === 0) c[2] = "";
    if (i % 11 === 0) c[1] = "";
    return c.join(",");
  });
  const ds = new cjs.Dataset(holed.join("\n") + "\n", { label: "species" });
  assert.equal(ds.rows, 150);
  for (const seed of [1, 2, 3]) {
    const u = ds.utilityCheck({ epsilon: 5, delta: 1e-5, seed });
    assert.equal(u.trainRows + u.testRows, 150);
    assert.equal(u.testRows, 30);
    assert.ok(u.realAccuracy > 0.8, `seed ${seed}: ${JSON.stringify(u)}`);
  }
  ds.free();
});

test("inspectCsv guesses the label and detects pixel tables", () => {
  const s = cjs.inspectCsv(messyCsv(50));
  assert.equal(s.suggestedLabel, "outcome");
  assert.deepEqual(s.columns.map((c) => c.kind), ["integer", "numeric", "categorical", "numeric", "categorical"]);
  const d = cjs.inspectCsv(readFileSync(join(ROOT, "demo/digits-8x8.csv")));
  assert.equal(d.suggestedLabel, "label");
  assert.equal(d.imageSide, 8);
  assert.equal(s.imageSide, null);
  // The page passes only the head of a large file: a cut line at the end is ignored.
  const head = cjs.inspectCsv(messyCsv(200).slice(0, 1000));
  assert.equal(head.suggestedLabel, "outcome");
  assert.ok(head.rowsRead > 5);
});

test("noisePreview uses only public numbers and never overshoots", () => {
  const p = cjs.noisePreview({ classSizes: [50, 60, 70], epsilon: 2, delta: 1e-5, features: 4, mix: "auto" });
  // The whole release (the mixing composed with the normalization at the synthesis's default
  // share 0.2 and the standard adjacency's class counts) meets ε.
  assert.ok(p.epsilon <= 2 && p.epsilon > 1.95, `${p.epsilon}`);
  assert.equal(p.normalizeShare, 0.2);
  assert.equal(p.mix, p.suggestedMix);
  // `curve: false`: the same numbers, the calibrated point alone.
  const first = cjs.noisePreview({ classSizes: [50, 60, 70], epsilon: 2, delta: 1e-5, features: 4, mix: "auto", curve: false });
  assert.deepEqual({ ...first, curve: p.curve }, p);
  assert.deepEqual(first.curve, [[p.sigmaX, p.epsilon]]);
  // Rows per class follow the class sizes of the classes kept (60 and 70); the pool is below
  // the smallest of them (the least of the DP floors).
  assert.equal(p.samplesPerClass, 70);
  // Rows in all: the 50-row class is below the DP label threshold at ε = 2 (about 57 rows;
  // the warnings name it), so the run most likely writes the other two classes' 130.
  assert.equal(p.samples, 130);
  assert.match(p.warnings[0], /class 1 \(50 records\) has too few records/);
  assert.ok(p.pool < 50, `pool ${p.pool}`);
  // The default readout is the synthesis's: PLD (RDP as a cross-check), standard adjacency.
  assert.equal(p.accountant, "pld");
  // Keep-label, no normalization, RDP: nothing to compose, so the readout is `calibrate` of
  // the synthesis's box encoding (4 numeric features: accountant clip c/2, with the
  // encoding's 1e-6 margin).
  const bare = { classSizes: [50, 60, 70], epsilon: 2, delta: 1e-5, features: 4, mix: p.mix, adjacency: "keep-label", normalizeShare: 0 };
  const rdp = cjs.noisePreview({ ...bare, accountant: "rdp" });
  assert.equal(rdp.accountant, "rdp");
  const same = cjs.calibrate({ pool: 50, mix: p.mix, clip: 0.5 * (1 + 1e-6), samples: 60, delta: 1e-5, epsilon: 2 });
  // (Composing the empty data path rounds ε up by a few ulps.)
  assert.ok(Math.abs(rdp.sigmaX - same.sigmaX) <= 1e-9 * same.sigmaX, `${rdp.sigmaX} vs ${same.sigmaX}`);
  const kept = cjs.noisePreview(bare);
  assert.ok(kept.sigmaX < rdp.sigmaX && kept.epsilon <= 2, JSON.stringify(kept));
  assert.throws(() => cjs.noisePreview({ classSizes: [5], epsilon: -1, delta: 1e-5, features: 2 }), /epsilon/);
});

test("writing a file is the caller's job: the result is plain data", () => {
  const dir = mkdtempSync(join(tmpdir(), "privmix-api-"));
  // Iris has 50 rows per class: at ε = 2 the default's DP label threshold (labels not in a
  // schema) is above that, so this plumbing check uses the label-keeping adjacency.
  const { csv, receipt } = esm.synthesizeCsv(readFileSync(join(ROOT, "demo/iris.csv")), { label: "species", epsilon: 2, adjacency: "keep-label" });
  writeFileSync(join(dir, "s.csv"), csv);
  assert.equal(JSON.parse(JSON.stringify(receipt)).epsilon, receipt.epsilon);
});

// Errors thrown to JS name the JS option (camelCase, with error.param), never a CLI flag
// (issue 10): the core's messages carry a parameter identity that the binding renders.
test("errors name the JS option, never a CLI flag", () => {
  const csv = messyCsv(120);
  const cases = [
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: 3, sigmaX: -1 }), "sigmaX"],
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: 3, normalizeShare: 2 }), "normalizeShare"],
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: 3, mix: 0 }), "mix"],
    [() => cjs.account({ pool: 10, mix: 4, sigmaX: 1, samples: 10, delta: 2 }), "delta"],
    // A value of the wrong type names its key (serde alone gave only a position in the JSON).
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: "3" }), "epsilon"],
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: 3, mix: -3 }), "mix"],
    [() => cjs.account({ pool: "ten", mix: 4, sigmaX: 1, samples: 10, delta: 1e-5 }), "pool"],
    // More rows than fit in wasm32 (was a panic: "capacity overflow").
    [() => cjs.synthesizeCsv(csv, { label: "outcome", epsilon: 3, samples: 1e12 }), "samples"],
    // 10⁹ simulated parties (was a panic before the partition's per-party check).
    [() => cjs.federatedSimulate(csv, { label: "outcome", epsilon: 3, clients: 1e9 }), "clients"],
    // wasm32's usize could not hold it: serde's range message named no option.
    [() => cjs.federatedSimulate(csv, { label: "outcome", epsilon: 3, samples: 1e12 }), "samples"],
    [() => cjs.audit({ runs: 1e15 }), "runs"],
    // Wrapped (-1 → 4294967295) or cut (1.5 → 1) without a word before.
    [() => cjs.federatedKeygen(-1), "party"],
    [() => cjs.gmmSample("{}", -1), "samples"],
    [() => cjs.gmmSample("{}", 2.5), "samples"],
    [() => cjs.inspectCsv("a,b\n1,2\n", -1), "maxRows"],
    [() => cjs.federatedKeygen(1.5), "party"],
    [() => cjs.federatedKeygen(NaN), "party"],
    // Within the row limit, beyond wasm32's memory (was a panic: "capacity overflow").
    [() => cjs.gmmSample(cjs.gmmRelease(readFileSync(join(ROOT, "demo/iris.csv")), { label: "species", epsilon: 2, bound: 15, classes: ["setosa", "versicolor", "virginica"], seed: 1 }).model, 1e9, 1), "samples"],
    // Image options: their keys too (they were "options", with serde's JSON position).
    [() => cjs.inspectImages(new Uint8Array(0), { maxBytes: -1 }), "maxBytes"],
    [() => cjs.inspectImages(new Uint8Array(0), { alpha: "x" }), "alpha"],
    [() => cjs.synthesizeImages(new Uint8Array(0), { epsilon: 5, width: 1.5 }), "width"],
    [() => cjs.synthesizeImages(new Uint8Array(0), { epsilon: "5" }), "epsilon"],
  ];
  for (const [call, param] of cases) {
    let err;
    try {
      call();
    } catch (e) {
      err = e;
    }
    assert.ok(err, `${param}: no error`);
    assert.equal(err.name, "ParameterError", `${param}: ${err.name} (${err.message})`);
    assert.equal(err.param, param, `${param}: ${err.param} (${err.message})`);
    assert.ok(!/line \d+ column/.test(err.message), `a JSON position in: ${err.message}`);
    assert.ok(err.message.includes(param), err.message);
    assert.ok(!/--[a-z]/.test(err.message), `a CLI flag in: ${err.message}`);
    // Row counts get the fix (the limit), from every operation alike.
    if (param === "samples") assert.match(err.message, /ask for (1 to 2147483648 rows|fewer rows|a whole number of rows)/);
  }
});
