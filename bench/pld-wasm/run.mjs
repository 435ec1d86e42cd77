// Times the wasm32 PLD calibration in Node (V8, the browser's engine) against the RDP
// calibration in the same run. usage: node run.mjs path/to/privmix_pld_wasm_bench.wasm
import { readFileSync } from "node:fs";
const bytes = readFileSync(process.argv[2]);
const mod = await WebAssembly.compile(bytes);
const imports = {};
for (const imp of WebAssembly.Module.imports(mod)) {
  imports[imp.module] ??= {};
  imports[imp.module][imp.name] = () => { throw new Error(`import ${imp.module}.${imp.name} called`); };
}
const { exports: x } = await WebAssembly.instantiate(mod, imports);
const med = (f) => { const t = []; let r; for (let i = 0; i < 3; i++) { const a = performance.now(); r = f(); t.push(performance.now() - a); } t.sort((a, b) => a - b); return [t[1], r]; };
console.log("| config | ε | t RDP (ms) | σ RDP | t PLD kept (ms) | σ | t PLD std (ms) | σ | std/RDP |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const [name, pool, mix, T] of [["Fashion (5978, 4, 6000)", 5978, 4, 6000], ["q=0.01 (400, 4, 1e4)", 400, 4, 10000], ["T=60000 (5978, 4)", 5978, 4, 60000]]) {
  for (const eps of [10, 1]) {
    const [tr, sr] = med(() => x.rdp_sigma(pool, mix, T, eps));
    const [tk, sk] = med(() => x.pld_sigma(pool, mix, T, eps, 0));
    const [ts, ss] = med(() => x.pld_sigma(pool, mix, T, eps, 1));
    console.log(`| ${name} | ${eps} | ${tr.toFixed(1)} | ${sr.toFixed(5)} | ${tk.toFixed(1)} | ${sk.toFixed(5)} | ${ts.toFixed(1)} | ${ss.toFixed(5)} | ${(ts / tr).toFixed(2)} |`);
  }
}

// The live readout (noisePreview: PLD calibration + the 7-point ε curve) for 10 classes.
console.log("\n| readout: 10 classes × pool (T = all rows) | ε | t preview kept (ms) | σ | t preview std (ms) | σ |");
console.log("|---|---|---|---|---|---|");
for (const pool of [600, 6000]) {
  for (const eps of [10, 1]) {
    const [tk, sk] = med(() => x.preview_sigma(pool, 10, eps, 0));
    const [ts, ss] = med(() => x.preview_sigma(pool, 10, eps, 1));
    console.log(`| ${pool} (T = ${pool * 10}) | ${eps} | ${tk.toFixed(1)} | ${sk.toFixed(5)} | ${ts.toFixed(1)} | ${ss.toFixed(5)} |`);
  }
}
