//! The derived geometry of a b2nd array: padded shapes, item counts and the
//! stride tables the reference keeps in `b2nd_array_t`, computed once from
//! `(shape, chunkshape, blockshape, typesize)` and validated so that no later
//! index computation can divide by zero or overflow.
//!
//! Terms: a chunk is padded up to `extchunkshape` (a whole number of blocks),
//! the array up to `extshape` (a whole number of chunks). A dimension with
//! `chunkshape == 0` is only allowed when its `shape` is 0 too (an empty
//! placeholder, as the reference allows); its padded sizes are then 0.

use super::grid::Grid;
use super::meta::MAX_DIM;
use crate::Result;

/// Largest chunk, in bytes, a super-chunk can hold: `INT32_MAX` minus the
/// 32-byte extended chunk header (the reference's `BLOSC2_MAX_BUFFERSIZE`).
pub(crate) const MAX_BUFFERSIZE: i64 = i32::MAX as i64 - 32;

/// Copies `values` into a fixed 16-slot array, filling the unused slots with
/// `fill` (the layout of the reference's `b2nd_array_t` fields, where unused
/// shape slots hold 1).
pub fn padded<T: Copy>(values: &[T], fill: T) -> [T; MAX_DIM] {
    let mut out = [fill; MAX_DIM];
    let n = values.len().min(MAX_DIM);
    out[..n].copy_from_slice(&values[..n]);
    out
}

/// Everything the reference's `b2nd_array_t` derives from the shapes, plus
/// the chunk/block grid sizes the slicing code needs. All vectors have
/// `ndim` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    /// Number of dimensions (0..=16).
    pub ndim: usize,
    /// Item size in bytes.
    pub typesize: i32,
    /// Items per dimension of the array.
    pub shape: Vec<i64>,
    /// Items per dimension of a chunk.
    pub chunkshape: Vec<i32>,
    /// Items per dimension of a block.
    pub blockshape: Vec<i32>,
    /// `shape` rounded up to a multiple of `chunkshape`.
    pub extshape: Vec<i64>,
    /// `chunkshape` rounded up to a multiple of `blockshape`.
    pub extchunkshape: Vec<i64>,
    /// Items in the array: the product of `shape`.
    pub nitems: i64,
    /// Items in an unpadded chunk: the product of `chunkshape`.
    pub chunknitems: i32,
    /// Items in the padded array: the product of `extshape`.
    pub extnitems: i64,
    /// Items in a block: the product of `blockshape`.
    pub blocknitems: i32,
    /// Items in a padded chunk: the product of `extchunkshape`.
    pub extchunknitems: i64,
    /// C-order item strides of the array (`shape`).
    pub item_array_strides: Vec<i64>,
    /// C-order item strides of an unpadded chunk (`chunkshape`).
    pub item_chunk_strides: Vec<i64>,
    /// C-order item strides of a padded chunk (`extchunkshape`).
    pub item_extchunk_strides: Vec<i64>,
    /// C-order item strides inside a block (`blockshape`).
    pub item_block_strides: Vec<i64>,
    /// C-order strides of the block grid of a padded chunk.
    pub block_chunk_strides: Vec<i64>,
    /// The value the reference stores in `b2nd_array_t.chunk_array_strides`:
    /// it multiplies `extshape * chunkshape` where the chunk grid would
    /// divide, so it is NOT the chunk-grid stride. Kept only so the C struct
    /// can be filled identically; use [`Geometry::chunk_grid_strides`].
    pub chunk_array_strides: Vec<i64>,
    /// Chunks per dimension: `extshape / chunkshape` (0 for empty placeholder
    /// dimensions).
    pub chunks_in_array: Vec<i64>,
    /// C-order strides of the chunk grid (linear chunk number = dot product).
    pub chunk_grid_strides: Vec<i64>,
    /// Blocks per dimension of a padded chunk: `extchunkshape / blockshape`.
    pub blocks_in_chunk: Vec<i64>,
    /// Number of chunks in the array.
    pub nchunks: i64,
    /// Number of blocks in a (padded) chunk.
    pub nblocks: i64,
    /// Bytes of a decompressed chunk: `extchunknitems * typesize`.
    pub chunk_nbytes: i32,
    /// Bytes of a block: `blocknitems * typesize`.
    pub block_nbytes: i32,
}

