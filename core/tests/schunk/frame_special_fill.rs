//! `fill_special` on a frame stores the chunk-offsets index as the
//! reference does: one repeated-value chunk (40 bytes) instead of a
//! compressed array of `nchunks` offsets, so the frame file has the same
//! bytes as the one python-blosc2 (C-Blosc2) writes; it reads back, and the
//! index turns into a regular one as soon as a chunk changes.

use crate::common;

use b2nd_core::schunk::{CParams, SChunk, Special, Storage};
use common::TempDir;

const PY_FILL: &str = "import sys, os, blosc2\n\
path, nitems, kind, chunksize = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])\n\
cp = {'typesize': 4, 'codec': blosc2.Codec.BLOSCLZ, 'clevel': 5, 'nthreads': 1,\n\
      'filters': [blosc2.Filter.NOFILTER] * 5 + [blosc2.Filter.SHUFFLE], 'filters_meta': [0] * 6,\n\
      'splitmode': blosc2.SplitMode.FORWARD_COMPAT_SPLIT}\n\
s = blosc2.SChunk(chunksize=chunksize, contiguous=True, urlpath=path, cparams=cp, dparams={'nthreads': 1}, mode='w')\n\
s.fill_special(nitems, getattr(blosc2.SpecialValue, kind))\n\
print(s.nchunks)\n";

fn ours(path: &std::path::Path, nitems: i64, kind: Special, chunksize: i32) -> SChunk {
    let mut s = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.to_owned()),
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    s.fill_special(nitems, kind, chunksize).unwrap();
    s
}

#[test]
fn special_fill_stores_a_repeated_value_index() {
    let dir = TempDir::new("frame-fill");
    let path = dir.join("ours.b2frame");
    let s = ours(&path, 10_500, Special::Zero, 4000);
    assert_eq!(s.nchunks(), 11);
    drop(s);
    // header + 40-byte index + trailer: nothing grows with nchunks.
    let big = dir.join("big.b2frame");
    drop(ours(&big, 10_000_000, Special::Zero, 4000));
    let big_len = std::fs::metadata(&big).unwrap().len();
    assert!(
        big_len < 300,
        "frame of 10000 special chunks is {big_len} bytes"
    );

    let mut s = SChunk::open(&big).unwrap();
    assert_eq!(s.nchunks(), 10_000);
    let offsets = s.frame_offsets().unwrap().unwrap();
    assert!(offsets.iter().all(|&o| o == offsets[0]));
    let mut out = vec![1u8; 4000];
    s.decompress_chunk(1234, &mut out).unwrap();
    assert!(out.iter().all(|&b| b == 0));
    // A real chunk turns the index into a regular compressed one.
    let data: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
    let c = {
        let mut m = SChunk::new(Storage::in_memory(s.cparams().clone())).unwrap();
        m.append_buffer(&data).unwrap();
        m.get_chunk(0).unwrap().into_owned()
    };
    s.update_chunk(7, &c).unwrap();
    drop(s);
    let s = SChunk::open(&big).unwrap();
    s.decompress_chunk(7, &mut out).unwrap();
    assert_eq!(out, data);
    s.decompress_chunk(8, &mut out).unwrap();
    assert!(out.iter().all(|&b| b == 0));

    if let Some(py) = common::python_oracle("special fill compared with python-blosc2") {
        for (kind, ours_kind, nitems) in [
            ("ZERO", Special::Zero, 10_500i64),
            ("UNINIT", Special::Uninit, 8_000),
            ("NAN", Special::Nan, 123_457),
            ("ZERO", Special::Zero, 10_000_000), // index larger than a block
        ] {
            let theirs = dir.join(format!("py-{kind}-{nitems}.b2frame"));
            let out = common::run_python(
                &py,
                PY_FILL,
                &[
                    theirs.as_os_str(),
                    nitems.to_string().as_ref(),
                    kind.as_ref(),
                    "4000".as_ref(),
                ],
            );
            let mine = dir.join(format!("rs-{kind}-{nitems}.b2frame"));
            let s = ours(&mine, nitems, ours_kind, 4000);
            assert_eq!(out.trim(), s.nchunks().to_string());
            drop(s);
            let a = std::fs::read(&theirs).unwrap();
            let b = std::fs::read(&mine).unwrap();
            assert_eq!(common::hex(&b), common::hex(&a), "{kind} frame bytes");
        }
    }
}

/// Resident memory of this process, in bytes (Linux).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A frame can declare ~2^28 chunks in a few hundred bytes (a special fill
/// writes one; so can a hostile file). Opening one of 2^27 keeps the repeated
/// index as one value instead of 1 GiB of entries, so it opens at once, in little
/// memory, and every chunk reads back. Changing a chunk then expands the
/// index (fallibly: a memory error, never an abort).
#[test]
fn a_repeated_index_of_2_pow_27_chunks_opens_without_expanding() {
    let mut s = SChunk::new(Storage {
        contiguous: true,
        cparams: CParams {
            typesize: 8,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    let nchunks: i64 = 1 << 27;
    s.fill_special(nchunks * 2, Special::Zero, 16).unwrap();
    let frame = s.to_buffer().unwrap();
    drop(s);
    assert!(frame.len() < 1024, "frame of {} bytes", frame.len());
    let before = rss();
    let started = std::time::Instant::now();
    let r = SChunk::from_buffer(&frame, false).unwrap();
    assert_eq!(r.nchunks(), nchunks);
    let mut out = [1u8; 16];
    assert_eq!(r.decompress_chunk(nchunks - 1, &mut out).unwrap(), 16);
    assert_eq!(out, [0u8; 16]);
    let grown = rss().saturating_sub(before);
    assert!(
        grown < 256 << 20,
        "opening grew the process by {grown} bytes"
    );
    assert!(
        started.elapsed().as_secs() < 20,
        "took {:?}",
        started.elapsed()
    );
}
