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
    return bind_b2nd(lib)


def bind_b2nd(lib):
    """Declares the b2nd calls' signatures on library `lib` (ours or the reference's)."""
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


def file_array(api, src, urlpath, contiguous, chunks, blocks):
    """An array holding `src` at `urlpath` (a frame file or a sparse
    directory), made through the C API; its context is freed already."""
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = src.itemsize
    storage = Storage(contiguous, urlpath, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(
        ctypes.byref(storage), src.ndim, i64(src.shape), i32(chunks), i32(blocks),
        src.dtype.str.encode(), 0, None, 0,
    )
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) == 0
    assert api.b2nd_free_ctx(ctx) == 0
    return arr


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
    arr = file_array(api, src, urlpath, contiguous, chunks, blocks)
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

    py = blosc2.open(urlpath.decode())
    assert py.shape == want.shape
    assert py.dtype == src.dtype
    assert py.chunks == chunks and py.blocks == blocks
    np.testing.assert_array_equal(py[:], want)
    del py
    assert api.blosc2_remove_urlpath(urlpath) == 0


@pytest.mark.parametrize("contiguous", [True, False])
def test_arrays_resized_inside_open_in_python(api, tmp_path, contiguous):
    # Resizes away from the end: zero chunks inserted between stored ones
    # in one call (one write of the frame's index), then stored chunks
    # deleted from the middle, whose bytes a contiguous frame closes up in
    # one pass. python-blosc2 must read back what numpy says.
    shape, chunks, blocks = (8, 12, 5), (2, 3, 5), (1, 3, 5)
    src = source(np.int32, shape)
    urlpath = str(tmp_path / ("r.b2nd" if contiguous else "r_dir.b2nd")).encode()
    arr = file_array(api, src, urlpath, contiguous, chunks, blocks)
    # Six zero columns (two chunks per row of chunks) at column 6.
    assert api.b2nd_resize(arr, i64((8, 18, 5)), i64((0, 6, 0))) == 0
    want = np.concatenate(
        [src[:, :6], np.zeros((8, 6, 5), dtype=src.dtype), src[:, 6:]], axis=1
    )
    # Rows 2 to 5 (two rows of chunks) go.
    assert api.b2nd_resize(arr, i64((4, 18, 5)), i64((2, 0, 0))) == 0
    want = np.concatenate([want[:2], want[6:]])
    assert api.b2nd_free(arr) == 0

    py = blosc2.open(urlpath.decode())
    assert py.shape == want.shape
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
    ours = str(tmp_path / ("ours.b2nd" if contiguous else "ours_dir.b2nd")).encode()
    arr = file_array(api, src, ours, contiguous, chunks, blocks)
    assert list(arr.contents.extchunkshape[:2]) == [5, 4]
    assert api.b2nd_free(arr) == 0
    py = blosc2.open(ours.decode())
    assert py.chunks == chunks and py.blocks == blocks
    np.testing.assert_array_equal(py[:], src)
    del py
    # python-blosc2 refuses such blocks in Python before reaching its C
    # library, so the other direction is checked against the C library
    # directly (tests-c/test_b2nd_api.c mirrors what it returns).


CELL_CASES = [
    (blosc2.Filter.NDCELL, 4, np.int32),
    (blosc2.Filter.NDCELL, 3, np.uint8),
    (blosc2.Filter.NDCELL, 2, np.float64),
    (blosc2.Filter.NDMEAN, 2, np.float32),
    (blosc2.Filter.NDMEAN, 3, np.float64),
]


