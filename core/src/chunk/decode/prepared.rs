//! A chunk validated once before any block is decoded, with what all of its
//! blocks share: geometry, dictionary, VL layout and how to unfilter.

use std::ops::Range;
use std::sync::Arc;

use super::super::header::ChunkHeader;
use super::super::needs::BlockNeeds;
use super::super::pipeline;
use super::super::stream::{self, DecDict};
use super::super::{DParams, Fmt, Special};
use crate::codecs::{zfp, zstd, Codec};
use crate::filters::shuffle;

/// Sizes of the blocks of a VL-block chunk.
#[derive(Clone)]
pub(super) struct VlLayout {
    pub(super) nbytes: Vec<usize>,
    pub(super) offsets: Vec<usize>,
    pub(super) cbytes: Vec<usize>,
}

/// What turns a block's decoded streams into the block, the same for every
/// block of a chunk, so it is derived once (in [`Prepared::new`]) rather than
/// per block, and a lone shuffle calls its kernel without the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unfilter {
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
    /// For a chunk with header `h` whose filter slots `slots` summarises.
    pub(super) fn of(h: &ChunkHeader, slots: &pipeline::Slots) -> Self {
        if h.is_instrumented() || !slots.any_backward() {
            return Unfilter::Nothing;
        }
        let typesize = h.typesize();
        match slots.sole_shuffle_group(&h.filters, &h.filters_meta, typesize) {
            Some(group) => Unfilter::Shuffle {
                group,
                planes: group == typesize && !h.vl_blocks() && shuffle::planes_are_fast(typesize),
            },
            None => Unfilter::Pipeline,
        }
    }
}

/// What a chunk's header alone (its filters, their meta bytes, typesize and
/// flags) makes of every block: how to unfilter, the single-stream route and
/// what the pipeline's slots say. A context decoding chunk after chunk of one
/// kind keeps the last one ([`DerivedCache`]), as deriving it anew was some
/// 120 instructions of a 1 KiB decompression
/// (`scripts/instructions.sh small/decompress_ctx/blosclz/1024B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Derived {
    has_delta: bool,
    local: bool,
    unfilter: Unfilter,
    one_stream: Option<OneStream>,
}

impl Derived {
    /// Derived from header `h`.
    pub(super) fn of(h: &ChunkHeader) -> Self {
        let slots = pipeline::Slots::of(&h.filters);
        let unfilter = Unfilter::of(h, &slots);
        Derived {
            has_delta: slots.has_delta,
            local: slots.local,
            unfilter,
            one_stream: OneStream::of(h, unfilter),
        }
    }
}

/// The header fields [`Derived::of`] reads: equal keys, equal `Derived`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct DerivedKey {
    filters: [u8; 6],
    meta: [u8; 6],
    typesize: u8,
    flags: u8,
    blosc2_flags: u8,
    blosc2_flags2: u8,
    extended: bool,
}

impl DerivedKey {
    #[inline(always)]
    fn of(h: &ChunkHeader) -> Self {
        DerivedKey {
            filters: h.filters,
            meta: h.filters_meta,
            typesize: h.typesize,
            flags: h.flags,
            blosc2_flags: h.blosc2_flags,
            blosc2_flags2: h.blosc2_flags2,
            extended: h.extended,
        }
    }
}

/// The [`Derived`] of the last header a context derived it for.
#[derive(Clone, Default)]
pub(super) struct DerivedCache(Option<(DerivedKey, Derived)>);

impl DerivedCache {
    /// [`Derived::of`] `h`, from the cache when the last header had the same
    /// fields.
    #[inline(always)]
    pub(super) fn get(&mut self, h: &ChunkHeader) -> Derived {
        let key = DerivedKey::of(h);
        match self.0 {
            Some((k, d)) if k == key => d,
            _ => {
                let d = Derived::of(h);
                self.0 = Some((key, d));
                d
            }
        }
    }
}

/// A validated chunk, ready to decode blocks from.
pub(super) struct Prepared<'a> {
    pub(super) h: ChunkHeader,
    /// The chunk (non-lazy: exactly `cbytes` bytes).
    pub(super) src: &'a [u8],
    pub(super) hlen: usize,
    pub(super) memcpyed: bool,
    pub(super) special: u8,
    pub(super) blocksize: usize,
    pub(super) nblocks: usize,
    pub(super) leftover: usize,
    pub(super) bstarts_end: usize,
    pub(super) dict: Option<Arc<DecDict>>,
    pub(super) vl: Option<VlLayout>,
    pub(super) has_delta: bool,
    pub(super) unfilter: Unfilter,
    /// Whether blocks stored as the same bytes decode to the same output,
    /// as far as the chunk alone says (see [`Prepared::block_is_copyable`]).
    pub(super) repeats_copyable: bool,
    /// Set when every block is one codec stream followed by no filter or by
    /// the byte shuffle alone (see [`OneStream`]).
    pub(super) one_stream: Option<OneStream>,
}

