//! Cross-checks with python-blosc2 (C-Blosc2 3.3.5): frames written here are
//! read there, frames written there are read here, and frames modified here
//! still open there with the right contents. Skipped with a note when the
//! Python oracle is absent (B2ND_PYTHON, else /tmp/venv/bin/python).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use b2nd_core::schunk::{CParams, SChunk, Special, Storage};
use sha2::{Digest, Sha256};

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("B2ND_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/venv/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", "import blosc2, numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        Some(p)
    } else {
        eprintln!(
            "note: python-blosc2 not available at {}; cross-checks skipped",
            p.display()
        );
        None
    }
}

/// Runs `script` with `args`; returns stdout lines.
fn run(py: &Path, script: &str, args: &[&str]) -> Vec<String> {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    common::scratch_path("frame_python", name)
}

fn hex(d: &[u8]) -> String {
    Sha256::digest(d)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn data(k: u32, n: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i * 3 + k * 100_000).to_le_bytes())
        .collect()
}

/// Prints, for each frame path given: nchunks, chunksize, typesize, the
/// metalayers and vlmetalayers (repr), and the digest of every chunk.
const DESCRIBE: &str = r#"
import sys, hashlib, blosc2
for arg in sys.argv[1:]:
    path, _, offset = arg.partition("@")
    s = blosc2.open(path, offset=int(offset or 0))
    if not isinstance(s, blosc2.SChunk):
        s = s.schunk
    path = arg
    print(f"{path} nchunks={s.nchunks} chunksize={s.chunksize} typesize={s.typesize} nbytes={s.nbytes}")
    for k in sorted(s.meta.keys()):
        print(f"{path} meta {k}={s.meta[k]!r}")
    for k, v in sorted(s.vlmeta.getall().items()):
        print(f"{path} vlmeta {k}={v!r}")
    for i in range(s.nchunks):
        print(f"{path} chunk {i} {hashlib.sha256(s.decompress_chunk(i)).hexdigest()}")
"#;

/// The lines DESCRIBE should print for `s`, given the expected metadata lines.
fn expected(path: &Path, s: &mut SChunk, meta: &[&str]) -> Vec<String> {
    let p = path.display();
    let mut v = vec![format!(
        "{p} nchunks={} chunksize={} typesize={} nbytes={}",
        s.nchunks(),
        s.chunksize(),
        s.typesize(),
        s.nbytes()
    )];
    v.extend(meta.iter().map(|m| format!("{p} {m}")));
    for i in 0..s.nchunks() {
        let mut out = vec![0u8; 1 << 20];
        let n = s.decompress_chunk(i, &mut out).unwrap();
        v.push(format!("{p} chunk {i} {}", hex(&out[..n])));
    }
    v
}

