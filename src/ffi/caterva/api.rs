//! Contexts, creation, persistence, slicing and reshaping (`caterva_*`).

use core::ffi::{c_char, c_int, c_void};

use super::convert::{context_for, shape_of};
use super::types::*;
use super::{array_ref, ctx_ref, nonnull, run, ArrayBox, CtxBox};
use crate::ndarray::array::NdArray;
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
        let p = ArrayBox::into_c(core, cx.cfg)?;
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
    unsafe { with_new_array(ctx, params, storage, array, |_| Ok(Filling::Zeros)) }
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
        let v: &'static [u8] =
            unsafe { core::slice::from_raw_parts(p.cast::<u8>(), itemsize as usize) };
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
        let n = usize::try_from(buffersize)
            .map_err(|_| crate::err!(InvalidParam, "negative buffersize"))?;
        // SAFETY: readable for `buffersize` bytes per the contract; the
        // slice is used only during this call.
        let v: &[u8] = unsafe { core::slice::from_raw_parts(p.cast::<u8>(), n) };
        Ok(Filling::Buffer(v))
    };
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, params, storage, array, fill) }
}

/// Frees an array (and closes its storage) and sets `*array` to NULL.
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

/// Wraps a core array into a new Caterva array at `*array`.
fn hand_out(
    cfg: caterva_config_t,
    core: Result<NdArray>,
    array: *mut *mut caterva_array_t,
) -> Result<()> {
    let p = ArrayBox::into_c(core?, cfg)?;
    // SAFETY: callers checked `array` non-NULL and writable.
    unsafe { *array = p };
    Ok(())
}

/// Builds an array over a super-chunk described by a `caterva` or `b2nd`
/// metalayer. On success the array takes the super-chunk over: `schunk` is
/// freed and must not be used afterwards (in Caterva it became
/// `array->sc`); on failure it is left as it was.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk from this library.
#[no_mangle]
pub unsafe extern "C" fn caterva_from_schunk(
    ctx: *mut caterva_ctx_t,
    schunk: *mut crate::ffi::types::blosc2_schunk,
    array: *mut *mut caterva_array_t,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let cx = unsafe { ctx_ref(ctx) }?;
        let array = nonnull(array, "array")?;
        nonnull(schunk, "schunk")?;
        // The caller's super-chunk stays untouched until the array exists:
        // a file-backed one is reopened from its file (so the array keeps
        // writing there), an in-memory one is copied through its frame.
        // SAFETY: `schunk` is a live super-chunk per the contract.
        let b = unsafe { crate::ffi::schunk::this(schunk) }?;
        let core = match b.core.storage().urlpath.clone() {
            Some(path) if b.file_offset == 0 => NdArray::open(path)?,
            Some(path) => NdArray::open_offset(path, b.file_offset as i64)?,
            None => NdArray::from_cframe(&b.core.to_buffer()?, true)?,
        };
        hand_out(cx.cfg, Ok(core), array)?;
        // SAFETY: live and not used by the caller afterwards (ownership
        // passed to the array, as in Caterva).
        unsafe { crate::ffi::schunk::blosc2_schunk_free(schunk) };
        Ok(())
    })
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
        let bytes = a.core.to_cframe()?;
        let p = crate::ffi::schunk::malloc_copy(&bytes)?;
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
        let n = usize::try_from(cframe_len)
            .map_err(|_| crate::err!(InvalidParam, "negative cframe_len"))?;
        // SAFETY: readable for `cframe_len` bytes per the contract.
        let bytes = unsafe { core::slice::from_raw_parts(p, n) };
        hand_out(cx.cfg, NdArray::from_cframe(bytes, copy), array)
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
        let path = unsafe { crate::ffi::storage::path_from_c(urlpath, "urlpath") }?;
        hand_out(cx.cfg, NdArray::open(path), array)
    })
}

/// Writes the array to `urlpath` (contiguous frame file).
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn caterva_save(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    urlpath: *mut c_char,
) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        // SAFETY: per the contract.
        let path = unsafe { crate::ffi::storage::path_from_c(urlpath, "urlpath") }?;
        a.core.save(path)
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
        let path = unsafe { crate::ffi::storage::path_from_c(urlpath, "urlpath") }?;
        crate::schunk::SChunk::remove_urlpath(path)
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
        let buf = out_buffer(buffer, buffersize)?;
        a.core.to_cbuffer(buf)
    })
}

/// A caller's output buffer as a byte slice.
fn out_buffer<'a>(buffer: *mut c_void, buffersize: i64) -> Result<&'a mut [u8]> {
    let p = nonnull(buffer, "buffer")?;
    let n = usize::try_from(buffersize)
        .map_err(|_| crate::err!(InvalidParam, "negative buffersize"))?;
    // SAFETY: the public functions' contracts make `buffer` writable for
    // `buffersize` bytes for the duration of the call.
    Ok(unsafe { core::slice::from_raw_parts_mut(p.cast::<u8>(), n) })
}

