#!/usr/bin/env bash
# Builds the npm package's wasm and JS glue into pkg/ and the browser app's copy into www/vendor/.
#   cargo build --target wasm32-unknown-unknown (profile wasm-release = release + fat LTO)
#   → wasm-bindgen CLI (installed from crates.io at the exact version in Cargo.lock if missing)
#   → wasm-opt (only where Debian's binaryen is installed).
# Nothing here downloads a prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

if command -v rustup >/dev/null 2>&1; then
  rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
fi
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WB_VERSION\$"; then
  echo "build-wasm: installing wasm-bindgen-cli $WB_VERSION (matches Cargo.lock) from crates.io"
  cargo install wasm-bindgen-cli --version "$WB_VERSION" --force
fi

cargo build --lib --target wasm32-unknown-unknown --profile wasm-release --features wasm
WASM=target/wasm32-unknown-unknown/wasm-release/privmix.wasm

rm -rf pkg/node pkg/web
BINDGEN_FLAGS=(--remove-name-section --remove-producers-section)
wasm-bindgen --target nodejs "${BINDGEN_FLAGS[@]}" --out-dir pkg/node "$WASM"
wasm-bindgen --target web "${BINDGEN_FLAGS[@]}" --out-dir pkg/web "$WASM"

# binaryen before 117 mistypes the externref table that wasm-bindgen emits for current Rust
# (Debian 12 ships 108: the module then fails to instantiate), so older ones are skipped.
WASM_OPT_VERSION=$( (wasm-opt --version 2>/dev/null || true) | grep -oE '[0-9]+' | head -n 1)
if [ -n "${WASM_OPT_VERSION:-}" ] && [ "$WASM_OPT_VERSION" -lt 117 ]; then
  echo "build-wasm: wasm-opt $WASM_OPT_VERSION is too old for this wasm (needs binaryen >= 117); skipping it"
elif command -v wasm-opt >/dev/null 2>&1; then
  for f in pkg/node/privmix_bg.wasm pkg/web/privmix_bg.wasm; do
    wasm-opt -O3 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$f" -o "$f.opt" && mv "$f.opt" "$f" || { rm -f "$f.opt"; echo "build-wasm: wasm-opt failed on $f; keeping it unoptimized"; }
  done
else
  echo "build-wasm: wasm-opt not found (Debian package binaryen); skipping that step"
fi

# The browser app: glue, worker and the wasm inlined as base64, so the page can keep
# connect-src 'none' (no fetch at all, not even for its own wasm).
rm -rf www/vendor && mkdir -p www/vendor
cp pkg/web/privmix.js www/vendor/privmix.js
cp js/worker-core.mjs www/vendor/worker-core.mjs
cp js/worker-client.mjs www/vendor/worker-client.mjs
node scripts/make-demo-data.mjs
node -e '
const fs = require("fs");
const zlib = require("zlib");
const b = zlib.gzipSync(fs.readFileSync("pkg/web/privmix_bg.wasm"), { level: 9 });
fs.writeFileSync("www/vendor/privmix-wasm.js",
  "// The privmix wasm module, gzip-compressed and base64-inlined so that the page needs no\n" +
  "// fetch at all (CSP connect-src none). app-worker.js inflates it with DecompressionStream.\n" +
  "export const wasmGzipBase64 = \"" + b.toString("base64") + "\";\n");
'
echo "build-wasm: pkg/node, pkg/web and www/vendor are ready ($(wc -c < pkg/web/privmix_bg.wasm) bytes of wasm)"
