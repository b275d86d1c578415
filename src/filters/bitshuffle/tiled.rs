//! Tile driver shared by the SIMD bit-shuffle kernels.
//!
//! A bit transpose is a byte transpose (the byte shuffle) followed by
//! transposing the bits within each run of byte rows. The driver cuts the
//! items into tiles that fit a stack buffer: the tile is byte-shuffled into the
//! buffer (with the same tier's SIMD byte shuffle), then each of its byte rows
//! is turned into eight bit-row segments by a vector kernel. Unshuffling runs
//! the same steps backwards. The row kernels are fastest on runs of
//! `8 * LANES` items (eight vectors: an 8x8 bit transpose per 64-bit lane plus
//! a byte transpose), so tiles are sized in such runs when they fit. Items left over after the last whole vector group
//! (fewer than one vector, a multiple of 8) go through the scalar code.

use super::scalar;
use std::cell::RefCell;

/// Tile buffer size: a tile of items is byte-shuffled into it.
pub(crate) const TILE_BYTES: usize = 32 * 1024;

thread_local! {
    /// This thread's tile buffer. A zeroed stack array would cost a 32 KiB
    /// memset per call, as much as the whole transpose of a small block;
    /// kept per thread, it is allocated once and never cleared (every tile
    /// byte is written before it is read).
    static TILE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a tile buffer of `len` bytes (a fresh one if this thread's
/// is in use, which only a re-entrant call could cause, or gone: see
/// [`crate::scratch::with_kept`]).
fn with_tile<T>(len: usize, f: impl FnOnce(&mut [u8]) -> T) -> T {
    crate::scratch::with_kept_bytes(&TILE, len, f)
}

/// The per-tier pieces the driver needs.
pub(crate) trait RowKernels {
    /// Items (bytes of one byte row) handled per vector.
    const LANES: usize;
    /// Items the row kernels handle best at once (their fast path); tiles
    /// are made a multiple of this when the type size allows.
    const BEST: usize;

    /// The tier's byte shuffle and unshuffle (`2 <= typesize <= len`).
    fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]);
    fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]);

    /// Spreads the bits of `row` (byte `j` of consecutive items, a multiple of
    /// `LANES` long) over eight bit rows: bit `k` of `row[i]` goes to bit
    /// `i % 8` of `dst[off + k * stride + i / 8]`.
    ///
    /// # Safety
    /// The CPU supports the tier's instruction set.
    unsafe fn bits_from_bytes(row: &[u8], dst: &mut [u8], off: usize, stride: usize);

    /// Inverse of [`RowKernels::bits_from_bytes`]: rebuilds `row` from the
    /// eight bit rows at `src[off + k * stride..]`.
    ///
    /// # Safety
    /// The CPU supports the tier's instruction set.
    unsafe fn bytes_from_bits(src: &[u8], off: usize, stride: usize, row: &mut [u8]);
}

/// Bit-transposes `src` (a multiple of `8 * typesize` bytes) into `dst`.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
pub(crate) unsafe fn bitshuffle<K: RowKernels>(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bitshuffle_from::<K>(typesize, src, dst, 0)
}

/// [`bitshuffle`] of the items from `start` on (a multiple of 8; the items
/// before it are already done), for kernels that handle a prefix their own
/// way.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
pub(crate) unsafe fn bitshuffle_from<K: RowKernels>(
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    start: usize,
) {
    let n = src.len() / typesize;
    let stride = n / 8;
    let lanes = K::LANES;
    if typesize == 1 {
        let done = start + (n - start) / lanes * lanes;
        K::bits_from_bytes(&src[start..done], dst, start / 8, stride);
        scalar::bitshuffle_groups(1, done / 8, stride, src, dst);
        return;
    }
    let tile_items = tile_items::<K>(typesize);
    if tile_items == 0 {
        return scalar::bitshuffle_groups(typesize, start / 8, stride, src, dst);
    }
    let t0 = with_tile(tile_items.min(n - start) * typesize, |buf| {
        let mut t0 = start;
        while n - t0 >= lanes {
            let items = next_tile(tile_items, n - t0, K::BEST, lanes);
            let tile = &mut buf[..items * typesize];
            K::shuffle(typesize, &src[t0 * typesize..(t0 + items) * typesize], tile);
            for (j, row) in tile.chunks_exact(items).enumerate() {
                K::bits_from_bytes(row, dst, 8 * j * stride + t0 / 8, stride);
            }
            t0 += items;
        }
        t0
    });
    scalar::bitshuffle_groups(typesize, t0 / 8, stride, src, dst);
}

/// Inverse of [`bitshuffle`].
///
/// # Safety
/// The CPU supports `K`'s instruction set.
pub(crate) unsafe fn bitunshuffle<K: RowKernels>(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bitunshuffle_from::<K>(typesize, src, dst, 0)
}

/// [`bitunshuffle`] of the items from `start` on (a multiple of 8; the
/// items before it are already done), for kernels that handle a prefix
/// their own way.
///
/// # Safety
/// The CPU supports `K`'s instruction set.
pub(crate) unsafe fn bitunshuffle_from<K: RowKernels>(
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    start: usize,
) {
    let n = src.len() / typesize;
    let stride = n / 8;
    let lanes = K::LANES;
    if typesize == 1 {
        let done = start + (n - start) / lanes * lanes;
        K::bytes_from_bits(src, start / 8, stride, &mut dst[start..done]);
        scalar::bitunshuffle_groups(1, done / 8, stride, src, dst);
        return;
    }
    let tile_items = tile_items::<K>(typesize);
    if tile_items == 0 {
        return scalar::bitunshuffle_groups(typesize, start / 8, stride, src, dst);
    }
    let t0 = with_tile(tile_items.min(n - start) * typesize, |buf| {
        let mut t0 = start;
        while n - t0 >= lanes {
            let items = next_tile(tile_items, n - t0, K::BEST, lanes);
            let tile = &mut buf[..items * typesize];
            for (j, row) in tile.chunks_exact_mut(items).enumerate() {
                K::bytes_from_bits(src, 8 * j * stride + t0 / 8, stride, row);
            }
            K::unshuffle(
                typesize,
                tile,
                &mut dst[t0 * typesize..(t0 + items) * typesize],
            );
            t0 += items;
        }
        t0
    });
    scalar::bitunshuffle_groups(typesize, t0 / 8, stride, src, dst);
}

/// Items per tile: as many as fit the buffer, rounded to the kernels' best
/// multiple if possible, else to whole vectors (0 if not even one fits).
fn tile_items<K: RowKernels>(typesize: usize) -> usize {
    let fit = TILE_BYTES / typesize;
    if fit >= K::BEST {
        fit / K::BEST * K::BEST
    } else {
        fit / K::LANES * K::LANES
    }
}

/// Size of the next tile when `left` items remain: a full tile, else the
/// largest multiple of `best`, else of `lanes` (the caller ensures
/// `left >= lanes`).
fn next_tile(tile_items: usize, left: usize, best: usize, lanes: usize) -> usize {
    if left >= tile_items {
        tile_items
    } else if left >= best && tile_items >= best {
        left / best * best
    } else {
        left / lanes * lanes
    }
}
