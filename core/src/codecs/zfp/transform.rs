//! The integer side of a zfp block: the decorrelating transform (a lifting
//! step on every line of four values, one axis after the other), the order in
//! which the transformed coefficients are coded, and the negabinary mapping
//! that turns them into unsigned words whose leading bits are the
//! significant ones.
//!
//! All arithmetic wraps, as the reference's two's complement integers do in
//! practice: blocks that quantize to out-of-range values (possible for inputs
//! with infinities or NaNs) then transform to the same bits in both
//! libraries.

/// Signed block integers (`i32` for `f32` data, `i64` for `f64`).
pub(super) trait BlockInt: Copy + Default + Eq + core::fmt::Debug {
    /// The unsigned word of the same width, as the bit-plane coder sees it.
    type Word: Word;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    /// Arithmetic shift right by one.
    fn half(self) -> Self;
    /// Two's complement to negabinary.
    fn to_word(self) -> Self::Word;
    /// Negabinary to two's complement.
    fn from_word(w: Self::Word) -> Self;
}

/// Unsigned coefficient words, read and written one bit plane at a time.
pub(super) trait Word: Copy + Default + Eq + core::fmt::Debug {
    /// Bits in the word (the number of bit planes).
    const BITS: u32;
    /// Alternating bits `1010…`: adding it and xor-ing with it maps two's
    /// complement to base -2.
    const NEGA: Self;
    /// Bit `k`, as 0 or 1.
    fn bit(self, k: u32) -> u64;
    /// Sets bit `k` (known to be clear).
    fn set(&mut self, k: u32);
}

/// The `f32` and `f64` sides differ only in width: one macro writes both
/// pairs of impls, so the two stay the same code.
macro_rules! block_int {
    ($int:ty, $word:ty) => {
        impl Word for $word {
            const BITS: u32 = <$word>::BITS;
            // The complement of `MAX / 3`, which is `0101…`.
            const NEGA: $word = !(<$word>::MAX / 3);
            #[inline]
            fn bit(self, k: u32) -> u64 {
                u64::from((self >> k) & 1)
            }
            #[inline]
            fn set(&mut self, k: u32) {
                *self |= 1 << k;
            }
        }

        impl BlockInt for $int {
            type Word = $word;
            #[inline]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline]
            fn half(self) -> Self {
                self >> 1
            }
            #[inline]
            fn to_word(self) -> $word {
                (self as $word).wrapping_add(<$word as Word>::NEGA) ^ <$word as Word>::NEGA
            }
            #[inline]
            fn from_word(w: $word) -> Self {
                (w ^ <$word as Word>::NEGA).wrapping_sub(<$word as Word>::NEGA) as $int
            }
        }
    };
}

block_int!(i32, u32);
block_int!(i64, u64);

/// Forward lifting of the four values at `at`, `at + s`, `at + 2s`, `at + 3s`:
/// (a, b, c, d) becomes roughly (a+b+c+d)/4 and three detail terms, by the
/// reference's exact sequence of halvings.
#[inline]
fn lift<I: BlockInt>(v: &mut [I], at: usize, s: usize) {
    let (mut a, mut b, mut c, mut d) = (v[at], v[at + s], v[at + 2 * s], v[at + 3 * s]);
    a = a.add(d).half();
    d = d.sub(a);
    c = c.add(b).half();
    b = b.sub(c);
    a = a.add(c).half();
    c = c.sub(a);
    d = d.add(b).half();
    b = b.sub(d);
    d = d.add(b.half());
    b = b.sub(d.half());
    v[at] = a;
    v[at + s] = b;
    v[at + 2 * s] = c;
    v[at + 3 * s] = d;
}

