//! Fast path for blocks whose items are all one value (constant arrays,
//! zero-filled regions): their bit transpose is a run of `0x00` or `0xff`
//! bytes per bit row, so both directions reduce to filling memory instead of
//! transposing it.
//!
//! The checks stop at the first difference, which for ordinary data comes
//! within the first bytes (the low bits of the first byte vary), so other
//! blocks pay next to nothing for trying.

use super::transposed_items;
use crate::filters::run::is_run;

/// Item sizes the fast path handles (the item is rebuilt on the stack).
const MAX_ITEM: usize = 256;

/// Bit shuffle of `src` into `dst` if all transposed items are equal;
/// returns whether it did (`false`: nothing written). Arguments are checked.
pub(super) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> bool {
    let n8 = transposed_items(typesize, src.len());
    let body = n8 * typesize;
    if n8 == 0 || typesize > MAX_ITEM {
        return false;
    }
    let items = &src[..body];
    // Periodic with period `typesize` <=> every item equals the first.
    if items[typesize..] != items[..body - typesize] {
        return false;
    }
    let row_len = n8 / 8;
    for (b, row) in dst[..body].chunks_exact_mut(row_len).enumerate() {
        let bit = (items[b / 8] >> (b % 8)) & 1;
        row.fill(0u8.wrapping_sub(bit));
    }
    dst[body..].copy_from_slice(&src[body..]);
    true
}

/// Inverse of [`shuffle`]: if every bit row of `src` is a run of `0x00` or
/// `0xff`, writes the repeated item and returns `true`; else writes nothing.
pub(super) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> bool {
    let n8 = transposed_items(typesize, src.len());
    let body = n8 * typesize;
    if n8 == 0 || typesize > MAX_ITEM {
        return false;
    }
    let rows = src[..body].chunks_exact(n8 / 8);
    if !rows
        .clone()
        .all(|row| matches!(row[0], 0 | 0xff) && is_run(row, row[0]))
    {
        return false;
    }
    // Built only once the block qualifies: other blocks, nearly all of
    // them, no longer clear the item buffer for nothing.
    let mut item = [0u8; MAX_ITEM];
    for (b, row) in rows.enumerate() {
        item[b / 8] |= (row[0] & 1) << (b % 8);
    }
    fill_with(&mut dst[..body], &item[..typesize]);
    dst[body..].copy_from_slice(&src[body..]);
    true
}

/// Fills `dst` (a multiple of `item.len()` bytes) with copies of `item`:
/// the first copies one by one, then the filled prefix doubles each step, so
/// most bytes are written by large memcpys (which the C library does with
/// full-line string stores, faster than any store loop here).
fn fill_with(dst: &mut [u8], item: &[u8]) {
    let len = dst.len();
    if len == 0 || item.is_empty() {
        return;
    }
    dst[..item.len()].copy_from_slice(item);
    let mut filled = item.len();
    while filled < len {
        let n = filled.min(len - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{bitshuffle_with, bitunshuffle_with};
    use super::*;
    use crate::filters::cpu::SimdLevel;
    use crate::filters::test_util::{lengths, typesizes, Rng};

    /// Repeated items, with and without one flipped bit anywhere: the fast
    /// path gives the scalar kernel's bytes when it applies and declines
    /// (writing nothing) when the block is not constant.
    #[test]
    fn matches_the_scalar_kernel_or_declines() {
        let mut rng = Rng::new(11);
        for typesize in typesizes() {
            for len in lengths().into_iter().filter(|&l| l <= 4099) {
                let item = rng.bytes(typesize);
                let constant: Vec<u8> = item.iter().copied().cycle().take(len).collect();
                let mut cases = vec![constant.clone()];
                // Flip one bit at a few positions (all of them for short buffers).
                let step = (len / 40).max(1);
                for at in (0..len).step_by(step) {
                    let mut c = constant.clone();
                    c[at] ^= 1 << (at % 8);
                    cases.push(c);
                }
                for (k, src) in cases.iter().enumerate() {
                    let n8 = transposed_items(typesize, len);
                    let eligible = n8 > 0 && typesize <= MAX_ITEM;
                    let mut want = vec![0u8; len];
                    bitshuffle_with(SimdLevel::Scalar, typesize, src, &mut want);
                    let mut got = vec![0x5au8; len];
                    let took = shuffle(typesize, src, &mut got);
                    let body_constant = {
                        let body = &src[..n8 * typesize];
                        body.len() < typesize || body[typesize..] == body[..body.len() - typesize]
                    };
                    assert_eq!(
                        took,
                        eligible && body_constant,
                        "ts {typesize} len {len} case {k}"
                    );
                    if took {
                        assert!(got == want, "shuffle ts {typesize} len {len} case {k}");
                    } else {
                        assert!(got.iter().all(|&b| b == 0x5a), "declined but wrote");
                    }
                    // Backwards, from the true shuffled bytes.
                    let mut back = vec![0xa5u8; len];
                    let took = unshuffle(typesize, &want, &mut back);
                    assert_eq!(
                        took,
                        eligible && body_constant,
                        "ts {typesize} len {len} case {k}"
                    );
                    if took {
                        let mut scalar = vec![0u8; len];
                        bitunshuffle_with(SimdLevel::Scalar, typesize, &want, &mut scalar);
                        assert!(back == scalar, "unshuffle ts {typesize} len {len} case {k}");
                        assert!(back == *src, "round trip ts {typesize} len {len} case {k}");
                    } else {
                        assert!(back.iter().all(|&b| b == 0xa5), "declined but wrote");
                    }
                }
            }
        }
    }

    /// Rows that are runs but not of 0x00/0xff, and a run broken only in
    /// its last byte, are not taken for repeated items.
    #[test]
    fn only_all_zero_or_all_one_rows_qualify() {
        for typesize in [1usize, 2, 4, 8] {
            let len = 8 * typesize * 100;
            let mut src = vec![0u8; len];
            let mut out = vec![0u8; len];
            assert!(unshuffle(typesize, &src, &mut out));
            assert!(out.iter().all(|&b| b == 0));
            src.fill(0x0f);
            assert!(!unshuffle(typesize, &src, &mut out));
            src.fill(0xff);
            *src.last_mut().unwrap() = 0xfe;
            assert!(!unshuffle(typesize, &src, &mut out));
        }
    }

    /// The fill repeats the item exactly, for every item size up to 70.
    #[test]
    fn fill_repeats_the_item() {
        let mut rng = Rng::new(5);
        for size in 1..=70usize {
            let item = rng.bytes(size);
            for count in [0usize, 1, 2, 3, 7, 8, 9, 63, 64, 65, 200] {
                let mut dst = vec![0xa5u8; size * count];
                fill_with(&mut dst, &item);
                let want: Vec<u8> = item.iter().copied().cycle().take(size * count).collect();
                assert_eq!(dst, want, "item {size} count {count}");
            }
        }
    }
}
