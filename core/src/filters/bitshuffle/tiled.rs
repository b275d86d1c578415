//! Tile driver shared by the SIMD bit-shuffle kernels.
//!
//! A bit transpose is a byte transpose (the byte shuffle) followed by
//! transposing the bits within each run of byte rows. The driver cuts the
//! items into tiles that fit a stack buffer: the tile is byte-shuffled into the
//! buffer (with the same tier's SIMD byte shuffle), then each of its byte rows
//! is turned into eight bit-row segments by a vector kernel. Unshuffling runs
//! the same steps backwards. The row kernels are fastest on runs of
//! `8 * LANES` items (eight vectors: an 8x8 bit transpose per 64-bit lane plus
//! a byte transpose), and take shorter rows a vector at a time, far slower;
//! so every tile is made at least one such run, the last one starting early
//! over items already done if need be, and a row that is not whole runs ends
//! with a run overlapping the one before (`next_tile`). Only a buffer of
//! fewer items than a vector, or the items past the last whole vector of one
//! shorter than a run (fewer than one vector, a multiple of 8), go through
//! the scalar code.

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
    let end = 8 * stride;
    if typesize == 1 {
        let t0 = match next_tile::<K>(usize::MAX, start, end) {
            Some((from, items)) => {
                bits_from_row::<K>(&src[from..from + items], dst, from / 8, stride);
                from + items
            }
            None => start,
        };
        scalar::bitshuffle_groups(1, t0 / 8, stride, src, dst);
        return;
    }
    let tile_items = tile_items::<K>(typesize);
    if tile_items == 0 {
        return scalar::bitshuffle_groups(typesize, start / 8, stride, src, dst);
    }
    let t0 = with_tile(tile_items.min(end) * typesize, |buf| {
        let mut t0 = start;
        while let Some((from, items)) = next_tile::<K>(tile_items, t0, end) {
            let tile = &mut buf[..items * typesize];
            K::shuffle(
                typesize,
                &src[from * typesize..(from + items) * typesize],
                tile,
            );
            for (j, row) in tile.chunks_exact(items).enumerate() {
                bits_from_row::<K>(row, dst, 8 * j * stride + from / 8, stride);
            }
            t0 = from + items;
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
    let end = 8 * stride;
    if typesize == 1 {
        let t0 = match next_tile::<K>(usize::MAX, start, end) {
            Some((from, items)) => {
                row_from_bits::<K>(src, from / 8, stride, &mut dst[from..from + items]);
                from + items
            }
            None => start,
        };
        scalar::bitunshuffle_groups(1, t0 / 8, stride, src, dst);
        return;
    }
    let tile_items = tile_items::<K>(typesize);
    if tile_items == 0 {
        return scalar::bitunshuffle_groups(typesize, start / 8, stride, src, dst);
    }
    let t0 = with_tile(tile_items.min(end) * typesize, |buf| {
        let mut t0 = start;
        while let Some((from, items)) = next_tile::<K>(tile_items, t0, end) {
            let tile = &mut buf[..items * typesize];
            for (j, row) in tile.chunks_exact_mut(items).enumerate() {
                row_from_bits::<K>(src, 8 * j * stride + from / 8, stride, row);
            }
            K::unshuffle(
                typesize,
                tile,
                &mut dst[from * typesize..(from + items) * typesize],
            );
            t0 = from + items;
        }
        t0
    });
    scalar::bitunshuffle_groups(typesize, t0 / 8, stride, src, dst);
}

/// Items per tile: as many as fit the buffer, a multiple of 8 when that is
/// at least a run of [`RowKernels::BEST`] items (the row helpers below take
/// any such length), else whole vectors (0 if not even one fits).
fn tile_items<K: RowKernels>(typesize: usize) -> usize {
    let fit = TILE_BYTES / typesize;
    if fit >= K::BEST {
        fit / 8 * 8
    } else {
        fit / K::LANES * K::LANES
    }
}

/// The next tile after item `t0` of the `end` items the transpose covers
/// (a multiple of 8), at most `cap` items: `(first item, items)`, or `None`
/// when done or when fewer items are left than one vector takes and none
/// can be redone.
///
/// Each tile should be at least a run of [`RowKernels::BEST`] items: the
/// row kernels take shorter rows a vector at a time, far slower. Tiles are
/// whole runs until what is left fits one tile (any multiple of 8 items);
/// that last tile is taken whole, its rows ending in a run that overlaps
/// the one before ([`bits_from_row`], [`row_from_bits`]), and if fewer than
/// a run are left it starts early, over items done already (it writes them
/// again with the same values). Whole runs first, because an overlapping
/// run redoes up to a run's bit work, and a last tile taken whole beats a
/// tile plus items a vector at a time (`bash scripts/shuffle-bench.sh --bit
/// --typesizes 40,48 --blocksizes 32640,261120`).
fn next_tile<K: RowKernels>(cap: usize, t0: usize, end: usize) -> Option<(usize, usize)> {
    let left = end - t0;
    if left > cap {
        let runs = cap / K::BEST * K::BEST;
        return Some((t0, if runs > 0 { runs } else { cap }));
    }
    if left >= K::BEST {
        return Some((t0, left));
    }
    if left == 0 {
        return None;
    }
    // Fewer than a run left: a run (whole vectors if `cap` is shorter)
    // ending at `end`, or whole vectors if `end` is too short for that.
    let items = left.max(K::BEST.min(cap)).next_multiple_of(K::LANES);
    if items <= end {
        return Some((end - items, items));
    }
    let whole = left.next_multiple_of(K::LANES);
    if whole <= end {
        return Some((end - whole, whole));
    }
    // Only in a buffer shorter than a run with `t0` at its start: as many
    // whole vectors as there are, the rest to the scalar loop.
    let some = left / K::LANES * K::LANES;
    (some > 0).then_some((t0, some))
}

/// [`RowKernels::bits_from_bytes`] for a row of whole vectors, or of any
/// multiple of 8 items from a run on: a row longer than a run but not a
/// whole number of runs ends with a run of its own that overlaps the one
/// before, so no vector of it takes the kernels' slow path.
///
/// # Safety
/// As for the kernel.
unsafe fn bits_from_row<K: RowKernels>(row: &[u8], dst: &mut [u8], off: usize, stride: usize) {
    let len = row.len();
    if len > K::BEST && len % K::BEST != 0 {
        let whole = len / K::BEST * K::BEST;
        K::bits_from_bytes(&row[..whole], dst, off, stride);
        let last = len - K::BEST;
        K::bits_from_bytes(&row[last..], dst, off + last / 8, stride);
    } else {
        K::bits_from_bytes(row, dst, off, stride);
    }
}

/// [`RowKernels::bytes_from_bits`] for a row such as [`bits_from_row`]
/// takes, ending as it does.
///
/// # Safety
/// As for the kernel.
unsafe fn row_from_bits<K: RowKernels>(src: &[u8], off: usize, stride: usize, row: &mut [u8]) {
    let len = row.len();
    if len > K::BEST && len % K::BEST != 0 {
        let whole = len / K::BEST * K::BEST;
        K::bytes_from_bits(src, off, stride, &mut row[..whole]);
        let last = len - K::BEST;
        K::bytes_from_bits(src, off + last / 8, stride, &mut row[last..]);
    } else {
        K::bytes_from_bits(src, off, stride, row);
    }
}
