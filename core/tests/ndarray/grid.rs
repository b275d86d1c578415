//! The grid walker against brute-force enumeration over random grids and
//! regions (ndim 0..=5), and the two-level chunk/block walk of a Geometry
//! against item-by-item coverage and the reference's block-mask rule.

use b2nd_core::ndarray::{block_mask, Geometry, Grid};

use crate::common;
use common::Rng;

/// What the walker must report for one cell.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    index: i64,
    coords: Vec<i64>,
    origin: Vec<i64>,
    valid: Vec<i64>,
    start: Vec<i64>,
    stop: Vec<i64>,
    offset: Vec<i64>,
    full: bool,
}

/// All cells of the grid, in C order, that intersect the region.
fn brute_force(
    extent: &[i64],
    cell: &[i64],
    ncells: &[i64],
    start: &[i64],
    stop: &[i64],
) -> Vec<Seen> {
    let n = extent.len();
    let total: i64 = ncells.iter().product();
    let mut out = Vec::new();
    for index in 0..total {
        // Unravel in C order.
        let mut coords = vec![0i64; n];
        let mut rest = index;
        for i in (0..n).rev() {
            coords[i] = rest % ncells[i];
            rest /= ncells[i];
        }
        let mut s = Seen {
            index,
            coords: coords.clone(),
            origin: vec![],
            valid: vec![],
            start: vec![],
            stop: vec![],
            offset: vec![],
            full: true,
        };
        let mut touched = true;
        for i in 0..n {
            let o = coords[i] * cell[i];
            let lo = start[i].max(o);
            let hi = stop[i].min(o + cell[i]);
            if lo >= hi {
                touched = false;
            }
            let valid = (o + cell[i]).min(extent[i]) - o;
            s.origin.push(o);
            s.valid.push(valid);
            s.start.push(lo - o);
            s.stop.push(hi - o);
            s.offset.push(lo - start[i]);
            s.full &= lo == o && hi - o == valid;
        }
        if touched {
            out.push(s);
        }
    }
    out
}

#[test]
fn walker_matches_brute_force() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut nonempty = 0;
    for _ in 0..4000 {
        let n = rng.below(6) as usize;
        let mut extent = vec![0i64; n];
        let mut cell = vec![0i64; n];
        let mut ncells = vec![0i64; n];
        for i in 0..n {
            extent[i] = rng.below(9);
            cell[i] = 1 + rng.below(4);
            ncells[i] = (extent[i] + cell[i] - 1) / cell[i] + rng.below(2);
        }
        let grid = Grid::new(&extent, &cell, &ncells).unwrap();
        assert_eq!(grid.ncells(), ncells.iter().product::<i64>());
        let (start, stop): (Vec<i64>, Vec<i64>) = extent.iter().map(|&e| rng.range(e)).unzip();
        let expected = brute_force(&extent, &cell, &ncells, &start, &stop);
        let mut walk = grid.walk(&start, &stop).unwrap();
        let announced = walk.count_total();
        let mut got = Vec::new();
        while let Some(c) = walk.next() {
            got.push(Seen {
                index: c.index(),
                coords: c.coords().to_vec(),
                origin: c.origin().to_vec(),
                valid: c.valid_shape().to_vec(),
                start: c.start().to_vec(),
                stop: c.stop().to_vec(),
                offset: c.offset().to_vec(),
                full: c.is_full(),
            });
            let items: i64 = (0..n).map(|i| c.stop()[i] - c.start()[i]).product();
            assert_eq!(c.nitems(), items);
        }
        assert!(walk.next().is_none(), "walk restarts after the end");
        assert_eq!(
            got, expected,
            "extent {extent:?} cell {cell:?} region {start:?}..{stop:?}"
        );
        assert_eq!(announced, expected.len() as i64);
        let mask = grid.mask(&start, &stop).unwrap();
        let mut want = vec![false; grid.ncells() as usize];
        for s in &expected {
            want[s.index as usize] = true;
        }
        assert_eq!(mask, want);
        nonempty += (!expected.is_empty()) as usize;
    }
    assert!(
        nonempty > 1000,
        "the random regions must mostly be nonempty ({nonempty})"
    );
}

/// The reference's per-block test when it builds a maskout for a read:
/// block bounds shifted to array coordinates, clipped to the chunk's end
/// (itself clipped to the array), and a block is skipped when it ends at or
/// before the slice start or begins at or after the slice stop.
fn reference_needed_blocks(g: &Geometry, chunk: &[i64], start: &[i64], stop: &[i64]) -> Vec<bool> {
    let n = g.ndim;
    let mut out = Vec::new();
    for nblock in 0..g.nblocks {
        let mut bc = vec![0i64; n];
        let mut rest = nblock;
        for i in (0..n).rev() {
            bc[i] = rest % g.blocks_in_chunk[i];
            rest /= g.blocks_in_chunk[i];
        }
        let mut empty = false;
        for i in 0..n {
            let cs = chunk[i] * g.chunkshape[i] as i64;
            let ce = (cs + g.chunkshape[i] as i64).min(g.shape[i]);
            let bs = (cs + bc[i] * g.blockshape[i] as i64).min(ce);
            let be = (cs + (bc[i] + 1) * g.blockshape[i] as i64).min(ce);
            empty |= be <= start[i] || bs >= stop[i];
        }
        out.push(!empty);
    }
    out
}

