// The core build's operations over its web glue (pkg/web), shared by web.mjs and inline.mjs.
// The rows are js/ops.mjs; the names are listed here because ESM exports are static.
import * as glue from "../pkg/web/privmix.js";
import { api, datasetClass } from "./wrap.mjs";

const load = () => glue;
export const { version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, inspectImages, synthesizeImages } = api(load);
export const Dataset = datasetClass(glue.Dataset, load);
