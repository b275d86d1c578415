#!/usr/bin/env bash
# Coverage-guided fuzzing of one cargo-fuzz target (fuzz/fuzz_targets/), started from the valid
# inputs that core/tests/fuzz_replay.rs mutates: chunks of every codec and filter, frames written here
# and by the reference (tests/fixtures), b2nd metalayers and arrays, packed and sparse
# super-chunks. They go to fuzz/corpus/<target>/ (kept between runs, not in git) before each run;
# from an empty corpus the frame targets rarely get past a frame's magic bytes.
#
# Usage: bash scripts/fuzz.sh TARGET [SECONDS]   (300 s by default)
#   e.g. bash scripts/fuzz.sh frame_file 600
# Needs a nightly toolchain and cargo-fuzz (rustup toolchain install nightly;
# cargo install cargo-fuzz --locked). A crash leaves its input in fuzz/artifacts/<target>/;
# `cargo +nightly fuzz run -O TARGET fuzz/artifacts/TARGET/crash-...` (in fuzz/) replays it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${1:?usage: bash scripts/fuzz.sh TARGET [SECONDS]}"
seconds="${2:-300}"
[ -f "fuzz/fuzz_targets/$target.rs" ] || {
  echo "no fuzz target '$target'; there are: $(cd fuzz/fuzz_targets && ls | sed 's/\.rs$//' | tr '\n' ' ')" >&2
  exit 2
}
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is needed: cargo install cargo-fuzz --locked" >&2; exit 2; }
mkdir -p fuzz/corpus
# The replay test's output is not wanted here, but its failure is: a body that fails on the seeds
# is a bug to fix before fuzzing.
B2ND_FUZZ_SEEDS="$root/fuzz/corpus" cargo test --quiet -p b2nd-core --test fuzz_replay >/dev/null || {
  echo "core/tests/fuzz_replay.rs fails (cargo test -p b2nd-core --test fuzz_replay shows how); no seeds written" >&2
  exit 1
}
cd fuzz
# GCC's and rustc's AddressSanitizer runtimes disagree about scope poisoning (docs/fuzzing.md).
CFLAGS=-fno-sanitize-address-use-after-scope \
  cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds"
