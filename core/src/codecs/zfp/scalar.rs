//! Floats to block integers and back (zfp's block-floating-point step).
//!
//! A block is scaled by the power of two that brings its largest magnitude
//! just under 2^(bits-2) and truncated to integers; decoding multiplies back.
//! The scale factors are formed as floats of the item type, exactly as the
//! reference forms them (so a factor past the type's range is infinity or
//! zero there and here), and float-to-integer conversions that overflow or
//! meet a NaN give the integer minimum, as the x86-64 conversion instructions
//! the reference is compiled to do. With those two rules the integers, and so
//! the streams, are the reference's bit for bit even for blocks of tiny
//! subnormals, infinities or NaNs.

use super::transform::BlockInt;

/// The item types zfp codes.
pub(super) trait Real: Copy + Default + PartialOrd + core::fmt::Debug {
    type Int: BlockInt;
    /// Bytes per item.
    const BYTES: usize;
    /// Bits of the biased exponent written per block.
    const EBITS: u32;
    /// The exponent bias.
    const BIAS: i32;
    fn from_le(b: &[u8]) -> Self;
    fn put_le(self, b: &mut [u8]);
    /// The exponent `e` of the block's largest magnitude `m` with
    /// `m = f * 2^e`, `0.5 <= f < 1` (clamped below to the smallest normal
    /// exponent; `-BIAS` for an all-zero block and 0 when the largest is
    /// infinite, as the C library's `frexp` gives).
    fn max_exponent(block: &[Self]) -> i32;
    /// The block as integers relative to exponent `emax`.
    fn quantize(block: &[Self], emax: i32, out: &mut [Self::Int]);
    /// The inverse of [`Real::quantize`] (up to the dropped bits).
    fn dequantize(ints: &[Self::Int], emax: i32, out: &mut [Self]);
}

/// The largest magnitude of a block, skipping NaNs (a NaN never compares
/// greater), 0 for a block of zeros.
fn max_abs<R: Real>(block: &[R], abs: impl Fn(R) -> R) -> R {
    let mut m = R::default();
    for &v in block {
        let a = abs(v);
        if m < a {
            m = a;
        }
    }
    m
}

/// `f32` and `f64` differ only in their widths: one macro writes both (with
/// `$bits` the float's bit pattern type and `$int` its block integer), with
/// `$pow2` (`2^k` rounded as `ldexp(1, k)` rounds it) and `$to_int`
/// (truncation toward zero; out of range or NaN gives the integer minimum).
macro_rules! real {
    (
        $float:ident,
        $bits:ident,
        $int:ident,
        $pow2:ident,
        $to_int:ident,
        ebits $ebits:expr,
        mantissa $mant:expr
    ) => {
        fn $pow2(k: i32) -> $float {
            const BIAS: i32 = (1 << ($ebits - 1)) - 1;
            if k > BIAS {
                $float::INFINITY
            } else if k >= 1 - BIAS {
                $float::from_bits(((k + BIAS) as $bits) << $mant)
            } else if k >= 1 - BIAS - $mant {
                $float::from_bits(1 << (k + BIAS - 1 + $mant))
            } else {
                // 2^(least exponent - 1) is a tie between 0 and the least
                // subnormal: even is 0.
                0.0
            }
        }

        fn $to_int(v: $float) -> $int {
            // -2^(bits-1) and 2^(bits-1) are exact in the float type.
            let limit = -($int::MIN as $float);
            if (-limit..limit).contains(&v) {
                v as $int
            } else {
                $int::MIN
            }
        }

        impl Real for $float {
            type Int = $int;
            const BYTES: usize = core::mem::size_of::<$float>();
            const EBITS: u32 = $ebits;
            const BIAS: i32 = (1 << ($ebits - 1)) - 1;

            #[inline]
            fn from_le(b: &[u8]) -> Self {
                $float::from_le_bytes(b[..Self::BYTES].try_into().unwrap())
            }
            #[inline]
            fn put_le(self, b: &mut [u8]) {
                b[..Self::BYTES].copy_from_slice(&self.to_le_bytes());
            }
            fn max_exponent(block: &[Self]) -> i32 {
                let m = max_abs(block, $float::abs);
                if m <= 0.0 {
                    return -Self::BIAS;
                }
                let all_ones = (1 << $ebits) - 1;
                let biased = ((m.to_bits() >> $mant) & all_ones) as i32;
                match biased {
                    b if b == all_ones as i32 => 0,
                    // Subnormals: their frexp exponent is below the clamp.
                    0 => 1 - Self::BIAS,
                    b => (b - (Self::BIAS - 1)).max(1 - Self::BIAS),
                }
            }
            fn quantize(block: &[Self], emax: i32, out: &mut [$int]) {
                let s = $pow2($int::BITS as i32 - 2 - emax);
                for (o, &v) in out.iter_mut().zip(block) {
                    *o = $to_int(s * v);
                }
            }
            fn dequantize(ints: &[$int], emax: i32, out: &mut [Self]) {
                let s = $pow2(emax - ($int::BITS as i32 - 2));
                for (o, &v) in out.iter_mut().zip(ints) {
                    *o = s * v as $float;
                }
            }
        }
    };
}

