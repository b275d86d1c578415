"""pytest plugin for the python-blosc2 client harness (loaded with ``-p record_plugin``).

It writes one JSON object per line to the file named by $B2ND_RECORD:

* ``{"event": "meta", ...}``: which blosc2 the session imported and which libblosc2
  the process mapped, so the harness can prove what was under test;
* ``{"event": "start", "nodeid": ...}`` before each test, so that when a session
  dies the last unfinished ``start`` names the test that crashed it;
* ``{"event": "result", "nodeid", "outcome", "message", "duration"}`` once per
  test (and per failed or skipped collection), outcome being one of passed,
  failed, error, skipped, xfailed, xpassed.

Lines are flushed one by one, so a segfault loses nothing already recorded
(JUnit XML is written only at session end and would lose the whole file).

With $B2ND_DOCTEST_CWD set it also runs each doctest in its own tmp_path: the
sdist's root conftest does that for its source doctests, but it does not apply
to the installed modules that the harness doctests.
"""

import json
import os
import sys

import pytest

_out = None
_reports = {}  # nodeid -> the reports seen so far for that test


def _emit(obj):
    _out.write(json.dumps(obj) + "\n")
    _out.flush()


def _first_line(report):
    """The first line of the reason: the exception message or the skip reason."""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple):  # skip: (path, lineno, reason)
        text = str(longrepr[2])
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr)
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _loaded_libblosc2():
    """Paths of every libblosc2 shared object mapped into this process."""
    paths = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if "/libblosc2" in path:
                    paths.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(paths)


def pytest_configure(config):
    global _out
    _out = open(os.environ["B2ND_RECORD"], "a", buffering=1)  # noqa: SIM115


def pytest_sessionstart(session):
    import blosc2
    import blosc2.blosc2_ext

    _emit(
        {
            "event": "meta",
            "python": sys.executable,
            "blosc2_file": blosc2.__file__,
            "blosc2_ext_file": blosc2.blosc2_ext.__file__,
            "blosc2_version": blosc2.__version__,
            "blosclib_version": getattr(blosc2, "blosclib_version", None),
            "libblosc2_mapped": _loaded_libblosc2(),
        }
    )


def pytest_collectreport(report):
    # A module that fails to import is an error; one that importorskips is a skip.
    if report.failed or report.skipped:
        outcome = "error" if report.failed else "skipped"
        _emit(
            {"event": "result", "nodeid": report.nodeid, "outcome": outcome, "when": "collect",
             "message": _first_line(report), "duration": 0.0}
        )


def pytest_runtest_logstart(nodeid, location):
    _emit({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    _reports.setdefault(report.nodeid, []).append(report)
    if report.when == "teardown":
        _emit(_result(report.nodeid, _reports.pop(report.nodeid)))


def _result(nodeid, reports):
    """Fold setup/call/teardown into one outcome, as pytest's own summary does."""
    outcome, message = "passed", ""
    for rep in reports:
        xfail = hasattr(rep, "wasxfail")
        if rep.when != "call" and rep.failed:
            outcome, message = "error", _first_line(rep)
            break
        if rep.skipped:
            outcome = "xfailed" if xfail else "skipped"
            message = rep.wasxfail if xfail else _first_line(rep)
        elif rep.when == "call" and rep.failed:
            outcome, message = "failed", _first_line(rep)
        elif rep.when == "call" and rep.passed and xfail:
            outcome, message = "xpassed", rep.wasxfail
    duration = sum(rep.duration for rep in reports)
    return {"event": "result", "nodeid": nodeid, "outcome": outcome, "message": message,
            "duration": round(duration, 4)}


@pytest.fixture(autouse=True)
def _b2nd_doctest_cwd(request):
    if os.environ.get("B2ND_DOCTEST_CWD") and isinstance(request.node, pytest.DoctestItem):
        request.getfixturevalue("monkeypatch").chdir(request.getfixturevalue("tmp_path"))
