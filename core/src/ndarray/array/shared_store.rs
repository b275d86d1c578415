//! One super-chunk seen by several arrays: the array that made it and the
//! views (`squeeze`, `expand_dims`) taken from it.
//!
//! Every array reaches its chunks through a [`SharedStore`]: a counted
//! handle on the real [`ChunkStore`]. A view is a second handle on the same
//! store with its own fixed-size metalayers (its "b2nd" record describes the
//! view's geometry, as the reference's view super-chunk does) and its own
//! chunk size. Chunk reads and writes go to the shared store, so writes made
//! through either side are seen by the other; vlmetalayers are shared too.
//! The store lives as long as any handle does, so dropping the source array
//! before its views is harmless (the reference leaves such views dangling).
//!
//! A view may describe chunks of another byte size than the stored ones
//! (squeezing a unit dimension chunked by more than one item, or an axis
//! list that leaves out dimensions): the reference creates such views and
//! then fails every chunk access with a generic failure; so does this one.
//! A view never adds or removes chunks: the chunk list belongs to the
//! source array.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::store::{ChunkStore, Encoded, Fill};
use crate::chunk::BlockNeeds;
use crate::schunk::{CParams, SChunk};
use crate::Result;

/// What a view keeps for itself.
#[derive(Debug, Clone)]
struct ViewPart {
    /// Fixed-size metalayers of the view (just "b2nd").
    metas: Vec<(String, Vec<u8>)>,
    /// Bytes of one chunk as the view's geometry describes it.
    chunksize: i32,
}

/// A counted handle on an array's chunk store; see the module comment.
#[derive(Debug)]
pub(crate) struct SharedStore {
    inner: Arc<RwLock<Box<dyn ChunkStore>>>,
    view: Option<ViewPart>,
}

impl SharedStore {
    pub(crate) fn new(store: Box<dyn ChunkStore>) -> SharedStore {
        SharedStore {
            inner: Arc::new(RwLock::new(store)),
            view: None,
        }
    }

    /// A view on the same chunks whose only fixed-size metalayer is "b2nd"
    /// with `meta`, describing chunks of `chunksize` bytes.
    pub(crate) fn view(&self, meta: Vec<u8>, chunksize: i32) -> SharedStore {
        SharedStore {
            inner: Arc::clone(&self.inner),
            view: Some(ViewPart {
                metas: vec![("b2nd".to_string(), meta)],
                chunksize,
            }),
        }
    }

    /// True for a view taken from another array.
    pub(crate) fn is_view(&self) -> bool {
        self.view.is_some()
    }

    /// True when both handles reach the same stored chunks.
    pub(crate) fn shares_chunks_with(&self, other: &SharedStore) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn read(&self) -> RwLockReadGuard<'_, Box<dyn ChunkStore>> {
        // A panic while holding the lock left the store no worse than the
        // error it reported; keep using it.
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Box<dyn ChunkStore>> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Chunk access through a view needs the view's chunks to be the stored
    /// ones byte for byte.
    fn check_view_chunks(&self, store: &dyn ChunkStore) -> Result<()> {
        match &self.view {
            Some(v) if v.chunksize != store.chunksize() => crate::bail!(
                Failure,
                "the view describes chunks of {} bytes but its source stores chunks of {} bytes",
                v.chunksize,
                store.chunksize()
            ),
            _ => Ok(()),
        }
    }

    /// Views share the chunk list but never change its length.
    fn refuse_in_view(&self, what: &str) -> Result<()> {
        if self.view.is_some() {
            crate::bail!(
                Failure,
                "cannot {what} through a view: the chunks belong to its source array"
            );
        }
        Ok(())
    }

    /// Runs `f` on the super-chunk behind the store; `None` for a store
    /// without one (decoded storage).
    pub(crate) fn with_sc<T>(&self, f: impl FnOnce(&mut SChunk) -> Result<T>) -> Option<Result<T>> {
        let store = self.read();
        let sc = store.as_schunk()?;
        Some(sc.with(f))
    }

