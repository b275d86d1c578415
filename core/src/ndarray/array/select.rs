//! Point-wise access: orthogonal selections (an index list per dimension,
//! taken as an outer product) and sparse gathers by flat C-order index.
//!
//! Items are grouped by chunk so each touched chunk is decoded once, and on
//! reads only the blocks holding selected items are decoded.

use super::layout::c_strides;
use super::store::{ChunkStore, Encoded};
use super::NdArray;
use crate::chunk::BlockNeeds;
use crate::Result;

/// Maps array coordinates to where the item lives in the super-chunk:
/// chunk number, item offset inside the decoded (padded, block-ordered)
/// chunk, and block number. Strides are computed once, so locating an item
/// does not allocate.
struct Locator {
    chunkshape: Vec<i64>,
    blockshape: Vec<i64>,
    chunk_strides: Vec<i64>,
    block_strides: Vec<i64>,
    item_strides: Vec<i64>,
    blocknitems: i64,
}

impl Locator {
    fn new(a: &NdArray) -> Locator {
        let l = &a.layout;
        Locator {
            chunkshape: l.chunkshape.iter().map(|&c| c as i64).collect(),
            blockshape: l.blockshape.iter().map(|&b| b as i64).collect(),
            chunk_strides: l.chunk_array_strides(),
            block_strides: l.block_chunk_strides(),
            item_strides: l.item_block_strides(),
            blocknitems: l.blocknitems,
        }
    }

    fn locate(&self, idx: &[i64]) -> (i64, usize, usize) {
        let (mut nchunk, mut nblock, mut inner) = (0i64, 0i64, 0i64);
        for (i, &x) in idx.iter().enumerate() {
            let (c, b) = (self.chunkshape[i], self.blockshape[i]);
            let in_chunk = x % c;
            nchunk += x / c * self.chunk_strides[i];
            nblock += in_chunk / b * self.block_strides[i];
            inner += in_chunk % b * self.item_strides[i];
        }
        (
            nchunk,
            (nblock * self.blocknitems + inner) as usize,
            nblock as usize,
        )
    }
}

/// The bytes of block `nblock` (of `bbytes` bytes) that hold item `item` of
/// its chunk, an item of `ts` bytes.
fn item_in_block(item: usize, nblock: usize, bbytes: usize, ts: usize) -> std::ops::Range<usize> {
    let at = item * ts - nblock * bbytes;
    at..at + ts
}

impl NdArray {
    /// Gathers the items at flat C-order indices `coords` (each in
    /// `[0, nitems)`, repeats and any order allowed) into `buffer`, in the
    /// order given (`b2nd_get_sparse_cbuffer`).
    pub fn get_sparse_cbuffer(&self, coords: &[i64], buffer: &mut [u8]) -> Result<()> {
        if coords.is_empty() {
            return Ok(());
        }
        self.check_chunk_buffer()?;
        let ts = self.typesize() as usize;
        if (buffer.len() as u64) < coords.len() as u64 * ts as u64 {
            crate::bail!(InvalidParam, "buffer is smaller than expected");
        }
        if self.ndim() == 0 {
            crate::bail!(
                InvalidParam,
                "sparse indexing is not supported for 0-dimensional arrays"
            );
        }
        let shape = self.layout.shape.clone();
        let loc = Locator::new(self);
        let mut idx = vec![0i64; shape.len()];
        let mut places = Vec::with_capacity(coords.len());
        for (k, &c) in coords.iter().enumerate() {
            if c < 0 || c >= self.layout.nitems {
                crate::bail!(
                    InvalidParam,
                    "coordinate {c} out of bounds [0, {})",
                    self.layout.nitems
                );
            }
            let mut rest = c;
            for i in (0..shape.len()).rev() {
                idx[i] = rest % shape[i];
                rest /= shape[i];
            }
            let (nchunk, item, nblock) = loc.locate(&idx);
            places.push((nchunk, item, nblock, k));
        }
        places.sort_unstable();
        let mut scratch = crate::mem::zeroed(self.store.chunksize() as usize)?;
        let bbytes = self.layout.blocknitems as usize * ts;
        let mut need = BlockNeeds::none(self.layout.nblocks() as usize);
        for group in places.chunk_by(|a, b| a.0 == b.0) {
            need.clear();
            for p in group {
                need.add(p.2, item_in_block(p.1, p.2, bbytes, ts));
            }
            self.store
                .read_chunk(group[0].0, &mut scratch, Some(&need))?;
            for &(_, item, _, k) in group {
                buffer[k * ts..(k + 1) * ts].copy_from_slice(&scratch[item * ts..(item + 1) * ts]);
            }
        }
        Ok(())
    }

