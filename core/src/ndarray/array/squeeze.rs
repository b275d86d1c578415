//! Squeezing an array in place, as Caterva's `caterva_squeeze_index` does:
//! the array keeps its super-chunk (the same object, the same file) and
//! only its metalayers are rewritten to the new geometry. The views of
//! `views.rs` (`NdArray::squeeze_index`) leave the source as it is; this
//! changes the array itself, for callers that squeeze what they hold.
//!
//! Caterva rewrites its `caterva` layer with `blosc2_meta_update`, which
//! overwrites the start of the stored record and keeps its size (a frame
//! cannot resize a metalayer). The squeezed record is shorter, so the slot
//! keeps bytes of the old one after it. Caterva's reader stops after the
//! blockshape and never sees them; a b2nd reader takes whatever follows the
//! blockshape for a dtype, and a msgpack decoder (python-blosc2's `meta`)
//! refuses trailing bytes. So the squeezed record spans the slot exactly:
//! a 7-element header, version, ndim, the three shapes, then
//! `dtype_format` and a str32 holding the dtype, widened to the room left
//! (Caterva's reader skips the header byte and stops after the
//! blockshape). The dtype must be a NumPy dtype of the form `<code><size>`
//! (`<i4`, `|S2`: every dtype an array created through Caterva or opened
//! from a Caterva-only file has); it is widened with leading zeros in its
//! size (`<i0000004`, which NumPy reads as `<i4`), so a later in-place
//! rewrite of the record (resize, by the core) finds a record of the
//! slot's length, as it needs. Other dtypes cannot be widened without
//! changing them (NUL padding is cut off by the readers), so arrays whose
//! `b2nd` layer holds one are not squeezed.
//!
//! Both layers are rewritten that way. Only when the dtype cannot fill the
//! `caterva` slot next to a `b2nd` layer (which b2nd readers read instead)
//! does that slot get Caterva's own plain overwrite.
//!
//! Only dimensions whose chunk extent is 1 are removed in place: their
//! chunk bytes do not change. A unit dimension with a larger chunk extent
//! would need every chunk rewritten (Caterva leaves such an array with
//! chunks that no longer match its geometry); it is refused up front.

use super::NdArray;
use crate::ndarray::meta::NdMeta;
use crate::Result;

