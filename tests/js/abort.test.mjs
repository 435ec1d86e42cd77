// Cancellation: `signal` (an AbortSignal) in the options of the direct API (Node ESM and CJS)
// and of synthesizeCsvAsync; an exception thrown by onProgress reaches the caller unchanged.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as esm from "privmix";
import { messyCsv } from "./helpers.mjs";

const cjs = createRequire(import.meta.url)("privmix");
const csv = messyCsv(3000);
const opts = { label: "outcome", epsilon: 3, mix: 2 };

for (const [name, p] of [["ESM", esm], ["CJS", cjs]]) {
  test(`${name}: an already aborted signal throws its reason before any work`, () => {
    const c = new AbortController();
    const reason = new Error("stop");
    c.abort(reason);
    let calls = 0;
    assert.throws(() => p.synthesizeCsv(csv, { ...opts, signal: c.signal }, () => calls++), (e) => e === reason);
    assert.equal(calls, 0);
  });

  test(`${name}: aborting during the run throws the signal's reason; no result comes back`, () => {
    const c = new AbortController();
    let calls = 0;
    assert.throws(
      () => p.synthesizeCsv(csv, { ...opts, signal: c.signal }, () => (++calls === 1 ? c.abort() : undefined)),
      (e) => e.name === "AbortError",
    );
    assert.equal(calls, 1, "no progress report after the abort");
  });

  test(`${name}: an unaborted signal changes nothing (it is not sent to the core)`, () => {
    const r = p.synthesizeCsv(csv, { ...opts, signal: new AbortController().signal });
    assert.ok(r.receipt.epsilon <= 3);
  });

  test(`${name}: Dataset.synthesize honours the signal`, () => {
    const ds = new p.Dataset(csv, { label: "outcome" });
    const c = new AbortController();
    c.abort();
    assert.throws(() => ds.synthesize({ epsilon: 3, signal: c.signal }), (e) => e.name === "AbortError");
    assert.ok(ds.synthesize({ epsilon: 3, mix: 2, samples: 10 }).receipt.epsilon <= 3);
    ds.free();
  });
}

test("an exception thrown by onProgress stops the run and is rethrown unchanged", () => {
  const mine = new RangeError("mine");
  let calls = 0;
  assert.throws(
    () => esm.synthesizeCsv(csv, opts, () => {
      calls++;
      throw mine;
    }),
    (e) => e === mine,
  );
  assert.equal(calls, 1, "no progress report after the throw");
});

test("synthesizeCsvAsync: abort rejects with the reason and stops the thread", async () => {
  const c = new AbortController();
  const started = Date.now();
  const run = esm.synthesizeCsvAsync(messyCsv(20000), { ...opts, signal: c.signal }, () => c.abort());
  await assert.rejects(run, (e) => e.name === "AbortError");
  assert.ok(Date.now() - started < 60_000);
});
