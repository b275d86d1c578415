//! Entries of the chunk-offsets index.
//!
//! Each entry is a little-endian int64. A non-negative value is where the
//! chunk lives: the byte offset from the end of the header (contiguous
//! frames) or the number of its `NNNNNNNN.chunk` file (sparse frames). When
//! bit 63 is set the chunk is not stored at all: bits 56..59 of the top byte
//! say which run of special values it holds.

use crate::Result;

/// Run-length chunk kinds that can be represented by an offset alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialOffset {
    /// A chunk of zeros (code 1).
    Zero,
    /// A chunk of NaNs (code 2).
    Nan,
    /// An uninitialised chunk (code 4).
    Uninit,
}

impl SpecialOffset {
    /// The value the reference uses in a chunk header's special bits and in
    /// the top byte of the offset.
    pub(crate) fn code(self) -> u8 {
        match self {
            SpecialOffset::Zero => 1,
            SpecialOffset::Nan => 2,
            SpecialOffset::Uninit => 4,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<SpecialOffset> {
        match code {
            1 => Some(SpecialOffset::Zero),
            2 => Some(SpecialOffset::Nan),
            4 => Some(SpecialOffset::Uninit),
            _ => None,
        }
    }

    /// The int64 stored in the index for this kind.
    pub fn encode(self) -> i64 {
        ((1u64 << 63) | (u64::from(self.code()) << 56)) as i64
    }
}

/// Where a chunk is, decoded from its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkLoc {
    /// A stored chunk: its byte offset from the end of the header
    /// (contiguous frames) or its file number (sparse frames).
    Stored(i64),
    /// A chunk that the entry alone describes.
    Special(SpecialOffset),
}

impl ChunkLoc {
    /// The location index entry `v` means; fails with [`crate::ErrorKind::Data`]
    /// for a negative entry whose special code is none of the known ones.
    pub fn decode(v: i64) -> Result<ChunkLoc> {
        if v >= 0 {
            return Ok(ChunkLoc::Stored(v));
        }
        let top = ((v as u64) >> 56) as u8;
        SpecialOffset::from_code(top & 0x7f)
            .map(ChunkLoc::Special)
            .ok_or_else(|| crate::err!(Data, "unknown special chunk offset {v:#x}"))
    }

    /// The index entry for this location (the inverse of [`ChunkLoc::decode`]).
    pub fn encode(self) -> i64 {
        match self {
            ChunkLoc::Stored(v) => v,
            ChunkLoc::Special(s) => s.encode(),
        }
    }
}

/// Packs offsets as the little-endian bytes the index chunk holds.
pub(crate) fn to_le_bytes(offsets: &[i64]) -> Vec<u8> {
    offsets.iter().flat_map(|o| o.to_le_bytes()).collect()
}

/// Unpacks the index chunk's decompressed bytes.
pub(crate) fn from_le_bytes(bytes: &[u8]) -> Result<Vec<i64>> {
    if bytes.len() % 8 != 0 {
        crate::bail!(
            Data,
            "offsets index of {} bytes is not a multiple of 8",
            bytes.len()
        );
    }
    let mut out = super::index::reserve(bytes.len() / 8)?;
    out.extend(
        bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_match_the_reference_bits() {
        assert_eq!(SpecialOffset::Zero.encode() as u64, 0x8100_0000_0000_0000);
        assert_eq!(SpecialOffset::Nan.encode() as u64, 0x8200_0000_0000_0000);
        assert_eq!(SpecialOffset::Uninit.encode() as u64, 0x8400_0000_0000_0000);
        for s in [
            SpecialOffset::Zero,
            SpecialOffset::Nan,
            SpecialOffset::Uninit,
        ] {
            assert_eq!(ChunkLoc::decode(s.encode()).unwrap(), ChunkLoc::Special(s));
        }
        assert_eq!(ChunkLoc::decode(77).unwrap(), ChunkLoc::Stored(77));
        assert!(ChunkLoc::decode((0x8300_0000_0000_0000u64) as i64).is_err());
        assert!(ChunkLoc::decode(-1).is_err());
    }

    #[test]
    fn le_round_trip() {
        let v = vec![0, 5, SpecialOffset::Nan.encode(), i64::MAX];
        assert_eq!(from_le_bytes(&to_le_bytes(&v)).unwrap(), v);
        assert!(from_le_bytes(&[1, 2, 3]).is_err());
    }
}
