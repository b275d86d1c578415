//! A memory-mapped frame file: the reference's `BLOSC2_IO_FILESYSTEM_MMAP`
//! backend as a Rust [`Io`], and the mapping itself ([`MmapFile`]) that the
//! C callbacks (`blosc2_stdio_mmap_*`) drive too.
//!
//! One file is mapped per backend, on its first open, in one of the modes
//! of numpy's memmap ([`MmapMode`]); every later open of the same path is
//! served by the same mapping and any other path is refused, so sparse
//! frames (a file per chunk) cannot be stored this way, as in the
//! reference. Writing modes map `initial_mapping_size` bytes at first (at
//! least the file's size), so appends usually land in the mapping already
//! there; a write past the file's end grows the file (except in
//! copy-on-write mode) and, past the mapping, doubles the mapping.
//!
//! Like every mapping of a file, what it shows changes when another process
//! writes the file, and a part another process truncated away faults when
//! touched: the reference has the same contract. A copy-on-write mapping
//! cannot grow past the file's last page (the pages after it have no file
//! behind them and fault when touched), so such writes are refused here
//! rather than crash as in the reference.

use std::fs::{File, OpenOptions};
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use super::io::{Io, IoFile, IoRef, OpenMode};
use crate::Result;

/// How the file is opened and mapped (`blosc2_stdio_mmap.mode`, numpy's
/// memmap modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmapMode {
    /// "r": an existing file, read only.
    Read,
    /// "r+": an existing file, read and written in place.
    ReadWrite,
    /// "w+": created or truncated, then read and written.
    Create,
    /// "c": an existing file, copy-on-write: changes stay in memory and the
    /// file is never written.
    CopyOnWrite,
}

impl MmapMode {
    /// The mode a reference mode string names ("r", "r+", "w+", "c").
    pub fn from_mode_str(mode: &str) -> Option<MmapMode> {
        Some(match mode {
            "r" => MmapMode::Read,
            "r+" => MmapMode::ReadWrite,
            "w+" => MmapMode::Create,
            "c" => MmapMode::CopyOnWrite,
            _ => return None,
        })
    }

    /// The reference's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            MmapMode::Read => "r",
            MmapMode::ReadWrite => "r+",
            MmapMode::Create => "w+",
            MmapMode::CopyOnWrite => "c",
        }
    }

    /// Whether the mapping may be written (every mode but "r").
    pub fn writable(self) -> bool {
        self != MmapMode::Read
    }

    /// Whether changes stay in memory ("c").
    pub fn is_memory_only(self) -> bool {
        self == MmapMode::CopyOnWrite
    }

    /// Whether changes reach the file ("r+", "w+").
    fn writes_file(self) -> bool {
        self.writable() && !self.is_memory_only()
    }

    /// Whether the first mapping is `initial_mapping_size` bytes (writing
    /// modes) rather than the file's size.
    fn uses_initial_size(self) -> bool {
        self.writable()
    }
}

/// One mapped file. Reads and writes copy between the caller's buffers and
/// the mapping; [`MmapFile::as_ptr`] gives the mapping's address for callers
/// that hand out pointers into it (the C backend's reads).
#[derive(Debug)]
pub struct MmapFile {
    file: File,
    path: PathBuf,
    mode: MmapMode,
    addr: NonNull<u8>,
    mapping_size: usize,
    /// The logical size: what the frame wrote, ≤ `mapping_size`.
    file_size: usize,
    /// In copy-on-write mode, the end of the last page of the file as
    /// opened: past it the mapping has nothing behind it.
    backed: usize,
    /// False once the mapping is released (by `close`, before `drop`).
    live: bool,
}

// SAFETY: the mapping is owned by this value alone (made by `open`, released
// by `unmap`); every access goes through `&self`/`&mut self`, so moving the
// value between threads moves that ownership with it.
unsafe impl Send for MmapFile {}
// SAFETY: `&self` methods only read the mapping; writes need `&mut self`.
unsafe impl Sync for MmapFile {}

fn os_err(kind: crate::ErrorKind, what: String) -> crate::Error {
    crate::Error::new(kind, what).with_source(std::io::Error::last_os_error())
}

