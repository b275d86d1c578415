//! Super-chunks stored through the memory-mapped backend (`frame::MmapIo`,
//! the reference's `BLOSC2_IO_FILESYSTEM_MMAP`) from the Rust API: the file
//! written matches the one the plain file system writes, reopens in every
//! mode, grows past its first mapping, keeps "c" changes in memory, and
//! refuses sparse frames.

use std::path::PathBuf;

use b2nd_core::frame::{MmapIo, MmapMode};
use b2nd_core::schunk::{CParams, SChunk, Storage};

fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("b2nd-mmap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn chunk(k: u32) -> Vec<u8> {
    (0..4096u32)
        .flat_map(|i| (i * 7 + k).to_le_bytes())
        .collect()
}

fn storage(path: &PathBuf, io: Option<b2nd_core::frame::IoRef>) -> Storage {
    Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        io,
        ..Storage::default()
    }
}

fn read_all(sc: &SChunk) -> Vec<Vec<u8>> {
    (0..sc.nchunks())
        .map(|i| {
            let mut b = vec![0u8; 4096 * 4];
            let n = sc.decompress_chunk(i, &mut b).unwrap();
            b.truncate(n);
            b
        })
        .collect()
}

#[test]
fn mmap_frames_round_trip_grow_and_match_plain_files() {
    let plain = scratch("plain.b2frame");
    let mapped = scratch("mapped.b2frame");
    {
        let mut a = SChunk::new(storage(&plain, None)).unwrap();
        // A first mapping much smaller than the frame: it grows (twice the
        // size each time) as chunks are appended.
        let io = MmapIo::shared(MmapMode::Create, 64);
        let mut b = SChunk::new(storage(&mapped, Some(io))).unwrap();
        for k in 0..6 {
            a.append_buffer(&chunk(k)).unwrap();
            b.append_buffer(&chunk(k)).unwrap();
        }
        assert_eq!(read_all(&b), read_all(&a));
    }
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&mapped).unwrap()
    );

    // "r": reads what was written.
    let ro = SChunk::open_with_io(&mapped, 0, Some(MmapIo::shared(MmapMode::Read, 0))).unwrap();
    assert_eq!(ro.nchunks(), 6);
    assert_eq!(read_all(&ro)[5], chunk(5));
    drop(ro);

    // "c": appends stay in memory; the file does not change.
    {
        let io = MmapIo::shared(MmapMode::CopyOnWrite, 1 << 20);
        let mut c = SChunk::open_with_io(&mapped, 0, Some(io)).unwrap();
        // The frame ends inside its last page: one small chunk fits there.
        c.append_buffer(&[9u8; 16]).unwrap();
        assert_eq!(c.nchunks(), 7);
        let mut b = [0u8; 16];
        c.decompress_chunk(6, &mut b).unwrap();
        assert_eq!(b, [9u8; 16]);
    }
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&mapped).unwrap()
    );

    // "r+": appends reach the file, and a plain reopen reads them.
    {
        let io = MmapIo::shared(MmapMode::ReadWrite, 1 << 20);
        let mut w = SChunk::open_with_io(&mapped, 0, Some(io)).unwrap();
        w.append_buffer(&chunk(6)).unwrap();
    }
    let back = SChunk::open(&mapped).unwrap();
    assert_eq!(back.nchunks(), 7);
    assert_eq!(read_all(&back)[6], chunk(6));
    let mut a = SChunk::open(&plain).unwrap();
    a.append_buffer(&chunk(6)).unwrap();
    drop(a);
    assert_eq!(
        std::fs::read(&plain).unwrap(),
        std::fs::read(&mapped).unwrap()
    );

    for p in [plain, mapped] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn mmap_backends_refuse_sparse_frames_and_missing_files() {
    let dir = scratch("sparse.dir");
    let mut st = storage(&dir, Some(MmapIo::shared(MmapMode::Create, 1 << 16)));
    st.contiguous = false;
    let made = SChunk::new(st).and_then(|mut sc| sc.append_buffer(&chunk(0)));
    assert!(made.is_err(), "a sparse frame through mmap");
    let _ = std::fs::remove_dir_all(&dir);

    let missing = scratch("missing.b2frame");
    let e = SChunk::open_with_io(&missing, 0, Some(MmapIo::shared(MmapMode::Read, 0)));
    assert!(e.is_err());
}
