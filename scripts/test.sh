#!/usr/bin/env bash
# The whole test suite: Rust tests, the stale-header check, the C tests through
# CTest, the cross-checks against python-blosc2, and the clients' own suites
# (C-Blosc2's tests and examples, Caterva 0.5.0's tests, examples and bench,
# python-blosc2's tests) against the installed
# library. Exits non-zero on any failure.
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

echo "== unsafe only where core/src/lib.rs allows it (the C ABI crate is all boundary), each block with a SAFETY comment (clippy)"
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
cargo clippy --release --locked --lib -- -A clippy::all

echo "== the core's API docs build without warnings (missing_docs is denied in core/src/lib.rs)"
RUSTDOCFLAGS=-Dwarnings cargo doc --locked -p b2nd-core --no-deps --quiet

echo "== cargo test"
cargo test --locked

echo "== C tests (CMake + CTest)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== cross-checks against python-blosc2"
export B2ND_LIB="$B2ND_ROOT/target/release/libb2nd.so"
export B2ND_BIN="$B2ND_ROOT/target/release/b2nd"
# An empty collection (pytest's exit code 5) fails too: the cross-checks must run.
"$B2ND_PYTHON" -m pytest -q tests/python

# The drop-in checks: code of the reference's clients, which nobody here wrote, built
# against this library as installed and run beside the reference (clients/).
prefix="$B2ND_ROOT/target/prefix"
echo "== install into $prefix"
rm -rf "$prefix"
cmake --install build --prefix "$prefix" >/dev/null
echo "== clients: C-Blosc2's own tests and examples"
bash scripts/clients-c.sh --prefix "$prefix"
echo "== clients: Caterva 0.5.0's own tests, examples and bench"
bash scripts/clients-caterva.sh --prefix "$prefix"
echo "== clients: python-blosc2's own test suite"
bash scripts/clients-python.sh --prefix "$prefix" --jobs 3
echo "== all suites passed"
