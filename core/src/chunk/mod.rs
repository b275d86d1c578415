//! The Blosc2 chunk format and the compression pipeline.
//!
//! A chunk is a header (16 or 32 bytes), then either nothing (special
//! chunks), a plain copy of the data (memcpyed chunks), or block starts, an
//! optional dictionary and the compressed streams of each block. This module
//! writes chunks byte-compatible with C-Blosc2 and reads every version the
//! reference has produced. See `README_CHUNK_FORMAT.rst` of the reference.
//!
//! - `header`: parsing and validating headers;
//! - `blocksize`: the automatic block size and the split rule;
//! - `pipeline`: the filters applied to a block;
//! - `stream`: one codec stream of a block;
//! - `compress` / `decompress`: whole chunks, with threads from `pool`;
//! - `instr`: the measurement records of instrumented chunks;
//! - `special`: chunks of zeros, NaNs, a repeated value or uninitialised data.

mod blocksize;
mod decode;
mod encode;
pub(crate) mod header;
mod instr;
mod needs;
mod page_buf;
mod params;
mod pipeline;
mod pool;
#[allow(unsafe_code)] // a prefetch intrinsic
mod prefetch;
mod special;
mod stream;

use std::sync::Arc;

pub use blocksize::{compute_blocksize, split_block};
pub use decode::{BlockSource, Decompressor};
pub use encode::Compressor;
pub use header::ChunkHeader;
pub use needs::BlockNeeds;
pub use params::{Codec, Filter, SplitMode};
pub(crate) use pool::{run_each, threads_for};
pub use pool::{set_external_executor, Executor};
pub use special::{make_special, make_special_with};

/// Format constants of the reference (`blosc2.h`), as associated constants so
/// they stay out of the generated C header.
pub struct Fmt;

impl Fmt {
    pub(crate) const MIN_HEADER: usize = 16;
    pub(crate) const EXT_HEADER: usize = 32;
    /// `BLOSC2_MAX_OVERHEAD`: `dst.len() >= src.len() + MAX_OVERHEAD` always suffices.
    pub(crate) const MAX_OVERHEAD: usize = 32;
    /// `BLOSC2_MAX_BUFFERSIZE`: the largest uncompressed chunk in bytes, so
    /// that the compressed chunk (at most `MAX_OVERHEAD` more) fits an `i32`.
    pub const MAX_BUFFERSIZE: usize = i32::MAX as usize - 32;
    pub(crate) const MAX_TYPESIZE: usize = 255;
    pub(crate) const MIN_BUFFERSIZE: usize = 32;
    pub(crate) const MAX_BLOCKSIZE: i32 = 536_866_816;
    pub(crate) const MAX_DICTSIZE: usize = 32 * 1024;
    pub(crate) const MIN_USEFUL_DICT: usize = 256;

    pub(crate) const VERSION_ALPHA: u8 = 3;
    /// Written for regular chunks.
    pub(crate) const VERSION_STABLE: u8 = 5;
    /// Written for VL-block chunks; also the newest version understood.
    pub(crate) const VERSION_VL_BLOCKS: u8 = 6;
    pub(crate) const VERSION_CURRENT: u8 = 6;

    // flags
    pub(crate) const DOSHUFFLE: u8 = 0x1;
    pub(crate) const MEMCPYED: u8 = 0x2;
    pub(crate) const DOBITSHUFFLE: u8 = 0x4;
    pub(crate) const DODELTA: u8 = 0x8;
    pub(crate) const DONT_SPLIT: u8 = 0x10;
    // blosc2_flags
    pub(crate) const USEDICT: u8 = 0x1;
    pub(crate) const LAZY: u8 = 0x8;
    pub(crate) const INSTR_CODEC: u8 = 0x80;
    // blosc2_flags2
    pub(crate) const VL_BLOCKS: u8 = 0x1;

    // filter ids
    pub(crate) const NOFILTER: u8 = 0;
    pub(crate) const SHUFFLE: u8 = 1;
    pub(crate) const BITSHUFFLE: u8 = 2;
    pub(crate) const DELTA: u8 = 3;
    pub(crate) const TRUNC_PREC: u8 = 4;
    /// The reference's global plugin filters, all implemented here. NDCELL
    /// and NDMEAN need the b2nd block shape (`CParams::block_shape`).
    pub(crate) const NDCELL: u8 = 32;
    pub(crate) const NDMEAN: u8 = 33;
    pub(crate) const BYTEDELTA_BUGGY: u8 = 34;
    pub(crate) const BYTEDELTA: u8 = 35;
    pub(crate) const INT_TRUNC: u8 = 36;
    pub(crate) const FILTERS_GLOBAL_START: u8 = 32;
    pub(crate) const FILTERS_GLOBAL_STOP: u8 = 159;