@pytest.mark.parametrize("case", range(len(CELL_CASES)))
def test_cell_filters_agree_with_the_reference(api, tmp_path, case):
    """NDCELL and NDMEAN (the reference's plugins for b2nd blocks) give the reference's chunks byte
    for byte, and each library reads the other's array to the same values."""
    fid, meta, dtype = CELL_CASES[case]
    shape, chunks, blocks = (13, 17, 6), (6, 8, 6), (3, 4, 6)
    src = source(dtype, shape)
    if np.dtype(dtype).kind == "f":
        src = np.linspace(-50, 50, src.size, dtype=dtype).reshape(shape) ** 2
    filters, metas = [fid, blosc2.Filter.SHUFFLE], [meta, 0]
    ref_path = str(tmp_path / "ref.b2nd")
    # One thread: the reference's threads store blocks in the order they finish.
    blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=ref_path, mode="w",
                   cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, filters=filters, filters_meta=metas,
                                          nthreads=1))
    ours_path = str(tmp_path / "ours.b2nd").encode()
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = src.itemsize
    cparams.compcode = blosc2.Codec.LZ4.value
    for i in range(6):
        cparams.filters[i], cparams.filters_meta[i] = 0, 0
    cparams.filters[0], cparams.filters_meta[0] = fid.value, meta
    cparams.filters[1] = blosc2.Filter.SHUFFLE.value
    storage = Storage(True, ours_path, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(ctypes.byref(storage), 3, i64(shape), i32(chunks), i32(blocks),
                              src.dtype.str.encode(), 0, None, 0)
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) == 0
    assert api.b2nd_free(arr) == 0
    assert api.b2nd_free_ctx(ctx) == 0

    ref, ours = blosc2.open(ref_path), blosc2.open(ours_path.decode())
    for i in range(ref.schunk.nchunks):
        assert ours.schunk.get_chunk(i) == ref.schunk.get_chunk(i), i
    want = ref[:]
    if fid == blosc2.Filter.NDCELL:
        np.testing.assert_array_equal(want, src)
    np.testing.assert_array_equal(ours[:], want)
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_open(ref_path.encode(), ctypes.byref(arr)) == 0
    got = np.empty_like(src)
    assert api.b2nd_to_cbuffer(arr, got.ctypes.data, got.nbytes) == 0
    assert got.tobytes() == want.tobytes()
    assert api.b2nd_free(arr) == 0


def test_cell_filter_chunks_decode_through_plain_schunk_calls(lib, tmp_path):
    """A super-chunk opened with blosc2_schunk_open (no b2nd call) decodes a reference NDCELL array's
    chunks with the block shape of its "b2nd" layer, as the reference's filter reads it there; so does a
    context whose dparams.schunk names it. Without a super-chunk the chunk cannot be decoded: -18."""
    from blosc2_structs import DParams

    shape, chunks, blocks = (30, 40), (12, 16), (6, 8)
    src = ((np.arange(1200, dtype=np.int32) // 7) % 11).reshape(shape)
    path = str(tmp_path / "cells.b2nd")
    blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=path, mode="w",
                   cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, nthreads=1,
                                          filters=[blosc2.Filter.NDCELL], filters_meta=[2]))
    ref = blosc2.open(path)
    lib.blosc2_schunk_open.restype = ctypes.c_void_p
    lib.blosc2_schunk_open.argtypes = [ctypes.c_char_p]
    lib.blosc2_schunk_decompress_chunk.restype = ctypes.c_int
    lib.blosc2_schunk_decompress_chunk.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                                   ctypes.c_int32]
    lib.blosc2_schunk_free.argtypes = [ctypes.c_void_p]
    lib.blosc2_get_blosc2_dparams_defaults.restype = DParams
    lib.blosc2_create_dctx.restype = ctypes.c_void_p
    lib.blosc2_create_dctx.argtypes = [DParams]
    lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
    lib.blosc2_decompress_ctx.restype = ctypes.c_int
    lib.blosc2_decompress_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                          ctypes.c_void_p, ctypes.c_int32]

    sc = lib.blosc2_schunk_open(path.encode())
    assert sc
    try:
        nbytes = 12 * 16 * 4
        for i in range(ref.schunk.nchunks):
            want = ref.schunk.decompress_chunk(i)
            buf = ctypes.create_string_buffer(nbytes)
            assert lib.blosc2_schunk_decompress_chunk(sc, i, buf, nbytes) == nbytes
            assert buf.raw == want, i
            chunk = ref.schunk.get_chunk(i)
            assert chunk[2] & 0x02 == 0, "memcpyed: the filter would not run"
            for with_schunk, expect in ((True, nbytes), (False, -18)):
                dp = lib.blosc2_get_blosc2_dparams_defaults()
                dp.schunk = sc if with_schunk else None
                ctx = lib.blosc2_create_dctx(dp)
                out = ctypes.create_string_buffer(nbytes)
                assert lib.blosc2_decompress_ctx(ctx, chunk, len(chunk), out, nbytes) == expect
                lib.blosc2_free_ctx(ctx)
                if with_schunk:
                    assert out.raw == want, i
    finally:
        lib.blosc2_schunk_free(sc)


