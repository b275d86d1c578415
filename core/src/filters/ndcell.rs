//! The reference's filters for the blocks of b2nd arrays (global plugins
//! NDCELL, id 32, and NDMEAN, id 33). Both cut a block (of the array's
//! `blockshape`) into cells of `meta` items per side and lay the cells out
//! one after the other, each in C order: NDCELL moves the items (lossless),
//! NDMEAN replaces every item of a cell with the cell's mean (float32 or
//! float64; lossy). Decoding puts the items back where they came from.
//!
//! The layouts follow the reference item for item, including one quirk of
//! NDMEAN: a cell's corner is placed with the first dimension's cell side for
//! every dimension, which differs from the real side when the block is
//! narrower than `meta` in the first dimension only. The reference then reads
//! and writes outside the block, or, where the cells overlap inside it,
//! encodes a block that its decoder refuses; here such geometries are an
//! error on both sides.

use crate::Result;

/// Most dimensions the reference's cell filters take.
const MAX_DIM: usize = 8;

/// Which of the two filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// NDCELL (id 32): moves the items cell by cell (lossless).
    Cell,
    /// NDMEAN (id 33): replaces each cell's items with their mean (lossy).
    Mean,
}

/// A block's cells: their sides, and the step the reference uses to place
/// their corners.
struct Cells {
    block: Vec<i64>,
    side: Vec<i64>,
    corner_step: i64,
    nitems: usize,
}

impl Cells {
    /// Checks the geometry as the reference does for `kind` with this
    /// `meta`, for a block of `len` bytes of `typesize`-byte items.
    fn new(kind: Kind, blockshape: &[i64], meta: u8, typesize: usize, len: usize) -> Result<Cells> {
        let ndim = blockshape.len();
        if ndim == 0 || ndim > MAX_DIM {
            crate::bail!(FilterPipeline, "cell filter: ndim {ndim} out of range");
        }
        if typesize == 0 {
            crate::bail!(FilterPipeline, "cell filter: typesize 0");
        }
        let mut bytes = typesize as i64;
        for &b in blockshape {
            if b <= 0 {
                crate::bail!(FilterPipeline, "cell filter: blockshape {blockshape:?}");
            }
            bytes = bytes.saturating_mul(b);
        }
        if bytes != len as i64 {
            crate::bail!(
                FilterPipeline,
                "cell filter: a block of {len} bytes is not a whole {blockshape:?} block"
            );
        }
        let nitems = len / typesize;
        let side: Vec<i64> = match kind {
            Kind::Cell if meta > 0 => vec![i64::from(meta); ndim],
            // NDMEAN reads its meta as a signed byte and clips it to the block.
            Kind::Mean if (1..=127).contains(&meta) => {
                blockshape.iter().map(|&b| b.min(i64::from(meta))).collect()
            }
            _ => crate::bail!(FilterPipeline, "cell filter: cell side {meta}"),
        };
        let cell_items = side.iter().try_fold(1i64, |acc, &s| acc.checked_mul(s));
        if cell_items.map_or(true, |c| c > nitems as i64) {
            crate::bail!(FilterPipeline, "cell filter: cells larger than the block");
        }
        let corner_step = match kind {
            Kind::Cell => i64::from(meta),
            Kind::Mean => side[0],
        };
        Ok(Cells {
            block: blockshape.to_vec(),
            side,
            corner_step,
            nitems,
        })
    }

    /// As [`Cells::new`] for a block read from `src` and written to `dst`.
    fn for_buffers(
        kind: Kind,
        blockshape: &[i64],
        meta: u8,
        typesize: usize,
        src: &[u8],
        dst: &[u8],
    ) -> Result<Cells> {
        if dst.len() != src.len() {
            crate::bail!(FilterPipeline, "cell filter: output of another size");
        }
        Cells::new(kind, blockshape, meta, typesize, src.len())
    }

