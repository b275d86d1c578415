//! A dynamic block's header (RFC 1951 3.2.7): the code-length code, then
//! the literal/length and distance code lengths it codes, then their tables.

use super::bits::Bits;
use super::table::{
    BlockCodes, CodeLenTable, Completeness, LitLenTable, CODELEN_TEMPLATES, DIST_TEMPLATES,
    LITLEN_TEMPLATES,
};

/// The order the code-length code's lengths are sent in.
const CODELEN_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Reads the header after the block type bits and builds `codes` from it. `None` on anything zlib refuses: more than 286
/// literal/length or 30 distance codes, codes that are over-subscribed or
/// incomplete beyond what [`Completeness`] allows, a repeat with nothing
/// before it or past the last length, no end-of-block code.
pub(super) fn read_tables(
    bits: &mut Bits<'_>,
    codelen: &mut CodeLenTable,
    codes: &mut BlockCodes,
) -> Option<()> {
    bits.refill()?;
    let nlit = bits.take(5) as usize + 257;
    let ndist = bits.take(5) as usize + 1;
    let ncodelen = bits.take(4) as usize + 4;
    if nlit > 286 || ndist > 30 {
        return None;
    }
    let mut codelen_lens = [0u8; 19];
    for &sym in &CODELEN_ORDER[..ncodelen] {
        bits.ensure(3)?;
        codelen_lens[sym] = bits.take(3) as u8;
    }
    codelen.build(&codelen_lens, &CODELEN_TEMPLATES, Completeness::Complete)?;

    let total = nlit + ndist;
    let mut lens = [0u8; 286 + 30];
    let mut i = 0;
    while i < total {
        // At most a 7-bit code and 7 extra bits.
        bits.ensure(14)?;
        let e = codelen.main(bits.buf);
        bits.consume(e & 0xff);
        let sym = e >> 16;
        if sym < 16 {
            lens[i] = sym as u8;
            i += 1;
            continue;
        }
        let (value, repeat) = match sym {
            16 => (*lens.get(i.checked_sub(1)?)?, 3 + bits.take(2) as usize),
            17 => (0, 3 + bits.take(3) as usize),
            _ => (0, 11 + bits.take(7) as usize),
        };
        lens.get_mut(i..i + repeat)
            .filter(|_| i + repeat <= total)?
            .fill(value);
        i += repeat;
    }
    if lens[256] == 0 {
        return None;
    }
    codes
        .litlen
        .build(&lens[..nlit], &LITLEN_TEMPLATES, Completeness::OrSingle)?;
    let main_literals = lens[..256].iter().map(|&l| u32::from(l));
    codes.literal_bits = main_literals
        .filter(|&l| l <= LitLenTable::MAIN_BITS)
        .max()
        .unwrap_or(0);
    codes.dist.build(
        &lens[nlit..total],
        &DIST_TEMPLATES,
        Completeness::OrSingleOrEmpty,
    )
}