/// Exact inverse of [`lift`] (on the values [`lift`] produces).
#[inline]
fn unlift<I: BlockInt>(v: &mut [I], at: usize, s: usize) {
    let (mut a, mut b, mut c, mut d) = (v[at], v[at + s], v[at + 2 * s], v[at + 3 * s]);
    b = b.add(d.half());
    d = d.sub(b.half());
    b = b.add(d);
    d = d.add(d).sub(b);
    c = c.add(a);
    a = a.add(a).sub(c);
    b = b.add(c);
    c = c.add(c).sub(b);
    d = d.add(a);
    a = a.add(a).sub(d);
    v[at] = a;
    v[at + s] = b;
    v[at + 2 * s] = c;
    v[at + 3 * s] = d;
}

/// Calls `f(start)` for the first value of every line along `axis` of a
/// `dims`-dimensional block of side 4 (axis 0 is the fastest varying).
#[inline]
fn each_line(dims: usize, axis: usize, mut f: impl FnMut(usize)) {
    let n = 1usize << (2 * dims);
    let s = 1usize << (2 * axis);
    for i in 0..n {
        if (i / s) % 4 == 0 {
            f(i);
        }
    }
}

/// The forward transform of a `dims`-dimensional block, axis 0 first.
pub(super) fn forward<I: BlockInt>(block: &mut [I], dims: usize) {
    for axis in 0..dims {
        let s = 1usize << (2 * axis);
        each_line(dims, axis, |i| lift(block, i, s));
    }
}

/// The inverse transform, last axis first.
pub(super) fn inverse<I: BlockInt>(block: &mut [I], dims: usize) {
    for axis in (0..dims).rev() {
        let s = 1usize << (2 * axis);
        each_line(dims, axis, |i| unlift(block, i, s));
    }
}

/// The order coefficients are coded in, by dimensionality: block positions
/// (x fastest) from the lowest frequencies (smallest sum of the coordinates,
/// then smallest sum of their squares) to the highest. Ties are broken as the
/// reference's format fixes them, which no simple rule reproduces for 3-D and
/// 4-D blocks; hence tables.
pub(super) fn order(dims: usize) -> &'static [u8] {
    match dims {
        1 => &ORDER_1,
        2 => &ORDER_2,
        3 => &ORDER_3,
        _ => &ORDER_4,
    }
}

const ORDER_1: [u8; 4] = [0, 1, 2, 3];

const ORDER_2: [u8; 16] = [0, 1, 4, 5, 2, 8, 6, 9, 3, 12, 10, 7, 13, 11, 14, 15];

const ORDER_3: [u8; 64] = [
    0, 1, 4, 16, 20, 17, 5, 2, 8, 32, 21, 6, 18, 24, 9, 33, 36, 3, 12, 48, 22, 25, 37, 40, 34, 10,
    7, 19, 28, 13, 49, 52, 41, 38, 26, 23, 29, 53, 11, 35, 44, 14, 50, 56, 42, 27, 39, 45, 30, 54,
    57, 60, 51, 15, 43, 46, 58, 61, 55, 31, 62, 59, 47, 63,
];