fn mul_i64(a: i64, b: i64, what: &str) -> Result<i64> {
    a.checked_mul(b)
        .ok_or_else(|| crate::err!(InvalidParam, "{what} overflows int64"))
}

/// C-order strides of `dims`, all checked; the stride of a dimension is 0
/// when any dimension after it is a placeholder, as the reference does.
fn strides_of(dims: &[i64], live: &[bool], what: &str) -> Result<Vec<i64>> {
    let n = dims.len();
    let mut out = vec![1i64; n];
    for i in (0..n.saturating_sub(1)).rev() {
        out[i] = if live[i + 1] {
            mul_i64(out[i + 1], dims[i + 1], what)?
        } else {
            0
        };
    }
    Ok(out)
}

/// The first step of [`Geometry::new`]: the validated shapes, rounded up
/// (the array to whole chunks, a chunk to whole blocks), and the item
/// counts of the array, the padded array and a padded chunk.
struct Extents {
    extshape: Vec<i64>,
    extchunkshape: Vec<i64>,
    nitems: i64,
    extnitems: i64,
    extchunknitems: i64,
}

impl Extents {
    /// Validates the shapes (`InvalidParam`): at most 16 dimensions, equal
    /// lengths, no negative entry, no zero `blockshape` under a nonzero
    /// `chunkshape`, no nonzero `shape` under a zero `chunkshape`, and no
    /// overflowing rounded shape or item count. A blockshape larger than the
    /// chunkshape is accepted, as the reference 3.3.5 does: the chunk is
    /// padded up to one whole block.
    fn new(shape: &[i64], chunkshape: &[i32], blockshape: &[i32]) -> Result<Extents> {
        let ndim = shape.len();
        if ndim > MAX_DIM {
            crate::bail!(InvalidParam, "ndim {ndim} exceeds the maximum of {MAX_DIM}");
        }
        if chunkshape.len() != ndim || blockshape.len() != ndim {
            crate::bail!(
                InvalidParam,
                "shape, chunkshape and blockshape lengths differ ({ndim}, {}, {})",
                chunkshape.len(),
                blockshape.len()
            );
        }
        for i in 0..ndim {
            let (s, c, b) = (shape[i], chunkshape[i], blockshape[i]);
            if s < 0 || c < 0 || b < 0 {
                crate::bail!(
                    InvalidParam,
                    "dimension {i}: negative shape {s}, chunkshape {c} or blockshape {b}"
                );
            }
            if b == 0 && c != 0 {
                crate::bail!(
                    InvalidParam,
                    "dimension {i}: blockshape is 0 but chunkshape is {c}"
                );
            }
            if s != 0 && c == 0 {
                crate::bail!(
                    InvalidParam,
                    "dimension {i}: shape {s} with a zero chunkshape"
                );
            }
        }

        let mut extshape = vec![0i64; ndim];
        let mut extchunkshape = vec![0i64; ndim];
        for i in 0..ndim {
            let (s, c, b) = (shape[i], chunkshape[i] as i64, blockshape[i] as i64);
            if c == 0 {
                continue; // placeholder dimension: everything stays 0
            }
            extshape[i] = if s % c == 0 {
                s
            } else {
                (s - s % c).checked_add(c).ok_or_else(|| {
                    crate::err!(
                        InvalidParam,
                        "dimension {i}: shape {s} cannot be rounded up to chunkshape {c}"
                    )
                })?
            };
            extchunkshape[i] = if c % b == 0 { c } else { c - c % b + b };
        }
        let mut nitems = 1i64;
        let mut extnitems = 1i64;
        let mut extchunknitems = 1i64;
        for i in 0..ndim {
            nitems = mul_i64(nitems, shape[i], "number of items")?;
            extnitems = mul_i64(extnitems, extshape[i], "number of padded items")?;
            extchunknitems = mul_i64(extchunknitems, extchunkshape[i], "padded chunk items")?;
        }
        Ok(Extents {
            extshape,
            extchunkshape,
            nitems,
            extnitems,
            extchunknitems,
        })
    }
}

