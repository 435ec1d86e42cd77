// privmix/worker: the API in a Web Worker (the full build), Promise-only.
//
// The table's operations (js/ops.mjs) are declared once, in ops-full.d.ts and ops-core.d.ts;
// `PrivmixWorkerOperations` derives each one's worker method from that declaration (the result
// as a Promise, the input also as a Blob or File). Only the worker's own methods (its
// lifecycle and the loaded dataset's operations, which hold state) are written here.
import type {
  ColumnHistogram, CsvInput, DatasetInfo, DatasetOptions, ImageInput, PreviewResult, PreviewView,
  ProgressCallback, Receipt, SynthOptions, UtilityReport, CallOptions,
} from "./types.js";
import type * as Ops from "./ops-full.js";
export type * from "./types.js";

/** CSV input in a worker: text, bytes, or a File/Blob. */
export type WorkerCsvInput = string | Uint8Array | ArrayBuffer | Blob;
export type ImageFile = File | { name: string; path?: string; data: Uint8Array | ArrayBuffer | Blob };

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** How the worker takes an operation's input (its first argument; js/ops.mjs's `input`):
 *  CSV text or bytes also as a File/Blob ("bytes"), images also as a list of image files
 *  ("images"), a list of texts also as bytes or Files ("texts"). */
type WorkerInput<P> = Same<P, CsvInput> extends true ? WorkerCsvInput
  : Same<P, ImageInput> extends true ? WorkerCsvInput | ImageFile[]
  : Same<P, string[]> extends true ? (string | Uint8Array | Blob)[]
  : P;
type WorkerArgs<A extends unknown[]> = { [I in keyof A]: I extends "0" ? WorkerInput<A[I]> : A[I] };
type WorkerMethod<F> = F extends (...args: infer A) => infer R ? (...args: WorkerArgs<A>) => Promise<R> : never;
type TableOperations = Omit<typeof Ops, "Dataset">;
/** Every operation of privmix/full as a worker method. */
export type PrivmixWorkerOperations = { [K in keyof TableOperations]: WorkerMethod<TableOperations[K]> };

export interface PrivmixWorkerOptions {
  /** Builds the Worker (e.g. a `blob:` worker for a copy on another origin). */
  createWorker?: () => Worker;
  /** The worker script (default: this package's worker.mjs). */
  url?: string | URL;
}

export interface PrivmixWorker extends PrivmixWorkerOperations {}
export declare class PrivmixWorker {
  constructor(options?: PrivmixWorkerOptions);
  ready(): Promise<string>;
  loadDataset(input: WorkerCsvInput, options: DatasetOptions & CallOptions): Promise<DatasetInfo>;
  synthesizeDataset(options: SynthOptions, onProgress?: ProgressCallback): Promise<{ csv: Uint8Array; receipt: Receipt }>;
  /** `synthesizeDataset` with the CSV as the chunks `Dataset.synthesizeChunks` made (about 4 MiB each, in order; `new Blob(chunks)` is the file): a large output is never held whole in the wasm memory (which never shrinks) nor in one buffer. */
  synthesizeDatasetChunks(options: SynthOptions, onProgress?: ProgressCallback): Promise<{ chunks: Uint8Array[]; receipt: Receipt }>;
  utilityCheck(options: SynthOptions, onProgress?: ProgressCallback): Promise<UtilityReport>;
  /** The live readout for the loaded dataset under `options` (see `Dataset.noisePreview`). */
  datasetNoisePreview(options: SynthOptions, view?: PreviewView): Promise<PreviewResult>;
  histograms(syntheticCsv: WorkerCsvInput): Promise<ColumnHistogram[]>;
  /** Stops the worker; pending calls reject with an AbortError. */
  terminate(): void;
}
export declare function createWorker(options?: PrivmixWorkerOptions): PrivmixWorker;
