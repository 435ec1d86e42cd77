// `privmix` under Node (import): the full build, instantiated synchronously on the first call
// (nothing is read at import time, so bundlers and frameworks can import it freely), and
// synthesizeCsvAsync, which runs in a worker thread.
import { readFileSync } from "node:fs";
import * as glue from "../pkg/full/privmix.js";
import { api, datasetClass } from "./wrap.mjs";

let ready = false;
function load() {
  if (!ready) {
    glue.initSync({ module: readFileSync(new URL("../pkg/full/privmix_bg.wasm", import.meta.url)) });
    ready = true;
  }
  return glue;
}
const a = api(load);
/** Present for isomorphic code: instantiates the wasm now (otherwise the first call does). */
export default async function init() {
  load();
}
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = a;
export const { gmmRelease, gmmSample, federatedSimulate, federatedKeygen, federatedContribute, federatedAggregate, audit } = a;
export const Dataset = datasetClass(glue.Dataset, load);
export { synthesizeCsvAsync } from "./node-thread.mjs";
