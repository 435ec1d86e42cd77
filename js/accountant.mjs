// `privmix/accountant`: the RDP accountant alone (rdp, account, calibrate, noisePreview), a
// small wasm for pages that show the ε–σ trade-off before any data is chosen.
import glueInit, * as glue from "../pkg/accountant/privmix.js";

export default function init(options) {
  return glueInit(options);
}
export const { initSync, version, rdp, account, calibrate, noisePreview } = glue;
