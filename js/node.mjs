// `privmix` under Node (import): the full build, instantiated synchronously on the first call
// (nothing is read at import time, so bundlers and frameworks can import it freely), and
// synthesizeCsvAsync, which runs in a worker thread.
import { readFileSync } from "node:fs";
import { load, prepareWith } from "./full-glue.mjs";

// Listed in package.json's sideEffects: a bundler that skipped this module's body (it only
// re-exports) would leave the wasm uninstantiated.
prepareWith((glue) => glue.initSync({ module: readFileSync(new URL("../pkg/full/privmix_bg.wasm", import.meta.url)) }));

export * from "./ops-full.mjs";
/** Present for isomorphic code: instantiates the wasm now (otherwise the first call does). */
export default async function init() {
  load();
}
export { synthesizeCsvAsync } from "./node-thread.mjs";
