//! The Caterva 0.5 C API (include/caterva.h) over the b2nd array engine.
//!
//! Every `caterva_*` function checks its pointers, converts the Caterva
//! structs into the core's [`Context`], calls [`NdArray`], maps the error
//! with [`caterva_code`] and refreshes the caller-visible `caterva_array_t`
//! fields. No array logic lives here.
//!
//! Metalayers: an array created through this API carries both a `b2nd`
//! layer (first, so python-blosc2 and b2nd readers open it) and a
//! `caterva` layer (5-element msgpack, so Caterva-era readers open it).
//! Every shape change made through this API rewrites both. Arrays that only
//! carry one of the two layers open through both APIs.

mod api;
mod convert;
mod meta_api;
#[allow(dead_code)] // constants exported to C only
pub(crate) mod types;

use core::ffi::c_int;

use crate::ndarray::array::NdArray;
use crate::ndarray::meta::NdMeta;
use crate::Error;
use types::*;

/// The one mapping from core errors to Caterva's return codes.
pub(crate) fn caterva_code(e: &Error) -> c_int {
    match e {
        Error::NullPointer(_) | Error::MemoryAlloc(_) => CATERVA_ERR_NULL_POINTER,
        Error::InvalidIndex(_) => CATERVA_ERR_INVALID_INDEX,
        Error::InvalidParam(_) => CATERVA_ERR_INVALID_ARGUMENT,
        _ => CATERVA_ERR_BLOSC_FAILED,
    }
}

/// Runs `f` behind the panic guard; returns `CATERVA_SUCCEED` or the mapped
/// code (traced when `CATERVA_TRACE` is set, as Caterva does).
pub(crate) fn run(f: impl FnOnce() -> crate::Result<()>) -> c_int {
    crate::ffi::guard(CATERVA_ERR_BLOSC_FAILED, || match f() {
        Ok(()) => CATERVA_SUCCEED,
        Err(e) => {
            if std::env::var_os("CATERVA_TRACE").is_some() {
                eprintln!("[error] - {e} (caterva over b2nd)");
            }
            caterva_code(&e)
        }
    })
}

/// The heap object behind a `caterva_ctx_t*`.
#[repr(C)]
pub(crate) struct CtxBox {
    /// Must stay first: the C pointer is the box's address.
    c: caterva_ctx_t,
    cfg: caterva_config_t,
}

/// The heap object behind every `caterva_array_t*` this library hands out.
#[repr(C)]
pub(crate) struct ArrayBox {
    /// Must stay first: the C pointer is the box's address.
    c: caterva_array_t,
    cfg: caterva_config_t,
    core: NdArray,
}

impl ArrayBox {
    /// Moves `core` to the heap; Caterva arrays have at most
    /// `CATERVA_MAX_DIM` dimensions and items of at most 255 bytes.
    fn into_c(core: NdArray, cfg: caterva_config_t) -> crate::Result<*mut caterva_array_t> {
        if core.ndim() > CATERVA_MAX_DIM as usize {
            crate::bail!(
                InvalidParam,
                "{} dimensions exceed CATERVA_MAX_DIM",
                core.ndim()
            );
        }
        if core.typesize() > u8::MAX as i32 {
            crate::bail!(
                InvalidParam,
                "itemsize {} does not fit Caterva's uint8_t",
                core.typesize()
            );
        }
        let mut b = Box::new(ArrayBox {
            // SAFETY: caterva_array_t holds only integers, arrays of them and
            // raw pointers, for all of which all-zero bytes are valid.
            c: unsafe { core::mem::zeroed() },
            cfg,
            core,
        });
        b.c.cfg = &mut b.cfg;
        b.sync();
        Ok(Box::into_raw(b).cast())
    }

    /// Refreshes every public field from the core array.
    fn sync(&mut self) {
        let l = self.core.layout();
        let c = &mut self.c;
        let nd = l.ndim().min(CATERVA_MAX_DIM as usize);
        c.sc = core::ptr::null_mut();
        c.ndim = nd as i8;
        c.itemsize = self.core.typesize() as u8;
        c.nitems = l.nitems;
        c.chunknitems = l.chunknitems as i32;
        c.extnitems = l.extnitems;
        c.blocknitems = l.blocknitems as i32;
        c.extchunknitems = l.extchunknitems;
        c.nchunks = self.core.nchunks();
        c.chunk_cache.data = core::ptr::null_mut();
        c.chunk_cache.nchunk = -1;
        let strides = [
            l.item_array_strides(),
            l.item_chunk_strides(),
            l.item_extchunk_strides(),
            l.item_block_strides(),
            l.block_chunk_strides(),
            l.chunk_array_strides(),
        ];
        for i in 0..CATERVA_MAX_DIM as usize {
            let inside = i < nd;
            // Caterva pads unused dimensions with 1.
            c.shape[i] = if inside { l.shape[i] } else { 1 };
            c.chunkshape[i] = if inside { l.chunkshape[i] } else { 1 };
            c.blockshape[i] = if inside { l.blockshape[i] } else { 1 };
            c.extshape[i] = if inside { l.extshape[i] } else { 1 };
            c.extchunkshape[i] = if inside { l.extchunkshape[i] } else { 1 };
            let pick = |s: &Vec<i64>| s.get(i).copied().filter(|_| inside).unwrap_or(1);
            c.item_array_strides[i] = pick(&strides[0]);
            c.item_chunk_strides[i] = pick(&strides[1]);
            c.item_extchunk_strides[i] = pick(&strides[2]);
            c.item_block_strides[i] = pick(&strides[3]);
            c.block_chunk_strides[i] = pick(&strides[4]);
            c.chunk_array_strides[i] = pick(&strides[5]);
        }
    }

