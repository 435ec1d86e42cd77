// The packed tarball in browser consumer projects (tests/consumers/web), each run in headless
// Chromium doing a real synthesizeCsv and a worker call: Vite and webpack (wasm and worker as assets),
// esbuild and Rollup (privmix/inline + a worker entry: nothing to copy), a Next.js build
// (Turbopack) and the same page under `next dev`, a plain page with an import map, and a copy on another origin (a CDN) with the
// blob: worker recipe.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { chromium } from "playwright-core";
import { consumer } from "../consumers/pack.mjs";
import { ROOT } from "../js/helpers.mjs";
import { chromiumPath, freePort } from "./harness.mjs";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm" };
function serve(root, { cors = false } = {}) {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/\/$/, "/index.html")));
    const headers = cors ? { "Access-Control-Allow-Origin": "*" } : {};
    try {
      const body = readFileSync(path);
      res.writeHead(200, { ...headers, "Content-Type": TYPES[extname(path)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404, headers).end();
    }
  });
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

let browser;
const servers = [];
before(async () => {
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});
after(async () => {
  await browser?.close();
  for (const s of servers) s.close();
});

async function runPage(url, { full = true } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.getElementById("out").textContent !== "running", null, { timeout: 90_000 });
    const r = JSON.parse(await page.textContent("#out"));
    assert.equal(r.ok, true, `${r.error} ${errors.join("; ")}`);
    assert.equal(r.directRows, 60);
    assert.ok(r.epsilon <= 2 && r.sigmaX > 0);
    assert.equal(r.workerRows, 60);
    assert.ok(r.workerEpsilon <= 3);
    assert.ok(r.progress >= 1, "the worker reports progress");
    assert.equal(r.aborted, "AbortError", "an aborted worker call rejects with an AbortError");
    assert.equal(r.bad?.name !== undefined && /epsilon/.test(r.bad.message), true, JSON.stringify(r.bad));
    if (full) assert.equal(r.fullWorker, true, "the default worker runs the full build");
    return r;
  } finally {
    await page.close();
  }
}

// What an embedder with no asset to serve can keep: no connection at all.
const STRICT_CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'none'">`;

async function serveBuilt(outDir, main, { csp = "" } = {}) {
  const html = readFileSync(join(outDir, "..", "index.html"), "utf8").replace("./main.js", main).replace('<meta charset="utf-8">', `<meta charset="utf-8">${csp}`);
  writeFileSync(join(outDir, "index.html"), html);
  const s = await serve(outDir);
  servers.push(s.server);
  return s.url;
}

test("webpack 5: privmix with its wasm asset and the default worker", async () => {
  const dir = consumer("web");
  const { default: webpack } = await import("webpack");
  const outDir = join(dir, "dist");
  const stats = await new Promise((resolve, reject) =>
    webpack({
      mode: "production", context: dir, entry: "./main-assets.js", devtool: false,
      output: { path: outDir, filename: "main.js", publicPath: "auto" },
      performance: { hints: false },
    }).run((err, st) => (err ? reject(err) : resolve(st))),
  );
  assert.ok(!stats.hasErrors(), stats.toString("errors-only"));
  assert.deepEqual(stats.compilation.warnings.map(String), [], "webpack builds without a warning");
  await runPage(await serveBuilt(outDir, "./main.js"));
});

test("Vite: privmix with its wasm asset and the default worker, from the tarball", async () => {
  const dir = consumer("web");
  writeFileSync(join(dir, "index.html"), readFileSync(join(dir, "index.html"), "utf8").replace("./main.js", "./main-assets.js"));
  const { build } = await import("vite");
  const outDir = join(dir, "dist");
  const warnings = [];
  await build({
    root: dir, configFile: false, logLevel: "silent",
    customLogger: { info() {}, warn: (m) => warnings.push(m), warnOnce: (m) => warnings.push(m), error: (m) => warnings.push(m), clearScreen() {}, hasErrorLogged: () => false, hasWarned: false },
    build: { outDir, target: "es2022", emptyOutDir: true }, worker: { format: "es" },
  });
  assert.deepEqual(warnings, []);
  const s = await serve(outDir);
  servers.push(s.server);
  await runPage(s.url);
});

test("esbuild: privmix/inline and a worker entry, without a warning, nothing to copy, under connect-src 'none'", async () => {
  const dir = consumer("web");
  const esbuild = await import("esbuild");
  const outDir = join(dir, "dist");
  const r = await esbuild.build({
    absWorkingDir: dir, entryPoints: ["main-inline.js", "worker-inline.js"], bundle: true, format: "esm",
    outdir: outDir, target: "es2022", logLevel: "silent", minify: true,
  });
  assert.deepEqual(r.warnings.map((w) => w.text), []);
  await runPage(await serveBuilt(outDir, "./main-inline.js", { csp: STRICT_CSP }), { full: false });
});

