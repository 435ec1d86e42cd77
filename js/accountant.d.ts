// privmix/accountant: the RDP accountant alone (rdp, account, calibrate, noisePreview).
import type {
  AccountParams, AccountResult, CalibrateParams, CalibrateResult, InitInput, PreviewParams,
  PreviewResult, RdpParams, RdpResult,
} from "./types.js";
export type * from "./types.js";

/** Loads the wasm (browsers: fetched next to this module unless `module_or_path` says otherwise). */
export default function init(options?: { module_or_path?: InitInput | Promise<InitInput> }): Promise<unknown>;
/** Instantiates the wasm synchronously from its bytes or a compiled module. */
export declare function initSync(options: { module: ArrayBuffer | ArrayBufferView | object }): unknown;
export declare function version(): string;
export declare function rdp(params: RdpParams): RdpResult;
export declare function account(params: AccountParams): AccountResult;
export declare function calibrate(params: CalibrateParams): CalibrateResult;
export declare function noisePreview(params: PreviewParams): PreviewResult;
