// The packed tarball in consumer projects (tests/consumers/): Node CommonJS and ESM, strict
// TypeScript (nodenext and bundler resolution, skipLibCheck: false) and
// @arethetypeswrong/cli on the tarball, all offline.
import test from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { consumer, pack, tool } from "../consumers/pack.mjs";

const run = (args, cwd) => {
  try {
    return execFileSync(process.execPath, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`${args.join(" ")} failed:\n${e.stdout}\n${e.stderr}`);
  }
};

test("the tarball: one copy of the full wasm, the package's own README, licenses and type", () => {
  const { files, info } = pack();
  for (const f of ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "package.json", "js/core.d.ts", "js/node.d.cts",
    "js/worker.mjs", "js/worker-core.mjs", "js/worker-client.mjs", "js/accountant.mjs", "js/inline.mjs",
    "pkg/web/privmix_bg.wasm", "pkg/full/privmix_bg.wasm", "pkg/accountant/privmix_bg.wasm", "pkg/node/privmix.cjs",
    "pkg/inline/privmix-wasm.mjs"]) {
    assert.ok(files.includes(f), `the tarball lacks ${f}`);
  }
  assert.equal(files.filter((f) => f.endsWith(".wasm")).length, 3, files.filter((f) => f.endsWith(".wasm")).join(", "));
  assert.ok(!files.some((f) => /^(src|www|target|tests)\//.test(f)), "no sources, app or tests in the package");
  const dir = consumer("node-esm");
  const pj = JSON.parse(run(["-e", "process.stdout.write(require('fs').readFileSync('node_modules/privmix/package.json','utf8'))"], dir));
  assert.equal(pj.type, "module");
  assert.equal(pj.repository, undefined, "no placeholder repository URL");
  const readme = run(["-e", "process.stdout.write(require('fs').readFileSync('node_modules/privmix/README.md','utf8'))"], dir);
  assert.match(readme, /npm install privmix/);
  assert.match(readme, /wasm-unsafe-eval/);
  assert.doesNotMatch(readme, /npm start|\.\.\/shared/);
  console.log(`tarball ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files`);
  assert.ok(statSync(pack().tarball).size > 0);
});

test("Node CommonJS consumer: require, synthesizeCsvAsync in a worker thread, errors", () => {
  const out = JSON.parse(run(["index.cjs"], consumer("node-cjs")).trim().split("\n").at(-1));
  assert.equal(out.ok, true);
  assert.ok(out.ticks > 0, "the event loop ran during synthesizeCsvAsync");
});

test("Node ESM consumer: lazy instantiation, Dataset, AbortSignal, privmix/accountant", () => {
  const out = JSON.parse(run(["index.mjs"], consumer("node-esm")).trim().split("\n").at(-1));
  assert.equal(out.ok, true);
});

test("importing privmix reads no file until the first call (bundlers and Next.js can import it)", () => {
  const dir = consumer("node-esm");
  const out = run(["--input-type=module", "-e", `
    import fs from "node:fs";
    import { syncBuiltinESMExports } from "node:module";
    const reads = [];
    const orig = fs.readFileSync;
    fs.readFileSync = (p, ...a) => (reads.push(String(p)), orig(p, ...a));
    syncBuiltinESMExports();
    const m = await import("privmix");
    const before = reads.filter((p) => p.endsWith(".wasm")).length;
    m.version();
    const after = reads.filter((p) => p.endsWith(".wasm")).length;
    console.log(JSON.stringify({ before, after }));`], dir);
  assert.deepEqual(JSON.parse(out), { before: 0, after: 1 });
});

test("a Node bundle of privmix instantiates the wasm (package.json's sideEffects keeps the Node entry's body)", () => {
  // js/node.mjs only re-exports the operations and tells them how to instantiate the wasm:
  // without its sideEffects entry esbuild drops that call and the first operation finds no wasm.
  const dir = consumer("node-esm");
  const entry = join(dir, "bundle-entry.mjs");
  writeFileSync(entry, 'import { version, calibrate } from "privmix";\nconsole.log(JSON.stringify({ version: version(), sigmaX: calibrate({ pool: 100, mix: 2, samples: 100, delta: 1e-5, epsilon: 1 }).sigmaX }));\n');
  // Written inside the package, so that the entry's own `../pkg/full/privmix_bg.wasm` URL finds the wasm.
  const out = join(dir, "node_modules/privmix/js/bundled-by-test.mjs");
  buildSync({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", outfile: out, logLevel: "error", absWorkingDir: dir });
  const r = JSON.parse(run([out], dir).trim().split("\n").at(-1));
  assert.match(r.version, /^\d+\.\d+\.\d+/);
  assert.ok(r.sigmaX > 0, JSON.stringify(r));
});

for (const kind of ["nodenext", "bundler"]) {
  test(`strict TypeScript consumer (${kind} resolution, skipLibCheck: false) compiles`, () => {
    const dir = consumer(`ts-${kind}`);
    run([tool("typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], dir);
  });
}

test("@arethetypeswrong/cli finds no problem in the tarball (node16 and bundler resolution)", () => {
  // The browser-only entries (accountant, inline, worker, worker-core) are ESM by design: a
  // CommonJS caller imports them dynamically (attw's cjs-resolves-to-esm). The worker script
  // and the wasm files are assets, not modules with types.
  const out = run([tool("@arethetypeswrong/cli/dist/index.js"), pack().tarball, "--profile", "node16",
    "--format", "ascii", "--ignore-rules", "cjs-resolves-to-esm", "--exclude-entrypoints", "./worker.mjs", "./privmix_bg.wasm",
    "./full/privmix_bg.wasm", "./accountant/privmix_bg.wasm"]);
  // attw exits non-zero on any problem (run() then throws with its report). `--format ascii`:
  // the default picks a table or a list by the terminal's width, which differs between runs.
  for (const entry of ["privmix", "privmix/full"]) {
    assert.match(out, new RegExp(`"${entry}"\\s+node16 \\(from CJS\\): 🟢 \\(CJS\\)\\s+node16 \\(from ESM\\): 🟢 \\(ESM\\)\\s+bundler: 🟢`, "u"), out);
  }
});
