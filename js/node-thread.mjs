// synthesizeCsvAsync: synthesizeCsv in a worker_threads worker, so the event loop stays free.
// One thread per call (the wasm is compiled once per thread: about 0.2 s).
import { Worker } from "node:worker_threads";
import { abortError } from "./wrap.mjs";

export function synthesizeCsvAsync(input, options = {}, onProgress) {
  return new Promise((resolve, reject) => {
    const { signal, ...rest } = options ?? {};
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const w = new Worker(new URL("./node-thread-worker.mjs", import.meta.url), {
      workerData: { input, options: rest },
    });
    let done = false;
    const finish = (f) => {
      if (done) return;
      done = true;
      signal?.removeEventListener("abort", onAbort);
      w.terminate();
      f();
    };
    const onAbort = () => finish(() => reject(abortError(signal)));
    signal?.addEventListener("abort", onAbort, { once: true });
    w.on("message", (m) => {
      if (m.progress !== undefined) {
        try {
          onProgress?.(m.progress);
        } catch (e) {
          finish(() => reject(e));
        }
      } else if (m.error) {
        finish(() => reject(Object.assign(new Error(m.error.message), { name: m.error.name, param: m.error.param })));
      } else {
        finish(() => resolve(m.result));
      }
    });
    w.on("error", (e) => finish(() => reject(e)));
    w.on("exit", (code) => finish(() => reject(Object.assign(new Error(`privmix worker thread exited with code ${code}`), { name: "InternalError" }))));
  });
}
