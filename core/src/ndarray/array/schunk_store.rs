//! [`ChunkStore`] over a real super-chunk (`crate::schunk::SChunk`): the
//! store behind every array that can be saved, opened or serialized.
//!
//! Chunks are encoded and decoded here with the chunk engine
//! (`crate::chunk::{Compressor, Decompressor}`) using the super-chunk's
//! parameters, so reads can skip blocks with a mask; the super-chunk stores
//! and fetches the compressed chunks.
//!
//! Reads take `&self` and run on many threads at once: the super-chunk is
//! a [`SharedSChunk`] (the C layer's super-chunk object holds the same
//! one) read under its shared lock, each read with a decoder of its own.

use std::sync::{Mutex, MutexGuard};

use super::store::{check_chunk_len, ChunkStore, Encoded, Fill};
use crate::chunk::{BlockNeeds, ChunkHeader, Compressor, Decompressor};
use crate::schunk::{SChunk, SharedSChunk};
use crate::Result;

/// What cached reads keep (see [`ChunkCache`]).
#[derive(Default)]
struct Cached {
    /// The last chunk decoded by a cached read.
    cache: Option<ChunkCache>,
    /// The chunk the previous cached read asked for (-1: none since the
    /// last change). A chunk is kept only when it is asked for twice in a
    /// row: a first read decodes straight into the caller's buffer, so a
    /// one-off read (every C call, which starts with an empty cache) costs
    /// no chunk-sized buffer and no extra copy.
    last_read: i64,
}

impl Cached {
    fn forget(&mut self) {
        self.cache = None;
        self.last_read = -1;
    }
}

/// A decoder for chunk `n` of `sc` with its current codec parameters and
/// user data: C codecs and filters see the C super-chunk in
/// `dparams->schunk` (plugins read the "b2nd" metalayer through it), and
/// a C caller that replaced `array->sc->dctx` has its postfilter run, as
/// the reference's reads do.
fn decoder(sc: &SChunk, n: i64) -> Decompressor {
    let mut dec = Decompressor::new(sc.codec_dparams().clone());
    dec.set_nchunk(n);
    dec
}

/// One decoded chunk kept for repeated small reads (the job the reference's
/// `b2nd_array_t.chunk_cache` is declared for).
///
/// It is dropped by every change made through the store (chunk writes,
/// inserts, deletes, reloads) and by every exclusive access to the
/// super-chunk ([`SChunkStore::with`]): that is how the C layer lends the
/// real super-chunk in and out around each call, so a change a C caller
/// makes on `array->sc` between calls is never served stale (the cache then
/// serves repeated reads within a call and through the Rust API). Arrays
/// sharing the store (views) share the cache, so a write through one is
/// seen by the others. Only in-memory super-chunks are cached: a file may
/// be changed by another handle, and on disk small reads already fetch
/// just the blocks they need.
struct ChunkCache {
    nchunk: i64,
    /// The super-chunk's `codec_id` when it was decoded.
    codec: u64,
    /// Bytes per entry of `decoded` (a block, or the whole chunk).
    bsize: usize,
    /// The decoded chunk; only the blocks flagged in `decoded` are valid.
    data: Vec<u8>,
    decoded: Vec<bool>,
}

impl ChunkCache {
    /// Copies the blocks flagged in `need` into `dst` (a whole chunk).
    fn copy_out(&self, need: &[bool], dst: &mut [u8]) {
        for ((d, s), n) in dst
            .chunks_mut(self.bsize)
            .zip(self.data.chunks(self.bsize))
            .zip(need)
        {
            if *n {
                d.copy_from_slice(s);
            }
        }
    }
}

/// Which of `nblocks` blocks a read of `need` needs, whole or in part (all
/// of them when `need` does not count those blocks).
fn blocks_needed(need: Option<&BlockNeeds>, nblocks: usize) -> Vec<bool> {
    match need {
        Some(s) if s.len() == nblocks && nblocks > 1 => (0..nblocks).map(|j| !s.skips(j)).collect(),
        _ => vec![true; nblocks],
    }
}

