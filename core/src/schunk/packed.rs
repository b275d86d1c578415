//! The packed super-chunk: the 96-byte "Blosc packed header" of early
//! Blosc2 (seed 003), followed by the data-starts block and the chunks.
//!
//! Layout (all little-endian), offsets from the start of the buffer:
//!
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0      | version (`PACKED_VERSION`)                                   |
//! | 1      | flags1: typesize (the legacy layout reserved this byte)      |
//! | 2, 3   | flags2, flags3: reserved, 0                                  |
//! | 4..6   | cname: compressor code (u16)                                 |
//! | 6..8   | clevel (u16)                                                 |
//! | 8..10  | filters: slots 1..=5 of the pipeline, 3 bits each            |
//! | 10..12 | f_meta: reserved, 0                                          |
//! | 12..16 | chunksize (u32, 0 = variable)                                |
//! | 16..24 | nchunks (u64)                                                |
//! | 24..32 | nbytes: the buffer's size with chunks uncompressed (u64)     |
//! | 32..40 | cbytes: the packed buffer's size (u64)                       |
//! | 40..48 | filters chunk position: 0 (none)                             |
//! | 48..56 | codec chunk position: 0 (none)                               |
//! | 56..64 | metadata position: metalayers block, or 0                    |
//! | 64..72 | userdata position: vlmetalayers block, or 0                  |
//! | 72..80 | data-starts position (96 when there are chunks, else 0)      |
//! | 80..96 | reserved, 0                                                  |
//!
//! The data-starts block holds one int64 per chunk: its position from the
//! start of the header. The metadata blocks reuse the frame trailer's
//! msgpack layout. Only pipelines whose slot 0 is empty and whose filter
//! ids fit in 3 bits can be packed.

use super::{CParams, SChunk, Storage};
use crate::frame::codec::ChunkInfo;
use crate::frame::trailer;
use crate::Result;

/// Size of the packed header.
pub(crate) const PACKED_HEADER_LEN: usize = 96;
/// Version byte written and accepted.
pub(crate) const PACKED_VERSION: u8 = 1;

