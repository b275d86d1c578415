//! Decoding one block of a validated chunk.
//!
//! A [`DecodePlan`] holds what every block of one decode call shares (the
//! chunk, the parameters, the postfilter that applies, the stream codec) and
//! is built once per call; a [`BlockJob`] names one block and what is wanted
//! of it.

use std::ops::Range;

use super::super::page_buf::PageBuf;
use super::super::pipeline::{self, BlockCtx};
use super::super::prefetch;
use super::super::stream::{self, CodecState, StreamCodec};
use super::super::{DParams, Postfilter, PostfilterArgs};
use super::prepared::{rd_i32, OneStream, Prepared, Unfilter};
use super::DecWorker;
use crate::codecs::registry::CallInfo;
use crate::filters::shuffle::{self, Plane};

/// What decoding any block of one chunk in one call needs besides the block.
pub(super) struct DecodePlan<'p, 'c> {
    pub(super) chunk: &'p Prepared<'c>,
    pub(super) dp: &'p DParams,
    /// The postfilter run on each block: the parameters' one, unless the
    /// chunk is instrumented (its measurement records are not filtered).
    postfilter: Option<&'p Postfilter>,
    /// The fast route of single-stream chunks, when no postfilter is set.
    one_stream: Option<OneStream>,
    /// The typesize, when a block split into its byte planes can take
    /// [`DecodePlan::decode_planes`]: the shuffle alone reads the planes
    /// where they lie, no postfilter is set, and the chunk is neither stored
    /// nor special.
    planes: Option<usize>,
    /// The chunk's codec, dictionary and what a user codec is told.
    codec: StreamCodec<'p>,
}

/// One block to decode.
pub(super) struct BlockJob<'b> {
    /// Its index in the chunk.
    pub(super) nblock: usize,
    /// Its streams, from `bytes[0]` on (more may follow).
    pub(super) bytes: &'b [u8],
    /// The decoded first block, DELTA's reference.
    pub(super) dref: Option<&'b [u8]>,
    /// The worker id a postfilter is told.
    pub(super) tid: usize,
    /// The bytes of the block that must be written; `0..size` for all.
    pub(super) want: Range<usize>,
}

/// A stream of a block whose size field `csize` has been read; its bytes
/// start at `bytes[pos]`.
struct StreamAt<'b> {
    nblock: usize,
    bytes: &'b [u8],
    pos: usize,
    csize: i32,
}

impl<'p, 'c> DecodePlan<'p, 'c> {
    pub(super) fn new(chunk: &'p Prepared<'c>, dp: &'p DParams) -> Self {
        let h = &chunk.h;
        let info = CallInfo {
            typesize: h.typesize() as i32,
            clevel: 0,
            compcode: h.compcode(),
            compcode_meta: h.compcode_meta,
            nthreads: dp.nthreads,
            blocksize: chunk.blocksize as i32,
            chunk: chunk.src,
            user: dp.user_data.as_ref(),
        };
        DecodePlan {
            chunk,
            dp,
            postfilter: dp.postfilter.as_ref().filter(|_| !h.is_instrumented()),
            one_stream: chunk.one_stream.filter(|_| dp.postfilter.is_none()),
            planes: match chunk.unfilter {
                Unfilter::Shuffle { planes: true, .. }
                    if dp.postfilter.is_none() && !chunk.memcpyed && chunk.special == 0 =>
                {
                    Some(h.typesize())
                }
                _ => None,
            },
            codec: StreamCodec {
                compformat: h.compformat(),
                compcode: h.compcode(),
                compcode_meta: h.compcode_meta,
                dict: chunk.dict.as_deref(),
                info,
                block_shape: dp.block_shape.as_deref(),
            },
        }
    }

