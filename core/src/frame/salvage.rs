//! Salvaging a damaged or truncated contiguous frame.
//!
//! Opening a frame trusts its offsets index and trailer, which sit at the
//! end of the file: the first thing a truncated copy loses. Salvage trusts
//! only the header (it holds the geometry and the parameters) and looks for
//! the chunks themselves: it walks the data section for bytes that parse as
//! a chunk header of the frame's kind and decode cleanly, skipping a byte at
//! a time over damage and a whole chunk at a time over good data.
//!
//! Chunk numbers come from the offsets index when it is still there and
//! decodes, and only for entries that point at a chunk found by the walk;
//! otherwise the chunks found are numbered in the order the data section
//! holds them, which is the order an append-only writer produced. That guess
//! is wrong for frames whose chunks were rewritten out of order, or that held
//! special (zero, NaN, uninitialized) chunks stored as index entries only:
//! those leave no bytes to find.

use super::header::{FrameHeader, FrameType, Metalayer};
use super::offsets::{ChunkLoc, SpecialOffset};
use super::trailer::{self, TRAILER_MINLEN};
use crate::chunk::{make_special, ChunkHeader, DParams, Decompressor, Special};
use crate::ndarray::meta::NdMeta;
use crate::schunk::{SChunk, Storage};
use crate::Result;

/// Most chunks beyond those found that a rebuild fills with zeros.
const MAX_LOST: usize = 1 << 20;

/// What salvage found for one chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SalvagedChunk {
    /// Intact, `len` bytes at `start` of the scanned buffer.
    Stored {
        /// Byte offset of the chunk in the buffer given to [`scan`].
        start: usize,
        /// The chunk's length in bytes (its header's `cbytes`).
        len: usize,
    },
    /// Stored as a special index entry of an index that decoded.
    Special(SpecialOffset),
    /// Not found; `reason` says why.
    Lost {
        /// What was wrong, for a person to read.
        reason: String,
    },
}

/// The result of [`scan`]: the frame's header, one entry per chunk it
/// declares, and what else could be read.
#[derive(Debug, Clone)]
pub struct Salvage {
    /// The frame's header, metalayers included.
    pub header: FrameHeader,
    /// One entry per chunk the header declares, in chunk order.
    pub chunks: Vec<SalvagedChunk>,
    /// The vlmetalayers (compressed, as stored), when the trailer is intact.
    pub vlmetalayers: Option<Vec<Metalayer>>,
    /// Whether chunk numbers came from the frame's own offsets index.
    pub index_used: bool,
    /// Intact chunks that no chunk number could be given to.
    pub unplaced: usize,
}

impl Salvage {
    /// How many chunks were lost.
    pub fn lost(&self) -> usize {
        self.chunks
            .iter()
            .filter(|c| matches!(c, SalvagedChunk::Lost { .. }))
            .count()
    }
}

/// Chunks the frame declares: from its b2nd (or caterva) metalayer when it has
/// one, else from its sizes; `None` when neither says.
fn declared_nchunks(h: &FrameHeader) -> Option<usize> {
    let meta = h
        .metalayers
        .iter()
        .find(|m| m.name == "b2nd" || m.name == "caterva")
        .and_then(|m| NdMeta::from_meta_bytes(&m.content, h.typesize).ok());
    if let Some(m) = meta {
        let mut n: usize = 1;
        for (&s, &c) in m.shape.iter().zip(&m.chunkshape) {
            if c <= 0 {
                return if s == 0 { Some(0) } else { None };
            }
            let per = usize::try_from((s + i64::from(c) - 1) / i64::from(c)).ok()?;
            n = n.checked_mul(per)?;
        }
        return Some(n);
    }
    if h.chunksize > 0 && h.nbytes >= 0 {
        let cs = i64::from(h.chunksize);
        return usize::try_from(h.nbytes / cs + i64::from(h.nbytes % cs != 0)).ok();
    }
    None
}

/// Uncompressed size of chunk `n` of `count` declared by `h` (the last may be
/// short), when the chunk size is fixed.
fn chunk_nbytes(h: &FrameHeader, n: usize, count: usize) -> Option<usize> {
    if h.chunksize <= 0 {
        return None;
    }
    let cs = usize::try_from(h.chunksize).ok()?;
    let total = usize::try_from(h.nbytes).ok()?;
    if n + 1 == count && total % cs != 0 {
        Some(total % cs)
    } else {
        Some(cs)
    }
}

