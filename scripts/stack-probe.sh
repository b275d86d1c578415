#!/usr/bin/env bash
# How small a caller's thread stack each library's calls fit: builds tests-c/test_small_stack.c
# against this library and against the reference wheel with every codec's thread (zlib's too) at
# each size given, runs both, and prints whether each passed or how it died.
#
# Usage: bash scripts/stack-probe.sh KiB [KiB...]     e.g. bash scripts/stack-probe.sh 32 64 128
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
[ $# -gt 0 ] || { echo "usage: $0 KiB [KiB...]" >&2; exit 2; }
cargo build --release --locked >/dev/null 2>&1
b2nd_soname_link
wheel="$("$B2ND_PYTHON" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '%-6s %-22s %-22s\n' KiB b2nd reference
for kib in "$@"; do
  defs=(-DSMALL_STACK_KIB="$kib" -DZLIB_STACK_KIB="$kib" -D_POSIX_C_SOURCE=200809L)
  cc -O2 -std=c99 "${defs[@]}" tests-c/test_small_stack.c -Iinclude -Ltarget/release -lb2nd \
    -Wl,-rpath,"$PWD/target/release" -lpthread -o "$work/ours"
  cc -O2 -std=c99 "${defs[@]}" tests-c/test_small_stack.c -I"$wheel/include" -L"$wheel/lib" \
    -lblosc2 -Wl,-rpath,"$wheel/lib" -lpthread -o "$work/ref"
  outcome() {
    local rc=0
    "$1" >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then echo passed
    elif [ "$rc" -gt 128 ]; then echo "died (signal $((rc - 128)))"
    else echo "failed (exit $rc)"; fi
  }
  printf '%-6s %-22s %-22s\n' "$kib" "$(outcome "$work/ours")" "$(outcome "$work/ref")"
done
