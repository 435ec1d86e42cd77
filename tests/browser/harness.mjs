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

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

export async function startApp() {
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
    executablePath: chromiumPath(),
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
      page.on("request", (r) => requests.push({ url: r.url(), at: Date.now() }));
      context.on("request", (r) => requests.push({ url: r.url(), at: Date.now(), worker: true }));
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(url + path);
      // Loaded: the worker has started and instantiated the wasm.
      if (path === "") {
        await page.waitForFunction(() => document.getElementById("version").textContent.length > 0);
      } else {
        await page.waitForFunction(() => document.body.dataset.ready === "1");
      }
      const loadedAt = Date.now();
      return {
        page,
        context,
        errors,
        /** Requests that went to the network after load (blob:/data: URLs stay in the page). */
        networkRequestsAfterLoad: () =>
          requests.filter((r) => r.at >= loadedAt && !/^(blob|data):/.test(r.url)),
        allRequests: requests,
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

export async function downloadBytes(page, testid) {
  const [dl] = await Promise.all([page.waitForEvent("download"), page.click(`[data-testid="${testid}"]`)]);
  const path = await dl.path();
  const { readFileSync } = await import("node:fs");
  return { name: dl.suggestedFilename(), bytes: readFileSync(path) };
}
