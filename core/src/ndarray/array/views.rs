//! New arrays made from existing ones: a region (`get_slice`), a copy with
//! other parameters (`copy`), a concatenation, and the shape-only
//! transformations `squeeze`/`expand_dims`.
//!
//! When source and target chunks have the same layout, chunks are moved in
//! their stored (compressed) form without decoding. As in the reference,
//! squeeze/expand_dims results are views: in-memory arrays with their own
//! geometry and "b2nd" metalayer over the source's chunks (see
//! `shared_store`), so a write through one is read through the other.

use super::layout::{Layout, MAX_DIM};
use super::store::ChunkStore;
use super::{meta_record, Context, NdArray};
use crate::Result;

impl NdArray {
    /// Copies the region [s_start, s_stop) of `src` onto the region of the
    /// same extent at `d_start` of `self` (the two may differ in ndim only by
    /// unit dimensions: the bytes of the region are the same).
    fn transfer_from(
        &mut self,
        src: &NdArray,
        s_start: &[i64],
        s_stop: &[i64],
        d_start: &[i64],
        d_stop: &[i64],
    ) -> Result<()> {
        let sshape: Vec<i64> = s_start.iter().zip(s_stop).map(|(a, b)| b - a).collect();
        let dshape: Vec<i64> = d_start.iter().zip(d_stop).map(|(a, b)| b - a).collect();
        let n: i64 = sshape.iter().product();
        if n != dshape.iter().product::<i64>() {
            crate::bail!(InvalidParam, "regions of different sizes");
        }
        if n == 0 {
            return Ok(());
        }
        let mut buf = crate::mem::zeroed(n as usize * src.typesize() as usize)?;
        src.get_slice_cbuffer(s_start, s_stop, &mut buf, &sshape)?;
        self.set_slice_cbuffer(&buf, &dshape, d_start, d_stop)
    }

    /// Fills `self` chunk by chunk from `src`, reading for each of its chunks
    /// the source region `map` gives. A source region smaller than the chunk
    /// fills the chunk's corner at its origin; the rest keeps what it held.
    fn fill_chunkwise(
        &mut self,
        src: &NdArray,
        map: impl Fn(&[i64], &[i64]) -> (Vec<i64>, Vec<i64>),
    ) -> Result<()> {
        let l = self.layout.clone();
        for n in 0..l.nchunks() {
            let (cs, ce) = l.chunk_bounds(&l.chunk_coords(n));
            let (ss, se) = map(&cs, &ce);
            let de: Vec<i64> = (0..cs.len()).map(|i| cs[i] + (se[i] - ss[i])).collect();
            self.transfer_from(src, &ss, &se, &cs, &de)?;
        }
        Ok(())
    }

    /// True when both arrays store their chunks identically, so chunks can
    /// move in compressed form.
    fn same_chunk_layout(&self, other: &NdArray) -> bool {
        self.typesize() == other.typesize()
            && self.store.has_schunk() == other.store.has_schunk()
            && self.layout.chunkshape == other.layout.chunkshape
            && self.layout.blockshape == other.layout.blockshape
            && self.store.chunksize() == other.store.chunksize()
    }

    /// Copies every chunk of `src` over the chunks of `self` in stored form.
    fn copy_raw_chunks(&mut self, src: &NdArray) -> Result<()> {
        for n in 0..src.store.nchunks() {
            let raw = src.store.raw_chunk(n)?;
            self.store.write_raw_chunk(n, &raw)?;
        }
        Ok(())
    }

    /// A new array holding the region [start, stop) of `self`, created with
    /// `ctx` (whose ndim and shape are replaced by the region's). `b2nd_get_slice`.
    ///
    /// The region may reach past the end of `self` (`stop`, even `start`,
    /// beyond the shape): that part of the new array reads as zeros.
    /// The reference does not check `stop` against the shape here, and
    /// C-Blosc2's own tests slice past the end (test_b2nd_squeeze_index:
    /// shape {10, 7, 6, 4}, region [4:5, 4:5, 0:10, 4:5]); it gives zeros
    /// where the region is outside the source, except that some regions
    /// partly outside make its chunk arithmetic name a chunk past the last
    /// one, and then it fails.
    pub fn get_slice(&self, ctx: &Context, start: &[i64], stop: &[i64]) -> Result<NdArray> {
        let c = self.slice_context(ctx, start, stop)?;
        let mut out = NdArray::empty(&c)?;
        if out.nitems() == 0 {
            return Ok(out);
        }
        let shape = &self.layout.shape;
        out.fill_chunkwise(self, |cs, ce| {
            // Each chunk's source region, cut at the source's end (empty
            // when it starts past it): the rest of the chunk stays zero.
            let ss: Vec<i64> = cs.iter().zip(start).map(|(a, b)| a + b).collect();
            let se = (0..ss.len())
                .map(|i| (ce[i] + start[i]).min(shape[i]).max(ss[i]))
                .collect();
            (ss, se)
        })?;
        Ok(out)
    }

