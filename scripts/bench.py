#!/usr/bin/env python3
"""Side-by-side benchmark: b2nd (this library) vs the reference libblosc2 shipped in the
python-blosc2 wheel, on the same data and parameters, in one run.

Builds benches/bench.c twice from the same source as plugins (one against include/b2nd.h +
libb2nd, one against the wheel's include/ + lib/libblosc2) and benches/driver.c, which loads both
into one process and measures every row for the two libraries one right after the other. Each
round is a new driver process (which library goes first alternates); each library's best figure
per row is kept. Prints one table: throughputs, ratios, latencies and per-call times (call_ns) with ours/reference ratios (>1 is
better for throughput, <1 is better for latency and per-call time), and memcpy bandwidth.

Usage: python scripts/bench.py [--quick] [--rounds N] [--only SUBSTRING] [--clevels L,L,...] [--aa]
                               [--busy CPU] [--median]
(--clevels replaces the chunk rows' clevels 1 and 5, e.g. --only /zlib/ --clevels 2,3,4,6,7,8,9)
(--aa runs the reference against itself: the spread of its ratios is the machine's noise floor)
(--busy keeps CPU busy with a process of its own for the whole run, as on a loaded machine: what
 the two-thread rows then measure is how each library's threads share a CPU with other work)
(--median times each operation by its median call instead of its fastest, the best median of the
 rounds kept: whether a row's difference holds for a typical call or only at the fast edge)
(run via scripts/bench.sh, which sets up the environment and builds the release library first)
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIGHER_IS_BETTER = {"cMBps": True, "dMBps": True, "ratio": True, "memcpy_MBps": True, "slice_us": False,
                    "call_ns": False, "slices_ps": True, "items_ps": True}


def build_plugin(out: pathlib.Path, include: pathlib.Path, libdir: pathlib.Path, lib: str, defines=()) -> None:
    cmd = ["cc", "-O2", "-fPIC", "-shared", "-pthread", "-DBENCH_PLUGIN", *defines, "-std=c99", "-Wall", "-Wextra",
           f"-I{include}", str(ROOT / "benches" / "bench.c"), f"-L{libdir}", f"-l{lib}", "-lm",
           f"-Wl,-rpath,{libdir}", "-o", str(out)]
    subprocess.run(cmd, check=True)


def read_tsv(path: pathlib.Path) -> list:
    """The (row, metric) -> value pairs of a results file, one per line (rounds repeat keys)."""
    pairs = []
    for line in path.read_text().splitlines():
        row, metric, value = line.split("\t")
        pairs.append(((row, metric), float(value)))
    return pairs


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
    ap.add_argument("--clevels", help="the chunk rows' clevels, comma-separated (default 1,5)")
    ap.add_argument("--aa", action="store_true",
                    help="A/A run: the reference against itself, so the table shows the noise floor")
    ap.add_argument("--busy", type=int, metavar="CPU",
                    help="keep this CPU busy with another process during the run (a loaded machine)")
    ap.add_argument("--median", action="store_true",
                    help="time each operation by its median call instead of its fastest")
    opts = ap.parse_args()
    if opts.busy is not None and opts.busy not in os.sched_getaffinity(0):
        raise SystemExit(f"--busy {opts.busy}: this process may only run on CPUs {sorted(os.sched_getaffinity(0))}")

    import blosc2  # the reference wheel
    wheel = pathlib.Path(blosc2.__file__).parent
    work = pathlib.Path(tempfile.mkdtemp(prefix="b2nd-bench-"))
    try:
        ours, ref = measure(opts, wheel, work)
    except BaseException:
        print(f"kept {work} (plugins, driver and results) to look at", file=sys.stderr)
        raise
    # The plugins and results are a few MB per run: without this, every run left them behind.
    shutil.rmtree(work, ignore_errors=True)
    report(opts, blosc2, ours, ref)


def measure(opts, wheel: pathlib.Path, work: pathlib.Path) -> tuple:
    """Builds the two plugins and the driver in `work`, runs the rounds, and returns each
    library's best figure per (row, metric)."""
    ours_lib = ROOT / "target" / "release" / "libb2nd.so"
    exported = subprocess.run(["nm", "-D", "--defined-only", str(ours_lib)], capture_output=True, text=True).stdout
    defines = []
    for symbol, define in ((" blosc2_schunk_new", "-DBENCH_NO_SCHUNK"), (" b2nd_open", "-DBENCH_NO_B2ND")):
        if symbol not in exported:
            print(f"note: libb2nd does not export{symbol}: {define[9:].lower().replace('_', ' ')} rows left out")
            defines.append(define)
    ours_so, ref_so, driver = work / "bench_b2nd.so", work / "bench_ref.so", work / "driver"
    reference = [*defines, "-DBENCH_REFERENCE"]
    if opts.aa:
        build_plugin(ours_so, wheel / "include", wheel / "lib", "blosc2", reference)
    else:
        build_plugin(ours_so, ROOT / "include", ROOT / "target" / "release", "b2nd", defines)
    build_plugin(ref_so, wheel / "include", wheel / "lib", "blosc2", reference)
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Wextra", str(ROOT / "benches" / "driver.c"), "-ldl",
                    "-o", str(driver)], check=True)

    args = (["--quick"] if opts.quick else []) + (["--only", opts.only] if opts.only else [])
    args += ["--clevels", opts.clevels] if opts.clevels else []
    args += ["--median"] if opts.median else []
    ours_tsv, ref_tsv = work / "b2nd.tsv", work / "ref.tsv"
    # One driver process per round: where each library's buffers land in memory is drawn once
    # per process and changes a row's speed by up to a third on this kind of machine, so every
    # round draws anew for both sides, as separate runs would. Odd rounds put the reference first.
    sides = [(ours_so, ours_tsv), (ref_so, ref_tsv)]
    busy = start_busy(opts.busy) if opts.busy is not None else None
    try:
        for r in range(opts.rounds):
            (a_so, a_tsv), (b_so, b_tsv) = sides if r % 2 == 0 else sides[::-1]
            proc = subprocess.run([str(driver), str(a_so), str(b_so), str(a_tsv), str(b_tsv), "1", *args,
                                   "--tmp", str(work)])
            if proc.returncode != 0:
                raise SystemExit(f"the benchmark driver failed with exit code {proc.returncode}")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    ours, ref = {}, {}
    for key, value in read_tsv(ours_tsv):
        merge_best(ours, {key: value})
    for key, value in read_tsv(ref_tsv):
        merge_best(ref, {key: value})
    return ours, ref


