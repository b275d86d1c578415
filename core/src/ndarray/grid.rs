//! Which cells of a regular grid a box-shaped region touches.
//!
//! The same question is asked at two levels: which chunks of an array a
//! slice `[start, stop)` covers, and which blocks of one chunk the part of
//! the slice inside that chunk covers. Both are a [`Grid`]: an `extent` (the
//! valid coordinates), a `cell` shape, and the number of cells per dimension
//! used to number cells in C order. The cell count may exceed what the
//! extent needs: blocks are numbered over the padded chunk even when the
//! chunk is clipped by the array's edge.
//!
//! [`GridWalker`] visits the touched cells in C order and reports, for each,
//! its linear number, its coordinates and the intersection with the region,
//! both in cell-local coordinates and relative to the region's start. It
//! keeps all state in fixed arrays, so stepping never allocates.
//!
//! Reading a slice `[start, stop)` of a b2nd array into a buffer of the
//! slice's shape goes like this: walk `geometry.chunk_grid()` over the slice;
//! for each chunk cell `ch`, walk `geometry.block_grid(ch.coords())` over
//! `[ch.start(), ch.stop())`; block `b` sits in the decompressed chunk at
//! item `b.index() * blocknitems` as a C-order array of `blockshape`, so
//! `copy_nd(typesize, block, blockshape, b.start(), b.stop(), buffer,
//! slice_shape, ch.offset() + b.offset())` moves its part. Writing is the
//! same copy the other way round. The block mask of a chunk
//! ([`Grid::mask`] on the block grid) says which blocks to decompress.

use super::meta::MAX_DIM;
use crate::Result;

/// A regular grid of cells over an N-dimensional extent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    ndim: usize,
    extent: [i64; MAX_DIM],
    cell: [i64; MAX_DIM],
    ncells: [i64; MAX_DIM],
    strides: [i64; MAX_DIM],
    total: i64,
}

impl Grid {
    /// A grid of `ncells[i]` cells of size `cell[i]` over `[0, extent[i])`.
    ///
    /// Rejected (`InvalidParam`): lengths that differ or exceed 16, negative
    /// values, a nonempty extent with a zero cell, cells that do not cover
    /// the extent, or a cell count overflowing int64.
    pub fn new(extent: &[i64], cell: &[i64], ncells: &[i64]) -> Result<Grid> {
        let ndim = extent.len();
        if ndim > MAX_DIM || cell.len() != ndim || ncells.len() != ndim {
            crate::bail!(
                InvalidParam,
                "grid dimensions: extent {}, cell {}, ncells {} (max {MAX_DIM})",
                ndim,
                cell.len(),
                ncells.len()
            );
        }
        let mut total = 1i64;
        for i in 0..ndim {
            let (e, c, n) = (extent[i], cell[i], ncells[i]);
            if e < 0 || c < 0 || n < 0 {
                crate::bail!(
                    InvalidParam,
                    "grid dimension {i}: negative extent {e}, cell {c} or count {n}"
                );
            }
            if e > 0 && (c == 0 || c.checked_mul(n).is_some_and(|covered| covered < e)) {
                crate::bail!(
                    InvalidParam,
                    "grid dimension {i}: {n} cells of {c} do not cover {e}"
                );
            }
            total = total
                .checked_mul(n)
                .ok_or_else(|| crate::err!(InvalidParam, "grid cell count overflows int64"))?;
        }
        Ok(Grid::from_parts(extent, cell, ncells, total))
    }

