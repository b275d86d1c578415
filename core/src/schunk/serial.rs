//! Copies of a super-chunk into other storages and its serialization as
//! a contiguous frame (buffer, file, or appended to a file).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{Backend, SChunk, Storage};
use crate::frame::codec::ChunkInfo;
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
        let mut storage = Storage {
            cparams: self.storage.cparams.clone(),
            dparams: self.storage.dparams.clone(),
            ..storage
        };
        // A copy to a frame file is written beside it and moved onto it
        // once whole: a writer killed meanwhile leaves the path as it was
        // (docs/crash-safety.md). Backends that cannot rename write it in
        // place; sparse copies fill their directory in place too.
        let io = storage.io();
        let target = match &storage.urlpath {
            Some(p) if storage.contiguous && io.can_rename() => Some(p.clone()),
            _ => None,
        };
        if let Some(t) = &target {
            storage.urlpath = Some(staging_name(t));
        }
        let staged = storage.urlpath.clone();
        let made = SChunk::new(storage).and_then(|mut out| {
            out.take_metadata_of(self)?;
            out.edits(|o| o.fill_from(self))?;
            if let (Some(t), Backend::Frame(f)) = (&target, &mut out.backend) {
                f.move_file(t)?;
                out.storage.urlpath = Some(t.clone());
                if out.lock.take().is_some() {
                    out.set_locking(true)?;
                }
            }
            Ok(out)
        });
        if let (Err(_), Some(_), Some(p)) = (&made, &target, &staged) {
            // What a failed copy wrote is no frame of anyone's.
            let _ = io.remove(p);
        }
        made
    }

    /// Gives `self`, a new super-chunk, the block and chunk sizes and the
    /// metalayers of `src`.
    fn take_metadata_of(&mut self, src: &SChunk) -> Result<()> {
        self.blocksize = src.blocksize;
        // As the reference's copy: the chunk size comes along, also when
        // there are no chunks to set it (a frame of an empty array records
        // its chunk's size), so every way of reading a frame agrees on it.
        self.chunksize = src.chunksize;
        self.metalayers = src.metalayers.clone();
        self.vlmetalayers = src.vlmetalayers.clone();
        if self.vlmetalayers.len() > self.vlmeta_limit() {
            crate::bail!(
                SchunkCopy,
                "{} vlmetalayers do not fit in a frame",
                self.vlmetalayers.len()
            );
        }
        Ok(())
    }

    /// Appends the chunks of `src` to `self`, a new super-chunk that has
    /// its metadata already (one edit scope: the frame's metadata is
    /// rewritten once, not after each chunk, which made copies quadratic in
    /// the number of chunks: 20,000 chunks took a second).
    fn fill_from(&mut self, src: &mut SChunk) -> Result<()> {
        self.flush()?;
        let into_list = match &mut self.backend {
            Backend::Chunks(c) => {
                // The count comes from the source's index, which a file sets.
                try_reserve_list(c, src.nchunks() as usize)?;
                true
            }
            Backend::Frame(_) => false,
        };
        let mut shared = SharedChunks::default();
        let mut budget = StoredBudget::of(src);
        for i in 0..src.nchunks() {
            let appended = if into_list {
                let c = shared.get(src, i, &mut budget)?;
                self.append_shared(c)
            } else {
                let entry = src.stored_entry(i);
                let c = src.get_chunk(i)?;
                budget.charge(i, entry, c.len())?;
                self.append_chunk(&c)
            };
            appended.map_err(|e| crate::err!(SchunkCopy, "chunk {i}: {}", e.detail()))?;
        }
        Ok(())
    }

    /// The index entry of chunk `i` when it is a chunk stored in a frame.
    fn stored_entry(&self, i: i64) -> Option<i64> {
        match &self.backend {
            Backend::Frame(f) => f.entry(i as usize).filter(|&e| e >= 0),
            Backend::Chunks(_) => None,
        }
    }

    /// The bytes of an in-memory contiguous frame, borrowed (no copy), or
    /// `None` for other storages (use [`SChunk::to_buffer`]).
    pub fn frame_bytes(&self) -> Option<&[u8]> {
        match &self.backend {
            Backend::Frame(f) => f.memory_bytes(),
            Backend::Chunks(_) => None,
        }
    }

    /// The super-chunk serialized as a contiguous frame.
    pub fn to_buffer(&mut self) -> Result<Vec<u8>> {
        self.locked(false, |s| s.to_buffer_unlocked())
    }

    fn to_buffer_unlocked(&mut self) -> Result<Vec<u8>> {
        // The reference serializes a frame file as a copy made from what the
        // handle holds: its metadata, and its chunks read one by one. Reading
        // the file whole gives the same bytes faster, while the file is what
        // this handle wrote; when it is no longer (python-blosc2 truncates a
        // frame file it is about to rewrite with the handle's own contents,
        // then asks for them), the copy still serves what the handle holds.
        // Edits of an open scope are not in the file yet (see `SChunk::edits`).
        let published = !self.has_unpublished();
        if let Backend::Frame(f) = &mut self.backend {
            if !f.is_sparse() && published {
                match f.to_bytes() {
                    Ok(bytes) => return Ok(bytes),
                    Err(e) if e.kind() == crate::ErrorKind::FileRead => {}
                    Err(e) => return Err(e),
                }
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

    /// Removes a frame file, with the lock sidecar next to it if there is
    /// one, or a sparse frame directory (with its sidecar inside). A missing
    /// path is fine. A file that cannot be removed is `FileRemove`, a
    /// directory `Failure`, as the reference reports them.
    pub fn remove_urlpath(path: impl AsRef<Path>) -> Result<()> {
        let p = path.as_ref();
        match std::fs::symlink_metadata(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => crate::bail!(Failure, "{}: {e}", p.display()),
            Ok(m) if m.is_dir() => {
                std::fs::remove_dir_all(p).map_err(|e| crate::err!(Failure, "{}: {e}", p.display()))
            }
            Ok(_) => {
                std::fs::remove_file(p)
                    .map_err(|e| crate::err!(FileRemove, "{}: {e}", p.display()))?;
                // Best effort: most frames never locked and have none.
                let _ = std::fs::remove_file(crate::frame::lock::sidecar_path(p, false));
                Ok(())
            }
        }
    }
}

/// Reserves room for `n` more chunks in a chunk list, or fails with
/// `MemoryAlloc` rather than aborting when the count is more than memory holds.
pub(super) fn try_reserve_list(list: &mut Vec<Arc<[u8]>>, n: usize) -> Result<()> {
    list.try_reserve(n)
        .map_err(|_| crate::err!(MemoryAlloc, "no memory for a list of {n} more chunks"))
}

/// What a copy may take from the stored chunks of a contiguous frame: their
/// bytes lie in its data section, so distinct chunks that do not overlap (no
/// Blosc2 writer makes others) add up to at most its length. Without this
/// bound a hostile frame of chunks nested in one another, each running to the
/// end of the section, makes a copy quadratic in the frame's size: a 1 MB
/// frame of such chunks every 32 bytes would copy out about 16 GB.
struct StoredBudget {
    /// The data section's length, or `None` when the source is not a
    /// contiguous frame (a chunk list's chunks are its own, a sparse frame's
    /// are files of their own).
    limit: Option<u64>,
    /// Bytes of the distinct stored chunks copied so far.
    used: u64,
    /// The stored entries `charge` has charged: a chunk listed twice is one
    /// chunk.
    charged: HashSet<i64>,
}

impl StoredBudget {
    fn of(from: &SChunk) -> StoredBudget {
        let limit = match &from.backend {
            Backend::Frame(f) if !f.is_sparse() => Some(f.data_len()),
            _ => None,
        };
        StoredBudget {
            limit,
            used: 0,
            charged: HashSet::new(),
        }
    }

    /// Charges the `len` bytes of chunk `i`, stored at index entry `entry`
    /// (`None` for a special chunk, which is built rather than copied),
    /// unless that entry was charged before.
    fn charge(&mut self, i: i64, entry: Option<i64>, len: usize) -> Result<()> {
        match entry {
            Some(e) if self.limit.is_some() && self.charged.insert(e) => self.charge_new(i, e, len),
            _ => Ok(()),
        }
    }

    /// Charges chunk `i` at entry `e`, which the caller knows is charged for
    /// the first time (a chunk list's copy keys its chunks by entry already).
    fn charge_new(&mut self, i: i64, e: i64, len: usize) -> Result<()> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let used = self.used.saturating_add(len as u64);
        if used > limit {
            crate::bail!(
                SchunkCopy,
                "chunk {i}: the frame's chunks overlap: with this one (at offset {e}) \
                 the copy would take {used} bytes from a data section of {limit}"
            );
        }
        self.used = used;
        Ok(())
    }
}

/// The chunks a copy into a chunk list has taken so far, by where they come
/// from, so that chunks a frame stores once are held once. A frame can list
/// one stored chunk (or one special kind) for millions of chunks in a few
/// bytes of index; copying each would turn a 1.5 kB frame into 900 MB (the
/// fuzzer found one), where sharing costs a pointer per chunk.
#[derive(Default)]
struct SharedChunks {
    /// Keyed by the frame's index entry and, since special chunks are built
    /// to size, the chunk's uncompressed size.
    by_entry: HashMap<(i64, i32), Arc<[u8]>>,
}

impl SharedChunks {
    fn get(&mut self, from: &mut SChunk, i: i64, budget: &mut StoredBudget) -> Result<Arc<[u8]>> {
        let entry = match &from.backend {
            Backend::Chunks(c) => return Ok(c[i as usize].clone()),
            Backend::Frame(f) => f.entry(i as usize),
        };
        let stored_key = entry.filter(|&e| e >= 0).map(|e| (e, -1));
        if let Some(c) = stored_key.and_then(|k| self.by_entry.get(&k)) {
            return Ok(c.clone());
        }
        let chunk = from.get_chunk(i)?;
        let key = match (stored_key, entry) {
            (Some(k), _) => Some(k),
            (None, Some(e)) => Some((e, ChunkInfo::parse(&chunk)?.nbytes)),
            (None, None) => None,
        };
        if let Some(c) = key.and_then(|k| self.by_entry.get(&k)) {
            return Ok(c.clone());
        }
        if let Some((e, _)) = stored_key {
            budget.charge_new(i, e, chunk.len())?;
        }
        let c: Arc<[u8]> = Arc::from(&chunk[..]);
        if let Some(k) = key {
            self.by_entry.insert(k, c.clone());
        }
        Ok(c)
    }
}

/// Where a copy to the frame file `path` is written before it is moved
/// there: beside it, so that the rename stays on one file system.
fn staging_name(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".b2tmp");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schunk::{CParams, Special};

    /// python-blosc2 rewrites a store's vlmetalayer frame by opening its file
    /// for writing (truncating it) and then serializing the handle on it. The
    /// reference serializes from what the handle holds, so that works; so it
    /// does here, and the frame keeps the handle's vlmetalayers.
    #[test]
    fn a_frame_file_truncated_under_its_handle_still_serializes() {
        let path =
            std::env::temp_dir().join(format!("b2nd-truncated-{}.b2frame", std::process::id()));
        let mut s = SChunk::new(Storage {
            contiguous: true,
            urlpath: Some(path.clone()),
            ..Storage::default()
        })
        .unwrap();
        s.vlmeta_add("units", b"kelvin", None).unwrap();
        s.vlmeta_update("units", b"celsius, longer", None).unwrap();
        std::fs::File::create(&path).unwrap();
        let bytes = s.to_buffer().unwrap();
        let back = SChunk::from_vec(bytes).unwrap();
        assert_eq!(back.vlmeta_get("units").unwrap(), b"celsius, longer");
        std::fs::remove_file(&path).unwrap();
    }

    fn list(s: &SChunk) -> &[Arc<[u8]>] {
        match &s.backend {
            Backend::Chunks(c) => c,
            Backend::Frame(_) => panic!("not a chunk list"),
        }
    }

    /// Chunks a frame stores once (one stored chunk listed twice, a special
    /// kind listed for every chunk) are held once by a chunk-list copy, and
    /// a chunk list copied again shares its chunks; every chunk still reads
    /// back what was written.
    #[test]
    fn a_copy_into_a_chunk_list_holds_what_a_frame_shares_once() {
        let frame = |s: &mut SChunk| match &mut s.backend {
            Backend::Frame(f) => f.entries_for_tests().clone(),
            Backend::Chunks(_) => panic!("not a frame"),
        };
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let storage = Storage {
            contiguous: true,
            cparams: cp,
            ..Storage::default()
        };

        // A zero fill: three full chunks and a short one, all one entry.
        let mut zeros = SChunk::new(storage.clone()).unwrap();
        zeros
            .fill_special(4000 * 3 + 1000, Special::Zero, 16000)
            .unwrap();
        let entries = frame(&mut zeros);
        assert!(entries.iter().all(|&e| e == entries[0]) && entries.len() == 4);
        let copy = SChunk::from_buffer(&zeros.to_buffer().unwrap(), true).unwrap();
        let c = list(&copy);
        assert!(Arc::ptr_eq(&c[0], &c[1]) && Arc::ptr_eq(&c[0], &c[2]));
        assert!(
            !Arc::ptr_eq(&c[0], &c[3]),
            "the short chunk has other bytes"
        );

        // Two stored chunks, the second entry then pointed at the first.
        let data: Vec<u8> = (0..4000u32).flat_map(|x| (x * 7).to_le_bytes()).collect();
        let mut two = SChunk::new(storage).unwrap();
        two.append_buffer(&data).unwrap();
        two.append_buffer(&data.iter().map(|b| b ^ 1).collect::<Vec<_>>())
            .unwrap();
        if let Backend::Frame(f) = &mut two.backend {
            let e = f.entries_for_tests();
            e[1] = e[0];
        }
        two.flush().unwrap();
        let mut copy = SChunk::from_buffer(&two.to_buffer().unwrap(), true).unwrap();
        assert!(Arc::ptr_eq(&list(&copy)[0], &list(&copy)[1]));
        let mut out = vec![0u8; data.len()];
        for i in 0..2 {
            assert_eq!(copy.decompress_chunk(i, &mut out).unwrap(), data.len());
            assert_eq!(out, data, "chunk {i}");
        }
        let again = copy.copy(Storage::default()).unwrap();
        assert!(Arc::ptr_eq(&list(&copy)[0], &list(&again)[0]));
    }

    /// A frame whose chunk 1 lies inside chunk 0 (a stored copy of it) reads
    /// as the reference reads it, but a copy of it is refused: copying its
    /// chunks would take more bytes than the data section holds, which is
    /// how nested chunks make a copy quadratic in the frame's size.
    #[test]
    fn a_copy_takes_no_more_than_the_data_section_holds() {
        let plain = CParams {
            typesize: 1,
            clevel: 0,
            ..CParams::default()
        };
        let store = |src: &[u8]| {
            let mut dst = vec![0u8; src.len() + 64];
            let n = crate::chunk::compress(&plain, src, &mut dst).unwrap();
            dst.truncate(n);
            dst
        };
        let data: Vec<u8> = (0..1000u32).map(|x| (x * 13 % 251) as u8).collect();
        let inner = store(&data);
        let outer = store(&inner);
        assert_eq!(&outer[32..], &inner[..], "a plain copy follows its header");

        let mut s = SChunk::new(Storage {
            contiguous: true,
            cparams: plain,
            ..Storage::default()
        })
        .unwrap();
        s.append_chunk(&outer).unwrap();
        let zeros = crate::chunk::make_special(Special::Zero, data.len(), 1, None).unwrap();
        s.append_chunk(&zeros).unwrap();
        if let Backend::Frame(f) = &mut s.backend {
            let e = f.entries_for_tests();
            assert!(
                e[1] < 0,
                "the zero chunk takes no bytes of the data section"
            );
            e[1] = e[0] + 32;
        }
        s.flush().unwrap();
        let bytes = s.to_buffer().unwrap();

        let mut read = SChunk::from_buffer(&bytes, false).unwrap();
        let mut out = vec![0u8; inner.len()];
        assert_eq!(read.decompress_chunk(0, &mut out).unwrap(), inner.len());
        assert_eq!(out, inner);
        assert_eq!(read.decompress_chunk(1, &mut out).unwrap(), data.len());
        assert_eq!(&out[..data.len()], &data[..]);

        let listed = SChunk::from_buffer(&bytes, true)
            .err()
            .expect("copy refused");
        assert_eq!(listed.code(), -23, "{}", listed.detail());
        assert!(listed.detail().contains("overlap"), "{}", listed.detail());
        let framed = read
            .copy(Storage {
                contiguous: true,
                ..Storage::default()
            })
            .err()
            .expect("copy refused");
        assert_eq!(framed.code(), -23, "{}", framed.detail());

        // Chunk 1 listed again as chunk 0 is one chunk, not an overlap.
        if let Backend::Frame(f) = &mut s.backend {
            let e = f.entries_for_tests();
            e[1] = e[0];
        }
        s.flush().unwrap();
        let again = s.to_buffer().unwrap();
        assert_eq!(SChunk::from_buffer(&again, true).unwrap().nchunks(), 2);
        let mut framed = SChunk::from_buffer(&again, false).unwrap();
        assert_eq!(framed.copy(Storage::default()).unwrap().nchunks(), 2);
        let contiguous = Storage {
            contiguous: true,
            ..Storage::default()
        };
        assert_eq!(framed.copy(contiguous).unwrap().nchunks(), 2);
    }
}
