//! SSE2 bit shuffle.
//!
//! Fast path, per run of 128 items of one byte row: eight vectors hold the
//! 16 groups of 8 items; an 8x8 bit transpose in each 64-bit lane turns a
//! group's 8 item bytes into its 8 bit-row bytes; four zips (see
//! `shuffle::transpose`) then gather each bit row's 16 bytes into one vector.
//! The inverse loads 16 bytes of each of the 8 bit rows, three zips regroup
//! them per item group, and the same bit transpose restores the item bytes.
//! Shorter runs of 16 items use `movemask` (one bit of 16 bytes at once) and,
//! backwards, the bit transpose of a vector gathered from the 8 bit rows.

use std::arch::x86_64::*;

use super::tiled::{self, RowKernels};
use crate::filters::cpu::SimdLevel;
use crate::filters::shuffle;

struct Sse2;

/// Loads the first 16 bytes of `s` (panics if shorter).
#[inline(always)]
unsafe fn load(s: &[u8]) -> __m128i {
    assert!(s.len() >= 16);
    _mm_loadu_si128(s.as_ptr() as *const __m128i)
}

/// Stores `v` to the first 16 bytes of `s` (panics if shorter).
#[inline(always)]
unsafe fn store(s: &mut [u8], v: __m128i) {
    assert!(s.len() >= 16);
    _mm_storeu_si128(s.as_mut_ptr() as *mut __m128i, v)
}

/// One zip round over 8 vectors (see `shuffle::transpose`).
#[inline(always)]
unsafe fn zip(v: &mut [__m128i; 8]) {
    let mut out = [_mm_setzero_si128(); 8];
    for a in 0..4 {
        out[2 * a] = _mm_unpacklo_epi8(v[a], v[a + 4]);
        out[2 * a + 1] = _mm_unpackhi_epi8(v[a], v[a + 4]);
    }
    *v = out;
}

/// The scalar `transpose_8x8` in each 64-bit lane.
#[inline(always)]
unsafe fn transpose_8x8(x: __m128i) -> __m128i {
    let m1 = _mm_set1_epi64x(0x00aa_00aa_00aa_00aa);
    let m2 = _mm_set1_epi64x(0x0000_cccc_0000_cccc);
    let m4 = _mm_set1_epi64x(0x0000_0000_f0f0_f0f0);
    let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<7>(x)), m1);
    let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<7>(t)));
    let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<14>(x)), m2);
    let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<14>(t)));
    let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<28>(x)), m4);
    _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<28>(t)))
}

impl RowKernels for Sse2 {
    const LANES: usize = 16;
    const BEST: usize = 128;

    fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::sse2::shuffle(typesize, src, dst)
    }

    fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::sse2::unshuffle(typesize, src, dst)
    }

    #[target_feature(enable = "sse2")]
    unsafe fn bits_from_bytes(row: &[u8], dst: &mut [u8], off: usize, stride: usize) {
        let runs = row.len() / 128;
        for (r, run) in row.chunks_exact(128).enumerate() {
            let mut v = [_mm_setzero_si128(); 8];
            for (t, x) in v.iter_mut().enumerate() {
                *x = transpose_8x8(load(&run[16 * t..]));
            }
            for _ in 0..4 {
                zip(&mut v);
            }
            for (k, x) in v.iter().enumerate() {
                store(&mut dst[off + k * stride + 16 * r..], *x);
            }
        }
        let done = runs * 128;
        let chunks = (row.len() - done) / 16;
        if chunks == 0 {
            return;
        }
        let col = off + done / 8;
        // The furthest store ends at `col + 7 * stride + 2 * chunks`;
        // checked once here instead of per store.
        assert!(col + 7 * stride + 2 * chunks <= dst.len());
        let out = dst.as_mut_ptr().add(col);
        for (q, chunk) in row[done..].chunks_exact(16).enumerate() {
            let mut v = load(chunk);
            for k in (0..8).rev() {
                let mask = _mm_movemask_epi8(v) as u16;
                // SAFETY: k <= 7 and q < chunks: below the bound asserted
                // above.
                (out.add(k * stride + 2 * q) as *mut u16).write_unaligned(mask.to_le());
                v = _mm_add_epi8(v, v);
            }
        }
    }

    #[target_feature(enable = "sse2")]
    unsafe fn bytes_from_bits(src: &[u8], off: usize, stride: usize, row: &mut [u8]) {
        let runs = row.len() / 128;
        for (r, run) in row.chunks_exact_mut(128).enumerate() {
            let mut v = [_mm_setzero_si128(); 8];
            for (k, x) in v.iter_mut().enumerate() {
                *x = load(&src[off + k * stride + 16 * r..]);
            }
            for _ in 0..3 {
                zip(&mut v);
            }
            for (a, x) in v.iter().enumerate() {
                store(&mut run[16 * a..], transpose_8x8(*x));
            }
        }
        let done = runs * 128;
        let chunks = (row.len() - done) / 16;
        if chunks == 0 {
            return;
        }
        // Runs of 16 items, as the AVX2 kernel takes 32: the 2 bytes of each
        // of the 8 bit rows in one vector, byte 0 of every row to lane 0 and
        // byte 1 to lane 1, and the bit transpose turns each lane into its 8
        // items.
        let col = off + done / 8;
        // The furthest load ends at `col + 7 * stride + 2 * chunks`;
        // checked once here instead of per load.
        assert!(col + 7 * stride + 2 * chunks <= src.len());
        let low = _mm_set1_epi16(0xff);
        let base = src.as_ptr().add(col);
        for (q, out) in row[done..].chunks_exact_mut(16).enumerate() {
            // SAFETY: k <= 7 and q < chunks, so the 2 bytes lie below the
            // bound asserted above.
            let seg = |k: usize| (base.add(k * stride + 2 * q) as *const i16).read_unaligned();
            let v = _mm_setr_epi16(
                seg(0),
                seg(1),
                seg(2),
                seg(3),
                seg(4),
                seg(5),
                seg(6),
                seg(7),
            );
            let v = _mm_packus_epi16(_mm_and_si128(v, low), _mm_srli_epi16::<8>(v));
            store(out, transpose_8x8(v));
        }
    }
}

