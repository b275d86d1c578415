//! Lazy chunks of on-disk frames (contiguous and sparse): the reference's
//! layout (header, block starts, trailer with nchunk, chunk offset and block
//! sizes), decoding them through a block source equals decoding the whole
//! chunk, and a partial decode reads only the blocks it needs.

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use b2nd_core::chunk::{DParams, Decompressor};
use b2nd_core::frame::{Io, IoFile, OpenMode, StdIo};
use b2nd_core::schunk::{CParams, SChunk, Storage};
use common::TempDir;

#[derive(Default)]
struct Counts {
    read: AtomicU64,
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

const ITEMS: usize = 64 * 1024;

/// Chunk `k`: a noisy ramp (compresses, but not to nothing).
fn input(k: u32) -> Vec<u8> {
    let mut r = common::XorShift(0x1234_5678 + u64::from(k));
    (0..ITEMS as u32)
        .flat_map(|i| (i * 3 + k * 1000 + (r.next() % 64) as u32).to_le_bytes())
        .collect()
}

fn write_frame(path: &Path, contiguous: bool, filters: [u8; 6]) {
    let mut s = SChunk::new(Storage {
        contiguous,
        urlpath: Some(path.to_owned()),
        cparams: CParams {
            typesize: 4,
            blocksize: 16 * 1024,
            clevel: 5,
            filters,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    for k in 0..4 {
        s.append_buffer(&input(k)).unwrap();
    }
}

fn rd_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[test]
fn lazy_chunks_follow_the_reference_layout_and_decode_lazily() {
    let dir = TempDir::new("frame-lazy");
    for (contiguous, filters) in [
        (true, [0, 0, 0, 0, 0, 1]),
        (true, [0, 0, 0, 0, 3, 1]), // DELTA: block 0 is needed too
        (false, [0, 0, 0, 0, 0, 1]),
    ] {
        let path = dir.join(format!("lazy-{contiguous}-{}.b2frame", filters[4]));
        write_frame(&path, contiguous, filters);
        let counts = Arc::new(Counts::default());
        let io: b2nd_core::frame::IoRef = Arc::new(CountingIo(counts.clone()));
        let s = SChunk::open_with_io(&path, 0, Some(io)).unwrap();
        let offsets = s.frame_offsets().unwrap().unwrap();
        let whole = s.get_chunk(2).unwrap().into_owned();
        let mut expect = vec![0u8; ITEMS * 4];
        s.decompress_chunk(2, &mut expect).unwrap();
        assert_eq!(expect, input(2));

        let before = counts.read.load(Ordering::SeqCst);
        let lazy = s.get_lazychunk(2).unwrap().into_owned();
        let read_for_lazy = counts.read.load(Ordering::SeqCst) - before;
        let nblocks = ITEMS * 4 / (16 * 1024);
        let trailer = 32 + 4 * nblocks;
        assert_eq!(lazy.len(), trailer + 12 + 4 * nblocks);
        assert_eq!(&lazy[..31], &whole[..31]);
        assert_eq!(lazy[31], whole[31] | 0x08, "lazy bit");
        assert_eq!(&lazy[32..trailer], &whole[32..trailer], "block starts");
        assert!(
            read_for_lazy <= trailer as u64,
            "read {read_for_lazy} bytes"
        );
        let nchunk = rd_i32(&lazy, trailer);
        let offset = i64::from_le_bytes(lazy[trailer + 4..trailer + 12].try_into().unwrap());
        if contiguous {
            assert_eq!(nchunk, 2);
            assert!(offset > offsets[2], "offset counts from the frame start");
            // The chunk bytes really are at that position of the file.
            let file = std::fs::read(&path).unwrap();
            assert_eq!(
                &file[offset as usize..offset as usize + whole.len()],
                &whole[..]
            );
        } else {
            assert_eq!(i64::from(nchunk), offsets[2]);
            assert_eq!(offset, offsets[2]);
        }
        // Block sizes: each block's stream length, summing to the chunk.
        let mut starts: Vec<(i32, usize)> = (0..nblocks)
            .map(|j| (rd_i32(&whole, 32 + 4 * j), j))
            .collect();
        starts.sort();
        for (k, &(st, j)) in starts.iter().enumerate() {
            let next = starts.get(k + 1).map_or(whole.len() as i32, |n| n.0);
            assert_eq!(rd_i32(&lazy, trailer + 12 + 4 * j), next - st, "block {j}");
        }

        // Whole decode through the block source.
        let mut src = s.lazy_block_source(&lazy).unwrap();
        let mut out = vec![0u8; ITEMS * 4];
        let mut d = Decompressor::new(DParams::default());
        assert_eq!(
            d.decompress_with_source(&lazy, &mut *src, &mut out, None)
                .unwrap(),
            out.len()
        );
        assert_eq!(out, expect);

        // Only block 5 wanted: only it (and block 0 under DELTA) is read.
        let mut mask = vec![true; nblocks];
        mask[5] = false;
        let mut src = s.lazy_block_source(&lazy).unwrap();
        let before = counts.read.load(Ordering::SeqCst);
        let mut part = vec![0u8; ITEMS * 4];
        d.decompress_with_source(&lazy, &mut *src, &mut part, Some(&mask))
            .unwrap();
        let read = counts.read.load(Ordering::SeqCst) - before;
        let block = |j: usize| rd_i32(&lazy, trailer + 12 + 4 * j) as u64;
        let want = block(5) + if filters[4] == 3 { block(0) } else { 0 };
        assert_eq!(read, want, "bytes read for one block");
        let bs = 16 * 1024;
        assert_eq!(part[5 * bs..6 * bs], expect[5 * bs..6 * bs]);

        // Item reads through the super-chunk also fetch only their blocks.
        let before = counts.read.load(Ordering::SeqCst);
        let mut few = [0u8; 12];
        s.get_slice_buffer(
            (2 * ITEMS + 9000) as i64,
            (2 * ITEMS + 9003) as i64,
            &mut few,
        )
        .unwrap();
        assert_eq!(few[..], expect[9000 * 4..9003 * 4]);
        let read = counts.read.load(Ordering::SeqCst) - before;
        assert!(
            read < (whole.len() / 4) as u64,
            "slice read {read} of {}",
            whole.len()
        );
    }
}

#[test]
fn lazy_trailers_that_lie_are_errors() {
    let dir = TempDir::new("frame-lazy-bad");
    let path = dir.join("bad.b2frame");
    write_frame(&path, true, [0, 0, 0, 0, 0, 1]);
    let mut s = SChunk::open(&path).unwrap();
    let lazy = s.get_lazychunk(1).unwrap().into_owned();
    let nblocks = ITEMS * 4 / (16 * 1024);
    let trailer = 32 + 4 * nblocks;
    let mut out = vec![0u8; ITEMS * 4];
    let mut d = Decompressor::new(DParams::default());
    // Truncated trailer.
    assert!(s.lazy_block_source(&lazy[..lazy.len() - 1]).is_err());
    // A block size past the chunk end.
    let mut big = lazy.clone();
    big[trailer + 12..trailer + 16].copy_from_slice(&i32::MAX.to_le_bytes());
    let mut src = s.lazy_block_source(&big).unwrap();
    assert!(d
        .decompress_with_source(&big, &mut *src, &mut out, None)
        .is_err());
    // A chunk offset past the end of the file.
    let mut far = lazy.clone();
    far[trailer + 4..trailer + 12].copy_from_slice(&(1i64 << 40).to_le_bytes());
    let mut src = s.lazy_block_source(&far).unwrap();
    assert!(d
        .decompress_with_source(&far, &mut *src, &mut out, None)
        .is_err());
    // A negative chunk offset.
    let mut neg = lazy.clone();
    neg[trailer + 4..trailer + 12].copy_from_slice(&(-5i64).to_le_bytes());
    assert!(s.lazy_block_source(&neg).is_err());
    // In-memory super-chunks hand out whole chunks, and have no block source.
    let mem = SChunk::from_vec(s.to_buffer().unwrap()).unwrap();
    let c = mem.get_lazychunk(1).unwrap().into_owned();
    assert_eq!(c[31] & 0x08, 0);
    assert!(mem.lazy_block_source(&lazy).is_err());
}

#[test]
fn memcpyed_and_vl_block_chunks_decode_lazily_too() {
    let dir = TempDir::new("frame-lazy-kinds");
    for (kind, clevel) in [("memcpyed", 0u8), ("vlblocks", 5)] {
        let path = dir.join(format!("{kind}.b2frame"));
        let mut s = SChunk::new(Storage {
            contiguous: true,
            urlpath: Some(path.clone()),
            cparams: CParams {
                typesize: 4,
                blocksize: 16 * 1024,
                clevel,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        let blocks: Vec<Vec<u8>> = (0..5u32)
            .map(|k| input(k)[..10_000 + 4 * k as usize * 333].to_vec())
            .collect();
        if kind == "vlblocks" {
            let refs: Vec<&[u8]> = blocks.iter().map(|b| b.as_slice()).collect();
            s.append_vlblocks(&refs).unwrap();
        } else {
            s.append_buffer(&input(7)).unwrap();
        }
        drop(s);
        let counts = Arc::new(Counts::default());
        let io: b2nd_core::frame::IoRef = Arc::new(CountingIo(counts.clone()));
        let s = SChunk::open_with_io(&path, 0, Some(io)).unwrap();
        let whole = s.get_chunk(0).unwrap().into_owned();
        let h = b2nd_core::chunk::ChunkHeader::parse(&whole).unwrap();
        let mut expect = vec![0u8; h.nbytes()];
        s.decompress_chunk(0, &mut expect).unwrap();
        let lazy = s.get_lazychunk(0).unwrap().into_owned();
        assert_eq!(lazy[31], whole[31] | 0x08, "{kind}");
        let nblocks = if kind == "vlblocks" { 5 } else { h.nblocks() };
        assert_eq!(lazy.len(), 32 + 8 * nblocks + 12, "{kind}");
        if kind == "memcpyed" {
            assert!(h.is_memcpyed());
            assert!(lazy[32..32 + 4 * nblocks].iter().all(|&b| b == 0));
        }
        let mut src = s.lazy_block_source(&lazy).unwrap();
        let mut out = vec![0u8; h.nbytes()];
        let before = counts.read.load(Ordering::SeqCst);
        Decompressor::new(DParams::default())
            .decompress_with_source(&lazy, &mut *src, &mut out, None)
            .unwrap();
        assert_eq!(out, expect, "{kind}");
        let read = counts.read.load(Ordering::SeqCst) - before;
        assert_eq!(
            read as usize,
            whole.len() - 32 - if kind == "memcpyed" { 0 } else { 4 * nblocks },
            "{kind}: every block read once"
        );
    }
}

/// A memcpyed chunk marked as holding VL blocks (which the decoder refuses)
/// is refused as a lazy chunk too, before anything is sized by the block
/// count its `blocksize` field claims: 8 bytes a block, up to 4 GiB.
#[test]
fn a_memcpyed_chunk_claiming_vl_blocks_has_no_lazy_chunk() {
    let dir = TempDir::new("frame-lazy-vl-memcpyed");
    let path = dir.join("f.b2frame");
    let mut s = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: CParams {
            typesize: 4,
            clevel: 0,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    s.append_buffer(&input(3)).unwrap();
    let chunk = s.get_chunk(0).unwrap().into_owned();
    drop(s);
    assert_ne!(chunk[2] & 0x02, 0, "stored uncompressed");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(32)
        .position(|w| w == &chunk[..32])
        .expect("the chunk in its frame");
    // A block count of 100,000 (a lazy chunk of 800 KB), and the VL flag.
    bytes[at + 8..at + 12].copy_from_slice(&100_000i32.to_le_bytes());
    bytes[at + 30] |= 1;
    std::fs::write(&path, &bytes).unwrap();

    let s = SChunk::open(&path).unwrap();
    let e = s.get_lazychunk(0).err().expect("lazy chunk refused");
    assert_eq!(e.code(), -11, "{}", e.detail());
    let mut out = vec![0u8; ITEMS * 4];
    assert_eq!(s.decompress_chunk(0, &mut out).unwrap_err().code(), -11);
    assert_eq!(
        s.read_chunk_range(0, 0, &mut out[..8]).unwrap_err().code(),
        -11
    );
}
