//! Reading chunks and item ranges out of a super-chunk.

use std::borrow::Cow;

use super::{fetch_chunk, fixed_chunk_nbytes, Backend, SChunk, SpecialSpec};
use crate::frame::codec::ChunkInfo;
use crate::Result;

impl SChunk {
    // ----- reading chunks -----

    pub(super) fn check_index(&self, n: i64) -> Result<usize> {
        let nchunks = self.nchunks();
        if n < 0 || n >= nchunks {
            crate::bail!(InvalidIndex, "chunk {n} out of range ({nchunks} chunks)");
        }
        Ok(n as usize)
    }

    pub(super) fn special_nbytes(&self, n: usize) -> Result<i64> {
        if self.chunksize <= 0 {
            crate::bail!(
                FrameSpecial,
                "special chunk {n} in a frame without a fixed chunksize"
            );
        }
        Ok(fixed_chunk_nbytes(
            self.chunksize,
            self.nbytes,
            n,
            self.nchunks() as usize,
        ))
    }

    /// The compressed chunk `n` (special offsets are expanded into special chunks).
    pub fn get_chunk(&self, n: i64) -> Result<Cow<'_, [u8]>> {
        let (n, spec) = self.chunk_request(n)?;
        fetch_chunk(&self.backend, n, spec)
    }

    /// Index check plus what is needed to expand a special offset.
    pub(super) fn chunk_request(&self, n: i64) -> Result<(usize, SpecialSpec)> {
        let n = self.check_index(n)?;
        let spec = SpecialSpec {
            nbytes: self.special_nbytes(n),
            typesize: self.typesize(),
            blocksize: self.blocksize,
        };
        Ok((n, spec))
    }

    /// Like [`SChunk::get_chunk`], but for stored chunks of on-disk frames
    /// returns the reference's lazy chunk: header, block starts and a
    /// trailer locating the blocks, which stay on disk (decode it with
    /// [`SChunk::lazy_block_source`]). Other chunks are returned whole.
    pub fn get_lazychunk(&self, n: i64) -> Result<Cow<'_, [u8]>> {
        let lazy = self.lazy_chunk(self.check_index(n)?)?;
        match lazy {
            Some(p) => Ok(Cow::Owned(p)),
            None => self.get_chunk(n),
        }
    }

    /// Decompresses chunk `n` into `dst`; returns the bytes written.
    pub fn decompress_chunk(&self, n: i64, dst: &mut [u8]) -> Result<usize> {
        let (n, spec) = self.chunk_request(n)?;
        let chunk = fetch_chunk(&self.backend, n, spec)?;
        self.engine.decoder(n as i64).decompress(&chunk, dst)
    }

    /// Uncompressed size of each chunk.
    pub(super) fn chunk_sizes(&self) -> Result<Vec<i64>> {
        let nchunks = self.nchunks() as usize;
        if self.chunksize > 0 {
            return Ok((0..nchunks)
                .map(|i| fixed_chunk_nbytes(self.chunksize, self.nbytes, i, nchunks))
                .collect());
        }
        let mut out = Vec::with_capacity(nchunks);
        for i in 0..nchunks {
            let nb = match &self.backend {
                Backend::Chunks(c) => i64::from(ChunkInfo::parse(&c[i])?.nbytes),
                Backend::Frame(f) => match f.chunk_info(i)? {
                    Ok(info) => i64::from(info.nbytes),
                    Err(_) => self.special_nbytes(i)?,
                },
            };
            out.push(nb);
        }
        Ok(out)
    }

    /// Reads items `start..stop` (in units of `typesize`) into `dst`.
    pub fn get_slice_buffer(&self, start: i64, stop: i64, dst: &mut [u8]) -> Result<()> {
        let ts = i64::from(self.typesize());
        let nitems = self.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            crate::bail!(InvalidParam, "slice {start}..{stop} outside 0..{nitems}");
        }
        let want = ((stop - start) * ts) as usize;
        if dst.len() < want {
            crate::bail!(
                WriteBuffer,
                "destination has {} bytes, slice needs {want}",
                dst.len()
            );
        }
        let (mut pos, end) = (start * ts, stop * ts);
        let mut chunk_start = 0i64;
        let sizes = self.chunk_sizes()?;
        let mut out = 0usize;
        for (i, &size) in sizes.iter().enumerate() {
            let chunk_end = chunk_start + size;
            if pos < chunk_end && pos < end {
                let lo = (pos - chunk_start) as usize;
                let hi = (end.min(chunk_end) - chunk_start) as usize;
                self.read_chunk_range(i, lo, &mut dst[out..out + hi - lo])?;
                out += hi - lo;
                pos = chunk_start + hi as i64;
            }
            chunk_start = chunk_end;
            if pos >= end {
                break;
            }
        }
        Ok(())
    }

    /// Reads bytes `lo..lo+dst.len()` of chunk `n`'s uncompressed data,
    /// fetching only the needed blocks for file frames.
    pub fn read_chunk_range(&self, n: usize, lo: usize, dst: &mut [u8]) -> Result<()> {
        let (n, spec) = self.chunk_request(n as i64)?;
        if self.lazy_range(n, lo, dst)?.is_some() {
            return Ok(());
        }
        let chunk = fetch_chunk(&self.backend, n, spec)?;
        let mut dec = self.engine.decoder(n as i64);
        let info = ChunkInfo::parse(&chunk)?;
        let nb = info.nbytes as usize;
        let len = dst.len();
        if lo.checked_add(len).map_or(true, |e| e > nb) {
            crate::bail!(
                InvalidParam,
                "range {lo}+{len} outside chunk {n} ({nb} bytes)"
            );
        }
        if lo == 0 && len == nb {
            dec.decompress(&chunk, dst)?;
            return Ok(());
        }
        if info.flags2 & 1 == 0 {
            return dec.decompress_range(&chunk, lo, dst);
        }
        // A VL-block chunk: its blocks are of any size, so it is decoded whole.
        let mut full = crate::mem::zeroed(nb)?;
        dec.decompress(&chunk, &mut full)?;
        dst.copy_from_slice(&full[lo..lo + len]);
        Ok(())
    }

    /// Decompresses block `nblock` of chunk `n`, a variable-length-block chunk.
    pub fn get_vlblock(&self, n: i64, nblock: usize) -> Result<Vec<u8>> {
        let (n, spec) = self.chunk_request(n)?;
        let chunk = fetch_chunk(&self.backend, n, spec)?;
        self.engine
            .decoder(n as i64)
            .decompress_vl_block(&chunk, nblock)
    }

    /// Compresses `blocks` into one variable-length-block chunk and appends
    /// it; returns the new number of chunks.
    pub fn append_vlblocks(&mut self, blocks: &[&[u8]]) -> Result<i64> {
        let chunk = self.engine.compress_vl(blocks)?;
        self.append_chunk(&chunk)
    }

    /// The decoded offsets index of a frame (`None` for chunk lists).
    pub fn frame_offsets(&self) -> Result<Option<Vec<i64>>> {
        match &self.backend {
            Backend::Frame(f) => f.offsets().map(Some),
            Backend::Chunks(_) => Ok(None),
        }
    }

    /// Reads `nitems` items starting at item `start` of chunk `n` into
    /// `dst` (a getitem on one chunk); returns the bytes written.
    pub fn get_items(&self, n: i64, start: usize, nitems: usize, dst: &mut [u8]) -> Result<usize> {
        let idx = self.check_index(n)?;
        let ts = self.typesize() as usize;
        let (lo, len) = start
            .checked_mul(ts)
            .zip(nitems.checked_mul(ts))
            .ok_or_else(|| crate::err!(InvalidParam, "item range overflows"))?;
        let have = dst.len();
        let d = dst.get_mut(..len).ok_or_else(|| {
            crate::err!(WriteBuffer, "destination has {have} bytes, {len} needed")
        })?;
        self.read_chunk_range(idx, lo, d)?;
        Ok(len)
    }

    /// Writes items `start..stop` from `src`, recompressing touched chunks.
    pub fn set_slice_buffer(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
        self.locked(true, |s| {
            let chunks = s.encode_slice(start, stop, src)?;
            s.update_chunks(chunks)
        })
    }

    /// The chunks [`SChunk::set_slice_buffer`] would store, as (index,
    /// compressed chunk), made through `&self`: the prefilter, codecs and
    /// filters the compression runs may read this super-chunk meanwhile.
    /// Store them with [`SChunk::update_chunks`]; a writer in between
    /// would be overwritten, so callers keep other writers out meanwhile.
    pub fn encode_slice(&self, start: i64, stop: i64, src: &[u8]) -> Result<Vec<(i64, Vec<u8>)>> {
        let ts = i64::from(self.typesize());
        let nitems = self.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            crate::bail!(InvalidParam, "slice {start}..{stop} outside 0..{nitems}");
        }
        let want = ((stop - start) * ts) as usize;
        if src.len() < want {
            crate::bail!(
                ReadBuffer,
                "source has {} bytes, slice needs {want}",
                src.len()
            );
        }
        let (mut pos, end) = (start * ts, stop * ts);
        let sizes = self.chunk_sizes()?;
        let mut chunks = Vec::new();
        let mut chunk_start = 0i64;
        let mut used = 0usize;
        for (i, &size) in sizes.iter().enumerate() {
            let chunk_end = chunk_start + size;
            if pos < chunk_end && pos < end {
                let lo = (pos - chunk_start) as usize;
                let hi = (end.min(chunk_end) - chunk_start) as usize;
                let mut data = crate::mem::zeroed(size as usize)?;
                self.decompress_chunk(i as i64, &mut data)?;
                data[lo..hi].copy_from_slice(&src[used..used + hi - lo]);
                used += hi - lo;
                chunks.push((i as i64, self.engine.compress_shared(i as i64, &data)?));
                pos = chunk_start + hi as i64;
            }
            chunk_start = chunk_end;
            if pos >= end {
                break;
            }
        }
        Ok(chunks)
    }

    /// Replaces each (index, compressed chunk) of `chunks` in turn, with
    /// one publish of a frame's metadata (see `SChunk::edits`): a writer
    /// killed meanwhile leaves every chunk old or every one new. When a
    /// replacement fails, the ones before it are kept, as single calls
    /// would have left them, and its error is returned.
    pub fn update_chunks(&mut self, chunks: Vec<(i64, Vec<u8>)>) -> Result<()> {
        self.locked(true, |s| {
            s.begin_edits();
            let r = chunks
                .into_iter()
                .try_for_each(|(n, chunk)| s.update_chunk(n, &chunk).map(|_| ()));
            let ended = s.end_edits(true);
            r?;
            ended
        })
    }
}
