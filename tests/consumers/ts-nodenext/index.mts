import init, { synthesizeCsv, synthesizeCsvAsync, calibrate, Dataset, gmmRelease, type SynthOptions, type Receipt } from "privmix";
import * as full from "privmix/full";
import accountantInit, { noisePreview } from "privmix/accountant";
import { PrivmixWorker, type ImageFile } from "privmix/worker";

await init();
const options: SynthOptions = { label: "label", epsilon: 2, mechanism: "dpmix", labels: "soft", classWise: true, signal: new AbortController().signal };
const r: { csv: string; receipt: Receipt } = synthesizeCsv("x,label\n1,a\n", options, (p: number) => void p);
const eps: number = r.receipt.epsilon;
const a = await synthesizeCsvAsync("x,label\n1,a\n", { label: "label", projectionDim: 2, mechanism: "projection" });
const s: number = calibrate({ pool: 10, mix: 2, samples: 10, delta: 1e-5, epsilon: 1 }).sigmaX;
const ds = new Dataset("x,label\n1,a\n", { label: "label" });
const rows: number = ds.rows;
const g = gmmRelease("x,label\n1,a\n", { label: "label", epsilon: 1 });
const k = full.federatedKeygen(1).publicKey;
await accountantInit({ module_or_path: new Uint8Array(0) });
const n: number = noisePreview({ classSizes: [10], epsilon: 1, delta: 1e-5, features: 3 }).sigmaX;
const pm = new PrivmixWorker({ url: "worker.mjs" });
const img = await pm.synthesizeImages(new Uint8Array(0), { epsilon: 1, width: 8, maxBytes: 1 << 20 });
const real: Uint8Array = img.private.realPreview;
const files: ImageFile[] = [];
// @ts-expect-error: images take their label from the folders
pm.synthesizeImages(files, { label: "x" });
// @ts-expect-error: an unknown mechanism
synthesizeCsv("", { mechanism: "magic" });
export { eps, a, s, rows, g, k, n, real };
