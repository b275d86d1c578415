//! The geometry of a b2nd array: shapes, padded shapes, item counts and strides,
//! exactly as the reference's `b2nd_array_t` caches them, plus the region
//! arithmetic (which chunks and blocks a region touches) the slice code needs.
//!
//! Storage layout recap: the array is cut into chunks of `chunkshape` items (edge
//! chunks padded to the full chunk); each chunk is stored as its blocks in C
//! order, every block padded to `blockshape` inside an `extchunkshape` chunk;
//! chunks follow each other in C order in the super-chunk.

use crate::ndarray::geometry::{Geometry, MAX_BUFFERSIZE};
use crate::ndarray::Grid;
use crate::Result;

pub(crate) use crate::ndarray::meta::MAX_DIM;

/// Geometry of an array. All vectors have `ndim` entries.
///
/// Everything here is derived once by [`Geometry`] (the single place the
/// padded shapes, counts and strides are computed); a `Layout` is that
/// geometry without a typesize, in the units the array code works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Items per dimension of the array.
    pub shape: Vec<i64>,
    /// Items per dimension of a chunk.
    pub chunkshape: Vec<i32>,
    /// Items per dimension of a block.
    pub blockshape: Vec<i32>,
    /// `shape` rounded up to whole chunks.
    pub extshape: Vec<i64>,
    /// `chunkshape` rounded up to whole blocks.
    pub extchunkshape: Vec<i64>,
    /// Items in the array: the product of `shape`.
    pub nitems: i64,
    /// Items in an unpadded chunk: the product of `chunkshape`.
    pub chunknitems: i64,
    /// Items in the padded array: the product of `extshape`.
    pub extnitems: i64,
    /// Items in a block: the product of `blockshape`.
    pub blocknitems: i64,
    /// Items in a padded chunk: the product of `extchunkshape`.
    pub extchunknitems: i64,
    /// The full derivation (with a typesize of 1).
    geo: Geometry,
}

impl Layout {
    /// Validates and computes a geometry with [`Geometry::new`]: it rejects
    /// what the reference rejects (negative sizes, blockshape zero with
    /// non-zero chunkshape, a non-empty dimension with a zero chunkshape,
    /// overflowing products, a padded chunk of more items than a chunk can
    /// hold bytes). Byte limits that depend on the typesize are left to
    /// [`Layout::chunk_nbytes`] and the callers.
    pub fn new(shape: &[i64], chunkshape: &[i32], blockshape: &[i32]) -> Result<Layout> {
        let geo = Geometry::new(shape, chunkshape, blockshape, 1)?;
        Ok(Layout {
            shape: geo.shape.clone(),
            chunkshape: geo.chunkshape.clone(),
            blockshape: geo.blockshape.clone(),
            extshape: geo.extshape.clone(),
            extchunkshape: geo.extchunkshape.clone(),
            nitems: geo.nitems,
            chunknitems: geo.chunknitems as i64,
            extnitems: geo.extnitems,
            blocknitems: geo.blocknitems as i64,
            extchunknitems: geo.extchunknitems,
            geo,
        })
    }

    /// The full derived geometry, including the stride tables exactly as
    /// the reference's `b2nd_array_t` holds them.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of chunks along each dimension.
    pub fn chunks_per_dim(&self) -> Vec<i64> {
        self.geo.chunks_in_array.clone()
    }

    /// Number of blocks along each dimension of a (padded) chunk.
    pub fn blocks_per_dim(&self) -> Vec<i64> {
        self.geo.blocks_in_chunk.clone()
    }

    /// Chunks in the super-chunk.
    pub fn nchunks(&self) -> i64 {
        self.geo.nchunks
    }

    /// Blocks in one chunk.
    pub fn nblocks(&self) -> i64 {
        self.geo.nblocks
    }

    /// C-order strides (in items) of a dense array of this shape.
    pub fn item_array_strides(&self) -> Vec<i64> {
        self.geo.item_array_strides.clone()
    }
    /// C-order strides (in items) inside a padded chunk.
    pub fn item_extchunk_strides(&self) -> Vec<i64> {
        self.geo.item_extchunk_strides.clone()
    }
    /// C-order strides (in items) inside an unpadded chunk.
    pub fn item_chunk_strides(&self) -> Vec<i64> {
        self.geo.item_chunk_strides.clone()
    }
    /// C-order strides (in items) inside a block.
    pub fn item_block_strides(&self) -> Vec<i64> {
        self.geo.item_block_strides.clone()
    }
    /// C-order strides (in blocks) of the block grid of a chunk.
    pub fn block_chunk_strides(&self) -> Vec<i64> {
        self.geo.block_chunk_strides.clone()
    }
    /// C-order strides (in chunks) of the chunk grid of the array (not the
    /// reference's `chunk_array_strides` field: see [`Geometry`]).
    pub fn chunk_array_strides(&self) -> Vec<i64> {
        self.geo.chunk_grid_strides.clone()
    }

    /// Bytes of one padded chunk for a given typesize, bounded like the
    /// reference (`BLOSC2_MAX_BUFFERSIZE`).
    pub fn chunk_nbytes(&self, typesize: i32) -> Result<i32> {
        let n = self
            .extchunknitems
            .checked_mul(typesize as i64)
            .ok_or_else(|| crate::err!(InvalidParam, "chunk size overflows"))?;
        if n > MAX_BUFFERSIZE {
            crate::bail!(
                MaxBufsizeExceeded,
                "chunk size {n} exceeds the maximum of {MAX_BUFFERSIZE}"
            );
        }
        Ok(n as i32)
    }

    /// The chunk-grid coordinates of chunk `n` (C order).
    pub fn chunk_coords(&self, n: i64) -> Vec<i64> {
        unflatten(n, &self.chunks_per_dim())
    }