    /// Decodes `job`'s block into `out` (exactly the block's size). Only
    /// `out[job.want]` has to be written: the rest may be left as it was or
    /// hold anything.
    ///
    /// Returns `Some(n)` when the output depends on nothing but the first `n`
    /// bytes of `job.bytes` and the block's size: then any other block of
    /// this chunk, of the same size, whose bytes start with those same `n`
    /// bytes decodes to the same output (see `Decompressor::decode_into`).
    /// That holds for the built-in codecs and filters without a postfilter,
    /// except for block 0 under DELTA (coded against itself, the others
    /// against it).
    #[inline]
    pub(super) fn decode_block(
        &self,
        w: &mut DecWorker,
        job: &BlockJob<'_>,
        out: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        let p = self.chunk;
        // A block read whole is not hinted (see `bytes_to_prefetch`).
        if job.want.len() < out.len() {
            prefetch::block(p.bytes_to_prefetch(job.nblock, job.bytes, &job.want, out.len()));
        }
        if let Some(how) = self.one_stream {
            return self.decode_one_stream(w, job, out, how);
        }
        match self.planes {
            // A block of whole items, one stream per byte plane (not the
            // leftover block, stored as one stream).
            Some(ts) if out.len() % ts == 0 && p.nstreams(job.nblock, out.len()) == ts => {
                self.decode_planes(w, job, out, ts)
            }
            _ => self.decode_block_any(w, job, out),
        }
    }

    /// [`DecodePlan::decode_block`] for a block of `out.len()` bytes split
    /// into `ts` streams, one per byte plane, whose only filter is the
    /// shuffle, without a postfilter (see `planes`): what
    /// [`DecodePlan::decode_block_any`] does for such a block, in one pass
    /// over the streams that builds the planes the unshuffle reads. A plane
    /// stored uncompressed (often most of them, for floats) is read where it
    /// lies rather than copied into scratch first, as the reference does,
    /// and one coded as a run is not written out.
    fn decode_planes(
        &self,
        w: &mut DecWorker,
        job: &BlockJob<'_>,
        out: &mut [u8],
        ts: usize,
    ) -> crate::Result<Option<usize>> {
        let (j, bytes, want) = (job.nblock, job.bytes, &job.want);
        let bsize = out.len();
        let n = bsize / ts;
        // A partial read decodes each plane up to the needed items' end.
        let needed = NeededItems::of(want, ts, bsize);
        let need = needed.as_ref().map_or(n, |items| items.0.end);
        // Every byte of the scratch a plane decodes into is written, so it
        // is only grown, never cleared.
        if w.a.len() < bsize {
            w.a.resize(bsize)?;
        }
        let DecWorker { codec, a, .. } = w;
        // At most 16 planes (`planes_are_fast`), gathered as rows of bytes;
        // a plane coded as a run sets its bit in `runs` and its value in
        // `values` instead. The usual block has no run and is read whole,
        // and its rows go to the kernel as they are.
        let mut rows: [&[u8]; 16] = [&[]; 16];
        let (mut runs, mut values) = (0u16, [0u8; 16]);
        let mut pos = 0usize;
        let planes = rows[..ts].iter_mut().zip(a[..bsize].chunks_exact_mut(n));
        for (k, (row, dst)) in planes.enumerate() {
            let csize = rd_i32(bytes, pos)?;
            pos += 4;
            if csize as usize == n {
                let Some(stored) = bytes.get(pos..pos + n) else {
                    crate::bail!(ReadBuffer, "stream of block {j} extends past the chunk");
                };
                *row = stored;
                pos += n;
                continue;
            }
            if let Some((value, next)) = run_of(j, bytes, pos, csize)? {
                runs |= 1 << k;
                values[k] = value;
                pos = next;
                continue;
            }
            let stream = StreamAt {
                nblock: j,
                bytes,
                pos,
                csize,
            };
            pos = self.decode_stream(codec, &stream, dst, need)?;
            *row = dst;
        }
        if runs == 0 {
            match needed {
                Some(items) => items.unshuffle_rows(&rows, ts, out),
                None => shuffle::unshuffle_byte_rows(&rows, ts, out),
            }
        } else {
            let mut planes = [Plane::Run(0); 16];
            for (k, (plane, row)) in planes[..ts].iter_mut().zip(rows).enumerate() {
                *plane = match runs >> k & 1 {
                    0 => Plane::Bytes(row),
                    _ => Plane::Run(values[k]),
                };
            }
            match needed {
                Some(items) => items.unshuffle(&planes[..ts], out),
                None => shuffle::unshuffle_planes(&planes[..ts], out),
            }
        }
        Ok(self.chunk.block_is_copyable(self.dp, j).then_some(pos))
    }

