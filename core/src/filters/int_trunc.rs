//! Integer truncation filter (the reference's global plugin
//! `BLOSC_FILTER_INT_TRUNC`, id 36): zero the low bits of each integer item so
//! that the data compress better. Lossy, so decompression keeps the values as
//! they are.

/// Zeroes low bits of each little-endian integer of `typesize` 1, 2, 4 or 8
/// bytes: `prec_bits >= 0` keeps that many bits, `< 0` zeroes `-prec_bits`.
/// As in the reference, zeroing the whole width (or asking to keep more bits
/// than there are) is an error, as is any other typesize. The
/// `len % typesize` trailing bytes are copied.
///
/// # Panics
/// If `src` and `dst` differ in length (a caller bug).
pub fn truncate(prec_bits: i8, typesize: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
    assert_eq!(src.len(), dst.len(), "int_trunc: lengths differ");
    if !matches!(typesize, 1 | 2 | 4 | 8) {
        crate::bail!(
            InvalidParam,
            "int_trunc: typesize {typesize} is not 1, 2, 4 or 8"
        );
    }
    let width = 8 * typesize as i32;
    let zeroed = if prec_bits >= 0 {
        width - i32::from(prec_bits)
    } else {
        -i32::from(prec_bits)
    };
    if !(0..width).contains(&zeroed) {
        crate::bail!(
            InvalidParam,
            "int_trunc: cannot keep {prec_bits} bits of a {width}-bit integer"
        );
    }
    let mask = !((1u64 << zeroed) - 1);
    let body = src.len() - src.len() % typesize;
    // Little-endian items: the mask's bytes apply byte by byte.
    let mask = &mask.to_le_bytes()[..typesize];
    for (d, s) in dst[..body]
        .chunks_exact_mut(typesize)
        .zip(src[..body].chunks_exact(typesize))
    {
        for ((d, s), m) in d.iter_mut().zip(s).zip(mask) {
            *d = s & m;
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_or_drops_the_asked_bits() {
        let src: Vec<u8> = (0..64u32)
            .flat_map(|i| (0xFFFF_FFFFu32 - i).to_le_bytes())
            .collect();
        let mut dst = vec![0u8; src.len()];
        truncate(20, 4, &src, &mut dst).unwrap();
        for (d, s) in dst.chunks_exact(4).zip(src.chunks_exact(4)) {
            let (d, s) = (
                u32::from_le_bytes(d.try_into().unwrap()),
                u32::from_le_bytes(s.try_into().unwrap()),
            );
            assert_eq!(d, s & 0xFFFF_F000);
        }
        let src: Vec<u8> = (0..50u16)
            .flat_map(|i| (i * 1311).to_le_bytes())
            .chain([9])
            .collect();
        let mut dst = vec![0u8; src.len()];
        truncate(-3, 2, &src, &mut dst).unwrap();
        for (d, s) in dst.chunks_exact(2).zip(src.chunks_exact(2)) {
            assert_eq!(
                u16::from_le_bytes([d[0], d[1]]),
                u16::from_le_bytes([s[0], s[1]]) & !7
            );
        }
        assert_eq!(dst.last(), Some(&9));
        // The whole width, or an identity.
        assert!(truncate(0, 8, &[0; 8], &mut [0; 8]).is_err());
        assert!(truncate(-8, 1, &[0; 8], &mut [0; 8]).is_err());
        assert!(truncate(9, 1, &[0; 8], &mut [0; 8]).is_err());
        assert!(truncate(4, 3, &[0; 9], &mut [0; 9]).is_err());
        let mut same = [0u8; 8];
        truncate(64, 8, &[0xAB; 8], &mut same).unwrap();
        assert_eq!(same, [0xAB; 8]);
    }
}
