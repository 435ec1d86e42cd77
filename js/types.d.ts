// The privmix TypeScript types: one hand-written set, re-exported by every entry
// (privmix, privmix/full, privmix/accountant, privmix/inline, privmix/worker, Node).
// tests/js/types.test.mjs fails when a request field that the Rust core accepts is missing here.

/** Accountant preset: WBK Thm 27 + improved conversion (`default`), or the DP-CDA paper's Thm 9 + classic conversion (`paper`). */
export type Preset = "default" | "paper";

/** Options every long-running call accepts besides its own. Not sent to the core. */
export interface CallOptions {
  /** Cancels the call: it rejects/throws with `signal.reason` (an `AbortError` by default). */
  signal?: AbortSignal;
}

/**
 * Errors thrown (or rejected) by privmix: `name` is `ParameterError`, `DataError`,
 * `AbortError` or `InternalError`; `param` is the option key at fault, when there is one.
 */
export interface PrivmixError extends Error {
  name: "ParameterError" | "DataError" | "AbortError" | "InternalError";
  param?: string;
}

export interface RdpParams { samplingRate: number; noiseMultiplier: number; preset?: Preset; orders?: number[]; }
export interface RdpResult { orders: number[]; rdp: number[]; preset: Preset; }

export interface MechanismParams {
  /** `cda` (default), `dpmix`, `local` or `projection`. */
  mechanism?: Mechanism;
  /** Pool size n: the smallest class size. */
  pool: number;
  /** Mix order l. */
  mix: number;
  /** L2 clip norm c (default 1). */
  clip?: number;
  /** Label noise σy: paper mode. Omit for label-free mode. */
  sigmaY?: number;
  /** dpmix: feature dimension dx. */
  dimX?: number;
  /** dpmix: label dimension dy (0: the class-wise variant). */
  dimY?: number;
  /** Number of mixes T drawn from the pool. */
  samples: number;
  delta: number;
  preset?: Preset;
  orders?: number[];
  /** `rdp` (default) or `pld`: the privacy-loss-distribution accountant (cda label-free only;
   * ε is then the smaller of the PLD and RDP bounds, and calibrate uses the PLD). */
  accountant?: "rdp" | "pld";
}
export interface AccountParams extends MechanismParams { sigmaX: number; }
export interface CalibrateParams extends MechanismParams { epsilon: number; }
export interface AccountResult {
  epsilon: number; order: number; delta: number; preset: Preset; mechanism: Mechanism;
  mode: string; noiseMultiplier: number; samplingRate: number;
  epsilonOtherPreset: { preset: Preset; epsilon: number; order: number };
  accountant: "rdp" | "pld"; epsilonRdp: number; epsilonPld: number | null;
}
export interface CalibrateResult {
  sigmaX: number; epsilon: number; order: number; targetEpsilon: number; delta: number;
  noiseMultiplier: number; preset: Preset; mechanism: Mechanism; mode: string;
  accountant: "rdp" | "pld"; epsilonRdp: number; epsilonPld: number | null;
}

export type Mechanism = "cda" | "dpmix" | "local" | "projection";

/** The mechanisms of a synthesis: those of the accountant, and `gmm` (Gaussian class models in a
 * DP principal subspace). */
export type SynthMechanism = Mechanism | "gmm";

