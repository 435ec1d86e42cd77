// privmix worker side: runs inside a (module) Web Worker and answers the requests that
// PrivmixWorker (worker-client.mjs) posts. `loadModule` instantiates the wasm and resolves
// to the privmix module (the web-target glue after `init`).
//
// Messages in:  {id, op, args}
// Messages out: {id, progress} while running, then {id, result} or {id, error, fatal}.
// The operations are those of js/ops.mjs, plus the loaded dataset's (loadDataset, …).
import { OPS } from "./ops.mjs";

function isBlob(x) {
  return typeof Blob === "function" && x instanceof Blob;
}

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
      const spec = Object.hasOwn(OPS, op) ? OPS[op] : undefined;
      switch (spec ? TABLE : op) {
        case TABLE: {
          // An operation of the table (js/ops.mjs): argument 0 read as its row says, a missing
          // options object as {}, the progress callback after the options.
          if (spec.full) need(m, op);
          const a = [...args];
          if (spec.input) a[0] = await READ[spec.input](a[0]);
          if (spec.options !== undefined) {
            a[spec.options] ??= {};
            if (spec.progress) a[spec.options + 1] = progress;
          }
          result = m[op](...a);
          if (spec.transfer) transfer = bytesIn(result);
          break;
        }
        case "loadDataset": {
          if (dataset) dataset.free();
          dataset = null;
          // A File or Blob is read a slice at a time by the wasm (FileReaderSync, which
          // workers have): the file's bytes are never all in memory beside its table.
          const input = isBlob(args[0]) && typeof FileReaderSync === "function" ? args[0] : await bytesOf(args[0]);
          dataset = new m.Dataset(input, args[1] ?? {});
          result = {
            rows: dataset.rows,
            rowsDropped: dataset.rowsDropped,
            columns: dataset.columns,
            ...dataset.classCounts(),
          };
          break;
        }
        case "synthesizeDataset":
        case "synthesizeDatasetChunks":
        case "utilityCheck":
        case "datasetNoisePreview":
        case "histograms": {
          if (!dataset) {
            throw Object.assign(new Error(`${op}: no dataset is loaded; call loadDataset first`), { name: "InternalError" });
          }
          if (op === "synthesizeDataset") {
            result = dataset.synthesize(args[0] ?? {}, progress);
            transfer = [result.csv.buffer];
          } else if (op === "synthesizeDatasetChunks") {
            // Kept as they come and transferred, not joined: joining would hold the output
            // twice, and a Blob made here is held in the browser's own process as well.
            const chunks = [];
            const receipt = dataset.synthesizeChunks(args[0] ?? {}, (c) => chunks.push(c), progress);
            result = { chunks, receipt };
            transfer = chunks.map((c) => c.buffer);
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

/** The dispatch's case for the operations of the table. */
const TABLE = Symbol("table");

/** How the worker reads argument 0 of an operation (the `input` of its row in js/ops.mjs). */
const READ = {
  bytes: bytesOf,
  images: (x) => (Array.isArray(x) ? filesOf(x) : bytesOf(x)),
  texts: async (list) => {
    const texts = [];
    for (const c of list) texts.push(typeof c === "string" ? c : new TextDecoder().decode(await bytesOf(c)));
    return texts;
  },
};

/** The buffers of the byte arrays in a result and in its `private` part (each once). */
function bytesIn(result) {
  const buffers = new Set();
  for (const part of [result, result?.private]) {
    if (part && typeof part === "object") {
      for (const v of Object.values(part)) if (v instanceof Uint8Array) buffers.add(v.buffer);
    }
  }
  return [...buffers];
}

function need(m, op) {
  if (typeof m[op] !== "function") {
    throw Object.assign(
      new Error(`${op} is in the full build only: this worker loaded the core build (use the default worker of privmix/worker, or a full worker)`),
      { name: "InternalError" },
    );
  }
}
