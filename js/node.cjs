// `require("privmix")` under Node: the full build, instantiated on the first call (nothing is
// read at require time). The same wrappers as js/wrap.mjs (AbortSignal in the options), over
// the same table of operations.
"use strict";

let glue = null;
const load = () => (glue ??= require("../pkg/node/privmix.cjs"));

function abortError(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const e = new Error("the operation was aborted");
  e.name = "AbortError";
  return e;
}

function withSignal(fn, nBefore) {
  return function (...args) {
    const options = args[nBefore];
    if (!options || typeof options !== "object" || !("signal" in options)) return fn.apply(this, args);
    const { signal, ...rest } = options;
    args[nBefore] = rest;
    if (!signal) return fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    const user = args[nBefore + 1];
    args[nBefore + 1] = (p) => {
      if (signal.aborted) throw abortError(signal);
      if (user) user(p);
    };
    const out = fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    return out;
  };
}

// The table of operations, js/ops.mjs, as CommonJS (`npm run build` writes js/ops.cjs from it).
const OPS = require("./ops.cjs");
for (const [name, { options }] of Object.entries(OPS)) {
  exports[name] = function (...args) {
    const f = load()[name];
    return options === undefined ? f(...args) : withSignal(f, options)(...args);
  };
  Object.defineProperty(exports[name], "name", { value: name });
}

let DatasetClass = null;
Object.defineProperty(exports, "Dataset", {
  enumerable: true,
  get() {
    if (!DatasetClass) {
      DatasetClass = class Dataset extends load().Dataset {
        synthesize(options, onProgress) {
          return withSignal(super.synthesize, 0).call(this, options, onProgress);
        }
        utilityCheck(options, onProgress) {
          return withSignal(super.utilityCheck, 0).call(this, options, onProgress);
        }
      };
    }
    return DatasetClass;
  },
});

/** Present for isomorphic code: instantiates the wasm now (otherwise the first call does). */
exports.default = async function init() {
  load();
};

/** synthesizeCsv in a `worker_threads` worker: the event loop keeps running. */
exports.synthesizeCsvAsync = (...args) => import("./node-thread.mjs").then((m) => m.synthesizeCsvAsync(...args));
