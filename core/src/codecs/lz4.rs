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
        pub(super) fn LZ4_compress_fast_extState_fastReset(
            state: *mut c_void,
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            acceleration: c_int,
        ) -> c_int;
        pub(super) fn LZ4_compress_HC_extStateHC_fastReset(
            state: *mut c_void,
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            level: c_int,
        ) -> c_int;
        pub(super) fn LZ4_decompress_safe_usingDict(
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            dst_capacity: c_int,
            dict: *const c_char,
            dict_size: c_int,
        ) -> c_int;
        pub(super) fn LZ4_decompress_safe_partial(
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            target_output_size: c_int,
            dst_capacity: c_int,
        ) -> c_int;
        pub(super) fn LZ4_decompress_safe_partial_usingDict(
            src: *const c_char,
            dst: *mut c_char,
            src_size: c_int,
            target_output_size: c_int,
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

/// Decodes the first `need` bytes (at most `dst.len()`) of the raw LZ4 block
/// `src`, compressed against `dict` when there is one, into `dst`, and stops
/// there; returns the bytes decoded (fewer than `need` only when the block
/// holds fewer), `None` on malformed input.
pub(crate) fn decompress_prefix(
    src: &[u8],
    dst: &mut [u8],
    need: usize,
    dict: Option<&[u8]>,
) -> Option<usize> {
    let (sl, dl) = (len_i32(src.len())?, len_i32(dst.len())?);
    let target = len_i32(need.min(dst.len()))?;
    let (src, dst) = (src.as_ptr().cast(), dst.as_mut_ptr().cast());
    let n = match dict {
        // SAFETY: the decoder reads at most `sl` bytes of `src` and writes at
        // most `target <= dl` bytes of `dst`, both live slices of those
        // lengths. `src` is the whole block, so a `target` past its decoded
        // size is allowed (it stops at the block's end).
        None => unsafe { LZ4_decompress_safe_partial(src, dst, sl, target, dl) },
        Some(dict) => {
            let kl = len_i32(dict.len())?;
            // SAFETY: as above, and `dict` is a live slice of `kl` bytes,
            // only read.
            unsafe {
                LZ4_decompress_safe_partial_usingDict(
                    src,
                    dst,
                    sl,
                    target,
                    dl,
                    dict.as_ptr().cast(),
                    kl,
                )
            }
        }
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

/// Inputs below this size use LZ4's 16-bit position table, the one case in
/// which a kept fast-mode state gives exactly the bytes of a fresh one (see
/// [`FastState`]).
const SMALL_INPUT: usize = 64 * 1024;

/// An LZ4 fast-mode state kept between calls.
///
/// `LZ4_compress_fast` clears its 16 KiB hash table on every call; on the
/// few-KiB streams of a shuffled block that is a large share of the work.
/// `LZ4_compress_fast_extState_fastReset` keeps the table and moves the
/// position base past the old entries, which it then rejects. For inputs
/// under 64 KiB (16-bit positions, 4-byte hashes) a rejected old entry and
/// the empty slot of a fresh table lead to the same "no match", so the output
/// is byte for byte the fresh call's: chunks must not depend on which worker,
/// with what history, compressed a block. Larger inputs use 5-byte hashes,
/// where a fresh table's empty slot (position 0) can still match, so they
/// take the fresh call. `a_kept_state_gives_the_fresh_bytes` pins this down.
pub(crate) struct FastState(Stream);

// SAFETY: the LZ4 state is plain memory owned by this value alone, with no
// thread affinity; moving it to another thread is sound.
unsafe impl Send for FastState {}

impl FastState {
    pub(crate) fn new() -> Option<Self> {
        // SAFETY: LZ4_createStream has no preconditions and returns an
        // initialised state, or null.
        let p = unsafe { LZ4_createStream() };
        (!p.is_null()).then(|| FastState(Stream(p)))
    }

    /// As [`compress_fast`].
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8], accel: i32) -> usize {
        if src.len() >= SMALL_INPUT {
            return compress_fast(src, dst, accel);
        }
        let (Some(sl), Some(dl)) = (len_i32(src.len()), len_i32(dst.len())) else {
            return 0;
        };
        // SAFETY: the state came from LZ4_createStream and has only been used
        // by LZ4 compression calls since (a state LZ4 left in an error state
        // is reset in full by the call); the pointers and lengths describe
        // live slices and the output is bounded by `dl`.
        let n = unsafe {
            LZ4_compress_fast_extState_fastReset(
                (self.0).0,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                sl,
                dl,
                accel,
            )
        };
        n.max(0) as usize
    }
}

/// An LZ4HC state kept between calls.
///
/// `LZ4_compress_HC` allocates and clears a 256 KiB state on every call.
/// `LZ4_compress_HC_extStateHC_fastReset` starts each input 64 KiB past the
/// previous one's positions, below the lowest index any search accepts, so
/// old hash and chain entries are rejected exactly where a fresh state's
/// empty ones are: the output is the fresh call's (tested below).
pub(crate) struct HcState(StreamHc);

// SAFETY: as for FastState: plain memory owned by this value alone.
unsafe impl Send for HcState {}

impl HcState {
    pub(crate) fn new() -> Option<Self> {
        // SAFETY: LZ4_createStreamHC has no preconditions and returns an
        // initialised state, or null.
        let p = unsafe { LZ4_createStreamHC() };
        (!p.is_null()).then(|| HcState(StreamHc(p)))
    }

    /// As [`compress_hc`].
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        let (Some(sl), Some(dl)) = (len_i32(src.len()), len_i32(dst.len())) else {
            return 0;
        };
        // SAFETY: the state came from LZ4_createStreamHC and has only been
        // used by LZ4HC compression calls since (one that failed marks it
        // dirty and the next call resets it in full); the pointers and
        // lengths describe live slices and the output is bounded by `dl`.
        let n = unsafe {
            LZ4_compress_HC_extStateHC_fastReset(
                (self.0).0,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                sl,
                dl,
                level,
            )
        };
        n.max(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs of every kind LZ4 meets in chunks: runs, small alphabets,
    /// periodic text with mutations, ramps, noise, and repeats of an input's
    /// first bytes (what a stale table entry could wrongly match).
    fn inputs() -> Vec<Vec<u8>> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::new();
        let sizes = [
            0usize, 1, 4, 12, 13, 100, 1000, 4096, 8191, 16_384, 32_768, 65_535, 65_536, 70_000,
            131_072, 300_000,
        ];
        for (k, &n) in sizes.iter().cycle().take(sizes.len() * 5).enumerate() {
            let v: Vec<u8> = match k % 5 {
                0 => (0..n).map(|i| (i / 977) as u8).collect(),
                1 => (0..n).map(|_| (next() % 4) as u8).collect(),
                2 => {
                    let word = b"the quick brown fox jumps over the lazy dog ";
                    let mut v: Vec<u8> = word.iter().copied().cycle().take(n).collect();
                    for _ in 0..n / 50 {
                        let at = (next() as usize) % n.max(1);
                        if n > 0 {
                            v[at] = next() as u8;
                        }
                    }
                    v
                }
                3 => (0..n)
                    .map(|i| (i as u8).wrapping_mul(3) ^ (i >> 9) as u8)
                    .collect(),
                _ => {
                    let mut v: Vec<u8> = (0..n).map(|_| next() as u8).collect();
                    // The first four bytes again every 100 bytes, each
                    // followed by a different byte.
                    for at in (100..n.saturating_sub(8)).step_by(100) {
                        let head = [v[0], v[1], v[2], v[3]];
                        v[at..at + 4].copy_from_slice(&head);
                        v[at + 4] = next() as u8;
                    }
                    v
                }
            };
            out.push(v);
        }
        out
    }

    /// Rooms: ample, exact-ish and too small (a failed call leaves LZ4's
    /// state dirty, which the next call must survive).
    fn rooms(n: usize) -> [usize; 3] {
        [n + n / 200 + 64, n * 3 / 4, n / 4]
    }

    #[test]
    fn a_kept_state_gives_the_fresh_bytes() {
        let cases = inputs();
        for accel in [1, 5, 9] {
            let mut st = FastState::new().unwrap();
            // Forwards, then backwards: every size follows every other.
            for src in cases.iter().chain(cases.iter().rev()) {
                for room in rooms(src.len()) {
                    let mut want = vec![0u8; room];
                    let nw = compress_fast(src, &mut want, accel);
                    let mut got = vec![0u8; room];
                    let ng = st.compress(src, &mut got, accel);
                    assert_eq!(ng, nw, "fast len {} room {room} accel {accel}", src.len());
                    assert!(
                        got[..ng] == want[..nw],
                        "fast len {} accel {accel}",
                        src.len()
                    );
                }
            }
        }
        // The levels a Blosc clevel maps to (LZ4HC level = clevel, 1..9).
        for level in [1, 2, 5, 9] {
            let mut st = HcState::new().unwrap();
            for src in cases.iter().chain(cases.iter().rev()) {
                for room in rooms(src.len()) {
                    let mut want = vec![0u8; room];
                    let nw = compress_hc(src, &mut want, level);
                    let mut got = vec![0u8; room];
                    let ng = st.compress(src, &mut got, level);
                    assert_eq!(ng, nw, "hc len {} room {room} level {level}", src.len());
                    assert!(
                        got[..ng] == want[..nw],
                        "hc len {} level {level}",
                        src.len()
                    );
                }
            }
        }
    }
}

/// The version of the linked LZ4 library, as "major.minor.release".
pub(crate) fn version() -> String {
    // SAFETY: a plain query of the linked library; it touches no memory of ours.
    let v = unsafe { lz4_sys::LZ4_versionNumber() };
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}
