//! Decoding chunks: whole, partially (`getitem`, block masks), VL blocks, and
//! lazy chunks whose blocks are fetched on demand.
//!
//! Every size read from the chunk is checked before use; malformed input gives
//! an error, never a panic.
//!
//! DELTA makes every block depend on the chunk's first block. Whenever some
//! blocks are decoded without block 0 (getitem, masks, lazy chunks), block 0 is
//! decoded too, into scratch, so partial decodes always equal a full decode
//! (the reference gets this wrong).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::header::ChunkHeader;
use super::needs::BlockNeeds;
use super::page_buf::PageBuf;
use super::pipeline::{self, BlockCtx};
use super::pool;
use super::prefetch;
use super::stream::{self, CodecState, DecDict};
use super::{DParams, Fmt, PostfilterArgs, Special};
use crate::codecs::registry::CallInfo;
use crate::codecs::{zfp, zstd, Codec};
use crate::filters::shuffle::{self, Plane};

/// Supplies the bytes of a lazy chunk's blocks (and dictionary).
///
/// `block(nblock, offset, len_hint)` must return the chunk's bytes starting at
/// byte `offset` of the chunk (the value of `bstarts[nblock]`, or for memcpyed
/// chunks `header_len + nblock * blocksize`), at least up to the end of that
/// block's streams; returning more is fine. `len_hint` is the block's
/// compressed size when the lazy trailer records it. `nblock == usize::MAX`
/// asks for the dictionary section (`int32 size` followed by the bytes).
/// The decoder fetches the dictionary through `block`, and the blocks
/// through [`BlockSource::block_into`], which calls `block` unless the
/// source reads in place.
pub trait BlockSource {
    fn block(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
    ) -> crate::Result<Cow<'_, [u8]>>;

    /// Reads the chunk's bytes `offset..offset + dst.len()` into `dst`, or
    /// returns `Ok(false)` when this source cannot (the default), and the
    /// decoder then fetches block by block. A stored (memcpyed) chunk's
    /// blocks lie back to back as in the output, so with this a run of them
    /// is one read into the caller's buffer, with no buffer of its own.
    fn read_raw(&mut self, offset: usize, dst: &mut [u8]) -> crate::Result<bool> {
        let _ = (offset, dst);
        Ok(false)
    }

    /// Writes what `block(nblock, offset, len_hint)` returns into `buf` from
    /// index `at` on, growing `buf` only when it is too short, and returns
    /// how many bytes that is; `buf` past them is left as it was. The
    /// decoder reads every block of a call into one buffer that it keeps
    /// from call to call, so a source that reads from storage overrides
    /// this to read in place: then a block costs neither an allocation nor
    /// zeroing. The default copies from [`BlockSource::block`].
    fn block_into(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
        buf: &mut Vec<u8>,
        at: usize,
    ) -> crate::Result<usize> {
        let bytes = self.block(nblock, offset, len_hint)?;
        let n = bytes.len();
        crate::mem::grow(buf, at + n)?;
        buf[at..at + n].copy_from_slice(&bytes);
        Ok(n)
    }
}

/// Finds the blocks of a lazy chunk given to a plain decode call: the chunk
/// carries only its header, block starts and a trailer locating its blocks in
/// a frame, and the decoder's parameters say which super-chunk that frame
/// belongs to. The C layer (the only one that hands out lazy chunks through
/// contexts) registers it; without it such chunks are refused.
pub(crate) type LazyResolver = fn(&DParams, &[u8]) -> crate::Result<Box<dyn BlockSource>>;

static LAZY_RESOLVER: std::sync::OnceLock<LazyResolver> = std::sync::OnceLock::new();

/// The block source of a lazy chunk, when `chunk` is one (special chunks
/// never are, as in the reference).
fn lazy_source(
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

/// Scratch owned by one worker.
#[derive(Default)]
struct DecWorker {
    codec: CodecState,
    a: PageBuf,
    b: PageBuf,
    /// A block that a partial read (`decode_range`) cuts, decoded whole.
    edge: PageBuf,
    /// Blocks fetched from a lazy chunk's source (see [`Fetched`]).
    fetch_buf: Vec<u8>,
}

/// A reusable decompression context.
pub struct Decompressor {
    dparams: DParams,
    /// What the next decode needs of each block (all of it when `None`).
    needs: Option<BlockNeeds>,
}

/// Scratch of finished helper threads, for the next parallel call.
static SPARE_DEC: std::sync::Mutex<Vec<DecWorker>> = std::sync::Mutex::new(Vec::new());

impl pool::Scratch for DecWorker {
    fn stash() -> &'static std::sync::Mutex<Vec<Self>> {
        &SPARE_DEC
    }
}

thread_local! {
    /// Scratch of the decoder running on this thread (pool workers keep theirs).
    static DEC: RefCell<DecWorker> = RefCell::new(DecWorker::default());
}

/// Runs `f` with this thread's decoder scratch (a fresh one when it is
/// already in use, e.g. by a postfilter that decompresses re-entrantly, or
/// gone, in the thread's exit handlers: see [`crate::scratch::with_kept`]).
fn with_worker<T>(f: impl FnOnce(&mut DecWorker) -> T) -> T {
    crate::scratch::with_kept(&DEC, DecWorker::default, f)
}

/// The stream bytes of the blocks fetched from a lazy chunk's source, back
/// to back in one buffer.
///
/// The buffer is the calling thread's (`DecWorker::fetch_buf`), handed from
/// call to call at the length it reached, so that fetching a block neither
/// allocates nor zeroes: with a zeroed buffer per block, the zeroing alone
/// was a sixth of the instructions of 10x10x10 slices of a file-backed
/// array (`scripts/instructions.sh` on a b2nd row).
struct Fetched {
    buf: Vec<u8>,
    /// By block index: where the block's bytes lie in `buf` (start, length),
    /// or `None` when it was not fetched.
    spans: Vec<Option<(usize, usize)>>,
}

