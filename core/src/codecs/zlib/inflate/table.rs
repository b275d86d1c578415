//! Lookup tables that decode a canonical Huffman code (RFC 1951 3.2.2) with
//! one or two array reads.
//!
//! Deflate sends a code's bits first-bit-first from the low end of each byte,
//! so the table is indexed by the next `BITS` stream bits as they sit at the
//! bottom of the bit buffer. A code of length `l <= BITS` owns every index
//! whose low `l` bits are its bit-reversed codeword. Longer codes share a
//! main entry per `BITS`-bit prefix that points at a subtable indexed by the
//! bits after the prefix. Main tables are sized so that the common codes are
//! one read: 11 bits for literals/lengths, 8 for distances (fewer codes,
//! mostly short, and a table rebuilt per block should stay small).
//!
//! Building fills the main table by doubling: codes are placed in canonical
//! order into the first `2^l` entries while `l` grows, and each step to
//! `l + 1` copies the first half onto the second (a `memmove`), which is what
//! "every index whose low `l` bits match" amounts to. That keeps the cost per
//! block near a symbol-count loop plus 8 KiB of copying, instead of a store
//! per entry.
//!
//! Every table has a power-of-two capacity, and subtable reads are masked by
//! it: the lookups carry no bounds check. The capacities hold the largest
//! table any accepted code can need (see [`LitLenTable`] and [`DistTable`]);
//! the builder refuses rather than overrun them.

/// Entry layout (one `u32`):
/// - bits 0..8: bits the entry consumes (code length, plus the extra bits of
///   a length or distance; for a subtable pointer, the main table's bits),
/// - bits 8..12: code length alone, where extra bits start (for a subtable
///   pointer: the subtable's index bits),
/// - bits 12..16: the flags below,
/// - bits 16..32: the value (literal byte, base length or distance,
///   code-length symbol, or a subtable's first index).
pub(super) const LITERAL: u32 = 1 << 15;
/// Points at a subtable.
pub(super) const SUBTABLE: u32 = 1 << 12;
pub(super) const END_OF_BLOCK: u32 = 1 << 13;
/// A symbol the format does not allow (lengths 286/287, distances 30/31),
/// or an index no codeword reaches (a single-codeword code).
pub(super) const INVALID: u32 = 1 << 14;
/// Anything but a literal, length or distance: one test sends these aside.
pub(super) const EXCEPTIONAL: u32 = SUBTABLE | END_OF_BLOCK | INVALID;

