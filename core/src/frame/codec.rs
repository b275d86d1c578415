//! The few chunk-engine services frames need: reading a chunk header,
//! compressing and decompressing the offsets index, and building special
//! (run-length) chunks for offsets that stand for zeros, NaNs or
//! uninitialized values.
//!
//! Everything goes through this module so that the frame code depends on
//! one small surface of `crate::chunk`.

use super::index::{Compressed, OffsetIndex, KEEP_COMPRESSED_ABOVE};
use super::offsets::SpecialOffset;
use crate::Result;

/// Length of a Blosc2 (extended) chunk header.
pub(crate) const EXTENDED_HEADER_LEN: usize = 32;
/// Length of a Blosc1 chunk header.
const MIN_HEADER_LEN: usize = 16;

/// The sizes and flags of a chunk, read from its header only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkInfo {
    pub nbytes: i32,
    pub cbytes: i32,
    pub blocksize: i32,
    pub typesize: u8,
    /// Special kind from the blosc2 flags (0 = regular).
    pub special: u8,
    pub flags2: u8,
    pub extended: bool,
    pub memcpyed: bool,
}

impl ChunkInfo {
    /// Parses and sanity-checks a chunk header.
    pub fn parse(chunk: &[u8]) -> Result<ChunkInfo> {
        if chunk.len() < MIN_HEADER_LEN {
            crate::bail!(
                ReadBuffer,
                "chunk header needs {MIN_HEADER_LEN} bytes, got {}",
                chunk.len()
            );
        }
        let rd =
            |p: usize| i32::from_le_bytes([chunk[p], chunk[p + 1], chunk[p + 2], chunk[p + 3]]);
        let flags = chunk[2];
        let extended = flags & 0x05 == 0x05;
        if extended && chunk.len() < EXTENDED_HEADER_LEN {
            crate::bail!(
                ReadBuffer,
                "extended chunk header needs {EXTENDED_HEADER_LEN} bytes, got {}",
                chunk.len()
            );
        }
        let (nbytes, blocksize, cbytes) = (rd(4), rd(8), rd(12));
        let hlen = if extended {
            EXTENDED_HEADER_LEN as i32
        } else {
            MIN_HEADER_LEN as i32
        };
        if nbytes < 0 || cbytes < hlen || blocksize < 0 {
            crate::bail!(
                InvalidHeader,
                "impossible chunk sizes: nbytes {nbytes}, cbytes {cbytes}, blocksize {blocksize}"
            );
        }
        Ok(ChunkInfo {
            nbytes,
            cbytes,
            blocksize,
            typesize: chunk[3],
            special: if extended { (chunk[31] >> 4) & 0x07 } else { 0 },
            flags2: if extended { chunk[30] } else { 0 },
            extended,
            memcpyed: flags & 0x02 != 0,
        })
    }

    /// The special kind that a frame can store as an offset, if any.
    pub fn special_offset(&self) -> Option<SpecialOffset> {
        SpecialOffset::from_code(self.special)
    }
}

/// Compresses the offsets index the way the reference does (BloscLZ, shuffle,
/// typesize 8, never split, 16 KiB blocks).
pub(crate) fn compress_offsets(offsets: &[i64]) -> Result<Vec<u8>> {
    let raw = super::offsets::to_le_bytes(offsets);
    engine::compress_index(&raw)
}

/// The offsets index of a frame whose `nchunks` entries all equal `value`,
/// as the reference's special fill stores it: one repeated-value chunk
/// (header plus the 8-byte value) with the index parameters (typesize 8,
/// 16 KiB blocks, BloscLZ at level 5).
pub(crate) fn repeated_offsets(value: i64, nchunks: usize) -> Result<Vec<u8>> {
    let nbytes = nchunks
        .checked_mul(8)
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or_else(|| {
            crate::err!(
                FrameSpecial,
                "too many chunks for an offsets index: {nchunks}"
            )
        })?;
    let cp = crate::chunk::CParams {
        typesize: 8,
        blocksize: REPEAT_INDEX_BLOCKSIZE,
        clevel: 5,
        compcode: 0,
        ..crate::chunk::CParams::default()
    };
    crate::chunk::make_special_with(
        &cp,
        crate::chunk::Special::Value,
        nbytes,
        Some(&value.to_le_bytes()),
    )
}

/// Block size the reference gives a repeated-value offsets index.
const REPEAT_INDEX_BLOCKSIZE: i32 = 16 * 1024;

