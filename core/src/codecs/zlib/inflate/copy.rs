//! Match copies inside the output (RFC 1951 3.2.3: byte by byte, so a match
//! may overlap the bytes it writes), done in chunks.
//!
//! A chunked copy may write up to [`OVERSHOOT`] bytes past the match: those
//! bytes are past the output written so far, and the decoder only asks for a
//! chunked copy when they are inside the buffer. Later symbols overwrite
//! them. Where that room is missing (the last bytes of the output) the copy
//! goes byte by byte.
//!
//! Most matches do not overlap themselves (distance >= length): every byte
//! they need is already final, so a chunk can be loaded whole before it is
//! stored. A match with a period of 1, 2 or 4 bytes (runs, mostly) is one
//! word of its pattern stored over and over. Other overlapping matches need
//! each chunk's source written before it is read: chunks no longer than the
//! distance, and below 8 a word of the repeating pattern stored at steps
//! that keep its phase.

/// Bytes a chunked copy may write past its end.
pub(super) const OVERSHOOT: usize = 32;

/// Bytes a copy with a period of `dist` (2..8) advances per word while
/// keeping the pattern's phase: the largest multiple of `dist` up to 8.
const PATTERN_STEP: [usize; 8] = [8, 8, 8, 6, 8, 5, 6, 7];

/// Copies the `len` bytes from `dist` back to `out[op..]` if the match is
/// one the decode loop copies itself, and says whether it did: a match that
/// does not overlap itself, or one with a period of 1, 2 or 4 bytes. No
/// calls (memmove and the like) and no loops with bounds checks, which the
/// loop is better without. `1 <= dist <= op` and `op + len + OVERSHOOT <=
/// out.len()`.
#[inline(always)]
pub(super) fn copy_short(out: &mut [u8], op: usize, dist: usize, len: usize) -> bool {
    let s = op - dist;
    if dist >= len && len <= 32 {
        let chunk: [u8; 32] = out[s..s + 32].try_into().unwrap();
        out[op..op + 32].copy_from_slice(&chunk);
        return true;
    }
    if dist >= len {
        // Whole chunks from the start, then the last 32 bytes again (the
        // source is final, so the overlap with the previous chunk is
        // harmless): every access stays inside the two halves of a split,
        // so none needs a bounds check.
        let (before, after) = out.split_at_mut(op);
        let (from, to) = (&before[s..s + len], &mut after[..len]);
        for (to, from) in to.chunks_exact_mut(32).zip(from.chunks_exact(32)) {
            to.copy_from_slice(from);
        }
        let tail = len - 32;
        to[tail..].copy_from_slice(&from[tail..]);
        return true;
    }
    if dist <= 4 && dist != 3 {
        // A period of 1, 2 or 4 bytes: a word of the pattern, stored in
        // whole chunks.
        let word = if dist == 1 {
            u64::from(out[s]) * 0x0101_0101_0101_0101
        } else {
            let w: [u8; 4] = out[s..s + 4].try_into().unwrap();
            let w = u64::from(u32::from_le_bytes(w));
            let w = if dist == 2 {
                (w & 0xffff) * 0x0001_0001
            } else {
                w
            };
            w | w << 32
        };
        let whole = (len + 31) & !31;
        for part in out[op..op + whole].chunks_exact_mut(8) {
            part.copy_from_slice(&word.to_le_bytes());
        }
        return true;
    }
    false
}

/// Copies any match; `1 <= dist <= op` and `op + len + OVERSHOOT <=
/// out.len()`.
pub(super) fn copy_match(out: &mut [u8], op: usize, dist: usize, len: usize) {
    if !copy_short(out, op, dist, len) {
        copy_overlapping(out, op, dist, len);
    }
}

/// A match that reads bytes it writes, with a period of 2 or more.
#[inline(always)]
fn copy_overlapping(out: &mut [u8], op: usize, dist: usize, len: usize) {
    let end = op + len;
    let s = op - dist;
    let mut d = op;
    if dist >= 16 {
        return copy_chunks::<16>(out, s, d, end);
    }
    if dist >= 8 {
        return copy_chunks::<8>(out, s, d, end);
    }
    let w: [u8; 8] = out[s..s + 8].try_into().unwrap();
    let shift = 8 * dist as u32;
    let mut p = u64::from_le_bytes(w) & !(u64::MAX << shift);
    p |= p << shift;
    p |= p.checked_shl(2 * shift).unwrap_or(0);
    let word = p.to_le_bytes();
    let step = PATTERN_STEP[dist & 7];
    loop {
        out[d..d + 8].copy_from_slice(&word);
        d += step;
        if d >= end {
            return;
        }
    }
}

/// Copies `N`-byte chunks from `s` to `d` until `end` is passed; the source
/// is `N` or more bytes back, so each chunk is final before it is read.
#[inline(always)]
fn copy_chunks<const N: usize>(out: &mut [u8], mut s: usize, mut d: usize, end: usize) {
    loop {
        let chunk: [u8; N] = out[s..s + N].try_into().unwrap();
        out[d..d + N].copy_from_slice(&chunk);
        s += N;
        d += N;
        if d >= end {
            return;
        }
    }
}

/// As [`copy_match`] without the room past the end: byte by byte.
pub(super) fn copy_bytes(out: &mut [u8], op: usize, dist: usize, len: usize) {
    for i in op..op + len {
        out[i] = out[i - dist];
    }
}