    /// The super-chunk behind the store, shared; `None` for decoded storage.
    pub(crate) fn schunk_handle(&self) -> Option<crate::schunk::SharedSChunk> {
        Some(self.read().as_schunk()?.handle().clone())
    }

    /// Whether the store must follow what its super-chunk re-read before a
    /// read (see `SChunkStore::missed_rereads`).
    pub(crate) fn missed_rereads(&self) -> bool {
        self.read()
            .as_schunk()
            .is_some_and(|sc| sc.missed_rereads())
    }

    /// Drops what cached reads keep (see `SChunkStore::forget_cached`).
    pub(crate) fn forget_cached(&self) {
        if let Some(sc) = self.read().as_schunk() {
            sc.forget_cached();
        }
    }

    /// The super-chunk's compression parameters, if there is one.
    pub(crate) fn cparams(&self) -> Option<CParams> {
        Some(self.read().as_schunk()?.handle().read().cparams().clone())
    }

    /// True when a super-chunk (not decoded storage) holds the chunks.
    pub(crate) fn has_schunk(&self) -> bool {
        self.read().as_schunk().is_some()
    }
}

impl ChunkStore for SharedStore {
    fn typesize(&self) -> i32 {
        self.read().typesize()
    }
    fn chunksize(&self) -> i32 {
        match &self.view {
            Some(v) => v.chunksize,
            None => self.read().chunksize(),
        }
    }
    fn nchunks(&self) -> i64 {
        self.read().nchunks()
    }
    fn read_chunk(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        let store = self.read();
        self.check_view_chunks(store.as_ref())?;
        store.read_chunk(n, dst, need)
    }
    fn read_chunk_cached(&self, n: i64, dst: &mut [u8], need: Option<&BlockNeeds>) -> Result<()> {
        let store = self.read();
        self.check_view_chunks(store.as_ref())?;
        store.read_chunk_cached(n, dst, need)
    }
    fn encode_chunk(&self, n: i64, data: &[u8]) -> Result<Vec<u8>> {
        let store = self.read();
        self.check_view_chunks(store.as_ref())?;
        store.encode_chunk(n, data)
    }
    fn write_encoded(&mut self, chunks: Encoded) -> Result<()> {
        let mut store = self.write();
        self.check_view_chunks(store.as_ref())?;
        store.write_encoded(chunks)
    }
    fn append_encoded(&mut self, chunk: Vec<u8>) -> Result<()> {
        self.refuse_in_view("append chunks")?;
        self.write().append_encoded(chunk)
    }
    fn insert_fills(&mut self, at: &[i64], fill: &Fill) -> Result<()> {
        self.refuse_in_view("insert chunks")?;
        self.write().insert_fills(at, fill)
    }
    fn append_fill(&mut self, count: i64, fill: &Fill) -> Result<()> {
        if count > 0 {
            self.refuse_in_view("append chunks")?;
        }
        self.write().append_fill(count, fill)
    }
    fn delete_chunks(&mut self, at: &[i64]) -> Result<()> {
        self.refuse_in_view("delete chunks")?;
        self.write().delete_chunks(at)
    }
    fn raw_chunk(&self, n: i64) -> Result<Vec<u8>> {
        let store = self.read();
        self.check_view_chunks(store.as_ref())?;
        store.raw_chunk(n)
    }
    fn write_raw_chunk(&mut self, n: i64, raw: &[u8]) -> Result<()> {
        let mut store = self.write();
        self.check_view_chunks(store.as_ref())?;
        store.write_raw_chunk(n, raw)
    }
    fn meta_names(&self) -> Vec<String> {
        match &self.view {
            Some(v) => v.metas.iter().map(|(n, _)| n.clone()).collect(),
            None => self.read().meta_names(),
        }
    }
    fn meta_get(&self, name: &str) -> Option<Vec<u8>> {
        match &self.view {
            Some(v) => v
                .metas
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| c.clone()),
            None => self.read().meta_get(name),
        }
    }
    fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        match &mut self.view {
            Some(v) => {
                if v.metas.iter().any(|(n, _)| n == name) {
                    crate::bail!(Failure, "metalayer \"{name}\" already exists");
                }
                if v.metas.len() >= super::store::MAX_METALAYERS {
                    crate::bail!(Failure, "too many metalayers");
                }
                v.metas.push((name.to_string(), content.to_vec()));
                Ok(())
            }
            None => self.write().meta_add(name, content),
        }
    }
    fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        match &mut self.view {
            Some(v) => {
                let Some(slot) = v.metas.iter_mut().find(|(n, _)| n == name) else {
                    crate::bail!(MetalayerNotFound, "metalayer \"{name}\" not found");
                };
                if slot.1.len() != content.len() {
                    crate::bail!(Failure, "metalayer \"{name}\" cannot change size");
                }
                slot.1 = content.to_vec();
                Ok(())
            }
            None => self.write().meta_update(name, content),
        }
    }
    fn vlmeta_names(&self) -> Vec<String> {
        self.read().vlmeta_names()
    }
    fn vlmeta_get(&self, name: &str) -> Option<Vec<u8>> {
        self.read().vlmeta_get(name)
    }
    fn vlmeta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.write().vlmeta_add(name, content)
    }
    fn is_persistent(&self) -> bool {
        self.read().is_persistent()
    }
    fn sync_if_stale(&mut self) -> Result<bool> {
        self.write().sync_if_stale()
    }
    fn begin_exclusive(&mut self) -> Result<bool> {
        self.write().begin_exclusive()
    }
    fn end_exclusive(&mut self) -> Result<()> {
        self.write().end_exclusive()
    }
    fn begin_edits(&mut self) {
        self.write().begin_edits()
    }
    fn end_edits(&mut self, keep: bool) -> Result<bool> {
        self.write().end_edits(keep)
    }
    fn decoded_chunk_ptr(&mut self, n: i64) -> Option<*mut u8> {
        // A view's chunks belong to its source array.
        if self.view.is_some() {
            return None;
        }
        self.write().decoded_chunk_ptr(n)
    }
    #[cfg(test)]
    fn test_stats(&self) -> super::store::Stats {
        self.read().test_stats()
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::MemStore;
    use super::*;

    #[test]
    fn views_share_chunks_but_not_fixed_metalayers() {
        let mut base = SharedStore::new(Box::new(MemStore::new(1, 4, 2).unwrap()));
        base.meta_add("b2nd", &[1, 2]).unwrap();
        base.append_fill(2, &Fill::Zero).unwrap();
        let mut v = base.view(vec![9, 9, 9], 4);
        assert!(v.is_view() && v.shares_chunks_with(&base));
        v.write_chunk(1, &[5; 4]).unwrap();
        let mut buf = [0u8; 4];
        base.read_chunk(1, &mut buf, None).unwrap();
        assert_eq!(buf, [5; 4]);
        assert_eq!(
            (base.meta_get("b2nd").unwrap(), v.meta_get("b2nd").unwrap()),
            (vec![1, 2], vec![9, 9, 9])
        );
        v.vlmeta_add("x", &[1]).unwrap();
        assert_eq!(base.vlmeta_get("x"), Some(vec![1]));
        // Views neither grow nor shrink the chunk list.
        assert_eq!(v.append_chunk(&[0; 4]).unwrap_err().code(), -1);
        assert_eq!(v.delete_chunks(&[0]).unwrap_err().code(), -1);
        assert_eq!(base.nchunks(), 2);
        // A view whose chunks differ in size cannot touch them.
        let odd = base.view(vec![], 2);
        let mut two = [0u8; 2];
        assert_eq!(odd.read_chunk(0, &mut two, None).unwrap_err().code(), -1);
        // The store outlives the handle that made it.
        drop(base);
        v.read_chunk(1, &mut buf, None).unwrap();
        assert_eq!(buf, [5; 4]);
    }
}
