//! Tests of the frame store: edits in memory and on disk, compressed
//! indexes, shared chunks, sparse chunk files.

use super::super::index::KEEP_COMPRESSED_ABOVE;
use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub(super) fn chunk(k: i64) -> Vec<u8> {
    // Any valid chunk will do: an offsets index is one.
    codec::compress_offsets(&[k, k + 1, k + 2]).unwrap()
}

fn memory_frame(n: i64) -> Frame {
    let mut h = FrameHeader::new(FrameType::Contiguous);
    let mut f = Frame::create(Place::Memory(MemFile::default()), &h, &[]).unwrap();
    for k in 0..n {
        f.insert(k as usize, &chunk(k), None).unwrap();
    }
    h.nbytes = 24 * n;
    h.chunksize = 24;
    h.typesize = 8;
    f.flush(&h, &[]).unwrap();
    f
}

pub(super) fn reopen(f: Frame) -> Result<Frame> {
    let bytes = f.into_memory().unwrap();
    Frame::open(Place::Memory(MemFile { data: bytes })).map(|(f, _, _)| f)
}

#[test]
fn chunks_round_trip_in_memory() {
    let f = reopen(memory_frame(3)).unwrap();
    assert_eq!(f.nchunks(), 3);
    for k in 0..3 {
        match f.chunk(k).unwrap() {
            FrameChunk::Bytes(b) => assert_eq!(&b[..], &chunk(k as i64)[..]),
            FrameChunk::Special(_) => panic!("chunk {k} should be stored"),
        }
    }
}

#[test]
fn offsets_past_the_end_are_rejected_at_open() {
    let h = {
        let mut h = FrameHeader::new(FrameType::Contiguous);
        h.nbytes = 48;
        h.chunksize = 24;
        h.typesize = 8;
        h
    };
    for bad in [10_000i64, -1, 0x8300_0000_0000_0000u64 as i64] {
        let mut f = memory_frame(2);
        f.offsets.entries_mut().unwrap()[1] = bad;
        f.flush(&h, &[]).unwrap();
        let e = reopen(f).err().expect("corrupt offset accepted");
        assert!(e.code() < 0, "{e}");
    }
}

#[test]
fn shared_offsets_are_not_compacted_twice() {
    let mut f = memory_frame(2);
    let first = f.offsets.get(0).unwrap();
    f.offsets.entries_mut().unwrap()[1] = first;
    let len = f.data_len();
    f.delete(1).unwrap();
    assert_eq!(f.data_len(), len, "bytes still used by chunk 0 must stay");
    f.delete(0).unwrap();
    assert!(f.data_len() < len);
}

/// A chunk nested inside another (only a corrupt frame has one) keeps
/// its bytes when the other is replaced or removed, and the other keeps
/// its bytes when the nested one is removed: the data section is left as
/// it is, as the reference leaves it. Before, the compaction moved the
/// bytes after the dropped chunk over it, so the nested chunk's offset
/// fell before the data section and the frame no longer opened (found
/// by the frame_edit fuzz body). A frame whose chunks do not overlap is
/// still compacted.
#[test]
fn nested_chunks_keep_their_bytes_through_edits() {
    let plain = crate::chunk::CParams {
        typesize: 1,
        clevel: 0,
        ..crate::chunk::CParams::default()
    };
    let store = |src: &[u8]| {
        let mut dst = vec![0u8; src.len() + 64];
        let n = crate::chunk::compress(&plain, src, &mut dst).unwrap();
        dst.truncate(n);
        dst
    };
    let inner = store(&(0..500u32).map(|x| (x * 7) as u8).collect::<Vec<_>>());
    let outer = store(&inner);
    let bytes = |f: &mut Frame, k: usize| match f.chunk(k).unwrap() {
        FrameChunk::Bytes(b) => b.into_owned(),
        FrameChunk::Special(_) => panic!("chunk {k} should be stored"),
    };
    // Chunks: 0 the outer one, 1 another, 2 the inner one inside 0.
    let nested = || {
        let mut h = FrameHeader::new(FrameType::Contiguous);
        let mut f = Frame::create(Place::Memory(MemFile::default()), &h, &[]).unwrap();
        f.insert(0, &outer, None).unwrap();
        f.insert(1, &chunk(5), None).unwrap();
        let at = f.offsets.get(0).unwrap() + EXTENDED_HEADER_LEN as i64;
        f.entries_mut().unwrap().push(at);
        h.nbytes = 1;
        h.chunksize = 0;
        f.flush(&h, &[]).unwrap();
        let mut f = reopen(f).unwrap();
        assert_eq!(bytes(&mut f, 2), inner);
        (f, h)
    };
    for (edit, kept) in [("update 0", 2), ("delete 0", 1), ("delete 2", 0)] {
        let (mut f, h) = nested();
        let len = f.data_len();
        match edit {
            "update 0" => f.update(0, &chunk(9), None).unwrap(),
            "delete 0" => f.delete(0).unwrap(),
            _ => f.delete(2).unwrap(),
        }
        assert!(f.data_len() >= len, "{edit}: the data section shrank");
        f.flush(&h, &[]).unwrap();
        let mut f = reopen(f).unwrap_or_else(|e| panic!("{edit}: {e}"));
        let want = if kept == 0 { &outer } else { &inner };
        assert_eq!(&bytes(&mut f, kept), want, "{edit}: chunk {kept}");
    }
    // The same chunks side by side: removing one compacts.
    let (mut f, _) = nested();
    *f.entries_mut().unwrap().last_mut().unwrap() = f.offsets.get(1).unwrap();
    f.layout = ChunkLayout::Unchecked;
    let len = f.data_len();
    f.delete(0).unwrap();
    assert_eq!(f.data_len(), len - outer.len() as u64);
}

