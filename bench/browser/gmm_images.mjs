// The app at its defaults on a large image set: a ZIP of class folders of 28×28 PNGs (the
// first N Fashion-MNIST training rows, N = 25,000 by default), which the defaults give to the
// GMM (k = 50). Native CLI and headless Chromium on the same ZIP (ε = 10, δ = 1e-5), in one
// run; prints the times, both mechanisms, the GMM's noise the page's readout showed before the
// run, and the page's requests.
// Usage: npm run build && python bench/utility/fashion.py --no-synth (writes the CSV) &&
//        node bench/browser/gmm_images.mjs [N]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, cli } from "../../tests/js/helpers.mjs";
import { startApp, synthesizeForReceipt } from "../../tests/browser/harness.mjs";
import { png, zip } from "../../scripts/zip-png.mjs";

const n = Number(process.argv[2] ?? 25_000);
const names = ["tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"];
const dir = mkdtempSync(join(tmpdir(), "privmix-gmm-images-"));
const lines = readFileSync(join(ROOT, "bench/utility/out/fashion/train.csv"), "utf8").split("\n");
const header = lines[0].split(",");
const li = header.indexOf("label");
const entries = [];
for (let i = 1; i <= n && i < lines.length; i++) {
  const v = lines[i].split(",");
  if (v.length < header.length) continue;
  const px = v.filter((_, j) => j !== li).map(Number);
  entries.push({ name: `fashion/${names[Number(v[li])]}/${i}.png`, data: png(28, 28, px) });
}
const file = join(dir, "fashion.zip");
writeFileSync(file, zip(entries));

const t0 = performance.now();
execFileSync(cli(), ["synth", "--input", file, "--epsilon", "10", "--delta", "1e-5",
  "--output", join(dir, "native.zip"), "--receipt", join(dir, "native.json")], { stdio: "pipe" });
const native = (performance.now() - t0) / 1000;
const nativeReceipt = JSON.parse(readFileSync(join(dir, "native.json"), "utf8"));

const app = await startApp();
const { page, networkRequestsAfterLoad } = await app.page();
await page.setInputFiles('[data-testid="file-input"]', file);
await page.waitForFunction(() => /Classes/.test(document.getElementById("class-info").textContent), null, { timeout: 300_000 });
await page.fill('[data-testid="epsilon-input"]', "10");
await page.fill('[data-testid="delta-input"]', "1e-5");
const readoutShows = () => /the run uses the dp-gmm mechanism.*ε = [0-9.]+/.test(document.querySelector('[data-testid="noise-readout"]').textContent);
await page.waitForFunction(readoutShows, null, { timeout: 60_000 }).catch(() => {});
const shown = await page.textContent('[data-testid="noise-readout"]');
const readoutZ = /noise multiplier z = ([0-9.]+)/.exec(shown)?.[1];
const { seconds: browser, requests, receipt } = await synthesizeForReceipt(page, networkRequestsAfterLoad);
await app.close();
console.log(`| ${entries.length} Fashion PNGs (28×28), ε = 10, δ = 1e-5, defaults | |`);
console.log("|---|---|");
console.log(`| native CLI end to end (s) | ${native.toFixed(2)} |`);
console.log(`| native mechanism, k, ε | ${nativeReceipt.mechanism}, ${nativeReceipt.parameters.components}, ${nativeReceipt.epsilon} |`);
console.log(`| browser: Synthesize → done (s) | ${browser.toFixed(2)} |`);
console.log(`| browser mechanism, k, ε | ${receipt.mechanism}, ${receipt.parameters.components}, ${receipt.epsilon} |`);
console.log(`| the readout before the run: the GMM's noise multiplier (the receipt's) | ${readoutZ ?? "not shown"} (${receipt.parameters.noise_multiplier}) |`);
console.log(`| browser / native | ${(browser / native).toFixed(2)}× |`);
console.log(`| network requests after load (before the download) | ${requests} |`);
