//! Panic containment and error reporting at the C boundary.

use crate::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into `on_panic`.
///
/// `AssertUnwindSafe` is sound here: after a panic we do not touch any state
/// the closure captured; we only return a sentinel to C.
pub(crate) fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            trace_error(&format!(
                "internal error (panic contained at the C boundary): {what}"
            ));
            on_panic
        }
    }
}

/// Runs a fallible core call and returns its value as a C integer (`int`
/// or `int64_t`), or the error's negative code (traced when `BLOSC_TRACE` is
/// set); a contained panic gives `BLOSC2_ERROR_FAILURE`. This is the one way
/// the C entry points turn a `crate::Result` into a return code.
pub(crate) fn guard_code<T: From<i32>>(f: impl FnOnce() -> crate::Result<T>) -> T {
    guard(T::from(Error::FAILURE_CODE), || match f() {
        Ok(v) => v,
        Err(e) => T::from(report(&e)),
    })
}

/// Traces an error the way the reference does and returns its code.
pub(crate) fn report(e: &Error) -> i32 {
    if tracing() {
        eprintln!("[error] - {} (b2nd)", e.report());
    }
    e.code()
}

/// Prints `[INFO] - msg` on stderr when the `BLOSC_INFO` environment variable
/// is set, as the reference's `BLOSC_INFO` does (python-blosc2's tests look
/// for some of these lines).
pub(crate) fn trace_info(msg: &str) {
    if std::env::var_os("BLOSC_INFO").is_some() {
        eprintln!("[INFO] - {msg}");
    }
}

/// Prints `[error] - msg` on stderr when the `BLOSC_TRACE` environment
/// variable is set, as the reference's `BLOSC_TRACE_ERROR` does.
/// Whether `BLOSC_TRACE` asks for errors on stderr, as in the reference.
fn tracing() -> bool {
    std::env::var_os("BLOSC_TRACE").is_some()
}

pub(crate) fn trace_error(msg: &str) {
    if tracing() {
        eprintln!("[error] - {msg} (b2nd)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_the_sentinel() {
        let r = guard(-1, || -> i32 { panic!("boom") });
        assert_eq!(r, -1);
        assert_eq!(guard(0, || 7), 7);
    }

    #[test]
    fn errors_become_codes() {
        assert_eq!(
            guard_code::<i64>(|| Err(crate::err!(InvalidParam, "x"))),
            -12
        );
        assert_eq!(guard_code(|| Ok(42)), 42);
        assert_eq!(guard_code::<i64>(|| panic!("no")), -1);
        assert_eq!(
            guard_code::<i32>(|| Err(crate::err!(NullPointer, "x"))),
            -32
        );
    }
}
