#!/usr/bin/env bash
# Runs a command with some tools hidden from PATH, as on a fresh machine that lacks them:
#   bash scripts/without-tools.sh wasm-opt wasm2wat -- bash scripts/build-wasm.sh
# Every PATH directory that holds a hidden tool is replaced by a temporary directory of links
# to everything else in it, so `command -v TOOL` fails while the rest stays reachable.
set -euo pipefail
hide=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do hide+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "usage: without-tools.sh TOOL... -- COMMAND..." >&2; exit 2; }
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
new_path=""
i=0
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  holds=0
  for t in "${hide[@]}"; do [ -e "$d/$t" ] && holds=1; done
  if [ "$holds" = 1 ]; then
    i=$((i + 1)); shadow="$tmp/$i"; mkdir "$shadow"
    for f in "$d"/* "$d"/.[!.]*; do
      [ -e "$f" ] || continue
      name=$(basename "$f"); skip=0
      for t in "${hide[@]}"; do [ "$name" = "$t" ] && skip=1; done
      [ "$skip" = 1 ] || ln -s "$f" "$shadow/$name"
    done
    d="$shadow"
  fi
  new_path="${new_path:+$new_path:}$d"
done
for t in "${hide[@]}"; do
  if PATH="$new_path" command -v "$t" >/dev/null 2>&1; then
    echo "without-tools: could not hide $t" >&2; exit 2
  fi
done
PATH="$new_path" "$@"
