//! Contiguous (cframe) and sparse (sframe) frames: the serialized forms of a
//! super-chunk (README_CFRAME_FORMAT.rst, README_SFRAME_FORMAT.rst).
//!
//! - `header`: the msgpack header with its fixed-size metalayers;
//! - `trailer`: the msgpack trailer with the variable-length metalayers;
//! - `offsets`: entries of the chunk-offsets index, incl. special values;
//! - `index`: the offsets index in memory (kept compact when repeated);
//! - [`io`]: the I/O trait (files, memory, user callbacks);
//! - [`mmap`]: the memory-mapped file backend;
//! - `store`: a frame attached to its bytes, with chunk-level mutations;
//! - [`durable`]: whether frames fsync at their publishing points.

mod bytes;
pub(crate) mod codec;
pub mod durable;
pub(crate) mod header;
pub(crate) mod index;
pub mod io;
pub(crate) mod lock;
#[cfg(unix)]
#[allow(unsafe_code)] // mmap, mremap, msync and munmap of the frame file it maps
pub mod mmap;
pub(crate) mod offsets;
pub mod salvage;
pub(crate) mod store;
pub(crate) mod trailer;

pub use header::{FrameHeader, FrameType, Metalayer};
pub use io::{Io, IoFile, IoRef, MemFile, OpenMode, StdIo};
#[cfg(unix)]
pub use mmap::{MmapFile, MmapIo, MmapMode};
pub use offsets::{ChunkLoc, SpecialOffset};
pub use store::{Frame, FrameChunk, Place};
