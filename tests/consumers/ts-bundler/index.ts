import init, { synthesizeCsv, synthesizeImages, Dataset, type SynthOptions, type PrivmixError, type CsvSummary } from "privmix";
import initInline, * as inline from "privmix/inline";
import initFull, { gmmRelease, federatedSimulate } from "privmix/full";
import initAccountant, { rdp } from "privmix/accountant";
import { createWorker } from "privmix/worker";

await init({ module_or_path: new URL("privmix_bg.wasm", import.meta.url) });
await initInline();
await initFull();
await initAccountant();
const o: SynthOptions = { label: "c", epsilon: 1, mix: "auto", normalize: "public", schema: {} };
const r = synthesizeCsv("a,c\n1,x\n", o);
const im = synthesizeImages(new Uint8Array(0), { epsilon: 1, channels: 3 });
const prev: Uint8Array = im.private.realPreview;
const d = new Dataset("a,c\n1,x\n", { label: "c" });
const u: number = d.utilityCheck({ epsilon: 1, testShare: 0.2, model: "tree" }).syntheticAccuracy;
const g = gmmRelease("a,c\n1,x\n", { label: "c", epsilon: 1, covarianceNoise: "gaussian" });
const f = federatedSimulate("a,c\n1,x\n", { label: "c", epsilon: 1, clients: 3 });
const q: number[] = rdp({ samplingRate: 0.1, noiseMultiplier: 1 }).rdp;
const w = createWorker({ createWorker: () => new Worker("w.js", { type: "module" }) });
const v: Promise<string> = w.version();
const ab = new AbortController();
w.synthesizeCsv(new Blob(["a,c\n"]), { label: "c", signal: ab.signal }).catch((e: PrivmixError) => e.param);
// PrivmixWorker's table operations are derived from the direct declarations: the input is
// widened (a Blob or image Files), nothing else is.
const summary: Promise<CsvSummary> = w.inspectCsv(new Blob(["a\n"]), 10);
w.synthesizeImages([{ name: "0/a.png", data: new Blob([]) }], { epsilon: 1, signal: ab.signal });
w.federatedAggregate([new Blob(["{}"]), "{}", new Uint8Array(0)]);
// @ts-expect-error: the peers' keys stay texts (only the first argument is widened)
w.federatedContribute("a,c\n", "key", [new Blob([])], { label: "c", epsilon: 1 });
// @ts-expect-error: a model is not read from a file
w.gmmSample(new Blob([]), 10);
inline.synthesizeCsv("a,c\n1,x\n", { label: "c" });
const bytes: Promise<Uint8Array> = inline.wasmBytes();
export { r, prev, u, g, f, q, v, bytes, summary };
