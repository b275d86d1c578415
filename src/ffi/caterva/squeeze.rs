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

use crate::ndarray::array::NdArray;
use crate::ndarray::meta::NdMeta;
use crate::schunk::{SChunk, Storage};
use crate::Result;

/// Header of a 7-element msgpack fixarray (the b2nd record's layout).
const FIXARRAY_7: u8 = 0x97;
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
        let rec = match spanning_record(&meta, old) {
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

/// A record of `meta` for the stored slot `old`: a 7-element msgpack array
/// (version, ndim, shapes, dtype_format, dtype) whose dtype is widened so
/// the record fills the slot exactly.
pub(super) fn spanning_record(meta: &NdMeta, old: &[u8]) -> Result<Vec<u8>> {
    let mut rec = meta.to_caterva_bytes()?;
    rec[0] = FIXARRAY_7;
    let dtype = narrow_dtype(&meta.dtype);
    let room = match old.len().checked_sub(rec.len() + DTYPE_FIELD_HEAD) {
        Some(r) if r >= dtype.len() => r,
        _ => crate::bail!(
            InvalidParam,
            "the squeezed record does not fit the stored metalayer"
        ),
    };
    let dtype = widen_dtype(&dtype, room).ok_or_else(|| {
        crate::err!(
            InvalidParam,
            "dtype {dtype:?} cannot be widened to fill the squeezed metalayer"
        )
    })?;
    let len =
        i32::try_from(dtype.len()).map_err(|_| crate::err!(InvalidParam, "metalayer too large"))?;
    rec.push(meta.dtype_format as u8);
    rec.push(MARK_STR32);
    rec.extend_from_slice(&len.to_be_bytes());
    rec.extend_from_slice(&dtype);
    Ok(rec)
}

/// A dtype without the widening [`widen_dtype`] may have given it before
/// (an array squeezed twice, or resized after a squeeze): NUL padding
/// dropped, leading zeros of a `<code><size>` size dropped.
fn narrow_dtype(dtype: &str) -> String {
    let d = dtype.trim_end_matches('\0');
    match size_zeros(d) {
        Some(cut) => format!("{}{}", &d[..cut.start], &d[cut.end..]),
        None => d.to_string(),
    }
}

/// Leading zeros of the size of a `<code><size>` dtype, as a range to cut.
fn size_zeros(dtype: &str) -> Option<core::ops::Range<usize>> {
    let at = size_start(dtype)?;
    let digits = &dtype[at..];
    let keep = digits.trim_start_matches('0').len().max(1);
    Some(at..dtype.len() - keep)
}

/// Where the size of a `<code><size>` dtype starts (`None` for other
/// dtypes).
fn size_start(dtype: &str) -> Option<usize> {
    let at = dtype.find(|c: char| c.is_ascii_digit())?;
    (at > 0 && dtype[at..].bytes().all(|b| b.is_ascii_digit())).then_some(at)
}

/// `dtype` made exactly `width` (>= its length) bytes long without changing
/// its meaning to NumPy: zeros before the size of a `<code><size>` dtype.
/// `None` for other dtypes that need widening.
fn widen_dtype(dtype: &str, width: usize) -> Option<Vec<u8>> {
    let extra = width.saturating_sub(dtype.len());
    if extra == 0 {
        return Some(dtype.as_bytes().to_vec());
    }
    let at = size_start(dtype)?;
    let mut out = Vec::with_capacity(width);
    out.extend_from_slice(dtype[..at].as_bytes());
    out.resize(at + extra, b'0');
    out.extend_from_slice(dtype[at..].as_bytes());
    Some(out)
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
        assert_eq!(rec[0], 0x97);
        // Caterva's positional reader sees the new geometry first.
        assert_eq!(&rec[1..4], &[0, 1, 0x91]);
        let (back, _) = NdMeta::from_stored_bytes(&rec, 1).unwrap();
        assert_eq!(back.shape, vec![6]);
        assert!(back.dtype.starts_with("|u0") && back.dtype.ends_with('1'));
    }

    #[test]
    fn dtypes_widen_without_changing_meaning() {
        assert_eq!(widen_dtype("|S12", 7).unwrap(), b"|S00012");
        assert_eq!(widen_dtype("<f8", 3).unwrap(), b"<f8");
        assert_eq!(widen_dtype("<M8[ns]", 7).unwrap(), b"<M8[ns]");
        assert_eq!(widen_dtype("<M8[ns]", 9), None);
        assert_eq!(widen_dtype("", 2), None);
        assert_eq!(narrow_dtype("|S00012"), "|S12");
        assert_eq!(narrow_dtype("<u0000"), "<u0");
        assert_eq!(narrow_dtype("<M8[ns]\0\0"), "<M8[ns]");
        assert_eq!(narrow_dtype("[('a', '<i4')]"), "[('a', '<i4')]");
    }

    #[test]
    fn squeezing_twice_rewidens_from_the_plain_dtype() {
        let old = NdMeta::new(vec![1, 1, 6], vec![1, 1, 3], vec![1, 1, 2], "", 0)
            .to_caterva_bytes()
            .unwrap();
        let once = NdMeta::new(vec![1, 6], vec![1, 3], vec![1, 2], "|S2", 0);
        let rec1 = spanning_record(&once, &old).unwrap();
        let (m1, _) = NdMeta::from_stored_bytes(&rec1, 2).unwrap();
        let twice = NdMeta::new(vec![6], vec![3], vec![2], m1.dtype.clone(), 0);
        let rec2 = spanning_record(&twice, &rec1).unwrap();
        assert_eq!(rec2.len(), old.len());
        let (m2, _) = NdMeta::from_stored_bytes(&rec2, 2).unwrap();
        assert_eq!(
            (m2.shape, narrow_dtype(&m2.dtype)),
            (vec![6], "|S2".to_string())
        );
    }

    #[test]
    fn dtypes_that_cannot_widen_are_refused() {
        let old = NdMeta::new(vec![1, 6], vec![1, 3], vec![1, 2], "<M8[ns]", 0)
            .to_b2nd_bytes()
            .unwrap();
        let m = NdMeta::new(vec![6], vec![3], vec![2], "<M8[ns]", 0);
        assert!(spanning_record(&m, &old).is_err());
    }

    #[test]
    fn too_small_slots_are_refused() {
        let old = [0x95u8, 0, 0, 0x90, 0x90, 0x90];
        let m = NdMeta::new(vec![], vec![], vec![], "|u1", 0);
        assert!(spanning_record(&m, &old).is_err());
    }
}
