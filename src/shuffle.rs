//! The standalone shuffle entry points (`blosc2_shuffle` and friends), over
//! `b2nd_core::filters`.

use super::chunk::src_dst_slices;
use super::guard_code;
use b2nd_core::filters::{bitshuffle, shuffle};
use core::ffi::c_void;

/// Checks the arguments as the reference does: typesize 1..=256 and a
/// non-negative block size, else `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `src` readable and `dest` writable for `blocksize` bytes, not overlapping.
unsafe fn apply(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
    f: impl FnOnce(usize, &[u8], &mut [u8]) -> crate::Result<()>,
) -> i32 {
    guard_code(|| {
        if !(1..=256).contains(&typesize) || blocksize < 0 {
            crate::bail!(
                InvalidParam,
                "typesize {typesize} or blocksize {blocksize} out of range"
            );
        }
        // SAFETY: the caller's contract (no overlap, sizes as given).
        let (s, d) = unsafe { src_dst_slices(src, blocksize, dest, blocksize) }?;
        f(typesize as usize, s, d)?;
        Ok(blocksize)
    })
}

/// The byte shuffle in the shape [`apply`] takes (it cannot fail).
fn byte_shuffle(typesize: usize, src: &[u8], dest: &mut [u8]) -> crate::Result<()> {
    shuffle::shuffle(typesize, src, dest);
    Ok(())
}

/// The byte unshuffle in the shape [`apply`] takes (it cannot fail).
fn byte_unshuffle(typesize: usize, src: &[u8], dest: &mut [u8]) -> crate::Result<()> {
    shuffle::unshuffle(typesize, src, dest);
    Ok(())
}

/// Byte-shuffles `blocksize` bytes of `src` into `dest` for items of
/// `typesize` bytes (trailing partial item copied). Returns `blocksize` or
/// `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `src` readable and `dest` writable for `blocksize` bytes, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn blosc2_shuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { apply(typesize, blocksize, src, dest, byte_shuffle) }
}

/// Inverse of `blosc2_shuffle`. Returns `blocksize` or `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// As for `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_unshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { apply(typesize, blocksize, src, dest, byte_unshuffle) }
}

/// Bit-shuffles the largest multiple of 8 items of `src` into `dest`, the
/// rest copied. Returns `blocksize` or a negative error.
///
/// # Safety
/// As for `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { apply(typesize, blocksize, src, dest, bitshuffle::bitshuffle) }
}

/// Inverse of `blosc2_bitshuffle`. Returns `blocksize` or a negative error.
///
/// # Safety
/// As for `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitunshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { apply(typesize, blocksize, src, dest, bitshuffle::bitunshuffle) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_round_trip_and_bad_args() {
        let src: Vec<u8> = (0..100u8).collect();
        let mut a = vec![0u8; 100];
        let mut b = vec![0u8; 100];
        // SAFETY: both buffers hold 100 bytes and do not overlap.
        unsafe {
            assert_eq!(
                blosc2_shuffle(4, 100, src.as_ptr().cast(), a.as_mut_ptr().cast()),
                100
            );
            assert_eq!(a[1], 4);
            assert_eq!(
                blosc2_unshuffle(4, 100, a.as_ptr().cast(), b.as_mut_ptr().cast()),
                100
            );
            assert_eq!(b, src);
            assert_eq!(
                blosc2_bitshuffle(2, 100, src.as_ptr().cast(), a.as_mut_ptr().cast()),
                100
            );
            assert_eq!(
                blosc2_bitunshuffle(2, 100, a.as_ptr().cast(), b.as_mut_ptr().cast()),
                100
            );
            assert_eq!(b, src);
            assert_eq!(
                blosc2_shuffle(0, 100, src.as_ptr().cast(), a.as_mut_ptr().cast()),
                -12
            );
            assert_eq!(
                blosc2_shuffle(257, 100, src.as_ptr().cast(), a.as_mut_ptr().cast()),
                -12
            );
            assert_eq!(
                blosc2_bitshuffle(4, -1, src.as_ptr().cast(), a.as_mut_ptr().cast()),
                -12
            );
            assert_eq!(
                blosc2_unshuffle(4, 100, core::ptr::null(), a.as_mut_ptr().cast()),
                -32
            );
        }
    }
}