    // split modes
    pub(crate) const ALWAYS_SPLIT: i32 = 1;
    pub(crate) const NEVER_SPLIT: i32 = 2;
    pub(crate) const FORWARD_COMPAT_SPLIT: i32 = 4;
}

/// Arguments of a prefilter call: produce `output` for one block.
pub struct PrefilterArgs<'a> {
    /// The block of the source buffer.
    pub input: &'a [u8],
    /// Where to write the block that gets compressed (zeroed beforehand).
    pub output: &'a mut [u8],
    /// Byte offset of the block in the chunk.
    pub offset: usize,
    /// Index of the block in the chunk (0-based).
    pub nblock: usize,
    /// Chunk number in a super-chunk, -1 when unknown.
    pub nchunk: i64,
    /// Worker id.
    pub tid: usize,
    /// Item size of `output` (see [`PrefilterOutput::typesize`]).
    pub typesize: usize,
}

/// Arguments of a postfilter call: turn the decoded `input` into `output`.
pub struct PostfilterArgs<'a> {
    /// The block as the backward filter pipeline left it.
    pub input: &'a [u8],
    /// Where to write the block that the caller gets back.
    pub output: &'a mut [u8],
    /// Byte offset of the block in the (uncompressed) chunk.
    pub offset: usize,
    /// Index of the block in the chunk (0-based).
    pub nblock: usize,
    /// Chunk number in a super-chunk, -1 when unknown.
    pub nchunk: i64,
    /// Worker id.
    pub tid: usize,
    /// The chunk's item size in bytes.
    pub typesize: usize,
}

/// How a prefilter's output is used (the reference's
/// `blosc2_prefilter_params.output_typesize` and `.output_is_disposable`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefilterOutput {
    /// Item size of what the prefilter writes; 0 means the chunk's typesize.
    /// A smaller one makes the prefilter fill only the front of each block
    /// (as many items of this size as the block has items), the rest stays
    /// zero; a larger one is refused (its output would not fit the block).
    pub typesize: usize,
    /// The chunk will be thrown away: the prefilter runs for its side effects
    /// (its errors are ignored) and every stream is stored as a run of zeros,
    /// so the chunk comes out as the reference's zeros chunk.
    pub disposable: bool,
}

/// A prefilter: runs on every block before the filter pipeline.
pub type Prefilter = Arc<dyn Fn(&mut PrefilterArgs<'_>) -> crate::Result<()> + Send + Sync>;
/// A postfilter: runs on every block after the backward filter pipeline.
pub type Postfilter = Arc<dyn Fn(&mut PostfilterArgs<'_>) -> crate::Result<()> + Send + Sync>;

/// An opaque value the caller attaches to its parameters; user codecs and
/// filters get it back in [`crate::codecs::registry::CallInfo::user`].
pub type UserData = Arc<dyn std::any::Any + Send + Sync>;

/// Compression parameters (the reference's `blosc2_cparams`).
#[derive(Clone)]
pub struct CParams {
    /// Codec id: a built-in codec's ([`Codec::id`]), a reference plugin's
    /// (32..=159) or a registered user codec's (160..=255).
    pub compcode: u8,
    /// The codec's parameter byte, stored in the chunk header; its meaning
    /// is up to the codec (e.g. the mode parameter of the zfp codecs).
    pub compcode_meta: u8,
    /// 0..=9; 0 stores a plain copy.
    pub clevel: u8,
    /// Train and embed a dictionary (Zstd, LZ4, LZ4HC).
    pub use_dict: bool,
    /// Size of one item; above 255 the data is treated as a byte stream.
    pub typesize: i32,
    /// Most threads used to compress one chunk (fewer for small chunks);
    /// values below 1 count as 1.
    pub nthreads: i16,
    /// 0 for automatic.
    pub blocksize: i32,
    /// One of the `Fmt::*_SPLIT` values.
    pub splitmode: i32,
    /// The filter pipeline: filter ids applied in slot order, 0 for an
    /// empty slot ([`Filter::id`] gives the built-in ones).
    pub filters: [u8; 6],
    /// One parameter byte per filter slot (e.g. the bits kept by
    /// [`Filter::TruncPrec`]).
    pub filters_meta: [u8; 6],
    /// Store instrumentation records instead of data (development aid).
    pub instr_codec: bool,
    /// Tuner id; only the built-in tuner (0, stune) exists here.
    pub tuner_id: i32,
    /// Run on every block before the filters (see [`Prefilter`]).
    pub prefilter: Option<Prefilter>,
    /// What the prefilter's output is (used only with a prefilter).
    pub prefilter_output: PrefilterOutput,
    /// The b2nd block shape of the array the chunks belong to, for the
    /// NDCELL and NDMEAN filters (the reference reads it from the
    /// super-chunk's "b2nd" metalayer; the b2nd layer sets it here).
    pub block_shape: Option<Arc<[i64]>>,
    /// Chunk number reported to the prefilter (-1 when not in a super-chunk).
    pub nchunk: i64,
    /// Handed to user codecs and filters (see [`UserData`]).
    pub user_data: Option<UserData>,
}

impl Default for CParams {
    /// The values of the reference's `BLOSC2_CPARAMS_DEFAULTS`.
    fn default() -> Self {
        CParams {
            compcode: crate::codecs::Codec::BLOSCLZ,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: Fmt::FORWARD_COMPAT_SPLIT,
            filters: [0, 0, 0, 0, 0, Fmt::SHUFFLE],
            filters_meta: [0; 6],
            instr_codec: false,
            tuner_id: 0,
            prefilter: None,
            prefilter_output: PrefilterOutput::default(),
            block_shape: None,
            nchunk: -1,
            user_data: None,
        }
    }
}

impl std::fmt::Debug for CParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CParams")
            .field("compcode", &self.compcode)
            .field("compcode_meta", &self.compcode_meta)
            .field("clevel", &self.clevel)
            .field("use_dict", &self.use_dict)
            .field("typesize", &self.typesize)
            .field("nthreads", &self.nthreads)
            .field("blocksize", &self.blocksize)
            .field("splitmode", &self.splitmode)
            .field("filters", &self.filters)
            .field("filters_meta", &self.filters_meta)
            .field("instr_codec", &self.instr_codec)
            .field("tuner_id", &self.tuner_id)
            .field("prefilter", &self.prefilter.is_some())
            .field("prefilter_output", &self.prefilter_output)
            .field("block_shape", &self.block_shape)
            .finish()
    }
}

