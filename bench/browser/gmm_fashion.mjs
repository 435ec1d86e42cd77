// The app at its defaults on a wide numeric table (Fashion-MNIST's 60k × 784 training CSV,
// which `synth`'s defaults give to the GMM): native CLI and headless Chromium on the same
// file with the same settings (ε = 10, δ = 1e-5, nothing else set), in one run.
// Usage: npm run build && python bench/utility/fashion.py --no-synth (writes the CSV) &&
//        node bench/browser/gmm_fashion.mjs [CSV]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, cli } from "../../tests/js/helpers.mjs";
import { startApp, synthesizeForReceipt } from "../../tests/browser/harness.mjs";

const input = process.argv[2] ?? join(ROOT, "bench/utility/out/fashion/train.csv");
const dir = mkdtempSync(join(tmpdir(), "privmix-gmm-bench-"));
const mb = (statSync(input).size / 1e6).toFixed(1);

const t0 = performance.now();
execFileSync(cli(), ["synth", "--input", input, "--label", "label", "--epsilon", "10", "--delta", "1e-5",
  "--output", join(dir, "native.csv"), "--receipt", join(dir, "native.json")], { stdio: "pipe" });
const native = (performance.now() - t0) / 1000;
const mechanism = JSON.parse(readFileSync(join(dir, "native.json"), "utf8")).mechanism;

const app = await startApp();
const { page, networkRequestsAfterLoad } = await app.page();
const b0 = performance.now();
await page.setInputFiles('[data-testid="file-input"]', input);
await page.waitForFunction(() => /rows in \d+ classes/.test(document.getElementById("class-info").textContent) || document.querySelector('[data-testid="status"]').dataset.state === "error", null, { timeout: 300_000 });
const b1 = performance.now();
await page.fill('[data-testid="epsilon-input"]', "10");
await page.fill('[data-testid="delta-input"]', "1e-5");
const run = await synthesizeForReceipt(page, networkRequestsAfterLoad);
const { requests, receipt } = run;
await app.close();
const browser = (b1 - b0) / 1000 + run.seconds;
console.log(`| ${mb} MB CSV, ε = 10, defaults (native mechanism: ${mechanism}) | seconds |`);
console.log("|---|---|");
console.log(`| native CLI end to end | ${native.toFixed(2)} |`);
console.log(`| browser: file chosen → classes shown | ${((b1 - b0) / 1000).toFixed(2)} |`);
console.log(`| browser: Synthesize → done | ${run.seconds.toFixed(2)} |`);
console.log(`| browser's mechanism, ε | ${receipt.mechanism}, ${receipt.epsilon} |`);
console.log(`| browser / native | ${(browser / native).toFixed(2)}× |`);
console.log(`| network requests after load (before the download) | ${requests} |`);
console.log(`| status | ${run.status.slice(0, 300).replace(/\n/g, " ")} |`);
