// Operation drift: every JS entry of the package exports exactly the values its declarations
// (the `types` of its package.json export) declare, and the worker's client and core handle
// exactly the methods PrivmixWorker declares. An operation added to some of the entries and
// not the others fails here, with the entry and the names that differ.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { ROOT } from "./helpers.mjs";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** The declaration file and the module of each export condition that runs JavaScript. */
function entries() {
  const out = [];
  const walk = (subpath, node, cond) => {
    if (typeof node === "string") return;
    if (node.types && node.default) out.push({ name: `${subpath} (${cond})`, types: node.types, js: node.default, cjs: cond.includes("require") });
    for (const [k, v] of Object.entries(node)) if (k !== "types") walk(subpath, v, cond ? `${cond}.${k}` : k);
  };
  for (const [subpath, node] of Object.entries(pkg.exports)) walk(subpath, node, "");
  return out;
}

const compiled = new Map();
/** The type checker and the exported symbols of a declaration file (each file compiled once). */
function exportsOf(dts) {
  if (!compiled.has(dts)) {
    const file = join(ROOT, dts);
    const program = ts.createProgram([file], { strict: true, noEmit: true, lib: ["lib.es2022.d.ts", "lib.dom.d.ts"] });
    const checker = program.getTypeChecker();
    compiled.set(dts, { checker, symbols: checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file))) });
  }
  return compiled.get(dts);
}

/** The value (not type) exports a declaration file declares, aliases followed. */
function declared(dts) {
  const { checker, symbols } = exportsOf(dts);
  return symbols
    .filter((sym) => (sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym).flags & ts.SymbolFlags.Value)
    .map((sym) => sym.getName())
    .sort();
}

/** The methods a declared class has (constructor excluded; merged interfaces included). */
function declaredMethods(dts, className) {
  const { checker, symbols } = exportsOf(dts);
  const sym = symbols.find((s) => s.getName() === className);
  assert.ok(sym, `${dts} declares ${className}`);
  return checker
    .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym))
    // Methods, and properties of a function type (PrivmixWorkerOperations' mapped members).
    .filter((p) => p.flags & ts.SymbolFlags.Method || checker.getTypeOfSymbol(p).getCallSignatures().length > 0)
    .map((p) => p.getName())
    .sort();
}

test("the entries are found in package.json (the walk below covers them)", () => {
  const names = entries().map((e) => e.name);
  for (const want of [". (node.import)", ". (node.require)", ". (default)", "./full (default)", "./accountant ()", "./inline ()", "./worker ()"]) {
    assert.ok(names.includes(want), `${want} in ${names.join(", ")}`);
  }
});

for (const e of entries()) {
  test(`${e.name}: ${e.js} exports exactly what ${e.types} declares`, async () => {
    const mod = e.cjs ? createRequire(import.meta.url)(join(ROOT, e.js)) : await import(pathToFileURL(join(ROOT, e.js)).href);
    // A CommonJS module's `default` is its `exports.default`; `__esModule` is not an export.
    const have = Object.keys(mod).filter((k) => k !== "__esModule" && k !== "module.exports").sort();
    const want = declared(e.types);
    const missing = want.filter((n) => !have.includes(n));
    const undeclared = have.filter((n) => !want.includes(n));
    assert.deepEqual({ missing, undeclared }, { missing: [], undeclared: [] });
  });
}

