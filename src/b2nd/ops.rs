//! b2nd calls that read, write, reshape or derive arrays: each converts its
//! C arguments and delegates to one method of the core array.

use core::ffi::{c_int, c_void};

use super::{
    array, context, coords, grow_array, intent_array, lend, named, put_array, read_array, slot_for,
    with_array, ArrayBox, CtxBox, MAX_DIM,
};
use crate::convert;
use crate::types::{b2nd_array_t, b2nd_context_t};
use b2nd_core::ndarray::array::{Context, NdArray};
use crate::Result;

/// A caller's buffer of `size` bytes; NULL is `NullPointer` whatever the
/// size, as in the reference.
///
/// # Safety
/// `p` is NULL or readable for `size` bytes.
unsafe fn in_buf<'a>(p: *const c_void, size: i64) -> Result<&'a [u8]> {
    if p.is_null() {
        crate::bail!(NullPointer, "buffer is NULL");
    }
    // SAFETY: forwarded contract.
    unsafe { convert::bytes(p, size, "buffer") }
}

/// A caller's writable buffer of `size` bytes (see [`in_buf`]).
///
/// # Safety
/// `p` is NULL or writable for `size` bytes.
unsafe fn out_buf<'a>(p: *mut c_void, size: i64) -> Result<&'a mut [u8]> {
    if p.is_null() {
        crate::bail!(NullPointer, "buffer is NULL");
    }
    // SAFETY: forwarded contract.
    unsafe { convert::bytes_mut(p, size, "buffer") }
}

/// The `start`, `stop` and `buffershape` of a region of an `ndim` array.
///
/// # Safety
/// Each pointer is NULL or readable for `ndim` items.
unsafe fn region<'a>(
    ndim: usize,
    start: *const i64,
    stop: *const i64,
    buffershape: *const i64,
) -> Result<(&'a [i64], &'a [i64], &'a [i64])> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok((
            coords(start, ndim, "start")?,
            coords(stop, ndim, "stop")?,
            coords(buffershape, ndim, "buffershape")?,
        ))
    }
}

/// An axis argument checked against `ndim`.
fn axis_of(axis: i8, ndim: usize) -> Result<usize> {
    usize::try_from(axis)
        .ok()
        .filter(|a| *a < ndim)
        .ok_or_else(|| crate::err!(InvalidParam, "axis {axis} out of range [0, {ndim})"))
}

/// An array built from the context and the buffer.
///
/// # Safety
/// `ctx` NULL or live; `array` NULL or writable; `buffer` NULL or readable
/// for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        super::with_new_array(ctx, array, |c| {
            // SAFETY: forwarded contract.
            let buf = in_buf(buffer, buffersize)?;
            NdArray::from_cbuffer(c, buf)
        })
    }
}

/// Copies the whole array, C order, into `buffer`.
///
/// # Safety
/// `array` NULL or live; `buffer` NULL or writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cbuffer(
    array: *const b2nd_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { read_array(array, |a| a.to_cbuffer(out_buf(buffer, buffersize)?)) }
}

/// Gathers the items at `ncoords` flat C-order indices into `buffer`.
///
/// # Safety
/// `array` NULL or live; `coords` readable for `ncoords` items; `buffer`
/// writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(
    array: *const b2nd_array_t,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_array(array, |a| {
            let n = usize::try_from(ncoords)
                .map_err(|_| crate::err!(InvalidParam, "ncoords {ncoords} is negative"))?;
            if n == 0 {
                return Ok(());
            }
            let c = self::coords(coords, n, "coords")?;
            a.get_sparse_cbuffer(c, out_buf(buffer, buffersize)?)
        })
    }
}

/// Copies the region [start, stop) into `buffer`, a C-order array of shape
/// `buffershape` and `buffersize` bytes.
///
/// # Safety
/// `array` NULL or live; `start`, `stop`, `buffershape` readable for ndim
/// items; `buffer` writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice_cbuffer(
    array: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
    buffer: *mut c_void,
    buffershape: *const i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_array(array, |a| {
            let (s, e, bs) = region(a.ndim(), start, stop, buffershape)?;
            a.get_slice_cbuffer(s, e, out_buf(buffer, buffersize)?, bs)
        })
    }
}

