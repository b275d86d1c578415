#!/usr/bin/env bash
# Drop-in check with Caterva 0.5.0's own programs (../shared/clients, see its README).
#
# Builds every program of Caterva 0.5.0's tests/, examples/ and bench/, unchanged,
# against the installed caterva.h and library of a prefix (pkg-config b2nd), then
# runs each (no arguments, as Caterva's CMakeLists run them) in a scratch directory,
# and fails when any does not build or does not exit 0. Caterva's own caterva/caterva.h
# in the archive is deliberately not on the include path: the programs get ours.
# The later API's spelling is checked the same way, against the same installed header:
# the project's own later-API programs (tests-c/test_caterva_api.c,
# test_caterva_b2nd_roundtrip.c, as strict C99 -Wall -Wextra -Werror) are built and run
# after Caterva's.
#
# Usage: scripts/clients-caterva.sh [--prefix DIR] [--tarball FILE] [--skip-bench]
#   --prefix      library under test, an installed prefix (default: $B2ND_PREFIX)
#   --tarball     Caterva's archive (default: ../shared/clients/caterva-0.5.0-tests-examples.tar.gz)
#   --skip-bench  build bench/ but do not run it (bench_get_slice compresses a
#                 3 GB array: about 20 s and 3 GB of memory here)
# Outputs land in target/clients/caterva (build logs, one run directory per program).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/target/clients/caterva"
PREFIX="${B2ND_PREFIX:-}"
TARBALL="$ROOT/../shared/clients/caterva-0.5.0-tests-examples.tar.gz"
RUN_BENCH=1
TIMEOUT=300

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --tarball) TARBALL="$2"; shift 2 ;;
    --skip-bench) RUN_BENCH=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$PREFIX" ]; then
  echo "no library under test: pass --prefix DIR or set B2ND_PREFIX" >&2
  exit 2
fi
PREFIX="$(cd "$PREFIX" && pwd)"
[ -f "$TARBALL" ] || { echo "no archive at $TARBALL" >&2; exit 2; }
START=$SECONDS

pc=""
for d in lib/pkgconfig lib64/pkgconfig share/pkgconfig; do
  [ -d "$PREFIX/$d" ] && pc="${pc:+$pc:}$PREFIX/$d"
done
export PKG_CONFIG_PATH="$pc"
unset LD_LIBRARY_PATH
CFLAGS_PC="$(pkg-config --cflags b2nd)"
LIBS_PC="$(pkg-config --libs b2nd)"
LIBDIR="$(pkg-config --variable=libdir b2nd)"
CC="${CC:-cc}"

rm -rf "$OUT"
mkdir -p "$OUT/src" "$OUT/bin" "$OUT/run"
tar -xzf "$TARBALL" -C "$OUT/src"
SRC="$(dirname "$(find "$OUT/src" -name cutest.h -path '*/tests/*' | head -n1)")/.."
SRC="$(cd "$SRC" && pwd)"
echo "== Caterva 0.5.0 programs from $TARBALL"
echo "   against $PREFIX ($(pkg-config --modversion b2nd))"

declare -a PROGS=() BAD=()
CASES=0 OKS=0
for f in "$SRC"/tests/test_*.c "$SRC"/examples/example_*.c "$SRC"/bench/bench_*.c; do
  PROGS+=("$f")
done

