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
//!
//! `array->sc` is a real `blosc2_schunk`: a Caterva array wraps a b2nd
//! array object and reaches its core through the b2nd layer's `lend` (see
//! [`ArrayBox`]); squeezing in place is in [`squeeze`].

mod api;
mod convert;
mod meta_api;
mod squeeze;
#[allow(dead_code)] // constants exported to C only
pub(crate) mod types;

use core::ffi::c_int;

use crate::b2nd::ArrayBox as B2ndBox;
use crate::schunk::SchunkSlot;
use crate::types::{b2nd_array_t, blosc2_schunk};
use b2nd_core::ndarray::array::NdArray;
use b2nd_core::ndarray::meta::NdMeta;
use crate::{Error, ErrorKind};
use types::*;

/// The one mapping from core errors to Caterva's return codes.
pub(crate) fn caterva_code(e: &Error) -> c_int {
    match e.kind() {
        ErrorKind::NullPointer | ErrorKind::MemoryAlloc => CATERVA_ERR_NULL_POINTER,
        ErrorKind::InvalidIndex => CATERVA_ERR_INVALID_INDEX,
        ErrorKind::InvalidParam => CATERVA_ERR_INVALID_ARGUMENT,
        _ => CATERVA_ERR_BLOSC_FAILED,
    }
}

