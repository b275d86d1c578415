//! Byte-delta filter (the reference's global plugin `BLOSC_FILTER_BYTEDELTA`,
//! id 35, and its predecessor `BLOSC_FILTER_BYTEDELTA_BUGGY`, id 34).
//!
//! Meant to follow a shuffle: the block is `typesize` streams of
//! `len / typesize` bytes, and each byte is stored as its difference (mod 256)
//! from the byte before it in the same stream (the first one from 0). The
//! `len % typesize` bytes at the end are copied.
//!
//! The old variant, as every SIMD build of the reference (x86 and ARM) wrote
//! it, restarts the difference at 0 after the stream's whole 16-byte groups,
//! and never writes the trailing bytes (undefined in its output; copied here).
//! Chunks written with id 34 must keep decoding, so both are implemented.

use super::cpu::{self, SimdLevel};

/// Where the running difference restarts from 0 in a stream of `n` bytes:
/// only at its start (id 35), or also after its whole 16-byte groups (id 34).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `BLOSC_FILTER_BYTEDELTA` (id 35): one running difference per stream.
    Fixed,
    /// `BLOSC_FILTER_BYTEDELTA_BUGGY` (id 34): restarts after the whole
    /// 16-byte groups, as the reference's SIMD builds wrote it.
    Buggy,
}

impl Variant {
    /// Bytes of a stream of `n` bytes before the difference restarts.
    pub(super) fn first_run(self, n: usize) -> usize {
        match self {
            Variant::Fixed => n,
            Variant::Buggy => n - n % 16,
        }
    }
}

/// Encodes `src` into `dst` (same length) with `typesize` streams.
///
/// # Panics
/// If the lengths differ or `typesize` is 0 (caller bugs).
pub fn encode(variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    per_run(variant, typesize, src, dst, differences);
}

/// Inverse of [`encode`].
///
/// # Panics
/// As [`encode`].
pub fn decode(variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    per_run(variant, typesize, src, dst, prefix_sum);
}