    /// The context [`NdArray::get_slice`] makes the region [start, stop)
    /// with: `ctx` with the region's shape, after the same checks.
    pub fn slice_context(&self, ctx: &Context, start: &[i64], stop: &[i64]) -> Result<Context> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd {
            crate::bail!(InvalidParam, "start and stop need {nd} entries");
        }
        for i in 0..nd {
            // Past the end is allowed (see `get_slice`).
            if start[i] < 0 || start[i] > stop[i] {
                crate::bail!(
                    InvalidParam,
                    "slice [{}, {}) out of range in dimension {i}",
                    start[i],
                    stop[i]
                );
            }
        }
        if ctx.typesize != self.typesize() {
            crate::bail!(
                InvalidParam,
                "context typesize {} differs from the source's {}",
                ctx.typesize,
                self.typesize()
            );
        }
        let mut c = ctx.clone();
        c.shape = (0..nd).map(|i| stop[i] - start[i]).collect();
        if c.chunkshape.len() != nd || c.blockshape.len() != nd {
            crate::bail!(
                InvalidParam,
                "context chunkshape/blockshape need {nd} entries"
            );
        }
        Ok(c)
    }

    /// A copy of `self` with the storage, chunkshape, blockshape and dtype of
    /// `ctx` (its ndim and shape are replaced by the source's). The source's
    /// metalayers (but "b2nd") and vlmetalayers are carried over. With equal
    /// chunk and block shapes, chunks are copied without decoding. `b2nd_copy`.
    pub fn copy(&self, ctx: &Context) -> Result<NdArray> {
        let c = self.copy_context(ctx)?;
        let mut out = NdArray::empty(&c)?;
        if out.same_chunk_layout(self) {
            out.copy_raw_chunks(self)?;
        } else if out.nitems() > 0 {
            out.fill_chunkwise(self, |cs, ce| (cs.to_vec(), ce.to_vec()))?;
        }
        for name in self.store.vlmeta_names() {
            if let Some(v) = self.store.vlmeta_get(&name) {
                out.store.vlmeta_add(&name, &v)?;
            }
        }
        Ok(out)
    }

    /// The context [`NdArray::copy`] makes the copy with: `ctx` with this
    /// array's shape and its metalayers but "b2nd", after the same checks.
    pub fn copy_context(&self, ctx: &Context) -> Result<Context> {
        if ctx.typesize != self.typesize() {
            crate::bail!(
                InvalidParam,
                "context typesize {} differs from the source's {}",
                ctx.typesize,
                self.typesize()
            );
        }
        let mut c = ctx.clone();
        c.shape = self.layout.shape.clone();
        if c.chunkshape.len() != self.ndim() || c.blockshape.len() != self.ndim() {
            crate::bail!(
                InvalidParam,
                "context chunkshape/blockshape need {} entries",
                self.ndim()
            );
        }
        c.metalayers = self
            .store
            .meta_names()
            .into_iter()
            .filter(|n| n != "b2nd")
            .filter_map(|n| self.store.meta_get(&n).map(|v| (n, v)))
            .collect();
        Ok(c)
    }

    /// Checks that `src1` and `src2` can be joined along `axis`; returns the
    /// joined shape.
    fn concat_shape(src1: &NdArray, src2: &NdArray, axis: usize) -> Result<Vec<i64>> {
        if src1.ndim() == 0 || src2.ndim() == 0 {
            crate::bail!(
                InvalidParam,
                "concatenation of 0-dim arrays is not supported"
            );
        }
        if axis >= src1.ndim() {
            crate::bail!(
                InvalidParam,
                "axis {axis} is out of bounds for {} dimensions",
                src1.ndim()
            );
        }
        if src1.typesize() != src2.typesize() {
            crate::bail!(InvalidParam, "the two arrays must have the same typesize");
        }
        if src1.ndim() != src2.ndim() {
            crate::bail!(
                InvalidParam,
                "the two arrays must have the same number of dimensions"
            );
        }
        let mut shape = src1.layout.shape.clone();
        for i in 0..shape.len() {
            if i == axis {
                shape[i] = shape[i]
                    .checked_add(src2.layout.shape[i])
                    .ok_or_else(|| crate::err!(InvalidParam, "concatenated shape overflows"))?;
            } else if shape[i] != src2.layout.shape[i] {
                crate::bail!(
                    InvalidParam,
                    "the two arrays must have the same shape except along the concatenation axis"
                );
            }
        }
        Ok(shape)
    }

    /// A new array (made with `ctx`, like [`NdArray::copy`]) holding `src1`
    /// followed by `src2` along `axis` (`b2nd_concatenate` with copy=true).
    pub fn concatenate(
        ctx: &Context,
        src1: &NdArray,
        src2: &NdArray,
        axis: usize,
    ) -> Result<NdArray> {
        NdArray::concat_shape(src1, src2, axis)?;
        let mut out = src1.copy(ctx)?;
        out.concatenate_in_place(src2, axis)?;
        Ok(out)
    }

    /// Extends `self` along `axis` with the contents of `src2`
    /// (`b2nd_concatenate` with copy=false).
    pub fn concatenate_in_place(&mut self, src2: &NdArray, axis: usize) -> Result<()> {
        let new_shape = NdArray::concat_shape(self, src2, axis)?;
        Layout::new(&new_shape, &self.layout.chunkshape, &self.layout.blockshape)?
            .chunk_nbytes(self.typesize())?;
        let offset = self.layout.shape[axis];
        self.resize(&new_shape, None)?;
        let aligned =
            self.same_chunk_layout(src2) && offset % self.layout.chunkshape[axis] as i64 == 0;
        let per_dim = self.layout.chunks_per_dim();
        let chunk_off = if aligned {
            offset / self.layout.chunkshape[axis] as i64
        } else {
            0
        };
        let sl = src2.layout.clone();
        for n in 0..sl.nchunks() {
            let coords = sl.chunk_coords(n);
            if aligned {
                let mut dc = coords.clone();
                dc[axis] += chunk_off;
                let dn = super::layout::flatten(&dc, &per_dim);
                let raw = src2.store.raw_chunk(n)?;
                self.store.write_raw_chunk(dn, &raw)?;
            } else {
                let (cs, ce) = sl.chunk_bounds(&coords);
                let (mut ds, mut de) = (cs.clone(), ce.clone());
                ds[axis] += offset;
                de[axis] += offset;
                self.transfer_from(src2, &cs, &ce, &ds, &de)?;
            }
        }
        Ok(())
    }

    /// Fails like the reference when the array carries metalayers other
    /// than "b2nd" (their meaning could depend on the shape).
    fn only_b2nd_meta(&self, what: &str) -> Result<()> {
        if self.store.meta_names().iter().any(|n| n != "b2nd") {
            crate::bail!(
                InvalidParam,
                "cannot {what} an array with non-b2nd metalayers"
            );
        }
        Ok(())
    }

    /// Fails for a view: its chunk list belongs to the array it was taken
    /// from, so nothing that adds or removes chunks may run through it.
    pub(crate) fn refuse_view(&self, what: &str) -> Result<()> {
        if self.store.is_view() {
            crate::bail!(
                Failure,
                "cannot {what} a view (squeeze/expand_dims result): copy it first"
            );
        }
        Ok(())
    }

    /// True for an array made by [`NdArray::squeeze`],
    /// [`NdArray::squeeze_index`] or [`NdArray::expand_dims`].
    pub fn is_view(&self) -> bool {
        self.store.is_view()
    }

    /// True when `self` and `other` read and write the same stored chunks
    /// (an array and its views).
    pub fn shares_chunks_with(&self, other: &NdArray) -> bool {
        self.store.shares_chunks_with(&other.store)
    }

    /// A view of `self` with another geometry over the same chunks: in
    /// memory, with its own "b2nd" metalayer, sharing chunks and
    /// vlmetalayers with `self` (the reference's `view_new`).
    fn view_as(
        &self,
        shape: Vec<i64>,
        chunkshape: Vec<i32>,
        blockshape: Vec<i32>,
    ) -> Result<NdArray> {
        let layout = Layout::new(&shape, &chunkshape, &blockshape)?;
        let chunksize = layout.chunk_nbytes(self.typesize())?;
        let meta = meta_record(&layout, &self.dtype, self.dtype_format).to_b2nd_bytes()?;
        Ok(NdArray {
            store: self.store.view(meta, chunksize),
            layout,
            dtype: self.dtype.clone(),
            dtype_format: self.dtype_format,
        })
    }

    /// A view without the dimensions flagged in `index` (its first `ndim`
    /// entries are used), which must have extent 1 (`InvalidIndex`
    /// otherwise). `b2nd_squeeze_index`. The view shares the chunks of
    /// `self`: writes through either are seen by both. As in the reference,
    /// dropping a dimension chunked by more than one item gives a view whose
    /// chunk accesses fail (`Failure`).
    pub fn squeeze_index(&self, index: &[bool]) -> Result<NdArray> {
        self.only_b2nd_meta("squeeze")?;
        if index.len() < self.ndim() {
            crate::bail!(InvalidParam, "index needs {} entries", self.ndim());
        }
        let (mut s, mut c, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.ndim() {
            if index[i] {
                if self.layout.shape[i] != 1 {
                    crate::bail!(
                        InvalidIndex,
                        "dimension {i} has extent {}, not 1",
                        self.layout.shape[i]
                    );
                }
            } else {
                s.push(self.layout.shape[i]);
                c.push(self.layout.chunkshape[i]);
                b.push(self.layout.blockshape[i]);
            }
        }
        self.view_as(s, c, b)
    }

    /// A view without any dimension of extent 1 (`b2nd_squeeze`).
    pub fn squeeze(&self) -> Result<NdArray> {
        let index: Vec<bool> = self.layout.shape.iter().map(|&s| s == 1).collect();
        self.squeeze_index(&index)
    }

    /// An independent in-memory array holding `self` without the unit
    /// dimensions flagged in `index`: the copying counterpart of
    /// [`NdArray::squeeze_index`] for callers that replace an array by its
    /// squeezed form (caterva's in-place squeeze). Unit dimensions chunked
    /// by more than one item are re-chunked, so this works where the view
    /// cannot.
    pub fn squeeze_index_copy(&self, index: &[bool]) -> Result<NdArray> {
        let view = self.squeeze_index(index)?;
        let ctx = view.like_context();
        let mut out = NdArray::empty(&ctx)?;
        out.fill_dropping(self, &index[..self.ndim()])?;
        for name in self.store.vlmeta_names() {
            if let Some(v) = self.store.vlmeta_get(&name) {
                out.store.vlmeta_add(&name, &v)?;
            }
        }
        Ok(out)
    }

    /// [`NdArray::squeeze_index_copy`] of every dimension of extent 1.
    pub fn squeeze_copy(&self) -> Result<NdArray> {
        let index: Vec<bool> = self.layout.shape.iter().map(|&s| s == 1).collect();
        self.squeeze_index_copy(&index)
    }

    /// A view with `axis.len()` dimensions: a unit dimension (chunk and block
    /// 1) where `axis` is true, the next dimension of `self` where it is
    /// false (`b2nd_expand_dims`). More false entries than `self` has
    /// dimensions is `InvalidParam`; fewer is accepted, as in the reference
    /// (the dimensions left out are dropped from the view's geometry).
    pub fn expand_dims(&self, axis: &[bool]) -> Result<NdArray> {
        self.only_b2nd_meta("expand")?;
        if axis.len() > MAX_DIM {
            crate::bail!(
                InvalidParam,
                "final ndim {} is larger than {MAX_DIM}",
                axis.len()
            );
        }
        let (mut s, mut c, mut b) = (Vec::new(), Vec::new(), Vec::new());
        let mut k = 0;
        for &new in axis {
            if new {
                s.push(1);
                c.push(1);
                b.push(1);
            } else {
                if k == self.ndim() {
                    crate::bail!(
                        InvalidParam,
                        "the axis list keeps more dimensions than the array's {}",
                        self.ndim()
                    );
                }
                s.push(self.layout.shape[k]);
                c.push(self.layout.chunkshape[k]);
                b.push(self.layout.blockshape[k]);
                k += 1;
            }
        }
        self.view_as(s, c, b)
    }

    /// Fills `self` (the squeezed shape) from `src`, whose dimensions flagged
    /// in `dropped` have extent 1.
    fn fill_dropping(&mut self, src: &NdArray, dropped: &[bool]) -> Result<()> {
        let same_bytes = (0..src.ndim()).all(|i| {
            !dropped[i] || (src.layout.chunkshape[i] == 1 && src.layout.blockshape[i] == 1)
        });
        if same_bytes {
            return self.copy_raw_chunks(src);
        }
        let l = self.layout.clone();
        for n in 0..l.nchunks() {
            let (cs, ce) = l.chunk_bounds(&l.chunk_coords(n));
            let (mut ss, mut se) = (Vec::new(), Vec::new());
            let mut k = 0;
            for &d in dropped {
                if d {
                    ss.push(0);
                    se.push(1);
                } else {
                    ss.push(cs[k]);
                    se.push(ce[k]);
                    k += 1;
                }
            }
            self.transfer_from(src, &ss, &se, &cs, &ce)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::ArrayStorage;
    use super::*;
    use crate::ndarray::NdMeta;

    fn naive_slice(data: &[u8], shape: &[i64], ts: usize, start: &[i64], stop: &[i64]) -> Vec<u8> {
        let strides = super::super::layout::c_strides(shape);
        let mut out = Vec::new();
        super::super::layout::for_each_index(start, stop, |idx| {
            let off = idx.iter().zip(&strides).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
            out.extend_from_slice(&data[off..off + ts]);
        });
        out
    }

    #[test]
    fn get_slice_and_copy_with_other_chunking() {
        let shape = [9i64, 4, 5];
        let data = pattern(180 * 4);
        let a = NdArray::from_cbuffer(&ctx(4, &shape, &[4, 3, 5], &[2, 2, 3]), &data).unwrap();
        let s = a
            .get_slice(
                &ctx(4, &[1, 1, 1], &[3, 2, 2], &[1, 2, 2]),
                &[2, 1, 1],
                &[8, 4, 4],
            )
            .unwrap();
        assert_eq!(s.shape(), &[6, 3, 3]);
        assert_eq!(
            s.to_vec().unwrap(),
            naive_slice(&data, &shape, 4, &[2, 1, 1], &[8, 4, 4])
        );
        let mut c = ctx(4, &shape, &[5, 4, 2], &[5, 1, 2]);
        c.dtype = "<f4".into();
        let b = a.copy(&c).unwrap();
        assert_eq!((b.chunkshape(), b.dtype()), (&[5, 4, 2][..], "<f4"));
        assert_eq!(b.to_vec().unwrap(), data);
        let same = a.copy(&a.like_context()).unwrap();
        assert_eq!(same.to_vec().unwrap(), data);
        // Past the end, the region reads as zeros (as in the reference);
        // a negative start or a start past the stop is still refused.
        let past = a
            .get_slice(&a.like_context(), &[0, 0, 0], &[10, 1, 1])
            .unwrap();
        assert_eq!(past.shape(), &[10, 1, 1]);
        let mut want = naive_slice(&data, &shape, 4, &[0, 0, 0], &[9, 1, 1]);
        want.extend([0u8; 4]);
        assert_eq!(past.to_vec().unwrap(), want);
        for (start, stop) in [([-1i64, 0, 0], [1i64, 1, 1]), ([2, 0, 0], [1, 1, 1])] {
            let e = a.get_slice(&a.like_context(), &start, &stop).unwrap_err();
            assert_eq!(e.code(), -12, "{start:?}..{stop:?}");
        }
    }

    #[test]
    fn get_slice_past_the_end_reads_zeros_there() {
        // 4x4 items 1..=16 in 2x2 chunks, sliced into chunks of 2x2 (the
        // reference's results for these regions).
        let data: Vec<u8> = (1..=16).collect();
        let a = NdArray::from_cbuffer(&ctx(1, &[4, 4], &[2, 2], &[1, 1]), &data).unwrap();
        let c = ctx(1, &[4, 4], &[2, 2], &[1, 1]);
        let cases: [([i64; 2], [i64; 2], &[u8]); 4] = [
            ([2, 2], [4, 6], &[11, 12, 0, 0, 15, 16, 0, 0]),
            ([2, 2], [6, 4], &[11, 12, 15, 16, 0, 0, 0, 0]),
            ([1, 4], [2, 5], &[0]),
            ([4, 0], [5, 2], &[0, 0]),
        ];
        for (start, stop, want) in cases {
            let s = a.get_slice(&c, &start, &stop).unwrap();
            let shape: Vec<i64> = (0..2).map(|i| stop[i] - start[i]).collect();
            assert_eq!(s.shape(), &shape[..]);
            assert_eq!(s.to_vec().unwrap(), want, "{start:?}..{stop:?}");
        }
        // A region wholly past the end along a dimension of the source
        // whose chunks differ from the slice's.
        let s = a
            .get_slice(&ctx(1, &[1, 1], &[1, 3], &[1, 2]), &[3, 4], &[4, 9])
            .unwrap();
        assert_eq!(s.to_vec().unwrap(), [0u8; 5]);
    }

    #[test]
    fn a_context_whose_own_shape_makes_no_array_still_slices() {
        // Shape {20, 10} with chunkshape {1, 0}: no array of that shape, but
        // a region with an empty last dimension can be made with it.
        let a = NdArray::zeros(&ctx(1, &[20, 10], &[7, 5], &[3, 5])).unwrap();
        let c = Context::unchecked(
            ArrayStorage::Decoded,
            1,
            &[20, 10],
            &[1, 0],
            &[1, 0],
            None,
            0,
            Vec::new(),
        );
        assert_eq!(c.check().unwrap_err().code(), -12);
        let s = a.get_slice(&c, &[17, 0], &[18, 0]).unwrap();
        assert_eq!(
            (s.shape(), s.chunkshape(), s.nitems()),
            (&[1, 0][..], &[1, 0][..], 0)
        );
        // Its own shape cannot make an array.
        assert_eq!(NdArray::empty(&c).unwrap_err().code(), -12);
        // A region that is not empty along the zero chunkshape cannot either.
        assert_eq!(a.get_slice(&c, &[17, 0], &[18, 1]).unwrap_err().code(), -12);
    }

    #[test]
    fn concatenation_aligned_and_not() {
        let d1 = pattern(4 * 3);
        let d2: Vec<u8> = pattern(6 * 3).iter().map(|x| x ^ 0xff).collect();
        for (rows1, cs) in [(4i64, 2i32), (4, 3)] {
            let c1 = ctx(1, &[rows1, 3], &[cs, 3], &[1, 3]);
            let a = NdArray::from_cbuffer(&c1, &d1).unwrap();
            let b = NdArray::from_cbuffer(&ctx(1, &[6, 3], &[cs, 3], &[1, 3]), &d2).unwrap();
            let j = NdArray::concatenate(&a.like_context(), &a, &b, 0).unwrap();
            assert_eq!(j.shape(), &[10, 3]);
            assert_eq!(j.to_vec().unwrap(), [&d1[..], &d2[..]].concat());
        }
        let a = NdArray::from_cbuffer(&ctx(1, &[4, 3], &[2, 2], &[1, 1]), &d1).unwrap();
        let b = NdArray::from_cbuffer(&ctx(1, &[4, 2], &[2, 2], &[1, 1]), &d2[..8]).unwrap();
        let j = NdArray::concatenate(&a.like_context(), &a, &b, 1).unwrap();
        let v = j.to_vec().unwrap();
        assert_eq!(&v[..5], [d1[0], d1[1], d1[2], d2[0], d2[1]]);
        assert_eq!(
            NdArray::concatenate(&a.like_context(), &a, &b, 0)
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(
            NdArray::concatenate(&a.like_context(), &a, &b, 2)
                .unwrap_err()
                .code(),
            -12
        );
    }

    #[test]
    fn squeeze_and_expand_dims_are_views_sharing_chunks() {
        let data = pattern(12);
        let mut a =
            NdArray::from_cbuffer(&ctx(1, &[1, 4, 1, 3], &[1, 2, 1, 3], &[1, 1, 1, 2]), &data)
                .unwrap();
        let mut s = a.squeeze().unwrap();
        assert_eq!((s.shape(), s.chunkshape()), (&[4i64, 3][..], &[2, 3][..]));
        assert!(s.is_view() && s.shares_chunks_with(&a) && !a.is_view());
        assert_eq!(s.to_vec().unwrap(), data);
        // The source keeps its geometry and metalayer; the view has its own.
        assert_eq!(a.shape(), &[1, 4, 1, 3]);
        let (m, _) = NdMeta::from_stored_bytes(&s.metalayer("b2nd").unwrap(), 1).unwrap();
        assert_eq!(m.shape, vec![4, 3]);
        // Writes through either side are seen by the other.
        a.set_slice_cbuffer(&[200, 201], &[1, 1, 1, 2], &[0, 3, 0, 1], &[1, 4, 1, 3])
            .unwrap();
        let mut two = [0u8; 2];
        s.get_slice_cbuffer(&[3, 1], &[4, 3], &mut two, &[1, 2])
            .unwrap();
        assert_eq!(two, [200, 201]);
        s.set_slice_cbuffer(&[7], &[1, 1], &[0, 0], &[1, 1])
            .unwrap();
        let mut one = [0u8; 1];
        a.get_slice_cbuffer(&[0, 0, 0, 0], &[1, 1, 1, 1], &mut one, &[1, 1, 1, 1])
            .unwrap();
        assert_eq!(one, [7]);
        // A view of a view, and one that outlives its source.
        let e = s.expand_dims(&[true, false, true, false]).unwrap();
        assert_eq!(e.shape(), &[1, 4, 1, 3]);
        drop(a);
        drop(s);
        let mut want = data.clone();
        want[0] = 7;
        want[10..12].copy_from_slice(&[200, 201]);
        assert_eq!(e.to_vec().unwrap(), want);
        // Views never change the chunk list; copies of them are plain arrays.
        let mut e2 = e.expand_dims(&[false, false, false, false]).unwrap();
        assert_eq!(e2.resize(&[1, 8, 1, 3], None).unwrap_err().code(), -1);
        let c = e2.copy(&e2.like_context()).unwrap();
        assert!(!c.is_view() && !c.shares_chunks_with(&e2));
        assert_eq!(c.to_vec().unwrap(), want);
    }

    #[test]
    fn views_follow_the_reference_on_odd_geometries() {
        let data = pattern(12);
        // Squeezing a unit dimension chunked by 3 describes chunks of
        // another size: the view is made, its chunk reads fail (-1).
        let b = NdArray::from_cbuffer(&ctx(1, &[1, 12], &[3, 5], &[2, 2]), &data).unwrap();
        let s = b.squeeze_index(&[true, false]).unwrap();
        assert_eq!((s.shape(), s.chunkshape()), (&[12i64][..], &[5][..]));
        assert_eq!(s.to_vec().unwrap_err().code(), -1);
        assert_eq!(b.squeeze_index(&[false, true]).unwrap_err().code(), -33);
        // The copying form re-chunks and stands alone.
        let c = b.squeeze_index_copy(&[true, false]).unwrap();
        assert!(!c.is_view() && !c.shares_chunks_with(&b));
        assert_eq!(
            (c.chunkshape(), c.to_vec().unwrap()),
            (&[5][..], data.clone())
        );
        assert_eq!(
            b.squeeze_index_copy(&[false, true]).unwrap_err().code(),
            -33
        );
        let a = NdArray::from_cbuffer(&ctx(1, &[1, 12], &[1, 5], &[1, 2]), &data).unwrap();
        let s = a.squeeze().unwrap();
        assert_eq!(s.to_vec().unwrap(), data);
        // More kept axes than dimensions is an error; fewer is accepted.
        assert_eq!(s.expand_dims(&[false, false]).unwrap_err().code(), -12);
        let all_new = s.expand_dims(&[true, true, true]).unwrap();
        assert_eq!(all_new.shape(), &[1, 1, 1]);
        assert_eq!(s.expand_dims(&[true; 17]).unwrap_err().code(), -12);
        let mut c = ctx(1, &[1, 2], &[1, 2], &[1, 2]);
        c.metalayers.push(("other".into(), vec![0]));
        let m = NdArray::zeros(&c).unwrap();
        assert_eq!(m.squeeze().unwrap_err().code(), -12);
        assert_eq!(
            m.expand_dims(&[true, false, false]).unwrap_err().code(),
            -12
        );
    }
}
