// privmix/inline: the core build with its wasm inside the JavaScript (gzip + base64): no asset
// to serve, so it works in any bundler, from a CDN and under `connect-src 'none'`.
export * from "./core.js";

/** Inflates and instantiates the inlined wasm (needs DecompressionStream: every current browser, Node ≥ 18). */
export default function init(): Promise<unknown>;
/** The wasm bytes, inflated (for a worker you build yourself). */
export declare function wasmBytes(): Promise<Uint8Array>;
