// The live readout of a loaded table (issue 13: ≤ 100 ms natively and in the browser), in
// one run: `examples/readout_speed.rs --dataset` natively (`api::dataset_preview`, best of 3
// at ε = 1, 5, 10), then the same readout through the app's own worker in headless Chromium
// (`vendor/worker-client.mjs` + `app-worker.js`: `loadDataset`, then `datasetNoisePreview`),
// the whole readout and, as the page asks for it, the numbers first (`curve: false`) and then
// the curve; best of 3 after one warm-up call each. The file reaches the page as a chosen
// file (an `<input type=file>` the script adds), as a user's would.
// Usage: npm run build && node bench/browser/readout_dataset.mjs FILE.csv [LABEL]
//   (e.g. bench/out/mnist60k.csv from `bash bench/run.sh`, label `label`)
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { ROOT } from "../../tests/js/helpers.mjs";
import { startApp } from "../../tests/browser/harness.mjs";

const file = resolve(process.argv[2] ?? "bench/out/mnist60k.csv");
const label = process.argv[3] ?? "label";
const native = execFileSync(
  "cargo",
  ["run", "--quiet", "--release", "--example", "readout_speed", "--", "--dataset", file, "--label", label],
  { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
);
console.log("Natively (readout_speed --dataset):\n" + native);

const app = await startApp();
const { page, networkRequestsAfterLoad } = await app.page();
await page.evaluate(() => {
  const input = document.createElement("input");
  input.type = "file";
  input.id = "bench-file";
  document.body.append(input);
});
await page.setInputFiles("#bench-file", file);
const rows = await page.evaluate(async (label) => {
  const { PrivmixWorker } = await import("/vendor/worker-client.mjs");
  const pm = new PrivmixWorker({ createWorker: () => new Worker("/app-worker.js", { type: "module" }) });
  const t0 = performance.now();
  const info = await pm.loadDataset(document.getElementById("bench-file").files[0], { label });
  const load = performance.now() - t0;
  const out = [];
  for (const epsilon of [1, 5, 10]) {
    const req = { label, epsilon, delta: 1e-5 };
    await pm.datasetNoisePreview(req); // warm-up
    let whole = Infinity;
    let numbers = Infinity;
    let curve = Infinity;
    let r = null;
    // The dataset keeps its last calibration and a call with the same options reuses it, so
    // every timed call moves ε by a relative 1e-7 (the same settings to every digit shown);
    // the curve's call then reuses the numbers' calibration, as the page's does.
    for (let i = 0; i < 3; i++) {
      const whole1 = { ...req, epsilon: epsilon * (1 + 1e-7 * (2 * i + 1)) };
      const t = performance.now();
      r = await pm.datasetNoisePreview(whole1);
      whole = Math.min(whole, performance.now() - t);
      const step = { ...req, epsilon: epsilon * (1 + 1e-7 * (2 * i + 2)) };
      const t1 = performance.now();
      await pm.datasetNoisePreview(step, { curve: false });
      const t2 = performance.now();
      await pm.datasetNoisePreview(step);
      numbers = Math.min(numbers, t2 - t1);
      curve = Math.min(curve, performance.now() - t2);
    }
    out.push({ epsilon, mix: r.mix, sigmaX: r.sigmaX, whole, numbers, curve });
  }
  return { rows: info.rows, load, out };
}, label);
const requests = networkRequestsAfterLoad().length;
await app.close();

console.log(`In Chromium (the app's worker; ${rows.rows} rows loaded in ${rows.load.toFixed(0)} ms):`);
console.log("| ε | l | σx | whole readout (ms) | numbers first (ms) | then the curve (ms) | numbers ≤ 100 ms |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows.out) {
  console.log(
    `| ${r.epsilon} | ${r.mix} | ${r.sigmaX.toFixed(4)} | ${r.whole.toFixed(1)} | ${r.numbers.toFixed(1)} | ${r.curve.toFixed(1)} | ${r.numbers <= 100 ? "yes" : "NO"} |`,
  );
}
console.log(`requests after load: ${requests}`);