    /// Builds a grid from values already validated (by [`Grid::new`] or by
    /// [`super::Geometry::new`]).
    pub(crate) fn from_parts(extent: &[i64], cell: &[i64], ncells: &[i64], total: i64) -> Grid {
        let ndim = extent.len();
        let mut g = Grid {
            ndim,
            extent: [0; MAX_DIM],
            cell: [0; MAX_DIM],
            ncells: [0; MAX_DIM],
            strides: [0; MAX_DIM],
            total,
        };
        g.extent[..ndim].copy_from_slice(extent);
        g.cell[..ndim].copy_from_slice(cell);
        g.ncells[..ndim].copy_from_slice(ncells);
        let mut stride = 1i64;
        for i in (0..ndim).rev() {
            g.strides[i] = stride;
            // Cannot overflow: the full product (total) fitted, or a later
            // count is 0 and the stride collapses to 0.
            stride = stride.wrapping_mul(ncells[i]);
        }
        g
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// Valid coordinates per dimension.
    pub fn extent(&self) -> &[i64] {
        &self.extent[..self.ndim]
    }

    /// Cell shape.
    pub fn cell_shape(&self) -> &[i64] {
        &self.cell[..self.ndim]
    }

    /// Cells per dimension.
    pub fn cells_per_dim(&self) -> &[i64] {
        &self.ncells[..self.ndim]
    }

    /// Total number of cells (the length of a mask).
    pub fn ncells(&self) -> i64 {
        self.total
    }

    /// Validates a region and starts a walk over the cells it touches.
    ///
    /// Rejected (`InvalidParam`): wrong lengths, `start < 0`, `start > stop`
    /// or `stop > extent`.
    pub fn walk(&self, start: &[i64], stop: &[i64]) -> Result<GridWalker<'_>> {
        self.check_region(start, stop)?;
        let n = self.ndim;
        let mut w = GridWalker {
            grid: self,
            start: [0; MAX_DIM],
            stop: [0; MAX_DIM],
            first: [0; MAX_DIM],
            last: [0; MAX_DIM],
            cell: Cell {
                ndim: n,
                index: 0,
                coords: [0; MAX_DIM],
                origin: [0; MAX_DIM],
                valid: [0; MAX_DIM],
                start: [0; MAX_DIM],
                stop: [0; MAX_DIM],
                offset: [0; MAX_DIM],
            },
            state: WalkState::Fresh,
        };
        for i in 0..n {
            w.start[i] = start[i];
            w.stop[i] = stop[i];
            if start[i] == stop[i] {
                w.state = WalkState::Done;
            } else {
                // Nonempty, so the cell size is positive (Grid::new).
                w.first[i] = start[i] / self.cell[i];
                w.last[i] = (stop[i] - 1) / self.cell[i];
            }
        }
        Ok(w)
    }

    /// One flag per cell (C order over the whole grid): true when the cell
    /// intersects `[start, stop)`.
    pub fn mask(&self, start: &[i64], stop: &[i64]) -> Result<Vec<bool>> {
        let len = usize::try_from(self.total).map_err(|_| {
            crate::err!(
                InvalidParam,
                "grid of {} cells is too large for a mask",
                self.total
            )
        })?;
        // A mask is meant for block grids (at most a few million cells), but
        // a huge chunk grid must give an error, not abort on allocation.
        let mut mask = Vec::new();
        mask.try_reserve_exact(len)
            .map_err(|_| crate::err!(MemoryAlloc, "cannot allocate a mask of {len} cells"))?;
        mask.resize(len, false);
        let mut walk = self.walk(start, stop)?;
        while let Some(cell) = walk.next() {
            // index < total by construction
            mask[cell.index as usize] = true;
        }
        Ok(mask)
    }

    fn check_region(&self, start: &[i64], stop: &[i64]) -> Result<()> {
        if start.len() != self.ndim || stop.len() != self.ndim {
            crate::bail!(
                InvalidParam,
                "region has {} / {} coordinates for {} dimensions",
                start.len(),
                stop.len(),
                self.ndim
            );
        }
        for i in 0..self.ndim {
            if start[i] < 0 || start[i] > stop[i] || stop[i] > self.extent[i] {
                crate::bail!(
                    InvalidParam,
                    "region [{}, {}) is not inside [0, {}) in dimension {i}",
                    start[i],
                    stop[i],
                    self.extent[i]
                );
            }
        }
        Ok(())
    }
}

/// The blocks of a chunk that a chunk-local region needs (true = decode it),
/// for a block grid from [`super::Geometry::block_grid`]. The reference's
/// `maskout` is the negation of this.
pub fn block_mask(block_grid: &Grid, start: &[i64], stop: &[i64]) -> Result<Vec<bool>> {
    block_grid.mask(start, stop)
}

/// One touched cell and its intersection with the region.
#[derive(Debug, Clone)]
pub struct Cell {
    ndim: usize,
    index: i64,
    coords: [i64; MAX_DIM],
    origin: [i64; MAX_DIM],
    valid: [i64; MAX_DIM],
    start: [i64; MAX_DIM],
    stop: [i64; MAX_DIM],
    offset: [i64; MAX_DIM],
}

impl Cell {
    /// Linear number of the cell, C order over the whole grid.
    pub fn index(&self) -> i64 {
        self.index
    }

