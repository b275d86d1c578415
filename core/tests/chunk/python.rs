//! Cross-check against python-blosc2 (C-Blosc2 3.3.5): python compresses and we
//! decompress, we compress and python decompresses, and our compressed bytes
//! are compared with python's for the same parameters.
//!
//! One python process handles the whole batch (spec file in, files out).
//! Set `B2ND_PYTHON` to the interpreter; default `/tmp/venv/bin/python`.
//! Skipped with a note when no interpreter with `blosc2` is found.

use b2nd_core::chunk::{self, CParams, Compressor, DParams, Decompressor};
use std::fmt::Write as _;
use std::path::Path;

use crate::common;
use common::{fixtures_dir, manifest_row, python_oracle, run_python, sha256_hex, TempDir};

const PY_SCRIPT: &str = r#"
import sys, os, blosc2
d = sys.argv[1]
for line in open(os.path.join(d, "spec.txt")):
    f = line.split()
    cid, data = f[0], f[1]
    codec, clevel, typesize, split, nthreads, blocksize, use_dict = map(int, f[2:9])
    filters = [int(x) for x in f[9].split(",")]
    meta = [int(x) for x in f[10].split(",")]
    src = open(os.path.join(d, data), "rb").read()
    try:
        c = blosc2.compress2(src, codec=blosc2.Codec(codec), clevel=clevel, typesize=typesize,
                             splitmode=blosc2.SplitMode(split), nthreads=nthreads, blocksize=blocksize,
                             filters=[blosc2.Filter(x) for x in filters], filters_meta=meta,
                             use_dict=bool(use_dict))
        open(os.path.join(d, cid + ".py"), "wb").write(c)
        open(os.path.join(d, cid + ".pydec"), "wb").write(blosc2.decompress2(c))
    except Exception as e:
        open(os.path.join(d, cid + ".pyerr"), "w").write(str(e))
    rs = os.path.join(d, cid + ".rs")
    if os.path.exists(rs):
        try:
            out = blosc2.decompress2(open(rs, "rb").read())
            open(os.path.join(d, cid + ".rsdec"), "wb").write(out)
        except Exception as e:
            open(os.path.join(d, cid + ".rsdecerr"), "w").write(str(e))
"#;

/// Deterministic test data: smooth (a slow ramp of items), random, constant,
/// and (3) items whose bytes differ by position, so the byte planes of a
/// split block are by turns incompressible, runs and compressible: bytes 0,
/// 1, 6 and 7 of every 8 random, 2 a constant 7, 3 a slow ramp, 4 zero and 5
/// a slower ramp.
pub fn make_data(kind: usize, size: usize, typesize: usize) -> Vec<u8> {
    let mut v = vec![0u8; size];
    match kind {
        0 => {
            for (i, b) in v.iter_mut().enumerate() {
                let item = (i / typesize) as u64;
                let byte = i % typesize;
                *b = ((item / 3) >> (8 * (byte % 8))) as u8;
            }
        }
        1 => {
            let mut x: u64 = 0x9e3779b97f4a7c15 ^ size as u64;
            for b in v.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = (x >> 24) as u8;
            }
        }
        3 => {
            let random = make_data(1, size, typesize);
            for (i, b) in v.iter_mut().enumerate() {
                let item = i / typesize;
                *b = match i % typesize % 8 {
                    2 => 7,
                    3 => (item / 64) as u8,
                    4 => 0,
                    5 => (item / 128) as u8,
                    _ => random[i],
                };
            }
        }
        _ => v.fill(0x5a),
    }
    v
}

#[derive(Clone, Debug)]
pub struct Case {
    pub codec: u8,
    pub clevel: u8,
    pub typesize: usize,
    pub split: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub use_dict: bool,
    pub filters: [u8; 6],
    pub meta: [u8; 6],
    pub data: usize,
    pub size: usize,
}

impl Case {
    pub fn cparams(&self) -> CParams {
        CParams {
            compcode: self.codec,
            clevel: self.clevel,
            typesize: self.typesize as i32,
            splitmode: self.split,
            nthreads: self.nthreads,
            blocksize: self.blocksize,
            use_dict: self.use_dict,
            filters: self.filters,
            filters_meta: self.meta,
            ..CParams::default()
        }
    }
    fn data_name(&self) -> String {
        format!("d{}_{}_{}.bin", self.data, self.size, self.typesize)
    }
}

