//! SSE2 bit shuffle: `movemask` collects one bit of 16 bytes at once, adding
//! a vector to itself exposes the next lower bit. The inverse expands each
//! 16-bit row segment to 16 bytes and tests one bit per byte.

use std::arch::x86_64::*;

use super::tiled::{self, RowKernels};
use crate::filters::shuffle;

struct Sse2;

impl RowKernels for Sse2 {
    const LANES: usize = 16;

    fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::sse2::shuffle(typesize, src, dst)
    }

    fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::sse2::unshuffle(typesize, src, dst)
    }

    #[target_feature(enable = "sse2")]
    unsafe fn bits_from_bytes(row: &[u8], dst: &mut [u8], off: usize, stride: usize) {
        for (q, chunk) in row.chunks_exact(16).enumerate() {
            // `chunk` is exactly 16 bytes.
            let mut v = _mm_loadu_si128(chunk.as_ptr() as *const __m128i);
            for k in (0..8).rev() {
                let mask = _mm_movemask_epi8(v) as u16;
                let o = off + k * stride + 2 * q;
                dst[o..o + 2].copy_from_slice(&mask.to_le_bytes());
                v = _mm_add_epi8(v, v);
            }
        }
    }

    #[target_feature(enable = "sse2")]
    unsafe fn bytes_from_bits(src: &[u8], off: usize, stride: usize, row: &mut [u8]) {
        let bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
        for (q, out) in row.chunks_exact_mut(16).enumerate() {
            let mut acc = _mm_setzero_si128();
            for k in (0..8).rev() {
                let o = off + k * stride + 2 * q;
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
            // `out` is exactly 16 bytes.
            _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, acc);
        }
    }
}

/// Bit shuffle of a multiple of `8 * typesize` bytes.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { tiled::bitshuffle::<Sse2>(typesize, src, dst) }
}

/// Inverse of [`bitshuffle`].
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { tiled::bitunshuffle::<Sse2>(typesize, src, dst) }
}
