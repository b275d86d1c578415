//! Crash consistency, deterministically: each scenario runs an edit of a
//! frame through an I/O backend that fails or stops at its N-th write-like
//! call (write, truncate, sync, rename, remove), for every N the edit
//! makes, then reopens the file with the plain file system. It must open
//! and hold the frame from before the edit or the one after, never
//! anything else; an edit that reported success must have left the one
//! after. "Stop" models a writer killed before that call (nothing of it
//! or after it reaches the file), "torn" one killed inside a write of
//! more than a page (its first pages land), "fail" a full disk (that call
//! fails, the writer goes on): the handle must then agree with the disk.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use b2nd_core::frame::{Io, IoFile, IoRef, OpenMode, StdIo};
use b2nd_core::schunk::{CParams, SChunk, Special, Storage};
use b2nd_core::Result;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    Fail(usize),
    Stop(usize),
    Torn(usize),
}

/// The file system, with a fault at the N-th write-like call.
struct Faulty {
    fault: Fault,
    calls: Arc<AtomicUsize>,
    dead: Arc<AtomicBool>,
}

impl Faulty {
    fn new(fault: Fault) -> Arc<Faulty> {
        Arc::new(Faulty {
            fault,
            calls: Arc::new(AtomicUsize::new(0)),
            dead: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Counts one call: Ok(true) to do it, Ok(false) to do part of it (a
    /// torn write), Err to refuse it.
    fn call(&self, what: &str) -> Result<bool> {
        if self.dead.load(Ordering::SeqCst) {
            return Err(b2nd_core::Error::new(
                b2nd_core::ErrorKind::FileWrite,
                format!("{what}: writer is dead"),
            ));
        }
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        match self.fault {
            Fault::Fail(k) if k == n => Err(b2nd_core::Error::new(
                b2nd_core::ErrorKind::FileWrite,
                format!("{what}: no space"),
            )),
            Fault::Stop(k) if k == n => {
                self.dead.store(true, Ordering::SeqCst);
                Err(b2nd_core::Error::new(
                    b2nd_core::ErrorKind::FileWrite,
                    format!("{what}: killed"),
                ))
            }
            Fault::Torn(k) if k == n => {
                self.dead.store(true, Ordering::SeqCst);
                Ok(false)
            }
            _ => Ok(true),
        }
    }
}

struct FaultyFile {
    file: Box<dyn IoFile>,
    io: Arc<Faulty>,
}

impl IoFile for FaultyFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        self.file.read_at(pos, buf)
    }
    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        if self.io.call("write")? {
            return self.file.write_at(pos, data);
        }
        // Killed inside the write: whole pages before the kill land.
        let landed = data.len() / 2 / 4096 * 4096;
        self.file.write_at(pos, &data[..landed])?;
        Err(b2nd_core::Error::new(
            b2nd_core::ErrorKind::FileWrite,
            "write: killed",
        ))
    }
    fn truncate(&mut self, len: u64) -> Result<()> {
        if self.io.call("truncate")? {
            return self.file.truncate(len);
        }
        Err(b2nd_core::Error::new(
            b2nd_core::ErrorKind::FileWrite,
            "truncate: killed",
        ))
    }
    fn size(&mut self) -> Result<u64> {
        self.file.size()
    }
    fn sync(&mut self) -> Result<()> {
        if self.io.call("sync")? {
            return self.file.sync();
        }
        Err(b2nd_core::Error::new(b2nd_core::ErrorKind::FileWrite, "sync: killed"))
    }
}

/// The faulty file system; `rename` false makes it a backend that cannot
/// rename (as C `blosc2_io_cb` backends).
struct FaultyIo(Arc<Faulty>, bool);

impl Io for FaultyIo {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn IoFile>> {
        if mode == OpenMode::Create && self.0.dead.load(Ordering::SeqCst) {
            return Err(b2nd_core::Error::new(
                b2nd_core::ErrorKind::FileOpen,
                "writer is dead",
            ));
        }
        Ok(Box::new(FaultyFile {
            file: StdIo.open(path, mode)?,
            io: self.0.clone(),
        }))
    }
    fn remove(&self, path: &Path) -> Result<()> {
        if self.0.call("remove")? {
            return StdIo.remove(path);
        }
        Err(b2nd_core::Error::new(
            b2nd_core::ErrorKind::FileWrite,
            "remove: killed",
        ))
    }
    fn create_dir(&self, path: &Path) -> Result<()> {
        StdIo.create_dir(path)
    }
    fn can_rename(&self) -> bool {
        self.1
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        assert!(self.1, "rename called on a backend that cannot rename");
        if self.0.call("rename")? {
            return StdIo.rename(from, to);
        }
        Err(b2nd_core::Error::new(
            b2nd_core::ErrorKind::FileWrite,
            "rename: killed",
        ))
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        if self.0.call("sync_dir")? {
            return StdIo.sync_dir(dir);
        }
        Err(b2nd_core::Error::new(
            b2nd_core::ErrorKind::FileWrite,
            "sync_dir: killed",
        ))
    }
}

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 4096,
        clevel: 5,
        ..CParams::default()
    }
}