fn filter_sets(typesize: usize) -> Vec<([u8; 6], [u8; 6])> {
    let mut v = vec![
        ([0; 6], [0; 6]),
        ([0, 0, 0, 0, 0, 1], [0; 6]),
        ([0, 0, 0, 0, 0, 2], [0; 6]),
        ([0, 0, 0, 0, 3, 1], [0; 6]),
    ];
    if typesize == 4 || typesize == 8 {
        v.push(([0, 0, 0, 0, 4, 1], [0, 0, 0, 0, 10, 0]));
        // A shuffle meta groups that many bytes instead of the typesize's;
        // it is the one filter, so it also takes the direct unshuffle path.
        v.push(([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2]));
    }
    v
}

fn matrix(codecs: &[u8]) -> Vec<Case> {
    let sizes = |ts: usize| [0usize, 1, 7, 4096 * ts, 300_001, 70_000 * ts + 3];
    let mut cases = Vec::new();
    let mut k = 0usize;
    for &codec in codecs {
        for clevel in [0u8, 1, 5, 9] {
            for typesize in [1usize, 2, 3, 4, 8, 16] {
                for (filters, meta) in filter_sets(typesize) {
                    for split in 1..=4 {
                        let s = sizes(typesize);
                        k += 1;
                        cases.push(Case {
                            codec,
                            clevel,
                            typesize,
                            split,
                            nthreads: 1 + (k % 2) as i16,
                            blocksize: 0,
                            use_dict: false,
                            filters,
                            meta,
                            data: k % 3,
                            size: s[(k + split as usize) % s.len()],
                        });
                    }
                }
            }
        }
    }
    cases
}

struct Outcome {
    total: usize,
    identical: usize,
    identical_by_codec: [(usize, usize); 6],
    failures: Vec<String>,
    /// Cases with a trailing partial item under DELTA/TRUNC_PREC (see above).
    quirky: usize,
    /// Non-identical cases not explained by a known quirk or zlib.
    odd: Vec<String>,
    /// Cases where python's chunk holds our blocks, in another order.
    reordered: usize,
}