export interface SynthOptions extends CallOptions {
  /** Label column (CSV input; required there). */
  label?: string;
  /** `cda` (default), `dpmix`, `local`, `projection` or `gmm`. Left out, a numeric table of at
   * least 100 feature columns and 20,000 rows gets `gmm`, any other table `cda` (the receipt's
   * `mechanism` says which); images alike (20,000 or more images of at least 100 pixel values).
   * Images take `cda` or `gmm` only. */
  mechanism?: SynthMechanism;
  /** dpmix: `hard` (default) or `soft` labels. */
  labels?: "hard" | "soft";
  /** dpmix: mix within each class. */
  classWise?: boolean;
  /** projection: the projected dimension k. */
  projectionDim?: number;
  /** gmm: the number of principal components k (default min(d, 150)). */
  components?: number;
  /** Target ε: the noise is calibrated to it. */
  epsilon?: number;
  /** δ (default 1e-5). */
  delta?: number;
  /** Mix order l (default 4), or "auto". */
  mix?: number | "auto";
  /** L2 clip norm in normalized units (default 1). */
  clip?: number;
  /** Synthetic rows T (default: cda under the standard adjacency, the rounded sum of the DP
   *  class counts, split over classes in proportion to them; otherwise the input's row count). */
  samples?: number;
  /** The neighbouring relation: `standard` (default: replace one whole record, label included;
   *  cda takes the label set, class counts, output class proportions and pool sizes from DP
   *  counts) or `keep-label` (replace one record's features, keeping its label: the label set
   *  and class counts are public, as the receipt declares). */
  adjacency?: "standard" | "keep-label";
  /** cda, standard adjacency: a public lower bound on every class's size, used as the pool
   *  size instead of the DP floor (at least the mix order). */
  poolFloor?: number;
  /** How columns the schema does not type get their type: `dp` (default: decided under DP
   *  with a small share of ε) or `data` (inferred from the data, NOT protected). */
  columnTypes?: "dp" | "data";
  /** `dp` (default, protected), `public` (bounds from `schema`) or `data` (NOT protected). */
  normalize?: "dp" | "public" | "data";
  /** Share of ε spent on the private ranges under `normalize: "dp"` (default 0.2, raised up to 0.5 for a small table whose ranges the default cannot see and to 0.3 where the column marginals would hold fewer than 500 rows per σ; a given share is kept). */
  normalizeShare?: number;
  /** Schema object (as the CLI's schema JSON), or its JSON text. */
  schema?: object | string;
  sigmaX?: number;
  sigmaY?: number;
  /** Fixed seed for tests only: the receipt then says "seeded, not for release". */
  seed?: number;
  /** `pld` (default: the privacy-loss-distribution accountant for every mechanism under the default
   *  preset, with RDP as a cross-check; the receipt's ε is the smaller bound) or `rdp`. */
  accountant?: "pld" | "rdp";
  preset?: Preset;
  orders?: number[];
  /** utilityCheck: held-out share (default 0.2). */
  testShare?: number;
  /** utilityCheck: `logreg` (default) or `tree`. */
  model?: "logreg" | "tree";
}

/** The privacy receipt (the same JSON document the CLI writes; snake_case keys). */
export interface Receipt {
  epsilon: number;
  delta: number;
  mechanism: string;
  guarantee: { adjacency: string; public_information: string[]; unprotected: string[]; limitations: string[] };
  parameters: Record<string, unknown>;
  accountant: Record<string, unknown>;
  normalization: Record<string, unknown>;
  data: { rows_used: number; rows_dropped: number; columns: string[]; label: string; class_labels: string[]; class_counts: number[] };
  randomness: { source: string; seeded: boolean; fit_for_release: boolean };
  warnings: string[];
  version: string;
  build_id: string;
  [key: string]: unknown;
}

export interface CsvSummary {
  columns: { name: string; kind: "numeric" | "integer" | "categorical"; distinct: number }[];
  rowsRead: number; truncated: boolean; delimiter: string;
  suggestedLabel: string | null; imageSide: number | null;
}
export interface PreviewParams {
  classSizes: number[]; epsilon: number; delta: number; features: number;
  /** The classes' names, one per class size (optional): the `warnings` name the classes with them. */
  classNames?: string[];
  mix?: number | "auto"; samples?: number; clip?: number;
  /** Share of ε DP normalization is sized for, composed with the mixing as the synthesis does (default 0.2, the synthesis's default; 0 for none). `Dataset.noisePreview` takes the run's share from the table. */
  normalizeShare?: number; preset?: Preset;
  /** "pld" (default: the synthesis's accountant, RDP as a cross-check) or "rdp". */
  accountant?: "pld" | "rdp";
  /** "standard" (default: a record may change class) or "keep-label". */
  adjacency?: "standard" | "keep-label";
  /** The ε curve around σx, and the GMM's around its noise multiplier (default true); false: only the calibrated
   *  point, sooner (see `PreviewView`). */
  curve?: boolean;
  /** An image synthesis whose width, height or channels are left open: the run decides the shape under DP first
   *  (`synthesizeImages`), and the readout composes that release as the run will (default false). */
  imageShape?: boolean;
}
/**
 * What `Dataset.noisePreview` computes beyond the calibration. The curve's other points cost about a fifth of a
 * readout: show σx and ε from a call with `{curve: false}`, then call again without it; when nothing else changed,
 * the second call reuses the first one's calibration and computes only the curve.
 */
