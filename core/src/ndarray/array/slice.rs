//! Reading and writing hyper-rectangular regions through C-order buffers.
//!
//! Only the chunks that intersect the region are touched. Reads decode, inside
//! each such chunk, only the blocks that intersect the region (a block skip
//! mask); writes decode a chunk only when the region covers it partially and
//! re-encode exactly the chunks they change. A whole chunk whose bytes, in
//! order, are the buffer's goes straight between the buffer and the
//! super-chunk, through no scratch.

use super::store::{ChunkStore, Encoded};
use super::{Context, Layout, NdArray};
use crate::chunk::BlockNeeds;
use crate::ndarray::copy_nd;
use crate::ndarray::Cell;
use crate::Result;

impl NdArray {
    /// Checks a region and a buffer against the array; returns the number of
    /// bytes the buffer shape spans.
    fn check_region(
        &self,
        start: &[i64],
        stop: &[i64],
        buffershape: &[i64],
        buflen: usize,
    ) -> Result<usize> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd || buffershape.len() != nd {
            crate::bail!(
                InvalidParam,
                "start, stop and buffershape need {nd} entries (got {}, {}, {})",
                start.len(),
                stop.len(),
                buffershape.len()
            );
        }
        let mut bufitems = 1i64;
        for i in 0..nd {
            if start[i] < 0 || start[i] > stop[i] || stop[i] > self.layout.shape[i] {
                crate::bail!(
                    InvalidParam,
                    "slice [{}, {}) out of range for dimension {i} of extent {}",
                    start[i],
                    stop[i],
                    self.layout.shape[i]
                );
            }
            if buffershape[i] < stop[i] - start[i] {
                crate::bail!(
                    InvalidParam,
                    "the buffer shape can not be smaller than the slice shape (dimension {i})"
                );
            }
            bufitems = bufitems
                .checked_mul(buffershape[i])
                .ok_or_else(|| crate::err!(InvalidParam, "buffer shape overflows"))?;
        }
        let need = bufitems
            .checked_mul(self.typesize() as i64)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| crate::err!(InvalidParam, "buffer shape overflows"))?;
        if buflen < need {
            crate::bail!(
                InvalidParam,
                "buffer of {buflen} bytes is smaller than its shape needs ({need})"
            );
        }
        Ok(need)
    }

    /// Copies the region [start, stop) into `buffer`, a C-order array of
    /// shape `buffershape` (the region lands at its origin; the rest of the
    /// spanned bytes are zeroed). `b2nd_get_slice_cbuffer`.
    pub fn get_slice_cbuffer(
        &self,
        start: &[i64],
        stop: &[i64],
        buffer: &mut [u8],
        buffershape: &[i64],
    ) -> Result<()> {
        let need = self.check_region(start, stop, buffershape, buffer.len())?;
        self.check_chunk_buffer()?;
        let buffer = &mut buffer[..need];
        // As the reference, a buffer larger than the region reads zeros
        // outside it; a buffer of the region's shape is written in full below.
        let exact = (0..self.ndim()).all(|i| buffershape[i] == stop[i] - start[i]);
        if !exact || self.ndim() == 0 {
            buffer.fill(0);
        }
        let ts = self.typesize() as usize;
        if self.ndim() == 0 {
            let mut item = crate::mem::zeroed(self.store.chunksize() as usize)?;
            self.store.read_chunk(0, &mut item, None)?;
            buffer[..ts].copy_from_slice(&item[..ts]);
            return Ok(());
        }
        let l = &self.layout;
        let nblocks = l.nblocks() as usize;
        let bbytes = l.blocknitems as usize * ts;
        let chunksize = self.store.chunksize() as usize;
        // A region inside one chunk is likely followed by more reads of that
        // chunk (item access, small windows): let the store keep it decoded.
        let one_chunk = (0..l.ndim()).all(|i| {
            let c = l.chunkshape[i].max(1) as i64;
            start[i] / c == (stop[i] - 1).max(start[i]) / c
        });
        // Chunks that go straight into the buffer need no scratch: a read
        // made of those only (a whole array of one chunk, say) has none.
        let scratch_len = if self.any_chunk_through_scratch(start, stop, buffershape)? {
            chunksize
        } else {
            0
        };
        // One closure around the whole walk, so that the walkers of chunks
        // and blocks share one frame: split, the frames took 4 KiB more of a
        // caller's stack, which may be 64 KiB (tests-c/test_small_stack.c).
        with_read_scratch(scratch_len, |scratch| {
            let mut need = BlockNeeds::none(nblocks);
            let chunk_grid = l.chunk_grid();
            let mut chunks = chunk_grid.walk(start, stop)?;
            while let Some(chunk) = chunks.next() {
                if let Some(at) = self.straight_at(chunk, buffershape, buffer.len()) {
                    // Its bytes are the buffer's there: decoded straight in,
                    // with no scratch and no copy.
                    let dst = &mut buffer[at..at + chunksize];
                    self.store.read_chunk(chunk.index(), dst, None)?;
                    continue;
                }
                let (cstart, cstop) = valid_box(chunk);
                need.clear();
                for_each_block(l, chunk, |nblock, b| {
                    let items = self.block_piece_items(b, cstart, &cstop, start, stop);
                    need.add(nblock, items.start * ts..items.end * ts);
                    Ok(())
                })?;
                // Only the bytes needed of each block are decoded into the
                // scratch, and only those are read back out of it below.
                if one_chunk {
                    self.store
                        .read_chunk_cached(chunk.index(), scratch, Some(&need))?;
                } else {
                    self.store.read_chunk(chunk.index(), scratch, Some(&need))?;
                }
                for_each_block(l, chunk, |nblock, b| {
                    let block = &scratch[nblock * bbytes..(nblock + 1) * bbytes];
                    self.copy_block_out(block, b, cstart, &cstop, start, stop, buffer, buffershape)
                })?;
            }
            Ok(())
        })
    }

    /// Whether a read of [start, stop) into a buffer of `buffershape` has a
    /// chunk that does not go straight into the buffer ([`Self::straight_at`]).
    /// Out of line: its walker's frame is gone before the read's own walk.
    #[inline(never)]
    fn any_chunk_through_scratch(
        &self,
        start: &[i64],
        stop: &[i64],
        buffershape: &[i64],
    ) -> Result<bool> {
        let buflen = buffershape.iter().product::<i64>() as usize * self.typesize() as usize;
        let chunk_grid = self.layout.chunk_grid();
        let mut chunks = chunk_grid.walk(start, stop)?;
        while let Some(chunk) = chunks.next() {
            if self.straight_at(chunk, buffershape, buflen).is_none() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// [`Self::whole_chunk_at`] for a buffer of `buflen` bytes: the offset
    /// when the whole chunk fits there.
    #[inline(never)]
    fn straight_at(&self, chunk: &Cell, buffershape: &[i64], buflen: usize) -> Option<usize> {
        let at = self.whole_chunk_at(chunk, buffershape)?;
        let end = at.checked_add(self.store.chunksize() as usize)?;
        (end <= buflen).then_some(at)
    }

    /// Where `chunk` (a cell of a walk over a region) lands in a C-order
    /// buffer of shape `buffershape` holding the region at its origin, as a
    /// byte offset, when the chunk's decoded bytes are exactly the buffer's
    /// bytes from there: then it can be decoded straight into the buffer, as
    /// the reference does for a slice that is one such chunk. That takes
    /// (1) a chunk the region covers whole, and not an edge chunk (whose
    /// decoded form has padding); (2) blocks that tile the chunk in C order:
    /// of shape (1, .., 1, b, c[k+1], .., c[n-1]) for a chunk shape c, with
    /// b dividing c[k]; (3) a chunk whose rows are whole rows of the buffer:
    /// past its first dimension of more than one item, its extent is the
    /// buffer's.
    fn whole_chunk_at(&self, chunk: &Cell, buffershape: &[i64]) -> Option<usize> {
        let l = &self.layout;
        let nd = l.ndim();
        let cshape = |i: usize| i64::from(l.chunkshape[i]);
        let bshape = |i: usize| i64::from(l.blockshape[i]);
        if !chunk.is_full() || (0..nd).any(|i| chunk.valid_shape()[i] != cshape(i)) {
            return None;
        }
        let k = (0..nd).find(|&i| bshape(i) != 1).unwrap_or(nd - 1);
        if cshape(k).checked_rem(bshape(k)) != Some(0)
            || (k + 1..nd).any(|i| bshape(i) != cshape(i))
        {
            return None;
        }
        let j = (0..nd).find(|&i| cshape(i) > 1).unwrap_or(nd - 1);
        if (j + 1..nd).any(|i| cshape(i) != buffershape[i]) {
            return None;
        }
        let mut at = 0i64;
        for (i, &o) in chunk.offset().iter().enumerate() {
            at = at * buffershape[i] + o;
        }
        usize::try_from(at)
            .ok()
            .map(|a| a * self.typesize() as usize)
    }

    /// Writes `buffer` (a C-order array of shape `buffershape`, whose origin
    /// holds the data) into the region [start, stop). `b2nd_set_slice_cbuffer`.
    /// Under the frame's exclusive lock when it locks: locking readers see
    /// the whole write or none of it.
    pub fn set_slice_cbuffer(
        &mut self,
        buffer: &[u8],
        buffershape: &[i64],
        start: &[i64],
        stop: &[i64],
    ) -> Result<()> {
        self.exclusively(|a| {
            let chunks = a.encode_slice_cbuffer(buffer, buffershape, start, stop)?;
            a.publish(chunks)
        })
    }

    /// The chunks [`NdArray::set_slice_cbuffer`] stores, encoded through
    /// `&self`: the codecs and prefilters encoding runs may read the array
    /// meanwhile (the C layer's write intent). [`NdArray::publish`] stores
    /// them; a write in between would be lost, so the caller keeps other
    /// writers out until then.
    pub fn encode_slice_cbuffer(
        &self,
        buffer: &[u8],
        buffershape: &[i64],
        start: &[i64],
        stop: &[i64],
    ) -> Result<Encoded> {
        let need = self.check_region(start, stop, buffershape, buffer.len())?;
        self.check_chunk_buffer()?;
        let buffer = &buffer[..need];
        let ts = self.typesize() as usize;
        let chunksize = self.store.chunksize() as usize;
        if self.ndim() == 0 {
            let mut item = crate::mem::zeroed(chunksize)?;
            item[..ts].copy_from_slice(&buffer[..ts]);
            return Ok(vec![(0, self.store.encode_chunk(0, &item)?)]);
        }
        let l = self.layout.clone();
        let bbytes = l.blocknitems as usize * ts;
        // Had at the first chunk that needs it: none may (see below).
        let mut scratch = Vec::new();
        let mut encoded = Vec::new();
        let chunk_grid = l.chunk_grid();
        let mut chunks = chunk_grid.walk(start, stop)?;
        while let Some(chunk) = chunks.next() {
            let nchunk = chunk.index();
            if let Some(at) = self.straight_at(chunk, buffershape, buffer.len()) {
                // The buffer holds the chunk's bytes as they are encoded.
                let chunk = self
                    .store
                    .encode_chunk(nchunk, &buffer[at..at + chunksize])?;
                encoded.push((nchunk, chunk));
                continue;
            }
            if scratch.is_empty() {
                scratch = crate::mem::zeroed(chunksize)?;
            }
            let (cstart, cstop) = valid_box(chunk);
            if chunk.is_full() {
                // Padding must be zeros, as the reference writes it; a chunk
                // without padding is overwritten in full below.
                let padded = (0..l.ndim()).any(|i| chunk.valid_shape()[i] != l.extchunkshape[i]);
                if padded {
                    scratch.fill(0);
                }
            } else {
                self.store.read_chunk(nchunk, &mut scratch, None)?;
            }
            for_each_block(&l, chunk, |nblock, b| {
                let block = &mut scratch[nblock * bbytes..(nblock + 1) * bbytes];
                self.copy_block_in(block, b, cstart, &cstop, start, stop, buffer, buffershape)
            })?;
            encoded.push((nchunk, self.store.encode_chunk(nchunk, &scratch)?));
        }
        Ok(encoded)
    }

    /// The part of block `b` of a chunk that lies in the region: its
    /// [start, stop) in block-local coordinates and its offset in the region.
    fn block_piece(
        &self,
        b: &[i64],
        cstart: &[i64],
        cstop: &[i64],
        start: &[i64],
        stop: &[i64],
    ) -> [Vec<i64>; 3] {
        let nd = self.ndim();
        let (mut s, mut e, mut off) = (vec![0; nd], vec![0; nd], vec![0; nd]);
        for i in 0..nd {
            let (bstart, from, to) = self.block_overlap(i, b, cstart, cstop, start, stop);
            s[i] = from - bstart;
            e[i] = to.max(from) - bstart;
            off[i] = from - start[i];
        }
        [s, e, off]
    }

    /// The items of block `b` of a chunk (C order within the block) from the
    /// first to the last that lie in the region: what a read of the region
    /// needs of the block. Empty when none does.
    fn block_piece_items(
        &self,
        b: &[i64],
        cstart: &[i64],
        cstop: &[i64],
        start: &[i64],
        stop: &[i64],
    ) -> std::ops::Range<usize> {
        let (mut first, mut last, mut stride) = (0i64, 0i64, 1i64);
        for i in (0..self.ndim()).rev() {
            let (bstart, from, to) = self.block_overlap(i, b, cstart, cstop, start, stop);
            if to <= from {
                return 0..0;
            }
            first += (from - bstart) * stride;
            last += (to - 1 - bstart) * stride;
            stride *= self.layout.blockshape[i] as i64;
        }
        first as usize..last as usize + 1
    }

    /// Along dimension `i`, in array coordinates: where block `b` of a
    /// chunk starts, and the part [from, to) of the region [start, stop)
    /// that the block holds (none when `to <= from`).
    fn block_overlap(
        &self,
        i: usize,
        b: &[i64],
        cstart: &[i64],
        cstop: &[i64],
        start: &[i64],
        stop: &[i64],
    ) -> (i64, i64, i64) {
        let bs = self.layout.blockshape[i] as i64;
        let bstart = cstart[i] + b[i] * bs;
        let bstop = (bstart + bs).min(cstop[i]);
        (bstart, start[i].max(bstart), stop[i].min(bstop))
    }

    #[allow(clippy::too_many_arguments)]
    fn copy_block_out(
        &self,
        block: &[u8],
        b: &[i64],
        cstart: &[i64],
        cstop: &[i64],
        start: &[i64],
        stop: &[i64],
        buffer: &mut [u8],
        buffershape: &[i64],
    ) -> Result<()> {
        let [s, e, off] = self.block_piece(b, cstart, cstop, start, stop);
        let bshape: Vec<i64> = self.layout.blockshape.iter().map(|&x| x as i64).collect();
        copy_nd(
            self.typesize() as usize,
            block,
            &bshape,
            &s,
            &e,
            buffer,
            buffershape,
            &off,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn copy_block_in(
        &self,
        block: &mut [u8],
        b: &[i64],
        cstart: &[i64],
        cstop: &[i64],
        start: &[i64],
        stop: &[i64],
        buffer: &[u8],
        buffershape: &[i64],
    ) -> Result<()> {
        let [s, e, off] = self.block_piece(b, cstart, cstop, start, stop);
        let bshape: Vec<i64> = self.layout.blockshape.iter().map(|&x| x as i64).collect();
        let src_stop: Vec<i64> = off
            .iter()
            .zip(s.iter().zip(&e))
            .map(|(&o, (&a, &z))| o + z - a)
            .collect();
        copy_nd(
            self.typesize() as usize,
            buffer,
            buffershape,
            &off,
            &src_stop,
            block,
            &bshape,
            &s,
        )
    }

    /// Indices (C order) of the chunks that hold part of the region
    /// [start, stop) (`b2nd_get_slice_nchunks`).
    pub fn get_slice_nchunks(&self, start: &[i64], stop: &[i64]) -> Result<Vec<i64>> {
        let extent: Vec<i64> = start
            .iter()
            .zip(stop)
            .map(|(a, b)| (b - a).max(0))
            .collect();
        // The region is checked as if read into a buffer of its own extent.
        self.check_region(start, stop, &extent, usize::MAX)?;
        Ok(self.layout.chunks_in_region(start, stop))
    }

    /// Copies the whole array into `buffer` in C order (`b2nd_to_cbuffer`).
    pub fn to_cbuffer(&self, buffer: &mut [u8]) -> Result<()> {
        if (buffer.len() as u64) < self.nbytes() as u64 {
            crate::bail!(
                InvalidParam,
                "buffer of {} bytes is smaller than the array ({})",
                buffer.len(),
                self.nbytes()
            );
        }
        if self.nitems() == 0 {
            return Ok(());
        }
        let start = vec![0; self.ndim()];
        let shape = self.layout.shape.clone();
        self.get_slice_cbuffer(&start, &shape, buffer, &shape)
    }

    /// The whole array as a C-order byte vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let n = usize::try_from(self.nbytes())
            .map_err(|_| crate::err!(MemoryAlloc, "array too large"))?;
        let mut v = crate::mem::zeroed(n)?;
        self.to_cbuffer(&mut v)?;
        Ok(v)
    }

    /// A new array holding `buffer` (C order, `nitems * typesize` bytes at
    /// least) with the geometry of `ctx` (`b2nd_from_cbuffer`). The buffer
    /// size is checked before the array is created.
    pub fn from_cbuffer(ctx: &Context, buffer: &[u8]) -> Result<NdArray> {
        let layout = ctx.validate()?;
        let need = layout.nitems as u64 * ctx.typesize as u64;
        if (buffer.len() as u64) < need {
            crate::bail!(
                InvalidParam,
                "the buffer size ({}) is smaller than the array size ({need})",
                buffer.len()
            );
        }
        let mut a = NdArray::empty(ctx)?;
        if a.nitems() == 0 {
            return Ok(a);
        }
        let start = vec![0; a.ndim()];
        let shape = a.layout.shape.clone();
        a.set_slice_cbuffer(buffer, &shape, &start, &shape)?;
        Ok(a)
    }
}

/// Calls `f(nblock, block_coords)` for every block of `chunk` (a cell of
/// the chunk grid) that the walked region touches, in C order.
fn for_each_block(
    l: &Layout,
    chunk: &Cell,
    mut f: impl FnMut(usize, &[i64]) -> Result<()>,
) -> Result<()> {
    let grid = l.block_grid(chunk.valid_shape());
    let mut blocks = grid.walk(chunk.start(), chunk.stop())?;
    while let Some(b) = blocks.next() {
        // index < nblocks: the block grid numbers the padded chunk.
        f(b.index() as usize, b.coords())?;
    }
    Ok(())
}

/// Array-space [start, stop) of the valid part of a chunk cell.
fn valid_box(chunk: &Cell) -> (&[i64], Vec<i64>) {
    let origin = chunk.origin();
    let stop = origin
        .iter()
        .zip(chunk.valid_shape())
        .map(|(o, v)| o + v)
        .collect();
    (origin, stop)
}

#[cfg(test)]
mod tests {
    use super::super::layout::for_each_index;
    use super::super::testutil::*;
    use super::super::ArrayStorage;
    use super::*;

    /// Naive slice of a dense C-order buffer.
    fn naive(src: &[u8], shape: &[i64], ts: usize, start: &[i64], stop: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        let strides = super::super::layout::c_strides(shape);
        for_each_index(start, stop, |idx| {
            let off = idx.iter().zip(&strides).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
            out.extend_from_slice(&src[off..off + ts]);
        });
        out
    }

    #[test]
    fn slices_round_trip_against_naive() {
        for ts in [1usize, 2, 4, 8, 13] {
            let shape = [7i64, 9, 5];
            let c = ctx(ts as i32, &shape, &[3, 4, 5], &[2, 3, 2]);
            let data = pattern(7 * 9 * 5 * ts);
            let a = NdArray::from_cbuffer(&c, &data).unwrap();
            assert_eq!(a.to_vec().unwrap(), data);
            let (start, stop) = ([1i64, 2, 0], [6i64, 9, 3]);
            let want = naive(&data, &shape, ts, &start, &stop);
            let mut got = vec![0u8; want.len()];
            a.get_slice_cbuffer(&start, &stop, &mut got, &[5, 7, 3])
                .unwrap();
            assert_eq!(got, want, "ts {ts}");
        }
    }

    #[test]
    fn reads_decode_only_intersecting_blocks_and_writes_only_touched_chunks() {
        let c = ctx(1, &[8, 8], &[4, 4], &[2, 2]);
        let mut a = NdArray::from_cbuffer(&c, &pattern(64)).unwrap();
        let before = stats(&a);
        let mut out = [0u8; 1];
        a.get_slice_cbuffer(&[5, 6], &[6, 7], &mut out, &[1, 1])
            .unwrap();
        let after = stats(&a);
        assert_eq!(after.chunks_read - before.chunks_read, 1);
        assert_eq!(after.blocks_decoded - before.blocks_decoded, 1);
        // Full-chunk overwrite: no decoding; partial: decode; one chunk each.
        let before = stats(&a);
        a.set_slice_cbuffer(&[9; 16], &[4, 4], &[4, 0], &[8, 4])
            .unwrap();
        let mid = stats(&a);
        assert_eq!(
            (
                mid.chunks_read - before.chunks_read,
                mid.chunks_written - before.chunks_written
            ),
            (0, 1)
        );
        a.set_slice_cbuffer(&[7; 4], &[2, 2], &[3, 3], &[5, 5])
            .unwrap();
        let end = stats(&a);
        assert_eq!(
            (
                end.chunks_read - mid.chunks_read,
                end.chunks_written - mid.chunks_written
            ),
            (4, 4)
        );
        let mut want = pattern(64);
        for r in 4..8 {
            for c in 0..4 {
                want[r * 8 + c] = 9;
            }
        }
        for r in 3..5 {
            for c in 3..5 {
                want[r * 8 + c] = 7;
            }
        }
        assert_eq!(a.to_vec().unwrap(), want);
    }

    /// Which chunks a read decodes straight into the buffer and a write
    /// encodes straight from it (the whole ones whose bytes are the
    /// buffer's), and that either way reads give the same bytes as the
    /// naive slice, in memory and in a real super-chunk, into buffers of
    /// the region's shape and larger, and writes change just the region.
    #[test]
    fn whole_chunks_in_buffer_order_go_straight_in_and_out() {
        type Case = (
            &'static [i64],
            &'static [i32],
            &'static [i32],
            [i64; 3],
            [i64; 3],
        );
        // shape, chunkshape, blockshape, start, stop (the unused tail of
        // start and stop is ignored), and the chunks expected straight in.
        let cases: [(Case, &[i64]); 10] = [
            // 1-D: every whole chunk, not the edge one (padded).
            ((&[47], &[10], &[5], [0, 0, 0], [47, 0, 0]), &[0, 1, 2, 3]),
            ((&[47], &[10], &[3], [0, 0, 0], [47, 0, 0]), &[]), // 3 does not divide 10
            ((&[47], &[10], &[5], [5, 0, 0], [40, 0, 0]), &[1, 2, 3]),
            // 2-D, chunks of whole rows: blocks (1, 8), (2, 8), (4, 8).
            (
                (&[12, 8], &[4, 8], &[1, 8], [0, 0, 0], [12, 8, 0]),
                &[0, 1, 2],
            ),
            ((&[12, 8], &[4, 8], &[2, 8], [4, 0, 0], [12, 8, 0]), &[1, 2]),
            ((&[10, 8], &[4, 8], &[2, 8], [0, 0, 0], [10, 8, 0]), &[0, 1]), // chunk 2 padded
            // Blocks (2, 4) of chunks (4, 8) are not in C order.
            ((&[12, 8], &[4, 8], &[2, 4], [0, 0, 0], [12, 8, 0]), &[]),
            // Chunks of half rows are not whole rows of the buffer, and a
            // region of half rows covers no chunk whole.
            ((&[12, 8], &[4, 4], &[1, 4], [0, 0, 0], [12, 8, 0]), &[]),
            ((&[12, 8], &[4, 8], &[1, 8], [0, 0, 0], [12, 4, 0]), &[]),
            // 3-D: (1, 1, 6) chunks in a (4, 3, 6) region; blocks (1, 1, 2).
            (
                (&[4, 5, 6], &[1, 1, 6], &[1, 1, 2], [0, 1, 0], [4, 4, 6]),
                &[1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18],
            ),
        ];
        for ((shape, cs, bs, start, stop), want_whole) in cases {
            let nd = shape.len();
            let (start, stop) = (&start[..nd], &stop[..nd]);
            let ts = 2usize;
            let nitems: i64 = shape.iter().product();
            let data = pattern(nitems as usize * ts);
            let region: Vec<i64> = (0..nd).map(|i| stop[i] - start[i]).collect();
            let c = ctx(ts as i32, shape, cs, bs);
            let mem = NdArray::from_cbuffer(&c, &data).unwrap();
            let real = Context {
                storage: ArrayStorage::Schunk(crate::schunk::Storage::default()),
                ..c.clone()
            };
            let real = NdArray::from_cbuffer(&real, &data).unwrap();
            let grid = mem.layout.chunk_grid();
            let mut walk = grid.walk(start, stop).unwrap();
            let mut whole = Vec::new();
            while let Some(chunk) = walk.next() {
                if mem.whole_chunk_at(chunk, &region).is_some() {
                    whole.push(chunk.index());
                }
            }
            assert_eq!(
                whole, want_whole,
                "{shape:?} {cs:?} {bs:?} {start:?}..{stop:?}"
            );
            let want = naive(&data, shape, ts, start, stop);
            for a in [&mem, &real] {
                let mut got = vec![0xa5u8; want.len()];
                a.get_slice_cbuffer(start, stop, &mut got, &region).unwrap();
                assert_eq!(got, want, "{shape:?} {cs:?} {bs:?}");
                // Buffers one item wider in the last dimension and three
                // taller in the first: the region at their origin, zeros
                // around it. Chunks of one row (the 1-D and 3-D cases) still
                // go straight into the wider one; the taller one has room
                // past the region, where an edge chunk's padding would land.
                for (dim, more) in [(nd - 1, 1), (0, 3)] {
                    let mut big = region.clone();
                    big[dim] += more;
                    let mut got = vec![0xa5u8; big.iter().product::<i64>() as usize * ts];
                    a.get_slice_cbuffer(start, stop, &mut got, &big).unwrap();
                    let mut expect = vec![0u8; got.len()];
                    let row = region[nd - 1] as usize * ts;
                    for (r, w) in want.chunks(row).enumerate() {
                        let at = r * big[nd - 1] as usize * ts;
                        expect[at..at + row].copy_from_slice(w);
                    }
                    assert_eq!(got, expect, "{shape:?} {cs:?} {bs:?} buffer {big:?}");
                }
            }
            assert_eq!(real.to_vec().unwrap(), data);
            // Writes take the same chunks straight from the buffer: the
            // region written into arrays of zeros, the rest left zero.
            let region_data = pattern(want.len())
                .iter()
                .map(|b| b ^ 0x5a)
                .collect::<Vec<_>>();
            let mut expect = vec![0u8; data.len()];
            let strides = super::super::layout::c_strides(shape);
            let mut k = 0;
            for_each_index(start, stop, |idx| {
                let off = idx.iter().zip(&strides).map(|(a, b)| a * b).sum::<i64>() as usize * ts;
                expect[off..off + ts].copy_from_slice(&region_data[k..k + ts]);
                k += ts;
            });
            for storage in [
                ArrayStorage::Decoded,
                ArrayStorage::Schunk(Default::default()),
            ] {
                let c = Context {
                    storage,
                    ..c.clone()
                };
                let mut a = NdArray::zeros(&c).unwrap();
                a.set_slice_cbuffer(&region_data, &region, start, stop)
                    .unwrap();
                assert_eq!(
                    a.to_vec().unwrap(),
                    expect,
                    "{shape:?} {cs:?} {bs:?} written"
                );
            }
        }
    }

    /// A read whose chunk is over the cap gets a buffer of its own, so the
    /// thread keeps no more than the cap (the ndarray_edit fuzz body read an
    /// item of a chunk padded to 1.25 GiB by its block shape, and the thread
    /// kept all of it); smaller ones keep theirs for the next read.
    #[test]
    fn a_huge_chunk_leaves_no_huge_scratch_behind() {
        let kept = || READ_SCRATCH.with(|c| c.borrow().len());
        for len in [4096, KEEP_READ_SCRATCH + 1, 100] {
            with_read_scratch(len, |s| {
                assert_eq!(s.len(), len);
                Ok(())
            })
            .unwrap();
            assert_eq!(kept(), 4096, "after a read of {len} bytes");
        }
    }

    fn stats(a: &NdArray) -> super::super::store::Stats {
        a.store.test_stats()
    }

    #[test]
    fn slice_chunk_indices() {
        let a = NdArray::zeros(&ctx(1, &[10, 7], &[4, 3], &[2, 3])).unwrap();
        assert_eq!(
            a.get_slice_nchunks(&[3, 2], &[5, 4]).unwrap(),
            vec![0, 1, 3, 4]
        );
        assert_eq!(a.get_slice_nchunks(&[8, 6], &[10, 7]).unwrap(), vec![8]);
        assert_eq!(
            a.get_slice_nchunks(&[2, 2], &[2, 5]).unwrap(),
            Vec::<i64>::new()
        );
        assert_eq!(
            a.get_slice_nchunks(&[0, 0], &[11, 1]).unwrap_err().code(),
            -12
        );
    }

    #[test]
    fn bad_regions_and_buffers_fail() {
        let c = ctx(2, &[4, 4], &[2, 2], &[1, 2]);
        let mut a = NdArray::zeros(&c).unwrap();
        let mut buf = vec![0u8; 32];
        assert_eq!(
            a.get_slice_cbuffer(&[0, 0], &[5, 4], &mut buf, &[5, 4])
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(
            a.get_slice_cbuffer(&[2, 0], &[1, 4], &mut buf, &[4, 4])
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(
            a.get_slice_cbuffer(&[0, 0], &[4, 4], &mut buf, &[3, 4])
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(
            a.get_slice_cbuffer(&[0, 0], &[4, 4], &mut buf[..31], &[4, 4])
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(
            a.set_slice_cbuffer(&buf[..8], &[2, 2], &[0], &[2])
                .unwrap_err()
                .code(),
            -12
        );
        assert_eq!(a.to_cbuffer(&mut buf[..10]).unwrap_err().code(), -12);
        assert_eq!(
            NdArray::from_cbuffer(&c, &buf[..31]).unwrap_err().code(),
            -12
        );
    }

    #[test]
    fn scalars_and_empty_arrays() {
        let c = ctx(8, &[], &[], &[]);
        let mut a = NdArray::from_cbuffer(&c, &1.5f64.to_le_bytes()).unwrap();
        assert_eq!(a.to_vec().unwrap(), 1.5f64.to_le_bytes());
        a.set_slice_cbuffer(&2.5f64.to_le_bytes(), &[], &[], &[])
            .unwrap();
        assert_eq!(a.to_vec().unwrap(), 2.5f64.to_le_bytes());
        let e = NdArray::from_cbuffer(&ctx(4, &[3, 0, 2], &[2, 1, 2], &[1, 1, 1]), &[]).unwrap();
        assert_eq!(
            (e.nitems(), e.nchunks(), e.to_vec().unwrap().len()),
            (0, 0, 0)
        );
    }
}

thread_local! {
    /// A chunk-sized buffer kept per thread for slice reads: allocating and
    /// zeroing a whole padded chunk per call cost more than decoding the few
    /// blocks a small slice needs.
    static READ_SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Largest scratch a thread keeps between slice reads. A chunk can be up to
/// 2 GiB (a block shape larger than the chunk shape pads it), and a kept
/// buffer lives as long as its thread: one read of such a chunk would pin
/// that much memory in every thread that made one.
const KEEP_READ_SCRATCH: usize = 64 << 20;

/// Runs `f` with `len` bytes of this thread's reusable scratch (contents
/// unspecified). A nested call (e.g. from a postfilter), one from the
/// thread's exit handlers (see [`crate::scratch::with_kept`]) or one for more
/// than [`KEEP_READ_SCRATCH`] bytes gets a buffer of its own.
fn with_read_scratch<T>(len: usize, f: impl FnOnce(&mut [u8]) -> Result<T>) -> Result<T> {
    if len > KEEP_READ_SCRATCH {
        return f(&mut crate::mem::zeroed(len)?);
    }
    crate::scratch::try_with_kept_bytes(&READ_SCRATCH, len, f)
}
