// `privmix/inline`: the core build with its wasm inside the JavaScript (gzip + base64), so
// there is no asset to serve: it works in any bundler, from a CDN and under
// `connect-src 'none'`. About a third larger on the wire than the separate .wasm; `init()`
// needs DecompressionStream (every current browser, Node ≥ 18).
import glueInit, { initSync } from "../pkg/web/privmix.js";
import { wasmGzipBase64 } from "../pkg/inline/privmix-wasm.mjs";
import { inflateBase64Gzip } from "./worker-core.mjs";

export * from "./ops-core.mjs";
export { initSync };
let started = null;
export default function init() {
  return (started ??= inflateBase64Gzip(wasmGzipBase64).then((bytes) => glueInit({ module_or_path: bytes })));
}
/** The wasm bytes (for a worker you build yourself). */
export function wasmBytes() {
  return inflateBase64Gzip(wasmGzipBase64);
}
