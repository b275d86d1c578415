#!/usr/bin/env bash
# How LZ4's speed follows where lz4.c's code lands. For each offset (the bytes past a page
# boundary at which scripts/codec-cc starts each of lz4.c's functions, 16 by default), rebuilds
# lz4-sys with it and prints the benchmark's table for those rows (scripts/bench.py, this library
# against the reference wheel, side by side), then rebuilds with the default. scripts/codec-cc
# says why the offset is pinned and why to 16.
#
# Usage: bash scripts/lz4-layout.sh [OFFSET...] [-- BENCH_ARGS...]
#   OFFSET: a multiple of 16 below 64; by default 0 16 32 48.
#   BENCH_ARGS: passed to scripts/bench.py; by default --only lz4hc/ (the LZ4HC rows, whose
#   decompression is LZ4_decompress_safe and one unshuffle), a few minutes per offset.
set -euo pipefail
# Benchmarks build with the opt-in tuning of .cargo/tuned.toml unless B2ND_TUNED=0 (scripts/env.sh).
: "${B2ND_TUNED:=1}"
export B2ND_TUNED
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
offsets=()
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; bench_args=("$@"); break ;;
    *) offsets+=("$1"); shift ;;
  esac
done
[ ${#offsets[@]} -gt 0 ] || offsets=(0 16 32 48)
[ ${#bench_args[@]} -gt 0 ] || bench_args=(--only lz4hc/)
for off in "${offsets[@]}"; do
  case "$off" in
    0 | 16 | 32 | 48) ;;
    *) echo "offset $off: expected 0, 16, 32 or 48" >&2; exit 2 ;;
  esac
done
# cargo does not see the variable codec-cc reads, so lz4-sys is cleaned to be built again.
# build_at OFFSET builds at that offset; build_at with no argument, at codec-cc's default.
build_at() {
  cargo clean --release -p lz4-sys --quiet
  if [ $# -gt 0 ]; then
    B2ND_LZ4_ENTRY="$1" cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}" --quiet
  else
    env -u B2ND_LZ4_ENTRY cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}" --quiet
  fi
}
restore() {
  echo "rebuilding with the default offset"
  build_at
}
trap restore EXIT
for off in "${offsets[@]}"; do
  echo "== lz4.c's functions at 64-byte boundaries + $off bytes"
  build_at "$off"
  nm target/release/libb2nd.so | awk '$3 == "LZ4_decompress_safe" { printf "LZ4_decompress_safe at 0x%s\n", $1 }'
  "$B2ND_PYTHON" scripts/bench.py "${bench_args[@]}"
done
