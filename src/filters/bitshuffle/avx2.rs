//! AVX2 bit shuffle: the SSE2 scheme on 32 bytes at once. The inverse
//! broadcasts each 32-bit row segment and spreads its bytes with a shuffle.

use std::arch::x86_64::*;

use super::scalar;
use super::tiled::{self, RowKernels};
use crate::filters::shuffle;

struct Avx2;

impl RowKernels for Avx2 {
    const LANES: usize = 32;

    fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::avx2::shuffle(typesize, src, dst)
    }

    fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::avx2::unshuffle(typesize, src, dst)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn bits_from_bytes(row: &[u8], dst: &mut [u8], off: usize, stride: usize) {
        for (q, chunk) in row.chunks_exact(32).enumerate() {
            // `chunk` is exactly 32 bytes.
            let mut v = _mm256_loadu_si256(chunk.as_ptr() as *const __m256i);
            for k in (0..8).rev() {
                let mask = _mm256_movemask_epi8(v) as u32;
                let o = off + k * stride + 4 * q;
                dst[o..o + 4].copy_from_slice(&mask.to_le_bytes());
                v = _mm256_add_epi8(v, v);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn bytes_from_bits(src: &[u8], off: usize, stride: usize, row: &mut [u8]) {
        let bits = _mm256_setr_epi8(
            1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128, //
            1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128,
        );
        // Segment byte b goes to output bytes 8b..8b + 8 (b = 0, 1 in lane 0,
        // 2, 3 in lane 1; the broadcast puts all four bytes in both lanes).
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, //
            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        );
        for (q, out) in row.chunks_exact_mut(32).enumerate() {
            let mut acc = _mm256_setzero_si256();
            for k in (0..8).rev() {
                let o = off + k * stride + 4 * q;
                let seg = u32::from_le_bytes([src[o], src[o + 1], src[o + 2], src[o + 3]]);
                let x = _mm256_shuffle_epi8(_mm256_set1_epi32(seg as i32), spread);
                let set = _mm256_cmpeq_epi8(_mm256_and_si256(x, bits), bits);
                acc = _mm256_sub_epi8(_mm256_add_epi8(acc, acc), set);
            }
            // `out` is exactly 32 bytes.
            _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, acc);
        }
    }
}

/// Bit shuffle of a multiple of `8 * typesize` bytes; scalar without AVX2.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if !is_x86_feature_detected!("avx2") {
        return scalar::bitshuffle(typesize, src, dst);
    }
    // SAFETY: AVX2 was detected just above.
    unsafe { tiled::bitshuffle::<Avx2>(typesize, src, dst) }
}

/// Inverse of [`bitshuffle`]; scalar without AVX2.
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if !is_x86_feature_detected!("avx2") {
        return scalar::bitunshuffle(typesize, src, dst);
    }
    // SAFETY: AVX2 was detected just above.
    unsafe { tiled::bitunshuffle::<Avx2>(typesize, src, dst) }
}