impl Geometry {
    /// Validates the shapes and derives the geometry.
    ///
    /// Errors (`InvalidParam` unless said otherwise): `typesize <= 0`;
    /// `ndim > 16` or shape/chunkshape/blockshape of different lengths; a
    /// negative entry; `blockshape == 0` with `chunkshape != 0`; a nonzero
    /// `shape` with a zero `chunkshape` or `blockshape`; any product or
    /// rounded shape overflowing its integer type; a block over `i32::MAX` bytes; a padded chunk over the
    /// super-chunk buffer limit (`MaxBufsizeExceeded`).
    pub fn new(
        shape: &[i64],
        chunkshape: &[i32],
        blockshape: &[i32],
        typesize: i32,
    ) -> Result<Geometry> {
        let ndim = shape.len();
        if typesize <= 0 {
            crate::bail!(InvalidParam, "typesize {typesize} must be positive");
        }
        let Extents {
            extshape,
            extchunkshape,
            nitems,
            extnitems,
            extchunknitems,
        } = Extents::new(shape, chunkshape, blockshape)?;
        let mut chunks_in_array = vec![0i64; ndim];
        let mut blocks_in_chunk = vec![0i64; ndim];
        for i in 0..ndim {
            if chunkshape[i] != 0 {
                chunks_in_array[i] = extshape[i] / chunkshape[i] as i64;
                blocks_in_chunk[i] = extchunkshape[i] / blockshape[i] as i64;
            }
        }

        let mut chunknitems = 1i32;
        let mut blocknitems = 1i32;
        let mut nchunks = 1i64;
        let mut nblocks = 1i64;
        for i in 0..ndim {
            chunknitems = chunknitems
                .checked_mul(chunkshape[i])
                .ok_or_else(|| crate::err!(InvalidParam, "chunkshape product overflows int32"))?;
            blocknitems = blocknitems
                .checked_mul(blockshape[i])
                .ok_or_else(|| crate::err!(InvalidParam, "blockshape product overflows int32"))?;
            nchunks = mul_i64(nchunks, chunks_in_array[i], "number of chunks")?;
            nblocks = mul_i64(nblocks, blocks_in_chunk[i], "number of blocks")?;
        }

        let block_nbytes = i32::try_from(blocknitems as i64 * typesize as i64).map_err(|_| {
            crate::err!(
                InvalidParam,
                "block of {blocknitems} items of {typesize} bytes exceeds int32"
            )
        })?;
        let chunk_nbytes = extchunknitems
            .checked_mul(typesize as i64)
            .filter(|&n| n <= MAX_BUFFERSIZE)
            .ok_or_else(|| {
                crate::err!(
                    MaxBufsizeExceeded,
                    "chunk of {extchunknitems} items of {typesize} bytes exceeds {MAX_BUFFERSIZE} bytes"
                )
            })? as i32;

        // A stride into dimension i+1 is meaningful only when that dimension
        // really is chunked; otherwise the reference zeroes it.
        let live: Vec<bool> = (0..ndim)
            .map(|i| shape[i] != 0 && chunkshape[i] != 0 && blockshape[i] != 0)
            .collect();
        let shape64: Vec<i64> = shape.to_vec();
        let chunk64: Vec<i64> = chunkshape.iter().map(|&c| c as i64).collect();
        let block64: Vec<i64> = blockshape.iter().map(|&b| b as i64).collect();
        let item_array_strides = strides_of(&shape64, &live, "array item stride")?;
        let item_chunk_strides = strides_of(&chunk64, &live, "chunk item stride")?;
        let item_extchunk_strides = strides_of(&extchunkshape, &live, "padded chunk item stride")?;
        let item_block_strides = strides_of(&block64, &live, "block item stride")?;
        let block_chunk_strides = strides_of(&blocks_in_chunk, &live, "block grid stride")?;
        // Wrapping, as the reference's arithmetic does in practice: this field
        // is never used for addressing, and a legitimate large array must not
        // be refused because of it.
        let mut chunk_array_strides = vec![1i64; ndim];
        for i in (0..ndim.saturating_sub(1)).rev() {
            chunk_array_strides[i] = if live[i + 1] {
                chunk_array_strides[i + 1]
                    .wrapping_mul(extshape[i + 1].wrapping_mul(chunk64[i + 1]))
            } else {
                0
            };
        }
        // The chunk grid has its own, always meaningful strides (used to
        // number chunks even when some later dimension is empty).
        let all_live = vec![true; ndim];
        let chunk_grid_strides = strides_of(&chunks_in_array, &all_live, "chunk grid stride")?;

        Ok(Geometry {
            ndim,
            typesize,
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
            item_array_strides,
            item_chunk_strides,
            item_extchunk_strides,
            item_block_strides,
            block_chunk_strides,
            chunk_array_strides,
            chunks_in_array,
            chunk_grid_strides,
            blocks_in_chunk,
            nchunks,
            nblocks,
            chunk_nbytes,
            block_nbytes,
        })
    }

