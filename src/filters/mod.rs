//! Filters: reversible byte transforms applied to a block before the codec.
//!
//! Each filter works on one block at a time, exactly as the reference
//! pipeline calls it, so that chunks written here and by C-Blosc2 are byte
//! identical. The byte- and bit-shuffle kernels come in a portable scalar
//! version plus SSE2 and AVX2 versions on x86_64, picked once at run time.

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod int_trunc;
pub mod ndcell;
pub mod shuffle;
pub mod trunc_prec;

mod cpu;
pub(crate) mod run;
#[cfg(test)]
mod test_util;
