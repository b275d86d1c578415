//! Contexts, creation, persistence, slicing and reshaping (`caterva_*`).

use core::ffi::{c_char, c_int, c_void};

use super::convert::{context_for, shape_of};
use super::types::*;
use super::{array_ref, ctx_ref, nonnull, run, ArrayBox, CtxBox};
use crate::b2nd::{named, slot_for};
use crate::convert::{bytes, bytes_mut, items};
use crate::schunk::SchunkSlot;
use crate::types::blosc2_schunk;
use b2nd_core::ndarray::array::NdArray;
use b2nd_core::schunk::Storage;
use crate::Result;

/// Creates a context holding a copy of `cfg`.
///
/// # Safety
/// `cfg` is NULL or readable; `ctx` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn caterva_ctx_new(
    cfg: *mut caterva_config_t,
    ctx: *mut *mut caterva_ctx_t,
) -> c_int {
    run(|| {
        let ctx = nonnull(ctx, "ctx")?;
        // SAFETY: non-NULL and readable per the contract.
        let cfg = *unsafe { nonnull(cfg, "cfg")?.as_ref() }.unwrap();
        let mut b = Box::new(CtxBox {
            c: caterva_ctx_t {
                cfg: core::ptr::null_mut(),
            },
            cfg,
        });
        b.c.cfg = &mut b.cfg;
        // SAFETY: `ctx` is non-NULL and writable.
        unsafe { *ctx = Box::into_raw(b).cast() };
        Ok(())
    })
}

/// Frees a context and sets `*ctx` to NULL.
///
/// # Safety
/// `ctx` is NULL or points to NULL or to a live context.
#[no_mangle]
pub unsafe extern "C" fn caterva_ctx_free(ctx: *mut *mut caterva_ctx_t) -> c_int {
    run(|| {
        let ctx = nonnull(ctx, "ctx")?;
        // SAFETY: `ctx` is readable; its value is NULL or a live CtxBox.
        let p = unsafe { *ctx };
        if !p.is_null() {
            // SAFETY: `p` came from Box::into_raw in caterva_ctx_new.
            drop(unsafe { Box::from_raw(p.cast::<CtxBox>()) });
            // SAFETY: `ctx` is writable.
            unsafe { *ctx = core::ptr::null_mut() };
        }
        Ok(())
    })
}

/// Which filling a new array gets.
enum Filling<'a> {
    Uninit,
    Zeros,
    Full(&'a [u8]),
    Buffer(&'a [u8]),
}

/// Shared body of the constructors (runs inside the panic guard).
///
/// # Safety
/// The pointers are NULL or valid per the public functions' contracts.
unsafe fn with_new_array<'a>(
    ctx: *mut caterva_ctx_t,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
    fill: impl FnOnce(u8) -> Result<Filling<'a>>,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let params = unsafe { nonnull(params, "params")?.as_ref() }.unwrap();
        // SAFETY: per the contract.
        let st = unsafe { nonnull(storage, "storage")?.as_ref() }.unwrap();
        let array = nonnull(array, "array")?;
        let filling = fill(params.itemsize)?;
        let shape = shape_of(params)?;
        // SAFETY: per the contract on `storage`.
        let c = unsafe { context_for(&cx.cfg, params.itemsize, &shape, st, true) }?;
        let slot = slot_for(&c)?;
        let c = named(&c, &slot);
        let core = match filling {
            Filling::Uninit => NdArray::uninit(&c)?,
            Filling::Zeros => NdArray::zeros(&c)?,
            Filling::Full(v) => NdArray::full(&c, v)?,
            Filling::Buffer(b) => {
                let need = c
                    .shape
                    .iter()
                    .try_fold(c.typesize as i64, |n, &d| n.checked_mul(d))
                    .ok_or_else(|| crate::err!(InvalidParam, "array size overflows"))?;
                if b.len() as i64 != need {
                    crate::bail!(
                        InvalidParam,
                        "buffersize {} differs from the array size",
                        b.len()
                    );
                }
                NdArray::from_cbuffer(&c, b)?
            }
        };
        let p = ArrayBox::into_c(core, cx.cfg, Some(slot))?;
        // SAFETY: `array` is non-NULL and writable.
        unsafe { *array = p };
        Ok(())
    })
}

