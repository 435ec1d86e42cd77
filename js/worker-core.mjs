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

export function serve(loadModule, scope = self) {
  let loading = null;
  let dataset = null;
  const ready = () => (loading ??= loadModule());
  scope.onmessage = async (event) => {
    const { id, op, args = [] } = event.data ?? {};
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
          result = m[op](await bytesOf(args[0]), args[1] ?? {});
          break;
        case "gmmSample":
          result = m.gmmSample(args[0], args[1], args[2]);
          break;
        case "federatedKeygen":
          result = m.federatedKeygen(args[0]);
          break;
        case "federatedContribute":
          result = m.federatedContribute(await bytesOf(args[0]), args[1], args[2], args[3] ?? {});
          break;
        case "federatedAggregate": {
          const texts = [];
          for (const c of args[0]) texts.push(typeof c === "string" ? c : new TextDecoder().decode(await bytesOf(c)));
          result = m.federatedAggregate(texts);
          break;
        }
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
          transfer = [result.zip?.buffer, result.preview?.buffer, result.realPreview?.buffer].filter(Boolean);
          break;
        }
        case "loadDataset": {
          if (dataset) dataset.free();
          dataset = null;
          dataset = new m.Dataset(await bytesOf(args[0]), args[1] ?? {});
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
        case "histograms": {
          if (!dataset) throw new Error("no dataset is loaded: call loadDataset first");
          if (op === "synthesizeDataset") {
            result = dataset.synthesize(args[0] ?? {}, progress);
            transfer = [result.csv.buffer];
          } else if (op === "utilityCheck") {
            result = dataset.utilityCheck(args[0] ?? {}, progress);
          } else {
            result = dataset.histograms(await bytesOf(args[0]));
          }
          break;
        }
        default:
          throw new Error(`unknown operation ${op}`);
      }
      scope.postMessage({ id, result }, transfer);
    } catch (e) {
      // A wasm trap (RuntimeError) leaves the instance unusable: the client starts a new worker.
      const fatal = e instanceof WebAssembly.RuntimeError;
      scope.postMessage({ id, error: String(e?.message ?? e), fatal });
    }
  };
}
