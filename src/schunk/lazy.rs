//! Partial reads of chunks in on-disk frames: only the chunk header, the
//! block starts and the blocks covering the wanted range are read.

use std::borrow::Cow;

use super::engine::BlockSource;
use super::{Backend, SChunk};
use crate::frame::codec::EXTENDED_HEADER_LEN;
use crate::frame::{Frame, Place};
use crate::Result;

/// The lazy-chunk bit of the blosc2 flags byte.
const LAZY_FLAG: u8 = 0x08;

/// Serves block bytes of stored chunk `n` straight from the frame.
struct FrameBlocks<'f> {
    frame: &'f mut Frame,
    n: usize,
    /// Sorted block starts plus the chunk end, to bound each block.
    bounds: Vec<u32>,
    buf: Vec<u8>,
}

impl BlockSource for FrameBlocks<'_> {
    fn block(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
    ) -> Result<Cow<'_, [u8]>> {
        let len = if nblock == usize::MAX {
            let mut sz = [0u8; 4];
            self.frame.read_stored(self.n, u64::from(offset), &mut sz)?;
            let d = i32::from_le_bytes(sz);
            usize::try_from(d).map_err(|_| crate::err!(Data, "negative dictionary size {d}"))? + 4
        } else if let Some(l) = len_hint {
            l
        } else {
            let end = self
                .bounds
                .iter()
                .copied()
                .find(|&b| b > offset)
                .unwrap_or(offset);
            (end - offset) as usize
        };
        self.buf.resize(len, 0);
        self.frame
            .read_stored(self.n, u64::from(offset), &mut self.buf)?;
        Ok(Cow::Borrowed(&self.buf))
    }
}

impl SChunk {
    fn disk_frame(&mut self) -> Option<&mut Frame> {
        match &mut self.backend {
            Backend::Frame(f) if !matches!(f.place(), Place::Memory(_)) => Some(f),
            _ => None,
        }
    }

    /// Header and block starts of stored chunk `n` of an on-disk frame, or
    /// `None` when the chunk has no separate blocks (special, memcpyed,
    /// variable-length blocks) or the frame is in memory.
    pub(super) fn lazy_prefix(&mut self, n: usize) -> Result<Option<Vec<u8>>> {
        let Some(f) = self.disk_frame() else {
            return Ok(None);
        };
        let info = match f.chunk_info(n)? {
            Ok(i) => i,
            Err(_) => return Ok(None),
        };
        if info.special != 0 || info.memcpyed || info.flags2 & 1 != 0 || info.blocksize <= 0 {
            return Ok(None);
        }
        let nblocks = (info.nbytes as usize).div_ceil(info.blocksize as usize);
        let len = EXTENDED_HEADER_LEN + nblocks * 4;
        if len > info.cbytes as usize {
            crate::bail!(
                InvalidHeader,
                "chunk {n}: {nblocks} block starts do not fit in {} bytes",
                info.cbytes
            );
        }
        let mut prefix = vec![0u8; len];
        f.read_stored(n, 0, &mut prefix)?;
        // Mark it lazy (blosc2_flags bit 3), as the reference does, so that
        // decoders know the blocks must be fetched.
        prefix[31] |= LAZY_FLAG;
        Ok(Some(prefix))
    }

    /// Reads bytes `lo..lo+dst.len()` of chunk `n` fetching only the needed
    /// blocks; `None` when that is not possible and the caller must decode
    /// the whole chunk.
    pub(super) fn lazy_range(
        &mut self,
        n: usize,
        lo: usize,
        dst: &mut [u8],
    ) -> Result<Option<usize>> {
        let Some(f) = self.disk_frame() else {
            return Ok(None);
        };
        let info = match f.chunk_info(n)? {
            Ok(i) => i,
            Err(_) => return Ok(None),
        };
        let end = lo
            .checked_add(dst.len())
            .filter(|&e| e <= info.nbytes as usize)
            .ok_or_else(|| {
                crate::err!(
                    InvalidParam,
                    "range {lo}+{} outside chunk {n} ({} bytes)",
                    dst.len(),
                    info.nbytes
                )
            })?;
        if dst.is_empty() {
            return Ok(Some(0));
        }
        if info.memcpyed && info.special == 0 && info.flags2 & 1 == 0 {
            let at = EXTENDED_HEADER_LEN as u64 + lo as u64;
            if at + dst.len() as u64 > info.cbytes as u64 {
                crate::bail!(InvalidHeader, "memcpyed chunk {n} shorter than its nbytes");
            }
            f.read_stored(n, at, dst)?;
            return Ok(Some(dst.len()));
        }
        let Some(prefix) = self.lazy_prefix(n)? else {
            return Ok(None);
        };
        let bs = info.blocksize as usize;
        let nblocks = (info.nbytes as usize).div_ceil(bs);
        let mask: Vec<bool> = (0..nblocks)
            .map(|b| b * bs >= end || (b + 1) * bs <= lo)
            .collect();
        let mut bounds: Vec<u32> = prefix[EXTENDED_HEADER_LEN..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        bounds.push(info.cbytes as u32);
        bounds.sort_unstable();
        let mut tmp = vec![0u8; info.nbytes as usize];
        let Backend::Frame(frame) = &mut self.backend else {
            return Ok(None);
        };
        let mut src = FrameBlocks {
            frame,
            n,
            bounds,
            buf: Vec::new(),
        };
        self.engine
            .decompress_with_source(&prefix, &mut src, &mut tmp, Some(&mask))?;
        dst.copy_from_slice(&tmp[lo..end]);
        Ok(Some(dst.len()))
    }
}
