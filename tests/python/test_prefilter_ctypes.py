"""Prefilter output knobs against the reference library, both through ctypes.

`blosc2_prefilter_params.output_is_disposable` (the prefilter runs for its side effects and the
chunk is thrown away) and `output_typesize` (a prefilter writing narrower items than the chunk's):
the same C callback drives the reference's libblosc2 and ours, and the chunks, the calls the
callback saw and the decoded data must agree.
"""
import ctypes

import numpy as np
import pytest

import capi
from capi import bind, decompress, reference_library
from blosc2_structs import MAX_FILTERS


class PrefilterParams(ctypes.Structure):
    _fields_ = [
        ("user_data", ctypes.c_void_p),
        ("input", ctypes.POINTER(ctypes.c_uint8)),
        ("output", ctypes.POINTER(ctypes.c_uint8)),
        ("output_size", ctypes.c_int32),
        ("output_typesize", ctypes.c_int32),
        ("output_offset", ctypes.c_int32),
        ("nchunk", ctypes.c_int64),
        ("nblock", ctypes.c_int32),
        ("tid", ctypes.c_int32),
        ("ttmp", ctypes.c_void_p),
        ("ttmp_nbytes", ctypes.c_size_t),
        ("ctx", ctypes.c_void_p),
        ("output_is_disposable", ctypes.c_bool),
    ]


PREFILTER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(PrefilterParams))
BLOCKSIZE = 16 * 1024


@pytest.fixture(scope="module")
def libs(lib):
    return bind(lib), reference_library()


def compress(L, src: bytes, typesize: int, callback, output_typesize=0, disposable=False):
    """Compresses with `callback` as prefilter; returns the chunk (b"" when refused) and the calls seen."""
    calls = []

    def prefilter(pp):
        p = pp.contents
        calls.append((p.nblock, p.output_offset, p.output_size, p.output_typesize, p.output_is_disposable))
        return callback(p)

    fn = PREFILTER(prefilter)
    params = PrefilterParams()
    params.output_typesize = output_typesize
    params.output_is_disposable = disposable
    cp = L.blosc2_get_blosc2_cparams_defaults()
    cp.compcode, cp.clevel, cp.typesize, cp.nthreads, cp.blocksize = 1, 5, typesize, 1, BLOCKSIZE
    for i in range(MAX_FILTERS):
        cp.filters[i], cp.filters_meta[i] = 0, 0
    cp.filters[MAX_FILTERS - 1] = 1
    cp.prefilter = ctypes.cast(fn, ctypes.c_void_p)
    cp.preparams = ctypes.cast(ctypes.pointer(params), ctypes.c_void_p)
    n, chunk = capi.compress(L, cp, src, room=32)
    if n is None:
        return b"", calls
    assert n > 0, n
    return chunk, calls


SRC = np.arange(100_000, dtype=np.int64).tobytes()


@pytest.mark.parametrize("rc", [0, -1])
def test_disposable_output_gives_the_references_zeros_chunk(libs, rc):
    """A disposable output is not compressed: both libraries write the same zeros chunk, even when
    the prefilter reports an error, after running the prefilter on every block."""
    seen = {}

    def summing(p):
        seen.setdefault(id(seen), []).append(sum(p.input[k] for k in range(0, p.output_size, 8)))
        return rc

    results = []
    for L in libs:
        seen.clear()
        chunk, calls = compress(L, SRC, 8, summing, disposable=True)
        results.append((chunk, calls, seen.get(id(seen))))
    (ours, ours_calls, ours_sums), (ref, ref_calls, ref_sums) = results
    assert ours == ref
    assert len(ours) == 32 and ours[31] >> 4 == 1  # BLOSC2_SPECIAL_ZERO
    assert ours_calls == ref_calls and len(ours_calls) == -(-len(SRC) // BLOCKSIZE)
    assert ours_sums == ref_sums
    assert decompress(libs[0], ours) == bytes(len(SRC))


def test_narrower_output_typesize_fills_the_front_of_each_block(libs):
    """int64 items in, int32 items out: the prefilter sees the reference's output_size and
    output_typesize, and the front of each decoded block holds what it wrote."""

    def narrowing(p):
        n = p.output_size // p.output_typesize
        vals = np.ctypeslib.as_array(p.input, shape=(n * 8,)).view(np.int64)
        out = np.ctypeslib.as_array(p.output, shape=(n * 4,)).view(np.int32)
        out[:] = (vals * 3).astype(np.int32)
        return 0

    ours, ours_calls = compress(libs[0], SRC, 8, narrowing, output_typesize=4)
    ref, ref_calls = compress(libs[1], SRC, 8, narrowing, output_typesize=4)
    assert ours_calls == ref_calls
    assert all(size == BLOCKSIZE // 2 and ts == 4 for _, _, size, ts, _ in ours_calls[:-1])
    for chunk in (ours, ref):
        for L in libs:
            out = decompress(L, chunk)
            for b in range(0, len(SRC), BLOCKSIZE):
                items = min(BLOCKSIZE, len(SRC) - b) // 8
                want = (np.frombuffer(SRC[b : b + items * 8], np.int64) * 3).astype(np.int32).tobytes()
                assert out[b : b + items * 4] == want
    # The rest of each block is left undefined by the reference; here it is zeros.
    out = decompress(libs[0], ours)
    assert all(out[b + BLOCKSIZE // 2 : b + BLOCKSIZE] == bytes(BLOCKSIZE // 2) for b in range(0, len(SRC) - BLOCKSIZE, BLOCKSIZE))


def test_wider_output_typesize_is_refused(libs):
    # The reference would write past its block buffer; here the context is not created.
    chunk, calls = compress(libs[0], SRC, 8, lambda p: 0, output_typesize=16)
    assert chunk == b"" and calls == []
