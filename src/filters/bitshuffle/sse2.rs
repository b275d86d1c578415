//! SSE2 bit shuffle.
//!
//! Fast path, per run of 128 items of one byte row: eight vectors hold the
//! 16 groups of 8 items; an 8x8 bit transpose in each 64-bit lane turns a
//! group's 8 item bytes into its 8 bit-row bytes; four zips (see
//! `shuffle::transpose`) then gather each bit row's 16 bytes into one vector.
//! The inverse loads 16 bytes of each of the 8 bit rows, three zips regroup
//! them per item group, and the same bit transpose restores the item bytes.
//! Shorter runs of 16 items use `movemask` (one bit of 16 bytes at once) and,
//! backwards, a per-byte bit test.

use std::arch::x86_64::*;

use super::tiled::{self, RowKernels};
use crate::filters::shuffle;

pub(super) struct Sse2;

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
        for (q, chunk) in row[done..].chunks_exact(16).enumerate() {
            let mut v = load(chunk);
            let col = off + done / 8 + 2 * q;
            for k in (0..8).rev() {
                let mask = _mm_movemask_epi8(v) as u16;
                let o = col + k * stride;
                dst[o..o + 2].copy_from_slice(&mask.to_le_bytes());
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
        let bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
        for (q, out) in row[done..].chunks_exact_mut(16).enumerate() {
            let col = off + done / 8 + 2 * q;
            let mut acc = _mm_setzero_si128();
            for k in (0..8).rev() {
                let o = col + k * stride;
                let seg = u16::from_le_bytes([src[o], src[o + 1]]);
                // Byte 0 of the segment to bytes 0..8, byte 1 to bytes 8..16.
                let x = _mm_cvtsi32_si128(i32::from(seg));
                let x = _mm_unpacklo_epi8(x, x);
                let x = _mm_unpacklo_epi16(x, x);
                let x = _mm_unpacklo_epi32(x, x);
                let set = _mm_cmpeq_epi8(_mm_and_si128(x, bits), bits);
                // acc = 2 * acc + (bit set ? 1 : 0), per byte.
                acc = _mm_sub_epi8(_mm_add_epi8(acc, acc), set);
            }
            store(out, acc);
        }
    }
}

/// Bit shuffle of a multiple of `8 * typesize` bytes.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: SSE2 is part of the x86_64 baseline; all memory access in the
    // kernels goes through bounds-checked slices.
    unsafe { tiled::bitshuffle::<Sse2>(typesize, src, dst) }
}

/// Inverse of [`bitshuffle`].
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: as in `bitshuffle`.
    unsafe { tiled::bitunshuffle::<Sse2>(typesize, src, dst) }
}
