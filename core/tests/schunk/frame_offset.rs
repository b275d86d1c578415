//! A frame embedded at an offset inside a larger file: updates, deletes and
//! appends through `open_offset` never touch the bytes before the frame, a
//! shrinking frame leaves the bytes after it in place (the file is not
//! truncated), and the result still opens here and in python-blosc2.

use crate::common;

use b2nd_core::schunk::{CParams, SChunk, Storage};
use common::TempDir;

const ITEMS: usize = 4096;

fn chunk_data(k: u32, noisy: bool) -> Vec<u8> {
    let mut r = common::XorShift(77 + u64::from(k));
    (0..ITEMS as u32)
        .flat_map(|i| {
            let noise = if noisy { r.next() as u32 } else { 0 };
            (i + k * 100_000).wrapping_add(noise).to_le_bytes()
        })
        .collect()
}

/// A frame of `n` noisy chunks, as bytes.
fn frame_bytes(n: u32) -> Vec<u8> {
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    for k in 0..n {
        s.append_buffer(&chunk_data(k, true)).unwrap();
    }
    s.to_buffer().unwrap()
}

fn values(s: &mut SChunk, n: i64) -> Vec<u8> {
    let mut out = vec![0u8; ITEMS * 4];
    s.decompress_chunk(n, &mut out).unwrap();
    out
}

#[test]
fn shrinking_an_embedded_frame_keeps_the_bytes_around_it() {
    let dir = TempDir::new("frame-offset");
    let path = dir.join("embedded.bin");
    let prefix: Vec<u8> = (0..100u8).collect();
    let suffix: Vec<u8> = b"TAIL".repeat(50);
    let frame = frame_bytes(3);
    let mut file = prefix.clone();
    file.extend_from_slice(&frame);
    file.extend_from_slice(&suffix);
    std::fs::write(&path, &file).unwrap();
    let file_len = file.len();

    let mut s = SChunk::open_offset(&path, 100).unwrap();
    assert_eq!(s.nchunks(), 3);
    // A much more compressible chunk 1: the frame shrinks.
    let smooth = chunk_data(9, false);
    let c = {
        let mut m = SChunk::new(Storage::in_memory(s.cparams().clone())).unwrap();
        m.append_buffer(&smooth).unwrap();
        m.get_chunk(0).unwrap().into_owned()
    };
    s.update_chunk(1, &c).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert_eq!(after.len(), file_len, "the file is not truncated");
    assert_eq!(after[..100], prefix[..], "bytes before the frame");
    assert_eq!(
        after[file_len - suffix.len()..],
        suffix[..],
        "bytes after the frame"
    );
    let frame_len = s.frame_len().unwrap() as usize;
    assert!(frame_len < frame.len());
    drop(s);

    let mut s = SChunk::open_offset(&path, 100).unwrap();
    assert_eq!(values(&mut s, 1), smooth);
    assert_eq!(values(&mut s, 2), chunk_data(2, true));
    // Lazy chunks locate their blocks from the frame start, past the prefix.
    let lazy = s.get_lazychunk(2).unwrap().into_owned();
    assert_ne!(lazy[31] & 0x08, 0);
    let mut src = s.lazy_block_source(&lazy).unwrap();
    let mut out = vec![0u8; ITEMS * 4];
    b2nd_core::chunk::Decompressor::new(b2nd_core::chunk::DParams::default())
        .decompress_with_source(&lazy, &mut *src, &mut out, None)
        .unwrap();
    assert_eq!(out, chunk_data(2, true));
    s.delete_chunk(0).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert_eq!(after.len(), file_len);
    assert_eq!(after[..100], prefix[..]);
    assert_eq!(after[file_len - suffix.len()..], suffix[..]);
    drop(s);
    let mut s = SChunk::open_offset(&path, 100).unwrap();
    assert_eq!(s.nchunks(), 2);
    assert_eq!(values(&mut s, 0), smooth);
    assert_eq!(values(&mut s, 1), chunk_data(2, true));

    if let Some(py) = common::python_oracle("embedded frame read by python-blosc2") {
        let out = common::run_python(
            &py,
            "import sys, blosc2, numpy as np\n\
             s = blosc2.open(sys.argv[1], offset=100)\n\
             a = np.frombuffer(s.decompress_chunk(0), dtype=np.uint32)\n\
             b = np.frombuffer(s.decompress_chunk(1), dtype=np.uint32)\n\
             print(s.nchunks, int(a[0]), int(a[-1]), int(b[5]))",
            &[path.as_os_str()],
        );
        let b5 = u32::from_le_bytes(chunk_data(2, true)[20..24].try_into().unwrap());
        assert_eq!(out.trim(), format!("2 900000 {} {b5}", 900000 + ITEMS - 1));
    }
}

#[test]
fn appending_to_a_frame_at_the_end_of_a_file_keeps_the_prefix() {
    let dir = TempDir::new("frame-offset-append");
    let path = dir.join("tail.bin");
    let prefix = b"not a frame, just some leading bytes".to_vec();
    let mut file = prefix.clone();
    file.extend_from_slice(&frame_bytes(1));
    std::fs::write(&path, &file).unwrap();
    let mut s = SChunk::open_offset(&path, prefix.len() as u64).unwrap();
    s.append_buffer(&chunk_data(5, true)).unwrap();
    let len = s.frame_len().unwrap();
    drop(s);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(after[..prefix.len()], prefix[..]);
    assert_eq!(
        after.len() as u64,
        prefix.len() as u64 + len,
        "file ends with the frame"
    );
    let mut s = SChunk::open_offset(&path, prefix.len() as u64).unwrap();
    assert_eq!(values(&mut s, 0), chunk_data(0, true));
    assert_eq!(values(&mut s, 1), chunk_data(5, true));
    // Shrinking a frame that ends its file truncates the file.
    s.delete_chunk(1).unwrap();
    let l = s.frame_len().unwrap();
    drop(s);
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        prefix.len() as u64 + l
    );
}