pub(crate) struct SChunkStore {
    sc: SharedSChunk,
    cached: Mutex<Cached>,
    /// The array's compressor, with the super-chunk's `codec_id` it was
    /// built from; behind a lock so that a write can encode through
    /// `&self` while its callbacks read the store (see
    /// `ChunkStore::encode_chunk`).
    comp: Mutex<(Compressor, u64)>,
    typesize: i32,
    /// Bytes of one padded chunk (known even while there are no chunks).
    chunksize: i32,
    /// Bytes of one block (for partial reads).
    blocksize: i32,
    persistent: bool,
    /// The super-chunk's re-read count this store last followed.
    seen_rereads: u64,
}

impl std::fmt::Debug for SChunkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunkStore")
            .field("typesize", &self.typesize)
            .field("chunksize", &self.chunksize)
            .field("blocksize", &self.blocksize)
            .field("persistent", &self.persistent)
            .finish()
    }
}

impl SChunkStore {
    pub(crate) fn new(sc: SChunk, chunksize: i32, blocksize: i32) -> Result<SChunkStore> {
        SChunkStore::shared(SharedSChunk::new(sc), chunksize, blocksize)
    }

    /// A store over `sc`, which other owners may hold too.
    pub(crate) fn shared(sc: SharedSChunk, chunksize: i32, blocksize: i32) -> Result<SChunkStore> {
        let (typesize, persistent, comp, codec, seen_rereads) = {
            let s = sc.read();
            (
                s.typesize(),
                s.storage().urlpath.is_some(),
                SChunkStore::compressor(&s, blocksize)?,
                s.codec_id(),
                s.rereads(),
            )
        };
        Ok(SChunkStore {
            sc,
            cached: Mutex::new(Cached {
                cache: None,
                last_read: -1,
            }),
            comp: Mutex::new((comp, codec)),
            typesize,
            chunksize,
            blocksize,
            persistent,
            seen_rereads,
        })
    }

    /// The super-chunk, shared.
    pub(crate) fn handle(&self) -> &SharedSChunk {
        &self.sc
    }

    /// Whether the super-chunk re-read its frame since the store last
    /// followed it, which [`ChunkStore::sync_if_stale`] then takes in. (Whether
    /// it should re-read, having been changed by another handle, is
    /// `SChunk::stale`: a look at the file the caller makes once per read.)
    pub(crate) fn missed_rereads(&self) -> bool {
        self.sc.read().rereads() != self.seen_rereads
    }

    /// Drops what cached reads keep, for a caller that may have changed the
    /// super-chunk through another of its owners (the C layer, at the start
    /// of each call on the array).
    pub(crate) fn forget_cached(&self) {
        self.cache_state().forget();
    }

    fn cache_state(&self) -> MutexGuard<'_, Cached> {
        // What is kept is dropped whole or replaced whole: a panic while
        // holding the lock leaves it consistent.
        self.cached.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The array's own compressor, from the super-chunk's codec parameters
    /// with the array's block size.
    fn compressor(sc: &SChunk, blocksize: i32) -> Result<Compressor> {
        let mut cp = sc.codec_cparams().clone();
        cp.blocksize = blocksize;
        Compressor::new(cp)
    }

    /// Rebuilds the codec contexts after a metalayer change (a new "b2nd"
    /// layer gives the super-chunk the block shape the cell filters need) or
    /// when the super-chunk's codec parameters changed (see
    /// `SChunk::set_codec_params`).
    /// Whether the super-chunk re-read its frame since the store last
    /// followed it (here, or in a call made on the super-chunk directly),
    /// taking what changed if so.
    fn follow_rereads(&mut self, now: u64) -> Result<bool> {
        if now == self.seen_rereads {
            return Ok(false);
        }
        self.seen_rereads = now;
        self.follow_frame()?;
        Ok(true)
    }

    /// Takes what a re-read of the frame changed: its chunk size and parameters.
    fn follow_frame(&mut self) -> Result<()> {
        let cs = self.sc_mut().chunksize();
        if cs > 0 {
            self.chunksize = cs;
        }
        self.follow_params()
    }

    fn follow_params(&self) -> Result<()> {
        let mut comp = self.compressor_now();
        let sc = self.sc.read();
        if sc.cparams().block_shape == comp.0.cparams().block_shape && sc.codec_id() == comp.1 {
            return Ok(());
        }
        *comp = (SChunkStore::compressor(&sc, self.blocksize)?, sc.codec_id());
        drop(sc);
        self.forget_cached();
        Ok(())
    }

