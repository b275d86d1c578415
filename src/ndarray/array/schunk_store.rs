//! [`ChunkStore`] over a real super-chunk (`crate::schunk::SChunk`): the
//! store behind every array that can be saved, opened or serialized.
//!
//! Reads take `&self` in the array API while the super-chunk decodes through
//! `&mut self` (it owns decoder scratch and file handles), so the
//! super-chunk sits behind a mutex.

use std::sync::{Mutex, MutexGuard};

use super::store::{ChunkStore, Fill};
use crate::schunk::SChunk;
use crate::Result;

pub(crate) struct SChunkStore {
    sc: Mutex<SChunk>,
    typesize: i32,
    /// Bytes of one padded chunk (known even while there are no chunks).
    chunksize: i32,
    /// Bytes of one block (for partial reads).
    blocksize: i32,
    persistent: bool,
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
    pub(crate) fn new(sc: SChunk, chunksize: i32, blocksize: i32) -> SChunkStore {
        let typesize = sc.typesize();
        let persistent = sc.storage().urlpath.is_some();
        SChunkStore {
            sc: Mutex::new(sc),
            typesize,
            chunksize,
            blocksize,
            persistent,
        }
    }

    fn sc(&self) -> MutexGuard<'_, SChunk> {
        // A panic while holding the lock cannot leave the super-chunk in a
        // state worse than the error it reported; keep using it.
        self.sc.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Exclusive access to the super-chunk (serialization, copies).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut SChunk) -> Result<T>) -> Result<T> {
        f(&mut self.sc())
    }

    fn special_chunk(&self, fill: &Fill) -> Result<Vec<u8>> {
        use crate::chunk::{make_special, Special};
        let nbytes = self.chunksize as usize;
        let ts = self.typesize as usize;
        match fill {
            Fill::Zero => make_special(Special::Zero, nbytes, ts, None),
            Fill::Nan => make_special(Special::Nan, nbytes, ts, None),
            Fill::Uninit => make_special(Special::Uninit, nbytes, ts, None),
            Fill::Value(v) => make_special(Special::Value, nbytes, ts, Some(v)),
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
        self.sc().nchunks()
    }

    fn read_chunk(&self, n: i64, dst: &mut [u8], skip: Option<&[bool]>) -> Result<()> {
        if dst.len() != self.chunksize as usize {
            crate::bail!(
                InvalidParam,
                "chunk buffer of {} bytes, expected {}",
                dst.len(),
                self.chunksize
            );
        }
        let mut sc = self.sc();
        let bs = self.blocksize.max(1) as usize;
        // On disk, fetch only the needed blocks when they are few (the
        // reference's compact path); otherwise decode the whole chunk.
        if let (Some(skip), true) = (skip, self.persistent) {
            let needed = skip.iter().filter(|s| !**s).count();
            if needed * 4 <= skip.len() {
                let idx = usize::try_from(n).map_err(|_| crate::err!(InvalidIndex, "chunk {n}"))?;
                for (b, block) in dst.chunks_mut(bs).enumerate() {
                    if !skip.get(b).copied().unwrap_or(true) {
                        sc.read_chunk_range(idx, b * bs, block)?;
                    }
                }
                return Ok(());
            }
        }
        let got = sc.decompress_chunk(n, dst)?;
        if got != dst.len() {
            crate::bail!(Data, "chunk {n} holds {got} bytes, expected {}", dst.len());
        }
        Ok(())
    }

    fn write_chunk(&mut self, n: i64, data: &[u8]) -> Result<()> {
        if data.len() != self.chunksize as usize {
            crate::bail!(
                InvalidParam,
                "chunk of {} bytes, expected {}",
                data.len(),
                self.chunksize
            );
        }
        let items = self.chunk_items();
        self.sc().set_slice_buffer(n * items, (n + 1) * items, data)
    }

    fn append_chunk(&mut self, data: &[u8]) -> Result<()> {
        if data.len() != self.chunksize as usize {
            crate::bail!(
                InvalidParam,
                "chunk of {} bytes, expected {}",
                data.len(),
                self.chunksize
            );
        }
        self.sc().append_buffer(data).map(|_| ())
    }

    fn insert_fill(&mut self, n: i64, fill: &Fill) -> Result<()> {
        let chunk = self.special_chunk(fill)?;
        self.sc().insert_chunk(n, &chunk).map(|_| ())
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
        let mut sc = self.sc();
        if let (Some(kind), 0) = (special, sc.nchunks()) {
            let nitems = count
                .checked_mul(self.chunk_items())
                .ok_or_else(|| crate::err!(InvalidParam, "too many items"))?;
            return sc.fill_special(nitems, kind, self.chunksize).map(|_| ());
        }
        drop(sc);
        let chunk = self.special_chunk(fill)?;
        let mut sc = self.sc();
        for _ in 0..count {
            sc.append_chunk(&chunk)?;
        }
        Ok(())
    }

    fn delete_chunk(&mut self, n: i64) -> Result<()> {
        self.sc().delete_chunk(n).map(|_| ())
    }

    fn raw_chunk(&self, n: i64) -> Result<Vec<u8>> {
        Ok(self.sc().get_chunk(n)?.into_owned())
    }

    fn write_raw_chunk(&mut self, n: i64, raw: &[u8]) -> Result<()> {
        self.sc().update_chunk(n, raw).map(|_| ())
    }

    fn meta_names(&self) -> Vec<String> {
        self.sc().meta_names()
    }
    fn meta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.sc().meta_get(name).ok()
    }
    fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.sc().meta_add(name, content).map(|_| ())
    }
    fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let mut sc = self.sc();
        let old = sc.meta_get(name)?;
        if old.len() != content.len() {
            crate::bail!(
                Failure,
                "metalayer \"{name}\" cannot change size ({} to {})",
                old.len(),
                content.len()
            );
        }
        sc.meta_update(name, content).map(|_| ())
    }
    fn vlmeta_names(&self) -> Vec<String> {
        self.sc().vlmeta_names()
    }
    fn vlmeta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.sc().vlmeta_get(name).ok()
    }
    fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let mut sc = self.sc();
        let cparams = sc.cparams().clone();
        sc.vlmeta_add(name, content, Some(&cparams)).map(|_| ())
    }
    fn is_persistent(&self) -> bool {
        self.persistent
    }
    fn reload(&mut self) -> Result<()> {
        self.sc().refresh()
    }
    fn as_schunk(&self) -> Option<&SChunkStore> {
        Some(self)
    }
}