impl Fetched {
    fn block(&self, j: usize) -> Option<&[u8]> {
        let (at, len) = (*self.spans.get(j)?)?;
        self.buf.get(at..at + len)
    }

    /// Gives the buffer back to this thread for the next fetch. One that
    /// grew past `KEEP` bytes (a whole large chunk read lazily) is freed
    /// instead, so a thread does not hold on to that much for good; slices
    /// and byte ranges fetch a few blocks.
    fn recycle(self) {
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
fn bytes_of<'b>(
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

/// Sizes of the blocks of a VL-block chunk.
#[derive(Clone)]
struct VlLayout {
    nbytes: Vec<usize>,
    offsets: Vec<usize>,
    cbytes: Vec<usize>,
}

/// What turns a block's decoded streams into the block, the same for every
/// block of a chunk, so it is derived once (in [`Prepared::new`]): re-deriving
/// it for each of a chunk's hundreds of blocks, and running the general
/// pipeline for a lone shuffle, was a good part of what this library spent
/// per block beyond the codec and the kernel, which the reference does not
/// (`scripts/instructions.sh ROW --functions N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unfilter {
    /// No filter runs backward (or the chunk is instrumented, whose records
    /// are not filtered): the streams decode straight into the output.
    Nothing,
    /// A byte shuffle of `group`-byte items is the only filter, so its
    /// kernel is called directly instead of going through the pipeline.
    /// `planes`: it can also read a split block's byte planes where they lie
    /// (`shuffle::unshuffle_planes`), which needs `group` to be the typesize,
    /// fixed-size blocks and a fast kernel for that size.
    Shuffle { group: usize, planes: bool },
    /// Any other filters: [`pipeline::backward`].
    Pipeline,
}

impl Unfilter {
    fn of(h: &ChunkHeader) -> Self {
        if h.is_instrumented() || !pipeline::any_backward(&h.filters) {
            return Unfilter::Nothing;
        }
        let typesize = h.typesize();
        match pipeline::sole_shuffle_group(&h.filters, &h.filters_meta, typesize) {
            Some(group) => Unfilter::Shuffle {
                group,
                planes: group == typesize && !h.vl_blocks() && shuffle::planes_are_fast(typesize),
            },
            None => Unfilter::Pipeline,
        }
    }
}

/// A validated chunk, ready to decode blocks from.
struct Prepared<'a> {
    h: ChunkHeader,
    /// The chunk (non-lazy: exactly `cbytes` bytes).
    src: &'a [u8],
    hlen: usize,
    memcpyed: bool,
    special: u8,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
    bstarts_end: usize,
    dict: Option<Arc<DecDict>>,
    vl: Option<VlLayout>,
    has_delta: bool,
    unfilter: Unfilter,
    /// Whether blocks stored as the same bytes decode to the same output,
    /// as far as the chunk alone says (see [`Prepared::block_is_copyable`]).
    repeats_copyable: bool,
    /// Set when every block is one codec stream followed by no filter or by
    /// the byte shuffle alone (see [`OneStream`]).
    one_stream: Option<OneStream>,
}

/// How a chunk whose every block is one codec stream (not split into byte
/// planes; not VL, stored or special) turns a decoded stream into the block.
///
/// Such blocks take [`Prepared::decode_one_stream`], which does only what
/// they need; the general [`Prepared::decode_block_any`] keeps plane
/// bookkeeping, a closure and moves of the scratch per block.
/// `scripts/instructions.sh chunk/smooth3d-f8/lz4hc/c1/shuffle/t1
/// --functions 12` (128 blocks of 32 KiB, each one LZ4 stream and an
/// unshuffle): one decompression spent about 89,500 instructions outside
/// the two kernels through the general path, about 66,400 through this one,
/// and the reference about 59,700. That row's decompression was the one the
/// benchmark kept finding just under the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OneStream {
    /// The stream decodes straight into the block.
    Raw,
    /// The stream decodes into scratch, which is unshuffled into the block
    /// in items of this many bytes.
    Unshuffle(usize),
}

impl OneStream {
    fn of(h: &ChunkHeader, unfilter: Unfilter) -> Option<Self> {
        // `Prepared::nstreams` is 1 for every block of such a chunk.
        let unsplit = h.dont_split() || h.typesize() == 1;
        if !unsplit || h.vl_blocks() || h.is_memcpyed() || h.special_code() != 0 {
            return None;
        }
        match unfilter {
            Unfilter::Nothing => Some(OneStream::Raw),
            Unfilter::Shuffle { group, .. } => Some(OneStream::Unshuffle(group)),
            Unfilter::Pipeline => None,
        }
    }
}

fn rd_i32(b: &[u8], at: usize) -> crate::Result<i32> {
    match b.get(at..at + 4) {
        Some(s) => Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]])),
        None => crate::bail!(ReadBuffer, "cannot read 4 bytes at {at}"),
    }
}

fn make_dict(compformat: u8, raw: &[u8]) -> crate::Result<DecDict> {
    if compformat == Codec::FORMAT_ZSTD {
        zstd::DDict::new(raw)
            .map(DecDict::Zstd)
            .ok_or_else(|| crate::err!(CodecDict, "bad zstd dictionary"))
    } else {
        Ok(DecDict::Lz4(raw.to_vec()))
    }
}

/// Reads `int32 size | bytes` of a dictionary section.
fn read_dict(compformat: u8, b: &[u8]) -> crate::Result<(DecDict, usize)> {
    let size = rd_i32(b, 0)?;
    if size <= 0 || size as usize > Fmt::MAX_DICTSIZE {
        crate::bail!(CodecDict, "dictionary size {size} out of range");
    }
    let size = size as usize;
    let Some(raw) = b.get(4..4 + size) else {
        crate::bail!(ReadBuffer, "dictionary extends past the chunk");
    };
    Ok((make_dict(compformat, raw)?, 4 + size))
}

