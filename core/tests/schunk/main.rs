//! Super-chunks and their frames (`b2nd_core::schunk`, `b2nd_core::frame`): contiguous, sparse and offset frames, fixtures and python-blosc2, lazy chunks, I/O backends (memory-mapped too), locking and SWMR.
//! One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod frame_fixtures;
mod frame_lazy;
mod frame_offset;
mod frame_python;
mod frame_special_fill;
mod frames;
mod io;
mod locking;
mod mmap;
mod sparse;
mod swmr;
