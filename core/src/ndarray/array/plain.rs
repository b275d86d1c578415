//! Plain buffers: an array held uncompressed in memory as one C-order
//! buffer of its items (Caterva 0.5.0's `CATERVA_STORAGE_PLAINBUFFER`).
//!
//! A plain buffer is decoded storage ([`ArrayStorage::Decoded`]) with a
//! single chunk and a single block, both of the array's shape. The store's
//! one decoded chunk then *is* the array's items in C order (no padding, no
//! codec), and every array operation (slices, copies, selections, resize)
//! works on it unchanged, through the same [`ChunkStore`] calls as for a
//! super-chunk.
//!
//! [`ChunkStore`]: super::store::ChunkStore

use super::store::ChunkStore;
use super::{ArrayStorage, Context, NdArray};
use crate::Result;

impl Context {
    /// The context of a plain buffer of `shape` and `typesize`.
    pub fn plain(typesize: i32, shape: &[i64]) -> Result<Context> {
        let part = shape
            .iter()
            .map(|&d| i32::try_from(d))
            .collect::<std::result::Result<Vec<i32>, _>>()
            .map_err(|_| crate::err!(InvalidParam, "a plain buffer extent exceeds 2^31 - 1"))?;
        Context::new(
            ArrayStorage::Decoded,
            typesize,
            shape,
            &part,
            &part,
            None,
            0,
            Vec::new(),
        )
    }
}

impl NdArray {
    /// True when the array is a plain buffer (see [`Context::plain`]).
    pub fn is_plain(&self) -> bool {
        !self.store.has_schunk()
            && !self.store.is_view()
            && self.layout.chunkshape.iter().map(|&c| c as i64).eq(self
                .layout
                .shape
                .iter()
                .copied())
            && self.layout.blockshape == self.layout.chunkshape
    }

    /// The address of a plain buffer's items (`nitems * typesize` bytes, C
    /// order), materialised if the array was made as a fill. `None` for
    /// other arrays and for plain buffers without items. The address stays
    /// valid until the next call that changes the array.
    pub fn plain_items_ptr(&mut self) -> Option<*mut u8> {
        if !self.is_plain() || self.layout.nitems == 0 {
            return None;
        }
        self.store.decoded_chunk_ptr(0)
    }

    /// A plain buffer of another `shape` holding the same items in the same
    /// C order (same item count), as squeezing a plain buffer needs.
    pub fn plain_reshaped(&self, shape: &[i64]) -> Result<NdArray> {
        let n: i64 = shape.iter().product();
        if n != self.layout.nitems {
            crate::bail!(
                InvalidParam,
                "shape {shape:?} holds {n} items, the array {}",
                self.layout.nitems
            );
        }
        let mut items = vec![0u8; self.nbytes() as usize];
        self.to_cbuffer(&mut items)?;
        let mut ctx = Context::plain(self.typesize(), shape)?;
        ctx.dtype = self.dtype.clone();
        ctx.dtype_format = self.dtype_format;
        NdArray::from_cbuffer(&ctx, &items)
    }
}

impl NdArray {
    /// Writes chunk `n` of the chunk grid (numbered in C order over the
    /// grid) from `items`, a C-order buffer of one chunk's shape: exactly
    /// `chunknitems * typesize` bytes, of which the part beyond the array's
    /// edge is ignored. Caterva 0.5.0's `caterva_append` fills an array this
    /// way, chunk after chunk.
    pub fn write_grid_chunk(&mut self, n: i64, items: &[u8]) -> Result<()> {
        let l = &self.layout;
        let per_dim = l.chunks_per_dim();
        let total: i64 = per_dim.iter().product();
        if n < 0 || n >= total {
            crate::bail!(InvalidIndex, "chunk {n} out of range ({total} chunks)");
        }
        let chunkshape: Vec<i64> = l.chunkshape.iter().map(|&c| c as i64).collect();
        let need = chunkshape.iter().product::<i64>() * self.typesize() as i64;
        if items.len() as i64 != need {
            crate::bail!(
                InvalidParam,
                "a chunk holds {need} bytes, not {}",
                items.len()
            );
        }
        let nd = l.ndim();
        let (mut start, mut stop) = (vec![0i64; nd], vec![0i64; nd]);
        let mut rest = n;
        for i in (0..nd).rev() {
            let at = rest % per_dim[i];
            rest /= per_dim[i];
            start[i] = at * chunkshape[i];
            stop[i] = (start[i] + chunkshape[i]).min(l.shape[i]);
        }
        self.set_slice_cbuffer(items, &chunkshape, &start, &stop)
    }
}

