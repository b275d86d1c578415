//! Every NdArray operation against a naive model on plain C-order buffers,
//! over typesizes 1, 2, 4, 8, 13, shapes with zero-length dimensions, 0-d
//! and 16-d arrays, and every backend: in-memory chunk list, in-memory
//! frame, contiguous file, sparse directory and decoded scratch storage.
//! Also: legacy metalayers (6-entry b2nd, caterva) crafted after the seeds,
//! and error codes, with file arrays left untouched by a failed call.

use crate::common;

use std::path::PathBuf;

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{SChunk, Storage};
use common::XorShift as Rng;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2nd-array-ops-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// (name, storage) for every backend; file backends live under `dir`.
fn backends(dir: &std::path::Path, tag: &str) -> Vec<(String, ArrayStorage)> {
    vec![
        ("chunks".into(), ArrayStorage::default()),
        (
            "memframe".into(),
            ArrayStorage::Schunk(Storage {
                contiguous: true,
                ..Storage::default()
            }),
        ),
        (
            "file".into(),
            ArrayStorage::Schunk(Storage {
                contiguous: true,
                urlpath: Some(dir.join(format!("{tag}.b2nd"))),
                ..Storage::default()
            }),
        ),
        (
            "sparse".into(),
            ArrayStorage::Schunk(Storage {
                contiguous: false,
                urlpath: Some(dir.join(format!("{tag}.dir"))),
                ..Storage::default()
            }),
        ),
        ("decoded".into(), ArrayStorage::Decoded),
    ]
}

