//! Metalayer bytes and array geometry compared with python-blosc2 (C-Blosc2
//! 3.3.5). Runs only where the oracle exists: `$B2ND_PYTHON`, else
//! `/tmp/venv/bin/python`; otherwise each test prints a note and passes.

use b2nd_core::ndarray::{Geometry, NdMeta};
use std::path::Path;

use crate::common;
use common::{hex, python_oracle, TempDir, XorShift};

/// The oracle's output for `script` (run with no arguments).
fn run_python(py: &Path, script: &str) -> String {
    common::run_python::<&str>(py, script, &[])
}

/// (shape, chunkshape, blockshape, numpy dtype expression, dtype string the
/// metalayer should hold, typesize)
type Case = (
    &'static [i64],
    &'static [i32],
    &'static [i32],
    &'static str,
    &'static str,
    i32,
);

const CASES: &[Case] = &[
    (&[10, 20], &[5, 10], &[2, 5], "'f8'", "<f8", 8),
    (&[], &[], &[], "'i4'", "<i4", 4),
    (&[0, 5], &[0, 5], &[0, 5], "'i4'", "<i4", 4),
    (&[0], &[3], &[2], "'u1'", "|u1", 1),
    (&[100], &[33], &[7], "'<u2'", "<u2", 2),
    (
        &[5, 6, 7, 8],
        &[2, 3, 4, 5],
        &[1, 2, 3, 4],
        "'f4'",
        "<f4",
        4,
    ),
    (&[3, 0, 4], &[2, 3, 4], &[1, 2, 4], "'u1'", "|u1", 1),
    (&[7, 5, 3], &[4, 4, 2], &[3, 3, 2], "'i2'", "<i2", 2),
    (&[6], &[4], &[3], "'>i8'", ">i8", 8),
    (&[3], &[3], &[3], "'S300'", "|S300", 300),
    (
        &[4],
        &[4],
        &[4],
        "[('a','<i4'),('b','<f8')]",
        "[('a', '<i4'), ('b', '<f8')]",
        12,
    ),
    (
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        "'u1'",
        "|u1",
        1,
    ),
];

fn tuple(v: &[impl std::fmt::Display]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(","))
    }
}

/// The oracle's view of every case: metalayer bytes and geometry.
fn oracle_lines(py: &Path) -> Vec<Vec<String>> {
    let mut script = String::from(
        "import blosc2\nfrom blosc2 import blosc2_ext\n\
         def t(x): return ','.join(str(v) for v in x)\n",
    );
    for (shape, chunks, blocks, dtype, _, _) in CASES {
        let (c, b) = if shape.is_empty() {
            ("None".to_string(), "None".to_string())
        } else {
            (tuple(chunks), tuple(blocks))
        };
        script.push_str(&format!(
            "a = blosc2.zeros({}, chunks={c}, blocks={b}, dtype={dtype})\n\
             print(blosc2_ext.meta__getitem__(a.schunk, 'b2nd').hex(), t(a.ext_shape), t(a.ext_chunks), \
             a.size, a.schunk.chunksize, a.schunk.blocksize, a.schunk.nchunks, a.schunk.typesize, sep=';')\n",
            tuple(shape)
        ));
    }
    run_python(py, &script)
        .lines()
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect()
}

fn ints(s: &str) -> Vec<i64> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().unwrap())
        .collect()
}

