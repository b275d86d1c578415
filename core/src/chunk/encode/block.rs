//! Encoding one block: its filters, its split into one stream per byte
//! plane, runs and stored streams, into the chunk or the worker's buffer.

use std::sync::Arc;
use std::time::Instant;

use super::super::instr;
use super::super::page_buf::PageBuf;
use super::super::pipeline::{self, BlockCtx};
use super::super::stream::{self, EncDict, EncodeParams};
use super::super::{CParams, Fmt};
use super::EncWorker;
use crate::codecs::registry::CallInfo;
use crate::filters::run::is_uniform;
use crate::filters::{bytedelta, shuffle, shuffle_bytedelta};

/// Everything a block encoder needs, shared by all workers.
pub(super) struct BlockPlan<'a> {
    pub(super) cp: CParams,
    pub(super) typesize: usize,
    pub(super) blocksize: usize,
    pub(super) nblocks: usize,
    pub(super) leftover: usize,
    pub(super) dont_split: bool,
    /// Training pass: blocks are stored filtered but uncompressed, back to back.
    pub(super) training: bool,
    pub(super) dict: Option<Arc<EncDict>>,
    pub(super) source: Source<'a>,
}

/// What the blocks of a chunk are cut from.
pub(super) enum Source<'a> {
    /// The (prefiltered) buffer of a regular chunk, cut into blocks of
    /// `blocksize` bytes.
    Buffer(&'a [u8]),
    /// One buffer per block of a VL-block chunk.
    VlBlocks(Vec<&'a [u8]>),
}

impl BlockPlan<'_> {
    /// Whether this is a VL-block chunk.
    #[inline]
    pub(super) fn vl(&self) -> bool {
        matches!(self.source, Source::VlBlocks(_))
    }

    /// The buffer of a regular chunk; empty for VL blocks.
    #[inline]
    fn buffer(&self) -> &[u8] {
        match self.source {
            Source::Buffer(src) => src,
            Source::VlBlocks(_) => &[],
        }
    }

    /// Bytes to encode in all.
    pub(super) fn total_bytes(&self) -> usize {
        match &self.source {
            Source::Buffer(src) => src.len(),
            Source::VlBlocks(srcs) => srcs.iter().map(|s| s.len()).sum(),
        }
    }

    fn block_src(&self, j: usize) -> (&[u8], usize) {
        let src = match &self.source {
            Source::Buffer(src) => *src,
            Source::VlBlocks(srcs) => return (srcs[j], 0),
        };
        let start = j * self.blocksize;
        let len = if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        };
        (&src[start..start + len], start)
    }

    /// Streams of block `j` (of `bsize` bytes) and the size of each.
    fn streams_of(&self, j: usize, bsize: usize) -> (usize, usize) {
        let leftover_block = !self.vl() && j + 1 == self.nblocks && self.leftover > 0;
        let mut nstreams = if !self.dont_split && !leftover_block && !self.training {
            self.typesize
        } else {
            1
        };
        if bsize < nstreams {
            // A block narrower than the type cannot be split (the reference
            // would write an undecodable chunk here).
            nstreams = 1;
        }
        (nstreams, bsize / nstreams)
    }

    /// The most bytes block `j` can take when encoded.
    pub(super) fn max_encoded(&self, j: usize) -> usize {
        let bsize = self.block_src(j).0.len();
        let (nstreams, _) = self.streams_of(j, bsize);
        if self.instrumented() {
            return nstreams * (4 + instr::RECORD_SIZE);
        }
        bsize + 5 * nstreams
    }

    /// When the filters are one plain shuffle and every item of the block is
    /// the same, each shuffled stream is a run of one byte of that item:
    /// returns the item (the shuffle itself can then be skipped).
    fn repeated_item<'s>(&self, bsrc: &'s [u8], nstreams: usize) -> Option<&'s [u8]> {
        let ts = self.typesize;
        if !self.plain_shuffle() {
            return None;
        }
        if self.training || self.vl() || ts == 0 || bsrc.len() % ts != 0 || bsrc.len() < ts {
            return None;
        }
        // Unsplit, the shuffled block is a run only if the item is one: test
        // that before scanning the block.
        if nstreams != ts && (nstreams != 1 || !is_uniform(&bsrc[..ts])) {
            return None;
        }
        // Periodic with period `ts` <=> every item equals the first.
        (bsrc[ts..] == bsrc[..bsrc.len() - ts]).then(|| &bsrc[..ts])
    }

    /// Whether the only filter is a byte shuffle of whole items.
    fn plain_shuffle(&self) -> bool {
        matches!(self.row_filters(), Some(RowFilters::Shuffle))
    }

    /// The filters, when they are a byte shuffle of whole items, alone or
    /// followed by BYTEDELTA over the same streams: filters a split block
    /// can run straight into the chunk.
    fn row_filters(&self) -> Option<RowFilters> {
        let whole = |slot: usize| {
            let meta = usize::from(self.cp.filters_meta[slot]);
            meta == 0 || meta == self.typesize
        };
        let mut active = self.cp.filters.iter().enumerate().filter(|(_, &f)| f != 0);
        let (slot, &f) = active.next()?;
        if f != Fmt::SHUFFLE || !whole(slot) {
            return None;
        }
        let variant = match active.next() {
            None => return Some(RowFilters::Shuffle),
            Some((slot, _)) if !whole(slot) => return None,
            Some((_, &Fmt::BYTEDELTA)) => bytedelta::Variant::Fixed,
            Some((_, &Fmt::BYTEDELTA_BUGGY)) => bytedelta::Variant::Buggy,
            Some(_) => return None,
        };
        active
            .next()
            .is_none()
            .then_some(RowFilters::ShuffleBytedelta(variant))
    }

    /// Whether the chunk's streams are all stored as zero runs: its
    /// (prefiltered) bytes are to be thrown away. Not when training, which
    /// samples the data, nor for VL blocks, as in the reference.
    fn disposable(&self) -> bool {
        self.cp.prefilter.is_some()
            && self.cp.prefilter_output.disposable
            && !self.training
            && !self.vl()
    }

    /// Whether blocks are encoded as measurements (not in the training pass,
    /// which must store the data its samples are cut from).
    pub(super) fn instrumented(&self) -> bool {
        self.cp.instr_codec && !self.training && !self.disposable()
    }

    fn call_info(&self) -> CallInfo<'_> {
        CallInfo {
            typesize: self.cp.typesize,
            clevel: self.cp.clevel,
            compcode: self.cp.compcode,
            compcode_meta: self.cp.compcode_meta,
            nthreads: self.cp.nthreads,
            blocksize: self.blocksize as i32,
            chunk: self.buffer(),
            user: self.cp.user_data.as_ref(),
        }
    }

    /// What the codec is told of each stream it encodes.
    fn encode_params(&self) -> EncodeParams<'_> {
        EncodeParams {
            compcode: self.cp.compcode,
            clevel: self.cp.clevel,
            compcode_meta: self.cp.compcode_meta,
            block_shape: self.cp.block_shape.as_deref(),
            info: self.call_info(),
        }
    }

    /// The block `bsrc` (at `offset` in the chunk) after the forward
    /// filters, which run in the scratch `a` and `b`.
    fn filtered<'s>(
        &'s self,
        bsrc: &'s [u8],
        offset: usize,
        a: &'s mut PageBuf,
        b: &'s mut PageBuf,
    ) -> crate::Result<&'s [u8]> {
        if !pipeline::any_forward(&self.cp.filters) {
            return Ok(bsrc);
        }
        let ctx = BlockCtx {
            filters: &self.cp.filters,
            filters_meta: &self.cp.filters_meta,
            typesize: self.typesize,
            offset,
            version: Fmt::VERSION_STABLE,
            block_shape: self.cp.block_shape.as_deref(),
            info: self.call_info(),
        };
        let dref = match self.source {
            Source::VlBlocks(_) => bsrc,
            Source::Buffer(src) => &src[..self.blocksize.min(src.len())],
        };
        let bsize = bsrc.len();
        Ok(match pipeline::forward(&ctx, bsrc, dref, a, b)? {
            None => bsrc,
            Some(false) => &a[..bsize],
            Some(true) => &b[..bsize],
        })
    }

    /// As [`Self::encode`], for an instrumented chunk: each stream is encoded
    /// (into scratch: only its size is kept) and stored as its
    /// [`instr::Record`].
    fn encode_instrumented(
        &self,
        w: &mut EncWorker,
        j: usize,
        out: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        let (bsrc, offset) = self.block_src(j);
        let (nstreams, neblock) = self.streams_of(j, bsrc.len());
        let EncWorker {
            codec, a, b, spill, ..
        } = w;
        let started = Instant::now();
        let filtered = self.filtered(bsrc, offset, a, b)?;
        let ftime = started.elapsed();
        let params = self.encode_params();
        crate::mem::grow(spill, neblock)?;
        let mut at = 0usize;
        for s in filtered.chunks_exact(neblock.max(1)).take(nstreams) {
            let started = Instant::now();
            let record = if is_uniform(s) {
                instr::Record::run(neblock, s[0], started.elapsed(), ftime)
            } else {
                let d = &mut spill[..neblock];
                let n = stream::encode(codec, &params, s, d, self.dict.as_deref())?;
                let stored = if n == 0 || n >= neblock { neblock } else { n };
                instr::Record::coded(neblock, stored, started.elapsed(), ftime)
            };
            let bytes = record.to_stream();
            let Some(o) = out.get_mut(at..at + bytes.len()) else {
                return Ok(None);
            };
            o.copy_from_slice(&bytes);
            at += bytes.len();
        }
        Ok(Some(at))
    }

    /// Encodes block `j` into the start of `out`: its streams, each with its
    /// `csize` prefix (none when training). Returns the bytes written, or
    /// `None` when they do not fit in `out`.
    pub(super) fn encode(
        &self,
        w: &mut EncWorker,
        j: usize,
        out: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        let (bsrc, offset) = self.block_src(j);
        let bsize = bsrc.len();
        let (nstreams, neblock) = self.streams_of(j, bsize);
        if self.disposable() {
            let mut at = 0;
            for _ in 0..nstreams {
                at += match put_run(out, at, 0) {
                    Some(n) => n,
                    None => return Ok(None),
                };
            }
            return Ok(Some(at));
        }
        if self.instrumented() {
            return self.encode_instrumented(w, j, out);
        }
        if let Some(item) = self.repeated_item(bsrc, nstreams) {
            if nstreams == item.len() {
                let mut at = 0;
                for &value in item {
                    match put_run(out, at, value) {
                        Some(n) => at += n,
                        None => return Ok(None),
                    }
                }
                return Ok(Some(at));
            }
            // Not split (the item is a run): so is the shuffled block.
            return Ok(put_run(out, 0, item[0]));
        }
        if let Some(n) = self.encode_rows_in_place(w, bsrc, nstreams, neblock, out)? {
            return Ok(Some(n));
        }
        let EncWorker {
            codec,
            a,
            b,
            spill,
            rows_in_place,
            ..
        } = w;
        let filtered = self.filtered(bsrc, offset, a, b)?;
        let mut first_coded = nstreams > 1;
        let params = self.encode_params();
        let mut at = 0usize;
        for s in filtered.chunks_exact(neblock.max(1)).take(nstreams) {
            if self.training {
                let Some(d) = out.get_mut(at..at + s.len()) else {
                    return Ok(None);
                };
                d.copy_from_slice(s);
                at += s.len();
                continue;
            }
            if !self.vl() && is_uniform(s) {
                match put_run(out, at, s[0]) {
                    Some(n) => at += n,
                    None => return Ok(None),
                }
                continue;
            }
            // The codec always gets `neblock` bytes of room (its output can
            // depend on that); straight into `out` when they are there.
            let room = out.len().saturating_sub(at + 4);
            let n = if room >= neblock {
                let d = &mut out[at + 4..at + 4 + neblock];
                let n = stream::encode(codec, &params, s, d, self.dict.as_deref())?;
                if n == 0 || n >= neblock {
                    d.copy_from_slice(s);
                    neblock
                } else {
                    n
                }
            } else {
                crate::mem::grow(spill, neblock)?;
                let d = &mut spill[..neblock];
                let n = stream::encode(codec, &params, s, d, self.dict.as_deref())?;
                let (n, bytes) = if n == 0 || n >= neblock {
                    (neblock, s)
                } else {
                    (n, &d[..n])
                };
                let Some(o) = out.get_mut(at + 4..at + 4 + n) else {
                    return Ok(None);
                };
                o.copy_from_slice(bytes);
                n
            };
            if first_coded {
                *rows_in_place = n == neblock;
                first_coded = false;
            }
            let csize = if self.vl() { neblock } else { n };
            out[at..at + 4].copy_from_slice(&(csize as i32).to_le_bytes());
            at += 4 + n;
        }
        Ok(Some(at))
    }

    /// [`Self::encode`] of a split block whose filters are the byte shuffle,
    /// alone or followed by BYTEDELTA ([`RowFilters`]), filtered straight
    /// into `out` with each row (stream) where it is stored when the codec
    /// cannot compress it: behind its 4-byte size, as if every stream before
    /// it were stored too. Such a row, often the low bytes of floating-point
    /// data, is then not copied at all; the reference filters into scratch
    /// and copies it. A row the codec compresses is encoded into the room
    /// the rows before it freed, or into `spill` and copied from there (only
    /// its compressed bytes); a row stored after a compressed one moves down
    /// by what those saved. The streams are the same bytes as
    /// [`Self::encode`]'s loop writes.
    ///
    /// `Ok(None)`: not such a block, the worker's last split block had its
    /// first coded stream compressed (see [`EncWorker::rows_in_place`]), or
    /// `out` lacks the room of every stream stored; the loop in
    /// [`Self::encode`] handles those.
    fn encode_rows_in_place(
        &self,
        w: &mut EncWorker,
        bsrc: &[u8],
        nstreams: usize,
        neblock: usize,
        out: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        let stride = neblock + 4;
        if nstreams < 2
            || neblock == 0
            || nstreams != self.typesize
            || nstreams * neblock != bsrc.len()
            || self.vl()
            || self.training
            || !w.rows_in_place
            || out.len() < nstreams * stride
        {
            return Ok(None);
        }
        let Some(filters) = self.row_filters() else {
            return Ok(None);
        };
        let params = self.encode_params();
        let EncWorker {
            codec,
            a,
            spill,
            rows_in_place,
            ..
        } = w;
        crate::mem::grow(spill, neblock)?;
        match filters {
            RowFilters::Shuffle => shuffle::shuffle_rows(nstreams, bsrc, &mut out[4..], stride),
            RowFilters::ShuffleBytedelta(variant) => {
                a.resize(shuffle_bytedelta::scratch_len(nstreams))?;
                let rows = &mut out[4..];
                shuffle_bytedelta::encode_rows(variant, nstreams, bsrc, rows, stride, &mut a[..]);
            }
        }
        // Stream `k` is written at `at`; its row lies at `row`, where it is
        // stored if the codec cannot compress it. `at + 4 <= row` always: no
        // stream is longer than its row.
        let mut at = 0usize;
        let mut first_coded = true;
        for k in 0..nstreams {
            let row = k * stride + 4;
            let (done, rest) = out.split_at_mut(row);
            let s = &rest[..neblock];
            if is_uniform(s) {
                // At most 5 bytes from `at`, so over nothing past `s[0]`.
                let value = s[0];
                let Some(n) = put_run(out, at, value) else {
                    crate::bail!(Failure, "block stream {k} has no room for its run");
                };
                at += n;
                continue;
            }
            // The codec gets `neblock` bytes of room, as in `Self::encode`:
            // where the stream goes when the rows before it freed that much,
            // else `spill`.
            let direct = row - (at + 4) >= neblock;
            let d = if direct {
                &mut done[at + 4..at + 4 + neblock]
            } else {
                &mut spill[..neblock]
            };
            let coded = stream::encode(codec, &params, s, d, self.dict.as_deref())?;
            let n = if coded == 0 || coded >= neblock {
                if at + 4 < row {
                    out.copy_within(row..row + neblock, at + 4);
                }
                neblock
            } else {
                if !direct {
                    out[at + 4..at + 4 + coded].copy_from_slice(&spill[..coded]);
                }
                coded
            };
            if first_coded {
                *rows_in_place = n == neblock;
                first_coded = false;
            }
            out[at..at + 4].copy_from_slice(&(n as i32).to_le_bytes());
            at += 4 + n;
        }
        Ok(Some(at))
    }
}

/// Filters whose output a split block can write straight into the chunk,
/// one stream (row) at a time ([`BlockPlan::encode_rows_in_place`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowFilters {
    /// The byte shuffle alone.
    Shuffle,
    /// The byte shuffle, then BYTEDELTA of each of its streams.
    ShuffleBytedelta(bytedelta::Variant),
}

/// Writes the run of `value` (negative csize, then a token for non-zero
/// values) at `out[at..]`; returns its length, `None` when it does not fit.
fn put_run(out: &mut [u8], at: usize, value: u8) -> Option<usize> {
    let csize = (-i32::from(value)).to_le_bytes();
    let n = if value > 0 { 5 } else { 4 };
    let d = out.get_mut(at..at + n)?;
    d[..4].copy_from_slice(&csize);
    if value > 0 {
        d[4] = 0x1;
    }
    Some(n)
}
