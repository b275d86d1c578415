#!/usr/bin/env bash
# Drop-in check with C-Blosc2's own tests and examples (clients/c-blosc2).
#
# Builds and runs the harness twice, against the reference library and against
# the library under test, each an installed prefix, then compares per program:
#   tests     pass/fail (CTest; CSV-parametrised tests pass when every row does)
#   examples  exit code, stdout line by line (timing lines ignored, see
#             timing_filter), and whether the files the example wrote open and
#             decompress in the *reference* (open_check, built against it).
# Prints a table and totals; exits non-zero when a program that passes against
# the reference does not pass against the library under test (exempt and
# deferred programs are reported but never fail the run), or when an example
# that builds against the reference does not build against it.
#
# Usage: scripts/clients-c.sh [--prefix DIR] [--reference DIR] [--tarball FILE]
#                             [-j N] [--reuse-reference]
#   --prefix     library under test (default: $B2ND_PREFIX)
#   --reference  reference prefix (default: the python-blosc2 wheel's blosc2
#                package directory, found with $B2ND_PYTHON or .venv/bin/python)
#   --reuse-reference  keep the reference side's last results when they came
#                from the same reference prefix (saves half the time while
#                iterating on the library; a full check runs both)
# Outputs land in target/clients/c-blosc2/{reference,b2nd}; diffs of example
# stdout in target/clients/c-blosc2/diffs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARNESS="$ROOT/clients/c-blosc2"
OUT="$ROOT/target/clients/c-blosc2"
PREFIX="${B2ND_PREFIX:-}"
REFERENCE=""
TARBALL=""
JOBS="$(nproc)"
REUSE_REF=0

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --reference) REFERENCE="$2"; shift 2 ;;
    --tarball) TARBALL="$(realpath "$2")"; shift 2 ;;
    -j) JOBS="$2"; shift 2 ;;
    --reuse-reference) REUSE_REF=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

# cmake may live only in the project's venv.
export PATH="$PATH:$ROOT/.venv/bin"
if [ -z "$REFERENCE" ]; then
  PY="${B2ND_PYTHON:-$ROOT/.venv/bin/python}"
  REFERENCE="$("$PY" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')"
fi
if [ -z "$PREFIX" ]; then
  echo "no library under test: pass --prefix DIR or set B2ND_PREFIX" >&2
  exit 2
fi
PREFIX="$(cd "$PREFIX" && pwd)"
REFERENCE="$(cd "$REFERENCE" && pwd)"
START=$SECONDS

