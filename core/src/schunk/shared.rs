//! One super-chunk with several owners: the C layer's super-chunk object
//! and the arrays built on it reach the same [`SChunk`], so that calls on
//! either see the other's writes and reads on many threads run at once.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::SChunk;

/// A counted handle on a super-chunk: reads through [`SharedSChunk::read`]
/// run together, a change through [`SharedSChunk::write`] runs alone.
#[derive(Clone, Debug)]
pub struct SharedSChunk(Arc<RwLock<SChunk>>);

impl SharedSChunk {
    /// A handle owning `sc`; clones share it.
    pub fn new(sc: SChunk) -> SharedSChunk {
        SharedSChunk(Arc::new(RwLock::new(sc)))
    }

    /// The super-chunk, to read. A panic of another holder leaves it as the
    /// error that call reported left it, so a poisoned lock is still used.
    pub fn read(&self) -> RwLockReadGuard<'_, SChunk> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The super-chunk, to change.
    pub fn write(&self) -> RwLockWriteGuard<'_, SChunk> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The super-chunk to read, unless a change is running or waiting (for
    /// a caller that may run inside that change and must not wait for it).
    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, SChunk>> {
        match self.0.try_read() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Whether `other` is a handle on the same super-chunk.
    pub fn same(&self, other: &SharedSChunk) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The super-chunk itself, when this is its last handle.
    pub fn into_inner(self) -> Result<SChunk, SharedSChunk> {
        match Arc::try_unwrap(self.0) {
            Ok(lock) => Ok(lock.into_inner().unwrap_or_else(|p| p.into_inner())),
            Err(arc) => Err(SharedSChunk(arc)),
        }
    }
}
