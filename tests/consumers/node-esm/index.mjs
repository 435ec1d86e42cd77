// import "privmix" (Node): lazy instantiation, Dataset, AbortSignal, privmix/accountant.
import assert from "node:assert/strict";
import init, { Dataset, synthesizeCsv, calibrate } from "privmix";
import * as accountant from "privmix/accountant";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// 60 rows, 30 per class: runs that check the exact row count use the label-keeping adjacency
// (public class counts); under the default standard adjacency T and the class split follow
// DP class counts, which are too noisy at this size.
const CSV = "x,y,label\n" + Array.from({ length: 60 }, (_, i) => `${(i * 7) % 13},${(i * 5) % 11},${i % 2 ? "a" : "b"}`).join("\n") + "\n";

await init();
const ds = new Dataset(CSV, { label: "label" });
assert.equal(ds.rows, 60);
const r = ds.synthesize({ epsilon: 2, mix: 2, samples: 30, adjacency: "keep-label" });
assert.equal(new TextDecoder().decode(r.csv).trim().split("\n").length, 31);
ds.free();

// An aborted signal stops the call with its reason; `signal` is not sent to the core.
const c = new AbortController();
c.abort();
assert.throws(() => synthesizeCsv(CSV, { label: "label", epsilon: 2, signal: c.signal }), (e) => e.name === "AbortError");
const ok = synthesizeCsv(CSV, { label: "label", epsilon: 2, mix: 2, adjacency: "keep-label", signal: new AbortController().signal });
assert.ok(ok.receipt.epsilon <= 2);

// privmix/accountant with its own small wasm (browsers fetch it; Node passes the bytes).
const require = createRequire(import.meta.url);
const wasm = readFileSync(require.resolve("privmix/accountant/privmix_bg.wasm"));
await accountant.default({ module_or_path: wasm });
const a = accountant.calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
const b = calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
assert.equal(a.sigmaX, b.sigmaX, "the accountant entry computes what the full build does");
assert.equal(typeof accountant.synthesizeCsv, "undefined");
console.log(JSON.stringify({ ok: true, accountantWasm: wasm.length }));
