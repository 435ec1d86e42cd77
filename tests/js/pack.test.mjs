// The tarball from `npm pack` installs into an empty folder and runs there, through both
// require and import, with the worker helper and the types present.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers.mjs";

test("npm pack → npm install in an empty folder → require and import work", () => {
  const out = mkdtempSync(join(tmpdir(), "privmix-pack-"));
  const info = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: ROOT, encoding: "utf8" }));
  const files = info[0].files.map((f) => f.path);
  for (const f of ["pkg/node/privmix.js", "pkg/node/privmix_bg.wasm", "pkg/node/privmix.d.ts", "pkg/web/privmix.js",
    "pkg/web/privmix_bg.wasm", "pkg/web/privmix.d.ts", "js/node.mjs", "js/worker.mjs", "js/worker-core.mjs",
    "js/worker-client.mjs", "js/worker-client.d.ts", "package.json"]) {
    assert.ok(files.includes(f), `the tarball lacks ${f}`);
  }
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("www/") || f.startsWith("target/")), "no sources or app in the package");

  const app = mkdtempSync(join(tmpdir(), "privmix-consumer-"));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", join(out, info[0].filename)], { cwd: app, stdio: "pipe" });
  assert.ok(existsSync(join(app, "node_modules/privmix/pkg/node/privmix_bg.wasm")));

  const csv = "a,b,label\n" + Array.from({ length: 40 }, (_, i) => `${i % 7},${(i * 3) % 11},${i % 2 ? "x" : "y"}`).join("\n") + "\n";
  const cjs = execFileSync("node", ["-e", `
    const p = require("privmix");
    const r = p.synthesizeCsv(${JSON.stringify(csv)}, { label: "label", epsilon: 3, mix: 2 });
    console.log(JSON.stringify({ lines: r.csv.trim().split(String.fromCharCode(10)).length, eps: r.receipt.epsilon }));`], { cwd: app, encoding: "utf8" });
  const c = JSON.parse(cjs);
  assert.equal(c.lines, 41);
  assert.ok(c.eps <= 3);

  const esm = execFileSync("node", ["--input-type=module", "-e", `
    import init, { calibrate } from "privmix";
    await init();
    const r = calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
    console.log(JSON.stringify(r));`], { cwd: app, encoding: "utf8" });
  assert.ok(JSON.parse(esm).epsilon <= 2);

  // The worker helper and the browser build resolve (they need a browser to run).
  const resolved = execFileSync("node", ["--input-type=module", "-e", `
    console.log(import.meta.resolve("privmix/worker"));`], { cwd: app, encoding: "utf8" }).trim();
  assert.match(resolved, /node_modules\/privmix\/js\/worker-client\.mjs$/);
  assert.ok(readdirSync(join(app, "node_modules/privmix/js")).includes("worker.mjs"));
});