/// Writes `buffer` (C order, shape `buffershape`) into [start, stop).
///
/// # Safety
/// As for `b2nd_get_slice_cbuffer`, with `buffer` readable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_slice_cbuffer(
    buffer: *const c_void,
    buffershape: *const i64,
    buffersize: i64,
    start: *const i64,
    stop: *const i64,
    array: *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        // Under a write intent: the callbacks of the compression may read
        // the array (python-blosc2's prefilters do).
        intent_array(
            array,
            |a| {
                let buf = in_buf(buffer, buffersize)?;
                let (s, e, bs) = region(a.ndim(), start, stop, buffershape)?;
                a.encode_slice_cbuffer(buf, bs, s, e)
            },
            |a, chunks| a.publish(chunks),
        )
    }
}

/// Runs `make` on the lent source array and the context of `ctx` and boxes
/// the new array it returns into `*out`, with `ctx`'s I/O backend. `starts`
/// gives the context `make` builds the array with (for its metalayers): the
/// context's own shape is replaced, so only that one has to make an array,
/// and its shape is written back into `ctx` (as the reference does).
///
/// # Safety
/// `src` NULL or live; `out` NULL or writable; `ctx` a live context.
unsafe fn with_derived(
    src: *const b2nd_array_t,
    out: *mut *mut b2nd_array_t,
    ctx: &mut CtxBox,
    starts: impl FnOnce(&NdArray, &Context) -> Result<Context>,
    make: impl FnOnce(&mut NdArray, &Context) -> Result<NdArray>,
) -> c_int {
    crate::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { array(src) }?;
        if out.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: a live context's fields hold what the reference allows.
        let (c, io) = unsafe { ctx.current() }?;
        let (made, slot) = lend(ab, |a| {
            let derived = starts(a, &c)?;
            let slot = slot_for(&derived)?;
            ctx.set_shape(&derived.shape);
            Ok((make(a, &named(&c, &slot))?, slot))
        })?;
        let p = ArrayBox::into_c_at(made, io, slot)?;
        // SAFETY: non-NULL and writable per the contract.
        unsafe { put_array(out, p) };
        Ok(0)
    }) as c_int
}

/// Runs `make` on the lent array `src` and boxes the view it returns into
/// `*out`. The view shares `src`'s chunks (writes through either are read
/// through the other) and its C super-chunk; the two may be freed with
/// `b2nd_free` in any order. (The exported views below keep their header
/// comments short: these notes would change the generated header.)
///
/// # Safety
/// `src` NULL or live; `out` NULL or writable.
unsafe fn with_view(
    src: *const b2nd_array_t,
    out: *mut *mut b2nd_array_t,
    make: impl FnOnce(&mut NdArray) -> Result<NdArray>,
) -> c_int {
    crate::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { array(src) }?;
        if out.is_null() {
            crate::bail!(NullPointer, "view is NULL");
        }
        let view = lend(ab, make)?;
        let p = ArrayBox::wrap_view(view, ab);
        // SAFETY: non-NULL and writable per the contract.
        unsafe { put_array(out, p) };
        Ok(0)
    }) as c_int
}

/// A new array (made with `ctx`, whose shape is replaced) holding the region
/// [start, stop) of `src`.
///
/// # Safety
/// `ctx` NULL or live; `array` NULL or writable; `src` NULL or live;
/// `start`, `stop` readable for ndim items.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    src: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
) -> c_int {
    crate::guard_code(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context(ctx) }?;
        // SAFETY: forwarded contract.
        let rc = unsafe {
            let region = |a: &NdArray| -> Result<(&[i64], &[i64])> {
                let n = a.ndim();
                Ok((coords(start, n, "start")?, coords(stop, n, "stop")?))
            };
            with_derived(
                src,
                array,
                c,
                |a, ctx| region(a).and_then(|(s, e)| a.slice_context(ctx, s, e)),
                |a, ctx| region(a).and_then(|(s, e)| a.get_slice(ctx, s, e)),
            )
        };
        Ok(i64::from(rc))
    }) as c_int
}

/// A view without the unit dimensions flagged in `index` (ndim entries).
///
/// # Safety
/// `array` NULL or live; `view` NULL or writable; `index` readable for ndim.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_view(array, view, |a| {
            let n = a.ndim();
            a.squeeze_index(convert::items(index, n, "index")?)
        })
    }
}

/// A view without any unit dimension.
///
/// # Safety
/// `array` NULL or live; `view` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_view(array, view, |a| a.squeeze()) }
}