    fn compressor_now(&self) -> MutexGuard<'_, (Compressor, u64)> {
        // Replaced whole when rebuilt: consistent after a panic too.
        self.comp.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The super-chunk, for a change: the cached chunk is dropped first.
    fn sc_mut(&self) -> std::sync::RwLockWriteGuard<'_, SChunk> {
        self.forget_cached();
        self.sc.write()
    }

    /// Exclusive access to the super-chunk (serialization, copies). The
    /// caller may change it: the cached chunk goes.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut SChunk) -> Result<T>) -> Result<T> {
        f(&mut self.sc_mut())
    }

    /// Compresses chunk `nchunk`. A prefilter is told which chunk it runs
    /// on (the reference sets `current_nchunk` before compressing).
    fn encode(&self, nchunk: i64, data: &[u8]) -> Result<Vec<u8>> {
        check_chunk_len(data, self.chunksize)?;
        self.follow_params()?;
        let user_data = self.sc.read().codec_cparams().user_data.clone();
        // Held while compressing: the callbacks that run meanwhile only read
        // (a write from one is refused before it reaches a store).
        let mut comp = self.compressor_now();
        // As for reads (`Inner::follow_user_data`): C codecs see the
        // super-chunk's current user data.
        comp.0.set_user_data(user_data);
        comp.0.set_nchunk(nchunk);
        let mut out = crate::mem::zeroed(data.len() + 32)?;
        let n = comp.0.compress(data, &mut out)?;
        if n == 0 {
            crate::bail!(Failure, "chunk did not fit its compression buffer");
        }
        out.truncate(n);
        Ok(out)
    }

    /// Decodes chunk `n` of `sc` into `dst` (see [`ChunkStore::read_chunk`]).
    fn read_chunk_of(
        &self,
        sc: &SChunk,
        n: i64,
        dst: &mut [u8],
        need: Option<&BlockNeeds>,
    ) -> Result<()> {
        // On disk, when few blocks are needed, fetch just those (the
        // reference's compact path): the super-chunk reads the chunk's
        // block starts once and then only the wanted blocks' bytes.
        if let (true, Some(need)) = (self.persistent, need) {
            let needed = (0..need.len()).filter(|&j| !need.skips(j)).count();
            if needed * 4 <= need.len() && sc.decompress_blocks(n, dst, need)?.is_some() {
                return Ok(());
            }
        }
        // Borrowed, not copied: an in-memory chunk is decoded where it lies.
        let chunk = sc.get_chunk(n)?;
        let h = match ChunkHeader::parse(&chunk) {
            Ok(h) => h,
            // Special chunks the super-chunk synthesises for its special
            // offsets are decoded by the super-chunk itself.
            Err(_) => {
                drop(chunk);
                let got = sc.decompress_chunk(n, dst)?;
                if got != dst.len() {
                    crate::bail!(Data, "chunk {n} holds {got} bytes, expected {}", dst.len());
                }
                return Ok(());
            }
        };
        if h.nbytes() != dst.len() {
            crate::bail!(
                Data,
                "chunk {n} holds {} bytes, expected {}",
                h.nbytes(),
                dst.len()
            );
        }
        let mut dec = decoder(sc, n);
        // The needs are in array blocks; use them when the chunk's blocks
        // are the array's blocks (always, for chunks written by b2nd).
        if let Some(need) = need {
            if h.blocksize() > 0 && h.nblocks() == need.len() {
                dec.set_block_needs(need);
            }
        }
        dec.decompress(&chunk, dst)?;
        Ok(())
    }

    fn special_chunk(&self, fill: &Fill) -> Result<Vec<u8>> {
        use crate::chunk::{make_special_with, Special};
        // Built with the array's parameters so the header's blocksize is the
        // array's block (readers mask blocks by the array's block count).
        let comp = self.compressor_now();
        let cp = comp.0.cparams();
        let nbytes = self.chunksize as usize;
        match fill {
            Fill::Zero => make_special_with(cp, Special::Zero, nbytes, None),
            Fill::Nan => make_special_with(cp, Special::Nan, nbytes, None),
            Fill::Uninit => make_special_with(cp, Special::Uninit, nbytes, None),
            Fill::Value(v) => make_special_with(cp, Special::Value, nbytes, Some(v)),
        }
    }

    fn chunk_items(&self) -> i64 {
        self.chunksize as i64 / self.typesize as i64
    }
}

