//! Lazy chunks of on-disk frames: a chunk handed out with only its header
//! and block starts, plus a trailer saying where its blocks are, so that a
//! decoder reads just the blocks it needs.
//!
//! The layout is the reference's (`frame_get_lazychunk`), so C code that
//! passes a lazy chunk to `blosc2_decompress_ctx` with the super-chunk's
//! context works as there:
//!
//! ```text
//! | 32-byte header, lazy bit (0x08) set in blosc2_flags (byte 31)    |
//! | nblocks x int32 block starts (zeros for memcpyed chunks)          |
//! | int32 nchunk  (contiguous: chunk number; sparse: chunk file id)   |
//! | int64 offset  (contiguous: chunk position in the frame; sparse: id)|
//! | nblocks x int32 compressed size of each block                     |
//! ```
//!
//! Block sizes come from the sorted block starts (blocks may be stored out
//! of order by multi-threaded compression); the last one ends at `cbytes`.

use std::borrow::Cow;
use std::path::PathBuf;

use super::engine::BlockSource;
use super::{Backend, SChunk};
use crate::chunk::BlockNeeds;
use crate::chunk::Decompressor;
use crate::frame::codec::{ChunkInfo, EXTENDED_HEADER_LEN};
use crate::frame::io::{read_exact_at, IoRef, OpenMode};
use crate::frame::{Frame, Place};
use crate::Result;

/// The lazy-chunk bit of the blosc2 flags byte.
const LAZY_FLAG: u8 = 0x08;
/// Bytes of the lazy trailer before the block sizes: nchunk + offset.
const TRAILER_HEAD: usize = 4 + 8;

/// Number of blocks of a chunk, counted as the reference does for lazy chunks.
fn nblocks_of(info: &ChunkInfo) -> Result<usize> {
    let n = if info.flags2 & 1 != 0 {
        info.blocksize as usize
    } else if info.blocksize > 0 {
        (info.nbytes as usize).div_ceil(info.blocksize as usize)
    } else {
        0
    };
    if n == 0 || n > i32::MAX as usize / 4 {
        crate::bail!(InvalidHeader, "chunk has an invalid block count ({n})");
    }
    Ok(n)
}

/// What the lazy trailer of a chunk says.
pub(crate) struct LazyTrailer {
    /// Chunk number (contiguous) or chunk file id (sparse).
    pub nchunk: i32,
    /// Chunk position from the frame start (contiguous) or file id (sparse).
    pub offset: i64,
    /// Compressed size of each block.
    pub csizes: Vec<u32>,
    /// `cbytes` of the whole chunk.
    pub cbytes: u32,
}

impl LazyTrailer {
    /// Reads the trailer of a lazy chunk, checking every size against the
    /// bytes given.
    pub(crate) fn parse(chunk: &[u8]) -> Result<LazyTrailer> {
        let info = ChunkInfo::parse(chunk)?;
        if !info.extended {
            crate::bail!(InvalidHeader, "a lazy chunk needs an extended header");
        }
        let nblocks = nblocks_of(&info)?;
        let at = EXTENDED_HEADER_LEN + 4 * nblocks;
        let end = at + TRAILER_HEAD + 4 * nblocks;
        let Some(t) = chunk.get(at..end) else {
            crate::bail!(
                ReadBuffer,
                "lazy trailer needs {end} bytes, the chunk has {}",
                chunk.len()
            );
        };
        let rd4 = |p: usize| [t[p], t[p + 1], t[p + 2], t[p + 3]];
        let mut off = [0u8; 8];
        off.copy_from_slice(&t[4..12]);
        let csizes = t[TRAILER_HEAD..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(LazyTrailer {
            nchunk: i32::from_le_bytes(rd4(0)),
            offset: i64::from_le_bytes(off),
            csizes,
            cbytes: info.cbytes as u32,
        })
    }
}

/// Serves the blocks of one lazy chunk through `read(position_in_chunk, buf)`,
/// sized by the lazy trailer. Each block is read straight into the buffer
/// the decoder passes to `block_into`, which it reuses from call to call.
pub(crate) struct LazyBlocks<R> {
    read: R,
    csizes: Vec<u32>,
    cbytes: u32,
}

impl<R: FnMut(u64, &mut [u8]) -> Result<()>> LazyBlocks<R> {
    pub(crate) fn new(trailer: LazyTrailer, read: R) -> Self {
        LazyBlocks {
            read,
            csizes: trailer.csizes,
            cbytes: trailer.cbytes,
        }
    }
}

impl<R: FnMut(u64, &mut [u8]) -> Result<()>> BlockSource for LazyBlocks<R> {
    fn block(&mut self, nblock: usize, offset: u32, hint: Option<usize>) -> Result<Cow<'_, [u8]>> {
        let mut buf = Vec::new();
        self.block_into(nblock, offset, hint, &mut buf, 0)?;
        Ok(Cow::Owned(buf))
    }

