#!/usr/bin/env bash
# Client harness: python-blosc2 4.14.1, built from its PyPI sdist against an installed
# Blosc2-compatible library (USE_SYSTEM_BLOSC2=1, found with pkg-config), runs its own
# test suite; the same suite on the PyPI wheel is the reference, and compare.py fails
# when a test passes on the reference but not on the library under test.
#
# usage: scripts/clients-python.sh --prefix DIR [--reference-only|--b2nd-only]
#                                  [--jobs N] [--files PATTERN] [--timeout SECONDS]
#   --prefix DIR      the install prefix of the library under test: it has
#                     lib/pkgconfig/blosc2.pc (or lib64/, share/), include/ and the library
#   --reference-only  only run the reference side (no --prefix needed)
#   --b2nd-only       only run the b2nd side, and compare with the last reference run
#   --jobs N          pytest sessions (one per test file) at a time; default 2
#   --files PATTERN   only the test files whose path (e.g. tests/ndarray/test_x.py, or
#                     doctest/blosc2.core) matches this glob, or contains it
#   --timeout S       per-session time limit; default 600
# Needs python3 (3.11+, with venv), a C compiler, pkg-config, and PyPI. Work dir:
# target/clients/python-blosc2/ ($B2ND_CLIENTS_WORK overrides it). Incremental: the venvs,
# the sdist and the built wheel are reused while their inputs are unchanged; the wheel
# is rebuilt only when the prefix's headers (or pkg-config version, or SONAME) change,
# since the extension links the library dynamically.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARNESS="$ROOT/clients/python-blosc2"
WORK="${B2ND_CLIENTS_WORK:-$ROOT/target/clients/python-blosc2}"
# shared/ lies beside the repository, on developer machines and in CI alike.
SHARED_CLIENTS="${B2ND_SHARED_CLIENTS:-$ROOT/../shared/clients}"
PYTHON="${PYTHON:-python3}"

BLOSC2_VERSION=4.14.1
SDIST_SHA256=b5adb408854260acf64aca5c351ab1307bcb7c71d112e3049d8541c1e2f9b222
# Sources python-blosc2's CMake would fetch from git at build time: miniexpr (required),
# and miniexpr's own SLEEF and minicc (libtcc) fetches. Without the last two the build
# turns SLEEF and the TCC JIT off; the wheel has both, so the comparison says so.
MINIEXPR_TAR=miniexpr-f0b8c947.tar.gz
SLEEF_TAR=sleef-7623d6cf.tar.gz
MINICC_TAR=minicc-695ad1e6.tar.gz
# Bump when the way the wheel is built changes, to invalidate built wheels.
BUILD_RECIPE=1

PREFIX="" SIDES="reference b2nd" JOBS=2 FILES="" TIMEOUT=600
usage() { sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --reference-only) SIDES="reference"; shift ;;
    --b2nd-only) SIDES="b2nd"; shift ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --files) FILES="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "clients-python: unknown argument $1" >&2; usage ;;
  esac
done
has_side() { [[ " $SIDES " == *" $1 "* ]]; }
if has_side b2nd; then
  [ -n "$PREFIX" ] || { echo "clients-python: --prefix DIR is required" >&2; usage; }
  PREFIX="$(cd "$PREFIX" && pwd)"
fi

mkdir -p "$WORK"
PHASES="$WORK/phases.tsv"
: > "$PHASES"
phase_start() { PHASE_NAME="$1"; PHASE_T0=$(date +%s); echo "== $1"; }
phase_end() {
  local dt=$(( $(date +%s) - PHASE_T0 ))
  printf '%s\t%s\n' "$PHASE_NAME" "$dt" >> "$PHASES"
  echo "== $PHASE_NAME: ${dt}s"
}
sha() { sha256sum "$@" | cut -d' ' -f1; }
pip_q() { "$1/bin/python" -m pip -q --disable-pip-version-check "${@:2}"; }

# make_venv DIR STAMP REQS...: (re)creates DIR with the requirement files installed,
# unless DIR/.stamp already holds STAMP.
make_venv() {
  local dir="$1" stamp="$2"; shift 2
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then
    echo "reusing $dir"; return
  fi
  rm -rf "$dir"
  if ! "$PYTHON" -m venv "$dir" 2>/dev/null; then
    # Debian ships venv separately.
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    "$PYTHON" -m venv "$dir"
  fi
  # The constraint keeps what pulls blosc2 in as a dependency (tables does)
  # on the version under test, not PyPI's newest.
  local req; for req in "$@"; do pip_q "$dir" install -c "$CONSTRAINTS" -r "$req"; done
  echo "$stamp" > "$dir/.stamp"
}

