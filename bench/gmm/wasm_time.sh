#!/usr/bin/env bash
# Times one GMM release in wasm (V8 via node) against the same release natively is in the
# main bench table. Needs wasm-bindgen-cli matching the wasm-bindgen crate (0.2.130) and node.
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/target/gmm-wasm-bench"
CARGO_TARGET_DIR="$ROOT/target" cargo build --release -q --target wasm32-unknown-unknown \
  --manifest-path "$HERE/wasm/Cargo.toml"
wasm-bindgen --target nodejs --out-dir "$OUT" \
  "$ROOT/target/wasm32-unknown-unknown/release/privmix_gmm_wasm_bench.wasm"
node -e '
const m = require(process.argv[1]);
for (const adj of ["record", "label"]) for (const noise of ["optimized", "iid-gaussian"]) {
  m.release_kl(adj, noise, 1.0, 1n); // warm-up
  const reps = 20; const t = performance.now(); let kl = 0;
  for (let i = 0; i < reps; i++) kl += m.release_kl(adj, noise, 1.0, BigInt(42 + i));
  console.log(`| wasm (node ${process.version}) | ${adj} | ${noise} | ${((performance.now() - t) / reps).toFixed(2)} ms/release (incl. drawing the data) | mean KL ${(kl / reps).toFixed(2)} |`);
}' "$OUT/privmix_gmm_wasm_bench.js"