/// Whether `bytes` starts with a chunk of this frame that decodes; its
/// stored length if so.
fn intact_chunk(
    h: &FrameHeader,
    bytes: &[u8],
    dec: &mut Decompressor,
    buf: &mut Vec<u8>,
) -> Option<usize> {
    let ch = ChunkHeader::parse(bytes).ok()?;
    if ch.is_lazy() || ch.cbytes() < 16 {
        return None;
    }
    if h.typesize > 0 && h.typesize <= 255 && ch.typesize() != h.typesize as usize {
        return None;
    }
    if h.chunksize > 0 && ch.nbytes() > h.chunksize as usize {
        return None;
    }
    let chunk = &bytes[..ch.cbytes()];
    buf.clear();
    buf.try_reserve(ch.nbytes()).ok()?;
    buf.resize(ch.nbytes(), 0);
    match dec.decompress(chunk, buf) {
        Ok(n) if n == ch.nbytes() => Some(ch.cbytes()),
        _ => None,
    }
}

/// Start and length of every intact chunk in `data`, in order.
fn walk(h: &FrameHeader, data: &[u8]) -> Vec<(usize, usize)> {
    let mut dec = Decompressor::new(DParams::default());
    let mut buf = Vec::new();
    let mut found = Vec::new();
    let mut pos = 0;
    while pos + 16 <= data.len() {
        match intact_chunk(h, &data[pos..], &mut dec, &mut buf) {
            Some(len) => {
                found.push((pos, len));
                pos += len;
            }
            None => pos += 1,
        }
    }
    found
}

/// The entries of the offsets index at `at`, if it is there, decodes and
/// has `count` entries.
fn read_index(data_and_after: &[u8], count: usize) -> Option<Vec<i64>> {
    let ch = ChunkHeader::parse(data_and_after).ok()?;
    if ch.nbytes() != count.checked_mul(8)? || ch.is_lazy() {
        return None;
    }
    let raw = Decompressor::new(DParams::default())
        .decompress_to_vec(&data_and_after[..ch.cbytes()])
        .ok()?;
    Some(
        raw.chunks_exact(8)
            .map(|e| i64::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]))
            .collect(),
    )
}

/// The vlmetalayers of the trailer, if the frame is whole and its trailer
/// decodes.
fn read_trailer(h: &FrameHeader, frame: &[u8]) -> Option<Vec<Metalayer>> {
    let len = usize::try_from(h.frame_len).ok()?;
    let frame = frame.get(..len)?;
    let tail = frame.get(len.checked_sub(TRAILER_MINLEN)?..)?;
    let tlen = trailer::trailer_len_from_tail(tail, h.frame_len, i64::from(h.header_len)).ok()?;
    trailer::decode(&frame[len - tlen..]).ok()
}

