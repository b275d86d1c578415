"""Shared fixtures for the cross-checks against python-blosc2 (the reference C-Blosc2 3.3.x).

The library under test is loaded with ctypes from B2ND_LIB (set by scripts/test.sh to
target/release/libb2nd.so); the reference is the `blosc2` package of the same virtual environment.
"""
import ctypes
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def lib():
    path = os.environ.get("B2ND_LIB", str(ROOT / "target" / "release" / "libb2nd.so"))
    handle = ctypes.CDLL(path)
    handle.blosc2_init()
    yield handle
    handle.blosc2_destroy()