def ndlz_image(shape, seed):
    """A uint8 'image' NDLZ has work for: rows from a small palette, each repeating with a period of
    16 columns (so whole cells and runs of rows recur elsewhere), flat bands, and a little noise that
    leaves some cells matching only in part."""
    rng = np.random.default_rng(seed)
    palette = rng.integers(0, 256, size=(5, 16), dtype=np.uint8)
    palette = np.tile(palette, (1, -(-shape[1] // 16)))[:, :shape[1]]
    img = palette[(np.arange(shape[0]) // 2) % 5].copy()
    img[:, (np.arange(shape[1]) // 8) % 5 == 1] = 200
    noise = rng.random(shape) < 0.01
    img[noise] = rng.integers(0, 256, size=int(noise.sum()), dtype=np.uint8)
    return img


def ndlz_tokens(chunk, cell):
    """The token kinds in every NDLZ stream of a chunk (blocks are never split for NDLZ)."""
    import struct
    nbytes, blocksize = struct.unpack_from("<ii", chunk, 4)
    kinds = set()
    if chunk[2] & 0x2 or chunk[31] & 0x70:   # stored raw, or a special-value chunk
        return kinds
    for b in range(-(-nbytes // blocksize)):
        start = struct.unpack_from("<i", chunk, 32 + 4 * b)[0]
        csize = struct.unpack_from("<i", chunk, start)[0]
        if csize <= 0 or csize == blocksize:     # a run of one byte, or a block stored raw
            continue
        s = chunk[start + 4:start + 4 + csize]
        rows, cols = struct.unpack_from("<ii", s, 1)
        at = 9
        for ci in range(-(-rows // cell)):
            for cj in range(-(-cols // cell)):
                part = min(cell, rows - ci * cell) * min(cell, cols - cj * cell)
                t = s[at]
                if t == 0:
                    kinds.add("literal"); at += 1 + part
                elif t == 0xC0:
                    kinds.add("cell"); at += 3
                elif t == 0x40:
                    kinds.add("repeated"); at += 2
                elif cell == 4 and t >= 224:
                    kinds.add("triple"); at += 3 + 4
                elif cell == 4 and 128 <= t <= 191:
                    kinds.add("pair"); at += 3 + 8
                elif cell == 4 and 40 <= t <= 63:
                    kinds.add("two pairs"); at += 5
                elif cell == 8 and t >> 3 == 21:
                    kinds.add("triple"); at += 3 + 40
                elif cell == 8 and t >> 3 == 17:
                    kinds.add("pair"); at += 3 + 48
                else:
                    raise AssertionError(f"token {t}")
    return kinds


@pytest.mark.parametrize("cell", [4, 8])
def test_ndlz_arrays_agree_with_the_reference(api, tmp_path, cell):
    """NDLZ (the reference's plugin codec 32 for 2-D uint8 arrays): the reference's arrays, whose
    streams use every token kind its encoder writes, open here to the same values, and arrays this
    library writes with it (its own encoder) open in the reference to the source values."""
    shape, chunks, blocks = (150, 170), (64, 96), (36, 45)   # blocks with cut edge cells
    src = ndlz_image(shape, cell)
    ref_path = str(tmp_path / "ref.b2nd")
    blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=ref_path, mode="w",
                   cparams=blosc2.CParams(codec=blosc2.Codec.NDLZ, codec_meta=cell, filters=[],
                                          nthreads=1))
    ref = blosc2.open(ref_path)
    kinds = set()
    for i in range(ref.schunk.nchunks):
        chunk = ref.schunk.get_chunk(i)
        assert chunk[22] == 32 and chunk[23] == cell
        kinds |= ndlz_tokens(chunk, cell)
    want = {"literal", "cell", "repeated", "pair", "triple"} | ({"two pairs"} if cell == 4 else set())
    assert kinds == want
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_open(ref_path.encode(), ctypes.byref(arr)) == 0
    got = np.empty_like(src)
    assert api.b2nd_to_cbuffer(arr, got.ctypes.data, got.nbytes) == 0
    np.testing.assert_array_equal(got, src)
    assert api.b2nd_free(arr) == 0

    ours_path = str(tmp_path / "ours.b2nd").encode()
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = 1
    cparams.compcode, cparams.compcode_meta = 32, cell
    for i in range(6):
        cparams.filters[i], cparams.filters_meta[i] = 0, 0
    storage = Storage(True, ours_path, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(ctypes.byref(storage), 2, i64(shape), i32(chunks), i32(blocks),
                              b"|u1", 0, None, 0)
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) == 0
    assert api.b2nd_free(arr) == 0
    assert api.b2nd_free_ctx(ctx) == 0
    ours = blosc2.open(ours_path.decode())
    np.testing.assert_array_equal(ours[:], src)
    kinds = set()
    for i in range(ours.schunk.nchunks):
        kinds |= ndlz_tokens(ours.schunk.get_chunk(i), cell)
    assert kinds == {"literal", "cell", "repeated", "pair", "triple"}
    assert ours.schunk.cbytes < ours.schunk.nbytes / 2


def test_ndmean_overlapping_cells_are_refused_when_written(api, tmp_path):
    """With 15x50 blocks and cells of 49, NDMEAN's cells overlap and leave the block's end
    uncovered: the reference writes such an array and then fails to read it; this library refuses to
    write it (BLOSC2_ERROR_FILTER_PIPELINE, -18 from the chunk, a negative code from the array)."""
    shape, chunks, blocks = (30, 100), (15, 50), (15, 50)
    src = np.linspace(0, 1, 30 * 100).reshape(shape)
    ref = blosc2.asarray(src, chunks=chunks, blocks=blocks, urlpath=str(tmp_path / "ref.b2nd"),
                         mode="w", cparams=blosc2.CParams(codec=blosc2.Codec.LZ4,
                                                          filters=[blosc2.Filter.NDMEAN],
                                                          filters_meta=[49], nthreads=1))
    assert ref.schunk.nchunks == 4
    with pytest.raises(RuntimeError):
        ref[:]
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = 8
    cparams.compcode = blosc2.Codec.LZ4.value
    for i in range(6):
        cparams.filters[i], cparams.filters_meta[i] = 0, 0
    cparams.filters[0], cparams.filters_meta[0] = blosc2.Filter.NDMEAN.value, 49
    storage = Storage(False, None, ctypes.pointer(cparams), None, None)
    ctx = api.b2nd_create_ctx(ctypes.byref(storage), 2, i64(shape), i32(chunks), i32(blocks),
                              b"<f8", 0, None, 0)
    assert ctx
    arr = ctypes.POINTER(Array)()
    assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) < 0
    assert api.b2nd_free_ctx(ctx) == 0


def test_ndlz_refuses_what_the_reference_refuses(api, lib, tmp_path):
    """NDLZ needs a 2-D array of one-byte items: a 3-D or 4-byte-item array fails to be written
    (as in the reference), and the codec answers to its name."""
    p = ctypes.c_char_p()
    assert lib.blosc2_compcode_to_compname(32, ctypes.byref(p)) == 32 and p.value == b"ndlz"
    assert lib.blosc2_compname_to_compcode(b"ndlz") == 32
    for shape, dtype in [((8, 16, 16), b"|u1"), ((64, 64), b"<i4")]:
        n = int(np.prod(shape)) * (4 if dtype == b"<i4" else 1)
        src = (np.arange(n, dtype=np.uint64) % 7).astype(np.uint8)
        cparams = blosc2_cparams_defaults(api)
        cparams.typesize = 4 if dtype == b"<i4" else 1
        cparams.compcode, cparams.compcode_meta = 32, 4
        for i in range(6):
            cparams.filters[i], cparams.filters_meta[i] = 0, 0
        storage = Storage(False, None, ctypes.pointer(cparams), None, None)
        chunks = tuple(s // 2 for s in shape)
        blocks = tuple(s // 4 for s in shape)
        ctx = api.b2nd_create_ctx(ctypes.byref(storage), len(shape), i64(shape), i32(chunks),
                                  i32(blocks), dtype, 0, None, 0)
        assert ctx
        arr = ctypes.POINTER(Array)()
        assert api.b2nd_from_cbuffer(ctx, ctypes.byref(arr), src.ctypes.data, src.nbytes) < 0
        assert api.b2nd_free_ctx(ctx) == 0
