"""Arrays written through the Caterva C API open in python-blosc2 (the reference C-Blosc2
3.3.5): same shape, chunks, blocks and items, with both the "b2nd" and "caterva" metalayers;
and a file written by python-blosc2 opens through caterva_open with the same items."""
import ctypes

import blosc2
import numpy as np
import pytest

MAX_DIM = 8


class Config(ctypes.Structure):
    _fields_ = [
        ("alloc", ctypes.c_void_p),
        ("free", ctypes.c_void_p),
        ("compcodec", ctypes.c_uint8),
        ("compmeta", ctypes.c_uint8),
        ("complevel", ctypes.c_uint8),
        ("splitmode", ctypes.c_int32),
        ("usedict", ctypes.c_int),
        ("nthreads", ctypes.c_int16),
        ("filters", ctypes.c_uint8 * 6),
        ("filtersmeta", ctypes.c_uint8 * 6),
        ("prefilter", ctypes.c_void_p),
        ("pparams", ctypes.c_void_p),
        ("udbtune", ctypes.c_void_p),
    ]


class Meta(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("sdata", ctypes.c_void_p), ("size", ctypes.c_int32)]


class Storage(ctypes.Structure):
    _fields_ = [
        ("chunkshape", ctypes.c_int32 * MAX_DIM),
        ("blockshape", ctypes.c_int32 * MAX_DIM),
        ("contiguous", ctypes.c_bool),
        ("urlpath", ctypes.c_char_p),
        ("metalayers", Meta * 15),
        ("nmetalayers", ctypes.c_int32),
    ]


class Params(ctypes.Structure):
    _fields_ = [("itemsize", ctypes.c_uint8), ("shape", ctypes.c_int64 * MAX_DIM), ("ndim", ctypes.c_int8)]


@pytest.fixture()
def ctx(lib):
    cfg = Config(compcodec=5, complevel=5, splitmode=3, nthreads=1)
    cfg.filters[5] = 1
    p = ctypes.c_void_p()
    assert lib.caterva_ctx_new(ctypes.byref(cfg), ctypes.byref(p)) == 0
    yield p
    assert lib.caterva_ctx_free(ctypes.byref(p)) == 0


def _create(lib, ctx, arr, chunks, blocks, contiguous, path):
    params = Params(itemsize=arr.itemsize, ndim=arr.ndim)
    st = Storage(contiguous=contiguous, urlpath=str(path).encode())
    for i, (s, c, b) in enumerate(zip(arr.shape, chunks, blocks)):
        params.shape[i], st.chunkshape[i], st.blockshape[i] = s, c, b
    buf = np.ascontiguousarray(arr)
    out = ctypes.c_void_p()
    rc = lib.caterva_from_buffer(ctx, buf.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(buf.nbytes),
                                 ctypes.byref(params), ctypes.byref(st), ctypes.byref(out))
    assert rc == 0
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.int64])
@pytest.mark.parametrize("contiguous", [True, False])
def test_caterva_written_arrays_open_in_python_blosc2(lib, ctx, tmp_path, dtype, contiguous):
    rng = np.random.default_rng(7)
    arr = (rng.integers(0, 100, size=(11, 6, 5)) * 3).astype(dtype)
    path = tmp_path / f"cat-{contiguous}.b2nd"
    a = _create(lib, ctx, arr, (4, 6, 3), (2, 3, 3), contiguous, path)
    assert lib.caterva_free(ctx, ctypes.byref(a)) == 0
    got = blosc2.open(str(path))
    assert got.shape == arr.shape
    assert got.chunks == (4, 6, 3)
    assert got.blocks == (2, 3, 3)
    assert got.schunk.typesize == arr.itemsize
    raw = got[...]
    # No dtype is recorded (Caterva has none): items come back as |S<itemsize> bytes.
    assert raw.dtype.itemsize == arr.itemsize
    assert raw.tobytes() == arr.tobytes()
    meta = got.schunk.meta
    assert "b2nd" in meta and "caterva" in meta
    # The caterva layer is the 5-entry msgpack record [version, ndim, shape, chunks, blocks].
    assert meta["caterva"] == [0, 3, [11, 6, 5], [4, 6, 3], [2, 3, 3]]


