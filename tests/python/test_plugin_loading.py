"""Codec and filter plugins loaded at run time, the reference's way, in both libraries: a codec or
filter registered without callbacks comes from libblosc2_<name>.so, whose path the Python package
`blosc2_<name>` prints when the dynamic linker cannot find the library itself.

The plugins are tests-c/plugins/testcodec.c and testfilter.c, compiled here, with a stand-in
Python package for each. Chunks the two libraries write through them are byte-identical, each
decodes the other's, and a plugin that cannot be found fails the same way in both.
"""
import ctypes
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from blosc2_structs import MAX_FILTERS
import capi
from capi import bind, decompress, reference_library

ROOT = pathlib.Path(__file__).resolve().parents[2]
CODEC_ID, FILTER_ID, MISSING_CODEC_ID, MISSING_FILTER_ID = 200, 201, 202, 203


class Codec(ctypes.Structure):
    _fields_ = [("compcode", ctypes.c_uint8), ("compname", ctypes.c_char_p),
                ("complib", ctypes.c_uint8), ("version", ctypes.c_uint8),
                ("encoder", ctypes.c_void_p), ("decoder", ctypes.c_void_p)]


class Filter(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint8), ("name", ctypes.c_char_p), ("version", ctypes.c_uint8),
                ("forward", ctypes.c_void_p), ("backward", ctypes.c_void_p)]


def build_plugin(name: str, out_dir: pathlib.Path) -> pathlib.Path:
    """Compiles tests-c/plugins/<name>.c as libblosc2_<name>.so and a package that names it."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed to build the test plugins"
    lib = out_dir / f"libblosc2_{name}.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-DTESTCODEC_STANDALONE", "-I", str(ROOT / "include"),
                    str(ROOT / "tests-c" / "plugins" / f"{name}.c"), "-o", str(lib)], check=True)
    pkg = out_dir / "packages" / f"blosc2_{name}"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        f"def print_libpath():\n    print({str(lib)!r}, end='')\n")
    return lib


@pytest.fixture(scope="module")
def libs(lib, tmp_path_factory):
    """(ours, reference), each with the plugin codec, the plugin filter and two missing ones
    registered; the processes they start find the stand-in packages and this venv's python."""
    out = tmp_path_factory.mktemp("plugins")
    for name in ("testcodec", "testfilter"):
        build_plugin(name, out)
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", str(out / "packages"))
    mp.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    both = (bind(lib), reference_library())
    for L in both:
        for cid, name in [(CODEC_ID, b"testcodec"), (MISSING_CODEC_ID, b"b2nd_absent_codec")]:
            assert L.blosc2_register_codec(ctypes.byref(Codec(cid, name, cid, 1, None, None))) == 0
        for fid, name in [(FILTER_ID, b"testfilter"), (MISSING_FILTER_ID, b"b2nd_absent_filter")]:
            assert L.blosc2_register_filter(ctypes.byref(Filter(fid, name, 1, None, None))) == 0
    yield both
    mp.undo()


def compress(L, src: bytes, compcode: int, filters=(), meta=0, nthreads=1):
    cp = L.blosc2_get_blosc2_cparams_defaults()
    cp.compcode, cp.clevel, cp.typesize, cp.nthreads, cp.blocksize = compcode, 5, 4, nthreads, 16384
    for i in range(MAX_FILTERS):
        cp.filters[i], cp.filters_meta[i] = 0, 0
    for i, f in enumerate(filters):
        cp.filters[MAX_FILTERS - len(filters) + i], cp.filters_meta[MAX_FILTERS - len(filters) + i] = f, meta
    return capi.compress(L, cp, src)


def pairs(n: int, seed: int) -> bytes:
    """Bytes that come in equal pairs (what the test codec halves)."""
    half = np.random.default_rng(seed).integers(0, 256, size=n // 2, dtype=np.uint8)
    return np.repeat(half, 2).tobytes()


@pytest.mark.parametrize("nthreads", [1, 2])
def test_plugin_codec_chunks_are_the_references(libs, nthreads):
    ours, ref = libs
    src = pairs(100_000, nthreads)
    (n1, mine), (n2, theirs) = (compress(L, src, CODEC_ID, nthreads=nthreads) for L in (ours, ref))
    assert n1 == n2
    if nthreads == 1:   # with two threads the reference stores blocks in the order they finish
        assert mine == theirs
    assert mine[22] == CODEC_ID
    assert b"B2PL" in mine and len(mine) < len(src) * 6 // 10   # the plugin compressed
    assert decompress(ours, theirs) == src
    assert decompress(ref, mine) == src


def test_plugin_filter_chunks_are_the_references(libs):
    ours, ref = libs
    src = pairs(60_000, 7)
    (n1, mine), (n2, theirs) = (compress(L, src, CODEC_ID, [FILTER_ID], meta=5) for L in (ours, ref))
    assert n1 == n2 > 0 and mine == theirs
    shifted = bytes(((b + 5) & 0xFF) ^ 0x3C for b in src[0:16:2])
    assert shifted in mine   # the filter ran before the codec
    assert decompress(ours, theirs) == src
    assert decompress(ref, mine) == src


def test_missing_plugins_fail_as_in_the_reference(libs):
    ours, ref = libs
    src = pairs(40_000, 3)
    codes = [compress(L, src, MISSING_CODEC_ID)[0] for L in (ours, ref)]
    assert codes[0] < 0 and codes[0] == codes[1], codes
    codes = [compress(L, src, 1, [MISSING_FILTER_ID])[0] for L in (ours, ref)]
    assert codes[0] < 0 and codes[0] == codes[1], codes
