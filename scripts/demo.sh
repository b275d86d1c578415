#!/usr/bin/env bash
# Builds everything (library, header, C examples) and runs the demo program.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$B2ND_ROOT"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target demo
./build/examples/demo "${@}"
