//! Truncate-precision filter (`BLOSC_TRUNC_PREC`): zero low mantissa bits of
//! IEEE 754 floats so that the data compresses better. Lossy, so it has no
//! inverse; decompression leaves the truncated values as they are.

/// Mantissa bits of an f32 and of an f64.
const F32_MANTISSA_BITS: i32 = 23;
const F64_MANTISSA_BITS: i32 = 52;

/// Truncate float mantissas: `prec_bits` > 0 keeps that many mantissa bits, < 0 zeroes that many
/// (reference semantics of filters_meta as a signed byte); typesize 4 (f32) or 8 (f64), else
/// Err(InvalidParam). As in the reference, the number of zeroed bits must stay below the
/// mantissa width (so `prec_bits == 0`, `|prec_bits| > 23` for f32 or `> 52` for f64, and
/// `prec_bits == -23` / `-52` are rejected, also with `InvalidParam`; the reference's pipeline
/// reports any of these failures as a filter pipeline error). Items are little-endian; the
/// `len % typesize` trailing bytes are copied unchanged.
///
/// # Panics
/// If `src` and `dst` differ in length (a caller bug).
pub fn truncate(prec_bits: i8, typesize: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
    assert_eq!(
        src.len(),
        dst.len(),
        "trunc_prec: source and destination lengths differ"
    );
    let mantissa = match typesize {
        4 => F32_MANTISSA_BITS,
        8 => F64_MANTISSA_BITS,
        _ => crate::bail!(
            InvalidParam,
            "trunc_prec: typesize {typesize} is not 4 or 8"
        ),
    };
    let zeroed = zeroed_bits(prec_bits, mantissa)?;
    let body = src.len() - src.len() % typesize;
    if typesize == 4 {
        let mask = !((1u32 << zeroed) - 1);
        for (d, s) in dst[..body]
            .chunks_exact_mut(4)
            .zip(src[..body].chunks_exact(4))
        {
            let v = u32::from_le_bytes(s.try_into().expect("4-byte chunk")) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        let mask = !((1u64 << zeroed) - 1);
        for (d, s) in dst[..body]
            .chunks_exact_mut(8)
            .zip(src[..body].chunks_exact(8))
        {
            let v = u64::from_le_bytes(s.try_into().expect("8-byte chunk")) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
    Ok(())
}

/// How many low mantissa bits `prec_bits` asks to clear, validated so that at
/// least one mantissa bit survives (NaN and infinity stay distinguishable).
fn zeroed_bits(prec_bits: i8, mantissa: i32) -> crate::Result<u32> {
    let prec = i32::from(prec_bits);
    if prec.abs() > mantissa {
        crate::bail!(
            InvalidParam,
            "trunc_prec: precision {prec} exceeds the {mantissa} mantissa bits"
        );
    }
    let zeroed = if prec >= 0 { mantissa - prec } else { -prec };
    if zeroed >= mantissa {
        crate::bail!(
            InvalidParam,
            "trunc_prec: clearing {zeroed} of {mantissa} mantissa bits is not allowed"
        );
    }
    Ok(zeroed as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn zeroed_bits_bounds() {
        assert_eq!(zeroed_bits(23, 23).unwrap(), 0);
        assert_eq!(zeroed_bits(1, 23).unwrap(), 22);
        assert_eq!(zeroed_bits(-22, 23).unwrap(), 22);
        assert_eq!(zeroed_bits(-1, 52).unwrap(), 1);
        for bad in [0i8, 24, -23, -128, 127] {
            assert_eq!(zeroed_bits(bad, 23).unwrap_err().code(), -12, "prec {bad}");
        }
        assert!(zeroed_bits(52, 52).is_ok());
        assert!(zeroed_bits(53, 52).is_err());
    }

    #[test]
    fn keeps_requested_bits_of_f32() {
        // 1 + 2^-23 (lowest mantissa bit set) and pi.
        let src = f32s(&[f32::from_bits(0x3f80_0001), f32::from_bits(0x4049_0fdb)]);
        let mut dst = vec![0u8; 8];
        truncate(10, 4, &src, &mut dst).unwrap();
        // 10 kept bits => low 13 bits cleared.
        assert_eq!(
            dst,
            f32s(&[f32::from_bits(0x3f80_0000), f32::from_bits(0x4049_0000)])
        );
    }

    #[test]
    fn rejects_other_typesizes() {
        let mut dst = [0u8; 6];
        for ts in [0usize, 1, 2, 3, 16] {
            assert_eq!(
                truncate(10, ts, &[0u8; 6], &mut dst).unwrap_err().code(),
                -12
            );
        }
    }
}
