//! Compressing a buffer into one chunk, as C-Blosc2's `blosc2_compress_ctx`
//! and `blosc2_vlcompress_ctx` lay it out.
//!
//! Blocks are encoded independently (each into its own buffer, in any worker)
//! and then laid out in block order, so the output does not depend on the
//! number of threads.

use super::blocksize::{compute_blocksize, split_block};
use super::header::HeaderOut;
use super::instr;
use super::page_buf::PageBuf;
use super::pipeline::{self, BlockCtx};
use super::pool;
use super::stream::{self, CodecState, EncDict, EncodeParams};
use super::{CParams, Fmt, PrefilterArgs, PrefilterOutput, Special};
use crate::codecs::registry::{self, CallInfo};
use crate::codecs::{zstd, Codec};
use crate::filters::run::is_uniform;
use crate::filters::{bytedelta, shuffle, shuffle_bytedelta};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

/// Scratch owned by one worker.
#[derive(Default)]
pub(crate) struct EncWorker {
    codec: CodecState,
    a: PageBuf,
    b: PageBuf,
    /// Codec output when the chunk buffer has too little room left.
    spill: Vec<u8>,
    /// A block encoded by a worker of a parallel call, before it is placed
    /// in the chunk.
    block: Vec<u8>,
    /// Whether the next split block is filtered straight into the chunk
    /// ([`BlockPlan::encode_rows_in_place`]): in the last split block this
    /// worker encoded, the first stream that was not a run was stored
    /// uncompressed. That is when the in-place layout saves a copy; when
    /// that stream compresses, it costs one.
    rows_in_place: bool,
}

/// Scratch of finished helper threads, for the next parallel call.
static SPARE_ENC: std::sync::Mutex<Vec<EncWorker>> = std::sync::Mutex::new(Vec::new());

impl pool::Scratch for EncWorker {
    fn stash() -> &'static std::sync::Mutex<Vec<Self>> {
        &SPARE_ENC
    }
}

thread_local! {
    /// Scratch of the encoder running on this thread (pool workers keep theirs).
    static ENC: RefCell<EncWorker> = RefCell::new(EncWorker::default());
}

/// Runs `f` with this thread's encoder scratch (a fresh one when it is already
/// in use, e.g. by a user callback that compresses re-entrantly, or gone, in
/// the thread's exit handlers: see [`crate::scratch::with_kept`]).
fn with_worker<T>(f: impl FnOnce(&mut EncWorker) -> T) -> T {
    crate::scratch::with_kept(&ENC, EncWorker::default, f)
}

/// A reusable compression context.
///
/// Like the reference context, it remembers the block size chosen for the
/// first chunk and uses it as the forced block size of later chunks (this is
/// what makes the chunks of a super-chunk share one block size). Scratch
/// buffers live with the threads (the caller's and the pool's).
pub struct Compressor {
    cparams: CParams,
    sticky_blocksize: i32,
}

/// Everything a block encoder needs, shared by all workers.
struct BlockPlan<'a> {
    cp: CParams,
    typesize: usize,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
    dont_split: bool,
    vl: bool,
    /// Training pass: blocks are stored filtered but uncompressed, back to back.
    training: bool,
    dict: Option<Arc<EncDict>>,
    /// The (prefiltered) source of a regular chunk.
    src: &'a [u8],
    /// The sources of a VL-block chunk.
    vl_srcs: Vec<&'a [u8]>,
}

