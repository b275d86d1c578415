//! Byte storage behind a frame: the I/O trait (the Rust face of the C
//! `blosc2_io_cb` callbacks), its default `std::fs` implementation, and the
//! in-memory buffer.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Result;

/// How a file is opened (the reference's "rb", "rb+" and "wb" modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Read an existing file ("rb").
    Read,
    /// Read and write an existing file ("rb+").
    ReadWrite,
    /// Create or truncate, then write. Whether the handle also reads is the
    /// backend's: the local file system's does, a C backend's ("wb") need not.
    Create,
}

/// One open file.
pub trait IoFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read
    /// (fewer only at end of file).
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize>;
    /// [`IoFile::read_at`] through a shared borrow, for backends whose
    /// reads keep no cursor (`pread`) and so may run on several threads at
    /// once. `None`: this backend reads through `&mut self` only, and
    /// readers of one frame take turns.
    fn read_at_shared(&self, _pos: u64, _buf: &mut [u8]) -> Option<Result<usize>> {
        None
    }
    /// Writes all of `data` at `pos`, growing the file if needed.
    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()>;
    /// Sets the file size.
    fn truncate(&mut self, len: u64) -> Result<()>;
    /// Current file size.
    fn size(&mut self) -> Result<u64>;
    /// Whether the path this file was opened at now names another file
    /// (unlinked and recreated, or renamed over), so that reads through
    /// this handle would see the old one. Backends that cannot tell say no.
    fn replaced(&self) -> bool {
        false
    }
    /// Makes the bytes written so far durable (fsync). Called at a frame's
    /// publishing points only when asked for (see `frame::durable`);
    /// backends with nothing to flush need not implement it.
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A user-replaceable I/O backend (the reference's `blosc2_io_cb`).
pub trait Io: Send + Sync {
    /// Opens the file at `path` in `mode`; fails as the backend does (e.g. a
    /// missing file for [`OpenMode::Read`]).
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn IoFile>>;
    /// Removes a file (used for sparse-frame chunk files).
    fn remove(&self, path: &Path) -> Result<()>;
    /// Creates a directory and its parents (used for sparse frames).
    fn create_dir(&self, path: &Path) -> Result<()>;
    /// Whether a frame may keep a file of this backend open from one
    /// operation to the next (the default). A backend that says no has each
    /// file opened for an operation and closed before the operation returns,
    /// as the reference does with every backend but its own file system's:
    /// user backends see one handle per reader or writer, never one left
    /// open between calls.
    fn keeps_files_open(&self) -> bool {
        true
    }
    /// Whether [`Io::rename`] works: a frame whose changes cannot be ordered
    /// in place (see docs/crash-safety.md) is then written as a new file
    /// renamed over the old; without it, such changes are written in place.
    fn can_rename(&self) -> bool {
        false
    }
    /// Replaces `to` by `from` in one step (POSIX `rename`).
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        crate::bail!(
            Failure,
            "this I/O backend cannot rename {} to {}",
            from.display(),
            to.display()
        )
    }
    /// Makes a rename in directory `dir` durable (fsync of the directory).
    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// Shared handle to an I/O backend.
pub type IoRef = Arc<dyn Io>;

/// The default backend: the local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdIo;

impl StdIo {
    /// The local file system as a shared backend handle.
    pub fn shared() -> IoRef {
        Arc::new(StdIo)
    }
}

struct StdFile {
    file: File,
    path: PathBuf,
    /// Device and inode of the open file, taken once: they cannot change,
    /// and `replaced` runs on every read of a frame another handle may
    /// have rewritten.
    #[cfg(unix)]
    id: Option<(u64, u64)>,
}

impl StdFile {
    fn new(file: File, path: &Path) -> StdFile {
        #[cfg(unix)]
        let id = {
            use std::os::unix::fs::MetadataExt;
            file.metadata().ok().map(|m| (m.dev(), m.ino()))
        };
        StdFile {
            file,
            path: path.to_owned(),
            #[cfg(unix)]
            id,
        }
    }

    // Positioned reads (pread): one system call each, no cursor to share.
    fn read_positioned(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let at = pos + done as u64;
            match positioned::read(&self.file, at, &mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => crate::bail!(FileRead, "{}: read at {at}: {e}", self.path.display()),
            }
        }
        Ok(done)
    }
}