fn put_u64(buf: &mut [u8], pos: usize, v: u64) {
    buf[pos..pos + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(buf: &[u8], pos: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&buf[pos..pos + 8]);
    u64::from_le_bytes(a)
}

/// Encodes pipeline slots 1..=5 as 3-bit fields.
fn filters_to_bits(filters: &[u8; 6]) -> Result<u16> {
    if filters[0] != 0 {
        crate::bail!(
            InvalidParam,
            "packed super-chunks cannot store a filter in pipeline slot 0"
        );
    }
    let mut bits = 0u16;
    for (k, &f) in filters[1..].iter().enumerate() {
        if f > 7 {
            crate::bail!(
                InvalidParam,
                "filter id {f} does not fit the packed 3-bit field"
            );
        }
        bits |= u16::from(f) << (3 * k);
    }
    Ok(bits)
}

fn bits_to_filters(bits: u16) -> [u8; 6] {
    let mut f = [0u8; 6];
    for (k, slot) in f[1..].iter_mut().enumerate() {
        *slot = ((bits >> (3 * k)) & 7) as u8;
    }
    f
}

/// Serializes `schunk` in the packed format.
pub fn pack(schunk: &mut SChunk) -> Result<Vec<u8>> {
    let cp = schunk.cparams().clone();
    let typesize = u8::try_from(cp.typesize)
        .map_err(|_| crate::err!(InvalidParam, "typesize {} > 255", cp.typesize))?;
    let nchunks = schunk.nchunks() as usize;
    let meta = if schunk.metalayers.is_empty() {
        Vec::new()
    } else {
        trailer::encode(&schunk.metalayers)?
    };
    let user = if schunk.vlmetalayers.is_empty() {
        Vec::new()
    } else {
        trailer::encode(&schunk.vlmetalayers)?
    };

    let mut out = crate::mem::zeroed(PACKED_HEADER_LEN + nchunks * 8)?;
    out[0] = PACKED_VERSION;
    out[1] = typesize;
    out[4..6].copy_from_slice(&u16::from(cp.compcode).to_le_bytes());
    out[6..8].copy_from_slice(&u16::from(cp.clevel).to_le_bytes());
    out[8..10].copy_from_slice(&filters_to_bits(&cp.filters)?.to_le_bytes());
    out[12..16].copy_from_slice(&(schunk.chunksize().max(0) as u32).to_le_bytes());
    put_u64(&mut out, 16, nchunks as u64);
    if !meta.is_empty() {
        let at = out.len() as u64;
        put_u64(&mut out, 56, at);
        out.extend_from_slice(&meta);
    }
    if !user.is_empty() {
        let at = out.len() as u64;
        put_u64(&mut out, 64, at);
        out.extend_from_slice(&user);
    }
    let mut uncompressed_extra = 0i64;
    for i in 0..nchunks {
        let pos = out.len() as u64;
        put_u64(&mut out, PACKED_HEADER_LEN + i * 8, pos);
        let chunk = schunk.get_chunk(i as i64)?;
        let info = ChunkInfo::parse(&chunk)?;
        out.extend_from_slice(&chunk[..info.cbytes as usize]);
        uncompressed_extra += i64::from(info.nbytes) - i64::from(info.cbytes);
    }
    if nchunks > 0 {
        put_u64(&mut out, 72, PACKED_HEADER_LEN as u64);
    }
    let total = out.len() as u64;
    put_u64(&mut out, 24, (total as i64 + uncompressed_extra) as u64);
    put_u64(&mut out, 32, total);
    Ok(out)
}

/// Reads a position field: 0 means absent; otherwise it must lie inside the buffer.
fn section(buf: &[u8], field: usize, what: &str) -> Result<Option<usize>> {
    let v = get_u64(buf, field);
    if v == 0 {
        return Ok(None);
    }
    if v < PACKED_HEADER_LEN as u64 || v >= buf.len() as u64 {
        crate::bail!(
            InvalidHeader,
            "packed {what} position {v} outside the buffer ({} bytes)",
            buf.len()
        );
    }
    Ok(Some(v as usize))
}

/// Where one chunk of a packed buffer lies, and what its header claims.
struct ChunkRange {
    pos: usize,
    /// The chunk's `cbytes`: `ChunkInfo::parse` has checked it is positive.
    len: usize,
    nbytes: i32,
}

/// Reads the data-starts block at `at` and checks every chunk before any is
/// copied. The packed writer lays chunks end to end, each once, so chunks
/// that overlap are refused: besides being malformed, a few thousand starts
/// pointing at one large chunk would otherwise make `unpack` copy it a few
/// thousand times, turning a buffer of a megabyte into gigabytes of memory.
fn chunk_ranges(buf: &[u8], at: usize, nchunks: usize) -> Result<Vec<ChunkRange>> {
    let mut chunks = Vec::with_capacity(nchunks);
    for i in 0..nchunks {
        let pos = get_u64(buf, at + i * 8);
        if pos < PACKED_HEADER_LEN as u64 || pos >= buf.len() as u64 {
            crate::bail!(InvalidHeader, "chunk {i} position {pos} outside the buffer");
        }
        let pos = pos as usize;
        let info = ChunkInfo::parse(&buf[pos..])?;
        let len = info.cbytes as usize;
        if len > buf.len() - pos {
            crate::bail!(
                InvalidHeader,
                "chunk {i} ({} bytes) runs past the buffer",
                info.cbytes
            );
        }
        chunks.push(ChunkRange {
            pos,
            len,
            nbytes: info.nbytes,
        });
    }
    let mut by_pos: Vec<&ChunkRange> = chunks.iter().collect();
    by_pos.sort_unstable_by_key(|c| c.pos);
    for w in by_pos.windows(2) {
        if w[0].pos + w[0].len > w[1].pos {
            crate::bail!(
                InvalidHeader,
                "packed chunks at {} and {} overlap",
                w[0].pos,
                w[1].pos
            );
        }
    }
    Ok(chunks)
}

/// Rebuilds an in-memory super-chunk from a packed buffer.
pub fn unpack(buf: &[u8]) -> Result<SChunk> {
    if buf.len() < PACKED_HEADER_LEN {
        crate::bail!(
            InvalidHeader,
            "packed super-chunk needs {PACKED_HEADER_LEN} header bytes, got {}",
            buf.len()
        );
    }
    if buf[0] != PACKED_VERSION {
        crate::bail!(
            VersionSupport,
            "packed super-chunk version {} not supported",
            buf[0]
        );
    }
    let cbytes = get_u64(buf, 32);
    if cbytes != buf.len() as u64 {
        crate::bail!(
            InvalidHeader,
            "packed cbytes {cbytes} but buffer has {} bytes",
            buf.len()
        );
    }
    let nchunks = get_u64(buf, 16);
    let starts_at = section(buf, 72, "data starts")?;
    match (nchunks, starts_at) {
        (0, _) => {}
        (n, Some(x)) => {
            n.checked_mul(8)
                .and_then(|t| t.checked_add(x as u64))
                .filter(|&e| e <= buf.len() as u64)
                .ok_or_else(|| {
                    crate::err!(InvalidHeader, "{n} data starts do not fit in the buffer")
                })?;
        }
        (n, None) => crate::bail!(InvalidHeader, "{n} chunks but no data-starts block"),
    };
    let cparams = CParams {
        compcode: u8::try_from(u16::from_le_bytes([buf[4], buf[5]]))
            .map_err(|_| crate::err!(InvalidHeader, "bad codec"))?,
        clevel: u8::try_from(u16::from_le_bytes([buf[6], buf[7]]))
            .ok()
            .filter(|&c| c <= 9)
            .ok_or_else(|| crate::err!(InvalidHeader, "bad clevel"))?,
        filters: bits_to_filters(u16::from_le_bytes([buf[8], buf[9]])),
        typesize: i32::from(buf[1].max(1)),
        ..CParams::default()
    };
    let mut s = SChunk::new(Storage::in_memory(cparams))?;
    if let Some(p) = section(buf, 56, "metadata")? {
        s.metalayers = trailer::decode(&buf[p..])?;
        if s.metalayers.len() > crate::frame::header::MAX_METALAYERS {
            crate::bail!(InvalidHeader, "too many metalayers in packed buffer");
        }
    }
    if let Some(p) = section(buf, 64, "userdata")? {
        s.vlmetalayers = trailer::decode(&buf[p..])?;
    }
    let chunks = match starts_at {
        Some(x) => chunk_ranges(buf, x, nchunks as usize)?,
        None => Vec::new(),
    };
    let uncompressed: i64 = chunks
        .iter()
        .map(|c| i64::from(c.nbytes) - c.len as i64)
        .sum();
    let nbytes = get_u64(buf, 24);
    if nbytes as i64 != buf.len() as i64 + uncompressed {
        crate::bail!(
            InvalidHeader,
            "packed nbytes {nbytes} does not match the chunks"
        );
    }
    for c in &chunks {
        s.append_chunk(&buf[c.pos..c.pos + c.len])?;
    }
    let chunksize = u32::from_le_bytes([buf[12], buf[13], buf[14], buf[15]]);
    if nchunks > 0 && chunksize as i64 != i64::from(s.chunksize()) {
        crate::bail!(
            InvalidHeader,
            "packed chunksize {chunksize} does not match the chunks"
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SChunk {
        let mut s = SChunk::new(Storage::in_memory(CParams {
            typesize: 4,
            ..CParams::default()
        }))
        .unwrap();
        s.meta_add("m", b"abc").unwrap();
        s.vlmeta_add("v", b"hello", None).unwrap();
        for i in 0..3u32 {
            let data: Vec<u8> = (0..100u32).flat_map(|x| (x * i).to_le_bytes()).collect();
            s.append_buffer(&data).unwrap();
        }
        s
    }

    #[test]
    fn round_trip() {
        let mut s = sample();
        let p = pack(&mut s).unwrap();
        assert_eq!(p[0], PACKED_VERSION);
        assert_eq!(get_u64(&p, 16), 3);
        assert_eq!(get_u64(&p, 32), p.len() as u64);
        let mut u = unpack(&p).unwrap();
        assert_eq!(u.nchunks(), 3);
        assert_eq!(u.typesize(), 4);
        assert_eq!(u.chunksize(), 400);
        assert_eq!(u.meta_get("m").unwrap(), b"abc");
        assert_eq!(u.vlmeta_get("v").unwrap(), b"hello");
        for i in 0..3 {
            assert_eq!(u.get_chunk(i).unwrap(), s.get_chunk(i).unwrap());
        }
        assert_eq!(pack(&mut u).unwrap(), p);
    }

    #[test]
    fn empty_round_trip() {
        let mut s = SChunk::new(Storage::in_memory(CParams::default())).unwrap();
        let p = pack(&mut s).unwrap();
        assert_eq!(p.len(), PACKED_HEADER_LEN);
        assert_eq!(unpack(&p).unwrap().nchunks(), 0);
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut s = sample();
        let p = pack(&mut s).unwrap();
        for cut in [0, 50, 95, 96, 120, p.len() - 1] {
            assert!(unpack(&p[..cut]).is_err(), "cut {cut}");
        }
        let mut bad = p.clone();
        bad[0] = 9;
        assert_eq!(unpack(&bad).unwrap_err().code(), -10);
        let mut bad = p.clone();
        put_u64(&mut bad, 16, u64::MAX / 4);
        assert!(unpack(&bad).is_err());
        let mut bad = p.clone();
        put_u64(&mut bad, PACKED_HEADER_LEN + 8, p.len() as u64 + 10);
        assert!(unpack(&bad).is_err());
        let mut bad = p.clone();
        put_u64(&mut bad, 56, 1 << 40);
        assert!(unpack(&bad).is_err());
        let mut bad = p.clone();
        put_u64(&mut bad, 24, 5);
        assert!(unpack(&bad).is_err());
        let mut bad = p;
        put_u64(&mut bad, 72, 0);
        assert!(unpack(&bad).is_err());
    }

    /// `n` data starts that all point at the one chunk of a packed buffer,
    /// with every size field made consistent with that reading.
    fn one_chunk_listed(n: usize) -> Vec<u8> {
        let mut one = SChunk::new(Storage::in_memory(CParams::default())).unwrap();
        let noise: Vec<u8> = (0..20_000u32)
            .map(|x| (x.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        one.append_buffer(&noise).unwrap();
        let p = pack(&mut one).unwrap();
        let chunk = &p[PACKED_HEADER_LEN + 8..];
        let info = ChunkInfo::parse(chunk).unwrap();
        let at = (PACKED_HEADER_LEN + n * 8) as u64;
        let mut out = p[..PACKED_HEADER_LEN].to_vec();
        for _ in 0..n {
            out.extend_from_slice(&at.to_le_bytes());
        }
        out.extend_from_slice(chunk);
        let total = out.len() as i64;
        // Negative when the chunk is stored (cbytes = nbytes + header).
        let extra = n as i64 * i64::from(info.nbytes - info.cbytes);
        put_u64(&mut out, 16, n as u64);
        put_u64(&mut out, 24, (total + extra) as u64);
        put_u64(&mut out, 32, total as u64);
        out
    }

    #[test]
    fn chunks_listed_twice_or_overlapping_are_refused() {
        // The builder is right: with one start it gives a valid buffer.
        assert_eq!(unpack(&one_chunk_listed(1)).unwrap().nchunks(), 1);
        // 2000 starts on one 20 kB chunk would have been copied into 40 MB.
        for n in [2, 2000] {
            let e = unpack(&one_chunk_listed(n)).unwrap_err();
            assert_eq!(e.code(), -11, "{n} starts: {e}");
            assert!(e.to_string().contains("overlap"), "{e}");
        }
        // Three chunks, the first claiming one byte of the second.
        let mut s = sample();
        let mut p = pack(&mut s).unwrap();
        let first = get_u64(&p, PACKED_HEADER_LEN) as usize;
        let cbytes = u32::from_le_bytes(p[first + 12..first + 16].try_into().unwrap());
        p[first + 12..first + 16].copy_from_slice(&(cbytes + 1).to_le_bytes());
        let e = unpack(&p).unwrap_err();
        assert!(e.to_string().contains("overlap"), "{e}");
    }

    #[test]
    fn unpackable_pipelines_refused() {
        let mut s = SChunk::new(Storage::in_memory(CParams {
            filters: [1, 0, 0, 0, 0, 0],
            ..CParams::default()
        }))
        .unwrap();
        assert!(pack(&mut s).is_err());
        assert_eq!(
            bits_to_filters(filters_to_bits(&[0, 3, 0, 2, 0, 1]).unwrap()),
            [0, 3, 0, 2, 0, 1]
        );
    }
}