impl MmapFile {
    /// Opens `path` as `mode` says and maps it: `initial_mapping_size`
    /// bytes for the writing modes, the file's size for "r" (at least the
    /// file's size, and at least one byte, in all modes).
    pub fn open(
        path: impl AsRef<Path>,
        mode: MmapMode,
        initial_mapping_size: usize,
    ) -> Result<MmapFile> {
        let path = path.as_ref();
        let mut o = OpenOptions::new();
        match mode {
            MmapMode::Read | MmapMode::CopyOnWrite => o.read(true),
            MmapMode::ReadWrite => o.read(true).write(true),
            MmapMode::Create => o.read(true).write(true).create(true).truncate(true),
        };
        let file = o
            .open(path)
            .map_err(|e| crate::err!(FileOpen, "{}", path.display()).with_source(e))?;
        let size = file
            .metadata()
            .map_err(|e| crate::err!(FileOpen, "{}", path.display()).with_source(e))?
            .len();
        let size = usize::try_from(size)
            .map_err(|_| crate::err!(FileOpen, "{}: too large to map", path.display()))?;
        let first = if mode.uses_initial_size() {
            initial_mapping_size
        } else {
            size
        };
        let mapping_size = first.max(size).max(1);
        let (prot, flags) = Self::protection(mode);
        // SAFETY: a fresh mapping of a file we hold open, at an address the
        // kernel picks; nothing else refers to that range yet.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                mapping_size,
                prot,
                flags,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err(
                crate::ErrorKind::FileOpen,
                format!("{}: mmap of {mapping_size} bytes", path.display()),
            ));
        }
        let addr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| crate::err!(FileOpen, "{}: mapped at NULL", path.display()))?;
        let page = page_size();
        Ok(MmapFile {
            file,
            path: path.to_owned(),
            mode,
            addr,
            mapping_size,
            file_size: size,
            backed: size.div_ceil(page).saturating_mul(page),
            live: true,
        })
    }

    /// The protection and sharing flags `mode` maps with.
    fn protection(mode: MmapMode) -> (libc::c_int, libc::c_int) {
        match mode {
            MmapMode::Read => (libc::PROT_READ, libc::MAP_SHARED),
            MmapMode::ReadWrite | MmapMode::Create => {
                (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED)
            }
            MmapMode::CopyOnWrite => (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE),
        }
    }

    /// The file this maps.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mode it was opened in.
    pub fn mode(&self) -> MmapMode {
        self.mode
    }

    /// The logical file size (what has been written or was there).
    pub fn len(&self) -> usize {
        self.file_size
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.file_size == 0
    }

    /// How many bytes are mapped (≥ [`MmapFile::len`]).
    pub fn mapping_size(&self) -> usize {
        self.mapping_size
    }

    /// The start of the mapping. It moves when the mapping grows (a write
    /// or truncate past the mapping); the first [`MmapFile::len`] bytes are
    /// the file's.
    pub fn as_ptr(&self) -> *const u8 {
        self.addr.as_ptr()
    }

    /// Copies the bytes at `pos` into `buf`, as many as the file holds;
    /// returns how many.
    pub fn read_at(&self, pos: u64, buf: &mut [u8]) -> usize {
        let Ok(pos) = usize::try_from(pos) else {
            return 0;
        };
        if pos >= self.file_size {
            return 0;
        }
        let n = buf.len().min(self.file_size - pos);
        // SAFETY: `pos + n <= file_size <= mapping_size`: inside the mapping,
        // which `buf` (the caller's memory) cannot overlap.
        unsafe { core::ptr::copy_nonoverlapping(self.addr.as_ptr().add(pos), buf.as_mut_ptr(), n) };
        n
    }

    /// Writes `data` at `pos`, growing the file (except in copy-on-write
    /// mode) and the mapping as needed.
    pub fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let end = usize::try_from(pos)
            .ok()
            .and_then(|p| p.checked_add(data.len()))
            .ok_or_else(|| crate::err!(FileWrite, "write at {pos} passes the address space"))?;
        if data.is_empty() {
            return Ok(());
        }
        self.grow(end)?;
        // SAFETY: `grow` made `end <= file_size <= mapping_size`, the mapping
        // is writable (checked there) and `data` is the caller's memory.
        unsafe {
            core::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.addr.as_ptr().add(end - data.len()),
                data.len(),
            )
        };
        Ok(())
    }

    /// Sets the logical size (and the file's, unless in copy-on-write mode).
    pub fn truncate(&mut self, len: u64) -> Result<()> {
        let target = usize::try_from(len)
            .map_err(|_| crate::err!(FileTruncate, "size {len} passes the address space"))?;
        if target == self.file_size {
            return Ok(());
        }
        if target > self.file_size {
            return self.grow(target);
        }
        self.check_writable("truncate")?;
        self.file_size = target;
        if self.mode.writes_file() {
            self.file.set_len(len).map_err(|e| {
                crate::err!(FileTruncate, "{}: to {len}", self.path.display()).with_source(e)
            })?;
        }
        Ok(())
    }

    /// Writes the changed pages to the file and the file to the disk
    /// (nothing in "r" and "c" modes).
    pub fn sync(&mut self) -> Result<()> {
        if !self.mode.writes_file() {
            return Ok(());
        }
        self.msync()?;
        self.file
            .sync_data()
            .map_err(|e| crate::err!(FileWrite, "{}: fsync", self.path.display()).with_source(e))
    }

    fn msync(&self) -> Result<()> {
        // SAFETY: `file_size <= mapping_size` bytes of our own mapping.
        if unsafe { libc::msync(self.addr.as_ptr().cast(), self.file_size, libc::MS_SYNC) } < 0 {
            return Err(os_err(
                crate::ErrorKind::FileWrite,
                format!("{}: msync", self.path.display()),
            ));
        }
        Ok(())
    }

    /// Writes the changed pages back (writing modes), unmaps and closes the
    /// file, reporting what failed (dropping does the same and forgets it).
    pub fn close(mut self) -> Result<()> {
        self.release()
    }

    /// msync (writing modes) and munmap, once; the first failure is returned.
    fn release(&mut self) -> Result<()> {
        if !std::mem::take(&mut self.live) {
            return Ok(());
        }
        let synced = if self.mode.writes_file() {
            self.msync()
        } else {
            Ok(())
        };
        // SAFETY: our own mapping of `mapping_size` bytes, released once
        // (`live` was true and is false from now on); no method touches the
        // mapping afterwards (`close` consumes the value, `drop` ends it).
        let unmapped = if unsafe { libc::munmap(self.addr.as_ptr().cast(), self.mapping_size) } < 0
        {
            Err(os_err(
                crate::ErrorKind::FileWrite,
                format!("{}: munmap", self.path.display()),
            ))
        } else {
            Ok(())
        };
        synced.and(unmapped)
    }

    fn check_writable(&self, what: &str) -> Result<()> {
        if !self.mode.writable() {
            crate::bail!(
                FileWrite,
                "{}: cannot {what} a file mapped read-only (mode \"r\")",
                self.path.display()
            );
        }
        Ok(())
    }

    /// Makes `end` bytes writable: extends the logical size (and the file,
    /// unless in copy-on-write mode), then the mapping, to twice the new
    /// size, when it is too short. On failure nothing visible changed but
    /// a file extended ahead of the mapping.
    fn grow(&mut self, end: usize) -> Result<()> {
        self.check_writable("write")?;
        if self.mode.is_memory_only() && end > self.backed {
            crate::bail!(
                FileWrite,
                "{}: a copy-on-write mapping cannot grow past the file's last page \
                 ({} bytes; asked for {end}): open it \"r+\" or copy the file",
                self.path.display(),
                self.backed
            );
        }
        if end > self.file_size {
            if self.mode.writes_file() {
                self.file.set_len(end as u64).map_err(|e| {
                    crate::err!(FileWrite, "{}: extend to {end}", self.path.display())
                        .with_source(e)
                })?;
            }
            self.file_size = end;
        }
        if self.mapping_size >= self.file_size {
            return Ok(());
        }
        let new_size = self.file_size.checked_mul(2).unwrap_or(self.file_size);
        self.remap(new_size)
    }

    #[cfg(target_os = "linux")]
    fn remap(&mut self, new_size: usize) -> Result<()> {
        // SAFETY: resizing our own mapping; the kernel may move it (and keeps
        // private pages in copy-on-write mode), so the new address replaces
        // the old one, and no pointer into the old range is kept here.
        let p = unsafe {
            libc::mremap(
                self.addr.as_ptr().cast(),
                self.mapping_size,
                new_size,
                libc::MREMAP_MAYMOVE,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err(
                crate::ErrorKind::FileWrite,
                format!("{}: mremap to {new_size} bytes", self.path.display()),
            ));
        }
        self.addr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| crate::err!(FileWrite, "{}: remapped at NULL", self.path.display()))?;
        self.mapping_size = new_size;
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn remap(&mut self, new_size: usize) -> Result<()> {
        if self.mode.is_memory_only() {
            crate::bail!(
                FileWrite,
                "{}: a copy-on-write mapping can grow on Linux only: give a larger initial \
                 mapping size or another mode",
                self.path.display()
            );
        }
        let (prot, flags) = Self::protection(self.mode);
        // SAFETY: a fresh mapping of our open file; the old one is released
        // only once the new one exists (the data lives in the file, shared).
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                new_size,
                prot,
                flags,
                self.file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err(
                crate::ErrorKind::FileWrite,
                format!("{}: mmap of {new_size} bytes", self.path.display()),
            ));
        }
        // SAFETY: our old mapping, replaced by the new one just made.
        unsafe { libc::munmap(self.addr.as_ptr().cast(), self.mapping_size) };
        self.addr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| crate::err!(FileWrite, "{}: mapped at NULL", self.path.display()))?;
        self.mapping_size = new_size;
        Ok(())
    }
}