    fn block_into(
        &mut self,
        nblock: usize,
        offset: u32,
        _hint: Option<usize>,
        buf: &mut Vec<u8>,
        at: usize,
    ) -> Result<usize> {
        let len = if nblock == usize::MAX {
            // The dictionary section: its int32 size, then the bytes.
            let mut sz = [0u8; 4];
            (self.read)(u64::from(offset), &mut sz)?;
            let d = i32::from_le_bytes(sz);
            usize::try_from(d)
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(|| crate::err!(Data, "bad dictionary size {d} in lazy chunk"))?
                + 4
        } else {
            let c = *self.csizes.get(nblock).ok_or_else(|| {
                crate::err!(InvalidHeader, "block {nblock} not in the lazy trailer")
            })?;
            if c == 0 {
                crate::bail!(InvalidHeader, "lazy trailer gives block {nblock} no bytes");
            }
            c as usize
        };
        if u64::from(offset) + len as u64 > u64::from(self.cbytes) {
            crate::bail!(
                InvalidHeader,
                "block {nblock} ({len} bytes at {offset}) runs past the chunk ({} bytes)",
                self.cbytes
            );
        }
        crate::mem::grow(buf, at + len)?;
        (self.read)(u64::from(offset), &mut buf[at..at + len])?;
        Ok(len)
    }

    fn read_raw(&mut self, offset: usize, dst: &mut [u8]) -> Result<bool> {
        if offset as u64 + dst.len() as u64 > u64::from(self.cbytes) {
            crate::bail!(
                InvalidHeader,
                "{} bytes at {offset} run past the chunk ({} bytes)",
                dst.len(),
                self.cbytes
            );
        }
        (self.read)(offset as u64, dst)?;
        Ok(true)
    }
}

/// Where the frame of a super-chunk lives, for reading lazy blocks through
/// a handle of its own (from any thread: it holds no part of the frame).
pub(super) struct FrameSite {
    io: IoRef,
    path: PathBuf,
    base: u64,
    sparse: bool,
}

impl SChunk {
    fn disk_frame(&self) -> Option<&Frame> {
        match &self.backend {
            Backend::Frame(f) if !matches!(f.place(), Place::Memory(_)) => Some(f),
            _ => None,
        }
    }

    /// The reference's lazy chunk for stored chunk `n` of an on-disk frame
    /// (see the module notes), or `None` when the chunk is handed out whole:
    /// in-memory storage, special offsets, special chunks.
    pub(super) fn lazy_chunk(&self, n: usize) -> Result<Option<Vec<u8>>> {
        let Some(f) = self.disk_frame() else {
            return Ok(None);
        };
        // One operation: header and block starts through one file handle.
        f.read_op(|f| {
            let Ok((info, header)) = f.chunk_header(n)? else {
                return Ok(None);
            };
            if info.special != 0 {
                return Ok(None);
            }
            build_lazy_chunk(f, n, &info, &header).map(Some)
        })
    }