/// A frame with an index over `KEEP_COMPRESSED_ABOVE` bytes keeps it
/// compressed on open, reads every chunk through it in any order,
/// writes it back unchanged, and expands it on a change.
#[test]
fn a_large_index_stays_compressed_and_reads_like_its_entries() {
    let n = KEEP_COMPRESSED_ABOVE / 8 + 3000;
    let f = memory_frame(n as i64);
    let want = f.offsets.to_vec().unwrap();
    let bytes = f.into_memory().unwrap();
    let (mut f, header, vlmeta) = Frame::open(Place::Memory(MemFile {
        data: bytes.clone(),
    }))
    .unwrap();
    let OffsetIndex::Compressed(c) = &f.offsets else {
        panic!("index of {n} entries decoded on open");
    };
    assert!(c.chunk().len() < n, "{} bytes kept", c.chunk().len());
    assert_eq!(f.offsets.to_vec().unwrap(), want);
    let mut seen = Vec::new();
    f.offsets
        .visit(|i, o| {
            assert_eq!(i, seen.len());
            seen.push(o);
            Ok(())
        })
        .unwrap();
    assert_eq!(seen, want);
    for k in [0, n - 1, 2047, 2048, 1, n / 2, 2047, n - 1] {
        assert_eq!(f.offsets.get(k), Some(want[k]), "entry {k}");
        match f.chunk(k).unwrap() {
            FrameChunk::Bytes(b) => assert_eq!(&b[..], &chunk(k as i64)[..], "chunk {k}"),
            FrameChunk::Special(_) => panic!("chunk {k} should be stored"),
        }
    }
    assert_eq!(f.offsets.get(n), None);
    f.flush(&header, &vlmeta).unwrap();
    assert!(matches!(f.offsets, OffsetIndex::Compressed(_)));
    assert!(f.into_memory().unwrap() == bytes, "flush changed the frame");

    let (mut f, _, _) = Frame::open(Place::Memory(MemFile { data: bytes })).unwrap();
    f.delete(0).unwrap();
    // The dropped chunk's bytes go, and the entries after it move down,
    // when the frame is written.
    f.flush(&header, &vlmeta).unwrap();
    assert_eq!(
        f.offsets,
        OffsetIndex::Entries(
            want[1..]
                .iter()
                .map(|&o| o - chunk(0).len() as i64)
                .collect()
        )
    );
}

