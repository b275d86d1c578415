//! Growth-SWMR without locking: a reader handle follows what another handle
//! wrote to the same frame file (or sparse directory) by the frame length
//! its header records, or by another file replacing it, and keeps its own
//! view when nothing changed. A b2nd array reader follows a resize.

use crate::common;

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{SChunk, Storage};
use common::{file_storage, TempDir};

fn data(k: u32) -> Vec<u8> {
    (0..1000u32)
        .flat_map(|i| (i * 3 + k).to_le_bytes())
        .collect()
}

#[test]
fn an_unlocked_reader_follows_appends_and_vlmeta() {
    let dir = TempDir::new("schunk-swmr");
    for contiguous in [true, false] {
        let path = dir.join(format!("g-{contiguous}.b2frame"));
        let mut w = SChunk::new(file_storage(&path, contiguous)).unwrap();
        if w.locking() {
            // BLOSC_LOCKING is set here: the unlocked path is not the one run.
            return;
        }
        w.append_buffer(&data(0)).unwrap();
        let mut r = SChunk::open(&path).unwrap();
        assert!(!r.sync_if_stale().unwrap(), "a fresh handle is current");

        w.append_buffer(&data(1)).unwrap();
        assert_eq!(r.nchunks(), 1, "no poll, no change");
        assert!(r.sync_if_stale().unwrap());
        assert_eq!(r.nchunks(), 2);
        assert_eq!(r.nbytes(), w.nbytes());
        let mut out = vec![0u8; 4000];
        r.decompress_chunk(1, &mut out).unwrap();
        assert_eq!(out, data(1));
        assert!(!r.sync_if_stale().unwrap());

        w.vlmeta_add("note", b"longer than nothing", None).unwrap();
        assert!(r.sync_if_stale().unwrap());
        assert_eq!(r.vlmeta_get("note").unwrap(), b"longer than nothing");
        let before = r.rereads();
        assert!(!r.sync_if_stale().unwrap());
        assert_eq!(r.rereads(), before);
    }
}

#[test]
fn a_file_replaced_at_the_path_is_followed_even_at_the_same_length() {
    let dir = TempDir::new("schunk-swmr-replace");
    let path = dir.join("r.b2frame");
    let staged = dir.join("staged.b2frame");
    let mut w = SChunk::new(file_storage(&path, true)).unwrap();
    if w.locking() {
        return;
    }
    w.append_buffer(&data(0)).unwrap();
    let mut r = SChunk::open(&path).unwrap();
    let mut out = vec![0u8; 4000];
    r.decompress_chunk(0, &mut out).unwrap();
    assert_eq!(out, data(0));

    // Same parameters, one chunk of the same compressed size: the same
    // frame length, other bytes, renamed over the reader's file.
    let mut other = SChunk::new(file_storage(&staged, true)).unwrap();
    other.append_buffer(&data(7)).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(std::fs::metadata(&staged).unwrap().len(), len);
    drop(other);
    std::fs::rename(&staged, &path).unwrap();

    assert!(r.sync_if_stale().unwrap());
    r.decompress_chunk(0, &mut out).unwrap();
    assert_eq!(out, data(7));
}

#[test]
fn an_array_reader_follows_a_resize_and_refuses_a_new_chunkshape() {
    let dir = TempDir::new("array-swmr");
    let path = dir.join("a.b2nd");
    let ctx = |chunk: i32| {
        Context::new(
            ArrayStorage::Schunk(Storage {
                contiguous: true,
                urlpath: Some(path.clone()),
                ..Storage::default()
            }),
            4,
            &[10, 10],
            &[chunk, chunk],
            &[chunk, chunk],
            None,
            0,
            Vec::new(),
        )
        .unwrap()
    };
    let mut w = NdArray::zeros(&ctx(5)).unwrap();
    if w.with_schunk(|s| Ok(s.locking())).unwrap() {
        return;
    }
    let mut r = NdArray::open(&path).unwrap();
    assert!(!r.refresh().unwrap());

    w.resize(&[20, 10], None).unwrap();
    let rows: Vec<u8> = (0..100u32).flat_map(|i| (100 + i).to_le_bytes()).collect();
    w.set_slice_cbuffer(&rows, &[10, 10], &[10, 0], &[20, 10])
        .unwrap();
    assert_eq!(r.shape(), &[10, 10]);
    assert!(r.refresh().unwrap());
    assert_eq!(r.shape(), &[20, 10]);
    let mut row = vec![0u8; 40];
    r.get_slice_cbuffer(&[15, 0], &[16, 10], &mut row, &[1, 10])
        .unwrap();
    let want: Vec<u8> = (150..160u32).flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(row, want);

    // Shrinking that drops chunks is followed too.
    w.resize(&[5, 10], None).unwrap();
    assert!(r.refresh().unwrap());
    assert_eq!(r.shape(), &[5, 10]);
    assert!(!r.refresh().unwrap());

    // Another geometry written at the path is refused, not followed.
    drop(w);
    let _other = NdArray::zeros(&ctx(2)).unwrap();
    assert_eq!(r.refresh().unwrap_err().code(), -3);
}
