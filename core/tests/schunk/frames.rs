//! Super-chunks over every storage: contents, metadata, mutations, special
//! chunks, embedded frames, lazy reads and bad input.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use b2nd_core::frame::{Io, IoFile, OpenMode, StdIo};
use b2nd_core::schunk::{CParams, SChunk, Special, Storage};

fn scratch(name: &str) -> PathBuf {
    common::scratch_path("schunk_frames", name)
}

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        blocksize: 1024,
        ..CParams::default()
    }
}

/// Chunk `k` of the test data: `n` int32 values.
fn data(k: u32, n: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i.wrapping_mul(7) ^ k.wrapping_mul(1_000_003)).to_le_bytes())
        .collect()
}

/// `d` compressed into one chunk with the test parameters.
fn chunk_of(d: &[u8]) -> Vec<u8> {
    let mut s = SChunk::new(Storage {
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.append_buffer(d).unwrap();
    let c = s.get_chunk(0).unwrap().into_owned();
    c
}

fn storages(tag: &str) -> Vec<(&'static str, Storage)> {
    vec![
        (
            "chunks",
            Storage {
                cparams: cparams(),
                ..Storage::default()
            },
        ),
        (
            "memframe",
            Storage {
                contiguous: true,
                cparams: cparams(),
                ..Storage::default()
            },
        ),
        (
            "file",
            Storage {
                contiguous: true,
                urlpath: Some(scratch(&format!("{tag}.b2frame"))),
                cparams: cparams(),
                ..Storage::default()
            },
        ),
        (
            "sparse",
            Storage {
                contiguous: false,
                urlpath: Some(scratch(&format!("{tag}-dir.b2frame"))),
                cparams: cparams(),
                ..Storage::default()
            },
        ),
    ]
}

/// A new contiguous frame file at `path` with the test parameters.
fn file_frame(path: &Path) -> SChunk {
    SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.to_path_buf()),
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap()
}

/// Decodes every chunk of `s`.
fn contents(s: &mut SChunk) -> Vec<Vec<u8>> {
    (0..s.nchunks())
        .map(|i| {
            let mut out = vec![0u8; 1 << 20];
            let n = s.decompress_chunk(i, &mut out).unwrap();
            out.truncate(n);
            out
        })
        .collect()
}

/// Re-opens `s` the way a new process would see it.
fn reopen(s: &mut SChunk) -> SChunk {
    match s.storage().urlpath.clone() {
        Some(p) => SChunk::open(p).unwrap(),
        None => SChunk::from_buffer(&s.to_buffer().unwrap(), false).unwrap(),
    }
}

#[test]
fn every_storage_round_trips_data_and_metadata() {
    for (name, storage) in storages("rt") {
        let mut s = SChunk::new(storage).unwrap();
        s.meta_add("shape", b"\x01\x02\x03\x04").unwrap();
        s.meta_add("b2nd", b"xyz").unwrap();
        let model: Vec<Vec<u8>> = (0..5).map(|k| data(k, 1000)).collect();
        for (k, d) in model.iter().enumerate() {
            assert_eq!(s.append_buffer(d).unwrap(), k as i64 + 1, "{name}");
        }
        s.vlmeta_add("attrs", b"{\"a\": 1}", None).unwrap();
        s.vlmeta_add("more", &[7u8; 300], None).unwrap();
        assert_eq!(s.nbytes(), 20_000);
        assert_eq!(s.chunksize(), 4000);
        let mut r = reopen(&mut s);
        assert_eq!(contents(&mut r), model, "{name}");
        assert_eq!(r.nbytes(), 20_000, "{name}");
        assert_eq!(r.chunksize(), 4000, "{name}");
        assert_eq!(r.typesize(), 4, "{name}");
        assert_eq!(r.meta_get("shape").unwrap(), b"\x01\x02\x03\x04", "{name}");
        assert_eq!(r.meta_get("b2nd").unwrap(), b"xyz", "{name}");
        assert_eq!(r.vlmeta_get("attrs").unwrap(), b"{\"a\": 1}", "{name}");
        assert_eq!(r.vlmeta_get("more").unwrap(), vec![7u8; 300], "{name}");
        assert_eq!(r.vlmeta_names(), vec!["attrs", "more"], "{name}");
        assert_eq!(r.meta_get("nope").unwrap_err().code(), -34);

        // Slices across chunk borders.
        let mut got = vec![0u8; 1500 * 4];
        r.get_slice_buffer(700, 2200, &mut got).unwrap();
        let flat: Vec<u8> = model.concat();
        assert_eq!(got, flat[700 * 4..2200 * 4], "{name}");

        // Metalayer update in place, vlmeta update and delete persist.
        r.meta_update("shape", b"\x09\x09").unwrap();
        assert!(r.meta_update("shape", &[0u8; 5]).is_err());
        r.vlmeta_update("attrs", b"changed", None).unwrap();
        r.vlmeta_delete("more").unwrap();
        assert!(r.meta_add("late", b"x").is_err() || name == "chunks");
        let mut r2 = reopen(&mut r);
        assert_eq!(r2.meta_get("shape").unwrap(), b"\x09\x09\x03\x04", "{name}");
        assert_eq!(r2.vlmeta_get("attrs").unwrap(), b"changed", "{name}");
        assert!(r2.vlmeta_exists("more").is_none(), "{name}");
        assert_eq!(contents(&mut r2), model, "{name}");
    }
}

/// Applies the same edits to a super-chunk and a model, checking after every
/// call that a fresh reader sees exactly the model.
#[test]
fn mutations_leave_a_valid_frame_after_every_call() {
    for (name, storage) in storages("mut") {
        let mut s = SChunk::new(storage).unwrap();
        let mut model: Vec<Vec<u8>> = Vec::new();
        let check = |s: &mut SChunk, model: &Vec<Vec<u8>>, step: &str| {
            let mut r = reopen(s);
            assert_eq!(contents(&mut r), *model, "{name} after {step}");
            assert_eq!(
                r.nbytes(),
                model.iter().map(|c| c.len() as i64).sum::<i64>(),
                "{name} after {step}"
            );
        };
        for k in 0..4 {
            s.append_buffer(&data(k, 500)).unwrap();
            model.push(data(k, 500));
        }
        check(&mut s, &model, "append");
        let c = chunk_of(&data(10, 500));
        s.insert_chunk(1, &c).unwrap();
        model.insert(1, data(10, 500));
        check(&mut s, &model, "insert");
        s.update_chunk(2, &chunk_of(&data(11, 500))).unwrap();
        model[2] = data(11, 500);
        check(&mut s, &model, "update");
        s.delete_chunk(0).unwrap();
        model.remove(0);
        check(&mut s, &model, "delete");
        s.reorder_offsets(&[3, 1, 0, 2]).unwrap();
        model = vec![
            model[3].clone(),
            model[1].clone(),
            model[0].clone(),
            model[2].clone(),
        ];
        check(&mut s, &model, "reorder");
        s.set_slice_buffer(400, 700, &data(99, 300)).unwrap();
        let mut flat = model.concat();
        flat[1600..2800].copy_from_slice(&data(99, 300));
        model = flat.chunks(2000).map(|c| c.to_vec()).collect();
        check(&mut s, &model, "set_slice");
        assert!(s.reorder_offsets(&[0, 0, 1, 2]).is_err());
        assert!(s.update_chunk(9, &c).is_err());
        assert!(s.delete_chunk(-1).is_err());
        assert!(s.insert_chunk(6, &c).is_err());
        check(&mut s, &model, "refused edits");
        while s.nchunks() > 0 {
            s.delete_chunk(s.nchunks() - 1).unwrap();
            model.pop();
            check(&mut s, &model, "delete to empty");
        }
        s.append_buffer(&data(5, 10)).unwrap();
        model.push(data(5, 10));
        check(&mut s, &model, "append after empty");
    }
}

#[test]
fn special_chunks_are_offsets_not_bytes() {
    for (name, storage) in storages("special") {
        let contiguous_file = name == "file";
        let path = storage.urlpath.clone();
        let mut s = SChunk::new(storage).unwrap();
        s.fill_special(10_000, Special::Zero, 4000).unwrap();
        assert_eq!(s.nchunks(), 10, "{name}");
        assert_eq!(s.nbytes(), 40_000, "{name}");
        if contiguous_file {
            let len = std::fs::metadata(path.as_ref().unwrap()).unwrap().len();
            assert!(len < 1000, "zero-filled frame takes {len} bytes");
        }
        let mut r = reopen(&mut s);
        let mut out = vec![1u8; 40_000];
        r.get_slice_buffer(0, 10_000, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0), "{name}");
        // Overwrite a zero chunk with data, then back with NaNs via fill.
        r.update_chunk(3, &chunk_of(&data(3, 1000))).unwrap();
        let mut r2 = reopen(&mut r);
        let c = contents(&mut r2);
        assert_eq!(c[3], data(3, 1000), "{name}");
        assert_eq!(c[4], vec![0u8; 4000], "{name}");
        assert!(
            s.fill_special(5, Special::Zero, 4000).is_err(),
            "fill of a non-empty schunk"
        );
    }
    // NaN fill with a short last chunk.
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.fill_special(1001, Special::Nan, 400).unwrap();
    assert_eq!(s.nchunks(), 11);
    let r = reopen(&mut s);
    let mut out = vec![0u8; 1001 * 4];
    r.get_slice_buffer(0, 1001, &mut out).unwrap();
    assert!(out
        .chunks_exact(4)
        .all(|c| f32::from_le_bytes(c.try_into().unwrap()).is_nan()));
}

