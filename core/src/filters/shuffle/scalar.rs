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
/// Requires `stride >= n`. The check for nothing left stays inline in the
/// kernels; the loops are a function of their own.
#[inline]
pub(crate) fn shuffle_items(
    typesize: usize,
    n: usize,
    stride: usize,
    first: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    if first < n {
        shuffle_some_items(typesize, n, stride, first, src, dst);
    }
}

/// [`shuffle_items`] for `first < n`.
#[inline(never)]
fn shuffle_some_items(
    typesize: usize,
    n: usize,
    stride: usize,
    first: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let items = &src[first * typesize..n * typesize];
    let by_item = items.chunks_exact(typesize);
    // The `n - first` items counted once, through the iterator: the zip
    // below then reuses this division where it made one per row, which
    // cost blocks of a few wide items tens of nanoseconds.
    let count = by_item.len();
    if count < 32 || count < typesize {
        // One pass per item: reading the items in order and writing each
        // byte to its row is faster than row by row for a vector kernel's
        // last items (`bash scripts/shuffle-bench.sh`), and
        // with fewer items than rows the loop overhead is paid per item,
        // not per row of a few bytes.
        for (i, item) in by_item.enumerate() {
            for (j, &b) in item.iter().enumerate() {
                dst[j * stride + first + i] = b;
            }
        }
        return;
    }
    // One output row per byte position: the rows are written sequentially,
    // the items are read with a stride of `typesize`.
    for j in 0..typesize {
        let row = &mut dst[j * stride + first..][..count];
        for (d, item) in row.iter_mut().zip(by_item.clone()) {
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

/// Unshuffles items `first..n` of a buffer holding `n` whole items. As
/// with [`shuffle_items`], only the check for nothing left is inline.
#[inline]
pub(crate) fn unshuffle_items(typesize: usize, n: usize, first: usize, src: &[u8], dst: &mut [u8]) {
    if first < n {
        unshuffle_some_items(typesize, n, first, src, dst);
    }
}

/// [`unshuffle_items`] for `first < n`.
#[inline(never)]
fn unshuffle_some_items(typesize: usize, n: usize, first: usize, src: &[u8], dst: &mut [u8]) {
    let items = &mut dst[first * typesize..n * typesize];
    // Counted once, as in `shuffle_some_items`.
    let count = items.chunks_exact_mut(typesize).len();
    if count < typesize {
        // Fewer items than rows: one pass per item. (With more, row by row
        // measured faster here: the rows are read in order.)
        for (i, item) in items.chunks_exact_mut(typesize).enumerate() {
            for (j, d) in item.iter_mut().enumerate() {
                *d = src[j * n + first + i];
            }
        }
        return;
    }
    for (j, row) in src[..n * typesize].chunks_exact(n).enumerate() {
        for (&s, item) in row[first..][..count]
            .iter()
            .zip(items.chunks_exact_mut(typesize))
        {
            item[j] = s;
        }
    }
}
