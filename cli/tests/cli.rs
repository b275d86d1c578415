//! The `b2nd` command end to end: exit codes, JSON, bytes against the
//! library's own reads, damaged and truncated files, and no partial outputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use b2nd_core::codecs::names::codec_code;
use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{CParams, SChunk, Storage};
use serde_json::Value;

const SHAPE: [i64; 2] = [30, 40];
const CHUNKS: [i32; 2] = [10, 20];
const BLOCKS: [i32; 2] = [5, 10];

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2nd-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn b2nd(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b2nd"))
        .args(args)
        .output()
        .expect("b2nd runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure is one stderr line, never a panic.
fn assert_one_line_failure(o: &Output, want: i32) {
    assert_eq!(code(o), want, "stderr: {}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn array_data() -> Vec<u8> {
    (0..SHAPE[0] * SHAPE[1])
        .flat_map(|v| ((v * 7) as i32).to_le_bytes())
        .collect()
}

/// An int32 array with a user metalayer and a vlmetalayer, zstd level 3.
fn write_array(path: &Path, contiguous: bool) -> NdArray {
    let cparams = CParams {
        compcode: codec_code("zstd").unwrap(),
        clevel: 3,
        typesize: 4,
        ..CParams::default()
    };
    let storage = ArrayStorage::Schunk(Storage {
        contiguous,
        urlpath: Some(path.to_owned()),
        cparams,
        ..Storage::default()
    });
    let ctx = Context::new(
        storage,
        4,
        &SHAPE,
        &CHUNKS,
        &BLOCKS,
        Some("<i4"),
        0,
        vec![("user".into(), vec![1, 2, 3])],
    )
    .unwrap();
    let mut a = NdArray::from_cbuffer(&ctx, &array_data()).unwrap();
    a.add_vlmetalayer("note", b"hello").unwrap();
    a
}

/// A plain super-chunk of `n` chunks of 1000 int32 each, as a contiguous file.
fn write_schunk(path: &Path, n: i32) -> Vec<Vec<u8>> {
    let mut sc = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.to_owned()),
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    let mut chunks = Vec::new();
    for i in 0..n {
        let data: Vec<u8> = (i * 1000..(i + 1) * 1000)
            .flat_map(|v| (v * 3).to_le_bytes())
            .collect();
        sc.append_buffer(&data).unwrap();
        chunks.push(data);
    }
    chunks
}

/// (start, len) in the file of every chunk of a contiguous frame.
fn chunk_spans(path: &Path) -> Vec<(usize, usize)> {
    let bytes = std::fs::read(path).unwrap();
    let header_len = u32::from_be_bytes(bytes[11..15].try_into().unwrap()) as usize;
    let sc = SChunk::open(path).unwrap();
    let offsets = sc.frame_offsets().unwrap().unwrap();
    (0..sc.nchunks())
        .map(|n| {
            let len = sc.get_chunk(n).unwrap().len();
            (header_len + offsets[n as usize] as usize, len)
        })
        .collect()
}

fn no_leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(!name.contains("b2nd-tmp"), "temporary {name} left behind");
    }
}

