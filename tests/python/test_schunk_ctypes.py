"""The super-chunk C API against python-blosc2 (the reference C-Blosc2 3.3.5).

- SChunks written by python-blosc2 (contiguous file and sparse directory, with
  metalayers and vlmetalayers) open through blosc2_schunk_open with the same
  compressed chunks, the same decoded bytes and the same metadata;
- frames written and edited (insert, update, delete) through our C API open
  in blosc2.open with the right contents and metadata.
"""
import ctypes

import blosc2
import msgpack
import numpy as np
import pytest

from blosc2_structs import MAX_FILTERS, CParams, Storage, blosc2_cparams_defaults

class SChunkHead(ctypes.Structure):
    """The leading fields of `blosc2_schunk` (enough for these checks)."""

    _fields_ = [
        ("version", ctypes.c_uint8),
        ("compcode", ctypes.c_uint8),
        ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("splitmode", ctypes.c_uint8),
        ("typesize", ctypes.c_int32),
        ("blocksize", ctypes.c_int32),
        ("chunksize", ctypes.c_int32),
        ("flags2", ctypes.c_uint8),
        ("use_dict", ctypes.c_uint8),
        ("filters", ctypes.c_uint8 * MAX_FILTERS),
        ("filters_meta", ctypes.c_uint8 * MAX_FILTERS),
        ("nchunks", ctypes.c_int64),
        ("current_nchunk", ctypes.c_int64),
        ("nbytes", ctypes.c_int64),
        ("cbytes", ctypes.c_int64),
    ]




