// `privmix` in browsers and bundlers: the core build (accountant, CSV and image synthesis,
// utility check). `await init()` fetches privmix_bg.wasm next to the glue (bundlers emit it);
// `init({ module_or_path })` takes another URL, the bytes or a compiled module.
import glueInit, { initSync } from "../pkg/web/privmix.js";

export * from "./ops-core.mjs";
export { initSync };
export default function init(options) {
  return glueInit(options);
}
