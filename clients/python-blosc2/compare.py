#!/usr/bin/env python3
"""Compare python-blosc2's test results on the reference wheel and on b2nd.

Reads two result directories written by run_sessions.py and prints the outcome
counts side by side, the sessions (test files) that crashed or timed out, and
every test that passes on the reference but not on b2nd, grouped by file with
the first line of its failure.  Exit status: 0 when that list is empty, 1 when
it is not, 2 when the inputs are unusable (or b2nd's sessions did not load the
expected libblosc2).  With --json, the same findings go to a file.

A test that the reference ran in a file whose b2nd session crashed or timed out
counts on b2nd as "not run" (and as a regression if it passed on the reference).
Standard library only.
"""

import argparse
import json
import os
import sys
from pathlib import Path

OUTCOMES = ["passed", "failed", "error", "skipped", "xfailed", "xpassed"]


def session_dir_name(name):
    return name.replace("/", "__")


class Side:
    """One side's results: per session, its status and its tests' outcomes."""

    def __init__(self, label, root):
        self.label = label
        index = root / "sessions.json"
        if not index.exists():
            sys.exit(f"compare: {index} is missing: run the {label} side first")
        data = json.loads(index.read_text())
        self.sessions = {e["name"]: e for e in data["sessions"]}
        self.results = {}  # session -> {nodeid: (outcome, message)}
        self.running = {}  # session -> nodeid started but never finished (the crash site)
        self.meta = {}  # session -> the meta line of record_plugin
        for name in self.sessions:
            results, started = {}, None
            record = root / session_dir_name(name) / "record.jsonl"
            for line in record.read_text().splitlines() if record.exists() else []:
                try:
                    obj = json.loads(line)
                except ValueError:  # the last line of a killed session may be cut short
                    continue
                if obj["event"] == "meta":
                    self.meta[name] = obj
                elif obj["event"] == "start":
                    started = obj["nodeid"]
                elif obj["event"] == "result":
                    results[obj["nodeid"]] = (obj["outcome"], obj.get("message", ""))
                    if obj["nodeid"] == started:
                        started = None
            self.results[name] = results
            self.running[name] = started

    def completed(self, name):
        return self.sessions[name]["status"] == "completed"

    def describe(self, name):
        e = self.sessions[name]
        text = e["status"]
        if e["status"] == "timeout":
            text += f" after {e['seconds']:.0f}s"
        if e["signal"]:
            text += f" ({e['signal']})"
        elif e["status"] == "aborted":
            text += f" (pytest exit code {e['returncode']})"
        if self.running[name]:
            text += f" while running {self.running[name]}"
        return text


