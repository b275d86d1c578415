//! Whole chunks, and whole chunks but for the blocks a mask leaves out.

use std::sync::OnceLock;

use super::super::header::ChunkHeader;
use super::super::needs::BlockNeeds;
use super::super::pool;
use super::super::DParams;
use super::block::{BlockJob, DecodePlan};
use super::lazy::{bytes_of, lazy_source, Fetched};
use super::prepared::Prepared;
use super::{with_worker, Decompressor};

/// For each item (a block to decode and its output), the item it can be
/// copied from: the first block of a run of blocks stored as the same bytes,
/// of the same size, whose output depends on those bytes alone. `None` for
/// blocks that must be decoded (all of them when no block repeats).
fn repeat_leaders(
    p: &Prepared<'_>,
    dp: &DParams,
    items: &[(usize, &mut [u8])],
    fetched: Option<&Fetched>,
) -> Vec<Option<usize>> {
    let mut leaders = vec![None; items.len()];
    // The current run's first item and its stream bytes.
    let mut run: Option<(usize, &[u8])> = None;
    for (k, (j, out)) in items.iter().enumerate() {
        let span = bytes_of(p, fetched, *j)
            .ok()
            .filter(|_| p.block_is_copyable(dp, *j))
            .and_then(|b| p.stream_span(*j, b, out.len()).map(|n| &b[..n]));
        let Some(span) = span else {
            run = None;
            continue;
        };
        match run {
            Some((lead, lead_span)) if lead_span == span && items[lead].1.len() == out.len() => {
                leaders[k] = Some(lead);
            }
            _ => run = Some((k, span)),
        }
    }
    leaders
}

