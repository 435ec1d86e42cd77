// privmix/full (browsers and bundlers): the core plus GMM release, federated synthesis and the audit.
export type * from "./types.js";
export * from "./ops-full.js";
export { default, initSync } from "./core.js";
