//! The "b2nd" (and legacy "caterva") metalayer content: a msgpack array of
//! version, ndim, shape (int64s), chunkshape (int32s), blockshape (int32s) and,
//! in the 7-entry layout, dtype_format (fixint) and dtype (str32).
//!
//! Private to the array module until the shared `ndarray::meta` lands; the
//! reader follows the reference's positional decoding (markers are skipped,
//! lengths are checked before every read).

use super::layout::MAX_DIM;
use crate::Result;

/// Decoded metalayer content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MetaContent {
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i32>,
    pub blockshape: Vec<i32>,
    /// `None` for the 6-entry layout (no dtype stored).
    pub dtype: Option<(i8, String)>,
}

/// Serializes the 7-entry layout the reference writes.
pub(crate) fn encode(
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    dtype: &str,
    dtype_format: i8,
) -> Result<Vec<u8>> {
    let nd = shape.len();
    if nd > MAX_DIM {
        crate::bail!(Failure, "ndim {nd} too large for the b2nd metalayer");
    }
    if dtype_format < 0 {
        crate::bail!(Failure, "dtype_format cannot be negative");
    }
    let dlen = i32::try_from(dtype.len()).map_err(|_| crate::err!(Failure, "dtype is too long"))?;
    let mut m = Vec::with_capacity(3 + 3 * (1 + 9 * nd) + 6 + dtype.len());
    m.extend_from_slice(&[0x97, 0, nd as u8, 0x90 + nd as u8]);
    for &s in shape {
        m.push(0xd3);
        m.extend_from_slice(&s.to_be_bytes());
    }
    for part in [chunkshape, blockshape] {
        m.push(0x90 + nd as u8);
        for &c in part {
            m.push(0xd2);
            m.extend_from_slice(&c.to_be_bytes());
        }
    }
    m.push(dtype_format as u8);
    m.push(0xdb);
    m.extend_from_slice(&dlen.to_be_bytes());
    m.extend_from_slice(dtype.as_bytes());
    Ok(m)
}