/// 16 KiB of data whose compressed size depends on `k`, with pages of
/// noise so that chunks span several pages.
fn input(k: u32) -> Vec<u8> {
    let mut x = 0x9E37_79B9u32 ^ k;
    (0..4096u32)
        .flat_map(|i| {
            if (i / 512 + k) % 2 == 0 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x.to_le_bytes()
            } else {
                (i / 8 + k).to_le_bytes()
            }
        })
        .collect()
}

/// What a frame holds: each chunk decompressed, the metalayers and the
/// vlmetalayers.
#[derive(Debug, PartialEq, Clone)]
struct Contents {
    chunks: Vec<Vec<u8>>,
    meta: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn contents(s: &mut SChunk) -> Result<Contents> {
    let mut chunks = Vec::new();
    for i in 0..s.nchunks() {
        let c = s.get_chunk(i)?.into_owned();
        let mut out = vec![0u8; 16384];
        let n = b2nd_core::chunk::decompress(&c, &mut out)?;
        out.truncate(n);
        chunks.push(out);
    }
    let mut meta = Vec::new();
    for name in s.meta_names() {
        let v = s.meta_get(&name)?;
        meta.push((name, v));
    }
    let mut vlmeta = Vec::new();
    for name in s.vlmeta_names() {
        let v = s.vlmeta_get(&name)?;
        vlmeta.push((name, v));
    }
    Ok(Contents {
        chunks,
        meta,
        vlmeta,
    })
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2nd-crash-faults-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
}

fn copy_tree(from: &Path, to: &Path) {
    remove(to);
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

/// A frame to edit: `n` chunks, a metalayer and a vlmetalayer.
struct Setup {
    sparse: bool,
    chunks: u32,
    /// Bytes before the frame in its file (a frame at an offset).
    offset: u64,
    /// Bytes after the frame in its file (another frame when `offset` is
    /// 0, as `SChunk::append_file` leaves; other bytes otherwise).
    after: usize,
}

/// The bytes that follow the frame of `setup`.
fn after_bytes(setup: &Setup) -> Vec<u8> {
    if setup.after == 0 {
        return Vec::new();
    }
    if setup.offset == 0 {
        let mut s = SChunk::new(Storage {
            contiguous: true,
            cparams: cparams(),
            ..Storage::default()
        })
        .unwrap();
        s.append_buffer(&input(55)).unwrap();
        return s.to_buffer().unwrap();
    }
    (0..setup.after).map(|i| (i * 7 % 251) as u8).collect()
}

fn make(setup: &Setup, path: &Path) {
    remove(path);
    if setup.offset > 0 || setup.after > 0 {
        let mut s = SChunk::new(Storage {
            contiguous: true,
            cparams: cparams(),
            ..Storage::default()
        })
        .unwrap();
        s.meta_add("m", b"meta-0").unwrap();
        for k in 0..setup.chunks {
            s.append_buffer(&input(k)).unwrap();
        }
        s.vlmeta_add("v", b"vl-0", None).unwrap();
        let mut bytes = vec![0xAB; setup.offset as usize];
        bytes.extend_from_slice(&s.to_buffer().unwrap());
        bytes.extend_from_slice(&after_bytes(setup));
        std::fs::write(path, bytes).unwrap();
        return;
    }
    let mut s = SChunk::new(Storage {
        contiguous: !setup.sparse,
        urlpath: Some(path.to_owned()),
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.meta_add("m", b"meta-0").unwrap();
    for k in 0..setup.chunks {
        s.append_buffer(&input(k)).unwrap();
    }
    s.vlmeta_add("v", b"vl-0", None).unwrap();
}

fn open(path: &Path, offset: u64, io: Option<IoRef>) -> Result<SChunk> {
    SChunk::open_with_io(path, offset, io)
}

type Edit = fn(&mut SChunk) -> Result<()>;

/// Whether the bytes around the frame in `path` are all there: those
/// before it where they were, those after it somewhere after its end.
fn around_kept(setup: &Setup, path: &Path, frame_len: u64) -> bool {
    if setup.sparse {
        return true;
    }
    let bytes = std::fs::read(path).unwrap();
    let start = setup.offset as usize;
    if bytes.len() < start || bytes[..start].iter().any(|&b| b != 0xAB) {
        return false;
    }
    let after = after_bytes(setup);
    if after.is_empty() {
        return true;
    }
    let end = start + frame_len as usize;
    end <= bytes.len() && bytes[end..].windows(after.len()).any(|w| w == &after[..])
}

/// Runs `edit` on a copy of the frame made by `setup` at every fault, and
/// checks what is left. Returns how many write-like calls the edit makes.
fn check(name: &str, setup: Setup, edit: Edit, fsync: bool) -> usize {
    check_with(name, setup, edit, fsync, true)
}

/// [`check`] through a backend that can rename or not.
fn check_with(name: &str, setup: Setup, edit: Edit, fsync: bool, rename: bool) -> usize {
    let d = dir();
    let ext = if setup.sparse { "b2sframe" } else { "b2frame" };
    let base = d.join(format!("{name}-base.{ext}"));
    let work = d.join(format!("{name}-work.{ext}"));
    make(&setup, &base);
    let before = contents(&mut open(&base, setup.offset, None).unwrap()).unwrap();
    b2nd_core::frame::durable::set_fsync(Some(fsync));
    // The edit without faults: the frame after, and the calls it makes.
    copy_tree(&base, &work);
    let counting = Faulty::new(Fault::None);
    let io: IoRef = Arc::new(FaultyIo(counting.clone(), rename));
    {
        let mut s = open(&work, setup.offset, Some(io)).unwrap();
        edit(&mut s).unwrap_or_else(|e| panic!("{name}: the edit fails without faults: {e}"));
    }
    let calls = counting.calls.load(Ordering::SeqCst);
    let after = contents(&mut open(&work, setup.offset, None).unwrap()).unwrap();
    assert!(before != after, "{name}: the edit changes nothing");
    for n in 1..=calls {
        for fault in [Fault::Stop(n), Fault::Torn(n), Fault::Fail(n)] {
            copy_tree(&base, &work);
            let faulty = Faulty::new(fault);
            let io: IoRef = Arc::new(FaultyIo(faulty.clone(), rename));
            let mut s = open(&work, setup.offset, Some(io)).unwrap();
            let r = edit(&mut s);
            let seen = (fault != Fault::Stop(n) && fault != Fault::Torn(n))
                .then(|| contents(&mut s).unwrap());
            drop(s);
            let mut back = open(&work, setup.offset, None).unwrap_or_else(|e| {
                panic!("{name}, {fault:?}, fsync {fsync}: no longer opens: {e}")
            });
            let now = contents(&mut back)
                .unwrap_or_else(|e| panic!("{name}, {fault:?}, fsync {fsync}: chunks fail: {e}"));
            let len = back.frame_len().unwrap();
            assert!(
                around_kept(&setup, &work, len),
                "{name}, {fault:?}, fsync {fsync}: bytes around the frame lost"
            );
            assert!(
                now == before || now == after,
                "{name}, {fault:?}, fsync {fsync}: neither the frame before nor after"
            );
            if r.is_ok() {
                assert!(
                    now == after,
                    "{name}, {fault:?}: success reported, edit missing"
                );
            }
            if let Some(seen) = seen {
                // A full disk: the writer's handle goes on with what the disk holds.
                assert!(
                    seen == now,
                    "{name}, {fault:?}: the handle disagrees with the disk"
                );
            }
        }
    }
    b2nd_core::frame::durable::set_fsync(None);
    remove(&base);
    remove(&work);
    calls
}

fn contiguous(chunks: u32) -> Setup {
    Setup {
        sparse: false,
        chunks,
        offset: 0,
        after: 0,
    }
}

fn sparse(chunks: u32) -> Setup {
    Setup {
        sparse: true,
        chunks,
        offset: 0,
        after: 0,
    }
}

fn append(s: &mut SChunk) -> Result<()> {
    s.append_buffer(&input(100)).map(|_| ())
}

fn update(s: &mut SChunk) -> Result<()> {
    let c = {
        let mut t = SChunk::new(Storage::in_memory(cparams()))?;
        t.append_buffer(&input(101))?;
        t.get_chunk(0)?.into_owned()
    };
    s.update_chunk(1, &c).map(|_| ())
}

fn insert(s: &mut SChunk) -> Result<()> {
    let c = {
        let mut t = SChunk::new(Storage::in_memory(cparams()))?;
        t.append_buffer(&input(102))?;
        t.get_chunk(0)?.into_owned()
    };
    s.insert_chunk(0, &c).map(|_| ())
}

fn delete(s: &mut SChunk) -> Result<()> {
    s.delete_chunk(1).map(|_| ())
}

fn vlmeta_add(s: &mut SChunk) -> Result<()> {
    s.vlmeta_add("w", &input(7)[..3000], None).map(|_| ())
}

fn vlmeta_update(s: &mut SChunk) -> Result<()> {
    s.vlmeta_update("v", b"vl-1 longer than before", None)
        .map(|_| ())
}

fn meta_update(s: &mut SChunk) -> Result<()> {
    s.meta_update("m", b"meta-1").map(|_| ())
}

fn reorder(s: &mut SChunk) -> Result<()> {
    s.reorder_offsets(&[2, 0, 1])
}

/// One call that deletes every chunk (a batch: one publish).
fn delete_all(s: &mut SChunk) -> Result<()> {
    let n = s.nchunks();
    s.delete_chunks((0..n).rev()).map(|_| ())
}

fn fill_special(s: &mut SChunk) -> Result<()> {
    s.fill_special(4096 * 5, Special::Zero, 16384).map(|_| ())
}

#[test]
fn contiguous_appends_survive_every_fault() {
    assert!(check("append", contiguous(3), append, false) > 0);
    check("append-sync", contiguous(3), append, true);
    check("append-first", contiguous(0), append, false);
}

#[test]
fn contiguous_edits_survive_every_fault() {
    check("update", contiguous(3), update, false);
    check("insert", contiguous(3), insert, false);
    check("delete", contiguous(3), delete, false);
    check("delete-all", contiguous(2), delete_all, false);
    check("reorder", contiguous(3), reorder, false);
    check("update-sync", contiguous(3), update, true);
}

#[test]
fn metadata_edits_survive_every_fault() {
    check("vlmeta-add", contiguous(3), vlmeta_add, false);
    check("vlmeta-update", contiguous(3), vlmeta_update, false);
    check("meta-update", contiguous(3), meta_update, false);
    check("vlmeta-add-empty", contiguous(0), vlmeta_add, false);
    check("fill-special", contiguous(0), fill_special, false);
}

#[test]
fn sparse_edits_survive_every_fault() {
    check("sparse-append", sparse(3), append, false);
    check("sparse-update", sparse(3), update, false);
    check("sparse-delete", sparse(3), delete, false);
    check("sparse-vlmeta", sparse(3), vlmeta_update, true);
}

#[test]
fn frames_at_an_offset_survive_every_fault() {
    let at = |chunks| Setup {
        sparse: false,
        chunks,
        offset: 1000,
        after: 0,
    };
    check("offset-append", at(3), append, false);
    check("offset-update", at(3), update, false);
    check("offset-vlmeta", at(3), vlmeta_update, false);
    check("offset-delete", at(3), delete, false);
    check("offset-delete-all", at(2), delete_all, false);
    check("offset-append-first", at(0), append, false);
    check("offset-vlmeta-add-empty", at(0), vlmeta_add, false);
    check("offset-append-sync", at(3), append, true);
}

/// A frame that other bytes follow (inside a larger file, or the first of
/// several frames in one file): every edit writes the whole file anew and
/// renames it over, so neither the frame nor the bytes around it are lost.
#[test]
fn frames_followed_by_other_bytes_survive_every_fault() {
    let inside = |chunks| Setup {
        sparse: false,
        chunks,
        offset: 1000,
        after: 3000,
    };
    let first = |chunks| Setup {
        sparse: false,
        chunks,
        offset: 0,
        after: 1,
    };
    check("inside-append", inside(3), append, false);
    check("inside-update", inside(3), update, false);
    check("inside-delete", inside(3), delete, false);
    check("inside-vlmeta-add", inside(3), vlmeta_add, false);
    check("inside-append-first", inside(0), append, false);
    check("inside-append-sync", inside(3), append, true);
    check("first-append", first(3), append, false);
    check("first-update", first(3), update, false);
    check("first-delete-all", first(2), delete_all, false);
}

/// A backend that cannot rename (a C `blosc2_io_cb` one) gets the ordered
/// writes for every edit of a frame that holds chunks: new bytes in
/// unused space or past the end, then one header write.
#[test]
fn edits_through_a_backend_without_rename_survive_every_fault() {
    let c = contiguous;
    check_with("norename-append", c(3), append, false, false);
    check_with("norename-update", c(3), update, false, false);
    check_with("norename-insert", c(3), insert, false, false);
    check_with("norename-delete", c(3), delete, false, false);
    check_with("norename-reorder", c(3), reorder, false, false);
    check_with("norename-vlmeta-add", c(3), vlmeta_add, false, false);
    check_with("norename-vlmeta-update", c(3), vlmeta_update, false, false);
    check_with("norename-meta-update", c(3), meta_update, false, false);
    check_with("norename-update-sync", c(3), update, true, false);
    let at = Setup {
        sparse: false,
        chunks: 3,
        offset: 1000,
        after: 0,
    };
    check_with("norename-offset-append", at, append, false, false);
}

/// Without rename, compaction is skipped: the unused bytes stay, the file
/// is left as it was and still opens with everything.
#[test]
fn compaction_without_rename_leaves_the_file_as_it_was() {
    let d = dir();
    let path = d.join("norename-compact.b2frame");
    make(&contiguous(6), &path);
    let io: IoRef = Arc::new(FaultyIo(Faulty::new(Fault::None), false));
    let mut s = open(&path, 0, Some(io)).unwrap();
    for _ in 0..4 {
        update(&mut s).unwrap();
        delete(&mut s).unwrap();
    }
    let want = contents(&mut s).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let e = s.compact().unwrap_err();
    assert_eq!(e.code(), b2nd_core::ErrorKind::InvalidParam.code());
    drop(s);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    let mut back = open(&path, 0, None).unwrap();
    assert!(contents(&mut back).unwrap() == want);
    remove(&path);
}

/// Space: appends reuse nothing and leave nothing; a replaced chunk's
/// bytes are reused by the next chunk that fits; compaction gives back
/// the rest, in a file that holds the same frame.
#[test]
fn edits_leave_bounded_space_that_compaction_reclaims() {
    let d = dir();
    let path = d.join("space.b2frame");
    make(&contiguous(0), &path);
    let mut s = open(&path, 0, None).unwrap();
    for k in 0..20 {
        s.append_buffer(&input(k)).unwrap();
    }
    assert_eq!(s.unused_bytes(), 0);
    let live = s.cbytes();
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(
        len,
        s.frame_len().unwrap(),
        "nothing past the frame after appends"
    );
    for _ in 0..10 {
        update(&mut s).unwrap();
    }
    // Ten updates of one chunk leave at most two copies' worth unused.
    let one = {
        let c = s.get_chunk(1).unwrap();
        c.len() as u64
    };
    assert!(s.unused_bytes() <= 2 * one, "{} unused", s.unused_bytes());
    let want = contents(&mut s).unwrap();
    delete(&mut s).unwrap();
    let want_after = contents(&mut s).unwrap();
    assert!(want != want_after);
    // A delete that frees more than 4 KiB and a sixteenth of the frame is
    // compacted at once (SChunk::reclaim_if_worth); otherwise it leaves
    // its bytes for compaction.
    let unused = s.unused_bytes();
    assert!(unused > 0 || std::fs::metadata(&path).unwrap().len() == s.frame_len().unwrap());
    let saved = s.compact().unwrap();
    assert_eq!(saved, unused);
    assert_eq!(s.unused_bytes(), 0);
    assert!(s.cbytes() < live + one as i64);
    assert!(contents(&mut s).unwrap() == want_after);
    let mut back = open(&path, 0, None).unwrap();
    assert!(contents(&mut back).unwrap() == want_after);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        back.frame_len().unwrap()
    );
    // A frame at an offset is not compacted (its file holds other bytes).
    let at = d.join("space-at.b2frame");
    make(
        &Setup {
            sparse: false,
            chunks: 2,
            offset: 10,
            after: 0,
        },
        &at,
    );
    let e = open(&at, 10, None).unwrap().compact().unwrap_err();
    assert_eq!(e.code(), b2nd_core::ErrorKind::InvalidParam.code());
    remove(&path);
    remove(&at);
}

// ----- b2nd arrays: one publish per call -----

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};

/// What a file array holds: its shape and all its items.
type Items = (Vec<i64>, Vec<u8>);

fn items(a: &NdArray) -> Result<Items> {
    Ok((a.shape().to_vec(), a.to_vec()?))
}

/// The array at `path`, opened through `io`: its super-chunk must open and
/// describe an array whose chunks its metalayer accounts for.
fn open_array(path: &Path, io: Option<IoRef>) -> Result<NdArray> {
    NdArray::from_schunk(open(path, 0, io)?)
}

/// Items of `n` bytes whose compressed size varies along the array, so
/// that chunks differ in size and span pages.
fn array_bytes(n: usize, k: u32) -> Vec<u8> {
    input(k).into_iter().cycle().take(n).collect()
}

/// A file array of 24 x 20 items of 4 bytes in chunks of 8 x 8 (9 chunks,
/// those of the last column partial) and blocks of 4 x 8.
fn make_array(path: &Path, sparse: bool) {
    remove(path);
    let storage = Storage {
        contiguous: !sparse,
        urlpath: Some(path.to_owned()),
        cparams: cparams(),
        ..Storage::default()
    };
    let ctx = Context::new(
        ArrayStorage::Schunk(storage),
        4,
        &[24, 20],
        &[8, 8],
        &[4, 8],
        Some("<u4"),
        0,
        vec![],
    )
    .unwrap();
    NdArray::from_cbuffer(&ctx, &array_bytes(24 * 20 * 4, 3)).unwrap();
}

type ArrayEdit = fn(&mut NdArray) -> Result<()>;

/// [`check`] for a call on a file array: after every fault the file opens
/// as an array equal (shape and items) to the one before or the one after.
fn check_array(name: &str, sparse: bool, edit: ArrayEdit, fsync: bool) -> usize {
    let d = dir();
    let ext = if sparse { "b2nd.d" } else { "b2nd" };
    let base = d.join(format!("{name}-base.{ext}"));
    let work = d.join(format!("{name}-work.{ext}"));
    make_array(&base, sparse);
    let before = items(&open_array(&base, None).unwrap()).unwrap();
    b2nd_core::frame::durable::set_fsync(Some(fsync));
    copy_tree(&base, &work);
    let counting = Faulty::new(Fault::None);
    let io: IoRef = Arc::new(FaultyIo(counting.clone(), true));
    {
        let mut a = open_array(&work, Some(io)).unwrap();
        edit(&mut a).unwrap_or_else(|e| panic!("{name}: the edit fails without faults: {e}"));
    }
    let calls = counting.calls.load(Ordering::SeqCst);
    let after = items(&open_array(&work, None).unwrap()).unwrap();
    assert!(before != after, "{name}: the edit changes nothing");
    for n in 1..=calls {
        for fault in [Fault::Stop(n), Fault::Torn(n), Fault::Fail(n)] {
            copy_tree(&base, &work);
            let io: IoRef = Arc::new(FaultyIo(Faulty::new(fault), true));
            let mut a = open_array(&work, Some(io)).unwrap();
            let r = edit(&mut a);
            let seen = matches!(fault, Fault::Fail(_)).then(|| items(&a).unwrap());
            drop(a);
            let what = format!("{name}, {fault:?}, fsync {fsync}");
            let back = open_array(&work, None)
                .unwrap_or_else(|e| panic!("{what}: no longer opens as an array: {e}"));
            let now = items(&back).unwrap_or_else(|e| panic!("{what}: items fail: {e}"));
            assert!(
                now == before || now == after,
                "{what}: neither the array before nor after (shape {:?})",
                now.0
            );
            if r.is_ok() {
                assert!(now == after, "{what}: success reported, change missing");
            }
            if let Some(seen) = seen {
                // A full disk: the handle goes on with what the disk holds.
                assert!(seen == now, "{what}: the handle disagrees with the disk");
            }
        }
    }
    b2nd_core::frame::durable::set_fsync(None);
    remove(&base);
    remove(&work);
    calls
}

/// Rows 4..20 and columns 2..18: parts of all nine chunks.
fn set_slice(a: &mut NdArray) -> Result<()> {
    a.set_slice_cbuffer(&array_bytes(16 * 16 * 4, 9), &[16, 16], &[4, 2], &[20, 18])
}

fn grow(a: &mut NdArray) -> Result<()> {
    a.resize(&[30, 28], None)
}

fn shrink(a: &mut NdArray) -> Result<()> {
    a.resize(&[12, 12], None)
}

/// A chunk row of zeros inserted in the middle.
fn grow_inside(a: &mut NdArray) -> Result<()> {
    a.resize(&[32, 20], Some(&[8, 0]))
}

/// Five rows: room (a resize) and data, which a file must get together.
fn append_rows(a: &mut NdArray) -> Result<()> {
    a.append(&array_bytes(5 * 20 * 4, 11), 0)
}

/// Eight columns at column 8, across every chunk row.
fn insert_columns(a: &mut NdArray) -> Result<()> {
    a.insert(&array_bytes(24 * 8 * 4, 12), 1, 8)
}

fn delete_rows(a: &mut NdArray) -> Result<()> {
    a.delete(0, 8, 8)
}

#[test]
fn array_writes_survive_every_fault() {
    assert!(check_array("nd-set-slice", false, set_slice, false) > 0);
    check_array("nd-grow", false, grow, false);
    check_array("nd-shrink", false, shrink, false);
    check_array("nd-grow-inside", false, grow_inside, false);
    check_array("nd-append", false, append_rows, false);
    check_array("nd-insert", false, insert_columns, false);
    check_array("nd-delete", false, delete_rows, false);
    check_array("nd-append-sync", false, append_rows, true);
}

#[test]
fn sparse_array_writes_survive_every_fault() {
    check_array("nd-sparse-set-slice", true, set_slice, false);
    check_array("nd-sparse-append", true, append_rows, false);
}

// ----- copies to a file -----

/// Runs `copy` from the frame file `src` to `target` through a faulty
/// backend at every fault: the target must then be absent or open whole,
/// as `equal` judges against the source. Returns the calls made.
fn check_copy(
    name: &str,
    src: &Path,
    copy: fn(&Path, &Path, IoRef) -> Result<()>,
    equal: fn(&Path, &Path) -> bool,
) -> usize {
    let target = dir().join(format!("{name}-target.b2frame"));
    remove(&target);
    let counting = Faulty::new(Fault::None);
    copy(src, &target, Arc::new(FaultyIo(counting.clone(), true)))
        .unwrap_or_else(|e| panic!("{name}: the copy fails without faults: {e}"));
    assert!(equal(src, &target), "{name}: the copy differs");
    let calls = counting.calls.load(Ordering::SeqCst);
    for n in 1..=calls {
        for fault in [Fault::Stop(n), Fault::Torn(n), Fault::Fail(n)] {
            remove(&target);
            let r = copy(src, &target, Arc::new(FaultyIo(Faulty::new(fault), true)));
            let what = format!("{name}, {fault:?}");
            if target.exists() {
                assert!(
                    equal(src, &target),
                    "{what}: the target is there, not whole"
                );
            } else {
                assert!(r.is_err(), "{what}: success reported, no target");
            }
        }
    }
    remove(&target);
    calls
}

#[test]
fn copies_to_a_file_leave_it_absent_or_whole() {
    let d = dir();
    let src = d.join("copy-src.b2frame");
    make(&contiguous(4), &src);
    let schunk_copy = |src: &Path, to: &Path, io: IoRef| {
        open(src, 0, None)?
            .copy(Storage {
                contiguous: true,
                urlpath: Some(to.to_owned()),
                io: Some(io),
                ..Storage::default()
            })
            .map(|_| ())
    };
    let same_frame = |a: &Path, b: &Path| {
        let mut x = open(a, 0, None).unwrap();
        open(b, 0, None).is_ok_and(|mut y| contents(&mut y).unwrap() == contents(&mut x).unwrap())
    };
    assert!(check_copy("copy-schunk", &src, schunk_copy, same_frame) > 0);
    let arr = d.join("copy-src.b2nd");
    make_array(&arr, false);
    let array_copy = |src: &Path, to: &Path, io: IoRef| {
        open_array(src, None)?
            .copy_to(Storage {
                contiguous: true,
                urlpath: Some(to.to_owned()),
                io: Some(io),
                ..Storage::default()
            })
            .map(|_| ())
    };
    let same_array = |a: &Path, b: &Path| {
        let x = items(&open_array(a, None).unwrap()).unwrap();
        open_array(b, None).is_ok_and(|y| items(&y).unwrap() == x)
    };
    check_copy("copy-array", &arr, array_copy, same_array);
    remove(&src);
    remove(&arr);
}
