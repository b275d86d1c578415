//! `caterva_squeeze_index` in place, as Caterva does it: the array keeps
//! its super-chunk (same `array->sc`, same file) and only its metalayers
//! are rewritten to the new geometry.
//!
//! Caterva rewrites its `caterva` layer with `blosc2_meta_update`, which
//! overwrites the start of the stored record and keeps its size (a frame
//! cannot resize a metalayer). The squeezed record is shorter, so the slot
//! keeps bytes of the old one after it. Caterva's reader stops after the
//! blockshape and never sees them; a b2nd reader takes whatever follows the
//! blockshape for a dtype. So the rest of the slot is filled with a dtype
//! field that spans it exactly: `dtype_format` and a str32 holding the
//! dtype, widened to the room left. A NumPy dtype of the form
//! `<code><size>` (`<i4`, `|S2`, every dtype a Caterva-only array gets) is
//! widened with leading zeros in its size (`<i0000004`, which NumPy reads
//! as `<i4`); any other dtype is padded with NUL bytes (C readers stop at
//! the first one). Either way a later in-place rewrite of the record
//! (resize) finds a record of the slot's length, as it needs.
//!
//! The `b2nd` layer is filled that way; so is the `caterva` layer of an
//! array that carries no `b2nd` layer (b2nd readers read it then). Next to
//! a `b2nd` layer the `caterva` layer is only read by Caterva, and gets
//! Caterva's own plain overwrite.
//!
//! Only dimensions whose chunk extent is 1 are removed in place: their
//! chunk bytes do not change. A unit dimension with a larger chunk extent
//! would need every chunk rewritten (Caterva leaves such an array with
//! chunks that no longer match its geometry); it is refused up front.

use crate::ndarray::array::NdArray;
use crate::ndarray::meta::NdMeta;
use crate::schunk::{SChunk, Storage};
use crate::Result;