@pytest.fixture(scope="module")
def api(lib):
    P = ctypes.POINTER(SChunkHead)
    u8p = ctypes.POINTER(ctypes.c_uint8)
    sigs = {
        "blosc2_schunk_open": (P, [ctypes.c_char_p]),
        "blosc2_schunk_new": (P, [ctypes.POINTER(Storage)]),
        "blosc2_schunk_free": (ctypes.c_int, [P]),
        "blosc2_schunk_get_chunk": (
            ctypes.c_int,
            [P, ctypes.c_int64, ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_bool)],
        ),
        "blosc2_schunk_decompress_chunk": (
            ctypes.c_int,
            [P, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int32],
        ),
        "blosc2_schunk_append_buffer": (ctypes.c_int64, [P, ctypes.c_void_p, ctypes.c_int32]),
        "blosc2_schunk_insert_chunk": (
            ctypes.c_int64,
            [P, ctypes.c_int64, ctypes.c_void_p, ctypes.c_bool],
        ),
        "blosc2_schunk_update_chunk": (
            ctypes.c_int64,
            [P, ctypes.c_int64, ctypes.c_void_p, ctypes.c_bool],
        ),
        "blosc2_schunk_delete_chunk": (ctypes.c_int64, [P, ctypes.c_int64]),
        "blosc2_meta_add": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32]),
        "blosc2_meta_get": (
            ctypes.c_int,
            [P, ctypes.c_char_p, ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_int32)],
        ),
        "blosc2_vlmeta_add": (
            ctypes.c_int,
            [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_void_p],
        ),
        "blosc2_vlmeta_get": (
            ctypes.c_int,
            [P, ctypes.c_char_p, ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_int32)],
        ),
        "blosc2_remove_urlpath": (ctypes.c_int, [ctypes.c_char_p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    lib.libc_free = libc.free
    return lib


def chunk_bytes(api, sc, n):
    ptr = ctypes.POINTER(ctypes.c_uint8)()
    needs_free = ctypes.c_bool()
    size = api.blosc2_schunk_get_chunk(sc, n, ctypes.byref(ptr), ctypes.byref(needs_free))
    assert size > 0, size
    out = ctypes.string_at(ptr, size)
    if needs_free.value:
        api.libc_free(ptr)
    return out


def decoded(api, sc, n, nbytes):
    buf = ctypes.create_string_buffer(nbytes)
    assert api.blosc2_schunk_decompress_chunk(sc, n, buf, nbytes) == nbytes
    return buf.raw


def malloced_bytes(api, getter, sc, name):
    ptr = ctypes.POINTER(ctypes.c_uint8)()
    n = ctypes.c_int32()
    rc = getter(sc, name, ctypes.byref(ptr), ctypes.byref(n))
    assert rc >= 0, rc
    out = ctypes.string_at(ptr, n.value)
    api.libc_free(ptr)
    return out


@pytest.mark.parametrize("contiguous", [True, False])
def test_python_written_schunks_open_here(api, tmp_path, contiguous):
    urlpath = str(tmp_path / ("py.b2frame" if contiguous else "py_sparse.b2frame"))
    rng = np.random.default_rng(7)
    data = rng.integers(0, 1000, size=25_000, dtype=np.int32)
    meta = {"dims": b"\x01\x02\x03", "shape": [5, 5000]}
    sc_py = blosc2.SChunk(
        chunksize=40_000,
        data=data,
        urlpath=urlpath,
        contiguous=contiguous,
        mode="w",
        cparams={"typesize": 4, "codec": blosc2.Codec.ZSTD, "clevel": 3},
        meta=meta,
    )
    sc_py.vlmeta["author"] = "python"
    sc_py.vlmeta["numbers"] = [1, 2, 3]
    nchunks = sc_py.nchunks
    py_chunks = [sc_py.get_chunk(i) for i in range(nchunks)]
    py_decoded = [sc_py.decompress_chunk(i) for i in range(nchunks)]
    del sc_py

    sc = api.blosc2_schunk_open(urlpath.encode())
    assert sc
    try:
        head = sc.contents
        assert head.nchunks == nchunks
        assert head.nbytes == data.nbytes
        assert head.typesize == 4
        assert head.chunksize == 40_000
        for i in range(nchunks):
            assert chunk_bytes(api, sc, i) == py_chunks[i]
            assert decoded(api, sc, i, len(py_decoded[i])) == py_decoded[i]
        # Fixed metalayers hold the msgpack encoding python-blosc2 wrote.
        for name, value in meta.items():
            got = malloced_bytes(api, api.blosc2_meta_get, sc, name.encode())
            assert msgpack.unpackb(got) == value
        assert msgpack.unpackb(malloced_bytes(api, api.blosc2_vlmeta_get, sc, b"author")) == "python"
        assert msgpack.unpackb(malloced_bytes(api, api.blosc2_vlmeta_get, sc, b"numbers")) == [1, 2, 3]
    finally:
        api.blosc2_schunk_free(sc)


def ramp(k, n=10_000):
    return (np.arange(n, dtype=np.int32) + k * 1_000_000).tobytes()


@pytest.mark.parametrize("contiguous", [True, False])
def test_frames_edited_here_open_in_python(api, tmp_path, contiguous):
    urlpath = str(tmp_path / ("c.b2frame" if contiguous else "c_sparse.b2frame")).encode()
    cparams = blosc2_cparams_defaults(api)
    cparams.typesize = 4
    storage = Storage(contiguous, urlpath, ctypes.pointer(cparams), None, None)
    sc = api.blosc2_schunk_new(ctypes.byref(storage))
    assert sc
    meta_content = msgpack.packb([10, 20, 30])
    assert api.blosc2_meta_add(sc, b"grid", meta_content, len(meta_content)) == 0
    for k in range(5):
        buf = ramp(k)
        assert api.blosc2_schunk_append_buffer(sc, buf, len(buf)) == k + 1
    # insert a copy of chunk 4 at position 1, update chunk 3 with chunk 0, delete chunk 0
    c4 = chunk_bytes(api, sc, 4)
    assert api.blosc2_schunk_insert_chunk(sc, 1, c4, True) == 6   # 0 4 1 2 3 4
    c0 = chunk_bytes(api, sc, 0)
    assert api.blosc2_schunk_update_chunk(sc, 3, c0, True) == 6   # 0 4 1 0 3 4
    assert api.blosc2_schunk_delete_chunk(sc, 0) == 5             # 4 1 0 3 4
    vl = msgpack.packb({"edited": True})
    assert api.blosc2_vlmeta_add(sc, b"info", vl, len(vl), None) == 0
    assert api.blosc2_schunk_free(sc) == 0

    py = blosc2.open(urlpath.decode())
    assert py.nchunks == 5
    assert py.typesize == 4
    for i, k in enumerate([4, 1, 0, 3, 4]):
        assert py.decompress_chunk(i) == ramp(k), i
    assert py.meta["grid"] == [10, 20, 30]
    assert py.vlmeta["info"] == {"edited": True}
    # Item slices read across the edited chunks.
    assert py.get_slice(9_990, 10_010) == ramp(4)[-40:] + ramp(1)[:40]
    del py
    assert api.blosc2_remove_urlpath(urlpath) == 0




@pytest.fixture(scope="module")
def reflib():
    """The reference C-Blosc2 library shipped in the python-blosc2 wheel."""
    import pathlib

    path = pathlib.Path(blosc2.__file__).parent / "lib" / "libblosc2.so"
    ref = ctypes.CDLL(str(path))
    ref.blosc2_init()
    ref.blosc2_schunk_open.restype = ctypes.c_void_p
    ref.blosc2_schunk_open.argtypes = [ctypes.c_char_p]
    ref.blosc2_frame_get_offsets.restype = ctypes.POINTER(ctypes.c_int64)
    ref.blosc2_frame_get_offsets.argtypes = [ctypes.c_void_p]
    ref.blosc2_schunk_free.argtypes = [ctypes.c_void_p]
    return ref


@pytest.mark.parametrize("contiguous", [True, False])
def test_frame_offsets_match_the_reference(api, reflib, tmp_path, contiguous):
    urlpath = str(tmp_path / ("off.b2frame" if contiguous else "off_sparse.b2frame"))
    sc_py = blosc2.SChunk(
        chunksize=8_000, urlpath=urlpath, contiguous=contiguous, mode="w", cparams={"typesize": 4}
    )
    for k in range(4):
        sc_py.append_data(np.arange(2_000, dtype=np.int32) * (k + 1))
    sc_py.append_data(np.zeros(2_000, dtype=np.int32))  # a special (zero) chunk
    sc_py.delete_chunk(1)
    nchunks = sc_py.nchunks
    del sc_py

    api.blosc2_frame_get_offsets.restype = ctypes.POINTER(ctypes.c_int64)
    api.blosc2_frame_get_offsets.argtypes = [ctypes.POINTER(SChunkHead)]
    ours_sc = api.blosc2_schunk_open(urlpath.encode())
    ref_sc = reflib.blosc2_schunk_open(urlpath.encode())
    assert ours_sc and ref_sc
    ours = api.blosc2_frame_get_offsets(ours_sc)
    ref = reflib.blosc2_frame_get_offsets(ref_sc)
    assert ours and ref
    got = [ours[i] for i in range(nchunks)]
    assert got == [ref[i] for i in range(nchunks)]
    assert len(set(got)) == nchunks and min(got) < 0, got  # distinct; the zero chunk is special
    api.libc_free(ours)
    api.libc_free(ref)
    api.blosc2_schunk_free(ours_sc)
    reflib.blosc2_schunk_free(ref_sc)