#[test]
fn metalayer_bytes_and_geometry_match_python_blosc2() {
    let Some(py) = python_oracle("oracle test") else {
        return;
    };
    let lines = oracle_lines(&py);
    assert_eq!(lines.len(), CASES.len());
    for ((shape, chunks, blocks, _, dtype, typesize), line) in CASES.iter().zip(&lines) {
        let meta = NdMeta::new(shape.to_vec(), chunks.to_vec(), blocks.to_vec(), *dtype, 0);
        let ours = meta.to_b2nd_bytes().unwrap();
        assert_eq!(hex(&ours), line[0], "metalayer bytes for shape {shape:?}");
        let theirs: Vec<u8> = (0..line[0].len() / 2)
            .map(|i| u8::from_str_radix(&line[0][2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(NdMeta::from_b2nd_bytes(&theirs).unwrap(), meta);

        let g = Geometry::new(shape, chunks, blocks, *typesize).unwrap();
        assert_eq!(g.extshape, ints(&line[1]), "extshape of {shape:?}");
        assert_eq!(
            g.extchunkshape,
            ints(&line[2]),
            "extchunkshape of {shape:?}"
        );
        assert_eq!(g.nitems, line[3].parse::<i64>().unwrap());
        assert_eq!(
            g.chunk_nbytes as i64,
            line[4].parse::<i64>().unwrap(),
            "chunk bytes of {shape:?}"
        );
        assert_eq!(
            g.block_nbytes as i64,
            line[5].parse::<i64>().unwrap(),
            "block bytes of {shape:?}"
        );
        assert_eq!(
            g.nchunks,
            line[6].parse::<i64>().unwrap(),
            "chunks of {shape:?}"
        );
        assert_eq!(*typesize as i64, line[7].parse::<i64>().unwrap());
    }
}

/// The exact scenario of the brief: an on-disk array reopened by the oracle.
#[test]
fn on_disk_array_metalayer_matches() {
    let Some(py) = python_oracle("oracle test") else {
        return;
    };
    let dir = TempDir::new("ndcore_oracle");
    let path = dir.join("array.b2nd");
    let script = format!(
        "import blosc2\nfrom blosc2 import blosc2_ext\n\
         blosc2.zeros((10,20), chunks=(5,10), blocks=(2,5), dtype='f8', urlpath={:?}, mode='w')\n\
         a = blosc2.open({:?})\n\
         print(blosc2_ext.meta__getitem__(a.schunk, 'b2nd').hex())\n\
         print(a.schunk.meta['b2nd'])\n",
        path.display().to_string(),
        path.display().to_string()
    );
    let out = run_python(&py, &script);
    drop(dir);
    let mut lines = out.lines();
    let ours = NdMeta::new(vec![10, 20], vec![5, 10], vec![2, 5], "<f8", 0)
        .to_b2nd_bytes()
        .unwrap();
    assert_eq!(lines.next().unwrap(), hex(&ours));
    // The decoded view python offers: [version, ndim, shape, chunks, blocks, format, dtype].
    assert_eq!(
        lines.next().unwrap(),
        "[0, 2, [10, 20], [5, 10], [2, 5], 0, '<f8']"
    );
}

/// Random small arrays (ndim 1..=4, zero-length dimensions included):
/// metalayer bytes and geometry against the oracle, in one python run.
#[test]
fn random_arrays_match_python_blosc2() {
    let Some(py) = python_oracle("oracle test") else {
        return;
    };
    let mut rng = XorShift(0x0bad_5eed);
    let mut below = |n: u64| (rng.next() % n) as i64;
    let dtypes = [
        ("'u1'", "|u1", 1),
        ("'<i2'", "<i2", 2),
        ("'<f4'", "<f4", 4),
        ("'<c16'", "<c16", 16),
        ("'S5'", "|S5", 5),
    ];
    let mut cases = Vec::new();
    let mut script = String::from(
        "import blosc2\nfrom blosc2 import blosc2_ext\n\
         def t(x): return ','.join(str(v) for v in x)\n\
         def show(s, c, b, d):\n    a = blosc2.zeros(s, chunks=c, blocks=b, dtype=d)\n    \
         print(blosc2_ext.meta__getitem__(a.schunk, 'b2nd').hex(), t(a.ext_shape), t(a.ext_chunks), \
         a.size, a.schunk.chunksize, a.schunk.blocksize, a.schunk.nchunks, sep=';')\n",
    );
    for _ in 0..40 {
        let n = 1 + below(4) as usize;
        let mut shape = vec![0i64; n];
        let mut chunks = vec![0i32; n];
        let mut blocks = vec![0i32; n];
        for i in 0..n {
            shape[i] = if below(6) == 0 { 0 } else { 1 + below(40) };
            chunks[i] = 1 + below(15) as i32;
            blocks[i] = 1 + below(chunks[i] as u64) as i32;
        }
        let d = dtypes[below(dtypes.len() as u64) as usize];
        script.push_str(&format!(
            "show({}, {}, {}, {})\n",
            tuple(&shape),
            tuple(&chunks),
            tuple(&blocks),
            d.0
        ));
        cases.push((shape, chunks, blocks, d.1, d.2));
    }
    let out = run_python(&py, &script);
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split(';').collect()).collect();
    assert_eq!(lines.len(), cases.len());
    for ((shape, chunks, blocks, dtype, ts), line) in cases.iter().zip(&lines) {
        let meta = NdMeta::new(shape.clone(), chunks.clone(), blocks.clone(), *dtype, 0);
        assert_eq!(
            hex(&meta.to_b2nd_bytes().unwrap()),
            line[0],
            "{shape:?} {chunks:?} {blocks:?}"
        );
        let g = Geometry::new(shape, chunks, blocks, *ts).unwrap();
        assert_eq!(g.extshape, ints(line[1]), "{shape:?} {chunks:?} {blocks:?}");
        assert_eq!(g.extchunkshape, ints(line[2]));
        assert_eq!(g.nitems, line[3].parse::<i64>().unwrap());
        assert_eq!(g.chunk_nbytes as i64, line[4].parse::<i64>().unwrap());
        assert_eq!(g.block_nbytes as i64, line[5].parse::<i64>().unwrap());
        assert_eq!(g.nchunks, line[6].parse::<i64>().unwrap());
    }
}