printf '%-28s %-8s %-6s %-8s %s\n' program kind build run note
printf '%.0s-' {1..80}; echo
for f in "${PROGS[@]}"; do
  name="$(basename "$f" .c)"
  kind="$(basename "$(dirname "$f")")"
  exe="$OUT/bin/$name"
  # As Caterva's CMakeLists build them: C, the program's directory on the include
  # path (tests include "cutest.h" and "test_common.h"), linked to the library.
  # $CC unquoted: it may carry flags ("cc -m32", "ccache cc").
  if ! $CC -O2 -std=gnu99 -I"$(dirname "$f")" $CFLAGS_PC "$f" -o "$exe" \
       $LIBS_PC -Wl,-rpath,"$LIBDIR" >"$OUT/$name.build.log" 2>&1; then
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" "$kind" fail - \
      "$(grep -m1 -E "error|undefined reference" "$OUT/$name.build.log" | cut -c1-120)"
    BAD+=("$name: does not build (see $OUT/$name.build.log)")
    continue
  fi
  so="$(ldd "$exe" | awk '/libb2nd/ {print $3; exit}')"
  case "$so" in
    "$PREFIX"/*) ;;
    *) echo "$exe loads '$so', not the library in $PREFIX" >&2; exit 1 ;;
  esac
  if [ "$kind" = bench ] && [ "$RUN_BENCH" = 0 ]; then
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" "$kind" ok skipped "--skip-bench"
    continue
  fi
  d="$OUT/run/$name"
  mkdir -p "$d"
  t0=$SECONDS
  rc=0
  (cd "$d" && timeout "$TIMEOUT" "$exe" >stdout.txt 2>stderr.txt) || rc=$?
  note="$((SECONDS - t0)) s"
  if [ "$kind" = tests ]; then
    # cutest prints one line per parametrised case and a summary.
    # cutest ends with "TEST RESULTS: N tests (K ok, F failed)" and exits with F.
    res="$(grep -a -E -o 'TEST RESULTS: [0-9]+ tests \([0-9]+ ok, [0-9]+ failed\)' "$d/stdout.txt" | tail -n1 || true)"
    if [ -z "$res" ]; then
      [ "$rc" = 0 ] && rc="0 but no cutest summary"
    else
      CASES=$((CASES + $(echo "$res" | awk '{print $3}')))
      OKS=$((OKS + $(echo "$res" | sed -E 's/.*\(([0-9]+) ok.*/\1/')))
    fi
    note="$note; ${res#TEST RESULTS: }"
  fi
  if [ "$rc" = 0 ]; then
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" "$kind" ok pass "$note"
  else
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" "$kind" ok "fail" "exit $rc; $note"
    BAD+=("$name: exit $rc (see $d/stdout.txt, stderr.txt)")
  fi
done
# The later API's spelling, against the same installed header.
for name in test_caterva_api test_caterva_b2nd_roundtrip; do
  f="$ROOT/tests-c/$name.c"
  exe="$OUT/bin/later_$name"
  if ! $CC -O2 -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -I"$ROOT/tests-c" $CFLAGS_PC \
       "$f" -o "$exe" $LIBS_PC -Wl,-rpath,"$LIBDIR" >"$OUT/later_$name.build.log" 2>&1; then
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" later fail - \
      "$(grep -m1 -E "error|undefined reference" "$OUT/later_$name.build.log" | cut -c1-120)"
    BAD+=("$name (later API): does not build (see $OUT/later_$name.build.log)")
    continue
  fi
  d="$OUT/run/later_$name"
  mkdir -p "$d"
  rc=0
  (cd "$d" && timeout "$TIMEOUT" "$exe" >stdout.txt 2>stderr.txt) || rc=$?
  if [ "$rc" = 0 ]; then
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" later ok pass "$(tail -n1 "$d/stdout.txt")"
  else
    printf '%-28s %-8s %-6s %-8s %s\n' "$name" later ok fail "exit $rc"
    BAD+=("$name (later API): exit $rc (see $d/stderr.txt)")
  fi
done
echo "Caterva 0.5.0 test cases: $OKS of $CASES pass; wall time: $((SECONDS - START)) s"
if [ ${#BAD[@]} -gt 0 ]; then
  echo
  echo "FAILED: ${#BAD[@]} program(s):"
  printf '  %s\n' "${BAD[@]}"
  exit 1
fi
echo "OK: all ${#PROGS[@]} Caterva 0.5.0 programs and both later-API programs build unchanged against $PREFIX and pass"
