//! Typed names for what [`CParams`] holds as the reference's numbers, and
//! builder methods that take them.
//!
//! The fields stay the reference's integers because chunks, frames and C
//! callers carry ids this crate does not name (user codecs and filters,
//! plugins); the types here cover the built-in ones, so Rust code never
//! writes `compcode: 5`.

use super::{CParams, Fmt};
use crate::codecs;

/// A built-in codec, by its `BLOSC_*` id.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// BloscLZ (`BLOSC_BLOSCLZ`, the reference's default).
    BloscLz,
    /// LZ4 (`BLOSC_LZ4`).
    Lz4,
    /// LZ4HC (`BLOSC_LZ4HC`).
    Lz4hc,
    /// Zlib (`BLOSC_ZLIB`).
    Zlib,
    /// Zstd (`BLOSC_ZSTD`).
    Zstd,
}

impl Codec {
    /// The codec's id, as stored in `CParams::compcode` and in chunks.
    pub const fn id(self) -> u8 {
        match self {
            Codec::BloscLz => codecs::Codec::BLOSCLZ,
            Codec::Lz4 => codecs::Codec::LZ4,
            Codec::Lz4hc => codecs::Codec::LZ4HC,
            Codec::Zlib => codecs::Codec::ZLIB,
            Codec::Zstd => codecs::Codec::ZSTD,
        }
    }

    /// The built-in codec of id `id`, if it is one.
    pub fn from_id(id: u8) -> Option<Codec> {
        [
            Codec::BloscLz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ]
        .into_iter()
        .find(|c| c.id() == id)
    }
}

/// A built-in filter, by its `BLOSC_*` / `BLOSC_FILTER_*` id.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// Byte shuffle (`BLOSC_SHUFFLE`).
    Shuffle,
    /// Bit shuffle (`BLOSC_BITSHUFFLE`).
    BitShuffle,
    /// XOR against the first block (`BLOSC_DELTA`).
    Delta,
    /// Zeroes low mantissa bits of floats (`BLOSC_TRUNC_PREC`; its
    /// `filters_meta` byte is the number of bits to keep).
    TruncPrec,
    /// Byte-wise delta after a shuffle (`BLOSC_FILTER_BYTEDELTA`).
    ByteDelta,
    /// Truncates integers (`BLOSC_FILTER_INT_TRUNC`).
    IntTrunc,
}

impl Filter {
    /// The filter's id, as stored in `CParams::filters` and in chunks.
    pub const fn id(self) -> u8 {
        match self {
            Filter::Shuffle => Fmt::SHUFFLE,
            Filter::BitShuffle => Fmt::BITSHUFFLE,
            Filter::Delta => Fmt::DELTA,
            Filter::TruncPrec => Fmt::TRUNC_PREC,
            Filter::ByteDelta => Fmt::BYTEDELTA,
            Filter::IntTrunc => Fmt::INT_TRUNC,
        }
    }
}

/// Whether blocks are split into one stream per byte of an item
/// (`BLOSC_*_SPLIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitMode {
    /// Always split (`BLOSC_ALWAYS_SPLIT`).
    Always,
    /// Never split (`BLOSC_NEVER_SPLIT`).
    Never,
    /// Split when the codec and filters make it pay (`BLOSC_AUTO_SPLIT`).
    Auto,
    /// Split as C-Blosc2 before 2.0 would read back (`BLOSC_FORWARD_COMPAT_SPLIT`,
    /// the default).
    ForwardCompat,
}

impl SplitMode {
    /// The mode's value, as stored in `CParams::splitmode`.
    pub const fn code(self) -> i32 {
        match self {
            SplitMode::Always => Fmt::ALWAYS_SPLIT,
            SplitMode::Never => Fmt::NEVER_SPLIT,
            SplitMode::Auto => 3,
            SplitMode::ForwardCompat => Fmt::FORWARD_COMPAT_SPLIT,
        }
    }
}

impl CParams {
    /// These parameters with codec `codec`.
    pub fn with_codec(mut self, codec: Codec) -> CParams {
        self.compcode = codec.id();
        self
    }

