//! Library lifecycle and version/error strings: what a C caller calls first.

use super::guard;
use std::ffi::{c_char, c_int, CStr};

/// The version string returned to C; same text as `BLOSC2_VERSION_STRING`.
static VERSION: &CStr = c"3.3.5";

/// Initialises the library. Safe to call more than once. Sets up the global
/// settings the Blosc1-style calls use and, as the reference's does,
/// registers its plugin-only codecs (ids 36..=40), whose libraries load at
/// first use (see `blosc2/codecs-registry.h`).
#[no_mangle]
pub extern "C" fn blosc2_init() {
    guard((), || {
        b2nd_core::global::init();
        // Cannot fail: fixed ids in the global range, fixed names.
        let _ = super::registry::register_loadable_codecs();
    })
}

/// Releases global resources. Calls made after it behave as after `blosc2_init`.
#[no_mangle]
pub extern "C" fn blosc2_destroy() {
    guard((), b2nd_core::global::destroy)
}

/// Frees the worker threads and scratch memory held for the global context.
/// Returns 0 on success, as the reference does.
#[no_mangle]
pub extern "C" fn blosc2_free_resources() -> c_int {
    guard(-1, || {
        b2nd_core::global::destroy();
        0
    })
}

/// The API version this library implements, as a static NUL-terminated string.
#[no_mangle]
pub extern "C" fn blosc2_get_version_string() -> *const c_char {
    VERSION.as_ptr()
}

/// A static description of an error code ("Unknown error" for unknown codes).
#[no_mangle]
pub extern "C" fn blosc2_error_string(error_code: c_int) -> *const c_char {
    error_cstr(b2nd_core::error::describe(error_code)).as_ptr()
}

/// Maps each description to a NUL-terminated static. The descriptions are
/// ASCII literals without interior NULs, so every lookup succeeds.
fn error_cstr(msg: &'static str) -> &'static CStr {
    static TABLE: std::sync::OnceLock<Vec<(&'static str, std::ffi::CString)>> =
        std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (-40..=0)
            .map(b2nd_core::error::describe)
            .map(|d| {
                (
                    d,
                    std::ffi::CString::new(d).expect("no NUL in descriptions"),
                )
            })
            .collect()
    });
    table
        .iter()
        .find(|(d, _)| *d == msg)
        .map(|(_, c)| c.as_c_str())
        .unwrap_or(c"Unknown error")
}