    /// Cell coordinates in the grid.
    pub fn coords(&self) -> &[i64] {
        &self.coords[..self.ndim]
    }

    /// Position of the cell's first item in the grid's extent.
    pub fn origin(&self) -> &[i64] {
        &self.origin[..self.ndim]
    }

    /// Shape of the part of the cell inside the extent.
    pub fn valid_shape(&self) -> &[i64] {
        &self.valid[..self.ndim]
    }

    /// Start of the intersection, relative to the cell's origin.
    pub fn start(&self) -> &[i64] {
        &self.start[..self.ndim]
    }

    /// End (exclusive) of the intersection, relative to the cell's origin.
    pub fn stop(&self) -> &[i64] {
        &self.stop[..self.ndim]
    }

    /// Start of the intersection relative to the region's start (where it
    /// lands in a buffer holding the region).
    pub fn offset(&self) -> &[i64] {
        &self.offset[..self.ndim]
    }

    /// True when the region covers the whole valid part of the cell.
    pub fn is_full(&self) -> bool {
        (0..self.ndim).all(|i| self.start[i] == 0 && self.stop[i] == self.valid[i])
    }

    /// Number of items in the intersection.
    pub fn nitems(&self) -> i64 {
        (0..self.ndim)
            .map(|i| self.stop[i] - self.start[i])
            .product()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WalkState {
    Fresh,
    Running,
    Done,
}

/// A C-order walk over the cells a region touches. Not an [`Iterator`]:
/// each step lends a reference to the walker's own [`Cell`], so nothing is
/// allocated per cell.
#[derive(Debug, Clone)]
pub struct GridWalker<'g> {
    grid: &'g Grid,
    start: [i64; MAX_DIM],
    stop: [i64; MAX_DIM],
    first: [i64; MAX_DIM],
    last: [i64; MAX_DIM],
    cell: Cell,
    state: WalkState,
}

impl<'g> GridWalker<'g> {
    /// The next touched cell, or None when the walk is over.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&Cell> {
        let n = self.grid.ndim;
        match self.state {
            WalkState::Done => return None,
            WalkState::Fresh => {
                self.state = WalkState::Running;
                let mut index = 0;
                for i in 0..n {
                    self.set_dim(i, self.first[i]);
                    index += self.first[i] * self.grid.strides[i];
                }
                self.cell.index = index;
                return Some(&self.cell);
            }
            WalkState::Running => {}
        }
        // Odometer step: bump the innermost dimension that has room, rewind
        // the ones after it.
        let mut i = n;
        while i > 0 {
            i -= 1;
            let c = self.cell.coords[i];
            if c < self.last[i] {
                self.set_dim(i, c + 1);
                self.cell.index += self.grid.strides[i];
                for j in i + 1..n {
                    let span = self.last[j] - self.first[j];
                    self.cell.index -= span * self.grid.strides[j];
                    self.set_dim(j, self.first[j]);
                }
                return Some(&self.cell);
            }
        }
        self.state = WalkState::Done;
        None
    }

    /// Number of cells the walk visits in total.
    pub fn count_total(&self) -> i64 {
        if (0..self.grid.ndim).any(|i| self.start[i] == self.stop[i]) {
            return 0;
        }
        (0..self.grid.ndim)
            .map(|i| self.last[i] - self.first[i] + 1)
            .product()
    }