impl Decompressor {
    /// Decodes a whole chunk into `dst`; returns its uncompressed size.
    pub fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
        let h = match ChunkHeader::parse_unchecked_len(chunk) {
            Ok(h) => h,
            Err(e) => {
                self.needs = None;
                return Err(e);
            }
        };
        self.decompress_parsed(&h, chunk, dst)
    }

    /// [`Decompressor::decompress`] of a chunk whose header `h` the caller
    /// has parsed from it (with [`ChunkHeader::parse_unchecked_len`] or
    /// [`ChunkHeader::parse`]).
    pub fn decompress_parsed(
        &mut self,
        h: &ChunkHeader,
        chunk: &[u8],
        dst: &mut [u8],
    ) -> crate::Result<usize> {
        let needs = self.needs.take();
        if let Some(mut src) = lazy_source(&self.dparams, h, chunk)? {
            return self.decompress_with_source_needs(chunk, &mut *src, dst, needs.as_ref());
        }
        if needs.is_none() {
            if let Some(n) = self.stored_whole(h, chunk, dst)? {
                return Ok(n);
            }
        }
        let derived = self.derived.get(h);
        let p = Prepared::with_derived(h, chunk, false, derived)?;
        self.decode_whole(&p, dst, needs.as_ref())
    }

    /// A stored (memcpyed) chunk read whole on one thread, without a
    /// postfilter: one copy, with the checks [`Prepared::new`] and
    /// [`check_target`] make, in their order, and nothing else. Small
    /// buffers are stored whenever coding them does not pay, and there a
    /// call is all fixed cost, which `Prepared` and the block loop would
    /// double (`scripts/instructions.sh small/decompress_ctx/lz4/256B`).
    /// `None`: not such a chunk.
    fn stored_whole(
        &self,
        h: &ChunkHeader,
        chunk: &[u8],
        dst: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        if pool::threads_for(self.dparams.nthreads, h.nbytes()) > 1 {
            return Ok(None);
        }
        let Some(body) = self.stored_body(h, chunk)? else {
            return Ok(None);
        };
        let nbytes = body.len();
        let Some(out) = dst.get_mut(..nbytes) else {
            crate::bail!(
                WriteBuffer,
                "chunk holds {nbytes} bytes, destination has {}",
                dst.len()
            );
        };
        out.copy_from_slice(body);
        Ok(Some(nbytes))
    }

    /// The data of a stored (memcpyed) chunk in memory that is decoded
    /// without a postfilter, checked as [`Prepared::new`] checks it; `None`
    /// for any other chunk.
    #[inline]
    pub(super) fn stored_body<'c>(
        &self,
        h: &ChunkHeader,
        chunk: &'c [u8],
    ) -> crate::Result<Option<&'c [u8]>> {
        if !h.is_memcpyed() || h.special_code() != 0 || h.is_lazy() {
            return Ok(None);
        }
        if self.dparams.postfilter.is_some() {
            return Ok(None);
        }
        let (nbytes, hlen) = (h.nbytes(), h.header_len());
        let Some(src) = chunk.get(..h.cbytes()) else {
            crate::bail!(
                InvalidHeader,
                "cbytes {} past the {} bytes given",
                h.cbytes,
                chunk.len()
            );
        };
        if h.cbytes() != nbytes + hlen {
            crate::bail!(
                Data,
                "memcpyed chunk with cbytes {} != nbytes {} + header",
                h.cbytes,
                h.nbytes
            );
        }
        Ok(Some(&src[hlen..]))
    }

    /// Decodes a whole chunk into a new buffer of its `nbytes`; lazy chunks
    /// are refused (they need [`Decompressor::decompress`]).
    ///
    /// The chunk is validated before anything is allocated, and the buffer
    /// is then reserved fallibly. A header can claim up to 2 GiB; validating
    /// first refuses a claim that the chunk's own bytes contradict without
    /// allocating and zeroing that much. (The fuzzer found a 42-byte stored
    /// chunk, read as a vlmetalayer, whose claimed 2 GB was allocated and
    /// zeroed in full before the chunk was refused.)
    pub fn decompress_to_vec(&mut self, chunk: &[u8]) -> crate::Result<Vec<u8>> {
        let needs = self.needs.take();
        let p = Prepared::new(chunk, false)?;
        let nbytes = p.h.nbytes();
        let mut out = Vec::new();
        out.try_reserve_exact(nbytes)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to decode {nbytes} bytes"))?;
        out.resize(nbytes, 0);
        self.decode_whole(&p, &mut out, needs.as_ref())?;
        Ok(out)
    }

    /// Decodes a validated, non-lazy chunk into `dst`: what `needs` asks for
    /// (all when `None`).
    fn decode_whole(
        &mut self,
        p: &Prepared<'_>,
        dst: &mut [u8],
        needs: Option<&BlockNeeds>,
    ) -> crate::Result<usize> {
        let nb = check_target(p, dst, needs)?;
        self.decode_into(p, &mut dst[..nb], p.narrowing(needs), None)?;
        Ok(nb)
    }

    /// Decodes what `needs` asks for (all blocks when `None`) into `dst`
    /// (exactly nbytes long).
    pub(super) fn decode_into(
        &mut self,
        p: &Prepared<'_>,
        dst: &mut [u8],
        needs: Option<&BlockNeeds>,
        fetched: Option<&Fetched>,
    ) -> crate::Result<()> {
        // A stored chunk read whole is one copy (see `pool::copy`): its
        // blocks lie back to back as they do in `dst`, and the per-block
        // steps below would only slow it down.
        if p.memcpyed
            && p.special == 0
            && needs.is_none()
            && fetched.is_none()
            && self.dparams.postfilter.is_none()
        {
            let Some(body) = p.src.get(p.hlen..p.hlen + dst.len()) else {
                crate::bail!(ReadBuffer, "memcpyed chunk is short");
            };
            let nthreads =
                pool::threads_for(self.dparams.nthreads, dst.len()).min(p.nblocks.max(1));
            return with_worker(|w| pool::copy(w, dst, body, nthreads));
        }
        // A special chunk is one pattern from its first byte. Read whole, it
        // is filled in one range per thread, as a byte range of it is
        // (`fill_special_range`), not block by block: a header may set
        // blocksize 1, which made that a step per byte. Read in part, each
        // range needed is filled on its own, without a pass through the
        // block decoder for each block.
        if p.special != 0 && self.dparams.postfilter.is_none() {
            if let Some(needs) = needs {
                for j in 0..p.nblocks {
                    let (off, size) = p.block_span(j);
                    let span = needs.span(j, size);
                    if !span.is_empty() {
                        let lo = off + span.start;
                        p.fill_special_range(lo, &mut dst[lo..off + span.end])?;
                    }
                }
                return Ok(());
            }
            let nthreads =
                pool::threads_for(self.dparams.nthreads, dst.len()).min(p.nblocks.max(1));
            if nthreads <= 1 {
                return p.fill_special_range(0, dst);
            }
            let per_thread = dst.len().div_ceil(nthreads);
            let ranges: Vec<(usize, &mut [u8])> = dst
                .chunks_mut(per_thread)
                .enumerate()
                .map(|(k, r)| (k * per_thread, r))
                .collect();
            return with_worker(|w| {
                pool::run_scoped(ranges, nthreads, w, |_, _, (lo, r)| {
                    p.fill_special_range(lo, r)
                })
            });
        }
        let dp = &self.dparams;
        let plan = DecodePlan::new(p, dp);
        let skip = |j: usize| needs.is_some_and(|n| n.skips(j));
        let needs_ref = p.delta_against_block0() && p.nblocks > 1;
        // Block 0 first when DELTA needs it as reference.
        let mut scratch0: Vec<u8> = Vec::new();
        let mut first = 0usize;
        if needs_ref {
            let (_, s0) = p.block_span(0);
            let bytes = bytes_of(p, fetched, 0)?;
            let out = if skip(0) {
                crate::mem::grow(&mut scratch0, s0)?;
                scratch0.truncate(s0);
                &mut scratch0[..]
            } else {
                &mut dst[..s0]
            };
            let job = BlockJob {
                nblock: 0,
                bytes,
                dref: None,
                tid: 0,
                want: 0..out.len(),
            };
            with_worker(|w| plan.decode_block(w, &job, out))?;
            first = 1;
        }
        let (head, rest) = dst.split_at_mut(if needs_ref { p.block_span(0).1 } else { 0 });
        let dref: Option<&[u8]> = if needs_ref {
            Some(if skip(0) { &scratch0 } else { head })
        } else {
            None
        };
        // The bytes needed of block `j` of `len` bytes.
        let want = |j: usize, len: usize| needs.map_or(0..len, |n| n.span(j, len));
        // The blocks to decode and their bytes: all of `rest` unless some
        // are skipped.
        let (todo, nitems) = match needs {
            None => (rest.len(), p.nblocks - first),
            Some(_) => (first..p.nblocks)
                .filter(|&j| !skip(j))
                .fold((0, 0), |(b, n), j| (b + p.block_span(j).1, n + 1)),
        };
        let nthreads = pool::threads_for(dp.nthreads, todo).min(nitems);
        if nthreads <= 1 {
            // On one thread the blocks are decoded in place, in order, with
            // no list of them: a small chunk of one block paid for that
            // list's allocation on every call.
            return with_worker(|w| {
                // The last block decoded whole whose output a later block
                // with the same leading bytes can copy (constant or
                // repetitive data gives runs of identical blocks): where its
                // output lies in `rest`, its size and its bytes.
                let mut last: Option<(usize, usize, &[u8])> = None;
                let mut at = 0usize;
                for j in first..p.nblocks {
                    let (_, size) = p.block_span(j);
                    let here = at;
                    at += size;
                    if skip(j) {
                        continue;
                    }
                    if at > rest.len() {
                        crate::bail!(Data, "block {j} ends past the chunk's nbytes");
                    }
                    let bytes = bytes_of(p, fetched, j)?;
                    if let Some((prev_at, prev_len, pbytes)) = last {
                        if prev_len == size && bytes.starts_with(pbytes) {
                            let (done, out) = rest.split_at_mut(here);
                            out[..size].copy_from_slice(&done[prev_at..prev_at + size]);
                            continue;
                        }
                    }
                    let out = &mut rest[here..at];
                    let want = want(j, size);
                    let whole = want.len() == size;
                    let job = BlockJob {
                        nblock: j,
                        bytes,
                        dref,
                        tid: 0,
                        want,
                    };
                    last = plan
                        .decode_block(w, &job, out)?
                        .filter(|_| whole)
                        .and_then(|n| bytes.get(..n))
                        .map(|b| (here, size, b));
                }
                Ok(())
            });
        }
        // Cut the rest of dst into per-block pieces.
        let mut items: Vec<(usize, &mut [u8])> = Vec::with_capacity(p.nblocks);
        let mut remaining = rest;
        for j in first..p.nblocks {
            let (_, size) = p.block_span(j);
            let (piece, tail) = std::mem::take(&mut remaining).split_at_mut(size);
            remaining = tail;
            if !skip(j) {
                items.push((j, piece));
            }
        }
        // Helper threads borrow the chunk and write their blocks in place.
        // Blocks stored as the same bytes as a block before them (runs of
        // constant or repetitive data; found from the stream headers before
        // any block is decoded) are copied from the first of their run once
        // that one is done, and decoded like any other block until then, so
        // no thread waits for it, as one would in a first pass decoding only
        // the run leaders (`bash scripts/bench.sh --only constant`).
        let leaders = repeat_leaders(p, dp, &items, fetched);
        // The output of each decoded run leader, shared once it is written.
        let done: Vec<OnceLock<&[u8]>> = leaders.iter().map(|_| OnceLock::new()).collect();
        let work: Vec<(usize, (usize, &mut [u8]))> = items.into_iter().enumerate().collect();
        with_worker(|w| {
            pool::run_scoped(work, nthreads, w, |w, tid, (k, (j, out))| {
                if let Some(src) = leaders[k].and_then(|lead| done[lead].get()) {
                    out.copy_from_slice(src);
                    return Ok(());
                }
                let bytes = bytes_of(p, fetched, j)?;
                let want = want(j, out.len());
                // Only a block decoded whole is there to copy.
                let whole = want.len() == out.len();
                let job = BlockJob {
                    nblock: j,
                    bytes,
                    dref,
                    tid,
                    want,
                };
                plan.decode_block(w, &job, out)?;
                if leaders[k].is_none() && whole {
                    let _ = done[k].set(out);
                }
                Ok(())
            })
        })
    }
}

/// Checks that `dst` holds chunk `p`'s `nbytes` and that `needs`, if any,
/// has one entry per block; returns `nbytes`.
pub(super) fn check_target(
    p: &Prepared<'_>,
    dst: &[u8],
    needs: Option<&BlockNeeds>,
) -> crate::Result<usize> {
    let nb = p.h.nbytes();
    if nb > dst.len() {
        crate::bail!(
            WriteBuffer,
            "chunk holds {nb} bytes, destination has {}",
            dst.len()
        );
    }
    if let Some(m) = needs.filter(|m| m.len() != p.nblocks) {
        crate::bail!(
            Data,
            "mask has {} entries, chunk has {} blocks",
            m.len(),
            p.nblocks
        );
    }
    Ok(nb)
}
