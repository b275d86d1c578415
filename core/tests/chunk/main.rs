//! Chunks (`b2nd_core::chunk`) and their filters: behaviour, fixtures and python-blosc2 cross-checks, bad input, threads, partial reads.
//! One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod behaviour;
mod filters_fixtures;
mod fixtures;
mod partial_reads;
mod pool_util;
mod python;
mod threads;