impl AsRawFd for MmapFile {
    /// The descriptor of the mapped file (valid while this value lives).
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// The memory-mapped backend: plug it into `Storage::io` (or
/// `SChunk::open_with_io`) to store a contiguous frame in a mapped file.
/// Clones share the mapping, which stays until the backend and every file
/// opened through it are gone, or [`MmapIo::close`] ends it.
#[derive(Debug, Clone)]
pub struct MmapIo {
    mode: MmapMode,
    initial_mapping_size: usize,
    mapped: Arc<Mutex<Option<MmapFile>>>,
}

impl MmapIo {
    /// A backend that maps its file in `mode`, writing modes with a first
    /// mapping of `initial_mapping_size` bytes (the reference's default is
    /// 1 GiB: address space, not memory, as pages come when written).
    pub fn new(mode: MmapMode, initial_mapping_size: usize) -> MmapIo {
        MmapIo {
            mode,
            initial_mapping_size,
            mapped: Arc::default(),
        }
    }

    /// [`MmapIo::new`] as a shared backend, for `Storage::io`.
    pub fn shared(mode: MmapMode, initial_mapping_size: usize) -> IoRef {
        Arc::new(MmapIo::new(mode, initial_mapping_size))
    }

    /// The path mapped, if any.
    pub fn mapped_path(&self) -> Option<PathBuf> {
        lock(&self.mapped).as_ref().map(|f| f.path.clone())
    }

