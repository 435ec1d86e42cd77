#!/usr/bin/env bash
# The Rust half of the test suite (`npm test` runs it first, then the wasm, Node and browser
# tests): installs the wasm32 target, then formatting, lints, docs, the wasm32 build of the
# library and the native test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d ../shared/reference ] && [ -z "${PRIVMIX_SHARED:-}" ]; then
  echo "error: ../shared (reference values and datasets) must sit beside the checkout, or set PRIVMIX_SHARED" >&2
  exit 1
fi

echo "== setup: wasm32 target"
rustup target add wasm32-unknown-unknown

echo "== cargo fmt --check"
cargo fmt --check

echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

echo "== cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib

echo "== wasm32 build of the library, and clippy on the bindings (features wasm-accountant, wasm, wasm-extra)"
cargo build --target wasm32-unknown-unknown --lib
cargo clippy --target wasm32-unknown-unknown --lib --features wasm-accountant -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib --features wasm -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib --features wasm-extra -- -D warnings

echo "== clap stays out of the wasm32 dependency tree"
if cargo tree --target wasm32-unknown-unknown --features wasm-extra -e normal | grep -q ' clap '; then
  echo "error: clap is in the wasm32 dependency tree" >&2
  exit 1
fi

echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --all-targets 2>&1 | tee "$log"
read -r passed failed < <(awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } } END { print p + 0, f + 0 }' "$log")
echo "tests: ${passed} passed, ${failed} failed"