impl BlockPlan<'_> {
    /// Bytes to encode in all.
    fn total_bytes(&self) -> usize {
        if self.vl {
            self.vl_srcs.iter().map(|s| s.len()).sum()
        } else {
            self.src.len()
        }
    }

    fn block_src(&self, j: usize) -> (&[u8], usize) {
        if self.vl {
            return (self.vl_srcs[j], 0);
        }
        let start = j * self.blocksize;
        let len = if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        };
        (&self.src[start..start + len], start)
    }

    /// Streams of block `j` (of `bsize` bytes) and the size of each.
    fn streams_of(&self, j: usize, bsize: usize) -> (usize, usize) {
        let leftover_block = !self.vl && j + 1 == self.nblocks && self.leftover > 0;
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
    fn max_encoded(&self, j: usize) -> usize {
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
        if self.training || self.vl || ts == 0 || bsrc.len() % ts != 0 || bsrc.len() < ts {
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
            && !self.vl
    }

    /// Whether blocks are encoded as measurements (not in the training pass,
    /// which must store the data its samples are cut from).
    fn instrumented(&self) -> bool {
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
            chunk: self.src,
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
        let dref = if self.vl {
            bsrc
        } else {
            &self.src[..self.blocksize.min(self.src.len())]
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
    fn encode(&self, w: &mut EncWorker, j: usize, out: &mut [u8]) -> crate::Result<Option<usize>> {
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
            if !self.vl && is_uniform(s) {
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
            let csize = if self.vl { neblock } else { n };
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
            || self.vl
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

/// The chunk being filled by a parallel call: blocks are placed in block
/// order, whatever order the workers finish them in, so the chunk does not
/// depend on the number of threads.
///
/// Only the bookkeeping happens under the lock: a worker claims the room for
/// a block (a piece cut off the unclaimed tail) and copies into it after
/// letting go, so a neighbour finishing meanwhile is not held up by the copy.
struct Placement<'d> {
    /// The part of the chunk not claimed yet; it starts at byte `at`.
    tail: &'d mut [u8],
    /// The next block to place, and where it goes.
    next: usize,
    at: usize,
    /// Where each placed block starts, in block order (the bstarts).
    starts: Vec<i32>,
    /// Blocks finished before their turn: their buffer and encoded length.
    parked: Vec<Option<(Vec<u8>, usize)>>,
    /// Buffers to hand to workers whose own buffer got parked.
    spare: Vec<Vec<u8>>,
    /// A block did not fit: the chunk is abandoned.
    full: bool,
}

impl<'d> Placement<'d> {
    /// Takes block `self.next`'s turn: records its start and returns the
    /// `len` bytes it is to be copied to, or `None` once the chunk is full.
    fn claim(&mut self, len: usize) -> Option<&'d mut [u8]> {
        self.next += 1;
        if self.full || len > self.tail.len() {
            self.full = true;
            return None;
        }
        let (room, rest) = std::mem::take(&mut self.tail).split_at_mut(len);
        self.tail = rest;
        self.starts.push(self.at as i32);
        self.at += len;
        Some(room)
    }
}

/// Buffers of parked blocks, kept for the next parallel call.
static SPARE_BLOCKS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Encodes every block with `nthreads` threads and places them in `dst`
/// from byte `at` on, in block order; returns the chunk size or 0 when the
/// blocks do not fit.
///
/// Each worker encodes into its own reusable buffer. A worker finishing the
/// block whose turn it is copies it into the chunk at once (its neighbours
/// keep encoding meanwhile), then any blocks parked behind it; a worker that
/// finishes early parks its buffer and takes a spare one. No buffer is
/// allocated once the spares have grown to the block size.
fn place_in_order(
    plan: &BlockPlan<'_>,
    nthreads: usize,
    dst: &mut [u8],
    at: usize,
) -> crate::Result<usize> {
    let nblocks = plan.nblocks;
    let spare = std::mem::take(&mut *SPARE_BLOCKS.lock().unwrap_or_else(|p| p.into_inner()));
    let (head, tail) = dst.split_at_mut(at);
    let placement = std::sync::Mutex::new(Placement {
        tail,
        next: 0,
        at,
        starts: Vec::with_capacity(nblocks),
        parked: (0..nblocks).map(|_| None).collect(),
        spare,
        full: false,
    });
    let lock = || placement.lock().unwrap_or_else(|p| p.into_inner());
    let give_up = std::sync::atomic::AtomicBool::new(false);
    let r = with_worker(|w| {
        pool::run_scoped(
            (0..nblocks).collect(),
            nthreads,
            w,
            |w: &mut EncWorker, _tid, j: usize| {
                if give_up.load(std::sync::atomic::Ordering::Relaxed) {
                    return Ok(());
                }
                let mut buf = std::mem::take(&mut w.block);
                let need = plan.max_encoded(j);
                crate::mem::grow(&mut buf, need)?;
                let Some(n) = plan.encode(w, j, &mut buf)? else {
                    crate::bail!(Failure, "block {j} overflowed its worst-case size");
                };
                let mut p = lock();
                if p.next != j {
                    p.parked[j] = Some((buf, n));
                    w.block = p.spare.pop().unwrap_or_default();
                    return Ok(());
                }
                // Our turn: place this block, then the parked ones behind it.
                let (mut bytes, mut len, mut own) = (buf, n, true);
                loop {
                    let room = p.claim(len);
                    drop(p);
                    if let Some(room) = room {
                        room.copy_from_slice(&bytes[..len]);
                    }
                    p = lock();
                    if own {
                        w.block = bytes;
                    } else {
                        p.spare.push(bytes);
                    }
                    let k = p.next;
                    let Some((b, n)) = p.parked.get_mut(k).and_then(Option::take) else {
                        break;
                    };
                    (bytes, len, own) = (b, n, false);
                }
                if p.full {
                    give_up.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            },
        )
    });
    let p = placement.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut keep = p.spare;
    keep.extend(p.parked.into_iter().flatten().map(|(b, _)| b));
    SPARE_BLOCKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(keep);
    r?;
    if p.full || give_up.into_inner() {
        return Ok(0);
    }
    if p.starts.len() != nblocks {
        crate::bail!(
            Failure,
            "only {} of {nblocks} blocks were placed",
            p.starts.len()
        );
    }
    for (j, start) in p.starts.iter().enumerate() {
        let bs = Fmt::EXT_HEADER + 4 * j;
        head[bs..bs + 4].copy_from_slice(&start.to_le_bytes());
    }
    Ok(p.at)
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

impl Compressor {
    /// A context for `cparams` (validated here).
    pub fn new(cparams: CParams) -> crate::Result<Self> {
        if cparams.clevel > 9 {
            crate::bail!(CodecParam, "clevel {} not in 0..=9", cparams.clevel);
        }
        if cparams.typesize <= 0 || cparams.typesize > Fmt::MAX_BLOCKSIZE {
            crate::bail!(InvalidParam, "typesize {} out of range", cparams.typesize);
        }
        if cparams.blocksize < 0 {
            crate::bail!(InvalidParam, "negative blocksize {}", cparams.blocksize);
        }
        let out_typesize = cparams.prefilter_output.typesize;
        if cparams.prefilter.is_some() && out_typesize > cparams.typesize as usize {
            crate::bail!(
                InvalidParam,
                "prefilter output_typesize {out_typesize} is larger than typesize {}: its output \
                 would not fit the block",
                cparams.typesize
            );
        }
        if cparams.tuner_id != 0 {
            crate::bail!(
                InvalidParam,
                "tuner {} is not available (only stune, 0)",
                cparams.tuner_id
            );
        }
        pipeline::check_filters(&cparams.filters)?;
        let sticky_blocksize = cparams.blocksize;
        Ok(Compressor {
            cparams,
            sticky_blocksize,
        })
    }

    /// Replaces `cparams.user_data` (what user codecs and filters receive),
    /// keeping the block size remembered from earlier chunks.
    pub fn set_user_data(&mut self, user_data: Option<super::UserData>) {
        self.cparams.user_data = user_data;
    }

    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// Sets the chunk number a prefilter is told (-1: not in a super-chunk).
    pub fn set_nchunk(&mut self, nchunk: i64) {
        self.cparams.nchunk = nchunk;
    }

    /// Forgets the block size remembered from earlier chunks.
    pub fn reset_blocksize(&mut self) {
        self.sticky_blocksize = self.cparams.blocksize;
    }

    fn check_codec(&self) -> crate::Result<()> {
        let c = self.cparams.compcode;
        if !Codec::is_available(c) {
            if (Codec::GLOBAL_START..registry::USER_START).contains(&c) {
                crate::bail!(
                    CodecSupport,
                    "codec {c} is a reference plugin that is not registered \
                     (blosc2_init registers the loadable ones)"
                );
            }
            crate::bail!(CodecSupport, "codec {c} is not available");
        }
        if self.cparams.use_dict && !matches!(c, Codec::ZSTD | Codec::LZ4 | Codec::LZ4HC) {
            crate::bail!(CodecParam, "dictionaries need zstd, lz4 or lz4hc");
        }
        Ok(())
    }

    fn header(&self, nbytes: usize, header_blocksize: i32, typesize: usize) -> HeaderOut {
        let cp = &self.cparams;
        let versionlz = match cp.compcode {
            c if c >= registry::USER_START => registry::codec(c).map_or(0xff, |e| e.version),
            _ => 1,
        };
        HeaderOut {
            version: Fmt::VERSION_STABLE,
            versionlz,
            flags: Fmt::DOSHUFFLE | Fmt::DOBITSHUFFLE,
            typesize: typesize as u8,
            nbytes: nbytes as i32,
            blocksize: header_blocksize,
            cbytes: 0,
            filters: cp.filters,
            udcompcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            filters_meta: pipeline::recorded_meta(&cp.filters, &cp.filters_meta, typesize),
            blosc2_flags2: 0,
            blosc2_flags: 0,
        }
    }

    /// Runs the prefilter over every block, giving the bytes to compress.
    fn prefiltered(&self, src: &[u8], blocksize: usize) -> crate::Result<Option<Vec<u8>>> {
        let Some(pre) = &self.cparams.prefilter else {
            return Ok(None);
        };
        let typesize = self.cparams.typesize.max(1) as usize;
        let PrefilterOutput {
            typesize: out_typesize,
            disposable,
        } = self.cparams.prefilter_output;
        let mut out = vec![0u8; src.len()];
        for (nblock, (i, o)) in src
            .chunks(blocksize.max(1))
            .zip(out.chunks_mut(blocksize.max(1)))
            .enumerate()
        {
            // A narrower output fills the front of the block; `new` refused a
            // wider one.
            let (output, out_typesize) = match out_typesize {
                0 => (o, typesize),
                t if t == typesize => (o, typesize),
                t => (&mut o[..i.len() / typesize * t], t),
            };
            let mut args = PrefilterArgs {
                input: i,
                output,
                offset: nblock * blocksize,
                nblock,
                nchunk: self.cparams.nchunk,
                tid: 0,
                typesize: out_typesize,
            };
            if let Err(e) = pre(&mut args) {
                if !disposable {
                    crate::bail!(FilterPipeline, "prefilter failed: {e}");
                }
            }
        }
        Ok(Some(out))
    }

    /// Compresses `src` into `dst` as one chunk; returns its size, or 0 when
    /// `dst` is too small (`dst.len() >= src.len() + 32` always suffices).
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
        if src.len() > Fmt::MAX_BUFFERSIZE {
            crate::bail!(
                MaxBufsizeExceeded,
                "input of {} bytes over the maximum",
                src.len()
            );
        }
        if dst.len() < Fmt::MAX_OVERHEAD {
            crate::bail!(
                MaxBufsizeExceeded,
                "output buffer must hold at least {} bytes",
                Fmt::MAX_OVERHEAD
            );
        }
        self.check_codec()?;
        let cp = self.cparams.clone();
        let nbytes = src.len();
        let user_bs = self.sticky_blocksize;
        let blocksize = compute_blocksize(
            cp.clevel,
            cp.typesize,
            nbytes as i32,
            user_bs,
            cp.compcode,
            cp.splitmode,
            &cp.filters,
        );
        self.sticky_blocksize = blocksize;
        let mut header_bs = if user_bs > 0 { user_bs } else { blocksize };
        if nbytes > 0 && header_bs as usize > nbytes {
            header_bs = nbytes as i32;
        }
        let typesize = if cp.typesize as usize > Fmt::MAX_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let blocksize = blocksize.max(1) as usize;
        let nblocks = nbytes.div_ceil(blocksize);
        let leftover = nbytes % blocksize;
        let mut hdr = self.header(nbytes, header_bs, typesize);

        let pre = self.prefiltered(src, blocksize)?;
        let data: &[u8] = pre.as_deref().unwrap_or(src);

        let use_dict = cp.use_dict && cp.clevel > 0;
        let mut memcpyed = cp.clevel == 0 || nbytes < Fmt::MIN_BUFFERSIZE;
        if !memcpyed && Fmt::EXT_HEADER + 4 * nblocks > dst.len() {
            memcpyed = true;
        }
        if !memcpyed {
            if cp.filters.contains(&Fmt::DELTA) {
                hdr.flags |= Fmt::DODELTA;
            }
            let dont_split = !split_block(
                cp.splitmode,
                cp.compcode,
                cp.clevel,
                &cp.filters,
                typesize as i32,
                blocksize as i32,
            );
            if dont_split {
                hdr.flags |= Fmt::DONT_SPLIT;
            }
            hdr.flags |= Codec::format_of(cp.compcode) << 5;
            let mut plan = BlockPlan {
                cp: cp.clone(),
                typesize,
                blocksize,
                nblocks,
                leftover,
                dont_split,
                vl: false,
                training: false,
                dict: None,
                src: data,
                vl_srcs: Vec::new(),
            };
            let dict = if use_dict {
                self.build_dict(&mut plan, nbytes)?
            } else {
                None
            };
            let raw_dict = dict.as_ref().map(|(_, raw)| raw.clone());
            plan.dict = dict.map(|(d, _)| Arc::new(d));
            let raw_dict = raw_dict.as_deref();
            if raw_dict.is_some() {
                hdr.blosc2_flags |= Fmt::USEDICT;
            }
            let n = self.write_blocks(&plan, dst, raw_dict)?;
            let nstreams = if dont_split {
                nblocks
            } else if leftover > 0 {
                (nblocks - 1) * typesize + 1
            } else {
                nblocks * typesize
            };
            if plan.instrumented() {
                if n == 0 {
                    // The records do not fit; a plain copy would not be one.
                    return Ok(0);
                }
                let stream_bytes = |k: usize| i32::try_from(k * instr::RECORD_SIZE).ok();
                let per_block = if dont_split { 1 } else { typesize };
                let (Some(nbytes), Some(blocksize)) =
                    (stream_bytes(nstreams), stream_bytes(per_block))
                else {
                    crate::bail!(MaxBufsizeExceeded, "too many streams to instrument");
                };
                hdr.blosc2_flags |= Fmt::INSTR_CODEC;
                hdr.nbytes = nbytes;
                hdr.blocksize = blocksize;
                hdr.cbytes = n as i32;
                dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
                return Ok(n);
            }
            if n > 0 {
                let cbytes =
                    if raw_dict.is_none() && n == Fmt::EXT_HEADER + 4 * nblocks + 4 * nstreams {
                        // Every stream is a run of zeros: the chunk becomes special.
                        hdr.blosc2_flags |= Special::ZERO_CODE << 4;
                        Fmt::EXT_HEADER
                    } else {
                        n
                    };
                hdr.cbytes = cbytes as i32;
                // The reference records a forced blocksize as given even when it
                // used it rounded down to the typesize, which makes such chunks
                // undecodable; record the size actually used instead.
                if !(nbytes > 0 && blocksize >= nbytes) {
                    hdr.blocksize = blocksize as i32;
                }
                dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
                return Ok(cbytes);
            }
        }
        // Plain copy of the (prefiltered) data.
        if nbytes + Fmt::EXT_HEADER > dst.len() {
            return Ok(0);
        }
        hdr.flags |= Fmt::MEMCPYED;
        hdr.blosc2_flags &= !Fmt::USEDICT;
        hdr.cbytes = (nbytes + Fmt::EXT_HEADER) as i32;
        dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
        let nthreads = pool::threads_for(cp.nthreads, nbytes).min(nblocks.max(1));
        let body = &mut dst[Fmt::EXT_HEADER..Fmt::EXT_HEADER + nbytes];
        with_worker(|w: &mut EncWorker| pool::copy(w, body, data, nthreads))?;
        Ok(nbytes + Fmt::EXT_HEADER)
    }

    /// Trains the dictionary as the reference does: a pass storing the
    /// filtered blocks back to back, samples cut from its start, then raw
    /// bytes (LZ4) or `ZDICT_trainFromBuffer` (Zstd). `None`: no useful dict.
    fn build_dict(
        &mut self,
        plan: &mut BlockPlan<'_>,
        nbytes: usize,
    ) -> crate::Result<Option<(EncDict, Vec<u8>)>> {
        let dict_maxsize = Fmt::MAX_DICTSIZE.min(nbytes / 20);
        let mut nsamples = if plan.dont_split {
            plan.nblocks
        } else {
            plan.nblocks * plan.typesize
        };
        if nsamples < 8 && !plan.vl {
            nsamples = 8;
        }
        // VL-block chunks sample whole blocks and need at least 8 of them.
        let sample_size = nbytes / nsamples.max(1) / 16;
        if dict_maxsize < Fmt::MIN_USEFUL_DICT || sample_size == 0 || (plan.vl && plan.nblocks < 8)
        {
            return Ok(None);
        }
        plan.training = true;
        let blocks = self.encode_blocks(plan);
        plan.training = false;
        let blocks = blocks?;
        let samples: Vec<u8> = blocks.concat();
        let compcode = plan.cp.compcode;
        if compcode == Codec::LZ4 || compcode == Codec::LZ4HC {
            let wanted = if plan.vl {
                samples.len()
            } else {
                nsamples * sample_size
            };
            let size = wanted.min(dict_maxsize).min(samples.len());
            let mut raw = samples[..size].to_vec();
            // The reference writes the dictionary size into its output buffer
            // (right after the bstarts) before copying the samples from the
            // start of that same buffer, so these four bytes of the dictionary
            // are the size itself. Reproduced for identical chunks.
            let at = 4 * plan.nblocks;
            for (k, byte) in (size as i32).to_le_bytes().into_iter().enumerate() {
                if let Some(slot) = raw.get_mut(at + k) {
                    *slot = byte;
                }
            }
            return Ok(Some((EncDict::Lz4(raw.clone()), raw)));
        }
        let sizes: Vec<usize> = if plan.vl {
            blocks.iter().map(Vec::len).collect()
        } else {
            vec![sample_size; nsamples]
        };
        match zstd::train_dict(&samples, &sizes, dict_maxsize) {
            Some(raw) if !raw.is_empty() => {
                let cdict = zstd::CDict::new(&raw, 1)
                    .ok_or_else(|| crate::err!(CodecDict, "zstd dictionary"))?;
                Ok(Some((EncDict::Zstd(cdict), raw)))
            }
            _ => Ok(None),
        }
    }

    /// Encodes every block, each into its own buffer, in parallel when asked
    /// to; results in block order.
    fn encode_blocks(&mut self, plan: &BlockPlan<'_>) -> crate::Result<Vec<Vec<u8>>> {
        fn one(plan: &BlockPlan<'_>, w: &mut EncWorker, j: usize) -> crate::Result<Vec<u8>> {
            let mut out = vec![0u8; plan.max_encoded(j)];
            match plan.encode(w, j, &mut out)? {
                Some(n) => {
                    out.truncate(n);
                    Ok(out)
                }
                None => crate::bail!(Failure, "block {j} overflowed its worst-case size"),
            }
        }
        let nthreads =
            pool::threads_for(self.cparams.nthreads, plan.total_bytes()).min(plan.nblocks.max(1));
        if nthreads <= 1 {
            return with_worker(|w| (0..plan.nblocks).map(|j| one(plan, w, j)).collect());
        }
        let mut blocks: Vec<Vec<u8>> = vec![Vec::new(); plan.nblocks];
        let items: Vec<(usize, &mut Vec<u8>)> = blocks.iter_mut().enumerate().collect();
        with_worker(|w| {
            pool::run_scoped(items, nthreads, w, |w, _tid, (j, out)| {
                *out = one(plan, w, j)?;
                Ok(())
            })
        })?;
        Ok(blocks)
    }

    /// Writes the bstarts, the optional dictionary and every encoded block
    /// after the header; returns the chunk size, or 0 when it does not fit in
    /// `dst`. With one thread the blocks are encoded straight into `dst`.
    fn write_blocks(
        &mut self,
        plan: &BlockPlan<'_>,
        dst: &mut [u8],
        dict: Option<&[u8]>,
    ) -> crate::Result<usize> {
        // Offsets are stored as int32.
        let cap = dst.len().min(i32::MAX as usize);
        let dst = &mut dst[..cap];
        let nblocks = plan.nblocks;
        let mut at = Fmt::EXT_HEADER + 4 * nblocks;
        if at > dst.len() {
            return Ok(0);
        }
        if let Some(d) = dict {
            if at + 4 + d.len() > dst.len() {
                return Ok(0);
            }
            dst[at..at + 4].copy_from_slice(&(d.len() as i32).to_le_bytes());
            dst[at + 4..at + 4 + d.len()].copy_from_slice(d);
            at += 4 + d.len();
        }
        let nthreads =
            pool::threads_for(self.cparams.nthreads, plan.total_bytes()).min(nblocks.max(1));
        if nthreads <= 1 {
            return with_worker(|w| {
                for j in 0..nblocks {
                    let (bstarts, body) = dst.split_at_mut(at);
                    let Some(n) = plan.encode(w, j, body)? else {
                        return Ok(0);
                    };
                    let bs = Fmt::EXT_HEADER + 4 * j;
                    bstarts[bs..bs + 4].copy_from_slice(&(at as i32).to_le_bytes());
                    at += n;
                }
                Ok(at)
            });
        }
        place_in_order(plan, nthreads, dst, at)
    }

    /// Compresses several buffers into one VL-block chunk (one block each).
    pub fn compress_vl(&mut self, srcs: &[&[u8]], dst: &mut [u8]) -> crate::Result<usize> {
        if srcs.is_empty() || srcs.len() > i32::MAX as usize {
            crate::bail!(InvalidParam, "a VL-block chunk needs at least one block");
        }
        if self.cparams.instr_codec {
            // The reference writes such chunks with csizes that disagree with
            // their records; there is no layout to be compatible with.
            crate::bail!(InvalidParam, "VL-block chunks cannot be instrumented");
        }
        let mut total = 0usize;
        let mut max_block = 0usize;
        for (i, s) in srcs.iter().enumerate() {
            if s.is_empty() {
                crate::bail!(InvalidParam, "VL block {i} is empty");
            }
            total += s.len();
            if total > Fmt::MAX_BUFFERSIZE {
                crate::bail!(
                    MaxBufsizeExceeded,
                    "VL blocks add up to more than the maximum"
                );
            }
            max_block = max_block.max(s.len());
        }
        if dst.len() < Fmt::MAX_OVERHEAD {
            crate::bail!(
                MaxBufsizeExceeded,
                "output buffer must hold at least {} bytes",
                Fmt::MAX_OVERHEAD
            );
        }
        self.check_codec()?;
        let cp = self.cparams.clone();
        let typesize = if cp.typesize as usize > Fmt::MAX_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let nblocks = srcs.len();
        // As in the reference, the context keeps the largest block as its
        // block size for later chunks.
        self.sticky_blocksize = max_block as i32;
        let mut hdr = self.header(total, nblocks as i32, typesize);
        hdr.version = Fmt::VERSION_VL_BLOCKS;
        hdr.blosc2_flags2 = Fmt::VL_BLOCKS;
        if Fmt::EXT_HEADER + 4 * nblocks > dst.len() {
            return Ok(0);
        }
        if cp.filters.contains(&Fmt::DELTA) {
            hdr.flags |= Fmt::DODELTA;
        }
        hdr.flags |= Fmt::DONT_SPLIT | (Codec::format_of(cp.compcode) << 5);
        let plan = BlockPlan {
            cp: cp.clone(),
            typesize,
            blocksize: max_block,
            nblocks,
            leftover: 0,
            dont_split: true,
            vl: true,
            training: false,
            dict: None,
            src: &[],
            vl_srcs: srcs.to_vec(),
        };
        let mut plan = plan;
        let dict = if cp.use_dict && cp.clevel > 0 {
            self.build_dict(&mut plan, total)?
        } else {
            None
        };
        let raw_dict = dict.as_ref().map(|(_, raw)| raw.clone());
        plan.dict = dict.map(|(d, _)| Arc::new(d));
        if raw_dict.is_some() {
            hdr.blosc2_flags |= Fmt::USEDICT;
        }
        let n = self.write_blocks(&plan, dst, raw_dict.as_deref())?;
        if n == 0 {
            return Ok(0);
        }
        hdr.cbytes = n as i32;
        dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disposable prefilter output is never encoded: the prefilter runs on
    /// every block (its errors ignored) and the chunk is a zeros chunk; a
    /// narrower output fills the front of each block.
    #[test]
    fn prefilter_output_knobs() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let data: Vec<u8> = (0..50_000u64).flat_map(|i| i.to_le_bytes()).collect();
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = calls.clone();
        let cp = CParams {
            typesize: 8,
            blocksize: 16 * 1024,
            prefilter: Some(Arc::new(move |a: &mut PrefilterArgs<'_>| {
                seen.fetch_add(1, Ordering::Relaxed);
                let n = a.output.len() / a.typesize;
                for k in 0..n {
                    let v = u64::from_le_bytes(a.input[8 * k..8 * k + 8].try_into().unwrap());
                    a.output[k * a.typesize..][..a.typesize]
                        .copy_from_slice(&v.to_le_bytes()[..a.typesize]);
                }
                crate::bail!(Failure, "only disposable output survives this")
            })),
            prefilter_output: PrefilterOutput {
                typesize: 0,
                disposable: true,
            },
            ..CParams::default()
        };
        let mut out = vec![0u8; data.len() + 32];
        let n = Compressor::new(cp.clone())
            .unwrap()
            .compress(&data, &mut out)
            .unwrap();
        assert_eq!(n, Fmt::EXT_HEADER);
        assert_eq!(out[31] >> 4, Special::ZERO_CODE);
        assert_eq!(
            calls.load(Ordering::Relaxed),
            data.len().div_ceil(16 * 1024)
        );
        // Not disposable: the error is the prefilter's.
        let strict = CParams {
            prefilter_output: PrefilterOutput::default(),
            ..cp.clone()
        };
        assert!(Compressor::new(strict)
            .unwrap()
            .compress(&data, &mut out)
            .is_err());
        // Narrower items, and an Ok prefilter.
        let narrow = CParams {
            prefilter: Some(Arc::new(|a: &mut PrefilterArgs<'_>| {
                assert_eq!((a.typesize, a.output.len() * 2), (4, a.input.len()));
                a.output.fill(0xAB);
                Ok(())
            })),
            prefilter_output: PrefilterOutput {
                typesize: 4,
                disposable: false,
            },
            ..cp.clone()
        };
        let n = Compressor::new(narrow)
            .unwrap()
            .compress(&data, &mut out)
            .unwrap();
        let mut back = vec![0u8; data.len()];
        let mut d = super::super::Decompressor::new(super::super::DParams::default());
        d.decompress(&out[..n], &mut back).unwrap();
        for (b, block) in back.chunks(16 * 1024).enumerate() {
            let half = block.len() / 2;
            assert!(block[..half].iter().all(|&x| x == 0xAB), "block {b}");
            assert!(block[half..].iter().all(|&x| x == 0), "block {b}");
        }
        let wide = CParams {
            prefilter_output: PrefilterOutput {
                typesize: 16,
                disposable: false,
            },
            ..cp
        };
        assert_eq!(Compressor::new(wide).err().map(|e| e.code()), Some(-12));
    }

    /// Parallel calls place blocks in block order, parking the ones that
    /// finish early, and give up like the serial path when the chunk does not
    /// fit: same bytes for every thread count and destination size.
    #[test]
    fn parallel_placement_matches_the_serial_chunk() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Compressible (small values) and incompressible (random) data.
        let small: Vec<u8> = (0..600_000).map(|_| (next() % 7) as u8).collect();
        let noise: Vec<u8> = (0..600_000).map(|_| next() as u8).collect();
        for (data, compcode) in [(&small, Codec::LZ4), (&noise, Codec::BLOSCLZ)] {
            let cp = |nthreads: i16| CParams {
                compcode,
                typesize: 4,
                blocksize: 8 * 1024,
                nthreads,
                filters: [0, 0, 0, 0, 0, Fmt::SHUFFLE],
                ..CParams::default()
            };
            let mut want = vec![0u8; data.len() + 64];
            let nw = Compressor::new(cp(1))
                .unwrap()
                .compress(data, &mut want)
                .unwrap();
            // Room for the serial chunk exactly, and slightly less.
            for room in [nw, nw - 1, Fmt::MAX_OVERHEAD + 1000] {
                let mut one = vec![0u8; room];
                let n1 = Compressor::new(cp(1))
                    .unwrap()
                    .compress(data, &mut one)
                    .unwrap();
                for nthreads in [2i16, 3, 4] {
                    for _ in 0..3 {
                        let mut got = vec![0u8; room];
                        let n = Compressor::new(cp(nthreads))
                            .unwrap()
                            .compress(data, &mut got)
                            .unwrap();
                        assert_eq!(n, n1, "room {room} nthreads {nthreads}");
                        assert!(got[..n] == one[..n1], "room {room} nthreads {nthreads}");
                    }
                }
            }
            let mut back = vec![0u8; data.len()];
            super::super::decompress(&want[..nw], &mut back).unwrap();
            assert!(back == *data);
        }
    }

    /// Compressing repeated items with SHUFFLE (which skips the shuffle)
    /// must give the streams that compressing the shuffled blocks with no
    /// filter gives.
    #[test]
    fn repeated_items_under_shuffle_match_the_shuffled_streams() {
        for ts in [2usize, 3, 4, 8, 16] {
            for splitmode in [Fmt::ALWAYS_SPLIT, Fmt::NEVER_SPLIT] {
                let item: Vec<u8> = (0..ts).map(|k| (k * 37 + 1) as u8).collect();
                let blocksize = 256 * ts;
                // Two whole blocks and a leftover one.
                let data: Vec<u8> = item
                    .iter()
                    .copied()
                    .cycle()
                    .take(blocksize * 2 + 5 * ts)
                    .collect();
                let mut pre = vec![0u8; data.len()];
                for (s, d) in data.chunks(blocksize).zip(pre.chunks_mut(blocksize)) {
                    crate::filters::shuffle::shuffle(ts, s, d);
                }
                let cp = |filters: [u8; 6]| CParams {
                    compcode: Codec::LZ4,
                    typesize: ts as i32,
                    blocksize: blocksize as i32,
                    splitmode,
                    filters,
                    ..CParams::default()
                };
                let mut a = vec![0u8; data.len() + 64];
                let mut b = vec![0u8; data.len() + 64];
                let na = Compressor::new(cp([0, 0, 0, 0, 0, Fmt::SHUFFLE]))
                    .unwrap()
                    .compress(&data, &mut a)
                    .unwrap();
                let nb = Compressor::new(cp([0; 6]))
                    .unwrap()
                    .compress(&pre, &mut b)
                    .unwrap();
                assert_eq!(na, nb, "ts {ts} split {splitmode}");
                assert_eq!(a[32..na], b[32..nb], "ts {ts} split {splitmode}");
                let mut back = vec![0u8; data.len()];
                super::super::decompress(&a[..na], &mut back).unwrap();
                assert_eq!(back, data);
            }
        }
    }

    /// A split block filtered straight into the chunk
    /// (`encode_rows_in_place`: the shuffle, alone or followed by
    /// BYTEDELTA) gives the bytes the copying loop gives, for planes that
    /// are by turns stored, runs and compressed, in every order,
    /// with room for the chunk and less. Which layout a block takes follows
    /// the worker's `rows_in_place`, set here before each call.
    #[test]
    fn rows_in_place_match_the_copying_loop() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let compress = |hint: bool, cp: &CParams, src: &[u8], room: usize| {
            ENC.with(|c| c.borrow_mut().rows_in_place = hint);
            let mut dst = vec![0u8; room];
            let n = Compressor::new(cp.clone())
                .unwrap()
                .compress(src, &mut dst)
                .unwrap();
            dst.truncate(n);
            dst
        };
        let mut in_place_blocks = 0;
        for case in 0..200 {
            let typesize = 2 + case % 15;
            let items = 512 + (next() % 3000) as usize;
            // Each plane: random, one byte, a slow ramp, or a ramp with
            // every 16th byte random (compresses, but not to a run).
            let kinds: Vec<u64> = (0..typesize).map(|_| next() % 4).collect();
            let mut src = vec![0u8; items * typesize];
            for (i, item) in src.chunks_exact_mut(typesize).enumerate() {
                for (j, b) in item.iter_mut().enumerate() {
                    *b = match kinds[j] {
                        0 => next() as u8,
                        1 => 0x3c,
                        2 => (i / 50) as u8,
                        _ if i % 16 == 0 => next() as u8,
                        _ => (i / 7) as u8,
                    };
                }
            }
            let cp = CParams {
                compcode: [0u8, 1, 2, 4, 5][case % 5],
                clevel: [1u8, 5, 9][case / 5 % 3],
                typesize: typesize as i32,
                splitmode: Fmt::ALWAYS_SPLIT,
                // One block, so the hint set decides its layout; every
                // fourth case several, each block following the one before.
                blocksize: if case % 4 == 3 { 0 } else { src.len() as i32 },
                // The shuffle alone, or followed by either BYTEDELTA, with
                // the typesize given or left to the header's.
                filters: match case / 15 % 3 {
                    0 => [0, 0, 0, 0, 0, Fmt::SHUFFLE],
                    1 => [0, 0, 0, 0, Fmt::SHUFFLE, Fmt::BYTEDELTA],
                    _ => [0, 0, 0, 0, Fmt::SHUFFLE, Fmt::BYTEDELTA_BUGGY],
                },
                filters_meta: [0, 0, 0, 0, 0, (case / 45 % 2 * typesize) as u8],
                ..CParams::default()
            };
            let want = compress(false, &cp, &src, src.len() + Fmt::MAX_OVERHEAD);
            let mut back = vec![0u8; src.len()];
            super::super::decompress(&want, &mut back).unwrap();
            assert!(back == src, "case {case}: round trip");
            // The first room takes every stream of a one-block chunk stored,
            // which the in-place layout needs (`src.len() + MAX_OVERHEAD`
            // leaves it `4 * typesize + 4` bytes short, and the loop runs);
            // the others are just enough for the chunk, and not quite.
            let all_stored = Fmt::EXT_HEADER + 4 + src.len() + 4 * typesize;
            for room in [all_stored, want.len(), want.len() - 1] {
                let want = compress(false, &cp, &src, room);
                let got = compress(true, &cp, &src, room);
                assert!(got == want, "case {case} room {room}: kinds {kinds:?}");
                let split = want.len() > 2 && want[2] & (Fmt::DONT_SPLIT | Fmt::MEMCPYED) == 0;
                if room == all_stored && split && case % 4 != 3 {
                    in_place_blocks += 1;
                }
            }
        }
        assert!(
            in_place_blocks > 100,
            "{in_place_blocks} split one-block chunks"
        );
    }
}
