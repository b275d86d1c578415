#!/usr/bin/env python3
"""Side-by-side benchmark: b2nd (this library) vs the reference libblosc2 shipped in the
python-blosc2 wheel, on the same data and parameters, in one run.

Builds benches/bench.c twice from the same source (against include/b2nd.h + libb2nd, and against the
wheel's include/ + lib/libblosc2), then runs the two binaries alternately for several rounds and keeps
each library's best figure per row. Prints one table: throughputs, ratios and latencies with
ours/reference ratios (>1 is better for throughput, <1 is better for latency), and memcpy bandwidth.

Usage: python scripts/bench.py [--quick] [--rounds N] [--only SUBSTRING]
(run via scripts/bench.sh, which sets up the environment and builds the release library first)
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIGHER_IS_BETTER = {"cMBps": True, "dMBps": True, "ratio": True, "memcpy_MBps": True, "slice_us": False}


def build(out: pathlib.Path, include: pathlib.Path, libdir: pathlib.Path, lib: str, defines=()) -> None:
    cmd = ["cc", "-O2", *defines, "-std=c99", "-Wall", "-Wextra", f"-I{include}", str(ROOT / "benches" / "bench.c"),
           f"-L{libdir}", f"-l{lib}", "-lm", f"-Wl,-rpath,{libdir}", "-o", str(out)]
    subprocess.run(cmd, check=True)


def run(binary: pathlib.Path, args, tmp: str) -> dict:
    proc = subprocess.run([str(binary), *args, "--tmp", tmp], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"{binary.name} failed with exit code {proc.returncode}")
    rows = {}
    for line in proc.stdout.splitlines():
        row, metric, value = line.split("\t")
        rows[(row, metric)] = float(value)
    return rows


def merge_best(best: dict, new: dict) -> None:
    for key, value in new.items():
        hib = HIGHER_IS_BETTER[key[1]]
        if key not in best or (value > best[key] if hib else value < best[key]):
            best[key] = value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only")
    opts = ap.parse_args()

    import blosc2  # the reference wheel
    wheel = pathlib.Path(blosc2.__file__).parent
    work = pathlib.Path(tempfile.mkdtemp(prefix="b2nd-bench-"))
    ours_bin, ref_bin = work / "bench_b2nd", work / "bench_ref"
    ours_lib = ROOT / "target" / "release" / "libb2nd.so"
    exported = subprocess.run(["nm", "-D", "--defined-only", str(ours_lib)], capture_output=True, text=True).stdout
    defines = []
    for symbol, define in ((" blosc2_schunk_new", "-DBENCH_NO_SCHUNK"), (" b2nd_open", "-DBENCH_NO_B2ND")):
        if symbol not in exported:
            print(f"note: libb2nd does not export{symbol}: {define[9:].lower().replace('_', ' ')} rows left out")
            defines.append(define)
    build(ours_bin, ROOT / "include", ROOT / "target" / "release", "b2nd", defines)
    build(ref_bin, wheel / "include", wheel / "lib", "blosc2", defines)

    args = (["--quick"] if opts.quick else []) + (["--only", opts.only] if opts.only else [])
    ours, ref = {}, {}
    for _ in range(opts.rounds):  # alternate the libraries so machine noise hits both alike
        merge_best(ours, run(ours_bin, args, str(work)))
        merge_best(ref, run(ref_bin, args, str(work)))

    print(f"reference: C-Blosc2 {blosc2.blosclib_version.split()[0]} (python-blosc2 {blosc2.__version__} wheel)")
    print(f"memcpy bandwidth (ceiling): {ours.get(('memcpy', 'memcpy_MBps'), 0):.0f} MB/s")
    header = f"{'row':58} {'metric':9} {'b2nd':>10} {'ref':>10} {'b2nd/ref':>9}"
    print(header)
    print("-" * len(header))
    worst = {}
    for key in sorted(ref):
        row, metric = key
        if row == "memcpy":
            continue
        o, r = ours.get(key), ref[key]
        if o is None:
            print(f"{row:58} {metric:9} {'missing':>10} {r:10.2f}")
            continue
        q = o / r if r else float("nan")
        worst[metric] = min(worst.get(metric, q), q) if HIGHER_IS_BETTER[metric] else max(worst.get(metric, q), q)
        print(f"{row:58} {metric:9} {o:10.2f} {r:10.2f} {q:9.3f}")
    print("worst b2nd/ref per metric: " + ", ".join(f"{m} {v:.3f}" for m, v in sorted(worst.items())))


if __name__ == "__main__":
    main()
