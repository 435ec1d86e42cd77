// The built-in privacy audit through the npm API (full build, Node): the same audit as
// `privmix audit`, with progress, cancellation and named errors.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as esm from "privmix";
import { runCli } from "./helpers.mjs";

const cjs = createRequire(import.meta.url)("privmix");

test("audit: the default path passes, and its claim is the CLI's", () => {
  const seen = [];
  const r = esm.audit({ epsilon: 1, runs: 200, seed: 3 }, (p) => seen.push(p));
  assert.equal(r.mechanism, "dp-cda");
  assert.equal(r.canary, "extreme");
  assert.ok(r.claimedEpsilon > 0.5 && r.claimedEpsilon <= 1, `claimed ${r.claimedEpsilon}`);
  assert.ok(r.epsilonLowerBound <= r.claimedEpsilon, `bound ${r.epsilonLowerBound} > claim ${r.claimedEpsilon}`);
  assert.equal(r.passed, true);
  assert.equal(r.runs, 200);
  assert.ok(r.holdout.runsBase > 0 && r.holdout.runsBase === r.holdout.runsNeighbour, JSON.stringify(r.holdout));
  assert.ok(r.holdout.truePositives <= r.holdout.runsNeighbour && r.holdout.falsePositives <= r.holdout.runsBase);
  assert.equal(typeof r.sigmaX, "number");
  assert.equal(r.plantedNoiseScale, null);
  // Progress: increasing, ending at 1.
  assert.ok(seen.length >= 2, `${seen.length} reports`);
  assert.ok(seen.every((p, i) => i === 0 || p >= seen[i - 1]));
  assert.equal(seen.at(-1), 1);
  // The native CLI audits the same configuration: the same claim and shape. (The runs' noise
  // may differ in the last bits between wasm and native transcendental functions, so the
  // flagged counts are not compared.)
  const n = runCli(["audit", "--epsilon", "1", "--runs", "200", "--seed", "3"]);
  assert.equal(n.mechanism, r.mechanism);
  assert.ok(Math.abs(n.claimedEpsilon / r.claimedEpsilon - 1) < 1e-9, `${n.claimedEpsilon} vs ${r.claimedEpsilon}`);
  assert.ok(Math.abs(n.sigmaX / r.sigmaX - 1) < 1e-9, `${n.sigmaX} vs ${r.sigmaX}`);
  assert.deepEqual(Object.keys(n).sort(), Object.keys(r).sort());
  assert.equal(n.holdout.runsBase, r.holdout.runsBase);
  // require("privmix") has it too.
  assert.equal(typeof cjs.audit, "function");
});

test("audit: a canary moved to the other class passes under the default adjacency", () => {
  const r = cjs.audit({ epsilon: 1, runs: 100, canary: "class-change", seed: 5 });
  assert.equal(r.canary, "class-change");
  assert.ok(r.passed && r.epsilonLowerBound <= r.claimedEpsilon, JSON.stringify(r));
});

test("audit: federated DP-CDA through each party's own file (multiParty), and a missing label", () => {
  const r = cjs.audit({ mechanism: "federated", multiParty: true, epsilon: 1, runs: 30, seed: 7 });
  assert.equal(r.mechanism, "federated-dp-cda");
  assert.ok(r.passed && r.claimedEpsilon > 0.9 && r.claimedEpsilon <= 1, JSON.stringify(r));
  // Its adjacency keeps labels: a canary without its label is refused by name.
  assert.throws(
    () => cjs.audit({ mechanism: "federated", canary: "missing-label", runs: 20 }),
    (e) => e.name === "ParameterError" && e.param === "canary",
  );
  // The multi-party path is federated DP-CDA's only.
  assert.throws(() => cjs.audit({ multiParty: true, runs: 20 }), (e) => e.name === "ParameterError" && e.param === "multiParty");
  const g = esm.audit({ mechanism: "gmm", canary: "missing-label", epsilon: 1, runs: 40, seed: 7 });
  assert.equal(g.canary, "missing-label");
  assert.ok(g.passed, JSON.stringify(g));
});

test("audit: bad options are ParameterErrors naming the option; an abort stops it", () => {
  const named = (options, param) => {
    assert.throws(() => esm.audit(options), (e) => e.name === "ParameterError" && e.param === param, param);
  };
  named({ runs: 2_000_000 }, "runs");
  named({ canary: "loud" }, "canary");
  named({ runz: 10 }, "runz");
  named({ epsilon: -1 }, "epsilon");
  const ac = new AbortController();
  let calls = 0;
  assert.throws(
    () => esm.audit({ epsilon: 1, runs: 400, signal: ac.signal }, () => {
      calls += 1;
      ac.abort();
    }),
    (e) => e.name === "AbortError",
  );
  assert.equal(calls, 1);
});
