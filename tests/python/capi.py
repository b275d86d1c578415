"""ctypes bindings shared by the cross-checks that drive both C libraries (ours and the reference's
libblosc2 from the python-blosc2 wheel) through the same calls."""
import ctypes
import os
import struct

import blosc2

from blosc2_structs import CParams, DParams


def bind(L):
    """Declares the context calls' signatures on library `L`; returns it."""
    L.blosc2_get_blosc2_cparams_defaults.restype = CParams
    L.blosc2_get_blosc2_dparams_defaults.restype = DParams
    L.blosc2_create_cctx.restype = ctypes.c_void_p
    L.blosc2_create_cctx.argtypes = [CParams]
    L.blosc2_create_dctx.restype = ctypes.c_void_p
    L.blosc2_create_dctx.argtypes = [DParams]
    L.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
    L.blosc2_ctx_get_cparams.argtypes = [ctypes.c_void_p, ctypes.POINTER(CParams)]
    for name in ("blosc2_compress_ctx", "blosc2_decompress_ctx"):
        f = getattr(L, name)
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
    return L


def reference_library():
    """The wheel's libblosc2, initialised and bound."""
    path = os.path.join(os.path.dirname(blosc2.__file__), "lib", "libblosc2.so")
    ref = ctypes.CDLL(path)
    ref.blosc2_init()
    return bind(ref)


def compress(L, cparams, src: bytes, room: int = 64, on_ctx=None) -> tuple:
    """`src` compressed by library `L` with `cparams` into a buffer `room` bytes larger:
    (what blosc2_compress_ctx returned, the chunk bytes; empty unless it succeeded), or
    (None, b"") when the context cannot be made. `on_ctx(ctx)` runs on the context first."""
    ctx = L.blosc2_create_cctx(cparams)
    if not ctx:
        return None, b""
    dest = ctypes.create_string_buffer(len(src) + room)
    # A copy: with three filters the reference's pipeline writes into the caller's source buffer
    # (its third filter gets it as output), which would change `src` for the next call.
    own = ctypes.create_string_buffer(src, len(src))
    try:
        if on_ctx is not None:
            on_ctx(ctx)
        n = L.blosc2_compress_ctx(ctx, own, len(src), dest, len(dest))
    finally:
        L.blosc2_free_ctx(ctx)
    return n, dest.raw[:max(n, 0)]


def decompress(L, chunk: bytes) -> bytes:
    """The whole chunk decoded by library `L` with default dparams (asserts success)."""
    nbytes = struct.unpack_from("<i", chunk, 4)[0]
    ctx = L.blosc2_create_dctx(L.blosc2_get_blosc2_dparams_defaults())
    dest = ctypes.create_string_buffer(nbytes)
    try:
        n = L.blosc2_decompress_ctx(ctx, chunk, len(chunk), dest, nbytes)
    finally:
        L.blosc2_free_ctx(ctx)
    assert n == nbytes, n
    return dest.raw
