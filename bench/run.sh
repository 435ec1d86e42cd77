#!/usr/bin/env bash
# privmix benchmarks and paper reproduction: one entry point.
#
#   bash bench/run.sh [--quick]
#
# Creates bench/.venv (numpy, dp-accounting), builds the release binary and the bench-only
# core timer, prepares the data under bench/out/, runs the speed, memory, calibration and
# reproduction measurements, prints Markdown tables and writes them to bench/out/*.md
# (bench/out/results.md holds all of them).
# No pipefail: `zcat | head` ends zcat with SIGPIPE by design.
set -eu

QUICK=""
for a in "$@"; do
  case "$a" in
    --quick) QUICK="--quick" ;;
    *) echo "usage: bash bench/run.sh [--quick]" >&2; exit 2 ;;
  esac
done

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
OUT="$BENCH/out"
DATA="${PRIVMIX_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}"
mkdir -p "$OUT"
log() { echo "[bench] $*" >&2; }

# 1. Python venv with the baselines.
if [ ! -x "$BENCH/.venv/bin/python" ]; then
  log "creating bench/.venv"
  python3 -m venv "$BENCH/.venv"
fi
if ! "$BENCH/.venv/bin/python" -c "import numpy, dp_accounting" 2>/dev/null; then
  log "installing numpy and dp-accounting"
  "$BENCH/.venv/bin/pip" install -q numpy dp-accounting
fi
PY="$BENCH/.venv/bin/python"

# 2. Build (release): the CLI and the bench-only core timer (shares target/).
log "building privmix (release)"
(cd "$ROOT" && cargo build --release -q)
CARGO_TARGET_DIR="$ROOT/target" cargo build --release -q \
  --manifest-path "$BENCH/core_timer/Cargo.toml"

# 3. Data.
if [ ! -s "$OUT/mnist60k.csv" ]; then
  log "writing bench/out/mnist60k.csv (mnist-10k tiled 6x)"
  { zcat "$DATA/mnist-10k.csv.gz" | head -n 1
    for _ in 1 2 3 4 5 6; do zcat "$DATA/mnist-10k.csv.gz" | tail -n +2; done
  } > "$OUT/mnist60k.csv.tmp"
  mv "$OUT/mnist60k.csv.tmp" "$OUT/mnist60k.csv"
fi
zcat "$DATA/mnist-10k.csv.gz" | head -n 8001 > "$OUT/mnist-train8k.csv"
{ zcat "$DATA/mnist-10k.csv.gz" | head -n 1; zcat "$DATA/mnist-10k.csv.gz" | tail -n +8002; } \
  > "$OUT/mnist-test2k.csv"
cp "$DATA/adult/adult.data" "$OUT/adult-train.csv"
# adult.test labels end in '.', e.g. "<=50K." : strip it.
sed -E 's/\.[[:space:]]*$//' "$DATA/adult/adult.test" > "$OUT/adult-test.csv"

# 4. Measurements.
{
  echo "# privmix benchmark results"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -m), privmix $(git -C "$ROOT" rev-parse --short HEAD), mode: ${QUICK:-full}"
  echo
} > "$OUT/header.md"
cat "$OUT/header.md"
log "synthesis speed and peak memory"
"$PY" "$BENCH/bench.py" speed "$OUT" $QUICK
log "calibration speed"
"$PY" "$BENCH/bench.py" calib "$OUT" $QUICK
log "reproduction of Tables 3-4"
"$PY" "$BENCH/repro.py" "$OUT" $QUICK
cat "$OUT/header.md" "$OUT/speed.md" "$OUT/calib.md" "$OUT/repro.md" > "$OUT/results.md"
rm -f "$OUT"/privmix60k.csv* "$OUT"/numpy60k.csv
log "done: tables in bench/out/results.md"
