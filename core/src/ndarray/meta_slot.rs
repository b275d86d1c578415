//! Rewriting an array's geometry into a metalayer slot that already exists.
//!
//! A frame cannot resize a metalayer, so a new geometry must be written as
//! a record of exactly the stored slot's length. A resize keeps ndim and
//! the record's length; a squeeze (through the Caterva API, which keeps the
//! array's super-chunk) shortens it. Then the record is written in the
//! 7-element b2nd form (version, ndim, shapes, dtype_format, dtype) with
//! the dtype widened to fill the slot: readers that stop after the
//! blockshape (Caterva's) see the new geometry, b2nd readers and msgpack
//! decoders (python-blosc2) see a whole record with no trailing bytes.
//!
//! A dtype can be widened without changing its meaning only when it has
//! the NumPy form `<code><size>`: zeros go before the size (`<i0004` is
//! `<i4` to NumPy). NUL padding would not do: readers cut the dtype at its
//! first NUL, and a later in-place rewrite must find a record of the
//! slot's length. Other dtypes cannot fill a longer slot.

use crate::ndarray::meta::NdMeta;
use crate::Result;

/// Header of a 7-element msgpack fixarray (the b2nd record's layout).
const FIXARRAY_7: u8 = 0x97;
/// Marker of a msgpack str32 (the dtype's encoding in a b2nd record).
const MARK_STR32: u8 = 0xdb;
/// Bytes of a dtype field before the dtype itself: format, marker, length.
const DTYPE_FIELD_HEAD: usize = 6;

impl NdMeta {
    /// This geometry as a record of exactly `existing.len()` bytes: in the
    /// stored record's own layout when it fits, else as a spanning record
    /// (see the module doc). An error when neither fits.
    pub fn to_bytes_filling(&self, existing: &[u8]) -> Result<Vec<u8>> {
        match self.to_bytes_like(existing) {
            Ok(b) => Ok(b),
            Err(_) => spanning_record(self, existing),
        }
    }
}

/// A record of `meta` for the stored slot `old`: a 7-element msgpack array
/// (version, ndim, shapes, dtype_format, dtype) whose dtype is widened so
/// the record fills the slot exactly.
fn spanning_record(meta: &NdMeta, old: &[u8]) -> Result<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndarray::meta::NdMeta;

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