    /// Checks an orthogonal selection and its buffer; returns the buffer's
    /// C-order strides.
    fn check_selection(
        &self,
        selection: &[&[i64]],
        buffershape: &[i64],
        buflen: usize,
    ) -> Result<Vec<i64>> {
        let nd = self.ndim();
        if selection.len() != nd || buffershape.len() != nd {
            crate::bail!(InvalidParam, "selection and buffershape need {nd} entries");
        }
        let mut items = 1i64;
        for i in 0..nd {
            if let Some(&bad) = selection[i]
                .iter()
                .find(|&&v| v < 0 || v >= self.layout.shape[i])
            {
                crate::bail!(
                    InvalidIndex,
                    "index {bad} out of range for dimension {i} of extent {}",
                    self.layout.shape[i]
                );
            }
            if buffershape[i] < selection[i].len() as i64 {
                crate::bail!(
                    InvalidParam,
                    "buffershape[{i}] is smaller than the selection ({})",
                    selection[i].len()
                );
            }
            items = items
                .checked_mul(buffershape[i])
                .ok_or_else(|| crate::err!(InvalidParam, "buffer shape overflows"))?;
        }
        let need = items as u64 * self.typesize() as u64;
        if (buflen as u64) < need {
            crate::bail!(
                InvalidParam,
                "buffer of {buflen} bytes is smaller than its shape needs ({need})"
            );
        }
        self.check_chunk_buffer()?;
        Ok(c_strides(buffershape))
    }

    /// Visits every selected item, chunk by chunk: `visit(chunk, [(item in
    /// chunk, block, buffer item)])` with items in the reference's order
    /// (sorted by value then position along each dimension).
    fn for_each_selected_chunk(
        &self,
        selection: &[&[i64]],
        bufstrides: &[i64],
        mut visit: impl FnMut(i64, &[(usize, usize, usize)]) -> Result<()>,
    ) -> Result<()> {
        let nd = self.ndim();
        if selection.iter().any(|s| s.is_empty()) {
            return Ok(());
        }
        // Per dimension: (value, position) sorted, then grouped by chunk.
        let sorted: Vec<Vec<(i64, i64)>> = selection
            .iter()
            .map(|s| {
                let mut v: Vec<(i64, i64)> =
                    s.iter().enumerate().map(|(j, &x)| (x, j as i64)).collect();
                v.sort_unstable();
                v
            })
            .collect();
        let groups: Vec<Vec<&[(i64, i64)]>> = (0..nd)
            .map(|i| {
                let c = self.layout.chunkshape[i] as i64;
                sorted[i].chunk_by(|a, b| a.0 / c == b.0 / c).collect()
            })
            .collect();
        let ngroups: Vec<i64> = groups.iter().map(|g| g.len() as i64).collect();
        let loc = Locator::new(self);
        let mut items = Vec::new();
        let mut result = Ok(());
        super::layout::for_each_index(&vec![0; nd], &ngroups, |gi| {
            if result.is_err() {
                return;
            }
            items.clear();
            let picked: Vec<&[(i64, i64)]> = (0..nd).map(|i| groups[i][gi[i] as usize]).collect();
            let lens: Vec<i64> = picked.iter().map(|p| p.len() as i64).collect();
            let mut nchunk = 0;
            let mut idx = vec![0i64; nd];
            super::layout::for_each_index(&vec![0; nd], &lens, |k| {
                let mut boff = 0i64;
                for i in 0..nd {
                    let (v, pos) = picked[i][k[i] as usize];
                    idx[i] = v;
                    boff += pos * bufstrides[i];
                }
                let (n, item, nblock) = loc.locate(&idx);
                nchunk = n;
                items.push((item, nblock, boff as usize));
            });
            result = visit(nchunk, &items);
        });
        result
    }

    /// Reads the outer product of `selection[i]` (indices along dimension
    /// i) into `buffer`, a C-order array of shape `buffershape`
    /// (`b2nd_get_orthogonal_selection`).
    pub fn get_orthogonal_selection(
        &self,
        selection: &[&[i64]],
        buffer: &mut [u8],
        buffershape: &[i64],
    ) -> Result<()> {
        let strides = self.check_selection(selection, buffershape, buffer.len())?;
        let ts = self.typesize() as usize;
        if self.ndim() == 0 {
            let mut item = crate::mem::zeroed(self.store.chunksize() as usize)?;
            self.store.read_chunk(0, &mut item, None)?;
            buffer[..ts].copy_from_slice(&item[..ts]);
            return Ok(());
        }
        let mut scratch = crate::mem::zeroed(self.store.chunksize() as usize)?;
        let bbytes = self.layout.blocknitems as usize * ts;
        let mut need = BlockNeeds::none(self.layout.nblocks() as usize);
        self.for_each_selected_chunk(selection, &strides, |nchunk, items| {
            need.clear();
            for &(item, nblock, _) in items {
                need.add(nblock, item_in_block(item, nblock, bbytes, ts));
            }
            self.store.read_chunk(nchunk, &mut scratch, Some(&need))?;
            for &(item, _, b) in items {
                buffer[b * ts..(b + 1) * ts].copy_from_slice(&scratch[item * ts..(item + 1) * ts]);
            }
            Ok(())
        })
    }

