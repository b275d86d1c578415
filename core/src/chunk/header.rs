//! The chunk header: the 16-byte Blosc1 header and its 32-byte Blosc2
//! extension, parsed and validated against the buffer that holds it.

use super::{Fmt, Special};
use crate::codecs::Codec;

/// A parsed chunk header whose sizes have been checked for consistency
/// (positive blocksize, non-zero typesize, `cbytes` within the buffer unless
/// the chunk is lazy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    pub(crate) version: u8,
    pub(crate) versionlz: u8,
    pub(crate) flags: u8,
    pub(crate) typesize: u8,
    pub(crate) nbytes: i32,
    /// The blocksize field after the reference's clamp to `nbytes`
    /// (for VL-block chunks: the number of blocks).
    pub(crate) blocksize: i32,
    pub(crate) cbytes: i32,
    pub(crate) filters: [u8; 6],
    pub(crate) udcompcode: u8,
    pub(crate) compcode_meta: u8,
    pub(crate) filters_meta: [u8; 6],
    pub(crate) blosc2_flags2: u8,
    pub(crate) blosc2_flags: u8,
    pub(crate) extended: bool,
}

fn rd_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// How a header check refuses: silently ([`Quiet`], the first run) or
/// with the error saying why ([`Told`]).
trait Refusal {
    type E;
    fn refuse(why: impl FnOnce() -> crate::Error) -> Self::E;
}

/// Refuses with `()`, building no message.
struct Quiet;

impl Refusal for Quiet {
    type E = ();
    #[inline(always)]
    fn refuse(_: impl FnOnce() -> crate::Error) {}
}

/// Refuses with the error.
struct Told;

impl Refusal for Told {
    type E = crate::Error;
    #[inline(always)]
    fn refuse(why: impl FnOnce() -> crate::Error) -> crate::Error {
        why()
    }
}

/// The error of a header whose `cbytes` passes the `len` bytes given.
#[cold]
#[inline(never)]
fn cbytes_past(cbytes: i32, len: usize) -> crate::Error {
    crate::err!(
        InvalidHeader,
        "cbytes {cbytes} larger than the {len} bytes available"
    )
}

impl ChunkHeader {
    /// Parses and validates the header at the start of `chunk`.
    #[inline(always)]
    pub fn parse(chunk: &[u8]) -> crate::Result<Self> {
        let h = Self::parse_unchecked_len(chunk)?;
        if !h.is_lazy() && h.cbytes as usize > chunk.len() {
            return Err(cbytes_past(h.cbytes, chunk.len()));
        }
        Ok(h)
    }

    /// The header checks of the reference (`read_chunk_header`) without the
    /// check that `cbytes` bytes are present.
    ///
    /// The checks run first without building any message (`Quiet`), and
    /// only a refused header runs them again, out of line, to say why
    /// (`Told`): the messages' arguments kept values in memory and
    /// registers busy on the path every call takes, a good part of a
    /// `blosc2_cbuffer_sizes` call (`scripts/instructions.sh
    /// small/cbuffer_sizes/lz4/256B`).
    #[inline(always)]
    pub fn parse_unchecked_len(chunk: &[u8]) -> crate::Result<Self> {
        match Self::parse_as::<Quiet>(chunk) {
            Ok(h) => Ok(h),
            Err(()) => Err(Self::refusal(chunk)),
        }
    }

    /// Why [`ChunkHeader::parse_unchecked_len`] refuses `chunk`.
    #[cold]
    #[inline(never)]
    fn refusal(chunk: &[u8]) -> crate::Error {
        match Self::parse_as::<Told>(chunk) {
            Err(e) => e,
            // Both runs make the same checks.
            Ok(_) => crate::err!(InvalidHeader, "chunk header refused"),
        }
    }