impl<'a> Prepared<'a> {
    /// Validates `chunk` as the reference's `initialize_context_decompression`
    /// does (for lazy chunks, only the header and bstarts must be present).
    /// `lazy_view`: `chunk` holds only the header and bstarts (and maybe the
    /// lazy trailer), whatever the lazy flag says; block bytes come from elsewhere.
    fn new(chunk: &'a [u8], lazy_view: bool) -> crate::Result<Self> {
        Self::with_header(&ChunkHeader::parse_unchecked_len(chunk)?, chunk, lazy_view)
    }

    /// [`Prepared::new`] for a chunk whose header `h` has been parsed from
    /// it already (the C entry points parse it to check the buffers), so
    /// that a call parses its header once.
    #[inline]
    fn with_header(h: &ChunkHeader, chunk: &'a [u8], lazy_view: bool) -> crate::Result<Self> {
        let h = h.clone();
        // A chunk with a special value has no blocks to fetch, so its lazy
        // flag means nothing (the reference ignores it too).
        if h.is_lazy() && h.special_code() == 0 && !lazy_view {
            crate::bail!(InvalidParam, "lazy chunk: use decompress_with_source");
        }
        let lazy = lazy_view;
        let src = if lazy {
            chunk
        } else {
            match chunk.get(..h.cbytes()) {
                Some(s) => s,
                None => crate::bail!(
                    InvalidHeader,
                    "cbytes {} past the {} bytes given",
                    h.cbytes,
                    chunk.len()
                ),
            }
        };
        let special = h.special_code();
        if special > Special::UNINIT_CODE {
            crate::bail!(Data, "unknown special chunk kind {special}");
        }
        let hlen = h.header_len();
        let memcpyed = h.is_memcpyed();
        if memcpyed && special == 0 && h.cbytes() != h.nbytes() + hlen {
            crate::bail!(
                Data,
                "memcpyed chunk with cbytes {} != nbytes {} + header",
                h.cbytes,
                h.nbytes
            );
        }
        let vl = h.vl_blocks();
        let nblocks = h.nblocks();
        let blocksize = if vl { 0 } else { h.blocksize() };
        let leftover = h.leftover();
        let has_delta = h.filters.contains(&Fmt::DELTA);
        let unfilter = Unfilter::of(&h);
        let one_stream = OneStream::of(&h, unfilter);
        let repeats_copyable = !vl
            && !memcpyed
            && special == 0
            && h.compcode() <= Codec::ZSTD
            && h.filters.iter().all(|&f| pipeline::reads_only_its_block(f));
        let mut p = Prepared {
            src,
            hlen,
            memcpyed,
            special,
            blocksize,
            nblocks,
            leftover,
            bstarts_end: hlen,
            dict: None,
            vl: None,
            has_delta,
            unfilter,
            repeats_copyable,
            one_stream,
            h,
        };
        if p.h.nbytes == 0 && p.h.cbytes() == hlen && special == 0 {
            p.nblocks = 0;
            return Ok(p);
        }
        if special == 0 && !memcpyed {
            let Some(end) = nblocks.checked_mul(4).and_then(|n| n.checked_add(hlen)) else {
                crate::bail!(InvalidHeader, "bstarts size overflows");
            };
            if end > i32::MAX as usize {
                crate::bail!(InvalidHeader, "bstarts size overflows");
            }
            p.bstarts_end = end;
        }
        if src.len() < p.bstarts_end {
            crate::bail!(ReadBuffer, "bstarts extend past the chunk");
        }
        if p.h.uses_dict() && !lazy && special == 0 && !memcpyed {
            let (d, _) = read_dict(p.h.compformat(), &src[p.bstarts_end..])?;
            p.dict = Some(Arc::new(d));
        }
        if vl && !lazy {
            p.vl = Some(p.vl_layout()?);
            p.blocksize =
                p.vl.as_ref()
                    .map_or(0, |v| v.nbytes.iter().copied().max().unwrap_or(0));
        }
        Ok(p)
    }

    fn bstart(&self, j: usize) -> crate::Result<i32> {
        rd_i32(&self.src, self.hlen + 4 * j)
    }

    fn vl_layout(&self) -> crate::Result<VlLayout> {
        let n = self.nblocks;
        let (mut nbytes, mut offsets, mut cbytes) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut total = 0usize;
        let mut prev = 0i32;
        let cb = self.h.cbytes;
        for i in 0..n {
            let bstart = self.bstart(i)?;
            let next = if i + 1 < n { self.bstart(i + 1)? } else { cb };
            if bstart < self.bstarts_end as i32
                || bstart <= prev
                || next <= bstart
                || next > cb
                || bstart as usize + 4 > self.src.len()
            {
                crate::bail!(InvalidHeader, "invalid VL-block offsets");
            }
            let nb = rd_i32(&self.src, bstart as usize)?;
            if nb <= 0 {
                crate::bail!(InvalidHeader, "invalid VL-block size {nb}");
            }
            offsets.push(total);
            total += nb as usize;
            if total > self.h.nbytes() {
                crate::bail!(InvalidHeader, "VL-block sizes exceed nbytes");
            }
            nbytes.push(nb as usize);
            cbytes.push((next - bstart) as usize);
            prev = bstart;
        }
        if total != self.h.nbytes() {
            crate::bail!(InvalidHeader, "VL-block sizes do not add up to nbytes");
        }
        Ok(VlLayout {
            nbytes,
            offsets,
            cbytes,
        })
    }

