//! What an array needs from its super-chunk, as one narrow trait, and an
//! in-memory implementation of it.
//!
//! The array logic (slices, resize, selections) only talks to [`ChunkStore`]:
//! chunks are read whole (optionally skipping blocks), written whole, filled
//! with special values, inserted, deleted or moved as opaque compressed
//! bytes. The in-memory [`MemStore`] keeps chunks decoded and counts what is
//! decoded and written, which lets tests prove that a slice touches only the
//! chunks and blocks it must.

use std::sync::Mutex;

use crate::chunk::BlockNeeds;
use crate::Result;

/// A value every item of a chunk takes without the chunk being materialised
/// (the reference's special chunks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fill {
    Zero,
    Nan,
    Uninit,
    /// One item's bytes, repeated.
    Value(Vec<u8>),
}

/// Chunks encoded by `ChunkStore::encode_chunk`, with their indices, to be
/// stored together.
pub type Encoded = Vec<(i64, Vec<u8>)>;

/// `data` is one whole chunk of `chunksize` bytes, as every store takes it.
pub(crate) fn check_chunk_len(data: &[u8], chunksize: i32) -> Result<()> {
    if data.len() != chunksize as usize {
        crate::bail!(
            InvalidParam,
            "chunk of {} bytes, expected {chunksize}",
            data.len()
        );
    }
    Ok(())
}