fn run_matrix(py: &Path, cases: &[Case], tag: &str) -> Outcome {
    let dir = TempDir::new(&format!("chunk_py_{tag}"));
    let mut spec = String::new();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let dpath = dir.join(c.data_name());
        if !dpath.exists() {
            std::fs::write(&dpath, make_data(c.data, c.size, c.typesize)).unwrap();
        }
        let src = make_data(c.data, c.size, c.typesize);
        let mut dst = vec![0u8; src.len() + 32];
        match Compressor::new(c.cparams()).and_then(|mut z| z.compress(&src, &mut dst)) {
            Ok(n) if n > 0 => std::fs::write(dir.join(format!("c{i}.rs")), &dst[..n]).unwrap(),
            Ok(_) => failures.push(format!("case {i} {c:?}: we returned 0 with dst = src + 32")),
            Err(e) => failures.push(format!("case {i} {c:?}: our compress failed: {e}")),
        }
        let join = |a: &[u8; 6]| {
            a.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        writeln!(
            spec,
            "c{i} {} {} {} {} {} {} {} {} {} {}",
            c.data_name(),
            c.codec,
            c.clevel,
            c.typesize,
            c.split,
            c.nthreads,
            c.blocksize,
            u8::from(c.use_dict),
            join(&c.filters),
            join(&c.meta)
        )
        .unwrap();
    }
    std::fs::write(dir.join("spec.txt"), spec).unwrap();
    run_python(py, PY_SCRIPT, &[dir.path()]);

    let mut identical = 0;
    let mut quirky = 0;
    let mut odd = Vec::new();
    let mut reordered = 0;
    let mut by_codec = [(0usize, 0usize); 6];
    let mut dec = Decompressor::new(DParams {
        nthreads: 2,
        ..DParams::default()
    });
    for (i, c) in cases.iter().enumerate() {
        let src = make_data(c.data, c.size, c.typesize);
        let ours = std::fs::read(dir.join(format!("c{i}.rs"))).ok();
        let theirs = std::fs::read(dir.join(format!("c{i}.py"))).ok();
        let pydec = std::fs::read(dir.join(format!("c{i}.pydec"))).ok();
        let lossy = c.filters.contains(&4);
        // The reference's DELTA and TRUNC_PREC leave the bytes of a trailing
        // partial item unwritten (stale scratch), so such chunks are neither
        // reproducible nor always lossless there; we copy those bytes through.
        let partial_item = (c.filters.contains(&3) || lossy) && c.size % c.typesize != 0;
        if partial_item {
            quirky += 1;
        }
        // Known reference bug: after a dictionary was built but the data did
        // not compress, the reference keeps the dictionary flag on a memcpyed
        // chunk, which it then cannot decode itself; we clear the flag.
        let ref_dict_bug = theirs
            .as_ref()
            .is_some_and(|t| t.len() > 31 && t[2] & 0x2 != 0 && t[31] & 0x1 != 0);
        // Known reference bug: a forced blocksize that is not a multiple of the
        // typesize is used rounded down but recorded as given, so the
        // reference cannot decode its own (non-memcpyed) chunk; we record the
        // size used.
        let ref_bs_bug = c.blocksize > 0
            && c.blocksize as usize % c.typesize != 0
            && theirs
                .as_ref()
                .is_some_and(|t| t.len() > 2 && t[2] & 0x2 == 0);
        if ref_bs_bug {
            quirky += 1;
        }
        let pydec = if ref_dict_bug {
            Some(src.clone())
        } else {
            pydec
        };
        // python → us: we must decode python's chunk exactly as python does,
        // and to the source when the case is lossless and python's round trip is.
        match (&theirs, &pydec) {
            _ if ref_bs_bug => {}
            (Some(t), Some(pd)) => {
                let mut out = vec![0u8; src.len()];
                match dec.decompress(t, &mut out) {
                    Ok(n) if n == src.len() && out == *pd => {}
                    Ok(n) => failures.push(format!(
                        "case {i} {c:?}: python chunk decoded to other bytes than python's ({n})"
                    )),
                    Err(e) => {
                        failures.push(format!("case {i} {c:?}: python chunk failed here: {e}"))
                    }
                }
                if !lossy && !partial_item && *pd != src {
                    failures.push(format!("case {i} {c:?}: python's own round trip is lossy"));
                }
            }
            _ => {
                let err =
                    std::fs::read_to_string(dir.join(format!("c{i}.pyerr"))).unwrap_or_default();
                failures.push(format!("case {i} {c:?}: python could not compress: {err}"));
            }
        }
        // us → python: python must decode our chunk to what we decode it to,
        // which is the source unless the case is lossy.
        if let Some(o) = &ours {
            let mut mine = vec![0u8; src.len()];
            match dec.decompress(o, &mut mine) {
                Ok(_) => {
                    if !lossy && mine != src {
                        failures.push(format!("case {i} {c:?}: our own round trip is wrong"));
                    }
                }
                Err(e) => failures.push(format!("case {i} {c:?}: our own chunk failed here: {e}")),
            }
            match std::fs::read(dir.join(format!("c{i}.rsdec"))) {
                Ok(d) if d == mine => {}
                Ok(_) => failures.push(format!(
                    "case {i} {c:?}: python decoded our chunk to other bytes"
                )),
                Err(_) => {
                    let err = std::fs::read_to_string(dir.join(format!("c{i}.rsdecerr")))
                        .unwrap_or_default();
                    failures.push(format!("case {i} {c:?}: python rejected our chunk: {err}"));
                }
            }
        }
        if let (Some(o), Some(t)) = (&ours, &theirs) {
            let slot = &mut by_codec[usize::from(c.codec).min(5)];
            slot.1 += 1;
            if o == t {
                identical += 1;
                slot.0 += 1;
            } else {
                if blocks_in_another_order(o, t) {
                    reordered += 1;
                } else if !(partial_item || ref_dict_bug || ref_bs_bug || c.codec == 4) {
                    odd.push(format!("case {i} {c:?}: {} vs {} bytes", o.len(), t.len()));
                }
                let (a, b) = (o.len() as f64, t.len() as f64);
                // zlib: the reference may be built with zlib-ng, whose streams
                // (and sizes) differ from stock zlib's.
                let zlib = c.codec == 4 || partial_item || ref_bs_bug;
                if !zlib && !ref_dict_bug && (a - b).abs() > 0.01 * b {
                    failures.push(format!(
                        "case {i} {c:?}: size {} vs python {}",
                        o.len(),
                        t.len()
                    ));
                }
                if !ref_dict_bug && !zlib && o.len() == t.len() && o[..32] != t[..32] {
                    failures.push(format!(
                        "case {i} {c:?}: headers differ {:02x?} vs {:02x?}",
                        &o[..32],
                        &t[..32]
                    ));
                }
            }
        }
    }
    Outcome {
        total: cases.len(),
        identical,
        identical_by_codec: by_codec,
        failures,
        quirky,
        odd,
        reordered,
    }
}

