//! b2nd: the Blosc2 storage stack in Rust.
//!
//! Layers, bottom to top, each a module with its own safe Rust API:
//! - [`codecs`]: BloscLZ (written here), LZ4/LZ4HC, Zlib, Zstd;
//! - [`filters`]: shuffle, bit-shuffle, delta, truncate-precision;
//! - [`chunk`]: the Blosc2 chunk format, the compression pipeline, threads;
//! - [`frame`]: contiguous and sparse frames;
//! - [`schunk`]: super-chunks and metalayers;
//! - [`ndarray`]: b2nd N-dimensional arrays;
//! - `ffi`: the C ABI (`blosc2_*`, `b2nd_*`, `caterva_*`), a thin layer that
//!   converts, delegates and maps errors. It is the only place (with SIMD
//!   kernels, and the fallible zeroed allocation of `mem`) where `unsafe`
//!   is allowed.
//!
//! Rule for contributors: outside `src/ffi/`, never declare a top-level `pub const`
//! or a `#[no_mangle]` function: cbindgen would put it into `include/b2nd.h`.
//! Use `pub(crate)` or associated constants instead.

pub mod error;
pub mod global;

pub mod chunk;
pub mod codecs;
pub mod filters;
pub mod frame;
pub mod ndarray;
pub mod schunk;

mod ffi;
mod gate;
mod mem;
mod scratch;
#[cfg(test)]
mod test_rng;

pub(crate) use error::{bail, err};
pub use error::{Error, ErrorKind, Result};