# --- build and run one side ---------------------------------------------------
# run_side NAME PREFIX: configure, build (keep going past programs that do not
# compile or link: each is then reported "not built"), run CTest.
run_side() {
  local side="$1" prefix="$2" b="$OUT/$1" t0=$SECONDS pc=""
  for d in lib/pkgconfig lib64/pkgconfig share/pkgconfig; do
    [ -d "$prefix/$d" ] && pc="${pc:+$pc:}$prefix/$d"
  done
  echo "== $side: $prefix"
  mkdir -p "$b"
  # A fresh cache each time: find_package and pkg_check_modules cache what they
  # found, and would keep a previous prefix.  Object files stay, so an
  # unchanged prefix still builds incrementally.
  rm -f "$b/CMakeCache.txt"
  # Only this prefix's blosc2.pc, and no LD_LIBRARY_PATH: the programs must
  # find the library through the RUNPATH the build gives them, nothing else.
  local -a envs=(env -u LD_LIBRARY_PATH "PKG_CONFIG_PATH=$pc")
  "${envs[@]}" cmake -S "$HARNESS" -B "$b" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" ${TARBALL:+-DCLIENT_TARBALL="$TARBALL"} >"$b/configure.log" 2>&1 ||
    { cat "$b/configure.log"; echo "configure failed for $side" >&2; exit 1; }
  grep -E 'pkg-config blosc2|CMake package|falling back|Library under test' "$b/configure.log" |
    sed 's/^/   /' || true
  # Drop the programs of the previous build first: with -k, a program that no
  # longer compiles would otherwise leave its old executable (linked to
  # whatever library was tested last) to be run and counted.
  awk -F'\t' '$4 == "built" {print $5}' "$b/programs.tsv" | xargs -r rm -f
  rm -f "$b/open_check"
  "${envs[@]}" cmake --build "$b" -j"$JOBS" -- -k >"$b/build.log" 2>&1 || true
  # A Blosc2 found elsewhere (a system install) would make the whole run
  # meaningless: make sure a test and an example load this prefix's library.
  local exe so
  for exe in test_api simple; do
    [ -x "$b/$exe" ] || continue
    so="$(env -u LD_LIBRARY_PATH ldd "$b/$exe" | awk '/libblosc2/ {print $3; exit}')"
    case "$so" in
      "$prefix"/*) echo "   $exe loads $so" ;;
      *) echo "$b/$exe loads '$so', not the library in $prefix" >&2; exit 1 ;;
    esac
  done
  rm -f "$b/junit.xml"
  (cd "$b" && "${envs[@]}" ctest -j"$JOBS" --output-junit junit.xml >ctest.log 2>&1) || true
  echo "   $(grep -E 'tests passed|tests failed' "$b/ctest.log" || echo 'ctest did not run')" \
       "($((SECONDS - t0)) s)"
}

mkdir -p "$OUT"
if [ "$REUSE_REF" = 1 ] && [ -f "$OUT/reference/junit.xml" ] &&
   [ "$(cat "$OUT/reference/.prefix" 2>/dev/null)" = "$REFERENCE" ]; then
  echo "== reference: reusing $OUT/reference"
else
  rm -f "$OUT/reference/.prefix"
  run_side reference "$REFERENCE"
  echo "$REFERENCE" >"$OUT/reference/.prefix"
fi
run_side b2nd "$PREFIX"
OPEN_CHECK="$OUT/reference/open_check"
[ -x "$OPEN_CHECK" ] || { echo "open_check did not build against the reference" >&2; exit 1; }

# --- collect results ----------------------------------------------------------
# Per side: STATUS[side:prog] = pass | fail | not built, NOTE[side:prog] = why.
declare -A STATUS NOTE KIND CAT SECS
ORDER=()

collect() {
  local side="$1" b="$OUT/$1" kind prog cat st detail name t s
  declare -A runs=() fails=()
  # junit.xml -> one line per program: runs, failed runs, summed seconds.
  # Slow single runs (> 60 s) and slow programs (summed) are pointed out.
  if [ -f "$b/junit.xml" ]; then
    while read -r prog n nf t; do
      runs[$prog]=$n; fails[$prog]=$nf; SECS[$side:$prog]=$t
    done < <(grep -o '<testcase name="[^"]*" classname="[^"]*" time="[^"]*" status="[^"]*"' "$b/junit.xml" |
      awk -F'"' -v side="$side" '
        { prog = $2; sub(/:.*/, "", prog)
          n[prog]++; t[prog] += $6; if ($8 != "run") nf[prog]++
          if ($6 > 60) printf "   note: %s: %s took %d s\n", side, $2, $6 > "/dev/stderr" }
        END { for (p in n) {
                printf "%s %d %d %.1f\n", p, n[p], nf[p] + 0, t[p]
                if (n[p] > 1 && t[p] > 60)
                  printf "   note: %s: %s, %d runs, %d s in all\n", side, p, n[p], t[p] > "/dev/stderr" } }')
  fi
  while IFS=$'\t' read -r kind prog cat st detail; do
    [ "$kind" = kind ] && continue
    if [ -z "${KIND[$prog]:-}" ]; then ORDER+=("$prog"); fi
    KIND[$prog]=$kind; CAT[$prog]=$cat
    if [ "$st" != built ]; then
      STATUS[$side:$prog]="not built"; NOTE[$side:$prog]="$detail"
    elif [ ! -x "$detail" ]; then
      STATUS[$side:$prog]="not built"
      NOTE[$side:$prog]="$(cmake --build "$b" --target "$prog" 2>&1 |
        grep -E 'error:|undefined reference|cannot find' | head -n1 |
        sed -E 's/^.*(error:|undefined reference)/\1/' | cut -c1-100 || true)"
    elif [ "${runs[$prog]:-0}" = 0 ]; then
      STATUS[$side:$prog]="fail"; NOTE[$side:$prog]="no CTest result"
    elif [ "${fails[$prog]:-0}" != 0 ]; then
      STATUS[$side:$prog]="fail"; NOTE[$side:$prog]="${fails[$prog]}/${runs[$prog]} runs failed"
    else
      STATUS[$side:$prog]="pass"
    fi
  done <"$b/programs.tsv"
}
collect reference
collect b2nd

