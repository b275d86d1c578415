//! Portable bit transpose, working on groups of 8 items: the 8 bytes at one
//! byte position of 8 consecutive items form an 8x8 bit matrix, which is
//! transposed in a `u64` and scattered to the 8 bit rows it belongs to.
//!
//! All functions take the transposed part only: `src.len() == dst.len()` is a
//! whole multiple of `8 * typesize`.

/// Transposes an 8x8 bit matrix held in a `u64`, byte `r` being row `r` and
/// bit `c` of that byte column `c`: afterwards bit `c` of byte `r` is the old
/// bit `r` of byte `c`. Three rounds swap the off-diagonal 1x1, 2x2 and 4x4
/// sub-blocks.
#[inline(always)]
pub(crate) fn transpose_8x8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^= t ^ (t << 28);
    x
}

/// Bit-transposes all of `src` (a multiple of `8 * typesize` bytes) into `dst`.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let groups = src.len() / (8 * typesize);
    bitshuffle_groups(typesize, 0, groups, src, dst);
}

/// Inverse of [`bitshuffle`].
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let groups = src.len() / (8 * typesize);
    bitunshuffle_groups(typesize, 0, groups, src, dst);
}

/// Transposes item groups `first..groups` (8 items each) of a buffer of
/// `groups` groups. Each bit row is `groups` bytes long; group `w` owns byte
/// `w` of every row. The vector drivers call this for the groups they leave
/// over, usually none: that check stays inline, the loops are a function of
/// their own.
#[inline]
pub(crate) fn bitshuffle_groups(
    typesize: usize,
    first: usize,
    groups: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    if first < groups {
        bitshuffle_some_groups(typesize, first, groups, src, dst);
    }
}

/// [`bitshuffle_groups`] for `first < groups`.
#[inline(never)]
fn bitshuffle_some_groups(
    typesize: usize,
    first: usize,
    groups: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let group_bytes = 8 * typesize;
    let src = &src[..groups * group_bytes];
    let dst = &mut dst[..groups * group_bytes];
    for (w, group) in src.chunks_exact(group_bytes).enumerate().skip(first) {
        for j in 0..typesize {
            let mut x = 0u64;
            for m in 0..8 {
                x |= u64::from(group[m * typesize + j]) << (8 * m);
            }
            let x = transpose_8x8(x);
            let rows = &mut dst[8 * j * groups..];
            for k in 0..8 {
                rows[k * groups + w] = (x >> (8 * k)) as u8;
            }
        }
    }
}

/// Inverse of [`bitshuffle_groups`] for groups `first..groups`; as there,
/// only the check for nothing left is inline.
#[inline]
pub(crate) fn bitunshuffle_groups(
    typesize: usize,
    first: usize,
    groups: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    if first < groups {
        bitunshuffle_some_groups(typesize, first, groups, src, dst);
    }
}

/// [`bitunshuffle_groups`] for `first < groups`.
#[inline(never)]
fn bitunshuffle_some_groups(
    typesize: usize,
    first: usize,
    groups: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let group_bytes = 8 * typesize;
    let src = &src[..groups * group_bytes];
    let dst = &mut dst[..groups * group_bytes];
    for (w, group) in dst.chunks_exact_mut(group_bytes).enumerate().skip(first) {
        for j in 0..typesize {
            let rows = &src[8 * j * groups..];
            let mut x = 0u64;
            for k in 0..8 {
                x |= u64::from(rows[k * groups + w]) << (8 * k);
            }
            let x = transpose_8x8(x);
            for m in 0..8 {
                group[m * typesize + j] = (x >> (8 * m)) as u8;
            }
        }
    }
}
