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
//!
//! The OS lock is the standard library's `File::lock`/`lock_shared` (`flock(2)`
//! on Unix, `LockFileEx` on Windows), the same advisory lock the reference
//! takes, so handles of both libraries exclude each other.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::Result;

/// Where the generation counter sits in the sidecar.
const SEQ_OFFSET: u64 = 8;

/// What the OS lock primitive is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockOp {
    Shared,
    Exclusive,
    Unlock,
}

/// The OS advisory lock on a whole open file (blocking).
pub(crate) type OsLock = fn(&File, LockOp) -> std::io::Result<()>;

/// The OS lock primitive frames use (tests put a recorder in its place).
pub(crate) fn os_lock() -> OsLock {
    whole_file_lock
}

/// Takes or drops the advisory lock on the whole of `file`, blocking; a
/// signal that interrupts the wait does not end it.
fn whole_file_lock(file: &File, op: LockOp) -> std::io::Result<()> {
    loop {
        let done = match op {
            LockOp::Shared => file.lock_shared(),
            LockOp::Exclusive => file.lock(),
            LockOp::Unlock => file.unlock(),
        };
        match done {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

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
    os: OsLock,
    path: PathBuf,
    /// The sidecar, opened at the first lock and kept until the handle goes.
    file: Option<File>,
    /// Nesting depth; the OS lock is held while it is above zero.
    depth: u32,
    /// Generation counter seen at the last lock.
    seq: u64,
}

impl FrameLock {
    pub(crate) fn new(urlpath: &Path, sparse: bool, os: OsLock) -> FrameLock {
        FrameLock {
            os,
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
        let op = if exclusive {
            LockOp::Exclusive
        } else {
            LockOp::Shared
        };
        (self.os)(f, op)
            .map_err(|e| crate::err!(Lock, "cannot lock {}: {e}", self.path.display()))?;
        let seq = match read_seq(f).and_then(|s| {
            if exclusive {
                write_seq(f, s.wrapping_add(1)).map(|_| s)
            } else {
                Ok(s)
            }
        }) {
            Ok(s) => s,
            Err(e) => {
                let _ = (self.os)(f, LockOp::Unlock);
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
            (self.os)(f, LockOp::Unlock)
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
    use std::sync::Mutex;

    /// OS lock calls made by the tests, in order.
    static CALLS: Mutex<Vec<LockOp>> = Mutex::new(Vec::new());

    fn recording(_: &File, op: LockOp) -> std::io::Result<()> {
        CALLS.lock().unwrap().push(op);
        Ok(())
    }

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
    fn nesting_takes_the_os_lock_once_and_the_counter_tracks_writers() {
        let frame = scratch("x.b2frame");
        let mut a = FrameLock::new(&frame, false, recording);
        let mut b = FrameLock::new(&frame, false, recording);
        CALLS.lock().unwrap().clear();
        // First lock by `a`: the counter was 0 and `a` saw 0: not stale.
        assert!(!a.lock(true).unwrap());
        assert!(!a.lock(false).unwrap(), "nested");
        assert_eq!(a.depth(), 2);
        a.unlock().unwrap();
        a.unlock().unwrap();
        assert_eq!(a.depth(), 0);
        a.unlock().unwrap(); // not held: no-op
        assert_eq!(
            *CALLS.lock().unwrap(),
            vec![LockOp::Exclusive, LockOp::Unlock],
            "one OS lock for the whole bracket"
        );
        // `b` never saw the bump made by `a`: stale, then current.
        assert!(b.lock(false).unwrap());
        b.unlock().unwrap();
        assert!(!b.lock(false).unwrap(), "nothing new since");
        b.unlock().unwrap();
        // A writer through `b` makes `a` stale.
        b.lock(true).unwrap();
        b.unlock().unwrap();
        assert!(a.lock(false).unwrap());
        a.unlock().unwrap();
        let _ = std::fs::remove_file(sidecar_path(&frame, false));
    }
}