    /// The checks of [`ChunkHeader::parse_unchecked_len`], each refusal
    /// made by `R`.
    ///
    /// Every field is read into a local and the header built once, where
    /// the caller keeps it (inlined): a header stored field by field and then
    /// moved makes the move's wide loads wait for the narrow stores before
    /// them (a failed store-to-load forward), which was the largest single
    /// cost of a small `blosc2_decompress_ctx` (`perf annotate`). For the
    /// same reason the decode paths take the parsed header by reference.
    #[inline(always)]
    fn parse_as<R: Refusal>(chunk: &[u8]) -> Result<Self, R::E> {
        let Some(min) = chunk.first_chunk::<{ Fmt::MIN_HEADER }>() else {
            return Err(R::refuse(|| {
                crate::err!(
                    ReadBuffer,
                    "{} bytes cannot hold a chunk header",
                    chunk.len()
                )
            }));
        };
        let (version, versionlz, flags, typesize) = (min[0], min[1], min[2], min[3]);
        let nbytes = rd_i32(min, 4);
        let mut blocksize = rd_i32(min, 8);
        let cbytes = rd_i32(min, 12);
        if cbytes < Fmt::MIN_HEADER as i32 {
            return Err(R::refuse(|| {
                crate::err!(InvalidHeader, "cbytes {cbytes} too small for a header")
            }));
        }
        if nbytes < 0 {
            return Err(R::refuse(|| {
                crate::err!(InvalidHeader, "negative nbytes {nbytes}")
            }));
        }
        if blocksize <= 0 {
            return Err(R::refuse(|| {
                crate::err!(InvalidHeader, "blocksize {blocksize} is not positive")
            }));
        }
        if blocksize > Fmt::MAX_BLOCKSIZE {
            return Err(R::refuse(|| {
                crate::err!(InvalidHeader, "blocksize {blocksize} over the maximum")
            }));
        }
        if typesize == 0 {
            return Err(R::refuse(|| crate::err!(InvalidHeader, "typesize is zero")));
        }
        let extended = flags & Fmt::DOSHUFFLE != 0 && flags & Fmt::DOBITSHUFFLE != 0;
        let mut filters = filters_from_flags(flags);
        let mut filters_meta = [0u8; 6];
        let (mut udcompcode, mut compcode_meta, mut blosc2_flags2, mut blosc2_flags) = (0, 0, 0, 0);
        if extended {
            if cbytes < Fmt::EXT_HEADER as i32 {
                return Err(R::refuse(|| {
                    crate::err!(
                        InvalidHeader,
                        "cbytes {cbytes} too small for an extended header"
                    )
                }));
            }
            let Some(ext) = chunk.first_chunk::<{ Fmt::EXT_HEADER }>() else {
                return Err(R::refuse(|| {
                    crate::err!(
                        ReadBuffer,
                        "{} bytes cannot hold an extended header",
                        chunk.len()
                    )
                }));
            };
            filters = [ext[16], ext[17], ext[18], ext[19], ext[20], ext[21]];
            udcompcode = ext[22];
            compcode_meta = ext[23];
            filters_meta = [ext[24], ext[25], ext[26], ext[27], ext[28], ext[29]];
            blosc2_flags2 = ext[30];
            blosc2_flags = ext[31];
            let special = (blosc2_flags >> 4) & 7;
            if blosc2_flags2 & Fmt::VL_BLOCKS != 0 && special != 0 {
                return Err(R::refuse(|| {
                    crate::err!(InvalidHeader, "VL-block chunks cannot be special")
                }));
            }
            if special == Special::VALUE_CODE {
                // The value's width is what follows the header.
                let width = cbytes - Fmt::EXT_HEADER as i32;
                if width <= 0 || width > nbytes || nbytes % width != 0 {
                    return Err(R::refuse(|| {
                        crate::err!(
                            InvalidHeader,
                            "repeated-value width {width} does not fit nbytes {nbytes}"
                        )
                    }));
                }
            } else if special != 0
                && special != Special::ZERO_CODE
                && nbytes % i32::from(typesize) != 0
            {
                return Err(R::refuse(|| {
                    crate::err!(
                        InvalidHeader,
                        "nbytes {nbytes} not a multiple of typesize {typesize}"
                    )
                }));
            }
            if version == Fmt::VERSION_ALPHA {
                // The alpha format left the sixth slot uninitialised.
                filters[5] = 0;
                filters_meta[5] = 0;
            }
        }
        if version > Fmt::VERSION_CURRENT && blosc2_flags2 & !Fmt::VL_BLOCKS != 0 {
            return Err(R::refuse(|| {
                crate::err!(
                    VersionSupport,
                    "chunk format version {version} with unknown features"
                )
            }));
        }
        let vl_blocks = extended && blosc2_flags2 & Fmt::VL_BLOCKS != 0;
        if vl_blocks && flags & Fmt::MEMCPYED != 0 {
            return Err(R::refuse(|| {
                crate::err!(InvalidHeader, "VL-block chunks cannot be memcpyed")
            }));
        }
        if !vl_blocks && nbytes > 0 && blocksize > nbytes {
            blocksize = nbytes;
        }
        Ok(ChunkHeader {
            version,
            versionlz,
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            filters,
            udcompcode,
            compcode_meta,
            filters_meta,
            blosc2_flags2,
            blosc2_flags,
            extended,
        })
    }

