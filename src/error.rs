//! The one error type of the library, and its mapping to the reference's
//! negative `BLOSC2_ERROR_*` codes.
//!
//! Every fallible operation in the core returns [`Result`]. The FFI layer turns
//! an [`Error`] into a C return value with [`Error::code`], the single place
//! where the mapping lives, so a C caller sees exactly the codes the reference
//! `blosc2.h` documents.

use std::fmt;

/// What went wrong, with a human-readable detail.
///
/// Variants follow the reference's error categories one to one; the detail
/// string says which check failed, for `BLOSC_TRACE` output and Rust callers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("generic failure: {0}")]
    Failure(String),
    #[error("bad stream: {0}")]
    Stream(String),
    #[error("invalid data: {0}")]
    Data(String),
    #[error("memory allocation failure: {0}")]
    MemoryAlloc(String),
    #[error("not enough space to read: {0}")]
    ReadBuffer(String),
    #[error("not enough space to write: {0}")]
    WriteBuffer(String),
    #[error("codec not supported: {0}")]
    CodecSupport(String),
    #[error("invalid codec parameter: {0}")]
    CodecParam(String),
    #[error("codec dictionary error: {0}")]
    CodecDict(String),
    #[error("version not supported: {0}")]
    VersionSupport(String),
    #[error("invalid header: {0}")]
    InvalidHeader(String),
    #[error("invalid parameter: {0}")]
    InvalidParam(String),
    #[error("file read failure: {0}")]
    FileRead(String),
    #[error("file write failure: {0}")]
    FileWrite(String),
    #[error("file open failure: {0}")]
    FileOpen(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("bad run-length encoding: {0}")]
    RunLength(String),
    #[error("filter pipeline error: {0}")]
    FilterPipeline(String),
    #[error("chunk insert failure: {0}")]
    ChunkInsert(String),
    #[error("chunk append failure: {0}")]
    ChunkAppend(String),
    #[error("chunk update failure: {0}")]
    ChunkUpdate(String),
    #[error("size over the 2 GB limit: {0}")]
    TwoGbLimit(String),
    #[error("super-chunk copy failure: {0}")]
    SchunkCopy(String),
    #[error("wrong frame type: {0}")]
    FrameType(String),
    #[error("file truncate failure: {0}")]
    FileTruncate(String),
    #[error("thread creation failure: {0}")]
    ThreadCreate(String),
    #[error("postfilter failure: {0}")]
    Postfilter(String),
    #[error("special frame failure: {0}")]
    FrameSpecial(String),
    #[error("special super-chunk failure: {0}")]
    SchunkSpecial(String),
    #[error("I/O plugin error: {0}")]
    PluginIo(String),
    #[error("file remove failure: {0}")]
    FileRemove(String),
    #[error("null pointer: {0}")]
    NullPointer(String),
    #[error("invalid index: {0}")]
    InvalidIndex(String),
    #[error("metalayer not found: {0}")]
    MetalayerNotFound(String),
    #[error("maximum buffer size exceeded: {0}")]
    MaxBufsizeExceeded(String),
    #[error("tuner failure: {0}")]
    Tuner(String),
    #[error("frame lock failure: {0}")]
    Lock(String),
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Builds an error variant from a format string: `err!(Data, "bad {x}")`.
#[macro_export]
macro_rules! err {
    ($variant:ident, $($arg:tt)*) => {
        $crate::Error::$variant(format!($($arg)*))
    };
}

/// Returns early with an error variant: `bail!(InvalidParam, "typesize {t} > 255")`.
#[macro_export]
macro_rules! bail {
    ($variant:ident, $($arg:tt)*) => {
        return Err($crate::err!($variant, $($arg)*))
    };
}

/// Every (code, variant constructor) pair: the one table behind both
/// directions of the mapping.
const CODES: &[(i32, fn(String) -> Error)] = &[
    (-1, Error::Failure),
    (-2, Error::Stream),
    (-3, Error::Data),
    (-4, Error::MemoryAlloc),
    (-5, Error::ReadBuffer),
    (-6, Error::WriteBuffer),
    (-7, Error::CodecSupport),
    (-8, Error::CodecParam),
    (-9, Error::CodecDict),
    (-10, Error::VersionSupport),
    (-11, Error::InvalidHeader),
    (-12, Error::InvalidParam),
    (-13, Error::FileRead),
    (-14, Error::FileWrite),
    (-15, Error::FileOpen),
    (-16, Error::NotFound),
    (-17, Error::RunLength),
    (-18, Error::FilterPipeline),
    (-19, Error::ChunkInsert),
    (-20, Error::ChunkAppend),
    (-21, Error::ChunkUpdate),
    (-22, Error::TwoGbLimit),
    (-23, Error::SchunkCopy),
    (-24, Error::FrameType),
    (-25, Error::FileTruncate),
    (-26, Error::ThreadCreate),
    (-27, Error::Postfilter),
    (-28, Error::FrameSpecial),
    (-29, Error::SchunkSpecial),
    (-30, Error::PluginIo),
    (-31, Error::FileRemove),
    (-32, Error::NullPointer),
    (-33, Error::InvalidIndex),
    (-34, Error::MetalayerNotFound),
    (-35, Error::MaxBufsizeExceeded),
    (-36, Error::Tuner),
    (-37, Error::Lock),
];