/// Creates an array with undefined contents.
///
/// # Safety
/// Pointers are NULL or valid; `storage.urlpath` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn caterva_uninit(
    ctx: *mut caterva_ctx_t,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, params, storage, array, |_| Ok(Filling::Uninit)) }
}

/// Creates an array ready to be filled (zero chunks).
///
/// # Safety
/// As for [`caterva_uninit`].
#[no_mangle]
pub unsafe extern "C" fn caterva_empty(
    ctx: *mut caterva_ctx_t,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    let rc = unsafe { with_new_array(ctx, params, storage, array, |_| Ok(Filling::Zeros)) };
    if rc == CATERVA_SUCCEED {
        // SAFETY: on success `*array` is the live array just made.
        if let Ok(a) = unsafe { array_ref(*array) } {
            // Caterva 0.5.0's `caterva_append` fills it from the first chunk.
            a.next_chunk = 0;
        }
    }
    rc
}

/// Creates an array of zeros.
///
/// # Safety
/// As for [`caterva_uninit`].
#[no_mangle]
pub unsafe extern "C" fn caterva_zeros(
    ctx: *mut caterva_ctx_t,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, params, storage, array, |_| Ok(Filling::Zeros)) }
}

/// Creates an array whose items all equal `fill_value` (itemsize bytes).
///
/// # Safety
/// As for [`caterva_uninit`]; `fill_value` is NULL or readable for
/// `params->itemsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_full(
    ctx: *mut caterva_ctx_t,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    fill_value: *mut c_void,
    array: *mut *mut caterva_array_t,
) -> c_int {
    let fill = |itemsize: u8| {
        let p = nonnull(fill_value, "fill_value")?;
        // SAFETY: readable for itemsize bytes per the contract; the slice
        // is used only during this call.
        let v: &'static [u8] = unsafe { bytes(p, itemsize, "fill_value") }?;
        Ok(Filling::Full(v))
    };
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, params, storage, array, fill) }
}

/// Creates an array holding `buffer` (C order, exactly nitems * itemsize
/// bytes, else `CATERVA_ERR_INVALID_ARGUMENT`).
///
/// # Safety
/// As for [`caterva_uninit`]; `buffer` is NULL or readable for `buffersize`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_from_buffer(
    ctx: *mut caterva_ctx_t,
    buffer: *mut c_void,
    buffersize: i64,
    params: *mut caterva_params_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    let fill = |_| {
        let p = nonnull(buffer, "buffer")?;
        // SAFETY: readable for `buffersize` bytes per the contract; the
        // slice is used only during this call.
        let v: &[u8] = unsafe { bytes(p, buffersize, "buffer") }?;
        Ok(Filling::Buffer(v))
    };
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, params, storage, array, fill) }
}

/// Frees an array and its super-chunk `array->sc` (closing its storage)
/// and sets `*array` to NULL.
///
/// # Safety
/// `array` is NULL or points to NULL or to a live array.
#[no_mangle]
pub unsafe extern "C" fn caterva_free(
    ctx: *mut caterva_ctx_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        let array = nonnull(array, "array")?;
        // SAFETY: readable; NULL or a live ArrayBox.
        let p = unsafe { *array };
        if !p.is_null() {
            // SAFETY: `p` came from Box::into_raw in ArrayBox::into_c.
            drop(unsafe { Box::from_raw(p.cast::<ArrayBox>()) });
            // SAFETY: writable.
            unsafe { *array = core::ptr::null_mut() };
        }
        Ok(())
    })
}

/// Wraps a core array into a new Caterva array at `*array`, its C
/// super-chunk the one of `slot` when the array was made to name it.
fn hand_out(
    cfg: caterva_config_t,
    core: Result<NdArray>,
    slot: Option<SchunkSlot>,
    array: *mut *mut caterva_array_t,
) -> Result<()> {
    let p = ArrayBox::into_c(core?, cfg, slot)?;
    // SAFETY: callers checked `array` non-NULL and writable.
    unsafe { *array = p };
    Ok(())
}

