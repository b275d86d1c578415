//! SSE2 byte shuffle. Groups of 16 items are transposed in registers with
//! byte unpacks (see [`super::transpose`] for why repeated "zips" transpose).
//! For 2-, 4-, 8- and 16-byte items the items after the last whole group go
//! as one more group, overlapping the one before, and a block of 8 to 15
//! items as two half groups (the second overlapping the first); other
//! sizes' last items, and blocks of fewer than 8, go through the scalar
//! code.

use std::arch::x86_64::*;

use super::scalar;
use super::transpose::{windows, Window};

/// Items per vector group.
const LANES: usize = 16;

/// Items per half group (blocks of 8 to 15 items).
const HALF: usize = 8;

/// One zip round over `N` vectors: the `16 * N` bytes they hold are perfectly
/// shuffled (first half interleaved with second half).
#[inline(always)]
unsafe fn zip<const N: usize>(v: &mut [__m128i; N]) {
    let mut out = [_mm_setzero_si128(); N];
    for a in 0..N / 2 {
        out[2 * a] = _mm_unpacklo_epi8(v[a], v[a + N / 2]);
        out[2 * a + 1] = _mm_unpackhi_epi8(v[a], v[a + N / 2]);
    }
    *v = out;
}

/// Unaligned 16-byte load of `s[off..off + 16]`.
///
/// # Safety
/// `off + 16 <= s.len()`.
#[inline(always)]
unsafe fn load(s: &[u8], off: usize) -> __m128i {
    debug_assert!(off + 16 <= s.len());
    _mm_loadu_si128(s.as_ptr().add(off) as *const __m128i)
}

/// Unaligned 16-byte store to `s[off..off + 16]`.
///
/// # Safety
/// `off + 16 <= s.len()`.
#[inline(always)]
unsafe fn store(s: &mut [u8], off: usize, v: __m128i) {
    debug_assert!(off + 16 <= s.len());
    _mm_storeu_si128(s.as_mut_ptr().add(off) as *mut __m128i, v)
}

/// Shuffle; requires `src.len() == dst.len()` and `2 <= typesize <= len`.
pub(crate) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    shuffle_rows(typesize, n, n, src, dst);
    scalar::copy_tail(typesize, n, src, dst);
}

/// The `n` whole items at the start of `src`, row `j` to
/// `dst[j * stride..j * stride + n]`; requires `typesize >= 2`,
/// `src.len() >= n * typesize`, `stride >= n` and
/// `dst.len() >= (typesize - 1) * stride + n`.
pub(crate) fn shuffle_rows(typesize: usize, n: usize, stride: usize, src: &[u8], dst: &mut [u8]) {
    assert!(
        stride >= n && src.len() >= n * typesize && dst.len() >= (typesize - 1) * stride + n,
        "shuffle_rows: buffers too short"
    );
    // SAFETY: SSE2 is part of the x86_64 baseline; each kernel only touches
    // the groups it computes to lie inside the buffers (see their docs),
    // which the assert above makes long enough.
    let done = unsafe {
        match typesize {
            2 => shuffle_pow2::<2>(n, stride, src, dst),
            4 => shuffle_pow2::<4>(n, stride, src, dst),
            8 => shuffle_pow2::<8>(n, stride, src, dst),
            16 => shuffle_pow2::<16>(n, stride, src, dst),
            _ => shuffle_windows(typesize, n, stride, src, dst),
        }
    };
    scalar::shuffle_items(typesize, n, stride, done, src, dst);
}

/// Unshuffle; requires `src.len() == dst.len()` and `2 <= typesize <= len`.
pub(crate) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    // SAFETY: as in `shuffle`.
    let done = unsafe {
        match typesize {
            2 => unshuffle_pow2::<2, 1>(n, src, dst),
            4 => unshuffle_pow2::<4, 2>(n, src, dst),
            8 => unshuffle_pow2::<8, 3>(n, src, dst),
            16 => unshuffle_pow2::<16, 4>(n, src, dst),
            _ => unshuffle_windows(typesize, n, src, dst),
        }
    };
    scalar::unshuffle_items(typesize, n, done, src, dst);
    scalar::copy_tail(typesize, n, src, dst);
}

/// Items of `N` bytes, `N` a power of two: a group is `N` vectors, transposed
/// by four zips; row `j` goes to `dst[j * stride..]`. Items after the last
/// whole group go as one more group ending at item `n`, which writes the
/// items it shares with the group before again, with the same bytes; a
/// block of 8 to 15 items goes as two half groups the same way. Returns the
/// number of items done: `n`, or 0 for fewer than 8 items.
///
/// # Safety
/// `src` holds at least `n * N` bytes, `stride >= n` and `dst` holds at
/// least `(N - 1) * stride + n` bytes.
#[target_feature(enable = "sse2")]
unsafe fn shuffle_pow2<const N: usize>(
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let groups = n / LANES;
    for g in 0..groups {
        shuffle_group::<N, LANES>(g * LANES, stride, src, dst);
    }
    if groups == 0 {
        if n < HALF {
            return 0;
        }
        shuffle_group::<N, HALF>(0, stride, src, dst);
        if n > HALF {
            shuffle_group::<N, HALF>(n - HALF, stride, src, dst);
        }
        return n;
    }
    if n % LANES != 0 {
        shuffle_group::<N, LANES>(n - LANES, stride, src, dst);
    }
    n
}