impl Error {
    /// The code of [`Error::Failure`] (`BLOSC2_ERROR_FAILURE`), for the C
    /// entry points' answer to a contained panic, which has no `Error` to
    /// ask: building one just to read its code cost every call a drop.
    pub(crate) const FAILURE_CODE: i32 = -1;

    /// The reference's `BLOSC2_ERROR_*` value for this error (always negative).
    pub fn code(&self) -> i32 {
        use Error::*;
        match self {
            Failure(_) => Self::FAILURE_CODE,
            Stream(_) => -2,
            Data(_) => -3,
            MemoryAlloc(_) => -4,
            ReadBuffer(_) => -5,
            WriteBuffer(_) => -6,
            CodecSupport(_) => -7,
            CodecParam(_) => -8,
            CodecDict(_) => -9,
            VersionSupport(_) => -10,
            InvalidHeader(_) => -11,
            InvalidParam(_) => -12,
            FileRead(_) => -13,
            FileWrite(_) => -14,
            FileOpen(_) => -15,
            NotFound(_) => -16,
            RunLength(_) => -17,
            FilterPipeline(_) => -18,
            ChunkInsert(_) => -19,
            ChunkAppend(_) => -20,
            ChunkUpdate(_) => -21,
            TwoGbLimit(_) => -22,
            SchunkCopy(_) => -23,
            FrameType(_) => -24,
            FileTruncate(_) => -25,
            ThreadCreate(_) => -26,
            Postfilter(_) => -27,
            FrameSpecial(_) => -28,
            SchunkSpecial(_) => -29,
            PluginIo(_) => -30,
            FileRemove(_) => -31,
            NullPointer(_) => -32,
            InvalidIndex(_) => -33,
            MetalayerNotFound(_) => -34,
            MaxBufsizeExceeded(_) => -35,
            Tuner(_) => -36,
            Lock(_) => -37,
        }
    }

    /// Rebuilds an error from a negative code returned by user code (a
    /// registered codec, filter, prefilter or I/O callback). Unknown or
    /// non-negative codes become [`Error::Failure`].
    pub fn from_code(code: i32, detail: impl Into<String>) -> Error {
        let detail = detail.into();
        match CODES.iter().find(|(c, _)| *c == code) {
            Some((_, make)) => make(detail),
            None => Error::Failure(format!("{detail} (code {code})")),
        }
    }

    /// The detail message without the category prefix.
    pub fn detail(&self) -> &str {
        use Error::*;
        match self {
            Failure(s)
            | Stream(s)
            | Data(s)
            | MemoryAlloc(s)
            | ReadBuffer(s)
            | WriteBuffer(s)
            | CodecSupport(s)
            | CodecParam(s)
            | CodecDict(s)
            | VersionSupport(s)
            | InvalidHeader(s)
            | InvalidParam(s)
            | FileRead(s)
            | FileWrite(s)
            | FileOpen(s)
            | NotFound(s)
            | RunLength(s)
            | FilterPipeline(s)
            | ChunkInsert(s)
            | ChunkAppend(s)
            | ChunkUpdate(s)
            | TwoGbLimit(s)
            | SchunkCopy(s)
            | FrameType(s)
            | FileTruncate(s)
            | ThreadCreate(s)
            | Postfilter(s)
            | FrameSpecial(s)
            | SchunkSpecial(s)
            | PluginIo(s)
            | FileRemove(s)
            | NullPointer(s)
            | InvalidIndex(s)
            | MetalayerNotFound(s)
            | MaxBufsizeExceeded(s)
            | Tuner(s)
            | Lock(s) => s,
        }
    }
}

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

    #[test]
    fn code_and_from_code_are_inverse() {
        for (code, make) in CODES {
            let e = make("x".into());
            assert_eq!(e.code(), *code);
            assert_eq!(Error::from_code(*code, "x"), e);
            assert_ne!(describe(*code), "Unknown error");
        }
        assert_eq!(CODES.len(), 37);
    }

    #[test]
    fn unknown_codes_are_failures() {
        assert_eq!(Error::from_code(-999, "y").code(), -1);
        assert_eq!(Error::from_code(5, "y").code(), -1);
        assert_eq!(describe(-38), "Unknown error");
    }

    #[test]
    fn macros_build_the_named_variant() {
        fn f(x: i32) -> Result<()> {
            bail!(InvalidParam, "x is {x}");
        }
        let e = f(3).unwrap_err();
        assert_eq!(e.code(), -12);
        assert_eq!(e.detail(), "x is 3");
        assert_eq!(err!(Data, "a{}", 1).to_string(), "invalid data: a1");
    }
}
