//! Deflate blocks (RFC 1951 section 3.2): the symbols a parse produced, sent
//! as whichever of a dynamic-Huffman, fixed-Huffman or stored block is
//! smallest.

use super::bits::BitWriter;
use super::huffman::{canonical_codes, code_lengths};

/// Literal/length alphabet size (256 literals, end of block, 29 lengths).
pub(super) const LITLEN_SYMBOLS: usize = 286;
pub(super) const DIST_SYMBOLS: usize = 30;
const CODELEN_SYMBOLS: usize = 19;
const END_OF_BLOCK: usize = 256;
/// The order code-length code lengths are sent in.
const CODELEN_ORDER: [usize; CODELEN_SYMBOLS] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
/// Largest stored block payload.
const STORED_MAX: usize = 65_535;

/// Base lengths (minus 3) and extra bits of length codes 257..=285.
const LEN_BASE: [u16; 29] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128,
    160, 192, 224, 255,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
/// Base distances (minus 1) and extra bits of distance codes 0..=29.
const DIST_BASE: [u16; 30] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// Length code index (0..=28) of every length minus 3.
const LEN_CODE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut code = 0;
    let mut l = 0;
    while l < 256 {
        while code + 1 < 29 && LEN_BASE[code + 1] as usize <= l {
            code += 1;
        }
        t[l] = code as u8;
        l += 1;
    }
    t
};

/// Distance code of a distance minus one (0..=32767): two codes per power
/// of two from 4 on.
#[inline(always)]
pub(super) fn dist_code(d: u32) -> usize {
    if d < 4 {
        d as usize
    } else {
        let top = 31 - d.leading_zeros();
        (2 * top + ((d >> (top - 1)) & 1)) as usize
    }
}

/// The literal/length symbol (257..=285) of a match length (3..=258).
#[inline(always)]
pub(super) fn length_symbol(len: usize) -> usize {
    257 + LEN_CODE[(len - 3) & 0xff] as usize
}

/// One parsed symbol: a literal byte, or a match of `len` (3..=258) bytes at
/// `dist` (1..=32768) back. Packed as `dist << 8 | (literal or len - 3)`,
/// `dist` 0 meaning a literal.
#[derive(Clone, Copy)]
pub(super) struct Symbol(u32);

impl Symbol {
    #[inline(always)]
    pub(super) fn literal(b: u8) -> Self {
        Symbol(u32::from(b))
    }
    #[inline(always)]
    pub(super) fn matched(len: usize, dist: usize) -> Self {
        debug_assert!((3..=258).contains(&len) && (1..=32768).contains(&dist));
        Symbol((dist as u32) << 8 | (len as u32 - 3))
    }
}

/// Symbols per deflate block: a parse ends its block once it holds this
/// many (zlib's default symbol buffer holds as many).
pub(super) const BLOCK_SYMBOLS: usize = 16 * 1024;
/// Room for a block's symbols: the few a parse pushes after its last check
/// (a stream's last literals, the literal a merged match leaves) fit in the
/// slack.
pub(super) const SYMBOL_ROOM: usize = BLOCK_SYMBOLS + 16;

/// The symbols of the block being built and their frequencies.
///
/// A fixed array and a count rather than a `Vec`: pushing is an indexed
/// store, with no capacity check and no growth path in the parse loop.
pub(super) struct Symbols {
    buf: Box<[Symbol; SYMBOL_ROOM]>,
    len: usize,
    pub(super) litlen_freq: [u32; LITLEN_SYMBOLS],
    pub(super) dist_freq: [u32; DIST_SYMBOLS],
}

impl Symbols {
    pub(super) fn new() -> Self {
        Symbols {
            buf: vec![Symbol(0); SYMBOL_ROOM]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| unreachable!()),
            len: 0,
            litlen_freq: [0; LITLEN_SYMBOLS],
            dist_freq: [0; DIST_SYMBOLS],
        }
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.litlen_freq = [0; LITLEN_SYMBOLS];
        self.dist_freq = [0; DIST_SYMBOLS];
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn list(&self) -> &[Symbol] {
        &self.buf[..self.len]
    }

    /// The buffer, the count and the two frequency tables, for a parse loop
    /// that keeps them in registers (counting with [`length_symbol`] and
    /// [`dist_code`] as the push methods do).
    #[inline(always)]
    pub(super) fn parts(
        &mut self,
    ) -> (
        &mut [Symbol; SYMBOL_ROOM],
        &mut usize,
        &mut [u32; LITLEN_SYMBOLS],
        &mut [u32; DIST_SYMBOLS],
    ) {
        (
            &mut self.buf,
            &mut self.len,
            &mut self.litlen_freq,
            &mut self.dist_freq,
        )
    }

