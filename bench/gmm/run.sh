#!/usr/bin/env bash
# DP-GMM reproduction: builds the CLI and the bench binary (release), prints the Figure-2
# table (§V-A data), the Iris table (§V-B) and the runtime per release, then runs the
# checker-style CLI check (numpy; a venv in bench/.venv is made if needed).
#
# usage: bash bench/gmm/run.sh [REPS]   (default 100, as in the paper)
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REPS="${1:-100}"
DATA="${PRIVMIX_SHARED:-$ROOT/../shared}/data"
(cd "$ROOT" && cargo build --release -q)
CARGO_TARGET_DIR="$ROOT/target" cargo build --release -q --manifest-path "$HERE/Cargo.toml"
"$ROOT/target/release/privmix-gmm-bench" "$REPS" "$DATA/iris.csv"
if [ ! -x "$ROOT/bench/.venv/bin/python" ]; then
  python3 -m venv "$ROOT/bench/.venv"
  "$ROOT/bench/.venv/bin/pip" install -q numpy
fi
echo
echo "## CLI check (files only, independent numpy KL)"
"$ROOT/bench/.venv/bin/python" "$HERE/check_cli.py" "$ROOT/target/release/privmix" 20 1,2