    /// Reads bytes `lo..lo+dst.len()` of chunk `n` fetching only the needed
    /// blocks; `None` when that is not possible and the caller must decode
    /// the whole chunk.
    pub(super) fn lazy_range(&self, n: usize, lo: usize, dst: &mut [u8]) -> Result<Option<usize>> {
        let Some(f) = self.disk_frame() else {
            return Ok(None);
        };
        let (info, header) = match f.chunk_header(n)? {
            Ok(h) => h,
            Err(_) => return Ok(None),
        };
        if lo
            .checked_add(dst.len())
            .map_or(true, |e| e > info.nbytes as usize)
        {
            crate::bail!(
                InvalidParam,
                "range {lo}+{} outside chunk {n} ({} bytes)",
                dst.len(),
                info.nbytes
            );
        }
        if dst.is_empty() {
            return Ok(Some(0));
        }
        if info.flags2 & 1 != 0 || info.special != 0 {
            return Ok(None);
        }
        // The header just read serves the lazy chunk too. (A stored chunk's
        // range is then one read into `dst`: `BlockSource::read_raw`.)
        let lazy = build_lazy_chunk(f, n, &info, &header)?;
        let len = dst.len();
        let done = self.with_lazy_blocks(n, &lazy, |dec, src| {
            dec.decompress_range_with_source(&lazy, src, lo, dst)
        })?;
        Ok(done.map(|()| len))
    }

    /// Runs `decode` with this super-chunk's engine and a source of the
    /// blocks of stored chunk `n` of the on-disk frame, whose lazy chunk is
    /// `lazy`; `None` when the super-chunk has no frame.
    fn with_lazy_blocks<T>(
        &self,
        n: usize,
        lazy: &[u8],
        decode: impl FnOnce(&mut Decompressor, &mut dyn BlockSource) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut dec = self.engine.decoder(n as i64);
        if self.frame_site().is_some_and(|site| site.sparse) {
            // A sparse chunk is a file of its own: opened once here for all
            // the blocks, where the frame opens it on every read.
            let mut src = self.lazy_block_source(lazy)?;
            return decode(&mut dec, &mut *src).map(Some);
        }
        let trailer = LazyTrailer::parse(lazy)?;
        let Backend::Frame(frame) = &self.backend else {
            return Ok(None);
        };
        // One operation: every block through one file handle.
        frame.read_op(|frame| {
            let mut src = LazyBlocks::new(trailer, |pos, buf: &mut [u8]| {
                frame.read_stored(n, pos, buf)
            });
            decode(&mut dec, &mut src).map(Some)
        })
    }

    /// Decodes into `dst` what `needs` asks for of chunk `n` (see
    /// [`BlockNeeds`]), reading from an on-disk frame the chunk's block
    /// starts once and then only the blocks needed. `None` when the chunk is
    /// not read that way (in-memory storage, special chunks) or its blocks
    /// are not the ones `needs` counts or `dst` holds: the caller then
    /// decodes it whole.
    pub fn decompress_blocks(
        &self,
        n: i64,
        dst: &mut [u8],
        needs: &BlockNeeds,
    ) -> Result<Option<usize>> {
        let idx = self.check_index(n)?;
        let Some(lazy) = self.lazy_chunk(idx)? else {
            return Ok(None);
        };
        let info = ChunkInfo::parse(&lazy)?;
        let fits = info.flags2 & 1 == 0
            && info.nbytes as usize == dst.len()
            && nblocks_of(&info)? == needs.len();
        if !fits {
            return Ok(None);
        }
        self.with_lazy_blocks(idx, &lazy, |dec, src| {
            dec.decompress_with_source_needs(&lazy, src, dst, Some(needs))
        })
    }

    pub(super) fn frame_site(&self) -> Option<FrameSite> {
        let Backend::Frame(f) = &self.backend else {
            return None;
        };
        match f.place() {
            Place::Memory(_) => None,
            Place::File { io, path, offset } => Some(FrameSite {
                io: io.clone(),
                path: path.clone(),
                base: *offset,
                sparse: false,
            }),
            Place::Sparse { io, dir } => Some(FrameSite {
                io: io.clone(),
                path: dir.clone(),
                base: 0,
                sparse: true,
            }),
        }
    }

