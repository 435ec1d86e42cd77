#!/usr/bin/env bash
# The PLD calibration as wasm32 in Node: builds the cdylib (release) and times it (run.mjs).
# usage: bash bench/pld-wasm/run.sh
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TD="${CARGO_TARGET_DIR:-$ROOT/target}"
CARGO_TARGET_DIR="$TD" cargo build --release -q --target wasm32-unknown-unknown --manifest-path "$HERE/Cargo.toml"
node "$HERE/run.mjs" "$TD/wasm32-unknown-unknown/release/privmix_pld_wasm_bench.wasm"
