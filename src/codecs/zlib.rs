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

use libz_sys::{
    compress2, inflate, inflateEnd, inflateInit_,
    inflateReset, uncompress, z_stream, zlibVersion, Z_FINISH, Z_OK, Z_STREAM_END,
};

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
    // zlib-rs's compress2 reports success with a truncated stream when `dst`
    // is too small (stock zlib says Z_BUF_ERROR), so a full `dst` counts as
    // not fitting.
    if rc != Z_OK || out_len as usize >= dst.len() {
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

/// The zlib version string of the linked library (for `blosc2_get_complib_info`).
#[allow(dead_code)] // for src/ffi, which still asks zlibVersion directly
pub(crate) fn version() -> String {
    // SAFETY: zlibVersion returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(zlibVersion()) }
        .to_string_lossy()
        .into_owned()
}

/// `sizeof(z_stream)`, which the init calls check.
fn stream_size() -> c_int {
    std::mem::size_of::<z_stream>() as c_int
}

/// An inflate stream kept between blocks: zlib's streams are costly to set
/// up, and inflateReset returns one to a clean state (decoding depends only on
/// the input).
pub(crate) struct Inflater {
    strm: Box<z_stream>,
}

// SAFETY: the stream and its state are owned by this value alone and hold no
// thread-affine data; moving them to another thread is sound.
unsafe impl Send for Inflater {}

impl Inflater {
    pub(crate) fn new() -> Option<Self> {
        let mut strm = Box::<z_stream>::default();
        // SAFETY: `strm` is a default (null-allocator) stream that lives in a
        // box for as long as the state does; the version and size are the
        // library's own.
        let rc = unsafe { inflateInit_(&mut *strm, zlibVersion(), stream_size()) };
        (rc == Z_OK).then_some(Inflater { strm })
    }

    /// As [`decompress`]: the decoded size, `None` on a malformed stream or
    /// one that does not end within `dst`.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let (Ok(in_len), Ok(out_len)) = (u32::try_from(src.len()), u32::try_from(dst.len())) else {
            return decompress(src, dst);
        };
        let s = &mut *self.strm;
        // SAFETY: the stream was initialised by inflateInit_ and never moved;
        // `next_in`/`avail_in` and `next_out`/`avail_out` describe live slices
        // that outlive the call, and zlib stays within them. The pointers are
        // cleared again below.
        let rc = unsafe {
            if inflateReset(s) != Z_OK {
                return None;
            }
            s.next_in = src.as_ptr();
            s.avail_in = in_len;
            s.next_out = dst.as_mut_ptr();
            s.avail_out = out_len;
            inflate(s, Z_FINISH)
        };
        let produced = s.total_out as usize;
        s.next_in = std::ptr::null();
        s.avail_in = 0;
        s.next_out = std::ptr::null_mut();
        s.avail_out = 0;
        (rc == Z_STREAM_END).then_some(produced)
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: initialised by inflateInit_ and ended exactly once.
        unsafe { inflateEnd(&mut *self.strm) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: usize, n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|i| match kind {
                0 => (i / 4096) as u8,
                1 => (i % 251) as u8 ^ (i / 1000) as u8,
                _ => {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 32) as u8
                }
            })
            .collect()
    }

    #[test]
    fn version_names_a_zlib_1_x() {
        assert!(version().starts_with("1."), "{}", version());
    }

    #[test]
    fn a_reused_inflate_stream_decodes_every_stream() {
        for level in [1, 5, 9] {
            let mut inf = Inflater::new().unwrap();
            for kind in 0..3 {
                for n in [0usize, 1, 100, 70_000, 300_000] {
                    let src = sample(kind, n);
                    for room in [n + 64, n / 2] {
                        let mut b = vec![0u8; room];
                        let nb = compress(&src, &mut b, level);
                        if nb == 0 {
                            continue;
                        }
                        let mut back = vec![0u8; n];
                        assert_eq!(inf.decompress(&b[..nb], &mut back), Some(n));
                        assert_eq!(back, src);
                        // Too little room, or a truncated stream, is refused.
                        if n > 0 {
                            let mut short = vec![0u8; n - 1];
                            assert_eq!(inf.decompress(&b[..nb], &mut short), None);
                            assert_eq!(inf.decompress(&b[..nb - 1], &mut back), None);
                        }
                    }
                }
            }
        }
    }
}