real!(f32, u32, i32, pow2_f32, to_i32, ebits 8, mantissa 23);
real!(f64, u64, i64, pow2_f64, to_i64, ebits 11, mantissa 52);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_round_like_ldexp() {
        assert_eq!(pow2_f32(0), 1.0);
        assert_eq!(pow2_f32(-126), f32::MIN_POSITIVE);
        assert_eq!(pow2_f32(-149), f32::from_bits(1));
        assert_eq!(pow2_f32(-150), 0.0);
        assert_eq!(pow2_f32(127), 2f32.powi(127));
        assert_eq!(pow2_f32(128), f32::INFINITY);
        assert_eq!(pow2_f64(-1074), f64::from_bits(1));
        assert_eq!(pow2_f64(-1075), 0.0);
        assert_eq!(pow2_f64(1023), 2f64.powi(1023));
        assert_eq!(pow2_f64(1024), f64::INFINITY);
        for k in -140..120 {
            assert_eq!(pow2_f32(k), 2f64.powi(k) as f32, "{k}");
        }
    }

    #[test]
    fn exponents_follow_frexp() {
        assert_eq!(f32::max_exponent(&[0.0, -0.0]), -127);
        assert_eq!(f32::max_exponent(&[1.0, 0.5]), 1);
        assert_eq!(f32::max_exponent(&[0.75, -3.0]), 2);
        assert_eq!(f32::max_exponent(&[f32::NAN, 0.25]), -1);
        assert_eq!(f32::max_exponent(&[f32::NAN]), -127);
        assert_eq!(f32::max_exponent(&[f32::NEG_INFINITY, 1e30]), 0);
        assert_eq!(f32::max_exponent(&[f32::MIN_POSITIVE]), -125);
        assert_eq!(f32::max_exponent(&[f32::from_bits(5)]), -126);
        assert_eq!(f32::max_exponent(&[f32::MAX]), 128);
        assert_eq!(f64::max_exponent(&[1.0]), 1);
        assert_eq!(f64::max_exponent(&[f64::from_bits(1)]), -1022);
        assert_eq!(f64::max_exponent(&[f64::MAX]), 1024);
    }

    #[test]
    fn quantizing_scales_to_thirty_bits_and_saturates_to_the_minimum() {
        let mut q = [0i32; 4];
        f32::quantize(&[1.0, -0.5, 0.25, 0.0], 1, &mut q);
        assert_eq!(q, [1 << 29, -(1 << 28), 1 << 27, 0]);
        // A subnormal block: the scale overflows to infinity.
        let tiny = f32::from_bits(3);
        f32::quantize(&[tiny, 0.0, -tiny, f32::NAN], -126, &mut q);
        assert_eq!(q, [i32::MIN; 4]);
        let mut back = [0f32; 4];
        f32::dequantize(&[1 << 29, -(1 << 28), 3, 0], 1, &mut back);
        assert_eq!(back, [1.0, -0.5, 3.0 / (1u32 << 29) as f32, 0.0]);
        let mut q = [0i64; 2];
        f64::quantize(&[1.0, f64::INFINITY], 1, &mut q);
        assert_eq!(q, [1 << 61, i64::MIN]);
    }
}