export interface PreviewView {
  /** The ε curve around σx, and the GMM's around its noise multiplier (default true); false: only the calibrated
   *  point. */
  curve?: boolean;
}
/** The GMM's noise in a readout (`PreviewResult.gmm`), as the run calibrates it. */
export interface GmmPreview {
  /** Principal components k. */
  components: number;
  /** The noise multiplier of the GMM's releases (the receipt's `noise_multiplier`) and their ρ (zCDP). */
  noiseMultiplier: number; rho: number;
  /** ε of the whole release (≤ the target). */
  epsilon: number;
  /** The accountant that calibrated ρ. */
  accountant: "pld" | "rdp";
  /** [noise multiplier, ε] pairs: ε of the whole release against the GMM's noise multiplier around the calibrated one
   *  (empty when the request asked for no curve). */
  curve: [number, number][];
}
export interface PreviewResult {
  /** The mechanism the run will take: "dp-cda", or "dp-gmm" where the defaults give a large set of many numeric
   *  columns (or a large image set with l "auto") to the GMM, whose noise is then in `gmm`. The other figures are
   *  DP-CDA's either way (with the GMM: what DP-CDA would do if chosen). `Dataset.noisePreview` names another
   *  mechanism given in the options ("dpmix", …) and warns that the figures are DP-CDA's. */
  mechanism: string;
  /** The GMM's noise, when `mechanism` is "dp-gmm". */
  gmm?: GmmPreview;
  mix: number; suggestedMix: number; sigmaX: number; noiseMultiplier: number; accountant: "pld" | "rdp";
  /** ε of the whole release at σx: the mixing composed with the data path's releases (≤ the target). */
  epsilon: number;
  /** The same as `epsilon` (its earlier name). */
  epsilonMixing: number;
  /** Rows per class (the largest class's when they differ). */
  samplesPerClass: number;
  /** Rows the run writes in all: `samples` when given; otherwise, under the standard
   *  adjacency, the sizes of the classes it keeps, summed (the run sums their DP counts, so it
   *  differs a little), and under keep-label K·⌊n/K⌋. */
  samples: number;
  /** The smallest pool mixed from: the smallest class, or under the standard adjacency its expected DP floor. */
  pool: number;
  /** The share of ε DP normalization is sized for (0: none). */
  normalizeShare: number;
  /** ε of the whole release against σx around the calibrated value (only the calibrated point with `curve: false`). */
  curve: [number, number][];
  /** What the run is likely to do that these numbers do not show (absent when nothing): under
   *  the standard adjacency, the classes too small for the DP label threshold or for a pool at this
   *  budget, which the run will most likely leave out (the readout is calibrated without them), or,
   *  when no class is large enough, the chance that the run keeps none and stops. */
  warnings?: string[];
}
export interface UtilityReport {
  syntheticAccuracy: number;
  /** The 95 % Wilson interval of `syntheticAccuracy` over the `testRows` held-out rows, [low, high]:
   *  how much a check on this few rows can vary (26 of 30 correct: [0.70, 0.95]). */
  syntheticInterval: [number, number];
  realAccuracy: number; majorityAccuracy: number;
  trainRows: number; testRows: number; syntheticRows: number; model: string; epsilon: number;
}
/** One column, real against synthetic (`Dataset.histograms`; for the data owner's eyes, never part of a download). */
export interface ColumnHistogram {
  name: string; kind: "numeric" | "categorical";
  /** The categories, or for a numeric column the lower edges of 20 equal bins over the real and synthetic values together. */
  bins: string[];
  /** Counts per bin. */
  real: number[]; synthetic: number[];
}
/** Called with the fraction done (0…1). If it throws, the operation stops and that exception is rethrown. */
export type ProgressCallback = (fraction: number) => void;

/** CSV text or bytes. The worker also takes a File or Blob. */
export type CsvInput = string | Uint8Array | ArrayBuffer;
export interface CsvResult { csv: string; receipt: Receipt; }
export interface DatasetOptions { label: string; schema?: object | string; }
export interface DatasetInfo { rows: number; rowsDropped: number; columns: string[]; labels: string[]; counts: number[]; }

