//! The b2nd metalayer (de)serializers and the N-dimensional buffer copies of
//! `b2nd.h`, over `b2nd_core::ndarray::{meta, copy}`.

use core::ffi::{c_char, c_int, c_void};

use super::{geometry_of, MAX_DIM};
use crate::convert;
use crate::schunk::malloc_copy;
use b2nd_core::ndarray::meta::{MetaLayout, NdMeta};
use crate::Result;

/// The dtype the reference serializer writes when given none.
const DEFAULT_DTYPE: &str = "|u1";

/// Serializes a b2nd metalayer into a `malloc`ed buffer stored in `*smeta`
/// (the caller frees it); returns its length. A NULL dtype is `|u1`.
///
/// # Safety
/// `shape`, `chunkshape`, `blockshape` are readable for `ndim` items; `dtype`
/// is NULL or a C string; `smeta` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_serialize_meta(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    smeta: *mut *mut u8,
) -> c_int {
    crate::guard_code(|| {
        if smeta.is_null() {
            crate::bail!(NullPointer, "smeta is NULL");
        }
        let n = usize::try_from(ndim)
            .ok()
            .filter(|n| *n <= MAX_DIM)
            .ok_or_else(|| crate::err!(InvalidParam, "ndim {ndim} out of range"))?;
        // SAFETY: forwarded contract: NULL or a C string.
        let dtype = unsafe { convert::opt_c_str(dtype, "dtype") }?.unwrap_or(DEFAULT_DTYPE);
        // SAFETY: forwarded contract: readable for `ndim` items.
        let (shape, chunkshape, blockshape) =
            unsafe { geometry_of(n, shape, chunkshape, blockshape) }?;
        let m = NdMeta::new(
            shape.to_vec(),
            chunkshape.to_vec(),
            blockshape.to_vec(),
            dtype,
            dtype_format,
        );
        let bytes = m.to_b2nd_bytes()?;
        let p = malloc_copy(&bytes)?;
        // SAFETY: non-NULL and writable per the contract.
        unsafe { *smeta = p };
        Ok(bytes.len() as i64)
    }) as c_int
}

/// Parses a b2nd (or caterva) metalayer. Writes `ndim` and `ndim` entries of
/// each shape; when both `dtype` and `dtype_format` are given, `*dtype`
/// becomes a `malloc`ed C string (NULL when the content has no dtype; the
/// caller frees it). Returns the number of bytes parsed, or
/// `BLOSC2_ERROR_FAILURE` for malformed content.
///
/// # Safety
/// `smeta` is NULL or readable for `smeta_len` bytes; the shape pointers
/// are NULL or writable for 16 items; `dtype`/`dtype_format` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_deserialize_meta(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    crate::guard_code(|| {
        if smeta.is_null()
            || ndim.is_null()
            || shape.is_null()
            || chunkshape.is_null()
            || blockshape.is_null()
        {
            crate::bail!(NullPointer, "a pointer argument is NULL");
        }
        // SAFETY: out-pointers are NULL or writable per the contract.
        unsafe {
            if let Some(d) = dtype.as_mut() {
                *d = core::ptr::null_mut();
            }
            if let Some(f) = dtype_format.as_mut() {
                *f = 0;
            }
        }
        if smeta_len <= 0 {
            crate::bail!(Failure, "empty b2nd metalayer");
        }
        // SAFETY: readable for `smeta_len` bytes per the contract.
        let bytes = unsafe { convert::items(smeta, smeta_len, "smeta") }?;
        let len = bytes.len();
        let parsed = (|| -> Result<(NdMeta, MetaLayout)> {
            let layout = MetaLayout::detect(bytes)?;
            Ok((NdMeta::from_meta_bytes(bytes, 1)?, layout))
        })();
        // Every malformation is BLOSC2_ERROR_FAILURE in the reference.
        let (m, layout) = parsed.map_err(|e| crate::err!(Failure, "{e}"))?;
        let n = m.ndim();
        // SAFETY: the pointers are non-NULL and writable for `ndim` (<= 16)
        // items per the contract.
        unsafe {
            *ndim = n as i8;
            convert::fill(convert::out_items(shape, n, "shape")?, &m.shape);
            convert::fill(convert::out_items(chunkshape, n, "chunkshape")?, &m.chunkshape);
            convert::fill(convert::out_items(blockshape, n, "blockshape")?, &m.blockshape);
        }
        let fixed = m.to_caterva_bytes()?.len();
        if dtype.is_null() || dtype_format.is_null() || layout == MetaLayout::Caterva {
            return Ok(fixed as i64);
        }
        let mut s = m.dtype.clone().into_bytes();
        s.push(0);
        let p = malloc_copy(&s)?;
        // SAFETY: both out-pointers are non-NULL and writable.
        unsafe {
            *dtype = p.cast::<c_char>();
            *dtype_format = m.dtype_format;
        }
        Ok(match layout {
            MetaLayout::B2nd => m.to_b2nd_bytes()?.len() as i64,
            _ => len as i64,
        })
    }) as c_int
}