impl IoFile for StdFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_positioned(pos, buf)
    }

    #[cfg(unix)]
    fn read_at_shared(&self, pos: u64, buf: &mut [u8]) -> Option<Result<usize>> {
        Some(self.read_positioned(pos, buf))
    }

    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        positioned::write_all(&mut self.file, pos, data).map_err(|e| {
            crate::err!(FileWrite, "{}: write at {pos}", self.path.display()).with_source(e)
        })
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| crate::err!(FileTruncate, "{}", self.path.display()).with_source(e))
    }

    fn size(&mut self) -> Result<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| crate::err!(FileRead, "{}", self.path.display()).with_source(e))
    }

    #[cfg(unix)]
    fn replaced(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        // A path that is gone leaves the open file perfectly readable, as an
        // open descriptor is on POSIX: only another file there counts.
        match (self.id, std::fs::metadata(&self.path)) {
            (Some(open), Ok(now)) => open != (now.dev(), now.ino()),
            (None, _) => true,
            (Some(_), Err(_)) => false,
        }
    }

    fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| crate::err!(FileWrite, "{}: fsync", self.path.display()).with_source(e))
    }
}

/// Reads and writes at a position without moving a file cursor where the
/// platform allows it.
mod positioned {
    use std::fs::File;

    #[cfg(unix)]
    pub(super) fn read(f: &File, pos: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(f, buf, pos)
    }

    #[cfg(unix)]
    pub(super) fn write_all(f: &mut File, pos: u64, data: &[u8]) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(f, data, pos)
    }

    #[cfg(not(unix))]
    pub(super) fn read(mut f: &File, pos: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(pos))?;
        f.read(buf)
    }

    #[cfg(not(unix))]
    pub(super) fn write_all(f: &mut File, pos: u64, data: &[u8]) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        f.seek(SeekFrom::Start(pos))?;
        f.write_all(data)
    }
}

impl Io for StdIo {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn IoFile>> {
        let mut o = OpenOptions::new();
        match mode {
            OpenMode::Read => o.read(true),
            OpenMode::ReadWrite => o.read(true).write(true),
            OpenMode::Create => o.read(true).write(true).create(true).truncate(true),
        };
        let file = o
            .open(path)
            .map_err(|e| crate::err!(FileOpen, "{}", path.display()).with_source(e))?;
        Ok(Box::new(StdFile::new(file, path)))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path)
            .map_err(|e| crate::err!(FileRemove, "{}", path.display()).with_source(e))
    }

    fn create_dir(&self, path: &Path) -> Result<()> {
        std::fs::create_dir_all(path)
            .map_err(|e| crate::err!(FileOpen, "{}", path.display()).with_source(e))
    }

    fn can_rename(&self) -> bool {
        true
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| {
            crate::err!(FileWrite, "rename {} to {}", from.display(), to.display()).with_source(e)
        })
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| crate::err!(FileWrite, "{}: fsync", dir.display()).with_source(e))
    }
}

/// Reads exactly `buf.len()` bytes at `pos` or fails with a message naming `what`.
pub(crate) fn read_exact_at(
    f: &mut dyn IoFile,
    pos: u64,
    buf: &mut [u8],
    what: &str,
) -> Result<()> {
    let n = f.read_at(pos, buf)?;
    check_read_len(n, pos, buf.len(), what)
}

/// Fails with a message naming `what` unless a read at `pos` got all `want` bytes.
pub(crate) fn check_read_len(n: usize, pos: u64, want: usize, what: &str) -> Result<()> {
    if n != want {
        crate::bail!(
            FileRead,
            "{what}: wanted {want} bytes at {pos}, file ends after {n}"
        );
    }
    Ok(())
}