def test_python_written_array_opens_through_caterva(lib, ctx, tmp_path):
    arr = np.arange(7 * 9, dtype=np.int32).reshape(7, 9)
    path = tmp_path / "py.b2nd"
    blosc2.asarray(arr, chunks=(3, 4), blocks=(2, 2), urlpath=str(path), mode="w")
    out = ctypes.c_void_p()
    assert lib.caterva_open(ctx, str(path).encode(), ctypes.byref(out)) == 0
    back = np.zeros_like(arr)
    assert lib.caterva_to_buffer(ctx, out, back.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(back.nbytes)) == 0
    assert np.array_equal(back, arr)
    assert lib.caterva_free(ctx, ctypes.byref(out)) == 0


def test_resize_through_caterva_seen_by_python_blosc2(lib, ctx, tmp_path):
    arr = np.arange(6 * 4, dtype=np.int16).reshape(6, 4)
    path = tmp_path / "grow.b2nd"
    a = _create(lib, ctx, arr, (3, 4), (3, 2), True, path)
    new_shape = (ctypes.c_int64 * 2)(9, 4)
    assert lib.caterva_resize(ctx, a, new_shape, None) == 0
    assert lib.caterva_free(ctx, ctypes.byref(a)) == 0
    got = blosc2.open(str(path))
    assert got.shape == (9, 4)
    assert got.schunk.meta["caterva"][2] == [9, 4]
    assert got[:6].tobytes() == arr.tobytes()


@pytest.mark.parametrize("contiguous", [True, False])
def test_squeeze_through_caterva_seen_by_python_blosc2(lib, ctx, tmp_path, contiguous):
    arr = (np.arange(6 * 4, dtype=np.int16) * 11).reshape(1, 6, 1, 4)
    path = tmp_path / f"squeeze-{contiguous}.b2nd"
    a = _create(lib, ctx, arr, (1, 3, 1, 2), (1, 2, 1, 1), contiguous, path)
    assert lib.caterva_squeeze(ctx, a) == 0
    new_shape = (ctypes.c_int64 * 2)(8, 4)
    assert lib.caterva_resize(ctx, a, new_shape, None) == 0
    assert lib.caterva_free(ctx, ctypes.byref(a)) == 0
    got = blosc2.open(str(path))
    assert got.shape == (8, 4)
    assert got.chunks == (3, 2)
    assert got.blocks == (2, 1)
    assert got[:6].tobytes() == arr.tobytes()
    # Both layers are whole msgpack records of the new geometry; the dtype
    # field that fills each slot keeps its meaning for NumPy (|S2).
    meta = got.schunk.meta
    assert meta["b2nd"][:5] == [0, 2, [8, 4], [3, 2], [2, 1]]
    assert meta["caterva"][:5] == [0, 2, [8, 4], [3, 2], [2, 1]]
    assert np.dtype(meta["b2nd"][6]) == np.dtype("S2")


@pytest.mark.parametrize("contiguous", [True, False])
def test_caterva_save_keeps_the_storage_kind_for_python_blosc2(lib, ctx, tmp_path, contiguous):
    arr = np.arange(40, dtype=np.float64).reshape(8, 5)
    params = Params(itemsize=8, ndim=2)
    st = Storage(contiguous=contiguous, urlpath=None)
    for i, (s, c, b) in enumerate(zip(arr.shape, (3, 5), (2, 5))):
        params.shape[i], st.chunkshape[i], st.blockshape[i] = s, c, b
    out = ctypes.c_void_p()
    rc = lib.caterva_from_buffer(ctx, arr.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(arr.nbytes),
                                 ctypes.byref(params), ctypes.byref(st), ctypes.byref(out))
    assert rc == 0
    path = tmp_path / "saved.b2nd"
    assert lib.caterva_save(ctx, out, str(path).encode()) == 0
    assert lib.caterva_free(ctx, ctypes.byref(out)) == 0
    assert path.is_dir() != contiguous
    got = blosc2.open(str(path))
    assert got.shape == (8, 5)
    assert got[...].tobytes() == arr.tobytes()
