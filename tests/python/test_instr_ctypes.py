"""Instrumented chunks (cparams.instr_codec) against the reference library, both through ctypes.

The reference's libblosc2 (shipped in the python-blosc2 wheel) and ours compress the same data
with instr_codec set: the chunks must agree byte for byte except for the two measured speeds of
each record, and each library must decode the other's chunk to the same records.
"""
import ctypes
import struct

import blosc2
import numpy as np
import pytest

import capi
from capi import bind, decompress, reference_library
from blosc2_structs import MAX_FILTERS, CParams

RECORD = 16  # sizeof(blosc2_instr)


@pytest.fixture(scope="module")
def libs(lib):
    return bind(lib), reference_library()


def data(typesize: int) -> bytes:
    """Zeros, a constant, a smooth ramp and noise: runs, compressed and stored streams."""
    rng = np.random.default_rng(7)
    n = 40_000
    parts = [np.zeros(n), np.full(n, 7), np.arange(n) // 16, rng.integers(0, 2**31, n)]
    dtype = {4: np.uint32, 8: np.uint64}[typesize]
    return np.concatenate(parts).astype(dtype).tobytes()[:-3]  # and a leftover block


def compress(L, src: bytes, codec, typesize: int, filt) -> tuple:
    cp = L.blosc2_get_blosc2_cparams_defaults()
    cp.compcode, cp.clevel, cp.typesize, cp.nthreads = int(codec.value), 5, typesize, 1
    cp.blocksize = 32 * 1024
    cp.instr_codec = True
    for i in range(MAX_FILTERS):
        cp.filters[i], cp.filters_meta[i] = 0, 0
    cp.filters[MAX_FILTERS - 1] = int(filt.value)
    got = CParams()
    n, chunk = capi.compress(L, cp, src, room=32,
                             on_ctx=lambda ctx: L.blosc2_ctx_get_cparams(ctx, ctypes.byref(got)))
    assert n > 0, n
    return chunk, got.instr_codec


def without_speeds(chunk: bytes) -> bytes:
    """The chunk with each record's cspeed and filter_speed zeroed (they are timings)."""
    nblocks = -(-struct.unpack_from("<i", chunk, 4)[0] // struct.unpack_from("<i", chunk, 8)[0])
    b = bytearray(chunk)
    at = 32 + 4 * nblocks
    while at < len(b):
        assert struct.unpack_from("<i", b, at)[0] == RECORD
        b[at + 8 : at + 16] = bytes(8)
        at += 4 + RECORD
    assert at == len(b)
    return bytes(b)


def records(raw: bytes) -> list:
    """(cratio, flags) of each decoded record."""
    return [(struct.unpack_from("<f", raw, k)[0], raw[k + 12 : k + 16]) for k in range(0, len(raw), RECORD)]


@pytest.mark.parametrize("codec", [blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.ZSTD])
@pytest.mark.parametrize("filt", [blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE])
@pytest.mark.parametrize("typesize", [4, 8])
def test_instrumented_chunks_match_reference(libs, codec, filt, typesize):
    ours_lib, ref_lib = libs
    src = data(typesize)
    ours, ours_flag = compress(ours_lib, src, codec, typesize, filt)
    ref, ref_flag = compress(ref_lib, src, codec, typesize, filt)
    assert ours_flag and ref_flag
    assert ours[31] & 0x80 and ours[:32] == ref[:32]
    assert without_speeds(ours) == without_speeds(ref)
    mine = records(decompress(ours_lib, ours))
    assert any(f[0] == 1 for _, f in mine) and any(f[0] == 0 for _, f in mine)
    assert mine == records(decompress(ours_lib, ref)) == records(decompress(ref_lib, ours))
    assert mine == records(decompress(ref_lib, ref))