/// Builds an array over a super-chunk described by a `caterva` or `b2nd`
/// metalayer. On success the array takes the super-chunk over, as in
/// Caterva: `(*array)->sc == schunk`, the caller may keep using `schunk`
/// while the array lives, and `caterva_free` frees it. On failure it is
/// left with the caller as it was.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk from this library.
#[no_mangle]
pub unsafe extern "C" fn caterva_from_schunk(
    ctx: *mut caterva_ctx_t,
    schunk: *mut blosc2_schunk,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        let array = nonnull(array, "array")?;
        nonnull(schunk, "schunk")?;
        // SAFETY: `schunk` is a live super-chunk per the contract.
        let p = unsafe { ArrayBox::adopt(schunk, cx.cfg) }?;
        // SAFETY: `array` is non-NULL and writable.
        unsafe { *array = p };
        Ok(())
    })
}

/// Caterva 0.5.0's `caterva_from_serial_schunk`: an array read from a
/// serialized super-chunk (a contiguous frame, as `blosc2_schunk_to_buffer`
/// gives), copied into memory, so `serial_schunk` may be freed afterwards.
///
/// # Safety
/// `serial_schunk` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_from_serial_schunk(
    ctx: *mut caterva_ctx_t,
    serial_schunk: *mut u8,
    len: i64,
    array: *mut *mut caterva_array_t,
) -> c_int {
    // SAFETY: forwarded contract (the same bytes as a contiguous frame).
    unsafe { caterva_from_cframe(ctx, serial_schunk, len, true, array) }
}

/// Serializes the array as a contiguous frame in a `malloc`ed buffer
/// (`*needs_free` is always true).
///
/// # Safety
/// Pointers are NULL or valid and writable.
#[no_mangle]
pub unsafe extern "C" fn caterva_to_cframe(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let (cframe, cframe_len, needs_free) = (
            nonnull(cframe, "cframe")?,
            nonnull(cframe_len, "cframe_len")?,
            nonnull(needs_free, "needs_free")?,
        );
        let bytes = a.with_core(|core| core.to_cframe())?;
        let p = crate::schunk::malloc_copy(&bytes)?;
        // SAFETY: all three are non-NULL and writable.
        unsafe {
            *cframe = p;
            *cframe_len = bytes.len() as i64;
            *needs_free = true;
        }
        Ok(())
    })
}

/// An array read from a contiguous frame (`copy`: into an in-memory chunk
/// list; otherwise over a private copy of the frame bytes).
///
/// # Safety
/// `cframe` is NULL or readable for `cframe_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_from_cframe(
    ctx: *mut caterva_ctx_t,
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        let p = nonnull(cframe, "cframe")?;
        let array = nonnull(array, "array")?;
        // SAFETY: readable for `cframe_len` bytes per the contract.
        let bytes = unsafe { items(p.cast_const(), cframe_len, "cframe") }?;
        hand_out(cx.cfg, NdArray::from_cframe(bytes, copy), None, array)
    })
}

/// Opens an array stored in a contiguous file or a sparse directory.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn caterva_open(
    ctx: *mut caterva_ctx_t,
    urlpath: *const c_char,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        let array = nonnull(array, "array")?;
        // SAFETY: per the contract.
        let path = unsafe { crate::storage::path_from_c(urlpath, "urlpath") }?;
        hand_out(cx.cfg, NdArray::open(path), None, array)
    })
}

/// Writes a copy of the array to `urlpath`, as Caterva does: with the
/// storage kind of the array's super-chunk (`array->sc->storage->
/// contiguous`: a contiguous frame file, else a sparse frame directory),
/// the same partitions, metalayers and vlmetalayers.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn caterva_save(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    urlpath: *mut c_char,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: per the contract.
        let path = unsafe { crate::storage::path_from_c(urlpath, "urlpath") }?;
        a.with_core(|core| {
            let contiguous = core.with_schunk(|sc| Ok(sc.storage().contiguous))?;
            let storage = Storage {
                contiguous,
                urlpath: Some(path.into()),
                ..Storage::default()
            };
            core.copy_to(storage).map(|_| ())
        })
    })
}

