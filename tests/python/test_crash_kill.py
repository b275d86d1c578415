"""Kill -9 of a real writer: frames that libb2nd was writing when its process was SIGKILLed
open in python-blosc2 (the reference) with every acknowledged edit, and the interrupted one
absent or whole (docs/crash-safety.md).

The writer (crash_writer.py) appends, updates, deletes chunks and rewrites a vlmetalayer of a
contiguous frame file or a sparse frame, printing each edit once its call returned; it is
killed after a varying number of acknowledged edits and a varying delay, so that kills land
inside calls.
"""
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import blosc2
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from crash_writer import ramp  # noqa: E402


def lib_path() -> str:
    return os.environ.get("B2ND_LIB", str(HERE.parents[1] / "target" / "release" / "libb2nd.so"))


def model(lines):
    """The chunks (as ramp keys) and vlmeta step after the acknowledged edits in `lines`."""
    chunks, step = [], "0"
    for line in lines:
        op, *args = line.split()
        if op == "append":
            chunks.append(int(args[0]))
        elif op == "update":
            chunks[int(args[0])] = int(args[1])
        elif op == "delete":
            chunks.pop()
        elif op == "vlmeta":
            step = args[0] * 50
    return chunks, step


def next_states(chunks, step, k):
    """What edit k (the one that may have been running at the kill) can leave: its model is
    not known from outside, so every edit the writer could have made next is allowed."""
    n = len(chunks)
    states = [(chunks, step)]
    if k % 4 == 3 and n > 1:
        states.append((chunks[: k % n] + [k] + chunks[k % n + 1:], step))
    elif k % 7 == 5 and n > 2:
        states.append((chunks[:-1], step))
    elif k % 5 == 4:
        states.append((chunks, str(k) * 50))
    else:
        states.append((chunks + [k], step))
    return states


@pytest.mark.parametrize("contiguous", [True, False])
def test_killed_writer_leaves_a_frame_python_blosc2_opens(tmp_path, contiguous):
    rng = random.Random(59 + contiguous)
    rounds = 12
    for r in range(rounds):
        urlpath = tmp_path / f"killed-{r}.b2frame"
        child = subprocess.Popen(
            [sys.executable, str(HERE / "crash_writer.py"), lib_path(), str(urlpath), "1" if contiguous else "0"],
            stdout=subprocess.PIPE, text=True, cwd=HERE,
        )
        assert child.stdout.readline().strip() == "ready"
        wanted = rng.randint(1, 40)
        lines = []
        for _ in range(wanted):
            lines.append(child.stdout.readline().strip())
        time.sleep(rng.random() * 0.004)
        child.send_signal(signal.SIGKILL)
        rest = child.stdout.read().splitlines()
        child.wait()
        lines += [line for line in rest if line]
        chunks, step = model(lines)
        k = len(lines) + 1
        py = blosc2.open(str(urlpath))
        got = [np.frombuffer(py.decompress_chunk(i), dtype=np.int32).tobytes() for i in range(py.nchunks)]
        got_step = py.vlmeta["step"]
        ok = [
            (c, s) for c, s in next_states(chunks, step, k)
            if got == [ramp(x) for x in c] and got_step == s
        ]
        assert ok, f"round {r}: after {len(lines)} acknowledged edits the frame holds neither state"
