// The full build's operations over its web glue (pkg/full), shared by web-full.mjs and node.mjs.
// The rows are js/ops.mjs; the names are listed here because ESM exports are static.
import { glue, load } from "./full-glue.mjs";
import { api, datasetClass } from "./wrap.mjs";

const a = api(load);
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = a;
export const { gmmRelease, gmmSample, gmmLabelThreshold, federatedSimulate, federatedKeygen, federatedContribute, federatedAggregate, audit } = a;
export const Dataset = datasetClass(glue.Dataset, load);