    /// (offset in the decoded chunk, size) of block `j`.
    fn block_span(&self, j: usize) -> (usize, usize) {
        if let Some(vl) = &self.vl {
            return (vl.offsets[j], vl.nbytes[j]);
        }
        let off = j * self.blocksize;
        let size = if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        };
        (off, size)
    }

    /// `needs` if it leaves out any byte of any block; `None` (the whole
    /// chunk) if it asks for all of them, so that reads of whole chunks take
    /// the whole-chunk paths (one copy of a stored chunk, one fill of a
    /// special one) whoever asks. A b2nd read of whole chunks says what it
    /// needs of each block as any other read does.
    fn narrowing<'n>(&self, needs: Option<&'n BlockNeeds>) -> Option<&'n BlockNeeds> {
        needs.filter(|n| {
            (0..self.nblocks).any(|j| {
                let (_, size) = self.block_span(j);
                n.span(j, size).len() != size
            })
        })
    }

    /// `getitem`'s shortcut for zfp fixed-rate chunks: decodes the bytes
    /// `at..at + out.len()` of block `j` from the one zfp cell holding them,
    /// when one does and the block is a single unfiltered zfp stream of a
    /// whole b2nd block (see `crate::codecs::zfp::decode_items`). `Ok(false)`:
    /// not taken, decode the block.
    fn zfp_items(&self, dp: &DParams, j: usize, at: usize, out: &mut [u8]) -> crate::Result<bool> {
        let ts = self.h.typesize();
        let plain = self.h.compformat() == Codec::FORMAT_UDCODEC
            && self.h.compcode() == zfp::RATE
            && !self.memcpyed
            && self.special == 0
            && self.vl.is_none()
            && !self.is_leftover(j)
            && !pipeline::any_backward(&self.h.filters)
            && !self.h.is_instrumented()
            && dp.postfilter.is_none()
            && self.nstreams(j, self.blocksize) == 1
            && at % ts == 0;
        let Some(shape) = dp.block_shape.as_deref().filter(|_| plain) else {
            return Ok(false);
        };
        let bytes = self.block_bytes(j)?;
        let csize = rd_i32(bytes, 0)?;
        // A stored or run-length block is not a zfp stream.
        let Some(stream) = usize::try_from(csize)
            .ok()
            .filter(|&c| c > 0 && c != self.blocksize)
            .and_then(|c| bytes.get(4..4 + c))
        else {
            return Ok(false);
        };
        zfp::decode_items(self.h.compcode_meta, ts as i32, shape, stream, at / ts, out)
    }

    /// Whether DELTA decodes every block after the first against block 0's
    /// output, so that reading any of them needs block 0 decoded too.
    fn delta_against_block0(&self) -> bool {
        self.has_delta && !self.memcpyed && self.special == 0 && !self.h.vl_blocks()
    }

    fn is_leftover(&self, j: usize) -> bool {
        self.vl.is_none() && j + 1 == self.nblocks && self.leftover > 0
    }

    /// The stream bytes of block `j` within a non-lazy chunk.
    fn block_bytes(&self, j: usize) -> crate::Result<&[u8]> {
        if self.special != 0 {
            return Ok(&[]);
        }
        if self.memcpyed {
            let (off, size) = self.block_span(j);
            let start = self.hlen + off;
            return match self.src.get(start..start + size) {
                Some(s) => Ok(s),
                None => crate::bail!(ReadBuffer, "memcpyed block {j} past the chunk"),
            };
        }
        let bstart = self.bstart(j)?;
        if bstart <= 0 || bstart as usize >= self.src.len() {
            crate::bail!(Data, "block {j} starts at invalid offset {bstart}");
        }
        let bstart = bstart as usize;
        if let Some(vl) = &self.vl {
            return match self.src.get(bstart..bstart + vl.cbytes[j]) {
                Some(s) => Ok(s),
                None => crate::bail!(Data, "VL block {j} past the chunk"),
            };
        }
        Ok(&self.src[bstart..])
    }

    /// What a decode of bytes `want` of block `j` (of `size` bytes) should
    /// hint into the cache first (see [`prefetch`]): of `bytes`, the
    /// block's bytes as [`Prepared::block_bytes`] gives them (up to the
    /// chunk's end), the part up to the next block's start, i.e. the
    /// block's compressed bytes when blocks lie in order, as every writer
    /// stores them. Nothing when
    /// - the whole block is read: its streams are read from its start to
    ///   its end, which the hardware prefetcher follows (and a read of
    ///   whole chunks goes from block to block in order);
    /// - the bytes were fetched from elsewhere (a lazy chunk's blocks, read
    ///   from a file into a buffer): they are in the cache already;
    /// - the codec stops each stream early and `want` ends in the block's
    ///   first quarter: then each stream is read only a little way in, and
    ///   hinting all of the block would cost more memory traffic than the
    ///   misses it saves (an item read near a block's start).
    fn bytes_to_prefetch<'b>(
        &self,
        j: usize,
        bytes: &'b [u8],
        want: &Range<usize>,
        size: usize,
    ) -> &'b [u8] {
        let whole = want.len() >= size;
        let short = stream::stops_early(self.h.compformat()) && want.end < size / 4;
        if whole || want.is_empty() || short {
            return &[];
        }
        if !self.src.as_ptr_range().contains(&bytes.as_ptr()) {
            return &[];
        }
        // Block starts come from the chunk: a corrupt one may be anything.
        let own = (j + 1 < self.nblocks)
            .then(|| {
                let (start, next) = (self.bstart(j).ok()?, self.bstart(j + 1).ok()?);
                usize::try_from(i64::from(next) - i64::from(start)).ok()
            })
            .flatten()
            .filter(|&len| len > 0);
        &bytes[..own.map_or(bytes.len(), |len| len.min(bytes.len()))]
    }

    /// How many streams block `j` (of `bsize` decoded bytes) is split into.
    fn nstreams(&self, j: usize, bsize: usize) -> usize {
        let typesize = self.h.typesize();
        if self.vl.is_some() || self.h.dont_split() || self.is_leftover(j) || bsize < typesize {
            1
        } else {
            typesize
        }
    }

    /// Whether a block's output is a function of its stream bytes and size
    /// alone, so that blocks stored as the same bytes decode to the same
    /// output: true for the built-in codecs and for filters that read nothing
    /// but the block (the reference's global ones included), without a
    /// postfilter or VL blocks. Block 0 under DELTA is the exception (coded
    /// against itself, the others against it).
    fn block_is_copyable(&self, dp: &DParams, j: usize) -> bool {
        let postfilter = dp.postfilter.is_some() && !self.h.is_instrumented();
        self.repeats_copyable && !postfilter && !(j == 0 && self.has_delta)
    }

    /// The length of block `j`'s streams at the start of `bytes` (the
    /// block decodes to `bsize` bytes), read from the stream headers without
    /// decoding; `None` when they do not parse (decoding then reports why).
    fn stream_span(&self, j: usize, bytes: &[u8], bsize: usize) -> Option<usize> {
        let mut pos = 0usize;
        for _ in 0..self.nstreams(j, bsize) {
            let csize = rd_i32(bytes, pos).ok()?;
            pos += 4;
            pos += match csize {
                0 => 0,
                c if c < 0 => 1,
                c => c as usize,
            };
        }
        (pos <= bytes.len()).then_some(pos)
    }

    /// Decodes block `j`, whose streams start at `bytes[0]`, into `out`
    /// (exactly the block's size). `dref` is the decoded first block (DELTA).
    /// Only `out[want]` has to be written: the rest may be left as it was
    /// or hold anything (a partial read; `want` is `0..out.len()` otherwise).
    ///
    /// Returns `Some(n)` when the output depends on nothing but the first `n`
    /// bytes of `bytes` and the block's size: then any other block of this
    /// chunk, of the same size, whose bytes start with those same `n` bytes
    /// decodes to the same output (see [`Decompressor::decode_into`]). That
    /// holds for the built-in codecs and filters without a postfilter, except
    /// for block 0 under DELTA (coded against itself, the others against it).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn decode_block(
        &self,
        w: &mut DecWorker,
        dp: &DParams,
        j: usize,
        bytes: &[u8],
        out: &mut [u8],
        dref: Option<&[u8]>,
        tid: usize,
        want: Range<usize>,
    ) -> crate::Result<Option<usize>> {
        prefetch::block(self.bytes_to_prefetch(j, bytes, &want, out.len()));
        match (self.one_stream, &dp.postfilter) {
            (Some(how), None) => self.decode_one_stream(w, dp, j, bytes, out, how, want),
            _ => self.decode_block_any(w, dp, j, bytes, out, dref, tid, want),
        }
    }

    /// [`Prepared::decode_block`] for a block of a chunk whose blocks are
    /// each one stream (see [`OneStream`]), without a postfilter.
    #[allow(clippy::too_many_arguments)]
    fn decode_one_stream(
        &self,
        w: &mut DecWorker,
        dp: &DParams,
        j: usize,
        bytes: &[u8],
        out: &mut [u8],
        how: OneStream,
        want: Range<usize>,
    ) -> crate::Result<Option<usize>> {
        let csize = rd_i32(bytes, 0)?;
        let consumed = match how {
            OneStream::Raw => {
                self.decode_stream(&mut w.codec, dp, j, bytes, 4, csize, out, want.end)?
            }
            OneStream::Unshuffle(group) => {
                let bsize = out.len();
                // Every byte of the scratch is written by the stream, so it
                // is only grown, never cleared.
                if w.a.len() < bsize {
                    w.a.resize(bsize)?;
                }
                w.a.truncate(bsize);
                let needed = NeededItems::of(&want, group, bsize);
                // The planes lie one after another in the stream: the needed
                // items of the last one end its needed part.
                let need = needed
                    .as_ref()
                    .map_or(bsize, |items| (group - 1) * (bsize / group) + items.0.end);
                let consumed =
                    self.decode_stream(&mut w.codec, dp, j, bytes, 4, csize, &mut w.a, need)?;
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
        Ok(self.block_is_copyable(dp, j).then_some(consumed))
    }

    /// Decodes the stream of block `j` whose size field `csize` has been
    /// read and whose bytes start at `bytes[pos]` into `dst` (the stream's
    /// whole output), at least its first `need` bytes: a run of zeros, of one
    /// byte value, stored bytes or a codec stream (see
    /// [`stream::decode`]). Returns where the next stream starts.
    #[allow(clippy::too_many_arguments)]
    fn decode_stream(
        &self,
        codec: &mut stream::CodecState,
        dp: &DParams,
        j: usize,
        bytes: &[u8],
        pos: usize,
        csize: i32,
        dst: &mut [u8],
        need: usize,
    ) -> crate::Result<usize> {
        let need = need.min(dst.len());
        if let Some((value, next)) = run_of(j, bytes, pos, csize)? {
            dst[..need].fill(value);
            return Ok(next);
        }
        let csize = csize as usize;
        let Some(s) = bytes.get(pos..pos + csize) else {
            crate::bail!(ReadBuffer, "stream of block {j} extends past the chunk");
        };
        if csize == dst.len() {
            dst[..need].copy_from_slice(&s[..need]);
        } else {
            self.codec_decode(codec, dp, s, dst, need)?;
        }
        Ok(pos + csize)
    }

    /// Decodes one codec stream `s` into `dst` with the chunk's codec, at
    /// least its first `need` bytes.
    fn codec_decode(
        &self,
        codec: &mut stream::CodecState,
        dp: &DParams,
        s: &[u8],
        dst: &mut [u8],
        need: usize,
    ) -> crate::Result<()> {
        stream::decode(
            codec,
            self.h.compformat(),
            self.h.compcode(),
            self.h.compcode_meta,
            s,
            dst,
            need,
            self.dict.as_deref(),
            &self.call_info(dp),
            dp.block_shape.as_deref(),
        )
    }

    /// What a user codec or filter is told about this decompression.
    fn call_info<'s>(&'s self, dp: &'s DParams) -> CallInfo<'s> {
        CallInfo {
            typesize: self.h.typesize() as i32,
            clevel: 0,
            compcode: self.h.compcode(),
            compcode_meta: self.h.compcode_meta,
            nthreads: dp.nthreads,
            blocksize: self.blocksize as i32,
            chunk: self.src,
            user: dp.user_data.as_ref(),
        }
    }

    /// [`Prepared::decode_block`] for any block.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn decode_block_any(
        &self,
        w: &mut DecWorker,
        dp: &DParams,
        j: usize,
        bytes: &[u8],
        out: &mut [u8],
        dref: Option<&[u8]>,
        tid: usize,
        want: Range<usize>,
    ) -> crate::Result<Option<usize>> {
        let bsize = out.len();
        let (offset, _) = self.block_span(j);
        // Instrumented chunks hold measurement records: neither the filters
        // nor a postfilter apply to them.
        let postfilter = dp.postfilter.as_ref().filter(|_| !self.h.is_instrumented());
        if self.memcpyed || self.special != 0 {
            let fill = |dst: &mut [u8]| -> crate::Result<()> {
                if self.special != 0 {
                    return self.fill_special_range(offset, dst);
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
                    let r = run_postfilter(pf, dp, &tmp, out, offset, j, tid, self.h.typesize());
                    w.a = tmp;
                    r.map(|()| None)
                }
            };
        }
        let bytes = match &self.vl {
            Some(vl) => &bytes[..bytes.len().min(vl.cbytes[j])],
            None => bytes,
        };
        let filtered = self.unfilter != Unfilter::Nothing;
        let typesize = self.h.typesize();
        let vl = self.vl.is_some();
        let nstreams = self.nstreams(j, bsize);
        let neblock = bsize / nstreams;
        if neblock == 0 {
            crate::bail!(WriteBuffer, "block {j} is empty");
        }
        let use_tmp = filtered || postfilter.is_some();
        // Shuffle alone over a block split into one stream per byte plane:
        // the unshuffle reads each plane where it lies, so the planes stored
        // uncompressed (often most of them, for floats) are not copied into
        // the scratch first, as the reference does.
        let planes_in_place = matches!(self.unfilter, Unfilter::Shuffle { planes: true, .. })
            && postfilter.is_none()
            && nstreams == typesize
            && neblock * nstreams == bsize;
        // The items a partial read needs, which are a prefix of each plane
        // (up to their end) to decode.
        let needed = if planes_in_place {
            NeededItems::of(&want, nstreams, bsize)
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
                        self.codec_decode(&mut w.codec, dp, s, dst, neblock)?;
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
                pos = self.decode_stream(&mut w.codec, dp, j, bytes, pos, csize, dst, need(k))?;
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
        let repeatable = self.block_is_copyable(dp, j).then_some(consumed);
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
        if let (Unfilter::Shuffle { group, .. }, None) = (self.unfilter, postfilter) {
            // What `pipeline::backward` would do for this one filter.
            shuffle::unshuffle(group, &work[..bsize], out);
            w.a = work;
            return Ok(repeatable);
        }
        let r = (|| -> crate::Result<()> {
            let ctx = BlockCtx {
                filters: &self.h.filters,
                filters_meta: &self.h.filters_meta,
                typesize,
                offset: if vl { 0 } else { offset },
                version: self.h.version,
                block_shape: dp.block_shape.as_deref(),
                info: self.call_info(dp),
            };
            match postfilter {
                Some(pf) => {
                    if filtered {
                        // The filters' result goes to `b`, the postfilter's input.
                        let mut mid = std::mem::take(&mut w.b);
                        mid.resize(bsize)?;
                        let mut spare = PageBuf::default();
                        let r = pipeline::backward(&ctx, &mut work, &mut spare, dref, &mut mid)
                            .and_then(|()| {
                                run_postfilter(pf, dp, &mid, out, offset, j, tid, typesize)
                            });
                        w.b = mid;
                        r
                    } else {
                        run_postfilter(pf, dp, &work, out, offset, j, tid, typesize)
                    }
                }
                // Filters only: the last one writes straight into `out`.
                None => pipeline::backward(&ctx, &mut work, &mut w.b, dref, out),
            }
        })();
        w.a = work;
        r.map(|()| repeatable)
    }
}

/// Where the unshuffle finds a byte plane of a split block
/// (`Prepared::decode_block_any`): decoded into the scratch, stored in the
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

#[allow(clippy::too_many_arguments)]
fn run_postfilter(
    pf: &super::Postfilter,
    dp: &DParams,
    input: &[u8],
    output: &mut [u8],
    offset: usize,
    nblock: usize,
    tid: usize,
    typesize: usize,
) -> crate::Result<()> {
    let mut args = PostfilterArgs {
        input,
        output,
        offset,
        nblock,
        nchunk: dp.nchunk,
        tid,
        typesize,
    };
    pf(&mut args).map_err(|e| crate::err!(Postfilter, "postfilter failed: {e}"))
}

impl Prepared<'_> {
    /// Writes bytes `lo..lo + dst.len()` of this special chunk: zeros, the
    /// NaN of its typesize (the one the reference writes, `nanf("")` /
    /// `nan("")`), or its repeated value, each repeating from the
    /// chunk's first byte. An uninitialised chunk writes nothing, as in the
    /// reference.
    fn fill_special_range(&self, lo: usize, dst: &mut [u8]) -> crate::Result<()> {
        let nan4 = f32::NAN.to_bits().to_le_bytes();
        let nan8 = f64::NAN.to_bits().to_le_bytes();
        let pattern: &[u8] = match self.special {
            Special::ZERO_CODE => {
                dst.fill(0);
                return Ok(());
            }
            Special::UNINIT_CODE => return Ok(()),
            Special::NAN_CODE => match self.h.typesize() {
                4 => &nan4,
                8 => &nan8,
                t => crate::bail!(Data, "NaN chunks need typesize 4 or 8, not {t}"),
            },
            _ => match self.src.get(self.hlen..self.h.cbytes()) {
                Some(v) if !v.is_empty() => v,
                _ => crate::bail!(ReadBuffer, "repeated value past the chunk"),
            },
        };
        // The rest of the pattern `lo` falls in, then whole patterns.
        let phase = lo % pattern.len();
        let head = ((pattern.len() - phase) % pattern.len()).min(dst.len());
        let (first, rest) = dst.split_at_mut(head);
        first.copy_from_slice(&pattern[phase..phase + head]);
        for piece in rest.chunks_mut(pattern.len()) {
            piece.copy_from_slice(&pattern[..piece.len()]);
        }
        Ok(())
    }
}