    #[inline(always)]
    pub(super) fn push_literal(&mut self, b: u8) {
        self.litlen_freq[b as usize] += 1;
        self.buf[self.len] = Symbol::literal(b);
        self.len += 1;
    }

    #[inline(always)]
    pub(super) fn push_match(&mut self, len: usize, dist: usize) {
        self.litlen_freq[length_symbol(len)] += 1;
        self.dist_freq[dist_code(dist as u32 - 1)] += 1;
        self.buf[self.len] = Symbol::matched(len, dist);
        self.len += 1;
    }

    /// The length of the last symbol when it is a match.
    #[inline(always)]
    pub(super) fn last_match_len(&self) -> Option<usize> {
        let &Symbol(s) = self.list().last()?;
        (s >> 8 != 0).then_some((s & 0xff) as usize + 3)
    }

    /// Takes back the last symbol, a match (see [`Self::last_match_len`]).
    pub(super) fn pop_match(&mut self) {
        if let Some(&Symbol(s)) = self.list().last() {
            debug_assert!(s >> 8 != 0);
            self.len -= 1;
            self.litlen_freq[length_symbol((s & 0xff) as usize + 3)] -= 1;
            self.dist_freq[dist_code((s >> 8) - 1)] -= 1;
        }
    }
}

/// A Huffman code: lengths and bit-reversed codes.
struct Code<const N: usize> {
    lens: [u8; N],
    codes: [u16; N],
}

impl<const N: usize> Code<N> {
    fn build(freqs: &[u32; N], limit: u32) -> Self {
        let mut lens = [0u8; N];
        code_lengths(freqs, limit, &mut lens);
        let mut codes = [0u16; N];
        canonical_codes(&lens, &mut codes);
        Code { lens, codes }
    }

    fn cost(&self, freqs: &[u32; N]) -> u64 {
        freqs
            .iter()
            .zip(&self.lens)
            .map(|(&f, &l)| u64::from(f) * u64::from(l))
            .sum()
    }
}

/// The fixed code of RFC 1951 section 3.2.6.
fn fixed_litlen_lens() -> [u8; LITLEN_SYMBOLS] {
    let mut l = [8u8; LITLEN_SYMBOLS];
    l[144..256].fill(9);
    l[256..280].fill(7);
    l
}

/// Bits spent on extra bits of lengths and distances (the same in every
/// block type).
fn extra_bits(s: &Symbols) -> u64 {
    let len: u64 = (0..29)
        .map(|c| u64::from(s.litlen_freq[257 + c]) * u64::from(LEN_EXTRA[c]))
        .sum();
    let dist: u64 = (0..30)
        .map(|c| u64::from(s.dist_freq[c]) * u64::from(DIST_EXTRA[c]))
        .sum();
    len + dist
}

/// The run-length coded code lengths of a dynamic block header: code-length
/// symbols 0..=18, each with its extra bits.
struct HeaderLengths {
    items: Vec<(u8, u8)>,
    freq: [u32; CODELEN_SYMBOLS],
}

impl HeaderLengths {
    fn encode(lens: &[u8]) -> Self {
        let mut h = HeaderLengths {
            items: Vec::with_capacity(lens.len()),
            freq: [0; CODELEN_SYMBOLS],
        };
        let mut i = 0;
        while i < lens.len() {
            let l = lens[i];
            let run = lens[i..].iter().take_while(|&&x| x == l).count();
            let mut left = run;
            if l == 0 {
                while left >= 11 {
                    let n = left.min(138);
                    h.push(18, (n - 11) as u8);
                    left -= n;
                }
                if left >= 3 {
                    h.push(17, (left - 3) as u8);
                    left = 0;
                }
            } else {
                h.push(l, 0);
                left -= 1;
                while left >= 3 {
                    let n = left.min(6);
                    h.push(16, (n - 3) as u8);
                    left -= n;
                }
            }
            for _ in 0..left {
                h.push(l, 0);
            }
            i += run;
        }
        h
    }

    fn push(&mut self, sym: u8, extra: u8) {
        self.freq[sym as usize] += 1;
        self.items.push((sym, extra));
    }
}

const CODELEN_EXTRA: [u8; CODELEN_SYMBOLS] =
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];

