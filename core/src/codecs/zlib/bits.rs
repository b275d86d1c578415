//! An LSB-first bit writer into a fixed output slice, as deflate packs bits.

/// Writes bit fields into `out`, lowest bit first. Running out of room sets
/// a flag instead of failing each call: the encoder checks it once per block,
/// and a stream that did not fit is thrown away whole.
///
/// Every call stores the whole 8-byte accumulator and moves on by the whole
/// bytes in it, rather than flushing only when 32 bits have gathered: with
/// codes of varying length, "have 32 gathered?" is a branch the predictor
/// misses about once per few symbols, a store is cheaper. The bytes past the
/// ones moved over are written again by the next call; near the end of `out`
/// the bytes go one at a time.
pub(super) struct BitWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    /// Pending bits, lowest first; fewer than 8 between calls.
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

    /// Runs `f` on a writer continuing this one and takes over the state it
    /// reaches. For hot loops: the state of that local writer stays in
    /// registers, where the fields of a writer behind a reference are
    /// stored back after every output store (as far as the compiler knows,
    /// the output could alias them).
    #[inline(always)]
    pub(super) fn in_registers<R>(&mut self, f: impl FnOnce(&mut BitWriter<'_>) -> R) -> R {
        let mut local = BitWriter {
            out: &mut *self.out,
            pos: self.pos,
            acc: self.acc,
            nbits: self.nbits,
            overflow: self.overflow,
        };
        let r = f(&mut local);
        let (pos, acc, nbits, overflow) = (local.pos, local.acc, local.nbits, local.overflow);
        (self.pos, self.acc, self.nbits, self.overflow) = (pos, acc, nbits, overflow);
        r
    }

    /// Appends the low `count` bits of `bits` (`count` <= 32, higher bits of
    /// `bits` clear).
    #[inline(always)]
    pub(super) fn put(&mut self, bits: u32, count: u32) {
        self.put_long(u64::from(bits), count);
    }

    /// As [`Self::put`] for up to 56 bits at once (what fits next to the
    /// fewer than 8 pending): a whole match, codes and extra bits, goes in
    /// one call.
    #[inline(always)]
    pub(super) fn put_long(&mut self, bits: u64, count: u32) {
        debug_assert!(count <= 56 && bits >> count == 0);
        self.acc |= bits << self.nbits;
        self.nbits += count;
        let whole = self.nbits / 8;
        match self.out.get_mut(self.pos..self.pos + 8) {
            Some(dst) => dst.copy_from_slice(&self.acc.to_le_bytes()),
            None => self.overflow |= put_near_end(self.out, self.pos, self.acc, whole as usize),
        }
        self.pos += whole as usize;
        self.acc >>= 8 * whole;
        self.nbits -= 8 * whole;
    }

    /// Pads with zero bits to the next byte boundary (before stored data).
    pub(super) fn align(&mut self) {
        let pad = (8 - self.nbits % 8) % 8;
        self.put(0, pad);
        debug_assert_eq!(self.nbits, 0);
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

/// The first `whole` bytes of `acc` at `out[pos..]`, one at a time, as far
/// as they fit; `true` when some did not. A free function taking values, so
/// that a writer held in registers need not be spilled to call it.
#[cold]
fn put_near_end(out: &mut [u8], pos: usize, acc: u64, whole: usize) -> bool {
    let mut overflow = false;
    for (k, &b) in acc.to_le_bytes().iter().enumerate().take(whole) {
        match out.get_mut(pos + k) {
            Some(dst) => *dst = b,
            None => overflow = true,
        }
    }
    overflow
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

    /// Random fields of 0 to 56 bits, byte padding and byte runs come out
    /// as a bit-at-a-time model writes them, in outputs with and without
    /// spare room (the last bytes then go through the near-end path), and
    /// any output one byte short is refused.
    #[test]
    fn random_fields_match_a_bit_at_a_time_model() {
        let mut x = 0x853c_49e6_748f_ea9bu64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..200 {
            let mut ops = Vec::new();
            let mut model: Vec<bool> = Vec::new();
            for _ in 0..(next() % 60) {
                match next() % 8 {
                    0 => {
                        while model.len() % 8 != 0 {
                            model.push(false);
                        }
                        let bytes: Vec<u8> = (0..next() % 5).map(|_| next() as u8).collect();
                        for b in &bytes {
                            model.extend((0..8).map(|k| b >> k & 1 == 1));
                        }
                        ops.push((None, bytes));
                    }
                    _ => {
                        let count = (next() % 57) as u32;
                        let bits = if count == 0 {
                            0
                        } else {
                            next() >> (64 - count)
                        };
                        model.extend((0..count).map(|k| bits >> k & 1 == 1));
                        ops.push((Some((bits, count)), Vec::new()));
                    }
                }
            }
            while model.len() % 8 != 0 {
                model.push(false);
            }
            let want: Vec<u8> = model
                .chunks(8)
                .map(|c| c.iter().rev().fold(0u8, |a, &b| a << 1 | u8::from(b)))
                .collect();
            let run = |room: usize| {
                let mut buf = vec![0u8; room];
                let mut w = BitWriter::new(&mut buf);
                for (field, bytes) in &ops {
                    match field {
                        Some((bits, count)) => w.put_long(*bits, *count),
                        None => {
                            w.align();
                            w.put_bytes(bytes);
                        }
                    }
                }
                let n = w.finish();
                (n, buf)
            };
            for spare in [0usize, 3, 16] {
                let (n, buf) = run(want.len() + spare);
                assert_eq!(n, Some(want.len()), "case {case} spare {spare}");
                assert_eq!(buf[..want.len()], want[..], "case {case} spare {spare}");
            }
            if !want.is_empty() {
                assert_eq!(run(want.len() - 1).0, None, "case {case}");
            }
        }
    }
}
