// privmix under Node: the full build, instantiated on the first call, plus async variants
// that run in a worker thread (the event loop stays free).
import type { CsvInput, CsvResult, ProgressCallback, SynthOptions } from "./types.js";
export type * from "./types.js";
// Every operation of privmix/full, listed (not `export *`): the Node build instantiates its own
// wasm on the first call, so it has no `initSync`.
export {
  default, version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages,
  synthesizeImages, Dataset, gmmRelease, gmmSample, federatedSimulate, federatedKeygen,
  federatedContribute, federatedAggregate, audit,
} from "./full.js";

/** synthesizeCsv in a `worker_threads` worker: the event loop keeps running. */
export declare function synthesizeCsvAsync(input: CsvInput, options: SynthOptions, onProgress?: ProgressCallback): Promise<CsvResult>;
