//! Lazy chunks: the header and block starts are at hand, the blocks are
//! fetched from a [`BlockSource`], only those a call needs.

use std::sync::Arc;

use super::super::header::ChunkHeader;
use super::super::needs::BlockNeeds;
use super::super::DParams;
use super::partial::{range_is_empty, range_span};
use super::prepared::{rd_i32, read_dict, Prepared, VlLayout};
use super::whole::check_target;
use super::{with_worker, BlockSource, Decompressor};

/// Finds the blocks of a lazy chunk given to a plain decode call: the chunk
/// carries only its header, block starts and a trailer locating its blocks in
/// a frame, and the decoder's parameters say which super-chunk that frame
/// belongs to. The C layer (the only one that hands out lazy chunks through
/// contexts) registers it; without it such chunks are refused.
pub(crate) type LazyResolver = fn(&DParams, &[u8]) -> crate::Result<Box<dyn BlockSource>>;

pub(super) static LAZY_RESOLVER: std::sync::OnceLock<LazyResolver> = std::sync::OnceLock::new();

/// The block source of a lazy chunk, when `chunk` is one (special chunks
/// never are, as in the reference).
pub(super) fn lazy_source(
    dp: &DParams,
    h: &ChunkHeader,
    chunk: &[u8],
) -> crate::Result<Option<Box<dyn BlockSource>>> {
    if !(h.is_lazy() && h.special_code() == 0) {
        return Ok(None);
    }
    match LAZY_RESOLVER.get() {
        Some(resolve) => resolve(dp, chunk).map(Some),
        None => crate::bail!(InvalidParam, "lazy chunk needs an associated super-chunk"),
    }
}

/// The stream bytes of the blocks fetched from a lazy chunk's source, back
/// to back in one buffer.
///
/// The buffer is the calling thread's (`DecWorker::fetch_buf`), handed from
/// call to call at the length it reached, so that fetching a block neither
/// allocates nor zeroes: zeroing a buffer per block is a large part of a
/// small slice of a file-backed array (`scripts/instructions.sh` on a b2nd
/// row).
pub(super) struct Fetched {
    buf: Vec<u8>,
    /// By block index: where the block's bytes lie in `buf` (start, length),
    /// or `None` when it was not fetched.
    spans: Vec<Option<(usize, usize)>>,
}

impl Fetched {
    pub(super) fn block(&self, j: usize) -> Option<&[u8]> {
        let (at, len) = (*self.spans.get(j)?)?;
        self.buf.get(at..at + len)
    }

    /// Gives the buffer back to this thread for the next fetch. One that
    /// grew past `KEEP` bytes (a whole large chunk read lazily) is freed
    /// instead, so a thread does not hold on to that much for good; slices
    /// and byte ranges fetch a few blocks.
    pub(super) fn recycle(self) {
        const KEEP: usize = 1 << 20;
        if self.buf.len() <= KEEP {
            with_worker(|w| w.fetch_buf = self.buf);
        }
    }
}

/// This thread's buffer for fetched blocks (see [`Fetched`]).
fn take_fetch_buf() -> Vec<u8> {
    with_worker(|w| std::mem::take(&mut w.fetch_buf))
}

/// The stream bytes of block `j`: from the chunk, or from the fetched blocks.
#[inline]
pub(super) fn bytes_of<'b>(
    p: &'b Prepared<'_>,
    fetched: Option<&'b Fetched>,
    j: usize,
) -> crate::Result<&'b [u8]> {
    match fetched {
        None => p.block_bytes(j),
        Some(f) => match f.block(j) {
            Some(b) => Ok(b),
            None => crate::bail!(ReadBuffer, "block {j} was not fetched"),
        },
    }
}

impl Decompressor {
    /// Decodes bytes `lo..lo + dst.len()` of a lazy chunk (its header and
    /// block starts; see [`Decompressor::decompress_with_source`]), fetching
    /// from `source` and decoding only the blocks that hold them.
    pub fn decompress_range_with_source(
        &mut self,
        header_and_bstarts: &[u8],
        source: &mut dyn BlockSource,
        lo: usize,
        dst: &mut [u8],
    ) -> crate::Result<()> {
        let mut p = Prepared::new(header_and_bstarts, true)?;
        if range_is_empty(&p, lo, dst.len())? {
            return Ok(());
        }
        self.range_from_source(&mut p, header_and_bstarts, source, lo, dst)
    }