/// Reads an offsets index chunk that must hold `nchunks` entries (see
/// `frame::index`): a special chunk (one value repeated) stays one value, a
/// large one stays compressed, and any other is decompressed, with fallible
/// allocations.
pub(crate) fn decompress_offsets(chunk: &[u8], nchunks: usize) -> Result<OffsetIndex> {
    let info = ChunkInfo::parse(chunk)?;
    let want = nchunks
        .checked_mul(8)
        .ok_or_else(|| crate::err!(InvalidHeader, "too many chunks: {nchunks}"))?;
    if info.nbytes as usize != want {
        crate::bail!(
            InvalidHeader,
            "offsets index holds {} bytes, the header implies {want} ({nchunks} chunks)",
            info.nbytes
        );
    }
    // A special chunk (zeros, NaNs, uninitialised, one repeated value) whose
    // item divides 8 bytes holds one 8-byte entry repeated: decode just the
    // first entry. (Uninitialised bytes read as zeros, as a full decode
    // into a cleared buffer gives them.)
    let ts = usize::from(info.typesize);
    if info.special != 0 && ts > 0 && 8 % ts == 0 {
        let mut first = [0u8; 8];
        engine::getitem(chunk, 0, 8 / ts, &mut first)?;
        return Ok(OffsetIndex::Repeated {
            value: i64::from_le_bytes(first),
            len: nchunks,
        });
    }
    // A large index is kept compressed and read by blocks (see
    // `frame::index`), whatever its typesize: entries are read as byte
    // ranges, which need not fall on the chunk's items.
    if want > KEEP_COMPRESSED_ABOVE {
        let cbytes = info.cbytes as usize;
        if cbytes > chunk.len() {
            crate::bail!(
                ReadBuffer,
                "chunk says {cbytes} bytes, buffer has {}",
                chunk.len()
            );
        }
        // A block size the engine would not use as given means one block.
        let blocksize = usize::try_from(info.blocksize)
            .ok()
            .filter(|&b| b > 0 && b <= want)
            .unwrap_or(want);
        return Ok(OffsetIndex::Compressed(Compressed::new(
            chunk[..cbytes].to_vec(),
            nchunks,
            blocksize,
            read_index_bytes,
        )));
    }
    let raw = decompress(chunk)?;
    Ok(OffsetIndex::Entries(super::offsets::from_le_bytes(&raw)?))
}

/// `out.len()` decoded bytes of an index chunk from byte `at`, for
/// [`Compressed`].
fn read_index_bytes(chunk: &[u8], at: usize, out: &mut [u8]) -> Result<()> {
    engine::decompress_range(chunk, at, out)
}

/// Decompresses a whole chunk into a new buffer.
pub(crate) fn decompress(chunk: &[u8]) -> Result<Vec<u8>> {
    let info = ChunkInfo::parse(chunk)?;
    if info.cbytes as usize > chunk.len() {
        crate::bail!(
            ReadBuffer,
            "chunk says {} bytes, buffer has {}",
            info.cbytes,
            chunk.len()
        );
    }
    // Validated before the buffer its header asks for is allocated.
    engine::decompress_to_vec(&chunk[..info.cbytes as usize])
}

/// Builds the chunk a special offset stands for.
pub(crate) fn special_chunk(
    kind: SpecialOffset,
    nbytes: i32,
    typesize: i32,
    blocksize: i32,
) -> Result<Vec<u8>> {
    engine::special(kind, nbytes, typesize, blocksize)
}

/// The bridge to the chunk engine.
mod engine {
    use super::super::offsets::SpecialOffset;
    use crate::chunk::{CParams, Fmt, Special};
    use crate::Result;

    /// The offsets index is compressed as the reference does it: BloscLZ,
    /// byte shuffle, typesize 8, never split, 16 KiB blocks.
    pub(super) fn compress_index(raw: &[u8]) -> Result<Vec<u8>> {
        let cp = CParams {
            compcode: crate::codecs::Codec::BLOSCLZ,
            clevel: 5,
            typesize: 8,
            blocksize: 16 * 1024,
            splitmode: Fmt::NEVER_SPLIT,
            nthreads: 1,
            ..CParams::default()
        };
        let mut dst = crate::mem::zeroed(raw.len() + Fmt::MAX_OVERHEAD)?;
        let n = crate::chunk::compress(&cp, raw, &mut dst)?;
        if n == 0 {
            crate::bail!(WriteBuffer, "offsets index did not fit");
        }
        dst.truncate(n);
        Ok(dst)
    }

    pub(super) fn decompress_to_vec(chunk: &[u8]) -> Result<Vec<u8>> {
        crate::chunk::decompress_to_vec(chunk)
    }

