//! Checked conversions from C arguments to Rust borrows: a pointer with a
//! count becomes a slice, a C string becomes `&str`.
//!
//! Every export goes through these so that one rule holds everywhere: a
//! negative count is `InvalidParam`, a NULL pointer is `NullPointer` unless
//! the count is zero (then it is an empty slice), and a string that is not
//! UTF-8 is `InvalidParam`. `what` names the argument in the message.

use core::mem::MaybeUninit;
use core::ffi::{c_char, c_void, CStr};
use core::fmt::Display;

use crate::Result;

/// An item count as C passes it (`int32_t`, `int64_t`, `int8_t`, `size_t`...).
pub(crate) trait CCount: Copy + Display {
    /// The count as `usize`, or `None` when it is negative (or too large).
    fn to_count(self) -> Option<usize>;
}

macro_rules! c_count {
    ($($t:ty),*) => {$(
        impl CCount for $t {
            fn to_count(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
c_count!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

// These run on every C call that takes a buffer: inlined, with their
// errors built out of line, so that a small call does not pay a frame and a
// `Result` through memory per argument (`scripts/instructions.sh
// small/getitem_ctx/lz4/64B`).
#[inline(always)]
fn count(len: impl CCount, what: &str) -> Result<usize> {
    match len.to_count() {
        Some(n) => Ok(n),
        None => Err(negative(&len, what)),
    }
}

#[cold]
#[inline(never)]
fn negative(len: &dyn Display, what: &str) -> crate::Error {
    crate::err!(InvalidParam, "{what} size {len} is negative")
}

#[cold]
#[inline(never)]
fn null(what: &str) -> crate::Error {
    crate::err!(NullPointer, "{what} is NULL")
}

/// `len` items at `p` as a shared slice.
///
/// # Safety
/// A non-NULL `p` is readable for `len` items, properly aligned, and not
/// written through any other pointer while the slice lives.
#[inline(always)]
pub(crate) unsafe fn items<'a, T>(p: *const T, len: impl CCount, what: &str) -> Result<&'a [T]> {
    let n = count(len, what)?;
    if p.is_null() {
        if n == 0 {
            return Ok(&[]);
        }
        return Err(null(what));
    }
    // SAFETY: non-NULL, and readable for `n` items per this function's contract.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}

/// `len` items at `p` as an exclusive slice, for buffers the call reads or
/// updates. Pure outputs take [`out_items`] instead, except the data buffers
/// the decoders fill (`dest` of a decompression, a slice's buffer): the core
/// decodes into `&mut [u8]`, so those count as initialised, as memory C
/// hands over is in practice; docs/DESIGN.md says why.
///
/// # Safety
/// A non-NULL `p` is writable for `len` items, properly aligned, and not
/// reachable through any other pointer while the slice lives.
#[inline(always)]
pub(crate) unsafe fn items_mut<'a, T>(
    p: *mut T,
    len: impl CCount,
    what: &str,
) -> Result<&'a mut [T]> {
    let n = count(len, what)?;
    if p.is_null() {
        if n == 0 {
            return Ok(&mut []);
        }
        return Err(null(what));
    }
    // SAFETY: non-NULL, and writable and unaliased for `n` items per this
    // function's contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
}

/// `len` items at `p` that the call only writes: the outputs of a C call,
/// which callers may pass uninitialised (a `malloc`ed array), so Rust sees
/// them as `MaybeUninit` and never reads them. [`fill`] writes a whole one.
///
/// # Safety
/// As for [`items_mut`]; the memory need not be initialised.
pub(crate) unsafe fn out_items<'a, T>(
    p: *mut T,
    len: impl CCount,
    what: &str,
) -> Result<&'a mut [MaybeUninit<T>]> {
    // SAFETY: forwarded contract; `MaybeUninit<T>` has `T`'s layout, and
    // a slice of it may cover uninitialised memory.
    unsafe { items_mut(p.cast::<MaybeUninit<T>>(), len, what) }
}

/// Writes `src` into the output `dst` of the same length.
pub(crate) fn fill<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "output and values differ in length");
    for (d, s) in dst.iter_mut().zip(src) {
        d.write(*s);
    }
}

/// `len` bytes at an untyped pointer, as [`items`].
///
/// # Safety
/// As for [`items`].
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: impl CCount, what: &str) -> Result<&'a [u8]> {
    // SAFETY: forwarded contract; bytes have alignment 1.
    unsafe { items(p.cast::<u8>(), len, what) }
}

/// `len` writable bytes at an untyped pointer, as [`items_mut`].
///
/// # Safety
/// As for [`items_mut`].
pub(crate) unsafe fn bytes_mut<'a>(
    p: *mut c_void,
    len: impl CCount,
    what: &str,
) -> Result<&'a mut [u8]> {
    // SAFETY: forwarded contract; bytes have alignment 1.
    unsafe { items_mut(p.cast::<u8>(), len, what) }
}

/// A NUL-terminated C string as UTF-8; NULL is an error.
///
/// # Safety
/// A non-NULL `p` points at a NUL-terminated string that outlives the borrow.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    // SAFETY: forwarded contract.
    unsafe { opt_c_str(p, what) }?.ok_or_else(|| crate::err!(NullPointer, "{what} is NULL"))
}

/// A NUL-terminated C string as UTF-8, or `None` for NULL.
///
/// # Safety
/// As for [`c_str`].
pub(crate) unsafe fn opt_c_str<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and NUL-terminated per this function's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(Some)
        .map_err(|_| crate::err!(InvalidParam, "{what} is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_allowed_only_for_empty() {
        // SAFETY: NULL with a zero count is never dereferenced.
        let empty: &[i64] = unsafe { items(core::ptr::null(), 0i32, "shape") }.unwrap();
        assert!(empty.is_empty());
        // SAFETY: NULL is rejected before any dereference.
        let err = unsafe { items::<i64>(core::ptr::null(), 3i8, "shape") }.unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::NullPointer);
        assert_eq!(err.code(), -32);
    }

    #[test]
    fn negative_counts_are_invalid() {
        let v = [1u8, 2, 3];
        // SAFETY: the count is rejected before the pointer is used.
        let err = unsafe { bytes(v.as_ptr().cast(), -1i64, "src") }.unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidParam);
        assert!(err.to_string().contains("src size -1"));
    }

    #[test]
    fn slices_see_the_c_memory() {
        let mut v = [1u32, 2, 3, 4];
        // SAFETY: `v` is a live, aligned array of 4 items with no other borrow.
        let s = unsafe { items_mut(v.as_mut_ptr(), 4usize, "dest") }.unwrap();
        s[3] = 9;
        assert_eq!(v, [1, 2, 3, 9]);
    }

    #[test]
    fn strings_are_checked() {
        // SAFETY: literals are NUL-terminated and static.
        unsafe {
            assert_eq!(c_str(c"zstd".as_ptr(), "compname").unwrap(), "zstd");
            assert_eq!(opt_c_str(core::ptr::null(), "dtype").unwrap(), None);
            assert!(
                matches!(c_str(core::ptr::null(), "urlpath"), Err(e) if e.kind() == crate::ErrorKind::NullPointer)
            );
            let bad = [0xffu8, 0];
            assert!(
                matches!(c_str(bad.as_ptr().cast(), "name"), Err(e) if e.kind() == crate::ErrorKind::InvalidParam)
            );
        }
    }
}
