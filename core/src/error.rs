//! The one error type of the library, and its mapping to the reference's
//! negative `BLOSC2_ERROR_*` codes.
//!
//! Every fallible operation in the core returns [`Result`]. An [`Error`] is
//! an [`ErrorKind`] (one per reference error code), a message saying which
//! check failed, and, when another error caused it (an I/O error, say), that
//! error as its [`source`](std::error::Error::source). The C layer turns an
//! error into a return value with [`Error::code`], the single place where
//! the mapping lives, so a C caller sees exactly the codes the reference
//! `blosc2.h` documents.

use std::fmt;
use std::sync::Arc;

/// The category of an [`Error`]: the reference's error codes, one to one.
///
/// New categories may come with new reference codes, hence
/// `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `-1`: generic failure.
    Failure,
    /// `-2`: bad stream.
    Stream,
    /// `-3`: invalid data.
    Data,
    /// `-4`: memory allocation failure.
    MemoryAlloc,
    /// `-5`: not enough space to read.
    ReadBuffer,
    /// `-6`: not enough space to write.
    WriteBuffer,
    /// `-7`: codec not supported.
    CodecSupport,
    /// `-8`: invalid codec parameter.
    CodecParam,
    /// `-9`: codec dictionary error.
    CodecDict,
    /// `-10`: version not supported.
    VersionSupport,
    /// `-11`: invalid header.
    InvalidHeader,
    /// `-12`: invalid parameter.
    InvalidParam,
    /// `-13`: file read failure.
    FileRead,
    /// `-14`: file write failure.
    FileWrite,
    /// `-15`: file open failure.
    FileOpen,
    /// `-16`: not found.
    NotFound,
    /// `-17`: bad run-length encoding.
    RunLength,
    /// `-18`: filter pipeline error.
    FilterPipeline,
    /// `-19`: chunk insert failure.
    ChunkInsert,
    /// `-20`: chunk append failure.
    ChunkAppend,
    /// `-21`: chunk update failure.
    ChunkUpdate,
    /// `-22`: size over the 2 GB limit.
    TwoGbLimit,
    /// `-23`: super-chunk copy failure.
    SchunkCopy,
    /// `-24`: wrong frame type.
    FrameType,
    /// `-25`: file truncate failure.
    FileTruncate,
    /// `-26`: thread creation failure.
    ThreadCreate,
    /// `-27`: postfilter failure.
    Postfilter,
    /// `-28`: special frame failure.
    FrameSpecial,
    /// `-29`: special super-chunk failure.
    SchunkSpecial,
    /// `-30`: I/O plugin error.
    PluginIo,
    /// `-31`: file remove failure.
    FileRemove,
    /// `-32`: null pointer.
    NullPointer,
    /// `-33`: invalid index.
    InvalidIndex,
    /// `-34`: metalayer not found.
    MetalayerNotFound,
    /// `-35`: maximum buffer size exceeded.
    MaxBufsizeExceeded,
    /// `-36`: tuner failure.
    Tuner,
    /// `-37`: frame lock failure.
    Lock,
}

/// Every kind, in code order (`-1` first): the table behind
/// [`ErrorKind::from_code`].
const KINDS: [ErrorKind; 37] = [
    ErrorKind::Failure,
    ErrorKind::Stream,
    ErrorKind::Data,
    ErrorKind::MemoryAlloc,
    ErrorKind::ReadBuffer,
    ErrorKind::WriteBuffer,
    ErrorKind::CodecSupport,
    ErrorKind::CodecParam,
    ErrorKind::CodecDict,
    ErrorKind::VersionSupport,
    ErrorKind::InvalidHeader,
    ErrorKind::InvalidParam,
    ErrorKind::FileRead,
    ErrorKind::FileWrite,
    ErrorKind::FileOpen,
    ErrorKind::NotFound,
    ErrorKind::RunLength,
    ErrorKind::FilterPipeline,
    ErrorKind::ChunkInsert,
    ErrorKind::ChunkAppend,
    ErrorKind::ChunkUpdate,
    ErrorKind::TwoGbLimit,
    ErrorKind::SchunkCopy,
    ErrorKind::FrameType,
    ErrorKind::FileTruncate,
    ErrorKind::ThreadCreate,
    ErrorKind::Postfilter,
    ErrorKind::FrameSpecial,
    ErrorKind::SchunkSpecial,
    ErrorKind::PluginIo,
    ErrorKind::FileRemove,
    ErrorKind::NullPointer,
    ErrorKind::InvalidIndex,
    ErrorKind::MetalayerNotFound,
    ErrorKind::MaxBufsizeExceeded,
    ErrorKind::Tuner,
    ErrorKind::Lock,
];

