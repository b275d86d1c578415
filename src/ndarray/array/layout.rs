//! The geometry of a b2nd array: shapes, padded shapes, item counts and strides,
//! exactly as the reference's `b2nd_array_t` caches them, plus the region
//! arithmetic (which chunks and blocks a region touches) the slice code needs.
//!
//! Storage layout recap: the array is cut into chunks of `chunkshape` items (edge
//! chunks padded to the full chunk); each chunk is stored as its blocks in C
//! order, every block padded to `blockshape` inside an `extchunkshape` chunk;
//! chunks follow each other in C order in the super-chunk.

use crate::Result;

/// Most dimensions an array may have (the reference `B2ND_MAX_DIM`).
pub(crate) const MAX_DIM: usize = 16;

/// Geometry of an array. All vectors have `ndim` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i32>,
    pub blockshape: Vec<i32>,
    /// `shape` rounded up to whole chunks.
    pub extshape: Vec<i64>,
    /// `chunkshape` rounded up to whole blocks.
    pub extchunkshape: Vec<i64>,
    pub nitems: i64,
    pub chunknitems: i64,
    pub extnitems: i64,
    pub blocknitems: i64,
    pub extchunknitems: i64,
}

fn mul(a: i64, b: i64, what: &str) -> Result<i64> {
    a.checked_mul(b)
        .filter(|v| *v >= 0)
        .ok_or_else(|| crate::err!(InvalidParam, "{what} overflows"))
}

