#!/usr/bin/env bash
# Two builds of this library side by side, as scripts/bench.sh puts this library beside the
# reference: the working tree's build (B) against the build of another revision (A), both as
# plugins of benches/bench.c in one benchmark driver process per round (benches/driver.c, row by
# row, the first of the two alternating), and prints per row and metric each build's best and
# mean over the rounds and B/A (for slice_us and call_ns, lower is better).
#
# Why a script: both builds are named libb2nd.so.0 (the library's SONAME). Loaded by two plugins of
# one process, the dynamic loader hands the second plugin the library it already loaded for the
# first, whatever path each plugin was linked against, and the A/B compares a build with itself.
# Build A's copy is therefore renamed libb2na.so.0 (file and SONAME, the same length), which the
# loader keeps apart. LD_DEBUG=files shows both libraries being loaded.
#
# Usage: bash scripts/ab.sh REV [--rounds N] [bench arguments...]
#   REV: a git revision (e.g. HEAD~1); its build goes in a temporary worktree.
#   --rounds N: driver processes, 6 by default.
#   bench arguments: as benches/bench.c takes them, e.g. --only chunk/randint-i4/lz4/c1/shuffle/t1
#   or --only b2nd/smooth3d-f8-64MiB/lz4/c5/shuffle (a few seconds a chunk row and round; b2nd rows
#   build a 64 MiB array per round).
set -euo pipefail
# Benchmarks build with the opt-in tuning of .cargo/tuned.toml unless B2ND_TUNED=0 (scripts/env.sh).
: "${B2ND_TUNED:=1}"
export B2ND_TUNED
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
rev="${1:?usage: bash scripts/ab.sh REV [--rounds N] [bench arguments...]}"
shift
rounds=6
if [ "${1:-}" = --rounds ]; then
  rounds="${2:?--rounds needs a count}"
  shift 2
fi
work="$(mktemp -d)"
cleanup() {
  git worktree remove --force "$work/tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/a" "$work/b"
cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}" --quiet
# Each copy goes under its SONAME, which is what the plugins record and the loader looks for.
b_soname="$("$B2ND_PYTHON" - target/release/libb2nd.so <<'EOF'
import re, sys
print(re.search(rb"libb2nd\.so(\.[0-9]+)?\0", open(sys.argv[1], "rb").read()).group(0)[:-1].decode())
EOF
)"
cp target/release/libb2nd.so "$work/b/$b_soname"
git worktree add --quiet --detach "$work/tree" "$rev"
# Revision A builds with its own tuning file: revisions before the tuning became opt-in carry it
# as .cargo/config.toml, which cargo reads anyway.
a_config=()
if [ "$B2ND_TUNED" = 1 ] && [ -f "$work/tree/.cargo/tuned.toml" ]; then
  a_config=(--config "$work/tree/.cargo/tuned.toml")
fi
(cd "$work/tree" && CARGO_TARGET_DIR="$work/target" cargo build --release --locked "${a_config[@]}" --quiet)
# Revisions before the versioned SONAME are named libb2nd.so; the rename keeps the length.
a_soname="$("$B2ND_PYTHON" - "$work/target/release/libb2nd.so" "$work/a" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
names = set(re.findall(rb"libb2nd\.so(?:\.[0-9]+)?\0", data))
if len(names) != 1 or data.count(next(iter(names))) != 1:
    sys.exit(f"expected the SONAME once in {sys.argv[1]}, found {sorted(names)}")
old = names.pop()
new = old.replace(b"libb2nd", b"libb2na")
open(f"{sys.argv[2]}/{new[:-1].decode()}", "wb").write(data.replace(old, new))
print(new[:-1].decode())
EOF
)"
plugin() { # OUT LIBDIR LIB
  cc -O2 -fPIC -shared -pthread -DBENCH_PLUGIN -std=c99 -Wall -Wextra -Iinclude benches/bench.c \
    -L"$2" -l:"$3" -lm -Wl,-rpath,"$2" -o "$1"
}
plugin "$work/a.so" "$work/a" "$a_soname"
plugin "$work/b.so" "$work/b" "$b_soname"
cc -O2 -std=c99 -Wall -Wextra benches/driver.c -ldl -o "$work/driver"
for round in $(seq "$rounds"); do
  # The driver alternates which library goes first within the process; the processes alternate
  # which one it loads first.
  if [ $((round % 2)) = 1 ]; then
    "$work/driver" "$work/a.so" "$work/b.so" "$work/a.tsv" "$work/b.tsv" 1 --tmp "$work" "$@" >/dev/null
  else
    "$work/driver" "$work/b.so" "$work/a.so" "$work/b.tsv" "$work/a.tsv" 1 --tmp "$work" "$@" >/dev/null
  fi
done
"$B2ND_PYTHON" - "$work/a.tsv" "$work/b.tsv" "$rev" <<'EOF'
import sys
def read(path):
    out = {}
    for line in open(path):
        row, metric, value = line.rstrip("\n").split("\t")
        out.setdefault((row, metric), []).append(float(value))
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
print(f"A = {sys.argv[3]}, B = the working tree; best and mean over the rounds")
print(f"{'row':<62}{'metric':>12} | {'A best':>10}{'B best':>10}{'B/A':>8} | {'A mean':>10}{'B mean':>10}{'B/A':>8}")
for key in sorted(a):
    if key not in b or key[0] == "memcpy":
        continue
    low = key[1] in ("slice_us", "call_ns")
    best = min if low else max
    ab, bb = best(a[key]), best(b[key])
    am, bm = sum(a[key]) / len(a[key]), sum(b[key]) / len(b[key])
    print(f"{key[0]:<62}{key[1]:>12} | {ab:>10.1f}{bb:>10.1f}{bb / ab:>7.3f}x | {am:>10.1f}{bm:>10.1f}{bm / am:>7.3f}x")
EOF