/// An in-memory file, used for frames held in a buffer.
#[derive(Debug, Default, Clone)]
pub struct MemFile {
    /// The file's bytes; its size is `data.len()`.
    pub data: Vec<u8>,
}

impl MemFile {
    /// Copies the bytes at `pos` into `buf`, as many as there are; returns
    /// how many.
    pub(crate) fn read_into(&self, pos: u64, buf: &mut [u8]) -> usize {
        let len = self.data.len() as u64;
        if pos >= len {
            return 0;
        }
        let start = pos as usize;
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        n
    }
}

impl IoFile for MemFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        Ok(self.read_into(pos, buf))
    }

    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let start = usize::try_from(pos)
            .map_err(|_| crate::err!(WriteBuffer, "position {pos} too large"))?;
        let end = start
            .checked_add(data.len())
            .ok_or_else(|| crate::err!(WriteBuffer, "write past address space"))?;
        // A frame in memory grows by appends (chunks, then index and
        // trailer), so the part past the end is appended rather than
        // zero-filled first and then overwritten. A gap before `start` reads
        // as zeros, as a hole in a file does. The room is had first, so a
        // write the system has no memory for changes nothing.
        self.data
            .try_reserve(end.saturating_sub(self.data.len()))
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to grow a frame to {end} bytes"))?;
        if self.data.len() < start {
            self.data.resize(start, 0);
        }
        let inside = end.min(self.data.len()) - start;
        self.data[start..start + inside].copy_from_slice(&data[..inside]);
        self.data.extend_from_slice(&data[inside..]);
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let len =
            usize::try_from(len).map_err(|_| crate::err!(WriteBuffer, "length {len} too large"))?;
        self.data
            .try_reserve(len.saturating_sub(self.data.len()))
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to grow a frame to {len} bytes"))?;
        self.data.resize(len, 0);
        Ok(())
    }

    fn size(&mut self) -> Result<u64> {
        Ok(self.data.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memfile_reads_writes_truncates() {
        let mut m = MemFile::default();
        m.write_at(4, b"abc").unwrap();
        assert_eq!(m.data, b"\0\0\0\0abc");
        let mut b = [0u8; 5];
        assert_eq!(m.read_at(5, &mut b).unwrap(), 2);
        assert_eq!(&b[..2], b"bc");
        m.truncate(2).unwrap();
        assert_eq!(m.size().unwrap(), 2);
        assert!(read_exact_at(&mut m, 0, &mut b, "x").is_err());
    }

    #[test]
    fn memfile_writes_inside_across_and_past_the_end() {
        let mut m = MemFile::default();
        m.write_at(0, b"abcdef").unwrap();
        m.write_at(1, b"XY").unwrap(); // inside
        assert_eq!(m.data, b"aXYdef");
        m.write_at(4, b"1234").unwrap(); // across the end
        assert_eq!(m.data, b"aXYd1234");
        m.write_at(8, b"!").unwrap(); // right at the end
        assert_eq!(m.data, b"aXYd1234!");
        m.write_at(11, b"z").unwrap(); // past it: the gap reads as zeros
        assert_eq!(m.data, b"aXYd1234!\0\0z");
        m.write_at(3, b"").unwrap();
        assert_eq!(m.data.len(), 12);
    }

    #[test]
    fn memfile_growth_past_memory_is_refused_and_changes_nothing() {
        let mut m = MemFile::default();
        m.write_at(0, b"abc").unwrap();
        let far = 1u64 << 62;
        assert!(
            matches!(m.write_at(far, b"z"), Err(e) if e.kind() == crate::ErrorKind::MemoryAlloc)
        );
        assert!(matches!(m.truncate(far), Err(e) if e.kind() == crate::ErrorKind::MemoryAlloc));
        assert_eq!(m.data, b"abc");
    }
}