    /// [`DecodePlan::decode_block`] for a block of a chunk whose blocks are
    /// each one stream (see [`OneStream`]), without a postfilter: only what
    /// such a block needs, none of the general route's plane bookkeeping.
    fn decode_one_stream(
        &self,
        w: &mut DecWorker,
        job: &BlockJob<'_>,
        out: &mut [u8],
        how: OneStream,
    ) -> crate::Result<Option<usize>> {
        let (j, bytes, want) = (job.nblock, job.bytes, &job.want);
        let stream = StreamAt {
            nblock: j,
            bytes,
            pos: 4,
            csize: rd_i32(bytes, 0)?,
        };
        let consumed = match how {
            OneStream::Raw => self.decode_stream(&mut w.codec, &stream, out, want.end)?,
            OneStream::Unshuffle(group) => {
                let bsize = out.len();
                // Every byte of the scratch is written by the stream, so it
                // is only grown, never cleared.
                if w.a.len() < bsize {
                    w.a.resize(bsize)?;
                }
                w.a.truncate(bsize);
                let needed = NeededItems::of(want, group, bsize);
                // The planes lie one after another in the stream: the needed
                // items of the last one end its needed part.
                let need = needed
                    .as_ref()
                    .map_or(bsize, |items| (group - 1) * (bsize / group) + items.0.end);
                let consumed = self.decode_stream(&mut w.codec, &stream, &mut w.a, need)?;
                match needed {
                    Some(items) => {
                        let n = bsize / group;
                        let mut planes = [Plane::Run(0); 16];
                        for (k, plane) in planes.iter_mut().enumerate().take(group) {
                            *plane = Plane::Bytes(&w.a[k * n..(k + 1) * n]);
                        }
                        items.unshuffle(&planes[..group], out);
                    }
                    None => shuffle::unshuffle(group, &w.a, out),
                }
                consumed
            }
        };
        Ok(self.chunk.block_is_copyable(self.dp, j).then_some(consumed))
    }

    /// Decodes `s` into `dst` (the stream's whole output), at least its
    /// first `need` bytes: a run of zeros, of one byte value, stored bytes
    /// or a codec stream (see [`stream::decode`]). Returns where the next
    /// stream starts.
    fn decode_stream(
        &self,
        codec: &mut CodecState,
        s: &StreamAt<'_>,
        dst: &mut [u8],
        need: usize,
    ) -> crate::Result<usize> {
        let (j, bytes, pos) = (s.nblock, s.bytes, s.pos);
        let need = need.min(dst.len());
        if let Some((value, next)) = run_of(j, bytes, pos, s.csize)? {
            dst[..need].fill(value);
            return Ok(next);
        }
        let csize = s.csize as usize;
        let Some(s) = bytes.get(pos..pos + csize) else {
            crate::bail!(ReadBuffer, "stream of block {j} extends past the chunk");
        };
        if csize == dst.len() {
            dst[..need].copy_from_slice(&s[..need]);
        } else {
            stream::decode(codec, &self.codec, s, dst, need)?;
        }
        Ok(pos + csize)
    }

