//! Many threads reading one array through `&self` (issue 58): random
//! slices and single items from 4 threads at once, on an in-memory array,
//! a contiguous file and a sparse directory, each checked against the
//! data; and super-chunk reads of the same chunks through `&SChunk`.

use crate::common;

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{CParams, SChunk, Storage};
use common::{Rng, TempDir};

const SHAPE: [i64; 3] = [40, 50, 30];

fn value(i: i64) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761)
}

fn data() -> Vec<u8> {
    let n: i64 = SHAPE.iter().product();
    (0..n).flat_map(|i| value(i).to_le_bytes()).collect()
}

fn storages(dir: &TempDir) -> Vec<(&'static str, ArrayStorage)> {
    let file = |name: &str, contiguous| {
        ArrayStorage::Schunk(Storage {
            contiguous,
            urlpath: Some(dir.join(name)),
            ..Storage::default()
        })
    };
    vec![
        ("memory", ArrayStorage::default()),
        ("contiguous file", file("a.b2nd", true)),
        ("sparse directory", file("s.b2nd", false)),
    ]
}

/// Reads random regions and items of `a` from `rng` and checks each.
fn read_and_check(a: &NdArray, seed: u64, reads: usize) {
    let mut rng = Rng(seed);
    for _ in 0..reads {
        let mut start = [0i64; 3];
        let mut stop = [0i64; 3];
        for d in 0..3 {
            let (lo, hi) = rng.range(SHAPE[d]);
            start[d] = lo;
            stop[d] = hi.max(lo + 1).min(SHAPE[d]);
            if start[d] == stop[d] {
                start[d] = stop[d] - 1;
            }
        }
        let shape: Vec<i64> = (0..3).map(|d| stop[d] - start[d]).collect();
        let n: i64 = shape.iter().product();
        let mut buf = vec![0u8; n as usize * 4];
        a.get_slice_cbuffer(&start, &stop, &mut buf, &shape)
            .unwrap();
        let mut k = 0;
        for i in start[0]..stop[0] {
            for j in start[1]..stop[1] {
                for l in start[2]..stop[2] {
                    let flat = (i * SHAPE[1] + j) * SHAPE[2] + l;
                    let got = u32::from_le_bytes(buf[k..k + 4].try_into().unwrap());
                    assert_eq!(
                        got,
                        value(flat),
                        "item ({i}, {j}, {l}) of {start:?}..{stop:?}"
                    );
                    k += 4;
                }
            }
        }
    }
}

#[test]
fn four_threads_read_one_array_each_correctly() {
    let dir = TempDir::new("ndarray-threads");
    let bytes = data();
    for (name, storage) in storages(&dir) {
        let ctx = Context::new(
            storage,
            4,
            &SHAPE,
            &[20, 25, 15],
            &[10, 5, 15],
            None,
            0,
            Vec::new(),
        )
        .unwrap();
        let a = NdArray::from_cbuffer(&ctx, &bytes).unwrap();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let a = &a;
                s.spawn(move || read_and_check(a, 0x5eed + t, 60));
            }
        });
        assert_eq!(a.to_vec().unwrap(), bytes, "{name}");
    }
}

#[test]
fn threads_read_one_super_chunk_through_shared_references() {
    let dir = TempDir::new("schunk-threads");
    let chunks: Vec<Vec<u8>> = (0..8u32)
        .map(|c| {
            (0..4000u32)
                .flat_map(|i| (i * 7 + c).to_le_bytes())
                .collect()
        })
        .collect();
    for (contiguous, urlpath) in [
        (true, None),
        (true, Some(dir.join("f.b2frame"))),
        (false, Some(dir.join("d.b2frame"))),
    ] {
        let mut sc = SChunk::new(Storage {
            contiguous,
            urlpath,
            cparams: CParams {
                typesize: 4,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        for c in &chunks {
            sc.append_buffer(c).unwrap();
        }
        let sc = &sc;
        std::thread::scope(|s| {
            for t in 0..4usize {
                let chunks = &chunks;
                s.spawn(move || {
                    let mut out = vec![0u8; 16000];
                    for r in 0..200 {
                        let n = (t * 3 + r) % chunks.len();
                        assert_eq!(sc.decompress_chunk(n as i64, &mut out).unwrap(), 16000);
                        assert_eq!(out, chunks[n]);
                        let mut items = [0u8; 40];
                        sc.get_items(n as i64, 100, 10, &mut items).unwrap();
                        assert_eq!(items[..], chunks[n][400..440]);
                    }
                });
            }
        });
    }
}