/// Builds frames here (contiguous and sparse, with metadata; special-value
/// frames; an empty frame), keeps a copy of the first two, edits them
/// (insert, update, delete, append, metadata updates), and has python read
/// everything in one process.
#[test]
fn written_here_read_there_and_modified_here() {
    let Some(py) = python() else { return };
    let mut want = Vec::new();
    let mut paths = Vec::new();
    for (name, contiguous) in [("here.b2frame", true), ("here-dir.b2frame", false)] {
        let path = scratch(name);
        let mut s = SChunk::new(common::file_storage(&path, contiguous)).unwrap();
        // msgpack: [1, 2, 3] and "hello"
        s.meta_add("m", &[0x93, 1, 2, 3]).unwrap();
        for k in 0..4 {
            s.append_buffer(&data(k, 1000)).unwrap();
        }
        s.vlmeta_add("v", &[0xa5, b'h', b'e', b'l', b'l', b'o'], None)
            .unwrap();
        let orig = scratch(&format!("orig-{name}"));
        let mut o = s.copy(common::file_storage(&orig, contiguous)).unwrap();
        want.extend(expected(
            &orig,
            &mut o,
            &["meta m=[1, 2, 3]", "vlmeta v='hello'"],
        ));
        paths.push(orig);

        let mut tmp = SChunk::new(Storage::in_memory(CParams {
            typesize: 4,
            ..CParams::default()
        }))
        .unwrap();
        tmp.append_buffer(&data(50, 1000)).unwrap();
        tmp.append_buffer(&data(51, 1000)).unwrap();
        let c50 = tmp.get_chunk(0).unwrap().into_owned();
        let c51 = tmp.get_chunk(1).unwrap().into_owned();
        s.insert_chunk(1, &c50).unwrap();
        s.update_chunk(3, &c51).unwrap();
        s.delete_chunk(0).unwrap();
        s.append_buffer(&vec![0u8; 4000]).unwrap();
        s.update_chunk(0, &vec_zero_chunk()).unwrap();
        s.vlmeta_update("v", &[0xa3, b'b', b'y', b'e'], None)
            .unwrap();
        s.meta_update("m", &[0x93, 7]).unwrap();
        want.extend(expected(
            &path,
            &mut s,
            &["meta m=[7, 2, 3]", "vlmeta v='bye'"],
        ));
        paths.push(path);
    }
    let zeros = scratch("zeros.b2frame");
    let mut z = SChunk::new(common::file_storage(&zeros, true)).unwrap();
    z.fill_special(2500, Special::Zero, 4000).unwrap();
    want.extend(expected(&zeros, &mut z, &[]));
    paths.push(zeros);
    let nans = scratch("nans-dir.b2frame");
    let mut n = SChunk::new(common::file_storage(&nans, false)).unwrap();
    n.fill_special(1500, Special::Nan, 4000).unwrap();
    want.extend(expected(&nans, &mut n, &[]));
    paths.push(nans);
    let empty = scratch("empty.b2frame");
    SChunk::new(common::file_storage(&empty, true)).unwrap();
    want.push(format!(
        "{} nchunks=0 chunksize=-1 typesize=4 nbytes=0",
        empty.display()
    ));
    paths.push(empty);

    // A frame embedded after 777 bytes of something else, appended to here.
    let host = scratch("host.bin");
    std::fs::write(&host, vec![b'x'; 777]).unwrap();
    let mut e = SChunk::new(Storage::in_memory(CParams {
        typesize: 4,
        ..CParams::default()
    }))
    .unwrap();
    e.append_buffer(&data(70, 1000)).unwrap();
    let off = e.append_file(&host).unwrap();
    let mut e = SChunk::open_offset(&host, off).unwrap();
    e.append_buffer(&data(71, 1000)).unwrap();
    let tag = PathBuf::from(format!("{}@{off}", host.display()));
    want.extend(expected(&tag, &mut e, &[]));
    paths.push(tag);

    let args: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(run(&py, DESCRIBE, &args), want);
}

/// A 4000-byte zero chunk as the engine makes it (a special chunk).
fn vec_zero_chunk() -> Vec<u8> {
    let mut t = SChunk::new(Storage::in_memory(CParams {
        typesize: 4,
        ..CParams::default()
    }))
    .unwrap();
    t.append_buffer(&vec![0u8; 4000]).unwrap();
    let c = t.get_chunk(0).unwrap().into_owned();
    c
}