#[test]
fn info_json_describes_an_array() {
    let d = scratch("info");
    let p = d.join("a.b2nd");
    drop(write_array(&p, true));
    let o = b2nd(&["info", "--json", s(&p)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["kind"], "array");
    assert_eq!(v["storage"], "contiguous");
    assert_eq!(v["nchunks"], 6);
    assert_eq!(v["nbytes"], 30 * 40 * 4);
    assert!(v["cbytes"].as_i64().unwrap() > 0);
    assert_eq!(v["typesize"], 4);
    assert_eq!(v["codec"], "zstd");
    assert_eq!(v["clevel"], 3);
    assert_eq!(v["filters"], serde_json::json!(["shuffle"]));
    assert_eq!(v["shape"], serde_json::json!([30, 40]));
    assert_eq!(v["chunkshape"], serde_json::json!([10, 20]));
    assert_eq!(v["blockshape"], serde_json::json!([5, 10]));
    assert_eq!(v["dtype"], "<i4");
    let metas: Vec<&str> = v["metalayers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(metas, ["b2nd", "user"]);
    assert_eq!(v["metalayers"][1]["size"], 3);
    assert_eq!(v["vlmetalayers"][0]["name"], "note");
    assert_eq!(v["vlmetalayers"][0]["size"], 5);

    let o = b2nd(&["info", "--json", "--chunks", s(&p)]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 6);
    assert_eq!(chunks[0]["special"], "none");
    assert_eq!(chunks[0]["nbytes"], 10 * 20 * 4);

    let o = b2nd(&["info", s(&p), "--chunks"]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    assert!(
        text.contains("zstd") && text.contains("<i4") && text.contains("note"),
        "{text}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn info_json_describes_a_sparse_schunk() {
    let d = scratch("info-sparse");
    let p = d.join("s.dir");
    let mut sc = SChunk::new(Storage {
        contiguous: false,
        urlpath: Some(p.clone()),
        cparams: CParams {
            typesize: 8,
            clevel: 1,
            compcode: codec_code("lz4").unwrap(),
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    sc.append_buffer(&[0u8; 800]).unwrap();
    sc.append_buffer(&[7u8; 800]).unwrap();
    drop(sc);
    let o = b2nd(&["info", "--json", "--chunks", s(&p)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["kind"], "schunk");
    assert_eq!(v["storage"], "sparse");
    assert_eq!(v["nchunks"], 2);
    assert_eq!(v["codec"], "lz4");
    assert_eq!(v["typesize"], 8);
    assert!(v.get("shape").is_none());
    // The zero chunk is stored as a special index entry: no bytes.
    assert_eq!(v["chunks"][0]["special"], "zero");
    assert_eq!(v["chunks"][0]["cbytes"], 0);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn cat_raw_equals_get_slice_cbuffer() {
    let d = scratch("cat");
    let p = d.join("a.b2nd");
    drop(write_array(&p, false));
    let a = NdArray::open(&p).unwrap();
    let (start, stop) = ([3i64, 5], [27i64, 33]);
    let shape = [24i64, 28];
    let mut want = vec![0u8; 24 * 28 * 4];
    a.get_slice_cbuffer(&start, &stop, &mut want, &shape)
        .unwrap();

    let o = b2nd(&["cat", s(&p), "--slice", "3:27,5:33", "--format", "raw"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(o.stdout, want);

    // The same region in a file, as .npy: the header, then the same bytes.
    let out = d.join("r.npy");
    let o = b2nd(&["cat", s(&p), "--slice", "3:27,5:33", "-o", s(&out)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let npy = std::fs::read(&out).unwrap();
    assert_eq!(&npy[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0);
    let header = std::str::from_utf8(&npy[10..10 + hlen]).unwrap();
    assert!(
        header.contains("'descr': '<i4'") && header.contains("'shape': (24, 28)"),
        "{header}"
    );
    assert_eq!(&npy[10 + hlen..], &want[..]);

    // CSV: one line per row of the last dimension.
    let o = b2nd(&["cat", s(&p), "--slice", "1:3,0:4", "--format", "csv"]);
    assert_eq!(stdout(&o), "280,287,294,301\n560,567,574,581\n");
    // Negative bounds, open ends and bare indices.
    let o = b2nd(&["cat", s(&p), "--slice", "-1,38:", "--format", "csv"]);
    assert_eq!(stdout(&o), format!("{},{}\n", 1198 * 7, 1199 * 7));
    no_leftovers(&d);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn cat_of_a_schunk_reads_items() {
    let d = scratch("cat-schunk");
    let p = d.join("s.b2frame");
    let chunks = write_schunk(&p, 3);
    let o = b2nd(&["cat", s(&p), "--slice", "990:1010", "--format", "raw"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let all: Vec<u8> = chunks.concat();
    assert_eq!(o.stdout, all[990 * 4..1010 * 4]);
    let o = b2nd(&["cat", s(&p), "--slice", "0:2", "--format", "csv"]);
    assert_eq!(stdout(&o), "0\n3\n");
    let o = b2nd(&["cat", s(&p), "--slice", "0:2"]);
    let header = String::from_utf8_lossy(&o.stdout[10..]).into_owned();
    assert!(
        header.contains("'descr': '|V4'") && header.contains("'shape': (2,)"),
        "{header}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_slices_fail_without_output() {
    let d = scratch("cat-bad");
    let p = d.join("a.b2nd");
    drop(write_array(&p, true));
    let out = d.join("o.npy");
    for slice in ["0:31", "5:2", "1:2,3:4,5:6", "a:b", "40"] {
        let o = b2nd(&["cat", s(&p), "--slice", slice, "-o", s(&out)]);
        assert_one_line_failure(&o, 2);
        assert!(!out.exists(), "{slice}: partial output");
    }
    // CSV of a dtype it cannot show.
    let raw = d.join("raw.b2nd");
    let ctx = Context::new(
        ArrayStorage::Schunk(Storage {
            contiguous: true,
            urlpath: Some(raw.clone()),
            ..Storage::default()
        }),
        3,
        &[4],
        &[2],
        &[2],
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    drop(NdArray::from_cbuffer(&ctx, &[1u8; 12]).unwrap());
    let o = b2nd(&["cat", s(&raw), "--format", "csv", "-o", s(&out)]);
    assert_one_line_failure(&o, 2);
    assert!(!out.exists());
    no_leftovers(&d);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn verify_finds_the_damaged_chunk() {
    let d = scratch("verify");
    let p = d.join("s.b2frame");
    write_schunk(&p, 5);
    let o = b2nd(&["verify", s(&p)]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));

    let spans = chunk_spans(&p);
    let mut bytes = std::fs::read(&p).unwrap();
    // The block offsets right after chunk 2's header: no decoder gets past them.
    let (start, _) = spans[2];
    bytes[start + 32..start + 48].fill(0xff);
    let bad = d.join("bad.b2frame");
    std::fs::write(&bad, &bytes).unwrap();
    let o = b2nd(&["verify", s(&bad)]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    let chunk_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("chunk ")).collect();
    assert_eq!(chunk_lines.len(), 1, "{text}");
    assert!(chunk_lines[0].starts_with("chunk 2: "), "{text}");

    // Truncated: the index and trailer are gone, the file does not open.
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    assert_one_line_failure(&b2nd(&["verify", s(&bad)]), 2);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn recover_gives_back_the_chunks_before_the_cut() {
    let d = scratch("recover");
    let p = d.join("s.b2frame");
    let chunks = write_schunk(&p, 10);
    let spans = chunk_spans(&p);
    let bytes = std::fs::read(&p).unwrap();
    let cut = bytes.len() * 7 / 10;
    let cut_path = d.join("cut.b2frame");
    std::fs::write(&cut_path, &bytes[..cut]).unwrap();
    let out = d.join("rec.b2frame");
    let o = b2nd(&["recover", s(&cut_path), s(&out)]);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let report = stdout(&o);

    let orig = SChunk::open(&p).unwrap();
    let rec = SChunk::open(&out).unwrap();
    assert_eq!(rec.nchunks(), 10);
    let mut whole = 0;
    for (n, &(start, len)) in spans.iter().enumerate() {
        let mut got = vec![1u8; 4000];
        rec.decompress_chunk(n as i64, &mut got).unwrap();
        if start + len <= cut {
            whole += 1;
            assert_eq!(got, chunks[n], "chunk {n}");
            let a = orig.get_chunk(n as i64).unwrap().into_owned();
            assert_eq!(
                rec.get_chunk(n as i64).unwrap().as_ref(),
                &a[..],
                "chunk {n} bytes"
            );
            assert!(!report.contains(&format!("chunk {n}: ")), "{report}");
        } else {
            assert!(got.iter().all(|&b| b == 0), "chunk {n}");
            assert!(report.contains(&format!("chunk {n}: lost")), "{report}");
        }
    }
    assert!(whole >= 5, "{whole}");
    let o = b2nd(&["verify", s(&out)]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));

    // An intact frame comes back whole, vlmetalayers included.
    let mut sc = SChunk::open(&p).unwrap();
    sc.vlmeta_add("note", b"kept", None).unwrap();
    drop(sc);
    let out2 = d.join("rec2.b2frame");
    let o = b2nd(&["recover", s(&p), s(&out2)]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(
        SChunk::open(&out2).unwrap().vlmeta_get("note").unwrap(),
        b"kept"
    );

    // Garbage has no header to rebuild from.
    let g = d.join("garbage");
    std::fs::write(&g, vec![0x5a; 5000]).unwrap();
    let out3 = d.join("rec3.b2frame");
    assert_one_line_failure(&b2nd(&["recover", s(&g), s(&out3)]), 2);
    assert!(!out3.exists());
    no_leftovers(&d);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn recover_keeps_an_arrays_geometry() {
    let d = scratch("recover-array");
    let p = d.join("a.b2nd");
    drop(write_array(&p, true));
    let bytes = std::fs::read(&p).unwrap();
    let cut = d.join("cut.b2nd");
    std::fs::write(&cut, &bytes[..bytes.len() * 7 / 10]).unwrap();
    let out = d.join("rec.b2nd");
    let o = b2nd(&["recover", s(&cut), s(&out)]);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let a = NdArray::open(&out).unwrap();
    assert_eq!(a.shape(), SHAPE);
    assert_eq!(a.chunkshape(), CHUNKS);
    assert_eq!(a.dtype(), "<i4");
    assert_eq!(a.metalayer("user"), Some(vec![1, 2, 3]));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn convert_keeps_metalayers_vlmetalayers_and_data() {
    let d = scratch("convert");
    let p = d.join("a.b2nd");
    let src = write_array(&p, true);
    let want = src.to_vec().unwrap();
    drop(src);

    let out = d.join("c.b2nd");
    let o = b2nd(&[
        "convert",
        s(&p),
        s(&out),
        "--codec",
        "lz4",
        "--clevel",
        "9",
        "--filter",
        "bitshuffle",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let c = NdArray::open(&out).unwrap();
    assert_eq!(c.to_vec().unwrap(), want);
    assert_eq!(c.metalayer("user"), Some(vec![1, 2, 3]));
    assert_eq!(c.vlmetalayer("note"), Some(b"hello".to_vec()));
    let cp = c.with_schunk(|sc| Ok(sc.cparams().clone())).unwrap();
    assert_eq!((cp.compcode, cp.clevel), (codec_code("lz4").unwrap(), 9));
    assert_eq!(cp.filters, [0, 0, 0, 0, 0, 2]);
    drop(c);

    // Regridded into a sparse frame.
    let out = d.join("c.dir");
    let o = b2nd(&[
        "convert",
        s(&p),
        s(&out),
        "--sparse",
        "--chunks",
        "15,40",
        "--blocks",
        "5,8",
        "--codec",
        "zlib",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(out.is_dir());
    let c = NdArray::open(&out).unwrap();
    assert_eq!(c.chunkshape(), [15, 40]);
    assert_eq!(c.blockshape(), [5, 8]);
    assert_eq!(c.to_vec().unwrap(), want);
    assert_eq!(c.metalayer("user"), Some(vec![1, 2, 3]));
    assert_eq!(c.vlmetalayer("note"), Some(b"hello".to_vec()));
    drop(c);

    // Bad arguments leave nothing behind.
    let bad = d.join("bad.b2nd");
    for args in [
        vec!["--codec", "nope"],
        vec!["--clevel", "12"],
        vec!["--filter", "zip"],
        vec!["--chunks", "3"],
        vec!["--chunks", "10,10", "--blocks", "20,20"],
    ] {
        let mut all = vec!["convert", s(&p), s(&bad)];
        all.extend(args.iter().copied());
        assert_one_line_failure(&b2nd(&all), 2);
        assert!(!bad.exists(), "{args:?}");
    }
    // Not onto itself.
    assert_one_line_failure(&b2nd(&["convert", s(&p), s(&p)]), 2);
    assert!(NdArray::open(&p).is_ok());
    no_leftovers(&d);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn unopenable_inputs_exit_2() {
    let d = scratch("bad-input");
    let garbage = d.join("garbage");
    std::fs::write(&garbage, vec![0xab; 4096]).unwrap();
    let notsparse = d.join("dir");
    std::fs::create_dir_all(&notsparse).unwrap();
    let missing = d.join("missing");
    let out = d.join("out");
    for path in [&garbage, &notsparse, &missing] {
        assert_one_line_failure(&b2nd(&["info", s(path)]), 2);
        assert_one_line_failure(&b2nd(&["info", "--json", s(path)]), 2);
        assert_one_line_failure(&b2nd(&["verify", s(path)]), 2);
        assert_one_line_failure(&b2nd(&["cat", s(path), "-o", s(&out)]), 2);
        assert_one_line_failure(&b2nd(&["convert", s(path), s(&out)]), 2);
        assert_one_line_failure(&b2nd(&["recover", s(path), s(&out)]), 2);
        assert!(!out.exists());
    }
    // clap's own usage errors keep clap's code.
    assert_eq!(code(&b2nd(&["info"])), 2);
    assert_eq!(code(&b2nd(&["frobnicate"])), 2);
    no_leftovers(&d);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn frames_embedded_at_an_offset() {
    let d = scratch("offset");
    let src = write_array(&d.join("a.b2nd"), true);
    let host = d.join("host.bin");
    std::fs::write(&host, vec![0x42; 1000]).unwrap();
    let offset = src.save_append(&host).unwrap();
    assert_eq!(offset, 1000);
    let off = offset.to_string();
    let o = b2nd(&["info", "--json", "--offset", &off, s(&host)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["offset"], 1000);
    assert_eq!(v["kind"], "array");
    assert_eq!(v["shape"], serde_json::json!([30, 40]));
    assert_eq!(code(&b2nd(&["verify", "--offset", &off, s(&host)])), 0);
    let o = b2nd(&["cat", "--offset", &off, s(&host), "--format", "raw"]);
    assert_eq!(o.stdout, array_data());
    // Without the offset the host file is not a frame.
    assert_one_line_failure(&b2nd(&["info", s(&host)]), 2);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `compact` gives back the bytes that deleted and replaced chunks left in
/// a frame file: the file shrinks by what they held, the chunks left read
/// the same, and a sparse directory is refused with the usage code.
#[test]
fn compact_reclaims_what_deleted_chunks_left() {
    let dir = scratch("compact");
    let path = dir.join("f.b2frame");
    let chunks = write_schunk(&path, 6);
    let dropped: u64 = {
        let mut sc = SChunk::open(&path).unwrap();
        let d = sc.get_chunk(1).unwrap().len() + sc.get_chunk(3).unwrap().len();
        sc.delete_chunk(3).unwrap();
        sc.delete_chunk(1).unwrap();
        d as u64
    };
    let before = std::fs::metadata(&path).unwrap().len();
    let o = b2nd(&["compact", s(&path)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("{dropped} bytes reclaimed")),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), before - dropped);
    let sc = SChunk::open(&path).unwrap();
    for (n, want) in [0, 2, 4, 5].iter().enumerate() {
        let mut out = vec![0u8; 4000];
        sc.decompress_chunk(n as i64, &mut out).unwrap();
        assert_eq!(out, chunks[*want], "chunk {n}");
    }
    no_leftovers(&dir);
    assert!(
        !dir.join("f.b2frame.b2tmp").exists(),
        "the new file left behind"
    );
    let sparse = scratch("compact-sparse");
    assert_one_line_failure(&b2nd(&["compact", s(&sparse)]), 2);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&sparse).unwrap();
}