#[test]
fn variable_size_chunks() {
    for (name, storage) in storages("var") {
        let mut s = SChunk::new(storage).unwrap();
        let model = vec![data(0, 100), data(1, 50), data(2, 200), data(3, 7)];
        for d in &model {
            s.append_buffer(d).unwrap();
        }
        assert_eq!(s.chunksize(), 0, "{name}");
        let mut r = reopen(&mut s);
        assert_eq!(r.chunksize(), 0, "{name}");
        assert_eq!(contents(&mut r), model, "{name}");
        let mut got = vec![0u8; 200 * 4];
        r.get_slice_buffer(90, 290, &mut got).unwrap();
        assert_eq!(got, model.concat()[90 * 4..290 * 4], "{name}");
    }
    // A zero chunk appended before the sizes turn variable stays readable.
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.fill_special(200, Special::Zero, 400).unwrap();
    s.append_buffer(&data(1, 33)).unwrap();
    assert_eq!(s.chunksize(), 400, "a short last chunk keeps the chunksize");
    s.append_buffer(&data(2, 50)).unwrap();
    assert_eq!(s.chunksize(), 0);
    let mut r = reopen(&mut s);
    let c = contents(&mut r);
    assert_eq!(c[0], vec![0u8; 400]);
    assert_eq!(c[1], vec![0u8; 400]);
    assert_eq!(c[2], data(1, 33));
    assert_eq!(c[3], data(2, 50));
}