    /// The geometry of the array described by a metalayer record.
    pub fn from_meta(meta: &super::meta::NdMeta, typesize: i32) -> Result<Geometry> {
        Geometry::new(&meta.shape, &meta.chunkshape, &meta.blockshape, typesize)
    }

    /// Total bytes of the array's items, or None if that overflows int64.
    pub fn nbytes(&self) -> Option<i64> {
        self.nitems.checked_mul(self.typesize as i64)
    }

    /// The grid of chunks over the array: cells of `chunkshape`, clipped to
    /// `shape`.
    pub fn chunk_grid(&self) -> Grid {
        let cell: Vec<i64> = self.chunkshape.iter().map(|&c| c as i64).collect();
        Grid::from_parts(&self.shape, &cell, &self.chunks_in_array, self.nchunks)
    }

    /// Chunk coordinates of chunk number `nchunk` (C order).
    pub fn chunk_coords(&self, nchunk: i64) -> Result<Vec<i64>> {
        if nchunk < 0 || nchunk >= self.nchunks {
            crate::bail!(
                InvalidIndex,
                "chunk {nchunk} out of range [0, {})",
                self.nchunks
            );
        }
        let mut coords = vec![0i64; self.ndim];
        let mut rest = nchunk;
        for i in (0..self.ndim).rev() {
            coords[i] = rest % self.chunks_in_array[i];
            rest /= self.chunks_in_array[i];
        }
        Ok(coords)
    }

    /// Number (C order) of the chunk at `coords`.
    pub fn chunk_index(&self, coords: &[i64]) -> Result<i64> {
        self.check_chunk_coords(coords)?;
        Ok(coords
            .iter()
            .zip(&self.chunk_grid_strides)
            .map(|(c, s)| c * s)
            .sum())
    }

    /// The part of the chunk at `coords` that lies inside the array: its
    /// shape, `min(chunkshape, shape - origin)` per dimension.
    pub fn chunk_extent(&self, coords: &[i64]) -> Result<Vec<i64>> {
        self.check_chunk_coords(coords)?;
        Ok((0..self.ndim)
            .map(|i| {
                let c = self.chunkshape[i] as i64;
                (self.shape[i] - coords[i] * c).min(c)
            })
            .collect())
    }

    /// The grid of blocks inside the chunk at `coords`: cells of
    /// `blockshape`, numbered over the padded chunk (`extchunkshape`), and
    /// clipped to the part of the chunk inside the array, as the reference
    /// does when it decides which blocks a read needs.
    pub fn block_grid(&self, chunk_coords: &[i64]) -> Result<Grid> {
        let extent = self.chunk_extent(chunk_coords)?;
        let cell: Vec<i64> = self.blockshape.iter().map(|&b| b as i64).collect();
        Ok(Grid::from_parts(
            &extent,
            &cell,
            &self.blocks_in_chunk,
            self.nblocks,
        ))
    }

