//! Which SIMD instruction set the shuffle kernels may use on this machine.
//!
//! Detection runs once; the answer is cached in an atomic so the per-block
//! dispatch costs one relaxed load.

/// Instruction-set tier for the shuffle kernels, from slowest to fastest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SimdLevel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

/// The best tier the running CPU supports.
#[cfg(target_arch = "x86_64")]
pub(crate) fn level() -> SimdLevel {
    use std::sync::atomic::{AtomicU8, Ordering};
    // 0 = not yet detected; otherwise the tier plus one.
    static CACHED: AtomicU8 = AtomicU8::new(0);
    match CACHED.load(Ordering::Relaxed) {
        1 => SimdLevel::Scalar,
        2 => SimdLevel::Sse2,
        3 => SimdLevel::Avx2,
        _ => {
            let found = if is_x86_feature_detected!("avx2") {
                SimdLevel::Avx2
            } else if is_x86_feature_detected!("sse2") {
                SimdLevel::Sse2
            } else {
                SimdLevel::Scalar
            };
            let code = match found {
                SimdLevel::Scalar => 1,
                SimdLevel::Sse2 => 2,
                SimdLevel::Avx2 => 3,
            };
            CACHED.store(code, Ordering::Relaxed);
            found
        }
    }
}

/// The best tier the running CPU supports.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn level() -> SimdLevel {
    SimdLevel::Scalar
}

/// Every tier the running CPU supports, for tests that compare them.
#[cfg(test)]
pub(crate) fn available() -> Vec<SimdLevel> {
    let best = level();
    let mut all = vec![SimdLevel::Scalar];
    #[cfg(target_arch = "x86_64")]
    {
        if best >= SimdLevel::Sse2 {
            all.push(SimdLevel::Sse2);
        }
        if best >= SimdLevel::Avx2 {
            all.push(SimdLevel::Avx2);
        }
    }
    let _ = best;
    all
}