#[test]
fn frame_embedded_at_an_offset() {
    let path = scratch("embedded.bin");
    std::fs::write(&path, vec![0xAB; 1000]).unwrap();
    let mut s = SChunk::new(Storage {
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.meta_add("m", b"meta").unwrap();
    s.append_buffer(&data(0, 300)).unwrap();
    let off = s.append_file(&path).unwrap();
    assert_eq!(off, 1000);
    let mut e = SChunk::open_offset(&path, off).unwrap();
    assert_eq!(contents(&mut e), vec![data(0, 300)]);
    e.append_buffer(&data(1, 300)).unwrap();
    let mut e2 = SChunk::open_offset(&path, off).unwrap();
    assert_eq!(contents(&mut e2), vec![data(0, 300), data(1, 300)]);
    assert_eq!(e2.meta_get("m").unwrap(), b"meta");
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes[..1000].iter().all(|&b| b == 0xAB));
    assert!(
        SChunk::open(&path).is_err(),
        "the file start is not a frame"
    );
    assert!(SChunk::open_offset(&path, 5000).is_err());
    assert!(SChunk::open_offset(&path, 999).is_err());
}

#[test]
fn copies_between_storages() {
    let mut src = SChunk::new(Storage {
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    src.meta_add("m", b"1").unwrap();
    src.vlmeta_add("v", b"2", None).unwrap();
    for k in 0..3 {
        src.append_buffer(&data(k, 256)).unwrap();
    }
    for (name, storage) in storages("copy") {
        let mut c = src.copy(storage).unwrap();
        let mut r = reopen(&mut c);
        assert_eq!(contents(&mut r), contents(&mut src), "{name}");
        assert_eq!(r.meta_get("m").unwrap(), b"1");
        assert_eq!(r.vlmeta_get("v").unwrap(), b"2");
    }
    let buf = src.to_buffer().unwrap();
    let mut copy = SChunk::from_buffer(&buf, true).unwrap();
    assert!(!copy.is_frame());
    assert_eq!(contents(&mut copy), contents(&mut src));
    assert_eq!(copy.frame_len().unwrap(), buf.len() as u64);
    let path = scratch("tofile.b2frame");
    assert_eq!(src.to_file(&path).unwrap(), buf.len() as u64);
    assert_eq!(std::fs::read(&path).unwrap(), buf);
}

/// Counts the bytes read through the I/O trait.
struct CountingIo {
    read: Arc<AtomicU64>,
}

struct CountingFile {
    inner: Box<dyn IoFile>,
    read: Arc<AtomicU64>,
}

impl IoFile for CountingFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> b2nd_core::Result<usize> {
        let n = self.inner.read_at(pos, buf)?;
        self.read.fetch_add(n as u64, Ordering::SeqCst);
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
            read: self.read.clone(),
        }))
    }
    fn remove(&self, path: &Path) -> b2nd_core::Result<()> {
        StdIo.remove(path)
    }
    fn create_dir(&self, path: &Path) -> b2nd_core::Result<()> {
        StdIo.create_dir(path)
    }
}

