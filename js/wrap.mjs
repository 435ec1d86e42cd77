// The JS layer over the wasm-bindgen glue, shared by every ESM entry: `signal` (an
// AbortSignal) in the options of long operations. The core rejects unknown option keys, so
// `signal` is taken off before the call; the operation stops at the next progress report
// after an abort (a throwing onProgress stops the core, which rethrows what it threw) and is
// checked once more at the end.

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

/** `fn(...before, options, onProgress)` with `options.signal` honoured. */
export function withSignal(fn, nBefore) {
  return function (...args) {
    const [options, signal] = split(args[nBefore]);
    args[nBefore] = options;
    if (!signal) return fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    const user = args[nBefore + 1];
    args[nBefore + 1] = (p) => {
      if (signal.aborted) throw abortError(signal);
      if (user) user(p);
    };
    const out = fn.apply(this, args);
    if (signal.aborted) throw abortError(signal);
    return out;
  };
}

/** The public functions of a glue module (`load()` returns it, initialized). */
export function api(load) {
  const call = (name, nBefore) => {
    const f = (...args) => {
      const m = load();
      return nBefore === undefined ? m[name](...args) : withSignal(m[name], nBefore)(...args);
    };
    Object.defineProperty(f, "name", { value: name });
    return f;
  };
  return {
    version: call("version"),
    rdp: call("rdp"),
    account: call("account"),
    calibrate: call("calibrate"),
    noisePreview: call("noisePreview"),
    inspectCsv: call("inspectCsv"),
    synthesizeCsv: call("synthesizeCsv", 1),
    inspectImages: call("inspectImages", 1),
    synthesizeImages: call("synthesizeImages", 1),
    gmmRelease: call("gmmRelease", 1),
    gmmSample: call("gmmSample"),
    federatedSimulate: call("federatedSimulate", 1),
    federatedKeygen: call("federatedKeygen"),
    federatedContribute: call("federatedContribute", 3),
    federatedAggregate: call("federatedAggregate"),
    audit: call("audit", 0),
  };
}

/** The glue's Dataset with `signal` honoured in synthesize and utilityCheck. */
export function datasetClass(Base, load) {
  return class Dataset extends Base {
    constructor(input, options) {
      load();
      super(input, options);
    }
    synthesize(options, onProgress) {
      return withSignal(super.synthesize, 0).call(this, options, onProgress);
    }
    utilityCheck(options, onProgress) {
      return withSignal(super.utilityCheck, 0).call(this, options, onProgress);
    }
  };
}
