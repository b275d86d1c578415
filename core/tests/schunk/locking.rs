//! Opt-in frame locking on the Rust API: two handles on one frame (file and
//! sparse directory) with locking on see each other's writes, the `lock`
//! bracket holds an exclusive flock on the sidecar and nests, and with
//! locking off nothing is locked and no sidecar appears.
//! The frame lock is the standard library's `File::lock` (`flock(2)` on
//! Linux), so a plain `flock` here sees it.

use crate::common;

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use b2nd_core::schunk::{CParams, SChunk, Storage};
use common::TempDir;

fn data(k: u32) -> Vec<u8> {
    (0..2000u32)
        .flat_map(|i| (i * 5 + k).to_le_bytes())
        .collect()
}

fn sidecar(path: &Path, contiguous: bool) -> PathBuf {
    if contiguous {
        PathBuf::from(format!("{}.b2lock", path.display()))
    } else {
        path.join(".b2lock")
    }
}

extern "C" {
    fn flock(fd: i32, op: i32) -> i32;
}

const LOCK_EX: i32 = 2;
const LOCK_NB: i32 = 4;
const LOCK_UN: i32 = 8;

/// Whether someone holds the sidecar lock (a non-blocking exclusive
/// flock fails).
fn held(lock: &Path) -> bool {
    let f = File::open(lock).unwrap();
    // SAFETY: `f` is open for both calls.
    unsafe {
        if flock(f.as_raw_fd(), LOCK_EX | LOCK_NB) == 0 {
            flock(f.as_raw_fd(), LOCK_UN);
            false
        } else {
            true
        }
    }
}

#[test]
fn locking_handles_see_each_other_and_the_bracket_nests() {
    let dir = TempDir::new("schunk-locking");
    for contiguous in [true, false] {
        let path = dir.join(format!("f-{contiguous}.b2frame"));
        let mut a = SChunk::new(Storage {
            contiguous,
            urlpath: Some(path.clone()),
            cparams: CParams {
                typesize: 4,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        a.set_locking(true).unwrap();
        assert!(a.locking());
        a.append_buffer(&data(0)).unwrap();
        let lock = sidecar(&path, contiguous);
        assert!(lock.exists());
        assert!(!held(&lock));

        let mut b = SChunk::open(&path).unwrap();
        b.set_locking(true).unwrap();
        a.lock().unwrap();
        assert!(held(&lock));
        a.lock().unwrap();
        a.append_buffer(&data(1)).unwrap();
        a.unlock().unwrap();
        assert!(held(&lock), "one level still held");
        a.unlock().unwrap();
        assert!(!held(&lock));
        assert!(a.set_locking(false).is_ok());
        a.set_locking(true).unwrap();

        // `b` opened before chunk 1 was added: its append re-reads first.
        assert_eq!(b.nchunks(), 1);
        assert_eq!(b.append_buffer(&data(2)).unwrap(), 3);
        let mut out = vec![0u8; 8000];
        // `a` reads its own view until it reads as one access, which
        // catches up first.
        assert_eq!(a.nchunks(), 2);
        assert!(
            a.decompress_chunk(2, &mut out).is_err(),
            "not in a's view yet"
        );
        a.read_locked(|s| s.decompress_chunk(2, &mut out)).unwrap();
        assert_eq!(out, data(2));
        assert_eq!(a.nchunks(), 3);
        for k in 0..3 {
            a.decompress_chunk(k, &mut out).unwrap();
            assert_eq!(out, data(k as u32));
        }
        // Cannot turn locking off inside a bracket.
        a.lock().unwrap();
        assert!(a.set_locking(false).is_err());
        a.unlock().unwrap();
    }
}

#[test]
fn a_locking_open_waits_for_the_writer_bracket() {
    let dir = TempDir::new("schunk-locking-open");
    let path = dir.join("w.b2frame");
    let mut a = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    a.set_locking(true).unwrap();
    a.append_buffer(&data(0)).unwrap();
    a.lock().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let p2 = path.clone();
    let reader = std::thread::spawn(move || {
        let s = SChunk::open_with(&p2, 0, None, true).unwrap();
        tx.send(s.nchunks()).unwrap();
    });
    // The reader is stuck on the shared lock while the bracket is held.
    assert!(rx
        .recv_timeout(std::time::Duration::from_millis(300))
        .is_err());
    a.append_buffer(&data(1)).unwrap();
    a.unlock().unwrap();
    assert_eq!(
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap(),
        2
    );
    reader.join().unwrap();
}

#[test]
fn without_locking_nothing_is_locked() {
    let dir = TempDir::new("schunk-nolocking");
    let path = dir.join("plain.b2frame");
    let mut s = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    if s.locking() {
        // BLOSC_LOCKING is set in this environment: nothing to check.
        return;
    }
    s.lock().unwrap();
    s.append_buffer(&data(0)).unwrap();
    s.unlock().unwrap();
    assert!(!sidecar(&path, true).exists());
    // In-memory super-chunks never lock.
    let mut m = SChunk::new(Storage::in_memory(CParams::default())).unwrap();
    m.set_locking(true).unwrap();
    assert!(!m.locking());
}
