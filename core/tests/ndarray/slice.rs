//! The pieces together, the way b2nd reads and writes slices: a dense array
//! is scattered into chunk buffers (each chunk a sequence of padded blocks,
//! every block a C-order array of `blockshape`) with the chunk/block walk
//! and copy_nd, checked against an item-by-item placement; then random
//! slices are gathered back and checked against the dense array.

use b2nd_core::ndarray::{copy_nd, Geometry};

use crate::common;
use common::Rng;

fn unravel(mut k: i64, dims: &[i64]) -> Vec<i64> {
    let mut out = vec![0; dims.len()];
    for i in (0..dims.len()).rev() {
        out[i] = k % dims[i];
        k /= dims[i];
    }
    out
}

fn ravel(coords: &[i64], dims: &[i64]) -> i64 {
    coords.iter().zip(dims).fold(0, |acc, (c, d)| acc * d + c)
}

/// Chunk buffers built with the walkers and copy_nd.
fn scatter(g: &Geometry, dense: &[u8]) -> Vec<Vec<u8>> {
    let ts = g.typesize as usize;
    let block_items = g.blocknitems as usize;
    let blockshape: Vec<i64> = g.blockshape.iter().map(|&b| b as i64).collect();
    let mut chunks = vec![vec![0u8; g.chunk_nbytes as usize]; g.nchunks as usize];
    let zeros = vec![0i64; g.ndim];
    let grid = g.chunk_grid();
    let mut cw = grid.walk(&zeros, &g.shape).unwrap();
    while let Some(ch) = cw.next() {
        assert!(ch.is_full());
        let buf = &mut chunks[ch.index() as usize];
        let bgrid = g.block_grid(ch.coords()).unwrap();
        let mut bw = bgrid.walk(&zeros, ch.valid_shape()).unwrap();
        while let Some(b) = bw.next() {
            let at = b.index() as usize * block_items * ts;
            let block = &mut buf[at..at + block_items * ts];
            let src_start: Vec<i64> = (0..g.ndim)
                .map(|i| ch.origin()[i] + b.origin()[i] + b.start()[i])
                .collect();
            let src_stop: Vec<i64> = (0..g.ndim)
                .map(|i| ch.origin()[i] + b.origin()[i] + b.stop()[i])
                .collect();
            copy_nd(
                ts,
                dense,
                &g.shape,
                &src_start,
                &src_stop,
                block,
                &blockshape,
                b.start(),
            )
            .unwrap();
        }
    }
    chunks
}

/// Chunk buffers built one item at a time from the layout's definition.
fn scatter_naive(g: &Geometry, dense: &[u8]) -> Vec<Vec<u8>> {
    let ts = g.typesize as usize;
    let n = g.ndim;
    let c: Vec<i64> = g.chunkshape.iter().map(|&x| x as i64).collect();
    let b: Vec<i64> = g.blockshape.iter().map(|&x| x as i64).collect();
    let mut chunks = vec![vec![0u8; g.chunk_nbytes as usize]; g.nchunks as usize];
    for k in 0..g.nitems {
        let x = unravel(k, &g.shape);
        let chunk: Vec<i64> = (0..n).map(|i| x[i] / c[i]).collect();
        let within: Vec<i64> = (0..n).map(|i| x[i] % c[i]).collect();
        let block: Vec<i64> = (0..n).map(|i| within[i] / b[i]).collect();
        let inblock: Vec<i64> = (0..n).map(|i| within[i] % b[i]).collect();
        let nchunk = ravel(&chunk, &g.chunks_in_array) as usize;
        let pos = ravel(&block, &g.blocks_in_chunk) * g.blocknitems as i64 + ravel(&inblock, &b);
        let pos = pos as usize * ts;
        chunks[nchunk][pos..pos + ts]
            .copy_from_slice(&dense[k as usize * ts..(k as usize + 1) * ts]);
    }
    chunks
}

/// A slice gathered from chunk buffers with the walkers and copy_nd.
fn gather(g: &Geometry, chunks: &[Vec<u8>], start: &[i64], stop: &[i64]) -> Vec<u8> {
    let ts = g.typesize as usize;
    let block_items = g.blocknitems as usize;
    let blockshape: Vec<i64> = g.blockshape.iter().map(|&b| b as i64).collect();
    let shape: Vec<i64> = (0..g.ndim).map(|i| stop[i] - start[i]).collect();
    let mut out = vec![0u8; shape.iter().product::<i64>() as usize * ts];
    let grid = g.chunk_grid();
    let mut cw = grid.walk(start, stop).unwrap();
    while let Some(ch) = cw.next() {
        let bgrid = g.block_grid(ch.coords()).unwrap();
        let mask = bgrid.mask(ch.start(), ch.stop()).unwrap();
        let mut bw = bgrid.walk(ch.start(), ch.stop()).unwrap();
        let mut visited = 0;
        while let Some(b) = bw.next() {
            visited += 1;
            let at = b.index() as usize * block_items * ts;
            let block = &chunks[ch.index() as usize][at..at + block_items * ts];
            let dst_start: Vec<i64> = (0..g.ndim)
                .map(|i| ch.offset()[i] + b.offset()[i])
                .collect();
            copy_nd(
                ts,
                block,
                &blockshape,
                b.start(),
                b.stop(),
                &mut out,
                &shape,
                &dst_start,
            )
            .unwrap();
        }
        assert_eq!(visited, mask.iter().filter(|&&m| m).count());
    }
    out
}

#[test]
fn scatter_and_gather_random_arrays() {
    let mut rng = Rng(0x5111ce);
    for _ in 0..400 {
        let n = rng.below(5) as usize;
        let ts = [1i32, 2, 4, 8, 13][rng.below(5) as usize];
        let (shape, chunks, blocks) = rng.layout(n, 10, 9, 6);
        let g = Geometry::new(&shape, &chunks, &blocks, ts).unwrap();
        let dense: Vec<u8> = (0..g.nitems as usize * ts as usize)
            .map(|_| rng.next() as u8)
            .collect();
        let stored = scatter(&g, &dense);
        assert_eq!(
            stored,
            scatter_naive(&g, &dense),
            "shape {shape:?} chunks {chunks:?} blocks {blocks:?}"
        );
        for _ in 0..5 {
            let mut start = vec![0i64; n];
            let mut stop = vec![0i64; n];
            for i in 0..n {
                start[i] = rng.below(shape[i] + 1);
                stop[i] = start[i] + rng.below(shape[i] - start[i] + 1);
            }
            let got = gather(&g, &stored, &start, &stop);
            // The same slice straight from the dense array.
            let slice_shape: Vec<i64> = (0..n).map(|i| stop[i] - start[i]).collect();
            let mut want = vec![0u8; got.len()];
            copy_nd(
                ts as usize,
                &dense,
                &shape,
                &start,
                &stop,
                &mut want,
                &slice_shape,
                &vec![0; n],
            )
            .unwrap();
            assert_eq!(got, want, "slice {start:?}..{stop:?} of {shape:?}");
        }
    }
}
