//! Shape changes: resize (grow or shrink along any axis at a position),
//! insert, append and delete.
//!
//! As in the reference, growing inserts zero chunks and shrinking deletes
//! whole chunks; data is never moved, which is why a change away from the
//! array's end must be a whole number of chunks at a chunk boundary. Every
//! check runs before the first chunk is touched, and the "b2nd" metalayer is
//! rewritten in place once the chunks are in place. Each call is one edit
//! scope (`NdArray::exclusively`): a file array publishes its chunks and
//! metalayer together.

use super::layout::Layout;
use super::store::{ChunkStore, Encoded, Fill};
use super::NdArray;

/// Where an insert or append puts its data once room is made (see
/// [`NdArray::make_room`]).
#[derive(Debug)]
pub enum Growth {
    /// One new chunk at the end, whole.
    Chunk,
    /// The region [start, stop), of shape `bufshape`, made of zeros.
    Room {
        /// Items per dimension of the data going in.
        bufshape: Vec<i64>,
        /// The region's first item in each dimension.
        start: Vec<i64>,
        /// One past the region's last item in each dimension.
        stop: Vec<i64>,
    },
}
use crate::Result;

impl NdArray {
    /// Changes the shape (`b2nd_resize`). With `start`, items are added or
    /// removed at that position in each dimension that changes; without it,
    /// at the end. Away from the end, `start` and the change must be
    /// multiples of the chunkshape. Under the frame's exclusive lock when
    /// it locks: locking readers see the old shape and chunks or the new.
    pub fn resize(&mut self, new_shape: &[i64], start: Option<&[i64]>) -> Result<()> {
        self.refuse_view("resize")?;
        self.exclusively(|a| a.resize_in(new_shape, start))
    }

    /// The work of [`NdArray::resize`].
    fn resize_in(&mut self, new_shape: &[i64], start: Option<&[i64]>) -> Result<()> {
        let nd = self.ndim();
        if new_shape.len() != nd || start.is_some_and(|s| s.len() != nd) {
            crate::bail!(InvalidParam, "new_shape and start need {nd} entries");
        }
        let old = self.layout.clone();
        if let Some(start) = start {
            for i in 0..nd {
                let (s, n, o, c) = (
                    start[i],
                    new_shape[i],
                    old.shape[i],
                    old.chunkshape[i] as i64,
                );
                if s < 0 || s > o {
                    crate::bail!(InvalidParam, "start[{i}] ({s}) must be within [0, {o}]");
                }
                if n < o && s + (o - n) > o {
                    crate::bail!(
                        InvalidParam,
                        "cannot remove {} items from position {s} of dimension {i}",
                        o - n
                    );
                }
                let at_end = if n > o {
                    s == o
                } else {
                    n == o || s + (o - n) == o
                };
                if !at_end {
                    if c == 0 || s % c != 0 {
                        crate::bail!(
                            InvalidParam,
                            "if the array end is not being modified `start` must be a multiple of chunkshape (dimension {i})"
                        );
                    }
                    if (n - o) % c != 0 {
                        crate::bail!(
                            InvalidParam,
                            "if the array end is not being modified `new_shape - shape` must be a multiple of chunkshape (dimension {i})"
                        );
                    }
                }
            }
        }
        // Validate both target geometries before touching any chunk.
        let shrunk_shape: Vec<i64> = (0..nd).map(|i| new_shape[i].min(old.shape[i])).collect();
        let shrunk = Layout::new(&shrunk_shape, &old.chunkshape, &old.blockshape)?;
        let grown = Layout::new(new_shape, &old.chunkshape, &old.blockshape)?;
        grown.chunk_nbytes(self.typesize())?;

        // Shrink: delete, from the last, the old chunks that start inside a
        // removed range.
        let del_start: Vec<i64> = start
            .map(<[i64]>::to_vec)
            .unwrap_or_else(|| shrunk_shape.clone());
        let mut doomed = Vec::new();
        if shrunk_shape != old.shape && old.nchunks() > 0 {
            let removed: Vec<i64> = (0..nd).map(|j| old.shape[j] - shrunk_shape[j]).collect();
            doomed = chunks_starting_in(&old, &del_start, &removed);
        }
        // Grow: insert zero chunks at the new-grid positions that start
        // inside an added range.
        let ins_start: Vec<i64> = start
            .map(<[i64]>::to_vec)
            .unwrap_or_else(|| shrunk_shape.clone());
        let mut fresh = Vec::new();
        if grown.shape != shrunk.shape && grown.nchunks() != shrunk.nchunks() {
            let added: Vec<i64> = (0..nd).map(|j| grown.shape[j] - shrunk.shape[j]).collect();
            fresh = chunks_starting_in(&grown, &ins_start, &added);
        }
        let expected = self.store.nchunks() - doomed.len() as i64 + fresh.len() as i64;
        if expected != grown.nchunks() {
            crate::bail!(
                Failure,
                "resize bookkeeping: {} chunks would remain, the new shape needs {}",
                expected,
                grown.nchunks()
            );
        }
        // Deleted from the last, so each position still names its chunk.
        doomed.reverse();
        self.store.delete_chunks(&doomed)?;
        self.store.insert_fills(&fresh, &Fill::Zero)?;
        self.layout = grown;
        self.publish_meta()
    }

