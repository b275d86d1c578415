//! `caterva_squeeze_index` in place, as Caterva does it: the array keeps
//! its super-chunk (same `array->sc`, same file) and only its metalayers
//! are rewritten to the new geometry.
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

use b2nd_core::ndarray::array::NdArray;
use b2nd_core::ndarray::meta::NdMeta;
use crate::Result;

/// Removes the dimensions flagged in `index` (each of extent 1) from
/// `core`, rewriting its `b2nd` and `caterva` layers in place. Nothing is
/// written when the request is refused.
pub(super) fn squeeze_in_place(core: &mut NdArray, index: &[bool]) -> Result<()> {
    let l = core.layout();
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
    if core.is_plain() {
        // Same items in the same order, without the unit dimensions.
        *core = core.plain_reshaped(&shape)?;
        return Ok(());
    }
    let meta = NdMeta::new(
        shape,
        chunkshape,
        blockshape,
        core.dtype(),
        core.dtype_format(),
    );
    let b2nd_old = core.metalayer("b2nd");
    let caterva_old = core.metalayer("caterva");
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
    core.with_schunk(|sc| {
        for (name, rec) in &writes {
            sc.meta_update(name, rec)?;
        }
        Ok(())
    })?;
    rebuild(core)
}

/// Re-reads the array from its (rewritten) super-chunk, the same one the
/// C super-chunk object holds; on failure `core` stays as it was.
fn rebuild(core: &mut NdArray) -> Result<()> {
    let sc = core
        .schunk_handle()
        .ok_or_else(|| crate::err!(NullPointer, "this array has no super-chunk"))?;
    *core = NdArray::from_shared_schunk(sc)?;
    Ok(())
}