/// The super-chunk operations an array uses. `n` is a chunk index.
pub(crate) trait ChunkStore: Send + Sync + std::fmt::Debug {
    fn typesize(&self) -> i32;
    /// Bytes of one full (padded) chunk.
    fn chunksize(&self) -> i32;
    fn nchunks(&self) -> i64;
    /// Decodes chunk `n` into `dst` (exactly `chunksize` bytes): of each
    /// block, at least what `need` asks for (all of every block when
    /// `None`); the other bytes may be left unwritten or hold anything.
    fn read_chunk(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()>;
    /// As [`ChunkStore::read_chunk`], for a caller likely to read the same
    /// chunk again soon (small slices): a store that decodes may keep the
    /// decoded chunk and serve the next read of it without decoding.
    fn read_chunk_cached(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        self.read_chunk(n, dst, need)
    }
    /// `data` (exactly `chunksize` bytes) in the form chunk `n` is stored
    /// in, made through `&self` so that the callbacks encoding runs may read
    /// the store meanwhile; [`ChunkStore::write_encoded`] stores it.
    fn encode_chunk(&self, n: i64, data: &[u8]) -> Result<Vec<u8>>;
    /// Replaces chunk `n` by its encoded form, for each `(n, encoded)`.
    fn write_encoded(&mut self, chunks: Encoded) -> Result<()>;
    /// Encodes `data` (exactly `chunksize` bytes) and replaces chunk `n`.
    #[cfg(test)]
    fn write_chunk(&mut self, n: i64, data: &[u8]) -> Result<()> {
        let chunk = self.encode_chunk(n, data)?;
        self.write_encoded(vec![(n, chunk)])
    }
    /// Appends a chunk encoded by [`ChunkStore::encode_chunk`] (as chunk
    /// `nchunks()`).
    fn append_encoded(&mut self, chunk: Vec<u8>) -> Result<()>;
    #[cfg(test)]
    fn append_chunk(&mut self, data: &[u8]) -> Result<()> {
        let chunk = self.encode_chunk(self.nchunks(), data)?;
        self.append_encoded(chunk)
    }
    /// Inserts a chunk of `fill` at each position of `at` in turn, each
    /// numbered as after the inserts before it (ascending positions are
    /// where the new chunks end up).
    fn insert_fills(&mut self, at: &[i64], fill: &Fill) -> Result<()>;
    fn append_fill(&mut self, count: i64, fill: &Fill) -> Result<()>;
    /// Deletes the chunk at each position of `at` in turn, each numbered as
    /// after the deletes before it (descending positions delete the chunks
    /// numbered so before the call).
    fn delete_chunks(&mut self, at: &[i64]) -> Result<()>;
    /// The stored (compressed) form of chunk `n`, for copies that skip decoding.
    fn raw_chunk(&self, n: i64) -> Result<Vec<u8>>;
    fn write_raw_chunk(&mut self, n: i64, raw: &[u8]) -> Result<()>;
    /// Fixed-size metalayers, in insertion order.
    fn meta_names(&self) -> Vec<String>;
    fn meta_get(&self, name: &str) -> Option<Vec<u8>>;
    fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()>;
    fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()>;
    fn vlmeta_names(&self) -> Vec<String>;
    fn vlmeta_get(&self, name: &str) -> Option<Vec<u8>>;
    fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<()>;
    /// True when the store is a file or directory that others may change.
    fn is_persistent(&self) -> bool;
    /// Re-reads the store's metadata when another handle or process
    /// changed it since this one last looked; returns whether it did (false
    /// in memory, which nobody else writes).
    fn sync_if_stale(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Takes the store's cross-process lock exclusively (re-entrant) until
    /// [`ChunkStore::end_exclusive`], so that a sequence of chunk writes is
    /// seen whole by other locking handles; returns whether the store was
    /// re-read because another handle wrote since this one last held it. A
    /// no-op (false) for stores that do not lock.
    fn begin_exclusive(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Releases one level of [`ChunkStore::begin_exclusive`].
    fn end_exclusive(&mut self) -> Result<()> {
        Ok(())
    }
    /// Opens an edit scope: the store's chunk and metalayer changes until
    /// the matching [`ChunkStore::end_edits`] reach its file in one publish
    /// (see `SChunk::edits`). Scopes nest. A no-op for stores without a file.
    fn begin_edits(&mut self) {}
    /// Closes an edit scope, keeping its changes or, without `keep`,
    /// dropping them where the file still holds the store as it was before
    /// them. Returns whether the store re-read its file (it then holds the
    /// changes' absence, and the array re-reads its geometry); on an error
    /// the store holds what its file does, and the array re-reads too.
    fn end_edits(&mut self, _keep: bool) -> Result<bool> {
        Ok(false)
    }
    /// The address of chunk `n` kept decoded in memory (a fill is
    /// materialised first), for stores that keep chunks decoded; `None` for
    /// the others. Valid until the next call that changes the store.
    fn decoded_chunk_ptr(&mut self, _n: i64) -> Option<*mut u8> {
        None
    }
    /// The real super-chunk behind the store, if any.
    fn as_schunk(&self) -> Option<&super::schunk_store::SChunkStore> {
        None
    }
    /// Work counters (only the in-memory store counts).
    #[cfg(test)]
    fn test_stats(&self) -> Stats {
        Stats::default()
    }
}

/// Where a new array's super-chunk lives.
#[derive(Clone)]
pub enum ArrayStorage {
    /// A real super-chunk: in memory (chunk list or contiguous frame), a
    /// contiguous frame file or a sparse frame directory, with its
    /// compression parameters. Its `cparams.typesize` and `blocksize` are
    /// set from the array's context, as the reference does.
    Schunk(crate::schunk::Storage),
    /// Chunks kept decoded in memory, without a codec: scratch arrays and
    /// tests (it counts decoded blocks). Cannot be serialized.
    Decoded,
}

impl Default for ArrayStorage {
    fn default() -> Self {
        ArrayStorage::Schunk(crate::schunk::Storage::default())
    }
}

impl std::fmt::Debug for ArrayStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArrayStorage::Schunk(st) => f
                .debug_struct("Schunk")
                .field("contiguous", &st.contiguous)
                .field("urlpath", &st.urlpath)
                .finish(),
            ArrayStorage::Decoded => f.write_str("Decoded"),
        }
    }
}

/// Most metalayers a super-chunk holds (the reference `BLOSC2_MAX_METALAYERS`).
pub(crate) const MAX_METALAYERS: usize = 16;