/// Removes a file or sparse directory.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn caterva_remove(ctx: *mut caterva_ctx_t, urlpath: *mut c_char) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let path = unsafe { crate::storage::path_from_c(urlpath, "urlpath") }?;
        b2nd_core::schunk::SChunk::remove_urlpath(path)
    })
}

/// Copies the whole array into `buffer` (at least nitems * itemsize bytes).
///
/// # Safety
/// `buffer` is NULL or writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_to_buffer(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: writable for `buffersize` bytes per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        a.with_core(|core| core.to_cbuffer(buf))
    })
}

/// `N` coordinate arrays of `nd` values each (start, stop, shapes...),
/// each NULL-checked and named after its argument.
///
/// # Safety
/// Each pointer is NULL or readable for `nd` values during the call.
unsafe fn coords<'a, const N: usize>(
    nd: i8,
    args: [(*const i64, &str); N],
) -> Result<[&'a [i64]; N]> {
    let mut out: [&[i64]; N] = [&[]; N];
    for (o, (p, what)) in out.iter_mut().zip(args) {
        if p.is_null() {
            crate::bail!(NullPointer, "{what} is NULL");
        }
        // SAFETY: non-NULL and readable for `nd` values per the contract.
        *o = unsafe { items(p, nd, what) }?;
    }
    Ok(out)
}

/// A caller's byte buffer of `buffersize` bytes (NULL is an error even
/// when empty, as Caterva's checks).
///
/// # Safety
/// `buffer` is NULL or writable for `buffersize` bytes during the call.
unsafe fn buffer_of<'a>(buffer: *mut c_void, buffersize: i64) -> Result<&'a mut [u8]> {
    let p = nonnull(buffer, "buffer")?;
    // SAFETY: forwarded contract.
    unsafe { bytes_mut(p, buffersize, "buffer") }
}

/// A new array holding the region [start, stop) of `src`, stored as
/// `storage` says.
///
/// # Safety
/// `start`/`stop` are NULL or readable for ndim values; other pointers as
/// for [`caterva_uninit`].
#[no_mangle]
pub unsafe extern "C" fn caterva_get_slice(
    ctx: *mut caterva_ctx_t,
    src: *mut caterva_array_t,
    start: *const i64,
    stop: *const i64,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(src) }?;
        // SAFETY: per the contract.
        let st = unsafe { nonnull(storage, "storage")?.as_ref() }.unwrap();
        let array = nonnull(array, "array")?;
        // SAFETY: readable for ndim values per the contract.
        let [start, stop] = unsafe { coords(a.c.ndim, [(start, "start"), (stop, "stop")]) }?;
        let shape: Vec<i64> = start
            .iter()
            .zip(stop)
            .map(|(a, b)| b.saturating_sub(*a))
            .collect();
        // SAFETY: per the contract on `storage`.
        let c = unsafe { context_for(&cx.cfg, a.c.itemsize, &shape, st, true) }?;
        let slot = slot_for(&a.with_core(|core| core.slice_context(&c, start, stop))?)?;
        let c = named(&c, &slot);
        hand_out(
            cx.cfg,
            a.with_core(|core| core.get_slice(&c, start, stop)),
            Some(slot),
            array,
        )
    })
}

/// Copies the region [start, stop) into `buffer`, a C-order array of shape
/// `buffershape`.
///
/// # Safety
/// `start`, `stop`, `buffershape` are NULL or readable for ndim values;
/// `buffer` is NULL or writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_get_slice_buffer(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    start: *mut i64,
    stop: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: readable for ndim values per the contract.
        let [start, stop, bshape] = unsafe {
            coords(
                a.c.ndim,
                [
                    (start.cast_const(), "start"),
                    (stop.cast_const(), "stop"),
                    (buffershape.cast_const(), "buffershape"),
                ],
            )
        }?;
        // SAFETY: writable for `buffersize` bytes per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        a.with_core(|core| core.get_slice_cbuffer(start, stop, buf, bshape))
    })
}