/** Image input: a ZIP of class folders, or files whose paths end in `<class>/<name>.png|jpg`. */
export type ImageInput = Uint8Array | ArrayBuffer | { name: string; data: Uint8Array }[];
/** How images are read and shaped (inspectImages). */
export interface ImageReadOptions extends CallOptions {
  /** Output width and height in pixels (default: the input's most common size, longer side at most `maxSide`). */
  width?: number; height?: number;
  /** 1 (grayscale) or 3 (RGB); default: 1 when every file is grayscale. */
  channels?: 1 | 3;
  /** Alpha: composite on white (default) or drop. */
  alpha?: "white" | "drop";
  /** Cap on the longer side of a shape taken from the data (default 32). */
  maxSide?: number;
  /** Cap on the decompressed bytes read from a ZIP (default 1 GiB). */
  maxBytes?: number;
}
/** Options of synthesizeImages: the synthesis options (the label comes from the folder names) plus the image shape. */
export interface ImageOptions extends Omit<SynthOptions, "label" | "testShare" | "model">, ImageReadOptions {}
export interface ImageSummary {
  images: number; width: number; height: number; channels: number;
  classNames: string[]; classCounts: number[];
  /** The shape was taken from the data (the most common size), as shown to the data's owner;
   *  a synthesis decides what the options leave open under DP instead. */
  shapeFromData: boolean; warnings: string[];
}
export interface ImageResult {
  /** The synthetic images: a ZIP of PNGs in class folders. */
  zip: Uint8Array;
  /** A PNG grid of a few synthetic images per class. */
  preview: Uint8Array;
  receipt: Receipt;
  /** Computed from the private data without protection: for the data holder's eyes only. */
  private: { realPreview: Uint8Array };
}

