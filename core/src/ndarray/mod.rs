//! b2nd N-dimensional arrays over super-chunks.
//!
//! The storage-independent core lives here:
//! - [`meta`]: the `b2nd` / `caterva` metalayer records;
//! - [`geometry`]: shapes, padded shapes, item counts and strides of an array;
//! - [`grid`]: which chunks of an array, or blocks of a chunk, a region touches;
//! - [`copy`]: strided copies between N-dimensional C buffers.

pub mod copy;
pub mod geometry;
pub mod grid;
pub mod meta;
mod meta_slot;

pub use copy::copy_nd;
pub use geometry::{padded, Geometry};
pub use grid::{block_mask, Cell, Grid, GridWalker};
pub use meta::{default_dtype_for_typesize, MetaLayout, NdMeta};
pub mod array;
