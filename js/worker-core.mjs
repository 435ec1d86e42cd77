// privmix worker side: runs inside a (module) Web Worker and answers the requests that
// PrivmixWorker (worker-client.mjs) posts. `loadModule` instantiates the wasm and resolves
// to the privmix module (the web-target glue after `init`).
//
// Messages in:  {id, op, args}
// Messages out: {id, progress} while running, then {id, result} or {id, error, fatal}.

async function bytesOf(x) {
  if (typeof x === "string" || x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (x && typeof x.arrayBuffer === "function") return new Uint8Array(await x.arrayBuffer());
  throw new Error("expected a string, Uint8Array, ArrayBuffer, File or Blob");
}

async function filesOf(list) {
  const out = [];
  for (const f of list) {
    const name = f.path ?? f.webkitRelativePath ?? f.name;
    const data = f.data !== undefined ? await bytesOf(f.data) : await bytesOf(f);
    out.push({ name: name || f.name, data });
  }
  return out;
}

/** The bytes of a wasm module inlined as gzip + base64 (the app's pages fetch nothing). */
export async function inflateBase64Gzip(text) {
  const bin = atob(text);
  const gz = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) gz[i] = bin.charCodeAt(i);
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** An Error as a structured-clone-safe record: name, message and the option it names. */
export function errorRecord(e) {
  if (e instanceof Error || (e && typeof e === "object" && "message" in e)) {
    return { name: e.name ?? "Error", message: String(e.message), param: e.param ?? undefined };
  }
  return { name: "Error", message: String(e), param: undefined };
}

/**
 * Answers PrivmixWorker's requests in `scope` (a worker's global). Operations run one at a
 * time in the order they arrive (a synthesis posted right after loadDataset sees that
 * dataset); `{cancel: id}` drops an operation that has not started yet.
 */
export function serve(loadModule, scope = self) {
  let loading = null;
  let dataset = null;
  let queue = Promise.resolve();
  const cancelled = new Set();
  const ready = () => (loading ??= loadModule());
  scope.onmessage = (event) => {
    const data = event.data ?? {};
    if (data.cancel !== undefined) {
      cancelled.add(data.cancel);
      return undefined;
    }
    const run = queue.then(() => handle(data));
    queue = run.catch(() => {});
    return run;
  };
  async function handle({ id, op, args = [] }) {
    if (cancelled.delete(id)) return;
    scope.postMessage({ id, started: true });
    const progress = (fraction) => scope.postMessage({ id, progress: fraction });
    try {
      const m = await ready();
      let result;
      let transfer = [];
      switch (op) {
        case "version":
          result = m.version();
          break;
        case "rdp":
        case "account":
        case "calibrate":
        case "noisePreview":
          result = m[op](args[0]);
          break;
        case "gmmRelease":
        case "federatedSimulate":
          need(m, op);
          result = m[op](await bytesOf(args[0]), args[1] ?? {});
          break;
        case "gmmSample":
          need(m, op);
          result = m.gmmSample(args[0], args[1], args[2]);
          break;
        case "federatedKeygen":
          need(m, op);
          result = m.federatedKeygen(args[0]);
          break;
        case "federatedContribute":
          need(m, op);
          result = m.federatedContribute(await bytesOf(args[0]), args[1], args[2], args[3] ?? {});
          break;
        case "federatedAggregate": {
          need(m, op);
          const texts = [];
          for (const c of args[0]) texts.push(typeof c === "string" ? c : new TextDecoder().decode(await bytesOf(c)));
          result = m.federatedAggregate(texts);
          break;
        }
        case "audit":
          need(m, op);
          result = m.audit(args[0] ?? {}, progress);
          break;
        case "inspectCsv":
          result = m.inspectCsv(await bytesOf(args[0]), args[1]);
          break;
        case "synthesizeCsv":
          result = m.synthesizeCsv(await bytesOf(args[0]), args[1] ?? {}, progress);
          break;
        case "inspectImages": {
          const input = Array.isArray(args[0]) ? await filesOf(args[0]) : await bytesOf(args[0]);
          result = m.inspectImages(input, args[1] ?? {});
          break;
        }
        case "synthesizeImages": {
          const input = Array.isArray(args[0]) ? await filesOf(args[0]) : await bytesOf(args[0]);
          result = m.synthesizeImages(input, args[1] ?? {}, progress);
          const priv = result.private ?? result;
          transfer = [result.zip?.buffer, result.preview?.buffer, priv.realPreview?.buffer].filter(Boolean);
          break;
        }
        case "loadDataset": {
          if (dataset) dataset.free();
          dataset = null;
          const bytes = await bytesOf(args[0]);
          dataset = new m.Dataset(bytes, args[1] ?? {});
          result = {
            rows: dataset.rows,
            rowsDropped: dataset.rowsDropped,
            columns: dataset.columns,
            ...dataset.classCounts(),
          };
          break;
        }
        case "synthesizeDataset":
        case "utilityCheck":
        case "datasetNoisePreview":
        case "histograms": {
          if (!dataset) {
            throw Object.assign(new Error(`${op}: no dataset is loaded; call loadDataset first`), { name: "InternalError" });
          }
          if (op === "synthesizeDataset") {
            result = dataset.synthesize(args[0] ?? {}, progress);
            transfer = [result.csv.buffer];
          } else if (op === "utilityCheck") {
            result = dataset.utilityCheck(args[0] ?? {}, progress);
          } else if (op === "datasetNoisePreview") {
            result = dataset.noisePreview(args[0] ?? {}, args[1]);
          } else {
            result = dataset.histograms(await bytesOf(args[0]));
          }
          break;
        }
        default:
          throw Object.assign(new Error(`unknown operation ${op}`), { name: "InternalError" });
      }
      scope.postMessage({ id, result }, transfer);
    } catch (e) {
      // A wasm trap (RuntimeError) leaves the instance unusable: the client starts a new worker.
      const fatal = e instanceof WebAssembly.RuntimeError;
      scope.postMessage({ id, error: String(e?.message ?? e), errorInfo: errorRecord(e), fatal });
    }
  }
}

function need(m, op) {
  if (typeof m[op] !== "function") {
    throw Object.assign(
      new Error(`${op} is in the full build only: this worker loaded the core build (use the default worker of privmix/worker, or a full worker)`),
      { name: "InternalError" },
    );
  }
}
