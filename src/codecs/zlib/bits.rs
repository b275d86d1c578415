//! An LSB-first bit writer into a fixed output slice, as deflate packs bits.

/// Writes bit fields into `out`, lowest bit first. Running out of room sets
/// a flag instead of failing each call: the encoder checks it once per block,
/// and a stream that did not fit is thrown away whole.
pub(super) struct BitWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    /// Pending bits, lowest first; fewer than 32 between calls.
    acc: u64,
    nbits: u32,
    overflow: bool,
}

impl<'a> BitWriter<'a> {
    pub(super) fn new(out: &'a mut [u8]) -> Self {
        BitWriter {
            out,
            pos: 0,
            acc: 0,
            nbits: 0,
            overflow: false,
        }
    }

    /// Appends the low `count` bits of `bits` (`count` <= 32, higher bits of
    /// `bits` clear).
    #[inline(always)]
    pub(super) fn put(&mut self, bits: u32, count: u32) {
        debug_assert!(count <= 32 && (count == 32 || bits >> count == 0));
        self.acc |= u64::from(bits) << self.nbits;
        self.nbits += count;
        if self.nbits >= 32 {
            // Four whole bytes are ready; a full output only raises the flag.
            match self.out.get_mut(self.pos..self.pos + 4) {
                Some(dst) => dst.copy_from_slice(&(self.acc as u32).to_le_bytes()),
                None => self.overflow = true,
            }
            self.pos += 4;
            self.acc >>= 32;
            self.nbits -= 32;
        }
    }

    /// Pads with zero bits to the next byte boundary (before stored data).
    pub(super) fn align(&mut self) {
        let pad = (8 - self.nbits % 8) % 8;
        self.put(0, pad);
        while self.nbits > 0 {
            self.put_byte_aligned(self.acc as u8);
            self.acc >>= 8;
            self.nbits -= 8;
        }
    }

    fn put_byte_aligned(&mut self, b: u8) {
        match self.out.get_mut(self.pos) {
            Some(dst) => *dst = b,
            None => self.overflow = true,
        }
        self.pos += 1;
    }

    /// Copies whole bytes; the writer must be byte-aligned with no pending bits.
    pub(super) fn put_bytes(&mut self, bytes: &[u8]) {
        debug_assert_eq!(self.nbits, 0);
        match self.out.get_mut(self.pos..self.pos + bytes.len()) {
            Some(dst) => dst.copy_from_slice(bytes),
            None => self.overflow = true,
        }
        self.pos += bytes.len();
    }

    /// Whether some bits did not fit.
    pub(super) fn overflowed(&self) -> bool {
        self.overflow || self.pos > self.out.len()
    }

    /// Flushes the last partial byte and returns the bytes written, or `None`
    /// when the output was too small.
    pub(super) fn finish(mut self) -> Option<usize> {
        self.align();
        (!self.overflowed()).then_some(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_pack_lowest_bit_first_and_overflow_is_reported() {
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        w.put(0b1, 1);
        w.put(0b10, 2);
        w.put(0x1f, 5);
        w.put(0xabcd, 16);
        w.put(0x3, 2);
        w.align();
        w.put_bytes(&[0x55]);
        assert_eq!(w.finish(), Some(5));
        assert_eq!(buf[..5], [0b1111_1101, 0xcd, 0xab, 0x03, 0x55]);

        let mut small = [0u8; 3];
        let mut w = BitWriter::new(&mut small);
        w.put(0xffff_ffff, 32);
        assert!(w.overflowed());
        assert_eq!(w.finish(), None);
        let mut small = [0u8; 3];
        let mut w = BitWriter::new(&mut small);
        w.put(0xff_ffff, 24);
        w.put(1, 1);
        assert_eq!(w.finish(), None);
    }
}