    /// Writes back, unmaps and closes the file now, reporting failures (the
    /// last user going does the same silently). Files opened through this
    /// backend fail afterwards; the next open maps the file again.
    pub fn close(&self) -> Result<()> {
        match lock(&self.mapped).take() {
            Some(f) => f.close(),
            None => Ok(()),
        }
    }
}

fn lock(m: &Mutex<Option<MmapFile>>) -> MutexGuard<'_, Option<MmapFile>> {
    // Every change to the mapping completes or fails before it returns
    // (no unwinding inside), so a poisoned lock still holds a sound value.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Io for MmapIo {
    /// Maps `path` on the first open (the backend's mode decides how; the
    /// frame's `mode` is ignored, as the reference ignores it); later opens
    /// of the same path share that mapping, and any other path is refused.
    fn open(&self, path: &Path, _mode: OpenMode) -> Result<Box<dyn IoFile>> {
        let mut mapped = lock(&self.mapped);
        match mapped.as_ref() {
            Some(f) if f.path == path => {}
            Some(f) => crate::bail!(
                FileOpen,
                "{} is mapped already, so {} cannot be: memory-mapped I/O holds one file \
                 (sparse frames are not supported)",
                f.path.display(),
                path.display()
            ),
            None => *mapped = Some(MmapFile::open(path, self.mode, self.initial_mapping_size)?),
        }
        Ok(Box::new(MmapHandle {
            mapped: Arc::clone(&self.mapped),
        }))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path)
            .map_err(|e| crate::err!(FileRemove, "{}", path.display()).with_source(e))
    }

    fn create_dir(&self, path: &Path) -> Result<()> {
        crate::bail!(
            FileOpen,
            "{}: memory-mapped I/O holds one contiguous frame; sparse frames are not supported",
            path.display()
        )
    }
}

/// A file opened through [`MmapIo`]: the shared mapping.
struct MmapHandle {
    mapped: Arc<Mutex<Option<MmapFile>>>,
}

