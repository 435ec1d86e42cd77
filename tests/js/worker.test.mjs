// The worker protocol (js/worker-core.mjs) with the Node build standing in for the web build:
// progress messages, results, errors as messages, transfers, and the dataset lifecycle.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../js/worker-core.mjs";
import { ROOT } from "./helpers.mjs";

const privmix = createRequire(import.meta.url)("privmix");

function fakeWorker() {
  const scope = {
    messages: [],
    postMessage(m, transfer) {
      this.messages.push({ m, transfer });
    },
  };
  serve(async () => privmix, scope);
  const call = async (id, op, args) => {
    await scope.onmessage({ data: { id, op, args } });
    return scope.messages.filter((x) => x.m.id === id);
  };
  return { scope, call };
}

test("worker-core answers with progress, then the result; errors come back as messages", async () => {
  const { call } = fakeWorker();
  const iris = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  const loaded = await call(1, "loadDataset", [iris, { label: "species" }]);
  assert.deepEqual(loaded.at(-1).m.result.counts, [50, 50, 50]);

  const run = await call(2, "synthesizeDataset", [{ epsilon: 3, seed: 1 }]);
  const progress = run.filter((x) => x.m.progress !== undefined).map((x) => x.m.progress);
  assert.ok(progress.length >= 2 && progress.at(-1) === 1);
  const last = run.at(-1);
  assert.ok(last.m.result.csv instanceof Uint8Array);
  assert.equal(last.transfer[0], last.m.result.csv.buffer, "the CSV bytes are transferred, not copied");
  assert.ok(last.m.result.receipt.epsilon <= 3);

  // The loaded table's live readout: the run's normalization share, a whole-release ε ≤ 3.
  const shown = (await call(10, "datasetNoisePreview", [{ epsilon: 3 }])).at(-1).m.result;
  assert.ok(shown.sigmaX > 0 && shown.epsilon <= 3, JSON.stringify(shown));
  assert.equal(shown.normalizeShare, last.m.result.receipt.normalization.dp_histogram.epsilon_share);

  const bad = await call(3, "synthesizeDataset", [{ epsilon: -2 }]);
  assert.match(bad.at(-1).m.error, /epsilon/);
  assert.equal(bad.at(-1).m.fatal, false);

  const unknown = await call(4, "nope", []);
  assert.match(unknown.at(-1).m.error, /unknown operation/);
});

test("worker-core: synthesizeDatasetChunks gives the same CSV in transferred chunks, and a throwing chunk stops the run", async () => {
  const { call } = fakeWorker();
  const iris = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");
  await call(1, "loadDataset", [iris, { label: "species" }]);
  // 5,000 rows of Iris: a few hundred KiB, one chunk; 60,000 rows (about 1.7 MB) span the
  // writer's 256 KiB flushes, and 200,000 rows (about 5.6 MB) two 4 MiB chunks.
  for (const [id, samples] of [[2, undefined], [4, 60000], [6, 200000]]) {
    const o = { epsilon: 3, seed: 7, ...(samples ? { samples } : {}) };
    const bytes = (await call(id, "synthesizeDataset", [o])).at(-1).m.result;
    const last = (await call(id + 1, "synthesizeDatasetChunks", [o])).at(-1);
    const { chunks, receipt } = last.m.result;
    assert.ok(chunks.length >= 1 && chunks.every((c) => c instanceof Uint8Array));
    assert.deepEqual(last.transfer, chunks.map((c) => c.buffer), "every chunk is transferred, not copied");
    assert.ok(Buffer.concat(chunks).equals(Buffer.from(bytes.csv)), `samples ${samples}: the same bytes`);
    assert.deepEqual(receipt, bytes.receipt);
  }
  const bad = await call(8, "synthesizeDatasetChunks", [{ epsilon: -2 }]);
  assert.match(bad.at(-1).m.error, /epsilon/);

  // The Dataset's own synthesizeChunks: a throwing onChunk stops the synthesis with its error.
  const ds = new privmix.Dataset(iris, { label: "species" });
  const chunks = [];
  const receipt = ds.synthesizeChunks({ epsilon: 3, seed: 7, samples: 200000 }, (c) => chunks.push(c));
  assert.ok(chunks.length >= 2 && chunks.slice(0, -1).every((c) => c.length >= 4 << 20), chunks.map((c) => c.length).join());
  assert.ok(receipt.epsilon <= 3);
  const stop = new Error("disk full");
  let calls = 0;
  assert.throws(() => ds.synthesizeChunks({ epsilon: 3, seed: 7, samples: 200000 }, () => { calls++; throw stop; }), (e) => e === stop);
  assert.equal(calls, 1, "onChunk is not called after it threw");
  const ac = new AbortController();
  ac.abort();
  assert.throws(() => ds.synthesizeChunks({ epsilon: 3, signal: ac.signal }, () => {}), (e) => e.name === "AbortError");
  ds.free();
});

test("worker-core: dataset operations before a dataset is loaded are refused clearly", async () => {
  const { call } = fakeWorker();
  for (const [i, op] of ["utilityCheck", "datasetNoisePreview"].entries()) {
    const r = await call(i + 1, op, [{ epsilon: 1 }]);
    assert.match(r.at(-1).m.error, new RegExp(`${op}: no dataset is loaded; call loadDataset`));
  }
});
