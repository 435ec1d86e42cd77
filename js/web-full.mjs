// `privmix/full` in browsers and bundlers: the core plus GMM release, federated synthesis and the audit.
import glueInit, * as glue from "../pkg/full/privmix.js";
import { api, datasetClass } from "./wrap.mjs";

const load = () => glue;
const a = api(load);
export default function init(options) {
  return glueInit(options);
}
export const initSync = glue.initSync;
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = a;
export const { gmmRelease, gmmSample, federatedSimulate, federatedKeygen, federatedContribute, federatedAggregate, audit } = a;
export const Dataset = datasetClass(glue.Dataset, load);
