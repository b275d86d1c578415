//! The blocks of VL-block chunks, each of its own size, decoded one by one.

use super::super::header::ChunkHeader;
use super::block::{BlockJob, DecodePlan};
use super::lazy::{fetch_blocks, lazy_source};
use super::prepared::{rd_i32, Prepared, VlLayout};
use super::{with_worker, Decompressor};

impl Decompressor {
    /// Decodes block `nblock` of a VL-block chunk. A lazy chunk (see
    /// [`Decompressor::decompress`]) has that block read from its frame.
    pub fn decompress_vl_block(&mut self, chunk: &[u8], nblock: usize) -> crate::Result<Vec<u8>> {
        if matches!(ChunkHeader::parse_unchecked_len(chunk), Ok(h) if h.is_lazy() && h.special_code() == 0)
        {
            return self.decompress_lazy_vl_block(chunk, nblock);
        }
        let p = Prepared::new(chunk, false)?;
        let Some(vl) = &p.vl else {
            crate::bail!(InvalidParam, "not a VL-block chunk");
        };
        if nblock >= p.nblocks {
            crate::bail!(InvalidIndex, "block {nblock} of {}", p.nblocks);
        }
        let mut out = vec![0u8; vl.nbytes[nblock]];
        let dp = self.dparams.clone();
        let job = BlockJob {
            nblock,
            bytes: p.block_bytes(nblock)?,
            dref: None,
            tid: 0,
            want: 0..out.len(),
        };
        with_worker(|w| DecodePlan::new(&p, &dp).decode_block(w, &job, &mut out))?;
        Ok(out)
    }

    /// [`Decompressor::decompress_vl_block`] for a lazy chunk: the block's
    /// compressed size comes from the lazy trailer, its bytes (and the
    /// dictionary, if any) from the frame of the super-chunk the parameters
    /// name, its size from the block's own first bytes, as the reference
    /// reads them. A trailer cut short is `ReadBuffer`; a block too short
    /// to hold its size, `InvalidHeader`.
    fn decompress_lazy_vl_block(&mut self, chunk: &[u8], nblock: usize) -> crate::Result<Vec<u8>> {
        let mut p = Prepared::new(chunk, true)?;
        if !p.h.vl_blocks() {
            crate::bail!(InvalidParam, "not a VL-block chunk");
        }
        if nblock >= p.nblocks {
            crate::bail!(InvalidIndex, "block {nblock} of {}", p.nblocks);
        }
        // Lazy trailer: nchunk (i32), offset (i64), then one csize per block,
        // all of it within the bytes given (as every decode of a lazy VL
        // chunk requires in the reference).
        if chunk.len() < p.bstarts_end + 12 + 4 * p.nblocks {
            crate::bail!(ReadBuffer, "the lazy trailer runs past the chunk");
        }
        let at = p.bstarts_end + 12 + 4 * nblock;
        let Some(csize) = chunk.get(at..at + 4) else {
            crate::bail!(InvalidHeader, "the lazy trailer runs past the chunk");
        };
        let csize = i32::from_le_bytes([csize[0], csize[1], csize[2], csize[3]]);
        if csize < 4 {
            crate::bail!(
                InvalidHeader,
                "lazy VL block {nblock} has {csize} compressed bytes, too few for its size"
            );
        }
        if p.bstart(nblock)? < 0 {
            crate::bail!(
                InvalidHeader,
                "lazy VL block {nblock} starts before the chunk"
            );
        }
        let Some(mut source) = lazy_source(&self.dparams, &p.h, chunk)? else {
            crate::bail!(InvalidParam, "lazy chunk needs an associated super-chunk");
        };
        let fetched = fetch_blocks(&mut p, chunk, &mut *source, nblock + 1, |j| j == nblock)?;
        let dp = self.dparams.clone();
        let result = (|| {
            let Some(bytes) = fetched.block(nblock) else {
                crate::bail!(ReadBuffer, "block {nblock} was not fetched");
            };
            let nb = rd_i32(bytes, 0)?;
            if nb <= 0 || nb as usize > p.h.nbytes() {
                crate::bail!(InvalidHeader, "invalid VL-block size {nb}");
            }
            let nb = nb as usize;
            // A layout where only this block is known: it is all that is decoded.
            let n = p.nblocks;
            let mut vl = VlLayout {
                nbytes: vec![0; n],
                offsets: vec![0; n],
                cbytes: vec![0; n],
            };
            vl.nbytes[nblock] = nb;
            vl.cbytes[nblock] = bytes.len();
            p.vl = Some(vl);
            p.blocksize = nb;
            let mut out = crate::mem::zeroed(nb)?;
            let job = BlockJob {
                nblock,
                bytes,
                dref: None,
                tid: 0,
                want: 0..nb,
            };
            with_worker(|w| DecodePlan::new(&p, &dp).decode_block(w, &job, &mut out))?;
            Ok(out)
        })();
        fetched.recycle();
        result
    }

    /// Decodes every block of a VL-block chunk, one buffer per block.
    pub fn decompress_vl(&mut self, chunk: &[u8]) -> crate::Result<Vec<Vec<u8>>> {
        let p = Prepared::new(chunk, false)?;
        if p.vl.is_none() {
            crate::bail!(InvalidParam, "not a VL-block chunk");
        }
        (0..p.nblocks)
            .map(|j| self.decompress_vl_block(chunk, j))
            .collect()
    }
}
