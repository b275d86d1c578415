//! Byte-delta filter (the reference's global plugin `BLOSC_FILTER_BYTEDELTA`,
//! id 35, and its predecessor `BLOSC_FILTER_BYTEDELTA_BUGGY`, id 34).
//!
//! Meant to follow a shuffle: the block is `typesize` streams of
//! `len / typesize` bytes, and each byte is stored as its difference (mod 256)
//! from the byte before it in the same stream (the first one from 0). The
//! `len % typesize` bytes at the end are copied.
//!
//! The old variant, as every SIMD build of the reference (x86 and ARM) wrote
//! it, restarts the difference at 0 after the stream's whole 16-byte groups,
//! and never writes the trailing bytes (undefined in its output; copied here).
//! Chunks written with id 34 must keep decoding, so both are implemented.

/// Where the running difference restarts from 0 in a stream of `n` bytes:
/// only at its start (id 35), or also after its whole 16-byte groups (id 34).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Fixed,
    Buggy,
}

impl Variant {
    /// Bytes of a stream of `n` bytes before the difference restarts.
    fn first_run(self, n: usize) -> usize {
        match self {
            Variant::Fixed => n,
            Variant::Buggy => n - n % 16,
        }
    }
}

/// Encodes `src` into `dst` (same length) with `typesize` streams.
///
/// # Panics
/// If the lengths differ or `typesize` is 0 (caller bugs).
pub fn encode(variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert!(
        typesize > 0 && src.len() == dst.len(),
        "bytedelta: bad call"
    );
    let n = src.len() / typesize;
    let body = n * typesize;
    if n > 0 {
        for (s, d) in src[..body]
            .chunks_exact(n)
            .zip(dst[..body].chunks_exact_mut(n))
        {
            let cut = variant.first_run(n);
            for part in [(0, cut), (cut, n)] {
                let (s, d) = (&s[part.0..part.1], &mut d[part.0..part.1]);
                let Some((&first, _)) = s.split_first() else {
                    continue;
                };
                d[0] = first;
                // Each output byte depends on two inputs only: vectorised.
                for ((o, &cur), &prev) in d[1..].iter_mut().zip(&s[1..]).zip(s) {
                    *o = cur.wrapping_sub(prev);
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`encode`].
///
/// # Panics
/// As [`encode`].
pub fn decode(variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert!(
        typesize > 0 && src.len() == dst.len(),
        "bytedelta: bad call"
    );
    let n = src.len() / typesize;
    let body = n * typesize;
    if n > 0 {
        for (s, d) in src[..body]
            .chunks_exact(n)
            .zip(dst[..body].chunks_exact_mut(n))
        {
            let cut = variant.first_run(n);
            for part in [(0, cut), (cut, n)] {
                let mut acc = 0u8;
                for (o, &delta) in d[part.0..part.1].iter_mut().zip(&s[part.0..part.1]) {
                    acc = acc.wrapping_add(delta);
                    *o = acc;
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, one byte at a time.
    fn naive(variant: Variant, typesize: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / typesize;
        let mut out = src.to_vec();
        for s in 0..typesize {
            let mut prev = 0u8;
            for k in 0..n {
                if variant == Variant::Buggy && k == n - n % 16 {
                    prev = 0;
                }
                let v = src[s * n + k];
                out[s * n + k] = v.wrapping_sub(prev);
                prev = v;
            }
        }
        out
    }

    #[test]
    fn matches_the_definition_and_round_trips() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 7, 15, 16, 17, 31, 33, 64, 100, 257, 1000, 4099] {
            let src: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            for typesize in [1usize, 2, 3, 4, 8, 16, 255] {
                for variant in [Variant::Fixed, Variant::Buggy] {
                    let mut enc = vec![0u8; len];
                    encode(variant, typesize, &src, &mut enc);
                    assert_eq!(
                        enc,
                        naive(variant, typesize, &src),
                        "{variant:?} {typesize} {len}"
                    );
                    let mut dec = vec![0u8; len];
                    decode(variant, typesize, &enc, &mut dec);
                    assert_eq!(dec, src);
                }
            }
        }
    }
}
