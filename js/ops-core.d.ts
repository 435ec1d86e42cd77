// The core build's operations (js/ops-core.mjs): shared by privmix (core.d.ts), privmix/inline
// and, with the full build's, privmix/full and the Node entry (ops-full.d.ts).
import type {
  CsvInput, CsvResult, CsvSummary, ColumnHistogram, DatasetInfo, DatasetOptions, ImageInput,
  ImageOptions, ImageReadOptions, ImageResult, ImageSummary, PreviewResult, PreviewView, ProgressCallback,
  Receipt, SynthOptions, UtilityReport,
} from "./types.js";
export { version, rdp, account, calibrate, noisePreview } from "./accountant.js";

export declare function inspectCsv(input: CsvInput, maxRows?: number): CsvSummary;
/** `{csv, receipt}`: the synthetic CSV and its privacy receipt (in a worker, the input may also be a File/Blob). */
export declare function synthesizeCsv(input: CsvInput, options: SynthOptions, onProgress?: ProgressCallback): CsvResult;
/** `{classNames, classCounts, images, width, height, channels, …}` of a ZIP or image files. */
export declare function inspectImages(input: ImageInput, options?: ImageReadOptions): ImageSummary;
/** `{zip, preview, receipt, private: {realPreview}}` from a ZIP or image files (in a worker, also a File/Blob or image Files). */
export declare function synthesizeImages(input: ImageInput, options: ImageOptions, onProgress?: ProgressCallback): ImageResult;

/** A CSV read once, for several runs (the app's worker keeps one). Call `free()` when done.
 * The label and the schema are given here: a schema acts when the file is read (its "ignore"
 * columns are dropped, its types applied), so a call's `label` or `schema`, if given, must be
 * these (another is refused with `error.param`); read the file again for another. */
export declare class Dataset {
  /** `input`: CSV text or bytes, or in a Web Worker a Blob or File, which is read a slice at a time (its bytes are never all held beside the table). */
  constructor(input: CsvInput | Blob, options: DatasetOptions);
  readonly rows: number;
  readonly rowsDropped: number;
  readonly columns: string[];
  classCounts(): Pick<DatasetInfo, "labels" | "counts">;
  synthesize(options: SynthOptions, onProgress?: ProgressCallback): { csv: Uint8Array; receipt: Receipt };
  /** `synthesize` with the CSV handed to `onChunk` in order, about 4 MiB at a time, while the rows are made: the output never sits whole in the wasm memory (which never shrinks). Returns the receipt. If `onChunk` or `onProgress` throws, the synthesis stops with that exception and the chunks already handed over are not a complete output. */
  synthesizeChunks(options: SynthOptions, onChunk: (chunk: Uint8Array) => void, onProgress?: ProgressCallback): Receipt;
  utilityCheck(options: SynthOptions, onProgress?: ProgressCallback): UtilityReport;
  /** The noise a synthesis with `options` would calibrate (the live readout): `noisePreview` with this table's class sizes, columns and data path (the normalization's share the run will use, the column-type decisions). */
  noisePreview(options: SynthOptions, view?: PreviewView): PreviewResult;
  histograms(synthetic: CsvInput): ColumnHistogram[];
  free(): void;
}
