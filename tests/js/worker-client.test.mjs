// PrivmixWorker (js/worker-client.mjs) against a fake Worker running js/worker-core.mjs with the
// Node build in this thread: Promise-only, errors with name/param, AbortSignal (queued and
// running calls), a throwing onProgress, a worker that fails to load.
import test from "node:test";
import assert from "node:assert/strict";
import * as privmix from "privmix";
import { PrivmixWorker } from "../../js/worker-client.mjs";
import { serve } from "../../js/worker-core.mjs";
import { messyCsv } from "./helpers.mjs";

/** A Worker stand-in: messages cross a macrotask, like postMessage. */
class FakeWorker {
  static spawned = 0;
  constructor() {
    FakeWorker.spawned++;
    this.terminated = false;
    this.sent = [];
    this.scope = {
      postMessage: (m) => setTimeout(() => !this.terminated && this.onmessage?.({ data: m })),
    };
    serve(async () => privmix, this.scope);
  }
  postMessage(m) {
    this.sent.push(m);
    setTimeout(() => !this.terminated && this.scope.onmessage({ data: m }));
  }
  terminate() {
    this.terminated = true;
  }
}

const csv = messyCsv(600);
const opts = { label: "outcome", epsilon: 3, mix: 2 };

test("calls resolve in order; a bad option rejects with the core's message", async () => {
  const pm = new PrivmixWorker({ createWorker: () => new FakeWorker() });
  const [a, b] = await Promise.all([pm.synthesizeCsv(csv, opts), pm.calibrate({ pool: 100, mix: 2, samples: 100, delta: 1e-5, epsilon: 1 })]);
  assert.ok(a.receipt.epsilon <= 3);
  assert.ok(b.sigmaX > 0);
  await assert.rejects(pm.synthesizeCsv(csv, { ...opts, epsilon: -1 }), (e) => e instanceof Error && /epsilon/.test(e.message));
  await assert.rejects(pm.synthesizeCsv(csv, { ...opts, epsilonn: 1 }), /unknown field `epsilonn`/);
  pm.terminate();
});

test("a Worker constructor that throws gives a rejected Promise naming the worker, not a throw", async () => {
  const pm = new PrivmixWorker({ url: "https://cdn.example/privmix/worker.mjs" });
  const saved = globalThis.Worker;
  globalThis.Worker = class {
    constructor() {
      throw new DOMException("Failed to construct 'Worker'", "SecurityError");
    }
  };
  try {
    let p;
    assert.doesNotThrow(() => (p = pm.version()));
    await assert.rejects(p, (e) => e.name === "InternalError" && /cdn\.example\/privmix\/worker\.mjs/.test(e.message) && /SecurityError|construct/.test(e.message));
  } finally {
    globalThis.Worker = saved;
  }
});

test("a worker that fails to load rejects every pending call with an error naming its URL", async () => {
  const pm = new PrivmixWorker({ url: "/assets/missing.mjs" });
  const saved = globalThis.Worker;
  globalThis.Worker = class {
    constructor() {
      setTimeout(() => this.onerror?.({ preventDefault() {} }));
    }
    postMessage() {}
    terminate() {}
  };
  try {
    const results = await Promise.allSettled([pm.version(), pm.rdp({ samplingRate: 0.1, noiseMultiplier: 1 })]);
    for (const r of results) {
      assert.equal(r.status, "rejected");
      assert.match(r.reason.message, /\/assets\/missing\.mjs/);
      assert.match(r.reason.message, /worker-src|blob:/);
    }
  } finally {
    globalThis.Worker = saved;
  }
});

test("AbortSignal: a queued call is dropped, a running one restarts the worker, the next call works", async () => {
  FakeWorker.spawned = 0;
  const pm = new PrivmixWorker({ createWorker: () => new FakeWorker() });
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(pm.synthesizeCsv(csv, { ...opts, signal: pre.signal }), (e) => e.name === "AbortError");

  const running = new AbortController();
  const queued = new AbortController();
  const first = pm.synthesizeCsv(csv, { ...opts, signal: running.signal }, () => running.abort());
  const second = pm.synthesizeCsv(csv, { ...opts, signal: queued.signal });
  const third = pm.synthesizeCsv(csv, opts); // queued behind both: re-sent to the new worker
  queued.abort(new Error("not wanted"));
  await assert.rejects(second, /not wanted/);
  await assert.rejects(first, (e) => e.name === "AbortError");
  const r = await third;
  assert.ok(r.receipt.epsilon <= 3);
  assert.equal(FakeWorker.spawned, 2, "the running call's worker was replaced once");
  pm.terminate();
});

test("an exception thrown by onProgress rejects the call with that exception", async () => {
  const pm = new PrivmixWorker({ createWorker: () => new FakeWorker() });
  const mine = new RangeError("mine");
  await assert.rejects(pm.synthesizeCsv(csv, opts, () => {
    throw mine;
  }), (e) => e === mine);
  assert.ok((await pm.synthesizeCsv(csv, opts)).receipt.epsilon <= 3, "the worker works afterwards");
  pm.terminate();
});

test("audit runs in the worker with progress, and gives the same report as the direct call", async () => {
  const pm = new PrivmixWorker({ createWorker: () => new FakeWorker() });
  const seen = [];
  const o = { epsilon: 1, runs: 60, seed: 9 };
  const r = await pm.audit(o, (p) => seen.push(p));
  assert.deepEqual(r, privmix.audit(o));
  assert.ok(r.epsilonLowerBound <= r.claimedEpsilon && r.passed);
  assert.equal(seen.at(-1), 1);
  await assert.rejects(pm.audit({ runs: 2_000_000 }), (e) => e.name === "ParameterError" && e.param === "runs");
  pm.terminate();
});
