// Issue 15's large-table goal, measured: a 1,000,000 × 20 mixed-type CSV (6 integer, 5
// decimal, 8 categorical columns with 2–30 levels, a 3-class label) synthesized in the app in
// headless Chromium at its defaults (ε = 5, δ = 1e-6, mix auto, DP column types and
// normalization), beside the native CLI on the same file with the same settings.
// Goals: under 30 s in the browser on 2 cores; peak memory ≤ 2× the file.
// Memory: the browser's is the peak, sampled every 100 ms, of the resident memory of every
// Chromium process (page, worker, GPU and browser processes) above what they held before the
// file was chosen; the native CLI's is its own peak resident set (VmHWM).
// Usage: npm run build && cargo build --release && node bench/browser/mixed.mjs [--rows 1000000]
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../../tests/js/helpers.mjs";
import { startApp, waitForRun } from "../../tests/browser/harness.mjs";

const argRows = process.argv.indexOf("--rows");
const rows = argRows > 0 ? Number(process.argv[argRows + 1]) : 1_000_000;
const dir = mkdtempSync(join(tmpdir(), "privmix-mixed-"));
const input = join(dir, "mixed.csv");

// The table: a fixed xorshift stream, so every run writes the same file.
let x = 0x9e3779b9;
const rnd = () => {
  x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
  return x / 4294967296;
};
const cats = [["a", "b", "c"], ["red", "green", "blue", "grey"], ["north", "south", "east", "west", "centre"],
  Array.from({ length: 12 }, (_, i) => `m${i + 1}`), Array.from({ length: 30 }, (_, i) => `site_${i}`),
  ["yes", "no"], ["low", "mid", "high"], Array.from({ length: 8 }, (_, i) => `grp${i}`)];
const header = [...Array.from({ length: 6 }, (_, i) => `int${i}`), ...Array.from({ length: 5 }, (_, i) => `dec${i}`),
  ...cats.map((_, i) => `cat${i}`), "label"];
{
  const out = createWriteStream(input);
  let buf = header.join(",") + "\n";
  for (let r = 0; r < rows; r++) {
    const k = Math.floor(rnd() * 3);
    const f = [];
    for (let i = 0; i < 6; i++) f.push(Math.floor(20 + 10 * k + rnd() * (50 + 100 * i)));
    for (let i = 0; i < 5; i++) f.push((k * 0.7 + rnd() * (1 + i) - 0.5).toFixed(3));
    for (const c of cats) f.push(c[Math.floor(Math.min(0.999, rnd() * 0.8 + 0.1 * k) * c.length)]);
    f.push(["alpha", "beta", "gamma"][k]);
    buf += f.join(",") + "\n";
    if (buf.length > 1 << 20) {
      out.write(buf);
      buf = "";
    }
  }
  await new Promise((resolve) => out.end(buf, resolve));
}
const fileBytes = statSync(input).size;
const mb = (b) => (b / 1e6).toFixed(0);

// Resident memory of a process tree, from /proc (Linux).
function children() {
  const kids = new Map();
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(p));
    } catch {
      /* gone */
    }
  }
  return kids;
}
function field(pid, name) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${name}:\\s+(\\d+) kB`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
// The Chromium processes below `root` (this script launches the browser).
function chromiumRss(root) {
  const kids = children();
  let sum = 0;
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    let comm = "";
    try {
      comm = readFileSync(`/proc/${p}/comm`, "utf8");
    } catch {
      /* gone */
    }
    if (/chrom/i.test(comm)) sum += field(p, "VmRSS");
    stack.push(...(kids.get(p) ?? []));
  }
  return sum;
}

const settings = { epsilon: "5", delta: "1e-6" };

// Native CLI.
const native = await new Promise((resolve, reject) => {
  const t0 = performance.now();
  const p = spawn(cli(), ["synth", "--input", input, "--label", "label", "--epsilon", settings.epsilon,
    "--delta", settings.delta, "--output", join(dir, "native.csv"), "--receipt", join(dir, "native.json")], { stdio: "ignore" });
  let hwm = 0;
  const tick = setInterval(() => (hwm = Math.max(hwm, field(p.pid, "VmHWM"))), 50);
  p.on("exit", (code) => {
    clearInterval(tick);
    if (code !== 0) reject(new Error(`native synth exited with ${code}`));
    else resolve({ s: (performance.now() - t0) / 1000, peak: hwm });
  });
});

// Browser.
const app = await startApp();
const { page } = await app.page();
const base = chromiumRss(process.pid);
let peak = base;
const sampler = setInterval(() => (peak = Math.max(peak, chromiumRss(process.pid))), 100);
const b0 = performance.now();
await page.setInputFiles('[data-testid="file-input"]', input);
await page.waitForFunction(
  () => /rows in \d+ classes/.test(document.getElementById("class-info").textContent) ||
    document.querySelector('[data-testid="status"]').dataset.state === "error",
  null, { timeout: 600_000 });
if ((await page.getAttribute('[data-testid="status"]', "data-state")) === "error") {
  throw new Error(await page.textContent('[data-testid="status"]'));
}
const b1 = performance.now();
await page.fill('[data-testid="epsilon-input"]', settings.epsilon);
await page.fill('[data-testid="delta-input"]', settings.delta);
const b2 = performance.now();
await page.click('[data-testid="synthesize-button"]');
const st = await waitForRun(page, 900_000);
const b3 = performance.now();
clearInterval(sampler);
await app.close();
if (st.state !== "done") throw new Error(`browser run failed: ${st.text}`);
const browser = (b1 - b0 + (b3 - b2)) / 1000;
const extra = peak - base;

console.log(`\n| measure (${rows} rows × ${header.length} columns mixed CSV, ${mb(fileBytes)} MB; ε=${settings.epsilon}, δ=${settings.delta}, defaults) | value | goal | met |`);
console.log("|---|---|---|---|");
console.log(`| native CLI, end to end | ${native.s.toFixed(2)} s | baseline | |`);
console.log(`| native peak resident memory / file | ${mb(native.peak)} MB = ${(native.peak / fileBytes).toFixed(2)}× | | |`);
console.log(`| browser: read + parse (file chosen → classes shown) | ${((b1 - b0) / 1000).toFixed(2)} s | | |`);
console.log(`| browser: synthesize (click → done) | ${((b3 - b2) / 1000).toFixed(2)} s | | |`);
console.log(`| browser, end to end | ${browser.toFixed(2)} s | < 30 s | ${browser < 30 ? "yes" : "NO"} |`);
console.log(`| browser / native | ${(browser / native.s).toFixed(2)}× | | |`);
console.log(`| browser peak memory above its idle (all Chromium processes) / file | ${mb(extra)} MB = ${(extra / fileBytes).toFixed(2)}× | ≤ 2× | ${extra <= 2 * fileBytes ? "yes" : "NO"} |`);
console.log(`\nstatus: ${st.text}`);
