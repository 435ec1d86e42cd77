// Browser performance goals, measured in one run and printed as a table:
//   1. synthesizing a 60k×784 CSV in the app (headless Chromium; reading and parsing included)
//      against the native CLI on the same file with the same settings, as a ratio (goal ≤ 3×);
//   2. the wasm and JS the app and the package ship, gzipped (goal ≤ 400 KiB; demo data excluded);
//   3. the longest main-thread task during the browser run (goal ≤ 100 ms).
// Usage: npm run build && node bench/browser/run.mjs [--rows 60000]
import { execFileSync } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGunzip, gzipSync } from "node:zlib";
import { createInterface } from "node:readline";
import { ROOT, cli } from "../../tests/js/helpers.mjs";
import { startApp, waitForRun } from "../../tests/browser/harness.mjs";

const rowsWanted = Number(process.argv[process.argv.indexOf("--rows") + 1] || 60000) || 60000;
const DATA = process.env.PRIVMIX_DATA_DIR ?? join(ROOT, "../shared/data");
const dir = mkdtempSync(join(tmpdir(), "privmix-bench-"));
const input = join(dir, "mnist-60k.csv");

// 60k rows: the 10k MNIST digits repeated (the timing depends on the size, not the content).
const lines = [];
const rl = createInterface({ input: createReadStream(join(DATA, "mnist-10k.csv.gz")).pipe(createGunzip()) });
for await (const l of rl) lines.push(l);
const header = lines[0];
const body = lines.slice(1);
const out = createWriteStream(input);
out.write(header + "\n");
for (let i = 0; i < rowsWanted; i++) out.write(body[i % body.length] + "\n");
await new Promise((r) => out.end(r));
const cols = header.split(",");
const label = cols.includes("label") ? "label" : cols[0];
const schema = { columns: Object.fromEntries(cols.filter((c) => c !== label).map((c) => [c, { type: "numeric", min: 0, max: 255, integer: true }])) };
writeFileSync(join(dir, "schema.json"), JSON.stringify(schema));
const mb = (readFileSync(input).length / 1e6).toFixed(1);

const settings = { epsilon: "10", delta: "1e-5", mix: "4" };

// Native CLI: same file, same settings (public pixel bounds in a schema with the default dp
// normalization, as the app uses for pixel tables).
const t0 = performance.now();
execFileSync(cli(), ["synth", "--input", input, "--label", label, "--schema", join(dir, "schema.json"),
  "--epsilon", settings.epsilon, "--delta", settings.delta, "--mix", settings.mix,
  "--output", join(dir, "native.csv"), "--receipt", join(dir, "native.json")], { stdio: "pipe" });
const native = (performance.now() - t0) / 1000;

// Browser: choose the file, let the app read it, press Synthesize, wait for done.
const app = await startApp();
const { page, networkRequestsAfterLoad } = await app.page();
await page.evaluate(() => {
  window.__longtasks = [];
  new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__longtasks.push(e.duration))).observe({ type: "longtask", buffered: false });
});
const b0 = performance.now();
await page.setInputFiles('[data-testid="file-input"]', input);
await page.waitForFunction(() => /rows in \d+ classes/.test(document.getElementById("class-info").textContent) || document.querySelector('[data-testid="status"]').dataset.state === "error", null, { timeout: 300_000 });
if ((await page.getAttribute('[data-testid="status"]', "data-state")) === "error") throw new Error(await page.textContent('[data-testid="status"]'));
const b1 = performance.now();
await page.fill('[data-testid="epsilon-input"]', settings.epsilon);
await page.fill('[data-testid="delta-input"]', settings.delta);
await page.fill('[data-testid="mix-input"]', settings.mix);
// The app asks whether the columns are public 0–255 pixels (it never ticks this itself):
// answer yes, as the native run does with its schema.
if (await page.isVisible("#pixels-row")) await page.check("#pixels-public");
const usedPixels = await page.isChecked("#pixels-public");
const b2 = performance.now();
await page.click('[data-testid="synthesize-button"]');
const st = await waitForRun(page, 600_000);
const b3 = performance.now();
if (st.state !== "done") throw new Error(`browser run failed: ${st.text}`);
const longtasks = await page.evaluate(() => window.__longtasks);
const requests = networkRequestsAfterLoad().length;
await app.close();
const browser = (b1 - b0 + (b3 - b2)) / 1000;

// Shipped size (gzip -9), demo data excluded.
const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
// What the main page (index.html) loads: its scripts, the core wasm and the worker.
// (The first load is only app.js, common.js and worker-client.mjs: the engine files come with
// the first data choice; tests/browser/app.test.mjs measures the first load.)
const www = ["www/app.js", "www/common.js", "www/app-worker.js", "www/vendor/privmix.js", "www/vendor/privmix-wasm.js",
  "www/vendor/worker-core.mjs", "www/vendor/worker-client.mjs"];
// The GMM and Federated pages load the full build instead (informational).
const fullPage = ["www/gmm.js", "www/federated.js", "www/common.js", "www/full-worker.js", "www/vendor/full/privmix.js",
  "www/vendor/full/privmix-wasm.js", "www/vendor/worker-core.mjs", "www/vendor/worker-client.mjs"];
const appBytes = www.reduce((s, f) => s + gz(join(ROOT, f)), 0);
const pkgFiles = ["js/web.mjs", "js/wrap.mjs", "pkg/web/privmix.js", "pkg/web/privmix_bg.wasm"];
const pkgBytes = pkgFiles.reduce((s, f) => s + gz(join(ROOT, f)), 0);
const maxLong = longtasks.length ? Math.max(...longtasks) : 0;
const fullBytes = fullPage.reduce((s, f) => s + gz(join(ROOT, f)), 0);

const kib = (b) => (b / 1024).toFixed(1);
console.log(`\n| measure (${rowsWanted}×${cols.length - 1} CSV, ${mb} MB; ε=${settings.epsilon}, l=${settings.mix}) | value | goal | met |`);
console.log("|---|---|---|---|");
console.log(`| native CLI, end to end | ${native.toFixed(2)} s | baseline | |`);
console.log(`| browser: read + parse (file chosen → classes shown) | ${((b1 - b0) / 1000).toFixed(2)} s | | |`);
console.log(`| browser: synthesize (click → done) | ${((b3 - b2) / 1000).toFixed(2)} s | | |`);
console.log(`| browser / native | ${(browser / native).toFixed(2)}× | ≤ 3× | ${browser / native <= 3 ? "yes" : "NO"} |`);
console.log(`| app wasm + JS, gzipped (${www.length} files) | ${kib(appBytes)} KiB | ≤ 400 KiB | ${appBytes <= 400 * 1024 ? "yes" : "NO"} |`);
console.log(`| npm browser build (privmix) wasm + JS, gzipped | ${kib(pkgBytes)} KiB | ≤ 400 KiB | ${pkgBytes <= 400 * 1024 ? "yes" : "NO"} |`);
console.log(`| GMM / Federated pages (full build: + GMM, federated), gzipped | ${kib(fullBytes)} KiB | (not in the goal) | |`);
console.log(`| longest main-thread task during the browser run | ${maxLong.toFixed(0)} ms (${longtasks.length} tasks > 50 ms) | ≤ 100 ms | ${maxLong <= 100 ? "yes" : "NO"} |`);
console.log(`| network requests after load | ${requests} | 0 | ${requests === 0 ? "yes" : "NO"} |`);
console.log(`\npublic pixel bounds used by the app: ${usedPixels}; native used the same schema.`);
