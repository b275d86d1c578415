//! Byte and item ranges of a chunk: only the blocks holding them are decoded.

use super::super::header::ChunkHeader;
use super::super::Special;
use super::block::{BlockJob, DecodePlan};
use super::lazy::{bytes_of, lazy_source, Fetched};
use super::prepared::Prepared;
use super::{with_worker, Decompressor};

impl Decompressor {
    /// Decodes `nitems` items starting at item `start` (items of the chunk's
    /// typesize) into `dst`, decoding only the blocks that hold them.
    pub fn getitem(
        &mut self,
        chunk: &[u8],
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> crate::Result<usize> {
        let h = ChunkHeader::parse_unchecked_len(chunk)?;
        self.getitem_parsed(&h, chunk, start, nitems, dst)
    }

    /// [`Decompressor::getitem`] of a chunk whose header `h` the caller has
    /// parsed from it.
    pub fn getitem_parsed(
        &mut self,
        h: &ChunkHeader,
        chunk: &[u8],
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> crate::Result<usize> {
        // A stored chunk: its items are where they lie, past the header.
        if let Some(body) = self.stored_body(h, chunk)? {
            let len = items_len(h, start, nitems, dst.len())?;
            if len > 0 {
                let lo = start * h.typesize();
                dst[..len].copy_from_slice(&body[lo..lo + len]);
            }
            return Ok(len);
        }
        // A lazy chunk: only the blocks holding the items (and block 0
        // under DELTA) are fetched from its source.
        let mut src = lazy_source(&self.dparams, h, chunk)?;
        let derived = self.derived.get(h);
        let mut p = Prepared::with_derived(h, chunk, src.is_some(), derived)?;
        if p.h.vl_blocks() {
            crate::bail!(InvalidParam, "getitem does not apply to VL-block chunks");
        }
        let len = items_len(&p.h, start, nitems, dst.len())?;
        if len == 0 {
            return Ok(0);
        }
        let lo = start * p.h.typesize();
        let dst = &mut dst[..len];
        match src.as_deref_mut() {
            Some(src) => self.range_from_source(&mut p, chunk, src, lo, dst)?,
            None => self.decode_range(&p, None, lo, dst)?,
        }
        Ok(len)
    }

    /// Decodes bytes `lo..lo + dst.len()` of `chunk`, which need not be
    /// whole items, decoding only the blocks that hold them (a lazy chunk
    /// fetches only those). VL-block chunks are refused.
    pub fn decompress_range(
        &mut self,
        chunk: &[u8],
        lo: usize,
        dst: &mut [u8],
    ) -> crate::Result<()> {
        let h = ChunkHeader::parse_unchecked_len(chunk)?;
        if let Some(mut src) = lazy_source(&self.dparams, &h, chunk)? {
            return self.decompress_range_with_source(chunk, &mut *src, lo, dst);
        }
        let p = Prepared::with_header(&h, chunk, false)?;
        if range_is_empty(&p, lo, dst.len())? {
            return Ok(());
        }
        self.decode_range(&p, None, lo, dst)
    }

    /// Decodes bytes `lo..lo + dst.len()` (not empty, within `nbytes`) of a
    /// validated chunk that is not VL-block, decoding only the blocks that
    /// hold them: a block the range covers whole straight into `dst`, a block
    /// it cuts into the worker's block scratch, then the part needed. So a
    /// partial read needs at most one block of scratch, whatever `nbytes`
    /// the header claims. (The reference's getitem copies every block
    /// through its scratch.)
    pub(super) fn decode_range(
        &self,
        p: &Prepared<'_>,
        fetched: Option<&Fetched>,
        lo: usize,
        dst: &mut [u8],
    ) -> crate::Result<()> {
        let dp = &self.dparams;
        let hi = lo + dst.len();
        // A stored chunk in memory holds the range as it is: one copy.
        if p.memcpyed && p.special == 0 && fetched.is_none() && dp.postfilter.is_none() {
            let Some(body) = p.src.get(p.hlen + lo..p.hlen + hi) else {
                crate::bail!(ReadBuffer, "memcpyed chunk is short");
            };
            dst.copy_from_slice(body);
            return Ok(());
        }
        let (first, last) = range_span(p, lo, dst.len());
        if p.special != 0 && dp.postfilter.is_none() {
            // A special chunk's bytes follow from its kind alone: the range
            // is filled in one pass, not block by block (a header may set
            // blocksize 1, making that a loop per byte).
            return p.fill_special_range(lo, dst);
        }
        // Whole items within one block of a fixed-rate zfp chunk in memory:
        // the one zfp cell that holds them is decoded.
        let whole_items = dst.len() % p.h.typesize() == 0;
        if fetched.is_none()
            && first == last
            && whole_items
            && p.zfp_items(dp, first, lo - first * p.blocksize, dst)?
        {
            return Ok(());
        }
        let needs_ref = p.delta_against_block0() && last > 0;
        let plan = DecodePlan::new(p, dp);
        with_worker(|w| {
            // Block 0 decoded, DELTA's reference for the others.
            let mut block0 = Vec::new();
            if needs_ref {
                crate::mem::grow(&mut block0, p.block_span(0).1)?;
                let job = BlockJob {
                    nblock: 0,
                    bytes: bytes_of(p, fetched, 0)?,
                    dref: None,
                    tid: 0,
                    want: 0..block0.len(),
                };
                plan.decode_block(w, &job, &mut block0)?;
            }
            let mut edge = std::mem::take(&mut w.edge);
            let result = (|| -> crate::Result<()> {
                for j in first..=last {
                    let (off, size) = p.block_span(j);
                    let (from, to) = (lo.max(off) - off, hi.min(off + size) - off);
                    let piece = &mut dst[off + from - lo..off + to - lo];
                    if needs_ref && j == 0 {
                        piece.copy_from_slice(&block0[from..to]);
                        continue;
                    }
                    let dref = needs_ref.then_some(&block0[..]);
                    let bytes = bytes_of(p, fetched, j)?;
                    let whole = from == 0 && to == size;
                    let job = BlockJob {
                        nblock: j,
                        bytes,
                        dref,
                        tid: 0,
                        want: from..to,
                    };
                    if whole {
                        plan.decode_block(w, &job, piece)?;
                        continue;
                    }
                    // Every byte of a block is written by its decode (an
                    // uninitialised special chunk excepted), so the scratch
                    // is only grown, not cleared.
                    if edge.len() < size {
                        edge.resize(size)?;
                    }
                    edge.truncate(size);
                    if p.special == Special::UNINIT_CODE {
                        edge.fill(0);
                    }
                    // Only the bytes copied out need decoding.
                    plan.decode_block(w, &job, &mut edge)?;
                    piece.copy_from_slice(&edge[from..to]);
                }
                Ok(())
            })();
            w.edge = edge;
            result
        })
    }
}

/// The bytes of `nitems` items from item `start` of a chunk with header `h`
/// (not VL-block), checked against the chunk and a destination of `room`
/// bytes; 0 for no items, whatever `start` is.
#[inline]
fn items_len(h: &ChunkHeader, start: usize, nitems: usize, room: usize) -> crate::Result<usize> {
    if h.vl_blocks() {
        crate::bail!(InvalidParam, "getitem does not apply to VL-block chunks");
    }
    if nitems == 0 {
        return Ok(0);
    }
    let ts = h.typesize();
    let Some(len) = nitems.checked_mul(ts).filter(|&n| n <= i32::MAX as usize) else {
        crate::bail!(WriteBuffer, "nitems * typesize overflows");
    };
    if len > room {
        crate::bail!(WriteBuffer, "destination too small for {nitems} items");
    }
    let Some(lo) = start.checked_mul(ts).filter(|&b| b <= h.nbytes()) else {
        crate::bail!(InvalidParam, "start {start} out of bounds");
    };
    if lo + len > h.nbytes() {
        crate::bail!(InvalidParam, "start + nitems out of bounds");
    }
    Ok(len)
}

/// Checks a byte range `lo..lo + len` of chunk `p` (within `nbytes`, not a
/// VL-block chunk); true when it is empty.
pub(super) fn range_is_empty(p: &Prepared<'_>, lo: usize, len: usize) -> crate::Result<bool> {
    if p.h.vl_blocks() {
        crate::bail!(
            InvalidParam,
            "a byte range does not apply to VL-block chunks"
        );
    }
    let nbytes = p.h.nbytes();
    if lo.checked_add(len).map_or(true, |e| e > nbytes) {
        crate::bail!(
            InvalidParam,
            "range {lo}+{len} outside the chunk's {nbytes} bytes"
        );
    }
    Ok(len == 0)
}

/// The first and last block holding bytes `lo..lo + len` (`len` > 0).
pub(super) fn range_span(p: &Prepared<'_>, lo: usize, len: usize) -> (usize, usize) {
    (lo / p.blocksize, (lo + len - 1) / p.blocksize)
}
