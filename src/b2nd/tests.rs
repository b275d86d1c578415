//! The C objects: public fields follow the core array after every call, and
//! `sc` is the array's real super-chunk between calls.

use super::*;
use crate::types::blosc2_cparams;

/// A context for an in-memory `int32` array of `shape` (chunks `cs`, blocks `bs`).
fn ctx(shape: &[i64], cs: &[i32], bs: &[i32]) -> *mut b2nd_context_t {
    let mut cp: blosc2_cparams = crate::storage::cparams_to_c(
        &b2nd_core::chunk::CParams {
            typesize: 4,
            ..Default::default()
        },
        core::ptr::null_mut(),
    );
    // SAFETY: all-zero is a valid blosc2_storage (NULL pointers, false).
    let mut st: blosc2_storage = unsafe { core::mem::zeroed() };
    st.cparams = &mut cp;
    // SAFETY: every pointer is valid for `shape.len()` items; `st` and `cp`
    // live across the call (the context copies what it needs).
    unsafe {
        b2nd_create_ctx(
            &st,
            shape.len() as i8,
            shape.as_ptr(),
            cs.as_ptr(),
            bs.as_ptr(),
            c"<i4".as_ptr(),
            0,
            core::ptr::null(),
            0,
        )
    }
}

#[test]
fn fields_follow_the_array_and_sc_is_the_real_super_chunk() {
    let c = ctx(&[5, 4], &[2, 4], &[1, 2]);
    assert!(!c.is_null());
    let data: Vec<i32> = (0..20).collect();
    let mut a: *mut b2nd_array_t = core::ptr::null_mut();
    // SAFETY: `c` is live, `a` writable, `data` holds 80 bytes.
    let rc = unsafe { ops::b2nd_from_cbuffer(c, &mut a, data.as_ptr().cast(), 80) };
    assert_eq!(rc, 0);
    // SAFETY: `a` was just created and is freed at the end.
    let arr = unsafe { &*a };
    assert_eq!((arr.ndim, arr.nitems, arr.extnitems), (2, 20, 24));
    assert_eq!(
        (arr.shape[..2].to_vec(), arr.extshape[..2].to_vec()),
        (vec![5, 4], vec![6, 4])
    );
    assert_eq!((arr.chunknitems, arr.blocknitems), (8, 2));
    assert_eq!(arr.item_array_strides[..2], [4, 1]);
    // SAFETY: `dtype` points at the box's NUL-terminated string.
    let dtype = unsafe { crate::convert::c_str(arr.dtype, "dtype") };
    assert_eq!(dtype.unwrap(), "<i4");
    // SAFETY: `sc` is the array's live super-chunk.
    let sb = unsafe { this(arr.sc) }.unwrap();
    assert_eq!((sb.c.nchunks, sb.c.typesize, sb.c.chunksize), (3, 4, 32));
    let mut chunk = vec![0u8; 32];
    assert_eq!(sb.core.read().decompress_chunk(1, &mut chunk).unwrap(), 32);
    // Released: a claimed super-chunk refuses the array's calls.
    drop(sb);
    let items: Vec<i32> = chunk
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(items, (8..16).collect::<Vec<i32>>());

    // A resize shows in the fields and in the super-chunk.
    let ns = [7i64, 4];
    // SAFETY: `a` is live; `ns` has ndim items.
    let rc = unsafe { ops::b2nd_resize(a, ns.as_ptr(), core::ptr::null()) };
    assert_eq!(rc, 0);
    // SAFETY: as above.
    let arr = unsafe { &*a };
    assert_eq!((arr.shape[0], arr.nitems), (7, 28));
    // SAFETY: as above.
    assert_eq!(unsafe { this(arr.sc) }.unwrap().c.nchunks, 4);
    // SAFETY: `a` and `c` are live and freed once.
    unsafe {
        assert_eq!(b2nd_free(a), 0);
        assert_eq!(b2nd_free_ctx(c), 0);
    }
}

#[test]
fn a_failed_from_schunk_leaves_the_super_chunk_to_the_caller() {
    // SAFETY: NULL storage means in memory, defaults.
    let sc = unsafe { crate::schunk::blosc2_schunk_new(core::ptr::null_mut()) };
    // SAFETY: `sc` is live.
    let sb = unsafe { this(sc) }.unwrap();
    sb.core.write().meta_add("b2nd", &[0x97, 0, 3]).unwrap();
    sb.core.write().append_buffer(&[1u8; 64]).unwrap();
    // Released, so that the refusal below is about the metalayer.
    drop(sb);
    let mut a: *mut b2nd_array_t = core::ptr::null_mut();
    // SAFETY: `sc` is live, `a` writable.
    assert!(unsafe { b2nd_from_schunk(sc, &mut a) } < 0);
    assert!(a.is_null());
    // SAFETY: still the caller's, still live.
    let sb = unsafe { this(sc) }.unwrap();
    assert_eq!(sb.core.read().nchunks(), 1);
    assert_eq!(sb.core.read().meta_get("b2nd").unwrap(), vec![0x97, 0, 3]);
    // SAFETY: freed once.
    unsafe { crate::schunk::blosc2_schunk_free(sc) };
}