/// Writes frames with python-blosc2 (contiguous and sparse, with meta and
/// vlmeta, a zero chunk and a short last chunk) and reads them here.
#[test]
fn written_there_read_here() {
    let Some(py) = python() else { return };
    let cframe = scratch("there.b2frame");
    let sframe = scratch("there-dir.b2frame");
    let script = r#"
import sys, hashlib, blosc2, numpy as np
for path, contiguous in ((sys.argv[1], True), (sys.argv[2], False)):
    cparams = blosc2.CParams(typesize=4, clevel=5, codec=blosc2.Codec.ZSTD)
    s = blosc2.SChunk(chunksize=40000, urlpath=path, contiguous=contiguous, mode="w",
                      cparams=cparams, meta={"shape": [10, 20], "name": "abc"})
    s.append_data(np.arange(10000, dtype=np.int32))
    s.append_data(np.zeros(10000, dtype=np.int32))
    s.append_data(np.arange(10000, 20000, dtype=np.int32))
    s.append_data(np.arange(777, dtype=np.int32) * 5)
    s.vlmeta["attrs"] = {"x": 1}
    s.vlmeta["text"] = "hi"
    for i in range(s.nchunks):
        print(i, hashlib.sha256(s.decompress_chunk(i)).hexdigest())
"#;
    let lines = run(
        &py,
        script,
        &[cframe.to_str().unwrap(), sframe.to_str().unwrap()],
    );
    assert_eq!(lines.len(), 8);
    for (k, path) in [&cframe, &sframe].into_iter().enumerate() {
        let s = SChunk::open(path).unwrap();
        assert_eq!(s.nchunks(), 4);
        assert_eq!(s.typesize(), 4);
        assert_eq!(s.chunksize(), 40000);
        assert_eq!(s.nbytes(), 3 * 40000 + 777 * 4);
        assert_eq!(s.cparams().compcode, 5);
        // msgpack [10, 20] and "abc"
        assert_eq!(s.meta_get("shape").unwrap(), [0x92, 10, 20]);
        assert_eq!(s.meta_get("name").unwrap(), [0xa3, b'a', b'b', b'c']);
        assert_eq!(s.vlmeta_get("text").unwrap(), [0xa2, b'h', b'i']);
        assert_eq!(s.vlmeta_get("attrs").unwrap(), [0x81, 0xa1, b'x', 1]);
        for i in 0..4 {
            let mut out = vec![0u8; 40000];
            let n = s.decompress_chunk(i, &mut out).unwrap();
            assert_eq!(
                format!("{i} {}", hex(&out[..n])),
                lines[k * 4 + i as usize],
                "{}",
                path.display()
            );
        }
        let mut got = vec![0u8; 8];
        s.get_slice_buffer(9999, 10001, &mut got).unwrap();
        assert_eq!(got, [0x0f, 0x27, 0, 0, 0, 0, 0, 0]);
    }

    // Modify the python-written frames here; python must read the edits.
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut tmp = SChunk::new(Storage::in_memory(cp)).unwrap();
    tmp.append_buffer(&data(60, 10000)).unwrap();
    tmp.append_buffer(&data(61, 10000)).unwrap();
    let (c60, c61) = (
        tmp.get_chunk(0).unwrap().into_owned(),
        tmp.get_chunk(1).unwrap().into_owned(),
    );
    let mut want = Vec::new();
    for path in [&cframe, &sframe] {
        let mut s = SChunk::open(path).unwrap();
        s.insert_chunk(1, &c60).unwrap();
        s.update_chunk(0, &c61).unwrap();
        s.delete_chunk(2).unwrap();
        s.vlmeta_update("text", &[0xa2, b'y', b'o'], None).unwrap();
        let meta = [
            "meta name='abc'",
            "meta shape=[10, 20]",
            "vlmeta attrs={'x': 1}",
            "vlmeta text='yo'",
        ];
        want.extend(expected(path, &mut s, &meta));
    }
    let args = [cframe.display().to_string(), sframe.display().to_string()];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(run(&py, DESCRIBE, &args), want);
}