export interface GmmOptions extends CallOptions {
  label: string; epsilon: number; delta?: number;
  noise?: "optimized" | "iid-gaussian" | "iid-laplace" | "colored-gaussian";
  /** `record` (default, worst-case DP with bound B) or `label` (the paper's; local sensitivity). */
  adjacency?: "record" | "label";
  /** Public bound B on every row's L2 norm (required with `adjacency: "record"`): choose it
   * without looking at the data. */
  bound?: number; pca?: number;
  /** A public centre, one value per feature, chosen without looking at the data (e.g. the
   * middle of each column's known range): the release is of x − center, so `bound` bounds
   * ‖x − center‖; the means are moved back. */
  center?: number[];
  /** A public box for the sampled rows, one lower and one upper bound per feature (give both),
   * e.g. each column's known range: the model keeps it, and its samples (here and in
   * `gmmSample`) are drawn from each class's Gaussian conditioned on it (post-processing). */
  lower?: number[]; upper?: number[];
  /** With the box, on the default release: release each feature's histogram on this many equal
   * bins of its interval (DP, in the same budget) and map every sampled value onto it instead
   * of drawing within the box (for wide data such as images), e.g. 32. */
  marginals?: number;
  /** `gaussian` (default, a valid guarantee) or `wishart` (the paper's; declared unprotected). */
  covarianceNoise?: "gaussian" | "wishart";
  lambda?: number;
  /** The class labels, when public (known without looking at the data): one component per
   * listed class; records with another label count in N and belong to no class. Without it the
   * labels are read from the data, and (record adjacency, default noise) a label is released
   * only when its noisy count clears a DP threshold (the receipt gives it). */
  classes?: string[];
  /** Rows to sample from the released model: a number, or `"released"` for as many as the
   * released class counts sum to (a DP number; the default release does not publish the
   * input's row count). Without it, no rows are sampled. */
  samples?: number | "released";
  /** Grid points of the marginal-density curves (for plots). */
  marginalPoints?: number;
  seed?: number;
}
/** The released GMM: the same JSON as `privmix gmm --model-out`. */
export interface GmmModel {
  classes: string[]; weights: number[]; means: number[][]; covariances: number[][][];
  /** The public box its samples keep to (the release's `lower` and `upper`). */
  support?: { lower: number[]; upper: number[] };
  [key: string]: unknown;
}
export interface GmmResult {
  model: GmmModel; epsilon: number; delta: number; receipt: Record<string, unknown>;
  csv: string | null;
  /** How many rows `csv` holds (null without `samples`). */
  samples: number | null;
  marginals: unknown[] | null;
  /** Computed from the private data without protection (KL, reference marginals). */
  private?: {
    kl?: number | null;
    klUnavailable?: string;
    referenceMarginals?: unknown[] | null;
    /** Features whose missing or non-numeric cells took the public centre (owner only). */
    filledCells?: { feature: string; cells: number }[];
    /** Records without a label, or with one not in `classes`: they count in N and belong to no
     * class (owner only). */
    unlabelled?: number;
    /** Classes of the data the release left out: their noisy counts did not reach the labels'
     * threshold (owner only; omitted when none). */
    classesLeftOut?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}
export interface FederatedOptions extends CallOptions {
  label: string; epsilon: number; delta?: number; variant?: "cape" | "conventional";
  mix?: number; clip?: number; samples?: number; normalize?: "dp" | "public";
  normalizeShare?: number; schema?: object | string; preset?: Preset;
  /** Simulation: the number of parties and how rows are split. */
  clients?: number; partition?: "iid" | "skewed";
  /** Multi-party: an agreed floor on every party's smallest class (CAPE's gain needs it), and a session label. */
  pool?: number; session?: string;
  /** t: the guarantee holds against an aggregator holding the pairwise seeds of t parties
   * (default 1: any one party may aggregate; 0: a seedless aggregator, assumed, not enforced;
   * at most clients − 1). Every party must agree on it. */
  aggregatorSeeds?: number;
  /** How columns the schema does not type get their type: `dp` (default: decided under DP at
   *  each party, charged in the receipt) or `data` (inferred from the data, NOT protected). */
  columnTypes?: "dp" | "data";
  /** RDP orders (default 2..256), as the CLI's --orders. */
  orders?: number[];
  seed?: number;
}
export interface FederatedResult { csv: string; receipt: Record<string, unknown>; }

/** Options of `audit`: the configuration under audit (the synthesis options that apply to the
 * audit's own two-class dataset; no user data is involved) and the audit's effort. */
export interface AuditOptions extends CallOptions {
  /** `gmm`: the GMM release's default path (`epsilon` and `delta` apply); `federated`: a CAPE
   * simulation with two parties and schema-typed columns (`epsilon`, `delta`, `mix`, `clip`,
   * `normalize` apply; not the `class-change` or `missing-label` canary, which its adjacency
   * excludes). */
  mechanism?: "cda" | "dpmix" | "local" | "projection" | "gmm" | "federated";
  epsilon?: number; delta?: number; sigmaX?: number; mix?: number; clip?: number; samples?: number;
  /** `dp` (default), `public` (the audit supplies bounds [−1, 1]) or `data`. */
  normalize?: "dp" | "public" | "data";
  /** `standard` (default) or `keep-label` (declared: exact class counts are public there). */
  adjacency?: "standard" | "keep-label";
  /** How the neighbouring dataset differs: a record at the opposite corner (default), moved to
   * the other class, with one unparsable cell, with one missing cell, without its label, or
   * (`gmm` only: its default release also covers an added or removed record) one record more
   * at the opposite corner. */
  canary?: "extreme" | "class-change" | "unparsable-cell" | "missing-cell" | "missing-label" | "added-record";
  /** Runs per dataset (default 500, at most 1 000 000). */
  runs?: number;
  /** 1 − confidence of the lower bound (default 0.05). */
  alpha?: number;
  /** Feature columns of the audit's dataset (default 2). */
  features?: number;
  /** Rows per class of the audit's dataset (default mix + 1; gmm 10; federated 2 × mix). From
   * 64 on, DP-CDA's pools and T come from the noisy class counts: the whole default path. */
  rowsPerClass?: number;
  /** First seed of the runs (default 1; the audit releases nothing). */
  seed?: number;
  /** `federated` only: each party's own contribution file, then their aggregation, instead of
   * the one-process simulation. */
  multiParty?: boolean;
}
/** The audit's result: a Clopper–Pearson lower bound on ε beside the receipt's claim. */
export interface AuditReport {
  mechanism: string; canary: string;
  claimedEpsilon: number; delta: number;
  epsilonLowerBound: number; alpha: number;
  /** True when the lower bound does not exceed the claim. */
  passed: boolean;
  /** The test chosen on the calibration half, and the bound it certified there. */
  test: string; calibrationEstimate: number;
  holdout: { truePositives: number; runsNeighbour: number; falsePositives: number; runsBase: number };
  runs: number; sigmaX: number | null; plantedNoiseScale: number | null;
}

/** What `init` accepts: the wasm's URL or bytes, a Response, or a compiled module. */
export type InitInput = string | URL | Response | ArrayBuffer | ArrayBufferView | object;
