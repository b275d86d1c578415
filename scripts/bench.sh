#!/usr/bin/env bash
# Benchmark b2nd against the reference libblosc2 side by side (see scripts/bench.py).
set -euo pipefail
# Benchmarks build with the opt-in tuning of .cargo/tuned.toml unless B2ND_TUNED=0 (scripts/env.sh).
: "${B2ND_TUNED:=1}"
export B2ND_TUNED
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
cargo build --release --locked "${B2ND_CARGO_CONFIG[@]}"
b2nd_soname_link
"$B2ND_PYTHON" scripts/bench.py "$@"