/// Creates an empty store for chunks of `chunksize` bytes made of blocks of
/// `blocksize` bytes.
pub(crate) fn new_store(
    storage: &ArrayStorage,
    typesize: i32,
    chunksize: i32,
    blocksize: i32,
) -> Result<Box<dyn ChunkStore>> {
    match storage {
        ArrayStorage::Decoded => Ok(Box::new(MemStore::new(typesize, chunksize, blocksize)?)),
        ArrayStorage::Schunk(st) => {
            let mut st = st.clone();
            st.cparams.typesize = typesize;
            st.cparams.blocksize = blocksize;
            let mut sc = crate::schunk::SChunk::new(st)?;
            // Known before any chunk, as the reference sets it: frames of
            // arrays without chunks record it too.
            sc.declare_chunksize(chunksize)?;
            Ok(Box::new(super::schunk_store::SChunkStore::new(
                sc, chunksize, blocksize,
            )?))
        }
    }
}

#[derive(Debug, Clone)]
enum Slot {
    Data(Vec<u8>),
    Fill(Fill),
}

/// Counters of the work done by a [`MemStore`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    pub chunks_read: u64,
    pub blocks_decoded: u64,
    pub chunks_written: u64,
}

/// Super-chunk kept in memory with decoded chunks.
#[derive(Debug)]
pub(crate) struct MemStore {
    typesize: i32,
    chunksize: i32,
    blocksize: i32,
    chunks: Vec<Slot>,
    metas: Vec<(String, Vec<u8>)>,
    vlmetas: Vec<(String, Vec<u8>)>,
    stats: Mutex<Stats>,
}

impl MemStore {
    pub(crate) fn new(typesize: i32, chunksize: i32, blocksize: i32) -> Result<MemStore> {
        if typesize <= 0 || chunksize < 0 || blocksize < 0 {
            crate::bail!(
                InvalidParam,
                "invalid chunk parameters (typesize {typesize})"
            );
        }
        Ok(MemStore {
            typesize,
            chunksize,
            blocksize,
            chunks: Vec::new(),
            metas: Vec::new(),
            vlmetas: Vec::new(),
            stats: Mutex::new(Stats::default()),
        })
    }

    fn index(&self, n: i64) -> Result<usize> {
        if n < 0 || n as u64 >= self.chunks.len() as u64 {
            crate::bail!(
                InvalidIndex,
                "chunk {n} out of range (nchunks {})",
                self.chunks.len()
            );
        }
        Ok(n as usize)
    }

    fn check_len(&self, data: &[u8]) -> Result<()> {
        check_chunk_len(data, self.chunksize)
    }

    fn check_fill(&self, fill: &Fill) -> Result<()> {
        match fill {
            Fill::Value(v) if v.len() != self.typesize as usize => {
                crate::bail!(
                    InvalidParam,
                    "fill value of {} bytes for typesize {}",
                    v.len(),
                    self.typesize
                )
            }
            Fill::Nan if self.typesize != 4 && self.typesize != 8 => {
                crate::bail!(InvalidParam, "NaN fill needs typesize 4 or 8")
            }
            _ => Ok(()),
        }
    }

    fn expand_fill(&self, fill: &Fill, dst: &mut [u8]) {
        let ts = self.typesize as usize;
        match fill {
            Fill::Zero | Fill::Uninit => dst.fill(0),
            Fill::Nan => {
                let nan: Vec<u8> = if ts == 4 {
                    f32::NAN.to_le_bytes().to_vec()
                } else {
                    f64::NAN.to_le_bytes().to_vec()
                };
                dst.chunks_exact_mut(ts)
                    .for_each(|c| c.copy_from_slice(&nan));
            }
            Fill::Value(v) => dst.chunks_exact_mut(ts).for_each(|c| c.copy_from_slice(v)),
        }
    }

    fn encode_raw(slot: &Slot) -> Vec<u8> {
        match slot {
            Slot::Data(d) => [&[0u8][..], d].concat(),
            Slot::Fill(Fill::Zero) => vec![1],
            Slot::Fill(Fill::Nan) => vec![2],
            Slot::Fill(Fill::Uninit) => vec![3],
            Slot::Fill(Fill::Value(v)) => [&[4u8][..], v].concat(),
        }
    }

