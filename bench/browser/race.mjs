// The app's load race at full size: a 60,000 × 784 MNIST-style CSV is chosen and Synthesize
// is pressed the moment it is enabled (and clicked every frame before that, which a disabled
// button ignores). Prints the outcome and the timings; exits non-zero unless the run is done
// on the shown dataset with every row.
// Usage: npm run build && node bench/browser/race.mjs [--rows 60000]
import { createReadStream, createWriteStream, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { createInterface } from "node:readline";
import { ROOT } from "../../tests/js/helpers.mjs";
import { downloadBytes, startApp, waitForRun } from "../../tests/browser/harness.mjs";

const rowsWanted = Number(process.argv[process.argv.indexOf("--rows") + 1] || 60000) || 60000;
const DATA = process.env.PRIVMIX_DATA_DIR ?? join(ROOT, "../shared/data");
const dir = mkdtempSync(join(tmpdir(), "privmix-race-"));
const input = join(dir, "mnist-60k.csv");
const lines = [];
for await (const l of createInterface({ input: createReadStream(join(DATA, "mnist-10k.csv.gz")).pipe(createGunzip()) })) lines.push(l);
const out = createWriteStream(input);
out.write(lines[0] + "\n");
for (let i = 0; i < rowsWanted; i++) out.write(lines[1 + (i % (lines.length - 1))] + "\n");
await new Promise((r) => out.end(r));

const app = await startApp();
const { page, errors, networkRequestsAfterLoad } = await app.page();
const t0 = performance.now();
await page.setInputFiles('[data-testid="file-input"]', input);
const clicks = await page.evaluate(
  () =>
    new Promise((resolve) => {
      const b = document.querySelector('[data-testid="synthesize-button"]');
      let n = 0;
      const tick = () => {
        n++;
        b.click(); // ignored while disabled
        if (b.disabled) requestAnimationFrame(tick);
        else resolve(n);
      };
      tick();
    }),
);
const t1 = performance.now();
const st = await waitForRun(page, 900_000);
const t2 = performance.now();
let rows = null;
let label = null;
if (st.state === "done") {
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  rows = receipt.parameters.rows_written;
  label = receipt.data.label;
}
const requests = networkRequestsAfterLoad().length;
await app.close();
console.log(JSON.stringify({ rows: rowsWanted, mb: +(readFileSync(input).length / 1e6).toFixed(1), state: st.state, text: st.text,
  rowsWritten: rows, label, framesBeforeEnabled: clicks, loadSeconds: +((t1 - t0) / 1000).toFixed(2),
  synthSeconds: +((t2 - t1) / 1000).toFixed(2), requestsAfterLoad: requests, errors }));
if (st.state !== "done" || rows !== rowsWanted || requests !== 0 || errors.length) process.exit(1);
