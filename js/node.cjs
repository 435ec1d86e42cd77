// `require("privmix")` under Node: the full build, instantiated on the first call (nothing is
// read at require time). The wrappers are js/wrap.mjs's (AbortSignal in the options) over the
// same table of operations: `npm run build` writes js/wrap.cjs and js/ops.cjs from them.
"use strict";

const { api, datasetClass } = require("./wrap.cjs");

let glue = null;
const load = () => (glue ??= require("../pkg/node/privmix.cjs"));

for (const [name, f] of Object.entries(api(load))) exports[name] = f;

let DatasetClass = null;
Object.defineProperty(exports, "Dataset", {
  enumerable: true,
  get() {
    return (DatasetClass ??= datasetClass(load().Dataset, load));
  },
});

/** Present for isomorphic code: instantiates the wasm now (otherwise the first call does). */
exports.default = async function init() {
  load();
};

/** synthesizeCsv in a `worker_threads` worker: the event loop keeps running. */
exports.synthesizeCsvAsync = (...args) => import("./node-thread.mjs").then((m) => m.synthesizeCsvAsync(...args));
