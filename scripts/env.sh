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
export PATH="$PATH:$VENV/bin"
export B2ND_PYTHON="$VENV/bin/python"