impl Decompressor {
    /// Replaces `dparams.user_data` (what user codecs, filters and the lazy
    /// block lookup receive).
    pub fn set_user_data(&mut self, user_data: Option<super::UserData>) {
        self.dparams.user_data = user_data;
    }

    pub fn new(dparams: DParams) -> Self {
        Decompressor {
            dparams,
            needs: None,
        }
    }

    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    /// Sets the chunk number a postfilter is told (-1: not in a super-chunk).
    pub fn set_nchunk(&mut self, nchunk: i64) {
        self.dparams.nchunk = nchunk;
    }

    /// Installs the [`LazyResolver`] (the first call wins; later ones are no-ops).
    pub(crate) fn set_lazy_resolver(f: LazyResolver) {
        let _ = LAZY_RESOLVER.set(f);
    }

    /// Blocks whose entry is `true` are skipped by the next `decompress`
    /// (their part of `dst` is left untouched). The mask length must equal the
    /// chunk's number of blocks.
    pub fn set_maskout(&mut self, mask: &[bool]) -> crate::Result<()> {
        self.needs = Some(BlockNeeds::from_maskout(mask));
        Ok(())
    }

    /// What the next `decompress` needs of each block: blocks not needed are
    /// skipped as [`Decompressor::set_maskout`] skips them, and of a block
    /// needed in part, the bytes outside its range may be left unwritten or
    /// hold anything. The count must equal the chunk's number of blocks.
    pub fn set_block_needs(&mut self, needs: &BlockNeeds) {
        match &mut self.needs {
            Some(n) => n.clone_from(needs),
            None => self.needs = Some(needs.clone()),
        }
    }

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
    pub(crate) fn decompress_parsed(
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
        let p = Prepared::with_header(h, chunk, false)?;
        self.decode_whole(&p, dst, needs.as_ref())
    }