/// Runs `f` behind the panic guard; returns `CATERVA_SUCCEED` or the mapped
/// code (traced when `CATERVA_TRACE` is set, as Caterva does).
pub(crate) fn run(f: impl FnOnce() -> crate::Result<()>) -> c_int {
    crate::guard(CATERVA_ERR_BLOSC_FAILED, || match f() {
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
///
/// A Caterva array is a b2nd array with another C face: `b2nd` is the
/// b2nd layer's own array object (see `ffi::b2nd`), which owns the core
/// array and the real `blosc2_schunk` that `c.sc` points at. Every call
/// reaches the core through [`ArrayBox::with_core`], which lends it the
/// super-chunk the way the b2nd calls do, so `blosc2_schunk_*` calls on
/// `array->sc` and `caterva_*` calls see one and the same super-chunk.
#[repr(C)]
pub(crate) struct ArrayBox {
    /// Must stay first: the C pointer is the box's address.
    c: caterva_array_t,
    cfg: caterva_config_t,
    /// Owned; freed (with its super-chunk) when the box is dropped. NULL
    /// for a plain buffer.
    b2nd: *mut b2nd_array_t,
    /// A plain buffer (Caterva 0.5.0's `CATERVA_STORAGE_PLAINBUFFER`): the
    /// core array itself, without a super-chunk (`c.sc` is NULL).
    plain: Option<NdArray>,
    /// The chunk Caterva 0.5.0's `caterva_append` writes next
    /// (`caterva_append_chunk`): 0 for an array made by `caterva_empty`,
    /// the chunk count (filled) for every other.
    next_chunk: i64,
}

impl Drop for ArrayBox {
    fn drop(&mut self) {
        if !self.b2nd.is_null() {
            // SAFETY: `b2nd` is the live b2nd array this box owns; freed once.
            unsafe { crate::b2nd::b2nd_free(self.b2nd) };
        }
    }
}

/// Refuses geometries Caterva's structs cannot describe: more than
/// `CATERVA_MAX_DIM` dimensions or items over 255 bytes.
fn check_caterva_limits(ndim: usize, typesize: i32) -> crate::Result<()> {
    if ndim > CATERVA_MAX_DIM as usize {
        crate::bail!(InvalidParam, "{ndim} dimensions exceed CATERVA_MAX_DIM");
    }
    if !(0..=u8::MAX as i32).contains(&typesize) {
        crate::bail!(
            InvalidParam,
            "itemsize {typesize} does not fit Caterva's uint8_t"
        );
    }
    Ok(())
}

impl ArrayBox {
    /// Moves `core` to the heap, its super-chunk into a new C super-chunk.
    /// `slot` holds the C super-chunk `core` was built to name, if any (see
    /// `crate::b2nd::named`).
    fn into_c(
        core: NdArray,
        cfg: caterva_config_t,
        slot: Option<SchunkSlot>,
    ) -> crate::Result<*mut caterva_array_t> {
        check_caterva_limits(core.ndim(), core.typesize())?;
        if core.is_plain() {
            // No super-chunk: the slot (if any) is dropped unused.
            return Ok(ArrayBox::boxed(core::ptr::null_mut(), Some(core), cfg));
        }
        let b2nd = match slot {
            Some(slot) => B2ndBox::into_c_at(core, None, slot)?,
            None => B2ndBox::into_c(core, None)?,
        };
        Ok(ArrayBox::wrap(b2nd, cfg))
    }

    /// Builds an array over the caller's C super-chunk `sc`, which then is
    /// `array->sc` (same address) and is freed by `caterva_free`. On error
    /// the caller keeps `sc` untouched.
    ///
    /// # Safety
    /// `sc` is NULL or a live super-chunk of this library.
    unsafe fn adopt(
        sc: *mut blosc2_schunk,
        cfg: caterva_config_t,
    ) -> crate::Result<*mut caterva_array_t> {
        // Check the limits before taking the super-chunk over, so a refusal
        // leaves it with the caller.
        let (smeta, typesize) = {
            // SAFETY: forwarded contract; released at the end of the block,
            // before `adopt` claims it again.
            let sb = unsafe { crate::schunk::this(sc) }?;
            let core = sb.core.read();
            let smeta = core
                .meta_get("b2nd")
                .or_else(|_| core.meta_get("caterva"))?;
            (smeta, core.typesize())
        };
        let (m, _) = NdMeta::from_stored_bytes(&smeta, typesize)?;
        check_caterva_limits(m.ndim(), typesize)?;
        let mut b2nd = core::ptr::null_mut();
        // SAFETY: `sc` is live; `b2nd` is a writable local.
        unsafe { crate::b2nd::adopt(sc, &mut b2nd) }?;
        Ok(ArrayBox::wrap(b2nd, cfg))
    }

    /// Boxes the b2nd array `b2nd` (owned from now on) under a Caterva face.
    fn wrap(b2nd: *mut b2nd_array_t, cfg: caterva_config_t) -> *mut caterva_array_t {
        ArrayBox::boxed(b2nd, None, cfg)
    }

    /// Boxes either the b2nd array `b2nd` or the plain buffer `plain`.
    fn boxed(
        b2nd: *mut b2nd_array_t,
        plain: Option<NdArray>,
        cfg: caterva_config_t,
    ) -> *mut caterva_array_t {
        let mut b = Box::new(ArrayBox {
            // SAFETY: caterva_array_t holds only integers, arrays of them and
            // raw pointers, for all of which all-zero bytes are valid.
            c: unsafe { core::mem::zeroed() },
            cfg,
            b2nd,
            plain,
            next_chunk: 0,
        });
        b.c.cfg = &mut b.cfg;
        b.sync();
        b.next_chunk = b.chunk_count();
        Box::into_raw(b).cast()
    }

    /// Chunks of the array's chunk grid (`extnitems / chunknitems`).
    fn chunk_count(&self) -> i64 {
        if self.c.chunknitems > 0 {
            self.c.extnitems / self.c.chunknitems as i64
        } else {
            0
        }
    }

    /// Runs `f` on the core array with its real super-chunk lent from
    /// `array->sc` (the b2nd layer's `lend`), then refreshes the public
    /// fields, whether `f` succeeded or not.
    fn with_core<T>(
        &mut self,
        f: impl FnOnce(&mut NdArray) -> crate::Result<T>,
    ) -> crate::Result<T> {
        if let Some(core) = self.plain.as_mut() {
            let r = f(core);
            self.sync();
            return r;
        }
        // SAFETY: `b2nd` is the live b2nd array this box owns.
        let inner = unsafe { crate::b2nd::array(self.b2nd) }?;
        let r = crate::b2nd::lend(inner, f);
        self.sync();
        r
    }

    /// Refreshes every public field from the b2nd array's C struct (which
    /// `lend` keeps current) and its super-chunk.
    fn sync(&mut self) {
        if let Some(core) = self.plain.as_mut() {
            sync_plain(&mut self.c, core);
            return;
        }
        // SAFETY: `b2nd` is the live b2nd array this box owns.
        let b = unsafe { &*self.b2nd };
        let c = &mut self.c;
        c.storage = CATERVA_STORAGE_BLOSC;
        c.buf = core::ptr::null_mut();
        let nd = (b.ndim.max(0) as usize).min(CATERVA_MAX_DIM as usize);
        c.sc = b.sc;
        // SAFETY: `sc` is the live super-chunk the b2nd array owns.
        if let Some(sc) = unsafe { b.sc.as_ref() } {
            c.itemsize = sc.typesize as u8;
            c.nchunks = sc.nchunks;
        }
        c.ndim = nd as i8;
        c.nitems = b.nitems;
        c.chunknitems = b.chunknitems;
        c.extnitems = b.extnitems;
        c.blocknitems = b.blocknitems;
        c.extchunknitems = b.extchunknitems;
        c.chunk_cache.data = core::ptr::null_mut();
        c.chunk_cache.nchunk = -1;
        // Caterva pads unused dimensions with 1.
        let pad = |i: usize, v: i64| if i < nd { v } else { 1 };
        for i in 0..CATERVA_MAX_DIM as usize {
            c.shape[i] = pad(i, b.shape[i]);
            c.chunkshape[i] = pad(i, b.chunkshape[i] as i64) as i32;
            c.blockshape[i] = pad(i, b.blockshape[i] as i64) as i32;
            c.extshape[i] = pad(i, b.extshape[i]);
            c.extchunkshape[i] = pad(i, b.extchunkshape[i]);
            c.item_array_strides[i] = pad(i, b.item_array_strides[i]);
            c.item_chunk_strides[i] = pad(i, b.item_chunk_strides[i]);
            c.item_extchunk_strides[i] = pad(i, b.item_extchunk_strides[i]);
            c.item_block_strides[i] = pad(i, b.item_block_strides[i]);
            c.block_chunk_strides[i] = pad(i, b.block_chunk_strides[i]);
            c.chunk_array_strides[i] = pad(i, b.chunk_array_strides[i]);
        }
    }

    /// Runs a shape change on the core, which keeps both the `b2nd` and
    /// the `caterva` layer current.
    fn reshape(&mut self, f: impl FnOnce(&mut NdArray) -> crate::Result<()>) -> crate::Result<()> {
        self.with_core(f)
    }
}

/// Refreshes the public fields of a plain buffer's struct from its core
/// array: no super-chunk, `buf` at its items.
fn sync_plain(c: &mut caterva_array_t, core: &mut NdArray) {
    let g = core.layout().geometry();
    let nd = g.ndim.min(CATERVA_MAX_DIM as usize);
    c.sc = core::ptr::null_mut();
    c.storage = CATERVA_STORAGE_PLAINBUFFER;
    c.itemsize = core.typesize() as u8;
    c.nchunks = core.nchunks();
    c.ndim = nd as i8;
    c.nitems = g.nitems;
    c.chunknitems = g.chunknitems;
    c.extnitems = g.extnitems;
    c.blocknitems = g.blocknitems;
    c.extchunknitems = g.extchunknitems;
    c.chunk_cache.data = core::ptr::null_mut();
    c.chunk_cache.nchunk = -1;
    // Caterva pads unused dimensions with 1.
    let pad = |i: usize, v: &[i64]| if i < nd { v[i] } else { 1 };
    let pad32 = |i: usize, v: &[i32]| if i < nd { v[i] } else { 1 };
    for i in 0..CATERVA_MAX_DIM as usize {
        c.shape[i] = pad(i, &g.shape);
        c.chunkshape[i] = pad32(i, &g.chunkshape);
        c.blockshape[i] = pad32(i, &g.blockshape);
        c.extshape[i] = pad(i, &g.extshape);
        c.extchunkshape[i] = pad(i, &g.extchunkshape);
        c.item_array_strides[i] = pad(i, &g.item_array_strides);
        c.item_chunk_strides[i] = pad(i, &g.item_chunk_strides);
        c.item_extchunk_strides[i] = pad(i, &g.item_extchunk_strides);
        c.item_block_strides[i] = pad(i, &g.item_block_strides);
        c.block_chunk_strides[i] = pad(i, &g.block_chunk_strides);
        c.chunk_array_strides[i] = pad(i, &g.chunk_array_strides);
    }
    c.buf = core.plain_items_ptr().unwrap_or(core::ptr::null_mut());
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

/// Rewrites the `caterva` layer of a fresh copy (which carried the
/// source's over) for the copy's own geometry, filling the stored slot.
fn sync_caterva_layer(core: &mut NdArray) -> crate::Result<()> {
    if core.is_plain() {
        // A plain buffer has no metalayers to keep in step.
        return Ok(());
    }
    let Some(old) = core.metalayer("caterva") else {
        return Ok(());
    };
    let l = core.layout();
    let meta = NdMeta::new(
        l.shape.clone(),
        l.chunkshape.clone(),
        l.blockshape.clone(),
        core.dtype(),
        core.dtype_format(),
    );
    let bytes = meta.to_bytes_filling(&old)?;
    core.with_schunk(|sc| sc.meta_update("caterva", &bytes).map(|_| ()))
}

/// `Some(CATERVA_ERR_INVALID_STORAGE)` when `array` is a plain buffer:
/// metalayers, serialization and shape changes need a super-chunk, as in
/// Caterva 0.5.0 (a plain buffer's partitions are its shape, which a shape
/// change would leave behind).
///
/// # Safety
/// `array` is NULL or a pointer handed out by this module not yet freed.
pub(crate) unsafe fn refuse_plain(array: *mut caterva_array_t) -> Option<c_int> {
    // SAFETY: forwarded contract.
    match unsafe { array_ref(array) } {
        Ok(a) if a.plain.is_some() => Some(CATERVA_ERR_INVALID_STORAGE),
        _ => None,
    }
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
