//! The symbols of one Huffman-coded block: literals, length/distance pairs,
//! and the end-of-block code.
//!
//! Two loops. The fast one runs while the input has [`FAST_INPUT`] bytes
//! left and the output [`FAST_ROOM`]: one iteration can then neither read
//! past the input nor write past the output, so it refills without looking
//! for the end, and its literal stores and short match copies need no room
//! checks. The careful one finishes the block near either end with the end
//! tests per symbol; for the whole-stream decoding Blosc does, it runs over
//! the last few hundred bytes of a stream.
//!
//! Instruction counts (callgrind) steered the fast loop's shape:
//! - Literals come in runs of up to 5 to 8 per refill (by the block's
//!   longest literal code, see [`literal_run`]; one copy of the loop per run
//!   length), unrolled, each a table read, a shift, a subtraction and a byte
//!   store; the loop's checks and refill are paid once per run.
//! - The loop is its own function and makes no calls: with a call in it (a
//!   memmove for a long match), or more code competing for registers (a
//!   bounds-checked copy loop), the compiler kept the bit buffer or the
//!   table address in memory and every literal paid for it. Matches that
//!   [`copy_short`] does not take (overlapping ones with a period other than
//!   1, 2 or 4) leave the loop ([`Exit::LongMatch`]) and are copied by the
//!   caller, which then re-enters it.
//!
//! Bit budget of a fast iteration: a refill leaves at least 56 bits. Main
//! table literals take at most 11 bits each; after any literal the buffer is
//! topped up again (when below 48 bits) before a length and distance, which
//! take at most 15 + 5 and 15 + 13 bits.

use super::bits::{entry_value, Bits};
use super::copy::{copy_bytes, copy_match, copy_short, OVERSHOOT};
use super::table::{BlockCodes, END_OF_BLOCK, EXCEPTIONAL, LITERAL, SUBTABLE};

/// Literals a fast iteration decodes at most, given the longest literal
/// code of the main table (`codes.literal_bits`; longer ones go through a
/// subtable): `n` literals must fit the 56 bits a refill guarantees, and
/// looking up the symbol after the first `n - 1` takes 11 stream bits, which
/// are still in the buffer while at most 53 of the 64 a refill loads are
/// gone (the bits above the counted ones are the stream's next; see
/// `bits`).
fn literal_run(literal_bits: u32) -> usize {
    match literal_bits {
        0..=7 => 8,
        8 => 7,
        9 => 6,
        _ => 5,
    }
}
/// The longest run [`literal_run`] gives.
const MAX_LITERAL_RUN: usize = 8;
/// Output room a fast iteration needs: the literals before a match, a
/// longest match, and what its last chunk writes past it.
const FAST_ROOM: usize = MAX_LITERAL_RUN - 1 + 258 + OVERSHOOT;
/// Input a fast iteration may load: two 8-byte refills, the second at most
/// 7 bytes further on.
const FAST_INPUT: usize = 16;
/// Bits a length and a distance need at most.
const MATCH_BITS: u8 = 48;

/// Decodes the rest of a block into `out` from `op`; returns the output
/// position after it, or `None` when the data is invalid or does not fit.
pub(super) fn decode_block(
    bits: &mut Bits<'_>,
    out: &mut [u8],
    op: usize,
    codes: &BlockCodes,
) -> Option<usize> {
    let mut op = op;
    loop {
        let exit = match literal_run(codes.literal_bits) {
            8 => fast::<8>(bits, out, op, codes),
            7 => fast::<7>(bits, out, op, codes),
            6 => fast::<6>(bits, out, op, codes),
            _ => fast::<5>(bits, out, op, codes),
        };
        match exit? {
            Exit::EndOfBlock(op) => return Some(op),
            Exit::NearEnd(op) => return careful(bits, out, op, codes),
            Exit::LongMatch { op: at, dist, len } => {
                copy_match(out, at, dist, len);
                op = at + len;
            }
        }
    }
}

enum Exit {
    EndOfBlock(usize),
    /// Too close to the end of the input or output for the fast loop.
    NearEnd(usize),
    /// A match [`copy_short`] does not take, for the caller to copy.
    LongMatch {
        op: usize,
        dist: usize,
        len: usize,
    },
}

/// Tops `buf` up to at least 56 bits from the 8 bytes at `word`; returns the
/// bytes it took in full. `left`'s low byte is the count of valid bits; its
/// higher bits are whatever subtracting whole table entries left there
/// (one instruction per symbol instead of masking the entry first).
#[inline(always)]
fn refill(buf: &mut u64, left: &mut u32, word: &[u8; 8]) -> usize {
    *buf |= u64::from_le_bytes(*word) << (*left & 63);
    let took = 7 - ((*left as usize >> 3) & 7);
    *left |= 56;
    took
}

/// Drops the bits `entry` says it consumes.
#[inline(always)]
fn consume(buf: &mut u64, left: &mut u32, entry: u32) {
    *buf >>= entry & 63;
    *left = left.wrapping_sub(entry);
}

