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
//!
//! - `prepared`: a chunk validated once, with what every block shares;
//! - `block`: decoding one block, through a [`block::DecodePlan`] built once
//!   per call;
//! - `whole`: whole chunks and block masks (`decompress`);
//! - `partial`: byte and item ranges (`getitem`, `decompress_range`);
//! - `lazy`: chunks whose blocks come from a [`BlockSource`];
//! - `vlblock`: the blocks of VL-block chunks, one by one.

mod block;
mod lazy;
mod partial;
mod prepared;
#[cfg(test)]
mod tests;
mod vlblock;
mod whole;

use std::borrow::Cow;
use std::cell::RefCell;

pub(crate) use lazy::LazyResolver;

use super::needs::BlockNeeds;
use super::page_buf::PageBuf;
use super::pool;
use super::stream::CodecState;
use super::DParams;
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
    /// The chunk's bytes from byte `offset` on, covering at least block
    /// `nblock`'s streams (or the dictionary section when `nblock` is
    /// `usize::MAX`), as the trait's documentation describes.
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

/// Scratch owned by one worker.
#[derive(Default)]
struct DecWorker {
    codec: CodecState,
    a: PageBuf,
    b: PageBuf,
    /// A block that a partial read (`decode_range`) cuts, decoded whole.
    edge: PageBuf,
    /// Blocks fetched from a lazy chunk's source (see [`lazy::Fetched`]).
    fetch_buf: Vec<u8>,
}

/// A reusable decompression context.
pub struct Decompressor {
    dparams: DParams,
    /// What the next decode needs of each block (all of it when `None`).
    needs: Option<BlockNeeds>,
    /// What the last chunk's header made of its blocks.
    derived: prepared::DerivedCache,
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

impl Decompressor {
    /// Replaces `dparams.user_data` (what user codecs, filters and the lazy
    /// block lookup receive).
    pub fn set_user_data(&mut self, user_data: Option<super::UserData>) {
        self.dparams.user_data = user_data;
    }

    /// A decompression context for `dparams`.
    pub fn new(dparams: DParams) -> Self {
        Decompressor {
            dparams,
            needs: None,
            derived: Default::default(),
        }
    }

    /// The parameters this context decodes with.
    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    /// Sets the chunk number a postfilter is told (-1: not in a super-chunk).
    pub fn set_nchunk(&mut self, nchunk: i64) {
        self.dparams.nchunk = nchunk;
    }

    /// Installs the `LazyResolver` (the first call wins; later ones are no-ops).
    pub fn set_lazy_resolver(f: LazyResolver) {
        let _ = lazy::LAZY_RESOLVER.set(f);
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
}
