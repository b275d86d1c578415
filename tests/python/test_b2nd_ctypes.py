"""The b2nd C API against python-blosc2 (the reference C-Blosc2 3.3.5).

- NDArrays written by python-blosc2 (contiguous file and sparse directory;
  dtypes uint8..complex128 and a structured dtype; codecs and filters varied)
  open through b2nd_open with the same shape, dtype string and contents, and
  b2nd_get_slice_cbuffer equals NumPy slicing;
- arrays written through our C API open in blosc2.open equal to the source.
"""
import ast
import ctypes

import blosc2
import numpy as np
import pytest

from blosc2_structs import Storage, blosc2_cparams_defaults

MAX_DIM = 16
I64s = ctypes.c_int64 * MAX_DIM
I32s = ctypes.c_int32 * MAX_DIM


class Array(ctypes.Structure):
    """`b2nd_array_t`, field for field."""

    _fields_ = [
        ("sc", ctypes.c_void_p),
        ("shape", I64s),
        ("chunkshape", I32s),
        ("extshape", I64s),
        ("blockshape", I32s),
        ("extchunkshape", I64s),
        ("nitems", ctypes.c_int64),
        ("chunknitems", ctypes.c_int32),
        ("extnitems", ctypes.c_int64),
        ("blocknitems", ctypes.c_int32),
        ("extchunknitems", ctypes.c_int64),
        ("ndim", ctypes.c_int8),
        ("cache_data", ctypes.c_void_p),
        ("cache_nchunk", ctypes.c_int64),
        ("item_array_strides", I64s),
        ("item_chunk_strides", I64s),
        ("item_extchunk_strides", I64s),
        ("item_block_strides", I64s),
        ("block_chunk_strides", I64s),
        ("chunk_array_strides", I64s),
        ("dtype", ctypes.c_char_p),
        ("dtype_format", ctypes.c_int8),
        ("last_tick", ctypes.c_int64),
    ]