    /// [`Decompressor::decode_range`] for a lazy chunk: fetches the blocks
    /// the range needs first (special chunks need none).
    pub(super) fn range_from_source(
        &self,
        p: &mut Prepared<'_>,
        header_and_bstarts: &[u8],
        source: &mut dyn BlockSource,
        lo: usize,
        dst: &mut [u8],
    ) -> crate::Result<()> {
        if p.special != 0 {
            return self.decode_range(p, None, lo, dst);
        }
        if self.read_stored_blocks(p, source, lo, dst, |_| true)? {
            return Ok(());
        }
        // The blocks holding the range, and block 0 when DELTA decodes the
        // others against it.
        let (first, last) = range_span(p, lo, dst.len());
        let delta_ref = p.delta_against_block0() && last > 0;
        let needed = |j: usize| j >= first || (j == 0 && delta_ref);
        let fetched = fetch_blocks(p, header_and_bstarts, source, last + 1, needed)?;
        let result = self.decode_range(p, Some(&fetched), lo, dst);
        fetched.recycle();
        result
    }

    /// Reads bytes `lo..lo + dst.len()` (not empty, within `nbytes`) of a
    /// stored (memcpyed) lazy chunk from `source` straight into `dst`,
    /// leaving alone the blocks `keep` leaves out: one read per run of
    /// consecutive kept blocks. False when the chunk is not stored, a
    /// postfilter must see each block, or the source cannot read in place;
    /// the caller then decodes block by block, which writes every kept
    /// block.
    fn read_stored_blocks(
        &self,
        p: &Prepared<'_>,
        source: &mut dyn BlockSource,
        lo: usize,
        dst: &mut [u8],
        keep: impl Fn(usize) -> bool,
    ) -> crate::Result<bool> {
        // VL-block chunks are never stored (the header refuses the pair),
        // and `p.vl` is not known yet for a lazy one: ask the header.
        if !p.memcpyed || p.special != 0 || p.h.vl_blocks() || self.dparams.postfilter.is_some() {
            return Ok(false);
        }
        let hi = lo + dst.len();
        let (first, last) = range_span(p, lo, dst.len());
        let mut j = first;
        while j <= last {
            if !keep(j) {
                j += 1;
                continue;
            }
            let run = j;
            while j <= last && keep(j) {
                j += 1;
            }
            let from = lo.max(run * p.blocksize);
            let to = hi.min(j * p.blocksize);
            if !source.read_raw(p.hlen + from, &mut dst[from - lo..to - lo])? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Decodes a lazy chunk: `header_and_bstarts` holds the header, the block
    /// starts and optionally the lazy trailer; block bytes come from `source`.
    /// `mask` skips blocks as [`Decompressor::set_maskout`] does.
    pub fn decompress_with_source(
        &mut self,
        header_and_bstarts: &[u8],
        source: &mut dyn BlockSource,
        dst: &mut [u8],
        mask: Option<&[bool]>,
    ) -> crate::Result<usize> {
        let needs = mask.map(BlockNeeds::from_maskout);
        self.decompress_with_source_needs(header_and_bstarts, source, dst, needs.as_ref())
    }

    /// [`Decompressor::decompress_with_source`] with what is needed of each
    /// block, as [`Decompressor::set_block_needs`] says it.
    pub fn decompress_with_source_needs(
        &mut self,
        header_and_bstarts: &[u8],
        source: &mut dyn BlockSource,
        dst: &mut [u8],
        needs: Option<&BlockNeeds>,
    ) -> crate::Result<usize> {
        let mut p = Prepared::new(header_and_bstarts, true)?;
        let nb = check_target(&p, dst, needs)?;
        let needs = p.narrowing(needs);
        if p.special != 0 || (p.h.nbytes == 0 && p.nblocks == 0) {
            // Nothing to fetch: decode from the header alone.
            self.decode_into(&p, &mut dst[..nb], needs, None)?;
            return Ok(nb);
        }
        let skip = |j: usize| needs.is_some_and(|n| n.skips(j));
        if self.read_stored_blocks(&p, source, 0, &mut dst[..nb], |j| !skip(j))? {
            return Ok(nb);
        }
        let delta_ref = p.delta_against_block0();
        let needed = |j: usize| !skip(j) || (j == 0 && delta_ref);
        let nblocks = p.nblocks;
        let fetched = fetch_blocks(&mut p, header_and_bstarts, source, nblocks, needed)?;
        let result = (|| {
            if p.h.vl_blocks() {
                p.vl = Some(lazy_vl_layout(&p, &fetched)?);
            }
            self.decode_into(&p, &mut dst[..nb], needs, Some(&fetched))
        })();
        fetched.recycle();
        result.map(|()| nb)
    }
}

/// Fetches from `source` the blocks of a lazy chunk before `end` that
/// `needed` names (and its dictionary, into `p`), each as one read into this
/// thread's fetch buffer; `header_and_bstarts` may carry the lazy trailer,
/// whose block sizes are passed on as hints.
pub(super) fn fetch_blocks(
    p: &mut Prepared<'_>,
    header_and_bstarts: &[u8],
    source: &mut dyn BlockSource,
    end: usize,
    needed: impl Fn(usize) -> bool,
) -> crate::Result<Fetched> {
    // Lazy trailer: nchunk (i32), offset (i64), then one csize per block.
    let trailer = p.bstarts_end + 12;
    let hint = |j: usize| -> Option<usize> {
        rd_i32(header_and_bstarts, trailer + 4 * j)
            .ok()
            .filter(|&c| c > 0)
            .map(|c| c as usize)
    };
    if p.h.uses_dict() && !p.memcpyed {
        let bytes = source.block(usize::MAX, p.bstarts_end as u32, None)?;
        let (d, _) = read_dict(p.h.compformat(), &bytes)?;
        p.dict = Some(Arc::new(d));
    }
    let mut fetched = Fetched {
        buf: take_fetch_buf(),
        spans: Vec::with_capacity(end),
    };
    let mut at = 0usize;
    for j in 0..end {
        if !needed(j) {
            fetched.spans.push(None);
            continue;
        }
        let offset = if p.memcpyed {
            p.hlen + j * p.blocksize
        } else {
            p.bstart(j)? as usize
        };
        let offset = u32::try_from(offset)
            .map_err(|_| crate::err!(InvalidHeader, "block offset overflows"))?;
        let len = source.block_into(j, offset, hint(j), &mut fetched.buf, at)?;
        fetched.spans.push(Some((at, len)));
        at += len;
    }
    Ok(fetched)
}

/// Block sizes of a lazy VL-block chunk, from the fetched block bytes.
fn lazy_vl_layout(p: &Prepared<'_>, fetched: &Fetched) -> crate::Result<VlLayout> {
    let n = p.nblocks;
    let (mut nbytes, mut offsets, mut cbytes) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0usize;
    for j in 0..n {
        let bstart = p.bstart(j)?;
        let next = if j + 1 < n {
            p.bstart(j + 1)?
        } else {
            p.h.cbytes
        };
        if bstart < p.bstarts_end as i32 || next <= bstart || next > p.h.cbytes {
            crate::bail!(InvalidHeader, "invalid VL-block offsets in lazy chunk");
        }
        let csize = (next - bstart) as usize;
        let nb = match fetched.block(j) {
            Some(b) => rd_i32(b, 0)?,
            None => crate::bail!(
                InvalidParam,
                "masks are not supported for lazy VL-block chunks"
            ),
        };
        if nb <= 0 {
            crate::bail!(InvalidHeader, "invalid VL-block size");
        }
        offsets.push(total);
        total += nb as usize;
        nbytes.push(nb as usize);
        cbytes.push(csize);
    }
    if total != p.h.nbytes() {
        crate::bail!(InvalidHeader, "VL-block sizes do not add up to nbytes");
    }
    Ok(VlLayout {
        nbytes,
        offsets,
        cbytes,
    })
}