/// Marker of a msgpack str32 (the dtype's encoding in a b2nd record).
const MARK_STR32: u8 = 0xdb;
/// Bytes of a dtype field before the dtype itself: format, marker, length.
const DTYPE_FIELD_HEAD: usize = 6;

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
        writes.push(("b2nd", spanning_record(&meta, old)?));
    }
    if let Some(old) = &caterva_old {
        let rec = if b2nd_old.is_some() {
            meta.to_caterva_bytes()?
        } else {
            spanning_record(&meta, old)?
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

/// The squeezed record for a stored slot `old`: the header byte of `old`,
/// version, dims, then a dtype field that fills the slot exactly.
fn spanning_record(meta: &NdMeta, old: &[u8]) -> Result<Vec<u8>> {
    let mut rec = meta.to_caterva_bytes()?;
    rec[0] = *old
        .first()
        .ok_or_else(|| crate::err!(Failure, "empty metalayer"))?;
    let dtype = meta.dtype.as_bytes();
    let room = old.len().checked_sub(rec.len() + DTYPE_FIELD_HEAD);
    let pad = match room.and_then(|r| r.checked_sub(dtype.len())) {
        Some(p) => p,
        None => crate::bail!(
            InvalidParam,
            "the squeezed record does not fit the stored metalayer"
        ),
    };
    let dtype = widen_dtype(&meta.dtype, dtype.len() + pad);
    let len =
        i32::try_from(dtype.len()).map_err(|_| crate::err!(InvalidParam, "metalayer too large"))?;
    rec.push(meta.dtype_format as u8);
    rec.push(MARK_STR32);
    rec.extend_from_slice(&len.to_be_bytes());
    rec.extend_from_slice(&dtype);
    Ok(rec)
}

/// `dtype` made exactly `width` (>= its length) bytes long without changing
/// its meaning to NumPy: zeros before the size of a `<code><size>` dtype,
/// else NUL bytes at the end.
fn widen_dtype(dtype: &str, width: usize) -> Vec<u8> {
    let extra = width.saturating_sub(dtype.len());
    let digits = dtype.find(|c: char| c.is_ascii_digit());
    let mut out = Vec::with_capacity(width);
    match digits {
        Some(at) if at > 0 && dtype[at..].bytes().all(|b| b.is_ascii_digit()) => {
            out.extend_from_slice(dtype[..at].as_bytes());
            out.resize(at + extra, b'0');
            out.extend_from_slice(dtype[at..].as_bytes());
        }
        _ => {
            out.extend_from_slice(dtype.as_bytes());
            out.resize(width, 0);
        }
    }
    out
}

/// Re-reads the array from its (rewritten) super-chunk; on failure the
/// super-chunk goes back into `core`.
fn rebuild(core: &mut NdArray) -> Result<()> {
    let placeholder = SChunk::new(Storage::default())?;
    let real = core.with_schunk(|sc| Ok(std::mem::replace(sc, placeholder)))?;
    match NdArray::from_schunk_or_back(real) {
        Ok(fresh) => {
            *core = fresh;
            Ok(())
        }
        Err((e, back)) => {
            if let Some(mut back) = back {
                core.with_schunk(|sc| {
                    std::mem::swap(sc, &mut back);
                    Ok(())
                })?;
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spanning_record_fills_the_slot_and_parses() {
        let old = NdMeta::new(vec![1, 6, 1], vec![1, 3, 1], vec![1, 2, 1], "<i4", 0)
            .to_b2nd_bytes()
            .unwrap();
        let m = NdMeta::new(vec![6], vec![3], vec![2], "<i4", 0);
        let rec = spanning_record(&m, &old).unwrap();
        assert_eq!(rec.len(), old.len());
        assert_eq!(rec[0], 0x97);
        let (back, _) = NdMeta::from_stored_bytes(&rec, 4).unwrap();
        assert_eq!(back.shape, vec![6]);
        assert_eq!(back.chunkshape, vec![3]);
        assert_eq!(back.blockshape, vec![2]);
        // The same NumPy dtype, its size widened with zeros.
        assert_eq!(back.dtype.len(), 3 + 19 * 2);
        assert!(back.dtype.starts_with("<i00") && back.dtype.ends_with("04"));
        // A later in-place rewrite finds a record of the slot's length.
        assert_eq!(back.to_bytes_like(&rec).unwrap().len(), old.len());
    }

    #[test]
    fn caterva_slot_gets_a_dtype_field() {
        let old = NdMeta::new(vec![1, 6], vec![1, 3], vec![1, 2], "", 0)
            .to_caterva_bytes()
            .unwrap();
        let m = NdMeta::new(vec![6], vec![3], vec![2], "|u1", 0);
        let rec = spanning_record(&m, &old).unwrap();
        assert_eq!(rec.len(), old.len());
        assert_eq!(rec[0], 0x95);
        // Caterva's positional reader sees the new geometry first.
        assert_eq!(&rec[1..4], &[0, 1, 0x91]);
        let (back, _) = NdMeta::from_stored_bytes(&rec, 1).unwrap();
        assert_eq!(back.shape, vec![6]);
        assert!(back.dtype.starts_with("|u0") && back.dtype.ends_with('1'));
    }

    #[test]
    fn dtypes_widen_without_changing_meaning() {
        assert_eq!(widen_dtype("|S12", 7), b"|S00012");
        assert_eq!(widen_dtype("<f8", 3), b"<f8");
        assert_eq!(widen_dtype("<M8[ns]", 9), b"<M8[ns]\0\0");
        assert_eq!(widen_dtype("", 2), b"\0\0");
    }

    #[test]
    fn too_small_slots_are_refused() {
        let old = [0x95u8, 0, 0, 0x90, 0x90, 0x90];
        let m = NdMeta::new(vec![], vec![], vec![], "|u1", 0);
        assert!(spanning_record(&m, &old).is_err());
    }
}
