// require("privmix"): the full build, instantiated on the first call.
const assert = require("node:assert/strict");
const privmix = require("privmix");

// 60 rows, 30 per class: runs that check the exact row count use the label-keeping adjacency
// (public class counts); under the default standard adjacency T and the class split follow
// DP class counts, which are too noisy at this size.
const CSV = "x,y,label\n" + Array.from({ length: 60 }, (_, i) => `${(i * 7) % 13},${(i * 5) % 11},${i % 2 ? "a" : "b"}`).join("\n") + "\n";

(async () => {
  const r = privmix.synthesizeCsv(CSV, { label: "label", epsilon: 2, mix: 2, adjacency: "keep-label" });
  assert.equal(r.csv.trim().split("\n").length, 61);
  assert.ok(r.receipt.epsilon <= 2);
  // The event loop keeps running during synthesizeCsvAsync.
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const progress = [];
  const a = await privmix.synthesizeCsvAsync(CSV, { label: "label", epsilon: 3, mix: 2, adjacency: "keep-label" }, (p) => progress.push(p));
  clearInterval(timer);
  assert.equal(a.csv.trim().split("\n").length, 61);
  assert.ok(a.receipt.epsilon <= 3);
  assert.ok(progress.length >= 1 && progress.at(-1) === 1, `progress ${progress}`);
  assert.throws(() => privmix.synthesizeCsv(CSV, { label: "label", epsilon: -1 }), /epsilon/);
  await assert.rejects(privmix.synthesizeCsvAsync(CSV, { label: "label", epsilon: -1 }), /epsilon/);
  assert.equal(typeof privmix.gmmRelease, "function");
  console.log(JSON.stringify({ ok: true, ticks }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
