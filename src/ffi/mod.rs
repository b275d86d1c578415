//! The C ABI. Each exported function checks its pointers, converts, calls the
//! safe core, and maps the error; no format logic lives here.
//!
//! Every exported function runs inside [`guard`], so a panic in the core never
//! unwinds into C: it becomes `BLOSC2_ERROR_FAILURE` (or NULL).

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