impl NdArray {
    /// Removes the dimensions flagged in `index` (each of extent 1 and of
    /// chunk extent 1) from this array in place, rewriting its `b2nd` and
    /// `caterva` metalayers (see the module documentation); the items stay
    /// as they are. A plain buffer is reshaped instead. Nothing is written
    /// when the request is refused: `InvalidParam` for a short `index` or a
    /// unit dimension chunked wider than 1, `InvalidIndex` for a flagged
    /// dimension whose extent is not 1.
    pub fn squeeze_in_place(&mut self, index: &[bool]) -> Result<()> {
        let l = self.layout();
        let nd = l.ndim();
        if index.len() < nd {
            crate::bail!(InvalidParam, "index needs {nd} entries");
        }
        let (mut shape, mut chunkshape, mut blockshape) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &drop) in index[..nd].iter().enumerate() {
            if !drop {
                shape.push(l.shape[i]);
                chunkshape.push(l.chunkshape[i]);
                blockshape.push(l.blockshape[i]);
            } else if l.shape[i] != 1 {
                crate::bail!(
                    InvalidIndex,
                    "dimension {i} has extent {}, not 1",
                    l.shape[i]
                );
            } else if l.chunkshape[i] != 1 {
                crate::bail!(
                    InvalidParam,
                    "dimension {i} has chunk extent {}: squeezing it would need every chunk rewritten",
                    l.chunkshape[i]
                );
            }
        }
        if shape.len() == nd {
            return Ok(());
        }
        // A view's chunks and metalayers are its source's.
        self.refuse_view("squeeze in place")?;
        if self.is_plain() {
            // Same items in the same order, without the unit dimensions.
            *self = self.plain_reshaped(&shape)?;
            return Ok(());
        }
        let meta = NdMeta::new(
            shape,
            chunkshape,
            blockshape,
            self.dtype(),
            self.dtype_format(),
        );
        let b2nd_old = self.metalayer("b2nd");
        let caterva_old = self.metalayer("caterva");
        // Every new record is built before the first one is written.
        let mut writes = Vec::new();
        if let Some(old) = &b2nd_old {
            writes.push(("b2nd", meta.to_bytes_filling(old)?));
        }
        if let Some(old) = &caterva_old {
            let rec = match meta.to_bytes_filling(old) {
                Err(_) if b2nd_old.is_some() => meta.to_caterva_bytes()?,
                r => r?,
            };
            writes.push(("caterva", rec));
        }
        self.with_schunk(|sc| {
            for (name, rec) in &writes {
                sc.meta_update(name, rec)?;
            }
            Ok(())
        })?;
        self.reread_from_schunk()
    }

    /// Re-reads the array from its (rewritten) super-chunk, the same one
    /// every other handle on it holds; on failure `self` stays as it was.
    fn reread_from_schunk(&mut self) -> Result<()> {
        let sc = self
            .schunk_handle()
            .ok_or_else(|| crate::err!(NullPointer, "this array has no super-chunk"))?;
        *self = NdArray::from_shared_schunk(sc)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ArrayStorage, Context};
    use super::*;
    use crate::schunk::Storage;

    fn ctx(storage: ArrayStorage, shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Context {
        Context::new(storage, 2, shape, chunks, blocks, None, 0, Vec::new()).unwrap()
    }

    #[test]
    fn squeezes_a_file_array_in_place_keeping_its_items() {
        let dir = std::env::temp_dir().join(format!("b2nd-squeeze-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.b2nd");
        let st = Storage {
            contiguous: true,
            urlpath: Some(path.clone()),
            ..Storage::default()
        };
        let data: Vec<u8> = (0..60).collect(); // 30 items of 2 bytes
        let c = ctx(
            ArrayStorage::Schunk(st),
            &[1, 6, 1, 5],
            &[1, 4, 1, 2],
            &[1, 2, 1, 2],
        );
        let mut a = NdArray::from_cbuffer(&c, &data).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        a.squeeze_in_place(&[true, false, true, false]).unwrap();
        assert_eq!(a.shape(), &[6, 5]);
        assert_eq!(a.layout().chunkshape, [4, 2]);
        assert_eq!(a.to_vec().unwrap(), data);
        drop(a);
        // The same file, rewritten in place: the records keep their size.
        assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
        let b = NdArray::open(&path).unwrap();
        assert_eq!(b.shape(), &[6, 5]);
        assert_eq!(b.to_vec().unwrap(), data);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_what_it_cannot_do_in_place_and_changes_nothing() {
        let st = Storage {
            contiguous: true,
            ..Storage::default()
        };
        let data: Vec<u8> = (0..24).collect();
        let c = ctx(ArrayStorage::Schunk(st), &[1, 3, 4], &[1, 2, 2], &[1, 2, 2]);
        let mut a = NdArray::from_cbuffer(&c, &data).unwrap();
        let short = a.squeeze_in_place(&[true]).unwrap_err();
        assert_eq!(short.kind(), crate::ErrorKind::InvalidParam);
        let not_unit = a.squeeze_in_place(&[false, true, false]).unwrap_err();
        assert_eq!(not_unit.kind(), crate::ErrorKind::InvalidIndex);
        a.squeeze_in_place(&[false, false, false]).unwrap();
        assert_eq!(a.shape(), &[1, 3, 4]);

        // A unit dimension chunked wider than 1 would need every chunk rewritten.
        let c = ctx(ArrayStorage::default(), &[1, 4], &[2, 2], &[1, 2]);
        let mut wide = NdArray::from_cbuffer(&c, &data[..8]).unwrap();
        let e = wide.squeeze_in_place(&[true, false]).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidParam);
        assert_eq!(wide.shape(), &[1, 4]);

        a.squeeze_in_place(&[true, false, false]).unwrap();
        assert_eq!(a.shape(), &[3, 4]);
        assert_eq!(a.to_vec().unwrap(), data);
    }
}
