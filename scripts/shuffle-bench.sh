#!/usr/bin/env bash
# The shuffle filters alone, this library against the reference wheel: builds benches/shuffle.c
# against each, runs the two alternately (3 rounds, best per figure) and prints, per item size and
# block size, the GB/s of each library's forward and inverse filter and their ratio (this
# library / reference). Blocks stay in cache, so the figures are the kernels' own; the chunk
# benchmark (scripts/bench.sh) shows what they are worth inside a codec's time.
#
# Usage: bash scripts/shuffle-bench.sh [--bit] [--typesizes T,T,...] [--blocksizes B,B,...]
#   By default byte shuffle of 4, 8 and 16-byte items over blocks of 1000 and 8000 bytes (item
#   counts that are not a multiple of 32) and of 32, 64, 256 and 257 KiB (the last one's rows are
#   not a multiple of 4 KiB apart); --bit times the bitshuffle. Under a minute.
set -euo pipefail
# Benchmarks build with the opt-in tuning of .cargo/tuned.toml unless B2ND_TUNED=0 (scripts/env.sh).
: "${B2ND_TUNED:=1}"
export B2ND_TUNED
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}" >/dev/null 2>&1
b2nd_soname_link
wheel="$("$B2ND_PYTHON" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -std=c99 benches/shuffle.c -Iinclude -Ltarget/release -lb2nd -Wl,-rpath,"$PWD/target/release" \
  -o "$work/ours"
cc -O2 -std=c99 benches/shuffle.c -I"$wheel/include" -L"$wheel/lib" -lblosc2 -Wl,-rpath,"$wheel/lib" \
  -o "$work/ref"
for round in 1 2 3; do
  # Odd rounds run the reference first.
  if [ $((round % 2)) = 1 ]; then order="ref ours"; else order="ours ref"; fi
  for side in $order; do
    "$work/$side" "$@" | sed "s/^/$side\t/" >> "$work/results.tsv"
  done
done
"$B2ND_PYTHON" - "$work/results.tsv" <<'EOF'
import sys
best = {}
for line in open(sys.argv[1]):
    side, kind, ts, bs, fwd, inv = line.split("\t")
    key = (kind, int(ts), int(bs))
    old = best.get((side, key), (0.0, 0.0))
    best[(side, key)] = (max(old[0], float(fwd)), max(old[1], float(inv)))
keys = sorted({k for _, k in best})
print(f"{'filter':<11}{'typesize':>9}{'blocksize':>10} | {'forward GB/s: b2nd':>19}{'ref':>8}{'b2nd/ref':>10}"
      f" | {'inverse GB/s: b2nd':>19}{'ref':>8}{'b2nd/ref':>10}")
for key in keys:
    o, r = best[("ours", key)], best[("ref", key)]
    print(f"{key[0]:<11}{key[1]:>9}{key[2]:>10} | {o[0]:>19.1f}{r[0]:>8.1f}{o[0] / r[0]:>9.3f}x"
          f" | {o[1]:>19.1f}{r[1]:>8.1f}{o[1] / r[1]:>9.3f}x")
EOF
