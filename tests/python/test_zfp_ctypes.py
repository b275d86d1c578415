"""zfp, the reference's plugin codecs 33 (ZFP_ACC), 34 (ZFP_PREC) and 35 (ZFP_RATE), against
python-blosc2 (the reference C-Blosc2 3.3.5 with its zfp 1.0.1):

- arrays the reference writes open here to bit-identical floats (compared as bytes, so NaNs,
  infinities, signed zeros and subnormals count too);
- arrays written here with the same parameters are the reference's chunks byte for byte, and open
  in the reference to the same values;
- the reference's refusals (block extents under 4, more than 4 dimensions, items that are not
  floats) are refusals here with the same return codes, and so is a block shape in the metalayer
  that overflows the block when decoding.

Each mode runs over f32 and f64 blocks of 1 to 4 dimensions whose extents are not multiples of 4
(cut edge cells) inside cut edge chunks.
"""
import ctypes

import blosc2
import numpy as np
import pytest

from blosc2_structs import Storage, blosc2_cparams_defaults
from capi import reference_library
from test_b2nd_ctypes import Array, api, bind_b2nd, i32, i64  # noqa: F401  (api is a fixture)

# (shape, chunks, blocks): several blocks a chunk (the reference's plugin misbehaves on chunks
# whose last block does not get a whole block's room, so chunks here compress comfortably).
GEOMETRIES = [
    ((400,), (200,), (37,)),
    ((60, 46), (32, 24), (9, 10)),
    ((26, 28, 18), (16, 16, 12), (5, 7, 6)),
    ((18, 16, 14, 12), (10, 10, 10, 10), (5, 6, 4, 7)),
]
# (codec, meta): accuracy 1e-3 and 1e-6 (meta as int8), precision, rate as % of the input.
MODES = [
    (33, 253), (33, 250),
    (34, 12), (34, 18),
    (35, 25), (35, 50),
]


def smooth(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    idx = np.indices(shape).astype(np.float64)
    v = np.sin(idx.sum(0) * 0.3) * 100 + rng.normal(size=shape) * 0.01
    return v.astype(dtype)


def with_specials(shape, dtype, seed):
    """Smooth data with NaNs, infinities, signed zeros, extremes and subnormals sprinkled in, and
    a run of values so small that their cells' scale factor overflows the item type."""
    rng = np.random.default_rng(seed)
    v = smooth(shape, dtype, seed)
    fi = np.finfo(dtype)
    flat = v.reshape(-1)
    picks = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, fi.tiny, fi.max, -fi.max,
                      fi.smallest_subnormal], dtype=dtype)
    at = rng.integers(0, flat.size, size=max(1, flat.size // 50))
    flat[at] = rng.choice(picks, size=at.size)
    flat[:64] *= fi.tiny * dtype(1e-2)
    return v


def reference_array(path, src, chunks, blocks, code, meta, split=blosc2.SplitMode.NEVER_SPLIT):
    blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=path, mode="w",
                   cparams=dict(codec=blosc2.Codec(code), codec_meta=meta, filters=[],
                                splitmode=split, nthreads=1))
    return blosc2.open(path)


def write_here(L, path, src, chunks, blocks, code, meta, split=blosc2.SplitMode.NEVER_SPLIT):
    """Writes `src` as a b2nd array through library `L`; returns b2nd_from_cbuffer's code."""
    cparams = blosc2_cparams_defaults(L)
    cparams.typesize = src.itemsize
    cparams.compcode, cparams.compcode_meta = code, meta
    for i in range(6):
        cparams.filters[i], cparams.filters_meta[i] = 0, 0
    cparams.splitmode = split.value
    storage = Storage(path is not None, path.encode() if path else None, ctypes.pointer(cparams),
                      None, None)
    ctx = L.b2nd_create_ctx(ctypes.byref(storage), src.ndim, i64(src.shape), i32(chunks),
                            i32(blocks), src.dtype.str.encode(), 0, None, 0)
    assert ctx
    arr = ctypes.POINTER(Array)()
    rc = L.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes)
    if rc == 0:
        assert L.b2nd_free(arr) == 0
    assert L.b2nd_free_ctx(ctx) == 0
    return rc