    fn set_dim(&mut self, i: usize, c: i64) {
        let g = self.grid;
        let origin = c * g.cell[i];
        let end = origin.saturating_add(g.cell[i]);
        let lo = self.start[i].max(origin);
        let hi = self.stop[i].min(end);
        let cell = &mut self.cell;
        cell.coords[i] = c;
        cell.origin[i] = origin;
        cell.valid[i] = end.min(g.extent[i]) - origin;
        cell.start[i] = lo - origin;
        cell.stop[i] = hi - origin;
        cell.offset[i] = lo - self.start[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_a_2d_region_in_c_order() {
        // 10 x 7 extent, cells 4 x 3 -> 3 x 3 cells.
        let g = Grid::new(&[10, 7], &[4, 3], &[3, 3]).unwrap();
        let mut w = g.walk(&[3, 2], &[9, 4]).unwrap();
        assert_eq!(w.count_total(), 6);
        let mut seen = Vec::new();
        while let Some(c) = w.next() {
            seen.push((
                c.index(),
                c.coords().to_vec(),
                c.start().to_vec(),
                c.stop().to_vec(),
                c.offset().to_vec(),
            ));
        }
        // Rows 3..9 touch row cells 0 (3..4), 1 (4..8), 2 (8..9); columns
        // 2..4 touch column cells 0 (2..3) and 1 (3..4).
        assert_eq!(
            seen,
            vec![
                (0, vec![0, 0], vec![3, 2], vec![4, 3], vec![0, 0]),
                (1, vec![0, 1], vec![3, 0], vec![4, 1], vec![0, 1]),
                (3, vec![1, 0], vec![0, 2], vec![4, 3], vec![1, 0]),
                (4, vec![1, 1], vec![0, 0], vec![4, 1], vec![1, 1]),
                (6, vec![2, 0], vec![0, 2], vec![1, 3], vec![5, 0]),
                (7, vec![2, 1], vec![0, 0], vec![1, 1], vec![5, 1]),
            ]
        );
    }

    #[test]
    fn full_cells_and_edge_cells() {
        let g = Grid::new(&[10], &[4], &[3]).unwrap();
        let mut w = g.walk(&[0], &[10]).unwrap();
        let mut full = Vec::new();
        while let Some(c) = w.next() {
            full.push((c.valid_shape()[0], c.is_full(), c.nitems()));
        }
        assert_eq!(full, vec![(4, true, 4), (4, true, 4), (2, true, 2)]);
    }

    #[test]
    fn zero_dimensional_and_empty_regions() {
        let g = Grid::new(&[], &[], &[]).unwrap();
        let mut w = g.walk(&[], &[]).unwrap();
        assert_eq!(w.count_total(), 1);
        assert_eq!(w.next().map(|c| c.index()), Some(0));
        assert!(w.next().is_none());
        assert!(w.next().is_none());
        let g = Grid::new(&[5, 5], &[2, 2], &[3, 3]).unwrap();
        let mut w = g.walk(&[1, 3], &[4, 3]).unwrap();
        assert_eq!(w.count_total(), 0);
        assert!(w.next().is_none());
        assert_eq!(g.mask(&[1, 3], &[4, 3]).unwrap(), vec![false; 9]);
        // Placeholder dimension: empty extent, zero cell.
        let g = Grid::new(&[0, 4], &[0, 2], &[0, 2]).unwrap();
        assert!(g.walk(&[0, 0], &[0, 4]).unwrap().next().is_none());
        assert!(g.mask(&[0, 0], &[0, 4]).unwrap().is_empty());
    }

    #[test]
    fn mask_over_padded_cell_count() {
        // A chunk of 5 clipped to 3 valid items; blocks of 2 numbered over 3 blocks.
        let g = Grid::new(&[3], &[2], &[3]).unwrap();
        assert_eq!(block_mask(&g, &[1], &[3]).unwrap(), vec![true, true, false]);
        assert_eq!(
            block_mask(&g, &[2], &[3]).unwrap(),
            vec![false, true, false]
        );
    }

    #[test]
    fn rejections() {
        let code = |r: Result<Grid>| r.unwrap_err().code();
        assert_eq!(code(Grid::new(&[4], &[2], &[1])), -12);
        assert_eq!(code(Grid::new(&[4], &[0], &[4])), -12);
        assert_eq!(code(Grid::new(&[-1], &[1], &[1])), -12);
        assert_eq!(code(Grid::new(&[4, 4], &[2], &[2])), -12);
        assert_eq!(code(Grid::new(&[1; 17], &[1; 17], &[1; 17])), -12);
        assert_eq!(code(Grid::new(&[1, 1], &[1, 1], &[i64::MAX, 2])), -12);
        let g = Grid::new(&[4, 4], &[2, 2], &[2, 2]).unwrap();
        assert_eq!(g.walk(&[0, 0], &[5, 4]).unwrap_err().code(), -12);
        assert_eq!(g.walk(&[-1, 0], &[2, 4]).unwrap_err().code(), -12);
        assert_eq!(g.walk(&[3, 0], &[2, 4]).unwrap_err().code(), -12);
        assert_eq!(g.walk(&[0], &[2]).unwrap_err().code(), -12);
        assert_eq!(g.mask(&[0, 0], &[2]).unwrap_err().code(), -12);
    }
}