    /// After a shape change: rewrites the `caterva` layer (when the array
    /// has one; the core keeps `b2nd` current) and the public fields.
    fn after_reshape(&mut self) -> crate::Result<()> {
        let r = sync_caterva_layer(&mut self.core);
        self.sync();
        r
    }
}

/// The `caterva` metalayer content for a geometry.
pub(crate) fn caterva_layer(
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
) -> crate::Result<Vec<u8>> {
    NdMeta::new(
        shape.to_vec(),
        chunkshape.to_vec(),
        blockshape.to_vec(),
        "",
        0,
    )
    .to_caterva_bytes()
}

/// Rewrites the array's `caterva` layer from its current geometry, if it
/// has one (same size: ndim does not change on resize).
fn sync_caterva_layer(core: &mut NdArray) -> crate::Result<()> {
    if core.metalayer("caterva").is_none() {
        return Ok(());
    }
    let l = core.layout();
    let bytes = caterva_layer(&l.shape, &l.chunkshape, &l.blockshape)?;
    core.with_schunk(|sc| sc.meta_update("caterva", &bytes).map(|_| ()))
}

/// The box behind a context pointer, or `NullPointer`.
///
/// # Safety
/// `p` is NULL or a pointer from `caterva_ctx_new` not yet freed.
unsafe fn ctx_ref<'a>(p: *mut caterva_ctx_t) -> crate::Result<&'a mut CtxBox> {
    // SAFETY: every non-NULL ctx we hand out is a live CtxBox (repr(C),
    // C struct first).
    unsafe { p.cast::<CtxBox>().as_mut() }.ok_or_else(|| crate::err!(NullPointer, "ctx is NULL"))
}

/// The box behind an array pointer, or `NullPointer`.
///
/// # Safety
/// `p` is NULL or a pointer handed out by this module not yet freed.
unsafe fn array_ref<'a>(p: *mut caterva_array_t) -> crate::Result<&'a mut ArrayBox> {
    // SAFETY: every non-NULL array we hand out is a live ArrayBox (repr(C),
    // C struct first).
    unsafe { p.cast::<ArrayBox>().as_mut() }
        .ok_or_else(|| crate::err!(NullPointer, "array is NULL"))
}

/// Checks an out-pointer for NULL.
fn nonnull<T>(p: *mut T, what: &str) -> crate::Result<*mut T> {
    if p.is_null() {
        crate::bail!(NullPointer, "{what} is NULL");
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_follow_caterva() {
        assert_eq!(caterva_code(&crate::err!(InvalidParam, "x")), 1);
        assert_eq!(caterva_code(&crate::err!(FileOpen, "x")), 2);
        assert_eq!(caterva_code(&crate::err!(MetalayerNotFound, "x")), 2);
        assert_eq!(caterva_code(&crate::err!(NullPointer, "x")), 5);
        assert_eq!(caterva_code(&crate::err!(InvalidIndex, "x")), 5);
        assert_eq!(run(|| Ok(())), 0);
        assert_eq!(run(|| panic!("contained")), 2);
    }

    #[test]
    fn caterva_layer_is_the_five_entry_msgpack() {
        let b = caterva_layer(&[10, 7], &[4, 7], &[2, 3]).unwrap();
        // fixarray(5), version 0, ndim 2, fixarray(2) of int64 shape ...
        assert_eq!(&b[..4], &[0x95, 0, 2, 0x92]);
        assert_eq!(b[4], 0xd3);
        assert_eq!(&b[5..13], &10i64.to_be_bytes());
        let back = NdMeta::from_caterva_bytes(&b, 1).unwrap();
        assert_eq!(back.shape, vec![10, 7]);
        assert_eq!(back.chunkshape, vec![4, 7]);
        assert_eq!(back.blockshape, vec![2, 3]);
    }
}

/// `n` values from a caller's array, or `NullPointer`.
///
/// # Safety
/// `p` is NULL or readable for `n` values during the call.
unsafe fn api_vals<'a, T>(p: *const T, n: usize) -> crate::Result<&'a [T]> {
    if p.is_null() {
        crate::bail!(NullPointer, "array argument is NULL");
    }
    // SAFETY: non-NULL and readable for n values per the contract.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}