def read_here(api, path, like):
    """Opens and decodes a b2nd file through `api`: (the first failing call's code or 0, data)."""
    arr = ctypes.POINTER(Array)()
    got = np.empty_like(like)
    rc = api.b2nd_open(path.encode(), ctypes.byref(arr))
    if rc < 0:
        return rc, got
    rc = api.b2nd_to_cbuffer(arr, got.ctypes.data, got.nbytes)
    assert api.b2nd_free(arr) == 0
    return rc, got


def check_both_ways(api, tmp_path, src, chunks, blocks, code, meta,
                    split=blosc2.SplitMode.NEVER_SPLIT):
    ref = reference_array(str(tmp_path / "ref.b2nd"), src, chunks, blocks, code, meta, split)
    assert ref.schunk.cbytes < ref.schunk.nbytes   # zfp did run
    want = ref[...]
    rc, got = read_here(api, str(tmp_path / "ref.b2nd"), src)
    assert rc == 0
    assert got.tobytes() == want.tobytes()

    ours_path = str(tmp_path / "ours.b2nd")
    assert write_here(api, ours_path, src, chunks, blocks, code, meta, split) == 0
    ours = blosc2.open(ours_path)
    assert ours.schunk.nchunks == ref.schunk.nchunks
    first = ours.schunk.get_chunk(0)
    assert first[22] == code and first[23] == meta
    for i in range(ref.schunk.nchunks):
        assert ours.schunk.get_chunk(i) == ref.schunk.get_chunk(i), f"chunk {i}"
    assert ours[...].tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("code,meta", MODES)
def test_zfp_arrays_agree_with_the_reference_bit_for_bit(api, tmp_path, code, meta, dtype):
    for k, (shape, chunks, blocks) in enumerate(GEOMETRIES):
        check_both_ways(api, tmp_path, smooth(shape, dtype, k), chunks, blocks, code, meta)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("code,meta", [(33, 253), (34, 20), (35, 40)])
def test_zfp_special_values_agree_with_the_reference(api, tmp_path, code, meta, dtype):
    for k, (shape, chunks, blocks) in enumerate(GEOMETRIES[1:3]):
        check_both_ways(api, tmp_path, with_specials(shape, dtype, k), chunks, blocks, code, meta)


def test_zfp_extreme_parameters_agree_with_the_reference(api, tmp_path):
    """Tolerances of 10^127 (every cell a zero bit) and 10^-128, 64 bit planes, and the minimum
    rate (9 or 12 bits a cell)."""
    shape, chunks, blocks = GEOMETRIES[2]
    for dtype in (np.float32, np.float64):
        src = smooth(shape, dtype, 3)
        for code, meta in [(33, 127), (35, 1)]:
            check_both_ways(api, tmp_path, src, chunks, blocks, code, meta)
    # Precision near lossless still compresses these f64 blocks (mostly zeros).
    src = np.zeros((40, 36), np.float64)
    src[5:9, 3:30] = np.linspace(-1, 1, 27)
    for code, meta in [(33, 128), (34, 60)]:
        check_both_ways(api, tmp_path, src, (20, 36), (8, 12), code, meta)


@pytest.mark.parametrize("split", list(blosc2.SplitMode))
def test_zfp_split_modes_agree_with_the_reference(api, tmp_path, split):
    """Split streams are not whole blocks: both libraries store them raw (ALWAYS_SPLIT); the other
    modes keep zfp's blocks whole."""
    shape, chunks, blocks = GEOMETRIES[1]
    for dtype in (np.float32, np.float64):
        check_both_ways(api, tmp_path, smooth(shape, dtype, 0), chunks, blocks, 35, 40, split)


def test_zfp_names_are_the_references(lib):
    ref = reference_library()
    for code, name in [(33, b"zfp_acc"), (34, b"zfp_prec"), (35, b"zfp_rate")]:
        for L in (lib, ref):
            p = ctypes.c_char_p()
            assert L.blosc2_compcode_to_compname(code, ctypes.byref(p)) == code
            assert p.value == name
            assert L.blosc2_compname_to_compcode(name) == code


def test_zfp_refuses_what_the_reference_refuses(api, tmp_path):
    """Writing an array the reference's plugin refuses fails with the same code in both
    libraries: a block extent under 4, 5 dimensions, 2-byte items."""
    ref = bind_b2nd(reference_library())
    cases = [
        (smooth((64, 64), np.float32, 0), (32, 32), (2, 16)),
        (smooth((4, 4, 4, 4, 8), np.float32, 0), (4, 4, 4, 4, 8), (4, 4, 4, 4, 4)),
        (np.arange(64 * 64, dtype=np.int16).reshape(64, 64), (32, 32), (16, 16)),
    ]
    for src, chunks, blocks in cases:
        for code, meta in [(33, 253), (34, 10), (35, 50)]:
            theirs = write_here(ref, None, src, chunks, blocks, code, meta)
            ours = write_here(api, None, src, chunks, blocks, code, meta)
            assert theirs < 0 and ours == theirs, (src.shape, blocks, code, ours, theirs)


