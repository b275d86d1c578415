//! The frame trailer: variable-length metalayers plus the trailer length and
//! an (unused, zeroed) fingerprint slot (README_CFRAME_FORMAT.rst, "Trailer").
//!
//! The vlmetalayer contents are stored exactly as given: the super-chunk
//! layer compresses them into Blosc2 chunks before they get here.

use super::bytes::{be_u32, expect, slice};
use super::header::{check_name, decode_metalayers, Metalayer};
use crate::Result;

/// Trailer format version written by the reference.
pub(crate) const TRAILER_VERSION: u8 = 1;
/// The last bytes of every trailer: uint32 length + fixext16 fingerprint.
pub(crate) const TRAILER_MINLEN: usize = 25;
/// Distance from the end of the frame to the trailer-length integer.
pub(crate) const TRAILER_LEN_OFFSET: usize = 22;
/// The reference refuses to write more vlmetalayers than this into a frame.
pub(crate) const MAX_FRAME_VLMETALAYERS: usize = 16;

/// Serializes the trailer for `vlmeta` (contents already compressed).
pub fn encode(vlmeta: &[Metalayer]) -> Result<Vec<u8>> {
    if vlmeta.len() > MAX_FRAME_VLMETALAYERS {
        crate::bail!(
            InvalidParam,
            "a frame holds at most {MAX_FRAME_VLMETALAYERS} vlmetalayers, got {}",
            vlmeta.len()
        );
    }
    let n = vlmeta.len() as u16;
    let mut t = vec![0x90 + 4, TRAILER_VERSION, 0x90 + 3, 0xcd, 0, 0, 0xde];
    t.extend_from_slice(&n.to_be_bytes());
    let mut slots = Vec::with_capacity(vlmeta.len());
    for m in vlmeta {
        check_name(&m.name)?;
        t.push(0xa0 + m.name.len() as u8);
        t.extend_from_slice(m.name.as_bytes());
        t.push(0xd2);
        slots.push(t.len());
        t.extend_from_slice(&[0; 4]);
    }
    let idx_size = u16::try_from(t.len() - 3)
        .map_err(|_| crate::err!(InvalidParam, "vlmetalayer index too large"))?;
    t[4..6].copy_from_slice(&idx_size.to_be_bytes());
    t.push(0xdc);
    t.extend_from_slice(&n.to_be_bytes());
    for (m, slot) in vlmeta.iter().zip(slots) {
        let off =
            i32::try_from(t.len()).map_err(|_| crate::err!(InvalidParam, "trailer too large"))?;
        let clen = u32::try_from(m.content.len())
            .ok()
            .filter(|&l| l <= i32::MAX as u32)
            .ok_or_else(|| crate::err!(InvalidParam, "vlmetalayer '{}' too large", m.name))?;
        t[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
        t.push(0xc6);
        t.extend_from_slice(&clen.to_be_bytes());
        t.extend_from_slice(&m.content);
    }
    let total = u32::try_from(t.len() + 23)
        .ok()
        .filter(|&l| l <= i32::MAX as u32)
        .ok_or_else(|| crate::err!(InvalidParam, "trailer too large"))?;
    t.push(0xce);
    t.extend_from_slice(&total.to_be_bytes());
    t.push(0xd8);
    t.push(0); // fingerprint type: none
    t.extend_from_slice(&[0; 16]);
    Ok(t)
}

/// Reads the trailer length from the last `TRAILER_MINLEN` bytes of a frame
/// and checks it against the frame and header lengths.
pub fn trailer_len_from_tail(tail: &[u8], frame_len: i64, header_len: i64) -> Result<usize> {
    let tail = slice(tail, 0, TRAILER_MINLEN, "frame trailer")?;
    let pos = TRAILER_MINLEN - TRAILER_LEN_OFFSET;
    expect(tail, pos - 1, 0xce, "trailer length")?;
    let len = be_u32(tail, pos, "trailer length")?;
    if (len as usize) < TRAILER_MINLEN || i64::from(len) > frame_len - header_len {
        crate::bail!(InvalidHeader, "trailer length {len} is impossible for a frame of {frame_len} bytes with a {header_len}-byte header");
    }
    Ok(len as usize)
}

/// Decodes the vlmetalayers of a complete trailer.
pub fn decode(trailer: &[u8]) -> Result<Vec<Metalayer>> {
    // The array marker and version byte are not checked (the reference
    // reader skips them too); the vlmetalayer map is validated in full.
    decode_metalayers(trailer, 2, 8 * 1024, "vlmetalayers")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let v = vec![
            Metalayer {
                name: "info".into(),
                content: vec![9; 40],
            },
            Metalayer {
                name: "x".into(),
                content: vec![],
            },
        ];
        let t = encode(&v).unwrap();
        assert_eq!(decode(&t).unwrap(), v);
        let tl = trailer_len_from_tail(&t[t.len() - TRAILER_MINLEN..], 1000, 100).unwrap();
        assert_eq!(tl, t.len());
        assert_eq!(encode(&[]).unwrap().len(), 35);
    }

    #[test]
    fn lying_trailer_length_is_rejected() {
        let t = encode(&[]).unwrap();
        let mut tail = t[t.len() - TRAILER_MINLEN..].to_vec();
        tail[3..7].copy_from_slice(&10_000u32.to_be_bytes());
        assert!(trailer_len_from_tail(&tail, 500, 100).is_err());
        tail[3..7].copy_from_slice(&3u32.to_be_bytes());
        assert!(trailer_len_from_tail(&tail, 500, 100).is_err());
        tail[2] = 0;
        assert!(trailer_len_from_tail(&tail, 500, 100).is_err());
        assert!(trailer_len_from_tail(&tail[..5], 500, 100).is_err());
    }

    #[test]
    fn corrupt_trailer_is_rejected() {
        let v = vec![Metalayer {
            name: "info".into(),
            content: vec![9; 40],
        }];
        let t = encode(&v).unwrap();
        for cut in [0, 3, 10, 20] {
            assert!(decode(&t[..cut]).is_err());
        }
        let mut bad = t.clone();
        bad[7..9].copy_from_slice(&9000u16.to_be_bytes());
        assert!(decode(&bad).is_err());
        assert!(encode(
            &(0..17)
                .map(|i| Metalayer {
                    name: format!("v{i}"),
                    content: vec![]
                })
                .collect::<Vec<_>>()
        )
        .is_err());
    }
}