PYVER="$("$PYTHON" -c 'import sys; print(sys.version)')"
CONSTRAINTS="$WORK/constraints.txt"
echo "blosc2==$BLOSC2_VERSION" > "$CONSTRAINTS"
DEPS_STAMP="$(sha "$HARNESS/requirements.txt") $PYVER blosc2==$BLOSC2_VERSION"
SDIST="$WORK/cache/blosc2-$BLOSC2_VERSION.tar.gz"
SUITE="$WORK/suite"

# --- the build venv and the sdist (both sides run the sdist's tests) -----------------
phase_start "venv+deps"
make_venv "$WORK/venv-build" "$(sha "$HARNESS/requirements-build.txt") $PYVER" \
  "$HARNESS/requirements-build.txt"
if [ ! -f "$SDIST" ] || [ "$(sha "$SDIST")" != "$SDIST_SHA256" ]; then
  rm -f "$SDIST"; mkdir -p "$WORK/cache"
  # pip's own client and index, with the hash pinned; --no-build-isolation lets pip read
  # the sdist's metadata with the build venv's tools instead of installing them again.
  echo "blosc2==$BLOSC2_VERSION --hash=sha256:$SDIST_SHA256" > "$WORK/cache/sdist.txt"
  pip_q "$WORK/venv-build" download --no-deps --no-binary blosc2 --no-build-isolation \
    --require-hashes -r "$WORK/cache/sdist.txt" -d "$WORK/cache"
fi
[ "$(sha "$SDIST")" = "$SDIST_SHA256" ] || { echo "clients-python: sdist hash mismatch" >&2; exit 1; }
# The suite is the sdist without src/: pytest then can only import the installed blosc2.
if [ "$(cat "$SUITE/.stamp" 2>/dev/null)" != "$SDIST_SHA256" ]; then
  rm -rf "$SUITE"; mkdir -p "$SUITE"
  tar -C "$SUITE" --strip-components=1 -xzf "$SDIST"
  rm -rf "$SUITE/src"
  echo "$SDIST_SHA256" > "$SUITE/.stamp"
fi
if has_side reference; then
  make_venv "$WORK/venv-ref" "$DEPS_STAMP" "$HARNESS/requirements.txt"
  ref_version="$("$WORK/venv-ref/bin/python" -c \
    'import importlib.metadata as m; print(m.version("blosc2"))' 2>/dev/null || true)"
  if [ "$ref_version" != "$BLOSC2_VERSION" ]; then
    pip_q "$WORK/venv-ref" install --no-deps --only-binary blosc2 --force-reinstall \
      "blosc2==$BLOSC2_VERSION"
  fi
  "$WORK/venv-ref/bin/python" -m pip check
fi
if has_side b2nd; then
  make_venv "$WORK/venv-b2nd" "$DEPS_STAMP" "$HARNESS/requirements.txt"
fi
phase_end

# run_side SIDE VENV [KEY=VALUE...]: the suite, one session per file, into results/SIDE.
run_side() {
  local side="$1" venv="$2"; shift 2
  local envs=() kv; for kv in "$@"; do envs+=(--env "$kv"); done
  "$PYTHON" "$HARNESS/run_sessions.py" --python "$venv/bin/python" --suite "$SUITE" \
    --out "$WORK/results/$side" --jobs "$JOBS" --timeout "$TIMEOUT" --files "$FILES" \
    --history "$WORK/durations-$side.json" ${envs[@]+"${envs[@]}"}
}
# What the reference results depend on; a --b2nd-only run compares only with a match.
REF_KEY="$SDIST_SHA256 $DEPS_STAMP $(cat "$HARNESS/run_sessions.py" "$HARNESS/record_plugin.py" | sha256sum | cut -c1-16)"

# --- reference: the PyPI wheel, with its bundled C-Blosc2 --------------------------
if has_side reference; then
  phase_start "reference run"
  run_side reference "$WORK/venv-ref"
  echo "$REF_KEY" > "$WORK/results/reference/key"
  phase_end