/// A view with unit dimensions inserted where `axis` (final_dims entries)
/// is true.
///
/// # Safety
/// `array` NULL or live; `view` NULL or writable; `axis` readable for
/// `final_dims` entries.
#[no_mangle]
pub unsafe extern "C" fn b2nd_expand_dims(
    array: *const b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    axis: *const bool,
    final_dims: u8,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_view(array, view, |a| {
            let n = usize::from(final_dims);
            if n > MAX_DIM {
                crate::bail!(InvalidParam, "final_dims {n} exceeds {MAX_DIM}");
            }
            a.expand_dims(convert::items(axis, n, "axis")?)
        })
    }
}

/// A copy of `src` with the storage, chunkshape, blockshape and dtype of
/// `ctx`.
///
/// # Safety
/// `ctx` NULL or live; `src` NULL or live; `array` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy(
    ctx: *mut b2nd_context_t,
    src: *const b2nd_array_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    crate::guard_code(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context(ctx) }?;
        // SAFETY: forwarded contract.
        let rc = unsafe {
            with_derived(
                src,
                array,
                c,
                |a, ctx| a.copy_context(ctx),
                |a, ctx| a.copy(ctx),
            )
        };
        Ok(i64::from(rc))
    }) as c_int
}

/// `src1` followed by `src2` along `axis`: a new array made with `ctx` when
/// `copy`, else `src1` itself, extended (then `*array == src1`).
///
/// # Safety
/// `ctx` NULL or live; `src1`, `src2` NULL or live; `array` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_concatenate(
    ctx: *mut b2nd_context_t,
    src1: *const b2nd_array_t,
    src2: *const b2nd_array_t,
    axis: i8,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    crate::guard_code(|| {
        if src1.is_null() || src2.is_null() || array.is_null() {
            crate::bail!(NullPointer, "src1, src2 or array is NULL");
        }
        // SAFETY: forwarded contract; both non-NULL.
        let a1 = unsafe { self::array(src1) }?;
        let same = core::ptr::eq(src1, src2);
        // An array and a view of it share one C super-chunk, which can be
        // lent to one of them at a time: the second is read into a copy first.
        let twin = if same {
            None
        } else {
            // SAFETY: forwarded contract; distinct from `src1`.
            let a2 = unsafe { self::array(src2) }?;
            if a2.c.sc == a1.c.sc {
                Some(lend(a2, |y| y.copy(&y.like_context()))?)
            } else {
                None
            }
        };
        // With two distinct arrays, lend both; with one, lend it once.
        let run = |a1: &mut ArrayBox,
                   f: &mut dyn FnMut(&mut NdArray, Option<&NdArray>) -> Result<Option<NdArray>>|
         -> Result<Option<NdArray>> {
            if same {
                lend(a1, |x| f(x, None))
            } else if let Some(t) = &twin {
                lend(a1, |x| f(x, Some(t)))
            } else {
                // SAFETY: forwarded contract; distinct from `src1`.
                let a2 = unsafe { self::array(src2) }?;
                lend(a1, |x| lend(a2, |y| f(x, Some(y))))
            }
        };
        if copy {
            // SAFETY: forwarded contract.
            let c = unsafe { context(ctx) }?;
            // SAFETY: a live context's fields hold what the reference allows.
            let (cx, io) = unsafe { c.current() }?;
            // The new array starts as a copy of `src1`.
            let derived = lend(a1, |x| x.copy_context(&cx))?;
            let slot = slot_for(&derived)?;
            c.set_shape(&derived.shape);
            let nctx = named(&cx, &slot);
            let made = run(a1, &mut |x, y| {
                let ax = axis_of(axis, x.ndim())?;
                Ok(Some(NdArray::concatenate(&nctx, x, y.unwrap_or(x), ax)?))
            })?;
            let Some(made) = made else {
                crate::bail!(Failure, "concatenation gave no array");
            };
            let p = ArrayBox::into_c_at(made, io, slot)?;
            // SAFETY: non-NULL and writable per the contract.
            unsafe { put_array(array, p) };
        } else {
            run(a1, &mut |x, y| {
                let ax = axis_of(axis, x.ndim())?;
                match y {
                    Some(y) => x.concatenate_in_place(y, ax)?,
                    None => {
                        let twin = x.copy(&x.like_context())?;
                        x.concatenate_in_place(&twin, ax)?
                    }
                }
                Ok(None)
            })?;
            // SAFETY: non-NULL and writable per the contract.
            unsafe { put_array(array, src1 as *mut b2nd_array_t) };
        }
        Ok(0)
    }) as c_int
}

