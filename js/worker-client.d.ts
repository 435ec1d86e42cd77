// privmix/worker: the API in a Web Worker (the full build), Promise-only.
import type {
  AccountParams, AccountResult, AuditOptions, AuditReport, CalibrateParams, CalibrateResult, ColumnHistogram, CsvResult,
  CsvSummary, DatasetInfo, DatasetOptions, FederatedOptions, FederatedResult, GmmModel, GmmOptions,
  GmmResult, ImageOptions, ImageReadOptions, ImageResult, ImageSummary, PreviewParams, PreviewResult, PreviewView,
  ProgressCallback, RdpParams, RdpResult, Receipt, SynthOptions, UtilityReport, CallOptions,
} from "./types.js";
export type * from "./types.js";

/** CSV input in a worker: text, bytes, or a File/Blob. */
export type WorkerCsvInput = string | Uint8Array | ArrayBuffer | Blob;
export type ImageFile = File | { name: string; path?: string; data: Uint8Array | ArrayBuffer | Blob };

export interface PrivmixWorkerOptions {
  /** Builds the Worker (e.g. a `blob:` worker for a copy on another origin). */
  createWorker?: () => Worker;
  /** The worker script (default: this package's worker.mjs). */
  url?: string | URL;
}

export declare class PrivmixWorker {
  constructor(options?: PrivmixWorkerOptions);
  ready(): Promise<string>;
  version(): Promise<string>;
  rdp(params: RdpParams): Promise<RdpResult>;
  account(params: AccountParams): Promise<AccountResult>;
  calibrate(params: CalibrateParams): Promise<CalibrateResult>;
  noisePreview(params: PreviewParams): Promise<PreviewResult>;
  inspectCsv(input: WorkerCsvInput, maxRows?: number): Promise<CsvSummary>;
  /** `{csv: string, receipt}` from CSV text, bytes, or a File/Blob. */
  synthesizeCsv(input: WorkerCsvInput, options: SynthOptions, onProgress?: ProgressCallback): Promise<CsvResult>;
  /** `{classNames, classCounts, images, width, height, channels, …}` of a ZIP or image files. */
  inspectImages(input: WorkerCsvInput | ImageFile[], options?: ImageReadOptions & CallOptions): Promise<ImageSummary>;
  /** `{zip, preview, receipt, private: {realPreview}}` from a ZIP (bytes/File) or image files. */
  synthesizeImages(input: WorkerCsvInput | ImageFile[], options: ImageOptions, onProgress?: ProgressCallback): Promise<ImageResult>;
  loadDataset(input: WorkerCsvInput, options: DatasetOptions & CallOptions): Promise<DatasetInfo>;
  synthesizeDataset(options: SynthOptions, onProgress?: ProgressCallback): Promise<{ csv: Uint8Array; receipt: Receipt }>;
  utilityCheck(options: SynthOptions, onProgress?: ProgressCallback): Promise<UtilityReport>;
  /** The live readout for the loaded dataset under `options` (see `Dataset.noisePreview`). */
  datasetNoisePreview(options: SynthOptions, view?: PreviewView): Promise<PreviewResult>;
  histograms(syntheticCsv: WorkerCsvInput): Promise<ColumnHistogram[]>;
  /** `{model, epsilon, delta, receipt, csv, marginals, private: {kl, referenceMarginals}}` (`private`: computed without protection, not for release). */
  gmmRelease(input: WorkerCsvInput, options: GmmOptions): Promise<GmmResult>;
  gmmSample(model: GmmModel | string, samples: number, seed?: number): Promise<string>;
  federatedSimulate(input: WorkerCsvInput, options: FederatedOptions): Promise<FederatedResult>;
  federatedKeygen(party: number): Promise<{ secretKey: string; publicKey: string }>;
  federatedContribute(input: WorkerCsvInput, secretKey: string, peers: string[], options: FederatedOptions): Promise<{ contribution: string; secretKey: string }>;
  /** Contributions as JSON texts, bytes or Files. */
  federatedAggregate(contributions: (string | Uint8Array | Blob)[]): Promise<FederatedResult>;
  /** The built-in privacy audit (`audit` of privmix/full). */
  audit(options: AuditOptions, onProgress?: ProgressCallback): Promise<AuditReport>;
  /** Stops the worker; pending calls reject with an AbortError. */
  terminate(): void;
}
export declare function createWorker(options?: PrivmixWorkerOptions): PrivmixWorker;