    /// Writes `buffer` (C order, shape `buffershape`) to the outer product
    /// of `selection` (`b2nd_set_orthogonal_selection`). With repeated
    /// indices, the last occurrence wins.
    pub fn set_orthogonal_selection(
        &mut self,
        selection: &[&[i64]],
        buffer: &[u8],
        buffershape: &[i64],
    ) -> Result<()> {
        let chunks = self.encode_orthogonal_selection(selection, buffer, buffershape)?;
        self.publish(chunks)
    }

    /// The chunks [`NdArray::set_orthogonal_selection`] stores, encoded
    /// through `&self` (see `NdArray::encode_slice_cbuffer`).
    pub fn encode_orthogonal_selection(
        &self,
        selection: &[&[i64]],
        buffer: &[u8],
        buffershape: &[i64],
    ) -> Result<Encoded> {
        let strides = self.check_selection(selection, buffershape, buffer.len())?;
        let ts = self.typesize() as usize;
        let chunksize = self.store.chunksize() as usize;
        if self.ndim() == 0 {
            let mut item = crate::mem::zeroed(chunksize)?;
            item[..ts].copy_from_slice(&buffer[..ts]);
            return Ok(vec![(0, self.store.encode_chunk(0, &item)?)]);
        }
        // Collect the per-chunk edits first (the visitor borrows `self`).
        let mut edits: Vec<(i64, Vec<(usize, usize)>)> = Vec::new();
        self.for_each_selected_chunk(selection, &strides, |nchunk, items| {
            edits.push((nchunk, items.iter().map(|&(i, _, b)| (i, b)).collect()));
            Ok(())
        })?;
        let mut scratch = crate::mem::zeroed(chunksize)?;
        let mut encoded = Vec::with_capacity(edits.len());
        for (nchunk, items) in edits {
            self.store.read_chunk(nchunk, &mut scratch, None)?;
            for (item, b) in items {
                scratch[item * ts..(item + 1) * ts].copy_from_slice(&buffer[b * ts..(b + 1) * ts]);
            }
            encoded.push((nchunk, self.store.encode_chunk(nchunk, &scratch)?));
        }
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn sparse_gather_matches_flat_indexing() {
        for ts in [1usize, 4, 13] {
            let c = ctx(ts as i32, &[5, 7], &[2, 3], &[1, 2]);
            let data = pattern(35 * ts);
            let a = NdArray::from_cbuffer(&c, &data).unwrap();
            let coords = [34i64, 0, 8, 8, 20, 6];
            let mut out = vec![0u8; coords.len() * ts];
            a.get_sparse_cbuffer(&coords, &mut out).unwrap();
            for (k, &c) in coords.iter().enumerate() {
                assert_eq!(
                    out[k * ts..(k + 1) * ts],
                    data[c as usize * ts..(c as usize + 1) * ts]
                );
            }
            assert_eq!(
                a.get_sparse_cbuffer(&[35], &mut out).unwrap_err().code(),
                -12
            );
            assert_eq!(
                a.get_sparse_cbuffer(&[0, 1], &mut out[..ts])
                    .unwrap_err()
                    .code(),
                -12
            );
        }
    }

    #[test]
    fn orthogonal_selection_get_and_set() {
        let c = ctx(2, &[6, 5], &[4, 2], &[2, 1]);
        let data = pattern(60);
        let mut a = NdArray::from_cbuffer(&c, &data).unwrap();
        let (r, k): (&[i64], &[i64]) = (&[5, 0, 3], &[4, 1]);
        let mut out = vec![0u8; 12];
        a.get_orthogonal_selection(&[r, k], &mut out, &[3, 2])
            .unwrap();
        for (i, &ri) in r.iter().enumerate() {
            for (j, &kj) in k.iter().enumerate() {
                let src = ((ri * 5 + kj) * 2) as usize;
                assert_eq!(
                    out[(i * 2 + j) * 2..(i * 2 + j) * 2 + 2],
                    data[src..src + 2]
                );
            }
        }
        // Repeated index: the last occurrence wins.
        a.set_orthogonal_selection(&[&[1, 1], &[2]], &[1, 1, 2, 2], &[2, 1])
            .unwrap();
        let v = a.to_vec().unwrap();
        assert_eq!(v[(5 + 2) * 2..(5 + 2) * 2 + 2], [2, 2]);
        assert_eq!(
            a.get_orthogonal_selection(&[&[6], &[0]], &mut out, &[1, 1])
                .unwrap_err()
                .code(),
            -33
        );
        assert_eq!(
            a.get_orthogonal_selection(&[&[0, 1], &[0]], &mut out, &[1, 1])
                .unwrap_err()
                .code(),
            -12
        );
    }
}