const ORDER_4: [u8; 256] = [
    0, 1, 4, 16, 64, 5, 80, 17, 68, 65, 20, 2, 8, 32, 128, 84, 81, 69, 21, 6, 18, 66, 24, 72, 9,
    96, 33, 36, 129, 132, 144, 3, 12, 48, 192, 85, 82, 70, 22, 73, 25, 88, 37, 100, 97, 148, 145,
    133, 10, 160, 34, 136, 130, 40, 7, 19, 67, 28, 76, 13, 112, 49, 52, 193, 196, 208, 86, 89, 101,
    149, 161, 137, 41, 134, 38, 164, 26, 152, 146, 104, 98, 74, 83, 71, 23, 77, 29, 92, 53, 116,
    113, 212, 209, 197, 11, 35, 131, 44, 140, 14, 176, 50, 56, 194, 200, 224, 90, 165, 102, 153,
    150, 105, 168, 162, 138, 42, 87, 93, 117, 213, 27, 75, 99, 39, 135, 147, 108, 45, 141, 156, 30,
    78, 177, 180, 54, 114, 120, 57, 198, 210, 216, 201, 225, 228, 15, 240, 51, 204, 195, 60, 169,
    166, 154, 106, 91, 103, 151, 109, 157, 94, 181, 118, 121, 214, 217, 229, 163, 139, 43, 142, 46,
    172, 58, 184, 178, 232, 226, 202, 241, 205, 61, 199, 55, 244, 31, 220, 211, 124, 115, 79, 170,
    167, 155, 107, 158, 110, 173, 122, 185, 182, 233, 230, 218, 95, 245, 119, 221, 215, 125, 242,
    206, 62, 203, 59, 248, 47, 236, 227, 188, 179, 143, 171, 174, 186, 234, 246, 222, 126, 219,
    123, 249, 111, 237, 231, 189, 183, 159, 252, 243, 207, 63, 175, 250, 187, 238, 235, 190, 253,
    247, 223, 127, 254, 251, 239, 191, 255,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Sum and sum of squares of a position's base-4 digits.
    fn degree(i: usize, dims: usize) -> (usize, usize) {
        (0..dims).fold((0, 0), |(s, q), a| {
            let c = (i >> (2 * a)) & 3;
            (s + c, q + c * c)
        })
    }

    #[test]
    fn orders_are_permutations_sorted_by_frequency() {
        for dims in 1..=4 {
            let o = order(dims);
            assert_eq!(o.len(), 1 << (2 * dims));
            let mut seen = vec![false; o.len()];
            for &i in o {
                assert!(!seen[i as usize]);
                seen[i as usize] = true;
            }
            for w in o.windows(2) {
                let (a, b) = (degree(w[0] as usize, dims), degree(w[1] as usize, dims));
                assert!(a.0 <= b.0, "{dims}: {w:?}");
                if a.0 == b.0 {
                    assert!(a.1 <= b.1, "{dims}: {w:?}");
                }
            }
        }
    }

    #[test]
    fn lifting_matches_hand_computed_values() {
        // (a, b, c, d) = (8, 4, 2, 0): a=(8+0)>>1=4, d=0-4=-4; c=(2+4)>>1=3,
        // b=4-3=1; a=(4+3)>>1=3, c=3-3=0; d=(-4+1)>>1=-2, b=1-(-2)=3;
        // d=-2+(3>>1)=-1, b=3-(-1>>1)=4.
        let mut v = [8i32, 4, 2, 0];
        lift(&mut v, 0, 1);
        assert_eq!(v, [3, 4, 0, -1]);
        // The halvings lose low bits: the inverse is close, not exact.
        unlift(&mut v, 0, 1);
        assert_eq!(v, [8, 4, 2, -2]);
    }

    #[test]
    fn negabinary_round_trips_and_orders_small_values_low() {
        for x in [0i32, 1, -1, 2, -2, 12345, -99999, i32::MAX, i32::MIN] {
            assert_eq!(i32::from_word(x.to_word()), x);
        }
        for x in [0i64, 1, -1, i64::MAX, i64::MIN, -77] {
            assert_eq!(i64::from_word(x.to_word()), x);
        }
        assert_eq!(0i32.to_word(), 0);
        assert_eq!(1i32.to_word(), 1);
        assert_eq!((-1i32).to_word(), 3);
        assert_eq!(2i32.to_word(), 6);
    }

    #[test]
    fn transforms_of_a_constant_block_leave_one_coefficient() {
        for dims in 1..=4 {
            let n = 1 << (2 * dims);
            let mut b = vec![1i64 << 40; n];
            forward(&mut b, dims);
            assert_eq!(b[0], 1 << 40);
            assert!(b[1..].iter().all(|&v| v == 0), "{dims}");
            inverse(&mut b, dims);
            assert!(b.iter().all(|&v| v == 1 << 40));
        }
    }
}