/// A compressed index is not walked on open, where that took time in
/// proportion to the chunks it declares: a bad entry or a block that
/// does not decode opens, as in the reference, and is refused where it
/// is read and when the index is expanded for a change, which then
/// leaves the frame as it was.
#[test]
fn a_compressed_index_is_checked_where_it_is_read() {
    let n = KEEP_COMPRESSED_ABOVE / 8 + 10;
    let mut h = FrameHeader::new(FrameType::Contiguous);
    h.nbytes = 24 * n as i64;
    h.chunksize = 24;
    h.typesize = 8;
    let read = |f: &mut Frame, k: usize| match f.chunk(k) {
        Ok(FrameChunk::Bytes(b)) => Ok(b[..] == chunk(k as i64)[..]),
        Ok(FrameChunk::Special(_)) => Ok(false),
        Err(e) => Err(e.code()),
    };
    // A bad entry near the end: an offset past the data section, and
    // one that is no offset at all.
    let bad = n - 5;
    for entry in [1i64 << 40, -1] {
        let mut f = memory_frame(n as i64);
        f.offsets.entries_mut().unwrap()[bad] = entry;
        f.flush(&h, &[]).unwrap();
        let mut f = reopen(f).expect("a bad entry of a compressed index refused on open");
        assert!(matches!(f.offsets, OffsetIndex::Compressed(_)));
        for k in [0, bad - 1, bad + 1, n - 1] {
            assert_eq!(read(&mut f, k), Ok(true), "entry {entry}, chunk {k}");
        }
        assert!(
            read(&mut f, bad).is_err_and(|c| c < 0),
            "entry {entry} read"
        );
        assert!(
            f.delete(0).is_err_and(|e| e.code() < 0),
            "entry {entry} expanded"
        );
        assert!(matches!(f.offsets, OffsetIndex::Compressed(_)));
        assert_eq!(
            read(&mut f, 0),
            Ok(true),
            "entry {entry}: chunk 0 after the refusal"
        );
    }
    // The index's last block made unreadable: its first stream starts
    // past the end of the index chunk.
    let f = memory_frame(n as i64);
    let at = (f.header_len + f.data_len()) as usize;
    let mut bytes = f.into_memory().unwrap();
    let info = ChunkInfo::parse(&bytes[at..]).unwrap();
    assert!(!info.memcpyed && info.special == 0, "{info:?}");
    let nblocks = (info.nbytes as usize).div_ceil(info.blocksize as usize);
    assert!(nblocks > 1, "{info:?}");
    let last = at + EXTENDED_HEADER_LEN + 4 * (nblocks - 1);
    bytes[last..last + 4].copy_from_slice(&(info.cbytes + 1).to_le_bytes());
    let mut f = Frame::open(Place::Memory(MemFile { data: bytes }))
        .expect("a bad block of a compressed index refused on open")
        .0;
    let per_block = info.blocksize as usize / 8;
    assert_eq!(read(&mut f, 0), Ok(true));
    assert_eq!(read(&mut f, (nblocks - 1) * per_block - 1), Ok(true));
    assert!(read(&mut f, (nblocks - 1) * per_block).is_err_and(|c| c < 0));
    assert!(read(&mut f, n - 1).is_err_and(|c| c < 0));
    assert!(f.delete(0).is_err_and(|e| e.code() < 0));
    assert_eq!(read(&mut f, 0), Ok(true), "chunk 0 after the refusal");
}

/// Replacing a sparse chunk writes a new chunk file (the reference
/// rewrites the file in place, which a crash could leave half-written
/// while the index still reads it); the old file is removed once the
/// new index is published, unless other chunks read it too (only a
/// corrupt index shares one: found by the sparse_edit fuzz body).
#[test]
fn a_shared_sparse_chunk_file_outlives_an_update() {
    let dir = std::env::temp_dir().join(format!("b2nd-store-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let place = || Place::Sparse {
        io: crate::frame::StdIo::shared(),
        dir: dir.clone(),
    };
    let stored = |f: &mut Frame, k: usize| match f.chunk(k).unwrap() {
        FrameChunk::Bytes(b) => b.into_owned(),
        FrameChunk::Special(_) => panic!("chunk {k} should be stored"),
    };
    let mut h = FrameHeader::new(FrameType::Sparse);
    let mut f = Frame::create(place(), &h, &[]).unwrap();
    f.insert(0, &chunk(1), None).unwrap();
    f.insert(1, &chunk(2), None).unwrap();
    let first = f.offsets.get(0).unwrap();
    f.entries_mut().unwrap().push(first);
    h.nbytes = 72;
    h.chunksize = 24;
    h.typesize = 8;
    f.flush(&h, &[]).unwrap();
    let file = |id: i64| sparse_chunk_path(&dir, id).unwrap().exists();
    // Chunk 1 reads a file of its own: a new one, the old removed after
    // the flush.
    f.update(1, &chunk(8), None).unwrap();
    assert_eq!(f.offsets.get(1).unwrap(), 2, "chunk 1 gets a new file");
    assert!(file(1), "removed before the index that drops it");
    f.flush(&h, &[]).unwrap();
    assert!(!file(1), "left after the index that drops it");
    // Chunks 0 and 2 share file 0: chunk 0 moves to a new file, file 0 stays.
    f.update(0, &chunk(9), None).unwrap();
    assert_eq!(f.offsets.get(0).unwrap(), 3, "chunk 0 gets a new file");
    f.flush(&h, &[]).unwrap();
    assert!(file(0), "the file chunk 2 still reads");
    drop(f);
    let (mut f, _, _) = Frame::open(place()).unwrap();
    assert_eq!(stored(&mut f, 0), chunk(9));
    assert_eq!(stored(&mut f, 1), chunk(8));
    assert_eq!(stored(&mut f, 2), chunk(1), "the chunk sharing the file");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The local file system, counting the files open and every open, and
/// keeping files open between operations or not as told.
struct Counting {
    keep: bool,
    open: Arc<AtomicUsize>,
    opens: Arc<Mutex<Vec<OpenMode>>>,
}

struct CountedFile {
    file: Box<dyn IoFile>,
    open: Arc<AtomicUsize>,
}

impl Drop for CountedFile {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }
}

impl IoFile for CountedFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        self.file.read_at(pos, buf)
    }
    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        self.file.write_at(pos, data)
    }
    fn truncate(&mut self, len: u64) -> Result<()> {
        self.file.truncate(len)
    }
    fn size(&mut self) -> Result<u64> {
        self.file.size()
    }
}

