//! The tests' deterministic generator, xorshift64 (shifts 13, 7, 17), so that
//! failures reproduce. Unit tests reach it as `crate::test_rng`; the
//! integration tests include this same file from `core/tests/common`. Each user
//! needs only some of it.
#![allow(dead_code)]

/// The seed must not be zero.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A value in `0..n`, or 0 when `n <= 0` (array extents may be zero).
    pub fn index(&mut self, n: i64) -> i64 {
        if n <= 0 {
            0
        } else {
            (self.next() % n as u64) as i64
        }
    }

    /// `n` bytes, the low byte of one draw each.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}
