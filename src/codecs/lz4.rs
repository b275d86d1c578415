//! LZ4 and LZ4HC block compression through the `lz4-sys` C library.
//!
//! Every function here is a thin wrapper around one C call: the pointers and
//! lengths passed come from live Rust slices, which is what makes each call
//! sound. Lengths are clamped to `i32` because the C API takes `int`.

use std::os::raw::{c_int, c_void};

// The streaming/dictionary entry points are in liblz4 (built by lz4-sys) but
// not in its Rust bindings, so they are declared here. Private imports only.
/// Private imports; kept out of the generated C header.
/// cbindgen:ignore
mod sys {
    #[allow(unused_imports)]
    use std::os::raw::{c_char, c_int, c_ulong, c_void};

    extern "C" {
        pub(super) fn LZ4_createStream() -> *mut c_void;
        pub(super) fn LZ4_freeStream(stream: *mut c_void) -> c_int;
        pub(super) fn LZ4_loadDict(
            stream: *mut c_void,
            dict: *const c_char,
            dict_size: c_int,
        ) -> c_int;
        pub(super) fn LZ4_compress_fast_continue(
            stream: *mut c_void,
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            acceleration: c_int,
        ) -> c_int;
        pub(super) fn LZ4_createStreamHC() -> *mut c_void;
        pub(super) fn LZ4_freeStreamHC(stream: *mut c_void) -> c_int;
        pub(super) fn LZ4_resetStreamHC_fast(stream: *mut c_void, level: c_int);
        pub(super) fn LZ4_loadDictHC(
            stream: *mut c_void,
            dict: *const c_char,
            dict_size: c_int,
        ) -> c_int;
        pub(super) fn LZ4_compress_HC_continue(
            stream: *mut c_void,
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
        ) -> c_int;
        pub(super) fn LZ4_decompress_safe_usingDict(
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            dict: *const c_char,
            dict_size: c_int,
        ) -> c_int;
    }
}
use sys::*;

/// Slices longer than `i32::MAX` cannot be described to the C API.
fn len_i32(n: usize) -> Option<c_int> {
    c_int::try_from(n).ok()
}

/// LZ4 fast mode; returns the compressed size, 0 when it does not fit in `dst`.
pub(crate) fn compress_fast(src: &[u8], dst: &mut [u8], accel: i32) -> usize {
    let (Some(sl), Some(dl)) = (len_i32(src.len()), len_i32(dst.len())) else {
        return 0;
    };
    // SAFETY: both pointers come from live slices and the lengths passed are
    // exactly those slices' lengths; LZ4 never writes past `dl` bytes.
    let n = unsafe {
        lz4_sys::LZ4_compress_fast(src.as_ptr().cast(), dst.as_mut_ptr().cast(), sl, dl, accel)
    };
    n.max(0) as usize
}

/// LZ4HC at `level`; returns the compressed size, 0 when it does not fit.
pub(crate) fn compress_hc(src: &[u8], dst: &mut [u8], level: i32) -> usize {
    let (Some(sl), Some(dl)) = (len_i32(src.len()), len_i32(dst.len())) else {
        return 0;
    };
    // SAFETY: pointers and lengths describe live slices; output is bounded by `dl`.
    let n = unsafe {
        lz4_sys::LZ4_compress_HC(src.as_ptr().cast(), dst.as_mut_ptr().cast(), sl, dl, level)
    };
    n.max(0) as usize
}

/// Decodes a raw LZ4 block; `None` on malformed input.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let (sl, dl) = (len_i32(src.len())?, len_i32(dst.len())?);
    // SAFETY: LZ4_decompress_safe reads at most `sl` bytes from `src` and writes
    // at most `dl` bytes to `dst`, both live slices of those lengths.
    let n = unsafe {
        lz4_sys::LZ4_decompress_safe(src.as_ptr().cast(), dst.as_mut_ptr().cast(), sl, dl)
    };
    usize::try_from(n).ok()
}

/// Decodes a raw LZ4 block that was compressed against `dict`.
pub(crate) fn decompress_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Option<usize> {
    let (sl, dl, kl) = (
        len_i32(src.len())?,
        len_i32(dst.len())?,
        len_i32(dict.len())?,
    );
    // SAFETY: all three pointers/lengths describe live slices; the decoder is
    // bounds-checked against them.
    let n = unsafe {
        LZ4_decompress_safe_usingDict(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            sl,
            dl,
            dict.as_ptr().cast(),
            kl,
        )
    };
    usize::try_from(n).ok()
}

/// An LZ4 (fast) stream, owned and freed on drop.
struct Stream(*mut c_void);

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the pointer came from LZ4_createStream and is freed once.
        unsafe { LZ4_freeStream(self.0) };
    }
}

/// An LZ4HC stream, owned and freed on drop.
struct StreamHc(*mut c_void);

impl Drop for StreamHc {
    fn drop(&mut self) {
        // SAFETY: the pointer came from LZ4_createStreamHC and is freed once.
        unsafe { LZ4_freeStreamHC(self.0) };
    }
}

/// LZ4 fast mode with a dictionary: every block references only `dict`, never
/// an earlier block, so blocks stay independently decodable.
pub(crate) fn compress_fast_dict(src: &[u8], dst: &mut [u8], accel: i32, dict: &[u8]) -> usize {
    let (Some(sl), Some(dl), Some(kl)) =
        (len_i32(src.len()), len_i32(dst.len()), len_i32(dict.len()))
    else {
        return 0;
    };
    // SAFETY: LZ4_createStream has no preconditions; a null result is handled.
    let stream = Stream(unsafe { LZ4_createStream() });
    if stream.0.is_null() {
        return 0;
    }
    // SAFETY: the stream is valid; `dict` outlives the stream's use below and
    // the pointers/lengths describe live slices.
    let n = unsafe {
        LZ4_loadDict(stream.0, dict.as_ptr().cast(), kl);
        LZ4_compress_fast_continue(
            stream.0,
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            sl,
            dl,
            accel,
        )
    };
    n.max(0) as usize
}

/// LZ4HC with a dictionary (see [`compress_fast_dict`]).
pub(crate) fn compress_hc_dict(src: &[u8], dst: &mut [u8], level: i32, dict: &[u8]) -> usize {
    let (Some(sl), Some(dl), Some(kl)) =
        (len_i32(src.len()), len_i32(dst.len()), len_i32(dict.len()))
    else {
        return 0;
    };
    // SAFETY: LZ4_createStreamHC has no preconditions; a null result is handled.
    let stream = StreamHc(unsafe { LZ4_createStreamHC() });
    if stream.0.is_null() {
        return 0;
    }
    // SAFETY: the stream is valid; `dict`, `src` and `dst` are live slices
    // whose lengths are the ones passed.
    let n = unsafe {
        LZ4_resetStreamHC_fast(stream.0, level);
        LZ4_loadDictHC(stream.0, dict.as_ptr().cast(), kl);
        LZ4_compress_HC_continue(
            stream.0,
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            sl,
            dl,
        )
    };
    n.max(0) as usize
}