    /// Inserts `buffer` (whole slabs along `axis`, C order) at position
    /// `insert_start` of `axis` (`b2nd_insert`).
    /// Room and data are one edit scope: a file holds the array before or
    /// after, never the room without the data.
    pub fn insert(&mut self, buffer: &[u8], axis: usize, insert_start: i64) -> Result<()> {
        self.exclusively(|a| {
            let growth = a.make_room(buffer.len(), axis, Some(insert_start))?;
            let chunks = a.encode_growth(buffer, &growth)?;
            a.publish_growth(&growth, chunks)
        })
    }

    /// Appends `buffer` at the end of `axis` (`b2nd_append`). A buffer that
    /// is exactly one chunk, on axis 0 of an array whose chunks are laid out
    /// as plain C order, is appended as one chunk without re-slicing.
    /// One edit scope, as [`NdArray::insert`].
    pub fn append(&mut self, buffer: &[u8], axis: usize) -> Result<()> {
        self.exclusively(|a| {
            let growth = a.make_room(buffer.len(), axis, None)?;
            let chunks = a.encode_growth(buffer, &growth)?;
            a.publish_growth(&growth, chunks)
        })
    }

    /// The first step of an insert (at `Some(position)` of `axis`) or an
    /// append (`None`) of `nbytes`: checks them and makes room for them
    /// (zeros), unless they go in as one new chunk. The C layer runs the
    /// next step, [`NdArray::encode_growth`], with the array sealed, so that
    /// its callbacks may read the array as this step left it.
    pub fn make_room(
        &mut self,
        nbytes: usize,
        axis: usize,
        at: Option<i64>,
    ) -> Result<Growth> {
        let what = if at.is_some() {
            "insert into"
        } else {
            "append to"
        };
        self.refuse_view(what)?;
        // No chunk of an array opened with oversized chunks fits (see
        // `NdArray::described_geometry`), as in `resize`.
        self.layout.chunk_nbytes(self.typesize())?;
        let l = &self.layout;
        let nd = l.ndim();
        if at.is_none() {
            let whole_chunk = axis == 0
                && nd > 0
                && nbytes as i64 == self.store.chunksize() as i64
                && l.chunkshape[0] > 0
                && l.shape[0] % l.chunkshape[0] as i64 == 0
                && l.chunkshape[0] % l.blockshape[0] == 0
                && (1..nd).all(|i| {
                    l.chunkshape[i] == l.blockshape[i] && l.shape[i] == l.chunkshape[i] as i64
                });
            if whole_chunk {
                return Ok(Growth::Chunk);
            }
        }
        if axis >= nd {
            crate::bail!(
                InvalidParam,
                "`axis` ({axis}) cannot be greater than the number of dimensions ({nd})"
            );
        }
        let shape = l.shape.clone();
        let extent = shape[axis];
        let insert_start = at.unwrap_or(extent);
        if insert_start < 0 || insert_start > shape[axis] {
            crate::bail!(
                InvalidParam,
                "insert position {insert_start} outside [0, {}]",
                shape[axis]
            );
        }
        let slab = (0..nd)
            .filter(|&i| i != axis)
            .try_fold(self.typesize() as i64, |acc, i| acc.checked_mul(shape[i]))
            .ok_or_else(|| crate::err!(InvalidParam, "slab size overflows"))?;
        if slab == 0 || nbytes as i64 % slab != 0 {
            crate::bail!(
                InvalidParam,
                "`buffersize` ({nbytes}) must be a multiple of the slab size ({slab})"
            );
        }
        let added = nbytes as i64 / slab;
        let mut new_shape = shape.clone();
        new_shape[axis] += added;
        let mut bufshape = shape;
        bufshape[axis] = added;
        let mut start = vec![0; nd];
        start[axis] = insert_start;
        if insert_start == extent {
            self.resize(&new_shape, None)?;
        } else {
            self.resize(&new_shape, Some(&start))?;
        }
        let mut stop = new_shape;
        stop[axis] = insert_start + added;
        Ok(Growth::Room {
            bufshape,
            start,
            stop,
        })
    }