/// Scans `frame`, the bytes of a contiguous frame (possibly damaged or cut
/// short), for its chunks. Fails only when the header itself is unreadable.
pub fn scan(frame: &[u8]) -> Result<Salvage> {
    let header = FrameHeader::decode(frame)?;
    if header.frame_type != FrameType::Contiguous {
        crate::bail!(FrameType, "only contiguous frames can be salvaged");
    }
    let hlen = usize::try_from(header.header_len)
        .map_err(|_| crate::err!(InvalidHeader, "negative header length"))?;
    // The data section ends where the header says; if that is past the end
    // of what is left, everything after the header is scanned.
    let data_end = usize::try_from(header.cbytes)
        .ok()
        .and_then(|c| hlen.checked_add(c))
        .filter(|&e| e <= frame.len())
        .unwrap_or(frame.len());
    let data = &frame[hlen..data_end];
    let found = walk(&header, data);

    let declared = declared_nchunks(&header);
    if let Some(n) = declared {
        // Lost chunks are rebuilt one by one, so a damaged header's count
        // must not turn into an allocation or a loop of billions.
        if n > found.len().saturating_add(MAX_LOST) {
            crate::bail!(
                InvalidHeader,
                "the header declares {n} chunks, {} found: too many to rebuild",
                found.len()
            );
        }
    }
    let index = declared.and_then(|n| read_index(&frame[data_end..], n));
    let vlmetalayers = read_trailer(&header, frame);
    let index_used = index.is_some();
    let mut placed = vec![false; found.len()];
    let chunks: Vec<SalvagedChunk> = match (&index, declared) {
        (Some(entries), _) => entries
            .iter()
            .map(|&e| match ChunkLoc::decode(e) {
                Ok(ChunkLoc::Special(s)) => SalvagedChunk::Special(s),
                Ok(ChunkLoc::Stored(off)) => {
                    let at = usize::try_from(off).ok();
                    match found.iter().position(|&(s, _)| Some(s) == at) {
                        Some(i) => {
                            placed[i] = true;
                            SalvagedChunk::Stored {
                                start: hlen + found[i].0,
                                len: found[i].1,
                            }
                        }
                        None => SalvagedChunk::Lost {
                            reason: format!("no intact chunk at offset {off}"),
                        },
                    }
                }
                Err(_) => SalvagedChunk::Lost {
                    reason: format!("bad index entry {e:#x}"),
                },
            })
            .collect(),
        (None, count) => {
            let count = count.unwrap_or(found.len());
            (0..count)
                .map(|n| match found.get(n) {
                    Some(&(s, len)) => {
                        placed[n] = true;
                        SalvagedChunk::Stored {
                            start: hlen + s,
                            len,
                        }
                    }
                    None => SalvagedChunk::Lost {
                        reason: "not found in the data section".to_string(),
                    },
                })
                .collect()
        }
    };
    let unplaced = placed.iter().filter(|p| !**p).count();
    Ok(Salvage {
        header,
        chunks,
        vlmetalayers,
        index_used,
        unplaced,
    })
}