/// Sends `symbols` (which cover `raw`, the input bytes of the block) as the
/// smallest of the three block types. `last` marks the stream's final block.
pub(super) fn write_block(w: &mut BitWriter<'_>, symbols: &mut Symbols, raw: &[u8], last: bool) {
    symbols.litlen_freq[END_OF_BLOCK] = 1;
    let litlen = Code::build(&symbols.litlen_freq, 15);
    let dist = Code::build(&symbols.dist_freq, 15);
    let nlit = 257
        + litlen.lens[257..]
            .iter()
            .rposition(|&l| l > 0)
            .map_or(0, |p| p + 1);
    let ndist = 1 + dist.lens[1..]
        .iter()
        .rposition(|&l| l > 0)
        .map_or(0, |p| p + 1);
    let mut all_lens = [0u8; LITLEN_SYMBOLS + DIST_SYMBOLS];
    all_lens[..nlit].copy_from_slice(&litlen.lens[..nlit]);
    all_lens[nlit..nlit + ndist].copy_from_slice(&dist.lens[..ndist]);
    let header = HeaderLengths::encode(&all_lens[..nlit + ndist]);
    let codelen = Code::build(&header.freq, 7);
    let ncodelen = 4.max(
        1 + CODELEN_ORDER
            .iter()
            .rposition(|&s| codelen.lens[s] > 0)
            .unwrap_or(0),
    );

    let extra = extra_bits(symbols);
    let header_bits = 14
        + 3 * ncodelen as u64
        + codelen.cost(&header.freq)
        + (16..19)
            .map(|s| u64::from(header.freq[s]) * u64::from(CODELEN_EXTRA[s]))
            .sum::<u64>();
    let dynamic_bits =
        3 + header_bits + litlen.cost(&symbols.litlen_freq) + dist.cost(&symbols.dist_freq) + extra;
    let fixed_lens = fixed_litlen_lens();
    let fixed_bits = 3
        + symbols
            .litlen_freq
            .iter()
            .zip(&fixed_lens)
            .map(|(&f, &l)| u64::from(f) * u64::from(l))
            .sum::<u64>()
        + 5 * symbols.dist_freq.iter().map(|&f| u64::from(f)).sum::<u64>()
        + extra;
    let stored_blocks = raw.len().div_ceil(STORED_MAX).max(1) as u64;
    // Header bits, at most 7 of padding, LEN and NLEN per block.
    let stored_bits = 8 * raw.len() as u64 + stored_blocks * (3 + 7 + 32);

    if stored_bits < dynamic_bits.min(fixed_bits) {
        write_stored(w, raw, last);
    } else if fixed_bits <= dynamic_bits {
        w.put(u32::from(last) | 1 << 1, 3);
        // The fixed code has 288 literal/length symbols; the two never sent
        // (286, 287) still take their 8-bit codes before the 9-bit ones.
        let mut all_lens = [8u8; 288];
        all_lens[..LITLEN_SYMBOLS].copy_from_slice(&fixed_lens);
        let mut all_codes = [0u16; 288];
        canonical_codes(&all_lens, &mut all_codes);
        let mut lit_codes = [0u16; LITLEN_SYMBOLS];
        lit_codes.copy_from_slice(&all_codes[..LITLEN_SYMBOLS]);
        let dist_lens = [5u8; DIST_SYMBOLS];
        let mut dist_codes = [0u16; DIST_SYMBOLS];
        canonical_codes(&dist_lens, &mut dist_codes);
        write_symbols(
            w,
            symbols.list(),
            &lit_codes,
            &fixed_lens,
            &dist_codes,
            &dist_lens,
        );
    } else {
        w.put(u32::from(last) | 2 << 1, 3);
        w.put((nlit - 257) as u32, 5);
        w.put((ndist - 1) as u32, 5);
        w.put((ncodelen - 4) as u32, 4);
        for &s in &CODELEN_ORDER[..ncodelen] {
            w.put(u32::from(codelen.lens[s]), 3);
        }
        for &(s, e) in &header.items {
            let s = s as usize;
            w.put(u32::from(codelen.codes[s]), u32::from(codelen.lens[s]));
            if s >= 16 {
                w.put(u32::from(e), u32::from(CODELEN_EXTRA[s]));
            }
        }
        write_symbols(
            w,
            symbols.list(),
            &litlen.codes,
            &litlen.lens,
            &dist.codes,
            &dist.lens,
        );
    }
    symbols.clear();
}

