//! Zlib (deflate with zlib framing) through zlib-rs (`libz-rs-sys`), except
//! compression at levels 1, 2 and 5 to 8 and all decompression, which this
//! library does itself (both below). zlib-rs compresses levels 3, 4 and 9,
//! where zlib-ng's parse makes smaller streams than the own encoder's (see
//! `encoder::parse_of`).
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
//! Speed was tried too: `libz-ng-sys` 1.1.31 builds zlib-ng 2.3.3, the exact
//! release the reference embeds, and its streams were identical, but built
//! with this machine's GCC 12 its level 5 (deflate_medium) compressed at about
//! 0.7x the wheel's copy (built with GCC 14), whatever the optimisation flags
//! and SIMD options; zlib-rs 0.6 runs at 0.87-1.0x (`scripts/bench.sh --only
//! /zlib/`). The zlib-ng observation was an ad-hoc measurement, not a
//! command in this repository.
//! libdeflate (`libdeflate-sys` 1.26, one-shot block compression) was tried
//! for clevels 2-9 and dropped: on ordinary data it compressed 1.2-1.5x faster
//! than the reference at the same ratio, but on constant data (long runs in
//! one unsplit stream) clevel 5 ran at 0.22-0.29x the reference, and zlib-rs
//! decoded its streams at 0.2-0.45x the speed it decodes zlib-ng's (seen with
//! `scripts/bench.sh --only /zlib/` on that trial build, not kept).
//! Level 5, the one level where zlib-rs compressed slower than the
//! reference (`scripts/instructions.sh chunk/smooth3d-f8/zlib/c5/shuffle/t1`
//! counted 1.2x its instructions), is compressed by this library's own
//! encoder ([`Encoder`], `zlib/encoder.rs`), whose streams come out the size
//! of zlib-ng's level 5 and are inflated by zlib-rs as fast as zlib-ng's
//! (`scripts/bench.sh --only /zlib/c5/` compares all three columns). What was
//! tried before it, and dropped (ad-hoc measurements, none kept as a command):
//! - Why GCC 12's zlib-ng is slow: a sampling profile puts the time in
//!   `deflate_medium` right after it reloads its 8-byte match record from the
//!   stack, just written as 2- and 4-byte pieces, a load that store-to-load
//!   forwarding cannot serve. Its instruction count is within a tenth of the
//!   wheel's. No GCC 12 option tried (-O1/-O2/-O3, no vectorizing, no SRA,
//!   SRA limits, alignment) removed it.
//! - zlib-rs's deficit sits in the same function's own loop: `longest_match`
//!   and the Huffman code are on par with the wheel's or faster.
//! - `deflateTune` with shorter chains or nice lengths at level 5 barely
//!   changes the speed (the time is not in chain walks) and costs ratio.
//! - libdeflate again: it compresses these rows much faster at about the same
//!   ratio, but zlib-rs inflates its streams several times more slowly than
//!   zlib-ng's on the smooth and sine data sets, so it would trade this
//!   compression deficit for a worse decompression one.
//!
//! Level 1 is the own encoder's too, with a one-candidate parse like
//! zlib-ng's `deflate_quick` but Huffman codes fitted to each block (quick
//! sends fixed codes) and positions skipped after long stretches without a
//! match. On the level-1 rows of `scripts/bench.sh --only /zlib/c1/` its
//! ratios are 1.0-1.9x the reference's, and `scripts/instructions.sh`
//! counts 0.32-0.61x the reference's compression instructions on the
//! level-1 t1 rows (shuffle; bitshuffle for noisysine).
//! It replaced a kept zlib-rs stream (`deflateReset` between blocks), which
//! had been level 1's route because a reset stream's output could depend on
//! what it compressed before at the other levels.
//!
//! Decompression is this library's own one-shot decoder ([`Inflater`],
//! `zlib/inflate.rs`, safe Rust). zlib-rs's `inflate` counted 1.34x the
//! reference's (zlib-ng's) instructions on the decompress line of
//! `scripts/instructions.sh chunk/smooth3d-f8/zlib/c5/shuffle/t1` and 1.56x
//! on `chunk/randint-i4/zlib/c1/shuffle/t1`; with the own decoder the same
//! rows count 0.78x. Blosc hands over whole streams and buffers of known
//! size, which a decoder without zlib's resumable state machine can exploit
//! (see that module). zlib-rs remains its yardstick: the tests check that
//! both give the same result on valid, truncated and corrupted streams.
//!
//! Its functions are used as Rust functions (the crate's `export-symbols`
//! feature stays off), so no zlib symbol leaks out of our C library.

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
#[allow(dead_code)] // for src/ffi, which still asks zlibVersion directly
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