    fn check_chunk_coords(&self, coords: &[i64]) -> Result<()> {
        if coords.len() != self.ndim {
            crate::bail!(
                InvalidParam,
                "{} chunk coordinates for {} dimensions",
                coords.len(),
                self.ndim
            );
        }
        for (i, (&c, &n)) in coords.iter().zip(&self.chunks_in_array).enumerate() {
            if c < 0 || c >= n {
                crate::bail!(
                    InvalidIndex,
                    "chunk coordinate {c} out of range [0, {n}) in dimension {i}"
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_a_padded_3d_array() {
        // python-blosc2: zeros((7,5,3), chunks=(4,4,2), blocks=(3,3,2), dtype='i2')
        // has ext_shape (8,8,4) and ext_chunks (6,6,2).
        let g = Geometry::new(&[7, 5, 3], &[4, 4, 2], &[3, 3, 2], 2).unwrap();
        assert_eq!(g.extshape, [8, 8, 4]);
        assert_eq!(g.extchunkshape, [6, 6, 2]);
        assert_eq!(
            (
                g.nitems,
                g.extnitems,
                g.chunknitems,
                g.extchunknitems,
                g.blocknitems
            ),
            (105, 256, 32, 72, 18)
        );
        assert_eq!(g.item_array_strides, [15, 3, 1]);
        assert_eq!(g.item_chunk_strides, [8, 2, 1]);
        assert_eq!(g.item_extchunk_strides, [12, 2, 1]);
        assert_eq!(g.item_block_strides, [6, 2, 1]);
        assert_eq!(g.block_chunk_strides, [2, 1, 1]);
        assert_eq!(g.chunk_array_strides, [8 * 4 * 4 * 2, 4 * 2, 1]);
        assert_eq!(g.chunks_in_array, [2, 2, 2]);
        assert_eq!(g.chunk_grid_strides, [4, 2, 1]);
        assert_eq!(g.blocks_in_chunk, [2, 2, 1]);
        assert_eq!(
            (g.nchunks, g.nblocks, g.chunk_nbytes, g.block_nbytes),
            (8, 4, 144, 36)
        );
        assert_eq!(g.chunk_extent(&[1, 1, 1]).unwrap(), [3, 1, 1]);
        assert_eq!(g.chunk_index(&[1, 0, 1]).unwrap(), 5);
        assert_eq!(g.chunk_coords(5).unwrap(), [1, 0, 1]);
    }

    #[test]
    fn zero_dimensional_array() {
        let g = Geometry::new(&[], &[], &[], 8).unwrap();
        assert_eq!(
            (
                g.nitems,
                g.extnitems,
                g.chunknitems,
                g.extchunknitems,
                g.blocknitems
            ),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(
            (g.nchunks, g.nblocks, g.chunk_nbytes, g.block_nbytes),
            (1, 1, 8, 8)
        );
        assert_eq!(g.chunk_coords(0).unwrap(), Vec::<i64>::new());
    }

    #[test]
    fn empty_dimensions() {
        // python-blosc2: zeros((0,5), chunks=(0,5), blocks=(0,5)) has ext_shape (0,5).
        let g = Geometry::new(&[0, 5], &[0, 5], &[0, 5], 4).unwrap();
        assert_eq!(g.extshape, [0, 5]);
        assert_eq!(g.extchunkshape, [0, 5]);
        assert_eq!((g.nitems, g.nchunks, g.chunk_nbytes), (0, 0, 0));
        let g = Geometry::new(&[3, 0, 4], &[2, 3, 4], &[1, 2, 4], 1).unwrap();
        assert_eq!(g.extshape, [4, 0, 4]);
        assert_eq!(g.extchunkshape, [2, 4, 4]);
        // Strides in front of an empty dimension are zeroed, as in the reference.
        assert_eq!(g.item_array_strides, [0, 4, 1]);
        assert_eq!(g.nchunks, 0);
    }

    #[test]
    fn rejections() {
        let code = |r: Result<Geometry>| r.unwrap_err().code();
        assert_eq!(code(Geometry::new(&[4], &[2], &[1], 0)), -12);
        assert_eq!(code(Geometry::new(&[1; 17], &[1; 17], &[1; 17], 1)), -12);
        assert_eq!(code(Geometry::new(&[4, 4], &[2], &[1], 1)), -12);
        assert_eq!(code(Geometry::new(&[-1], &[2], &[1], 1)), -12);
        assert_eq!(code(Geometry::new(&[4], &[-2], &[1], 1)), -12);
        assert_eq!(code(Geometry::new(&[4], &[0], &[0], 1)), -12);
        assert_eq!(code(Geometry::new(&[4], &[2], &[0], 1)), -12);
        // A block larger than its chunk pads the chunk (reference 3.3.5).
        let g = Geometry::new(&[4], &[2], &[3], 1).unwrap();
        assert_eq!((g.extchunkshape[0], g.nchunks, g.nblocks), (3, 2, 1));
        assert_eq!(code(Geometry::new(&[i64::MAX], &[2], &[1], 1)), -12);
        assert_eq!(
            code(Geometry::new(&[1 << 40, 1 << 40], &[1, 1], &[1, 1], 1)),
            -12
        );
        assert_eq!(
            code(Geometry::new(
                &[1 << 20, 1 << 20],
                &[1 << 16, 1 << 16],
                &[1, 1],
                1
            )),
            -12
        );
        assert_eq!(
            code(Geometry::new(&[1 << 16], &[1 << 16], &[1 << 16], 1 << 16)),
            -12
        );
        assert_eq!(
            code(Geometry::new(&[1 << 30], &[1 << 29], &[1 << 10], 4)),
            -35
        );
        assert!(Geometry::new(&[1 << 30], &[1 << 29], &[1 << 10], 3).is_ok());
    }
}