    /// The chunks an insert or append stores once [`NdArray::make_room`]
    /// made `growth`, encoded through `&self`.
    pub fn encode_growth(&self, buffer: &[u8], growth: &Growth) -> Result<Encoded> {
        match growth {
            Growth::Chunk => {
                let next = self.store.nchunks();
                Ok(vec![(next, self.store.encode_chunk(next, buffer)?)])
            }
            Growth::Room {
                bufshape,
                start,
                stop,
            } => self.encode_slice_cbuffer(buffer, bufshape, start, stop),
        }
    }

    /// Stores what [`NdArray::encode_growth`] made.
    pub fn publish_growth(&mut self, growth: &Growth, chunks: Encoded) -> Result<()> {
        match growth {
            Growth::Chunk => {
                let mut new_shape = self.layout.shape.clone();
                new_shape[0] += self.layout.chunkshape[0] as i64;
                let grown =
                    Layout::new(&new_shape, &self.layout.chunkshape, &self.layout.blockshape)?;
                for (_, chunk) in chunks {
                    self.store.append_encoded(chunk)?;
                }
                self.layout = grown;
                self.publish_meta()
            }
            Growth::Room { .. } => self.publish(chunks),
        }
    }

    /// Removes `delete_len` items of `axis` from `delete_start` (`b2nd_delete`).
    pub fn delete(&mut self, axis: usize, delete_start: i64, delete_len: i64) -> Result<()> {
        self.refuse_view("delete from")?;
        let nd = self.ndim();
        if axis >= nd {
            crate::bail!(
                InvalidParam,
                "axis ({axis}) cannot be greater than the number of dimensions ({nd})"
            );
        }
        let extent = self.layout.shape[axis];
        if delete_len < 0 || delete_start < 0 || delete_start > extent - delete_len {
            crate::bail!(
                InvalidParam,
                "cannot delete [{delete_start}, +{delete_len}) from an axis of {extent}"
            );
        }
        let mut new_shape = self.layout.shape.clone();
        new_shape[axis] -= delete_len;
        let mut start = vec![0; nd];
        start[axis] = delete_start;
        if delete_start == extent - delete_len {
            self.resize(&new_shape, None)
        } else {
            self.resize(&new_shape, Some(&start))
        }
    }
}

