//! Cross-checks with python-blosc2 (C-Blosc2 3.3.5): frames written here are
//! read there, frames written there are read here, and frames modified here
//! still open there with the right contents. Skipped with a note when the
//! Python oracle is absent (B2ND_PYTHON, else /tmp/venv/bin/python).

use std::path::{Path, PathBuf};
use std::process::Command;

use b2nd::schunk::{CParams, SChunk, Storage};
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
    let p = std::env::temp_dir().join(format!("b2nd-py-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_dir_all(&p);
    p
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
for path in sys.argv[1:]:
    s = blosc2.open(path)
    if not isinstance(s, blosc2.SChunk):
        s = s.schunk
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

#[test]
fn written_here_read_there_and_modified_here() {
    let Some(py) = python() else { return };
    let cframe = scratch("here.b2frame");
    let sframe = scratch("here-dir.b2frame");
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut all = Vec::new();
    for (path, contiguous) in [(&cframe, true), (&sframe, false)] {
        let mut s = SChunk::new(Storage {
            contiguous,
            urlpath: Some(path.clone()),
            cparams: cp.clone(),
            ..Storage::default()
        })
        .unwrap();
        // msgpack: [1, 2, 3] and "hello"
        s.meta_add("m", &[0x93, 1, 2, 3]).unwrap();
        for k in 0..4 {
            s.append_buffer(&data(k, 1000)).unwrap();
        }
        s.vlmeta_add("v", &[0xa5, b'h', b'e', b'l', b'l', b'o'], None)
            .unwrap();
        all.push((path.clone(), s));
    }
    let meta = ["meta m=[1, 2, 3]", "vlmeta v='hello'"];
    let mut want = Vec::new();
    for (p, s) in all.iter_mut() {
        want.extend(expected(p, s, &meta));
    }
    // Special-value frames and an empty frame, read in the same process.
    let zeros = scratch("zeros.b2frame");
    let mut z = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(zeros.clone()),
        cparams: cp.clone(),
        ..Storage::default()
    })
    .unwrap();
    z.fill_special(2500, b2nd::schunk::Special::Zero, 4000)
        .unwrap();
    let nans = scratch("nans-dir.b2frame");
    let mut n = SChunk::new(Storage {
        contiguous: false,
        urlpath: Some(nans.clone()),
        cparams: cp.clone(),
        ..Storage::default()
    })
    .unwrap();
    n.fill_special(1500, b2nd::schunk::Special::Nan, 4000)
        .unwrap();
    let empty = scratch("empty.b2frame");
    let _e = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(empty.clone()),
        cparams: cp.clone(),
        ..Storage::default()
    })
    .unwrap();
    let mut extra = Vec::new();
    extra.extend(expected(&zeros, &mut z, &[]));
    extra.extend(expected(&nans, &mut n, &[]));
    extra.push(format!(
        "{} nchunks=0 chunksize=-1 typesize=4 nbytes=0",
        empty.display()
    ));
    let extra_args = [
        zeros.display().to_string(),
        nans.display().to_string(),
        empty.display().to_string(),
    ];
    let extra_args: Vec<&str> = extra_args.iter().map(String::as_str).collect();
    assert_eq!(run(&py, DESCRIBE, &extra_args), extra);
    let args: Vec<String> = all.iter().map(|(p, _)| p.display().to_string()).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(run(&py, DESCRIBE, &args), want);

    // Modify here: insert, update, delete, special fill of a new chunk.
    for (_, s) in all.iter_mut() {
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
        s.vlmeta_update("v", &[0xa3, b'b', b'y', b'e'], None)
            .unwrap();
        s.meta_update("m", &[0x93, 7]).unwrap();
    }
    let meta = ["meta m=[7, 2, 3]", "vlmeta v='bye'"];
    let mut want = Vec::new();
    for (p, s) in all.iter_mut() {
        want.extend(expected(p, s, &meta));
    }
    assert_eq!(run(&py, DESCRIBE, &args), want);
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
    for (k, path) in [cframe, sframe].iter().enumerate() {
        let mut s = SChunk::open(path).unwrap();
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
}