/// Serializes a new geometry in the same layout as `existing` (entry
/// count, version byte, dtype with or without dtype_format, or none), so a
/// legacy metalayer can be rewritten in place without changing its size.
pub(crate) fn encode_like(
    existing: &[u8],
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    dtype: &str,
    dtype_format: i8,
) -> Result<Vec<u8>> {
    let old = decode(existing)?;
    let full = encode(shape, chunkshape, blockshape, dtype, dtype_format)?;
    // Everything up to the dtype entry: 3 + 3 arrays of (1 + items).
    let nd = shape.len();
    let geometry_len = 3 + (1 + 9 * nd) + 2 * (1 + 5 * nd);
    let mut m = full[..geometry_len].to_vec();
    m[0] = existing[0];
    m[1] = existing[1];
    let tail = &existing[geometry_len.min(existing.len())..];
    match old.dtype {
        None => {}
        Some(_) if tail.first() == Some(&0xdb) => m.extend_from_slice(&full[geometry_len + 1..]),
        Some(_) => m.extend_from_slice(&full[geometry_len..]),
    }
    if old.shape.len() != nd || m.len() != existing.len() {
        crate::bail!(
            Failure,
            "the new geometry does not fit the existing metalayer"
        );
    }
    Ok(m)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.buf.len() - self.pos < n {
            crate::bail!(
                Failure,
                "malformed b2nd metalayer: truncated at byte {}",
                self.pos
            );
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
}

/// Parses a b2nd or caterva metalayer (6- or 7-entry layout).
pub(crate) fn decode(bytes: &[u8]) -> Result<MetaContent> {
    if bytes.is_empty() {
        crate::bail!(Failure, "malformed b2nd metalayer: empty");
    }
    let mut r = Reader { buf: bytes, pos: 0 };
    // The entry count varies with the layout (5 for caterva, 6 or 7 for
    // b2nd); like the reference, positions matter, not the count.
    let head = r.byte()?;
    if !(0x95..=0x97).contains(&head) {
        crate::bail!(
            Failure,
            "malformed b2nd metalayer: expected a 5 to 7 entry array, found 0x{head:02x}"
        );
    }
    let _version = r.byte()?;
    let nd = r.byte()? as usize;
    if nd > MAX_DIM {
        crate::bail!(Failure, "malformed b2nd metalayer: ndim {nd} out of range");
    }
    let mut shape = Vec::with_capacity(nd);
    r.byte()?;
    for _ in 0..nd {
        r.byte()?;
        shape.push(i64::from_be_bytes(r.take(8)?.try_into().expect("8 bytes")));
    }
    let mut parts = [Vec::with_capacity(nd), Vec::with_capacity(nd)];
    for part in parts.iter_mut() {
        r.byte()?;
        for _ in 0..nd {
            r.byte()?;
            part.push(i32::from_be_bytes(r.take(4)?.try_into().expect("4 bytes")));
        }
    }
    let dtype = if r.pos < bytes.len() {
        // 7 entries: dtype_format then dtype; a 6-entry layout may carry
        // the dtype string alone.
        let fmt = if bytes[r.pos] == 0xdb {
            0
        } else {
            r.byte()? as i8
        };
        if r.byte()? != 0xdb {
            crate::bail!(Failure, "malformed b2nd metalayer: invalid dtype marker");
        }
        let len = i32::from_be_bytes(r.take(4)?.try_into().expect("4 bytes"));
        if len < 0 {
            crate::bail!(Failure, "malformed b2nd metalayer: negative dtype length");
        }
        let s = r.take(len as usize)?;
        let s = String::from_utf8(s.to_vec())
            .map_err(|_| crate::err!(Failure, "malformed b2nd metalayer: dtype is not UTF-8"))?;
        Some((fmt, s))
    } else {
        None
    };
    let [chunkshape, blockshape] = parts;
    Ok(MetaContent {
        shape,
        chunkshape,
        blockshape,
        dtype,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_reference_bytes() {
        let m = encode(&[3], &[2], &[1], "<i4", 0).unwrap();
        let want: Vec<u8> = [
            &[0x97u8, 0, 1, 0x91, 0xd3][..],
            &3i64.to_be_bytes(),
            &[0x91, 0xd2],
            &2i32.to_be_bytes(),
            &[0x91, 0xd2],
            &1i32.to_be_bytes(),
            &[0, 0xdb],
            &3i32.to_be_bytes(),
            b"<i4",
        ]
        .concat();
        assert_eq!(m, want);
        let d = decode(&m).unwrap();
        assert_eq!(d.shape, vec![3]);
        assert_eq!(d.dtype, Some((0, "<i4".to_string())));
        // 6-entry layout: everything up to the blockshape.
        let mut six = m[..m.len() - 9].to_vec();
        six[0] = 0x96;
        assert_eq!(decode(&six).unwrap().dtype, None);
        // 6 entries with the dtype string but no dtype_format (seed 000).
        let mut six_dt = [&six[..], &[0xdb, 0, 0, 0, 3], b"<i4"].concat();
        six_dt[0] = 0x96;
        assert_eq!(decode(&six_dt).unwrap().dtype, Some((0, "<i4".to_string())));
        // 5-entry caterva layout (seeds 001, 004).
        let mut five = six.clone();
        five[0] = 0x95;
        assert_eq!(decode(&five).unwrap().blockshape, vec![1]);
        let scalar = encode(&[], &[], &[], "<f8", 0).unwrap();
        assert_eq!(decode(&scalar).unwrap().shape.len(), 0);
    }

    #[test]
    fn rewrites_keep_the_existing_layout() {
        let seven = encode(&[3, 4], &[2, 2], &[1, 2], "<u2", 0).unwrap();
        let again = encode_like(&seven, &[9, 4], &[2, 2], &[1, 2], "<u2", 0).unwrap();
        assert_eq!(again, encode(&[9, 4], &[2, 2], &[1, 2], "<u2", 0).unwrap());
        let mut six = seven[..seven.len() - 9].to_vec();
        six[0] = 0x96;
        let six2 = encode_like(&six, &[9, 4], &[2, 2], &[1, 2], "|S2", 0).unwrap();
        assert_eq!(
            (six2.len(), six2[0], decode(&six2).unwrap().shape),
            (six.len(), 0x96, vec![9, 4])
        );
        let six_dt = [&six[..], &[0xdb, 0, 0, 0, 3], b"<u2"].concat();
        let r = encode_like(&six_dt, &[1, 4], &[2, 2], &[1, 2], "<u2", 0).unwrap();
        assert_eq!(
            (r.len(), decode(&r).unwrap().dtype),
            (six_dt.len(), Some((0, "<u2".to_string())))
        );
        assert!(encode_like(&six, &[9], &[2], &[1], "|S2", 0).is_err());
    }

    #[test]
    fn corrupt_metalayers_fail_cleanly() {
        let m = encode(&[3, 4], &[2, 2], &[1, 1], "<i4", 0).unwrap();
        for cut in 0..m.len() {
            if cut == m.len() - 9 {
                continue; // ends right after the blockshape: a dtype-less layout
            }
            assert_eq!(decode(&m[..cut]).unwrap_err().code(), -1, "cut {cut}");
        }
        let mut bad = m.clone();
        bad[2] = 17;
        assert_eq!(decode(&bad).unwrap_err().code(), -1);
        let mut bad = m.clone();
        let n = bad.len();
        bad[n - 8] = 0xd9;
        assert!(decode(&bad).is_err());
        assert!(decode(&[0x80]).is_err());
    }
}
