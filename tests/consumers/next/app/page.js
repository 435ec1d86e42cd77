"use client";
// A page that imports privmix statically (the server render imports it too: nothing may be
// read at import time), then runs synthesizeCsv and a worker call in the browser.
import { useEffect, useState } from "react";
import init, { calibrate, synthesizeCsv } from "privmix";
import { PrivmixWorker } from "privmix/worker";

const CSV =
  "x,y,label\n" + Array.from({ length: 60 }, (_, i) => `${(i * 7) % 13},${(i * 5) % 11},${i % 2 ? "a" : "b"}`).join("\n") + "\n";
const rows = (csv) => csv.trim().split("\n").length - 1;

export default function Page() {
  const [out, setOut] = useState("running");
  useEffect(() => {
    (async () => {
      await init();
      const direct = synthesizeCsv(CSV, { label: "label", epsilon: 2, mix: 2, adjacency: "keep-label" });
      const cal = calibrate({ pool: 1000, mix: 4, samples: 1000, delta: 1e-5, epsilon: 2 });
      const pm = new PrivmixWorker();
      let progress = 0;
      const w = await pm.synthesizeCsv(CSV, { label: "label", epsilon: 3, mix: 2, adjacency: "keep-label" }, () => progress++);
      const ac = new AbortController();
      const aborted = await pm
        .synthesizeCsv(CSV, { label: "label", epsilon: 3, mix: 2, adjacency: "keep-label", signal: ac.signal }, () => ac.abort())
        .then(() => "resolved", (e) => e.name);
      const keys = await pm.federatedKeygen(1);
      let bad = null;
      await pm.synthesizeCsv(CSV, { label: "label", epsilon: -1 }).catch((e) => (bad = { name: e.name, message: e.message }));
      pm.terminate();
      return {
        ok: true, directRows: rows(direct.csv), epsilon: direct.receipt.epsilon, sigmaX: cal.sigmaX,
        workerRows: rows(w.csv), workerEpsilon: w.receipt.epsilon, progress, aborted, fullWorker: typeof keys.publicKey === "string", bad,
      };
    })()
      .catch((e) => ({ ok: false, error: `${e?.name}: ${e?.message ?? e}` }))
      .then((r) => setOut(JSON.stringify(r)));
  }, []);
  return <pre id="out">{out}</pre>;
}
