//! Zlib (deflate with zlib framing) through the zlib that `libz-sys` builds.
//!
//! `compress2`/`uncompress` are part of that library but only exposed by
//! `libz-sys` with its `libc` feature, so they are declared here.

// Links the zlib that libz-sys builds (nothing else from the crate is used).
extern crate libz_sys;

use std::os::raw::{c_int, c_ulong};

/// Private imports; kept out of the generated C header.
/// cbindgen:ignore
mod sys {
    #[allow(unused_imports)]
    use std::os::raw::{c_char, c_int, c_ulong, c_void};

    extern "C" {
        pub(super) fn compress2(
            dest: *mut u8,
            dest_len: *mut c_ulong,
            source: *const u8,
            source_len: c_ulong,
            level: c_int,
        ) -> c_int;
        pub(super) fn uncompress(
            dest: *mut u8,
            dest_len: *mut c_ulong,
            source: *const u8,
            source_len: c_ulong,
        ) -> c_int;
    }
}
use sys::*;

const Z_OK: c_int = 0;

/// `compress2` at `level`; returns the compressed size, 0 when it does not fit.
pub(crate) fn compress(src: &[u8], dst: &mut [u8], level: i32) -> usize {
    let (Ok(mut out_len), Ok(in_len)) =
        (c_ulong::try_from(dst.len()), c_ulong::try_from(src.len()))
    else {
        return 0;
    };
    // SAFETY: `dst`/`out_len` and `src`/`in_len` describe live slices; zlib
    // writes at most `out_len` bytes and stores the produced size back.
    let rc = unsafe { compress2(dst.as_mut_ptr(), &mut out_len, src.as_ptr(), in_len, level) };
    if rc != Z_OK {
        return 0;
    }
    out_len as usize
}

/// `uncompress` into `dst`; `None` on a malformed or oversized stream.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let mut out_len = c_ulong::try_from(dst.len()).ok()?;
    let in_len = c_ulong::try_from(src.len()).ok()?;
    // SAFETY: pointer/length pairs come from live slices; zlib bounds its
    // reads by `in_len` and its writes by `out_len`.
    let rc = unsafe { uncompress(dst.as_mut_ptr(), &mut out_len, src.as_ptr(), in_len) };
    if rc != Z_OK {
        return None;
    }
    Some(out_len as usize)
}
