//! Byte shuffle: regroup the bytes of fixed-size items so that byte 0 of every
//! item comes first, then byte 1 of every item, and so on.
//!
//! For `n = len / typesize` items the shuffled buffer holds, at
//! `dst[j * n + i]`, byte `j` of item `i`. The `len % typesize` bytes that do
//! not form a whole item are copied unchanged at the end, as the reference
//! does. This is the `BLOSC_SHUFFLE` filter (its `typesize` may also come from
//! the filter's meta byte, which the caller resolves).

pub(crate) mod scalar;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;
#[cfg(target_arch = "x86_64")]
mod transpose;

use super::cpu::{self, SimdLevel};

/// Byte shuffle of `src` into `dst` (same length) for items of `typesize` bytes; the
/// trailing `len % typesize` bytes are copied unchanged, as the reference does.
/// A `typesize` of 0 or 1 leaves the bytes in place (plain copy).
///
/// # Panics
/// If `src` and `dst` differ in length (a caller bug, never input-dependent).
#[inline(always)]
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    shuffle_with(cpu::level(), typesize, src, dst);
}

/// Inverse of [`shuffle`]: `dst[i * typesize + j] = src[j * n + i]`, trailing
/// `len % typesize` bytes copied unchanged.
///
/// # Panics
/// If `src` and `dst` differ in length (a caller bug, never input-dependent).
#[inline(always)]
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    unshuffle_with(cpu::level(), typesize, src, dst);
}

/// [`shuffle`] of a buffer of whole items with its rows (byte planes)
/// `stride` bytes apart: `dst[j * stride + i]` is byte `j` of item `i`, and
/// the bytes between rows are left as they are. A split chunk block stores
/// each row as a stream of its own behind a 4-byte size: shuffled this way
/// straight into the chunk, a row the codec cannot compress is already
/// where it is stored.
///
/// # Panics
/// If `typesize` is 0, `src.len()` is not a multiple of it, `stride` is
/// shorter than a row (`n = src.len() / typesize` bytes) or `dst` shorter
/// than `(typesize - 1) * stride + n` (caller bugs).
pub(crate) fn shuffle_rows(typesize: usize, src: &[u8], dst: &mut [u8], stride: usize) {
    shuffle_rows_with(cpu::level(), typesize, src, dst, stride);
}

/// [`shuffle_rows`] on an explicitly chosen kernel tier.
pub(crate) fn shuffle_rows_with(
    level: SimdLevel,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    stride: usize,
) {
    let n = super::row_len("shuffle_rows", typesize, src.len(), dst.len(), stride);
    if typesize == 1 {
        dst[..n].copy_from_slice(src);
        return;
    }
    match level {
        SimdLevel::Scalar => scalar::shuffle_items(typesize, n, stride, 0, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => sse2::shuffle_rows(typesize, n, stride, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::shuffle_rows(typesize, n, stride, src, dst),
    }
}

/// One byte plane of a shuffled buffer, for [`unshuffle_planes`]: its
/// bytes, wherever they lie, or one value throughout (a split block's
/// stream coded as a run, which then is not written out first).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plane<'a> {
    Bytes(&'a [u8]),
    Run(u8),
}

/// [`unshuffle`] of a shuffled buffer given as its byte planes:
/// `dst[i * typesize + j]` is byte `i` of `planes[j]`, `typesize =
/// planes.len()`. A split chunk block stores one plane per stream, so the
/// planes a codec left uncompressed can be read from the chunk itself
/// instead of being copied next to the others first, and those coded as
/// runs need no buffer filled with their value.
///
/// # Panics
/// If `dst.len()` is not a multiple of `planes.len()`, or the length of a
/// plane of bytes differs from `dst.len() / planes.len()` (caller bugs).
pub(crate) fn unshuffle_planes(planes: &[Plane<'_>], dst: &mut [u8]) {
    unshuffle_planes_with(cpu::level(), planes, dst);
}

/// [`unshuffle_planes`] of planes that are all bytes, given as the rows
/// `rows[..typesize]` (each `dst.len() / typesize` bytes long), without a
/// [`Plane`] per row: see `avx2::unshuffle_byte_rows`, the kernel used on
/// the machines where [`planes_are_fast`].
///
/// # Panics
/// If `typesize` is 0 or above 16, `dst.len()` is not a multiple of it, or
/// a row is not `dst.len() / typesize` bytes long (caller bugs).
#[inline]
pub(crate) fn unshuffle_byte_rows(rows: &[&[u8]; 16], typesize: usize, dst: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        avx2::unshuffle_byte_rows(rows, typesize, dst)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        assert!((1..=16).contains(&typesize), "unshuffle_byte_rows: typesize {typesize}");
        let mut planes = [Plane::Run(0); 16];
        for (plane, row) in planes.iter_mut().zip(rows) {
            *plane = Plane::Bytes(row);
        }
        unshuffle_planes(&planes[..typesize], dst)
    }
}

/// Whether [`unshuffle_planes`] runs a vector kernel for items of
/// `typesize` bytes on this machine; where it does not, gathering the
/// planes and calling [`unshuffle`] is faster.
pub(crate) fn planes_are_fast(typesize: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        matches!(typesize, 2 | 4 | 8 | 16) && cpu::level() == SimdLevel::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = typesize;
        false
    }
}

/// [`unshuffle_planes`] on an explicitly chosen kernel tier.
pub(crate) fn unshuffle_planes_with(level: SimdLevel, planes: &[Plane<'_>], dst: &mut [u8]) {
    let typesize = planes.len();
    assert!(
        typesize > 0 && dst.len() % typesize == 0,
        "unshuffle_planes: {} bytes are not whole items of {typesize}",
        dst.len()
    );
    let n = dst.len() / typesize;
    match level {
        // It checks the planes' lengths as it gathers them.
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::unshuffle_planes(planes, n, dst),
        _ => {
            assert!(
                planes.iter().all(|p| match p {
                    Plane::Bytes(b) => b.len() == n,
                    Plane::Run(_) => true,
                }),
                "unshuffle_planes: a plane is not {n} bytes long"
            );
            scalar::unshuffle_plane_items(planes, n, 0, dst)
        }
    }
}

/// [`shuffle`] on an explicitly chosen kernel tier (tests compare the tiers).
/// Always inlined, as [`shuffle`] is: a frame of its own is a noticeable
/// part of a standalone call on a small block (`bash
/// scripts/shuffle-bench.sh`, 8-byte items in 256 bytes).
#[inline(always)]
pub(crate) fn shuffle_with(level: SimdLevel, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "shuffle: source and destination lengths differ"
    );
    if typesize <= 1 || typesize > src.len() {
        dst.copy_from_slice(src);
        return;
    }
    match level {
        SimdLevel::Scalar => scalar::shuffle(typesize, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => sse2::shuffle(typesize, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::shuffle(typesize, src, dst),
    }
}

/// [`unshuffle`] on an explicitly chosen kernel tier (tests compare the tiers).
#[inline(always)]
pub(crate) fn unshuffle_with(level: SimdLevel, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "unshuffle: source and destination lengths differ"
    );
    if typesize <= 1 || typesize > src.len() {
        dst.copy_from_slice(src);
        return;
    }
    match level {
        SimdLevel::Scalar => scalar::unshuffle(typesize, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Sse2 => sse2::unshuffle(typesize, src, dst),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => avx2::unshuffle(typesize, src, dst),
    }
}

#[cfg(test)]
mod tests;