fi

# --- b2nd: the sdist built on the prefix's library ----------------------------------
if has_side b2nd; then
  phase_start "build"
  export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig:$PREFIX/lib64/pkgconfig:$PREFIX/share/pkgconfig"
  if ! command -v pkg-config >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq pkg-config >/dev/null
  fi
  pkg-config --print-errors --atleast-version=3.3.0 blosc2
  LIBDIR="$(cd "$(pkg-config --variable=libdir blosc2)" && pwd -P)"
  INCDIR="$(pkg-config --variable=includedir blosc2)"
  PC_VERSION="$(pkg-config --modversion blosc2)"
  SONAME="$(readelf -d "$LIBDIR/libblosc2.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
  echo "blosc2.pc $PC_VERSION: libdir $LIBDIR (SONAME $SONAME), includedir $INCDIR"
  # Only the Blosc2 headers, not the rest of a shared include dir such as /usr/include.
  HEADERS_HASH="$(cd "$INCDIR" && { find blosc2.h b2nd.h blosc2 -type f 2>/dev/null || true; } |
    LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -d' ' -f1)"
  DEPS="$WORK/deps"
  OPTIONAL=""
  for tar in "$SLEEF_TAR" "$MINICC_TAR"; do
    [ -f "$SHARED_CLIENTS/$tar" ] && OPTIONAL+=" $tar"
  done
  BUILD_KEY="$(echo "$BLOSC2_VERSION $SDIST_SHA256 $HEADERS_HASH $PC_VERSION $SONAME $BUILD_RECIPE" \
    "$(sha "$HARNESS/requirements-build.txt")$OPTIONAL" | sha256sum | cut -c1-16)"
  WHEELDIR="$WORK/wheel/$BUILD_KEY"
  if ! ls "$WHEELDIR"/blosc2-*.whl >/dev/null 2>&1; then
    # unpack TAR NAME: the archive's tree as $DEPS/NAME, whether or not it has a top dir.
    unpack() {
      rm -rf "$DEPS/$2" "$DEPS/$2.tmp"; mkdir -p "$DEPS/$2.tmp"
      tar -C "$DEPS/$2.tmp" -xzf "$SHARED_CLIENTS/$1"
      local top=("$DEPS/$2.tmp"/*)
      if [ ${#top[@]} = 1 ] && [ -d "${top[0]}" ]; then mv "${top[0]}" "$DEPS/$2"; rm -rf "$DEPS/$2.tmp"
      else mv "$DEPS/$2.tmp" "$DEPS/$2"; fi
    }
    [ -f "$SHARED_CLIENTS/$MINIEXPR_TAR" ] ||
      { echo "clients-python: $SHARED_CLIENTS/$MINIEXPR_TAR is missing" >&2; exit 1; }
    unpack "$MINIEXPR_TAR" miniexpr
    # No git fetch may happen: every FetchContent source is given, or its feature is off.
    CMAKE_DEFS=(-C cmake.define.FETCHCONTENT_FULLY_DISCONNECTED=ON
                -C "cmake.define.FETCHCONTENT_SOURCE_DIR_MINIEXPR=$DEPS/miniexpr")
    if [ -f "$SHARED_CLIENTS/$SLEEF_TAR" ]; then
      unpack "$SLEEF_TAR" sleef
      CMAKE_DEFS+=(-C "cmake.define.FETCHCONTENT_SOURCE_DIR_SLEEF=$DEPS/sleef")
    else
      echo "NOTE: no $SLEEF_TAR in $SHARED_CLIENTS: building miniexpr without SLEEF" >&2
      CMAKE_DEFS+=(-C cmake.define.MINIEXPR_USE_SLEEF=OFF)
    fi
    if [ -f "$SHARED_CLIENTS/$MINICC_TAR" ]; then
      unpack "$MINICC_TAR" minicc
      CMAKE_DEFS+=(-C "cmake.define.FETCHCONTENT_SOURCE_DIR_TINYCC=$DEPS/minicc")
    else
      echo "NOTE: no $MINICC_TAR in $SHARED_CLIENTS: building miniexpr without the TCC JIT" >&2
      CMAKE_DEFS+=(-C cmake.define.MINIEXPR_ENABLE_TCC_JIT=OFF)
    fi
    rm -rf "$WORK/wheel" "$WORK/build"; mkdir -p "$WHEELDIR"
    # --no-cache-dir: pip's wheel cache must never hand back a wheel built on other headers.
    if ! PATH="$WORK/venv-build/bin:$PATH" USE_SYSTEM_BLOSC2=1 \
         "$WORK/venv-build/bin/python" -m pip wheel --disable-pip-version-check --no-cache-dir \
         --no-build-isolation --no-deps -v -w "$WHEELDIR" "${CMAKE_DEFS[@]}" \
         -C "build-dir=$WORK/build" "$SDIST" > "$WORK/build.log" 2>&1; then
      tail -40 "$WORK/build.log"; rm -rf "$WHEELDIR"
      echo "clients-python: the python-blosc2 build failed; log: $WORK/build.log" >&2; exit 1
    fi
    rm -rf "$WORK/build"
  fi
  WHEEL="$(ls "$WHEELDIR"/blosc2-*.whl)"
  echo "wheel: $WHEEL"
  if [ "$(cat "$WORK/venv-b2nd/.wheel" 2>/dev/null)" != "$BUILD_KEY" ]; then
    pip_q "$WORK/venv-b2nd" install --no-deps --force-reinstall "$WHEEL"
    echo "$BUILD_KEY" > "$WORK/venv-b2nd/.wheel"
  fi
  "$WORK/venv-b2nd/bin/python" -m pip check
  # The extension must link the prefix's libblosc2, never a bundled C-Blosc2.
  # On failure the wheel is reinstalled next time: something else got into the venv.
  link_fail() { rm -f "$WORK/venv-b2nd/.wheel"; echo "clients-python: FAIL: $*" >&2; exit 1; }
  PKGDIR="$("$WORK/venv-b2nd/bin/python" -c 'import importlib.util as u, os
print(os.path.dirname(u.find_spec("blosc2").origin))')"
  EXT="$(ls "$PKGDIR"/blosc2_ext*.so)"
  if ls "$PKGDIR"/lib/libblosc2* >/dev/null 2>&1; then
    link_fail "the installed blosc2 bundles its own libblosc2: $(ls "$PKGDIR"/lib | tr '\n' ' ')"
  fi
  # A bundled C-Blosc2 is linked in statically (as in the PyPI wheel): no NEEDED entry.
  if ! readelf -d "$EXT" | grep -q 'NEEDED.*\[libblosc2'; then
    link_fail "$EXT does not load libblosc2: a bundled C-Blosc2 is linked in"
  fi
  LDD_LINE="$(LD_LIBRARY_PATH="$LIBDIR" ldd "$EXT" | grep 'libblosc2' || true)"
  echo "ldd $(basename "$EXT"): ${LDD_LINE:-no libblosc2}"
  LINKED="$(echo "$LDD_LINE" | sed -n 's/.*=> \(\S*\) .*/\1/p')"
  if [ -z "$LINKED" ] || [ "$(dirname "$(readlink -f "$LINKED")")" != "$LIBDIR" ]; then
    link_fail "$EXT does not resolve libblosc2 to $LIBDIR"
  fi
  phase_end

  phase_start "b2nd run"
  run_side b2nd "$WORK/venv-b2nd" "LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  phase_end
fi

# --- compare ------------------------------------------------------------------------
status=0
if has_side b2nd; then
  if [ "$(cat "$WORK/results/reference/key" 2>/dev/null)" != "$REF_KEY" ]; then
    echo "clients-python: no reference results for these inputs: run without --b2nd-only" >&2
    exit 1
  fi
  # Both sides must have run with the same packages, blosc2 apart.
  if ! diff <("$WORK/venv-ref/bin/python" -m pip freeze --exclude blosc2) \
            <("$WORK/venv-b2nd/bin/python" -m pip freeze --exclude blosc2); then
    echo "clients-python: the two venvs differ in packages" >&2; exit 1
  fi
  "$PYTHON" "$HARNESS/compare.py" --reference "$WORK/results/reference" \
    --b2nd "$WORK/results/b2nd" --b2nd-libdir "$LIBDIR" --json "$WORK/summary.json" || status=$?
  echo "summary: $WORK/summary.json"
fi
echo "== wall time per phase (s)"
column -t -s $'\t' "$PHASES" 2>/dev/null || cat "$PHASES"
exit "$status"