impl Layout {
    /// Validates and computes a geometry. Rejects what the reference rejects
    /// (negative sizes, blockshape zero with non-zero chunkshape, overflowing
    /// products) and, as the reference does for stored metadata, a non-empty
    /// dimension whose chunk or block extent is zero.
    pub fn new(shape: &[i64], chunkshape: &[i32], blockshape: &[i32]) -> Result<Layout> {
        let ndim = shape.len();
        if ndim > MAX_DIM {
            crate::bail!(InvalidParam, "ndim {ndim} is larger than {MAX_DIM}");
        }
        if chunkshape.len() != ndim || blockshape.len() != ndim {
            crate::bail!(
                InvalidParam,
                "shape, chunkshape and blockshape must have the same length ({}, {}, {})",
                ndim,
                chunkshape.len(),
                blockshape.len()
            );
        }
        let mut extshape = Vec::with_capacity(ndim);
        let mut extchunkshape = Vec::with_capacity(ndim);
        let (mut nitems, mut extnitems, mut chunknitems) = (1i64, 1i64, 1i64);
        let (mut blocknitems, mut extchunknitems) = (1i64, 1i64);
        for i in 0..ndim {
            let (s, c, b) = (shape[i], chunkshape[i] as i64, blockshape[i] as i64);
            if s < 0 {
                crate::bail!(InvalidParam, "shape[{i}] cannot be negative ({s})");
            }
            if c < 0 || b < 0 {
                crate::bail!(
                    InvalidParam,
                    "chunkshape[{i}] and blockshape[{i}] cannot be negative"
                );
            }
            if b == 0 && c != 0 {
                crate::bail!(
                    InvalidParam,
                    "blockshape[{i}] cannot be zero when chunkshape[{i}] is not"
                );
            }
            if s != 0 && c == 0 {
                crate::bail!(
                    InvalidParam,
                    "shape[{i}] is {s} but chunkshape[{i}] is zero"
                );
            }
            let (ext, extc) = if c == 0 {
                (0, 0)
            } else {
                let ext = if s % c == 0 {
                    s
                } else {
                    s.checked_add(c - s % c).ok_or_else(|| {
                        crate::err!(
                            InvalidParam,
                            "shape[{i}] is too large to round up to chunkshape"
                        )
                    })?
                };
                (ext, if c % b == 0 { c } else { c + b - c % b })
            };
            extshape.push(ext);
            extchunkshape.push(extc);
            nitems = mul(nitems, s, "shape product")?;
            extnitems = mul(extnitems, ext, "padded shape product")?;
            chunknitems = mul(chunknitems, c, "chunkshape product")?;
            blocknitems = mul(blocknitems, b, "blockshape product")?;
            extchunknitems = mul(extchunknitems, extc, "padded chunkshape product")?;
        }
        if chunknitems > i32::MAX as i64 || blocknitems > i32::MAX as i64 {
            crate::bail!(
                InvalidParam,
                "chunkshape or blockshape product overflows 32 bits"
            );
        }
        Ok(Layout {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            extshape,
            extchunkshape,
            nitems,
            chunknitems,
            extnitems,
            blocknitems,
            extchunknitems,
        })
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of chunks along each dimension.
    pub fn chunks_per_dim(&self) -> Vec<i64> {
        (0..self.ndim())
            .map(|i| {
                if self.chunkshape[i] == 0 {
                    0
                } else {
                    self.extshape[i] / self.chunkshape[i] as i64
                }
            })
            .collect()
    }

    /// Number of blocks along each dimension of a (padded) chunk.
    pub fn blocks_per_dim(&self) -> Vec<i64> {
        (0..self.ndim())
            .map(|i| {
                if self.blockshape[i] == 0 {
                    0
                } else {
                    self.extchunkshape[i] / self.blockshape[i] as i64
                }
            })
            .collect()
    }

    /// Chunks in the super-chunk (the reference `extnitems / chunknitems`).
    pub fn nchunks(&self) -> i64 {
        if self.nitems == 0 || self.chunknitems == 0 {
            0
        } else {
            self.extnitems / self.chunknitems
        }
    }

    /// Blocks in one chunk.
    pub fn nblocks(&self) -> i64 {
        if self.blocknitems == 0 {
            0
        } else {
            self.extchunknitems / self.blocknitems
        }
    }

    /// C-order strides (in items) of a dense array of this shape.
    pub fn item_array_strides(&self) -> Vec<i64> {
        c_strides(&self.shape)
    }
    /// C-order strides (in items) inside a padded chunk.
    pub fn item_extchunk_strides(&self) -> Vec<i64> {
        c_strides(&self.extchunkshape)
    }
    /// C-order strides (in items) inside an unpadded chunk.
    pub fn item_chunk_strides(&self) -> Vec<i64> {
        c_strides(
            &self
                .chunkshape
                .iter()
                .map(|&c| c as i64)
                .collect::<Vec<_>>(),
        )
    }
    /// C-order strides (in items) inside a block.
    pub fn item_block_strides(&self) -> Vec<i64> {
        c_strides(
            &self
                .blockshape
                .iter()
                .map(|&c| c as i64)
                .collect::<Vec<_>>(),
        )
    }
    /// C-order strides (in blocks) of the block grid of a chunk.
    pub fn block_chunk_strides(&self) -> Vec<i64> {
        c_strides(&self.blocks_per_dim())
    }
    /// C-order strides (in chunks) of the chunk grid of the array.
    pub fn chunk_array_strides(&self) -> Vec<i64> {
        c_strides(&self.chunks_per_dim())
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

    /// Linear indices (C order) of the chunks that intersect [start, stop).
    pub fn chunks_in_region(&self, start: &[i64], stop: &[i64]) -> Vec<i64> {
        if self.nchunks() == 0 || start.iter().zip(stop).any(|(a, b)| a >= b) {
            return Vec::new();
        }
        let lo: Vec<i64> = start
            .iter()
            .zip(&self.chunkshape)
            .map(|(&s, &c)| s / c as i64)
            .collect();
        let hi: Vec<i64> = stop
            .iter()
            .zip(&self.chunkshape)
            .map(|(&s, &c)| (s + c as i64 - 1) / c as i64)
            .collect();
        let mut out = Vec::new();
        for_each_index(&lo, &hi, |coords| out.push(self.chunk_index(coords)));
        out
    }
}

/// The reference `BLOSC2_MAX_BUFFERSIZE` (INT_MAX minus the extended header).
pub(crate) const MAX_BUFFERSIZE: i64 = i32::MAX as i64 - 32;

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