/// Applies `op` to each run of each stream (a run: the bytes between two
/// restarts of the difference at 0) and copies the trailing bytes.
fn per_run(
    variant: Variant,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    op: fn(&[u8], &mut [u8]),
) {
    assert!(
        typesize > 0 && src.len() == dst.len(),
        "bytedelta: bad call"
    );
    let n = src.len() / typesize;
    let body = n * typesize;
    if n > 0 {
        for (s, d) in src[..body]
            .chunks_exact(n)
            .zip(dst[..body].chunks_exact_mut(n))
        {
            let cut = variant.first_run(n);
            op(&s[..cut], &mut d[..cut]);
            op(&s[cut..], &mut d[cut..]);
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Each byte minus the one before it (the first minus 0), same lengths.
fn differences(src: &[u8], dst: &mut [u8]) {
    let Some((&first, _)) = src.split_first() else {
        return;
    };
    dst[0] = first;
    // Each output byte depends on two inputs only: the compiler vectorises it.
    for ((o, &cur), &prev) in dst[1..].iter_mut().zip(&src[1..]).zip(src) {
        *o = cur.wrapping_sub(prev);
    }
}

/// Running sums mod 256: `dst[k] = src[0] + ... + src[k]` (same lengths).
fn prefix_sum(src: &[u8], dst: &mut [u8]) {
    prefix_sum_with(cpu::level(), src, dst);
}

/// [`prefix_sum`] with the kernels of `level` (which the CPU must support).
fn prefix_sum_with(level: SimdLevel, src: &[u8], dst: &mut [u8]) {
    let (done, acc) = match level {
        SimdLevel::Scalar => (0, 0),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => x86::prefix_sum_sse2(src, dst),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` is AVX2 only when the running CPU has it
        // (`cpu::level`, or `cpu::available` in tests).
        SimdLevel::Avx2 => unsafe { x86::prefix_sum_avx2(src, dst) },
    };
    prefix_sum_scalar(&src[done..], &mut dst[done..], acc);
}

/// The portable prefix sum, continuing from `acc`.
fn prefix_sum_scalar(src: &[u8], dst: &mut [u8], mut acc: u8) {
    for (o, &delta) in dst.iter_mut().zip(src) {
        acc = acc.wrapping_add(delta);
        *o = acc;
    }
}

/// Vector prefix sums. In scalar code a running sum is a chain of one add
/// per byte; here the sums within a vector do not depend on the vectors
/// before, so the chain is one vector add per 16 (SSE2) or 32 (AVX2) bytes.
/// Each returns the bytes done (whole vectors) and the running sum after them.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    pub(super) fn prefix_sum_sse2(src: &[u8], dst: &mut [u8]) -> (usize, u8) {
        let n = src.len().min(dst.len()) / 16 * 16;
        // SAFETY: SSE2 is in x86_64's baseline, so these intrinsics are
        // always available; each unaligned load/store covers bytes k..k+16
        // with k + 16 <= n, within both slices.
        unsafe {
            let mut carry = _mm_setzero_si128();
            let mut k = 0;
            while k < n {
                let mut x = _mm_loadu_si128(src.as_ptr().add(k).cast());
                x = _mm_add_epi8(x, _mm_slli_si128(x, 1));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 2));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
                x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
                _mm_storeu_si128(dst.as_mut_ptr().add(k).cast(), _mm_add_epi8(x, carry));
                // Byte 15 (the vector's total) in every lane.
                let t = _mm_unpackhi_epi8(x, x);
                let t = _mm_unpackhi_epi16(t, t);
                carry = _mm_add_epi8(carry, _mm_shuffle_epi32(t, 0xFF));
                k += 16;
            }
        }
        (n, if n > 0 { dst[n - 1] } else { 0 })
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn prefix_sum_avx2(src: &[u8], dst: &mut [u8]) -> (usize, u8) {
        let n = src.len().min(dst.len()) / 32 * 32;
        // SAFETY: the caller guarantees AVX2; each unaligned load/store
        // covers bytes k..k+32 with k + 32 <= n, within both slices.
        unsafe {
            let last = _mm256_set1_epi8(15);
            let mut carry = _mm256_setzero_si256();
            let mut k = 0;
            while k < n {
                let mut x = _mm256_loadu_si256(src.as_ptr().add(k).cast());
                // Prefix sums within each 16-byte half...
                x = _mm256_add_epi8(x, _mm256_slli_si256(x, 1));
                x = _mm256_add_epi8(x, _mm256_slli_si256(x, 2));
                x = _mm256_add_epi8(x, _mm256_slli_si256(x, 4));
                x = _mm256_add_epi8(x, _mm256_slli_si256(x, 8));
                // ...then the low half's total added to the high half.
                let totals = _mm256_shuffle_epi8(x, last);
                x = _mm256_add_epi8(x, _mm256_permute2x128_si256(totals, totals, 0x08));
                _mm256_storeu_si256(dst.as_mut_ptr().add(k).cast(), _mm256_add_epi8(x, carry));
                // The vector's total (byte 31) in every lane.
                let t = _mm256_shuffle_epi8(x, last);
                carry = _mm256_add_epi8(carry, _mm256_permute2x128_si256(t, t, 0x11));
                k += 32;
            }
        }
        (n, if n > 0 { dst[n - 1] } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one byte at a time.
    fn naive(variant: Variant, typesize: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / typesize;
        let mut out = src.to_vec();
        for s in 0..typesize {
            let mut prev = 0u8;
            for k in 0..n {
                if variant == Variant::Buggy && k == n - n % 16 {
                    prev = 0;
                }
                let v = src[s * n + k];
                out[s * n + k] = v.wrapping_sub(prev);
                prev = v;
            }
        }
        out
    }

    /// The vector prefix sums against their scalar twin, on every length up to
    /// 300 and a few long ones.
    #[test]
    fn prefix_sums_agree() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in (0..=300).chain([1000, 4096, 65_537]) {
            let src: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let mut want = vec![0u8; len];
            prefix_sum_scalar(&src, &mut want, 0);
            for level in cpu::available() {
                let mut got = vec![0xAAu8; len];
                prefix_sum_with(level, &src, &mut got);
                assert_eq!(got, want, "{level:?}, length {len}");
            }
        }
    }

    #[test]
    fn matches_the_definition_and_round_trips() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 7, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 4099] {
            let src: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            for typesize in [1usize, 2, 3, 4, 8, 16, 255] {
                for variant in [Variant::Fixed, Variant::Buggy] {
                    let mut enc = vec![0u8; len];
                    encode(variant, typesize, &src, &mut enc);
                    assert_eq!(
                        enc,
                        naive(variant, typesize, &src),
                        "{variant:?} {typesize} {len}"
                    );
                    let mut dec = vec![0u8; len];
                    decode(variant, typesize, &enc, &mut dec);
                    assert_eq!(dec, src);
                }
            }
        }
    }
}