test("Rollup: privmix/inline and a worker entry, under connect-src 'none'", async () => {
  const dir = consumer("web");
  const { rollup } = await import("rollup");
  const { nodeResolve } = await import("@rollup/plugin-node-resolve");
  const warnings = [];
  const bundle = await rollup({ input: [join(dir, "main-inline.js"), join(dir, "worker-inline.js")], plugins: [nodeResolve({ browser: true })], onwarn: (w) => warnings.push(String(w.message)) });
  const outDir = join(dir, "dist");
  await bundle.write({ dir: outDir, format: "es", entryFileNames: "[name].js" });
  assert.deepEqual(warnings, []);
  await runPage(await serveBuilt(outDir, "./main-inline.js", { csp: STRICT_CSP }), { full: false });
});

test("a plain <script type=module> page with an import map (no bundler)", async () => {
  const dir = consumer("web");
  const s = await serve(dir);
  servers.push(s.server);
  await runPage(`${s.url}importmap.html`);
});

test("a copy on another origin (a CDN): import map to it and the blob: worker recipe", async () => {
  const cdnDir = consumer("web");
  const cdn = await serve(cdnDir, { cors: true });
  servers.push(cdn.server);
  const pageDir = mkdtempSync(join(tmpdir(), "privmix-page-"));
  const base = `${cdn.url}node_modules/privmix/js/`;
  writeFileSync(join(pageDir, "index.html"), `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "privmix": "${base}web.mjs", "privmix/worker": "${base}worker-client.mjs" } }</script>
<script>
  const src = 'import "${base}worker.mjs";';
  window.PRIVMIX_WORKER = { createWorker: () => new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })), { type: "module" }) };
</script>
<pre id="out">running</pre>
<script type="module" src="${cdn.url}main-assets.js"></script>`);
  const s = await serve(pageDir);
  servers.push(s.server);
  await runPage(s.url);
});

test("a worker that cannot load rejects with an error naming its URL (no synchronous throw)", async () => {
  const dir = consumer("web");
  writeFileSync(join(dir, "bad.html"), `<!doctype html><meta charset="utf-8"><pre id="out">running</pre>
<script type="importmap">{ "imports": { "privmix/worker": "./node_modules/privmix/js/worker-client.mjs" } }</script>
<script type="module">
  import { PrivmixWorker } from "privmix/worker";
  const pm = new PrivmixWorker({ url: "./missing-worker.mjs" });
  let sync = null, p;
  try { p = pm.version(); } catch (e) { sync = String(e); }
  const e = await p.catch((e) => e);
  document.getElementById("out").textContent = JSON.stringify({ sync, name: e?.name, message: e?.message });
</script>`);
  const s = await serve(dir);
  servers.push(s.server);
  const page = await browser.newPage();
  await page.goto(`${s.url}bad.html`);
  await page.waitForFunction(() => document.getElementById("out").textContent !== "running", null, { timeout: 30_000 });
  const r = JSON.parse(await page.textContent("#out"));
  await page.close();
  assert.equal(r.sync, null);
  assert.equal(r.name, "InternalError");
  assert.match(r.message, /missing-worker\.mjs/);
});

test("Next.js (Turbopack, static export): a page importing privmix builds and runs synthesizeCsv and a worker call", async () => {
  const dir = consumer("next", { inside: true });
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules/next/dist/bin/next"), "build"], {
      cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }, timeout: 300_000,
    });
  } catch (e) {
    throw new Error(`next build failed:\n${e.stdout}\n${e.stderr}`);
  }
  const s = await serve(join(dir, "out"));
  servers.push(s.server);
  try {
    await runPage(s.url);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("Next.js dev server (next dev, Turbopack): the same page compiles on request and runs synthesizeCsv and a worker call", async () => {
  const dir = consumer("next", { inside: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  let log = "";
  const dev = spawn(process.execPath, [join(ROOT, "node_modules/next/dist/bin/next"), "dev", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: dir, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }, detached: true, stdio: ["ignore", "pipe", "pipe"],
  });
  dev.stdout.on("data", (d) => (log += d));
  dev.stderr.on("data", (d) => (log += d));
  const exited = new Promise((r) => dev.on("exit", r));
  try {
    // The first request compiles the page (and imports privmix on the server): wait for a 200.
    const deadline = Date.now() + 240_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      if (dev.exitCode !== null) throw new Error(`next dev exited (${dev.exitCode}):\n${log}`);
      status = await fetch(url, { signal: AbortSignal.timeout(120_000) }).then((r) => r.status, () => 0);
      if (status !== 200) await new Promise((r) => setTimeout(r, 1000));
    }
    assert.equal(status, 200, `next dev did not serve the page:\n${log}`);
    await runPage(url);
    assert.doesNotMatch(log, /Module not found|Failed to compile|ENOENT/, log);
  } finally {
    try {
      process.kill(-dev.pid, "SIGTERM");
    } catch {}
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    rmSync(dir, { recursive: true, force: true });
  }
});
