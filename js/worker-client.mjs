// PrivmixWorker: runs privmix in a Web Worker so that pages never freeze. Every method
// returns a Promise; long operations take an `onProgress(fraction)` callback.
//
//   import { PrivmixWorker } from "privmix/worker";
//   const pm = new PrivmixWorker();
//   const { csv, receipt } = await pm.synthesizeCsv(file, { label: "class", epsilon: 5 }, p => bar.value = p);

export class PrivmixWorker {
  /**
   * @param {{ createWorker?: () => Worker }} [options] `createWorker` builds the Worker
   *   (default: a module worker running this package's worker.mjs).
   */
  constructor(options = {}) {
    this._create =
      options.createWorker ??
      (() => new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" }));
    this._pending = new Map();
    this._next = 1;
    this._worker = null;
  }

  _spawn() {
    const w = this._create();
    w.onmessage = (event) => {
      const { id, progress, result, error, fatal } = event.data ?? {};
      const p = this._pending.get(id);
      if (!p) return;
      if (progress !== undefined) {
        p.onProgress?.(progress);
        return;
      }
      this._pending.delete(id);
      if (error !== undefined) {
        if (fatal) this._restart();
        p.reject(new Error(error));
      } else {
        p.resolve(result);
      }
    };
    w.onerror = (event) => {
      event.preventDefault?.();
      const err = new Error(`privmix worker failed: ${event.message ?? "unknown error"}`);
      for (const p of this._pending.values()) p.reject(err);
      this._pending.clear();
      this._restart();
    };
    this._worker = w;
    return w;
  }

  _restart() {
    this._worker?.terminate();
    this._worker = null;
  }

  _call(op, args, onProgress, transfer = []) {
    const w = this._worker ?? this._spawn();
    const id = this._next++;
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve, reject, onProgress });
      w.postMessage({ id, op, args }, transfer);
    });
  }

  /** Starts the worker and loads the wasm now (otherwise it happens on the first call). */
  ready() {
    return this._call("version", []);
  }
  version() {
    return this._call("version", []);
  }
  rdp(params) {
    return this._call("rdp", [params]);
  }
  account(params) {
    return this._call("account", [params]);
  }
  calibrate(params) {
    return this._call("calibrate", [params]);
  }
  noisePreview(params) {
    return this._call("noisePreview", [params]);
  }
  inspectCsv(input, maxRows) {
    return this._call("inspectCsv", [input, maxRows]);
  }
  /** `{csv: string, receipt}` from CSV text, bytes, or a File/Blob. */
  synthesizeCsv(input, options, onProgress) {
    return this._call("synthesizeCsv", [input, options], onProgress);
  }
  /** `{classes, counts, images, width, height, channels}` of a ZIP or image files. */
  inspectImages(input, options) {
    return this._call("inspectImages", [input, options]);
  }
  /** `{zip, preview, realPreview, receipt}` from a ZIP (bytes/File) or a list of image files. */
  synthesizeImages(input, options, onProgress) {
    return this._call("synthesizeImages", [input, options], onProgress);
  }
  /** Reads a CSV once in the worker: `{rows, rowsDropped, columns, labels, counts}`. */
  loadDataset(input, options) {
    return this._call("loadDataset", [input, options]);
  }
  /** Synthesizes from the loaded dataset: `{csv: Uint8Array, receipt}`. */
  synthesizeDataset(options, onProgress) {
    return this._call("synthesizeDataset", [options], onProgress);
  }
  utilityCheck(options, onProgress) {
    return this._call("utilityCheck", [options], onProgress);
  }
  histograms(syntheticCsv) {
    return this._call("histograms", [syntheticCsv]);
  }
  /** `{model, epsilon, delta, receipt, csv, marginals, private: {kl, referenceMarginals}}` (`private`: computed without protection, not for release). */
  gmmRelease(input, options) {
    return this._call("gmmRelease", [input, options]);
  }
  gmmSample(model, samples, seed) {
    return this._call("gmmSample", [model, samples, seed]);
  }
  federatedSimulate(input, options) {
    return this._call("federatedSimulate", [input, options]);
  }
  federatedKeygen(party) {
    return this._call("federatedKeygen", [party]);
  }
  federatedContribute(input, secretKey, peers, options) {
    return this._call("federatedContribute", [input, secretKey, peers, options]);
  }
  /** Contributions as JSON texts, bytes or Files. */
  federatedAggregate(contributions) {
    return this._call("federatedAggregate", [contributions]);
  }
  terminate() {
    for (const p of this._pending.values()) p.reject(new Error("privmix worker terminated"));
    this._pending.clear();
    this._restart();
  }
}

export function createWorker(options) {
  return new PrivmixWorker(options);
}
