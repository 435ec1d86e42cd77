// privmix (browsers): the accountant, CSV and image synthesis, the utility check.
export type * from "./types.js";
export * from "./ops-core.js";
import init from "./accountant.js";
export default init;
/** Instantiates the wasm synchronously from its bytes or a compiled module. */
export declare function initSync(options: { module: ArrayBuffer | ArrayBufferView | object }): unknown;
