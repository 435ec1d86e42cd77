import type {
  AccountParams, AccountResult, CalibrateParams, CalibrateResult, RdpParams, RdpResult,
  PreviewParams, PreviewResult, CsvSummary, SynthOptions, Receipt, UtilityReport,
  ColumnHistogram, ProgressCallback, ImageOptions, ImageSummary, GmmOptions, GmmResult, GmmModel,
  FederatedOptions,
} from "../pkg/web/privmix.js";

export type CsvInput = string | Uint8Array | ArrayBuffer | Blob;
export type ImageFile = File | { name: string; path?: string; data: Uint8Array | ArrayBuffer | Blob };

export declare class PrivmixWorker {
  constructor(options?: { createWorker?: () => Worker });
  ready(): Promise<string>;
  version(): Promise<string>;
  rdp(params: RdpParams): Promise<RdpResult>;
  account(params: AccountParams): Promise<AccountResult>;
  calibrate(params: CalibrateParams): Promise<CalibrateResult>;
  noisePreview(params: PreviewParams): Promise<PreviewResult>;
  inspectCsv(input: CsvInput, maxRows?: number): Promise<CsvSummary>;
  synthesizeCsv(input: CsvInput, options: SynthOptions, onProgress?: ProgressCallback): Promise<{ csv: string; receipt: Receipt }>;
  inspectImages(input: CsvInput | ImageFile[], options?: ImageOptions): Promise<ImageSummary>;
  synthesizeImages(input: CsvInput | ImageFile[], options: ImageOptions, onProgress?: ProgressCallback): Promise<{ zip: Uint8Array; preview: Uint8Array; realPreview: Uint8Array; receipt: Receipt }>;
  loadDataset(input: CsvInput, options: { label: string; schema?: object | string }): Promise<{ rows: number; rowsDropped: number; columns: string[]; labels: string[]; counts: number[] }>;
  synthesizeDataset(options: SynthOptions, onProgress?: ProgressCallback): Promise<{ csv: Uint8Array; receipt: Receipt }>;
  utilityCheck(options: SynthOptions, onProgress?: ProgressCallback): Promise<UtilityReport>;
  histograms(syntheticCsv: CsvInput): Promise<ColumnHistogram[]>;
  gmmRelease(input: CsvInput, options: GmmOptions): Promise<GmmResult>;
  gmmSample(model: GmmModel | string, samples: number, seed?: number): Promise<string>;
  federatedSimulate(input: CsvInput, options: FederatedOptions): Promise<{ csv: string; receipt: Record<string, unknown> }>;
  federatedKeygen(party: number): Promise<{ secretKey: string; publicKey: string }>;
  federatedContribute(input: CsvInput, secretKey: string, peers: string[], options: FederatedOptions): Promise<{ contribution: string; secretKey: string }>;
  federatedAggregate(contributions: (string | Uint8Array | Blob)[]): Promise<{ csv: string; receipt: Record<string, unknown> }>;
  terminate(): void;
}
export declare function createWorker(options?: { createWorker?: () => Worker }): PrivmixWorker;
