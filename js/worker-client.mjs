// PrivmixWorker: runs privmix in a Web Worker so that pages never freeze. Every method
// returns a Promise (nothing throws synchronously); long operations take an
// `onProgress(fraction)` callback and `options.signal` (an AbortSignal).
//
//   import { PrivmixWorker } from "privmix/worker";
//   const pm = new PrivmixWorker();
//   const { csv, receipt } = await pm.synthesizeCsv(file, { label: "class", epsilon: 5, signal }, p => bar.value = p);
//
// The default worker is this package's worker.mjs, which loads the full build (every method
// below works). `createWorker` replaces it, e.g. with a `blob:` worker for a CDN copy.
import { OPS } from "./ops.mjs";

// Where the default worker is, for error messages (written so that bundlers do not take it
// for an asset reference; the `new Worker(new URL(…))` below is the form they bundle).
const defaultUrl = () => String(import.meta.url).replace(/[^/]*$/, "worker.mjs");

function abortReason(signal) {
  if (signal.reason !== undefined) return signal.reason;
  return Object.assign(new Error("the operation was aborted"), { name: "AbortError" });
}

function rebuildError(info, fallback) {
  const e = new Error(info?.message ?? fallback);
  e.name = info?.name ?? "Error";
  e.param = info?.param ?? undefined;
  return e;
}

/** Splits `signal` off an options object (an AbortSignal cannot be posted to a worker). */
function splitSignal(options) {
  if (!options || typeof options !== "object" || !("signal" in options)) return [options, undefined];
  const { signal, ...rest } = options;
  return [rest, signal ?? undefined];
}