@pytest.fixture(scope="module")
def api(lib):
    A = ctypes.POINTER(Array)
    sigs = {
        "b2nd_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(A)]),
        "b2nd_free": (ctypes.c_int, [A]),
        "b2nd_get_slice_cbuffer": (
            ctypes.c_int,
            [A, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64],
        ),
        "b2nd_to_cbuffer": (ctypes.c_int, [A, ctypes.c_void_p, ctypes.c_int64]),
        "b2nd_create_ctx": (
            ctypes.c_void_p,
            [
                ctypes.POINTER(Storage),
                ctypes.c_int8,
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_void_p,
                ctypes.c_char_p,
                ctypes.c_int8,
                ctypes.c_void_p,
                ctypes.c_int32,
            ],
        ),
        "b2nd_free_ctx": (ctypes.c_int, [ctypes.c_void_p]),
        "b2nd_from_cbuffer": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.POINTER(A), ctypes.c_void_p, ctypes.c_int64],
        ),
        "b2nd_set_slice_cbuffer": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, A],
        ),
        "b2nd_resize": (ctypes.c_int, [A, ctypes.c_void_p, ctypes.c_void_p]),
        "blosc2_remove_urlpath": (ctypes.c_int, [ctypes.c_char_p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def i64(v):
    return (ctypes.c_int64 * max(len(v), 1))(*v)


def i32(v):
    return (ctypes.c_int32 * max(len(v), 1))(*v)


DTYPES = [
    np.uint8,
    np.int8,
    np.uint16,
    np.int16,
    np.uint32,
    np.int32,
    np.uint64,
    np.int64,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")]),
]
CODECS = [
    (blosc2.Codec.ZSTD, [blosc2.Filter.SHUFFLE]),
    (blosc2.Codec.LZ4, [blosc2.Filter.BITSHUFFLE]),
    (blosc2.Codec.BLOSCLZ, [blosc2.Filter.DELTA, blosc2.Filter.SHUFFLE]),
    (blosc2.Codec.ZLIB, [blosc2.Filter.NOFILTER]),
]


def source(dtype, shape):
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = (np.arange(n * dt.itemsize, dtype=np.uint64) * 2654435761 >> 7).astype(np.uint8)
    # Repetitive enough to compress, distinct enough to catch misplaced items.
    raw[::3] = 0
    return raw.view(dt).reshape(shape)


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("k", range(len(DTYPES)))
def test_python_written_arrays_open_here(api, tmp_path, contiguous, k):
    dtype = DTYPES[k]
    codec, filters = CODECS[k % len(CODECS)]
    shape, chunks, blocks = (13, 17, 6), (5, 8, 6), (2, 4, 3)
    src = source(dtype, shape)
    urlpath = str(tmp_path / ("a.b2nd" if contiguous else "a_dir.b2nd"))
    blosc2.asarray(
        src,
        chunks=chunks,
        blocks=blocks,
        urlpath=urlpath,
        contiguous=contiguous,
        mode="w",
        cparams=blosc2.CParams(codec=codec, filters=filters, clevel=6),
    )
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_open(urlpath.encode(), ctypes.byref(arr)) == 0
    a = arr.contents
    assert a.ndim == 3
    assert list(a.shape[:3]) == list(shape)
    assert list(a.chunkshape[:3]) == list(chunks)
    assert list(a.blockshape[:3]) == list(blocks)
    # The dtype string python-blosc2 stored: `dtype.str`, or the descr list.
    got = a.dtype.decode()
    if src.dtype.names:
        assert got.startswith("[(")
        assert np.dtype(ast.literal_eval(got)) == src.dtype
    else:
        assert got == src.dtype.str
    full = np.empty_like(src)
    assert api.b2nd_to_cbuffer(arr, full.ctypes.data, full.nbytes) == 0
    assert full.tobytes() == src.tobytes()
    for start, stop in [((0, 0, 0), shape), ((3, 5, 1), (11, 16, 5)), ((12, 0, 5), (13, 17, 6))]:
        bshape = tuple(e - s for s, e in zip(start, stop))
        out = np.zeros(bshape, dtype=src.dtype)
        rc = api.b2nd_get_slice_cbuffer(
            arr, i64(start), i64(stop), out.ctypes.data, i64(bshape), out.nbytes
        )
        assert rc == 0
        want = src[tuple(slice(s, e) for s, e in zip(start, stop))]
        assert out.tobytes() == want.tobytes()
    assert api.b2nd_free(arr) == 0


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex128])
def test_arrays_written_here_open_in_python(api, tmp_path, contiguous, dtype):
    shape, chunks, blocks = (9, 14, 5), (4, 6, 5), (2, 3, 5)
    src = source(dtype, shape)
    urlpath = str(tmp_path / ("c.b2nd" if contiguous else "c_dir.b2nd")).encode()
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = src.itemsize
    storage = Storage(contiguous, urlpath, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(
        ctypes.byref(storage), 3, i64(shape), i32(chunks), i32(blocks),
        src.dtype.str.encode(), 0, None, 0,
    )
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) == 0
    # Change a region and grow the first axis through the C API too.
    patch = np.ascontiguousarray(src[1:3, 2:9, :][::-1])
    start, stop = (1, 2, 0), (3, 9, 5)
    assert api.b2nd_set_slice_cbuffer(
        patch.ctypes.data, i64(patch.shape), patch.nbytes, i64(start), i64(stop), arr
    ) == 0
    want = src.copy()
    want[1:3, 2:9, :] = patch
    assert api.b2nd_resize(arr, i64((11, 14, 5)), None) == 0
    want = np.concatenate([want, np.zeros((2, 14, 5), dtype=src.dtype)])
    assert api.b2nd_free(arr) == 0
    assert api.b2nd_free_ctx(ctx) == 0

    py = blosc2.open(urlpath.decode())
    assert py.shape == want.shape
    assert py.dtype == src.dtype
    assert py.chunks == chunks and py.blocks == blocks
    np.testing.assert_array_equal(py[:], want)
    del py
    assert api.blosc2_remove_urlpath(urlpath) == 0


@pytest.mark.parametrize("contiguous", [True, False])
def test_blocks_larger_than_chunks_agree_both_ways(api, tmp_path, contiguous):
    # The reference C library 3.3.5 accepts a blockshape larger than the
    # chunkshape (each chunk is padded to one whole block); so does this
    # library, and python-blosc2 reads such an array back.
    shape, chunks, blocks = (10, 3), (4, 3), (5, 2)
    src = source(np.int32, shape)
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = src.itemsize
    ours = str(tmp_path / ("ours.b2nd" if contiguous else "ours_dir.b2nd")).encode()
    storage = Storage(contiguous, ours, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(
        ctypes.byref(storage), 2, i64(shape), i32(chunks), i32(blocks), b"<i4", 0, None, 0
    )
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) == 0
    assert list(arr.contents.extchunkshape[:2]) == [5, 4]
    assert api.b2nd_free(arr) == 0
    assert api.b2nd_free_ctx(ctx) == 0
    py = blosc2.open(ours.decode())
    assert py.chunks == chunks and py.blocks == blocks
    np.testing.assert_array_equal(py[:], src)
    del py
    # python-blosc2 refuses such blocks in Python before reaching its C
    # library, so the other direction is checked against the C library
    # directly (tests-c/test_b2nd_api.c mirrors what it returns).
