#!/usr/bin/env bash
# Benchmark b2nd against the reference libblosc2 side by side (see scripts/bench.py).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
cargo build --release --locked
b2nd_soname_link
"$B2ND_PYTHON" scripts/bench.py "$@"
