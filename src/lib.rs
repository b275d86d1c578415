//! The C ABI of b2nd: the C-Blosc2 API (`blosc2.h`, `b2nd.h`, the `blosc1`
//! names) and Caterva's (`caterva.h`) over the engine in `b2nd-core`. Each
//! exported function checks its pointers, converts, calls the core, and maps
//! the error; no format logic lives here. Rust programs use `b2nd-core`
//! directly.
//!
//! Every exported function runs inside [`guard`], so a panic in the core never
//! unwinds into C: it becomes `BLOSC2_ERROR_FAILURE` (or NULL).
//!
//! `include/b2nd.h` and `include/caterva.h` are generated from this crate by
//! cbindgen (build.rs).

// The whole crate is the C boundary: `unsafe` is allowed here, each block
// with a SAFETY comment.
#![deny(clippy::undocumented_unsafe_blocks)]

pub(crate) use b2nd_core::{Error, ErrorKind, Result};

/// An error of a kind with a formatted message:
/// `err!(InvalidParam, "typesize {t} > 255")`.
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::Error::new($crate::ErrorKind::$kind, format!($($arg)*))
    };
}

/// Returns early with an error of a kind (see `err!`).
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::err!($kind, $($arg)*))
    };
}

pub(crate) use {bail, err};

mod guard;
// Checked pointer/count and C-string conversions shared by every export.
#[allow(dead_code)] // exported to C through the generated header, unused in Rust
mod constants;
pub(crate) mod convert;
mod lifecycle;
mod timing;
// The chunk engine's C API.
mod blosc1;
mod chunk;
mod context;
mod registry;
// Loading plugin libraries for codecs and filters registered without callbacks.
mod defaults;
mod plugin;
mod shuffle;
// Mirrors of the reference's public structs. Many are used only by C callers
// (they appear in the header and in layouts), so Rust sees no use of them.
#[allow(dead_code)]
pub(crate) mod types;

#[allow(unused_imports)] // used by the exported functions as they land
pub(crate) use guard::*;
mod b2nd;
mod frame_util;
mod io;
mod meta;
mod schunk;
mod storage;
// The Caterva 0.5 API (include/caterva.h) over the b2nd array engine.
mod caterva;