fn strides(shape: &[i64]) -> Vec<i64> {
    (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect()
}

/// Visits the index vectors of [start, stop) in C order.
fn walk(start: &[i64], stop: &[i64], mut f: impl FnMut(&[i64])) {
    if (0..start.len()).any(|i| start[i] >= stop[i]) {
        return;
    }
    let mut idx = start.to_vec();
    loop {
        f(&idx);
        let mut d = idx.len();
        loop {
            if d == 0 {
                return;
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

fn naive_get(data: &[u8], shape: &[i64], ts: usize, start: &[i64], stop: &[i64]) -> Vec<u8> {
    let st = strides(shape);
    let mut out = Vec::new();
    walk(start, stop, |idx| {
        let off = idx.iter().zip(&st).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
        out.extend_from_slice(&data[off..off + ts]);
    });
    out
}

fn naive_set(data: &mut [u8], shape: &[i64], ts: usize, start: &[i64], stop: &[i64], src: &[u8]) {
    let st = strides(shape);
    let mut p = 0;
    walk(start, stop, |idx| {
        let off = idx.iter().zip(&st).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
        data[off..off + ts].copy_from_slice(&src[p..p + ts]);
        p += ts;
    });
}

fn random_region(rng: &mut Rng, shape: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let start: Vec<i64> = shape.iter().map(|&d| rng.index(d)).collect();
    let stop: Vec<i64> = start
        .iter()
        .zip(shape)
        .map(|(&s, &d)| (s + 1 + rng.index(d - s)).min(d))
        .collect();
    (start, stop)
}

/// Geometries: 1-d to 4-d with edge chunks and padded blocks, zero-length
/// dimensions, a 0-d scalar and a 16-d array.
fn geometries() -> Vec<(Vec<i64>, Vec<i32>, Vec<i32>)> {
    vec![
        (vec![23], vec![8], vec![3]),
        (vec![9, 7], vec![4, 3], vec![3, 2]),
        (vec![5, 6, 4], vec![2, 4, 4], vec![1, 3, 2]),
        (vec![3, 4, 2, 5], vec![2, 3, 2, 2], vec![2, 2, 1, 2]),
        (vec![], vec![], vec![]),
        (vec![4, 0, 3], vec![2, 2, 2], vec![1, 1, 2]),
        (vec![0], vec![0], vec![0]),
        (
            vec![2, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1, 1, 3],
            vec![1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 2],
            vec![1; 16],
        ),
    ]
}

#[test]
fn slices_selections_and_copies_match_the_naive_model() {
    let dir = scratch("slices");
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut runs = 0;
    for ts in [1usize, 2, 4, 8, 13] {
        for (gi, (shape, cs, bs)) in geometries().into_iter().enumerate() {
            for (bname, storage) in backends(&dir, &format!("t{ts}g{gi}")) {
                let what = format!("ts {ts} shape {shape:?} backend {bname}");
                let ctx = Context::new(storage, ts as i32, &shape, &cs, &bs, None, 0, Vec::new())
                    .unwrap();
                let n: i64 = shape.iter().product();
                let mut data = rng.bytes(n as usize * ts);
                let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
                assert_eq!(a.dtype(), format!("|S{ts}"));
                assert_eq!(a.to_vec().unwrap(), data, "{what}");
                if n > 0 && !shape.is_empty() {
                    for _ in 0..4 {
                        // Read a region into a larger buffer (region at its origin).
                        let (start, stop) = random_region(&mut rng, &shape);
                        let ext: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
                        let bigger: Vec<i64> = ext.iter().map(|e| e + 1).collect();
                        let mut buf = vec![0xffu8; bigger.iter().product::<i64>() as usize * ts];
                        a.get_slice_cbuffer(&start, &stop, &mut buf, &bigger)
                            .unwrap();
                        let mut want = vec![0u8; buf.len()];
                        naive_set(
                            &mut want,
                            &bigger,
                            ts,
                            &vec![0; shape.len()],
                            &ext,
                            &naive_get(&data, &shape, ts, &start, &stop),
                        );
                        assert_eq!(buf, want, "{what} get {start:?}..{stop:?}");
                        // A buffer of the region's shape is written in full
                        // (nothing is cleared first): no stale byte survives.
                        let mut exact = vec![0xabu8; ext.iter().product::<i64>() as usize * ts];
                        a.get_slice_cbuffer(&start, &stop, &mut exact, &ext)
                            .unwrap();
                        assert_eq!(
                            exact,
                            naive_get(&data, &shape, ts, &start, &stop),
                            "{what} exact get {start:?}..{stop:?}"
                        );
                        // Write a region.
                        let (start, stop) = random_region(&mut rng, &shape);
                        let ext: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
                        let patch = rng.bytes(ext.iter().product::<i64>() as usize * ts);
                        a.set_slice_cbuffer(&patch, &ext, &start, &stop).unwrap();
                        naive_set(&mut data, &shape, ts, &start, &stop, &patch);
                        assert_eq!(a.to_vec().unwrap(), data, "{what} set {start:?}..{stop:?}");
                    }
                    // Orthogonal selection (unsorted, repeated indices).
                    let sel: Vec<Vec<i64>> = shape
                        .iter()
                        .map(|&d| (0..d.min(3)).map(|_| rng.index(d)).collect())
                        .collect();
                    let sel_ref: Vec<&[i64]> = sel.iter().map(|v| &v[..]).collect();
                    let bshape: Vec<i64> = sel.iter().map(|v| v.len() as i64).collect();
                    let mut got = vec![0u8; bshape.iter().product::<i64>() as usize * ts];
                    a.get_orthogonal_selection(&sel_ref, &mut got, &bshape)
                        .unwrap();
                    let st = strides(&shape);
                    let mut want = Vec::new();
                    walk(&vec![0; shape.len()], &bshape, |k| {
                        let off = (0..shape.len())
                            .map(|i| sel[i][k[i] as usize] * st[i])
                            .sum::<i64>() as usize
                            * ts;
                        want.extend_from_slice(&data[off..off + ts]);
                    });
                    assert_eq!(got, want, "{what} orthogonal");
                    let vals = rng.bytes(got.len());
                    a.set_orthogonal_selection(&sel_ref, &vals, &bshape)
                        .unwrap();
                    let mut p = 0;
                    walk(&vec![0; shape.len()], &bshape, |k| {
                        let off = (0..shape.len())
                            .map(|i| sel[i][k[i] as usize] * st[i])
                            .sum::<i64>() as usize
                            * ts;
                        data[off..off + ts].copy_from_slice(&vals[p..p + ts]);
                        p += ts;
                    });
                    assert_eq!(a.to_vec().unwrap(), data, "{what} set orthogonal");
                    // Sparse gather.
                    let coords: Vec<i64> = (0..7).map(|_| rng.index(n)).collect();
                    let mut got = vec![0u8; coords.len() * ts];
                    a.get_sparse_cbuffer(&coords, &mut got).unwrap();
                    let want: Vec<u8> = coords
                        .iter()
                        .flat_map(|&c| data[c as usize * ts..(c as usize + 1) * ts].to_vec())
                        .collect();
                    assert_eq!(got, want, "{what} sparse");
                    // A new array from a region, with other chunking.
                    let (start, stop) = random_region(&mut rng, &shape);
                    let ext: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
                    let cs2: Vec<i32> = ext.iter().map(|&e| (e as i32).clamp(1, 3)).collect();
                    let bs2: Vec<i32> = cs2.iter().map(|&c| (c + 1) / 2).collect();
                    let sctx = Context::new(
                        ArrayStorage::default(),
                        ts as i32,
                        &ext,
                        &cs2,
                        &bs2,
                        None,
                        0,
                        Vec::new(),
                    )
                    .unwrap();
                    let s = a.get_slice(&sctx, &start, &stop).unwrap();
                    assert_eq!(
                        s.to_vec().unwrap(),
                        naive_get(&data, &shape, ts, &start, &stop),
                        "{what} get_slice"
                    );
                }
                // Copies: same chunking (compressed chunks) and other chunking.
                let same = a
                    .copy(&Context {
                        storage: ArrayStorage::default(),
                        ..ctx.clone()
                    })
                    .unwrap();
                assert_eq!(same.to_vec().unwrap(), data, "{what} copy");
                if !shape.is_empty() {
                    let cs2: Vec<i32> = cs.iter().map(|&c| c.max(1) + 1).collect();
                    let octx = Context::new(
                        ArrayStorage::default(),
                        ts as i32,
                        &shape,
                        &cs2,
                        &cs2,
                        None,
                        0,
                        Vec::new(),
                    )
                    .unwrap();
                    assert_eq!(
                        a.copy(&octx).unwrap().to_vec().unwrap(),
                        data,
                        "{what} copy rechunked"
                    );
                }
                // Serialization round trip.
                if bname != "decoded" {
                    let frame = a.to_cframe().unwrap();
                    assert_eq!(
                        NdArray::from_cframe(&frame, true)
                            .unwrap()
                            .to_vec()
                            .unwrap(),
                        data,
                        "{what} cframe"
                    );
                }
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 5 * 8 * 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Inserts `len` slabs along `axis` at `at`.
fn model_insert(
    data: &[u8],
    shape: &[i64],
    ts: usize,
    axis: usize,
    at: i64,
    slabs: &[u8],
    len: i64,
) -> Vec<u8> {
    let outer: i64 = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product::<i64>() as usize * ts;
    let (row, add) = (shape[axis] as usize * inner, len as usize * inner);
    let mut out = Vec::new();
    for o in 0..outer as usize {
        let r = &data[o * row..(o + 1) * row];
        out.extend_from_slice(&r[..at as usize * inner]);
        out.extend_from_slice(&slabs[o * add..(o + 1) * add]);
        out.extend_from_slice(&r[at as usize * inner..]);
    }
    out
}

fn model_delete(data: &[u8], shape: &[i64], ts: usize, axis: usize, at: i64, len: i64) -> Vec<u8> {
    let outer: i64 = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product::<i64>() as usize * ts;
    let row = shape[axis] as usize * inner;
    let mut out = Vec::new();
    for o in 0..outer as usize {
        let r = &data[o * row..(o + 1) * row];
        out.extend_from_slice(&r[..at as usize * inner]);
        out.extend_from_slice(&r[(at + len) as usize * inner..]);
    }
    out
}

#[test]
fn shape_changes_match_the_model_and_persist() {
    let dir = scratch("reshape");
    let mut rng = Rng(42);
    for ts in [1usize, 2, 4, 8, 13] {
        for (bname, storage) in backends(&dir, &format!("r{ts}")) {
            let what = format!("ts {ts} backend {bname}");
            let (cs, bs) = ([3i32, 4, 2], [2i32, 3, 2]);
            let mut shape = vec![7i64, 6, 5];
            let ctx = Context::new(
                storage.clone(),
                ts as i32,
                &shape,
                &cs,
                &bs,
                Some("|V"),
                0,
                Vec::new(),
            )
            .unwrap();
            let mut data = rng.bytes(7 * 6 * 5 * ts);
            let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
            // Append along each axis (general path) and insert whole chunks inside.
            for axis in 0..3 {
                let len = 2;
                let slab: i64 = (0..3)
                    .filter(|&i| i != axis)
                    .map(|i| shape[i])
                    .product::<i64>()
                    * len;
                let add = rng.bytes(slab as usize * ts);
                a.append(&add, axis).unwrap();
                data = model_insert(&data, &shape, ts, axis, shape[axis], &add, len);
                shape[axis] += len;
                assert_eq!(a.to_vec().unwrap(), data, "{what} append axis {axis}");
                let c = cs[axis] as i64;
                let slab: i64 = (0..3)
                    .filter(|&i| i != axis)
                    .map(|i| shape[i])
                    .product::<i64>()
                    * c;
                let ins = rng.bytes(slab as usize * ts);
                a.insert(&ins, axis, c).unwrap();
                data = model_insert(&data, &shape, ts, axis, c, &ins, c);
                shape[axis] += c;
                assert_eq!(a.to_vec().unwrap(), data, "{what} insert axis {axis}");
            }
            // Delete a whole chunk inside and a tail, shrink and grow at the end.
            a.delete(1, 4, 4).unwrap();
            data = model_delete(&data, &shape, ts, 1, 4, 4);
            shape[1] -= 4;
            a.delete(2, shape[2] - 3, 3).unwrap();
            data = model_delete(&data, &shape, ts, 2, shape[2] - 3, 3);
            shape[2] -= 3;
            assert_eq!(a.to_vec().unwrap(), data, "{what} delete");
            let grown = vec![shape[0] + 1, shape[1], shape[2] + 2];
            a.resize(&grown, None).unwrap();
            assert_eq!(a.shape(), &grown[..]);
            // Grown cells read back as the reference leaves them; check the old ones.
            let mut got = vec![0u8; data.len()];
            let mut old = shape.clone();
            a.get_slice_cbuffer(&[0, 0, 0], &shape, &mut got, &shape)
                .unwrap();
            assert_eq!(got, data, "{what} resize keeps data");
            a.resize(&shape, None).unwrap();
            assert_eq!(a.to_vec().unwrap(), data, "{what} shrink back");
            // Concatenate with itself (aligned and not).
            let b = NdArray::from_cbuffer(
                &Context {
                    storage: ArrayStorage::default(),
                    shape: shape.clone(),
                    ..ctx.clone()
                },
                &data,
            )
            .unwrap();
            let j = NdArray::concatenate(
                &Context {
                    storage: ArrayStorage::default(),
                    ..ctx.clone()
                },
                &a,
                &b,
                0,
            )
            .unwrap();
            let mut want = data.clone();
            want.extend_from_slice(&data);
            assert_eq!(j.to_vec().unwrap(), want, "{what} concatenate");
            old[0] *= 2;
            assert_eq!(j.shape(), &old[..]);
            // Files: what was written is what opens.
            if let ArrayStorage::Schunk(st) = &storage {
                if let Some(p) = &st.urlpath {
                    drop(a);
                    let r = NdArray::open(p).unwrap();
                    assert_eq!((r.shape(), r.dtype()), (&shape[..], "|V"), "{what} reopen");
                    assert_eq!(r.to_vec().unwrap(), data, "{what} reopen");
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn creation_kinds_squeeze_and_expand() {
    for storage in [ArrayStorage::default(), ArrayStorage::Decoded] {
        let ctx = Context::new(
            storage.clone(),
            8,
            &[5, 1, 3],
            &[2, 1, 2],
            &[1, 1, 2],
            Some("<f8"),
            0,
            Vec::new(),
        )
        .unwrap();
        assert_eq!(
            NdArray::zeros(&ctx).unwrap().to_vec().unwrap(),
            vec![0; 120]
        );
        assert_eq!(NdArray::uninit(&ctx).unwrap().nchunks(), 6);
        let full = NdArray::full(&ctx, &2.5f64.to_le_bytes()).unwrap();
        assert!(full
            .to_vec()
            .unwrap()
            .chunks_exact(8)
            .all(|c| c == 2.5f64.to_le_bytes()));
        let nan = NdArray::nans(&ctx).unwrap();
        assert!(nan
            .to_vec()
            .unwrap()
            .chunks_exact(8)
            .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
        let data: Vec<u8> = (0..120).collect();
        let a = NdArray::from_cbuffer(&ctx, &data).unwrap();
        let s = a.squeeze().unwrap();
        assert_eq!(
            (s.shape(), s.to_vec().unwrap()),
            (&[5i64, 3][..], data.clone())
        );
        let e = s.expand_dims(&[false, true, false, true]).unwrap();
        assert_eq!(
            (e.shape(), e.to_vec().unwrap()),
            (&[5i64, 1, 3, 1][..], data.clone())
        );
    }
}

#[test]
fn bad_input_gives_reference_error_codes_and_leaves_files_intact() {
    let dir = scratch("errors");
    let mk = |s: &[i64], c: &[i32], b: &[i32]| {
        Context::new(ArrayStorage::default(), 4, s, c, b, None, 0, Vec::new()).map(|_| ())
    };
    assert_eq!(mk(&[-1], &[1], &[1]).unwrap_err().code(), -12);
    assert_eq!(mk(&[5], &[0], &[0]).unwrap_err().code(), -12);
    // Reference 3.3.5 accepts a blockshape larger than the chunkshape.
    assert!(mk(&[5], &[2], &[3]).is_ok());
    assert_eq!(mk(&[1; 17], &[1; 17], &[1; 17]).unwrap_err().code(), -12);
    assert_eq!(
        mk(&[i64::MAX, 2], &[1, 1], &[1, 1]).unwrap_err().code(),
        -12
    );
    assert_eq!(
        mk(&[1 << 16, 1 << 16], &[1 << 15, 1 << 15], &[8, 8])
            .unwrap_err()
            .code(),
        -35
    );
    // An empty dtype is stored as given, as by the reference 3.3.5.
    let empty_dtype = Context::new(
        ArrayStorage::default(),
        4,
        &[2],
        &[2],
        &[1],
        Some(""),
        0,
        Vec::new(),
    )
    .unwrap();
    assert_eq!(NdArray::zeros(&empty_dtype).unwrap().dtype(), "");

    let path = dir.join("keep.b2nd");
    let st = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        ..Storage::default()
    };
    let ctx = Context::new(
        ArrayStorage::Schunk(st),
        2,
        &[6, 4],
        &[4, 4],
        &[2, 2],
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    let data: Vec<u8> = (0..48).collect();
    let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut small = vec![0u8; 47];
    assert_eq!(a.to_cbuffer(&mut small).unwrap_err().code(), -12);
    assert_eq!(
        a.set_slice_cbuffer(&data, &[6, 4], &[0, 0], &[7, 4])
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        a.set_slice_cbuffer(&data[..10], &[6, 4], &[0, 0], &[6, 4])
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(a.resize(&[7, 4], Some(&[1, 0])).unwrap_err().code(), -12);
    assert_eq!(a.resize(&[6], None).unwrap_err().code(), -12);
    assert_eq!(a.insert(&[0; 6], 0, 0).unwrap_err().code(), -12);
    assert_eq!(a.insert(&[0; 8], 2, 0).unwrap_err().code(), -12);
    assert_eq!(a.delete(0, 1, 2).unwrap_err().code(), -12);
    assert_eq!(a.delete(0, 5, 2).unwrap_err().code(), -12);
    assert_eq!(
        a.get_orthogonal_selection(&[&[6], &[0]], &mut small, &[1, 1])
            .unwrap_err()
            .code(),
        -33
    );
    assert_eq!(
        a.get_sparse_cbuffer(&[24], &mut small).unwrap_err().code(),
        -12
    );
    assert_eq!(a.squeeze_index(&[true, false]).unwrap_err().code(), -33);
    // The reference accepts an axis list keeping fewer dimensions than the
    // array has (the view describes other chunks); more is an error.
    assert_eq!(
        a.expand_dims(&[false, false, false]).unwrap_err().code(),
        -12
    );
    let other = NdArray::zeros(
        &Context::new(
            ArrayStorage::default(),
            4,
            &[6, 4],
            &[4, 4],
            &[2, 2],
            None,
            0,
            Vec::new(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        NdArray::concatenate(&other.like_context(), &a, &other, 0)
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        NdArray::concatenate(&a.like_context(), &a, &a, 2)
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a failed call wrote to the file"
    );
    drop(a);
    assert_eq!(NdArray::open(&path).unwrap().to_vec().unwrap(), data);
    assert_eq!(
        NdArray::open(dir.join("nope.b2nd")).unwrap_err().code(),
        -15
    );
    assert!(NdArray::from_cframe(&before[..before.len() - 8], false).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The shape/chunkshape/blockshape part of the metalayer (entries 2-5),
/// laid out as the seeds describe: fixarray, int64s, int32s, int32s.
fn legacy_meta(head: u8, version: u8, shape: &[i64], cs: &[i32], bs: &[i32]) -> Vec<u8> {
    let nd = shape.len() as u8;
    let mut m = vec![head, version, nd, 0x90 + nd];
    for s in shape {
        m.push(0xd3);
        m.extend_from_slice(&s.to_be_bytes());
    }
    for part in [cs, bs] {
        m.push(0x90 + nd);
        for c in part {
            m.push(0xd2);
            m.extend_from_slice(&c.to_be_bytes());
        }
    }
    m
}

#[test]
fn six_entry_b2nd_and_caterva_only_files_open() {
    let dir = scratch("legacy");
    let (shape, cs, bs) = ([5i64, 7], [3i32, 4], [2i32, 2]);
    let data: Vec<u8> = (0..70).collect();
    // The chunks of a regular array with this geometry.
    let src = NdArray::from_cbuffer(
        &Context::new(
            ArrayStorage::default(),
            2,
            &shape,
            &cs,
            &bs,
            None,
            0,
            Vec::new(),
        )
        .unwrap(),
        &data,
    )
    .unwrap();
    let chunks: Vec<Vec<u8>> = src
        .with_schunk(|sc| {
            (0..sc.nchunks())
                .map(|i| sc.get_chunk(i).map(|c| c.into_owned()))
                .collect()
        })
        .unwrap();
    let six_with_dtype = [
        &legacy_meta(0x96, 0, &shape, &cs, &bs)[..],
        &[0xdb, 0, 0, 0, 3],
        b"<u2",
    ]
    .concat();
    for (name, meta, dtype) in [
        ("b2nd", legacy_meta(0x96, 0, &shape, &cs, &bs), "|S2"),
        ("b2nd", six_with_dtype, "<u2"),
        ("caterva", legacy_meta(0x95, 0, &shape, &cs, &bs), "|S2"),
        ("caterva", legacy_meta(0x95, 2, &shape, &cs, &bs), "|S2"),
    ] {
        for contiguous in [true, false] {
            let path = dir.join(format!("{name}-{}-{contiguous}", meta.len()));
            let mut cp = b2nd_core::schunk::CParams::default();
            cp.typesize = 2;
            let mut sc = SChunk::new(Storage {
                contiguous,
                urlpath: Some(path.clone()),
                cparams: cp,
                ..Storage::default()
            })
            .unwrap();
            sc.meta_add(name, &meta).unwrap();
            for c in &chunks {
                sc.append_chunk(c).unwrap();
            }
            drop(sc);
            let a = NdArray::open(&path).unwrap();
            assert_eq!(
                (a.shape(), a.chunkshape(), a.blockshape(), a.dtype()),
                (&shape[..], &cs[..], &bs[..], dtype)
            );
            assert_eq!(a.to_vec().unwrap(), data, "{}", path.display());
            let mut got = vec![0u8; 2 * 2 * 2];
            a.get_slice_cbuffer(&[3, 5], &[5, 7], &mut got, &[2, 2])
                .unwrap();
            assert_eq!(got, [52, 53, 54, 55, 66, 67, 68, 69]);
            // Shape changes rewrite the legacy metalayer in place.
            let mut a = a;
            a.append(&[1; 14], 0).unwrap();
            drop(a);
            let b = NdArray::open(&path).unwrap();
            assert_eq!((b.shape(), b.dtype()), (&[6i64, 7][..], dtype));
            assert_eq!(b.to_vec().unwrap(), [&data[..], &[1; 14]].concat());
        }
    }
    // No metalayer at all, and a truncated one.
    let mut cp = b2nd_core::schunk::CParams::default();
    cp.typesize = 2;
    let mut sc = SChunk::new(Storage {
        cparams: cp.clone(),
        ..Storage::default()
    })
    .unwrap();
    sc.append_chunk(&chunks[0]).unwrap();
    assert_eq!(NdArray::from_schunk(sc).unwrap_err().code(), -34);
    let mut sc = SChunk::new(Storage {
        cparams: cp,
        ..Storage::default()
    })
    .unwrap();
    sc.meta_add("b2nd", &legacy_meta(0x96, 0, &shape, &cs, &bs)[..30])
        .unwrap();
    assert_eq!(NdArray::from_schunk(sc).unwrap_err().code(), -1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refresh_follows_shape_changes_made_by_another_handle() {
    let dir = scratch("refresh");
    for contiguous in [true, false] {
        let path = dir.join(if contiguous { "r.b2nd" } else { "r.dir" });
        let st = Storage {
            contiguous,
            urlpath: Some(path.clone()),
            ..Storage::default()
        };
        let ctx = Context::new(
            ArrayStorage::Schunk(st),
            1,
            &[4, 3],
            &[2, 3],
            &[1, 3],
            None,
            0,
            Vec::new(),
        )
        .unwrap();
        let data: Vec<u8> = (0..12).collect();
        let mut w = NdArray::from_cbuffer(&ctx, &data).unwrap();
        let mut r = NdArray::open(&path).unwrap();
        assert!(!r.refresh().unwrap());
        w.append(&[20, 21, 22, 23, 24, 25], 0).unwrap();
        assert_eq!(r.shape(), &[4, 3]);
        assert!(r.refresh().unwrap());
        assert_eq!(r.shape(), &[6, 3]);
        assert_eq!(
            r.to_vec().unwrap(),
            [&data[..], &[20, 21, 22, 23, 24, 25]].concat()
        );
        assert!(!r.refresh().unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_reads_from_files_fetch_single_blocks_correctly() {
    let dir = scratch("compact");
    let mut rng = Rng(7);
    // DELTA needs block 0 as reference: reading a lone later block must
    // still decode right.
    for (compcode, filter) in [(5u8, 3u8), (1, 1), (0, 2)] {
        for contiguous in [true, false] {
            let path = dir.join(format!("c{compcode}-{contiguous}"));
            let mut cparams = b2nd_core::schunk::CParams::default();
            cparams.compcode = compcode;
            cparams.filters = [0, 0, 0, 0, 0, filter];
            let st = Storage {
                contiguous,
                urlpath: Some(path.clone()),
                cparams,
                ..Storage::default()
            };
            let shape = [100i64, 90];
            let ctx = Context::new(
                ArrayStorage::Schunk(st),
                4,
                &shape,
                &[50, 45],
                &[10, 9],
                None,
                0,
                Vec::new(),
            )
            .unwrap();
            let data: Vec<u8> = (0..9000u32)
                .flat_map(|i| (i / 7 * 3).to_le_bytes())
                .collect();
            drop(NdArray::from_cbuffer(&ctx, &data).unwrap());
            let a = NdArray::open(&path).unwrap();
            for _ in 0..40 {
                let (r, c) = (rng.index(100), rng.index(90));
                let (r2, c2) = (
                    (r + 1 + rng.index(4)).min(100),
                    (c + 1 + rng.index(4)).min(90),
                );
                let ext = [r2 - r, c2 - c];
                let mut got = vec![0u8; (ext[0] * ext[1] * 4) as usize];
                a.get_slice_cbuffer(&[r, c], &[r2, c2], &mut got, &ext)
                    .unwrap();
                assert_eq!(
                    got,
                    naive_get(&data, &shape, 4, &[r, c], &[r2, c2]),
                    "{r},{c}..{r2},{c2}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupted_metalayers_never_panic() {
    let ctx = Context::new(
        ArrayStorage::default(),
        2,
        &[6, 5],
        &[4, 3],
        &[2, 3],
        Some("<i2"),
        0,
        Vec::new(),
    )
    .unwrap();
    let data: Vec<u8> = (0..60).collect();
    let a = NdArray::from_cbuffer(&ctx, &data).unwrap();
    let frame = a.to_cframe().unwrap();
    let meta = a.metalayer("b2nd").unwrap();
    let at = frame
        .windows(meta.len())
        .position(|w| w == &meta[..])
        .expect("metalayer bytes in the frame");
    let (mut opened, mut refused) = (0, 0);
    for i in 0..meta.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = frame.clone();
            bad[at + i] ^= flip;
            match NdArray::from_cframe(&bad, false) {
                Ok(b) => {
                    opened += 1;
                    // Whatever the geometry now says, reads end in data or an error.
                    if let Ok(v) = b.to_vec() {
                        assert_eq!(v.len() as i64, b.nitems() * 2);
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(e.code() < 0);
                }
            }
        }
    }
    assert!(
        refused > 0 && opened > 0,
        "opened {opened}, refused {refused}"
    );
}

#[test]
fn copies_to_files_carry_metalayers_and_vlmetalayers() {
    let dir = scratch("copyfile");
    let meta = vec![("units".to_string(), b"m/s".to_vec())];
    let ctx = Context::new(
        ArrayStorage::default(),
        4,
        &[9, 8],
        &[4, 4],
        &[2, 4],
        Some("<f4"),
        0,
        meta,
    )
    .unwrap();
    let data: Vec<u8> = (0..288).map(|i| (i * 5) as u8).collect();
    let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
    a.add_vlmetalayer("note", b"hello").unwrap();
    for (i, (cs, bs)) in [([4, 4], [2, 4]), ([3, 5], [3, 2])].into_iter().enumerate() {
        for contiguous in [true, false] {
            let path = dir.join(format!("copy{i}-{contiguous}"));
            let st = Storage {
                contiguous,
                urlpath: Some(path.clone()),
                ..Storage::default()
            };
            let c = Context::new(
                ArrayStorage::Schunk(st),
                4,
                &[1, 1],
                &cs,
                &bs,
                Some("<f4"),
                0,
                Vec::new(),
            )
            .unwrap();
            drop(a.copy(&c).unwrap());
            let b = NdArray::open(&path).unwrap();
            assert_eq!(
                (b.shape(), b.chunkshape(), b.blockshape()),
                (&[9i64, 8][..], &cs[..], &bs[..])
            );
            assert_eq!(b.to_vec().unwrap(), data);
            assert_eq!(b.metalayer("units"), Some(b"m/s".to_vec()));
            assert_eq!(b.vlmetalayer("note"), Some(b"hello".to_vec()));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn prefilters_see_the_chunk_they_run_on() {
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut cparams = b2nd_core::schunk::CParams::default();
    cparams.prefilter = Some(Arc::new(move |a: &mut b2nd_core::chunk::PrefilterArgs<'_>| {
        log.lock().unwrap().push(a.nchunk);
        a.output.copy_from_slice(a.input);
        Ok(())
    }));
    let st = Storage {
        cparams,
        ..Storage::default()
    };
    let ctx = Context::new(
        ArrayStorage::Schunk(st),
        1,
        &[6, 4],
        &[2, 4],
        &[2, 4],
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    let mut a = NdArray::zeros(&ctx).unwrap();
    a.set_slice_cbuffer(&[7; 4], &[1, 4], &[3, 0], &[4, 4])
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1]);
    let mut v = vec![0u8; 24];
    a.to_cbuffer(&mut v).unwrap();
    assert_eq!(&v[12..16], &[7; 4]);
}

#[test]
fn views_share_chunks_on_every_backend_and_serialize_as_themselves() {
    let dir = scratch("views");
    for (name, storage) in backends(&dir, "views") {
        let ctx = Context::new(
            storage.clone(),
            2,
            &[3, 1, 4],
            &[2, 1, 4],
            &[1, 1, 2],
            Some("<i2"),
            0,
            Vec::new(),
        )
        .unwrap();
        let data: Vec<u8> = (0..24).collect();
        let mut a = NdArray::from_cbuffer(&ctx, &data).unwrap();
        let mut v = a.squeeze().unwrap();
        assert_eq!(v.shape(), &[3, 4], "{name}");
        assert!(v.shares_chunks_with(&a) && v.is_view(), "{name}");
        // Writes through the view land in the source's chunks and file.
        v.set_slice_cbuffer(&[0xAA, 0xBB], &[1, 1], &[2, 3], &[3, 4])
            .unwrap();
        let mut want = data.clone();
        want[22..24].copy_from_slice(&[0xAA, 0xBB]);
        assert_eq!(a.to_vec().unwrap(), want, "{name}");
        // ...and the other way round, through a cached single-chunk read.
        let mut item = [0u8; 2];
        v.get_slice_cbuffer(&[0, 0], &[1, 1], &mut item, &[1, 1])
            .unwrap();
        a.set_slice_cbuffer(&[9, 9], &[1, 1, 1], &[0, 0, 0], &[1, 1, 1])
            .unwrap();
        v.get_slice_cbuffer(&[0, 0], &[1, 1], &mut item, &[1, 1])
            .unwrap();
        assert_eq!(item, [9, 9], "{name}");
        want[..2].copy_from_slice(&[9, 9]);
        if let ArrayStorage::Schunk(Storage {
            urlpath: Some(p), ..
        }) = &storage
        {
            let reopened = NdArray::open(p).unwrap();
            assert_eq!(
                (reopened.shape(), reopened.to_vec().unwrap()),
                (&[3i64, 1, 4][..], want.clone()),
                "{name}"
            );
        }
        if !matches!(storage, ArrayStorage::Decoded) {
            // A view's frame describes the view.
            let f = NdArray::from_cframe(&v.to_cframe().unwrap(), true).unwrap();
            assert_eq!(
                (f.shape(), f.to_vec().unwrap()),
                (&[3i64, 4][..], want.clone())
            );
        }
        drop(a);
        assert_eq!(v.to_vec().unwrap(), want, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A super-chunk whose only content is a "b2nd" metalayer describing one
/// chunk of 1073741952 items of `typesize` bytes (what C-Blosc2's
/// test_b2nd_shape_overflow crafts).
fn oversized_schunk(storage: Storage, typesize: i32) -> SChunk {
    let n = 1_073_741_952i64;
    let meta = b2nd_core::ndarray::NdMeta::new(vec![n], vec![n as i32], vec![128], "|u1", 0)
        .to_b2nd_bytes()
        .unwrap();
    let mut st = storage;
    st.cparams.typesize = typesize;
    let mut sc = SChunk::new(st).unwrap();
    sc.meta_add("b2nd", &meta).unwrap();
    sc
}

#[test]
fn an_array_whose_chunks_no_chunk_can_hold_opens_but_refuses_its_items() {
    let dir = scratch("oversized");
    let path = dir.join("big.b2nd");
    let file = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        ..Storage::default()
    };
    drop(oversized_schunk(file, 4));
    let in_memory = NdArray::from_schunk(oversized_schunk(Storage::default(), 4)).unwrap();
    for mut a in [in_memory, NdArray::open(&path).unwrap()] {
        assert_eq!(
            (a.shape(), a.chunkshape(), a.nchunks()),
            (&[1_073_741_952i64][..], &[1_073_741_952][..], 0)
        );
        assert_eq!(a.layout().extchunknitems * 4, 4_294_967_808);
        let mut item = [0u8; 4];
        // Every access to the items is refused with InvalidParam (-12), as
        // the reference refuses the chunk buffer such a slice needs.
        let sel: [&[i64]; 1] = [&[3]];
        let refusals = [
            a.get_slice_cbuffer(&[0], &[1], &mut item, &[1]),
            a.get_sparse_cbuffer(&[7], &mut item),
            a.get_orthogonal_selection(&sel, &mut item, &[1]),
        ];
        for r in refusals {
            assert_eq!(r.unwrap_err().code(), -12);
        }
        let refusals = [
            a.set_slice_cbuffer(&item, &[1], &[0], &[1]),
            a.set_orthogonal_selection(&sel, &item, &[1]),
        ];
        for r in refusals {
            assert_eq!(r.unwrap_err().code(), -12);
        }
        // Which chunks a region touches is known all the same.
        assert_eq!(a.get_slice_nchunks(&[5], &[9]).unwrap(), [0]);
        // Shape changes are refused and leave it as it was.
        assert!(a.resize(&[1_073_741_953], None).is_err());
        assert!(a.append(&item, 0).is_err());
        assert!(a.insert(&item, 0, 0).is_err());
        assert!(a.delete(0, 0, 1).is_err());
        assert_eq!((a.shape()[0], a.nchunks()), (1_073_741_952, 0));
        assert!(a.squeeze().is_err());
        // What it is made of can still be read and serialized.
        assert!(a.meta_text().unwrap().contains("1073741952"));
        let frame = a.to_cframe().unwrap();
        let back = NdArray::from_cframe(&frame, false).unwrap();
        assert_eq!(back.shape(), a.shape());
    }
    // The same chunks fit a typesize of 1: an ordinary array, whose missing
    // chunk is refused as before.
    let e = NdArray::from_schunk(oversized_schunk(Storage::default(), 1)).unwrap_err();
    assert_eq!(e.code(), -12);
    // A super-chunk holding data cannot hold chunks that large: refused.
    let mut sc = oversized_schunk(Storage::default(), 4);
    sc.append_buffer(&[0u8; 64]).unwrap();
    assert!(NdArray::from_schunk(sc).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
