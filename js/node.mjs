// `import("privmix")` under Node: the CommonJS build (synchronous wasm instantiation), with a
// no-op `init` so that code written for browsers (`await init()`) runs unchanged.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const privmix = require("../pkg/node/privmix.js");

export const {
  version, rdp, account, calibrate, noisePreview, inspectCsv, synthesizeCsv, Dataset,
} = privmix;
export const {
  inspectImages, synthesizeImages, gmmRelease, gmmSample, federatedSimulate, federatedKeygen,
  federatedContribute, federatedAggregate,
} = privmix;
export default async function init() {
  return privmix;
}
