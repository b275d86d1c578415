//! Delta filter (`BLOSC_DELTA`): XOR each block against a reference block.
//!
//! The first block of a chunk (offset 0) is coded against itself, each item
//! XORed with the item before it; every later block is XORed byte for byte
//! with the chunk's first block of original data. Decoding therefore needs the
//! first block decoded before any other.
//!
//! The item width used for the XOR is the reference's: 1, 2, 4 or 8 bytes for
//! those type sizes, 8 for other multiples of 8, else 1. Only the bytes of
//! whole items of that width are coded; any trailing bytes (possible only when
//! a block is not a multiple of the type size, which valid chunks never
//! produce) are copied through unchanged.

/// Width in bytes of the items the reference XORs for a given type size.
fn item_width(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

/// Delta encode one block into `dst` (same length as `src`).
///
/// `offset` is the byte offset of this block inside the chunk. For the first
/// block (`offset == 0`) `dref` is not read: the reference passes the block's
/// own filter input there, so the block is coded against itself (item `i`
/// XOR item `i - 1`, item 0 kept). For any other block `dref` is the start of
/// the chunk's ORIGINAL (unfiltered) data, at least `src.len()` bytes, i.e. the
/// first block; the block is XORed with its first `src.len()` bytes.
///
/// # Panics
/// If `dst.len() != src.len()`, or `offset != 0` and `dref.len() < src.len()`
/// (caller bugs; block sizes are validated before filters run).
pub fn encode(dref: &[u8], offset: usize, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "delta: source and destination lengths differ"
    );
    let width = item_width(typesize);
    let body = src.len() - src.len() % width;
    if offset == 0 {
        let head = width.min(body);
        dst[..head].copy_from_slice(&src[..head]);
        if body > width {
            let cur = &src[width..body];
            let prev = &src[..body - width];
            for ((d, &c), &p) in dst[width..body].iter_mut().zip(cur).zip(prev) {
                *d = c ^ p;
            }
        }
    } else {
        assert!(
            dref.len() >= body,
            "delta: reference block shorter than the block"
        );
        for ((d, &s), &r) in dst[..body].iter_mut().zip(&src[..body]).zip(&dref[..body]) {
            *d = s ^ r;
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`encode`], in place on `buf`.
///
/// For the first block (`offset == 0`) `dref` is not read: the reference
/// decodes that block against its own already decoded items, which are in
/// `buf`. For any other block `dref` is the chunk's first block, already
/// DECODED (at least `buf.len()` bytes).
///
/// # Panics
/// If `offset != 0` and `dref.len() < buf.len()` (a caller bug).
pub fn decode(dref: &[u8], offset: usize, typesize: usize, buf: &mut [u8]) {
    let width = item_width(typesize);
    let body = buf.len() - buf.len() % width;
    if offset == 0 {
        decode_first_block(width, &mut buf[..body]);
    } else {
        assert!(
            dref.len() >= body,
            "delta: reference block shorter than the block"
        );
        for (b, &r) in buf[..body].iter_mut().zip(&dref[..body]) {
            *b ^= r;
        }
    }
}

/// Undoes the self-referencing code of the first block: a running XOR with a
/// lag of `width` bytes. Eight bytes are handled per step: within a word the
/// running XOR is a prefix XOR at the item width (log2 shifts), and the carry
/// from the previous word is its last item repeated across the word.
fn decode_first_block(width: usize, buf: &mut [u8]) {
    // `buf.len()` is a multiple of `width`, which divides 8.
    let mut carry = 0u64;
    let mut words = buf.chunks_exact_mut(8);
    for word in &mut words {
        let mut x = u64::from_le_bytes(word.try_into().expect("8-byte chunk"));
        let mut shift = 8 * width;
        while shift < 64 {
            x ^= x << shift;
            shift *= 2;
        }
        x ^= carry;
        word.copy_from_slice(&x.to_le_bytes());
        carry = repeat_last_item(x, width);
    }
    let rest = words.into_remainder();
    // Fewer than 8 bytes left: byte-wise, starting from the carried item.
    let carry_bytes = carry.to_le_bytes();
    for i in 0..rest.len() {
        let prev = if i >= width {
            rest[i - width]
        } else {
            carry_bytes[i]
        };
        rest[i] ^= prev;
    }
}

/// The top `width` bytes of `x` repeated to fill a word: the decoded item that
/// every item of the next word is XORed with.
fn repeat_last_item(x: u64, width: usize) -> u64 {
    let bits = 8 * width;
    let mut item = if bits == 64 { x } else { x >> (64 - bits) };
    let mut filled = bits;
    while filled < 64 {
        item |= item << filled;
        filled *= 2;
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straight per-byte model of the reference's semantics.
    fn model_encode(dref: &[u8], offset: usize, typesize: usize, src: &[u8]) -> Vec<u8> {
        let w = item_width(typesize);
        let body = src.len() / w * w;
        let mut out = src.to_vec();
        for b in 0..body {
            out[b] = if offset == 0 {
                if b < w {
                    src[b]
                } else {
                    src[b] ^ src[b - w]
                }
            } else {
                src[b] ^ dref[b]
            };
        }
        out
    }

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn item_widths_follow_the_reference() {
        let got: Vec<usize> = [1, 2, 3, 4, 5, 8, 12, 16, 24, 255]
            .iter()
            .map(|&t| item_width(t))
            .collect();
        assert_eq!(got, [1, 2, 1, 4, 1, 8, 1, 8, 8, 1]);
    }

    #[test]
    fn encode_matches_model_and_decode_inverts() {
        for typesize in [1usize, 2, 3, 4, 7, 8, 12, 16, 24, 32] {
            for len in (0..70).chain([255, 256, 1000, 1001]) {
                let first = bytes(len + 64, typesize as u64);
                let src = bytes(len, 1000 + len as u64);
                for offset in [0usize, 4096] {
                    let input = if offset == 0 { &first[..len] } else { &src[..] };
                    let mut enc = vec![0u8; len];
                    encode(&first, offset, typesize, input, &mut enc);
                    assert_eq!(
                        enc,
                        model_encode(&first, offset, typesize, input),
                        "ts {typesize} len {len} off {offset}"
                    );
                    decode(&first, offset, typesize, &mut enc);
                    assert_eq!(
                        enc, input,
                        "round trip ts {typesize} len {len} off {offset}"
                    );
                }
            }
        }
    }

    #[test]
    fn ramp_first_block_becomes_small_deltas() {
        // u32 items 0,1,2,3: each XORed with its predecessor.
        let src: Vec<u8> = [0u32, 1, 2, 3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut enc = vec![0u8; 16];
        encode(&[], 0, 4, &src, &mut enc);
        let want: Vec<u8> = [0u32, 1, 3, 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(enc, want);
    }
}