def check_library(side, libdir):
    """Every b2nd session must have mapped libblosc2 from libdir, and nothing else."""
    libdir = os.path.realpath(libdir)
    bad = []
    for name, meta in sorted(side.meta.items()):
        mapped = meta.get("libblosc2_mapped") or []
        if not mapped or any(os.path.dirname(p) != libdir for p in mapped):
            bad.append(f"{name}: {mapped or 'no libblosc2 mapped (bundled C-Blosc2?)'}")
    if bad:
        print(f"compare: {side.label} sessions did not run on {libdir}/libblosc2:", file=sys.stderr)
        for line in bad[:20]:
            print("  " + line, file=sys.stderr)
        sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", required=True, type=Path)
    ap.add_argument("--b2nd", required=True, type=Path)
    ap.add_argument("--b2nd-libdir", help="the directory whose libblosc2 the b2nd side must load")
    ap.add_argument("--json", type=Path, help="write the machine-readable summary here")
    args = ap.parse_args()
    ref, b2nd = Side("reference", args.reference), Side("b2nd", args.b2nd)
    if args.b2nd_libdir:
        check_library(b2nd, args.b2nd_libdir)

    # Only the sessions both sides ran are comparable (a --files run covers a subset).
    common = sorted(set(ref.sessions) & set(b2nd.sessions))
    if not common:
        sys.exit("compare: the two sides ran no session in common")
    counts = {s.label: dict.fromkeys([*OUTCOMES, "not run"], 0) for s in (ref, b2nd)}
    not_completed, regressions, improvements, other = [], [], [], []
    for name in common:
        for side, peer in ((ref, b2nd), (b2nd, ref)):
            for outcome, _ in side.results[name].values():
                counts[side.label][outcome] += 1
            if not side.completed(name):
                missing = set(peer.results[name]) - set(side.results[name])
                counts[side.label]["not run"] += len(missing)
                not_completed.append({"side": side.label, "session": name,
                                      "status": side.sessions[name]["status"],
                                      "signal": side.sessions[name]["signal"],
                                      "running": side.running[name],
                                      "describe": side.describe(name), "not_run": len(missing)})
        for nodeid in sorted(set(ref.results[name]) | set(b2nd.results[name])):
            r = ref.results[name].get(nodeid, ("absent", ""))
            b = b2nd.results[name].get(nodeid)
            if b is None:
                b = ("not run", b2nd.describe(name)) if not b2nd.completed(name) else ("absent", "")
            if r[0] == b[0]:
                continue
            item = {"session": name, "nodeid": nodeid, "reference": r[0], "b2nd": b[0],
                    "reference_message": r[1], "b2nd_message": b[1]}
            if r[0] == "passed":
                regressions.append(item)
            elif b[0] == "passed":
                improvements.append(item)
            else:
                other.append(item)

    print(f"python-blosc2 test outcomes over {len(common)} sessions (one per test file)")
    print(f"  {'':24}{'reference':>10}{'b2nd':>10}")
    for key in [*OUTCOMES, "not run"]:
        label = "not run (crashed file)" if key == "not run" else key
        print(f"  {label:24}{counts['reference'][key]:>10}{counts['b2nd'][key]:>10}")
    ncrash = {s.label: sum(not s.completed(n) for n in common) for s in (ref, b2nd)}
    print(f"  {'sessions not completed':24}{ncrash['reference']:>10}{ncrash['b2nd']:>10}")

    if not_completed:
        print("\nSessions that did not complete:")
        for item in not_completed:
            print(f"  {item['side']}: {item['session']}: {item['describe']}; "
                  f"{item['not_run']} tests the other side ran were not run")

    print(f"\nPass on the reference, not on b2nd: {len(regressions)}")
    _print_grouped(regressions, "b2nd")
    if improvements:
        print(f"\nPass on b2nd, not on the reference: {len(improvements)}")
        _print_grouped(improvements, "reference")
    if other:
        print(f"\nOther outcome differences (neither side passed): {len(other)}")
        for item in other[:50]:
            print(f"  {item['session']}: {item['nodeid']}: "
                  f"reference {item['reference']}, b2nd {item['b2nd']}")

    if not any(counts["reference"][k] for k in ("passed", "xfailed")):
        print("compare: the reference side passed no test: the harness is broken", file=sys.stderr)
        sys.exit(2)
    if args.json:
        summary = {
            "sessions_compared": len(common), "counts": counts, "not_completed": not_completed,
            "regressions": regressions, "improvements": improvements, "other_differences": other,
            "meta": {s.label: next(iter(s.meta.values()), None) for s in (ref, b2nd)},
        }
        args.json.write_text(json.dumps(summary, indent=1))
    sys.exit(1 if regressions else 0)


def _print_grouped(items, side):
    by_file = {}
    for item in items:
        by_file.setdefault(item["session"], []).append(item)
    for name, group in by_file.items():
        print(f"  {name} ({len(group)})")
        # Tests lost to a crashed session share one cause: one line, not hundreds.
        lost = [item for item in group if item[side] == "not run"]
        if lost:
            print(f"    {len(lost)} not run: {lost[0][f'{side}_message']}")
        for item in group:
            if item[side] == "not run":
                continue
            short = item["nodeid"].split("::", 1)[-1]
            message = item[f"{side}_message"]
            print(f"    {short}: {item[side]}" + (f": {message}" if message else ""))


if __name__ == "__main__":
    main()
