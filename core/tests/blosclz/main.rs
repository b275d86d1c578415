//! BloscLZ, the codec written here: round trips, the reference's streams (fixtures and python-blosc2), and malformed input.
//! One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod fixtures;
mod python;
mod roundtrip;
