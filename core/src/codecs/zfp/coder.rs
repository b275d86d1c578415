//! The embedded bit-plane coder: a block's coefficient words (already in
//! coding order) are sent one bit plane at a time, most significant first.
//! In each plane the bits of the coefficients already known to be significant
//! go out verbatim; the rest are found by group tests — a 1 says "another
//! coefficient becomes significant in this plane", followed by a unary scan
//! to it; a 0 ends the plane. Coding stops after `maxprec` planes or when the
//! bit budget `maxbits` is spent, whichever comes first, so a cut stream
//! decodes to a coarser block, never to a wrong one.
//!
//! Blocks of up to 64 coefficients keep a plane in one `u64`; 4-D blocks
//! (256 coefficients) work on the words directly. Both forms write the same
//! bits.

use super::bitstream::{Reader, Writer};
use super::transform::Word;

/// The plane-count floor: planes below `BITS - maxprec` are not coded.
fn lowest_plane<W: Word>(maxprec: u32) -> u32 {
    W::BITS.saturating_sub(maxprec)
}

/// `x >> n` for `n` up to 64.
#[inline]
fn shr(x: u64, n: u64) -> u64 {
    if n >= 64 {
        0
    } else {
        x >> n
    }
}

/// Codes `data` (at most 256 words) with at most `maxbits` bits and
/// `maxprec` planes; returns the bits written.
pub(super) fn encode<W: Word>(w: &mut Writer<'_>, maxbits: u64, maxprec: u32, data: &[W]) -> u64 {
    if data.len() <= 64 {
        encode_small(w, maxbits, maxprec, data)
    } else {
        encode_large(w, maxbits, maxprec, data)
    }
}

/// Reads back what [`encode`] wrote with the same `maxbits` and `maxprec`
/// into `data` (all of it is overwritten); returns the bits read.
pub(super) fn decode<W: Word>(
    r: &mut Reader<'_>,
    maxbits: u64,
    maxprec: u32,
    data: &mut [W],
) -> u64 {
    if data.len() <= 64 {
        decode_small(r, maxbits, maxprec, data)
    } else {
        decode_large(r, maxbits, maxprec, data)
    }
}

fn encode_small<W: Word>(w: &mut Writer<'_>, maxbits: u64, maxprec: u32, data: &[W]) -> u64 {
    let size = data.len() as u64;
    let floor = lowest_plane::<W>(maxprec);
    let mut budget = maxbits;
    // Coefficients 0..known are significant (have had a 1 in an earlier plane).
    let mut known = 0u64;
    let mut k = W::BITS;
    while budget > 0 && k > floor {
        k -= 1;
        let mut plane = data
            .iter()
            .enumerate()
            .fold(0u64, |p, (i, v)| p | (v.bit(k) << i));
        let m = known.min(budget);
        budget -= m;
        w.bits(plane, m as u32);
        plane = shr(plane, m);
        while budget > 0 && known < size {
            budget -= 1;
            if !w.bit(plane != 0) {
                break;
            }
            while budget > 0 && known < size - 1 {
                budget -= 1;
                if w.bit(plane & 1 != 0) {
                    break;
                }
                plane >>= 1;
                known += 1;
            }
            plane >>= 1;
            known += 1;
        }
    }
    maxbits - budget
}

/// Reads one bit plane's group tests: from value `*known` on, which values
/// turn significant in this plane, calling `mark` with each one's index.
/// Spends at most `*budget` bits and advances `*known` past the last one.
#[inline(always)]
fn read_group_tests(
    r: &mut Reader<'_>,
    budget: &mut u64,
    known: &mut u64,
    size: u64,
    mut mark: impl FnMut(u64),
) {
    while *budget > 0 && *known < size {
        *budget -= 1;
        if !r.bit() {
            break;
        }
        while *budget > 0 && *known < size - 1 {
            *budget -= 1;
            if r.bit() {
                break;
            }
            *known += 1;
        }
        mark(*known);
        *known += 1;
    }
}

fn decode_small<W: Word>(r: &mut Reader<'_>, maxbits: u64, maxprec: u32, data: &mut [W]) -> u64 {
    let size = data.len() as u64;
    let floor = lowest_plane::<W>(maxprec);
    data.fill(W::default());
    let mut budget = maxbits;
    let mut known = 0u64;
    let mut k = W::BITS;
    while budget > 0 && k > floor {
        k -= 1;
        let m = known.min(budget);
        budget -= m;
        let mut plane = r.bits(m as u32);
        read_group_tests(r, &mut budget, &mut known, size, |i| plane |= 1 << i);
        while plane != 0 {
            let i = plane.trailing_zeros() as usize;
            data[i].set(k);
            plane &= plane - 1;
        }
    }
    maxbits - budget
}

