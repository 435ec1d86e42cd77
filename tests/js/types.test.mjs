// Type drift: every request field that the Rust core accepts is declared in the hand-written
// TypeScript types (js/types.d.ts), and every declared field (but `signal`, which the JS layer
// takes off) is accepted by the core. The core's own list comes from serde's
// "unknown field `…`, expected one of `a`, `b`, …" message, provoked per request type.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import * as privmix from "privmix";
import { ROOT } from "./helpers.mjs";

/** The field list in serde's unknown-field message thrown by `call({ zzzUnknown: 1 })`. */
function rustFields(call) {
  let msg;
  try {
    call({ zzzUnknown: 1 });
    assert.fail("an unknown option was accepted");
  } catch (e) {
    msg = String(e.message);
  }
  const m = /unknown field `zzzUnknown`, expected (.*)/.exec(msg);
  assert.ok(m, `no serde unknown-field message: ${msg}`);
  return [...m[1].matchAll(/`([A-Za-z0-9_]+)`/g)].map((x) => x[1]).sort();
}

/** The property names (inherited ones included) of each exported interface of js/types.d.ts. */
function tsFields() {
  const file = join(ROOT, "js/types.d.ts");
  const program = ts.createProgram([file], { strict: true, noEmit: true, lib: ["lib.es2022.d.ts", "lib.dom.d.ts"] });
  const diags = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  assert.deepEqual(diags, [], "js/types.d.ts type-checks on its own");
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(file);
  const out = {};
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(sf))) {
    const type = checker.getDeclaredTypeOfSymbol(sym);
    out[sym.getName()] = checker.getPropertiesOfType(type).map((p) => p.getName()).sort();
  }
  return out;
}

const JS_ONLY = new Set(["signal"]);
const types = tsFields();

function same(name, rust, declared) {
  const missing = rust.filter((f) => !declared.includes(f));
  const extra = declared.filter((f) => !rust.includes(f) && !JS_ONLY.has(f));
  assert.deepEqual(missing, [], `${name}: accepted by the core, missing from js/types.d.ts`);
  assert.deepEqual(extra, [], `${name}: declared in js/types.d.ts, refused by the core`);
}

test("every request type: the TypeScript fields are exactly the fields the core accepts", () => {
  const csv = "a,b,label\n1,2,x\n3,4,y\n";
  same("SynthOptions", rustFields((o) => privmix.synthesizeCsv(csv, o)), types.SynthOptions);
  same("RdpParams", rustFields((o) => privmix.rdp(o)), types.RdpParams);
  same("PreviewParams", rustFields((o) => privmix.noisePreview(o)), types.PreviewParams);
  const ds = new privmix.Dataset(csv, { label: "label" });
  same("PreviewView", rustFields((o) => ds.noisePreview({ epsilon: 1, delta: 1e-5 }, o)), types.PreviewView);
  const mech = rustFields((o) => privmix.calibrate(o));
  same("AccountParams ∪ CalibrateParams", mech, [...new Set([...types.AccountParams, ...types.CalibrateParams])].sort());
  same("GmmOptions", rustFields((o) => privmix.gmmRelease(csv, o)), types.GmmOptions);
  same("FederatedOptions", rustFields((o) => privmix.federatedSimulate(csv, o)), types.FederatedOptions);
  same("AuditOptions", rustFields((o) => privmix.audit(o)), types.AuditOptions);
});

test("image options: the shape keys of the core's ImageOptions plus the synthesis keys, without the CSV-only ones", () => {
  // The core splits an image request into its ImageOptions keys (src/images/mod.rs) and a
  // synthesis request; an unknown key is reported against the synthesis request.
  const src = readFileSync(join(ROOT, "src/images/mod.rs"), "utf8");
  const body = /pub struct ImageOptions \{([\s\S]*?)\n\}/.exec(src)[1];
  const shape = [...body.matchAll(/pub ([a-z_]+):/g)].map((m) => m[1].replace(/_([a-z])/g, (_, c) => c.toUpperCase()));
  assert.ok(shape.includes("width") && shape.includes("maxBytes"), shape.join(","));
  same("ImageReadOptions", shape.sort(), types.ImageReadOptions);
  const synth = rustFields((o) => privmix.synthesizeCsv("a,label\n1,x\n", o)).filter((f) => !["label", "testShare", "model"].includes(f));
  same("ImageOptions", [...new Set([...synth, ...shape])].sort(), types.ImageOptions);
  // The CSV-only keys are refused with images (so they are not in ImageOptions).
  assert.throws(() => privmix.synthesizeImages(new Uint8Array(0), { label: "x" }), /label/);
});