#[test]
fn chunk_then_block_walk_covers_each_item_once() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..1500 {
        let n = rng.below(5) as usize;
        let mut shape = vec![0i64; n];
        let mut chunks = vec![0i32; n];
        let mut blocks = vec![0i32; n];
        for i in 0..n {
            shape[i] = rng.below(10);
            chunks[i] = 1 + rng.below(5) as i32;
            blocks[i] = 1 + rng.below(chunks[i] as i64) as i32;
        }
        let g = Geometry::new(&shape, &chunks, &blocks, 1).unwrap();
        let (start, stop): (Vec<i64>, Vec<i64>) = shape.iter().map(|&e| rng.range(e)).unzip();
        let region: Vec<i64> = (0..n).map(|i| stop[i] - start[i]).collect();
        let region_items: i64 = region.iter().product();
        let mut hits = vec![0u8; region_items as usize];

        let chunk_grid = g.chunk_grid();
        let mut chunks_walk = chunk_grid.walk(&start, &stop).unwrap();
        while let Some(ch) = chunks_walk.next() {
            assert_eq!(g.chunk_index(ch.coords()).unwrap(), ch.index());
            assert_eq!(g.chunk_coords(ch.index()).unwrap(), ch.coords());
            assert_eq!(g.chunk_extent(ch.coords()).unwrap(), ch.valid_shape());
            let bgrid = g.block_grid(ch.coords()).unwrap();
            assert_eq!(bgrid.ncells(), g.nblocks);
            // The block mask equals the reference's rule.
            let mask = block_mask(&bgrid, ch.start(), ch.stop()).unwrap();
            assert_eq!(
                mask,
                reference_needed_blocks(&g, ch.coords(), &start, &stop)
            );
            let mut blocks_walk = bgrid.walk(ch.start(), ch.stop()).unwrap();
            while let Some(b) = blocks_walk.next() {
                assert!(mask[b.index() as usize]);
                // Every item of the intersection, as region-relative coordinates.
                let sizes: Vec<i64> = (0..n).map(|i| b.stop()[i] - b.start()[i]).collect();
                let count: i64 = sizes.iter().product();
                for k in 0..count {
                    let mut rest = k;
                    let mut lin = 0i64;
                    let mut pos = vec![0i64; n];
                    for i in (0..n).rev() {
                        pos[i] = rest % sizes[i];
                        rest /= sizes[i];
                    }
                    for i in 0..n {
                        // Region-relative: chunk offset + block offset + item.
                        let rel = ch.offset()[i] + b.offset()[i] + pos[i];
                        // And the same item via absolute coordinates.
                        let abs = ch.origin()[i] + b.origin()[i] + b.start()[i] + pos[i];
                        assert_eq!(abs - start[i], rel);
                        lin = lin * region[i] + rel;
                    }
                    hits[lin as usize] += 1;
                }
            }
        }
        assert!(
            hits.iter().all(|&h| h == 1),
            "shape {shape:?} chunks {chunks:?} blocks {blocks:?} {start:?}..{stop:?}"
        );
    }
}

#[test]
fn bad_regions_and_coordinates_are_rejected() {
    let g = Geometry::new(&[10, 7], &[4, 3], &[2, 2], 4).unwrap();
    let grid = g.chunk_grid();
    assert_eq!(grid.walk(&[0, 0], &[11, 7]).unwrap_err().code(), -12);
    assert_eq!(grid.walk(&[0, 5], &[10, 4]).unwrap_err().code(), -12);
    assert_eq!(grid.walk(&[0, -1], &[10, 4]).unwrap_err().code(), -12);
    assert_eq!(grid.walk(&[0, 0, 0], &[1, 1, 1]).unwrap_err().code(), -12);
    assert_eq!(g.block_grid(&[3, 0]).unwrap_err().code(), -33);
    assert_eq!(g.block_grid(&[0, -1]).unwrap_err().code(), -33);
    assert_eq!(g.block_grid(&[0]).unwrap_err().code(), -12);
    assert_eq!(g.chunk_coords(9).unwrap_err().code(), -33);
    assert_eq!(g.chunk_coords(-1).unwrap_err().code(), -33);
    // The edge chunk's block grid stops at the array's edge: blocks past it
    // are not addressable by a region.
    let edge = g.block_grid(&[2, 2]).unwrap();
    assert_eq!(edge.extent(), [2, 1]);
    assert_eq!(edge.walk(&[0, 0], &[2, 2]).unwrap_err().code(), -12);
}