/// Writes `buffer` (C order, shape `buffershape`) into [start, stop).
///
/// # Safety
/// As for [`caterva_get_slice_buffer`], with `buffer` readable.
#[no_mangle]
pub unsafe extern "C" fn caterva_set_slice_buffer(
    ctx: *mut caterva_ctx_t,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
    start: *mut i64,
    stop: *mut i64,
    array: *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: readable for ndim values per the contract.
        let [start, stop, bshape] = unsafe {
            coords(
                a.c.ndim,
                [
                    (start.cast_const(), "start"),
                    (stop.cast_const(), "stop"),
                    (buffershape.cast_const(), "buffershape"),
                ],
            )
        }?;
        // SAFETY: readable for `buffersize` bytes per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        a.with_core(|core| core.set_slice_cbuffer(buf, bshape, start, stop))
    })
}

/// A copy of `src` stored as `storage` says (chunk and block shapes may
/// differ). Metalayers and vlmetalayers are carried over.
///
/// # Safety
/// As for [`caterva_uninit`].
#[no_mangle]
pub unsafe extern "C" fn caterva_copy(
    ctx: *mut caterva_ctx_t,
    src: *mut caterva_array_t,
    storage: *mut caterva_storage_t,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(src) }?;
        // SAFETY: per the contract.
        let st = unsafe { nonnull(storage, "storage")?.as_ref() }.unwrap();
        let array = nonnull(array, "array")?;
        // The source's metalayers (its `caterva` one included, if any) are
        // carried over by the core; the layer is then rewritten for the
        // new partition shapes.
        let shape = a.c.shape[..a.c.ndim as usize].to_vec();
        // SAFETY: per the contract on `storage`.
        let c = unsafe { context_for(&cx.cfg, a.c.itemsize, &shape, st, false) }?;
        let slot = slot_for(&a.with_core(|core| core.copy_context(&c))?)?;
        let c = named(&c, &slot);
        let mut core = a.with_core(|core| core.copy(&c))?;
        super::sync_caterva_layer(&mut core)?;
        hand_out(cx.cfg, Ok(core), Some(slot), array)
    })
}

/// Removes the unit dimensions flagged in `index`, in place as in Caterva:
/// same `array->sc`, metalayers rewritten to the new shape (see
/// `squeeze.rs`). A flagged dimension whose extent is not 1 is
/// `CATERVA_ERR_INVALID_INDEX`.
///
/// # Safety
/// `index` is NULL or readable for ndim values.
#[no_mangle]
pub unsafe extern "C" fn caterva_squeeze_index(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    index: *const bool,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let index = nonnull(index.cast_mut(), "index")?;
        // SAFETY: readable for ndim values per the contract.
        let index = unsafe { items(index.cast_const(), a.c.ndim, "index") }?;
        a.with_core(|core| super::squeeze::squeeze_in_place(core, index))
    })
}

/// Removes every unit dimension (as [`caterva_squeeze_index`]).
///
/// # Safety
/// `array` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn caterva_squeeze(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let index: Vec<bool> = a.c.shape[..a.c.ndim as usize]
            .iter()
            .map(|&s| s == 1)
            .collect();
        a.with_core(|core| super::squeeze::squeeze_in_place(core, &index))
    })
}

/// Changes the shape; with `start` (NULL: at the end) items are added or
/// removed there.
///
/// # Safety
/// `new_shape` is NULL or readable for ndim values; `start` likewise or NULL.
#[no_mangle]
pub unsafe extern "C" fn caterva_resize(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let nd = a.c.ndim;
        // SAFETY: readable for ndim values per the contract.
        let [new_shape] = unsafe { coords(nd, [(new_shape, "new_shape")]) }?;
        let start = if start.is_null() {
            None
        } else {
            // SAFETY: non-NULL, readable for ndim values per the contract.
            Some(unsafe { coords(nd, [(start, "start")]) }?[0])
        };
        a.reshape(|core| core.resize(new_shape, start))
    })
}

/// A caller's axis, checked.
fn axis_of(axis: i8) -> Result<usize> {
    usize::try_from(axis).map_err(|_| crate::err!(InvalidParam, "negative axis {axis}"))
}

/// Inserts `buffer` along `axis` at `insert_start`.
///
/// # Safety
/// `buffer` is NULL or readable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_insert(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    buffer: *mut c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: readable for `buffersize` bytes per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        let axis = axis_of(axis)?;
        a.reshape(|core| core.insert(buf, axis, insert_start))
    })
}

