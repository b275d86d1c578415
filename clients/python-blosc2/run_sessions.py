#!/usr/bin/env python3
"""Run python-blosc2's test suite as one pytest session per test file.

One session per file so that a segfault or a hang costs that file's tests and
not the whole run; sessions run --jobs at a time, each under --timeout seconds,
in its own cwd and basetemp (the tests write fixed relative file names, so two
sessions sharing a cwd would trample each other).  The doctests of the installed
blosc2.core, blosc2.ndarray and blosc2.schunk modules are three more sessions.

Writes into --out (emptied first):
  sessions.json          one entry per session: status (completed, crashed,
                         timeout, aborted), return code, signal, seconds
  <session>/record.jsonl per-test outcomes, from record_plugin.py
  <session>/output.log   the session's stdout and stderr
Standard library only: it runs under the system python3.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The pytest.ini testpaths that are not under tests/: doctests of these modules.
DOCTEST_MODULES = ["blosc2.core", "blosc2.ndarray", "blosc2.schunk"]
# pytest.ini's addopts minus its xdist options (-n logical --dist loadfile):
# each session is serial, the parallelism is across sessions.
PYTEST_OPTS = [
    "--doctest-modules",
    "-m", "not network and not heavy and not tui",
    "-p", "no:unraisableexception",
    "-p", "no:xdist",
    "-p", "no:cacheprovider",
    "-p", "record_plugin",
    "-q",
]
# pytest's exit codes for a session that ran to its end (5: nothing selected).
COMPLETED_CODES = {0, 1, 5}


def list_sessions(suite, pattern):
    names = sorted(str(p.relative_to(suite)) for p in (suite / "tests").rglob("test_*.py"))
    names += [f"doctest/{mod}" for mod in DOCTEST_MODULES]
    if pattern:
        glob = pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
        names = [n for n in names if fnmatch.fnmatch(n, glob)]
    return names


def session_dir_name(name):
    return name.replace("/", "__")


def run_one(name, args, env_extra):
    sdir = args.out / session_dir_name(name)
    cwd = sdir / "cwd"
    cwd.mkdir(parents=True)
    record = sdir / "record.jsonl"
    record.touch()
    env = dict(os.environ, **env_extra)
    env["B2ND_RECORD"] = str(record)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    cmd = [args.python, "-m", "pytest", "-c", str(args.suite / "pytest.ini"),
           "--rootdir", str(args.suite), "-o", "addopts=", *PYTEST_OPTS,
           "--basetemp", str(sdir / "tmp")]
    if name.startswith("doctest/"):
        env["B2ND_DOCTEST_CWD"] = "1"
        cmd += ["--pyargs", name.split("/", 1)[1]]
    else:
        cmd.append(str(args.suite / name))
    start = time.monotonic()
    with open(sdir / "output.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        status, usage = _wait(proc.pid, start + args.timeout)
        timed_out = status is None
        if timed_out:
            _kill_group(proc.pid, signal.SIGTERM)
            status, usage = _wait(proc.pid, time.monotonic() + 15)
            if status is None:
                _kill_group(proc.pid, signal.SIGKILL)
                status, usage = _wait(proc.pid, None)
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        # Helpers a test started and left behind (servers, pools) die with the session.
        _kill_group(proc.pid, signal.SIGKILL)
    seconds = round(time.monotonic() - start, 2)
    # CPU seconds (the session and the subprocesses it waited for): unlike wall time,
    # this does not depend on what else the machine is running.
    cpu = round(usage.ru_utime + usage.ru_stime, 2)
    entry = {"name": name, "returncode": rc, "seconds": seconds, "cpu_seconds": cpu, "signal": None}
    if rc < 0:  # for a timeout, the signal that ended it: SIGTERM, else SIGKILL
        entry["signal"] = signal.Signals(-rc).name
    if timed_out:
        entry["status"] = "timeout"
    elif rc < 0:
        entry["status"] = "crashed"
    elif rc in COMPLETED_CODES:
        entry["status"] = "completed"
    else:
        entry["status"] = "aborted"  # pytest usage/internal error, or interrupted
    # The tests' scratch files can be large; the record and the log are what we keep.
    shutil.rmtree(sdir / "tmp", ignore_errors=True)
    shutil.rmtree(cwd, ignore_errors=True)
    return entry


def _wait(pid, deadline):
    """os.wait4 until deadline (None: forever): (status, rusage), or (None, None) on timeout.

    wait4 rather than Popen.wait, for the child's resource usage."""
    while True:
        done, status, usage = os.wait4(pid, 0 if deadline is None else os.WNOHANG)
        if done:
            return status, usage
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.1)


