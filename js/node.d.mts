export * from "../pkg/node/privmix.js";
/** A no-op under Node (the wasm is instantiated on import); present for isomorphic code. */
export default function init(): Promise<unknown>;
