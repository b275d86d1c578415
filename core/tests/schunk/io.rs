//! I/O done by super-chunks on frame files: the bytes written match an
//! in-memory frame built by the same calls, the file is a valid frame after
//! every append, an append writes only the new chunk plus the small
//! metadata, and reading a chunk fetches its stored bytes exactly once
//! (also when chunks of different sizes are read one after another through
//! the frame's reused read buffer). An array resize that adds or removes
//! hundreds of chunks writes the frame's metadata once, not once per chunk,
//! and deleting many stored chunks at once moves the data after them once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use b2nd_core::frame::{Io, IoFile, OpenMode, StdIo};
use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{CParams, SChunk, Storage};

fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("b2nd-schunkio-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 4096,
        clevel: 5,
        ..CParams::default()
    }
}

/// Chunk inputs of 64 KiB whose compressed sizes differ a lot: smooth,
/// pseudo-random, all zeros.
fn input(k: u32) -> Vec<u8> {
    let n = 16 * 1024u32;
    match k % 3 {
        0 => (0..n).flat_map(|i| (i / 16 + k).to_le_bytes()).collect(),
        1 => {
            let mut x = 0x9E37_79B9u32 ^ k;
            (0..n)
                .flat_map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x.to_le_bytes()
                })
                .collect()
        }
        _ => vec![0u8; (n * 4) as usize],
    }
}

/// Counts bytes read and written through the I/O trait.
#[derive(Default)]
struct Counts {
    read: AtomicU64,
    written: AtomicU64,
    opened: AtomicU64,
}

struct CountingIo(Arc<Counts>);

struct CountingFile {
    inner: Box<dyn IoFile>,
    counts: Arc<Counts>,
}

impl IoFile for CountingFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> b2nd_core::Result<usize> {
        let n = self.inner.read_at(pos, buf)?;
        self.counts.read.fetch_add(n as u64, Ordering::SeqCst);
        Ok(n)
    }
    fn write_at(&mut self, pos: u64, data: &[u8]) -> b2nd_core::Result<()> {
        self.counts
            .written
            .fetch_add(data.len() as u64, Ordering::SeqCst);
        self.inner.write_at(pos, data)
    }
    fn truncate(&mut self, len: u64) -> b2nd_core::Result<()> {
        self.inner.truncate(len)
    }
    fn size(&mut self) -> b2nd_core::Result<u64> {
        self.inner.size()
    }
}

impl Io for CountingIo {
    fn open(&self, path: &Path, mode: OpenMode) -> b2nd_core::Result<Box<dyn IoFile>> {
        self.0.opened.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(CountingFile {
            inner: StdIo.open(path, mode)?,
            counts: self.0.clone(),
        }))
    }
    fn remove(&self, path: &Path) -> b2nd_core::Result<()> {
        StdIo.remove(path)
    }
    fn create_dir(&self, path: &Path) -> b2nd_core::Result<()> {
        StdIo.create_dir(path)
    }
}

/// A new contiguous frame file at `path` whose I/O is counted.
fn counted_frame(path: &Path) -> (Arc<Counts>, SChunk) {
    let counts = Arc::new(Counts::default());
    let io: Arc<dyn Io> = Arc::new(CountingIo(counts.clone()));
    let s = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.to_path_buf()),
        cparams: cparams(),
        io: Some(io),
        ..Storage::default()
    })
    .unwrap();
    (counts, s)
}

