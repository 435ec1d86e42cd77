#!/usr/bin/env bash
# Prints the shipped wasm32 size of a CSV-only probe and of a CSV + images probe (see
# Cargo.toml): cargo build --release, then wasm-bindgen (drops its describe code and custom
# sections) and wasm-opt -Oz where they are installed, then gzip -9.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-../out/wasm_size_target}"
wasm="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/privmix_wasm_size.wasm"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() {
  cargo build --quiet --release --target wasm32-unknown-unknown "$@"
  local f="$wasm"
  if command -v wasm-bindgen > /dev/null; then
    wasm-bindgen --target web --out-dir "$tmp" "$f" 2> /dev/null && f="$tmp/privmix_wasm_size_bg.wasm"
  fi
  if command -v wasm-opt > /dev/null; then
    wasm-opt -Oz --strip-debug --strip-producers --enable-bulk-memory \
      --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
      "$f" -o "$tmp/opt.wasm" && f="$tmp/opt.wasm"
  fi
  echo "$(wc -c < "$f") $(gzip -9 -c "$f" | wc -c)"
}
read -r base_raw base_gz < <(measure)
read -r img_raw img_gz < <(measure --features images)
steps="cargo build --release (opt-level ${CARGO_PROFILE_RELEASE_OPT_LEVEL:-3})"
command -v wasm-bindgen > /dev/null && steps="$steps, wasm-bindgen"
command -v wasm-opt > /dev/null && steps="$steps, wasm-opt -Oz"
echo "steps: $steps"
echo "| probe | wasm bytes | gzip -9 bytes |"
echo "|---|---:|---:|"
echo "| CSV synthesis only | $base_raw | $base_gz |"
echo "| CSV + images | $img_raw | $img_gz |"
echo "| images add | $((img_raw - base_raw)) | $((img_gz - base_gz)) |"