/// Appends `buffer` at the end of `axis`.
///
/// # Safety
/// As for [`caterva_insert`].
#[no_mangle]
pub unsafe extern "C" fn caterva_append(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    buffer: *mut c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: readable for `buffersize` bytes per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        let axis = axis_of(axis)?;
        a.reshape(|core| core.append(buf, axis))
    })
}

/// Caterva 0.5.0's `caterva_append` (caterva.h's `caterva_append` macro
/// calls this one when given four arguments): writes `chunk`, one chunk's
/// items in C order (`chunksize` = `chunknitems * itemsize` bytes; what lies
/// beyond the array's edge is ignored), as the next chunk, in C order over
/// the chunk grid, of an array made by `caterva_empty`. Once every chunk is
/// written, and for arrays made any other way,
/// `CATERVA_ERR_CONTAINER_FILLED`.
///
/// # Safety
/// `chunk` is NULL or readable for `chunksize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_append_chunk(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    chunk: *mut c_void,
    chunksize: i64,
) -> c_int {
    let mut filled = false;
    let rc = run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: readable for `chunksize` bytes per the contract.
        let buf = unsafe { buffer_of(chunk, chunksize) }?;
        let n = a.next_chunk;
        if n >= a.chunk_count() {
            filled = true;
            crate::bail!(InvalidParam, "the array is filled");
        }
        a.with_core(|core| core.write_grid_chunk(n, buf))?;
        a.next_chunk = n + 1;
        Ok(())
    });
    if filled {
        CATERVA_ERR_CONTAINER_FILLED
    } else {
        rc
    }
}

/// Deletes `delete_len` items along `axis` from `delete_start`.
///
/// # Safety
/// `array` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn caterva_delete(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let axis = axis_of(axis)?;
        a.reshape(|core| core.delete(axis, delete_start, delete_len))
    })
}

/// The index lists of an orthogonal selection.
///
/// # Safety
/// `selection` holds ndim pointers, each readable for `selection_size[i]`
/// values.
unsafe fn selection_of<'a>(
    selection: *mut *mut i64,
    selection_size: *mut i64,
    nd: i8,
) -> Result<Vec<&'a [i64]>> {
    let (selection, selection_size) = (
        nonnull(selection, "selection")?,
        nonnull(selection_size, "selection_size")?,
    );
    // SAFETY: per the contract.
    let (ptrs, sizes) = unsafe {
        (
            items(selection.cast_const(), nd, "selection")?,
            items(selection_size.cast_const(), nd, "selection_size")?,
        )
    };
    let mut out = Vec::with_capacity(ptrs.len());
    for (&p, &n) in ptrs.iter().zip(sizes) {
        // SAFETY: readable for `n` values per the contract.
        out.push(unsafe { items(p.cast_const(), n, "selection entry") }?);
    }
    Ok(out)
}

/// Reads the outer product of the index lists into `buffer`.
///
/// # Safety
/// As for [`selection_of`]; `buffershape` readable for ndim values;
/// `buffer` writable for `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_get_orthogonal_selection(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let nd = a.c.ndim;
        // SAFETY: per the contract.
        let sel = unsafe { selection_of(selection, selection_size, nd) }?;
        // SAFETY: per the contract.
        let [bshape] = unsafe { coords(nd, [(buffershape.cast_const(), "buffershape")]) }?;
        // SAFETY: per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        a.with_core(|core| core.get_orthogonal_selection(&sel, buf, bshape))
    })
}

/// Writes `buffer` to the outer product of the index lists.
///
/// # Safety
/// As for [`caterva_get_orthogonal_selection`], `buffer` readable.
#[no_mangle]
pub unsafe extern "C" fn caterva_set_orthogonal_selection(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let nd = a.c.ndim;
        // SAFETY: per the contract.
        let sel = unsafe { selection_of(selection, selection_size, nd) }?;
        // SAFETY: per the contract.
        let [bshape] = unsafe { coords(nd, [(buffershape.cast_const(), "buffershape")]) }?;
        // SAFETY: per the contract.
        let buf = unsafe { buffer_of(buffer, buffersize) }?;
        a.with_core(|core| core.set_orthogonal_selection(&sel, buf, bshape))
    })
}
