//! The input side of the decoder: a 64-bit buffer of stream bits, lowest
//! first, loaded 8 bytes at a time while 8 remain.
//!
//! Near the end of the input the buffer is topped up a byte at a time, with
//! zero bytes once the input runs out: decoding then needs no "is there a
//! next byte" branch per symbol. Using a zero byte that is not in the input
//! means the stream is truncated. Two places catch that: asking for a ninth
//! zero byte (the buffer holds fewer than eight, so one was used), and the
//! byte position at the end of the deflate data, which must leave room for
//! the Adler-32 trailer within the input.

pub(super) struct Bits<'a> {
    pub(super) input: &'a [u8],
    /// The next byte to load; counts the zero bytes loaded past the end.
    pub(super) pos: usize,
    /// Unconsumed bits at the bottom; above them either zeros or the
    /// stream's next bits (a word load puts in more than it counts), so
    /// loads can OR new bytes in.
    pub(super) buf: u64,
    /// Unconsumed bits in `buf`, at most 63.
    pub(super) left: u32,
}

impl<'a> Bits<'a> {
    pub(super) fn new(input: &'a [u8], pos: usize) -> Self {
        Bits {
            input,
            pos,
            buf: 0,
            left: 0,
        }
    }

    /// Tops the buffer up to at least 56 bits. `None` when the stream is
    /// known to be truncated.
    #[inline]
    pub(super) fn refill(&mut self) -> Option<()> {
        if let Some(word) = self
            .input
            .get(self.pos..)
            .and_then(|s| s.first_chunk::<8>())
        {
            self.buf |= u64::from_le_bytes(*word) << self.left;
            self.pos += ((63 - self.left) >> 3) as usize;
            self.left |= 56;
            return Some(());
        }
        self.refill_bytes()
    }

    /// Makes sure of at least `n` bits (at most 56), topping up only when
    /// fewer are left.
    #[inline(always)]
    pub(super) fn ensure(&mut self, n: u32) -> Option<()> {
        if self.left < n {
            self.refill()?;
        }
        Some(())
    }

    #[cold]
    fn refill_bytes(&mut self) -> Option<()> {
        while self.left < 56 {
            let byte = match self.input.get(self.pos) {
                Some(&b) => b,
                None if self.pos >= self.input.len() + 8 => return None,
                None => 0,
            };
            self.buf |= u64::from(byte) << self.left;
            self.left += 8;
            self.pos += 1;
        }
        Some(())
    }

    /// Drops `n` bits (at most `left`).
    #[inline(always)]
    pub(super) fn consume(&mut self, n: u32) {
        debug_assert!(n <= self.left);
        self.buf >>= n & 63;
        self.left -= n;
    }

    /// The next `n` bits (at most `left`, below 32) as a number, consumed.
    #[inline(always)]
    pub(super) fn take(&mut self, n: u32) -> u32 {
        let v = (self.buf & ((1u64 << n) - 1)) as u32;
        self.consume(n);
        v
    }

    /// Consumes the code and extra bits of a length or distance entry (see
    /// `table`) and returns its value.
    #[inline(always)]
    pub(super) fn value(&mut self, entry: u32) -> usize {
        let v = entry_value(self.buf, entry);
        self.consume(entry & 0xff);
        v
    }

    /// Skips to the next byte boundary and returns the position of the byte
    /// there (past the input when zero bytes were used).
    pub(super) fn byte_position(&mut self) -> usize {
        self.consume(self.left & 7);
        self.pos - (self.left / 8) as usize
    }

    /// Continues with the byte at `pos` (after a stored block).
    pub(super) fn restart_at(&mut self, pos: usize) {
        self.pos = pos;
        self.buf = 0;
        self.left = 0;
    }
}

/// The length or distance that `entry` gives with the extra bits that
/// follow its code in `buf`: the base plus the bits between the code length
/// and the consumed total.
#[inline(always)]
pub(super) fn entry_value(buf: u64, entry: u32) -> usize {
    // The code length's field is followed by zero flag bits in these
    // entries, and shifts take their count modulo 64: no mask needed.
    let extra = (buf & !(u64::MAX << (entry & 63))) >> ((entry >> 8) & 63);
    (entry >> 16) as usize + extra as usize
}
