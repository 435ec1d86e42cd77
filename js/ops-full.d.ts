// The full build's operations (js/ops-full.mjs): privmix/full (full.d.ts) and the Node entry
// (node.d.ts).
import type { AuditOptions, AuditReport, CsvInput, FederatedOptions, FederatedResult, GmmModel, GmmOptions, GmmResult, ProgressCallback } from "./types.js";
export * from "./ops-core.js";

/** `{model, epsilon, delta, receipt, csv, marginals, private: {kl, referenceMarginals}}` (`private`: computed without protection, not for release). */
export declare function gmmRelease(input: CsvInput, options: GmmOptions): GmmResult;
/** `samples` rows (CSV) drawn from a released model, within its public box (`support`) when it has one. */
export declare function gmmSample(model: GmmModel | string, samples: number, seed?: number): string;
/** The noisy count a class label read from the data must reach to be released by the default
 * `gmmRelease` at (ε, δ) (δ default 1e-5); labels listed with `classes` need none. */
export declare function gmmLabelThreshold(epsilon: number, delta?: number): number;
export declare function federatedSimulate(input: CsvInput, options: FederatedOptions): FederatedResult;
export declare function federatedKeygen(party: number): { secretKey: string; publicKey: string };
export declare function federatedContribute(input: CsvInput, secretKey: string, peers: string[], options: FederatedOptions): { contribution: string; secretKey: string };
/** The parties' contributions as JSON texts (in a worker, also bytes or Files). */
export declare function federatedAggregate(contributions: string[]): FederatedResult;
/** The built-in privacy audit: runs the real pipeline on its own neighbouring datasets. */
export declare function audit(options: AuditOptions, onProgress?: ProgressCallback): AuditReport;