def schunk_decompress_chunk(L, path, nbytes):
    """Opens `path` as a plain super-chunk through `L` and decodes chunk 0: (code, bytes)."""
    L.blosc2_schunk_open.restype = ctypes.c_void_p
    L.blosc2_schunk_open.argtypes = [ctypes.c_char_p]
    L.blosc2_schunk_decompress_chunk.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                                 ctypes.c_int32]
    L.blosc2_schunk_free.argtypes = [ctypes.c_void_p]
    sc = L.blosc2_schunk_open(path.encode())
    assert sc
    buf = ctypes.create_string_buffer(nbytes)
    try:
        return L.blosc2_schunk_decompress_chunk(sc, 0, buf, nbytes), buf.raw
    finally:
        L.blosc2_schunk_free(sc)


def test_zfp_metalayer_block_shapes_at_odds_with_the_chunk(api, lib, tmp_path):
    """The decoder takes the block shape from the b2nd metalayer. Made larger than the chunk's
    blocks (8x8 -> 8x9), decoding fails with the same code in both libraries (-3: the reference's
    plugin refuses before decoding); b2nd_open refuses the array here already. Made smaller
    (8x7), both decode that many items of each block, the same ones."""
    ref = reference_library()
    src = smooth((32, 32), np.float32, 0)
    path = tmp_path / "a.b2nd"
    reference_array(str(path), src, (16, 16), (8, 8), 33, 253)
    raw = path.read_bytes()
    blockshape = b"\x92\xd2\x00\x00\x00\x08\xd2\x00\x00\x00\x08"
    assert raw.count(blockshape) == 1

    path.write_bytes(raw.replace(blockshape, blockshape[:-1] + b"\x09"))
    ours, theirs = (schunk_decompress_chunk(L, str(path), 1024)[0] for L in (lib, ref))
    assert ours == theirs == -3
    rc, _ = read_here(api, str(path), src)
    assert rc < 0

    path.write_bytes(raw.replace(blockshape, blockshape[:-1] + b"\x07"))
    (rc1, ours), (rc2, theirs) = (schunk_decompress_chunk(L, str(path), 1024) for L in (lib, ref))
    assert rc1 == rc2 == 1024
    for block in range(4):   # 8x7 items decoded at the start of each 8x8 block
        at = block * 256
        assert ours[at:at + 224] == theirs[at:at + 224]


def test_zfp_rate_item_reads_agree_with_the_reference_decode(lib, tmp_path):
    """Reads of a few items of a reference zfp_rate array (which this library serves from the one
    zfp cell holding them when they lie in one cell row) give the reference's decoded values, for
    runs inside a cell row, across rows, cells and blocks."""
    lib.blosc2_schunk_from_buffer.restype = ctypes.c_void_p
    lib.blosc2_schunk_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_bool]
    lib.blosc2_schunk_get_slice_buffer.restype = ctypes.c_int
    lib.blosc2_schunk_get_slice_buffer.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                                   ctypes.c_void_p, ctypes.c_int32]
    lib.blosc2_schunk_free.argtypes = [ctypes.c_void_p]
    for dtype in (np.float32, np.float64):
        src = smooth((40, 36), dtype, 3)
        path = str(tmp_path / "rate.b2nd")
        ref = reference_array(path, src, (20, 36), (10, 12), 35, 30)
        frame = open(path, "rb").read()
        sc = lib.blosc2_schunk_from_buffer(frame, len(frame), True)
        assert sc
        try:
            ts = src.itemsize
            want = ref.schunk.decompress_chunk(0)
            for start in range(0, 2 * 120):
                for n in (1, 2, 3, 4, 13):
                    buf = ctypes.create_string_buffer(n * ts)
                    rc = lib.blosc2_schunk_get_slice_buffer(sc, start, start + n, buf, n * ts)
                    assert rc == 0
                    assert buf.raw == want[start * ts:(start + n) * ts], (dtype, start, n)
        finally:
            lib.blosc2_schunk_free(sc)
