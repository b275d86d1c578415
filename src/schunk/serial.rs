//! Copies of a super-chunk into other storages and its serialization as
//! a contiguous frame (buffer, file, or appended to a file).

use std::path::Path;

use super::{Backend, SChunk, Storage};
use crate::frame::Place;
use crate::Result;

impl SChunk {
    // ----- copies and serialization -----

    /// A copy of this super-chunk in `storage` (its compression parameters
    /// are kept; `storage.cparams` is ignored).
    pub fn copy(&mut self, storage: Storage) -> Result<SChunk> {
        self.locked(false, |s| s.copy_unlocked(storage))
    }

    fn copy_unlocked(&mut self, storage: Storage) -> Result<SChunk> {
        if storage.urlpath.is_some() && storage.urlpath == self.storage.urlpath {
            crate::bail!(SchunkCopy, "cannot copy a super-chunk onto its own urlpath");
        }
        let storage = Storage {
            cparams: self.storage.cparams.clone(),
            dparams: self.storage.dparams.clone(),
            ..storage
        };
        let mut out = SChunk::new(storage)?;
        out.blocksize = self.blocksize;
        out.metalayers = self.metalayers.clone();
        out.vlmetalayers = self.vlmetalayers.clone();
        if out.vlmetalayers.len() > out.vlmeta_limit() {
            crate::bail!(
                SchunkCopy,
                "{} vlmetalayers do not fit in a frame",
                out.vlmetalayers.len()
            );
        }
        out.flush()?;
        // A frame rewrites its offsets index on every flush, so flushing
        // after each chunk makes a copy quadratic in the number of chunks
        // (20,000 chunks took a second). A copy in memory is flushed once at
        // the end; a copy to a file still flushes per chunk, so that a
        // failure part way leaves a valid frame behind.
        out.defer_flush = out.storage.urlpath.is_none();
        for i in 0..self.nchunks() {
            let c = self.get_chunk(i)?.into_owned();
            out.append_chunk(&c)
                .map_err(|e| crate::err!(SchunkCopy, "chunk {i}: {}", e.detail()))?;
        }
        out.defer_flush = false;
        if self.chunksize == 0 && out.chunksize > 0 {
            out.chunksize = 0;
        }
        out.flush()?;
        Ok(out)
    }

    /// The super-chunk serialized as a contiguous frame.
    /// The bytes of an in-memory contiguous frame, borrowed (no copy), or
    /// `None` for other storages (use [`SChunk::to_buffer`]).
    pub fn frame_bytes(&self) -> Option<&[u8]> {
        match &self.backend {
            Backend::Frame(f) => f.memory_bytes(),
            Backend::Chunks(_) => None,
        }
    }

    pub fn to_buffer(&mut self) -> Result<Vec<u8>> {
        self.locked(false, |s| s.to_buffer_unlocked())
    }

    fn to_buffer_unlocked(&mut self) -> Result<Vec<u8>> {
        if let Backend::Frame(f) = &mut self.backend {
            if !f.is_sparse() {
                return f.to_bytes();
            }
        }
        let mut c = self.copy(Storage {
            contiguous: true,
            ..Storage::default()
        })?;
        match std::mem::replace(&mut c.backend, Backend::Chunks(Vec::new())) {
            Backend::Frame(f) => f
                .into_memory()
                .ok_or_else(|| crate::err!(Failure, "copy is not in memory")),
            Backend::Chunks(_) => crate::bail!(Failure, "copy is not a frame"),
        }
    }

    /// Like [`SChunk::to_buffer`], but hands over the buffer of an in-memory
    /// frame without copying it.
    pub fn into_buffer(mut self) -> Result<Vec<u8>> {
        let is_mem =
            matches!(&self.backend, Backend::Frame(f) if matches!(f.place(), Place::Memory(_)));
        if !is_mem {
            return self.to_buffer();
        }
        match std::mem::replace(&mut self.backend, Backend::Chunks(Vec::new())) {
            Backend::Frame(f) => f
                .into_memory()
                .ok_or_else(|| crate::err!(Failure, "frame is not in memory")),
            Backend::Chunks(_) => crate::bail!(Failure, "not a frame"),
        }
    }

    /// Writes the super-chunk as a contiguous frame file; returns its length.
    pub fn to_file(&mut self, path: impl AsRef<Path>) -> Result<u64> {
        let bytes = self.to_buffer()?;
        std::fs::write(path.as_ref(), &bytes)
            .map_err(|e| crate::err!(FileWrite, "{}: {e}", path.as_ref().display()))?;
        Ok(bytes.len() as u64)
    }

    /// Appends the super-chunk as a contiguous frame at the end of the file
    /// `path` (created if missing); returns the offset where the frame starts.
    pub fn append_file(&mut self, path: impl AsRef<Path>) -> Result<u64> {
        let bytes = self.to_buffer()?;
        let io = self.storage.io();
        let path = path.as_ref();
        let mode = if path.exists() {
            crate::frame::OpenMode::ReadWrite
        } else {
            crate::frame::OpenMode::Create
        };
        let mut f = io.open(path, mode)?;
        let offset = f.size()?;
        f.write_at(offset, &bytes)?;
        Ok(offset)
    }

    /// Removes a frame file or a sparse frame directory (missing is fine).
    pub fn remove_urlpath(path: impl AsRef<Path>) -> Result<()> {
        let p = path.as_ref();
        let r = if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else if p.exists() {
            std::fs::remove_file(p)
        } else {
            Ok(())
        };
        r.map_err(|e| crate::err!(FileRemove, "{}: {e}", p.display()))
    }
}
