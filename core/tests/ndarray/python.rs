//! Cross-checks of b2nd arrays with python-blosc2 (the reference, C-Blosc2
//! 3.3.5), both ways, in one python process per direction:
//! - arrays written by python-blosc2 (contiguous files and sparse
//!   directories; dtypes uint8..complex128, a 13-byte string and a
//!   structured dtype; codecs and filters varied; 0-d, empty and N-d
//!   shapes) open here with the same shape, chunk/block shapes, dtype
//!   string and contents, and slices equal NumPy's;
//! - arrays written here (after slice writes, resizes, inserts, deletes)
//!   open in python-blosc2 equal to the model kept here.
//!
//! Python is `$B2ND_PYTHON`, else /tmp/venv/bin/python; without it the
//! tests print a note and return.

use std::path::{Path, PathBuf};
use std::process::Command;

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{CParams, Storage};

fn python() -> Option<PathBuf> {
    let p = std::env::var("B2ND_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/tmp/venv/bin/python"));
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "NOTE: python-blosc2 not found ({}); cross-check skipped",
            p.display()
        );
        None
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2nd-array-py-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_python(py: &Path, script: &str, arg: &Path) -> String {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .arg(arg)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "python failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn ints(s: &str) -> Vec<i64> {
    if s.is_empty() {
        Vec::new()
    } else {
        s.split(',').map(|x| x.parse().unwrap()).collect()
    }
}

