#!/usr/bin/env bash
# Runs every test of privmix on a fresh machine: installs what it needs (the wasm32 target),
# then formatting, lints, docs, the native test suite, and the wasm32 build of the library.
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

echo "== wasm32 build of the library"
cargo build --target wasm32-unknown-unknown --lib

echo "== cargo test"
cargo test --all-targets