#[test]
fn file_frame_bytes_equal_memory_frame_and_stay_valid_after_each_append() {
    let path = scratch("same.b2frame");
    let mut file = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    let mut mem = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    for k in 0..7u32 {
        let src = input(k);
        assert_eq!(file.append_buffer(&src).unwrap(), i64::from(k) + 1);
        assert_eq!(mem.append_buffer(&src).unwrap(), i64::from(k) + 1);
        // Another handle sees a complete frame holding every chunk so far.
        let back = SChunk::open(&path).unwrap();
        assert_eq!(back.nchunks(), i64::from(k) + 1);
        let mut out = vec![0u8; src.len()];
        assert_eq!(
            back.decompress_chunk(i64::from(k), &mut out).unwrap(),
            src.len()
        );
        assert_eq!(out, src, "chunk {k} read back from the file");
        assert_eq!(std::fs::read(&path).unwrap(), mem.to_buffer().unwrap());
    }
    // A short last chunk too.
    let tail = &input(0)[..1000];
    file.append_buffer(tail).unwrap();
    mem.append_buffer(tail).unwrap();
    assert_eq!(file.cbytes(), mem.cbytes());
    assert_eq!(file.nbytes(), mem.nbytes());
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), mem.to_buffer().unwrap());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn append_writes_the_chunk_and_only_small_metadata() {
    let path = scratch("writes.b2frame");
    let (counts, mut s) = counted_frame(&path);
    for k in 0..9u32 {
        let before_w = counts.written.load(Ordering::SeqCst);
        let before_r = counts.read.load(Ordering::SeqCst);
        let cbytes_before = s.cbytes();
        s.append_buffer(&input(k)).unwrap();
        let stored = (s.cbytes() - cbytes_before) as u64;
        let written = counts.written.load(Ordering::SeqCst) - before_w;
        let read = counts.read.load(Ordering::SeqCst) - before_r;
        // Chunk bytes plus offsets index, trailer and header (a few hundred
        // bytes here): the data section is never rewritten.
        assert!(
            written >= stored && written < stored + 1024,
            "append {k}: wrote {written} bytes for a {stored}-byte chunk"
        );
        assert_eq!(read, 0, "append {k} read {read} bytes back");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn chunk_reads_fetch_each_stored_byte_once_across_sizes() {
    let path = scratch("reads.b2frame");
    let mut mem = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    {
        let mut w = SChunk::new(Storage {
            contiguous: true,
            urlpath: Some(path.clone()),
            cparams: cparams(),
            ..Storage::default()
        })
        .unwrap();
        for k in 0..6u32 {
            w.append_buffer(&input(k)).unwrap();
            mem.append_buffer(&input(k)).unwrap();
        }
    }
    let counts = Arc::new(Counts::default());
    let io: Arc<dyn Io> = Arc::new(CountingIo(counts.clone()));
    let r = SChunk::open_with_io(&path, 0, Some(io)).unwrap();
    // Big, small, big... so the reused read buffer shrinks and grows.
    for &k in &[1i64, 0, 4, 2, 1, 5, 3, 0] {
        let want = mem.get_chunk(k).unwrap().into_owned();
        let stored = if r.frame_offsets().unwrap().unwrap()[k as usize] < 0 {
            0
        } else {
            want.len() as u64
        };
        let before = counts.read.load(Ordering::SeqCst);
        let got = r.get_chunk(k).unwrap().into_owned();
        assert_eq!(got, want, "chunk {k} bytes");
        assert_eq!(
            counts.read.load(Ordering::SeqCst) - before,
            stored,
            "bytes read for chunk {k}"
        );
        let src = input(k as u32);
        let mut out = vec![0xAAu8; src.len()];
        let before = counts.read.load(Ordering::SeqCst);
        assert_eq!(r.decompress_chunk(k, &mut out).unwrap(), src.len());
        assert_eq!(out, src, "chunk {k} contents");
        assert_eq!(
            counts.read.load(Ordering::SeqCst) - before,
            stored,
            "bytes read to decompress chunk {k}"
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// A sparse frame `name` of chunks `input(0)` to `input(nchunks - 1)`,
/// reopened through a counting Io: its folder, the counts and the reader.
fn sparse_counted(name: &str, nchunks: u32) -> (PathBuf, Arc<Counts>, SChunk) {
    let dir = scratch(name);
    let _ = std::fs::remove_dir_all(&dir);
    {
        let mut w = SChunk::new(Storage {
            contiguous: false,
            urlpath: Some(dir.clone()),
            cparams: cparams(),
            ..Storage::default()
        })
        .unwrap();
        for k in 0..nchunks {
            w.append_buffer(&input(k)).unwrap();
        }
    }
    let counts = Arc::new(Counts::default());
    let io: Arc<dyn Io> = Arc::new(CountingIo(counts.clone()));
    let r = SChunk::open_with_io(&dir, 0, Some(io)).unwrap();
    (dir, counts, r)
}

#[test]
fn sparse_chunk_reads_open_the_chunk_file_at_most_twice() {
    let (dir, counts, r) = sparse_counted("sparse.b2frame", 4);
    for k in [1i64, 0, 3] {
        let src = input(k as u32);
        let mut out = vec![0u8; src.len()];
        let opened = counts.opened.load(Ordering::SeqCst);
        let read = counts.read.load(Ordering::SeqCst);
        assert_eq!(r.decompress_chunk(k, &mut out).unwrap(), src.len());
        assert_eq!(out, src, "sparse chunk {k}");
        let opens = counts.opened.load(Ordering::SeqCst) - opened;
        assert!(opens <= 2, "chunk {k}: {opens} opens");
        let stored = r.get_chunk(k).unwrap().len() as u64;
        let fetched = counts.read.load(Ordering::SeqCst) - read;
        // The decompress read plus the get_chunk read just above.
        assert_eq!(fetched, 2 * stored, "bytes read for sparse chunk {k}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_partial_read_of_a_sparse_chunk_opens_its_file_a_fixed_number_of_times() {
    // One open for the header, one for the size check and the block starts,
    // one for all the blocks: the opens do not grow with the blocks read
    // (the reference opens the file once per block).
    let (dir, counts, r) = sparse_counted("sparse-range.b2frame", 1);
    let src = input(0);
    let stored = r.get_chunk(0).unwrap().into_owned();
    assert!(stored.len() < src.len() / 2, "the chunk is compressed");
    // Blocks are 4 KiB: one block, then eight.
    for (lo, len) in [(5000usize, 100usize), (4096 + 10, 8 * 4096 - 20)] {
        let mut out = vec![0u8; len];
        let opened = counts.opened.load(Ordering::SeqCst);
        r.read_chunk_range(0, lo, &mut out).unwrap();
        assert_eq!(out, &src[lo..lo + len], "{lo}+{len}");
        let opens = counts.opened.load(Ordering::SeqCst) - opened;
        assert_eq!(opens, 3, "{lo}+{len}: {opens} opens");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A resize of a frame-file array that adds 512 zero chunks, half of them
/// between the old ones, then removes them again, writes the frame's
/// metadata (header, offsets index, trailer) once per resize, plus the
/// "b2nd" metalayer's rewrite: under twice the file's length each time.
/// Before, every chunk rewrote it, and a resize adding 16,384 chunks took
/// 14 s (found by the ndarray_edit fuzz body). The contents are checked on
/// the array and on the file reopened.
#[test]
fn a_resize_writes_the_frame_metadata_once_not_per_chunk() {
    let path = scratch("resize.b2nd");
    let counts = Arc::new(Counts::default());
    let io: Arc<dyn Io> = Arc::new(CountingIo(counts.clone()));
    let storage = ArrayStorage::Schunk(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        io: Some(io),
        ..Storage::default()
    });
    let ctx = Context::new(storage, 4, &[2, 8], &[1, 2], &[1, 2], None, 0, Vec::new()).unwrap();
    let data: Vec<u8> = (0..64).collect();
    let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
    assert_eq!(a.nchunks(), 8);
    // Each row grows from 8 items (4 chunks) to 520 (260 chunks).
    let mut grown = Vec::new();
    for row in data.chunks(32) {
        grown.extend_from_slice(row);
        grown.resize(grown.len() + 512 * 4, 0);
    }
    for (shape, want, nchunks) in [([2i64, 520], &grown, 520), ([2, 8], &data, 8)] {
        let before = counts.written.load(Ordering::SeqCst);
        a.resize(&shape, None).unwrap();
        let written = counts.written.load(Ordering::SeqCst) - before;
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(
            written < 2 * len,
            "resize to {shape:?} wrote {written} bytes to a {len}-byte file"
        );
        assert_eq!(a.nchunks(), nchunks);
        assert_eq!(&a.to_vec().unwrap(), want, "{shape:?}");
        let back = NdArray::open(&path).unwrap();
        assert_eq!(back.shape(), shape);
        assert_eq!(&back.to_vec().unwrap(), want, "{shape:?} reopened");
    }
    let _ = std::fs::remove_file(&path);
}

/// Deleting every other chunk of a 40-chunk frame file in one call moves
/// no chunk (a crash must find the chunks where the index on disk says:
/// docs/crash-safety.md): it writes only the metadata. Before, each
/// deletion moved the whole rest of the data section (3,540,646 bytes
/// written to a 506,020-byte file here). The deleted chunks' bytes stay
/// unused until a compaction, after which the frame equals, byte for
/// byte, the one the same deletions make one call at a time in memory.
#[test]
fn deleting_many_stored_chunks_moves_the_data_once() {
    let path = scratch("deletes.b2frame");
    let (counts, mut file) = counted_frame(&path);
    let mut mem = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    for k in 0..40u32 {
        file.append_buffer(&input(k)).unwrap();
        mem.append_buffer(&input(k)).unwrap();
    }
    let doomed: Vec<i64> = (0..20).map(|i| 38 - 2 * i).collect();
    for &n in &doomed {
        mem.delete_chunk(n).unwrap();
    }
    let before = counts.written.load(Ordering::SeqCst);
    assert_eq!(file.delete_chunks(doomed).unwrap(), 20);
    let written = counts.written.load(Ordering::SeqCst) - before;
    assert!(written < 4096, "wrote {written} bytes to delete 20 chunks");
    let unused = file.unused_bytes();
    assert_eq!(file.cbytes() - unused as i64, mem.cbytes());
    drop(file);
    // The counting backend cannot rename: the file system's compacts.
    let mut file = SChunk::open(&path).unwrap();
    assert_eq!(file.compact().unwrap(), unused);
    assert_eq!(file.cbytes(), mem.cbytes());
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), mem.to_buffer().unwrap());
    let back = SChunk::open(&path).unwrap();
    let mut out = vec![0u8; 64 * 1024];
    for (i, k) in (1..40u32).step_by(2).enumerate() {
        back.decompress_chunk(i as i64, &mut out).unwrap();
        assert_eq!(out, input(k), "chunk {i}");
    }
    let _ = std::fs::remove_file(&path);
}