    /// A block source for a lazy chunk of this super-chunk's frame (one made
    /// by [`SChunk::get_lazychunk`]), reading through a file handle of its
    /// own, so it needs no access to the super-chunk while it decodes.
    pub fn lazy_block_source(&self, lazy_chunk: &[u8]) -> Result<Box<dyn BlockSource>> {
        let site = self.frame_site().ok_or_else(|| {
            crate::err!(
                InvalidParam,
                "a lazy chunk needs a super-chunk with an on-disk frame"
            )
        })?;
        site.block_source(lazy_chunk)
    }
}

impl FrameSite {
    /// A block source for a lazy chunk of this frame, reading through a file
    /// handle of its own, opened now and closed when the source goes.
    pub(super) fn block_source(&self, lazy_chunk: &[u8]) -> Result<Box<dyn BlockSource>> {
        let site = self;
        let t = LazyTrailer::parse(lazy_chunk)?;
        let (path, start) = if site.sparse {
            let id = i64::from(t.nchunk);
            (
                crate::frame::store::sparse_chunk_path(&site.path, id)?,
                0u64,
            )
        } else {
            let off = u64::try_from(t.offset)
                .ok()
                .and_then(|o| o.checked_add(site.base))
                .ok_or_else(|| {
                    crate::err!(
                        InvalidHeader,
                        "bad chunk offset {} in lazy trailer",
                        t.offset
                    )
                })?;
            (site.path.clone(), off)
        };
        let mut file = site.io.open(&path, OpenMode::Read)?;
        let read = move |pos: u64, buf: &mut [u8]| {
            let at = start
                .checked_add(pos)
                .ok_or_else(|| crate::err!(ReadBuffer, "lazy block position overflows"))?;
            read_exact_at(file.as_mut(), at, buf, "lazy block")
        };
        Ok(Box::new(LazyBlocks::new(t, read)))
    }
}

/// The lazy chunk of stored, non-special chunk `n` of `f`, whose header was
/// read as `info` and `header` (see the module notes).
fn build_lazy_chunk(
    f: &Frame,
    n: usize,
    info: &ChunkInfo,
    header: &[u8; EXTENDED_HEADER_LEN],
) -> Result<Vec<u8>> {
    // The block sizes below come from `cbytes`: it must not claim more
    // than the storage holds, or a read would be sized by the claim.
    let sparse_file = f.check_stored_len(n, info.cbytes as usize)?;
    // The lazy chunk takes 8 bytes per block, counted from `nbytes`; a
    // stored chunk's `nbytes` must be what it holds (as the decoder also
    // requires), or 320 bytes claiming 1 GiB in small blocks ask for a
    // lazy chunk of 165 MB (found by the sparse_dir fuzzer).
    if info.memcpyed
        && i64::from(info.nbytes) + EXTENDED_HEADER_LEN as i64 != i64::from(info.cbytes)
    {
        crate::bail!(
            InvalidHeader,
            "chunk {n} is stored uncompressed in {} bytes but claims {} bytes of data",
            info.cbytes,
            info.nbytes
        );
    }
    // A VL-block chunk counts its blocks in its `blocksize` field, which
    // only the block starts it stores bound. A memcpyed one stores none, and
    // the decoder refuses it; its lazy chunk would take 8 bytes per claimed
    // block, up to 4 GiB (the sparse_dir fuzzer found a 764-byte input whose
    // chunks asked for megabytes each).
    if info.memcpyed && info.flags2 & 1 != 0 {
        crate::bail!(
            InvalidHeader,
            "chunk {n} claims VL blocks but is stored uncompressed (memcpyed), which no writer makes"
        );
    }
    let nblocks = nblocks_of(info)?;
    let bstarts_len = 4 * nblocks;
    if !info.memcpyed && EXTENDED_HEADER_LEN + bstarts_len > info.cbytes as usize {
        crate::bail!(
            InvalidHeader,
            "chunk {n}: {nblocks} block starts do not fit in {} bytes",
            info.cbytes
        );
    }
    let trailer_at = EXTENDED_HEADER_LEN + bstarts_len;
    let mut lazy = crate::mem::zeroed(trailer_at + TRAILER_HEAD + 4 * nblocks)?;
    lazy[..EXTENDED_HEADER_LEN].copy_from_slice(header);
    if !info.memcpyed {
        let at = EXTENDED_HEADER_LEN as u64;
        let starts = &mut lazy[EXTENDED_HEADER_LEN..trailer_at];
        match sparse_file {
            // The chunk's own file, already open for the check above.
            Some(mut file) => read_exact_at(file.as_mut(), at, starts, "block starts")?,
            None => f.read_stored(n, at, starts)?,
        }
    }
    lazy[31] |= LAZY_FLAG;
    let (nchunk, offset) = f.lazy_location(n)?;
    lazy[trailer_at..trailer_at + 4].copy_from_slice(&nchunk.to_le_bytes());
    lazy[trailer_at + 4..trailer_at + 12].copy_from_slice(&offset.to_le_bytes());
    let csizes = block_csizes(info, &lazy[EXTENDED_HEADER_LEN..trailer_at], nblocks)?;
    for (dst, c) in lazy[trailer_at + TRAILER_HEAD..]
        .chunks_exact_mut(4)
        .zip(csizes)
    {
        dst.copy_from_slice(&c.to_le_bytes());
    }
    Ok(lazy)
}

