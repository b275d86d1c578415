//! Codecs: the byte compressors a chunk's blocks go through.
//!
//! LZ4/LZ4HC, Zlib and Zstd are the reference C libraries reached through
//! their `-sys` crates (identical streams); BloscLZ and the reference's NDLZ
//! and zfp plugins are implemented in Rust; user codecs come from
//! [`registry`], and the reference's dynamically loaded plugins are found
//! and opened by [`plugin`].

pub mod blosclz;
#[allow(unsafe_code)] // bindings to the C library (lz4-sys)
pub(crate) mod lz4;
pub mod names;
pub(crate) mod ndlz;
#[allow(unsafe_code)] // dlopen/dlsym of plugin libraries, and reading their `info`
pub mod plugin;
pub mod registry;
pub(crate) mod zfp;
#[allow(unsafe_code)] // bindings to the C library (libz-sys) for levels it encodes
pub(crate) mod zlib;
#[allow(unsafe_code)] // bindings to the C library (zstd-sys)
pub(crate) mod zstd;

/// The version of the library behind a chunk header's format code (0
/// BloscLZ, 1 LZ4 and LZ4HC, 3 Zlib, 4 Zstd), as `blosc2_get_complib_info`
/// reports it; `None` for other codes.
pub fn library_version(format_code: u8) -> Option<String> {
    Some(match format_code {
        // The BloscLZ format version this crate's encoder follows.
        0 => "2.5.3".into(),
        1 => lz4::version(),
        3 => zlib::version(),
        4 => zstd::version(),
        _ => return None,
    })
}

/// Codec ids (`compcode`) and header format codes of the reference.
pub(crate) struct Codec;

impl Codec {
    pub(crate) const BLOSCLZ: u8 = 0;
    pub(crate) const LZ4: u8 = 1;
    pub(crate) const LZ4HC: u8 = 2;
    pub(crate) const ZLIB: u8 = 4;
    pub(crate) const ZSTD: u8 = 5;
    /// Ids 32..=159 are the reference's globally registered plugins.
    pub(crate) const GLOBAL_START: u8 = 32;
    /// The reference's 2-D plugin codec ([`ndlz`]).
    pub(crate) const NDLZ: u8 = 32;
    /// The reference's zfp plugin codecs ([`zfp`]): fixed accuracy,
    /// precision and rate.
    pub(crate) const ZFP_ACC: u8 = zfp::ACCURACY;
    pub(crate) const ZFP_PREC: u8 = zfp::PRECISION;
    pub(crate) const ZFP_RATE: u8 = zfp::RATE;

    /// Header format codes (bits 5..7 of `flags`).
    pub(crate) const FORMAT_BLOSCLZ: u8 = 0;
    pub(crate) const FORMAT_LZ4: u8 = 1;
    pub(crate) const FORMAT_ZLIB: u8 = 3;
    pub(crate) const FORMAT_ZSTD: u8 = 4;
    pub(crate) const FORMAT_UDCODEC: u8 = 6;

    /// The 3-bit format code a codec is recorded under in the header.
    pub(crate) fn format_of(compcode: u8) -> u8 {
        match compcode {
            Self::BLOSCLZ => Self::FORMAT_BLOSCLZ,
            Self::LZ4 | Self::LZ4HC => Self::FORMAT_LZ4,
            Self::ZLIB => Self::FORMAT_ZLIB,
            Self::ZSTD => Self::FORMAT_ZSTD,
            _ => Self::FORMAT_UDCODEC,
        }
    }

    /// Whether a codec id names a codec implemented in this crate.
    pub(crate) fn is_builtin(compcode: u8) -> bool {
        matches!(
            compcode,
            Self::BLOSCLZ
                | Self::LZ4
                | Self::LZ4HC
                | Self::ZLIB
                | Self::ZSTD
                | Self::NDLZ
                | Self::ZFP_ACC
                | Self::ZFP_PREC
                | Self::ZFP_RATE
        )
    }

    /// Whether a codec id names a codec this crate can run now: a built-in
    /// one, or a registered one (a user codec, or a reference plugin the C
    /// layer registered, which may still fail to load).
    pub(crate) fn is_available(compcode: u8) -> bool {
        Self::is_builtin(compcode)
            || (compcode >= Self::GLOBAL_START && registry::codec(compcode).is_some())
    }
}