/// The symbols and the end-of-block code, with the given codes.
fn write_symbols(
    w: &mut BitWriter<'_>,
    list: &[Symbol],
    lit_codes: &[u16; LITLEN_SYMBOLS],
    lit_lens: &[u8; LITLEN_SYMBOLS],
    dist_codes: &[u16; DIST_SYMBOLS],
    dist_lens: &[u8; DIST_SYMBOLS],
) {
    // A literal's code and length in one entry: one load per literal.
    let mut lit = [0u32; 256];
    for (b, e) in lit.iter_mut().enumerate() {
        *e = u32::from(lit_codes[b]) | u32::from(lit_lens[b]) << 16;
    }
    w.in_registers(|w| {
        let mut k = 0;
        while let Some(&Symbol(s)) = list.get(k) {
            k += 1;
            let dist = s >> 8;
            let low = (s & 0xff) as usize;
            if dist == 0 {
                // Two literals in a row (at most 30 bits) go in one put.
                let e = lit[low];
                let (mut bits, mut nbits) = (u64::from(e & 0xffff), e >> 16);
                if let Some(&Symbol(t)) = list.get(k) {
                    if t >> 8 == 0 {
                        let e = lit[(t & 0xff) as usize];
                        bits |= u64::from(e & 0xffff) << nbits;
                        nbits += e >> 16;
                        k += 1;
                    }
                }
                w.put_long(bits, nbits);
            } else {
                let lc = LEN_CODE[low] as usize;
                let sym = 257 + lc;
                let d = dist - 1;
                let dc = dist_code(d);
                // Length code, its extra bits, distance code, its extra bits:
                // at most 15 + 5 + 15 + 13 bits, sent in one go.
                let mut bits = u64::from(lit_codes[sym]);
                let mut nbits = u32::from(lit_lens[sym]);
                bits |= u64::from(low as u32 - u32::from(LEN_BASE[lc])) << nbits;
                nbits += u32::from(LEN_EXTRA[lc]);
                bits |= u64::from(dist_codes[dc]) << nbits;
                nbits += u32::from(dist_lens[dc]);
                bits |= u64::from(d - u32::from(DIST_BASE[dc])) << nbits;
                nbits += u32::from(DIST_EXTRA[dc]);
                w.put_long(bits, nbits);
            }
        }
        w.put(
            u32::from(lit_codes[END_OF_BLOCK]),
            u32::from(lit_lens[END_OF_BLOCK]),
        );
    });
}

/// `raw` as stored blocks of at most 65535 bytes (one empty block for no bytes).
pub(super) fn write_stored(w: &mut BitWriter<'_>, raw: &[u8], last: bool) {
    let mut chunks = raw.chunks(STORED_MAX).peekable();
    if chunks.peek().is_none() {
        w.put(u32::from(last), 3);
        w.align();
        w.put_bytes(&[0, 0, 0xff, 0xff]);
        return;
    }
    while let Some(part) = chunks.next() {
        let final_part = last && chunks.peek().is_none();
        w.put(u32::from(final_part), 3);
        w.align();
        let n = part.len() as u16;
        let mut head = [0u8; 4];
        head[..2].copy_from_slice(&n.to_le_bytes());
        head[2..].copy_from_slice(&(!n).to_le_bytes());
        w.put_bytes(&head);
        w.put_bytes(part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_and_distance_codes_match_rfc_1951() {
        // Spot checks against the tables of RFC 1951 section 3.2.5.
        for (len, code) in [
            (3, 257),
            (10, 264),
            (11, 265),
            (12, 265),
            (13, 266),
            (258, 285),
            (257, 284),
            (227, 284),
            (226, 283),
        ] {
            assert_eq!(257 + LEN_CODE[len - 3] as usize, code, "length {len}");
        }
        for (dist, code) in [
            (1, 0),
            (4, 3),
            (5, 4),
            (6, 4),
            (7, 5),
            (24577, 29),
            (32768, 29),
            (24576, 28),
            (193, 15),
        ] {
            assert_eq!(dist_code(dist - 1), code, "distance {dist}");
        }
        for (c, &lo) in LEN_BASE.iter().enumerate() {
            assert_eq!(LEN_CODE[lo as usize] as usize, c);
        }
        for (c, (&lo, &extra)) in DIST_BASE.iter().zip(&DIST_EXTRA).enumerate() {
            let hi = u32::from(lo) + (1 << extra) - 1;
            assert_eq!((dist_code(u32::from(lo)), dist_code(hi)), (c, c));
        }
    }

    #[test]
    fn header_lengths_run_length_code_round_trips() {
        let mut lens = vec![0u8; 20];
        lens.extend([5u8; 9]);
        lens.extend([0u8; 140]);
        lens.extend([7u8, 7, 3, 3, 3, 3]);
        let h = HeaderLengths::encode(&lens);
        let mut back = Vec::new();
        for &(s, e) in &h.items {
            match s {
                16 => {
                    let prev = *back.last().unwrap();
                    back.extend(std::iter::repeat(prev).take(3 + e as usize));
                }
                17 => back.extend(std::iter::repeat(0u8).take(3 + e as usize)),
                18 => back.extend(std::iter::repeat(0u8).take(11 + e as usize)),
                l => back.push(l),
            }
        }
        assert_eq!(back, lens);
    }
}
