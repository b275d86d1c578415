//! The bit stream zfp streams are made of: bits in order of writing fill
//! 64-bit words from the least significant bit up, and each word is stored
//! little-endian. A finished stream is padded with zero bits to a whole word,
//! so its length is a multiple of 8 bytes.
//!
//! The writer works in a caller's fixed buffer and never grows it: bits that
//! do not fit are dropped and [`Writer::overflowed`] says so. The reader
//! treats bytes past its input as zeros and counts every bit it consumes, so
//! that a stream that asks for more bits than it has is caught after the fact
//! ([`Reader::overrun`]) without a check in each read.

/// Bits in a stream word.
pub(super) const WORD_BITS: u32 = 64;

/// Appends bits to a byte buffer, one 64-bit word at a time.
pub(super) struct Writer<'a> {
    out: &'a mut [u8],
    /// Bytes of `out` holding finished words.
    at: usize,
    /// Pending bits, the oldest in bit 0.
    acc: u64,
    /// How many bits of `acc` are pending (0..64).
    fill: u32,
    overflow: bool,
}

impl<'a> Writer<'a> {
    pub(super) fn new(out: &'a mut [u8]) -> Self {
        Writer {
            out,
            at: 0,
            acc: 0,
            fill: 0,
            overflow: false,
        }
    }

    fn put_word(&mut self, w: u64) {
        match self.out.get_mut(self.at..self.at + 8) {
            Some(d) => d.copy_from_slice(&w.to_le_bytes()),
            None => self.overflow = true,
        }
        self.at += 8;
    }

    /// Appends one bit (only bit 0 of `bit` counts); returns it.
    #[inline]
    pub(super) fn bit(&mut self, bit: bool) -> bool {
        self.acc |= u64::from(bit) << self.fill;
        self.fill += 1;
        if self.fill == WORD_BITS {
            self.put_word(self.acc);
            self.acc = 0;
            self.fill = 0;
        }
        bit
    }

    /// Appends the low `n` bits of `value` (`n` ≤ 64), least significant first.
    #[inline]
    pub(super) fn bits(&mut self, value: u64, n: u32) {
        if n == 0 {
            return;
        }
        let v = if n == 64 {
            value
        } else {
            value & ((1u64 << n) - 1)
        };
        self.acc |= v << self.fill;
        let total = self.fill + n;
        if total >= WORD_BITS {
            self.put_word(self.acc);
            // The bits of `v` that did not fit in the finished word.
            let used = WORD_BITS - self.fill;
            self.acc = if used == 64 { 0 } else { v >> used };
            self.fill = total - WORD_BITS;
        } else {
            self.fill = total;
        }
    }

    /// Appends `n` zero bits.
    pub(super) fn zeros(&mut self, mut n: u64) {
        let room = u64::from(WORD_BITS - self.fill);
        if n < room {
            self.fill += n as u32;
            return;
        }
        self.put_word(self.acc);
        self.acc = 0;
        n -= room;
        while n >= u64::from(WORD_BITS) {
            self.put_word(0);
            n -= u64::from(WORD_BITS);
        }
        self.fill = n as u32;
    }

    /// Bits written so far.
    #[cfg(test)]
    pub(super) fn tell(&self) -> u64 {
        self.at as u64 * 8 + u64::from(self.fill)
    }

    /// Pads to a whole word and returns the stream's length in bytes.
    pub(super) fn finish(&mut self) -> usize {
        if self.fill != 0 {
            self.zeros(u64::from(WORD_BITS - self.fill));
        }
        self.at
    }

    /// Whether some bits did not fit in the buffer.
    pub(super) fn overflowed(&self) -> bool {
        self.overflow
    }
}

/// Reads bits back in the order a [`Writer`] wrote them.
pub(super) struct Reader<'a> {
    src: &'a [u8],
    /// Byte offset of the next word to load.
    next: usize,
    /// Buffered bits, the next one in bit 0.
    acc: u64,
    /// How many bits of `acc` are unread (0..64).
    left: u32,
}

impl<'a> Reader<'a> {
    pub(super) fn new(src: &'a [u8]) -> Self {
        Reader {
            src,
            next: 0,
            acc: 0,
            left: 0,
        }
    }

    /// The word at byte `at`, zero-filled past the input.
    fn word_at(&self, at: usize) -> u64 {
        match self.src.get(at..at + 8) {
            Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
            None => {
                let mut w = [0u8; 8];
                if let Some(tail) = self.src.get(at..) {
                    w[..tail.len()].copy_from_slice(tail);
                }
                u64::from_le_bytes(w)
            }
        }
    }

    fn load(&mut self) -> u64 {
        let w = self.word_at(self.next);
        self.next = self.next.saturating_add(8);
        w
    }