fn encode_large<W: Word>(w: &mut Writer<'_>, maxbits: u64, maxprec: u32, data: &[W]) -> u64 {
    let size = data.len();
    let floor = lowest_plane::<W>(maxprec);
    let mut budget = maxbits;
    let mut known = 0usize;
    let mut k = W::BITS;
    while budget > 0 && k > floor {
        k -= 1;
        let m = (known as u64).min(budget) as usize;
        budget -= m as u64;
        for v in &data[..m] {
            w.bit(v.bit(k) != 0);
        }
        // Ones left in this plane among the coefficients not yet significant.
        let mut ones: u64 = data[m..].iter().map(|v| v.bit(k)).sum();
        while budget > 0 && known < size {
            budget -= 1;
            if !w.bit(ones != 0) {
                break;
            }
            ones = ones.saturating_sub(1);
            while budget > 0 && known < size - 1 {
                budget -= 1;
                if w.bit(data[known].bit(k) != 0) {
                    break;
                }
                known += 1;
            }
            known += 1;
        }
    }
    maxbits - budget
}

fn decode_large<W: Word>(r: &mut Reader<'_>, maxbits: u64, maxprec: u32, data: &mut [W]) -> u64 {
    let size = data.len();
    let floor = lowest_plane::<W>(maxprec);
    data.fill(W::default());
    let mut budget = maxbits;
    let mut known = 0usize;
    let mut k = W::BITS;
    while budget > 0 && k > floor {
        k -= 1;
        let m = (known as u64).min(budget) as usize;
        budget -= m as u64;
        for v in &mut data[..m] {
            if r.bit() {
                v.set(k);
            }
        }
        let mut known64 = known as u64;
        read_group_tests(r, &mut budget, &mut known64, size as u64, |i| {
            data[i as usize].set(k)
        });
        known = known64 as usize;
    }
    maxbits - budget
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize, seed: u64, top: u32) -> Vec<u32> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Magnitudes falling with the position, as after the transform.
                ((s >> 32) as u32) >> (32 - top).max((i as u32 * 3) / 8).min(31)
            })
            .collect()
    }

    #[test]
    fn all_planes_round_trip_for_every_block_size() {
        for n in [4usize, 16, 64, 256] {
            let data = words(n, n as u64, 30);
            let mut buf = vec![0u8; 8 * n * 5];
            let mut w = Writer::new(&mut buf);
            let bits = encode(&mut w, u64::MAX / 2, 64, &data);
            assert_eq!(bits, w.tell());
            w.finish();
            let mut back = vec![0u32; n];
            let mut r = Reader::new(&buf);
            assert_eq!(decode(&mut r, u64::MAX / 2, 64, &mut back), bits);
            assert_eq!(back, data, "{n}");
        }
    }

    #[test]
    fn cut_streams_keep_the_leading_planes_and_agree_both_ways() {
        for n in [16usize, 256] {
            let data = words(n, 7, 28);
            for (maxbits, maxprec) in [(40u64, 64u32), (301, 64), (10_000, 5), (7, 2)] {
                let mut buf = vec![0u8; 8 * n * 5];
                let mut w = Writer::new(&mut buf);
                let bits = encode(&mut w, maxbits, maxprec, &data);
                assert!(bits <= maxbits);
                w.finish();
                let mut back = vec![0u32; n];
                let mut r = Reader::new(&buf);
                assert_eq!(decode(&mut r, maxbits, maxprec, &mut back), bits);
                if maxbits == 10_000 {
                    // Whole planes: exactly the top `maxprec` bits survive.
                    let mask = !0u32 << (32 - maxprec);
                    let want: Vec<u32> = data.iter().map(|v| v & mask).collect();
                    assert_eq!(back, want);
                }
                // Every decoded bit is a bit of the source.
                assert!(back.iter().zip(&data).all(|(b, d)| b & !d == 0));
            }
        }
    }

    #[test]
    fn small_and_large_forms_write_the_same_bits() {
        // The 4-D form run on 64 words (by calling it directly) matches the
        // u64-plane form bit for bit, budget cuts included.
        let data = words(64, 3, 31);
        for maxbits in [1u64, 9, 100, 1000, 5000] {
            let mut a = vec![0u8; 4096];
            let mut b = vec![0u8; 4096];
            let mut wa = Writer::new(&mut a);
            let mut wb = Writer::new(&mut b);
            let na = encode_small(&mut wa, maxbits, 64, &data);
            let nb = encode_large(&mut wb, maxbits, 64, &data);
            wa.finish();
            wb.finish();
            assert_eq!(na, nb);
            assert_eq!(a, b, "{maxbits}");
            let mut da = vec![0u32; 64];
            let mut db = vec![0u32; 64];
            decode_small(&mut Reader::new(&a), maxbits, 64, &mut da);
            decode_large(&mut Reader::new(&a), maxbits, 64, &mut db);
            assert_eq!(da, db);
        }
    }

    #[test]
    fn a_zero_block_costs_one_bit_per_plane() {
        let data = [0u64; 16];
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        assert_eq!(encode(&mut w, 10_000, 20, &data), 20);
    }
}
