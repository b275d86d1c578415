#!/usr/bin/env bash
# The whole test suite: Rust tests, the stale-header check, the C tests through
# CTest, and the cross-checks against python-blosc2. Exits non-zero on any failure.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"

echo "== cargo build --release (generates include/*.h)"
cargo build --release --locked
b2nd_soname_link
if git rev-parse --git-dir >/dev/null 2>&1; then
  echo "== generated headers match the committed ones"
  if ! git diff --exit-code --stat -- include/; then
    echo "include/ is stale: a fresh build changed the generated header; commit it." >&2
    exit 1
  fi
fi

echo "== cargo test"
cargo test --locked

echo "== C tests (CMake + CTest)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== cross-checks against python-blosc2"
export B2ND_LIB="$B2ND_ROOT/target/release/libb2nd.so"
# An empty collection (pytest's exit code 5) fails too: the cross-checks must run.
"$B2ND_PYTHON" -m pytest -q tests/python
echo "== all suites passed"
