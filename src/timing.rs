//! The reference's timing helpers (`blosc_set_timestamp`, `blosc_elapsed_*`), which its
//! examples and benchmarks time themselves with.

use super::guard;
use super::types::blosc_timestamp_t;

/// Stores the current time of the monotonic clock in `*timestamp` (NULL is ignored).
///
/// # Safety
/// `timestamp` is NULL or points to a writable `blosc_timestamp_t`.
#[no_mangle]
pub unsafe extern "C" fn blosc_set_timestamp(timestamp: *mut blosc_timestamp_t) {
    guard((), || {
        if timestamp.is_null() {
            return;
        }
        // SAFETY: `timestamp` is non-NULL and writable by the caller's contract;
        // clock_gettime only writes the struct. CLOCK_MONOTONIC always exists on
        // the platforms built for, so its result needs no check.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, timestamp) };
    })
}

/// Nanoseconds from `start_time` to `end_time` (negative if `end_time` is earlier).
#[no_mangle]
pub extern "C" fn blosc_elapsed_nsecs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    guard(f64::NAN, || {
        let secs = end_time.tv_sec as f64 - start_time.tv_sec as f64;
        let nanos = end_time.tv_nsec as f64 - start_time.tv_nsec as f64;
        secs * 1e9 + nanos
    })
}

/// Seconds from `start_time` to `end_time`.
#[no_mangle]
pub extern "C" fn blosc_elapsed_secs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    guard(f64::NAN, || blosc_elapsed_nsecs(start_time, end_time) / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sec: i64, nsec: i64) -> blosc_timestamp_t {
        blosc_timestamp_t {
            tv_sec: sec as libc::time_t,
            tv_nsec: nsec as libc::c_long,
        }
    }

    #[test]
    fn elapsed_counts_across_a_second_boundary() {
        assert_eq!(
            blosc_elapsed_nsecs(at(5, 900_000_000), at(7, 100_000_000)),
            1.2e9
        );
        assert_eq!(
            blosc_elapsed_secs(at(5, 900_000_000), at(7, 100_000_000)),
            1.2
        );
        assert_eq!(blosc_elapsed_nsecs(at(2, 0), at(1, 0)), -1e9);
    }

    #[test]
    fn the_clock_moves_forward() {
        let (mut a, mut b) = (at(0, 0), at(0, 0));
        // SAFETY: both point to live, writable timestamps.
        unsafe {
            blosc_set_timestamp(&mut a);
            blosc_set_timestamp(&mut b);
            blosc_set_timestamp(core::ptr::null_mut());
        }
        assert!(a.tv_sec > 0 || a.tv_nsec > 0);
        assert!(blosc_elapsed_nsecs(a, b) >= 0.0);
    }
}