/// A VL-block frame written here decodes in python chunk by chunk.
#[test]
fn vl_block_frames_read_there() {
    let Some(py) = python() else { return };
    let path = scratch("vlb.b2frame");
    let mut s = SChunk::new(common::file_storage(&path, true)).unwrap();
    let blocks: [&[u8]; 3] = [b"alpha", &[9u8; 2000], b"omega!"];
    s.append_vlblocks(&blocks).unwrap();
    s.append_vlblocks(&[b"x".as_slice(), b"yz".as_slice()])
        .unwrap();
    let script = r#"
import sys, blosc2
s = blosc2.open(sys.argv[1])
for i in range(s.nchunks):
    print(s.decompress_chunk(i).hex())
"#;
    let got = run(&py, script, &[path.to_str().unwrap()]);
    let want: Vec<String> = [blocks.concat(), b"xyz".to_vec()]
        .iter()
        .map(|d| d.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    assert_eq!(got, want);
}

/// A frame of more chunks than `frame::index` decodes on open (140,000, an
/// index of 1.1 MB, which stays compressed): python reads what this library
/// wrote; reopened here, it reads chunk by chunk in any order; a vlmetalayer
/// added here writes the index back as it was and an updated chunk writes it
/// anew, and python reads both. (python-blosc2 itself takes minutes to append
/// this many chunks, so the frame is written here; its index chunk is the
/// reference's, byte for byte, as `test_frame_offsets_match_the_reference`
/// checks.)
#[test]
fn frames_with_large_indices_agree_both_ways() {
    let Some(py) = python() else { return };
    const N: usize = 140_000;
    let path = scratch("many-chunks.b2frame");
    let cp = CParams {
        typesize: 8,
        clevel: 1,
        ..CParams::default()
    };
    let mut s = SChunk::new(Storage::in_memory(cp.clone())).unwrap();
    for i in 0..N as i64 {
        s.append_buffer(&i.to_le_bytes()).unwrap();
    }
    std::fs::write(&path, s.to_buffer().unwrap()).unwrap();
    drop(s);
    let check = r#"
import sys, blosc2, numpy as np
s = blosc2.open(sys.argv[1])
got = np.frombuffer(b"".join(s.decompress_chunk(i) for i in range(s.nchunks)), dtype=np.int64)
want = np.arange(int(sys.argv[2]), dtype=np.int64)
if len(sys.argv) > 3:
    want[100_000] = -7
print(s.nchunks, bool((got == want).all()), s.vlmeta.getall())
"#;
    let n = N.to_string();
    let p = path.to_str().unwrap();
    assert_eq!(run(&py, check, &[p, &n]), [format!("{N} True {{}}")]);

    let read = |s: &mut SChunk, i: usize| {
        let mut out = [0u8; 8];
        assert_eq!(s.decompress_chunk(i as i64, &mut out).unwrap(), 8);
        i64::from_le_bytes(out)
    };
    let mut s = SChunk::open(&path).unwrap();
    assert_eq!(s.nchunks(), N as i64);
    for i in [N - 1, 0, 70_001, 2047, 2048, 139_999, 1] {
        assert_eq!(read(&mut s, i), i as i64, "chunk {i}");
    }
    for i in 0..N {
        assert_eq!(read(&mut s, i), i as i64, "chunk {i}");
    }
    let before = std::fs::read(&path).unwrap();
    s.vlmeta_add("note", &[0xa2, b'h', b'i'], None).unwrap();
    drop(s);
    let after = std::fs::read(&path).unwrap();
    // Past the header (whose flags and lengths change), the data section and
    // the index chunk are as they were, up to the last 1000 bytes of the old
    // frame (its trailer and the index chunk's end).
    let header_len = i32::from_be_bytes(before[11..15].try_into().unwrap()) as usize;
    let old_trailer = before.len() - 1000;
    assert!(before[header_len..old_trailer] == after[header_len..old_trailer]);

    let mut one = SChunk::new(Storage::in_memory(cp)).unwrap();
    one.append_buffer(&(-7i64).to_le_bytes()).unwrap();
    let c = one.get_chunk(0).unwrap().into_owned();
    let mut s = SChunk::open(&path).unwrap();
    s.update_chunk(100_000, &c).unwrap();
    assert_eq!(read(&mut s, 100_000), -7);
    drop(s);
    assert_eq!(
        run(&py, check, &[p, &n, "edited"]),
        [format!("{N} True {{'note': 'hi'}}")]
    );
}