/// The reference header's inline twin of `b2nd_deserialize_meta`.
///
/// # Safety
/// As for `b2nd_deserialize_meta`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_deserialize_meta_inline(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    // SAFETY: forwarded contract.
    crate::guard(crate::Error::FAILURE_CODE, || unsafe {
        b2nd_deserialize_meta(
            smeta,
            smeta_len,
            ndim,
            shape,
            chunkshape,
            blockshape,
            dtype,
            dtype_format,
        )
    })
}

/// Items of a C-order buffer of `shape`, times `itemsize`, checked.
fn buffer_len(shape: &[i64], itemsize: usize) -> Result<usize> {
    shape
        .iter()
        .try_fold(itemsize, |acc, &d| {
            usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
        .ok_or_else(|| crate::err!(InvalidParam, "buffer shape overflows or is negative"))
}

/// Copies the box [src_start, src_stop) of the C-order buffer `src` (shape
/// `src_pad_shape`) to `dst_start` of `dst` (shape `dst_pad_shape`).
///
/// # Safety
/// Shape and coordinate pointers are readable for `ndim` items; `src` and
/// `dst` hold their padded shapes' items.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy_buffer2(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    crate::guard_code(|| {
        let n = usize::try_from(ndim)
            .ok()
            .filter(|n| *n <= MAX_DIM)
            .ok_or_else(|| crate::err!(InvalidParam, "ndim {ndim} out of range"))?;
        let ts = usize::try_from(itemsize)
            .ok()
            .filter(|t| *t > 0)
            .ok_or_else(|| crate::err!(InvalidParam, "itemsize {itemsize} must be positive"))?;
        // SAFETY: forwarded contract: readable for `ndim` items each.
        let (sps, ss, se, dps, ds) = unsafe {
            (
                convert::items(src_pad_shape, n, "src_pad_shape")?,
                convert::items(src_start, n, "src_start")?,
                convert::items(src_stop, n, "src_stop")?,
                convert::items(dst_pad_shape, n, "dst_pad_shape")?,
                convert::items(dst_start, n, "dst_start")?,
            )
        };
        if ss.iter().zip(se).any(|(a, b)| a == b) {
            return Ok(0);
        }
        if src.is_null() || dst.is_null() {
            crate::bail!(NullPointer, "src or dst is NULL");
        }
        let (sl, dl) = (buffer_len(sps, ts)?, buffer_len(dps, ts)?);
        // SAFETY: the buffers hold their padded shapes' items (contract).
        let (s, d) = unsafe {
            (
                convert::bytes(src, sl, "src")?,
                convert::bytes_mut(dst, dl, "dst")?,
            )
        };
        b2nd_core::ndarray::copy_nd(ts, s, sps, ss, se, d, dps, ds)?;
        Ok(0)
    }) as c_int
}

/// `b2nd_copy_buffer2` with a one-byte itemsize (deprecated in the reference).
///
/// # Safety
/// As for `b2nd_copy_buffer2`.
#[deprecated(note = "Use b2nd_copy_buffer2 instead.")]
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy_buffer(
    ndim: i8,
    itemsize: u8,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: forwarded contract.
    crate::guard(crate::Error::FAILURE_CODE, || unsafe {
        b2nd_copy_buffer2(
            ndim,
            i32::from(itemsize),
            src,
            src_pad_shape,
            src_start,
            src_stop,
            dst,
            dst_pad_shape,
            dst_start,
        )
    })
}