    /// Calls `row(cell, first_item, items)` for every row of every cell, in
    /// the filters' order; errors when a row would leave the block, and
    /// when the last row does not end the block. The reference's decoder
    /// refuses that last case; its encoder does not, and writes a block no
    /// one decodes (NDMEAN's corner quirk makes cells overlap), so here
    /// encoding refuses it too.
    fn walk(&self, mut row: impl FnMut(usize, usize, usize) -> Result<()>) -> Result<()> {
        // Fixed-size scratch (ndim <= MAX_DIM, checked in `new`): no
        // allocation per cell or row.
        let ndim = self.block.len();
        let mut grid = [1i64; MAX_DIM];
        let mut stride = [1i64; MAX_DIM];
        for ((g, &b), &c) in grid.iter_mut().zip(&self.block).zip(&self.side) {
            *g = (b + c - 1) / c;
        }
        // Items per step along each dimension (C order).
        for i in (0..ndim - 1).rev() {
            stride[i] = stride[i + 1] * self.block[i + 1];
        }
        let ncells: i64 = grid[..ndim].iter().product();
        let (mut at, mut pad, mut k) = ([0i64; MAX_DIM], [0i64; MAX_DIM], [0i64; MAX_DIM]);
        let mut end = 0usize;
        for cell in 0..ncells {
            unravel(cell, &grid[..ndim], &mut at[..ndim]);
            let corner: i64 = (0..ndim)
                .map(|i| at[i] * self.corner_step * stride[i])
                .sum();
            // The sides of this cell, cut where the block ends.
            for i in 0..ndim {
                let rest = self.block[i] % self.side[i];
                pad[i] = if rest != 0 && at[i] == grid[i] - 1 {
                    rest
                } else {
                    self.side[i]
                };
            }
            let rows: i64 = pad[..ndim - 1].iter().product();
            let len = pad[ndim - 1] as usize;
            for r in 0..rows {
                unravel(r, &pad[..ndim - 1], &mut k[..ndim - 1]);
                let first = corner + (0..ndim - 1).map(|i| k[i] * stride[i]).sum::<i64>();
                let first = usize::try_from(first)
                    .ok()
                    .filter(|f| f + len <= self.nitems);
                let Some(first) = first else {
                    crate::bail!(FilterPipeline, "cell filter: a cell leaves the block");
                };
                row(cell as usize, first, len)?;
                end = first + len;
            }
        }
        if end != self.nitems {
            crate::bail!(FilterPipeline, "cell filter: cells do not end the block");
        }
        Ok(())
    }
}

/// The C-order coordinates of item `i` of a grid of `shape`.
fn unravel(mut i: i64, shape: &[i64], out: &mut [i64]) {
    for d in (0..shape.len()).rev() {
        out[d] = i % shape[d];
        i /= shape[d];
    }
}

/// Encodes one block of `blockshape` (items of `typesize` bytes) into `dst`.
pub fn encode(
    kind: Kind,
    blockshape: &[i64],
    meta: u8,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let cells = Cells::for_buffers(kind, blockshape, meta, typesize, src, dst)?;
    let mut pos = 0usize;
    match kind {
        Kind::Cell => {
            cells.walk(|_, first, len| {
                let n = len * typesize;
                dst[pos..pos + n].copy_from_slice(&src[first * typesize..][..n]);
                pos += n;
                Ok(())
            })?;
        }
        Kind::Mean => {
            if typesize != 4 && typesize != 8 {
                crate::bail!(FilterPipeline, "NDMEAN needs float32 or float64 items");
            }
            // Rows arrive cell by cell: sum a cell's rows, and write its mean
            // when the next cell starts (and after the last).
            let mut current: Option<usize> = None;
            let (mut sum32, mut sum64, mut count) = (0f32, 0f64, 0usize);
            let flush = |dst: &mut [u8], pos: &mut usize, sum32: f32, sum64: f64, count: usize| {
                let bytes: [u8; 8] = if typesize == 4 {
                    let m = (sum32 / count as f32).to_le_bytes();
                    [m[0], m[1], m[2], m[3], 0, 0, 0, 0]
                } else {
                    (sum64 / count as f64).to_le_bytes()
                };
                for item in dst[*pos..*pos + count * typesize].chunks_exact_mut(typesize) {
                    item.copy_from_slice(&bytes[..typesize]);
                }
                *pos += count * typesize;
            };
            cells.walk(|cell, first, len| {
                if current != Some(cell) {
                    if current.is_some() {
                        flush(dst, &mut pos, sum32, sum64, count);
                    }
                    current = Some(cell);
                    (sum32, sum64, count) = (0.0, 0.0, 0);
                }
                let items = &src[first * typesize..][..len * typesize];
                for item in items.chunks_exact(typesize) {
                    if typesize == 4 {
                        sum32 += f32::from_le_bytes([item[0], item[1], item[2], item[3]]);
                    } else {
                        sum64 += f64::from_le_bytes(item.try_into().unwrap_or([0; 8]));
                    }
                }
                count += len;
                Ok(())
            })?;
            if current.is_some() {
                flush(dst, &mut pos, sum32, sum64, count);
            }
        }
    }
    if pos != dst.len() {
        crate::bail!(FilterPipeline, "cell filter: cells do not cover the block");
    }
    Ok(())
}