// Kept apart from its caller so that nothing else competes for registers
// in the loop.
#[inline(never)]
fn fast<const RUN: usize>(
    bits: &mut Bits<'_>,
    out: &mut [u8],
    mut op: usize,
    codes: &BlockCodes,
) -> Option<Exit> {
    const { assert!(RUN >= 5 && RUN <= MAX_LITERAL_RUN) };
    let input = bits.input;
    let (Some(in_limit), Some(out_limit)) = (
        input.len().checked_sub(FAST_INPUT),
        out.len().checked_sub(FAST_ROOM),
    ) else {
        return Some(Exit::NearEnd(op));
    };
    let (litlen, dist) = (&codes.litlen, &codes.dist);
    let mut pos = bits.pos;
    let mut buf = bits.buf;
    let mut left = bits.left;
    let exit = 'fast: loop {
        if pos > in_limit || op > out_limit {
            break Exit::NearEnd(op);
        }
        pos += refill(&mut buf, &mut left, input[pos..pos + 8].try_into().unwrap());
        let mut e = litlen.main(buf);
        if e & LITERAL != 0 {
            let room: &mut [u8; RUN] = (&mut out[op..op + RUN]).try_into().unwrap();
            // Stores the literal `e` at `room[$i]` and, but for the last,
            // looks up the next symbol, leaving the run at one that is no
            // literal. (Written out: as a loop it compiled to more
            // instructions.)
            macro_rules! literal {
                ($i:expr) => {
                    consume(&mut buf, &mut left, e);
                    room[$i] = (e >> 16) as u8;
                    op += 1;
                };
                ($i:expr, or_leave $run:lifetime) => {
                    literal!($i);
                    e = litlen.main(buf);
                    if e & LITERAL == 0 {
                        break $run;
                    }
                };
            }
            'run: {
                literal!(0, or_leave 'run);
                literal!(1, or_leave 'run);
                literal!(2, or_leave 'run);
                literal!(3, or_leave 'run);
                if RUN > 5 {
                    literal!(4, or_leave 'run);
                }
                if RUN > 6 {
                    literal!(5, or_leave 'run);
                }
                if RUN > 7 {
                    literal!(6, or_leave 'run);
                }
                literal!(RUN - 1);
                continue 'fast;
            }
            if (left as u8) < MATCH_BITS {
                // `pos` moved at most 7 bytes into the window.
                let word = input[pos..pos + 8].try_into().unwrap();
                pos += refill(&mut buf, &mut left, word);
            }
        }
        if e & EXCEPTIONAL != 0 {
            if e & SUBTABLE != 0 {
                consume(&mut buf, &mut left, e);
                e = litlen.sub(e, buf);
                if e & LITERAL != 0 {
                    consume(&mut buf, &mut left, e);
                    out[op] = (e >> 16) as u8;
                    op += 1;
                    continue;
                }
            }
            if e & EXCEPTIONAL != 0 {
                if e & END_OF_BLOCK != 0 {
                    consume(&mut buf, &mut left, e);
                    break Exit::EndOfBlock(op);
                }
                return None;
            }
        }
        let len = entry_value(buf, e);
        consume(&mut buf, &mut left, e);
        let mut d = dist.main(buf);
        if d & EXCEPTIONAL != 0 {
            if d & SUBTABLE == 0 {
                return None;
            }
            consume(&mut buf, &mut left, d);
            d = dist.sub(d, buf);
            if d & EXCEPTIONAL != 0 {
                return None;
            }
        }
        let distance = entry_value(buf, d);
        consume(&mut buf, &mut left, d);
        if distance > op {
            return None;
        }
        if !copy_short(out, op, distance, len) {
            break Exit::LongMatch {
                op,
                dist: distance,
                len,
            };
        }
        op += len;
    };
    bits.pos = pos;
    bits.buf = buf;
    bits.left = left & 0xff;
    Some(exit)
}

#[inline(never)]
fn careful(
    bits: &mut Bits<'_>,
    out: &mut [u8],
    mut op: usize,
    codes: &BlockCodes,
) -> Option<usize> {
    let (litlen, dist) = (&codes.litlen, &codes.dist);
    loop {
        bits.refill()?;
        let mut e = litlen.main(bits.buf);
        if e & SUBTABLE != 0 {
            bits.consume(e & 0xff);
            e = litlen.sub(e, bits.buf);
        }
        if e & LITERAL != 0 {
            bits.consume(e & 0xff);
            *out.get_mut(op)? = (e >> 16) as u8;
            op += 1;
            continue;
        }
        if e & EXCEPTIONAL != 0 {
            if e & END_OF_BLOCK != 0 {
                bits.consume(e & 0xff);
                return Some(op);
            }
            return None;
        }
        let len = bits.value(e);
        let mut d = dist.main(bits.buf);
        if d & SUBTABLE != 0 {
            bits.consume(d & 0xff);
            d = dist.sub(d, bits.buf);
        }
        if d & EXCEPTIONAL != 0 {
            return None;
        }
        let distance = bits.value(d);
        if distance > op || len > out.len() - op {
            return None;
        }
        if out.len() - op - len >= OVERSHOOT {
            copy_match(out, op, distance, len);
        } else {
            copy_bytes(out, op, distance, len);
        }
        op += len;
    }
}
