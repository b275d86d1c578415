//! Portable byte shuffle, used on every target and for the ragged edges the
//! SIMD kernels leave over.

use super::Plane;

/// Shuffles all whole items of `src` into `dst` and copies the trailing
/// partial item. Requires `src.len() == dst.len()` and `typesize >= 1`.
pub(crate) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    shuffle_items(typesize, n, n, 0, src, dst);
    copy_tail(typesize, n, src, dst);
}

/// Inverse of [`shuffle`], same preconditions.
pub(crate) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    unshuffle_items(typesize, n, 0, src, dst);
    copy_tail(typesize, n, src, dst);
}

/// Copies the bytes after the `n` whole items of `typesize` bytes (the
/// `len % typesize` left over, `n` being `len / typesize`, which callers have
/// at hand: not dividing again saves a few nanoseconds of a small block).
#[inline]
pub(crate) fn copy_tail(typesize: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    let body = n * typesize;
    if body < src.len() {
        dst[body..].copy_from_slice(&src[body..]);
    }
}

/// Shuffles items `first..n` of a buffer holding `n` whole items, row `j`
/// (byte `j` of every item) to `dst[j * stride..j * stride + n]` (the SIMD
/// kernels call this for the items after their last full vector group).
/// Requires `stride >= n`.
pub(crate) fn shuffle_items(
    typesize: usize,
    n: usize,
    stride: usize,
    first: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    if first >= n {
        return;
    }
    let items = &src[first * typesize..n * typesize];
    // One output row per byte position: the rows are written sequentially,
    // the items are read with a stride of `typesize`.
    for j in 0..typesize {
        let row = &mut dst[j * stride + first..j * stride + n];
        for (d, item) in row.iter_mut().zip(items.chunks_exact(typesize)) {
            *d = item[j];
        }
    }
}

/// Unshuffles items `first..n` from separate byte planes (plane `j` holds
/// byte `j` of every item) into `dst`.
pub(crate) fn unshuffle_plane_items(planes: &[Plane<'_>], n: usize, first: usize, dst: &mut [u8]) {
    let typesize = planes.len();
    if first >= n || typesize == 0 {
        return;
    }
    let items = &mut dst[first * typesize..n * typesize];
    for (j, plane) in planes.iter().enumerate() {
        match *plane {
            Plane::Bytes(bytes) => {
                for (item, &s) in items.chunks_exact_mut(typesize).zip(&bytes[first..n]) {
                    item[j] = s;
                }
            }
            Plane::Run(value) => {
                for item in items.chunks_exact_mut(typesize) {
                    item[j] = value;
                }
            }
        }
    }
}

/// Unshuffles items `first..n` of a buffer holding `n` whole items.
#[inline]
pub(crate) fn unshuffle_items(typesize: usize, n: usize, first: usize, src: &[u8], dst: &mut [u8]) {
    if first >= n {
        return;
    }
    let items = &mut dst[first * typesize..n * typesize];
    for (j, row) in src[..n * typesize].chunks_exact(n).enumerate() {
        for (item, &s) in items.chunks_exact_mut(typesize).zip(&row[first..]) {
            item[j] = s;
        }
    }
}