/// Naive C-order slice of a dense buffer.
fn naive_slice(data: &[u8], shape: &[i64], ts: usize, start: &[i64], stop: &[i64]) -> Vec<u8> {
    let nd = shape.len();
    let mut strides = vec![1i64; nd];
    for i in (0..nd.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let mut out = Vec::new();
    if (0..nd).any(|i| start[i] >= stop[i]) {
        return out;
    }
    let mut idx = start.to_vec();
    loop {
        let off = (0..nd).map(|i| idx[i] * strides[i]).sum::<i64>() as usize * ts;
        out.extend_from_slice(&data[off..off + ts]);
        let mut d = nd;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < stop[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
}

const WRITE_PY: &str = r#"
import sys, os
import numpy as np, blosc2
out = sys.argv[1]
rng = np.random.default_rng(1234)
struct = np.dtype([('a', '<i4'), ('b', '<f8'), ('c', 'u1')])
dtypes = ['u1', '<i2', '<u4', '<i8', '<f4', '<f8', '<c8', '<c16', 'S13', struct]
geoms = [((40,), (16,), (5,)), ((10, 9), (4, 4), (2, 3)), ((6, 5, 7), (3, 5, 4), (2, 2, 4)),
         ((3, 4, 2, 5), (2, 4, 2, 3), (1, 2, 2, 3)), ((), None, None), ((4, 0, 3), None, None)]
codecs = [blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.LZ4HC, blosc2.Codec.ZLIB, blosc2.Codec.ZSTD]
filters = [blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE, blosc2.Filter.DELTA, blosc2.Filter.NOFILTER]
k = 0
for di, dt in enumerate(dtypes):
    dt = np.dtype(dt)
    for gi, (shape, chunks, blocks) in enumerate(geoms):
        k += 1
        n = int(np.prod(shape)) if shape else 1
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes()
        data = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
        contiguous = (k % 2 == 0)
        path = os.path.join(out, f"a{k}" + (".b2nd" if contiguous else ".dir"))
        cp = blosc2.CParams(codec=codecs[k % len(codecs)], clevel=(k % 9) + 1,
                            filters=[filters[k % len(filters)]], filters_meta=[0])
        kw = dict(urlpath=path, mode="w", contiguous=contiguous, cparams=cp)
        if chunks is not None:
            kw.update(chunks=chunks, blocks=blocks)
        a = blosc2.asarray(data, **kw)
        m = a.schunk.meta["b2nd"]
        with open(path + ".raw", "wb") as f:
            f.write(data.tobytes())
        slices = []
        if shape and n > 0:
            for s in range(3):
                start = [int(rng.integers(0, d)) for d in shape]
                stop = [int(rng.integers(st + 1, d + 1)) for st, d in zip(start, shape)]
                sl = tuple(slice(a_, b_) for a_, b_ in zip(start, stop))
                sp = f"{path}.s{s}"
                with open(sp, "wb") as f:
                    f.write(np.ascontiguousarray(data[sl]).tobytes())
                slices.append(",".join(map(str, start)) + ";" + ",".join(map(str, stop)) + ";" + sp)
        print("\t".join([path, ",".join(map(str, m[2])), ",".join(map(str, m[3])), ",".join(map(str, m[4])),
                         str(dt.itemsize), m[6], "|".join(slices)]))
for kind in ("zeros", "full", "nans", "empty_resized"):
    for contiguous in (True, False):
        path = os.path.join(out, f"{kind}-{int(contiguous)}" + (".b2nd" if contiguous else ".dir"))
        kw = dict(dtype="<f8", urlpath=path, mode="w", contiguous=contiguous, chunks=(3, 2), blocks=(2, 2))
        if kind == "zeros":
            a = blosc2.zeros((7, 5), **kw)
        elif kind == "full":
            a = blosc2.full((7, 5), 3.5, **kw)
        elif kind == "nans":
            a = blosc2.full((7, 5), np.nan, **kw)
        else:
            a = blosc2.zeros((4, 5), **kw)
            a.resize((7, 5))
            a[5:7, 1:4] = 2.0
        data = a[...]
        with open(path + ".raw", "wb") as f:
            f.write(np.ascontiguousarray(data).tobytes())
        m = a.schunk.meta["b2nd"]
        print("\t".join([path, ",".join(map(str, m[2])), ",".join(map(str, m[3])), ",".join(map(str, m[4])),
                         "8", m[6], ""]))
"#;

#[test]
fn arrays_written_by_python_open_here() {
    let Some(py) = python() else { return };
    let dir = scratch("from-python");
    let listing = run_python(&py, WRITE_PY, &dir);
    let mut count = 0;
    for line in listing.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 7, "{line}");
        let (path, shape, chunks, blocks) = (f[0], ints(f[1]), ints(f[2]), ints(f[3]));
        let ts: usize = f[4].parse().unwrap();
        let a = NdArray::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(a.shape(), &shape[..], "{path}");
        assert_eq!(
            a.chunkshape().iter().map(|&c| c as i64).collect::<Vec<_>>(),
            chunks,
            "{path}"
        );
        assert_eq!(
            a.blockshape().iter().map(|&c| c as i64).collect::<Vec<_>>(),
            blocks,
            "{path}"
        );
        assert_eq!(a.typesize() as usize, ts, "{path}");
        assert_eq!(a.dtype(), f[5], "{path}");
        let raw = std::fs::read(format!("{path}.raw")).unwrap();
        assert_eq!(a.to_vec().unwrap(), raw, "{path}");
        // Same storage layout: every decoded chunk (padding and block order
        // included) equals the one an array built here holds. (Arrays made
        // by full()/nans() pad with their value instead, so only the arrays
        // built from buffers, named a<k>, are compared.)
        let from_buffer = Path::new(path)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with('a');
        let cs: Vec<i32> = chunks.iter().map(|&c| c as i32).collect();
        let bs: Vec<i32> = blocks.iter().map(|&c| c as i32).collect();
        let ctx = Context::new(
            ArrayStorage::default(),
            ts as i32,
            &shape,
            &cs,
            &bs,
            Some(f[5]),
            0,
            Vec::new(),
        )
        .unwrap();
        let ours = NdArray::from_cbuffer(&ctx, &raw).unwrap();
        assert_eq!(ours.nchunks(), a.nchunks(), "{path}");
        for n in (0..a.nchunks()).filter(|_| from_buffer) {
            let theirs = a
                .with_schunk(|sc| {
                    let mut v = vec![0u8; sc.chunksize() as usize];
                    sc.decompress_chunk(n, &mut v)?;
                    Ok(v)
                })
                .unwrap();
            let mine = ours
                .with_schunk(|sc| {
                    let mut v = vec![0u8; sc.chunksize() as usize];
                    sc.decompress_chunk(n, &mut v)?;
                    Ok(v)
                })
                .unwrap();
            assert_eq!(mine, theirs, "{path} chunk {n}");
        }
        for s in f[6].split('|').filter(|s| !s.is_empty()) {
            let p: Vec<&str> = s.split(';').collect();
            let (start, stop) = (ints(p[0]), ints(p[1]));
            let want = std::fs::read(p[2]).unwrap();
            let bshape: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
            let mut got = vec![0u8; want.len()];
            a.get_slice_cbuffer(&start, &stop, &mut got, &bshape)
                .unwrap();
            assert_eq!(got, want, "{path} slice {s}");
            assert_eq!(naive_slice(&raw, &shape, ts, &start, &stop), want);
        }
        count += 1;
    }
    assert_eq!(count, 60 + 8);
    std::fs::remove_dir_all(&dir).unwrap();
}

const READ_PY: &str = r#"
import sys
import numpy as np, blosc2
for line in open(sys.argv[1] + "/manifest.tsv"):
    path, shape, dtype, raw = line.rstrip("\n").split("\t")
    shape = tuple(int(x) for x in shape.split(",")) if shape else ()
    try:
        a = blosc2.open(path)
        data = a[()] if shape == () else a[...]
        want = open(raw, "rb").read()
        problems = []
        if a.shape != shape: problems.append(f"shape {a.shape} != {shape}")
        if np.asarray(data).tobytes() != want: problems.append("contents differ")
        if np.dtype(a.dtype).str != np.dtype(dtype).str: problems.append(f"dtype {a.dtype} != {dtype}")
        print(("FAIL " + "; ".join(problems) if problems else "OK") + " " + path)
    except Exception as e:
        print(f"FAIL {type(e).__name__}: {e} {path}")
"#;

/// A deterministic byte pattern.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(7) as u8 ^ seed)
        .collect()
}