/// Numbers (C order) of the chunks of `l` whose origin lies, in some
/// dimension `j`, inside `[from[j], from[j] + len[j])`.
fn chunks_starting_in(l: &Layout, from: &[i64], len: &[i64]) -> Vec<i64> {
    let grid = l.chunk_grid();
    let zero = vec![0i64; l.ndim()];
    let mut out = Vec::new();
    // The whole array is always a valid region of its own chunk grid.
    if let Ok(mut walk) = grid.walk(&zero, &l.shape) {
        while let Some(cell) = walk.next() {
            let hit = cell
                .origin()
                .iter()
                .zip(from.iter().zip(len))
                .any(|(&pos, (&f, &n))| f <= pos && pos < f + n);
            if hit {
                out.push(cell.index());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn rows(a: &NdArray) -> Vec<u8> {
        a.to_vec().unwrap()
    }

    #[test]
    fn grow_and_shrink_at_the_end_and_inside() {
        let c = ctx(1, &[4, 3], &[2, 3], &[1, 3]);
        let data: Vec<u8> = (1..=12).collect();
        let mut a = NdArray::from_cbuffer(&c, &data).unwrap();
        a.resize(&[6, 3], None).unwrap();
        assert_eq!(a.nchunks(), 3);
        assert_eq!(rows(&a), [&data[..], &[0; 6]].concat());
        // Insert two zero rows (one chunk) at row 2.
        a.resize(&[8, 3], Some(&[2, 0])).unwrap();
        assert_eq!(
            rows(&a),
            [&data[..6], &[0; 6], &data[6..], &[0; 6]].concat()
        );
        // Remove them again.
        a.delete(0, 2, 2).unwrap();
        assert_eq!(rows(&a), [&data[..], &[0; 6]].concat());
        a.delete(0, 4, 2).unwrap();
        assert_eq!(rows(&a), data);
        let (m, _) =
            crate::ndarray::meta::NdMeta::from_stored_bytes(&a.metalayer("b2nd").unwrap(), 1)
                .unwrap();
        assert_eq!(m.shape, vec![4, 3]);
        // Misaligned inner changes are refused before anything changes.
        assert_eq!(a.resize(&[5, 3], Some(&[1, 0])).unwrap_err().code(), -12);
        assert_eq!(a.delete(0, 1, 1).unwrap_err().code(), -12);
        assert_eq!(a.delete(2, 0, 1).unwrap_err().code(), -12);
        assert_eq!(rows(&a), data);
    }

    #[test]
    fn insert_and_append_match_numpy_semantics() {
        let c = ctx(2, &[2, 2], &[2, 2], &[1, 2]);
        let mut a = NdArray::from_cbuffer(&c, &[1, 0, 2, 0, 3, 0, 4, 0]).unwrap();
        a.insert(&[9, 0, 9, 0, 8, 0, 8, 0], 0, 0).unwrap();
        assert_eq!(a.shape(), &[4, 2]);
        assert_eq!(rows(&a), [9, 0, 9, 0, 8, 0, 8, 0, 1, 0, 2, 0, 3, 0, 4, 0]);
        // Fast path: exactly one chunk on axis 0.
        a.append(&[5, 0, 6, 0, 7, 0, 8, 0], 0).unwrap();
        assert_eq!(a.shape(), &[6, 2]);
        assert_eq!(&rows(&a)[16..], [5, 0, 6, 0, 7, 0, 8, 0]);
        // General path along axis 1.
        a.append(&[1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6], 1).unwrap();
        assert_eq!(a.shape(), &[6, 3]);
        let v = rows(&a);
        assert_eq!(&v[..6], [9, 0, 9, 0, 1, 1]);
        assert_eq!(&v[30..], [7, 0, 8, 0, 6, 6]);
        assert_eq!(a.insert(&[1, 2, 3], 0, 0).unwrap_err().code(), -12);
        assert_eq!(a.insert(&[0; 6], 3, 0).unwrap_err().code(), -12);
    }

    #[test]
    fn resize_from_and_to_empty() {
        let c = ctx(1, &[0, 4], &[2, 2], &[1, 2]);
        let mut a = NdArray::zeros(&c).unwrap();
        assert_eq!(a.nchunks(), 0);
        a.resize(&[3, 4], None).unwrap();
        assert_eq!(a.nchunks(), 4);
        a.set_slice_cbuffer(&[1; 12], &[3, 4], &[0, 0], &[3, 4])
            .unwrap();
        a.resize(&[3, 0], None).unwrap();
        assert_eq!((a.nchunks(), a.nitems()), (0, 0));
        a.resize(&[3, 4], None).unwrap();
        assert_eq!(rows(&a), vec![0; 12]);
    }
}
