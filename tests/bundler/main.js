// A page built by Vite from the package's public entry points: the ESM build with `await
// init()`, and the Web Worker helper. tests/browser/bundler.test.mjs builds and opens it.
import init, { calibrate, synthesizeCsv } from "privmix";
import { PrivmixWorker } from "privmix/worker";

const out = document.getElementById("out");
try {
  await init();
  const c = calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
  // 300 rows, 100 per class: enough for the default (standard) adjacency's DP class counts at ε = 3.
  const csv = "a,b,label\n" + Array.from({ length: 300 }, (_, i) => `${i % 7},${(i * 3) % 11},${i % 3}`).join("\n") + "\n";
  const direct = synthesizeCsv(csv, { label: "label", epsilon: 3, mix: 2, samples: 300 });
  const pm = new PrivmixWorker();
  const progress = [];
  const viaWorker = await pm.synthesizeCsv(csv, { label: "label", epsilon: 3, mix: 2, samples: 300 }, (p) => progress.push(p));
  pm.terminate();
  out.textContent = JSON.stringify({
    ok: true,
    sigmaX: c.sigmaX,
    epsilon: c.epsilon,
    directRows: direct.csv.trim().split("\n").length - 1,
    workerRows: viaWorker.csv.trim().split("\n").length - 1,
    workerEpsilon: viaWorker.receipt.epsilon,
    progress: progress.length,
  });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, error: String(e?.message ?? e) });
}
