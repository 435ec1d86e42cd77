// The page's live readout (issue 13: ≤ 100 ms for T = 60,000 natively and in the browser),
// measured in one run: every case of `examples/readout_speed.rs` natively (its `--json`
// mode: the whole `noisePreview`, mix auto, best of 3), then the same request through the
// app's own worker (`vendor/worker-client.mjs` + `app-worker.js`, the inlined wasm) in
// headless Chromium, best of 3 after one warm-up call; then as the page asks for it: the
// numbers first (`curve: false`), then the curve (which reuses their calibration), best of 3
// each. Prints a table with the ratio.
// Usage: npm run build && node bench/browser/readout.mjs
import { execFileSync } from "node:child_process";
import { ROOT } from "../../tests/js/helpers.mjs";
import { startApp } from "../../tests/browser/harness.mjs";

const native = execFileSync("cargo", ["run", "--quiet", "--release", "--example", "readout_speed", "--", "--json"], {
  cwd: ROOT,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
})
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));

const app = await startApp();
const { page, networkRequestsAfterLoad } = await app.page();
const browser = await page.evaluate(async (requests) => {
  const { PrivmixWorker } = await import("/vendor/worker-client.mjs");
  const pm = new PrivmixWorker({ createWorker: () => new Worker("/app-worker.js", { type: "module" }) });
  await pm.version();
  const out = [];
  for (const req of requests) {
    await pm.noisePreview(req); // warm-up (the first call compiles the code paths it takes)
    let best = Infinity;
    let r = null;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      r = await pm.noisePreview(req);
      best = Math.min(best, performance.now() - t);
    }
    // As the page asks: the numbers first (`curve: false`), then the curve, which reuses
    // their calibration.
    let numbers = Infinity;
    let curve = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await pm.noisePreview({ ...req, curve: false });
      const t1 = performance.now();
      await pm.noisePreview(req);
      const t2 = performance.now();
      numbers = Math.min(numbers, t1 - t0);
      curve = Math.min(curve, t2 - t1);
    }
    out.push({ ms: best, numbers, curve, mix: r.mix, sigmaX: r.sigmaX });
  }
  return out;
}, native.map((n) => n.request));
const requests = networkRequestsAfterLoad().length;
await app.close();

console.log(
  "| classes × size | d | T | ε | l | native: whole (ms) | native: numbers (ms) | browser, through the app's worker: whole (ms) | browser / native | browser: numbers first (ms) | browser: then the curve (ms) | numbers ≤ 100 ms |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const [i, n] of native.entries()) {
  const q = n.request;
  const b = browser[i];
  const t = q.classSizes.reduce((a, c) => a + c, 0);
  const ok = n.nativeNumbersMs <= 100 && b.numbers <= 100 ? "yes" : "NO";
  console.log(
    `| ${q.classSizes.length}×${Math.min(...q.classSizes)} | ${q.features} | ${t} | ${q.epsilon} | ${b.mix} | ${n.nativeMs.toFixed(1)} | ${n.nativeNumbersMs.toFixed(1)} | ${b.ms.toFixed(1)} | ${(b.ms / n.nativeMs).toFixed(2)}× | ${b.numbers.toFixed(1)} | ${b.curve.toFixed(1)} | ${ok} |`,
  );
}
console.log(`\nnetwork requests after load (other than the app's own engine files): ${requests}`);
