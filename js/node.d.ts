// privmix under Node: the full build, instantiated on the first call, plus async variants
// that run in a worker thread (the event loop stays free).
import type { CsvInput, CsvResult, ProgressCallback, SynthOptions } from "./types.js";
export type * from "./types.js";
export * from "./ops-full.js";
// `init()` is present for isomorphic code: it instantiates the wasm now (otherwise the first
// call does); its options are not used under Node.
export { default } from "./full.js";

/** synthesizeCsv in a `worker_threads` worker: the event loop keeps running. */
export declare function synthesizeCsvAsync(input: CsvInput, options: SynthOptions, onProgress?: ProgressCallback): Promise<CsvResult>;