/// How a chunk whose every block is one codec stream (not split into byte
/// planes; not VL, stored or special) turns a decoded stream into the block.
///
/// Such blocks take a route that does only what they need (see
/// `DecodePlan::decode_one_stream`); the general one keeps plane
/// bookkeeping, a closure and moves of the scratch per block, a cost that
/// shows on chunks of many small blocks (docs/PERFORMANCE.md, "Per-block
/// overhead").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OneStream {
    /// The stream decodes straight into the block.
    Raw,
    /// The stream decodes into scratch, which is unshuffled into the block
    /// in items of this many bytes.
    Unshuffle(usize),
}

impl OneStream {
    pub(super) fn of(h: &ChunkHeader, unfilter: Unfilter) -> Option<Self> {
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

/// The little-endian `int32` at `b[at..at + 4]`. Inlined, with the error
/// built out of line: a block's loop reads one per stream, and a call that
/// returns its `Result` through memory cost more than the read.
#[inline(always)]
pub(super) fn rd_i32(b: &[u8], at: usize) -> crate::Result<i32> {
    match b.get(at..).and_then(|s| s.first_chunk::<4>()) {
        Some(s) => Ok(i32::from_le_bytes(*s)),
        None => Err(short_i32(at)),
    }
}

#[cold]
#[inline(never)]
fn short_i32(at: usize) -> crate::Error {
    crate::err!(ReadBuffer, "cannot read 4 bytes at {at}")
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
pub(super) fn read_dict(compformat: u8, b: &[u8]) -> crate::Result<(DecDict, usize)> {
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

/// The VL layout of a non-lazy VL-block chunk `src` with header `h`
/// (`nblocks` blocks, block starts from `hlen` to `bstarts_end`).
fn vl_layout(
    h: &ChunkHeader,
    src: &[u8],
    hlen: usize,
    nblocks: usize,
    bstarts_end: usize,
) -> crate::Result<VlLayout> {
    let bstart = |j: usize| rd_i32(src, hlen + 4 * j);
    let n = nblocks;
    let (mut nbytes, mut offsets, mut cbytes) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut total = 0usize;
    let mut prev = 0i32;
    let cb = h.cbytes;
    for i in 0..n {
        let bstart_i = bstart(i)?;
        let next = if i + 1 < n { bstart(i + 1)? } else { cb };
        if bstart_i < bstarts_end as i32
            || bstart_i <= prev
            || next <= bstart_i
            || next > cb
            || bstart_i as usize + 4 > src.len()
        {
            crate::bail!(InvalidHeader, "invalid VL-block offsets");
        }
        let nb = rd_i32(src, bstart_i as usize)?;
        if nb <= 0 {
            crate::bail!(InvalidHeader, "invalid VL-block size {nb}");
        }
        offsets.push(total);
        total += nb as usize;
        if total > h.nbytes() {
            crate::bail!(InvalidHeader, "VL-block sizes exceed nbytes");
        }
        nbytes.push(nb as usize);
        cbytes.push((next - bstart_i) as usize);
        prev = bstart_i;
    }
    if total != h.nbytes() {
        crate::bail!(InvalidHeader, "VL-block sizes do not add up to nbytes");
    }
    Ok(VlLayout {
        nbytes,
        offsets,
        cbytes,
    })
}

impl<'a> Prepared<'a> {
    /// Validates `chunk` as the reference's `initialize_context_decompression`
    /// does (for lazy chunks, only the header and bstarts must be present).
    /// `lazy_view`: `chunk` holds only the header and bstarts (and maybe the
    /// lazy trailer), whatever the lazy flag says; block bytes come from elsewhere.
    pub(super) fn new(chunk: &'a [u8], lazy_view: bool) -> crate::Result<Self> {
        Self::with_header(&ChunkHeader::parse_unchecked_len(chunk)?, chunk, lazy_view)
    }

    /// [`Prepared::new`] for a chunk whose header `h` has been parsed from
    /// it already (the C entry points parse it to check the buffers), so
    /// that a call parses its header once.
    ///
    /// Every field is computed first and the `Prepared` built once, at the
    /// end, and inlined into the caller: one built early, patched and
    /// returned through a `Result` was copied whole (some 200 bytes) twice
    /// on every call.
    #[inline(always)]
    pub(super) fn with_header(
        h: &ChunkHeader,
        chunk: &'a [u8],
        lazy_view: bool,
    ) -> crate::Result<Self> {
        Self::with_derived(h, chunk, lazy_view, Derived::of(h))
    }

    /// [`Prepared::with_header`] given the [`Derived`] of `h` (a context's
    /// cached one).
    #[inline(always)]
    pub(super) fn with_derived(
        h: &ChunkHeader,
        chunk: &'a [u8],
        lazy_view: bool,
        derived: Derived,
    ) -> crate::Result<Self> {
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
        // `ChunkHeader::nblocks` and `leftover`, from one division.
        let (mut nblocks, leftover) = if vl {
            (h.blocksize(), 0)
        } else {
            let (nb, bs) = (h.nbytes(), h.blocksize());
            let (whole, rest) = (nb / bs, nb % bs);
            (whole + usize::from(rest != 0), rest)
        };
        let Derived {
            has_delta,
            local,
            unfilter,
            one_stream,
        } = derived;
        let repeats_copyable =
            !vl && !memcpyed && special == 0 && h.compcode() <= Codec::ZSTD && local;
        // An empty chunk of a bare header has no block starts, dictionary
        // or VL layout to read.
        let bare = h.nbytes == 0 && h.cbytes() == hlen && special == 0;
        let mut bstarts_end = hlen;
        if bare {
            nblocks = 0;
        } else {
            if special == 0 && !memcpyed {
                let Some(end) = nblocks.checked_mul(4).and_then(|n| n.checked_add(hlen)) else {
                    crate::bail!(InvalidHeader, "bstarts size overflows");
                };
                if end > i32::MAX as usize {
                    crate::bail!(InvalidHeader, "bstarts size overflows");
                }
                bstarts_end = end;
            }
            if src.len() < bstarts_end {
                crate::bail!(ReadBuffer, "bstarts extend past the chunk");
            }
        }
        let dict = if !bare && h.uses_dict() && !lazy && special == 0 && !memcpyed {
            Some(Arc::new(read_dict(h.compformat(), &src[bstarts_end..])?.0))
        } else {
            None
        };
        let vl_layout = if !bare && vl && !lazy {
            Some(vl_layout(h, src, hlen, nblocks, bstarts_end)?)
        } else {
            None
        };
        let blocksize = match &vl_layout {
            Some(v) => v.nbytes.iter().copied().max().unwrap_or(0),
            None if vl => 0,
            None => h.blocksize(),
        };
        Ok(Prepared {
            src,
            hlen,
            memcpyed,
            special,
            blocksize,
            nblocks,
            leftover,
            bstarts_end,
            dict,
            vl: vl_layout,
            has_delta,
            unfilter,
            repeats_copyable,
            one_stream,
            h: h.clone(),
        })
    }

    pub(super) fn bstart(&self, j: usize) -> crate::Result<i32> {
        rd_i32(&self.src, self.hlen + 4 * j)
    }

    /// (offset in the decoded chunk, size) of block `j`.
    pub(super) fn block_span(&self, j: usize) -> (usize, usize) {
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
    pub(super) fn narrowing<'n>(&self, needs: Option<&'n BlockNeeds>) -> Option<&'n BlockNeeds> {
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
    pub(super) fn zfp_items(
        &self,
        dp: &DParams,
        j: usize,
        at: usize,
        out: &mut [u8],
    ) -> crate::Result<bool> {
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
    pub(super) fn delta_against_block0(&self) -> bool {
        self.has_delta && !self.memcpyed && self.special == 0 && !self.h.vl_blocks()
    }

    fn is_leftover(&self, j: usize) -> bool {
        self.vl.is_none() && j + 1 == self.nblocks && self.leftover > 0
    }

    /// The stream bytes of block `j` within a non-lazy chunk.
    #[inline]
    pub(super) fn block_bytes(&self, j: usize) -> crate::Result<&[u8]> {
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
    /// hint into the cache first (see `chunk::prefetch`): of `bytes`, the
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
    pub(super) fn bytes_to_prefetch<'b>(
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
    pub(super) fn nstreams(&self, j: usize, bsize: usize) -> usize {
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
    pub(super) fn block_is_copyable(&self, dp: &DParams, j: usize) -> bool {
        let postfilter = dp.postfilter.is_some() && !self.h.is_instrumented();
        self.repeats_copyable && !postfilter && !(j == 0 && self.has_delta)
    }

    /// The length of block `j`'s streams at the start of `bytes` (the
    /// block decodes to `bsize` bytes), read from the stream headers without
    /// decoding; `None` when they do not parse (decoding then reports why).
    pub(super) fn stream_span(&self, j: usize, bytes: &[u8], bsize: usize) -> Option<usize> {
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
}

impl Prepared<'_> {
    /// Writes bytes `lo..lo + dst.len()` of this special chunk: zeros, the
    /// NaN of its typesize (the one the reference writes, `nanf("")` /
    /// `nan("")`), or its repeated value, each repeating from the
    /// chunk's first byte. An uninitialised chunk writes nothing, as in the
    /// reference.
    pub(super) fn fill_special_range(&self, lo: usize, dst: &mut [u8]) -> crate::Result<()> {
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
