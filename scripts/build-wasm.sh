#!/usr/bin/env bash
# Builds the npm package's wasm and JS glue into pkg/ and the browser app's copy into www/vendor/.
#   cargo build --target wasm32-unknown-unknown (profile wasm-release = release + fat LTO)
#   → wasm-bindgen CLI (installed from crates.io at the exact version in Cargo.lock if missing).
# wasm-opt is not used: it saved 0.8 % of the gzipped size with binaryen 132, and Debian 12's
# binaryen 108 breaks the module. The tools this script calls are cargo, rustup, node and POSIX
# utilities; `npm test` runs it once more with optional tools hidden (scripts/without-tools.sh).
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

# Three builds of the same crate: the accountant alone (`wasm-accountant`: rdp, account,
# calibrate, noisePreview) for `privmix/accountant`; the core bindings (`wasm`: accountant,
# CSV and image synthesis, utility check) for the main app page and the npm browser entry; and
# the full bindings (`wasm-extra`: + GMM release and federated) for Node, `privmix/full`, the
# default worker and the app's GMM and Federated pages. The full wasm ships once (pkg/full):
# the Node glue (pkg/node/privmix.cjs) reads it from there.
OUT="${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm-release/privmix.wasm"
mkdir -p target/wasm-core target/wasm-full target/wasm-accountant
if grep -q '^wasm-accountant *=' Cargo.toml; then
  cargo build --lib --target wasm32-unknown-unknown --profile wasm-release --features wasm-accountant
  cp "$OUT" target/wasm-accountant/privmix.wasm
fi
cargo build --lib --target wasm32-unknown-unknown --profile wasm-release --features wasm
cp "$OUT" target/wasm-core/privmix.wasm
if ! grep -q '^wasm-accountant *=' Cargo.toml; then
  echo "build-wasm: WARNING: no wasm-accountant feature in Cargo.toml yet: privmix/accountant ships the core build"
  cp target/wasm-core/privmix.wasm target/wasm-accountant/privmix.wasm
fi
cargo build --lib --target wasm32-unknown-unknown --profile wasm-release --features wasm-extra
cp "$OUT" target/wasm-full/privmix.wasm

rm -rf pkg
BINDGEN_FLAGS=(--remove-name-section --remove-producers-section --no-typescript)
wasm-bindgen --target web "${BINDGEN_FLAGS[@]}" --out-dir pkg/web target/wasm-core/privmix.wasm
wasm-bindgen --target web "${BINDGEN_FLAGS[@]}" --out-dir pkg/full target/wasm-full/privmix.wasm
wasm-bindgen --target web "${BINDGEN_FLAGS[@]}" --out-dir pkg/accountant target/wasm-accountant/privmix.wasm
# The CommonJS glue of the full build, pointed at pkg/full's wasm (js/node.cjs requires it
# on the first call, so nothing is read at require time).
rm -rf target/wasm-node
wasm-bindgen --target nodejs "${BINDGEN_FLAGS[@]}" --out-dir target/wasm-node target/wasm-full/privmix.wasm
mkdir -p pkg/node
node -e '
const fs = require("fs");
const src = fs.readFileSync(process.argv[1], "utf8");
const from = "`${__dirname}/privmix_bg.wasm`";
if (!src.includes(from)) { console.error("build-wasm: the nodejs glue no longer reads " + from + ": update this step"); process.exit(1); }
fs.writeFileSync(process.argv[2], src.replace(from, "`${__dirname}/../full/privmix_bg.wasm`"));
' target/wasm-node/privmix.js pkg/node/privmix.cjs
cmp -s target/wasm-node/privmix_bg.wasm pkg/full/privmix_bg.wasm || { echo "build-wasm: the nodejs and web wasm differ"; exit 1; }

# The table of operations (js/ops.mjs) as CommonJS, for js/node.cjs (js/ops.cjs).
node --input-type=module -e '
import { writeFileSync } from "node:fs";
import { OPS } from "./js/ops.mjs";
writeFileSync("js/ops.cjs",
  "// Written by scripts/build-wasm.sh from js/ops.mjs (the table of operations): edit that file.\n" +
  "\"use strict\";\nmodule.exports = " + JSON.stringify(OPS, null, 2) + ";\n");
'

# The JS layer over the glue (js/wrap.mjs: AbortSignal in the options) as CommonJS, for
# js/node.cjs (js/wrap.cjs), so that both entries run the same wrappers.
node -e '
const fs = require("fs");
let src = fs.readFileSync("js/wrap.mjs", "utf8");
const imp = "import { OPS } from \"./ops.mjs\";";
const fail = (why) => { console.error("build-wasm: js/wrap.mjs " + why + ": update this step"); process.exit(1); };
if (src.split(imp).length !== 2) fail("no longer imports OPS in one line");
src = src.replace(imp, "const OPS = require(\"./ops.cjs\");");
const names = [...src.matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
src = src.replace(/^export function /gm, "function ");
if (/^\s*(import|export)\b/m.test(src)) fail("has an import or export this step does not convert");
fs.writeFileSync("js/wrap.cjs",
  "// Written by scripts/build-wasm.sh from js/wrap.mjs: edit that file.\n\"use strict\";\n" +
  src + "\nmodule.exports = { " + names.join(", ") + " };\n");
'

# The hand-written types (js/*.d.ts) as CommonJS declarations for `require` (js/*.d.cts).
for f in js/*.d.ts; do
  sed -E 's#(from "\./[a-z-]+)\.js"#\1.cjs"#g' "$f" > "${f%.d.ts}.d.cts"
done

inline_wasm() { # $1 = wasm file, $2 = output module
  node -e '
const fs = require("fs");
const zlib = require("zlib");
const b = zlib.gzipSync(fs.readFileSync(process.argv[1]), { level: 9 });
fs.writeFileSync(process.argv[2],
  "// The privmix wasm module, gzip-compressed and base64-inlined so that the page needs no\n" +
  "// fetch at all (CSP connect-src none). The worker inflates it with DecompressionStream.\n" +
  "export const wasmGzipBase64 = \"" + b.toString("base64") + "\";\n");
' "$1" "$2"
}
# privmix/inline: the core wasm inside a JS module (no asset to serve).
mkdir -p pkg/inline
inline_wasm pkg/web/privmix_bg.wasm pkg/inline/privmix-wasm.mjs

# The browser app: glue, worker and the wasm inlined as base64, so the page can keep
# connect-src 'none' (no fetch at all, not even for its own wasm).
rm -rf www/vendor && mkdir -p www/vendor/full
cp pkg/web/privmix.js www/vendor/privmix.js
inline_wasm pkg/web/privmix_bg.wasm www/vendor/privmix-wasm.js
cp pkg/full/privmix.js www/vendor/full/privmix.js
inline_wasm pkg/full/privmix_bg.wasm www/vendor/full/privmix-wasm.js
cp js/worker-core.mjs www/vendor/worker-core.mjs
cp js/worker-client.mjs www/vendor/worker-client.mjs
cp js/ops.mjs www/vendor/ops.mjs
node scripts/make-demo-data.mjs
echo "build-wasm: pkg/ and www/vendor are ready ($(wc -c < pkg/accountant/privmix_bg.wasm) bytes of accountant wasm, $(wc -c < pkg/web/privmix_bg.wasm) core, $(wc -c < pkg/full/privmix_bg.wasm) full)"
