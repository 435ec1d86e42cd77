// Starts the app's server (scripts/serve.mjs) on a free port and Debian's chromium through
// playwright-core, recording every request the page makes.
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { ROOT } from "../js/helpers.mjs";

export function chromiumPath() {
  for (const name of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {
      /* next */
    }
  }
  throw new Error("Debian's chromium is not installed (apt-get install chromium); npm test installs it");
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/** The main page's lazily loaded files: its engine (worker, glue, inlined wasm) and the demos. */
export const LAZY_FILES = [
  "app-worker.js", "vendor/privmix.js", "vendor/privmix-wasm.js", "vendor/worker-core.mjs", "vendor/ops.mjs", "vendor/demo-data.js",
];

export async function startApp() {
  // Found before the server starts, so that a machine without chromium gets the error and
  // no server left running.
  const executablePath = chromiumPath();
  const port = await freePort();
  const server = spawn(process.execPath, [join(ROOT, "scripts/serve.mjs")], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve, reject) => {
    server.stdout.on("data", (d) => String(d).includes("http://") && resolve());
    server.on("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  const browser = await chromium.launch({
    executablePath,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    ],
  });
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    port,
    browser,
    async page(path = "") {
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      const requests = [];
      const finished = [];
      const failed = [];
      page.on("request", (r) => requests.push({ url: r.url(), at: Date.now() }));
      context.on("request", (r) => requests.push({ url: r.url(), at: Date.now(), worker: true }));
      context.on("requestfinished", async (r) => {
        const res = await r.response().catch(() => null);
        const sizes = await r.sizes().catch(() => null);
        finished.push({ url: r.url(), type: r.resourceType(), status: res?.status(), bytes: sizes?.responseBodySize ?? 0, at: Date.now() });
      });
      context.on("requestfailed", (r) => failed.push(r.url()));
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(url + path);
      // Loaded: the page's scripts ran (the main page starts its engine on the first data
      // choice; the GMM and Federated pages load theirs before saying ready).
      await page.waitForFunction(() => document.body.dataset.ready === "1");
      const loadedAt = Date.now();
      return {
        page,
        context,
        errors,
        /**
         * Requests that went to the network after load, other than the app's own engine and
         * demo files, which the main page fetches (once each, from its own origin) on the first
         * data choice. blob:/data: URLs stay in the page.
         */
        networkRequestsAfterLoad: () => {
          const after = requests.filter((r) => r.at >= loadedAt && !/^(blob|data):/.test(r.url));
          const own = (r) => LAZY_FILES.some((f) => r.url === url + f);
          return after.filter((r) => !own(r));
        },
        allRequests: requests,
        finished,
        failed,
      };
    },
    async close() {
      await browser.close();
      server.kill();
    },
  };
}

/** Waits until the status leaves `running` and returns its state and text. */
export async function waitForRun(page, timeout = 120_000) {
  await page.waitForFunction(
    () => {
      const s = document.querySelector('[data-testid="status"]').dataset.state;
      return s === "done" || s === "error";
    },
    null,
    { timeout },
  );
  return page.evaluate(() => {
    const el = document.querySelector('[data-testid="status"]');
    return { state: el.dataset.state, text: el.textContent };
  });
}

/**
 * Clicks Synthesize and waits for the run (`timeout` ms); throws unless it ends "done".
 * Returns its seconds, the network requests made since the page loaded (counted before the
 * receipt's download), the status line and the downloaded receipt.
 */
export async function synthesizeForReceipt(page, networkRequestsAfterLoad, timeout = 600_000) {
  const t0 = performance.now();
  await page.click('[data-testid="synthesize-button"]');
  const st = await waitForRun(page, timeout);
  const seconds = (performance.now() - t0) / 1000;
  const requests = networkRequestsAfterLoad().length;
  if (st.state !== "done") throw new Error(`browser run failed: ${st.text}`);
  const receipt = JSON.parse((await downloadBytes(page, "download-receipt")).bytes.toString("utf8"));
  return { seconds, requests, status: st.text, receipt };
}

/**
 * Clicks a download button and returns the file. If no download starts within
 * 20 s the click is tried once more, and that is reported on stderr with the
 * button's and the status line's state: a CI run once saw one of eleven
 * downloads in a page never start (not reproduced in 31 local runs, under
 * load too). A second miss fails; the stderr line says what the page showed.
 */
export async function downloadBytes(page, testid) {
  const sel = `[data-testid="${testid}"]`;
  const attempt = () =>
    Promise.all([page.waitForEvent("download", { timeout: 20_000 }), page.click(sel)]).then(([dl]) => dl);
  const pageErrors = [];
  const onError = (e) => pageErrors.push(String(e));
  page.on("pageerror", onError);
  let dl;
  try {
    dl = await attempt();
  } catch (e) {
    if (e?.name !== "TimeoutError") throw e;
    const seen = await page.evaluate((s) => {
      const b = document.querySelector(s);
      const st = document.querySelector('[data-testid$="status"]');
      return { disabled: b?.disabled, status: st?.textContent };
    }, sel);
    seen.pageErrors = pageErrors;
    process.stderr.write(`downloadBytes: no download 20 s after clicking ${testid} (${JSON.stringify(seen)}); clicking again\n`);
    dl = await attempt();
  } finally {
    page.off("pageerror", onError);
  }
  const path = await dl.path();
  const { readFileSync } = await import("node:fs");
  return { name: dl.suggestedFilename(), bytes: readFileSync(path) };
}