impl ErrorKind {
    /// The reference's `BLOSC2_ERROR_*` value of this kind (always negative).
    pub const fn code(self) -> i32 {
        use ErrorKind::*;
        match self {
            Failure => -1,
            Stream => -2,
            Data => -3,
            MemoryAlloc => -4,
            ReadBuffer => -5,
            WriteBuffer => -6,
            CodecSupport => -7,
            CodecParam => -8,
            CodecDict => -9,
            VersionSupport => -10,
            InvalidHeader => -11,
            InvalidParam => -12,
            FileRead => -13,
            FileWrite => -14,
            FileOpen => -15,
            NotFound => -16,
            RunLength => -17,
            FilterPipeline => -18,
            ChunkInsert => -19,
            ChunkAppend => -20,
            ChunkUpdate => -21,
            TwoGbLimit => -22,
            SchunkCopy => -23,
            FrameType => -24,
            FileTruncate => -25,
            ThreadCreate => -26,
            Postfilter => -27,
            FrameSpecial => -28,
            SchunkSpecial => -29,
            PluginIo => -30,
            FileRemove => -31,
            NullPointer => -32,
            InvalidIndex => -33,
            MetalayerNotFound => -34,
            MaxBufsizeExceeded => -35,
            Tuner => -36,
            Lock => -37,
        }
    }

    /// The kind of a negative reference code; `None` for any other value.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        let at = usize::try_from(-(code as i64) - 1).ok()?;
        KINDS.get(at).copied()
    }

    /// The lowercase label that starts an error's [`Display`](fmt::Display).
    pub const fn label(self) -> &'static str {
        use ErrorKind::*;
        match self {
            Failure => "generic failure",
            Stream => "bad stream",
            Data => "invalid data",
            MemoryAlloc => "memory allocation failure",
            ReadBuffer => "not enough space to read",
            WriteBuffer => "not enough space to write",
            CodecSupport => "codec not supported",
            CodecParam => "invalid codec parameter",
            CodecDict => "codec dictionary error",
            VersionSupport => "version not supported",
            InvalidHeader => "invalid header",
            InvalidParam => "invalid parameter",
            FileRead => "file read failure",
            FileWrite => "file write failure",
            FileOpen => "file open failure",
            NotFound => "not found",
            RunLength => "bad run-length encoding",
            FilterPipeline => "filter pipeline error",
            ChunkInsert => "chunk insert failure",
            ChunkAppend => "chunk append failure",
            ChunkUpdate => "chunk update failure",
            TwoGbLimit => "size over the 2 GB limit",
            SchunkCopy => "super-chunk copy failure",
            FrameType => "wrong frame type",
            FileTruncate => "file truncate failure",
            ThreadCreate => "thread creation failure",
            Postfilter => "postfilter failure",
            FrameSpecial => "special frame failure",
            SchunkSpecial => "special super-chunk failure",
            PluginIo => "I/O plugin error",
            FileRemove => "file remove failure",
            NullPointer => "null pointer",
            InvalidIndex => "invalid index",
            MetalayerNotFound => "metalayer not found",
            MaxBufsizeExceeded => "maximum buffer size exceeded",
            Tuner => "tuner failure",
            Lock => "frame lock failure",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The cause an [`Error`] keeps, shared so that errors stay `Clone`.
type Source = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong: a kind, a message, and the error that caused it if any.
///
/// Two errors compare equal when kind and message are equal (sources are
/// not compared). The message and source live in one allocation, so a
/// `Result<T>` is two words larger than `T` at most.
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    message: String,
    source: Option<Source>,
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The code of [`ErrorKind::Failure`] (`BLOSC2_ERROR_FAILURE`), for the
    /// C entry points' answer to a contained panic, which has no `Error`.
    pub const FAILURE_CODE: i32 = ErrorKind::Failure.code();

    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            inner: Box::new(Inner {
                message: message.into(),
                source: None,
            }),
        }
    }

    /// The same error, caused by `source` (returned by
    /// [`std::error::Error::source`]; [`Error::report`] prints it too).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.inner.source = Some(Arc::new(source));
        self
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The reference's `BLOSC2_ERROR_*` value for this error (always negative).
    pub fn code(&self) -> i32 {
        self.kind.code()
    }

    /// Rebuilds an error from a negative code returned by user code (a
    /// registered codec, filter, prefilter or I/O callback). Unknown or
    /// non-negative codes become [`ErrorKind::Failure`].
    pub fn from_code(code: i32, detail: impl Into<String>) -> Error {
        let detail = detail.into();
        match ErrorKind::from_code(code) {
            Some(kind) => Error::new(kind, detail),
            None => Error::new(ErrorKind::Failure, format!("{detail} (code {code})")),
        }
    }

    /// The message without the kind's label (and without the source).
    pub fn detail(&self) -> &str {
        &self.inner.message
    }

    /// The error and every cause under it, on one line: what a log or the
    /// C layer's `BLOSC_TRACE` line shows.
    pub fn report(&self) -> String {
        let mut out = self.to_string();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            next = cause.source();
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.label(), self.inner.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind)
            .field("message", &self.inner.message);
        if let Some(s) = &self.inner.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        self.kind == other.kind && self.inner.message == other.inner.message
    }
}

