//! The frame header: a fixed 87-byte msgpack prefix followed by the
//! metalayers section (see README_CFRAME_FORMAT.rst, "Header").
//!
//! The metalayers live in the header so that their byte size is fixed once
//! data exists: they can be updated in place but not grown.

use super::bytes::{be_i16, be_i32, be_i64, be_u16, be_u32, expect, slice};
use crate::Result;

/// Byte positions inside the fixed part of the header.
pub(crate) struct Pos;
impl Pos {
    pub(crate) const HEADER_LEN: usize = 11;
    pub(crate) const FRAME_LEN: usize = 16;
    pub(crate) const FLAGS: usize = 25;
    pub(crate) const TYPE: usize = 26;
    pub(crate) const CODECS: usize = 27;
    pub(crate) const OTHER_FLAGS: usize = 28;
    pub(crate) const NBYTES: usize = 30;
    pub(crate) const CBYTES: usize = 39;
    pub(crate) const TYPESIZE: usize = 48;
    pub(crate) const BLOCKSIZE: usize = 53;
    pub(crate) const CHUNKSIZE: usize = 58;
    pub(crate) const NTHREADS_C: usize = 63;
    pub(crate) const NTHREADS_D: usize = 66;
    pub(crate) const HAS_VLMETA: usize = 68;
    pub(crate) const FILTERS: usize = 70;
    pub(crate) const UDCODEC: usize = 77;
    pub(crate) const CODEC_META: usize = 78;
    pub(crate) const OTHER_FLAGS2: usize = 85;
    /// Length of the fixed part; the metalayers section starts here.
    pub(crate) const MINLEN: usize = 87;
    pub(crate) const IDX_SIZE: usize = 89;
}

/// Frame format versions (low nibble of the general flags).
pub(crate) const VERSION_RC1: u8 = 2;
pub(crate) const VERSION_VL_BLOCKS: u8 = 3;
/// General-flags bits.
pub(crate) const FLAG_OFFSETS_64: u8 = 0x10;
pub(crate) const FLAG_VARIABLE_CHUNKS: u8 = 0x40;
pub(crate) const FLAG_VL_BLOCKS: u8 = 0x80;
/// Codec nibble meaning "look at the user-defined codec byte".
pub(crate) const UDCODEC_FORMAT: u8 = 6;
/// The reference's first user-defined codec id (BLOSC_LAST_CODEC).
pub(crate) const LAST_CODEC: u8 = 6;
/// Limits shared with the reference.
pub(crate) const MAX_METALAYERS: usize = 16;
pub(crate) const METALAYER_NAME_MAXLEN: usize = 31;
pub(crate) const MAX_FILTERS: usize = 6;

/// The frame type stored at byte 26.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// Header, chunks, offsets and trailer in one buffer or file (type 0).
    Contiguous,
    /// A directory: this frame holds header, offsets and trailer, each
    /// chunk is a file of its own (type 1).
    Sparse,
}

/// A named binary blob stored in a frame (fixed-size metalayer in the header,
/// or variable-length metalayer in the trailer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metalayer {
    /// The name (at most 31 bytes).
    pub name: String,
    /// The content, opaque to the frame; for a variable-length metalayer,
    /// as stored (compressed).
    pub content: Vec<u8>,
}

/// Every field of a frame header, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    /// Length of the whole header including metalayers (filled by `encode`).
    pub header_len: i32,
    /// Length of the whole frame (header + data + offsets + trailer).
    pub frame_len: i64,
    /// Format version (low nibble of the general flags).
    pub version: u8,
    /// Contiguous or sparse (byte 26).
    pub frame_type: FrameType,
    /// Codec id of the chunks (user codec ids read from the user-codec byte).
    pub compcode: u8,
    /// Compression level, 0..=9 (the high nibble of byte 27).
    pub clevel: u8,
    /// Split mode as the reference numbers it (1..=4).
    pub splitmode: u8,
    /// Uncompressed bytes of all chunks.
    pub nbytes: i64,
    /// Bytes in the data section (contiguous) or in stored chunks (sparse).
    pub cbytes: i64,
    /// Item size in bytes (positive).
    pub typesize: i32,
    /// Block size of the chunks in bytes; 0 for automatic.
    pub blocksize: i32,
    /// Chunk size in bytes; 0 means variable-size chunks.
    pub chunksize: i32,
    /// Compression threads of the super-chunk that wrote the frame.
    pub nthreads_c: i16,
    /// Decompression threads of the super-chunk that wrote the frame.
    pub nthreads_d: i16,
    /// Whether the trailer holds variable-length metalayers.
    pub has_vlmetalayers: bool,
    /// Whether the chunks use variable-length blocks.
    pub vl_blocks: bool,
    /// The filter pipeline's ids, as in [`crate::chunk::CParams::filters`].
    pub filters: [u8; 6],
    /// The filters' parameter bytes.
    pub filters_meta: [u8; 6],
    /// The codec's parameter byte.
    pub compcode_meta: u8,
    /// Whether the chunks embed a dictionary.
    pub use_dict: bool,
    /// The fixed-size metalayers, in header order (empty after
    /// [`decode_fixed`](Self::decode_fixed)).
    pub metalayers: Vec<Metalayer>,
}