/// Items `e0..e0 + ITEMS` of [`shuffle_pow2`]: a whole group (`ITEMS` =
/// 16) or half of one (8, for blocks of 8 to 15 items: the group's other 8
/// items zero, and the low 8 bytes of each row stored).
///
/// # Safety
/// As for [`shuffle_pow2`], and `e0 + ITEMS <= n`.
#[inline(always)]
unsafe fn shuffle_group<const N: usize, const ITEMS: usize>(
    e0: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let mut v = [_mm_setzero_si128(); N];
    for (a, x) in v[..N * ITEMS / LANES].iter_mut().enumerate() {
        // e0 + ITEMS <= n, so the ITEMS * N bytes are inside src.
        *x = load(src, e0 * N + 16 * a);
    }
    for _ in 0..4 {
        zip(&mut v);
    }
    for (j, x) in v.iter().enumerate() {
        // Row j spans dst[j * stride..j * stride + n]; e0 + ITEMS <= n.
        let at = j * stride + e0;
        if ITEMS == LANES {
            store(dst, at, *x);
        } else {
            debug_assert!(at + ITEMS <= dst.len());
            _mm_storel_epi64(dst.as_mut_ptr().add(at) as *mut __m128i, *x);
        }
    }
}

/// Inverse of [`shuffle_pow2`]; `P = log2(N)` zips undo the transpose. The
/// items after the last whole group go as it does them.
///
/// # Safety
/// `src` and `dst` hold at least `n * N` bytes.
#[target_feature(enable = "sse2")]
unsafe fn unshuffle_pow2<const N: usize, const P: usize>(
    n: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let groups = n / LANES;
    for g in 0..groups {
        unshuffle_group::<N, P, LANES>(n, g * LANES, src, dst);
    }
    if groups == 0 {
        if n < HALF {
            return 0;
        }
        unshuffle_group::<N, P, HALF>(n, 0, src, dst);
        if n > HALF {
            unshuffle_group::<N, P, HALF>(n, n - HALF, src, dst);
        }
        return n;
    }
    if n % LANES != 0 {
        unshuffle_group::<N, P, LANES>(n, n - LANES, src, dst);
    }
    n
}

/// Items `e0..e0 + ITEMS` of [`unshuffle_pow2`]: a whole group (`ITEMS` =
/// 16) or half of one (8, for blocks of 8 to 15 items: 8 bytes of each row,
/// the rest of each vector zero, and the half of the transposed vectors
/// that holds those items stored).
///
/// # Safety
/// As for [`unshuffle_pow2`], and `e0 + ITEMS <= n`.
#[inline(always)]
unsafe fn unshuffle_group<const N: usize, const P: usize, const ITEMS: usize>(
    n: usize,
    e0: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let mut v = [_mm_setzero_si128(); N];
    for (j, x) in v.iter_mut().enumerate() {
        let at = j * n + e0;
        *x = if ITEMS == LANES {
            load(src, at)
        } else {
            debug_assert!(at + ITEMS <= src.len());
            _mm_loadl_epi64(src.as_ptr().add(at) as *const __m128i)
        };
    }
    for _ in 0..P {
        zip(&mut v);
    }
    for (a, x) in v[..N * ITEMS / LANES].iter().enumerate() {
        store(dst, e0 * N + 16 * a, *x);
    }
}

/// Any other item size: each group of 16 items is cut into 16-byte windows
/// of the items (see [`windows`]), each a 16x16 transpose; row `j` goes to
/// `dst[j * stride..]`. Returns the number of items done.
///
/// # Safety
/// `src` holds at least `n * typesize` bytes, `stride >= n` and `dst` holds
/// at least `(typesize - 1) * stride + n` bytes.
#[target_feature(enable = "sse2")]
unsafe fn shuffle_windows(
    typesize: usize,
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let len = n * typesize;
    let groups = super::transpose::whole_groups(typesize, n, len, LANES);
    for g in 0..groups {
        let e0 = g * LANES;
        for Window { start, rows } in windows(typesize) {
            let mut v = [_mm_setzero_si128(); 16];
            for (i, x) in v.iter_mut().enumerate() {
                // whole_groups keeps (e0 + 15) * typesize + start + 16 <= len.
                *x = load(src, (e0 + i) * typesize + start);
            }
            for _ in 0..4 {
                zip(&mut v);
            }
            for (t, x) in v.iter().enumerate() {
                // Only real rows (start + t < typesize) exist; a constant-bound
                // loop keeps the vectors in registers.
                if t < rows {
                    store(dst, (start + t) * stride + e0, *x);
                }
            }
        }
    }
    groups * LANES
}

/// Inverse of [`shuffle_windows`]. Stores of items narrower than 16 bytes
/// spill into the next item, which is written afterwards (increasing order).
///
/// # Safety
/// `src` and `dst` hold at least `n * typesize` bytes.
#[target_feature(enable = "sse2")]
unsafe fn unshuffle_windows(typesize: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let len = n * typesize;
    let groups = super::transpose::whole_groups(typesize, n, len, LANES);
    for g in 0..groups {
        let e0 = g * LANES;
        for Window { start, rows } in windows(typesize) {
            let mut v = [_mm_setzero_si128(); 16];
            for (t, x) in v.iter_mut().enumerate() {
                // Rows past the item (narrow items) are don't-cares: reload
                // row `start` rather than branch, so the loop fully unrolls.
                let t = if t < rows { t } else { 0 };
                *x = load(src, (start + t) * n + e0);
            }
            for _ in 0..4 {
                zip(&mut v);
            }
            for (i, x) in v.iter().enumerate() {
                store(dst, (e0 + i) * typesize + start, *x);
            }
        }
    }
    groups * LANES
}
