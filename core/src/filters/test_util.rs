//! Helpers shared by the filter unit tests: a tiny deterministic PRNG and the
//! size grid every kernel is checked on.

/// xorshift64* generator; deterministic so failures reproduce.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| (self.next_u64() >> 56) as u8).collect()
    }
}

/// Type sizes every kernel is tested with (300 and 1000 go past the 255 a
/// chunk header allows, for the stand-alone entry points and the tile limits).
pub(crate) fn typesizes() -> Vec<usize> {
    (1..=32).chain([64, 128, 255, 300, 1000]).collect()
}

/// Buffer lengths every kernel is tested with: all small ones, then a few
/// large ones that are not multiples of 8 * typesize nor of the vector width.
pub(crate) fn lengths() -> Vec<usize> {
    (0..=300).chain([1021, 4099, 65_573, 262_147]).collect()
}

/// A reference fixture from `c-blosc2-compat` (in `tests/fixtures`).
pub(crate) fn compat_fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/c-blosc2-compat")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The int32 ramp 0..999999, little-endian: the plain data of the fixtures.
pub(crate) fn int32_ramp() -> Vec<u8> {
    (0..1_000_000i32).flat_map(|v| v.to_le_bytes()).collect()
}
