//! Bit shuffle: transpose the bit matrix of a block so that bit 0 of every item
//! comes first, then bit 1 of every item, and so on.
//!
//! With `n` items of `typesize` bytes, number the bits of an item
//! `b = 8 * byte + bit` (bit 0 = least significant). The shuffled buffer is
//! `8 * typesize` rows of `n` bits, row `b` holding bit `b` of items `0..n`
//! in order, packed least-significant bit first. This is the
//! `BLOSC_BITSHUFFLE` filter.
//!
//! The transpose only covers the largest multiple of 8 items; the remaining
//! items and the `len % typesize` trailing bytes are copied verbatim, in both
//! directions (format version 3 and later). Chunks of format version 2
//! (C-Blosc 1.x) behave differently on decompression: see
//! [`bitunshuffle_format2`].

mod repeated;
pub(crate) mod scalar;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;
#[cfg(target_arch = "x86_64")]
mod tiled;

use super::cpu::{self, SimdLevel};

/// Bit shuffle as the reference pipeline applies it to one block: the bitshuffle over the
/// largest multiple of 8 elements, remaining bytes copied verbatim. Calling it on a
/// whole buffer gives the reference's standalone `blosc2_bitshuffle` output.
/// Errors (`InvalidParam`) only on inconsistent arguments: `src`/`dst` lengths differ,
/// or `typesize` is 0.
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
    check_args(typesize, src, dst)?;
    if !repeated::shuffle(typesize, src, dst) {
        bitshuffle_with(cpu::level(), typesize, src, dst);
    }
    Ok(())
}

/// Inverse of [`bitshuffle`] for chunks of format version 3 and later (what
/// C-Blosc2 writes): the first `8 * floor(n / 8)` items are un-transposed, the
/// remaining bytes copied verbatim. Same errors as [`bitshuffle`].
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
    check_args(typesize, src, dst)?;
    if !repeated::unshuffle(typesize, src, dst) {
        bitunshuffle_with(cpu::level(), typesize, src, dst);
    }
    Ok(())
}

/// Bit unshuffle for chunks of format version 2 (written by C-Blosc 1.x), where
/// the filter applied to a block only if its item count was a multiple of 8:
/// such blocks are un-transposed whole (bar the `len % typesize` trailing bytes,
/// copied), any other block is copied unchanged. Same errors as [`bitshuffle`].
pub fn bitunshuffle_format2(typesize: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
    check_args(typesize, src, dst)?;
    if (src.len() / typesize) % 8 == 0 {
        if !repeated::unshuffle(typesize, src, dst) {
            bitunshuffle_with(cpu::level(), typesize, src, dst);
        }
    } else {
        dst.copy_from_slice(src);
    }
    Ok(())
}

fn check_args(typesize: usize, src: &[u8], dst: &[u8]) -> crate::Result<()> {
    if typesize == 0 {
        crate::bail!(InvalidParam, "bitshuffle: typesize must be at least 1");
    }
    if src.len() != dst.len() {
        crate::bail!(
            InvalidParam,
            "bitshuffle: source has {} bytes but destination {}",
            src.len(),
            dst.len()
        );
    }
    Ok(())
}

/// Number of items the transpose covers: the largest multiple of 8.
fn transposed_items(typesize: usize, len: usize) -> usize {
    let n = len / typesize;
    n - n % 8
}

/// [`bitshuffle`] on an explicitly chosen kernel tier, arguments already checked.
pub(crate) fn bitshuffle_with(level: SimdLevel, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n8 = transposed_items(typesize, src.len());
    let body = n8 * typesize;
    let (src_body, src_rest) = src.split_at(body);
    let (dst_body, dst_rest) = dst.split_at_mut(body);
    dst_rest.copy_from_slice(src_rest);
    if n8 == 0 {
        return;
    }
    match level {
        SimdLevel::Scalar => scalar::bitshuffle(typesize, src_body, dst_body),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => sse2::bitshuffle(typesize, src_body, dst_body),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::bitshuffle(typesize, src_body, dst_body),
    }
}

/// [`bitunshuffle`] on an explicitly chosen kernel tier, arguments already checked.
pub(crate) fn bitunshuffle_with(level: SimdLevel, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n8 = transposed_items(typesize, src.len());
    let body = n8 * typesize;
    let (src_body, src_rest) = src.split_at(body);
    let (dst_body, dst_rest) = dst.split_at_mut(body);
    dst_rest.copy_from_slice(src_rest);
    if n8 == 0 {
        return;
    }
    match level {
        SimdLevel::Scalar => scalar::bitunshuffle(typesize, src_body, dst_body),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => sse2::bitunshuffle(typesize, src_body, dst_body),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::bitunshuffle(typesize, src_body, dst_body),
    }
}

#[cfg(test)]
mod tests;
