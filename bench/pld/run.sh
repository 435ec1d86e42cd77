#!/usr/bin/env bash
# PLD vs RDP bench: builds privmix-pld-bench (release) and prints the table of bench/pld/README.md.
# usage: bash bench/pld/run.sh
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TD="${CARGO_TARGET_DIR:-$ROOT/target}"
CARGO_TARGET_DIR="$TD" cargo build --release -q --manifest-path "$HERE/Cargo.toml"
"$TD/release/privmix-pld-bench"
