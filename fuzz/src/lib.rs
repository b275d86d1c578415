//! Fuzz targets for b2nd: one body per input format, shared with the stable
//! replay test (`core/tests/fuzz_replay.rs`).
#[path = "bodies.rs"]
pub mod bodies;