impl ChunkStore for SChunkStore {
    fn typesize(&self) -> i32 {
        self.typesize
    }
    fn chunksize(&self) -> i32 {
        self.chunksize
    }
    fn nchunks(&self) -> i64 {
        self.sc.read().nchunks()
    }

    fn read_chunk(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        if dst.len() != self.chunksize as usize {
            crate::bail!(
                InvalidParam,
                "chunk buffer of {} bytes, expected {}",
                dst.len(),
                self.chunksize
            );
        }
        let sc = self.sc.read();
        if !sc.locking() {
            return self.read_chunk_of(&sc, n, dst, need);
        }
        // With locking on, a read is one access under the shared lock,
        // after catching up with other handles: that takes the handle.
        drop(sc);
        self.sc
            .write()
            .read_locked(|sc| self.read_chunk_of(sc, n, dst, need))
    }

    fn read_chunk_cached(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        if self.persistent {
            return self.read_chunk(n, dst, need);
        }
        let sc = self.sc.read();
        let codec = sc.codec_id();
        // The kept chunk is taken out while this read decodes, so that
        // reads on other threads decode at the same time (without it).
        let mut kept = {
            let mut state = self.cache_state();
            // A hit: every block asked for is decoded already.
            if let Some(c) = state.cache.as_ref() {
                if c.nchunk == n && c.codec == codec && c.data.len() == dst.len() {
                    let blocks = blocks_needed(need, c.decoded.len());
                    if blocks.iter().zip(&c.decoded).all(|(n, d)| !n || *d) {
                        c.copy_out(&blocks, dst);
                        return Ok(());
                    }
                }
            }
            let first_ask = std::mem::replace(&mut state.last_read, n) != n;
            if first_ask || sc.codec_dparams().postfilter.is_some() {
                // A postfilter may have effects beyond its output: run it each time.
                None
            } else {
                Some(state.cache.take())
            }
        };
        let Some(kept) = kept.take() else {
            return self.read_chunk_of(&sc, n, dst, need);
        };
        let chunk = sc.get_chunk(n)?;
        let Ok(h) = ChunkHeader::parse(&chunk) else {
            // Special offsets: nothing worth keeping.
            drop(chunk);
            return self.read_chunk_of(&sc, n, dst, need);
        };
        if h.nbytes() != dst.len() {
            crate::bail!(
                Data,
                "chunk {n} holds {} bytes, expected {}",
                h.nbytes(),
                dst.len()
            );
        }
        // Blocks as `need` counts them; a chunk whose blocks are not those
        // is kept as one unit. Blocks are kept whole, whatever part of them
        // is needed: a later read may need another part.
        let (nblocks, bsize) = match need {
            Some(s) if h.blocksize() > 0 && h.nblocks() == s.len() => (s.len(), h.blocksize()),
            _ => (1, dst.len().max(1)),
        };
        let blocks = blocks_needed(need, nblocks);
        let mut c = kept.unwrap_or_else(|| ChunkCache {
            nchunk: -1,
            codec,
            bsize,
            data: Vec::new(),
            decoded: Vec::new(),
        });
        // Keep what is already decoded of this very chunk, add the rest.
        let same =
            c.nchunk == n && c.codec == codec && c.decoded.len() == nblocks && c.bsize == bsize;
        let want: Vec<bool> = if same {
            blocks
                .iter()
                .zip(&c.decoded)
                .map(|(n, d)| *n || *d)
                .collect()
        } else {
            blocks.clone()
        };
        crate::mem::grow(&mut c.data, dst.len())?;
        c.data.truncate(dst.len());
        let mut dec = decoder(&sc, n);
        if want.iter().any(|w| !w) {
            let mask: Vec<bool> = want.iter().map(|w| !w).collect();
            dec.set_maskout(&mask)?;
        }
        dec.decompress(&chunk, &mut c.data)?;
        c.nchunk = n;
        c.codec = codec;
        c.bsize = bsize;
        c.decoded = want;
        c.copy_out(&blocks, dst);
        drop(chunk);
        drop(sc);
        let mut state = self.cache_state();
        // Kept unless a change came meanwhile (which forgot the chunk read
        // before it, and may have changed this one).
        if state.last_read == n {
            state.cache = Some(c);
        }
        Ok(())
    }

