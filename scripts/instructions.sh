#!/usr/bin/env bash
# Instructions one warm call costs in each library, counted by callgrind: a yardstick that, unlike
# a timing, does not move with the machine's load. For a chunk row (see `bench --list`), prints
# the instructions of the second blosc2_compress_ctx and blosc2_decompress_ctx call (the first
# one sets up scratch and state), for this library and for the reference. For a b2nd row
# (b2nd/smooth3d-f8-64MiB/zstd/c5/shuffle, say), the same of b2nd_from_cbuffer and b2nd_to_cbuffer,
# and the total of the row's 200 random 10x10x10 slices (b2nd_get_slice_cbuffer) of the array in
# memory (slice) and saved to a file (file_slice), and of its 200 random single items (item,
# file_item): a few minutes a row, as each call of the first two handles 64 MiB. For a b2nd-geom
# row, b2nd_from_cbuffer and b2nd_to_cbuffer. For a small-call row (small/decompress_ctx/lz4/256B),
# the second call of the row's function (bench.c's small_call), and for a super-chunk cycle row
# (schunk/mem/cycle/lz4/256B) the second append + decompress_chunk cycle (schunk_cycle): the fixed
# cost of a call, in one count.
#
# Usage: bash scripts/instructions.sh ROW [ROW...] [--only SUBSTRING] [--functions N]
#   e.g. bash scripts/instructions.sh chunk/smooth3d-f8/lz4/c5/shuffle/t1
# Rows are counted one after another, about 45 s each. --only adds every one-thread chunk row
# whose name holds SUBSTRING, e.g. --only /c5/shuffle/ for the 25 rows of clevel 5 and shuffle.
# With --functions N it then lists, per row, library and operation, the N functions that cost the
# most instructions themselves (callgrind's self cost), so a total can be traced to where it differs.
# Needs valgrind (apt-get install valgrind). Counts are for the calling thread: use t1 rows.
set -euo pipefail
# Benchmarks build with the opt-in tuning of .cargo/tuned.toml unless B2ND_TUNED=0 (scripts/env.sh).
: "${B2ND_TUNED:=1}"
export B2ND_TUNED
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
rows=()
only=
functions=0
while [ $# -gt 0 ]; do
  case "$1" in
    --functions) functions="${2:?--functions needs a count}"; shift 2 ;;
    --only) only="${2:?--only needs a substring}"; shift 2 ;;
    *) rows+=("$1"); shift ;;
  esac
done
usage="usage: scripts/instructions.sh ROW [ROW...] [--only SUBSTRING] [--functions N]"
[ ${#rows[@]} -gt 0 ] || [ -n "$only" ] || { echo "$usage" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}" >/dev/null 2>&1
b2nd_soname_link
wheel="$("$B2ND_PYTHON" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread -std=c99 benches/bench.c -Iinclude -Ltarget/release -lb2nd -Wl,-rpath,"$PWD/target/release" -lm \
  -o "$work/bench_b2nd"
cc -O2 -pthread -std=c99 benches/bench.c -I"$wheel/include" -L"$wheel/lib" -lblosc2 -Wl,-rpath,"$wheel/lib" -lm \
  -o "$work/bench_ref"
if [ -n "$only" ]; then
  mapfile -t -O "${#rows[@]}" rows < <("$work/bench_b2nd" --list | grep '^chunk/.*/t1$' | grep -F -- "$only")
fi
[ ${#rows[@]} -gt 0 ] || { echo "no one-thread chunk row holds '$only'" >&2; exit 2; }
for row in "${rows[@]}"; do
  printf '%-40s %16s %16s %9s\n' "$row" b2nd ref b2nd/ref
  case "$row" in
    b2nd/*) ops=(from_cbuffer to_cbuffer slice file_slice item file_item) ;;
    b2nd-geom/*) ops=(from_cbuffer to_cbuffer) ;;
    small/*) ops=(call) ;;
    schunk/*/cycle/*) ops=(cycle) ;;
    *) ops=(compress decompress) ;;
  esac
  for op in "${ops[@]}"; do
    declare -A count=()
    # The function whose calls are counted, and which of its calls (callgrind dumps one file per
    # call): the second is the warm one. bench.c's slice_row runs the 200 slices of a row, first
    # on the array in memory and then on the same array saved to a file, then the 200 items the same.
    case "$op" in
      compress | decompress) func="blosc2_${op}_ctx"; call=2 ;;
      call) func=small_call; call=2 ;;
      cycle) func=schunk_cycle; call=2 ;;
      slice) func=slice_row; call=1 ;;
      file_slice) func=slice_row; call=2 ;;
      item) func=slice_row; call=3 ;;
      file_item) func=slice_row; call=4 ;;
      *) func="b2nd_$op"; call=2 ;;
    esac
    for lib in b2nd ref; do
      out="$work/cg.$lib.$func"
      # The four slice_row calls (slices and items, in memory and from the file) come from one run.
      if ! ls "$out".* >/dev/null 2>&1; then
        valgrind --tool=callgrind --toggle-collect="$func" --dump-after="$func" \
          --callgrind-out-file="$out" "$work/bench_$lib" --exact "$row" --reps 2 >/dev/null 2>&1
      fi
      # `ls -v` orders the dumps by call number (out.1, out.2, ..., out.10).
      dump="$(ls -v "$out".* 2>/dev/null | sed -n "${call}p")" || true
      [ -n "$dump" ] || { echo "callgrind recorded no call $call of $func for $row ($lib)" >&2; exit 1; }
      count[$lib]="$(callgrind_annotate "$dump" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')"
      cp "$dump" "$work/warm.$lib.$op"
    done
    printf '%-40s %16s %16s %9.3f\n' "$op" "${count[b2nd]}" "${count[ref]}" \
      "$("$B2ND_PYTHON" -c "print(${count[b2nd]} / ${count[ref]})")"
  done
  rm -f "$work"/cg.*
  if [ "$functions" -gt 0 ]; then
    for op in "${ops[@]}"; do
      for lib in b2nd ref; do
        echo
        echo "$op, $lib: the $functions functions with the highest self cost"
        # callgrind_annotate lists functions by self cost, highest first, but also gives the frames
        # that enclose the measured call (main, bench_run, ...) the whole total: those are dropped.
        # awk stops printing itself rather than a `head` cutting the pipe, which pipefail would
        # turn into a failure of the script.
        callgrind_annotate --inclusive=no --threshold=100 "$work/warm.$lib.$op" |
          awk -v n="$functions" '/PROGRAM TOTALS/ {total = $1; next}
               /^ *[0-9][0-9,]* +\( *[0-9.]+%\) +[^ ]/ && $1 != total && shown < n {print; shown++}'
      done
    done
  fi
done
