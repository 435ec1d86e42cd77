// The full build's GMM release and federated operations through the npm API (Node).
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, parseCsv } from "./helpers.mjs";

const p = createRequire(import.meta.url)("privmix");
const iris = readFileSync(join(ROOT, "demo/iris.csv"), "utf8");

function mvnLogDensityKl(m1, s1, m0, s0) {
  // KL(N(m1,S1) || N(m0,S0)) for small d by Gaussian elimination (independent of the library).
  const d = m1.length;
  const inv = (A) => {
    const n = A.length;
    const M = A.map((r, i) => [...r, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
    for (let c = 0; c < n; c++) {
      let piv = c;
      for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[piv][c])) piv = r;
      [M[c], M[piv]] = [M[piv], M[c]];
      const v = M[c][c];
      for (let j = 0; j < 2 * n; j++) M[c][j] /= v;
      for (let r = 0; r < n; r++) if (r !== c) {
        const f = M[r][c];
        for (let j = 0; j < 2 * n; j++) M[r][j] -= f * M[c][j];
      }
    }
    return M.map((r) => r.slice(n));
  };
  const det = (A) => {
    const n = A.length;
    const M = A.map((r) => [...r]);
    let dt = 1;
    for (let c = 0; c < n; c++) {
      let piv = c;
      for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[piv][c])) piv = r;
      if (piv !== c) { [M[c], M[piv]] = [M[piv], M[c]]; dt = -dt; }
      dt *= M[c][c];
      for (let r = c + 1; r < n; r++) {
        const f = M[r][c] / M[c][c];
        for (let j = c; j < n; j++) M[r][j] -= f * M[c][j];
      }
    }
    return dt;
  };
  const s0i = inv(s0);
  let tr = 0;
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) tr += s0i[i][j] * s1[j][i];
  const dm = m0.map((v, i) => v - m1[i]);
  let q = 0;
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) q += dm[i] * s0i[i][j] * dm[j];
  return 0.5 * (tr + q - d + Math.log(det(s0) / det(s1)));
}

// Iris's species, public (its schema lists them): labels read from the data need a noisy
// count of 141 at ε = 2, and Iris's classes hold 50 records (the next test).
const SPECIES = ["setosa", "versicolor", "virginica"];

test("gmmRelease: labels read from the data are released only above the threshold; listed classes are public", () => {
  // Without `classes`, Iris's classes (50 records) are all below the threshold at ε = 2
  // (141; each clears it with chance ≈ 5e-5, seeded here): the release stops and says why.
  assert.throws(() => p.gmmRelease(iris, { label: "species", epsilon: 2, bound: 15, seed: 4 }), /no class has enough records .*reaches 141.*list them \(classes\)/);
  // Three of Iris's classes four times over (200 records each) and 3 records of 'rare': the
  // species are released, 'rare' is left out (told only under `private`).
  const lines = iris.trim().split(/\r?\n/);
  const body = lines.slice(1);
  const bigger = [lines[0], ...body, ...body, ...body, ...body, "5,3,2,1,rare", "6,3,4,1,rare", "7,3,5,2,rare"].join("\n") + "\n";
  const r = p.gmmRelease(bigger, { label: "species", epsilon: 5, bound: 15, seed: 4 });
  assert.deepEqual(r.model.classes, SPECIES);
  assert.deepEqual(r.private.classesLeftOut, ["rare"]);
  assert.ok(!JSON.stringify(r.receipt).includes("rare"));
  assert.ok(r.receipt.protected.some((x) => /class labels/.test(x.what) && /reaches 58/.test(x.how)));
  // The same threshold from ε and δ alone, before any release (the GMM page shows it).
  assert.equal(p.gmmLabelThreshold(5), 58);
  assert.equal(p.gmmLabelThreshold(2, 1e-5), 141);
  assert.equal(p.gmmLabelThreshold(1, 1e-5), 279);
  assert.throws(() => p.gmmLabelThreshold(0), (e) => e.param === "epsilon");
  assert.throws(() => p.gmmLabelThreshold(1, 1), (e) => e.param === "delta");
  // Listed: public, every listed class released (here 'rare' too), nothing left out.
  const listed = p.gmmRelease(bigger, { label: "species", epsilon: 5, bound: 15, classes: [...SPECIES, "rare"], seed: 4 });
  assert.deepEqual(listed.model.classes, [...SPECIES, "rare"]);
  assert.equal(listed.private.classesLeftOut, undefined);
  assert.ok(listed.receipt.guarantee.public_information.some((x) => /listed with the request/.test(x)));
  assert.throws(() => p.gmmRelease(bigger, { label: "species", epsilon: 5, bound: 15, classes: ["a", "a"] }), (e) => e.param === "classes" && /twice/.test(e.message));
});