/// Decodes one block: puts each cell's items back in place.
pub fn decode(
    kind: Kind,
    blockshape: &[i64],
    meta: u8,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let cells = Cells::for_buffers(kind, blockshape, meta, typesize, src, dst)?;
    let mut pos = 0usize;
    cells.walk(|_, first, len| {
        let n = len * typesize;
        dst[first * typesize..][..n].copy_from_slice(&src[pos..pos + n]);
        pos += n;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cell layout by definition: visit cells in C order, each cell's
    /// items in C order.
    fn naive_cell_order(block: &[i64], side: i64) -> Vec<usize> {
        let ndim = block.len();
        let nitems: i64 = block.iter().product();
        let mut items: Vec<(Vec<i64>, Vec<i64>, usize)> = (0..nitems)
            .map(|i| {
                let mut at = vec![0; ndim];
                unravel(i, block, &mut at);
                let cell: Vec<i64> = at.iter().map(|a| a / side).collect();
                (cell, at, i as usize)
            })
            .collect();
        items.sort();
        items.into_iter().map(|(_, _, i)| i).collect()
    }

    #[test]
    fn ndcell_is_the_cell_order_and_decodes_back() {
        for (block, side) in [
            (vec![10i64], 3u8),
            (vec![4, 6], 2),
            (vec![5, 7], 3),
            (vec![3, 4, 5], 2),
            (vec![2, 3, 2, 5], 2),
            (vec![6, 6], 6),
            (vec![4, 9], 5),
        ] {
            for typesize in [1usize, 2, 8] {
                let nitems: i64 = block.iter().product();
                let len = nitems as usize * typesize;
                let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 3) as u8).collect();
                let mut enc = vec![0u8; len];
                encode(Kind::Cell, &block, side, typesize, &src, &mut enc).unwrap();
                let want: Vec<u8> = naive_cell_order(&block, i64::from(side))
                    .into_iter()
                    .flat_map(|i| src[i * typesize..(i + 1) * typesize].to_vec())
                    .collect();
                assert_eq!(enc, want, "{block:?} side {side} typesize {typesize}");
                let mut dec = vec![0u8; len];
                decode(Kind::Cell, &block, side, typesize, &enc, &mut dec).unwrap();
                assert_eq!(dec, src);
            }
        }
    }

    #[test]
    fn ndmean_writes_each_cells_mean() {
        let block = [4i64, 4];
        let src: Vec<u8> = (0..16).flat_map(|i| (i as f64).to_le_bytes()).collect();
        let mut enc = vec![0u8; src.len()];
        encode(Kind::Mean, &block, 2, 8, &src, &mut enc).unwrap();
        let means: Vec<f64> = enc
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Cells of 2x2 in C order: items {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}.
        let want = [2.5, 4.5, 10.5, 12.5]
            .iter()
            .flat_map(|&m| [m; 4])
            .collect::<Vec<_>>();
        assert_eq!(means, want);
        let mut dec = vec![0u8; src.len()];
        decode(Kind::Mean, &block, 2, 8, &enc, &mut dec).unwrap();
        let back: Vec<f64> = dec
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back[0..2], [2.5, 2.5]);
        assert_eq!(back[4..6], [2.5, 2.5]);
        assert_eq!(back[15], 12.5);
    }

    #[test]
    fn bad_geometries_are_errors_not_panics() {
        let src = vec![0u8; 64];
        let mut dst = vec![0u8; 64];
        // (kind, blockshape, meta, typesize, encodes, decodes), as the reference.
        for (kind, block, meta, typesize, enc_ok, dec_ok) in [
            (Kind::Cell, vec![8i64], 0u8, 8usize, false, false),
            (Kind::Cell, vec![4, 4], 2, 8, false, false),
            (Kind::Cell, vec![8], 9, 8, false, false),
            (Kind::Cell, vec![], 2, 8, false, false),
            (Kind::Cell, vec![-8], 2, 8, false, false),
            (Kind::Mean, vec![8], 200, 8, false, false),
            (Kind::Mean, vec![16], 4, 4, true, true),
            (Kind::Mean, vec![64], 4, 1, false, true),
            // NDMEAN's corner quirk: cells overlap, so the block's end is
            // left uncovered. The reference encodes such a block and then
            // cannot decode it; here both refuse.
            (Kind::Mean, vec![1, 8], 4, 8, false, false),
        ] {
            let e = encode(kind, &block, meta, typesize, &src, &mut dst);
            let d = decode(kind, &block, meta, typesize, &src, &mut dst);
            let case = format!("{kind:?} {block:?} {meta} {typesize}");
            assert_eq!((e.is_ok(), d.is_ok()), (enc_ok, dec_ok), "{case}");
        }
        // The geometry the ndarray_edit fuzz body found: 15x50 blocks with
        // cells of 49 overlap the same way, and an array wrote chunks of them
        // that it could not read back.
        let src = vec![0u8; 15 * 50 * 8];
        let mut dst = src.clone();
        assert!(encode(Kind::Mean, &[15, 50], 49, 8, &src, &mut dst).is_err());
        assert!(encode(Kind::Mean, &[15, 50], 50, 8, &src, &mut dst).is_ok());
    }
}