def _kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def count_outcomes(record):
    # By nodeid, as compare.py counts: with --doctest-modules a module-level
    # importorskip is reported twice (Module and DoctestModule) under one nodeid.
    final = {}
    for line in record.read_text().splitlines():
        try:
            obj = json.loads(line)
        except ValueError:  # a killed session's last line may be cut short
            continue
        if obj.get("event") == "result":
            final[obj["nodeid"]] = obj["outcome"]
    counts = {}
    for outcome in final.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="the venv's python, with blosc2 installed")
    ap.add_argument("--suite", required=True, type=Path, help="the unpacked sdist, without src/")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--files", default="", help="glob (or substring) on session names")
    ap.add_argument("--history", type=Path, help="JSON of past durations: longest sessions start first")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the sessions")
    args = ap.parse_args()
    args.suite = args.suite.resolve()
    args.out = args.out.resolve()
    env_extra = dict(kv.split("=", 1) for kv in args.env)

    names = list_sessions(args.suite, args.files)
    if not names:
        sys.exit(f"run_sessions: no test file matches {args.files!r}")
    history = {}
    if args.history and args.history.exists():
        history = json.loads(args.history.read_text())
    # Longest first, so that a long file does not start last and run alone at the end
    # while the other job slots idle. Files without a past duration go first, largest
    # first: their size is a fair guess at their duration.
    def size(n):
        path = args.suite / n
        return path.stat().st_size if path.is_file() else 0
    names.sort(key=lambda n: (n in history, -history.get(n, 0), -size(n)))

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    entries, lock, t0 = [], threading.Lock(), time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, n, args, env_extra) for n in names]
        for fut in concurrent.futures.as_completed(futures):
            entry = fut.result()
            counts = count_outcomes(args.out / session_dir_name(entry["name"]) / "record.jsonl")
            with lock:
                entries.append(entry)
                detail = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                status = entry["status"] + (f" ({entry['signal']})" if entry["signal"] else "")
                if entry["status"] == "aborted":
                    status += f" (rc {entry['returncode']})"
                print(f"[{len(entries):3}/{len(names)}] {entry['seconds']:6.1f}s {status:10} "
                      f"{entry['name']}  {detail}", flush=True)
    entries.sort(key=lambda e: e["name"])
    wall = round(time.monotonic() - t0, 1)
    cpu = round(sum(e["cpu_seconds"] for e in entries), 1)
    (args.out / "sessions.json").write_text(json.dumps(
        {"python": args.python, "jobs": args.jobs, "timeout": args.timeout, "files": args.files,
         "wall_seconds": wall, "cpu_seconds": cpu, "sessions": entries}, indent=1))
    if args.history:
        history.update({e["name"]: e["seconds"] for e in entries})
        args.history.write_text(json.dumps(history, indent=1, sort_keys=True))
    slowest = sorted(entries, key=lambda e: -e["seconds"])[:10]
    print(f"{len(entries)} sessions in {wall}s wall, {cpu}s CPU; slowest (wall, CPU):")
    for e in slowest:
        print(f"  {e['seconds']:7.1f}s {e['cpu_seconds']:7.1f}s  {e['name']}")


if __name__ == "__main__":
    main()
