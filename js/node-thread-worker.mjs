// The worker thread of synthesizeCsvAsync.
import { parentPort, workerData } from "node:worker_threads";
import { synthesizeCsv } from "./node.mjs";
import { errorRecord } from "./worker-core.mjs";

try {
  const result = synthesizeCsv(workerData.input, workerData.options, (p) => parentPort.postMessage({ progress: p }));
  parentPort.postMessage({ result });
} catch (e) {
  parentPort.postMessage({ error: errorRecord(e) });
}
