//! Geometry values against an independent derivation over random shapes
//! (ndim 0..=5, zero-length dimensions included), and every rejection.

use b2nd_core::ndarray::geometry::padded;
use b2nd_core::ndarray::{Geometry, NdMeta};

use crate::common;
use common::Rng;

fn round_up(x: i64, m: i64) -> i64 {
    (x + m - 1) / m * m
}

/// C-order strides of `dims`, where a stride is 0 if any later dimension of
/// the array is empty (the reference zeroes strides in front of an empty
/// dimension, and the zero propagates outward by multiplication).
fn strides(dims: &[i64], shape: &[i64]) -> Vec<i64> {
    let n = dims.len();
    (0..n)
        .map(|i| {
            if shape[i + 1..].contains(&0) {
                0
            } else {
                dims[i + 1..].iter().product()
            }
        })
        .collect()
}

#[test]
fn random_shapes_match_an_independent_derivation() {
    let mut rng = Rng(42);
    for _ in 0..5000 {
        let n = rng.below(6) as usize;
        let ts = 1 + rng.below(16) as i32;
        let (shape, chunks, blocks) = rng.layout(n, 8, 30, 12);
        let g = Geometry::new(&shape, &chunks, &blocks, ts).unwrap();
        let c: Vec<i64> = chunks.iter().map(|&x| x as i64).collect();
        let b: Vec<i64> = blocks.iter().map(|&x| x as i64).collect();
        let ext: Vec<i64> = (0..n).map(|i| round_up(shape[i], c[i])).collect();
        let extc: Vec<i64> = (0..n).map(|i| round_up(c[i], b[i])).collect();
        assert_eq!(g.extshape, ext);
        assert_eq!(g.extchunkshape, extc);
        assert_eq!(g.nitems, shape.iter().product::<i64>());
        assert_eq!(g.extnitems, ext.iter().product::<i64>());
        assert_eq!(g.chunknitems as i64, c.iter().product::<i64>());
        assert_eq!(g.blocknitems as i64, b.iter().product::<i64>());
        assert_eq!(g.extchunknitems, extc.iter().product::<i64>());
        let grid: Vec<i64> = (0..n).map(|i| (shape[i] + c[i] - 1) / c[i]).collect();
        let bgrid: Vec<i64> = (0..n).map(|i| extc[i] / b[i]).collect();
        assert_eq!(g.chunks_in_array, grid);
        assert_eq!(g.blocks_in_chunk, bgrid);
        assert_eq!(g.nchunks, grid.iter().product::<i64>());
        assert_eq!(g.nblocks, bgrid.iter().product::<i64>());
        assert_eq!(g.chunk_nbytes as i64, g.extchunknitems * ts as i64);
        assert_eq!(g.block_nbytes as i64, g.blocknitems as i64 * ts as i64);
        assert_eq!(g.item_array_strides, strides(&shape, &shape));
        assert_eq!(g.item_chunk_strides, strides(&c, &shape));
        assert_eq!(g.item_extchunk_strides, strides(&extc, &shape));
        assert_eq!(g.item_block_strides, strides(&b, &shape));
        assert_eq!(g.block_chunk_strides, strides(&bgrid, &shape));
        let quirk: Vec<i64> = (0..n).map(|i| ext[i] * c[i]).collect();
        assert_eq!(g.chunk_array_strides, strides(&quirk, &shape));
        let ones = vec![1i64; n];
        assert_eq!(g.chunk_grid_strides, strides(&grid, &ones));
        // Every chunk number maps to coordinates and back.
        for k in 0..g.nchunks {
            let coords = g.chunk_coords(k).unwrap();
            assert_eq!(g.chunk_index(&coords).unwrap(), k);
            let extent = g.chunk_extent(&coords).unwrap();
            for i in 0..n {
                assert_eq!(extent[i], (shape[i] - coords[i] * c[i]).min(c[i]));
                assert!(extent[i] > 0);
            }
        }
        // The metalayer record of the same array gives the same geometry.
        let meta = NdMeta::new(shape.clone(), chunks.clone(), blocks.clone(), "|u1", 0);
        let back = NdMeta::from_b2nd_bytes(&meta.to_b2nd_bytes().unwrap()).unwrap();
        assert_eq!(Geometry::from_meta(&back, ts).unwrap(), g);
    }
}