    fn encode_chunk(&self, n: i64, data: &[u8]) -> Result<Vec<u8>> {
        self.encode(n, data)
    }

    fn write_encoded(&mut self, chunks: Encoded) -> Result<()> {
        self.sc_mut().update_chunks(chunks)
    }

    fn append_encoded(&mut self, chunk: Vec<u8>) -> Result<()> {
        self.sc_mut().append_chunk(&chunk).map(|_| ())
    }

    fn insert_fills(&mut self, at: &[i64], fill: &Fill) -> Result<()> {
        let chunk = self.special_chunk(fill)?;
        self.sc_mut()
            .insert_chunks(at.iter().copied(), &chunk)
            .map(|_| ())
    }

    fn append_fill(&mut self, count: i64, fill: &Fill) -> Result<()> {
        if count <= 0 {
            return Ok(());
        }
        let special = match fill {
            Fill::Zero => Some(crate::schunk::Special::Zero),
            Fill::Nan => Some(crate::schunk::Special::Nan),
            Fill::Uninit => Some(crate::schunk::Special::Uninit),
            Fill::Value(_) => None,
        };
        let mut sc = self.sc_mut();
        if let (Some(kind), 0) = (special, sc.nchunks()) {
            let nitems = count
                .checked_mul(self.chunk_items())
                .ok_or_else(|| crate::err!(InvalidParam, "too many items"))?;
            return sc.fill_special(nitems, kind, self.chunksize).map(|_| ());
        }
        let first = sc.nchunks();
        drop(sc);
        let chunk = self.special_chunk(fill)?;
        let end = first
            .checked_add(count)
            .ok_or_else(|| crate::err!(InvalidParam, "too many chunks"))?;
        self.sc_mut().insert_chunks(first..end, &chunk).map(|_| ())
    }

    fn delete_chunks(&mut self, at: &[i64]) -> Result<()> {
        self.sc_mut().delete_chunks(at.iter().copied()).map(|_| ())
    }

    fn raw_chunk(&self, n: i64) -> Result<Vec<u8>> {
        Ok(self.sc.read().get_chunk(n)?.into_owned())
    }

    fn write_raw_chunk(&mut self, n: i64, raw: &[u8]) -> Result<()> {
        self.sc_mut().update_chunk(n, raw).map(|_| ())
    }