    fn decode_raw(&self, raw: &[u8]) -> Result<Slot> {
        let slot = match raw.split_first() {
            Some((0, d)) => {
                self.check_len(d)?;
                Slot::Data(d.to_vec())
            }
            Some((1, [])) => Slot::Fill(Fill::Zero),
            Some((2, [])) => Slot::Fill(Fill::Nan),
            Some((3, [])) => Slot::Fill(Fill::Uninit),
            Some((4, v)) => {
                let f = Fill::Value(v.to_vec());
                self.check_fill(&f)?;
                Slot::Fill(f)
            }
            _ => crate::bail!(Stream, "not a chunk of this store"),
        };
        Ok(slot)
    }
}

impl ChunkStore for MemStore {
    fn typesize(&self) -> i32 {
        self.typesize
    }
    fn chunksize(&self) -> i32 {
        self.chunksize
    }
    fn nchunks(&self) -> i64 {
        self.chunks.len() as i64
    }

    fn read_chunk(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        let i = self.index(n)?;
        self.check_len(dst)?;
        let bs = self.blocksize.max(1) as usize;
        let nblocks = dst.len().div_ceil(bs);
        if let Some(s) = need {
            if s.len() != nblocks {
                crate::bail!(
                    InvalidParam,
                    "block needs of {} entries for {nblocks} blocks",
                    s.len()
                );
            }
        }
        let mut decoded = 0u64;
        for (b, block) in dst.chunks_mut(bs).enumerate() {
            let span = need.map_or(0..block.len(), |s| s.span(b, block.len()));
            if !span.is_empty() {
                decoded += 1;
                match &self.chunks[i] {
                    Slot::Data(d) => block.copy_from_slice(&d[b * bs..b * bs + block.len()]),
                    Slot::Fill(f) => self.expand_fill(f, block),
                }
            }
            // Poison what is not asked for, so a caller relying on it fails
            // tests.
            let (before, rest) = block.split_at_mut(span.start);
            before.fill(0xA5);
            rest[span.len()..].fill(0xA5);
        }
        let mut st = self.stats.lock().expect("stats lock");
        st.chunks_read += 1;
        st.blocks_decoded += decoded;
        Ok(())
    }

    fn encode_chunk(&self, n: i64, data: &[u8]) -> Result<Vec<u8>> {
        if n < 0 || n > self.nchunks() {
            crate::bail!(InvalidIndex, "chunk {n} out of range");
        }
        self.check_len(data)?;
        Ok(data.to_vec())
    }

    fn write_encoded(&mut self, chunks: Encoded) -> Result<()> {
        for (n, data) in chunks {
            let i = self.index(n)?;
            self.chunks[i] = Slot::Data(data);
            self.stats.get_mut().expect("stats lock").chunks_written += 1;
        }
        Ok(())
    }

    fn append_encoded(&mut self, chunk: Vec<u8>) -> Result<()> {
        self.check_len(&chunk)?;
        self.chunks.push(Slot::Data(chunk));
        self.stats.get_mut().expect("stats lock").chunks_written += 1;
        Ok(())
    }

    fn insert_fills(&mut self, at: &[i64], fill: &Fill) -> Result<()> {
        self.check_fill(fill)?;
        for &n in at {
            if n < 0 || n as u64 > self.chunks.len() as u64 {
                crate::bail!(InvalidIndex, "insert position {n} out of range");
            }
            self.chunks.insert(n as usize, Slot::Fill(fill.clone()));
        }
        Ok(())
    }

    fn append_fill(&mut self, count: i64, fill: &Fill) -> Result<()> {
        self.check_fill(fill)?;
        let count = usize::try_from(count)
            .map_err(|_| crate::err!(InvalidParam, "negative chunk count"))?;
        self.chunks
            .extend(std::iter::repeat(Slot::Fill(fill.clone())).take(count));
        Ok(())
    }

    fn delete_chunks(&mut self, at: &[i64]) -> Result<()> {
        for &n in at {
            let i = self.index(n)?;
            self.chunks.remove(i);
        }
        Ok(())
    }

