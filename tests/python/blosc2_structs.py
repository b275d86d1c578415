"""ctypes mirrors of the reference C structs the cross-check tests pass to the library
(field order and types as in blosc2.h; the C layout test checks ours against the reference)."""
import ctypes

MAX_FILTERS = 6


class CParams(ctypes.Structure):
    _fields_ = [
        ("compcode", ctypes.c_uint8),
        ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("use_dict", ctypes.c_int),
        ("typesize", ctypes.c_int32),
        ("nthreads", ctypes.c_int16),
        ("blocksize", ctypes.c_int32),
        ("splitmode", ctypes.c_int32),
        ("schunk", ctypes.c_void_p),
        ("filters", ctypes.c_uint8 * MAX_FILTERS),
        ("filters_meta", ctypes.c_uint8 * MAX_FILTERS),
        ("prefilter", ctypes.c_void_p),
        ("preparams", ctypes.c_void_p),
        ("tuner_params", ctypes.c_void_p),
        ("tuner_id", ctypes.c_int),
        ("instr_codec", ctypes.c_bool),
        ("codec_params", ctypes.c_void_p),
        ("filter_params", ctypes.c_void_p * MAX_FILTERS),
    ]


class DParams(ctypes.Structure):
    _fields_ = [
        ("nthreads", ctypes.c_int16),
        ("schunk", ctypes.c_void_p),
        ("postfilter", ctypes.c_void_p),
        ("postparams", ctypes.c_void_p),
        ("typesize", ctypes.c_int32),
    ]


class Storage(ctypes.Structure):
    _fields_ = [
        ("contiguous", ctypes.c_bool),
        ("urlpath", ctypes.c_char_p),
        ("cparams", ctypes.POINTER(CParams)),
        ("dparams", ctypes.c_void_p),
        ("io", ctypes.c_void_p),
    ]


def blosc2_cparams_defaults(lib):
    f = lib.blosc2_get_blosc2_cparams_defaults
    f.restype = CParams
    f.argtypes = []
    return f()