    /// [`DecodePlan::decode_block`] for any block.
    #[inline(never)]
    fn decode_block_any(
        &self,
        w: &mut DecWorker,
        job: &BlockJob<'_>,
        out: &mut [u8],
    ) -> crate::Result<Option<usize>> {
        let p = self.chunk;
        let (j, want) = (job.nblock, &job.want);
        let bsize = out.len();
        let (offset, _) = p.block_span(j);
        let postfilter = self.postfilter;
        if p.memcpyed || p.special != 0 {
            let bytes = job.bytes;
            let fill = |dst: &mut [u8]| -> crate::Result<()> {
                if p.special != 0 {
                    return p.fill_special_range(offset, dst);
                }
                if bytes.len() < dst.len() {
                    crate::bail!(ReadBuffer, "memcpyed block {j} is short");
                }
                dst.copy_from_slice(&bytes[..dst.len()]);
                Ok(())
            };
            return match postfilter {
                None => fill(out).map(|()| None),
                Some(pf) => {
                    w.a.resize(bsize)?;
                    let mut tmp = std::mem::take(&mut w.a);
                    fill(&mut tmp)?;
                    let r = self.run_postfilter(pf, job, &tmp, out);
                    w.a = tmp;
                    r.map(|()| None)
                }
            };
        }
        let bytes = match &p.vl {
            Some(vl) => &job.bytes[..job.bytes.len().min(vl.cbytes[j])],
            None => job.bytes,
        };
        let filtered = p.unfilter != Unfilter::Nothing;
        let typesize = p.h.typesize();
        let vl = p.vl.is_some();
        let nstreams = p.nstreams(j, bsize);
        let neblock = bsize / nstreams;
        if neblock == 0 {
            crate::bail!(WriteBuffer, "block {j} is empty");
        }
        let use_tmp = filtered || postfilter.is_some();
        // Shuffle alone over a block split into one stream per byte plane:
        // the unshuffle reads each plane where it lies, so the planes stored
        // uncompressed (often most of them, for floats) are not copied into
        // the scratch first, as the reference does.
        let planes_in_place = matches!(p.unfilter, Unfilter::Shuffle { planes: true, .. })
            && postfilter.is_none()
            && nstreams == typesize
            && neblock * nstreams == bsize;
        // The items a partial read needs, which are a prefix of each plane
        // (up to their end) to decode.
        let needed = if planes_in_place {
            NeededItems::of(want, nstreams, bsize)
        } else {
            None
        };
        // How much of stream `k` to decode: of a plane, up to the needed
        // items' end; of a stream written straight to `out` (no filter), up
        // to the end of what is wanted of its part of the block (nothing when
        // it lies before or after that); otherwise all of it.
        let need = |k: usize| match &needed {
            Some(items) => items.0.end,
            None if !use_tmp => {
                if want.start >= (k + 1) * neblock {
                    0
                } else {
                    want.end.saturating_sub(k * neblock)
                }
            }
            None => neblock,
        };
        // For each plane stored uncompressed, where it starts in `bytes`;
        // for each coded as a run, its value.
        let mut placed = [Placed::Decoded; 16];
        let mut work = std::mem::take(&mut w.a);
        if use_tmp {
            // Every byte gets written below (streams, then the tail), so the
            // scratch is only grown, never cleared.
            if work.len() < bsize {
                work.resize(bsize)?;
            }
            work.truncate(bsize);
        }
        let result = (|| -> crate::Result<usize> {
            let target: &mut [u8] = if use_tmp { &mut work[..] } else { &mut *out };
            // Bytes past the last whole stream (none when the block divides,
            // and then no call to memset for nothing).
            if neblock * nstreams < bsize {
                target[neblock * nstreams..].fill(0);
            }
            let mut pos = 0usize;
            for (k, dst) in target.chunks_exact_mut(neblock).take(nstreams).enumerate() {
                let csize = rd_i32(bytes, pos)?;
                pos += 4;
                if vl {
                    if csize as usize != bsize || csize <= 0 {
                        crate::bail!(Data, "VL block {j} records size {csize}, expected {bsize}");
                    }
                    let s = &bytes[pos..];
                    if s.len() == neblock {
                        dst.copy_from_slice(s);
                    } else {
                        stream::decode(&mut w.codec, &self.codec, s, dst, neblock)?;
                    }
                    pos = bytes.len();
                    continue;
                }
                // A plane stored uncompressed is read where it lies, and
                // one coded as a run is not written out.
                if planes_in_place && csize as usize == neblock {
                    if bytes.len() < pos + neblock {
                        crate::bail!(ReadBuffer, "stream of block {j} extends past the chunk");
                    }
                    placed[k] = Placed::Stored(pos);
                    pos += neblock;
                    continue;
                }
                if planes_in_place {
                    if let Some((value, next)) = run_of(j, bytes, pos, csize)? {
                        placed[k] = Placed::Run(value);
                        pos = next;
                        continue;
                    }
                }
                let stream = StreamAt {
                    nblock: j,
                    bytes,
                    pos,
                    csize,
                };
                pos = self.decode_stream(&mut w.codec, &stream, dst, need(k))?;
            }
            Ok(pos)
        })();
        let consumed = match result {
            Ok(n) => n,
            Err(e) => {
                w.a = work;
                return Err(e);
            }
        };
        // Whether the output is a function of `bytes[..consumed]` alone.
        let repeatable = p.block_is_copyable(self.dp, j).then_some(consumed);
        if !use_tmp {
            w.a = work;
            return Ok(repeatable);
        }
        if planes_in_place {
            // At most 16 planes (`planes_are_fast`).
            let mut planes = [Plane::Run(0); 16];
            for (k, plane) in planes.iter_mut().enumerate().take(nstreams) {
                *plane = match placed[k] {
                    Placed::Stored(at) => Plane::Bytes(&bytes[at..at + neblock]),
                    Placed::Run(value) => Plane::Run(value),
                    Placed::Decoded => Plane::Bytes(&work[k * neblock..(k + 1) * neblock]),
                };
            }
            match needed {
                Some(items) => items.unshuffle(&planes[..nstreams], out),
                None => shuffle::unshuffle_planes(&planes[..nstreams], out),
            }
            w.a = work;
            return Ok(repeatable);
        }
        if let (Unfilter::Shuffle { group, .. }, None) = (p.unfilter, postfilter) {
            // What `pipeline::backward` would do for this one filter.
            shuffle::unshuffle(group, &work[..bsize], out);
            w.a = work;
            return Ok(repeatable);
        }
        let r = (|| -> crate::Result<()> {
            let ctx = BlockCtx {
                filters: &p.h.filters,
                filters_meta: &p.h.filters_meta,
                typesize,
                offset: if vl { 0 } else { offset },
                version: p.h.version,
                block_shape: self.dp.block_shape.as_deref(),
                info: self.codec.info,
            };
            match postfilter {
                Some(pf) => {
                    if filtered {
                        // The filters' result goes to `b`, the postfilter's input.
                        let mut mid = std::mem::take(&mut w.b);
                        mid.resize(bsize)?;
                        let mut spare = PageBuf::default();
                        let r = pipeline::backward(&ctx, &mut work, &mut spare, job.dref, &mut mid)
                            .and_then(|()| self.run_postfilter(pf, job, &mid, out));
                        w.b = mid;
                        r
                    } else {
                        self.run_postfilter(pf, job, &work, out)
                    }
                }
                // Filters only: the last one writes straight into `out`.
                None => pipeline::backward(&ctx, &mut work, &mut w.b, job.dref, out),
            }
        })();
        w.a = work;
        r.map(|()| repeatable)
    }