    /// The linear chunk index of chunk-grid coordinates.
    pub fn chunk_index(&self, coords: &[i64]) -> i64 {
        flatten(coords, &self.chunks_per_dim())
    }

    /// Array-space [start, stop) of the valid (unpadded) part of a chunk.
    pub fn chunk_bounds(&self, coords: &[i64]) -> (Vec<i64>, Vec<i64>) {
        let start: Vec<i64> = coords
            .iter()
            .zip(&self.chunkshape)
            .map(|(&k, &c)| k * c as i64)
            .collect();
        let stop = start
            .iter()
            .zip(&self.chunkshape)
            .zip(&self.shape)
            .map(|((&s, &c), &n)| (s + c as i64).min(n))
            .collect();
        (start, stop)
    }

    /// Linear indices (C order) of the chunks that intersect [start, stop);
    /// none for a region outside the array.
    pub fn chunks_in_region(&self, start: &[i64], stop: &[i64]) -> Vec<i64> {
        let grid = self.chunk_grid();
        let mut out = Vec::new();
        if let Ok(mut walk) = grid.walk(start, stop) {
            while let Some(cell) = walk.next() {
                out.push(cell.index());
            }
        }
        out
    }

    /// The grid of chunks over the array (cells of `chunkshape` clipped to
    /// `shape`).
    pub(crate) fn chunk_grid(&self) -> Grid {
        self.geo.chunk_grid()
    }

    /// The grid of blocks of a chunk whose part inside the array has shape
    /// `valid` (numbered over the padded chunk).
    pub(crate) fn block_grid(&self, valid: &[i64]) -> Grid {
        let cell: Vec<i64> = self.blockshape.iter().map(|&b| b as i64).collect();
        Grid::from_parts(valid, &cell, &self.geo.blocks_in_chunk, self.geo.nblocks)
    }
}

/// C-order strides of a shape (stride of the last dimension is 1).
pub(crate) fn c_strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Coordinates of linear index `n` in a C-order grid of `dims`.
pub(crate) fn unflatten(mut n: i64, dims: &[i64]) -> Vec<i64> {
    let mut c = vec![0i64; dims.len()];
    for i in (0..dims.len()).rev() {
        if dims[i] > 0 {
            c[i] = n % dims[i];
            n /= dims[i];
        }
    }
    c
}

/// Linear index of coordinates in a C-order grid of `dims`.
pub(crate) fn flatten(coords: &[i64], dims: &[i64]) -> i64 {
    coords
        .iter()
        .zip(dims)
        .fold(0i64, |acc, (&c, &d)| acc * d + c)
}

/// Calls `f` for every index vector in the box [lo, hi), C order. A 0-d box
/// has exactly one (empty) index.
pub(crate) fn for_each_index(lo: &[i64], hi: &[i64], mut f: impl FnMut(&[i64])) {
    if lo.iter().zip(hi).any(|(a, b)| a >= b) {
        return;
    }
    let mut idx = lo.to_vec();
    loop {
        f(&idx);
        let mut d = idx.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < hi[d] {
                break;
            }
            idx[d] = lo[d];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_matches_reference_rules() {
        let l = Layout::new(&[10, 7], &[4, 3], &[3, 2]).unwrap();
        assert_eq!(l.extshape, vec![12, 9]);
        assert_eq!(l.extchunkshape, vec![6, 4]);
        assert_eq!(l.nitems, 70);
        assert_eq!(l.chunknitems, 12);
        assert_eq!(l.extchunknitems, 24);
        assert_eq!(l.blocknitems, 6);
        assert_eq!(l.nchunks(), 9);
        assert_eq!(l.nblocks(), 4);
        assert_eq!(l.chunk_array_strides(), vec![3, 1]);
        assert_eq!(l.block_chunk_strides(), vec![2, 1]);
        assert_eq!(l.chunk_coords(5), vec![1, 2]);
        assert_eq!(l.chunk_bounds(&[2, 2]), (vec![8, 6], vec![10, 7]));
        assert_eq!(l.chunks_in_region(&[3, 2], &[5, 4]), vec![0, 1, 3, 4]);
    }

    #[test]
    fn zero_dims_and_scalars() {
        let l = Layout::new(&[], &[], &[]).unwrap();
        assert_eq!((l.nitems, l.nchunks(), l.extchunknitems), (1, 1, 1));
        assert_eq!(l.chunks_in_region(&[], &[]), vec![0]);
        let z = Layout::new(&[0, 5], &[0, 5], &[0, 5]).unwrap();
        assert_eq!((z.nitems, z.nchunks()), (0, 0));
        let z = Layout::new(&[4, 0], &[2, 3], &[1, 3]).unwrap();
        assert_eq!((z.nitems, z.nchunks()), (0, 0));
    }

    #[test]
    fn bad_geometry_is_rejected() {
        for (s, c, b) in [
            (vec![-1i64], vec![1i32], vec![1i32]),
            (vec![3], vec![0], vec![0]),
            (vec![3], vec![2], vec![0]),
            (vec![3], vec![-2], vec![1]),
            (vec![i64::MAX], vec![2], vec![1]),
            (vec![1 << 40, 1 << 40], vec![1, 1], vec![1, 1]),
        ] {
            assert_eq!(Layout::new(&s, &c, &b).unwrap_err().code(), -12, "{s:?}");
        }
        assert!(Layout::new(&[1; 17], &[1; 17], &[1; 17]).is_err());
        assert!(Layout::new(&[1; 16], &[1; 16], &[1; 16]).is_ok());
        let big = Layout::new(&[1 << 20, 1 << 20], &[1 << 15, 1 << 15], &[16, 16]).unwrap();
        assert_eq!(big.chunk_nbytes(4).unwrap_err().code(), -35);
    }
}
