"""Caterva 0.5.0's spelling of caterva.h against python-blosc2 (the reference C-Blosc2 3.3.x).

caterva.h's caterva_storage_t serves both APIs: `backend` and `properties.blosc.*` (0.5.0)
alias `chunkshape`, `blockshape`, `contiguous`, `urlpath`, ... (later API); `backend` sits
at offset 68, padding in the later layout. `Storage05` below is that layout seen the 0.5.0
way (`sequencial`, then `backend`). Arrays written this way, plain buffers copied to files,
and caterva_from_serial_schunk on python-blosc2's own frames are checked against
python-blosc2; test_caterva_ctypes.py does the same for the later spelling."""
import ctypes

import blosc2
import numpy as np
import pytest

from test_caterva_ctypes import MAX_DIM, Meta, Params, Storage

CATERVA_STORAGE_BLOSC = 0
CATERVA_STORAGE_PLAINBUFFER = 0x70627566
CATERVA_ERR_INVALID_STORAGE = 4


class Storage05(ctypes.Structure):
    _fields_ = [
        ("chunkshape", ctypes.c_int32 * MAX_DIM),
        ("blockshape", ctypes.c_int32 * MAX_DIM),
        ("sequencial", ctypes.c_bool),
        ("backend", ctypes.c_int),
        ("urlpath", ctypes.c_char_p),
        ("metalayers", Meta * 15),
        ("nmetalayers", ctypes.c_int32),
    ]


class ArrayHead(ctypes.Structure):
    """The first fields of caterva_array_t (cfg, sc)."""
    _fields_ = [("cfg", ctypes.c_void_p), ("sc", ctypes.c_void_p)]


def test_layouts_agree():
    assert ctypes.sizeof(Storage05) == ctypes.sizeof(Storage)
    assert Storage05.backend.offset == 68
    for f in ("chunkshape", "blockshape", "urlpath", "metalayers", "nmetalayers"):
        assert getattr(Storage05, f).offset == getattr(Storage, f).offset
    assert Storage05.sequencial.offset == Storage.contiguous.offset


@pytest.fixture()
def ctx(lib):
    from test_caterva_ctypes import Config
    cfg = Config(compcodec=5, complevel=5, splitmode=3, nthreads=1)
    cfg.filters[5] = 1
    p = ctypes.c_void_p()
    assert lib.caterva_ctx_new(ctypes.byref(cfg), ctypes.byref(p)) == 0
    yield p
    assert lib.caterva_ctx_free(ctypes.byref(p)) == 0


def _params(arr):
    params = Params(itemsize=arr.itemsize, ndim=arr.ndim)
    for i, s in enumerate(arr.shape):
        params.shape[i] = s
    return params


def _from_buffer(lib, ctx, arr, st):
    buf = np.ascontiguousarray(arr)
    out = ctypes.c_void_p()
    rc = lib.caterva_from_buffer(ctx, buf.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(buf.nbytes),
                                 ctypes.byref(_params(arr)), ctypes.byref(st), ctypes.byref(out))
    assert rc == 0
    return out


def _blosc05(chunks, blocks, sequencial, path):
    st = Storage05(backend=CATERVA_STORAGE_BLOSC, sequencial=sequencial,
                   urlpath=None if path is None else str(path).encode())
    for i, (c, b) in enumerate(zip(chunks, blocks)):
        st.chunkshape[i], st.blockshape[i] = c, b
    return st


@pytest.mark.parametrize("sequencial", [True, False])
def test_05_written_files_open_in_python_blosc2(lib, ctx, tmp_path, sequencial):
    arr = (np.arange(9 * 7, dtype=np.int32) * 5).reshape(9, 7)
    path = tmp_path / f"c05-{sequencial}.b2nd"
    a = _from_buffer(lib, ctx, arr, _blosc05((4, 3), (2, 3), sequencial, path))
    assert lib.caterva_free(ctx, ctypes.byref(a)) == 0
    assert path.is_dir() != sequencial
    got = blosc2.open(str(path))
    assert got.shape == arr.shape and got.chunks == (4, 3) and got.blocks == (2, 3)
    assert got[...].tobytes() == arr.tobytes()
    assert got.schunk.meta["caterva"] == [0, 2, [9, 7], [4, 3], [2, 3]]


def test_plain_buffer_copied_to_a_file_opens_in_python_blosc2(lib, ctx, tmp_path):
    arr = np.arange(6 * 5 * 4, dtype=np.float64).reshape(6, 5, 4)
    plain = Storage05(backend=CATERVA_STORAGE_PLAINBUFFER)
    p = _from_buffer(lib, ctx, arr, plain)
    assert ArrayHead.from_address(p.value).sc is None  # no super-chunk behind a plain buffer
    path = tmp_path / "from-plain.b2nd"
    c = ctypes.c_void_p()
    assert lib.caterva_copy(ctx, p, ctypes.byref(_blosc05((3, 5, 2), (3, 1, 2), True, path)),
                            ctypes.byref(c)) == 0
    assert lib.caterva_free(ctx, ctypes.byref(c)) == 0
    # Serializing needs a super-chunk, as in Caterva 0.5.0.
    assert lib.caterva_save(ctx, p, str(tmp_path / "no.b2nd").encode()) == CATERVA_ERR_INVALID_STORAGE
    assert lib.caterva_free(ctx, ctypes.byref(p)) == 0
    got = blosc2.open(str(path))
    assert got.chunks == (3, 5, 2)
    assert got[...].tobytes() == arr.tobytes()


def test_python_blosc2_frame_through_caterva_from_serial_schunk(lib, ctx):
    arr = np.arange(10 * 8, dtype=np.uint16).reshape(10, 8)
    frame = blosc2.asarray(arr, chunks=(4, 8), blocks=(2, 4)).to_cframe()
    buf = ctypes.create_string_buffer(frame, len(frame))
    out = ctypes.c_void_p()
    assert lib.caterva_from_serial_schunk(ctx, buf, ctypes.c_int64(len(frame)), ctypes.byref(out)) == 0
    del buf  # the array holds its own copy
    back = np.zeros_like(arr)
    assert lib.caterva_to_buffer(ctx, out, back.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(back.nbytes)) == 0
    assert np.array_equal(back, arr)
    assert lib.caterva_free(ctx, ctypes.byref(out)) == 0


def test_python_blosc2_file_into_a_plain_buffer(lib, ctx, tmp_path):
    arr = np.arange(5 * 6, dtype=np.int8).reshape(5, 6)
    path = tmp_path / "py.b2nd"
    blosc2.asarray(arr, chunks=(2, 3), blocks=(1, 3), urlpath=str(path), mode="w")
    a = ctypes.c_void_p()
    assert lib.caterva_open(ctx, str(path).encode(), ctypes.byref(a)) == 0
    p = ctypes.c_void_p()
    plain = Storage05(backend=CATERVA_STORAGE_PLAINBUFFER)
    assert lib.caterva_copy(ctx, a, ctypes.byref(plain), ctypes.byref(p)) == 0
    back = np.zeros_like(arr)
    assert lib.caterva_to_buffer(ctx, p, back.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(back.nbytes)) == 0
    assert np.array_equal(back, arr)
    for h in (a, p):
        assert lib.caterva_free(ctx, ctypes.byref(h)) == 0