#[test]
fn padded_layout_for_the_c_struct() {
    let g = Geometry::new(&[3, 4], &[2, 2], &[1, 2], 1).unwrap();
    let p = padded(&g.shape, 1);
    assert_eq!(&p[..3], &[3, 4, 1]);
    assert_eq!(p.len(), 16);
    assert!(p[2..].iter().all(|&x| x == 1));
}

#[test]
fn every_rejection() {
    let code =
        |s: &[i64], c: &[i32], b: &[i32], t: i32| Geometry::new(s, c, b, t).unwrap_err().code();
    // typesize
    assert_eq!(code(&[4], &[2], &[1], 0), -12);
    assert_eq!(code(&[4], &[2], &[1], -4), -12);
    // ndim and lengths
    assert_eq!(code(&[1; 17], &[1; 17], &[1; 17], 1), -12);
    assert_eq!(code(&[4], &[2, 2], &[1], 1), -12);
    assert_eq!(code(&[4], &[2], &[], 1), -12);
    // negative entries
    assert_eq!(code(&[4, -1], &[2, 2], &[1, 1], 1), -12);
    assert_eq!(code(&[4], &[-2], &[-1], 1), -12);
    assert_eq!(code(&[4], &[2], &[-1], 1), -12);
    // zeros: block 0 with chunk != 0; shape != 0 with chunk 0
    assert_eq!(code(&[0], &[2], &[0], 1), -12);
    assert_eq!(code(&[3], &[0], &[0], 1), -12);
    // A block larger than its chunk is accepted, as by the reference 3.3.5
    // (the chunk is padded to one whole block), also under a zero chunk.
    let g = Geometry::new(&[8], &[2], &[4], 1).unwrap();
    assert_eq!((g.extchunkshape[0], g.chunk_nbytes), (4, 4));
    assert!(Geometry::new(&[0], &[0], &[1], 1).is_ok());
    // overflow: rounding shape up, item products, int32 chunk/block products
    assert_eq!(code(&[i64::MAX], &[3], &[1], 1), -12);
    assert_eq!(code(&[1 << 32, 1 << 32], &[1, 1], &[1, 1], 1), -12);
    assert_eq!(
        code(&[1 << 16, 1 << 16], &[1 << 16, 1 << 16], &[1, 1], 1),
        -12
    );
    assert_eq!(
        code(
            &[1 << 16, 1 << 16],
            &[1 << 16, 1 << 16],
            &[1 << 16, 1 << 16],
            1
        ),
        -12
    );
    // block bytes over int32
    assert_eq!(code(&[1 << 20], &[1 << 20], &[1 << 20], 1 << 12), -12);
    // padded chunk over the buffer limit: MaxBufsizeExceeded, as the reference
    assert_eq!(code(&[1 << 31], &[1 << 30], &[1 << 10], 2), -35);
    assert_eq!(code(&[100], &[(1 << 30) + 1], &[1 << 30], 1), -35);
    // The limit itself is allowed.
    let max = i32::MAX - 32;
    assert!(Geometry::new(&[max as i64], &[max], &[1], 1).is_ok());
    assert_eq!(code(&[max as i64 + 1], &[max + 1], &[1], 1), -35);
    // Accepted corner cases, for contrast.
    assert!(Geometry::new(&[0], &[0], &[0], 1).is_ok());
    assert!(Geometry::new(&[5], &[8], &[8], 1).is_ok());
    assert!(Geometry::new(&[], &[], &[], 1).is_ok());
}
