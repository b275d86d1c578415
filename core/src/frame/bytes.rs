//! Tiny bounds-checked readers and writers for the fixed msgpack fields of
//! frames. Integers inside msgpack are big-endian; everything else in the
//! format is little-endian.

use crate::Result;

/// `len` bytes at `pos`, or an error naming `what` when `buf` is too short.
pub(crate) fn slice<'a>(buf: &'a [u8], pos: usize, len: usize, what: &str) -> Result<&'a [u8]> {
    let end = pos
        .checked_add(len)
        .ok_or_else(|| crate::err!(ReadBuffer, "{what}: position overflows"))?;
    buf.get(pos..end).ok_or_else(|| {
        crate::err!(
            ReadBuffer,
            "{what}: needs bytes {pos}..{end}, only {} available",
            buf.len()
        )
    })
}

pub(crate) fn be_u16(buf: &[u8], pos: usize, what: &str) -> Result<u16> {
    let s = slice(buf, pos, 2, what)?;
    Ok(u16::from_be_bytes([s[0], s[1]]))
}

pub(crate) fn be_i16(buf: &[u8], pos: usize, what: &str) -> Result<i16> {
    Ok(be_u16(buf, pos, what)? as i16)
}

pub(crate) fn be_u32(buf: &[u8], pos: usize, what: &str) -> Result<u32> {
    let s = slice(buf, pos, 4, what)?;
    Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn be_i32(buf: &[u8], pos: usize, what: &str) -> Result<i32> {
    Ok(be_u32(buf, pos, what)? as i32)
}

pub(crate) fn be_i64(buf: &[u8], pos: usize, what: &str) -> Result<i64> {
    let s = slice(buf, pos, 8, what)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(i64::from_be_bytes(a))
}

/// Checks that the byte at `pos` is the msgpack marker `marker`.
pub(crate) fn expect(buf: &[u8], pos: usize, marker: u8, what: &str) -> Result<()> {
    let b = slice(buf, pos, 1, what)?[0];
    if b != marker {
        crate::bail!(
            InvalidHeader,
            "{what}: expected msgpack marker {marker:#04x} at {pos}, found {b:#04x}"
        );
    }
    Ok(())
}
