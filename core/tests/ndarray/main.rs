//! The b2nd array layer (`b2nd_core::ndarray`): geometry, grids, N-d copies and
//! metalayers against independent derivations, every array operation
//! against a naive model, many threads on one array, and cross-checks with
//! python-blosc2. One test binary, one module per subject.

#[path = "../common/mod.rs"]
mod common;

mod copy;
mod geometry;
mod grid;
mod meta;
mod ops;
mod oracle;
mod python;
mod slice;
mod threads;