    /// Runs postfilter `pf` on `job`'s block: `input` decoded, into `output`.
    fn run_postfilter(
        &self,
        pf: &Postfilter,
        job: &BlockJob<'_>,
        input: &[u8],
        output: &mut [u8],
    ) -> crate::Result<()> {
        let mut args = PostfilterArgs {
            input,
            output,
            offset: self.chunk.block_span(job.nblock).0,
            nblock: job.nblock,
            nchunk: self.dp.nchunk,
            tid: job.tid,
            typesize: self.chunk.h.typesize(),
        };
        pf(&mut args).map_err(|e| crate::err!(Postfilter, "postfilter failed: {e}"))
    }
}

/// Where the unshuffle finds a byte plane of a split block
/// (`DecodePlan::decode_block_any`): decoded into the scratch, stored in the
/// chunk from an offset on, or one value throughout.
#[derive(Clone, Copy)]
enum Placed {
    Decoded,
    Stored(usize),
    Run(u8),
}

/// The items of a byte-shuffled block that a partial read needs, when they
/// are fewer than all of them: only those are unshuffled, and each plane
/// decoded only up to their end where the codec can stop early
/// ([`stream::decode`]). A small slice reads a few rows of each block
/// it touches, and the rest was work thrown away.
struct NeededItems(Range<usize>);

