//! Opt-in advisory locking of on-disk frames, as the reference does it: a
//! sidecar file (`<file>.b2lock` next to a contiguous frame, `<dir>/.b2lock`
//! inside a sparse one) is locked with `flock` (shared for reads, exclusive
//! for mutations) around each operation. The lock is re-entrant per handle
//! (a depth counter), so a caller may hold it across several operations.
//!
//! The sidecar also holds a generation counter (u64 at byte 8, native byte
//! order, as the reference keeps it): an exclusive holder bumps it, and a
//! handle that finds a value other than the last it saw knows another handle
//! wrote in between and must re-read the frame.
//!
//! Locking is off unless asked for: per handle, or for every handle of the
//! process with the environment variable `BLOSC_LOCKING` (any value except
//! empty and "0").

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::Result;

/// Where the generation counter sits in the sidecar.
const SEQ_OFFSET: u64 = 8;

/// Whether `BLOSC_LOCKING` asks for locking.
pub(crate) fn requested_by_env() -> bool {
    std::env::var_os("BLOSC_LOCKING").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The sidecar path of the frame at `urlpath`.
pub(crate) fn sidecar_path(urlpath: &Path, sparse: bool) -> PathBuf {
    if sparse {
        urlpath.join(".b2lock")
    } else {
        let mut s = urlpath.as_os_str().to_owned();
        s.push(".b2lock");
        PathBuf::from(s)
    }
}

/// The lock state of one frame handle.
#[derive(Debug)]
pub(crate) struct FrameLock {
    path: PathBuf,
    /// The sidecar, opened at the first lock and kept until the handle goes.
    file: Option<File>,
    /// Nesting depth; the OS lock is held while it is above zero.
    depth: u32,
    /// Generation counter seen at the last lock.
    seq: u64,
}

impl FrameLock {
    pub(crate) fn new(urlpath: &Path, sparse: bool) -> FrameLock {
        FrameLock {
            path: sidecar_path(urlpath, sparse),
            file: None,
            depth: 0,
            seq: 0,
        }
    }

    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// Takes the lock (or nests in the one already held by this handle).
    /// Returns true when another handle wrote the frame since this one last
    /// held the lock.
    pub(crate) fn lock(&mut self, exclusive: bool) -> Result<bool> {
        if self.depth > 0 {
            self.depth += 1;
            return Ok(false);
        }
        if self.file.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&self.path)
                .map_err(|e| {
                    crate::err!(
                        Lock,
                        "cannot open the lock file {}: {e}",
                        self.path.display()
                    )
                })?;
            self.file = Some(f);
        }
        let Some(f) = self.file.as_ref() else {
            crate::bail!(Lock, "lock file is not open");
        };
        // std's file locks are flock(2) on Unix, LockFileEx on Windows.
        let r = if exclusive { f.lock() } else { f.lock_shared() };
        r.map_err(|e| crate::err!(Lock, "cannot lock {}: {e}", self.path.display()))?;
        let seq = match read_seq(f).and_then(|s| {
            if exclusive {
                write_seq(f, s.wrapping_add(1)).map(|_| s)
            } else {
                Ok(s)
            }
        }) {
            Ok(s) => s,
            Err(e) => {
                let _ = f.unlock();
                return Err(crate::err!(
                    Lock,
                    "lock generation counter of {}: {e}",
                    self.path.display()
                ));
            }
        };
        let stale = seq != self.seq;
        self.seq = if exclusive { seq.wrapping_add(1) } else { seq };
        self.depth = 1;
        Ok(stale)
    }

    /// Releases one level; the OS lock goes when the depth reaches zero.
    /// Releasing a lock that is not held does nothing.
    pub(crate) fn unlock(&mut self) -> Result<()> {
        if self.depth == 0 {
            return Ok(());
        }
        self.depth -= 1;
        if self.depth > 0 {
            return Ok(());
        }
        if let Some(f) = &self.file {
            f.unlock()
                .map_err(|e| crate::err!(Lock, "cannot unlock {}: {e}", self.path.display()))?;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn read_seq(f: &File) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    let n = std::os::unix::fs::FileExt::read_at(f, &mut b, SEQ_OFFSET)?;
    Ok(if n == 8 { u64::from_ne_bytes(b) } else { 0 })
}

#[cfg(unix)]
fn write_seq(f: &File, seq: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, &seq.to_ne_bytes(), SEQ_OFFSET)
}

#[cfg(windows)]
fn read_seq(f: &File) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    let n = std::os::windows::fs::FileExt::seek_read(f, &mut b, SEQ_OFFSET)?;
    Ok(if n == 8 { u64::from_ne_bytes(b) } else { 0 })
}

#[cfg(windows)]
fn write_seq(f: &File, seq: u64) -> std::io::Result<()> {
    std::os::windows::fs::FileExt::seek_write(f, &seq.to_ne_bytes(), SEQ_OFFSET).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("b2nd-lock-{}-{name}", std::process::id()))
    }

    #[test]
    fn sidecar_paths() {
        assert_eq!(
            sidecar_path(Path::new("/a/f.b2frame"), false),
            Path::new("/a/f.b2frame.b2lock")
        );
        assert_eq!(
            sidecar_path(Path::new("/a/d.b2frame"), true),
            Path::new("/a/d.b2frame/.b2lock")
        );
    }

    #[test]
    fn exclusive_blocks_others_and_nests() {
        let frame = scratch("x.b2frame");
        let mut a = FrameLock::new(&frame, false);
        let mut b = FrameLock::new(&frame, false);
        // First lock by `a`: the counter was 0 and `a` saw 0: not stale.
        assert!(!a.lock(true).unwrap());
        assert!(!a.lock(false).unwrap(), "nested");
        assert_eq!(a.depth(), 2);
        let other = File::open(sidecar_path(&frame, false)).unwrap();
        assert!(other.try_lock().is_err(), "held exclusively");
        a.unlock().unwrap();
        assert!(other.try_lock_shared().is_err(), "still held at depth 1");
        a.unlock().unwrap();
        assert_eq!(a.depth(), 0);
        other.try_lock().unwrap();
        other.unlock().unwrap();
        // `b` never saw the bump made by `a`: stale.
        assert!(b.lock(false).unwrap());
        b.unlock().unwrap();
        assert!(!b.lock(false).unwrap(), "nothing new since");
        b.unlock().unwrap();
        // Shared locks coexist.
        a.lock(false).unwrap();
        b.lock(false).unwrap();
        a.unlock().unwrap();
        b.unlock().unwrap();
        a.unlock().unwrap(); // not held: no-op
        let _ = std::fs::remove_file(sidecar_path(&frame, false));
    }
}
