// `privmix/full` in browsers and bundlers: the core plus GMM release, federated synthesis and the audit.
import glueInit, { initSync } from "../pkg/full/privmix.js";

export * from "./ops-full.mjs";
export { initSync };
export default function init(options) {
  return glueInit(options);
}