    /// Uncompressed size.
    pub fn nbytes(&self) -> usize {
        self.nbytes as usize
    }
    /// Compressed size including the header.
    pub fn cbytes(&self) -> usize {
        self.cbytes as usize
    }
    /// Block size (for VL-block chunks the header field holds the number of blocks).
    pub fn blocksize(&self) -> usize {
        self.blocksize as usize
    }
    /// Size of one item as stored (1..=255).
    pub fn typesize(&self) -> usize {
        usize::from(self.typesize)
    }
    /// The chunk format version (header byte 0; this crate writes 5, and 6
    /// for VL-block chunks).
    pub fn version(&self) -> u8 {
        self.version
    }
    /// The codec format version (header byte 1, the reference's `versionlz`).
    pub fn versionlz(&self) -> u8 {
        self.versionlz
    }
    /// The flags byte (header byte 2): shuffle, memcpyed, bit-shuffle,
    /// delta and split bits, the codec format in the top three bits.
    pub fn flags(&self) -> u8 {
        self.flags
    }
    /// The codec id: the format bits, or the user-codec byte when they say so.
    pub fn compcode(&self) -> u8 {
        let format = self.flags >> 5;
        if format == Codec::FORMAT_UDCODEC {
            self.udcompcode
        } else {
            format
        }
    }
    /// The codec format bits (0 blosclz, 1 lz4/lz4hc, 3 zlib, 4 zstd, 6 user).
    pub fn compformat(&self) -> u8 {
        self.flags >> 5
    }
    /// The codec's parameter byte (0 without the extended header).
    pub fn compcode_meta(&self) -> u8 {
        self.compcode_meta
    }
    /// Whether the 32-byte extended header is present.
    pub fn is_extended(&self) -> bool {
        self.extended
    }
    /// Length of the header (16 or 32).
    pub fn header_len(&self) -> usize {
        if self.extended {
            Fmt::EXT_HEADER
        } else {
            Fmt::MIN_HEADER
        }
    }
    pub(crate) fn special_code(&self) -> u8 {
        if self.extended {
            (self.blosc2_flags >> 4) & 7
        } else {
            0
        }
    }
    /// The special kind of the chunk, if it is one of the known ones.
    pub fn special(&self) -> Option<Special> {
        Special::from_code(self.special_code())
    }
    /// Whether the data is stored as a plain copy after the header
    /// (`BLOSC_MEMCPYED`).
    pub fn is_memcpyed(&self) -> bool {
        self.flags & Fmt::MEMCPYED != 0
    }
    /// The filter pipeline's ids; for a 16-byte header, the pipeline its
    /// shuffle, bit-shuffle and delta flags mean.
    pub fn filters(&self) -> [u8; 6] {
        self.filters
    }
    /// The filters' parameter bytes (zeros without the extended header).
    pub fn filters_meta(&self) -> [u8; 6] {
        self.filters_meta
    }
    /// Whether blocks are stored as one stream each (bit 4 of flags).
    pub fn dont_split(&self) -> bool {
        self.flags & 0x10 != 0
    }
    /// Whether the chunk carries a dictionary.
    pub fn uses_dict(&self) -> bool {
        self.extended && self.blosc2_flags & Fmt::USEDICT != 0
    }
    /// Whether streams carry instrumentation records instead of data.
    pub fn is_instrumented(&self) -> bool {
        self.extended && self.blosc2_flags & Fmt::INSTR_CODEC != 0
    }
    /// Whether this is a lazy chunk: header, block starts and a trailer
    /// locating the blocks, which stay in the on-disk frame.
    pub fn is_lazy(&self) -> bool {
        self.extended && self.blosc2_flags & Fmt::LAZY != 0
    }
    /// Whether the chunk holds variable-length blocks (then
    /// [`blocksize`](Self::blocksize) is the number of blocks).
    pub fn vl_blocks(&self) -> bool {
        self.extended && self.blosc2_flags2 & Fmt::VL_BLOCKS != 0
    }
    /// The Blosc2 flags byte (header byte 31: dictionary, lazy, special kind
    /// in bits 4..=6, instrumentation); 0 without the extended header.
    pub fn blosc2_flags(&self) -> u8 {
        self.blosc2_flags
    }
    /// The second Blosc2 flags byte (header byte 30; bit 0 marks VL blocks);
    /// 0 without the extended header.
    pub fn blosc2_flags2(&self) -> u8 {
        self.blosc2_flags2
    }
    /// Number of blocks.
    pub fn nblocks(&self) -> usize {
        if self.vl_blocks() {
            return self.blocksize as usize;
        }
        (self.nbytes as usize).div_ceil(self.blocksize as usize)
    }
    /// Bytes in the last, shorter block (0 when all blocks are full).
    pub fn leftover(&self) -> usize {
        if self.vl_blocks() {
            return 0;
        }
        self.nbytes as usize % self.blocksize as usize
    }
}