/// Per-symbol entries without the code length (added when a code places
/// them).
const fn litlen_templates() -> [u32; 288] {
    // Base lengths of length symbols 257..=285 and their extra bits.
    const BASE: [u32; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const EXTRA: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    let mut t = [0u32; 288];
    let mut s = 0;
    while s < 288 {
        t[s] = if s < 256 {
            LITERAL | (s as u32) << 16
        } else if s == 256 {
            END_OF_BLOCK
        } else if s < 286 {
            BASE[s - 257] << 16 | EXTRA[s - 257]
        } else {
            INVALID
        };
        s += 1;
    }
    t
}

const fn dist_templates() -> [u32; 32] {
    const BASE: [u32; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    let mut t = [INVALID; 32];
    let mut s = 0;
    while s < 30 {
        // Two codes per extra bit from code 2 on: 0,0,0,0,1,1,2,2,...
        let extra = if s < 4 { 0 } else { (s as u32 - 2) / 2 };
        t[s] = BASE[s] << 16 | extra;
        s += 1;
    }
    t
}

const fn codelen_templates() -> [u32; 19] {
    let mut t = [0u32; 19];
    let mut s = 0;
    while s < 19 {
        t[s] = (s as u32) << 16;
        s += 1;
    }
    t
}

pub(super) static LITLEN_TEMPLATES: [u32; 288] = litlen_templates();
pub(super) static DIST_TEMPLATES: [u32; 32] = dist_templates();
pub(super) static CODELEN_TEMPLATES: [u32; 19] = codelen_templates();

/// What a code may be short of and still be accepted (zlib's rules).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Completeness {
    /// Every codeword space filled (the code-length code).
    Complete,
    /// Also a single codeword of length 1 (literal/length codes).
    OrSingle,
    /// Also no codeword at all (distance codes of literal-only blocks): every
    /// index is then invalid.
    OrSingleOrEmpty,
}

/// A decode table of `SIZE` entries whose main part is indexed by `BITS`
/// bits.
pub(super) struct DecodeTable<const SIZE: usize, const BITS: u32> {
    entries: [u32; SIZE],
}

/// Literal/length table: 2048 main entries, then subtables. A subtable of
/// `2^k` entries (`k <= 4` here) covers a complete subtree of the code,
/// which has at least `k + 1` codewords: at most 16 / 5 entries per
/// codeword, so 288 codewords need fewer than 1024 subtable entries, and
/// 4096 is enough.
pub(super) type LitLenTable = DecodeTable<4096, 11>;
/// Distance table: 256 main entries, then subtables (`k <= 7`): at most
/// 128 / 8 entries per codeword, so 32 codewords need at most 512 more, and
/// 1024 is enough.
pub(super) type DistTable = DecodeTable<1024, 8>;
/// Code-length table: 7-bit codes, so no subtables.
pub(super) type CodeLenTable = DecodeTable<128, 7>;

impl<const SIZE: usize, const BITS: u32> DecodeTable<SIZE, BITS> {
    pub(super) const MAIN_BITS: u32 = BITS;
    pub(super) const MAIN_MASK: u64 = (1 << BITS) - 1;

    pub(super) fn new() -> Self {
        const { assert!(SIZE.is_power_of_two() && (1 << BITS) <= SIZE) };
        DecodeTable {
            entries: [INVALID; SIZE],
        }
    }

    /// The main entry for the next bits of `buf`.
    #[inline(always)]
    pub(super) fn main(&self, buf: u64) -> u32 {
        self.entries[(buf & Self::MAIN_MASK) as usize]
    }

    /// The subtable entry that `pointer` (a main entry with [`SUBTABLE`])
    /// selects for `buf`, the bits after the main table's.
    #[inline(always)]
    pub(super) fn sub(&self, pointer: u32, buf: u64) -> u32 {
        let bits = (pointer >> 8) & 15;
        let index = (pointer >> 16) as usize + (buf & ((1 << bits) - 1)) as usize;
        self.entries[index & (SIZE - 1)]
    }

    /// Builds the table of the canonical code with code lengths `lens`
    /// (each at most 15) for symbols whose entries are `templates`. `None`
    /// when the lengths over-subscribe the code space or leave more of it
    /// unused than `accept` allows.
    pub(super) fn build(
        &mut self,
        lens: &[u8],
        templates: &[u32],
        accept: Completeness,
    ) -> Option<()> {
        const MAX_SYMBOLS: usize = 288;
        if lens.len() > templates.len() || lens.len() > MAX_SYMBOLS {
            return None;
        }
        let mut count = [0u16; 16];
        for &l in lens {
            count[usize::from(l & 15)] += 1;
        }
        count[0] = 0;
        // Code space left after each length, in units of that length's codes.
        let mut left: i32 = 1;
        let mut max_len = 0;
        let mut min_len = 0;
        for (l, &c) in count.iter().enumerate().skip(1) {
            left = 2 * left - i32::from(c);
            if left < 0 {
                return None;
            }
            if c != 0 {
                max_len = l;
                if min_len == 0 {
                    min_len = l;
                }
            }
        }
        if max_len == 0 {
            if accept != Completeness::OrSingleOrEmpty {
                return None;
            }
            self.entries[..1 << BITS].fill(INVALID);
            return Some(());
        }
        let complete = left == 0;
        let single = accept != Completeness::Complete && max_len == 1;
        if !(complete || single) {
            return None;
        }
        // Symbols in canonical order: by length, then by symbol.
        let mut next = [0u16; 16];
        for l in 1..15 {
            next[l + 1] = next[l] + count[l];
        }
        // A power-of-two size, so that masked indices need no check.
        let mut sorted = [0u16; 512];
        for (s, &l) in lens.iter().enumerate() {
            if l != 0 {
                let slot = &mut next[usize::from(l & 15)];
                sorted[usize::from(*slot) & 511] = s as u16;
                *slot += 1;
            }
        }
        let templates = |s: u16| templates.get(usize::from(s)).copied().unwrap_or(INVALID);
        let main_bits = BITS as usize;
        let main_size = 1usize << main_bits;
        // The next codeword, bit-reversed: a code that grows by a bit keeps
        // its reversed value (the new bit is a high zero).
        let mut code = 0u32;
        let mut placed = 0usize;
        let mut size = 1usize << min_len.min(main_bits);
        if !complete {
            // Only a single one-bit codeword gets here: its sibling is invalid.
            self.entries[..size].fill(INVALID);
        }
        let main_lens = count.iter().enumerate().take(max_len.min(main_bits) + 1);
        for (l, &n) in main_lens.skip(min_len) {
            if 1 << l > size {
                self.entries.copy_within(..size, size);
                size *= 2;
            }
            for _ in 0..n {
                let e = templates(sorted[placed & 511]) + (l as u32) * 0x101;
                self.entries[code as usize % SIZE] = e;
                placed += 1;
                code = reversed_increment(code, l as u32);
            }
        }
        while size < main_size {
            self.entries.copy_within(..size, size);
            size *= 2;
        }
        if max_len <= main_bits {
            return Some(());
        }
        // Codewords longer than the main table, grouped by their first
        // `BITS` bits (contiguous in canonical order) into subtables.
        let mut remaining = count;
        let mut free = main_size;
        let mut prefix = usize::MAX;
        let mut sub_start = 0usize;
        let mut sub_bits = 0usize;
        for l in main_bits + 1..=max_len {
            for _ in 0..count[l] {
                let p = code as usize & (main_size - 1);
                if p != prefix {
                    // The subtable spans as many bits as it takes for the
                    // remaining codewords to fill this prefix's subtree.
                    prefix = p;
                    sub_bits = l - main_bits;
                    let mut room = 1i32 << sub_bits;
                    loop {
                        room -= i32::from(remaining[main_bits + sub_bits]);
                        if room <= 0 || main_bits + sub_bits >= max_len {
                            break;
                        }
                        sub_bits += 1;
                        room <<= 1;
                    }
                    sub_start = free;
                    free += 1 << sub_bits;
                    if free > SIZE {
                        return None;
                    }
                    self.entries[p] =
                        SUBTABLE | (sub_start as u32) << 16 | (sub_bits as u32) << 8 | BITS;
                }
                let sub_len = l - main_bits;
                let e = templates(sorted[placed & 511]) + (sub_len as u32) * 0x101;
                let mut i = code as usize >> main_bits;
                while i < 1 << sub_bits {
                    self.entries[(sub_start + i) % SIZE] = e;
                    i += 1 << sub_len;
                }
                placed += 1;
                remaining[l] -= 1;
                code = reversed_increment(code, l as u32);
            }
        }
        Some(())
    }
}

/// The codeword after `code` among `len`-bit codewords, both bit-reversed:
/// the carry of an increment runs from the top bit down.
#[inline(always)]
fn reversed_increment(code: u32, len: u32) -> u32 {
    let mut bit = 1u32 << (len - 1);
    let mut code = code;
    while code & bit != 0 {
        code ^= bit;
        bit >>= 1;
    }
    code | bit
}

/// A block's literal/length and distance tables side by side, so that the
/// decode loop reaches both from one base register.
pub(super) struct BlockCodes {
    pub(super) litlen: LitLenTable,
    pub(super) dist: DistTable,
    /// The longest literal code in the main table (how many literals the
    /// decode loop can take per refill).
    pub(super) literal_bits: u32,
}

impl BlockCodes {
    pub(super) fn new() -> Box<Self> {
        Box::new(BlockCodes {
            litlen: LitLenTable::new(),
            dist: DistTable::new(),
            literal_bits: 11,
        })
    }
}

/// The tables of the fixed code (RFC 1951 3.2.6), built once.
pub(super) fn fixed() -> &'static BlockCodes {
    static FIXED: std::sync::OnceLock<Box<BlockCodes>> = std::sync::OnceLock::new();
    FIXED.get_or_init(|| {
        let mut lens = [0u8; 288];
        lens[..144].fill(8);
        lens[144..256].fill(9);
        lens[256..280].fill(7);
        lens[280..].fill(8);
        let mut codes = BlockCodes::new();
        codes.literal_bits = 9;
        // Both codes are complete, so neither build can fail.
        let built = codes
            .litlen
            .build(&lens, &LITLEN_TEMPLATES, Completeness::Complete)
            .and_then(|()| {
                codes
                    .dist
                    .build(&[5; 32], &DIST_TEMPLATES, Completeness::Complete)
            });
        debug_assert!(built.is_some());
        codes
    })
}