/// Whether two chunks of the same header hold the same blocks, stored in
/// another order. With several threads, the reference writes each block
/// where the output stands when that block is done (in order of completion,
/// with `bstarts` pointing at it), so its chunks vary from run to run; this
/// library writes blocks in order.
fn blocks_in_another_order(ours: &[u8], theirs: &[u8]) -> bool {
    let rd = |b: &[u8], at: usize| -> Option<usize> {
        let v = i32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    // Memcpyed and special chunks have no block starts.
    if ours.len() != theirs.len() || ours.len() < 32 || ours[..32] != theirs[..32] {
        return false;
    }
    if ours[2] & 0x02 != 0 || ours[31] & 0x70 != 0 {
        return false;
    }
    let (Some(nbytes), Some(blocksize)) = (rd(ours, 4), rd(ours, 8)) else {
        return false;
    };
    if blocksize == 0 {
        return false;
    }
    let nblocks = nbytes.div_ceil(blocksize);
    // Each block runs from its start to the next start above it.
    let extents = |b: &[u8]| -> Option<Vec<(usize, usize)>> {
        let starts: Vec<usize> = (0..nblocks)
            .map(|j| rd(b, 32 + 4 * j))
            .collect::<Option<_>>()?;
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        starts
            .iter()
            .map(|&s| {
                let end = sorted.iter().copied().find(|&e| e > s).unwrap_or(b.len());
                (s <= end).then_some((s, end))
            })
            .collect()
    };
    let (Some(a), Some(b)) = (extents(ours), extents(theirs)) else {
        return false;
    };
    let first = |x: &[(usize, usize)]| x.iter().map(|e| e.0).min().unwrap_or(ours.len());
    // The block starts and any dictionary section before the first block.
    let head_a = ours.get(32 + 4 * nblocks..first(&a));
    let head_b = theirs.get(32 + 4 * nblocks..first(&b));
    a != b
        && head_a.is_some()
        && head_a == head_b
        && a.iter()
            .zip(&b)
            .all(|(&(s, e), &(t, f))| ours[s..e] == theirs[t..f])
}

fn report(o: &Outcome, tag: &str) {
    println!(
        "[{tag}] byte-identical: {}/{} cases ({} hitting a reference quirk, see the test source)",
        o.identical, o.total, o.quirky
    );
    println!(
        "[{tag}] {} cases with the same blocks in another order (the reference's threads)",
        o.reordered
    );
    println!("[{tag}] {} other non-identical cases", o.odd.len());
    for x in o.odd.iter().take(15) {
        println!("  {x}");
    }
    for (codec, (same, n)) in o.identical_by_codec.iter().enumerate() {
        if *n > 0 {
            println!("[{tag}]   codec {codec}: {same}/{n} identical");
        }
    }
    let mut shown: Vec<&String> = o
        .failures
        .iter()
        .filter(|f| !f.contains("not available yet"))
        .collect();
    shown.extend(
        o.failures
            .iter()
            .filter(|f| f.contains("not available yet")),
    );
    for f in shown.into_iter().take(40) {
        println!("FAIL {f}");
    }
    assert!(
        o.failures.is_empty(),
        "{} failures (first ones printed above)",
        o.failures.len()
    );
    assert!(
        o.odd.is_empty(),
        "{} chunks differ from python's for no known reason (printed above)",
        o.odd.len()
    );
}

#[test]
fn reordered_blocks_are_told_from_other_differences() {
    let src = make_data(0, 300_001, 2);
    let cp = CParams {
        compcode: 1,
        typesize: 2,
        blocksize: 65536,
        filters: [0, 0, 0, 0, 0, 1],
        ..CParams::default()
    };
    let mut dst = vec![0u8; src.len() + 64];
    let n = Compressor::new(cp)
        .unwrap()
        .compress(&src, &mut dst)
        .unwrap();
    let chunk = &dst[..n];
    let start = |j: usize| i32::from_le_bytes(chunk[32 + 4 * j..36 + 4 * j].try_into().unwrap());
    let (s0, s1, s2) = (start(0) as usize, start(1) as usize, start(2) as usize);
    // Blocks 0 and 1 stored the other way round, their starts swapped to match.
    let mut swapped = chunk[..s0].to_vec();
    swapped.extend_from_slice(&chunk[s1..s2]);
    swapped.extend_from_slice(&chunk[s0..s1]);
    swapped.extend_from_slice(&chunk[s2..]);
    swapped[32..36].copy_from_slice(&((s0 + s2 - s1) as i32).to_le_bytes());
    swapped[36..40].copy_from_slice(&(s0 as i32).to_le_bytes());
    assert!(blocks_in_another_order(chunk, &swapped));
    assert!(!blocks_in_another_order(chunk, chunk), "same order");
    let mut changed = swapped.clone();
    *changed.last_mut().unwrap() ^= 1;
    assert!(!blocks_in_another_order(chunk, &changed), "a byte changed");
}

fn codecs_under_test() -> Vec<u8> {
    // blosclz (0) joins once its Rust implementation is on main.
    let mut v = vec![1u8, 2, 4, 5];
    if std::env::var("B2ND_CHUNK_SKIP_BLOSCLZ").is_err() {
        v.insert(0, 0);
    }
    v
}

#[test]
fn python_cross_check_matrix() {
    let Some(py) = python_oracle("cross-check") else {
        return;
    };
    let cases = matrix(&codecs_under_test());
    let o = run_matrix(&py, &cases, "matrix");
    report(&o, "matrix");
}

#[test]
fn python_cross_check_dicts_and_blocksizes() {
    let Some(py) = python_oracle("cross-check") else {
        return;
    };
    let mut cases = Vec::new();
    for codec in [1u8, 2, 5] {
        for clevel in [1u8, 5, 9] {
            for (data, size) in [
                (0usize, 400_000usize),
                (1, 100_000),
                (0, 9_000),
                (2, 200_000),
            ] {
                for filters in [[0u8, 0, 0, 0, 0, 1], [0; 6]] {
                    cases.push(Case {
                        codec,
                        clevel,
                        typesize: 4,
                        split: 4,
                        nthreads: 1,
                        blocksize: 0,
                        use_dict: true,
                        filters,
                        meta: [0; 6],
                        data,
                        size,
                    });
                }
            }
        }
    }
    for blocksize in [1000, 4096, 65536, 3] {
        for typesize in [1usize, 3, 4] {
            cases.push(Case {
                codec: 1,
                clevel: 5,
                typesize,
                split: 4,
                nthreads: 1,
                blocksize,
                use_dict: false,
                filters: [0, 0, 0, 0, 0, 1],
                meta: [0; 6],
                data: 0,
                size: 100_003,
            });
        }
    }
    // Types wider than 255 bytes: stored as typesize 1, blocksize from the real one.
    for typesize in [256usize, 1000, 4096] {
        for codec in [0u8, 1, 5] {
            cases.push(Case {
                codec,
                clevel: 5,
                typesize,
                split: 4,
                nthreads: 1,
                blocksize: 0,
                use_dict: false,
                filters: [0, 0, 0, 0, 0, 1],
                meta: [0; 6],
                data: 0,
                size: 1_000_000,
            });
        }
    }
    let o = run_matrix(&py, &cases, "dicts");
    report(&o, "dicts");
}

/// Split blocks whose streams are by turns stored, runs and compressed
/// (data kind 3), which the encoder filters straight into the chunk
/// (`encode_rows_in_place`: the shuffle, alone or followed by BYTEDELTA),
/// compared byte for byte with python's.
#[test]
fn python_cross_check_split_rows_of_every_kind() {
    let Some(py) = python_oracle("cross-check") else {
        return;
    };
    let mut cases = Vec::new();
    for codec in codecs_under_test() {
        for clevel in [1u8, 5, 9] {
            for typesize in [4usize, 8, 16] {
                for nthreads in [1i16, 2] {
                    // The shuffle, alone and followed by BYTEDELTA (35).
                    for (filters, meta) in [
                        ([0, 0, 0, 0, 0, 1], [0; 6]),
                        ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 0, typesize as u8]),
                    ] {
                        cases.push(Case {
                            codec,
                            clevel,
                            typesize,
                            split: 1,
                            nthreads,
                            blocksize: 0,
                            use_dict: false,
                            filters,
                            meta,
                            data: 3,
                            size: 600_000 * typesize / 8,
                        });
                    }
                }
            }
        }
    }
    let o = run_matrix(&py, &cases, "rows");
    // Fails on any chunk that is not python's bytes, but for zlib's (whose
    // streams differ by build) and the reference's two-thread chunks that
    // hold the same blocks in another order.
    report(&o, "rows");
}

