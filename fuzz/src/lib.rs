//! Fuzz targets for b2nd: one body per input format, shared with the stable
//! replay test (`tests/fuzz_replay.rs`).
#[path = "bodies.rs"]
pub mod bodies;