impl FrameHeader {
    /// A header for an empty frame with reference defaults.
    pub fn new(frame_type: FrameType) -> FrameHeader {
        FrameHeader {
            header_len: 0,
            frame_len: 0,
            version: VERSION_RC1,
            frame_type,
            compcode: 0,
            clevel: 5,
            splitmode: 4,
            nbytes: 0,
            cbytes: 0,
            typesize: 8,
            blocksize: 0,
            chunksize: -1,
            nthreads_c: 1,
            nthreads_d: 1,
            has_vlmetalayers: false,
            vl_blocks: false,
            filters: [0, 0, 0, 0, 0, 1],
            filters_meta: [0; 6],
            compcode_meta: 0,
            use_dict: false,
            metalayers: Vec::new(),
        }
    }

    /// Serializes the header the way the reference writes it. The version
    /// byte is derived: 3 for variable-size chunks or variable-length blocks,
    /// 2 otherwise. `header_len` is computed; `frame_len` is written as is.
    pub fn encode(&self) -> Result<Vec<u8>> {
        if self.metalayers.len() > MAX_METALAYERS {
            crate::bail!(
                InvalidParam,
                "too many metalayers: {} > {MAX_METALAYERS}",
                self.metalayers.len()
            );
        }
        let mut h = vec![0u8; Pos::MINLEN];
        h[0] = 0x90 + 14;
        h[1] = 0xa0 + 8;
        h[2..10].copy_from_slice(b"b2frame\0");
        h[10] = 0xd2;
        h[15] = 0xcf;
        h[Pos::FRAME_LEN..Pos::FRAME_LEN + 8].copy_from_slice(&self.frame_len.to_be_bytes());
        h[24] = 0xa0 + 4;
        let variable = self.chunksize == 0;
        let mut flags = if variable || self.vl_blocks {
            VERSION_VL_BLOCKS
        } else {
            VERSION_RC1
        };
        flags |= FLAG_OFFSETS_64;
        if variable {
            flags |= FLAG_VARIABLE_CHUNKS;
        }
        if self.vl_blocks {
            flags |= FLAG_VL_BLOCKS;
        }
        h[Pos::FLAGS] = flags;
        h[Pos::TYPE] = match self.frame_type {
            FrameType::Contiguous => 0,
            FrameType::Sparse => 1,
        };
        let codec_nibble = if self.compcode >= LAST_CODEC {
            UDCODEC_FORMAT
        } else {
            self.compcode
        };
        h[Pos::CODECS] = codec_nibble | (self.clevel.min(15) << 4);
        h[Pos::OTHER_FLAGS] = self.splitmode.wrapping_sub(1) & 0x03;
        h[Pos::NBYTES - 1] = 0xd3;
        h[Pos::NBYTES..Pos::NBYTES + 8].copy_from_slice(&self.nbytes.to_be_bytes());
        h[Pos::CBYTES - 1] = 0xd3;
        h[Pos::CBYTES..Pos::CBYTES + 8].copy_from_slice(&self.cbytes.to_be_bytes());
        for (pos, v) in [
            (Pos::TYPESIZE, self.typesize),
            (Pos::BLOCKSIZE, self.blocksize),
            (Pos::CHUNKSIZE, self.chunksize),
        ] {
            h[pos - 1] = 0xd2;
            h[pos..pos + 4].copy_from_slice(&v.to_be_bytes());
        }
        for (pos, v) in [
            (Pos::NTHREADS_C, self.nthreads_c),
            (Pos::NTHREADS_D, self.nthreads_d),
        ] {
            h[pos - 1] = 0xd1;
            h[pos..pos + 2].copy_from_slice(&v.to_be_bytes());
        }
        h[Pos::HAS_VLMETA] = if self.has_vlmetalayers { 0xc3 } else { 0xc2 };
        h[Pos::FILTERS - 1] = 0xd8;
        h[Pos::FILTERS] = MAX_FILTERS as u8;
        h[Pos::FILTERS + 1..Pos::FILTERS + 7].copy_from_slice(&self.filters);
        h[Pos::UDCODEC] = self.compcode;
        h[Pos::CODEC_META] = self.compcode_meta;
        h[Pos::FILTERS + 9..Pos::FILTERS + 15].copy_from_slice(&self.filters_meta);
        h[Pos::OTHER_FLAGS2] = u8::from(self.use_dict);

        // Metalayers: [idx_size, {name: offset}, [bin32 contents]]
        let n = self.metalayers.len() as u16;
        h.push(0x90 + 3);
        h.extend_from_slice(&[0xcd, 0, 0]);
        h.push(0xde);
        h.extend_from_slice(&n.to_be_bytes());
        let mut offset_slots = Vec::with_capacity(self.metalayers.len());
        for m in &self.metalayers {
            check_name(&m.name)?;
            h.push(0xa0 + m.name.len() as u8);
            h.extend_from_slice(m.name.as_bytes());
            h.push(0xd2);
            offset_slots.push(h.len());
            h.extend_from_slice(&[0; 4]);
        }
        let idx_size = u16::try_from(h.len() - Pos::MINLEN)
            .map_err(|_| crate::err!(InvalidParam, "metalayer index too large"))?;
        h[Pos::IDX_SIZE..Pos::IDX_SIZE + 2].copy_from_slice(&idx_size.to_be_bytes());
        h.push(0xdc);
        h.extend_from_slice(&n.to_be_bytes());
        for (m, slot) in self.metalayers.iter().zip(offset_slots) {
            let off = i32::try_from(h.len())
                .map_err(|_| crate::err!(InvalidParam, "header too large"))?;
            let clen = u32::try_from(m.content.len())
                .ok()
                .filter(|&l| l <= i32::MAX as u32)
                .ok_or_else(|| crate::err!(InvalidParam, "metalayer '{}' too large", m.name))?;
            h[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
            h.push(0xc6);
            h.extend_from_slice(&clen.to_be_bytes());
            h.extend_from_slice(&m.content);
        }
        let hlen =
            i32::try_from(h.len()).map_err(|_| crate::err!(InvalidParam, "header too large"))?;
        h[Pos::HEADER_LEN..Pos::HEADER_LEN + 4].copy_from_slice(&hlen.to_be_bytes());
        Ok(h)
    }

    /// Decodes the fixed 87-byte part (metalayers are left empty). Checks the
    /// magic, the msgpack markers and the basic invariants.
    pub fn decode_fixed(buf: &[u8]) -> Result<FrameHeader> {
        let fixed = slice(buf, 0, Pos::MINLEN, "frame header").map_err(|_| {
            crate::err!(
                InvalidHeader,
                "frame header truncated: {} bytes, need {}",
                buf.len(),
                Pos::MINLEN
            )
        })?;
        if fixed[0] != 0x9e || fixed[1] != 0xa8 || &fixed[2..10] != b"b2frame\0" {
            crate::bail!(FrameType, "not a Blosc2 frame (bad magic)");
        }
        expect(fixed, 10, 0xd2, "header_len")?;
        expect(fixed, 15, 0xcf, "frame_len")?;
        expect(fixed, 24, 0xa4, "flags")?;
        expect(fixed, Pos::NBYTES - 1, 0xd3, "nbytes")?;
        expect(fixed, Pos::CBYTES - 1, 0xd3, "cbytes")?;
        expect(fixed, Pos::FILTERS - 1, 0xd8, "filter pipeline")?;
        let header_len = be_i32(fixed, Pos::HEADER_LEN, "header_len")?;
        let frame_len = be_i64(fixed, Pos::FRAME_LEN, "frame_len")?;
        if header_len < Pos::MINLEN as i32 {
            crate::bail!(
                InvalidHeader,
                "header length {header_len} below the minimum {}",
                Pos::MINLEN
            );
        }
        if i64::from(header_len) > frame_len {
            crate::bail!(
                InvalidHeader,
                "header length {header_len} exceeds frame length {frame_len}"
            );
        }
        let flags = fixed[Pos::FLAGS];
        let version = flags & 0x0f;
        if version > VERSION_VL_BLOCKS {
            crate::bail!(VersionSupport, "unsupported frame format version {version}");
        }
        let frame_type = match fixed[Pos::TYPE] & 0x0f {
            0 => FrameType::Contiguous,
            1 => FrameType::Sparse,
            t => crate::bail!(FrameType, "unknown frame type {t}"),
        };
        let codecs = fixed[Pos::CODECS];
        let compcode = if codecs & 0x0f == UDCODEC_FORMAT {
            fixed[Pos::UDCODEC]
        } else {
            codecs & 0x0f
        };
        let nbytes = be_i64(fixed, Pos::NBYTES, "nbytes")?;
        let cbytes = be_i64(fixed, Pos::CBYTES, "cbytes")?;
        if nbytes < 0 || cbytes < 0 {
            crate::bail!(
                InvalidHeader,
                "negative sizes in frame header (nbytes {nbytes}, cbytes {cbytes})"
            );
        }
        let typesize = be_i32(fixed, Pos::TYPESIZE, "typesize")?;
        if typesize <= 0 {
            crate::bail!(InvalidHeader, "typesize {typesize} must be positive");
        }
        let chunksize = be_i32(fixed, Pos::CHUNKSIZE, "chunksize")?;
        if chunksize < 0 && nbytes > 0 {
            crate::bail!(
                InvalidHeader,
                "negative chunksize {chunksize} with data present"
            );
        }
        let nfilters = fixed[Pos::FILTERS] as usize;
        if nfilters > MAX_FILTERS {
            crate::bail!(
                InvalidHeader,
                "{nfilters} filters in header, at most {MAX_FILTERS}"
            );
        }
        let mut filters = [0u8; 6];
        let mut filters_meta = [0u8; 6];
        filters[..nfilters].copy_from_slice(&fixed[Pos::FILTERS + 1..Pos::FILTERS + 1 + nfilters]);
        filters_meta[..nfilters]
            .copy_from_slice(&fixed[Pos::FILTERS + 9..Pos::FILTERS + 9 + nfilters]);
        Ok(FrameHeader {
            header_len,
            frame_len,
            version,
            frame_type,
            compcode,
            clevel: codecs >> 4,
            splitmode: (fixed[Pos::OTHER_FLAGS] & 0x03) + 1,
            nbytes,
            cbytes,
            typesize,
            blocksize: be_i32(fixed, Pos::BLOCKSIZE, "blocksize")?,
            chunksize,
            nthreads_c: be_i16(fixed, Pos::NTHREADS_C, "nthreads_c")?,
            nthreads_d: be_i16(fixed, Pos::NTHREADS_D, "nthreads_d")?,
            has_vlmetalayers: fixed[Pos::HAS_VLMETA] == 0xc3,
            vl_blocks: flags & FLAG_VL_BLOCKS != 0,
            filters,
            filters_meta,
            compcode_meta: fixed[Pos::CODEC_META],
            use_dict: fixed[Pos::OTHER_FLAGS2] & 1 != 0,
            metalayers: Vec::new(),
        })
    }

    /// Decodes a complete header (`header_len` bytes), metalayers included.
    pub fn decode(buf: &[u8]) -> Result<FrameHeader> {
        let mut h = FrameHeader::decode_fixed(buf)?;
        let hlen = h.header_len as usize;
        if buf.len() < hlen {
            crate::bail!(
                InvalidHeader,
                "header truncated: {} bytes, header_len says {hlen}",
                buf.len()
            );
        }
        h.metalayers = decode_metalayers(&buf[..hlen], Pos::MINLEN, MAX_METALAYERS, "metalayers")?;
        Ok(h)
    }
}

/// Rejects names the format cannot store.
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > METALAYER_NAME_MAXLEN {
        crate::bail!(
            InvalidParam,
            "metalayer name '{name}' must have 1 to {METALAYER_NAME_MAXLEN} bytes"
        );
    }
    Ok(())
}