    fn meta_names(&self) -> Vec<String> {
        self.sc.read().meta_names()
    }
    fn meta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.sc.read().meta_get(name).ok()
    }
    fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.sc_mut().meta_add(name, content)?;
        self.follow_params()
    }
    fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let mut sc = self.sc_mut();
        let old = sc.meta_get(name)?;
        if old.len() != content.len() {
            crate::bail!(
                Failure,
                "metalayer \"{name}\" cannot change size ({} to {})",
                old.len(),
                content.len()
            );
        }
        sc.meta_update(name, content)?;
        drop(sc);
        self.follow_params()
    }
    fn vlmeta_names(&self) -> Vec<String> {
        self.sc.read().vlmeta_names()
    }
    fn vlmeta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.sc.read().vlmeta_get(name).ok()
    }
    fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let mut sc = self.sc_mut();
        let cparams = sc.cparams().clone();
        sc.vlmeta_add(name, content, Some(&cparams)).map(|_| ())
    }
    fn is_persistent(&self) -> bool {
        self.persistent
    }
    fn sync_if_stale(&mut self) -> Result<bool> {
        if !self.persistent {
            return Ok(false);
        }
        let now = {
            let mut sc = self.sc_mut();
            sc.sync_if_stale()?;
            sc.rereads()
        };
        self.follow_rereads(now)
    }
    fn begin_exclusive(&mut self) -> Result<bool> {
        if !self.persistent {
            return Ok(false);
        }
        let now = {
            let mut sc = self.sc_mut();
            sc.lock()?;
            sc.rereads()
        };
        self.follow_rereads(now)
    }
    fn end_exclusive(&mut self) -> Result<()> {
        if !self.persistent {
            return Ok(());
        }
        self.sc.write().unlock()
    }
    fn begin_edits(&mut self) {
        self.sc_mut().begin_edits();
    }
    fn end_edits(&mut self, keep: bool) -> Result<bool> {
        let (ended, now) = {
            let mut sc = self.sc_mut();
            let ended = sc.end_edits(keep);
            (ended, sc.rereads())
        };
        let reread = self.follow_rereads(now);
        ended?;
        reread
    }
    fn as_schunk(&self) -> Option<&SChunkStore> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schunk::Storage;

    /// An in-memory store of 2 chunks of 4 blocks of 4 one-byte items.
    fn store() -> SChunkStore {
        let mut st = Storage::default();
        st.cparams.typesize = 1;
        st.cparams.blocksize = 4;
        let mut s = SChunkStore::new(SChunk::new(st).unwrap(), 16, 4).unwrap();
        s.append_chunk(&(0..16).collect::<Vec<u8>>()).unwrap();
        s.append_chunk(&(100..116).collect::<Vec<u8>>()).unwrap();
        s
    }

    fn decoded_blocks(s: &SChunkStore) -> Option<(i64, Vec<bool>)> {
        s.cache_state()
            .cache
            .as_ref()
            .map(|c| (c.nchunk, c.decoded.clone()))
    }

    #[test]
    fn cached_reads_keep_decoded_blocks_and_never_serve_stale_data() {
        let mut s = store();
        let mut buf = [0u8; 16];
        let only = |b: usize| {
            let mut need = BlockNeeds::none(4);
            need.add_whole(b);
            need
        };
        // A first read decodes straight into the caller's buffer.
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert_eq!(buf[4..8], [4, 5, 6, 7]);
        assert_eq!(decoded_blocks(&s), None);
        // Asked for again: now it is kept.
        buf.fill(0);
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert_eq!(buf[4..8], [4, 5, 6, 7]);
        assert_eq!(
            decoded_blocks(&s),
            Some((0, vec![false, true, false, false]))
        );
        // Another block of the same chunk adds to what is kept.
        s.read_chunk_cached(0, &mut buf, Some(&only(3))).unwrap();
        assert_eq!(buf[12..], [12, 13, 14, 15]);
        assert_eq!(
            decoded_blocks(&s),
            Some((0, vec![false, true, false, true]))
        );
        // A hit leaves the cache as it is and gives the same bytes.
        buf.fill(0);
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert_eq!(buf[4..8], [4, 5, 6, 7]);
        assert_eq!(
            decoded_blocks(&s),
            Some((0, vec![false, true, false, true]))
        );
        // A write through the store drops the cache; the read sees it.
        let mut new: Vec<u8> = (50..66).collect();
        s.write_chunk(0, &new).unwrap();
        assert_eq!(decoded_blocks(&s), None);
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert_eq!(buf[4..8], new[4..8]);
        // Exclusive access to the super-chunk (how the C layer lends it, and
        // how a C caller's change on `array->sc` comes in) drops the cache.
        new[5] = 222;
        let chunk = s.encode(0, &new).unwrap();
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert!(decoded_blocks(&s).is_some());
        assert_eq!(s.cache_state().last_read, 0);
        s.with(|sc| sc.update_chunk(0, &chunk).map(|_| ())).unwrap();
        assert_eq!(decoded_blocks(&s), None);
        s.read_chunk_cached(0, &mut buf, Some(&only(1))).unwrap();
        assert_eq!(buf[5], 222);
        // Another chunk replaces the kept one; a full read is whole.
        s.read_chunk_cached(1, &mut buf, None).unwrap();
        assert_eq!(buf.to_vec(), (100..116).collect::<Vec<u8>>());
        s.read_chunk_cached(1, &mut buf, None).unwrap();
        assert_eq!(buf.to_vec(), (100..116).collect::<Vec<u8>>());
        assert_eq!(decoded_blocks(&s), Some((1, vec![true])));
    }
}