impl crate::frame::Io for Counting {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn IoFile>> {
        let file = crate::frame::StdIo.open(path, mode)?;
        self.open.fetch_add(1, Ordering::SeqCst);
        self.opens.lock().unwrap().push(mode);
        Ok(Box::new(CountedFile {
            file,
            open: Arc::clone(&self.open),
        }))
    }
    fn remove(&self, path: &Path) -> Result<()> {
        crate::frame::StdIo.remove(path)
    }
    fn create_dir(&self, path: &Path) -> Result<()> {
        crate::frame::StdIo.create_dir(path)
    }
    fn keeps_files_open(&self) -> bool {
        self.keep
    }
}

/// A backend that does not keep files open has none open between two
/// operations of a frame, contiguous or sparse, and gets each opened in
/// the reference's modes: "wb" to create, "rb+" to write, "rb" to read;
/// one that keeps them has the frame's file open from the first
/// operation on. Both read back what they wrote.
#[test]
fn files_are_kept_open_between_operations_only_when_the_backend_says_so() {
    let dir = std::env::temp_dir().join(format!("b2nd-store-ops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (keep, sparse) in [(false, false), (false, true), (true, false), (true, true)] {
        let open = Arc::new(AtomicUsize::new(0));
        let opens = Arc::new(Mutex::new(Vec::new()));
        let io: IoRef = Arc::new(Counting {
            keep,
            open: Arc::clone(&open),
            opens: Arc::clone(&opens),
        });
        let path = dir.join(format!("f-{keep}-{sparse}.b2frame"));
        let place = || match sparse {
            false => Place::File {
                io: io.clone(),
                path: path.clone(),
                offset: 0,
            },
            true => Place::Sparse {
                io: io.clone(),
                dir: path.clone(),
            },
        };
        let kind = if sparse {
            FrameType::Sparse
        } else {
            FrameType::Contiguous
        };
        let mut h = FrameHeader::new(kind);
        let case = format!("keep {keep}, sparse {sparse}");
        let between = |what: &str| {
            let n = open.load(Ordering::SeqCst);
            assert_eq!(n, usize::from(keep), "{case}: files open after {what}");
        };
        let mut f = Frame::create(place(), &h, &[]).unwrap();
        between("create");
        for k in 0..3 {
            f.insert(k, &chunk(k as i64), None).unwrap();
            between("insert");
        }
        h.nbytes = 72;
        h.chunksize = 24;
        h.typesize = 8;
        f.flush(&h, &[]).unwrap();
        between("flush");
        f.update(1, &chunk(7), None).unwrap();
        f.flush(&h, &[]).unwrap();
        between("update");
        drop(f);
        assert_eq!(open.load(Ordering::SeqCst), 0, "{case}: open after drop");
        let (mut f, _, _) = Frame::open(place()).unwrap();
        between("open");
        for (k, want) in [chunk(0), chunk(7), chunk(2)].iter().enumerate() {
            match f.chunk(k).unwrap() {
                FrameChunk::Bytes(b) => assert_eq!(&b[..], &want[..], "{case}: chunk {k}"),
                FrameChunk::Special(_) => panic!("{case}: chunk {k} should be stored"),
            }
            between("chunk");
        }
        let mut first = [0u8; 4];
        f.read_stored(0, 0, &mut first).unwrap();
        between("read_stored");
        assert!(f.to_bytes().unwrap().len() > 32);
        between("to_bytes");
        drop(f);
        let opens = opens.lock().unwrap();
        assert_eq!(opens[0], OpenMode::Create, "{case}");
        if !keep {
            // A frame file is written through "rb+" after its creation,
            // and read through "rb" once reopened.
            let index_opens: Vec<_> = opens.iter().filter(|m| **m != OpenMode::Create).collect();
            assert!(
                index_opens.contains(&&OpenMode::ReadWrite),
                "{case}: {opens:?}"
            );
            assert!(index_opens.contains(&&OpenMode::Read), "{case}: {opens:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sparse_chunk_names() {
    let p = sparse_chunk_path(Path::new("/d"), 15).unwrap();
    assert_eq!(p, Path::new("/d/0000000F.chunk"));
    assert!(sparse_chunk_path(Path::new("/d"), 1 << 40).is_err());
}
