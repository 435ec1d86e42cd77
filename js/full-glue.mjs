// The full build's web glue (pkg/full) as ops-full.mjs calls it: `load()` returns the glue,
// first running what node.mjs set with `prepareWith` (there: instantiate the wasm from its file;
// in browsers the page awaits `init()` instead). Not part of the public API.
import * as glue from "../pkg/full/privmix.js";

let prepare = null;
/** `f(glue)` runs before the next operation, once it succeeds. */
export function prepareWith(f) {
  prepare = f;
}
export function load() {
  if (prepare) {
    prepare(glue);
    prepare = null;
  }
  return glue;
}
export { glue };
