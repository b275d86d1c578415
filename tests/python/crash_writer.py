"""A writer for test_crash_kill.py: edits a frame through libb2nd's C API until it is killed.

Usage: crash_writer.py LIB URLPATH CONTIGUOUS. Each edit prints one line once the call has
returned (the edit is acknowledged): "append K", "update N K" (chunk N now holds ramp(K)),
"delete", "vlmeta K" (the vlmetalayer "step" now holds str(K) * 50, msgpack-packed). The first line, "ready", follows the creation of the frame.
"""
import ctypes
import sys

import msgpack
import numpy as np

from blosc2_structs import Storage, blosc2_cparams_defaults


def ramp(k, n=20_000):
    return (np.arange(n, dtype=np.int32) * 7 + k * 1_000_003).tobytes()


def main() -> None:
    lib = ctypes.CDLL(sys.argv[1])
    lib.blosc2_init()
    P = ctypes.c_void_p
    for name, res, args in [
        ("blosc2_schunk_new", P, [ctypes.POINTER(Storage)]),
        ("blosc2_schunk_append_buffer", ctypes.c_int64, [P, ctypes.c_void_p, ctypes.c_int32]),
        ("blosc2_compress", ctypes.c_int,
         [ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]),
        ("blosc2_schunk_update_chunk", ctypes.c_int64, [P, ctypes.c_int64, ctypes.c_void_p, ctypes.c_bool]),
        ("blosc2_schunk_delete_chunk", ctypes.c_int64, [P, ctypes.c_int64]),
        ("blosc2_vlmeta_add", ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32, P]),
        ("blosc2_vlmeta_update", ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32, P]),
    ]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    cparams = blosc2_cparams_defaults(lib)
    cparams.typesize = 4
    storage = Storage(sys.argv[3] == "1", sys.argv[2].encode(), ctypes.pointer(cparams), None, None)
    sc = lib.blosc2_schunk_new(ctypes.byref(storage))
    assert sc
    first = msgpack.packb("0")
    assert lib.blosc2_vlmeta_add(sc, b"step", first, len(first), None) >= 0
    print("ready", flush=True)
    nchunks, k = 0, 0
    out = ctypes.create_string_buffer(len(ramp(0)) + 64)
    while True:
        k += 1
        buf = ramp(k)
        if k % 4 == 3 and nchunks > 1:
            # A chunk compressed here, written over chunk n.
            n = k % nchunks
            size = lib.blosc2_compress(5, 1, 4, buf, len(buf), out, len(out))
            assert size > 0
            assert lib.blosc2_schunk_update_chunk(sc, n, out, True) == nchunks
            print(f"update {n} {k}", flush=True)
        elif k % 7 == 5 and nchunks > 2:
            assert lib.blosc2_schunk_delete_chunk(sc, nchunks - 1) == nchunks - 1
            nchunks -= 1
            print("delete", flush=True)
        elif k % 5 == 4:
            text = msgpack.packb(str(k) * 50)
            assert lib.blosc2_vlmeta_update(sc, b"step", text, len(text), None) >= 0
            print(f"vlmeta {k}", flush=True)
        else:
            assert lib.blosc2_schunk_append_buffer(sc, buf, len(buf)) == nchunks + 1
            nchunks += 1
            print(f"append {k}", flush=True)


if __name__ == "__main__":
    main()
