// The wasm each entry downloads, measured (gzip -9, as a static host would serve it), and the
// sizes the package README states kept true: a README figure more than 10 % off the measured
// size fails here, as does an accountant entry that is not much smaller than the core build
// (its purpose: a portal shows the ε–σ trade-off without the synthesizer's download).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { ROOT } from "./helpers.mjs";

const KIB = 1024;
const gz = (dir) => gzipSync(readFileSync(join(ROOT, "pkg", dir, "privmix_bg.wasm")), { level: 9 }).length;

test("the accountant entry is measured, much smaller than the core build, and the README states both sizes", () => {
  const sizes = { accountant: gz("accountant"), core: gz("web"), full: gz("full") };
  console.log(
    Object.entries(sizes)
      .map(([k, v]) => `${k}: ${(v / KIB).toFixed(1)} KiB gzip`)
      .join(", "),
  );
  assert.ok(sizes.accountant < 0.3 * sizes.core, `accountant ${sizes.accountant} vs core ${sizes.core}`);
  assert.ok(sizes.core < sizes.full, `core ${sizes.core} vs full ${sizes.full}`);
  const readme = readFileSync(join(ROOT, "README.npm.md"), "utf8");
  const stated = (re, what) => {
    const m = readme.match(re);
    assert.ok(m, `README.npm.md states no ${what} size (${re})`);
    return Number(m[1]) * KIB;
  };
  const checks = [
    ["core", stated(/core: (\d+) KiB/, "core"), sizes.core],
    ["accountant", stated(/`privmix\/accountant`[^\n]*\| (\d+) KiB \|/, "accountant"), sizes.accountant],
    ["full", stated(/\| full: (\d+) KiB \|/, "full"), sizes.full],
  ];
  for (const [what, claim, measured] of checks) {
    assert.ok(
      Math.abs(claim - measured) <= 0.1 * measured,
      `README.npm.md says ${what} ${(claim / KIB).toFixed(0)} KiB; measured ${(measured / KIB).toFixed(1)} KiB`,
    );
  }
});