def start_busy(cpu: int) -> subprocess.Popen:
    """A process that spins on `cpu` alone until killed: the other work of a loaded machine."""
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    return subprocess.Popen([sys.executable, "-c", spin])


def report(opts, blosc2, ours: dict, ref: dict) -> None:
    if opts.aa:
        print("A/A run: the b2nd columns are the reference library too; ratios away from 1 are noise")
    if opts.median:
        print("--median: throughputs from each operation's median call (best median of the rounds), not its fastest")
    if opts.busy is not None:
        print(f"CPU {opts.busy} was kept busy by another process for the whole run (--busy)")
    print(f"reference: C-Blosc2 {blosc2.blosclib_version.split()[0]} (python-blosc2 {blosc2.__version__} wheel)")
    memcpy = ours.get(("memcpy", "memcpy_MBps"), 0.0)
    print(f"memcpy bandwidth (ceiling): {memcpy:.0f} MB/s")
    print_table(ours, ref)
    print_summary(ours, ref, memcpy)


# One line per benchmarked configuration, one column group (b2nd, ref, b2nd/ref) per metric.
COLUMNS = ("cMBps", "dMBps", "ratio", "slice_us", "call_ns", "slices_ps", "items_ps")


def cell(o, r) -> str:
    if r is None:
        # A row the reference has no figure for (its concurrent readers crash).
        return " " * 27 if o is None else f"{o:8.1f} {'-':>8} {'':>9}"
    if o is None:
        return f"{'missing':>8} {r:8.1f} {'':>9}"
    q = o / r if r else float("nan")
    return f"{o:8.1f} {r:8.1f} {q:8.3f}x"


def print_table(ours: dict, ref: dict) -> None:
    rows = sorted({row for row, _ in [*ref, *ours] if row != "memcpy"})
    width = max(len(r) for r in rows) if rows else 10
    print(f"{'':{width}} " + " | ".join(f"{m:^27}" for m in COLUMNS))
    header = f"{'row':{width}} " + " | ".join(f"{'b2nd':>8} {'ref':>8} {'b2nd/ref':>9}" for _ in COLUMNS)
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = [cell(ours.get((row, m)), ref.get((row, m))) for m in COLUMNS]
        print(f"{row:{width}} " + " | ".join(cells).rstrip(" |"))


def print_summary(ours: dict, ref: dict, memcpy: float) -> None:
    """The issue's targets, counted: throughput and ratio rows below 1.0x, the worst slice
    latency, and the slowest decompression of constant data against memcpy."""
    worst, below, counted = {}, {}, {}
    for (row, metric), r in ref.items():
        o = ours.get((row, metric))
        if row == "memcpy" or not r:
            continue
        if o is None:
            print(f"missing in b2nd: {row} {metric}")
            continue
        q = o / r
        hib = HIGHER_IS_BETTER[metric]
        worst[metric] = (min if hib else max)(worst.get(metric, q), q)
        counted[metric] = counted.get(metric, 0) + 1
        if (q < 1.0) if hib else (q > 1.0):
            below[metric] = below.get(metric, 0) + 1
    # Concurrent readers: each side's rate with N threads over its own rate with one.
    for (row, metric), o in sorted(ours.items()):
        if metric in ("slices_ps", "items_ps") and not row.endswith("_threads1"):
            one = row.rsplit("_threads", 1)[0] + "_threads1"
            base_o, base_r, r = ours.get((one, metric)), ref.get((one, metric)), ref.get((row, metric))
            if base_o:
                ref_part = f", reference {r / base_r:.2f}x" if r and base_r else ", reference: no figure"
                print(f"{row} {metric}: b2nd {o / base_o:.2f}x its one-thread rate{ref_part}")
    for metric in COLUMNS:
        if metric in counted:
            side = "below" if HIGHER_IS_BETTER[metric] else "worse than"
            print(f"{metric}: {below.get(metric, 0)} of {counted[metric]} rows {side} 1.0x the reference; "
                  f"worst b2nd/ref {worst[metric]:.3f}")
    constant = [(o, row) for (row, metric), o in ours.items() if metric == "dMBps" and "/constant" in row]
    if constant and memcpy:
        o, row = min(constant)
        print(f"constant data, slowest decompression: {o:.0f} MB/s ({row}), "
              f"memcpy/that = {memcpy / o:.2f} (target: at most 2)")

if __name__ == "__main__":
    main()
