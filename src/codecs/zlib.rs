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
//! Its functions are used as Rust functions (the crate's `export-symbols`
//! feature stays off), so no zlib symbol leaks out of our C library.

use std::os::raw::{c_int, c_ulong};

mod bits;
mod block;
mod encoder;
mod huffman;

pub(crate) use encoder::{handles as encoder_handles, Encoder};

use libz_sys::{
    compress2, deflate, deflateEnd, deflateInit_, deflateReset, inflate, inflateEnd, inflateInit_,
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

/// A level-1 deflate stream kept between blocks.
///
/// `compress2` builds a deflate state per call, and zlib-rs zeroes 256 KiB
/// of it (window, chain and hash tables) each time: on the 32 KiB blocks of
/// clevel 1 that is a third of the work. `deflateReset` only clears the hash
/// table, and the output must not depend on what the stream compressed
/// before (chunks must not depend on the thread count). Level 1 is safe:
/// zlib-rs runs it with `deflate_quick`, which looks at one candidate only
/// (the hash head, cleared by the reset) and cuts matches at the input's end,
/// so neither the stale chain table nor stale window bytes past the end can
/// change a choice. Streams of the other levels were seen to come out
/// different after a reset than fresh (tests/chunk_threads.rs, at clevel 5;
/// presumably through the chain state the reset keeps), so they keep
/// using [`compress`].
/// A stream that did not finish (too little room) must not just be reset:
/// zlib-rs's reset leaves its half-written block open, and the next stream
/// would come out different. When little input is left (the usual case: a
/// block that does not compress fills its room near its end), the stream is
/// run to its end into a scratch buffer; otherwise it is ended and
/// initialised anew.
pub(crate) struct Deflater {
    strm: Box<z_stream>,
    /// Whether the last stream finished, so that a reset suffices.
    clean: bool,
    /// Where the tail of a stream that did not fit is thrown.
    sink: Vec<u8>,
}

// SAFETY: the stream and its state are owned by this value alone and hold no
// thread-affine data; moving them to another thread is sound.
unsafe impl Send for Deflater {}

impl Deflater {
    /// The one level a stream is kept for (see the type's comment).
    pub(crate) const LEVEL: i32 = 1;

    pub(crate) fn new() -> Option<Self> {
        let mut strm = Box::<z_stream>::default();
        // SAFETY: `strm` is a default (null-allocator) stream that lives in a
        // box for as long as the state does; the version and size are the
        // library's own.
        let rc = unsafe { deflateInit_(&mut *strm, Self::LEVEL, zlibVersion(), stream_size()) };
        (rc == Z_OK).then_some(Deflater {
            strm,
            clean: true,
            sink: Vec::new(),
        })
    }

    /// As [`compress`] at level 1: the compressed size, 0 when it does not
    /// fit.
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> usize {
        let (Ok(in_len), Ok(out_len)) = (u32::try_from(src.len()), u32::try_from(dst.len())) else {
            return compress(src, dst, Self::LEVEL);
        };
        let s = &mut *self.strm;
        // SAFETY: the stream was initialised by deflateInit_ (again, after an
        // unfinished stream: ended first, then initialised in the same box)
        // and never moved; `next_in`/`avail_in` and `next_out`/`avail_out`
        // describe live slices that outlive the call, and zlib stays within
        // them. The pointers are cleared again below.
        let rc = unsafe {
            let ready = if self.clean {
                deflateReset(s)
            } else {
                deflateEnd(s);
                *s = z_stream::default();
                deflateInit_(s, Self::LEVEL, zlibVersion(), stream_size())
            };
            if ready != Z_OK {
                // Not usable: a zeroed stream that deflate and deflateEnd
                // refuse cleanly; every call ends up in `compress`.
                *s = z_stream::default();
                self.clean = false;
                return compress(src, dst, Self::LEVEL);
            }
            s.next_in = src.as_ptr();
            s.avail_in = in_len;
            s.next_out = dst.as_mut_ptr();
            s.avail_out = out_len;
            deflate(s, Z_FINISH)
        };
        let produced = s.total_out as usize;
        let mut end = rc;
        // Out of room with at most a quarter of the input left: finish the
        // stream into the sink (cheaper than a new state) so it can be reset.
        if rc == Z_OK && (s.avail_in as usize) * 4 <= src.len() {
            if self.sink.is_empty() {
                self.sink = vec![0u8; 16 * 1024];
            }
            while end == Z_OK {
                s.next_out = self.sink.as_mut_ptr();
                s.avail_out = self.sink.len() as u32;
                // SAFETY: as above; `next_in` still points into `src`, and the
                // output now goes to the sink, whose length is `avail_out`.
                end = unsafe { deflate(s, Z_FINISH) };
            }
        }
        s.next_in = std::ptr::null();
        s.avail_in = 0;
        s.next_out = std::ptr::null_mut();
        s.avail_out = 0;
        self.clean = end == Z_STREAM_END;
        // A full `dst` counts as not fitting, as in `compress`.
        if rc != Z_STREAM_END || produced >= dst.len() {
            return 0;
        }
        produced
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: initialised by deflateInit_ and ended exactly once.
        unsafe { deflateEnd(&mut *self.strm) };
    }
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

    /// Ramps of items with a little noise, as array chunks look.
    fn ramp(n: usize, typesize: usize, seed: u32) -> Vec<u8> {
        let mut x = 0x1234_5678u32 ^ seed;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let item = (i / typesize) as u32;
                ((item >> (8 * (i % typesize).min(3))) as u8).wrapping_add((x & 3) as u8)
            })
            .collect()
    }

    /// Streams after a longer one whose bytes continue their matches past
    /// their end (the stale window bytes a reused stream sees there), on
    /// periodic and ramp data.
    fn stale_tail_cases() -> Vec<Vec<u8>> {
        let mut x = 0x2545_f491u32;
        let mut noise = move |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect()
        };
        let mut out = Vec::new();
        for period in [3000usize, 20_000, 30_000] {
            let base = noise(period);
            let long: Vec<u8> = base.iter().copied().cycle().take(300_000).collect();
            out.push(long.clone());
            for cut in [period + 1000, 2 * period + 17, 45_000, 65_000] {
                out.push(long[..cut].to_vec());
            }
        }
        for (ts, n) in [
            (8usize, 262_147usize),
            (8, 40_000),
            (4, 70_000),
            (1, 16_384),
            (8, 40_000),
        ] {
            out.push(ramp(n, ts, n as u32));
        }
        out
    }

    /// A kept level-1 stream gives `compress2`'s bytes whatever it
    /// compressed before: periodic data cut where matches run past the end
    /// (stale window bytes there), ramps, random lengths of every kind,
    /// shrinking and growing, and streams cut short by too little room in
    /// between.
    #[test]
    fn a_reused_level_one_stream_matches_compress2() {
        let level = Deflater::LEVEL;
        let mut def = Deflater::new().unwrap();
        for src in stale_tail_cases() {
            for room in [src.len() + 64, src.len(), src.len() * 9 / 10, src.len() / 3] {
                let mut want = vec![0u8; room];
                let nw = compress(&src, &mut want, level);
                let mut got = vec![0u8; room];
                let ng = def.compress(&src, &mut got);
                assert_eq!(ng, nw, "len {} room {room}", src.len());
                assert!(got[..ng] == want[..nw], "len {} room {room}", src.len());
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut lens: Vec<usize> = vec![0, 1, 3, 4, 5, 100, 259, 4096, 32_768, 70_000, 300_000];
        lens.extend((0..40).map(|_| (next() % 80_000) as usize));
        for (i, &n) in lens.iter().chain(lens.iter().rev()).enumerate() {
            let mut src = sample(i % 3, n);
            // Repeats near the end, where a match reaches the input's end.
            if n > 600 {
                let (a, b) = src.split_at_mut(n - 300);
                b.copy_from_slice(&a[n - 900..n - 600]);
            }
            for room in [n + 64, n / 2, n * 3 / 4] {
                let mut want = vec![0u8; room];
                let nw = compress(&src, &mut want, level);
                let mut got = vec![0u8; room];
                let ng = def.compress(&src, &mut got);
                assert_eq!(ng, nw, "len {n} room {room}");
                assert!(got[..ng] == want[..nw], "len {n} room {room}");
            }
        }
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