impl NeededItems {
    /// The items of `typesize` bytes holding bytes `want` of a block of
    /// `bsize` bytes, unless that is all of them or the block is not whole
    /// items; `None` too where [`shuffle::unshuffle_planes`] has no vector
    /// kernel for the size (the whole unshuffle is then faster).
    ///
    /// The range is widened to whole steps of the vector kernels (32 items,
    /// counted from the block's first), as far as the block goes: the items
    /// past a step's end would go through the scalar loop, and a partial
    /// decode may write bytes it was not asked for.
    fn of(want: &Range<usize>, typesize: usize, bsize: usize) -> Option<Self> {
        const STEP: usize = 32;
        if want.len() == bsize || bsize % typesize != 0 || !shuffle::planes_are_fast(typesize) {
            return None;
        }
        let n = bsize / typesize;
        let first = want.start / typesize / STEP * STEP;
        let end = (want.end.div_ceil(typesize).div_ceil(STEP) * STEP).min(n);
        Some(NeededItems(first..end))
    }

    /// [`NeededItems::unshuffle`] of planes that are all bytes, given as
    /// the rows `rows[..typesize]` (see `shuffle::unshuffle_byte_rows`).
    /// Out of line: inlined, it cost the whole-block route of
    /// `DecodePlan::decode_planes` some 45 instructions a call.
    #[inline(never)]
    fn unshuffle_rows(&self, rows: &[&[u8]; 16], typesize: usize, out: &mut [u8]) {
        let mut part: [&[u8]; 16] = [&[]; 16];
        for (p, row) in part[..typesize].iter_mut().zip(rows) {
            *p = &row[self.0.clone()];
        }
        let bytes = self.0.start * typesize..self.0.end * typesize;
        shuffle::unshuffle_byte_rows(&part, typesize, &mut out[bytes]);
    }

    /// Unshuffles these items of the block whose byte planes are `planes`
    /// (at most 16, each one byte per item of the block) into their place
    /// in `out`, the block.
    fn unshuffle(&self, planes: &[Plane<'_>], out: &mut [u8]) {
        let typesize = planes.len();
        let mut part = [Plane::Run(0); 16];
        for (p, plane) in part.iter_mut().zip(planes) {
            *p = match *plane {
                Plane::Bytes(b) => Plane::Bytes(&b[self.0.clone()]),
                run => run,
            };
        }
        let bytes = self.0.start * typesize..self.0.end * typesize;
        shuffle::unshuffle_planes(&part[..typesize], &mut out[bytes]);
    }
}

/// The byte a stream of block `j` whose size field `csize` has been read
/// (its bytes from `bytes[pos]` on) repeats, and where the next stream
/// starts, when it is coded as a run: `csize` 0 for zeros, or minus the
/// value, followed by an odd token byte. `None` for any other stream.
fn run_of(j: usize, bytes: &[u8], pos: usize, csize: i32) -> crate::Result<Option<(u8, usize)>> {
    if csize == 0 {
        return Ok(Some((0, pos)));
    }
    if csize > 0 {
        return Ok(None);
    }
    let Some(&token) = bytes.get(pos) else {
        crate::bail!(ReadBuffer, "missing run token in block {j}");
    };
    if token & 1 == 0 || csize < -255 {
        crate::bail!(
            RunLength,
            "invalid run in block {j} (csize {csize}, token {token})"
        );
    }
    Ok(Some(((-csize) as u8, pos + 1)))
}