export class PrivmixWorker {
  /**
   * @param {{ createWorker?: () => Worker, url?: string | URL }} [options] `createWorker` builds
   *   the Worker (default: a module worker running `url`, itself by default this package's
   *   worker.mjs, the full build).
   */
  constructor(options = {}) {
    this._url = options.url ? String(options.url) : null;
    this._custom = Boolean(options.createWorker);
    const url = this._url;
    this._create =
      options.createWorker ??
      (url
        ? () => new Worker(url, { type: "module" })
        : () => new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" }));
    this._pending = new Map();
    this._next = 1;
    this._worker = null;
  }

  _where() {
    if (this._url) return this._url;
    if (this._custom) return "(from createWorker)";
    try {
      return defaultUrl();
    } catch {
      return "worker.mjs";
    }
  }

  _spawn() {
    const w = this._create();
    w.onmessage = (event) => {
      const { id, progress, result, error, errorInfo, fatal, started } = event.data ?? {};
      const p = this._pending.get(id);
      if (!p) return;
      if (started) {
        p.started = true;
        return;
      }
      if (progress !== undefined) {
        if (!p.onProgress) return;
        try {
          p.onProgress(progress);
        } catch (thrown) {
          // As in the direct API: a throwing onProgress stops the operation, and the caller
          // gets that exception unchanged.
          this._abort(id, thrown);
        }
        return;
      }
      this._settle(id);
      if (error !== undefined) {
        if (fatal) this._restart();
        p.reject(rebuildError(errorInfo, error));
      } else {
        p.resolve(result);
      }
    };
    const fail = (event) => {
      event?.preventDefault?.();
      const detail =
        event?.message ||
        "the script could not be fetched or evaluated (check that the URL serves JavaScript, the page's " +
          "worker-src and script-src CSP, and, for a copy on another origin, the blob: worker recipe in the README)";
      const err = Object.assign(new Error(`privmix worker ${this._where()} failed: ${detail}`), { name: "InternalError" });
      for (const [id, p] of [...this._pending]) {
        this._settle(id);
        p.reject(err);
      }
      this._restart();
    };
    w.onerror = fail;
    w.onmessageerror = fail;
    this._worker = w;
    return w;
  }

  _settle(id) {
    const p = this._pending.get(id);
    if (!p) return;
    this._pending.delete(id);
    p.cleanup?.();
  }

  _restart() {
    this._worker?.terminate();
    this._worker = null;
  }

  /** Stops operation `id` with `reason`: dropped if not started, else the worker restarts. */
  _abort(id, reason) {
    const p = this._pending.get(id);
    if (!p) return;
    this._settle(id);
    if (p.started) {
      // wasm cannot be interrupted: the worker is replaced, and requests queued behind the
      // aborted one are sent again to the new worker (a loaded dataset is lost).
      const rest = [...this._pending];
      this._pending.clear();
      this._restart();
      for (const [rid, q] of rest) {
        this._pending.set(rid, q);
        q.started = false;
        this._post(rid, q);
      }
    } else {
      this._worker?.postMessage({ cancel: id });
    }
    p.reject(reason);
  }

  _post(id, p) {
    let w;
    try {
      w = this._worker ?? this._spawn();
    } catch (e) {
      this._settle(id);
      p.reject(Object.assign(new Error(`privmix worker ${this._where()} could not be created: ${e?.message ?? e}`), { name: "InternalError", cause: e }));
      return;
    }
    try {
      w.postMessage({ id, op: p.op, args: p.args }, p.transfer);
    } catch (e) {
      this._settle(id);
      p.reject(Object.assign(new Error(`privmix worker: cannot send the ${p.op} request: ${e?.message ?? e}`), { name: "ParameterError", cause: e }));
    }
  }

  _call(op, args, { onProgress, signal, transfer = [] } = {}) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const id = this._next++;
      const p = { op, args, transfer, resolve, reject, onProgress, started: false };
      if (signal) {
        const onAbort = () => this._abort(id, abortReason(signal));
        signal.addEventListener("abort", onAbort, { once: true });
        p.cleanup = () => signal.removeEventListener("abort", onAbort);
      }
      this._pending.set(id, p);
      this._post(id, p);
    });
  }

  _withOptions(op, before, options, onProgress) {
    const [rest, signal] = splitSignal(options);
    return this._call(op, [...before, rest], { onProgress, signal });
  }

  /** Starts the worker and loads the wasm now (otherwise it happens on the first call). */
  ready() {
    return this._call("version", []);
  }
  /** Reads a CSV once in the worker: `{rows, rowsDropped, columns, labels, counts}`. */
  loadDataset(input, options) {
    return this._withOptions("loadDataset", [input], options);
  }
  /** Synthesizes from the loaded dataset: `{csv: Uint8Array, receipt}`. */
  synthesizeDataset(options, onProgress) {
    return this._withOptions("synthesizeDataset", [], options, onProgress);
  }
  /** Synthesizes from the loaded dataset: `{chunks, receipt}`, the CSV as the chunks `Dataset.synthesizeChunks` made. */
  synthesizeDatasetChunks(options, onProgress) {
    return this._withOptions("synthesizeDatasetChunks", [], options, onProgress);
  }
  utilityCheck(options, onProgress) {
    return this._withOptions("utilityCheck", [], options, onProgress);
  }
  /** The live readout for the loaded dataset under `options` (`Dataset.noisePreview`; `view`: `{curve: false}` for the calibrated point only). */
  datasetNoisePreview(options, view) {
    return this._call("datasetNoisePreview", [options, view]);
  }
  histograms(syntheticCsv) {
    return this._call("histograms", [syntheticCsv]);
  }
  /** Stops the worker; pending operations reject with an AbortError. */
  terminate() {
    const err = Object.assign(new Error("privmix worker terminated"), { name: "AbortError" });
    for (const [id, p] of [...this._pending]) {
      this._settle(id);
      p.reject(err);
    }
    this._restart();
  }
}

// The operations of the table (js/ops.mjs), each a method posting it: the arguments before the
// options as they are, the options without their signal, and the onProgress callback.
for (const [op, { options }] of Object.entries(OPS)) {
  const method = {
    [op](...args) {
      if (options === undefined) return this._call(op, args);
      return this._withOptions(op, args.slice(0, options), args[options], args[options + 1]);
    },
  }[op];
  Object.defineProperty(PrivmixWorker.prototype, op, { value: method, writable: true, configurable: true });
}

export function createWorker(options) {
  return new PrivmixWorker(options);
}
