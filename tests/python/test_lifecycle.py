"""The library loads through FFI and agrees with the reference on the API version it follows."""
import ctypes

import blosc2


def test_version_matches_the_reference_api(lib):
    lib.blosc2_get_version_string.restype = ctypes.c_char_p
    ours = lib.blosc2_get_version_string().decode()
    # python-blosc2's embedded C library reports e.g. "3.3.5 ($Date:: ...)".
    ref = blosc2.blosclib_version.split()[0]
    assert ours.split(".")[:2] == ref.split(".")[:2], (ours, ref)


def test_error_strings(lib):
    lib.blosc2_error_string.restype = ctypes.c_char_p
    assert lib.blosc2_error_string(-11) == b"Invalid value in header"
    assert lib.blosc2_error_string(12345) == b"Unknown error"