/// The Blosc1 flag bits expressed as a filter pipeline.
pub(crate) fn filters_from_flags(flags: u8) -> [u8; 6] {
    let mut f = [0u8; 6];
    if flags & Fmt::DOSHUFFLE != 0 {
        f[5] = Fmt::SHUFFLE;
    }
    if flags & Fmt::DOBITSHUFFLE != 0 {
        f[5] = Fmt::BITSHUFFLE;
    }
    if flags & Fmt::DODELTA != 0 {
        f[4] = Fmt::DELTA;
    }
    f
}

/// Everything needed to write a header.
pub(crate) struct HeaderOut {
    pub version: u8,
    pub versionlz: u8,
    pub flags: u8,
    pub typesize: u8,
    pub nbytes: i32,
    pub blocksize: i32,
    pub cbytes: i32,
    pub filters: [u8; 6],
    pub udcompcode: u8,
    pub compcode_meta: u8,
    pub filters_meta: [u8; 6],
    pub blosc2_flags2: u8,
    pub blosc2_flags: u8,
}

impl HeaderOut {
    /// The 32 bytes of an extended header.
    pub(crate) fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0] = self.version;
        b[1] = self.versionlz;
        b[2] = self.flags;
        b[3] = self.typesize;
        b[4..8].copy_from_slice(&self.nbytes.to_le_bytes());
        b[8..12].copy_from_slice(&self.blocksize.to_le_bytes());
        b[12..16].copy_from_slice(&self.cbytes.to_le_bytes());
        b[16..22].copy_from_slice(&self.filters);
        b[22] = self.udcompcode;
        b[23] = self.compcode_meta;
        b[24..30].copy_from_slice(&self.filters_meta);
        b[30] = self.blosc2_flags2;
        b[31] = self.blosc2_flags;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(nbytes: i32, blocksize: i32, cbytes: i32, flags: u8, typesize: u8) -> Vec<u8> {
        let mut v = vec![2u8, 1, flags, typesize];
        v.extend_from_slice(&nbytes.to_le_bytes());
        v.extend_from_slice(&blocksize.to_le_bytes());
        v.extend_from_slice(&cbytes.to_le_bytes());
        v.resize(cbytes.max(16) as usize, 0);
        v
    }

    #[test]
    fn blosc1_header_and_clamp() {
        let h = ChunkHeader::parse(&hdr(100, 4096, 16 + 100, 0x03, 4)).unwrap();
        assert_eq!(h.blocksize(), 100);
        assert_eq!(h.filters(), [0, 0, 0, 0, 0, 1]);
        assert!(h.is_memcpyed());
        assert!(!h.is_extended());
        assert_eq!(h.nblocks(), 1);
    }

    #[test]
    fn rejects_bad_fields() {
        assert_eq!(ChunkHeader::parse(&[0u8; 10]).unwrap_err().code(), -5);
        assert_eq!(
            ChunkHeader::parse(&hdr(100, 0, 116, 0, 4))
                .unwrap_err()
                .code(),
            -11
        );
        assert_eq!(
            ChunkHeader::parse(&hdr(100, 10, 116, 0, 0))
                .unwrap_err()
                .code(),
            -11
        );
        assert_eq!(
            ChunkHeader::parse(&hdr(100, 10, 8, 0, 1))
                .unwrap_err()
                .code(),
            -11
        );
        assert_eq!(
            ChunkHeader::parse(&hdr(-5, 10, 16, 0, 1))
                .unwrap_err()
                .code(),
            -11
        );
        let mut short = hdr(100, 10, 116, 0, 1);
        short.truncate(50);
        assert_eq!(ChunkHeader::parse(&short).unwrap_err().code(), -11);
        // extended flag with only 16 bytes present
        let mut ext = hdr(100, 10, 40, 0x05, 1);
        ext.truncate(20);
        assert!(ChunkHeader::parse(&ext).is_err());
    }
}