test("gmmRelease: a feature constant within a class releases; only the private KL is undefined, and says why", () => {
  // Iris with petal_width fixed at 0.2 for setosa: that class's covariance is singular.
  const lines = iris.trim().split(/\r?\n/);
  const header = lines[0].split(",");
  const pw = header.indexOf("petal_width");
  const sp = header.indexOf("species");
  const flat = [lines[0], ...lines.slice(1).map((l) => {
    const f = l.split(",");
    assert.ok(f[sp] !== undefined);
    if (f[sp] === "setosa") f[pw] = "0.2";
    return f.join(",");
  })].join("\n") + "\n";
  assert.equal((flat.match(/,0\.2,setosa/g) ?? []).length, 50);
  const r = p.gmmRelease(flat, { label: "species", epsilon: 2, delta: 1e-5, bound: 15, classes: SPECIES, samples: 30, marginalPoints: 20, seed: 4 });
  assert.ok(r.epsilon <= 2);
  assert.equal(r.model.classes.length, 3);
  assert.ok(r.private.kl === null || r.private.kl === undefined, `kl ${r.private.kl}`);
  assert.match(r.private.klUnavailable, /class 'setosa'.*singular/);
  assert.ok(r.private.referenceMarginals === null || r.private.referenceMarginals === undefined);
  assert.equal(parseCsv(r.csv).length - 1, 30);
  // Where the fit is used (a baseline perturbs it), the same data are refused.
  assert.throws(() => p.gmmRelease(flat, { label: "species", epsilon: 2, delta: 1e-5, bound: 15, classes: SPECIES, noise: "iid-gaussian", seed: 4 }), /singular/);
});

test("gmmRelease: a valid model, ε ≤ target, sampled rows, and kl recomputed independently", () => {
  const r = p.gmmRelease(iris, { label: "species", epsilon: 2, delta: 1e-5, bound: 15, classes: SPECIES, samples: 300, marginalPoints: 50, seed: 4 });
  assert.ok(r.epsilon <= 2);
  const m = r.model;
  assert.equal(m.classes.length, 3);
  assert.ok(Math.abs(m.weights.reduce((a, b) => a + b) - 1) < 1e-12 && m.weights.every((w) => w > 0));
  for (const S of m.covariances) for (let i = 0; i < S.length; i++) for (let j = 0; j < S.length; j++) assert.equal(S[i][j], S[j][i]);
  // The non-private fit (unbiased covariance) from the data itself.
  const rows = parseCsv(iris).slice(1).filter((r) => r.length === 5);
  let kl = 0;
  m.classes.forEach((cls, k) => {
    const x = rows.filter((r) => r[4] === cls).map((r) => r.slice(0, 4).map(Number));
    const n = x.length;
    const mu = [0, 1, 2, 3].map((j) => x.reduce((s, r) => s + r[j], 0) / n);
    const S = [0, 1, 2, 3].map((a) => [0, 1, 2, 3].map((b) => x.reduce((s, r) => s + (r[a] - mu[a]) * (r[b] - mu[b]), 0) / (n - 1)));
    const pi = n / rows.length;
    kl += m.weights[k] * (Math.log(m.weights[k] / pi) + mvnLogDensityKl(m.means[k], m.covariances[k], mu, S));
  });
  // The KL is computed from the data without protection: only under `private`, never top level.
  assert.equal(r.kl, undefined);
  assert.ok(Math.abs(kl - r.private.kl) <= 1e-6 * Math.max(1, Math.abs(kl)), `kl ${r.private.kl} vs independent ${kl}`);
  const out = parseCsv(r.csv);
  assert.equal(out.length - 1, 300);
  assert.equal(r.marginals.length, 4);
  assert.equal(r.marginals[0].density.length, 3);
  const label = p.gmmRelease(iris, { label: "species", epsilon: 2, adjacency: "label", seed: 4 });
  assert.ok(label.receipt.warnings.some((w) => /local sensitivity: not a worst-case DP guarantee/.test(w)));
  assert.equal(r.samples, 300);
  // `samples: "released"`: as many rows as the released class counts sum to, a DP number
  // (the default release's adjacency also adds or removes a record: its receipt has no N).
  const rel = p.gmmRelease(iris, { label: "species", epsilon: 2, delta: 1e-5, bound: 15, classes: SPECIES, samples: "released", seed: 4 });
  assert.equal(parseCsv(rel.csv).length - 1, rel.samples);
  assert.ok(Math.abs(rel.samples - 150) <= 120, `${rel.samples}`);
  assert.equal(rel.receipt.data.rows_used, undefined);
  assert.equal(label.receipt.data.rows_used, 150);
  assert.throws(() => p.gmmRelease(iris, { label: "species", epsilon: 2, bound: 15, classes: SPECIES, samples: "all" }), /samples.*released/);
  const again = p.gmmSample(JSON.stringify(m), 20, 1);
  assert.equal(parseCsv(again).length - 1, 20);
  assert.throws(() => p.gmmRelease(iris, { label: "species", epsilon: -1 }), /epsilon/);
  assert.throws(() => p.gmmRelease(iris, { label: "nope", epsilon: 1 }), /nope/);
});

