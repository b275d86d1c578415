//! Filters: reversible byte transforms applied to a block before the codec.
//!
//! Each filter works on one block at a time, exactly as the reference
//! pipeline calls it, so that chunks written here and by C-Blosc2 are byte
//! identical. The byte- and bit-shuffle kernels come in a portable scalar
//! version plus SSE2 and AVX2 versions on x86_64, picked once at run time.

#[allow(unsafe_code)] // SSE2 and AVX2 kernels
pub mod bitshuffle;
#[allow(unsafe_code)] // an AVX2 prefix sum
pub mod bytedelta;
pub mod delta;
pub mod int_trunc;
pub mod names;
pub mod ndcell;
#[allow(unsafe_code)] // SSE2 and AVX2 kernels
pub mod shuffle;
#[allow(unsafe_code)] // AVX2 kernels
pub(crate) mod shuffle_bytedelta;
pub mod trunc_prec;

mod cpu;
#[allow(unsafe_code)] // an AVX2 scan
pub(crate) mod run;
#[cfg(test)]
mod test_util;

/// The length of each row of a `len`-byte buffer cut into `rows` equal
/// rows, checking that they fit `stride` bytes apart in `room` bytes: the
/// layout [`shuffle::shuffle_rows`] and [`shuffle_bytedelta::encode_rows`] write
/// (a split block's streams, each behind its 4-byte size).
///
/// # Panics
/// If `rows` is 0 or does not divide `len`, or the rows do not fit (caller
/// bugs); `what` names the caller.
pub(crate) fn row_len(what: &str, rows: usize, len: usize, room: usize, stride: usize) -> usize {
    assert!(
        rows > 0 && len % rows == 0,
        "{what}: {len} bytes are not {rows} rows"
    );
    let n = len / rows;
    assert!(
        stride >= n && room >= (rows - 1) * stride + n,
        "{what}: rows of {n} bytes do not fit {stride} bytes apart in {room}"
    );
    n
}