// The tests play the C caller, who reads and writes the plain buffer
// through the raw address the C layer hands out.
#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    #[test]
    fn plain_buffer_is_its_items_in_c_order() {
        let ctx = Context::plain(2, &[3, 4]).unwrap();
        let items: Vec<u8> = (0..24).collect();
        let mut a = NdArray::from_cbuffer(&ctx, &items).unwrap();
        assert!(a.is_plain());
        assert_eq!(a.nchunks(), 1);
        let p = a.plain_items_ptr().unwrap();
        // SAFETY: the plain buffer holds 24 bytes at `p` until `a` changes.
        let seen = unsafe { std::slice::from_raw_parts(p, 24) };
        assert_eq!(seen, &items[..]);
        // Writes through the address are what the array holds.
        // SAFETY: as above, writable.
        unsafe { *p = 99 };
        let mut back = vec![0u8; 24];
        a.to_cbuffer(&mut back).unwrap();
        assert_eq!(back[0], 99);
    }

    #[test]
    fn zeros_materialise_and_reshape_keeps_the_items() {
        let ctx = Context::plain(1, &[2, 1, 3]).unwrap();
        let mut a = NdArray::zeros(&ctx).unwrap();
        let p = a.plain_items_ptr().unwrap();
        // SAFETY: six writable bytes at `p`.
        unsafe { std::slice::from_raw_parts_mut(p, 6) }.copy_from_slice(&[1, 2, 3, 4, 5, 6]);
        let b = a.plain_reshaped(&[2, 3]).unwrap();
        assert!(b.is_plain());
        let mut back = vec![0u8; 6];
        b.to_cbuffer(&mut back).unwrap();
        assert_eq!(back, [1, 2, 3, 4, 5, 6]);
        assert!(a.plain_reshaped(&[5]).is_err());
    }

    #[test]
    fn grid_chunks_fill_an_array_in_order() {
        let ctx = Context::new(
            ArrayStorage::default(),
            1,
            &[3, 5],
            &[2, 3],
            &[1, 3],
            None,
            0,
            vec![],
        )
        .unwrap();
        let mut a = NdArray::zeros(&ctx).unwrap();
        // 2 x 2 chunks of 2 x 3 items; chunk k holds 10k + position.
        for k in 0..4i64 {
            let items: Vec<u8> = (0..6).map(|j| (10 * k + j) as u8).collect();
            a.write_grid_chunk(k, &items).unwrap();
        }
        assert!(a.write_grid_chunk(4, &[0; 6]).is_err());
        assert!(a.write_grid_chunk(0, &[0; 5]).is_err());
        let mut back = vec![0u8; 15];
        a.to_cbuffer(&mut back).unwrap();
        assert_eq!(back, [0, 1, 2, 10, 11, 3, 4, 5, 13, 14, 20, 21, 22, 30, 31]);
    }

    #[test]
    fn super_chunk_arrays_are_not_plain() {
        let ctx = Context::new(
            ArrayStorage::default(),
            1,
            &[4],
            &[4],
            &[4],
            None,
            0,
            vec![],
        )
        .unwrap();
        let mut a = NdArray::zeros(&ctx).unwrap();
        assert!(!a.is_plain());
        assert!(a.plain_items_ptr().is_none());
    }
}