/// Largest block, in bytes, that [`bitshuffle_small`] and
/// [`bitunshuffle_small`] take (their stack tile).
const SMALL_BYTES: usize = 256;

/// Bit shuffle of a multiple of `8 * typesize` bytes.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if small_block(typesize, src.len()) {
        return bitshuffle_small(typesize, src, dst);
    }
    // SAFETY: SSE2 is part of the x86_64 baseline; all memory access in the
    // kernels goes through bounds-checked slices.
    unsafe { tiled::bitshuffle::<Sse2>(typesize, src, dst) }
}

/// Inverse of [`bitshuffle`].
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if small_block(typesize, src.len()) {
        return bitunshuffle_small(typesize, src, dst);
    }
    // SAFETY: as in `bitshuffle`.
    unsafe { tiled::bitunshuffle::<Sse2>(typesize, src, dst) }
}

/// Whether a block of `len` bytes is 8 or 16 items of `typesize` bytes and
/// fits the small paths' tile. Such a block is too short for the tile
/// driver's vector pieces (8 items) or pays the driver's fixed cost, a row
/// kernel call per byte position, for one vector of work each (16 items);
/// its bit rows, one or two bytes long, lie next to each other, so whole
/// vectors hold them.
fn small_block(typesize: usize, len: usize) -> bool {
    len <= SMALL_BYTES && (len == 8 * typesize || len == 16 * typesize)
}

/// [`bitshuffle`] of a [`small_block`]: the byte shuffle, then the bit
/// transpose of each byte row in place. With 8 items a byte row is one
/// group, whose 8 bit rows are the 8 bytes of its transpose; with 16 items
/// it is two groups, whose transposes interleave byte by byte (bit row `k`
/// holds byte `k` of group 0, then byte `k` of group 1).
fn bitshuffle_small(typesize: usize, src: &[u8], dst: &mut [u8]) {
    // The shared dispatch copies one-byte items, which need no shuffle.
    shuffle::shuffle_with(SimdLevel::Sse2, typesize, src, dst);
    let mut rows = dst.chunks_exact_mut(16);
    for row in &mut rows {
        // SAFETY: SSE2 is part of the x86_64 baseline; `row` is 16 bytes.
        unsafe {
            let t = transpose_8x8(load(row));
            let t = if src.len() == 8 * typesize {
                t
            } else {
                _mm_unpacklo_epi8(t, _mm_unpackhi_epi64(t, t))
            };
            store(row, t);
        }
    }
    // An odd item size with 8 items leaves one group of 8 bytes.
    let rest = rows.into_remainder();
    if let Ok(word) = <[u8; 8]>::try_from(&*rest) {
        let t = super::scalar::transpose_8x8(u64::from_le_bytes(word));
        rest.copy_from_slice(&t.to_le_bytes());
    }
}

/// Inverse of [`bitshuffle_small`]: the bit transposes into a tile on the
/// stack, then the byte unshuffle into `dst`.
fn bitunshuffle_small(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let mut tile = [0u8; SMALL_BYTES];
    let tile = &mut tile[..src.len()];
    let mut rows = src.chunks_exact(16);
    for (row, out) in (&mut rows).zip(tile.chunks_exact_mut(16)) {
        // SAFETY: SSE2 is part of the x86_64 baseline; both are 16 bytes.
        unsafe {
            let v = load(row);
            let v = if src.len() == 8 * typesize {
                v
            } else {
                // Each bit row's two bytes split: group 0's byte to the low
                // lane, group 1's to the high one.
                let low = _mm_set1_epi16(0xff);
                _mm_packus_epi16(_mm_and_si128(v, low), _mm_srli_epi16::<8>(v))
            };
            store(out, transpose_8x8(v));
        }
    }
    let rest = rows.remainder();
    if let Ok(word) = <[u8; 8]>::try_from(rest) {
        let t = super::scalar::transpose_8x8(u64::from_le_bytes(word));
        let at = tile.len() - 8;
        tile[at..].copy_from_slice(&t.to_le_bytes());
    }
    shuffle::unshuffle_with(SimdLevel::Sse2, typesize, tile, dst);
}
