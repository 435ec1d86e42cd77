// Every operation of privmix's JS API, once. The entries (web.mjs, inline.mjs, web-full.mjs,
// node.mjs through ops-core.mjs and ops-full.mjs; node.cjs through the js/ops.cjs copy that
// `npm run build` writes), the worker's client (worker-client.mjs) and the worker's dispatch
// (worker-core.mjs) are built from this table. A new operation is: its wasm export in
// src/wasm/, a row here, its name in ops-core.mjs and/or ops-full.mjs (ESM exports are
// static), and its declarations (ops-core.d.ts or ops-full.d.ts, from which worker-client.d.ts
// derives the worker's method, and types.d.ts for new option or result types).
//
// Each row: `options`, the index of the options argument (absent: the operation takes none);
// there `signal` (an AbortSignal) is honoured and, in the worker, a missing options object is
// `{}`. `progress`: the argument after the options is an onProgress callback. `input`: how the
// worker reads argument 0 ("bytes": text, bytes or a File/Blob; "images": those or a list of
// image files; "texts": a list of texts, bytes or Files, read as text). `full`: only in
// privmix/full (the core build lacks it). `transfer`: the worker transfers the result's byte
// arrays instead of copying them.
export const OPS = {
  version: {},
  rdp: {},
  account: {},
  calibrate: {},
  noisePreview: {},
  inspectCsv: { input: "bytes" },
  synthesizeCsv: { options: 1, progress: true, input: "bytes" },
  inspectImages: { options: 1, input: "images" },
  synthesizeImages: { options: 1, progress: true, input: "images", transfer: true },
  gmmRelease: { options: 1, input: "bytes", full: true },
  gmmSample: { full: true },
  gmmLabelThreshold: { full: true },
  federatedSimulate: { options: 1, input: "bytes", full: true },
  federatedKeygen: { full: true },
  federatedContribute: { options: 3, input: "bytes", full: true },
  federatedAggregate: { input: "texts", full: true },
  audit: { options: 0, progress: true, full: true },
};
