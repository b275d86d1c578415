# Sourced by the README commands: makes sure cmake and a Python virtual
# environment with the python-blosc2 oracle are available, installing what is
# missing. Idempotent; needs only python3 (with venv/pip) and network access to PyPI.
set -euo pipefail
B2ND_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${B2ND_VENV:-$B2ND_ROOT/.venv}"
# The oracle: python-blosc2 4.14.1 embeds C-Blosc2 3.3.5, the API this project follows.
PY_REQS=(blosc2==4.14.1 numpy pytest)

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating Python virtual environment in $VENV"
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    # Debian ships venv separately.
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
  fi
fi
if ! "$VENV/bin/python" -c "import blosc2, numpy, pytest" 2>/dev/null; then
  echo "[setup] installing ${PY_REQS[*]} into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "${PY_REQS[@]}"
fi
if ! command -v cmake >/dev/null 2>&1 && [ ! -x "$VENV/bin/cmake" ]; then
  echo "[setup] installing cmake from PyPI into $VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check cmake
fi
# B2ND_TUNED=1 builds with .cargo/tuned.toml: function alignment and scripts/codec-cc, which
# hands LZ4HC's C source to clang 19 (docs/PERFORMANCE.md, "Build tuning"). Off by default; the
# benchmark scripts turn it on. B2ND_CARGO_CONFIG holds the cargo arguments that select it.
B2ND_CARGO_CONFIG=()
if [ "${B2ND_TUNED:-0}" = 1 ]; then
  B2ND_CARGO_CONFIG=(--config "$B2ND_ROOT/.cargo/tuned.toml")
fi
# Tuned builds want clang 19 for LZ4HC; without it cc builds it, the same library but for speed.
if [ "${B2ND_TUNED:-0}" = 1 ] && ! command -v clang-19 >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing clang-19 (the LZ4HC compiler, see scripts/codec-cc)"
    { apt-get update -qq && apt-get install -y -qq clang-19 >/dev/null; } ||
      echo "[setup] clang-19 could not be installed; cc builds LZ4HC instead"
  else
    echo "[setup] no clang-19: cc builds LZ4HC (the same library, a few percent slower there)"
  fi
fi
export PATH="$PATH:$VENV/bin"
export B2ND_PYTHON="$VENV/bin/python"

# Programs linked against target/release/libb2nd.so record its SONAME, libb2nd.so.0, and look
# for that name at run time: scripts that link there call this after `cargo build`.
b2nd_soname_link() {
  local soname
  soname="$(readelf -d "$B2ND_ROOT/target/release/libb2nd.so" | sed -n 's/.*soname: \[\(.*\)\]/\1/p')"
  if [ -n "$soname" ] && [ "$soname" != libb2nd.so ]; then
    ln -sf libb2nd.so "$B2ND_ROOT/target/release/$soname"
  fi
}