test("PrivmixWorker: the client has every declared method and the worker core answers each operation", async () => {
  const methods = declaredMethods("js/worker-client.d.ts", "PrivmixWorker");
  const { PrivmixWorker } = await import(pathToFileURL(join(ROOT, "js/worker-client.mjs")).href);
  const proto = Object.getOwnPropertyNames(PrivmixWorker.prototype).filter((n) => n !== "constructor" && !n.startsWith("_"));
  assert.deepEqual({ missing: methods.filter((m) => !proto.includes(m)), undeclared: proto.filter((m) => !methods.includes(m)) }, { missing: [], undeclared: [] });
  // Every operation the client posts by hand (the loaded dataset's) is a case of the core's
  // dispatch; the table's operations (js/ops.mjs) are methods and dispatched from the table.
  const core = readFileSync(join(ROOT, "js/worker-core.mjs"), "utf8");
  const client = readFileSync(join(ROOT, "js/worker-client.mjs"), "utf8");
  const posted = [...client.matchAll(/this\._(?:call|withOptions)\("([A-Za-z]+)"/g)].map((m) => m[1]);
  assert.deepEqual(posted.filter((op) => op !== "version").sort(), ["datasetNoisePreview", "histograms", "loadDataset", "synthesizeDataset", "synthesizeDatasetChunks", "utilityCheck"]);
  const unanswered = posted.filter((op) => op !== "version" && !core.includes(`case "${op}":`));
  assert.deepEqual(unanswered, []);
  const { OPS } = await import(pathToFileURL(join(ROOT, "js/ops.mjs")).href);
  assert.deepEqual(Object.keys(OPS).filter((op) => !proto.includes(op)), []);
});

test("the table of operations (js/ops.mjs) is every function of the wasm builds, with the declared options and progress arguments", async () => {
  const { OPS } = await import(pathToFileURL(join(ROOT, "js/ops.mjs")).href);
  // The glue's own exports (instantiation, the start function that installs the panic hook)
  // and the Dataset class are not operations.
  const own = new Set(["default", "initSync", "start", "Dataset"]);
  const fns = async (build) => {
    const glue = await import(pathToFileURL(join(ROOT, `pkg/${build}/privmix.js`)).href);
    return Object.keys(glue).filter((k) => !own.has(k) && typeof glue[k] === "function").sort();
  };
  const names = Object.keys(OPS);
  assert.deepEqual(await fns("full"), [...names].sort());
  assert.deepEqual(await fns("web"), names.filter((n) => !OPS[n].full).sort());
  assert.deepEqual(createRequire(import.meta.url)(join(ROOT, "js/ops.cjs")), JSON.parse(JSON.stringify(OPS)), "js/ops.cjs is js/ops.mjs (npm run build writes it)");
  // js/node.cjs runs js/wrap.mjs's wrappers, as js/wrap.cjs (npm run build writes it).
  const wrapEsm = await import(pathToFileURL(join(ROOT, "js/wrap.mjs")).href);
  const wrapCjs = createRequire(import.meta.url)(join(ROOT, "js/wrap.cjs"));
  assert.deepEqual(Object.keys(wrapCjs).sort(), Object.keys(wrapEsm).sort(), "js/wrap.cjs exports what js/wrap.mjs exports");
  for (const [k, f] of Object.entries(wrapEsm)) assert.equal(String(wrapCjs[k]), String(f), `js/wrap.cjs's ${k} is js/wrap.mjs's`);
  // Each row's argument positions are those of the declaration (privmix/full's types).
  const INPUT_TYPE = { bytes: "CsvInput", images: "ImageInput", texts: "string[]" };
  const { checker, symbols } = exportsOf("js/full.d.ts");
  for (const [name, row] of Object.entries(OPS)) {
    const sym = symbols.find((s) => s.getName() === name);
    assert.ok(sym, `js/full.d.ts declares ${name}`);
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    const paramSyms = checker.getSignaturesOfType(checker.getTypeOfSymbol(target), ts.SignatureKind.Call)[0].getParameters();
    const params = paramSyms.map((p) => p.getName());
    // The worker reads argument 0 as the row's `input` says, and PrivmixWorker's method
    // (js/worker-client.d.ts, derived from this declaration) widens it by its declared type.
    const first = paramSyms.length ? checker.typeToString(checker.getTypeOfSymbol(paramSyms[0])) : undefined;
    const kind = Object.keys(INPUT_TYPE).find((k) => INPUT_TYPE[k] === first);
    assert.equal(kind, row.input, `${name}(${params.join(", ")}): the first argument's type ${first} and the row's input`);
    const options = params.findIndex((p) => p === "options");
    assert.equal(options === -1 ? undefined : options, row.options, `${name}(${params.join(", ")}): options`);
    assert.equal(params[(row.options ?? -2) + 1] === "onProgress", Boolean(row.progress), `${name}(${params.join(", ")}): onProgress`);
  }
});