# Lines of example output that are timings, hence differ from run to run and
# from library to library without saying anything about behaviour.  A line is
# ignored when it has
#   - a throughput: a number followed by [kKMGT]B/s ("2355.2 MB/s"), or
#   - a duration: a number followed by a time unit ending the word: s, sec(s),
#     seconds, ms, us, ns ("0.324 s", "1.6e-06 s"; "3 strings" is kept), or
#   - the per-block record instrument_codec prints, "<cratio> - <cspeed> -
#     <filter speed> - <flags>" (two of its four fields are speeds).
# Also masked, not dropped: the header build date in "Blosc version info:
# 3.3.5 ($Date:: 2026-09-24 #$)", which is the header's, not the behaviour's.
timing_filter() {
  LC_ALL=C grep -v -E \
    -e '[0-9] ?[kKMGT]?B/s' \
    -e '[0-9](\.[0-9]*)?([eE][-+]?[0-9]+)? ?(s|secs?|seconds|ms|us|ns)([^A-Za-z0-9_]|$)' \
    -e '^[-+0-9.e]+ - [-+0-9.e]+ - [-+0-9.e]+ - [0-9]+ *$' |
    sed -E 's/\$Date::[^$]*\$/$Date:: (masked) $/'
}

# Lines that vary from run to run against the reference itself, so they
# cannot tell two libraries apart either (ignored for that example only):
#   zstd_dict  trains its dictionary with 4 threads; the ratio moves in the
#              last digit (33.5x / 33.6x) between runs of the same library.
declare -A UNSTABLE=([zstd_dict]='^Compression ratio:')
unstable_filter() {
  if [ -n "${UNSTABLE[$1]:-}" ]; then grep -v -E "${UNSTABLE[$1]}" || true; else cat; fi
}

# Frame/array files an example left in its working directory (sparse frames
# are directories with the same suffixes).
written_files() {
  [ -d "$1" ] && (cd "$1" && ls -1d -- *.b2frame *.b2nd 2>/dev/null) || true
}