    fn decoded_chunk_ptr(&mut self, n: i64) -> Option<*mut u8> {
        let i = self.index(n).ok()?;
        let expanded = match &self.chunks[i] {
            Slot::Fill(f) => {
                let mut d = vec![0u8; self.chunksize as usize];
                self.expand_fill(f, &mut d);
                Some(d)
            }
            Slot::Data(_) => None,
        };
        if let Some(d) = expanded {
            self.chunks[i] = Slot::Data(d);
        }
        match &mut self.chunks[i] {
            Slot::Data(d) => Some(d.as_mut_ptr()),
            Slot::Fill(_) => None,
        }
    }

    fn raw_chunk(&self, n: i64) -> Result<Vec<u8>> {
        Ok(MemStore::encode_raw(&self.chunks[self.index(n)?]))
    }

    fn write_raw_chunk(&mut self, n: i64, raw: &[u8]) -> Result<()> {
        let i = self.index(n)?;
        self.chunks[i] = self.decode_raw(raw)?;
        Ok(())
    }

    fn meta_names(&self) -> Vec<String> {
        self.metas.iter().map(|(n, _)| n.clone()).collect()
    }
    fn meta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.metas
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.clone())
    }
    fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        if self.metas.iter().any(|(n, _)| n == name) {
            crate::bail!(Failure, "metalayer \"{name}\" already exists");
        }
        if self.metas.len() >= MAX_METALAYERS {
            crate::bail!(Failure, "too many metalayers");
        }
        self.metas.push((name.to_string(), content.to_vec()));
        Ok(())
    }
    fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let Some(slot) = self.metas.iter_mut().find(|(n, _)| n == name) else {
            crate::bail!(MetalayerNotFound, "metalayer \"{name}\" not found");
        };
        if slot.1.len() != content.len() {
            crate::bail!(Failure, "metalayer \"{name}\" cannot change size");
        }
        slot.1 = content.to_vec();
        Ok(())
    }
    fn vlmeta_names(&self) -> Vec<String> {
        self.vlmetas.iter().map(|(n, _)| n.clone()).collect()
    }
    fn vlmeta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.vlmetas
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.clone())
    }
    fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        if self.vlmetas.iter().any(|(n, _)| n == name) {
            crate::bail!(Failure, "vlmetalayer \"{name}\" already exists");
        }
        self.vlmetas.push((name.to_string(), content.to_vec()));
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        false
    }
    #[cfg(test)]
    fn test_stats(&self) -> Stats {
        *self.stats.lock().expect("stats lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_store_round_trips_and_counts() {
        let mut s = MemStore::new(2, 8, 4).unwrap();
        s.append_fill(2, &Fill::Value(vec![1, 2])).unwrap();
        s.write_chunk(1, &[9; 8]).unwrap();
        let mut buf = [0u8; 8];
        s.read_chunk(0, &mut buf, None).unwrap();
        assert_eq!(buf, [1, 2, 1, 2, 1, 2, 1, 2]);
        s.read_chunk(1, &mut buf, Some(&BlockNeeds::from_maskout(&[true, false])))
            .unwrap();
        assert_eq!(buf, [0xA5, 0xA5, 0xA5, 0xA5, 9, 9, 9, 9]);
        // Part of a block: the rest of it is not written.
        let mut part = BlockNeeds::none(2);
        part.add(0, 1..3);
        s.read_chunk(0, &mut buf, Some(&part)).unwrap();
        assert_eq!(buf, [0xA5, 2, 1, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5]);
        assert_eq!(
            s.test_stats(),
            Stats {
                chunks_read: 3,
                blocks_decoded: 4,
                chunks_written: 1
            }
        );
        let raw = s.raw_chunk(1).unwrap();
        s.write_raw_chunk(0, &raw).unwrap();
        s.read_chunk(0, &mut buf, None).unwrap();
        assert_eq!(buf, [9; 8]);
        assert_eq!(s.read_chunk(2, &mut buf, None).unwrap_err().code(), -33);
        assert!(s.write_chunk(0, &[0; 7]).is_err());
        assert!(s.append_fill(1, &Fill::Nan).is_err());
    }
}
