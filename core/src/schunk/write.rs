//! Adding, replacing, removing and reordering the chunks of a super-chunk.

use std::sync::Arc;

use super::{fixed_chunk_nbytes, grow, Backend, SChunk, Special};
use crate::frame::codec::ChunkInfo;
use crate::frame::SpecialOffset;
use crate::Result;

impl SChunk {
    // ----- writing chunks -----

    /// Compresses `src` into a new chunk and appends it; returns the new
    /// number of chunks.
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<i64> {
        self.engine.set_nchunk(self.nchunks());
        let (buf, n) = self.engine.compress_reusing(src)?;
        let r = self.append_chunk(&buf[..n]);
        self.engine.give_back(buf);
        r
    }

    /// `src` compressed as the next chunk would be by
    /// [`SChunk::append_buffer`], through `&self`: the callbacks the
    /// compression runs may read this super-chunk meanwhile (append the
    /// result with [`SChunk::append_chunk`]).
    pub fn compress_next(&self, src: &[u8]) -> Result<Vec<u8>> {
        self.engine.compress_shared(self.nchunks(), src)
    }

    /// Appends a compressed chunk; returns the new number of chunks.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<i64> {
        self.locked(true, |s| s.append_chunk_unlocked(chunk))
    }

    fn append_chunk_unlocked(&mut self, chunk: &[u8]) -> Result<i64> {
        let n = self.nchunks();
        self.insert_chunk(n, chunk)
    }

    /// Validates a chunk and returns its info and exact bytes.
    pub(super) fn check_chunk<'a>(&self, chunk: &'a [u8]) -> Result<(ChunkInfo, &'a [u8])> {
        let info = ChunkInfo::parse(chunk)?;
        let bytes = chunk.get(..info.cbytes as usize).ok_or_else(|| {
            crate::err!(
                ReadBuffer,
                "chunk says {} bytes, buffer has {}",
                info.cbytes,
                chunk.len()
            )
        })?;
        // A chunk with only the 16-byte Blosc1 header is accepted, as the
        // reference does; it has no flags2 byte (read as 0: regular blocks).
        let vl = info.flags2 & 1 != 0;
        if self.nchunks() > 0 && vl != self.vl_blocks {
            crate::bail!(
                ChunkAppend,
                "super-chunks cannot mix regular and variable-length-block chunks"
            );
        }
        Ok((info, bytes))
    }

    /// Decides the new chunksize after placing a chunk of `nb` bytes at `n`
    /// (`replacing` when it overwrites chunk `n`), as the reference does: a
    /// chunk size not yet known (-1) becomes `nb`; a known one (set by the
    /// first chunk, or by a C caller through `schunk->chunksize`) turns to 0
    /// (variable) when the chunks stop being whole ones but for the last, and
    /// a first chunk larger than a size set beforehand is refused.
    pub(super) fn next_chunksize(&mut self, n: usize, nb: i64, replacing: bool) -> Result<i32> {
        let nchunks = self.nchunks() as usize;
        let cs = self.chunksize;
        if cs < 0 {
            return Ok(i32::try_from(nb).unwrap_or(0));
        }
        if cs == 0 {
            return Ok(0);
        }
        let cs64 = i64::from(cs);
        let whole = if replacing {
            nb <= cs64 && (n + 1 == nchunks || nb == cs64)
        } else if nchunks > 0 {
            let last_nb = fixed_chunk_nbytes(cs, self.nbytes, nchunks - 1, nchunks);
            last_nb == cs64 && nb <= cs64 && (n == nchunks || nb == cs64)
        } else if nb > cs64 {
            crate::bail!(
                ChunkAppend,
                "a first chunk of {nb} bytes is larger than the chunk size {cs} set beforehand"
            );
        } else {
            true
        };
        Ok(if whole { cs } else { 0 })
    }

    /// When a frame turns to variable chunk sizes, its special offsets can no
    /// longer be sized on reading: store them as real chunks first.
    pub(super) fn materialize_specials(&mut self) -> Result<()> {
        let nchunks = self.nchunks() as usize;
        let ts = self.typesize() as usize;
        for i in 0..nchunks {
            let kind = match &mut self.backend {
                Backend::Frame(f) => match f.chunk_info(i)? {
                    Err(s) => s,
                    Ok(_) => continue,
                },
                Backend::Chunks(_) => return Ok(()),
            };
            let size = i32::try_from(self.special_nbytes(i)?)
                .map_err(|_| crate::err!(FrameSpecial, "chunk {i} too large"))?;
            let chunk = crate::frame::codec::special_chunk(kind, size, ts as i32, self.blocksize)?;
            if let Backend::Frame(f) = &mut self.backend {
                f.update(i, &chunk, None)?;
                // A contiguous frame's count is reset to its data section
                // on flush; until then it must still cover this chunk.
                self.cbytes = grow(self.cbytes, chunk.len() as i64)?;
            }
        }
        Ok(())
    }

    /// Stores `bytes` at `n` in the backend (insert or replace); returns
    /// the stored size as counted in `cbytes` when a chunk comes in: 0 for a
    /// special offset, else the chunk's cbytes (see [`SChunk::stored_cbytes`]
    /// for when it goes).
    /// `shared`, when given, holds exactly `bytes`: a chunk list stores it
    /// instead of a new copy (see `SChunk::copy`).
    pub(super) fn place_chunk(
        &mut self,
        n: usize,
        info: &ChunkInfo,
        bytes: &[u8],
        shared: Option<Arc<[u8]>>,
        replace: bool,
    ) -> Result<i64> {
        // A frame keeps a special chunk as an offset, which it reads back
        // with the frame's own parameters. A special chunk that would then
        // read differently is stored as it is instead: one the decoder
        // refuses (its `nbytes` not a multiple of its own typesize, say),
        // which read as data only after going through a frame, and NaNs of
        // another typesize than the frame's, whose bytes (a float's or a
        // double's NaN) changed there (both found by the ndarray_edit fuzz
        // body).
        let special = if self.chunksize > 0 {
            info.special_offset().filter(|&s| {
                crate::chunk::ChunkHeader::parse(bytes).is_ok()
                    && (s != SpecialOffset::Nan || i32::from(info.typesize) == self.typesize())
            })
        } else {
            None
        };
        match &mut self.backend {
            Backend::Chunks(c) => {
                let stored = shared.unwrap_or_else(|| Arc::from(bytes));
                if replace {
                    c[n] = stored;
                } else {
                    super::serial::try_reserve_list(c, 1)?;
                    c.insert(n, stored);
                }
            }
            Backend::Frame(f) => {
                if replace {
                    f.update(n, bytes, special)?;
                } else {
                    f.insert(n, bytes, special)?;
                }
                if special.is_some() {
                    return Ok(0);
                }
            }
        }
        Ok(i64::from(info.cbytes))
    }

    /// Refuses (with `refuse`) an edit after which a frame would hold
    /// `nchunks` chunks of `nbytes` bytes in all, in chunks of `chunksize`
    /// (0: of any size), when a frame whose header says so does not reopen
    /// with those chunks: a fixed chunk size makes `nbytes` fix the count of
    /// chunks, and with `nbytes` 0 the index is not read. A chunk of 0 bytes
    /// gets there (the reference stores it, and its frame then fails to
    /// reopen, or reopens without it), as does a corrupt header. Chunk lists
    /// hold any chunks, as in the reference. Edits of chunks check first,
    /// before they write anything; `SChunk::flush` checks the header it is
    /// about to write, for the edits that rewrite only metadata.
    pub(super) fn check_frame_sizes(
        &self,
        nchunks: usize,
        nbytes: i64,
        chunksize: i32,
        refuse: crate::ErrorKind,
    ) -> Result<()> {
        if !self.is_frame() {
            return Ok(());
        }
        let implied = match (nbytes, i64::from(chunksize)) {
            (0, _) => 0,
            (n, cs) if cs > 0 => n / cs + i64::from(n % cs != 0),
            _ if nchunks == 0 => 1,
            _ => nchunks as i64,
        };
        if implied != nchunks as i64 {
            return Err(crate::Error::new(
                refuse,
                format!(
                    "a frame holding {nchunks} chunks of {nbytes} bytes in all (chunk size \
                 {chunksize}) would reopen with {implied}: its header disagrees with its chunks, \
                 or a chunk has no bytes"
                ),
            ));
        }
        Ok(())
    }

    /// Refuses (with `refuse`) an edit of a frame that would resize its
    /// last chunk without touching it. With a fixed chunk size, a special
    /// last chunk holds what the header's `nbytes` leaves over (`nbytes %
    /// chunksize`, or a whole chunk). Every other chunk of a frame holds
    /// `chunksize` bytes, so edits keep that remainder; but in a corrupt frame
    /// a stored chunk may claim another size, and replacing or removing it
    /// moved the remainder, so the last chunk changed size, and bytes (found
    /// by the sparse_edit fuzz body). `last` is the chunk that is last after
    /// the edit, numbered as before it (`None` when the edit places that
    /// chunk itself); `nchunks`, `nbytes` and `chunksize` are the frame's
    /// after the edit. Updates and deletes check; inserts add a whole chunk.
    pub(super) fn check_last_chunk_kept(
        &mut self,
        last: Option<usize>,
        nchunks: usize,
        nbytes: i64,
        chunksize: i32,
        refuse: crate::ErrorKind,
    ) -> Result<()> {
        let Some(last) = last else {
            return Ok(());
        };
        let special = match &self.backend {
            Backend::Frame(f) => f.is_special(last)?,
            Backend::Chunks(_) => false,
        };
        if !special || chunksize <= 0 || nchunks == 0 {
            return Ok(());
        }
        // A special chunk no reader can size (no fixed chunk size before the
        // edit) has no size to keep.
        let Ok(before) = self.special_nbytes(last) else {
            return Ok(());
        };
        let after = fixed_chunk_nbytes(chunksize, nbytes, nchunks - 1, nchunks);
        if before != after {
            return Err(crate::Error::new(
                refuse,
                format!(
                    "the frame's last chunk, a special one of {before} bytes, would hold {after} \
                 after this edit: a stored chunk claims other than the frame's chunk size \
                 ({chunksize} bytes)"
                ),
            ));
        }
        Ok(())
    }

    /// Stored size of chunk `n` as counted in `cbytes` when it is replaced
    /// or removed. A chunk list counts every chunk's size when it comes in,
    /// but, as the reference does, a chunk of 32 bytes (a special chunk) as 0
    /// when it goes: its `cbytes` then keeps those 32 bytes, which
    /// python-blosc2 prints (`NDArray.info` of an array made from data, whose
    /// chunks replace the uninitialized ones it starts with).
    pub(super) fn stored_cbytes(&mut self, n: usize) -> Result<i64> {
        match &mut self.backend {
            Backend::Chunks(c) => {
                let cb = ChunkInfo::parse(&c[n])?.cbytes;
                Ok(if cb == 32 { 0 } else { i64::from(cb) })
            }
            Backend::Frame(f) => Ok(match f.chunk_info(n)? {
                Ok(info) => i64::from(info.cbytes),
                Err(_) => 0,
            }),
        }
    }

    /// Uncompressed size of chunk `n`.
    pub(super) fn chunk_nbytes(&mut self, n: usize) -> Result<i64> {
        match &mut self.backend {
            Backend::Chunks(c) => Ok(i64::from(ChunkInfo::parse(&c[n])?.nbytes)),
            Backend::Frame(f) => match f.chunk_info(n)? {
                Ok(info) => Ok(i64::from(info.nbytes)),
                Err(_) => self.special_nbytes(n),
            },
        }
    }

    pub(super) fn set_chunksize(&mut self, cs: i32) -> Result<()> {
        if cs == 0 && self.chunksize > 0 {
            self.materialize_specials()?;
        }
        self.chunksize = cs;
        Ok(())
    }

    /// Inserts a compressed chunk at position `n`; returns the new number of chunks.
    pub fn insert_chunk(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        self.locked(true, |s| s.insert_chunk_unlocked(n, chunk))
    }

    fn insert_chunk_unlocked(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        self.insert_placed(n, chunk, None)
    }

    /// Appends `chunk`, which a chunk list keeps as it is, sharing its bytes
    /// with whoever else holds them.
    pub(super) fn append_shared(&mut self, chunk: Arc<[u8]>) -> Result<i64> {
        self.locked(true, |s| {
            let n = s.nchunks();
            s.insert_placed(n, &chunk.clone(), Some(chunk))
        })
    }

    fn insert_placed(&mut self, n: i64, chunk: &[u8], shared: Option<Arc<[u8]>>) -> Result<i64> {
        let nchunks = self.nchunks();
        if n < 0 || n > nchunks {
            crate::bail!(InvalidIndex, "insert position {n} outside 0..={nchunks}");
        }
        let n = n as usize;
        let (info, bytes) = self.check_chunk(chunk)?;
        let nb = i64::from(info.nbytes);
        // Check the counters first so that a refusal changes nothing.
        let nbytes = grow(self.nbytes, nb)?;
        grow(self.cbytes, i64::from(info.cbytes))?;
        let cs = self.next_chunksize(n, nb, false)?;
        // No check_last_chunk_kept: with a fixed chunk size an insert before
        // the last chunk adds exactly `chunksize` bytes (next_chunksize).
        self.check_frame_sizes(
            nchunks as usize + 1,
            nbytes,
            cs,
            crate::ErrorKind::ChunkInsert,
        )?;
        self.set_chunksize(cs)?;
        if nchunks == 0 {
            self.vl_blocks = info.flags2 & 1 != 0;
        }
        // A shared copy is only usable when it is the exact chunk.
        let shared = shared.filter(|a| a.len() == bytes.len());
        let stored = self.place_chunk(n, &info, bytes, shared, false)?;
        self.nbytes = nbytes;
        self.cbytes = grow(self.cbytes, stored)?;
        self.flush_edit()?;
        Ok(self.nchunks())
    }

    /// Replaces chunk `n` with a compressed chunk; returns the number of chunks.
    pub fn update_chunk(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        self.locked(true, |s| s.update_chunk_unlocked(n, chunk))
    }

    fn update_chunk_unlocked(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        let idx = self.check_index(n)?;
        let (info, bytes) = self.check_chunk(chunk)?;
        let nb = i64::from(info.nbytes);
        let old_nb = self.chunk_nbytes(idx)?;
        // Check the counters first so that a refusal changes nothing. The
        // new chunk is stored in at most `info.cbytes` bytes; turning special
        // offsets into chunks below adds to `cbytes` at least what it adds
        // to chunk `idx`'s stored size, so `kept` can only grow there.
        let nbytes = grow(self.nbytes, nb - old_nb)?;
        let kept = grow(self.cbytes, -self.stored_cbytes(idx)?)?;
        grow(kept, i64::from(info.cbytes))?;
        let cs = self.next_chunksize(idx, nb, true)?;
        let nchunks = self.nchunks() as usize;
        self.check_frame_sizes(nchunks, nbytes, cs, crate::ErrorKind::ChunkUpdate)?;
        let last = (idx + 1 < nchunks).then(|| nchunks - 1);
        self.check_last_chunk_kept(last, nchunks, nbytes, cs, crate::ErrorKind::ChunkUpdate)?;
        self.set_chunksize(cs)?;
        let kept = grow(self.cbytes, -self.stored_cbytes(idx)?)?;
        let new_cb = self.place_chunk(idx, &info, bytes, None, true)?;
        self.nbytes = nbytes;
        self.cbytes = grow(kept, new_cb)?;
        self.flush_edit()?;
        Ok(self.nchunks())
    }

    /// Removes chunk `n`; returns the new number of chunks.
    pub fn delete_chunk(&mut self, n: i64) -> Result<i64> {
        self.locked(true, |s| s.delete_chunk_unlocked(n))
    }

    fn delete_chunk_unlocked(&mut self, n: i64) -> Result<i64> {
        let idx = self.check_index(n)?;
        let nbytes = grow(self.nbytes, -self.chunk_nbytes(idx)?)?;
        let cbytes = grow(self.cbytes, -self.stored_cbytes(idx)?)?;
        let nchunks = self.nchunks() as usize - 1;
        self.check_frame_sizes(
            nchunks,
            nbytes,
            self.chunksize,
            crate::ErrorKind::InvalidHeader,
        )?;
        // The chunk last after the deletion: the one before `idx` when `idx`
        // was last (none when no chunk is left).
        let last = nchunks
            .checked_sub(1)
            .map(|l| if idx < nchunks { l + 1 } else { l });
        let cs = self.chunksize;
        self.check_last_chunk_kept(last, nchunks, nbytes, cs, crate::ErrorKind::InvalidHeader)?;
        match &mut self.backend {
            Backend::Chunks(c) => {
                c.remove(idx);
            }
            Backend::Frame(f) => f.delete(idx)?,
        }
        self.nbytes = nbytes;
        self.cbytes = cbytes;
        if self.nchunks() == 0 {
            self.vl_blocks = false;
        }
        self.flush_edit()?;
        Ok(self.nchunks())
    }

    /// Reorders the chunks: new chunk `i` is old chunk `order[i]`.
    pub fn reorder_offsets(&mut self, order: &[i64]) -> Result<()> {
        self.locked(true, |s| s.reorder_offsets_unlocked(order))
    }

    fn reorder_offsets_unlocked(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks() as usize;
        if self.chunksize > 0
            && n > 0
            && fixed_chunk_nbytes(self.chunksize, self.nbytes, n - 1, n)
                != i64::from(self.chunksize)
        {
            crate::bail!(
                InvalidParam,
                "cannot reorder chunks when the last chunk is short"
            );
        }
        match &mut self.backend {
            Backend::Chunks(c) => {
                let mut seen = vec![false; n];
                if order.len() != n {
                    crate::bail!(
                        InvalidParam,
                        "order has {} entries, super-chunk has {n} chunks",
                        order.len()
                    );
                }
                for &o in order {
                    let i = usize::try_from(o)
                        .ok()
                        .filter(|&i| i < n && !seen[i])
                        .ok_or_else(|| {
                            crate::err!(
                                InvalidParam,
                                "order is not a permutation of 0..{n} (bad entry {o})"
                            )
                        })?;
                    seen[i] = true;
                }
                let old = std::mem::take(c);
                let mut slots: Vec<Option<Arc<[u8]>>> = old.into_iter().map(Some).collect();
                *c = order
                    .iter()
                    .map(|&o| slots[o as usize].take().unwrap_or_default())
                    .collect();
            }
            Backend::Frame(f) => f.reorder(order)?,
        }
        self.flush_edit()
    }

    /// Fills an empty super-chunk with `nitems` special items split into
    /// chunks of `chunksize` bytes. In frames zeros, NaNs and uninitialized
    /// values become special offsets and take no space.
    pub fn fill_special(&mut self, nitems: i64, special: Special, chunksize: i32) -> Result<i64> {
        self.locked(true, |s| {
            s.fill_special_unlocked(nitems, special, chunksize)
        })
    }

    fn fill_special_unlocked(
        &mut self,
        nitems: i64,
        special: Special,
        chunksize: i32,
    ) -> Result<i64> {
        if self.nchunks() > 0 || self.nbytes > 0 {
            crate::bail!(SchunkSpecial, "fill_special needs an empty super-chunk");
        }
        let ts = i64::from(self.typesize());
        if nitems < 0 || chunksize <= 0 || i64::from(chunksize) % ts != 0 {
            crate::bail!(
                InvalidParam,
                "bad fill: {nitems} items, chunksize {chunksize} (typesize {ts})"
            );
        }
        let total = nitems
            .checked_mul(ts)
            .ok_or_else(|| crate::err!(InvalidParam, "nitems too large"))?;
        let cs = i64::from(chunksize);
        let nchunks = (total + cs - 1) / cs;
        if nchunks > i64::from(i32::MAX) / 8 {
            crate::bail!(
                SchunkSpecial,
                "too many chunks ({nchunks}); use a larger chunksize"
            );
        }
        let offset_kind = match special {
            Special::Zero => Some(SpecialOffset::Zero),
            Special::Nan => Some(SpecialOffset::Nan),
            Special::Uninit => Some(SpecialOffset::Uninit),
            Special::Value => crate::bail!(InvalidParam, "fill_special cannot fill with a value"),
        };
        if special == Special::Nan && ts != 4 && ts != 8 {
            crate::bail!(InvalidParam, "NaN fill needs typesize 4 or 8");
        }
        self.chunksize = chunksize;
        if let (Backend::Frame(f), Some(kind)) = (&mut self.backend, offset_kind) {
            // Special offsets only: nothing is stored but the index.
            f.fill_special(kind, nchunks as usize)?;
            self.nbytes = total;
            // The header records the block size of a sample special chunk
            // made with the super-chunk's parameters, as in the reference.
            self.blocksize =
                crate::chunk::make_special_with(&self.storage.cparams, special, cs as usize, None)
                    .ok()
                    .and_then(|c| ChunkInfo::parse(&c).ok())
                    .map_or(self.blocksize, |i| i.blocksize);
            self.flush_edit()?;
            return Ok(self.nchunks());
        }
        // Every full chunk of the fill is the same bytes: a chunk list holds
        // them once. Made with the super-chunk's parameters, as the
        // reference's are, so their headers carry its block size (an
        // array's block, which readers of single blocks rely on).
        let make = |nb: i64| {
            crate::chunk::make_special_with(&self.storage.cparams, special, nb as usize, None)
        };
        let full: Arc<[u8]> = make(cs)?.into();
        for i in 0..nchunks {
            let nb = if i == nchunks - 1 && total % cs != 0 {
                total % cs
            } else {
                cs
            };
            let chunk: Arc<[u8]> = if nb == cs {
                full.clone()
            } else {
                make(nb)?.into()
            };
            match &mut self.backend {
                Backend::Chunks(c) => {
                    self.cbytes += chunk.len() as i64;
                    c.push(chunk);
                }
                Backend::Frame(f) => f.insert(i as usize, &chunk, offset_kind)?,
            }
            self.nbytes += nb;
        }
        self.flush_edit()?;
        Ok(self.nchunks())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schunk::{CParams, Storage};

    /// A chunk list counts a special chunk's 32 bytes when it comes in but
    /// not when it is replaced, as the reference does: its `cbytes` agrees
    /// with the reference's, which python-blosc2 prints.
    #[test]
    fn a_chunk_list_counts_cbytes_as_the_reference() {
        let mut s = SChunk::new(Storage {
            cparams: CParams {
                typesize: 8,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        s.fill_special(10, Special::Uninit, 80).unwrap();
        assert_eq!(s.cbytes(), 32);
        let data: Vec<u8> = (1..=10u64).flat_map(|v| v.to_le_bytes()).collect();
        let chunk = crate::schunk::engine::compress_with(s.cparams(), &data).unwrap();
        s.update_chunk(0, &chunk).unwrap();
        assert_eq!(s.cbytes(), 32 + chunk.len() as i64);
        s.delete_chunk(0).unwrap();
        assert_eq!(s.cbytes(), 32);
    }

    /// Special chunks filled into a chunk list carry the super-chunk's block
    /// size, as those of a frame and the reference's do: python-blosc2's
    /// expression prefilters read one block of an input's chunk at a time,
    /// at `nblock * blocksize`, and a header saying one block of the whole
    /// chunk sent them past its end.
    #[test]
    fn special_chunks_of_a_chunk_list_have_the_super_chunks_blocks() {
        for contiguous in [false, true] {
            let mut s = SChunk::new(Storage {
                contiguous,
                cparams: CParams {
                    typesize: 4,
                    blocksize: 16,
                    ..CParams::default()
                },
                ..Storage::default()
            })
            .unwrap();
            s.fill_special(36 * 3 + 4, Special::Zero, 144).unwrap();
            for n in 0..s.nchunks() {
                let c = s.get_chunk(n).unwrap();
                let info = ChunkInfo::parse(&c).unwrap();
                assert_eq!(info.blocksize, 16, "chunk {n}, contiguous {contiguous}");
            }
        }
    }

    /// A frame holding no chunks whose header still says it holds bytes
    /// (the state a corrupt frame found by the frame_edit fuzz body opened
    /// into: nbytes, an empty index and no fixed chunk size) refuses a
    /// metadata edit rather than write that header back: with no chunks its
    /// chunk size is written as -1, which no reader opens beside data.
    #[test]
    fn a_metadata_edit_never_writes_sizes_the_chunks_disagree_with() {
        let mut s = SChunk::new(Storage {
            contiguous: true,
            cparams: CParams {
                typesize: 4,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        s.append_buffer(&[1u8; 400]).unwrap();
        s.append_buffer(&[2u8; 200]).unwrap();
        assert_eq!(s.nbytes(), 600);
        s.vlmeta_add("kept", b"first", None).unwrap();
        let before = s.to_buffer().unwrap();
        if let Backend::Frame(f) = &mut s.backend {
            f.entries_for_tests().clear();
        }
        // As opening such a frame sets it: no chunks, no chunk size yet.
        s.chunksize = -1;
        let e = s.vlmeta_add("note", b"x", None).unwrap_err();
        assert_eq!(e.code(), -11, "{}", e.detail());
        let e = s.vlmeta_update("kept", b"second", None).unwrap_err();
        assert_eq!(e.code(), -11, "{}", e.detail());
        assert_eq!(s.vlmeta_names(), ["kept"]);
        assert_eq!(s.vlmeta_get("kept").unwrap(), b"first");
        assert_eq!(s.to_buffer().unwrap(), before, "the frame was rewritten");
    }

    /// A special chunk the decoder refuses (NaNs of 48 bytes whose own
    /// typesize, 40, does not divide them) is refused the same after its
    /// chunk list went through a frame: the frame stores its bytes, not a
    /// special offset it would read back with the frame's typesize.
    #[test]
    fn a_special_chunk_the_decoder_refuses_stays_refused_in_a_frame() {
        let mut nans = crate::chunk::make_special(Special::Nan, 48, 4, None).unwrap();
        nans[3] = 40;
        let mut list = SChunk::new(Storage::default()).unwrap();
        list.append_chunk(&nans).unwrap();
        let mut out = vec![0u8; 48];
        let e = list.decompress_chunk(0, &mut out).unwrap_err();
        let framed = SChunk::from_vec(list.to_buffer().unwrap()).unwrap();
        let again = framed.decompress_chunk(0, &mut out).unwrap_err();
        assert_eq!(
            again.code(),
            e.code(),
            "{} / {}",
            e.detail(),
            again.detail()
        );
        assert_eq!(
            framed.get_chunk(0).unwrap()[..],
            nans[..],
            "stored as it is"
        );
    }

    /// NaNs of typesize 4 (float NaNs) in a super-chunk of typesize 8 read
    /// the same after going through a frame: the frame stores their bytes,
    /// not a NaN offset it would read back as double NaNs.
    #[test]
    fn nans_of_another_typesize_read_the_same_in_a_frame() {
        let nans = crate::chunk::make_special(Special::Nan, 48, 4, None).unwrap();
        let mut list = SChunk::new(Storage::default()).unwrap();
        assert_eq!(list.typesize(), 8);
        list.append_chunk(&nans).unwrap();
        let mut before = vec![0u8; 48];
        list.decompress_chunk(0, &mut before).unwrap();
        assert_eq!(before[..8], [0, 0, 0xc0, 0x7f, 0, 0, 0xc0, 0x7f]);
        let framed = SChunk::from_vec(list.to_buffer().unwrap()).unwrap();
        let mut after = vec![0u8; 48];
        framed.decompress_chunk(0, &mut after).unwrap();
        assert_eq!(after, before);
        assert_eq!(
            framed.get_chunk(0).unwrap()[..],
            nans[..],
            "stored as it is"
        );
        // NaNs of the frame's own typesize still go in as an offset.
        let doubles = crate::chunk::make_special(Special::Nan, 48, 8, None).unwrap();
        let mut list = SChunk::new(Storage::default()).unwrap();
        list.append_chunk(&doubles).unwrap();
        let frame = list.to_buffer().unwrap();
        let mut framed = SChunk::from_vec(frame).unwrap();
        framed.decompress_chunk(0, &mut after).unwrap();
        assert_eq!(after[..8], [0, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
        assert_eq!(framed.stored_cbytes(0).unwrap(), 0, "a special offset");
    }

    /// A corrupt frame whose chunk 0 claims 300 bytes while its header says
    /// chunks hold 400, ending in a special chunk of the 100 bytes the
    /// header's nbytes (900) leaves over. Replacing chunk 0 with 400 bytes,
    /// or deleting it, would move that remainder and resize the special
    /// chunk: both are refused and the frame stays as it was. An edit that
    /// keeps the remainder (replacing chunk 1, which claims 400) goes
    /// through.
    #[test]
    fn an_edit_never_resizes_a_special_last_chunk_it_leaves() {
        let cparams = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let chunk = |n: usize, v: u8| {
            let mut dst = vec![0u8; n + 64];
            let k = crate::chunk::compress(&cparams, &vec![v; n], &mut dst).unwrap();
            dst.truncate(k);
            dst
        };
        let mut s = SChunk::new(Storage {
            contiguous: true,
            cparams: cparams.clone(),
            ..Storage::default()
        })
        .unwrap();
        s.append_chunk(&chunk(400, 1)).unwrap();
        s.append_chunk(&chunk(400, 2)).unwrap();
        let zeros = crate::chunk::make_special(crate::chunk::Special::Zero, 100, 4, None).unwrap();
        s.append_chunk(&zeros).unwrap();
        assert_eq!((s.nbytes(), s.chunksize()), (900, 400));
        if let Backend::Frame(f) = &mut s.backend {
            f.update(0, &chunk(300, 3), None).unwrap();
        }
        let before = s.to_buffer().unwrap();
        let e = s.update_chunk(0, &chunk(400, 4)).unwrap_err();
        assert_eq!(e.code(), -21, "{}", e.detail());
        let e = s.delete_chunk(0).unwrap_err();
        assert_eq!(e.code(), -11, "{}", e.detail());
        assert_eq!(s.to_buffer().unwrap(), before, "the frame was rewritten");
        s.update_chunk(1, &chunk(400, 5)).unwrap();
        let mut out = vec![9u8; 400];
        assert_eq!(s.decompress_chunk(2, &mut out).unwrap(), 100);
        assert_eq!(out[..100], [0u8; 100]);
    }
}