test("gmmRelease: a public box (lower, upper) keeps the sampled rows inside it, in gmmSample too; one without the other names the missing key", () => {
  const box = { lower: [4, 2, 1, 0], upper: [8, 4.5, 7, 2.5] };
  const opts = { label: "species", epsilon: 5, bound: 4.1, center: [6, 3.25, 4, 1.25], classes: SPECIES, samples: 1000, seed: 2 };
  const outside = (csv) => parseCsv(csv).slice(1).filter((r) => r.slice(0, 4).some((x, j) => +x < box.lower[j] || +x > box.upper[j])).length;
  const r = p.gmmRelease(iris, { ...opts, ...box });
  assert.deepEqual(r.model.support, box);
  assert.equal(outside(r.csv), 0);
  assert.equal(outside(p.gmmSample(r.model, 1000, 3)), 0);
  // The same release without the box: the Gaussians' tails leave the ranges.
  assert.ok(outside(p.gmmRelease(iris, opts).csv) > 100);
  assert.throws(() => p.gmmRelease(iris, { ...opts, lower: box.lower }), (e) => e.param === "upper");
  assert.throws(() => p.gmmRelease(iris, { ...opts, ...box, upper: [8, 4.5, 7] }), (e) => e.param === "upper" && /one value per feature/.test(e.message));
});

test("federated: simulate gives both views; keygen → contribute → aggregate with three parties", () => {
  const sim = p.federatedSimulate(iris, { label: "species", epsilon: 5, clients: 3, mix: 2, seed: 1 });
  assert.ok(sim.receipt.epsilon <= 5 + 1e-12);
  assert.ok(sim.receipt.views.client && sim.receipt.views.aggregate);
  // The column types are decided under DP by default (nothing declared); columnTypes: "data"
  // infers them from the data, declared unprotected.
  assert.deepEqual(sim.receipt.guarantee.unprotected, []);
  assert.deepEqual(sim.receipt.column_types.columns.slice(0, 4).map((c) => c.type_source), ["dp", "dp", "dp", "dp"]);
  const fromData = p.federatedSimulate(iris, { label: "species", epsilon: 5, clients: 3, mix: 2, seed: 1, columnTypes: "data" });
  assert.equal(fromData.receipt.guarantee.unprotected.length, 1);
  assert.match(fromData.receipt.guarantee.unprotected[0], /^column types/);

  const keys = [1, 2, 3].map((i) => p.federatedKeygen(i));
  const lines = iris.trim().split(/\r?\n/);
  const header = lines[0];
  const body = lines.slice(1);
  const parts = [0, 1, 2].map((s) => [header, ...body.filter((_, i) => i % 3 === s)].join("\n") + "\n");
  const pubs = keys.map((k) => k.publicKey);
  const contributions = parts.map((csv, i) =>
    p.federatedContribute(csv, keys[i].secretKey, pubs, { label: "species", epsilon: 5, mix: 2, samples: 60, seed: 10 + i }));
  for (const c of contributions) assert.match(c.secretKey, /used_contexts/);
  const agg = p.federatedAggregate(contributions.map((c) => c.contribution));
  const rows = parseCsv(agg.csv);
  assert.deepEqual(rows[0], header.split(","));
  assert.equal(rows.length - 1, 60);
  assert.ok(agg.receipt.epsilon <= 5 + 1e-12);
  // A tampered contribution is rejected.
  const bad = JSON.parse(contributions[1].contribution);
  bad.rows += 1;
  assert.throws(() => p.federatedAggregate([contributions[0].contribution, JSON.stringify(bad)]), Error);
  // Reusing a key for the same run is refused.
  assert.throws(() => p.federatedContribute(parts[0], contributions[0].secretKey, pubs, { label: "species", epsilon: 5, mix: 2, samples: 60 }), Error);
});