/// `n` values from a caller's array.
///
/// # Safety
/// `p` is NULL or readable for `n` values.
unsafe fn vals<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if p.is_null() {
        crate::bail!(NullPointer, "{what} is NULL");
    }
    // SAFETY: non-NULL and readable for n values per the contract.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
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
        let nd = a.core.ndim();
        // SAFETY: readable for ndim values per the contract.
        let (start, stop) = unsafe { (vals(start, nd, "start")?, vals(stop, nd, "stop")?) };
        let shape: Vec<i64> = start
            .iter()
            .zip(stop)
            .map(|(a, b)| b.saturating_sub(*a))
            .collect();
        // SAFETY: per the contract on `storage`.
        let c = unsafe { context_for(&cx.cfg, a.c.itemsize, &shape, st, true) }?;
        hand_out(cx.cfg, a.core.get_slice(&c, start, stop), array)
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
        let nd = a.core.ndim();
        // SAFETY: readable for ndim values per the contract.
        let (start, stop, bshape) = unsafe {
            (
                vals(start, nd, "start")?,
                vals(stop, nd, "stop")?,
                vals(buffershape, nd, "buffershape")?,
            )
        };
        let buf = out_buffer(buffer, buffersize)?;
        a.core.get_slice_cbuffer(start, stop, buf, bshape)
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
        let nd = a.core.ndim();
        // SAFETY: readable for ndim values per the contract.
        let (start, stop, bshape) = unsafe {
            (
                vals(start, nd, "start")?,
                vals(stop, nd, "stop")?,
                vals(buffershape, nd, "buffershape")?,
            )
        };
        let buf = out_buffer(buffer, buffersize)?;
        a.core.set_slice_cbuffer(buf, bshape, start, stop)
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
        let shape = a.core.shape().to_vec();
        // SAFETY: per the contract on `storage`.
        let c = unsafe { context_for(&cx.cfg, a.c.itemsize, &shape, st, false) }?;
        let mut core = a.core.copy(&c)?;
        super::sync_caterva_layer(&mut core)?;
        hand_out(cx.cfg, Ok(core), array)
    })
}

/// Removes the unit dimensions flagged in `index`. The array is replaced
/// by an in-memory one (see the README: the core builds a new array).
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
        // SAFETY: readable for ndim values per the contract.
        let index = unsafe { vals(index, a.core.ndim(), "index") }?;
        a.core = a.core.squeeze_index(index)?;
        a.sync();
        Ok(())
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
        a.core = a.core.squeeze()?;
        a.sync();
        Ok(())
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
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let nd = a.core.ndim();
        // SAFETY: readable for ndim values per the contract.
        let new_shape = unsafe { vals(new_shape, nd, "new_shape") }?;
        // SAFETY: as above when non-NULL.
        let start = if start.is_null() {
            None
        } else {
            Some(unsafe { vals(start, nd, "start") }?)
        };
        a.core.resize(new_shape, start)?;
        a.after_reshape()
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
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let buf = out_buffer(buffer, buffersize)?;
        a.core.insert(buf, axis_of(axis)?, insert_start)?;
        a.after_reshape()
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
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let buf = out_buffer(buffer, buffersize)?;
        a.core.append(buf, axis_of(axis)?)?;
        a.after_reshape()
    })
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
    run(|| {
        // SAFETY: per the contract.
        unsafe { ctx_ref(ctx) }?;
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        a.core.delete(axis_of(axis)?, delete_start, delete_len)?;
        a.after_reshape()
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
    nd: usize,
) -> Result<Vec<&'a [i64]>> {
    // SAFETY: per the contract.
    let (ptrs, sizes) = unsafe {
        (
            vals(selection.cast_const(), nd, "selection")?,
            vals(selection_size.cast_const(), nd, "selection_size")?,
        )
    };
    let mut out = Vec::with_capacity(nd);
    for i in 0..nd {
        let n = usize::try_from(sizes[i])
            .map_err(|_| crate::err!(InvalidParam, "negative selection size"))?;
        // SAFETY: readable for `n` values per the contract.
        out.push(unsafe { vals(ptrs[i].cast_const(), n, "selection entry") }?);
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
        let nd = a.core.ndim();
        // SAFETY: per the contract.
        let sel = unsafe { selection_of(selection, selection_size, nd) }?;
        // SAFETY: per the contract.
        let bshape = unsafe { vals(buffershape, nd, "buffershape") }?;
        let buf = out_buffer(buffer, buffersize)?;
        a.core.get_orthogonal_selection(&sel, buf, bshape)
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
        let nd = a.core.ndim();
        // SAFETY: per the contract.
        let sel = unsafe { selection_of(selection, selection_size, nd) }?;
        // SAFETY: per the contract.
        let bshape = unsafe { vals(buffershape, nd, "buffershape") }?;
        let buf = out_buffer(buffer, buffersize)?;
        a.core.set_orthogonal_selection(&sel, buf, bshape)
    })
}