/// Compressed size of each block: from the sorted block starts, the last
/// one ending at `cbytes`; memcpyed chunks have plain `blocksize` blocks.
fn block_csizes(info: &ChunkInfo, bstarts: &[u8], nblocks: usize) -> Result<Vec<u32>> {
    let cbytes = info.cbytes as u32;
    if info.memcpyed {
        let bs = info.blocksize as u32;
        let left = info.nbytes as u32 % bs.max(1);
        let mut v = vec![bs; nblocks];
        if left != 0 {
            v[nblocks - 1] = left;
        }
        return Ok(v);
    }
    let starts: Vec<u32> = bstarts
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut order: Vec<usize> = (0..nblocks).collect();
    order.sort_by_key(|&i| starts[i]);
    let mut csizes = vec![0u32; nblocks];
    for (k, &i) in order.iter().enumerate() {
        let next = order.get(k + 1).map_or(cbytes, |&j| starts[j]);
        csizes[i] = next.checked_sub(starts[i]).ok_or_else(|| {
            crate::err!(
                InvalidHeader,
                "block start {} past the chunk end",
                starts[i]
            )
        })?;
    }
    Ok(csizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csizes_follow_sorted_starts() {
        let info = ChunkInfo {
            nbytes: 300,
            cbytes: 100,
            blocksize: 100,
            typesize: 1,
            special: 0,
            flags2: 0,
            extended: true,
            memcpyed: false,
        };
        let starts: Vec<u8> = [70u32, 44, 60]
            .iter()
            .flat_map(|s| s.to_le_bytes())
            .collect();
        assert_eq!(block_csizes(&info, &starts, 3).unwrap(), vec![30, 16, 10]);
        let bad: Vec<u8> = [70u32, 44, 160]
            .iter()
            .flat_map(|s| s.to_le_bytes())
            .collect();
        assert!(block_csizes(&info, &bad, 3).is_err());
        let memcpyed = ChunkInfo {
            memcpyed: true,
            nbytes: 250,
            ..info
        };
        assert_eq!(block_csizes(&memcpyed, &[], 3).unwrap(), vec![100, 100, 50]);
    }

    #[test]
    fn trailer_must_fit() {
        let mut c = vec![0u8; 32 + 8 + 12 + 8];
        c[0] = 5;
        c[2] = 0x05;
        c[3] = 1;
        c[4..8].copy_from_slice(&200i32.to_le_bytes());
        c[8..12].copy_from_slice(&100i32.to_le_bytes());
        c[12..16].copy_from_slice(&500i32.to_le_bytes());
        let t = LazyTrailer::parse(&c).unwrap();
        assert_eq!(t.csizes.len(), 2);
        assert!(LazyTrailer::parse(&c[..c.len() - 1]).is_err());
    }
}
