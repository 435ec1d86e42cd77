// The GMM release and Federated pages in headless Chromium, through their data-testid hooks,
// with zero network requests after load.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, parseCsv } from "../js/helpers.mjs";
import { downloadBytes, startApp } from "./harness.mjs";

let app;
const dir = mkdtempSync(join(tmpdir(), "privmix-extras-"));
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.close();
});

// Waits for the status to be done or error; with `text`, for a done whose text contains it
// (or an error): the status of the step before is often "done" too, and must not be taken for
// this step's.
async function waitState(page, testid, text) {
  await page.waitForFunction(
    ([id, want]) => {
      const el = document.querySelector(`[data-testid="${id}"]`);
      return el.dataset.state === "error" || (el.dataset.state === "done" && (!want || el.textContent.includes(want)));
    },
    [testid, text],
    { timeout: 120_000 },
  );
  return page.evaluate((id) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    return { state: el.dataset.state, text: el.textContent };
  }, testid);
}

test("GMM page: release on a CSV, plot, and the three downloads; labels read from the data are thresholded", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page("gmm.html");
  // Iris as a file of one's own (no schema): its labels are read from the data, and at ε = 1
  // a label needs a noisy count of 279 (classes of 50: every one is left out, so the release
  // stops; each class clears it with chance ≈ 6e-6) and the page says how to list them.
  await page.setInputFiles('[data-testid="gmm-file-input"]', join(ROOT, "demo/iris.csv"));
  await page.waitForSelector('[data-testid="gmm-label-select"]:not([hidden])');
  await page.selectOption('[data-testid="gmm-label-select"]', "species");
  await page.fill('[data-testid="gmm-epsilon-input"]', "1");
  // Before the release, the page says what a class needs at these settings.
  await page.waitForFunction(() => /reaches 279 records/.test(document.querySelector('[data-testid="gmm-class-hint"]').textContent));
  assert.equal(await page.isVisible('[data-testid="gmm-class-hint"]'), true);
  // Record adjacency (the default) needs a public bound on the rows' norms (iris: ≤ 11.4).
  await page.fill('[data-testid="gmm-bound-input"]', "15");
  await page.click('[data-testid="gmm-release-button"]');
  const stopped = await waitState(page, "gmm-status");
  assert.equal(stopped.state, "error", stopped.text);
  assert.match(stopped.text, /no class has enough records .* reaches 279/);
  assert.match(stopped.text, /a schema whose label column lists its categories/);
  // Iris four times over and 3 records of a class 'rare', at ε = 5 (threshold 58): the three
  // species clear it (200 records each), 'rare' does not (chance ≈ 6e-7), and only the owner
  // is told it was left out.
  const text = readFileSync(join(ROOT, "demo/iris.csv"), "utf8").trimEnd().split("\n");
  const body = text.slice(1);
  const bigger = join(dir, "iris4.csv");
  writeFileSync(bigger, [text[0], ...body, ...body, ...body, ...body, "5,3,2,1,rare", "6,3,4,1,rare", "7,3,5,2,rare"].join("\n") + "\n");
  await page.setInputFiles('[data-testid="gmm-file-input"]', bigger);
  await page.waitForFunction(() => /iris4/.test(document.getElementById("data-info").textContent));
  await page.selectOption('[data-testid="gmm-label-select"]', "species");
  await page.fill('[data-testid="gmm-epsilon-input"]', "5");
  await page.waitForFunction(() => /reaches 58 records/.test(document.querySelector('[data-testid="gmm-class-hint"]').textContent));
  await page.fill('[data-testid="gmm-bound-input"]', "15");
  await page.click('[data-testid="gmm-release-button"]');
  const st = await waitState(page, "gmm-status");
  assert.equal(st.state, "done", st.text);
  assert.match(st.text, /Left out \(not for release\): rare,/);
  await page.waitForSelector('[data-testid="gmm-plot"] canvas');
  const model = JSON.parse((await downloadBytes(page, "gmm-download-model")).bytes.toString("utf8"));
  assert.deepEqual(model.classes, ["setosa", "versicolor", "virginica"]);
  assert.ok(Math.abs(model.weights.reduce((a, b) => a + b) - 1) < 1e-9);
  const rows = parseCsv((await downloadBytes(page, "gmm-download-data")).bytes.toString("utf8"));
  // Without a T, as many rows as the released counts sum to (a DP number near the kept
  // classes' 600 records; the count noise's σ is about 10 here): the status says how many.
  const shown = Number(/(\d+) rows sampled/.exec(st.text)?.[1]);
  assert.equal(rows.length - 1, shown, st.text);
  assert.ok(Math.abs(shown - 600) <= 60, `${shown}`);
  const receipt = JSON.parse((await downloadBytes(page, "gmm-download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.epsilon <= 5);
  assert.ok(receipt.protected.some((p) => /class labels/.test(p.what) && /reaches 58/.test(p.how)), JSON.stringify(receipt.protected));
  assert.ok(!JSON.stringify(receipt).includes("rare"));
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("GMM page: the Iris demo releases at the page's defaults (its centre and B come from the demo's public ranges; a file of one's own clears them)", async () => {
  const { page, errors } = await app.page("gmm.html");
  await page.click("#demo-iris");
  await page.waitForFunction(() => !document.querySelector('[data-testid="gmm-release-button"]').disabled);
  // From the schema's ranges, not the data: rows centred on the ranges' middles (6, 3.25, 4,
  // 1.25) and B = √(2² + 1.25² + 3² + 1.25²) = 4.02, rounded up to 4.1.
  assert.equal(await page.inputValue('[data-testid="gmm-bound-input"]'), "4.1");
  assert.equal(await page.inputValue('[data-testid="gmm-center-input"]'), "6, 3.25, 4, 1.25");
  // The ranges themselves bound the sampled rows (a Gaussian's tails gave negative widths).
  assert.equal(await page.inputValue('[data-testid="gmm-lower-input"]'), "4, 2, 1, 0");
  assert.equal(await page.inputValue('[data-testid="gmm-upper-input"]'), "8, 4.5, 7, 2.5");
  await page.click('[data-testid="gmm-release-button"]');
  const st = await waitState(page, "gmm-status");
  assert.equal(st.state, "done", st.text);
  const sampled = parseCsv((await downloadBytes(page, "gmm-download-data")).bytes.toString("utf8")).slice(1);
  // As many rows as the released counts sum to (DP, near Iris's 150; the page says how many).
  assert.equal(sampled.length, Number(/(\d+) rows sampled/.exec(st.text)?.[1]), st.text);
  assert.ok(Math.abs(sampled.length - 150) <= 60, `${sampled.length}`);
  const [lo, hi] = [[4, 2, 1, 0], [8, 4.5, 7, 2.5]];
  assert.deepEqual(sampled.filter((r) => r.slice(0, 4).some((x, j) => !(+x >= lo[j] && +x <= hi[j]))), []);
  // The plot shows the data's histogram (grey bars, #d5d8dc) under the released densities.
  await page.waitForSelector('[data-testid="gmm-plot"] canvas');
  const grey = await page.evaluate(() => {
    const c = document.querySelector('[data-testid="gmm-plot"] canvas');
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i] === 0xd5 && px[i + 1] === 0xd8 && px[i + 2] === 0xdc) n++;
    return n;
  });
  assert.ok(grey > 500, `grey pixels: ${grey}`);
  const receipt = JSON.parse((await downloadBytes(page, "gmm-download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.epsilon <= 5 && receipt.epsilon > 4.9, String(receipt.epsilon));
  assert.ok(receipt.guarantee.public_information.some((s) => s.includes("center c = [6.0, 3.25, 4.0, 1.25]")), JSON.stringify(receipt.guarantee));
  // Someone else's data: the demo's B does not carry over, and an empty B under record
  // adjacency says what to enter instead of "not a number".
  await page.setInputFiles('[data-testid="gmm-file-input"]', join(ROOT, "demo/iris.csv"));
  await page.waitForFunction(() => document.querySelector('[data-testid="gmm-bound-input"]').value === "");
  assert.equal(await page.inputValue('[data-testid="gmm-center-input"]'), "");
  assert.equal(await page.inputValue('[data-testid="gmm-lower-input"]'), "");
  assert.equal(await page.inputValue('[data-testid="gmm-upper-input"]'), "");
  await page.waitForFunction(() => !document.querySelector('[data-testid="gmm-release-button"]').disabled);
  await page.click('[data-testid="gmm-release-button"]');
  const empty = await waitState(page, "gmm-status");
  assert.equal(empty.state, "error");
  assert.match(empty.text, /public bound B .* without looking at the data/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("GMM page: a schema file of the user's own gives the centre, B and ranges (for every file and label; a column without a range is named)", async () => {
  const { page, errors } = await app.page("gmm.html");
  // The schema first, then the file it describes: the same frame as the Iris demo's.
  await page.setInputFiles('[data-testid="gmm-schema-input"]', join(ROOT, "demo/iris.schema.json"));
  await page.setInputFiles('[data-testid="gmm-file-input"]', join(ROOT, "demo/iris.csv"));
  await page.waitForFunction(() => document.querySelector('[data-testid="gmm-bound-input"]').value !== "");
  assert.equal(await page.inputValue('[data-testid="gmm-bound-input"]'), "4.1");
  assert.equal(await page.inputValue('[data-testid="gmm-center-input"]'), "6, 3.25, 4, 1.25");
  assert.equal(await page.inputValue('[data-testid="gmm-lower-input"]'), "4, 2, 1, 0");
  assert.equal(await page.inputValue('[data-testid="gmm-upper-input"]'), "8, 4.5, 7, 2.5");
  assert.match(await page.textContent("#data-info"), /From the schema iris\.schema\.json \(no data read\)/);
  assert.match(await page.textContent("#data-info"), /The classes \(setosa, versicolor, virginica\) come from it too/);
  // Listed classes need no threshold: no hint.
  assert.equal(await page.isVisible('[data-testid="gmm-class-hint"]'), false);
  await page.click('[data-testid="gmm-release-button"]');
  const st = await waitState(page, "gmm-status");
  assert.equal(st.state, "done", st.text);
  const sampled = parseCsv((await downloadBytes(page, "gmm-download-data")).bytes.toString("utf8")).slice(1);
  const [lo, hi] = [[4, 2, 1, 0], [8, 4.5, 7, 2.5]];
  assert.deepEqual(sampled.filter((r) => r.slice(0, 4).some((x, j) => !(+x >= lo[j] && +x <= hi[j]))), []);
  // Another label leaves the categorical species among the features: no frame, and the
  // column is named; back to species, the frame returns.
  await page.selectOption('[data-testid="gmm-label-select"]', "petal_width");
  assert.equal(await page.inputValue('[data-testid="gmm-bound-input"]'), "");
  assert.equal(await page.inputValue('[data-testid="gmm-center-input"]'), "");
  assert.match(await page.textContent("#data-info"), /gives no numeric min and max for “species”/);
  await page.selectOption('[data-testid="gmm-label-select"]', "species");
  assert.equal(await page.inputValue('[data-testid="gmm-bound-input"]'), "4.1");
  // A schema without one column's range, chosen with the data on the page: that column is
  // named and nothing is filled; a file that is not JSON is an error that names it.
  const schema = JSON.parse(readFileSync(join(ROOT, "demo/iris.schema.json"), "utf8"));
  delete schema.columns.sepal_width.max;
  const partial = join(dir, "partial.schema.json");
  writeFileSync(partial, JSON.stringify(schema));
  await page.setInputFiles('[data-testid="gmm-schema-input"]', partial);
  await page.waitForFunction(() => /“sepal_width”/.test(document.getElementById("data-info").textContent));
  assert.equal(await page.inputValue('[data-testid="gmm-bound-input"]'), "");
  assert.equal(await page.inputValue('[data-testid="gmm-lower-input"]'), "");
  const bad = join(dir, "bad.schema.json");
  writeFileSync(bad, "{ not json");
  await page.setInputFiles('[data-testid="gmm-schema-input"]', bad);
  const err = await waitState(page, "gmm-status");
  assert.equal(err.state, "error");
  assert.match(err.text, /bad\.schema\.json is not valid JSON/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("Federated page: three parties keygen → contribute → aggregate", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page("federated.html");
  const iris = readFileSync(join(ROOT, "demo/iris.csv"), "utf8").trim().split(/\r?\n/);
  const keys = [];
  for (const party of [1, 2, 3]) {
    await page.fill('[data-testid="fed-party-input"]', String(party));
    await page.click('[data-testid="fed-keygen-button"]');
    assert.equal((await waitState(page, "fed-status", `Party ${party}: key pair made`)).state, "done");
    const key = await downloadBytes(page, "fed-download-key");
    const pub = await downloadBytes(page, "fed-download-pub");
    const kp = join(dir, `p${party}.key.json`);
    const pp = join(dir, `p${party}.pub.json`);
    writeFileSync(kp, key.bytes);
    writeFileSync(pp, pub.bytes);
    keys.push({ kp, pp });
    const csv = join(dir, `part${party}.csv`);
    writeFileSync(csv, [iris[0], ...iris.slice(1).filter((_, i) => i % 3 === party - 1)].join("\n") + "\n");
    keys[party - 1].csv = csv;
  }
  // A schema that types one column (every party loads it); the others are decided under DP.
  const schemaPath = join(dir, "schema.json");
  writeFileSync(schemaPath, JSON.stringify({ columns: { sepal_length: { type: "numeric", min: 4, max: 8, integer: false } } }));
  const contributions = [];
  for (const [i, k] of keys.entries()) {
    await page.setInputFiles('[data-testid="fed-schema-input"]', schemaPath);
    await page.setInputFiles('[data-testid="fed-key-input"]', k.kp);
    await page.setInputFiles('[data-testid="fed-peers-input"]', keys.map((x) => x.pp));
    await page.setInputFiles('[data-testid="fed-file-input"]', k.csv);
    await page.waitForSelector('[data-testid="fed-label-select"]:not([hidden])');
    await page.selectOption('[data-testid="fed-label-select"]', "species");
    await page.fill('[data-testid="fed-epsilon-input"]', "5");
    await page.fill('[data-testid="fed-mix-input"]', "2");
    await page.fill('[data-testid="fed-samples-input"]', "60");
    await page.click('[data-testid="fed-contribute-button"]');
    const st = await waitState(page, "fed-status", `Contribution of party ${i + 1} ready`);
    assert.equal(st.state, "done", st.text);
    // A 50-row party is too small for its type decision to tell text at ε = 5: it is told.
    const own = await page.textContent('[data-testid="fed-summary"]');
    assert.match(own, /warning: column types: 50 rows are too few/);
    const c = await downloadBytes(page, "fed-download-contribution");
    const cp = join(dir, `c${i + 1}.json`);
    writeFileSync(cp, c.bytes);
    contributions.push(cp);
  }
  await page.setInputFiles('[data-testid="fed-contributions-input"]', contributions);
  await page.click('[data-testid="fed-aggregate-button"]');
  const st = await waitState(page, "fed-status", "Done:");
  assert.equal(st.state, "done", st.text);
  const rows = parseCsv((await downloadBytes(page, "fed-download-data")).bytes.toString("utf8"));
  assert.deepEqual(rows[0], iris[0].split(","));
  assert.equal(rows.length - 1, 60);
  const receipt = JSON.parse((await downloadBytes(page, "fed-download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.epsilon <= 5 + 1e-12);
  // Each party's column types: the schema's for sepal_length, decided under DP for the rest;
  // nothing declared unprotected.
  assert.equal(receipt.column_types.length, 3);
  for (const p of receipt.column_types) {
    assert.deepEqual(p.report.columns.slice(0, 4).map((c) => c.type_source), ["schema", "dp", "dp", "dp"]);
  }
  assert.deepEqual(receipt.guarantee.unprotected, []);
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});
