//! Zlib (deflate with zlib framing). Decompression, and compression at
//! levels 1, 2 and 5 to 8, are this library's own ([`Inflater`],
//! `zlib/inflate.rs`; [`Encoder`], `zlib/encoder.rs`, safe Rust); levels 3,
//! 4 and 9 go through zlib-rs (`libz-rs-sys`), whose zlib-ng parse makes
//! smaller streams than the own encoder's there (see `encoder::parse_of`).
//!
//! Why: the reference links zlib-ng; zlib-rs is its port to pure Rust (a plain
//! `cargo build` needs no cmake) and makes streams the reference's size, and
//! the own coders beat it where it is slower than the reference (level 1,
//! level 5, inflate). Blosc hands over whole streams into buffers of known
//! size, which a decoder without zlib's resumable state machine exploits.
//! zlib-rs stays the yardstick: the tests check that both give the same
//! result on valid, truncated and corrupted streams. docs/PERFORMANCE.md,
//! "Zlib", has what each choice buys and the commands that measure it.
//!
//! zlib-rs is used through Rust functions (its `export-symbols` feature is
//! off), so no zlib symbol leaks out of our C library.

use std::os::raw::c_ulong;

mod bits;
mod block;
mod encoder;
mod huffman;
mod inflate;

pub(crate) use encoder::{handles as encoder_handles, Encoder};
pub(crate) use inflate::Inflate as Inflater;

use libz_sys::{compress2, zlibVersion, Z_OK};

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

/// Decodes the zlib stream in `src` into `dst` with this library's decoder
/// (`zlib/inflate.rs`) and fresh tables: the decoded size, `None` on a
/// malformed stream or one that does not end within `dst`. Chunks decode
/// through a worker's [`Inflater`]; tests use this.
#[cfg(test)]
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    Inflater::new().decompress(src, dst)
}

/// The zlib version string of the linked library (for `blosc2_get_complib_info`).
pub(crate) fn version() -> String {
    // SAFETY: zlibVersion returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(zlibVersion()) }
        .to_string_lossy()
        .into_owned()
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
            let mut inf = Inflater::new();
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
