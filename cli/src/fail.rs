//! Failures and their exit codes: 1 for damaged data or a failed operation,
//! 2 for input that cannot be opened and for bad arguments.

use std::fmt::Display;
use std::path::Path;

/// Exit code for damaged data or an operation that failed part way.
pub const FAILED: u8 = 1;
/// Exit code for an input that cannot be opened, or a bad argument.
pub const USAGE: u8 = 2;

/// One line for stderr and the exit code that goes with it.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

/// A bad argument (slice out of range, unknown codec...).
pub fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: USAGE,
        message: message.into(),
    }
}

/// An input that cannot be opened.
pub fn cannot_open(path: &Path, why: impl Display) -> Failure {
    usage(format!("cannot open {}: {why}", path.display()))
}

/// An operation that failed on the way.
pub fn failed(message: impl Into<String>) -> Failure {
    Failure {
        code: FAILED,
        message: message.into(),
    }
}

/// Turns a library error into a [`failed`] with some context.
pub trait Context<T> {
    fn or_fail(self, what: &str) -> Result<T, Failure>;
}

impl<T, E: std::error::Error> Context<T> for Result<T, E> {
    /// The message names the error and each of its causes.
    fn or_fail(self, what: &str) -> Result<T, Failure> {
        self.map_err(|e| {
            let mut message = format!("{what}: {e}");
            let mut cause = e.source();
            while let Some(c) = cause {
                message.push_str(&format!(": {c}"));
                cause = c.source();
            }
            failed(message)
        })
    }
}