# compare_example PROG: only called when both sides ran it and it passed
# against the reference; turns a b2nd pass into a fail on any difference.
compare_example() {
  local prog="$1" r="$OUT/reference/run/$1" b="$OUT/b2nd/run/$1" notes=() f
  local rc_r rc_b
  rc_r="$(cat "$r/exitcode.txt" 2>/dev/null || echo none)"
  rc_b="$(cat "$b/exitcode.txt" 2>/dev/null || echo none)"
  [ "$rc_r" = "$rc_b" ] || notes+=("exit code $rc_b, reference $rc_r")
  mkdir -p "$OUT/diffs"
  if ! diff <(timing_filter <"$r/stdout.txt" | unstable_filter "$prog") \
            <(timing_filter <"$b/stdout.txt" | unstable_filter "$prog") \
       >"$OUT/diffs/$prog.diff" 2>&1; then
    notes+=("stdout differs ($(grep -c '^[<>]' "$OUT/diffs/$prog.diff") lines, diffs/$prog.diff)")
  else
    rm -f "$OUT/diffs/$prog.diff"
  fi
  for f in $(written_files "$b"); do
    if ! "$OPEN_CHECK" "$b/$f" >/dev/null 2>&1; then
      # Not the library's fault if the reference cannot read its own file either.
      if [ -e "$r/$f" ] && ! "$OPEN_CHECK" "$r/$f" >/dev/null 2>&1; then continue; fi
      notes+=("$f does not open in the reference")
    fi
  done
  for f in $(written_files "$r"); do
    [ -e "$b/$f" ] || notes+=("did not write $f")
  done
  if [ ${#notes[@]} -gt 0 ]; then
    STATUS[b2nd:$prog]="fail"
    NOTE[b2nd:$prog]="$(IFS=';'; echo "${notes[*]}")"
  fi
}

for prog in "${ORDER[@]}"; do
  if [ "${KIND[$prog]}" = example ] && [ "${STATUS[reference:$prog]:-}" = pass ] &&
     [ "${STATUS[b2nd:$prog]:-}" = pass ]; then
    compare_example "$prog"
  fi
done

# --- report -------------------------------------------------------------------
echo
printf '%-42s %-8s %-9s %-10s %-10s %s\n' program kind category reference b2nd note
printf '%.0s-' {1..110}; echo
declare -A N NREF NB2
BAD=()
for prog in "${ORDER[@]}"; do
  k="${KIND[$prog]}"; c="${CAT[$prog]}"
  r="${STATUS[reference:$prog]:-not built}"; b="${STATUS[b2nd:$prog]:-not built}"
  note="${NOTE[b2nd:$prog]:-}"
  if [ "$r" != pass ]; then
    rnote="${NOTE[reference:$prog]:-}"
    [ "$note" = "$rnote" ] && note="ref and b2nd: $rnote" || note="ref: $rnote${note:+; b2nd: $note}"
  fi
  printf '%-42s %-8s %-9s %-10s %-10s %s\n' "$prog" "$k" "$c" "$r" "$b" "$note"
  g="$k/$c"
  N[$g]=$(( ${N[$g]:-0} + 1 ))
  [ "$r" = pass ] && NREF[$g]=$(( ${NREF[$g]:-0} + 1 ))
  [ "$b" = pass ] && NB2[$g]=$(( ${NB2[$g]:-0} + 1 ))
  if [ "$c" = normal ] && [ "$r" = pass ] && [ "$b" != pass ]; then
    BAD+=("$prog: passes against the reference, $b against the library under test")
  elif [ "$k" = example ] && [ "$r" != "not built" ] && [ "$b" = "not built" ]; then
    BAD+=("$prog: builds against the reference, not against the library under test")
  fi
done
echo
for g in test/normal test/exempt test/deferred example/normal; do
  [ -n "${N[$g]:-}" ] || continue
  printf '%-16s ref %3d/%-3d  b2nd %3d/%-3d\n' "${g/\/normal/}:" \
    "${NREF[$g]:-0}" "${N[$g]}" "${NB2[$g]:-0}" "${N[$g]}"
done
t=test/normal; e=example/normal
echo "tests: ref ${NREF[$t]:-0}/${N[$t]:-0}, b2nd ${NB2[$t]:-0}/${N[$t]:-0};" \
     "examples: ref ${NREF[$e]:-0}/${N[$e]:-0}, b2nd ${NB2[$e]:-0}/${N[$e]:-0}" \
     "(exempt and deferred apart, above)"
echo "(counts are programs; a CSV-parametrised test counts once and passes when all its rows do)"
echo "wall time: $((SECONDS - START)) s"
if [ ${#BAD[@]} -gt 0 ]; then
  echo
  echo "FAILED: ${#BAD[@]} program(s) regress against the reference:"
  printf '  %s\n' "${BAD[@]}"
  exit 1
fi
echo "OK: everything that passes against the reference passes against $PREFIX"
