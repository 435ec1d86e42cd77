// `privmix` in browsers and bundlers: the core build (accountant, CSV and image synthesis,
// utility check). `await init()` fetches privmix_bg.wasm next to the glue (bundlers emit it);
// `init({ module_or_path })` takes another URL, the bytes or a compiled module.
import glueInit, * as glue from "../pkg/web/privmix.js";
import { api, datasetClass } from "./wrap.mjs";

const load = () => glue;
const a = api(load);
export default function init(options) {
  return glueInit(options);
}
export const initSync = glue.initSync;
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = a;
export const Dataset = datasetClass(glue.Dataset, load);