#[test]
fn sticky_blocksize_matches_reference_frame() {
    // The varchunks fixture was written by one reference context: chunk sizes
    // 1000, 500, 2000, 520, 301 got blocksizes 1000, 500, 500, 500, 301.
    let cp = CParams {
        compcode: 1,
        typesize: 1,
        ..CParams::default()
    };
    let mut z = Compressor::new(cp).unwrap();
    let mut got = Vec::new();
    for n in [1000usize, 500, 2000, 520, 301] {
        let src = make_data(0, n, 1);
        let mut dst = vec![0u8; n + 32];
        let c = z.compress(&src, &mut dst).unwrap();
        got.push(chunk::cbuffer_sizes(&dst[..c]).unwrap().2);
    }
    assert_eq!(got, vec![1000, 500, 500, 500, 301]);
}

const PY_EXTRACT: &str = r#"
import sys, os, blosc2
src, out = sys.argv[1], sys.argv[2]
for name in ["varchunks-lz4-3.0.0.b2frame", "vlblocks-lz4-fixed-3.0.0.b2frame", "vlblocks-lz4-variable-3.0.0.b2frame"]:
    s = blosc2.schunk_from_cframe(open(os.path.join(src, name), "rb").read())
    for i in range(s.nchunks):
        open(os.path.join(out, "%s.%d" % (name, i)), "wb").write(s.get_chunk(i))
