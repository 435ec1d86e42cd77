// The JS layer over the wasm-bindgen glue, shared by every ESM entry: `signal` (an
// AbortSignal) in the options of long operations. The core rejects unknown option keys, so
// `signal` is taken off before the call; the operation stops at the next progress report
// after an abort (a throwing onProgress stops the core, which rethrows what it threw) and is
// checked once more at the end.
import { OPS } from "./ops.mjs";

export function abortError(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const e = new Error("the operation was aborted");
  e.name = "AbortError";
  return e;
}

function split(options) {
  if (!options || typeof options !== "object" || !("signal" in options)) return [options, undefined];
  const { signal, ...rest } = options;
  return [rest, signal ?? undefined];
}

/** `fn(...before, options, …, onProgress)` with `options.signal` honoured; `onProgress` is
 * the argument after the options unless `progressAt` says where. */
export function withSignal(fn, nBefore, progressAt = nBefore + 1) {
  return function (...args) {
    const [options, signal] = split(args[nBefore]);
    args[nBefore] = options;
    if (!signal) return fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    const user = args[progressAt];
    args[progressAt] = (p) => {
      if (signal.aborted) throw abortError(signal);
      if (user) user(p);
    };
    const out = fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    return out;
  };
}

/** The operations of `OPS` over a glue module (`load()` returns it, initialized), each calling
 * the glue's function of the same name with `signal` honoured where the operation takes options. */
export function api(load) {
  const out = {};
  for (const [name, { options }] of Object.entries(OPS)) {
    const f = (...args) => {
      const m = load();
      return options === undefined ? m[name](...args) : withSignal(m[name], options)(...args);
    };
    Object.defineProperty(f, "name", { value: name });
    out[name] = f;
  }
  return out;
}

/** The glue's Dataset with `signal` honoured in synthesize, synthesizeChunks and utilityCheck. */
export function datasetClass(Base, load) {
  return class Dataset extends Base {
    constructor(input, options) {
      load();
      super(input, options);
    }
    synthesize(options, onProgress) {
      return withSignal(super.synthesize, 0).call(this, options, onProgress);
    }
    synthesizeChunks(options, onChunk, onProgress) {
      return withSignal(super.synthesizeChunks, 0, 2).call(this, options, onChunk, onProgress);
    }
    utilityCheck(options, onProgress) {
      return withSignal(super.utilityCheck, 0).call(this, options, onProgress);
    }
  };
}
