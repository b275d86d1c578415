//! Working buffers the system may refuse.
//!
//! A buffer sized by valid data (a block's scratch, the chunk a slice is
//! read through) can be as large as a chunk, up to 2 GiB. The reference
//! answers a failed `malloc` with `BLOSC2_ERROR_MEMORY_ALLOC`; Rust's usual
//! allocations abort the process instead. These return the error.
//!
//! [`zeroed`] is `vec![0; len]` made fallible, and stays lazily zeroed as
//! that is (it is `calloc`): a slice of a few items reads through a
//! chunk-sized buffer of which it touches only the blocks it decodes, and
//! zeroing the rest first would cost more than the read. Stable Rust has
//! no safe allocation that is both fallible and zeroed, hence the one
//! `unsafe` block here, outside the SIMD kernels and the C layer.

use crate::Result;

/// `len` zero bytes, or `MemoryAlloc` when the system refuses them.
pub(crate) fn zeroed(len: usize) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let refused = || crate::err!(MemoryAlloc, "no memory for a buffer of {len} bytes");
    let layout = std::alloc::Layout::array::<u8>(len).map_err(|_| refused())?;
    // SAFETY: `layout` has a non-zero size (len > 0), as `alloc_zeroed`
    // requires. A non-null result is `len` zeroed, initialised bytes at
    // alignment 1 from the global allocator, which is what
    // `Vec::<u8>::from_raw_parts(ptr, len, len)` requires: the Vec then
    // owns them and frees them with the same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout);
        if ptr.is_null() {
            return Err(refused());
        }
        Ok(Vec::from_raw_parts(ptr, len, len))
    }
}

/// `v.resize(len, 0)` when `v` is shorter (new bytes zero, old ones kept),
/// or `MemoryAlloc` when the system refuses the room; `v` is unchanged then.
pub(crate) fn grow(v: &mut Vec<u8>, len: usize) -> Result<()> {
    if v.len() >= len {
        return Ok(());
    }
    if v.capacity() == 0 {
        // Nothing to keep: a fresh buffer stays lazily zeroed.
        *v = zeroed(len)?;
        return Ok(());
    }
    v.try_reserve_exact(len - v.len())
        .map_err(|_| crate::err!(MemoryAlloc, "no memory to grow a buffer to {len} bytes"))?;
    v.resize(len, 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_and_grown_buffers_hold_zeros_and_keep_contents() {
        assert!(zeroed(0).unwrap().is_empty());
        let z = zeroed(100_000).unwrap();
        assert_eq!(z.len(), 100_000);
        assert!(z.iter().all(|&b| b == 0));
        let mut v = Vec::new();
        grow(&mut v, 10).unwrap();
        assert_eq!(v, [0; 10]);
        v.copy_from_slice(&[7; 10]);
        grow(&mut v, 20).unwrap();
        assert_eq!(&v[..10], &[7; 10]);
        assert_eq!(&v[10..], &[0; 10]);
        grow(&mut v, 5).unwrap();
        assert_eq!(v.len(), 20, "grow never shrinks");
    }

    #[test]
    fn a_buffer_past_what_memory_holds_is_refused() {
        // More than any address space holds: refused by the allocator (or
        // by the layout, past isize::MAX), never an abort.
        for len in [usize::MAX / 2, usize::MAX - 10, 1 << 62] {
            assert!(
                matches!(zeroed(len), Err(e) if e.kind() == crate::ErrorKind::MemoryAlloc),
                "{len}"
            );
            let mut v = vec![1u8; 3];
            assert!(
                matches!(grow(&mut v, len), Err(e) if e.kind() == crate::ErrorKind::MemoryAlloc)
            );
            assert_eq!(v, [1, 1, 1], "unchanged after a refusal");
        }
    }
}