    /// These parameters with compression level `clevel` (0 stores a plain
    /// copy; 9 compresses hardest). Levels above 9 are refused when a chunk
    /// is compressed, as in the reference.
    pub fn with_clevel(mut self, clevel: u8) -> CParams {
        self.clevel = clevel;
        self
    }

    /// These parameters for items of `typesize` bytes.
    pub fn with_typesize(mut self, typesize: i32) -> CParams {
        self.typesize = typesize;
        self
    }

    /// These parameters with `filters` applied in order, placed in the last
    /// slots as the reference's defaults place its shuffle; at most six
    /// (more are ignored, as the pipeline has six slots).
    pub fn with_filters(mut self, filters: &[Filter]) -> CParams {
        let n = filters.len().min(self.filters.len());
        let first = self.filters.len() - n;
        self.filters = [Fmt::NOFILTER; 6];
        for (slot, f) in self.filters[first..].iter_mut().zip(filters) {
            *slot = f.id();
        }
        self
    }

    /// These parameters with `nthreads` threads per chunk.
    pub fn with_nthreads(mut self, nthreads: i16) -> CParams {
        self.nthreads = nthreads;
        self
    }

    /// These parameters with blocks of `blocksize` bytes (0: chosen from
    /// the codec, level and typesize, as in the reference).
    pub fn with_blocksize(mut self, blocksize: i32) -> CParams {
        self.blocksize = blocksize;
        self
    }

    /// These parameters with split mode `mode`.
    pub fn with_split(mut self, mode: SplitMode) -> CParams {
        self.splitmode = mode.code();
        self
    }

    /// The codec, when it is a built-in one.
    pub fn codec(&self) -> Option<Codec> {
        Codec::from_id(self.compcode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_ids_are_the_references() {
        // blosc2.h: BLOSC_BLOSCLZ 0, LZ4 1, LZ4HC 2, ZLIB 4, ZSTD 5;
        // SHUFFLE 1, BITSHUFFLE 2, DELTA 3, TRUNC_PREC 4, BYTEDELTA 35,
        // INT_TRUNC 36; ALWAYS 1, NEVER 2, AUTO 3, FORWARD_COMPAT 4.
        let ids: Vec<u8> = [
            Codec::BloscLz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ]
        .map(Codec::id)
        .to_vec();
        assert_eq!(ids, [0, 1, 2, 4, 5]);
        assert_eq!(Codec::from_id(5), Some(Codec::Zstd));
        assert_eq!(Codec::from_id(3), None);
        let filters = [
            Filter::Shuffle,
            Filter::BitShuffle,
            Filter::Delta,
            Filter::TruncPrec,
            Filter::ByteDelta,
            Filter::IntTrunc,
        ]
        .map(Filter::id);
        assert_eq!(filters, [1, 2, 3, 4, 35, 36]);
        let modes = [
            SplitMode::Always,
            SplitMode::Never,
            SplitMode::Auto,
            SplitMode::ForwardCompat,
        ]
        .map(SplitMode::code);
        assert_eq!(modes, [1, 2, 3, 4]);
    }

    #[test]
    fn builders_set_the_fields() {
        let p = CParams::default()
            .with_codec(Codec::Lz4)
            .with_clevel(9)
            .with_typesize(4)
            .with_filters(&[Filter::Delta, Filter::BitShuffle])
            .with_nthreads(2)
            .with_blocksize(4096)
            .with_split(SplitMode::Never);
        assert_eq!(
            (
                p.compcode,
                p.clevel,
                p.typesize,
                p.nthreads,
                p.blocksize,
                p.splitmode
            ),
            (1, 9, 4, 2, 4096, 2)
        );
        assert_eq!(p.filters, [0, 0, 0, 0, 3, 2]);
        assert_eq!(p.codec(), Some(Codec::Lz4));
        // The defaults are the reference's: BloscLZ, shuffle in the last slot.
        let d = CParams::default();
        assert_eq!(d.codec(), Some(Codec::BloscLz));
        assert_eq!(
            d.filters,
            CParams::default().with_filters(&[Filter::Shuffle]).filters
        );
        assert_eq!(CParams::default().with_filters(&[]).filters, [0; 6]);
    }
}