/// Writes a new contiguous frame at `path` from `salvage` (made by [`scan`]
/// of `frame`): the header's parameters and metalayers, the vlmetalayers
/// when they were read, the chunks found, and a zero chunk for each lost one.
pub fn rebuild(salvage: &Salvage, frame: &[u8], path: &std::path::Path) -> Result<SChunk> {
    let h = &salvage.header;
    // Built as an in-memory chunk list and written once: appending to a
    // frame rewrites its index per chunk, quadratic in the chunks rebuilt.
    let mut storage = Storage::default();
    let cp = &mut storage.cparams;
    cp.compcode = h.compcode;
    cp.compcode_meta = h.compcode_meta;
    cp.clevel = h.clevel;
    cp.typesize = h.typesize;
    cp.blocksize = h.blocksize;
    cp.splitmode = i32::from(h.splitmode);
    cp.filters = h.filters;
    cp.filters_meta = h.filters_meta;
    cp.use_dict = h.use_dict;
    let cparams = storage.cparams.clone();
    let mut out = SChunk::new(storage)?;
    for m in &h.metalayers {
        out.meta_add(&m.name, &m.content)?;
    }
    if let Some(vl) = &salvage.vlmetalayers {
        let mut dec = Decompressor::new(DParams::default());
        for m in vl {
            let content = dec.decompress_to_vec(&m.content)?;
            out.vlmeta_add(&m.name, &content, Some(&cparams))?;
        }
    }
    let count = salvage.chunks.len();
    let typesize = usize::try_from(h.typesize.max(1)).unwrap_or(1);
    for (n, c) in salvage.chunks.iter().enumerate() {
        let special = |kind: Special| -> Result<Vec<u8>> {
            let nbytes = chunk_nbytes(h, n, count)
                .ok_or_else(|| crate::err!(InvalidHeader, "chunk {n} has no known size to fill"))?;
            make_special(kind, nbytes, typesize, None)
        };
        match c {
            SalvagedChunk::Stored { start, len } => {
                let bytes = frame.get(*start..start + len).ok_or_else(|| {
                    crate::err!(ReadBuffer, "chunk {n} lies outside the scanned bytes")
                })?;
                out.append_chunk(bytes)?;
            }
            SalvagedChunk::Special(SpecialOffset::Zero) | SalvagedChunk::Lost { .. } => {
                out.append_chunk(&special(Special::Zero)?)?;
            }
            SalvagedChunk::Special(SpecialOffset::Nan) => {
                out.append_chunk(&special(Special::Nan)?)?;
            }
            SalvagedChunk::Special(SpecialOffset::Uninit) => {
                out.append_chunk(&special(Special::Uninit)?)?;
            }
        }
    }
    out.to_file(path)?;
    drop(out);
    SChunk::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schunk::CParams;

    /// A frame of `n` chunks of 1000 i32s each, chunk i holding i*1000.. .
    fn frame(n: i32) -> (Vec<u8>, Vec<Vec<u8>>) {
        let cparams = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut sc = SChunk::new(Storage {
            contiguous: true,
            cparams,
            ..Storage::default()
        })
        .unwrap();
        let mut raw = Vec::new();
        for i in 0..n {
            let data: Vec<u8> = (i * 1000..(i + 1) * 1000)
                .flat_map(|v| v.to_le_bytes())
                .collect();
            sc.append_buffer(&data).unwrap();
            raw.push(data);
        }
        sc.vlmeta_add("note", b"hello", None).unwrap();
        (sc.to_buffer().unwrap(), raw)
    }

    #[test]
    fn an_intact_frame_gives_every_chunk_through_its_index() {
        let (bytes, _) = frame(5);
        let s = scan(&bytes).unwrap();
        assert!(s.index_used);
        assert_eq!(s.lost(), 0);
        assert_eq!(s.unplaced, 0);
        assert_eq!(s.chunks.len(), 5);
        assert!(s.vlmetalayers.is_some());
    }

    #[test]
    fn a_truncated_frame_gives_the_chunks_before_the_cut() {
        let (bytes, raw) = frame(10);
        let cut = &bytes[..bytes.len() * 7 / 10];
        let s = scan(cut).unwrap();
        assert!(!s.index_used);
        assert!(s.vlmetalayers.is_none());
        assert_eq!(s.chunks.len(), 10);
        let mut dec = Decompressor::new(DParams::default());
        let mut whole = 0;
        for (n, c) in s.chunks.iter().enumerate() {
            if let SalvagedChunk::Stored { start, len } = c {
                assert!(start + len <= cut.len());
                assert_eq!(
                    dec.decompress_to_vec(&cut[*start..start + len]).unwrap(),
                    raw[n]
                );
                whole += 1;
            }
        }
        assert!(whole >= 5, "only {whole} chunks survived");
        assert_eq!(s.lost(), 10 - whole);
    }

    #[test]
    fn damage_in_one_chunk_loses_only_that_chunk() {
        let (mut bytes, _) = frame(4);
        let s = scan(&bytes).unwrap();
        let SalvagedChunk::Stored { start, .. } = s.chunks[1] else {
            panic!("chunk 1 not stored")
        };
        // The block offsets right after the chunk header: no decoder gets past them.
        for b in &mut bytes[start + 32..start + 48] {
            *b = 0xff;
        }
        let s = scan(&bytes).unwrap();
        assert_eq!(s.lost(), 1);
        assert!(matches!(s.chunks[1], SalvagedChunk::Lost { .. }));
    }

    #[test]
    fn rebuilt_frame_opens_with_zeros_for_lost_chunks() {
        let (bytes, raw) = frame(10);
        let cut = &bytes[..bytes.len() * 7 / 10];
        let s = scan(cut).unwrap();
        let dir = std::env::temp_dir().join(format!("b2nd-salvage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.b2frame");
        drop(rebuild(&s, cut, &path).unwrap());
        let sc = SChunk::open(&path).unwrap();
        assert_eq!(sc.nchunks(), 10);
        for (n, c) in s.chunks.iter().enumerate() {
            let mut out = vec![1u8; 4000];
            sc.decompress_chunk(n as i64, &mut out).unwrap();
            match c {
                SalvagedChunk::Stored { .. } => assert_eq!(out, raw[n]),
                _ => assert!(out.iter().all(|&b| b == 0)),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn garbage_is_refused() {
        assert!(scan(b"not a frame at all, just some bytes here, more than 87 of them..........................").is_err());
        assert!(scan(&[]).is_err());
    }
}