/// Decompression parameters (the reference's `blosc2_dparams`).
#[derive(Clone)]
pub struct DParams {
    /// Most threads used to decompress one chunk (fewer for small chunks);
    /// values below 1 count as 1.
    pub nthreads: i16,
    /// Run on every block after the backward filters (see [`Postfilter`]).
    pub postfilter: Option<Postfilter>,
    /// Chunk number reported to the postfilter (-1 when not in a super-chunk).
    pub nchunk: i64,
    /// Handed to user codecs and filters when decoding (see [`UserData`]).
    pub user_data: Option<UserData>,
    /// As [`CParams::block_shape`].
    pub block_shape: Option<Arc<[i64]>>,
}

impl Default for DParams {
    fn default() -> Self {
        DParams {
            nthreads: 1,
            postfilter: None,
            nchunk: -1,
            user_data: None,
            block_shape: None,
        }
    }
}

impl std::fmt::Debug for DParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DParams")
            .field("nthreads", &self.nthreads)
            .field("postfilter", &self.postfilter.is_some())
            .field("block_shape", &self.block_shape)
            .finish()
    }
}

/// The kinds of special chunks (no streams; the value is implied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// All bytes zero.
    Zero,
    /// Every item a NaN (`f32` or `f64`, so typesize 4 or 8).
    Nan,
    /// Every item the same value, stored after the header.
    Value,
    /// Uninitialised: decoding writes nothing into the destination.
    Uninit,
}

impl Special {
    pub(crate) const ZERO_CODE: u8 = 1;
    pub(crate) const NAN_CODE: u8 = 2;
    pub(crate) const VALUE_CODE: u8 = 3;
    pub(crate) const UNINIT_CODE: u8 = 4;

    pub(crate) fn from_code(code: u8) -> Option<Special> {
        match code {
            Self::ZERO_CODE => Some(Special::Zero),
            Self::NAN_CODE => Some(Special::Nan),
            Self::VALUE_CODE => Some(Special::Value),
            Self::UNINIT_CODE => Some(Special::Uninit),
            _ => None,
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Special::Zero => Self::ZERO_CODE,
            Special::Nan => Self::NAN_CODE,
            Special::Value => Self::VALUE_CODE,
            Special::Uninit => Self::UNINIT_CODE,
        }
    }
}

/// One-shot compression with a fresh [`Compressor`].
pub fn compress(cparams: &CParams, src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
    Compressor::new(cparams.clone())?.compress(src, dst)
}

/// One-shot decompression with default parameters.
pub fn decompress(chunk: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
    Decompressor::new(DParams::default()).decompress(chunk, dst)
}

/// One-shot decompression into a new buffer, allocated only once the chunk
/// is validated (see [`Decompressor::decompress_to_vec`]).
pub fn decompress_to_vec(chunk: &[u8]) -> crate::Result<Vec<u8>> {
    Decompressor::new(DParams::default()).decompress_to_vec(chunk)
}

/// `(nbytes, cbytes, blocksize)` of a chunk, from its header (inline: a
/// `blosc2_cbuffer_sizes` call is little more than this).
#[inline(always)]
pub fn cbuffer_sizes(chunk: &[u8]) -> crate::Result<(usize, usize, usize)> {
    let h = ChunkHeader::parse_unchecked_len(chunk)?;
    Ok((h.nbytes(), h.cbytes(), h.blocksize()))
}