#[test]
fn file_frames_are_read_lazily() {
    let path = scratch("lazy.b2frame");
    let cp = CParams {
        typesize: 4,
        blocksize: 4096,
        clevel: 1,
        ..CParams::default()
    };
    let mut s = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cp,
        ..Storage::default()
    })
    .unwrap();
    for k in 0..8 {
        s.append_buffer(&data(k, 64 * 1024)).unwrap();
    }
    let frame_len = std::fs::metadata(&path).unwrap().len();
    let read = Arc::new(AtomicU64::new(0));
    let io: Arc<dyn Io> = Arc::new(CountingIo { read: read.clone() });
    let r = SChunk::open_with_io(&path, 0, Some(io)).unwrap();
    let at_open = read.load(Ordering::SeqCst);
    assert!(
        at_open < 2048,
        "opening read {at_open} of {frame_len} bytes"
    );
    // 16 items from the middle of chunk 5: one block at most.
    let mut out = vec![0u8; 64];
    let start = 5 * 64 * 1024 + 30_000;
    r.get_slice_buffer(start, start + 16, &mut out).unwrap();
    assert_eq!(out, data(5, 64 * 1024)[30_000 * 4..30_016 * 4]);
    let for_slice = read.load(Ordering::SeqCst) - at_open;
    let chunk_cbytes = frame_len / 8;
    assert!(
        for_slice < 4096 + 1024 && for_slice < chunk_cbytes,
        "a 64-byte read fetched {for_slice} bytes"
    );
    // The lazy chunk of a file frame is shorter than the chunk.
    let lazy_len = r.get_lazychunk(5).unwrap().len();
    let full = r.get_chunk(5).unwrap().into_owned();
    let memcpyed = full[2] & 0x02 != 0;
    assert!(
        lazy_len < full.len() || memcpyed,
        "lazy {lazy_len} full {}",
        full.len()
    );
}

fn small_frame() -> Vec<u8> {
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.meta_add("m", b"abc").unwrap();
    s.append_buffer(&data(0, 40)).unwrap();
    s.append_buffer(&data(1, 40)).unwrap();
    s.vlmeta_add("v", b"vv", None).unwrap();
    s.to_buffer().unwrap()
}

#[test]
fn truncated_and_corrupt_buffers_are_errors() {
    let good = small_frame();
    assert!(SChunk::from_buffer(&good, false).is_ok());
    for cut in 0..good.len() {
        assert!(
            SChunk::from_buffer(&good[..cut], false).is_err(),
            "cut at {cut}"
        );
    }
    // Single-byte corruptions never panic; each either opens (and reads or
    // errs per chunk) or errs.
    for pos in 0..good.len() {
        for v in [0u8, 0xff, 0x80] {
            let mut bad = good.clone();
            bad[pos] = v;
            if let Ok(s) = SChunk::from_buffer(&bad, false) {
                for i in 0..s.nchunks() {
                    let mut out = vec![0u8; 1 << 16];
                    let _ = s.decompress_chunk(i, &mut out);
                }
            }
        }
    }
    let len = good.len();
    // Trailer length that lies.
    let mut bad = good.clone();
    bad[len - 22..len - 18].copy_from_slice(&(len as u32 * 2).to_be_bytes());
    assert!(SChunk::from_buffer(&bad, false).is_err());
    // Negative nbytes.
    let mut bad = good.clone();
    bad[30..38].copy_from_slice(&(-5i64).to_be_bytes());
    assert!(SChunk::from_buffer(&bad, false).is_err());
    // Too many metalayers.
    let mut bad = good.clone();
    bad[92..94].copy_from_slice(&100u16.to_be_bytes());
    assert!(SChunk::from_buffer(&bad, false).is_err());
    // cbytes pointing the offsets index past the trailer.
    let mut bad = good.clone();
    bad[39..47].copy_from_slice(&(len as i64).to_be_bytes());
    assert!(SChunk::from_buffer(&bad, false).is_err());
    // frame_len larger than the buffer.
    let mut bad = good;
    bad[16..24].copy_from_slice(&(len as u64 + 1).to_be_bytes());
    assert!(SChunk::from_buffer(&bad, false).is_err());
}