    #[inline]
    pub(super) fn bit(&mut self) -> bool {
        if self.left == 0 {
            self.acc = self.load();
            self.left = WORD_BITS;
        }
        let b = self.acc & 1 != 0;
        self.acc >>= 1;
        self.left -= 1;
        b
    }

    /// The next `n` bits (`n` ≤ 64), the first read in bit 0.
    #[inline]
    pub(super) fn bits(&mut self, n: u32) -> u64 {
        if n <= self.left {
            if n == 64 {
                // Only when a whole word is buffered.
                let v = self.acc;
                self.acc = 0;
                self.left = 0;
                return v;
            }
            let v = self.acc & ((1u64 << n) - 1);
            self.acc >>= n;
            self.left -= n;
            return v;
        }
        let have = self.left;
        let low = self.acc;
        let w = self.load();
        let need = n - have;
        // `have` < n ≤ 64, so `have` < 64.
        let high = if need == 64 {
            w
        } else {
            w & ((1u64 << need) - 1)
        };
        self.acc = if need == 64 { 0 } else { w >> need };
        self.left = WORD_BITS - need;
        low | (high << have)
    }

    /// Bits consumed so far.
    pub(super) fn tell(&self) -> u64 {
        (self.next as u64).saturating_mul(8) - u64::from(self.left)
    }

    /// Moves `n` bits ahead without looking at them.
    pub(super) fn skip(&mut self, n: u64) {
        if n <= u64::from(self.left) {
            let n = n as u32;
            self.acc = if n == 64 { 0 } else { self.acc >> n };
            self.left -= n;
            return;
        }
        let to = self.tell().saturating_add(n);
        let word = to / u64::from(WORD_BITS);
        let within = (to % u64::from(WORD_BITS)) as u32;
        self.next = usize::try_from(word.saturating_mul(8)).unwrap_or(usize::MAX - 8);
        if within == 0 {
            self.acc = 0;
            self.left = 0;
        } else {
            self.acc = self.load() >> within;
            self.left = WORD_BITS - within;
        }
    }

    /// Whether more bits were consumed than the input holds.
    pub(super) fn overrun(&self) -> bool {
        self.tell() > self.src.len() as u64 * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_come_back_in_order_across_words() {
        let mut buf = [0u8; 512];
        let mut w = Writer::new(&mut buf);
        let pattern: Vec<(u64, u32)> = (0..40u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), (i * 7 % 65) as u32))
            .collect();
        let mut total = 0u64;
        for &(v, n) in &pattern {
            w.bits(v, n);
            total += u64::from(n);
            w.bit(v & 1 == 1);
            total += 1;
        }
        assert_eq!(w.tell(), total);
        let len = w.finish();
        assert!(!w.overflowed());
        assert_eq!(len as u64, total.div_ceil(64) * 8);
        let mut r = Reader::new(&buf[..len]);
        for &(v, n) in &pattern {
            let want = if n == 64 { v } else { v & ((1u64 << n) - 1) };
            assert_eq!(r.bits(n), want, "{n}");
            assert_eq!(r.bit(), v & 1 == 1);
        }
        assert_eq!(r.tell(), total);
        assert!(!r.overrun());
    }

    #[test]
    fn words_are_little_endian_from_bit_zero() {
        let mut buf = [0u8; 16];
        let mut w = Writer::new(&mut buf);
        w.bit(true);
        w.bits(0b10, 2);
        w.zeros(61);
        w.bits(0xAB, 8);
        assert_eq!(w.finish(), 16);
        assert_eq!(buf[0], 0b101);
        assert_eq!(&buf[1..8], &[0; 7]);
        assert_eq!(buf[8], 0xAB);
    }

    #[test]
    fn skips_land_where_reads_would() {
        let src: Vec<u8> = (0..48u8).map(|i| i.wrapping_mul(37)).collect();
        for first in [0u32, 5, 63, 64] {
            for gap in [0u64, 1, 58, 64, 65, 200] {
                let mut a = Reader::new(&src);
                let mut b = Reader::new(&src);
                a.bits(first);
                b.bits(first);
                a.skip(gap);
                for _ in 0..gap {
                    b.bit();
                }
                assert_eq!(a.tell(), b.tell());
                assert_eq!(a.bits(17), b.bits(17), "{first} {gap}");
            }
        }
    }

    #[test]
    fn a_full_buffer_drops_bits_and_says_so() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        w.bits(u64::MAX, 64);
        assert!(!w.overflowed());
        w.bits(1, 1);
        w.finish();
        assert!(w.overflowed());
        let mut r = Reader::new(&buf[..4]);
        r.bits(32);
        assert!(!r.overrun());
        r.bit();
        assert!(r.overrun());
    }
}
