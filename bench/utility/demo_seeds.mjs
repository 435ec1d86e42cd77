// The app's utility check on a demo over many seeds, through the npm package (the same call
// as the page's "Check utility": an 80/20 split stratified by class, a synthesis of the 80 %
// with the demo's public schema, logistic regression scored on the 20 %). Each seed gives its
// own split and synthesis (seeded: "not for release").
//
// Usage: npm run build && node bench/utility/demo_seeds.mjs [iris|digits-8x8] [--epsilon 5]
//          [--seeds 20] [--options '{"adjacency":"keep-label"}']
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Dataset } from "../../js/node.mjs";
import { ROOT } from "../../tests/js/helpers.mjs";

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const name = args[0] && !args[0].startsWith("--") ? args[0] : "iris";
const epsilon = Number(flag("epsilon", "5"));
const seeds = Number(flag("seeds", "20"));
const extra = JSON.parse(flag("options", "{}"));
const label = name === "iris" ? "species" : "label";
const schema = JSON.parse(readFileSync(join(ROOT, "demo", `${name}.schema.json`), "utf8"));
const ds = new Dataset(readFileSync(join(ROOT, "demo", `${name}.csv`)), { label, schema });
const acc = [];
let real = 0;
for (let seed = 1; seed <= seeds; seed++) {
  const r = ds.utilityCheck({ epsilon, delta: 1e-5, seed, testShare: 0.2, model: "logreg", ...extra });
  acc.push(r.syntheticAccuracy);
  real += r.realAccuracy / seeds;
}
ds.free();
acc.sort((a, b) => a - b);
const mean = acc.reduce((a, b) => a + b, 0) / acc.length;
const f = (x) => x.toFixed(3);
console.log(`| demo | ε | options | seeds | mean | min | median | max | ≥ 0.90 | real (mean) |`);
console.log(`|---|---|---|---|---|---|---|---|---|---|`);
console.log(`| ${name} | ${epsilon} | ${JSON.stringify(extra)} | ${seeds} | ${f(mean)} | ${f(acc[0])} | ${f(acc[Math.floor(seeds / 2)])} | ${f(acc[seeds - 1])} | ${acc.filter((a) => a >= 0.9).length} of ${seeds} | ${f(real)} |`);
