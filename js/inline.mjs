// `privmix/inline`: the core build with its wasm inside the JavaScript (gzip + base64), so
// there is no asset to serve: it works in any bundler, from a CDN and under
// `connect-src 'none'`. About a third larger on the wire than the separate .wasm; `init()`
// needs DecompressionStream (every current browser, Node ≥ 18).
import glueInit, * as glue from "../pkg/web/privmix.js";
import { wasmGzipBase64 } from "../pkg/inline/privmix-wasm.mjs";
import { api, datasetClass } from "./wrap.mjs";
import { inflateBase64Gzip } from "./worker-core.mjs";

const load = () => glue;
const a = api(load);
let started = null;
export default function init() {
  return (started ??= inflateBase64Gzip(wasmGzipBase64).then((bytes) => glueInit({ module_or_path: bytes })));
}
export const initSync = glue.initSync;
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = a;
export const Dataset = datasetClass(glue.Dataset, load);
/** The wasm bytes (for a worker you build yourself). */
export function wasmBytes() {
  return inflateBase64Gzip(wasmGzipBase64);
}