impl MmapHandle {
    fn with<T>(&self, f: impl FnOnce(&mut MmapFile) -> Result<T>) -> Result<T> {
        match lock(&self.mapped).as_mut() {
            Some(m) => f(m),
            None => crate::bail!(FileRead, "the memory-mapped file was closed"),
        }
    }
}

impl IoFile for MmapHandle {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        self.with(|m| Ok(m.read_at(pos, buf)))
    }

    fn read_at_shared(&self, pos: u64, buf: &mut [u8]) -> Option<Result<usize>> {
        Some(self.with(|m| Ok(m.read_at(pos, buf))))
    }

    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        self.with(|m| m.write_at(pos, data))
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        self.with(|m| m.truncate(len))
    }

    fn size(&mut self) -> Result<u64> {
        self.with(|m| Ok(m.len() as u64))
    }

    fn sync(&mut self) -> Result<()> {
        self.with(|m| m.sync())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("b2nd-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn modes_parse_as_the_reference_names_them() {
        for m in [
            MmapMode::Read,
            MmapMode::ReadWrite,
            MmapMode::Create,
            MmapMode::CopyOnWrite,
        ] {
            assert_eq!(MmapMode::from_mode_str(m.as_str()), Some(m));
        }
        assert_eq!(MmapMode::from_mode_str("rb"), None);
        assert_eq!(MmapMode::from_mode_str("w"), None);
    }

    #[test]
    fn writes_grow_the_file_and_double_the_mapping() {
        let path = temp("grow.bin");
        let mut f = MmapFile::open(&path, MmapMode::Create, 16).unwrap();
        assert_eq!((f.len(), f.mapping_size()), (0, 16));
        f.write_at(0, b"0123456789").unwrap();
        assert_eq!((f.len(), f.mapping_size()), (10, 16));
        f.write_at(20, b"abc").unwrap();
        assert_eq!((f.len(), f.mapping_size()), (23, 46));
        let mut b = [0u8; 8];
        assert_eq!(f.read_at(18, &mut b), 5);
        assert_eq!(&b[..5], b"\0\0abc");
        assert_eq!(f.read_at(23, &mut b), 0);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 23);
        f.truncate(12).unwrap();
        assert_eq!(f.len(), 12);
        f.sync().unwrap();
        f.close().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789\0\0");

        // "r": the file's size, read only.
        let mut r = MmapFile::open(&path, MmapMode::Read, 1 << 20).unwrap();
        assert_eq!((r.len(), r.mapping_size()), (12, 12));
        assert_eq!(
            r.write_at(0, b"x").unwrap_err().kind(),
            crate::ErrorKind::FileWrite
        );
        assert!(r.truncate(3).is_err());
        drop(r);

        // "c": changes stay in memory, and stop at the file's last page.
        let mut c = MmapFile::open(&path, MmapMode::CopyOnWrite, 64).unwrap();
        c.write_at(12, b"more").unwrap();
        assert_eq!(c.len(), 16);
        let mut all = [0u8; 16];
        assert_eq!(c.read_at(0, &mut all), 16);
        assert_eq!(&all[12..], b"more");
        assert!(c.write_at(1 << 20, b"far").is_err());
        c.close().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789\0\0");

        assert_eq!(
            MmapFile::open(temp("missing.bin"), MmapMode::ReadWrite, 8)
                .unwrap_err()
                .kind(),
            crate::ErrorKind::FileOpen
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn one_backend_maps_one_path() {
        let path = temp("one.bin");
        let io = MmapIo::new(MmapMode::Create, 8);
        let mut a = io.open(&path, OpenMode::Create).unwrap();
        a.write_at(0, b"hello").unwrap();
        let mut b = io.open(&path, OpenMode::ReadWrite).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(b.read_at(0, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"hello");
        assert_eq!(a.read_at_shared(1, &mut buf[..2]).unwrap().unwrap(), 2);
        let other = io.open(&temp("two.bin"), OpenMode::Create).err().unwrap();
        assert!(other.to_string().contains("sparse frames"), "{other}");
        assert!(io.create_dir(&temp("dir")).is_err());
        assert_eq!(io.mapped_path(), Some(path.clone()));
        io.close().unwrap();
        assert!(a.size().is_err(), "the handles end with the mapping");
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        std::fs::remove_file(&path).unwrap();
    }
}