/// Decodes a `[idx_size, {name: offset}, [bin32...]]` section starting at
/// `start` inside `buf`; offsets are relative to the start of `buf`. Shared by
/// the header (metalayers) and the trailer (vlmetalayers).
pub(crate) fn decode_metalayers(
    buf: &[u8],
    start: usize,
    max: usize,
    what: &str,
) -> Result<Vec<Metalayer>> {
    // Like the reference, only the map marker is checked: the array and
    // index-size markers before it carry nothing a reader needs.
    expect(buf, start + 4, 0xde, what)?;
    let n = be_u16(buf, start + 5, what)? as usize;
    if n > max {
        crate::bail!(InvalidHeader, "{what}: {n} entries, at most {max} allowed");
    }
    let mut pos = start + 7;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let marker = slice(buf, pos, 1, what)?[0];
        if marker & 0xe0 != 0xa0 {
            crate::bail!(InvalidHeader, "{what}: expected a name string at {pos}");
        }
        let nlen = (marker & 0x1f) as usize;
        let name = slice(buf, pos + 1, nlen, what)?;
        let name = std::str::from_utf8(name)
            .map_err(|_| crate::err!(InvalidHeader, "{what}: name is not UTF-8"))?
            .to_owned();
        pos += 1 + nlen;
        expect(buf, pos, 0xd2, what)?;
        let off = be_i32(buf, pos + 1, what)?;
        pos += 5;
        let off = usize::try_from(off)
            .map_err(|_| crate::err!(InvalidHeader, "{what}: negative offset {off}"))?;
        expect(buf, off, 0xc6, what)?;
        let clen = be_u32(buf, off + 1, what)?;
        if clen > i32::MAX as u32 {
            crate::bail!(InvalidHeader, "{what}: content length {clen} too large");
        }
        let content = slice(buf, off + 5, clen as usize, what)?.to_vec();
        out.push(Metalayer { name, content });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FrameHeader {
        let mut h = FrameHeader::new(FrameType::Contiguous);
        h.frame_len = 1000;
        h.nbytes = 4000;
        h.cbytes = 321;
        h.typesize = 4;
        h.blocksize = 256;
        h.chunksize = 400;
        h.compcode = 5;
        h.clevel = 9;
        h.splitmode = 2;
        h.filters = [0, 0, 0, 0, 3, 1];
        h.filters_meta = [0, 0, 0, 0, 7, 0];
        h.use_dict = true;
        h.metalayers = vec![
            Metalayer {
                name: "b2nd".into(),
                content: vec![1, 2, 3],
            },
            Metalayer {
                name: "other".into(),
                content: vec![],
            },
        ];
        h
    }

    #[test]
    fn round_trip_every_field() {
        let mut h = sample();
        let bytes = h.encode().unwrap();
        h.header_len = bytes.len() as i32;
        let d = FrameHeader::decode(&bytes).unwrap();
        assert_eq!(d, h);
        assert_eq!(bytes[Pos::FLAGS], VERSION_RC1 | FLAG_OFFSETS_64);
        assert_eq!(&bytes[Pos::NBYTES..Pos::NBYTES + 8], &4000i64.to_be_bytes());
    }

    #[test]
    fn variable_chunks_use_version_3() {
        let mut h = sample();
        h.chunksize = 0;
        let bytes = h.encode().unwrap();
        assert_eq!(
            bytes[Pos::FLAGS],
            VERSION_VL_BLOCKS | FLAG_OFFSETS_64 | FLAG_VARIABLE_CHUNKS
        );
    }

    #[test]
    fn user_codec_goes_to_udcodec_byte() {
        let mut h = sample();
        h.compcode = 160;
        let bytes = h.encode().unwrap();
        assert_eq!(bytes[Pos::CODECS] & 0x0f, UDCODEC_FORMAT);
        assert_eq!(FrameHeader::decode(&bytes).unwrap().compcode, 160);
    }

    #[test]
    fn bad_headers_are_errors() {
        let bytes = sample().encode().unwrap();
        for cut in [0, 10, 86] {
            assert!(FrameHeader::decode(&bytes[..cut]).is_err());
        }
        assert!(FrameHeader::decode(&bytes[..bytes.len() - 1]).is_err());
        let mut bad = bytes.clone();
        bad[3] = b'X';
        assert_eq!(FrameHeader::decode(&bad).unwrap_err().code(), -24);
        let mut bad = bytes.clone();
        bad[Pos::HEADER_LEN..Pos::HEADER_LEN + 4].copy_from_slice(&5000i32.to_be_bytes());
        assert!(FrameHeader::decode(&bad).is_err());
        // Too many metalayers claimed
        let mut bad = bytes.clone();
        bad[Pos::MINLEN + 5..Pos::MINLEN + 7].copy_from_slice(&17u16.to_be_bytes());
        assert!(FrameHeader::decode(&bad).is_err());
        // A metalayer offset pointing past the end
        let mut bad = bytes.clone();
        let slot = Pos::MINLEN + 7 + 1 + 4 + 1;
        bad[slot..slot + 4].copy_from_slice(&100_000i32.to_be_bytes());
        assert!(FrameHeader::decode(&bad).is_err());
        let mut bad = bytes;
        bad[Pos::TYPESIZE..Pos::TYPESIZE + 4].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(FrameHeader::decode(&bad).is_err());
    }

    #[test]
    fn too_many_or_bad_metalayers_refused() {
        let mut h = sample();
        h.metalayers = (0..17)
            .map(|i| Metalayer {
                name: format!("m{i}"),
                content: vec![],
            })
            .collect();
        assert!(h.encode().is_err());
        h.metalayers = vec![Metalayer {
            name: "x".repeat(32),
            content: vec![],
        }];
        assert!(h.encode().is_err());
    }
}
