//! b2nd: the Blosc2 storage stack in Rust — compressed chunks, super-chunks,
//! contiguous and sparse frames, and b2nd N-dimensional arrays — reading and
//! writing the same bytes as C-Blosc2 3.x. The same engine is the C library
//! `libb2nd` (a drop-in for `libblosc2`); this is its Rust API.
//!
//! ```
//! use b2nd_core::chunk::{Codec, Filter};
//! use b2nd_core::schunk::{CParams, SChunk, Storage};
//!
//! # fn main() -> b2nd_core::Result<()> {
//! let cparams = CParams::default()
//!     .with_codec(Codec::Zstd)
//!     .with_typesize(8)
//!     .with_filters(&[Filter::Shuffle]);
//! let mut sc = SChunk::new(Storage::in_memory(cparams))?;
//! let data: Vec<u8> = (0..10_000u64).flat_map(|i| i.to_le_bytes()).collect();
//! sc.append_buffer(&data)?;
//! let mut back = vec![0; data.len()];
//! sc.decompress_chunk(0, &mut back)?;
//! assert_eq!(back, data);
//! assert!(sc.cbytes() < sc.nbytes());
//! # Ok(())
//! # }
//! ```
//!
//! Layers, bottom to top, each a module with its own safe Rust API:
//! - [`codecs`]: BloscLZ (written here), LZ4/LZ4HC, Zlib, Zstd;
//! - [`filters`]: shuffle, bit-shuffle, delta, truncate-precision;
//! - [`chunk`]: the Blosc2 chunk format, the compression pipeline, threads;
//!   [`chunk::Codec`], [`chunk::Filter`] and [`chunk::SplitMode`] name the
//!   built-in ids for the builders of [`chunk::CParams`];
//! - [`frame`]: contiguous and sparse frames;
//! - [`schunk`]: super-chunks and metalayers;
//! - [`ndarray`]: b2nd N-dimensional arrays.
//!
//! Errors are one [`Error`]: an [`ErrorKind`] (which maps to the reference's
//! `BLOSC2_ERROR_*` code), a message and, for I/O, the OS error as its source.
//!
//! The C ABI (`blosc2_*`, `b2nd_*`, `caterva_*`, the library `libb2nd`) is the
//! separate crate `b2nd`, which converts, delegates and maps errors;
//! docs/DESIGN.md says where `unsafe` may live and how the layers fit.

// Where `unsafe` may live: the modules marked `#[allow(unsafe_code)]` (SIMD
// kernels, codec bindings, the zeroed allocation, and two small OS modules:
// `frame::mmap` maps frame files, `codecs::plugin` dlopens plugin
// libraries), each block with a SAFETY comment.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(missing_docs)]

pub mod error;
pub mod global;

pub mod chunk;
pub mod codecs;
pub mod filters;
pub mod frame;
pub mod ndarray;
pub mod schunk;

// The admission of calls on a shared super-chunk and the per-thread scratch
// buffers: public for the C ABI crate (b2nd), which keeps C handles under
// the same rules; not part of the Rust API.
#[doc(hidden)]
pub mod gate;
#[allow(unsafe_code)] // the fallible zeroed allocation
mod mem;
#[doc(hidden)]
pub mod scratch;
#[cfg(test)]
mod test_rng;

pub(crate) use error::{bail, err};
pub use error::{Error, ErrorKind, Result};

/// The README's examples: its Rust blocks run as doctests, and its C
/// example is examples/quick.c, which CTest runs.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod readme {
    #[test]
    fn the_readme_shows_the_c_example_ctest_runs() {
        let readme = include_str!("../../README.md");
        let example = include_str!("../../examples/quick.c");
        assert!(
            readme.contains(&format!("```c\n{example}```")),
            "README.md's C example differs from examples/quick.c"
        );
    }
}