    /// Bytes `at..at + out.len()`, decoding only the blocks holding them.
    pub(super) fn decompress_range(chunk: &[u8], at: usize, out: &mut [u8]) -> Result<()> {
        crate::chunk::Decompressor::new(crate::chunk::DParams::default())
            .decompress_range(chunk, at, out)
    }

    /// `nitems` items from item `start`, decoding only the blocks holding them.
    pub(super) fn getitem(
        chunk: &[u8],
        start: usize,
        nitems: usize,
        out: &mut [u8],
    ) -> Result<usize> {
        crate::chunk::Decompressor::new(crate::chunk::DParams::default())
            .getitem(chunk, start, nitems, out)
    }

    pub(super) fn special(
        kind: SpecialOffset,
        nbytes: i32,
        typesize: i32,
        blocksize: i32,
    ) -> Result<Vec<u8>> {
        if kind == SpecialOffset::Nan && typesize != 4 && typesize != 8 {
            crate::bail!(
                InvalidParam,
                "NaN chunks need typesize 4 or 8, not {typesize}"
            );
        }
        let kind = match kind {
            SpecialOffset::Zero => Special::Zero,
            SpecialOffset::Nan => Special::Nan,
            SpecialOffset::Uninit => Special::Uninit,
        };
        let nbytes = usize::try_from(nbytes)
            .map_err(|_| crate::err!(InvalidParam, "negative chunk size {nbytes}"))?;
        let cp = CParams {
            typesize,
            blocksize: blocksize.max(0),
            ..CParams::default()
        };
        crate::chunk::make_special_with(&cp, kind, nbytes, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index stored as a special chunk of any kind, with an item that
    /// divides 8 bytes, is read as one repeated entry: the entry a full
    /// decode gives (checked on 1000 entries), and without decoding the
    /// rest (2^27 entries, a 1 GiB index, in no time). Such indices are what
    /// the fuzzer's slowest frames declared.
    #[test]
    fn special_indices_stay_one_entry() {
        use crate::chunk::{make_special, Special};
        let cases: Vec<(Special, usize, Option<Vec<u8>>)> = vec![
            (Special::Zero, 8, None),
            (Special::Zero, 1, None),
            (Special::Uninit, 8, None),
            (Special::Uninit, 4, None),
            (Special::Nan, 8, None),
            (Special::Nan, 4, None),
            (Special::Value, 8, Some(1234i64.to_le_bytes().to_vec())),
            (Special::Value, 2, Some(vec![7, 9])),
            (Special::Value, 1, Some(vec![0x80])),
        ];
        for (kind, ts, value) in cases {
            let small = make_special(kind, 8 * 1000, ts, value.as_deref()).unwrap();
            let OffsetIndex::Repeated { value: v, len } = decompress_offsets(&small, 1000).unwrap()
            else {
                panic!("{kind:?} ts {ts}: not kept as one entry");
            };
            assert_eq!(len, 1000);
            let full = from_entries(&decompress(&small).unwrap());
            assert!(full.iter().all(|&e| e == v), "{kind:?} ts {ts}");
            let n = 1usize << 27;
            let big = make_special(kind, 8 * n, ts, value.as_deref()).unwrap();
            let started = std::time::Instant::now();
            let index = decompress_offsets(&big, n).unwrap();
            assert_eq!(index, OffsetIndex::Repeated { value: v, len: n });
            assert!(started.elapsed().as_millis() < 100, "{kind:?} ts {ts}");
        }
        // An item that does not divide 8 bytes is decoded in full.
        let odd = make_special(Special::Value, 3 * 8 * 10, 3, Some(&[1, 2, 3])).unwrap();
        assert!(matches!(
            decompress_offsets(&odd, 30).unwrap(),
            OffsetIndex::Entries(_)
        ));
    }

    fn from_entries(raw: &[u8]) -> Vec<i64> {
        super::super::offsets::from_le_bytes(raw).unwrap()
    }

    /// An index that compresses far better than its entries take in memory
    /// (here Zstd: 4 Mi entries, 32 MiB decoded) is kept as its chunk, and
    /// reading an entry decodes only the block that holds it.
    #[test]
    fn a_large_index_of_any_typesize_is_kept_compressed() {
        // The fuzzer's frame_file found a 775-byte frame whose index, of
        // typesize 3, declared 84 million entries: entries were read as
        // items then, so it was decoded whole, 673 MB. Typesizes 3, 5 and 7
        // cut the entries across items and blocks; every lookup must still
        // give the entry.
        let n = (KEEP_COMPRESSED_ABOVE / 8) * 3 + 5;
        let value = |i: usize| (i as i64 / 100) * 40;
        let raw: Vec<u8> = (0..n).flat_map(|i| value(i).to_le_bytes()).collect();
        for typesize in [3, 5, 7] {
            let cp = crate::chunk::CParams {
                typesize,
                blocksize: 3000 * typesize,
                nthreads: 1,
                ..crate::chunk::CParams::default()
            };
            let mut dst = vec![0u8; raw.len() + crate::chunk::Fmt::MAX_OVERHEAD];
            let len = crate::chunk::compress(&cp, &raw, &mut dst).unwrap();
            let index = decompress_offsets(&dst[..len], n).unwrap();
            assert!(
                matches!(index, OffsetIndex::Compressed(_)),
                "typesize {typesize}: decoded whole"
            );
            for i in [0, 1, 374, 375, 376, 1125, n / 2, n - 1, 7] {
                assert_eq!(
                    index.get(i),
                    Some(value(i)),
                    "typesize {typesize}, entry {i}"
                );
            }
            let mut count = 0;
            index
                .visit(|i, o| {
                    assert_eq!(o, value(i), "typesize {typesize}, entry {i}");
                    count += 1;
                    Ok(())
                })
                .unwrap();
            assert_eq!(count, n);
        }
    }

    #[test]
    fn a_large_compressible_index_is_kept_compressed() {
        let n = 1usize << 22;
        let value = |i: usize| if (i / 4096) % 2 == 0 { 0i64 } else { 32 };
        let raw: Vec<u8> = (0..n).flat_map(|i| value(i).to_le_bytes()).collect();
        let cp = crate::chunk::CParams {
            compcode: crate::codecs::Codec::ZSTD,
            clevel: 9,
            typesize: 8,
            blocksize: 64 * 1024,
            nthreads: 1,
            ..crate::chunk::CParams::default()
        };
        let mut dst = vec![0u8; raw.len() + crate::chunk::Fmt::MAX_OVERHEAD];
        let len = crate::chunk::compress(&cp, &raw, &mut dst).unwrap();
        drop(raw);
        let index = decompress_offsets(&dst[..len], n).unwrap();
        let OffsetIndex::Compressed(c) = &index else {
            panic!("a {len}-byte index of {n} entries was decoded whole");
        };
        assert!(c.chunk().len() == len && len < 64 * 1024, "{len} bytes");
        for i in [0, 4095, 4096, n - 1, 12_345, 0] {
            assert_eq!(index.get(i), Some(value(i)), "entry {i}");
        }
        let mut count = 0;
        index
            .visit(|i, o| {
                assert_eq!(o, value(i));
                count += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(count, n);
        // The same entries, one byte short of the threshold, are decoded.
        let small = KEEP_COMPRESSED_ABOVE / 8;
        let c = compress_offsets(&(0..small as i64).collect::<Vec<_>>()).unwrap();
        assert!(matches!(
            decompress_offsets(&c, small).unwrap(),
            OffsetIndex::Entries(_)
        ));
        let c = compress_offsets(&(0..small as i64 + 1).collect::<Vec<_>>()).unwrap();
        assert!(matches!(
            decompress_offsets(&c, small + 1).unwrap(),
            OffsetIndex::Compressed(_)
        ));
    }

    #[test]
    fn offsets_round_trip_through_a_chunk() {
        let v = vec![0i64, 100, SpecialOffset::Zero.encode(), 250];
        let c = compress_offsets(&v).unwrap();
        assert_eq!(decompress_offsets(&c, 4).unwrap(), OffsetIndex::Entries(v));
        assert!(decompress_offsets(&c, 5).is_err());
    }

    #[test]
    fn special_chunks_decode() {
        let z = special_chunk(SpecialOffset::Zero, 64, 4, 0).unwrap();
        assert_eq!(decompress(&z).unwrap(), vec![0u8; 64]);
        let n = special_chunk(SpecialOffset::Nan, 16, 8, 0).unwrap();
        let d = decompress(&n).unwrap();
        assert!(f64::from_le_bytes(d[..8].try_into().unwrap()).is_nan());
        assert!(special_chunk(SpecialOffset::Nan, 16, 2, 0).is_err());
        assert_eq!(
            ChunkInfo::parse(&z).unwrap().special_offset(),
            Some(SpecialOffset::Zero)
        );
    }

    #[test]
    fn bad_headers() {
        assert!(ChunkInfo::parse(&[0u8; 10]).is_err());
        let mut z = special_chunk(SpecialOffset::Zero, 64, 4, 0).unwrap();
        z[12..16].copy_from_slice(&5i32.to_le_bytes());
        assert!(ChunkInfo::parse(&z).is_err());
    }
}