struct Model {
    shape: Vec<i64>,
    ts: usize,
    data: Vec<u8>,
}

impl Model {
    /// Inserts `len` slabs of `fill` along `axis` at `at` (zeros when `fill` is None).
    fn insert(&mut self, axis: usize, at: i64, slabs: &[u8], len: i64) {
        let mut new_shape = self.shape.clone();
        new_shape[axis] += len;
        let outer: i64 = self.shape[..axis].iter().product();
        let inner: i64 = self.shape[axis + 1..].iter().product::<i64>() * self.ts as i64;
        let mut out = Vec::new();
        for o in 0..outer {
            let row = &self.data[(o * self.shape[axis] * inner) as usize
                ..((o + 1) * self.shape[axis] * inner) as usize];
            out.extend_from_slice(&row[..(at * inner) as usize]);
            out.extend_from_slice(
                &slabs[(o * len * inner) as usize..((o + 1) * len * inner) as usize],
            );
            out.extend_from_slice(&row[(at * inner) as usize..]);
        }
        self.data = out;
        self.shape = new_shape;
    }
    fn delete(&mut self, axis: usize, at: i64, len: i64) {
        let outer: i64 = self.shape[..axis].iter().product();
        let inner: i64 = self.shape[axis + 1..].iter().product::<i64>() * self.ts as i64;
        let mut out = Vec::new();
        for o in 0..outer {
            let row = &self.data[(o * self.shape[axis] * inner) as usize
                ..((o + 1) * self.shape[axis] * inner) as usize];
            out.extend_from_slice(&row[..(at * inner) as usize]);
            out.extend_from_slice(&row[((at + len) * inner) as usize..]);
        }
        self.data = out;
        self.shape[axis] -= len;
    }
}

