// The npm package through a bundler: Vite builds tests/bundler/ (importing `privmix` with
// `await init()` and `privmix/worker`), and headless Chromium runs the bundle.
import test from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { build } from "vite";
import { chromium } from "playwright-core";
import { ROOT } from "../js/helpers.mjs";
import { chromiumPath } from "./harness.mjs";

test("Vite bundles the ESM build and the worker helper, and the bundle runs in Chromium", async () => {
  const outDir = mkdtempSync(join(tmpdir(), "privmix-vite-"));
  await build({ root: join(ROOT, "tests/bundler"), configFile: join(ROOT, "tests/bundler/vite.config.mjs"), build: { outDir } });
  const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
  const server = createServer((req, res) => {
    const path = normalize(join(outDir, new URL(req.url, "http://x").pathname.replace(/\/$/, "/index.html")));
    try {
      const body = readFileSync(path);
      res.writeHead(200, { "Content-Type": types[extname(path)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.getElementById("out").textContent !== "running", null, { timeout: 60_000 });
    const r = JSON.parse(await page.textContent("#out"));
    assert.equal(r.ok, true, r.error);
    assert.ok(r.epsilon <= 2 && r.sigmaX > 0);
    assert.equal(r.directRows, 300);
    assert.equal(r.workerRows, 300);
    assert.ok(r.workerEpsilon <= 3);
    assert.ok(r.progress >= 2, "the worker reports progress");
  } finally {
    await browser.close();
    server.close();
  }
});
