//! Zlib (deflate with zlib framing) through zlib-rs (`libz-rs-sys`).
//!
//! Why zlib-rs and not the stock zlib that `libz-sys` builds: the reference
//! wheel links zlib-ng, and zlib-rs is a port of zlib-ng in Rust. Measured
//! with `scripts/bench.py` on the chunk rows, stock zlib decoded at 0.2-0.6x
//! and encoded at 0.1-0.7x the reference; zlib-rs brings both to about the
//! reference's speed and its streams to the reference's size. Both directions
//! interoperate with the reference (tests/chunk_python round-trips chunks
//! through the python oracle). The other candidates: `libz-sys` with its
//! zlib-ng feature and `libz-ng-sys` need cmake when building, which a plain
//! `cargo build` must not require; zlib-rs is pure Rust and needs nothing.
//! Its functions are used as Rust functions (the crate's `export-symbols`
//! feature stays off), so no zlib symbol leaks out of our C library.

use std::os::raw::{c_int, c_ulong};

use libz_sys::{compress2, uncompress};

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