#[test]
fn arrays_written_here_open_in_python() {
    let Some(py) = python() else { return };
    let dir = scratch("to-python");
    let mut manifest = String::new();
    let cases: &[(&str, i32, &[i64], &[i32], &[i32])] = &[
        ("|u1", 1, &[37], &[10], &[4]),
        ("<i2", 2, &[9, 11], &[4, 5], &[2, 3]),
        ("<f4", 4, &[6, 5, 4], &[4, 3, 4], &[2, 3, 2]),
        ("<f8", 8, &[5, 6], &[5, 2], &[1, 2]),
        ("|S13", 13, &[7, 3], &[3, 3], &[2, 2]),
        ("<i4", 4, &[], &[], &[]),
        ("<u8", 8, &[4, 0, 3], &[2, 2, 2], &[1, 1, 2]),
        ("<i8", 8, &[1; 16], &[1; 16], &[1; 16]),
    ];
    let codecs: [(u8, [u8; 6]); 5] = [
        (0, [0, 0, 0, 0, 0, 1]),
        (1, [0, 0, 0, 0, 0, 2]),
        (5, [0, 0, 0, 0, 0, 3]),
        (4, [0, 0, 0, 0, 0, 0]),
        (2, [0, 0, 0, 0, 0, 1]),
    ];
    for (k, &(dtype, ts, shape, cs, bs)) in cases.iter().enumerate() {
        for contiguous in [true, false] {
            let path = dir.join(format!("h{k}{}", if contiguous { ".b2nd" } else { ".dir" }));
            let (compcode, filters) = codecs[k % codecs.len()];
            let cparams = CParams {
                compcode,
                clevel: 5,
                filters,
                ..CParams::default()
            };
            let storage = Storage {
                contiguous,
                urlpath: Some(path.clone()),
                cparams,
                ..Storage::default()
            };
            let ctx = Context::new(
                ArrayStorage::Schunk(storage),
                ts,
                shape,
                cs,
                bs,
                Some(dtype),
                0,
                Vec::new(),
            )
            .unwrap();
            let ts = ts as usize;
            let n: i64 = shape.iter().product();
            let mut m = Model {
                shape: shape.to_vec(),
                ts,
                data: pattern(n as usize * ts, k as u8),
            };
            let mut a = NdArray::from_cbuffer(&ctx, &m.data).unwrap();
            if !shape.is_empty() && n > 0 {
                // Overwrite an inner region.
                let start: Vec<i64> = shape.iter().map(|&d| d / 3).collect();
                let stop: Vec<i64> = shape
                    .iter()
                    .map(|&d| (d / 3 + d / 2).max(d / 3 + 1).min(d))
                    .collect();
                let bshape: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
                let patch = pattern(bshape.iter().product::<i64>() as usize * ts, 0x5a);
                a.set_slice_cbuffer(&patch, &bshape, &start, &stop).unwrap();
                let strides: Vec<i64> = (0..shape.len())
                    .map(|i| shape[i + 1..].iter().product())
                    .collect();
                let mut p = 0;
                let mut idx = start.clone();
                'outer: loop {
                    let off =
                        idx.iter().zip(&strides).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
                    m.data[off..off + ts].copy_from_slice(&patch[p..p + ts]);
                    p += ts;
                    let mut d = idx.len();
                    loop {
                        if d == 0 {
                            break 'outer;
                        }
                        d -= 1;
                        idx[d] += 1;
                        if idx[d] < stop[d] {
                            break;
                        }
                        idx[d] = start[d];
                    }
                }
                // Append along axis 0, insert zero-filled whole chunks, delete them.
                let slab: i64 = shape[1..].iter().product::<i64>() * ts as i64;
                let extra = pattern((2 * slab) as usize, 0x33);
                a.append(&extra, 0).unwrap();
                m.insert(0, m.shape[0], &extra, 2);
                let c0 = cs[0] as i64;
                a.resize(
                    &[&[m.shape[0] + c0][..], &m.shape[1..]].concat(),
                    Some(&[&[0][..], &vec![0; shape.len() - 1][..]].concat()),
                )
                .unwrap();
                m.insert(0, 0, &vec![0u8; (c0 * slab) as usize], c0);
                a.delete(0, m.shape[0] - 1, 1).unwrap();
                m.delete(0, m.shape[0] - 1, 1);
            }
            assert_eq!(a.shape(), &m.shape[..]);
            assert_eq!(a.to_vec().unwrap(), m.data, "{}", path.display());
            drop(a);
            let raw = path.with_extension("raw");
            std::fs::write(&raw, &m.data).unwrap();
            let sh: Vec<String> = m.shape.iter().map(|x| x.to_string()).collect();
            manifest += &format!(
                "{}\t{}\t{}\t{}\n",
                path.display(),
                sh.join(","),
                dtype,
                raw.display()
            );
        }
    }
    // Special-value arrays: zeros, NaNs and a repeated value, never materialised.
    let specials: [(&str, fn(&Context) -> b2nd_core::Result<NdArray>, Vec<u8>); 3] = [
        ("zeros", NdArray::zeros, vec![0u8; 8]),
        ("nans", NdArray::nans, f64::NAN.to_le_bytes().to_vec()),
        (
            "full",
            |c| NdArray::full(c, &(-1.25f64).to_le_bytes()),
            (-1.25f64).to_le_bytes().to_vec(),
        ),
    ];
    for (name, make, item) in specials {
        for contiguous in [true, false] {
            let path = dir.join(format!(
                "{name}{}",
                if contiguous { ".b2nd" } else { ".dir" }
            ));
            let storage = Storage {
                contiguous,
                urlpath: Some(path.clone()),
                ..Storage::default()
            };
            let ctx = Context::new(
                ArrayStorage::Schunk(storage),
                8,
                &[7, 5],
                &[3, 2],
                &[2, 2],
                Some("<f8"),
                0,
                Vec::new(),
            )
            .unwrap();
            let a = make(&ctx).unwrap();
            let want = item.repeat(35);
            assert_eq!(a.to_vec().unwrap(), want);
            drop(a);
            let raw = path.with_extension("raw");
            std::fs::write(&raw, &want).unwrap();
            manifest += &format!("{}\t7,5\t<f8\t{}\n", path.display(), raw.display());
        }
    }
    std::fs::write(dir.join("manifest.tsv"), &manifest).unwrap();
    let report = run_python(&py, READ_PY, &dir);
    let lines: Vec<&str> = report.lines().collect();
    let bad: Vec<&&str> = lines.iter().filter(|l| !l.starts_with("OK")).collect();
    assert!(
        bad.is_empty(),
        "python disagrees:\n{}",
        bad.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(lines.len(), cases.len() * 2 + 6);
    std::fs::remove_dir_all(&dir).unwrap();
}