/// Changes the shape; items are added or removed at `start` (NULL: at the
/// end of each dimension).
///
/// # Safety
/// `array` NULL or live; `new_shape` readable for ndim items; `start` NULL
/// or readable for ndim items.
#[no_mangle]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_array(array, |a| {
            let n = a.ndim();
            let shape = coords(new_shape, n, "new_shape")?;
            let start = if start.is_null() {
                None
            } else {
                Some(convert::items(start, n, "start")?)
            };
            a.resize(shape, start)
        })
    }
}

/// Inserts `buffer` (whole slabs along `axis`) at `insert_start`.
///
/// # Safety
/// `array` NULL or live; `buffer` readable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        // Room first, alone; then the data is encoded while the callbacks
        // of the compression may read the grown array (see `grow_array`).
        grow_array(
            array,
            |a| {
                let ax = axis_of(axis, a.ndim())?;
                a.make_room(in_buf(buffer, buffersize)?.len(), ax, Some(insert_start))
            },
            |a, g| a.encode_growth(in_buf(buffer, buffersize)?, g),
            |a, g, chunks| a.publish_growth(&g, chunks),
        )
    }
}

/// Appends `buffer` at the end of `axis`.
///
/// # Safety
/// `array` NULL or live; `buffer` readable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        // As `b2nd_insert`, at the end.
        grow_array(
            array,
            |a| {
                let ax = axis_of(axis, a.ndim())?;
                a.make_room(in_buf(buffer, buffersize)?.len(), ax, None)
            },
            |a, g| a.encode_growth(in_buf(buffer, buffersize)?, g),
            |a, g, chunks| a.publish_growth(&g, chunks),
        )
    }
}

/// Removes `delete_len` items of `axis` from `delete_start`.
///
/// # Safety
/// `array` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_array(array, |a| {
            let ax = axis_of(axis, a.ndim())?;
            a.delete(ax, delete_start, delete_len)
        })
    }
}

/// The per-dimension index lists of an orthogonal selection.
///
/// # Safety
/// `selection` and `sizes` are NULL or readable for `ndim` entries, each
/// list readable for its size.
unsafe fn selection_of<'a>(
    selection: *const *mut i64,
    sizes: *const i64,
    ndim: usize,
) -> Result<Vec<&'a [i64]>> {
    // SAFETY: forwarded contract.
    let (lists, sizes) = unsafe {
        (
            convert::items(selection as *const *const i64, ndim, "selection")?,
            convert::items(sizes, ndim, "selection_size")?,
        )
    };
    lists
        .iter()
        .zip(sizes)
        .map(|(&p, &n)| {
            // SAFETY: each list is readable for its size per the contract.
            unsafe { convert::items(p, n, "selection list") }
        })
        .collect()
}

/// Reads the outer product of the per-dimension index lists into `buffer`
/// (C order, shape `buffershape`).
///
/// # Safety
/// `array` NULL or live; `selection`, `selection_size`, `buffershape`
/// readable for ndim entries; `buffer` writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_orthogonal_selection(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_array(array, |a| {
            let n = a.ndim();
            let sel = selection_of(selection, selection_size, n)?;
            let bs = coords(buffershape, n, "buffershape")?;
            a.get_orthogonal_selection(&sel, out_buf(buffer, buffersize)?, bs)
        })
    }
}

/// Writes `buffer` (C order, shape `buffershape`) to the outer product of
/// the per-dimension index lists.
///
/// # Safety
/// As for `b2nd_get_orthogonal_selection`, with `buffer` readable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_orthogonal_selection(
    array: *mut b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *const c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        // Under a write intent, as `b2nd_set_slice_cbuffer`.
        intent_array(
            array,
            |a| {
                let n = a.ndim();
                let sel = selection_of(selection, selection_size, n)?;
                let bs = coords(buffershape, n, "buffershape")?;
                a.encode_orthogonal_selection(&sel, in_buf(buffer, buffersize)?, bs)
            },
            |a, chunks| a.publish(chunks),
        )
    }
}