"#;

/// Chunks of the reference's frame fixtures (VL blocks, variable chunk
/// sizes): they decode to the MANIFEST digests, and compressing the decoded
/// data again gives the very same bytes.
#[test]
fn frame_fixture_chunks_decode_and_recompress_identically() {
    let Some(py) = python_oracle("check") else {
        return;
    };
    let dir = TempDir::new("chunk_frames");
    let compat = fixtures_dir().join("c-blosc2-compat");
    run_python(&py, PY_EXTRACT, &[compat.as_path(), dir.path()]);
    let mut checked = 0;
    for name in [
        "varchunks-lz4-3.0.0.b2frame",
        "vlblocks-lz4-fixed-3.0.0.b2frame",
        "vlblocks-lz4-variable-3.0.0.b2frame",
    ] {
        // One compression context per frame, as the reference super-chunk has.
        let cp = CParams {
            compcode: 1,
            clevel: 9,
            typesize: 1,
            ..CParams::default()
        };
        let mut z = Compressor::new(cp).unwrap();
        for i in 0..5 {
            let c = std::fs::read(dir.join(format!("{name}.{i}"))).unwrap();
            let row = manifest_row(&format!("c-blosc2-compat/{name}"), &format!("chunk {i}"));
            let h = chunk::ChunkHeader::parse(&c).unwrap();
            let mut d = Decompressor::new(DParams::default());
            let mut plain = vec![0u8; h.nbytes()];
            d.decompress(&c, &mut plain).unwrap();
            assert_eq!(sha256_hex(&plain), row.digest, "{name} chunk {i}");
            let mut again = vec![0u8; plain.len() + 64];
            let n = if h.vl_blocks() {
                let blocks = d.decompress_vl(&c).unwrap();
                assert_eq!(blocks.concat(), plain);
                let refs: Vec<&[u8]> = blocks.iter().map(|b| b.as_slice()).collect();
                z.compress_vl(&refs, &mut again).unwrap()
            } else {
                z.compress(&plain, &mut again).unwrap()
            };
            assert_eq!(&again[..n], &c[..], "{name} chunk {i} recompressed");
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
}
