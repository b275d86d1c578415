//! Whether a buffer is one byte repeated (a run): the check behind run
//! streams when compressing and the repeated-item fast path of bitshuffle.
//! It runs over every block of such data, so it has an AVX2 version.

#[cfg(target_arch = "x86_64")]
use super::cpu::{self, SimdLevel};

/// Whether every byte of `s` is `x`, stopping at the first 128-byte step
/// with a difference.
pub(crate) fn is_run(s: &[u8], x: u8) -> bool {
    #[cfg(target_arch = "x86_64")]
    if cpu::level() >= SimdLevel::Avx2 {
        // SAFETY: the running CPU supports AVX2 (checked just above).
        return unsafe { is_run_avx2(s, x) };
    }
    is_run_words(s, x)
}

/// Whether all bytes of `s` are equal (true when empty).
pub(crate) fn is_uniform(s: &[u8]) -> bool {
    s.first().map_or(true, |&x| is_run(s, x))
}
/// [`is_run`] without SIMD: eight words per step.
fn is_run_words(s: &[u8], x: u8) -> bool {
    let pattern = u64::from_ne_bytes([x; 8]);
    let mut steps = s.chunks_exact(64);
    for step in &mut steps {
        let mut diff = 0u64;
        for w in step.chunks_exact(8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            diff |= u64::from_ne_bytes(word) ^ pattern;
        }
        if diff != 0 {
            return false;
        }
    }
    steps.remainder().iter().all(|&b| b == x)
}

/// [`is_run`] with AVX2: four 32-byte compares per step. (The word loop
/// above compiles to one compare and branch per word.)
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn is_run_avx2(s: &[u8], x: u8) -> bool {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi8, _mm256_testz_si256,
        _mm256_xor_si256,
    };
    let pattern = _mm256_set1_epi8(x as i8);
    let mut steps = s.chunks_exact(128);
    for step in &mut steps {
        let p = step.as_ptr().cast::<__m256i>();
        // SAFETY: `step` is 128 readable bytes, so the four unaligned
        // 32-byte loads at 0, 32, 64 and 96 stay inside it.
        let (a, b, c, d) = unsafe {
            (
                _mm256_loadu_si256(p),
                _mm256_loadu_si256(p.add(1)),
                _mm256_loadu_si256(p.add(2)),
                _mm256_loadu_si256(p.add(3)),
            )
        };
        let diff = _mm256_or_si256(
            _mm256_or_si256(_mm256_xor_si256(a, pattern), _mm256_xor_si256(b, pattern)),
            _mm256_or_si256(_mm256_xor_si256(c, pattern), _mm256_xor_si256(d, pattern)),
        );
        if _mm256_testz_si256(diff, diff) == 0 {
            return false;
        }
    }
    steps.remainder().iter().all(|&b| b == x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 run check agrees with the word loop on every length up to
    /// 600 bytes, for a run and for one odd byte at every position.
    #[test]
    fn run_checks_agree() {
        for x in [0u8, 0xff, 0x5a] {
            for len in 0..600 {
                let run = vec![x; len];
                assert!(is_run_words(&run, x) && is_run(&run, x) && is_uniform(&run));
                for at in (0..len).filter(|_| len > 1) {
                    let mut odd = run.clone();
                    odd[at] ^= 1 << (at % 8);
                    assert!(!is_run_words(&odd, x) && !is_run(&odd, x) && !is_uniform(&odd));
                }
            }
        }
        #[cfg(target_arch = "x86_64")]
        if cpu::level() >= SimdLevel::Avx2 {
            for x in [0u8, 0xff, 0x5a] {
                for len in 0..600 {
                    let run = vec![x; len];
                    // SAFETY: AVX2 is available (checked above).
                    assert!(unsafe { is_run_avx2(&run, x) } && is_run_words(&run, x));
                    for at in 0..len {
                        let mut odd = run.clone();
                        odd[at] ^= 1 << (at % 8);
                        // SAFETY: as above.
                        assert!(!unsafe { is_run_avx2(&odd, x) }, "len {len} at {at}");
                        assert!(!is_run_words(&odd, x), "len {len} at {at}");
                    }
                }
            }
        }
    }
}