impl Eq for Error {}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.source {
            Some(s) => Some(s.as_ref()),
            None => None,
        }
    }
}

impl From<ErrorKind> for Error {
    /// An error of that kind with an empty message.
    fn from(kind: ErrorKind) -> Error {
        Error::new(kind, String::new())
    }
}

/// Builds an error of a kind from a format string: `err!(Data, "bad {x}")`.
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::Error::new($crate::ErrorKind::$kind, format!($($arg)*))
    };
}

/// Returns early with an error of a kind: `bail!(InvalidParam, "typesize {t} > 255")`.
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::err!($kind, $($arg)*))
    };
}

pub(crate) use {bail, err};

/// The reference's short description of each code, as `blosc2_error_string`
/// returns it (a static string; unknown codes give "Unknown error").
pub fn describe(code: i32) -> &'static str {
    match code {
        0 => "Success",
        -1 => "Generic failure",
        -2 => "Bad stream",
        -3 => "Invalid data",
        -4 => "Memory alloc/realloc failure",
        -5 => "Not enough space to read",
        -6 => "Not enough space to write",
        -7 => "Codec not supported",
        -8 => "Invalid parameter supplied to codec",
        -9 => "Codec dictionary error",
        -10 => "Version not supported",
        -11 => "Invalid value in header",
        -12 => "Invalid parameter supplied to function",
        -13 => "File read failure",
        -14 => "File write failure",
        -15 => "File open failure",
        -16 => "Not found",
        -17 => "Bad run length encoding",
        -18 => "Filter pipeline error",
        -19 => "Chunk insert failure",
        -20 => "Chunk append failure",
        -21 => "Chunk update failure",
        -22 => "Sizes larger than 2gb not supported",
        -23 => "Super-chunk copy failure",
        -24 => "Wrong type for frame",
        -25 => "File truncate failure",
        -26 => "Thread or thread context creation failure",
        -27 => "Postfilter failure",
        -28 => "Special frame failure",
        -29 => "Special super-chunk failure",
        -30 => "IO plugin error",
        -31 => "Remove file failure",
        -32 => "Pointer is null",
        -33 => "Invalid index",
        -34 => "Metalayer has not been found",
        -35 => "Maximum buffersize exceeded",
        -36 => "Tuner failure",
        -37 => "Frame lock failure",
        _ => "Unknown error",
    }
}

/// Displays a code the way `BLOSC_TRACE` output names it.
pub struct CodeName(pub i32);

impl fmt::Display for CodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", describe(self.0), self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn code_and_from_code_are_inverse() {
        for (at, kind) in KINDS.iter().enumerate() {
            let code = -(at as i32) - 1;
            assert_eq!(kind.code(), code);
            assert_eq!(ErrorKind::from_code(code), Some(*kind));
            assert_eq!(Error::from_code(code, "x"), Error::new(*kind, "x"));
            assert_ne!(describe(code), "Unknown error");
        }
    }

    #[test]
    fn unknown_codes_are_failures() {
        assert_eq!(Error::from_code(-999, "y").code(), -1);
        assert_eq!(Error::from_code(5, "y").code(), -1);
        assert_eq!(Error::from_code(0, "y").kind(), ErrorKind::Failure);
        assert_eq!(ErrorKind::from_code(-38), None);
        assert_eq!(describe(-38), "Unknown error");
    }

    #[test]
    fn macros_build_the_named_kind() {
        fn f(x: i32) -> Result<()> {
            bail!(InvalidParam, "x is {x}");
        }
        let e = f(3).unwrap_err();
        assert_eq!(e.code(), -12);
        assert_eq!(e.kind(), ErrorKind::InvalidParam);
        assert_eq!(e.detail(), "x is 3");
        assert_eq!(err!(Data, "a{}", 1).to_string(), "invalid data: a1");
    }

    #[test]
    fn the_source_is_kept_and_reported() {
        let io = std::io::Error::new(std::io::ErrorKind::Other, "disk full");
        let e = err!(FileWrite, "f.b2frame: write at 8").with_source(io);
        assert_eq!(e.to_string(), "file write failure: f.b2frame: write at 8");
        assert_eq!(e.source().unwrap().to_string(), "disk full");
        assert_eq!(
            e.report(),
            "file write failure: f.b2frame: write at 8: disk full"
        );
        assert_eq!(e.clone().source().unwrap().to_string(), "disk full");
    }

    #[test]
    fn a_result_is_small() {
        assert_eq!(std::mem::size_of::<Error>(), 16);
    }
}