    /// A stored (memcpyed) chunk read whole on one thread, without a
    /// postfilter: one copy, with the checks [`Prepared::new`] and
    /// [`check_target`] make, in their order, and nothing else. Small
    /// buffers are stored whenever coding them does not pay, and there a
    /// call is all fixed cost: through `Prepared` and the block loop it took
    /// twice the reference's instructions (`scripts/instructions.sh
    /// small/decompress_ctx/lz4/256B`). `None`: not such a chunk.
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
    fn stored_body<'c>(&self, h: &ChunkHeader, chunk: &'c [u8]) -> crate::Result<Option<&'c [u8]>> {
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
    fn decode_into(
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
            let whole = 0..out.len();
            with_worker(|w| p.decode_block(w, dp, 0, bytes, out, None, 0, whole))?;
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
                    last = p
                        .decode_block(w, dp, j, bytes, out, dref, 0, want)?
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
        // no thread waits for it: a first pass decoding only the run leaders
        // left the second thread idle while one leader was decoded, and
        // constant data decoded on two threads at 0.73-0.96x the reference
        // (`scripts/bench.sh --only constant`).
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
                p.decode_block(w, dp, j, bytes, out, dref, tid, want)?;
                if leaders[k].is_none() && whole {
                    let _ = done[k].set(out);
                }
                Ok(())
            })
        })
    }

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
    pub(crate) fn getitem_parsed(
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
        let mut p = Prepared::with_header(h, chunk, src.is_some())?;
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

    /// [`Decompressor::decode_range`] for a lazy chunk: fetches the blocks
    /// the range needs first (special chunks need none).
    fn range_from_source(
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

    /// Decodes bytes `lo..lo + dst.len()` (not empty, within `nbytes`) of a
    /// validated chunk that is not VL-block, decoding only the blocks that
    /// hold them: a block the range covers whole straight into `dst`, a block
    /// it cuts into the worker's block scratch, then the part needed. So a
    /// partial read needs at most one block of scratch, whatever `nbytes`
    /// the header claims. (The reference's getitem copies every block
    /// through its scratch.)
    fn decode_range(
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
        with_worker(|w| {
            // Block 0 decoded, DELTA's reference for the others.
            let mut block0 = Vec::new();
            if needs_ref {
                crate::mem::grow(&mut block0, p.block_span(0).1)?;
                let whole = 0..block0.len();
                p.decode_block(
                    w,
                    dp,
                    0,
                    bytes_of(p, fetched, 0)?,
                    &mut block0,
                    None,
                    0,
                    whole,
                )?;
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
                    if from == 0 && to == size {
                        p.decode_block(w, dp, j, bytes, piece, dref, 0, 0..size)?;
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
                    p.decode_block(w, dp, j, bytes, &mut edge, dref, 0, from..to)?;
                    piece.copy_from_slice(&edge[from..to]);
                }
                Ok(())
            })();
            w.edge = edge;
            result
        })
    }

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
        let whole = 0..out.len();
        with_worker(|w| {
            p.decode_block(
                w,
                &dp,
                nblock,
                p.block_bytes(nblock)?,
                &mut out,
                None,
                0,
                whole,
            )
        })?;
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
            with_worker(|w| p.decode_block(w, &dp, nblock, bytes, &mut out, None, 0, 0..nb))?;
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

/// The bytes of `nitems` items from item `start` of a chunk with header `h`
/// (not VL-block), checked against the chunk and a destination of `room`
/// bytes; 0 for no items, whatever `start` is.
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

/// Checks that `dst` holds chunk `p`'s `nbytes` and that `needs`, if any,
/// has one entry per block; returns `nbytes`.
fn check_target(p: &Prepared<'_>, dst: &[u8], needs: Option<&BlockNeeds>) -> crate::Result<usize> {
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

/// Checks a byte range `lo..lo + len` of chunk `p` (within `nbytes`, not a
/// VL-block chunk); true when it is empty.
fn range_is_empty(p: &Prepared<'_>, lo: usize, len: usize) -> crate::Result<bool> {
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
fn range_span(p: &Prepared<'_>, lo: usize, len: usize) -> (usize, usize) {
    (lo / p.blocksize, (lo + len - 1) / p.blocksize)
}

/// Fetches from `source` the blocks of a lazy chunk before `end` that
/// `needed` names (and its dictionary, into `p`), each as one read into this
/// thread's fetch buffer; `header_and_bstarts` may carry the lazy trailer,
/// whose block sizes are passed on as hints.
fn fetch_blocks(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{CParams, Compressor};

    fn chunk_of(compcode: u8) -> Vec<u8> {
        let data: Vec<u8> = (0..40_000u32)
            .flat_map(|i| (i / 3 ^ i % 7).to_le_bytes())
            .collect();
        let cp = CParams {
            compcode,
            typesize: 4,
            blocksize: 16 * 1024,
            ..CParams::default()
        };
        let mut chunk = vec![0u8; data.len() + Fmt::MAX_OVERHEAD];
        let n = Compressor::new(cp)
            .unwrap()
            .compress(&data, &mut chunk)
            .unwrap();
        chunk.truncate(n);
        chunk
    }

    /// The bytes a partial read prefetches for block `j` are that block's
    /// compressed bytes, from its start to the next block's, and nothing
    /// for bytes that do not lie in the chunk (a lazy chunk's fetched
    /// blocks), for a whole block, or for a read that ends in a block's
    /// first quarter with a codec that stops streams early; the prefetch
    /// itself takes any slice.
    #[test]
    fn prefetched_bytes_are_each_blocks_own() {
        const BLOCK: usize = 16 * 1024;
        let chunk = chunk_of(Codec::BLOSCLZ);
        let p = Prepared::new(&chunk, false).unwrap();
        assert_eq!(p.nblocks, 10);
        let starts: Vec<usize> = (0..p.nblocks)
            .map(|j| p.bstart(j).unwrap() as usize)
            .collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        let half = BLOCK / 2..BLOCK / 2 + 8;
        for j in 0..p.nblocks {
            let size = p.block_span(j).1;
            let end = starts.get(j + 1).copied().unwrap_or(chunk.len());
            let bytes = p.block_bytes(j).unwrap();
            let got = p.bytes_to_prefetch(j, bytes, &half, size);
            assert_eq!(got.as_ptr(), chunk[starts[j]..].as_ptr(), "block {j}");
            assert_eq!(got.len(), end - starts[j], "block {j}");
            prefetch::block(got);
            prefetch::block(&got[1..]);
            // Reads of none or all of the block.
            assert!(p.bytes_to_prefetch(j, bytes, &(0..size), size).is_empty());
            assert!(p.bytes_to_prefetch(j, bytes, &(8..8), size).is_empty());
            // Reads ending in the first quarter (BloscLZ stops early).
            let early = 8..size / 4 - 1;
            assert!(p.bytes_to_prefetch(j, bytes, &early, size).is_empty());
            let quarter = 8..size / 4;
            assert_eq!(p.bytes_to_prefetch(j, bytes, &quarter, size), got);
            // The same bytes copied elsewhere (as fetched from a file).
            let fetched = bytes.to_vec();
            assert!(p.bytes_to_prefetch(j, &fetched, &half, size).is_empty());
        }
        // Zstd reads every stream to its end: a read near the start too.
        let zchunk = chunk_of(Codec::ZSTD);
        let z = Prepared::new(&zchunk, false).unwrap();
        let bytes = z.block_bytes(2).unwrap();
        let extent = z.bstart(3).unwrap() - z.bstart(2).unwrap();
        assert_eq!(
            z.bytes_to_prefetch(2, bytes, &(8..16), BLOCK).len(),
            extent as usize
        );
        assert!(z.bytes_to_prefetch(2, bytes, &(8..8), BLOCK).is_empty());
        // Block starts out of order: the rest of the chunk.
        let mut swapped = chunk.clone();
        let at = p.hlen;
        let (a, b) = (at + 4 * 3, at + 4 * 4);
        for k in 0..4 {
            swapped.swap(a + k, b + k);
        }
        let q = Prepared::new(&swapped, false).unwrap();
        let bytes = q.block_bytes(3).unwrap();
        assert_eq!(
            q.bytes_to_prefetch(3, bytes, &half, BLOCK).len(),
            bytes.len()
        );
        // A corrupt next start, as far from this one as an i32 goes.
        let mut corrupt = chunk.clone();
        corrupt[b..b + 4].copy_from_slice(&i32::MIN.to_le_bytes());
        let q = Prepared::new(&corrupt, false).unwrap();
        let bytes = q.block_bytes(3).unwrap();
        assert_eq!(
            q.bytes_to_prefetch(3, bytes, &half, BLOCK).len(),
            bytes.len()
        );
        prefetch::block(&[]);
        prefetch::block(&vec![0u8; 3 * prefetch::MAX_BLOCK_BYTES]);
    }
}