#[test]
fn paths_that_are_not_frames() {
    let missing = scratch("missing.b2frame");
    assert_eq!(SChunk::open(&missing).unwrap_err().code(), -15);
    let text = scratch("text.txt");
    std::fs::write(&text, b"this is not a frame, just text with enough bytes to cover a header...........................................").unwrap();
    let e = SChunk::open(&text).unwrap_err();
    assert!(e.to_string().contains("not a Blosc2 frame"), "{e}");
    let dir = scratch("emptydir");
    std::fs::create_dir_all(&dir).unwrap();
    assert!(SChunk::open(&dir).is_err());
    let short = scratch("short.bin");
    std::fs::write(&short, b"b2").unwrap();
    assert!(SChunk::open(&short).is_err());
}

#[test]
fn missing_sparse_chunk_file_is_an_error_and_others_still_read() {
    let dir = scratch("holes.b2frame");
    let mut s = SChunk::new(Storage {
        contiguous: false,
        urlpath: Some(dir.clone()),
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    for k in 0..3 {
        s.append_buffer(&data(k, 100)).unwrap();
    }
    assert!(dir.join("00000002.chunk").exists());
    std::fs::remove_file(dir.join("00000001.chunk")).unwrap();
    let r = SChunk::open(&dir).unwrap();
    let mut out = vec![0u8; 400];
    assert_eq!(r.decompress_chunk(0, &mut out).unwrap(), 400);
    let e = r.decompress_chunk(1, &mut out).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    assert_eq!(r.decompress_chunk(2, &mut out).unwrap(), 400);
}

#[test]
fn failed_edits_leave_the_file_untouched() {
    let path = scratch("untouched.b2frame");
    let mut s = file_frame(&path);
    s.meta_add("m", b"abc").unwrap();
    s.append_buffer(&data(0, 100)).unwrap();
    let before = std::fs::read(&path).unwrap();
    assert!(s.append_chunk(&[1, 2, 3]).is_err());
    assert!(s.update_chunk(0, &[0u8; 40]).is_err());
    assert!(s.insert_chunk(0, &[5u8; 31]).is_err());
    assert!(s.meta_add("late", b"x").is_err());
    assert!(s.meta_update("m", b"toolong").is_err());
    assert!(s.reorder_offsets(&[1]).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let mut r = SChunk::open(&path).unwrap();
    assert_eq!(contents(&mut r), vec![data(0, 100)]);
}

#[test]
fn refresh_sees_changes_made_by_another_handle() {
    for (name, contiguous) in [("refresh.b2frame", true), ("refresh-dir.b2frame", false)] {
        let path = scratch(name);
        let storage = Storage {
            contiguous,
            urlpath: Some(path.clone()),
            cparams: cparams(),
            ..Storage::default()
        };
        let mut writer = SChunk::new(storage).unwrap();
        writer.append_buffer(&data(0, 100)).unwrap();
        let mut reader = SChunk::open(&path).unwrap();
        assert_eq!(reader.nchunks(), 1);
        writer.append_buffer(&data(1, 100)).unwrap();
        writer.vlmeta_add("late", b"x", None).unwrap();
        reader.refresh().unwrap();
        assert_eq!(reader.nchunks(), 2, "{name}");
        assert_eq!(
            contents(&mut reader),
            vec![data(0, 100), data(1, 100)],
            "{name}"
        );
        assert_eq!(reader.vlmeta_get("late").unwrap(), b"x", "{name}");
        if contiguous {
            assert_eq!(
                reader.frame_len().unwrap(),
                std::fs::metadata(&path).unwrap().len()
            );
        }
    }
}

#[test]
fn get_items_reads_inside_one_chunk() {
    for (name, storage) in storages("items") {
        let mut s = SChunk::new(storage).unwrap();
        s.append_buffer(&data(0, 5000)).unwrap();
        s.append_buffer(&data(1, 5000)).unwrap();
        let r = reopen(&mut s);
        let mut out = vec![0u8; 40];
        assert_eq!(r.get_items(1, 4990, 10, &mut out).unwrap(), 40, "{name}");
        assert_eq!(out, data(1, 5000)[4990 * 4..], "{name}");
        assert!(r.get_items(1, 4995, 10, &mut out).is_err(), "{name}");
        assert!(r.get_items(2, 0, 1, &mut out).is_err(), "{name}");
    }
}

#[test]
fn appended_zero_chunks_take_no_space_in_file_frames() {
    let path = scratch("zeros-append.b2frame");
    let storage = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cparams(),
        ..Storage::default()
    };
    let mut s = SChunk::new(storage).unwrap();
    s.append_buffer(&data(0, 10_000)).unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    let mut t = SChunk::new(Storage {
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    t.fill_special(10_000, Special::Zero, 40_000).unwrap();
    let zero_chunk = t.get_chunk(0).unwrap().into_owned();
    assert_eq!(zero_chunk.len(), 32);
    s.append_chunk(&zero_chunk).unwrap();
    s.append_chunk(&zero_chunk).unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(
        after < before + 64,
        "two zero chunks grew the file from {before} to {after}"
    );
    assert_eq!(s.cbytes(), SChunk::open(&path).unwrap().cbytes());
    let mut r = SChunk::open(&path).unwrap();
    let c = contents(&mut r);
    assert_eq!(c[1], vec![0u8; 40_000]);
    assert_eq!(c[2], vec![0u8; 40_000]);
}

/// Random edits (including zero chunks and variable sizes) against a model,
/// re-reading the frame from scratch after every step.
#[test]
fn random_edits_match_a_model() {
    let mut zt = SChunk::new(Storage {
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    zt.fill_special(500, Special::Zero, 2000).unwrap();
    let zero = zt.get_chunk(0).unwrap().into_owned();
    for (name, storage) in storages("random") {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % m
        };
        let mut s = SChunk::new(storage).unwrap();
        let mut model: Vec<Vec<u8>> = Vec::new();
        for step in 0..80 {
            let n = model.len() as u64;
            let op = next(6);
            let k = step as u32;
            // Mostly full chunks of 500 items; sometimes other sizes.
            let items = if next(8) == 0 {
                1 + next(700) as u32
            } else {
                500
            };
            let fresh = if next(5) == 0 && items == 500 {
                None
            } else {
                Some(data(k, items))
            };
            let chunk = match &fresh {
                Some(d) => chunk_of(d),
                None => zero.clone(),
            };
            let plain = fresh.clone().unwrap_or_else(|| vec![0u8; 2000]);
            let res = match op {
                0 | 1 => s.append_chunk(&chunk).map(|_| model.push(plain)),
                2 if n > 0 => {
                    let i = next(n + 1) as usize;
                    s.insert_chunk(i as i64, &chunk)
                        .map(|_| model.insert(i, plain))
                }
                3 if n > 0 => {
                    let i = next(n) as usize;
                    s.update_chunk(i as i64, &chunk).map(|_| model[i] = plain)
                }
                4 if n > 0 => {
                    let i = next(n) as usize;
                    s.delete_chunk(i as i64).map(|_| {
                        model.remove(i);
                    })
                }
                5 if n > 1 && s.chunksize() == 0 => {
                    let order: Vec<i64> = (0..n as i64).rev().collect();
                    s.reorder_offsets(&order).map(|_| model.reverse())
                }
                _ => Ok(()),
            };
            res.unwrap_or_else(|e| panic!("{name} step {step} op {op}: {e}"));
            let mut r = reopen(&mut s);
            assert_eq!(contents(&mut r), model, "{name} step {step} op {op}");
            assert_eq!(
                r.nbytes(),
                model.iter().map(|c| c.len() as i64).sum::<i64>(),
                "{name} step {step}"
            );
        }
    }
}

#[test]
fn absurd_sizes_in_a_variable_size_frame_do_not_panic() {
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.append_buffer(&data(0, 100)).unwrap();
    s.append_buffer(&data(1, 50)).unwrap();
    s.append_buffer(&data(2, 70)).unwrap();
    assert_eq!(s.chunksize(), 0);
    let mut buf = s.to_buffer().unwrap();
    buf[30..38].copy_from_slice(&(i64::MAX - 10).to_be_bytes());
    let mut r = SChunk::from_buffer(&buf, false).unwrap();
    assert!(r.append_buffer(&data(3, 100)).is_err());
    let mut out = vec![0u8; 400];
    assert_eq!(r.decompress_chunk(0, &mut out).unwrap(), 400);
    let _ = r.get_slice_buffer(0, 10, &mut out[..40]);
    assert!(r.get_slice_buffer(0, i64::MAX / 4, &mut out).is_err());
}

/// A header whose `nbytes` is less than its chunks hold (only a corrupt
/// frame has one) opens and reads, but an edit that would take the count
/// below zero is refused and leaves the file as it was. Before, a delete or
/// an update wrote the negative count back, and the frame no longer opened.
#[test]
fn edits_never_write_a_size_below_zero() {
    let path = scratch("undercount.b2frame");
    let mut s = file_frame(&path);
    // Chunks of two sizes, so that the header's nbytes implies no count of
    // chunks to check on open.
    s.append_buffer(&data(0, 100)).unwrap();
    s.append_buffer(&data(1, 50)).unwrap();
    s.append_buffer(&data(2, 100)).unwrap();
    assert_eq!(s.chunksize(), 0);
    drop(s);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[30..38], 1000i64.to_be_bytes(), "nbytes in the header");
    bytes[30..38].copy_from_slice(&100i64.to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();

    let mut r = SChunk::open(&path).unwrap();
    assert_eq!(
        contents(&mut r),
        vec![data(0, 100), data(1, 50), data(2, 100)]
    );
    let refused = [
        r.delete_chunk(0).unwrap_err(),
        r.update_chunk(1, &chunk_of(&data(2, 10))).unwrap_err(),
    ];
    for e in refused {
        assert_eq!(e.code(), -11, "{}", e.detail());
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let mut again = SChunk::open(&path).unwrap();
    assert_eq!(
        contents(&mut again),
        vec![data(0, 100), data(1, 50), data(2, 100)]
    );
    // An edit that keeps the count at zero or above still goes through.
    assert_eq!(again.update_chunk(1, &chunk_of(&data(3, 60))).unwrap(), 3);
    assert_eq!(again.nbytes(), 100 - 200 + 240);
    assert_eq!(
        contents(&mut SChunk::open(&path).unwrap()),
        vec![data(0, 100), data(3, 60), data(2, 100)]
    );
}

/// A frame is never edited into one whose header says another count of
/// chunks than it holds, which would not reopen with them: neither by a
/// chunk of 0 bytes (the reference appends one, and its frame then fails to
/// reopen, or reopens without it), nor, in a corrupt frame, by removing a
/// chunk whose own size is not the one the header's fixed chunk size
/// accounts for it. Chunk lists take empty chunks, as in the reference.
#[test]
fn a_frame_edit_never_writes_a_count_of_chunks_it_does_not_hold() {
    let empty = chunk_of(&[]);
    for (name, storage) in storages("empty-chunk") {
        let mut s = SChunk::new(storage).unwrap();
        let first = s.append_chunk(&empty);
        if name == "chunks" {
            assert_eq!(first.unwrap(), 1);
            s.delete_chunk(0).unwrap();
        } else {
            assert_eq!(first.unwrap_err().code(), -19, "{name}");
        }
        s.append_buffer(&data(0, 100)).unwrap();
        let second = s.append_chunk(&empty);
        if name == "chunks" {
            assert_eq!(second.unwrap(), 2);
            continue;
        }
        assert_eq!(second.unwrap_err().code(), -19, "{name}");
        assert_eq!(s.nchunks(), 1, "{name}");
        assert_eq!(contents(&mut reopen(&mut s)), vec![data(0, 100)], "{name}");
    }

    let path = scratch("miscounted.b2frame");
    let mut s = file_frame(&path);
    s.append_buffer(&data(0, 100)).unwrap();
    s.append_buffer(&data(1, 100)).unwrap();
    let second = s.get_chunk(1).unwrap().into_owned();
    drop(s);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(second.len())
        .position(|w| w == &second[..])
        .expect("chunk 1 in its frame");
    // Chunk 1 says it holds 300 bytes; the header accounts 400 for it.
    bytes[at + 4..at + 8].copy_from_slice(&300i32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let mut r = SChunk::open(&path).unwrap();
    assert_eq!(r.nchunks(), 2);
    let e = r.delete_chunk(1).unwrap_err();
    assert_eq!(e.code(), -11, "{}", e.detail());
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(r.delete_chunk(0).unwrap(), 1);
    assert_eq!(SChunk::open(&path).unwrap().nchunks(), 1);
}

#[test]
fn corrupt_sparse_index_and_files_do_not_panic() {
    let dir = scratch("corrupt-dir.b2frame");
    let storage = Storage {
        contiguous: false,
        urlpath: Some(dir.clone()),
        cparams: cparams(),
        ..Storage::default()
    };
    let mut s = SChunk::new(storage).unwrap();
    s.meta_add("m", b"abc").unwrap();
    s.append_buffer(&data(0, 40)).unwrap();
    s.append_buffer(&data(1, 40)).unwrap();
    let index = dir.join("chunks.b2frame");
    let good = std::fs::read(&index).unwrap();
    let chunk1 = std::fs::read(dir.join("00000001.chunk")).unwrap();
    for pos in 0..good.len() {
        let mut bad = good.clone();
        bad[pos] ^= 0x5a;
        std::fs::write(&index, &bad).unwrap();
        if let Ok(r) = SChunk::open(&dir) {
            let mut out = vec![0u8; 1 << 12];
            for i in 0..r.nchunks().min(4) {
                let _ = r.decompress_chunk(i, &mut out);
            }
        }
    }
    std::fs::write(&index, &good).unwrap();
    for cut in [0, 10, chunk1.len() / 2, chunk1.len() - 1] {
        std::fs::write(dir.join("00000001.chunk"), &chunk1[..cut]).unwrap();
        let r = SChunk::open(&dir).unwrap();
        let mut out = vec![0u8; 160];
        assert!(
            r.decompress_chunk(1, &mut out).is_err(),
            "chunk file cut at {cut}"
        );
        assert_eq!(r.decompress_chunk(0, &mut out).unwrap(), 160);
    }
}

#[test]
fn into_buffer_matches_to_buffer() {
    for (name, storage) in storages("into") {
        let mut s = SChunk::new(storage).unwrap();
        s.meta_add("m", b"1").unwrap();
        s.append_buffer(&data(0, 300)).unwrap();
        let copy = s.to_buffer().unwrap();
        assert_eq!(s.into_buffer().unwrap(), copy, "{name}");
    }
}

#[test]
fn variable_length_blocks_and_helpers() {
    for (name, storage) in storages("vlb") {
        let path = storage.urlpath.clone();
        let mut s = SChunk::new(storage).unwrap();
        let blocks: [&[u8]; 3] = [b"first block", &[7u8; 3000], b"third"];
        s.append_vlblocks(&blocks).unwrap();
        s.append_vlblocks(&[b"solo".as_slice()]).unwrap();
        assert!(s.vl_blocks(), "{name}");
        // Regular chunks cannot join a VL-block super-chunk.
        assert!(s.append_buffer(&data(0, 10)).is_err(), "{name}");
        let r = reopen(&mut s);
        assert!(r.vl_blocks(), "{name}");
        for (i, b) in blocks.iter().enumerate() {
            assert_eq!(r.get_vlblock(0, i).unwrap(), *b, "{name}");
        }
        assert_eq!(r.get_vlblock(1, 0).unwrap(), b"solo", "{name}");
        assert!(r.get_vlblock(1, 1).is_err(), "{name}");
        match name {
            "chunks" => assert!(s.frame_offsets().unwrap().is_none()),
            _ => assert_eq!(r.frame_offsets().unwrap().unwrap().len(), 2, "{name}"),
        }
        if let Some(p) = path {
            SChunk::remove_urlpath(&p).unwrap();
            assert!(!p.exists(), "{name}");
            SChunk::remove_urlpath(&p).unwrap();
        }
    }
}

#[test]
fn copy_onto_itself_is_refused() {
    let path = scratch("self.b2frame");
    let storage = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cparams(),
        ..Storage::default()
    };
    let mut s = SChunk::new(storage.clone()).unwrap();
    s.append_buffer(&data(0, 100)).unwrap();
    assert_eq!(s.copy(storage).unwrap_err().code(), -23);
    assert_eq!(
        contents(&mut SChunk::open(&path).unwrap()),
        vec![data(0, 100)]
    );
}

#[test]
fn cell_filters_take_the_block_shape_from_the_b2nd_layer() {
    use b2nd_core::ndarray::NdMeta;
    // NDCELL (id 32) with 4x4 cells over 16x16 blocks of int32 (1024 bytes).
    let mut cp = cparams();
    cp.filters = [0, 0, 0, 0, 0, 32];
    cp.filters_meta = [0, 0, 0, 0, 0, 4];
    let layer = NdMeta::new(vec![32, 32], vec![32, 32], vec![16, 16], "<i4", 0)
        .to_b2nd_bytes()
        .unwrap();
    let src: Vec<u8> = (0u32..1024)
        .flat_map(|i| (i / 3 % 50).to_le_bytes())
        .collect();
    for (name, mut storage) in storages("cells") {
        storage.cparams = cp.clone();
        let mut s = SChunk::new(storage).unwrap();
        // Without the layer the filter has no block shape: the reference's
        // filter fails too, and the pipeline reports it as -18.
        let e = s.append_buffer(&src).unwrap_err();
        assert_eq!(e.code(), -18, "{name}");
        assert_eq!(s.nchunks(), 0, "{name}");
        s.meta_add("b2nd", &layer).unwrap();
        s.append_buffer(&src).unwrap();
        let chunk = s.get_chunk(0).unwrap().into_owned();
        assert_eq!(
            chunk[2] & 0x02,
            0,
            "{name}: memcpyed, the filter did not run"
        );
        // Decoding needs the shape as well: a bare chunk call cannot do it.
        let mut out = vec![0u8; src.len()];
        let bare = b2nd_core::chunk::decompress(&chunk, &mut out);
        assert_eq!(bare.map_err(|e| e.code()), Err(-18), "{name}");
        assert_eq!(contents(&mut s), vec![src.clone()], "{name}");
        if s.storage().urlpath.is_some() || s.is_frame() {
            let mut back = reopen(&mut s);
            assert_eq!(contents(&mut back), vec![src.clone()], "{name}: reopened");
        }
    }
}
