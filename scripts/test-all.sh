#!/usr/bin/env bash
# `npm test`: every test of privmix on a fresh machine.
#   1. Rust: fmt, clippy (native and wasm bindings), rustdoc, the wasm32 build, cargo test.
#   2. The release CLI (for the wasm-vs-native parity tests) and the wasm package (pkg/, www/vendor/).
#   3. Node tests of the npm package (node --test), including the tarball from `npm pack` in
#      consumer projects (Node CJS/ESM, strict TypeScript, @arethetypeswrong/cli).
#   4. Headless Chromium tests of the app and of the tarball in bundlers and pages (webpack,
#      esbuild, Rollup, Vite, an import-map page, a cross-origin copy), with playwright-core
#      driving Debian's chromium.
# It installs what it needs: the wasm32 target, wasm-bindgen-cli at the Cargo.lock version,
# npm packages (the pinned devDependencies: playwright-core, typescript, bundlers), and
# Debian's chromium when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

echo "== Rust"
bash scripts/test.sh | tee "$summary.rust"
rust_line=$(tail -n 1 "$summary.rust"); rm -f "$summary.rust"
read -r rust_passed rust_failed < <(sed -E 's/^tests: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$rust_line")

echo "== release CLI and the wasm package"
cargo build --release --bin privmix
bash scripts/build-wasm.sh

# A fresh machine has no binaryen: the build must not depend on it (nor on any tool that the
# scripts do not install). Build again with wasm-opt hidden and check every output is there.
echo "== the wasm build with optional tools hidden (wasm-opt, binaryen)"
tools_passed=0; tools_failed=0
rm -rf www/vendor pkg
if bash scripts/without-tools.sh wasm-opt wasm2js wasm-dis -- bash scripts/build-wasm.sh \
   && [ -s www/vendor/privmix-wasm.js ] && [ -s www/vendor/full/privmix-wasm.js ] \
   && [ -s pkg/web/privmix_bg.wasm ] && [ -s pkg/full/privmix_bg.wasm ] && [ -s pkg/node/privmix.cjs ] \
   && [ -s pkg/accountant/privmix_bg.wasm ] && [ -s pkg/inline/privmix-wasm.mjs ]; then
  echo "ok: build without wasm-opt"; tools_passed=1
else
  echo "FAILED: the wasm build needs a tool a fresh machine lacks"; tools_failed=1
fi

echo "== npm packages"
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi

if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
fi

tap_node=$(mktemp); tap_browser=$(mktemp)
echo "== Node tests (node --test)"
set +e
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap_node" tests/js/
node_rc=$?
echo "== browser tests (headless chromium)"
node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap_browser" tests/browser/
browser_rc=$?
set -e
count() { awk -v k="# $1" '$0 ~ "^"k" " { n += $3 } END { print n + 0 }' "$tap_node" "$tap_browser"; }
js_passed=$(count pass)
js_failed=$(count fail)
rm -f "$tap_node" "$tap_browser"

passed=$((rust_passed + js_passed + tools_passed))
failed=$((rust_failed + js_failed + tools_failed))
if [ "$node_rc" != 0 ] || [ "$browser_rc" != 0 ]; then failed=$((failed > 0 ? failed : 1)); fi
echo "tests: ${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
