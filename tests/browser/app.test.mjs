// The browser app, driven through its data-testid hooks in headless Chromium: a full CSV run,
// a full image run, friendly errors, zero network requests after load, and the CSP.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { messyCsv, parseCsv } from "../js/helpers.mjs";
import { png, unzip, zip } from "../../scripts/zip-png.mjs";
import { downloadBytes, startApp, waitForRun } from "./harness.mjs";

let app;
const dir = mkdtempSync(join(tmpdir(), "privmix-browser-"));
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes 300 messy rows to `name`, loads them in the page and chooses the label `outcome`. */
async function loadMessy(page, name) {
  const file = join(dir, name);
  writeFileSync(file, messyCsv(300));
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForSelector('[data-testid="label-select"]:not([hidden])');
  await page.selectOption('[data-testid="label-select"]', "outcome");
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
}

test("CSV: a messy file through the UI gives the input's header, the row count and ε ≤ target, with zero requests", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page();
  await loadMessy(page, "messy.csv");
  await page.fill('[data-testid="epsilon-input"]', "3");
  await page.fill('[data-testid="delta-input"]', "1e-5");
  await page.fill('[data-testid="mix-input"]', "3");
  await page.fill('[data-testid="samples-input"]', "150");
  await page.waitForFunction(() => /σx = [0-9.]+/.test(document.querySelector('[data-testid="noise-readout"]').textContent));
  await page.click('[data-testid="synthesize-button"]');
  const st = await waitForRun(page);
  assert.equal(st.state, "done", st.text);

  const data = await downloadBytes(page, "download-data");
  assert.match(data.name, /\.csv$/);
  const rows = parseCsv(data.bytes.toString("utf8"));
  assert.deepEqual(rows[0], ["age", "income, yearly", "city", "score", "outcome"]);
  assert.equal(rows.length - 1, 150);
  const rec = await downloadBytes(page, "download-receipt");
  const receipt = JSON.parse(rec.bytes.toString("utf8"));
  assert.ok(receipt.epsilon <= 3 && receipt.epsilon > 2.5, `ε = ${receipt.epsilon}`);
  assert.equal(receipt.randomness.seeded, false);
  // The live readout set aside the run's share of ε for DP normalization (300 rows: raised
  // above the default 0.2), not the default.
  const readout = await page.textContent('[data-testid="noise-readout"]');
  const shown = /sized for a share of ([0-9.]+) of it/.exec(readout);
  assert.ok(shown, readout);
  const share = receipt.normalization.dp_histogram.epsilon_share;
  assert.ok(share > 0.2, `share ${share}`);
  assert.equal(Number(shown[1]), +share.toFixed(2), readout);

  // The histogram preview is drawn.
  await page.waitForSelector('[data-testid="preview"] canvas');
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("images: a ZIP of PNG digits in class folders gives a ZIP of PNGs and a preview, with zero requests", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page();
  const entries = [];
  for (const cls of ["0", "1", "7"]) {
    // 40 per class: under the default (standard) adjacency the class labels and sizes are DP
    // counts, which need a couple of dozen images per class at ε = 5.
    for (let i = 0; i < 40; i++) {
      const px = Array.from({ length: 16 * 16 }, (_, j) => ((j * (Number(cls) + 3) + i * 7) % 256));
      entries.push({ name: `digits/${cls}/img${i}.png`, data: png(16, 16, px) });
    }
  }
  entries.push({ name: "__MACOSX/digits/0/._img0.png", data: Buffer.from("junk") });
  const file = join(dir, "digits.zip");
  writeFileSync(file, zip(entries));
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForFunction(() => /Classes/.test(document.getElementById("class-info").textContent));
  await page.fill('[data-testid="epsilon-input"]', "5");
  await page.fill('[data-testid="mix-input"]', "2");
  await page.fill('[data-testid="samples-input"]', "30");
  await page.click('[data-testid="synthesize-button"]');
  const st = await waitForRun(page);
  assert.equal(st.state, "done", st.text);
  await page.waitForSelector('[data-testid="preview"] img');
  const data = await downloadBytes(page, "download-data");
  assert.match(data.name, /\.zip$/);
  const files = unzip(data.bytes);
  const pngs = files.filter((f) => f.name.endsWith(".png"));
  assert.equal(pngs.length, 30);
  for (const f of pngs) {
    assert.match(f.name, /^(0|1|7)\/[^/]+\.png$/);
    assert.deepEqual([...f.data.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  }
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.epsilon <= 5);
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("bad input gets a friendly message in the page, and a corrected run works", async () => {
  const { page } = await app.page();
  const file = join(dir, "small.csv");
  writeFileSync(file, "x,y,label\n1,2,a\n3,4,a\n5,6,b\n7,8,b\n9,1,b\n");
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForSelector('[data-testid="label-select"]:not([hidden])');
  await page.selectOption('[data-testid="label-select"]', "label");
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("2 classes"));

  const expectError = async (field, value, re) => {
    await page.fill(`[data-testid="${field}"]`, value);
    await page.click('[data-testid="synthesize-button"]');
    const st = await waitForRun(page);
    assert.equal(st.state, "error", `${field}=${value}: ${st.text}`);
    assert.match(st.text, re);
  };
  await expectError("epsilon-input", "-1", /epsilon|ε/);
  await expectError("epsilon-input", "abc", /ε|number/);
  await page.fill('[data-testid="epsilon-input"]', "2");
  await expectError("delta-input", "2", /delta|δ/);
  await page.fill('[data-testid="delta-input"]', "1e-5");
  // Under the default adjacency the class labels and sizes are private: 2 and 3 rows are far
  // too few for DP counts, and the message says what to do.
  await page.click('[data-testid="synthesize-button"]');
  const small = await waitForRun(page);
  assert.equal(small.state, "error", small.text);
  assert.match(small.text, /class/);
  assert.match(small.text, /schema/);
  assert.match(small.text, /keep-label/);
  // Tiny classes: declare them public (under Advanced).
  await page.click("#step-privacy details summary");
  await page.selectOption('[data-testid="adjacency-select"]', "keep-label");
  await expectError("mix-input", "3", /class|mix/); // class "a" has 2 rows
  await page.fill('[data-testid="mix-input"]', "2");
  await expectError("samples-input", "1", /samples|T/);
  // A negative T is refused by the page, in its own words (it used to reach the engine and come
  // back as "noisePreview options: samples: invalid value: integer `-3`, …").
  await expectError("samples-input", "-3", /T = “-3” must be at least 1; enter e\.g\. 100, or leave it empty/);
  await expectError("mix-input", "0", /l = “0” must be at least 1/);
  await page.fill('[data-testid="mix-input"]', "2");
  await page.fill('[data-testid="samples-input"]', "");
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.guarantee.public_information.some((s) => /class/.test(s)), JSON.stringify(receipt.guarantee));
  await page.context().close();
});

test("the readout warns before a run of a class too small to be kept at this budget", async () => {
  const { page, errors } = await app.page();
  const lines = ["x,y,label"];
  for (const [name, n] of [["big", 400], ["rare", 8], ["large", 500]]) {
    for (let r = 0; r < n; r++) lines.push(`${(r * 7) % 50},${(r * 3) % 20},${name}`);
  }
  const file = join(dir, "rare-class.csv");
  writeFileSync(file, lines.join("\n") + "\n");
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForSelector('[data-testid="label-select"]:not([hidden])');
  await page.selectOption('[data-testid="label-select"]', "label");
  await page.fill('[data-testid="epsilon-input"]', "1");
  await page.waitForFunction(() => /^Warning: .*'rare' \(8 records\) has too few records/.test(document.querySelector('[data-testid="readout-warning"]').textContent), null, { timeout: 30_000 });
  assert.equal(await page.isVisible('[data-testid="readout-warning"]'), true);
  // The rows in all are the kept classes' (900), not the table's 908.
  assert.match(await page.textContent('[data-testid="noise-readout"]'), / 900 rows in all\./);
  // At ε = 50 the label threshold is about 6 rows and a pool needs about 2: 'rare' clears both.
  await page.fill('[data-testid="epsilon-input"]', "50");
  await page.waitForFunction(() => /σx = [0-9.]+/.test(document.querySelector('[data-testid="noise-readout"]').textContent)
    && document.querySelector('[data-testid="readout-warning"]').hidden, null, { timeout: 30_000 });
  assert.match(await page.textContent('[data-testid="noise-readout"]'), / 908 rows in all\./);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("the CSP is served as a header and a meta tag, and blocks a deliberate fetch and sendBeacon", async () => {
  const { page, networkRequestsAfterLoad } = await app.page();
  const res = await page.request.get(app.url);
  const header = res.headers()["content-security-policy"];
  assert.match(header, /default-src 'none'/);
  assert.match(header, /connect-src 'none'/);
  const meta = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', "content");
  assert.match(meta, /connect-src 'none'/);
  assert.match(meta, /script-src 'self' 'wasm-unsafe-eval'/);

  const out = await page.evaluate(async (target) => {
    const violations = [];
    document.addEventListener("securitypolicyviolation", (e) => violations.push(e.violatedDirective));
    let fetched;
    try {
      await fetch(target, { method: "POST", body: "secret" });
      fetched = "sent";
    } catch {
      fetched = "blocked";
    }
    let beacon;
    try {
      beacon = navigator.sendBeacon(target, "secret");
    } catch {
      beacon = false;
    }
    await new Promise((r) => setTimeout(r, 500));
    return { fetched, beacon, violations };
  }, `${app.url}leak`);
  assert.equal(out.fetched, "blocked");
  // sendBeacon may report that it queued the beacon; the CSP then refuses to send it.
  assert.ok(out.violations.filter((v) => v.startsWith("connect-src")).length >= 2, JSON.stringify(out.violations));
  assert.deepEqual(networkRequestsAfterLoad().filter((r) => r.url.includes("/leak")), []);
  await page.context().close();
});

test("the demo datasets run without any request", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page();
  await page.click('button[data-demo="iris"]');
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
  // The page's default mix order is the automatic one (as in the CLI and the npm API): the
  // readout says what it picks and the receipt states the choice.
  assert.equal(await page.inputValue('[data-testid="mix-input"]'), "auto");
  await page.waitForFunction(() => /^auto: l = \d+/.test(document.getElementById("mix-suggestion").textContent));
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.match(receipt.parameters.encoding.mix_choice, /^auto: l = \d+/);
  assert.ok(receipt.parameters.mix > 4, `auto chose l = ${receipt.parameters.mix} for Iris`);
  await page.click('button[data-demo="digits-images"]');
  await page.waitForFunction(() => /Classes/.test(document.getElementById("class-info").textContent));
  await page.fill('[data-testid="samples-input"]', "100");
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  await page.waitForSelector('[data-testid="preview"] img');
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("the utility check states its accuracy with the 95 % interval of its held-out rows", async () => {
  const { page, networkRequestsAfterLoad, errors } = await app.page();
  await page.click('button[data-demo="iris"]');
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
  await page.click("#utility-button");
  await page.waitForFunction(() => /accuracy/.test(document.getElementById("utility-result").textContent), null, { timeout: 120_000 });
  const text = await page.evaluate(() => document.getElementById("utility-result").textContent);
  const m = text.match(/accuracy (\d+\.\d)% on 30 held-out real rows \(95% interval (\d+)–(\d+)%/);
  assert.ok(m, text);
  const [acc, lo, hi] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Iris holds out 10 rows a class; on 30 rows the interval spans about ±12 points.
  assert.ok(lo <= acc + 0.5 && acc - 0.5 <= hi && hi - lo >= 10, text);
  assert.deepEqual(networkRequestsAfterLoad(), []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("first load: every script and wasm byte fetched before the first interaction is ≤ 300 KiB gzipped; no 404", async () => {
  const { page, finished, failed, errors } = await app.page();
  await page.waitForTimeout(1500); // anything the page would fetch on its own, idle
  const before = finished.filter((r) => r.type === "script" || /\.(m?js|wasm)$/.test(r.url));
  const firstLoad = before.reduce((s, r) => s + r.bytes, 0);
  assert.ok(before.length >= 3, `scripts seen: ${before.map((r) => r.url).join(", ")}`);
  assert.ok(before.every((r) => r.bytes > 0), "every script's transferred size is known");
  assert.ok(firstLoad <= 300 * 1024, `first load: ${firstLoad} bytes of script and wasm`);
  assert.deepEqual(finished.filter((r) => r.status >= 400).map((r) => r.url), [], "no 404 (favicon included)");
  assert.deepEqual(failed, []);
  // The engine comes with the first data choice: the measurement above would have seen it.
  await page.click('button[data-demo="iris"]');
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
  const engine = finished.filter((r) => /privmix-wasm\.js$/.test(r.url)).reduce((s, r) => s + r.bytes, 0);
  assert.ok(engine > 100 * 1024, `the engine's inlined wasm is counted (${engine} bytes)`);
  console.log(`first load ${(firstLoad / 1024).toFixed(1)} KiB gzipped (${before.length} files); engine ${(engine / 1024).toFixed(1)} KiB on first data choice`);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("race: a 60,000 × 784 CSV, Synthesize pressed as soon as it is enabled, with the label changed during the load, runs on the shown dataset", async () => {
  const { page, errors } = await app.page();
  // The case: 60,000 rows × 784 pixel columns (Fashion-MNIST-like, about 130 MB). The
  // label list appears after the header is read, long before the load ends, so the label
  // change below starts a second load while the first runs, and the click races both.
  const cols = Array.from({ length: 784 }, (_, j) => `p${j}`);
  const lines = [[...cols, "label", "group"].join(",")];
  for (let i = 0; i < 60000; i++) {
    const px = cols.map((_, j) => ((i + j) % 3 === 0 ? 0 : (i * 7 + j * 13) % 256));
    lines.push([...px, i % 10, i % 3 ? "a" : "b"].join(","));
  }
  const file = join(dir, "big.csv");
  writeFileSync(file, lines.join("\n") + "\n");
  lines.length = 0;
  await page.setInputFiles('[data-testid="file-input"]', file);
  // As soon as the label list appears, switch to "group" while the first load runs.
  await page.waitForSelector('[data-testid="label-select"]:not([hidden])', { timeout: 120_000 });
  assert.equal(
    await page.isDisabled('[data-testid="synthesize-button"]'),
    true,
    "the button waits for the load of the dataset on screen",
  );
  await page.selectOption('[data-testid="label-select"]', "group");
  // Press Synthesize the moment it is enabled.
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        const b = document.querySelector('[data-testid="synthesize-button"]');
        const tick = () => (b.disabled ? requestAnimationFrame(tick) : (b.click(), resolve()));
        tick();
      }),
  );
  const st = await waitForRun(page, 300_000);
  assert.equal(st.state, "done", st.text);
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.equal(receipt.data.label, "group", "the run used the label on screen");
  assert.deepEqual(receipt.data.class_labels.slice().sort(), ["a", "b"]);
  // The defaults gave this wide numeric table to the GMM, and the readout showed the GMM's
  // noise as the run calibrated it (not DP-CDA's).
  assert.equal(receipt.mechanism, "dp-gmm");
  const gmmShown = () => /the run uses the dp-gmm mechanism.*noise multiplier z = [0-9.]+/
    .test(document.querySelector('[data-testid="noise-readout"]').textContent);
  await page.waitForFunction(gmmShown, null, { timeout: 60_000 });
  const readout = await page.textContent('[data-testid="noise-readout"]');
  const z = /noise multiplier z = ([0-9.]+)/.exec(readout);
  assert.equal(Number(z[1]), Number(receipt.parameters.noise_multiplier.toPrecision(4)), readout);
  assert.match(await page.textContent("#mix-suggestion"), /dp-gmm mechanism runs here/);
  // Its ε curve is drawn against z (the curve's blue pixels), not left blank.
  const curveDrawn = () => {
    const c = document.getElementById("eps-curve");
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i + 2] > 120 && px[i] < 80) n++;
    return c.getAttribute("aria-label").includes("noise multiplier z") && n > 100;
  };
  await page.waitForFunction(curveDrawn, null, { timeout: 60_000 });
  assert.deepEqual(errors, []);
  await page.context().close();
});

// A schema acts when the table is read: loading one reads the CSV again, so its "ignore"
// column is not in the output and its bounds are used (the table was read without it, and
// the column declared "ignore" was synthesized and released).
test("a schema file read after the data: its ignored column is left out, its bounds used", async () => {
  const { page, errors } = await app.page();
  await loadMessy(page, "messy-schema.csv");
  const schemaFile = join(dir, "messy.schema.json");
  writeFileSync(schemaFile, JSON.stringify({ columns: { city: { type: "ignore" }, age: { type: "numeric", min: 0, max: 120 } } }));
  await page.setInputFiles("#schema-input", schemaFile);
  // The table is read again with the schema; the run waits for it.
  await page.waitForFunction(() => /messy\.schema\.json/.test(document.querySelector('#normalize-select option[value="public"]').textContent));
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
  await page.fill('[data-testid="epsilon-input"]', "3");
  await page.click('[data-testid="synthesize-button"]');
  const st = await waitForRun(page);
  assert.equal(st.state, "done", st.text);
  const rows = parseCsv((await downloadBytes(page, "download-data")).bytes.toString("utf8"));
  assert.deepEqual(rows[0], ["age", "income, yearly", "score", "outcome"]);
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.equal(receipt.normalization.columns.find((c) => c.name === "age").source, "schema");
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("pixel-like columns: the page asks about the public 0–255 range and ticks nothing itself", async () => {
  const { page, errors } = await app.page();
  const cols = Array.from({ length: 16 }, (_, j) => `p${j}`);
  const lines = [[...cols, "label"].join(",")];
  // 1,000 rows: enough for the DP marginals at ε = 5 (with 200 there are none, and integer
  // columns without a marginal are brought into their bounds by a mean-keeping shift).
  for (let i = 0; i < 1000; i++) lines.push([...cols.map((_, j) => (i * 11 + j * 17) % 256), i % 2].join(","));
  const file = join(dir, "pixels.csv");
  writeFileSync(file, lines.join("\n") + "\n");
  await page.setInputFiles('[data-testid="file-input"]', file);
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("2 classes"));
  assert.equal(await page.isVisible("#pixels-row"), true, "the question is shown");
  assert.equal(await page.isChecked("#pixels-public"), false, "not answered for the user");
  assert.equal(await page.inputValue("#normalize-select"), "dp");
  await page.check("#pixels-public");
  // The bounds become public; normalization stays dp (the default), so each column's
  // distribution is released under DP and the synthetic pixels stay inside 0–255.
  assert.equal(await page.inputValue("#normalize-select"), "dp");
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  assert.ok(receipt.normalization.columns.filter((c) => c.kind === "numeric").every((c) => c.source === "schema"), JSON.stringify(receipt.normalization.columns));
  const rows = (await downloadBytes(page, "download-data")).bytes.toString("utf8").trim().split("\n").slice(1);
  const values = rows.flatMap((r) => r.split(",").slice(0, 16).map(Number));
  assert.ok(values.length === rows.length * 16 && values.every((v) => v >= 0 && v <= 255), `pixels outside 0–255: ${values.filter((v) => !(v >= 0 && v <= 255)).slice(0, 5)}`);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test("section 5 after an image run shows no CSV column select; a new choice clears the old result", async () => {
  const { page, errors } = await app.page();
  await page.click('button[data-demo="iris"]');
  await page.waitForFunction(() => document.getElementById("class-info").textContent.includes("3 classes"));
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  await page.waitForSelector("#hist-controls:not([hidden])");
  await page.click('button[data-demo="digits-images"]');
  await page.waitForFunction(() => /Classes/.test(document.getElementById("class-info").textContent));
  assert.equal(await page.isHidden("#hist-controls"), true, "the CSV's column select is gone once images are chosen");
  assert.equal(await page.isDisabled('[data-testid="download-data"]'), true);
  await page.fill('[data-testid="samples-input"]', "50");
  await page.click('[data-testid="synthesize-button"]');
  assert.equal((await waitForRun(page)).state, "done");
  await page.waitForSelector('[data-testid="preview"] img');
  assert.equal(await page.isHidden("#hist-controls"), true);
  assert.deepEqual(errors, []);
  await page.context().close();
});

// Runs `body` in a module worker of the page's origin with the app's own wasm build (`init`,
// `Dataset`, `wasmGzipBase64` and `inflateBase64Gzip` in scope), posts it `message` and
// returns the first message it posts back.
async function inAppWorker(page, name, body, message) {
  await page.route(`**/${name}`, (route) => route.fulfill({
    contentType: "text/javascript",
    body: `
      import init, { Dataset } from "./vendor/privmix.js";
      import { wasmGzipBase64 } from "./vendor/privmix-wasm.js";
      import { inflateBase64Gzip } from "./vendor/worker-core.mjs";
      ${body}`,
  }));
  return page.evaluate(async ({ url, message }) => {
    const w = new Worker(url, { type: "module" });
    try {
      return await new Promise((resolve, reject) => {
        w.onmessage = (e) => resolve(e.data);
        w.onerror = (e) => reject(new Error(e.message));
        w.postMessage(message);
      });
    } finally {
      w.terminate();
    }
  }, { url: `${app.url}${name}`, message });
}

test("in a worker, a Blob is read a slice at a time as its bytes read: the same table, the same error and line, gzip too", async () => {
  const { page } = await app.page();
  const worker = `
      const read = (input) => {
        try {
          const d = new Dataset(input, { label: "label" });
          const r = { rows: d.rows, columns: d.columns, ...d.classCounts() };
          d.free();
          return r;
        } catch (e) {
          return { error: String(e?.message ?? e) };
        }
      };
      const gzip = async (bytes) => new Uint8Array(await new Response(
        new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
      onmessage = async ({ data: texts }) => {
        await init({ module_or_path: await inflateBase64Gzip(wasmGzipBase64) });
        const out = [];
        for (const text of texts) {
          const bytes = new TextEncoder().encode(text);
          const gz = await gzip(bytes);
          out.push({ blob: read(new Blob([bytes])), bytes: read(bytes), gzBlob: read(new Blob([gz])), gzBytes: read(gz) });
        }
        postMessage(out);
      };`;
  // 900,000 rows: about 10 MB, two slices of the reader's 8 MiB.
  let good = "x,c,label\n";
  for (let i = 0; i < 900_000; i++) good += `${i % 97}.5,${["a", "b", "c"][i % 3]},${i % 4 === 0 ? "yes" : "no"}\n`;
  const bad = `${good}1.5,a,no\n2.5,b,yes,extra\n`;
  const results = await inAppWorker(page, "stream-test-worker.mjs", worker, [good, bad]);
  const [ok, err] = results;
  assert.deepEqual(ok.blob, ok.bytes);
  assert.equal(ok.blob.rows, 900_000);
  assert.deepEqual(ok.blob.columns, ["x", "c", "label"]);
  assert.deepEqual(ok.blob.counts, [675_000, 225_000]);
  assert.deepEqual(ok.gzBlob, ok.bytes);
  assert.deepEqual(ok.gzBytes, ok.bytes);
  // The error names the row and its line (found by reading the stream again from its start).
  assert.match(err.bytes.error ?? "", /row 900002 \(line 900003\)/);
  assert.deepEqual(err.blob, err.bytes);
  assert.deepEqual(err.gzBlob, err.bytes);
  await page.context().close();
});

test("in a worker, synthesizeChunks gives synthesize's bytes, run after run, from a Blob's table as from bytes", async () => {
  const { page } = await app.page();
  const worker = `
      const o = { epsilon: 3, seed: 5 };
      const text = (parts) => new TextDecoder().decode(new Uint8Array(parts.flatMap((p) => [...p])));
      const chunked = (d) => {
        const parts = [];
        const receipt = d.synthesizeChunks(o, (c) => parts.push(c));
        return { csv: text(parts), epsilon: receipt.epsilon };
      };
      const whole = (d) => {
        const r = d.synthesize(o);
        return { csv: text([r.csv]), epsilon: r.receipt.epsilon };
      };
      const state = (d) => ({ rows: d.rows, columns: d.columns, ...d.classCounts(), sigma: d.noisePreview(o, { curve: false }).sigmaX });
      onmessage = async ({ data: csv }) => {
        await init({ module_or_path: await inflateBase64Gzip(wasmGzipBase64) });
        const bytes = new TextEncoder().encode(csv);
        const fromBytes = new Dataset(bytes, { label: "label" });
        const fromBlob = new Dataset(new Blob([bytes]), { label: "label" });
        const out = { bytes: { state: state(fromBytes), runs: [chunked(fromBytes), whole(fromBytes)] } };
        const first = chunked(fromBlob);
        const hist = fromBlob.histograms(new TextEncoder().encode(first.csv)).map((h) => h.name);
        out.blob = { hist, runs: [first, whole(fromBlob), chunked(fromBlob)], again: state(fromBlob) };
        postMessage(out);
      };`;
  let csv = "x,y,c,label\n";
  for (let i = 0; i < 3000; i++) csv += `${(i * 7) % 101}.25,${(i * 13) % 37},${["a", "b", "c"][i % 3]},${i % 4 === 0 ? "yes" : "no"}\n`;
  const got = await inAppWorker(page, "chunks-test-worker.mjs", worker, csv);
  const [ref] = got.bytes.runs;
  assert.equal(ref.csv.split("\n")[0], "x,y,c,label");
  assert.ok(ref.csv.split("\n").length > 1000 && ref.epsilon <= 3);
  assert.deepEqual(got.bytes.runs[1], ref, "synthesize and synthesizeChunks give the same bytes");
  for (const [i, r] of got.blob.runs.entries()) assert.deepEqual(r, ref, `run ${i} on the Blob's table, as from bytes`);
  assert.deepEqual(got.blob.again, got.bytes.state);
  assert.deepEqual(got.blob.hist, ["x", "y", "c", "label"]);
  await page.context().close();
});
