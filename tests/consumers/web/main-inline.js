// `privmix/inline` (the wasm inside the JS: no asset, works in any bundler) and a worker built
// by the same bundler as a second entry point (worker-inline.js), next to this bundle.
import init, { calibrate, synthesizeCsv } from "privmix/inline";
import { PrivmixWorker } from "privmix/worker";
import { CSV, rows } from "./csv.js";

const out = document.getElementById("out");
try {
  await init();
  const direct = synthesizeCsv(CSV, { label: "label", epsilon: 2, mix: 2, adjacency: "keep-label" });
  const cal = calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
  const pm = new PrivmixWorker({
    createWorker: () => new Worker(new URL("./worker-inline.js", import.meta.url), { type: "module" }),
  });
  let progress = 0;
  const w = await pm.synthesizeCsv(CSV, { label: "label", epsilon: 3, mix: 2, adjacency: "keep-label" }, () => progress++);
  // Aborting a running call rejects it with an AbortError; the next call gets a fresh worker.
  const ac = new AbortController();
  const aborted = await pm
    .synthesizeCsv(CSV, { label: "label", epsilon: 3, mix: 2, adjacency: "keep-label", signal: ac.signal }, () => ac.abort())
    .then(() => "resolved", (e) => e.name);
  let bad = null;
  await pm.synthesizeCsv(CSV, { label: "label", epsilon: -1 }).catch((e) => (bad = { name: e.name, message: e.message }));
  pm.terminate();
  out.textContent = JSON.stringify({
    ok: true, directRows: rows(direct.csv), epsilon: direct.receipt.epsilon, sigmaX: cal.sigmaX,
    workerRows: rows(w.csv), workerEpsilon: w.receipt.epsilon, progress, aborted, fullWorker: null, bad,
  });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, error: `${e?.name}: ${e?.message ?? e}` });
}
