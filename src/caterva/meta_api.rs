//! Metalayers, variable-length metalayers and the `caterva` metalayer codec
//! (`caterva_meta_*`, `caterva_vlmeta_*`, `caterva_(de)serialize_meta`).

use core::ffi::{c_char, c_int};
use core::mem::MaybeUninit;

use super::convert::{c_name, layer_parts, malloc_cstr};
use super::types::*;
use super::{array_ref, ctx_ref, nonnull, run};
use crate::convert::{fill, items, out_items};
use crate::schunk::malloc_copy;
use b2nd_core::ndarray::array::NdArray;
use b2nd_core::ndarray::meta::NdMeta;

/// The shape, chunkshape and blockshape arrays of a geometry, `ndim` values
/// each; every pointer must be non-NULL (as Caterva's checks).
///
/// # Safety
/// Each pointer is NULL or readable for `ndim` values during the call.
unsafe fn geometry<'a>(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
) -> crate::Result<(&'a [i64], &'a [i32], &'a [i32])> {
    let (shape, chunkshape, blockshape) = (
        nonnull(shape.cast_mut(), "shape")?,
        nonnull(chunkshape.cast_mut(), "chunkshape")?,
        nonnull(blockshape.cast_mut(), "blockshape")?,
    );
    // SAFETY: non-NULL and readable for `ndim` values per the contract.
    unsafe {
        Ok((
            items(shape.cast_const(), ndim, "shape")?,
            items(chunkshape.cast_const(), ndim, "chunkshape")?,
            items(blockshape.cast_const(), ndim, "blockshape")?,
        ))
    }
}

/// Which kind of metalayer a call names.
#[derive(Clone, Copy)]
enum Family {
    /// Fixed-size, in the frame header (`caterva_meta_*`).
    Fixed,
    /// Variable-length, in the trailer (`caterva_vlmeta_*`).
    Variable,
}

impl Family {
    fn lookup(self, core: &NdArray, name: &str) -> Option<Vec<u8>> {
        match self {
            Family::Fixed => core.metalayer(name),
            Family::Variable => core.vlmetalayer(name),
        }
    }
}

/// `caterva_(vl)meta_get`: copies the layer out into `malloc`ed fields.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `out` NULL or writable; `ctx`/`array`
/// NULL or live.
unsafe fn get_layer(
    family: Family,
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    out: *mut caterva_metalayer_t,
) -> crate::Result<()> {
    // SAFETY: per the contract.
    unsafe { ctx_ref(ctx) }?;
    // SAFETY: per the contract.
    let a = unsafe { array_ref(array) }?;
    // SAFETY: per the contract.
    let name = unsafe { c_name(name) }?;
    // SAFETY: per the contract.
    let out = unsafe { nonnull(out, "meta")?.as_mut() }.unwrap();
    let content = a
        .with_core(|core| Ok(family.lookup(core, &name)))?
        .ok_or_else(|| crate::err!(MetalayerNotFound, "no metalayer {name:?}"))?;
    give(out, &name, &content)
}

/// `caterva_(vl)meta_exists`.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `exists` NULL or writable; `ctx`/`array`
/// NULL or live.
unsafe fn layer_exists(
    family: Family,
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    exists: *mut bool,
) -> crate::Result<()> {
    // SAFETY: per the contract.
    unsafe { ctx_ref(ctx) }?;
    // SAFETY: per the contract.
    let a = unsafe { array_ref(array) }?;
    // SAFETY: per the contract.
    let name = unsafe { c_name(name) }?;
    let exists = nonnull(exists, "exists")?;
    let found = a.with_core(|core| Ok(family.lookup(core, &name).is_some()))?;
    // SAFETY: non-NULL and writable per the contract.
    unsafe { *exists = found };
    Ok(())
}

/// As [`geometry`], writable (the outputs of `caterva_deserialize_meta`).
///
/// # Safety
/// Each pointer is NULL or valid for `ndim` values, unaliased, during the
/// call.
unsafe fn geometry_mut<'a>(
    ndim: i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
) -> crate::Result<(
    &'a mut [MaybeUninit<i64>],
    &'a mut [MaybeUninit<i32>],
    &'a mut [MaybeUninit<i32>],
)> {
    let (shape, chunkshape, blockshape) = (
        nonnull(shape, "shape")?,
        nonnull(chunkshape, "chunkshape")?,
        nonnull(blockshape, "blockshape")?,
    );
    // SAFETY: non-NULL and valid for `ndim` values per the contract.
    unsafe {
        Ok((
            out_items(shape, ndim, "shape")?,
            out_items(chunkshape, ndim, "chunkshape")?,
            out_items(blockshape, ndim, "blockshape")?,
        ))
    }
}

/// Fills a caller's metalayer struct with `malloc`ed name and content.
fn give(out: &mut caterva_metalayer_t, name: &str, content: &[u8]) -> crate::Result<()> {
    let size =
        i32::try_from(content.len()).map_err(|_| crate::err!(Failure, "metalayer too large"))?;
    let data = malloc_copy(content)?;
    let name = match malloc_cstr(name) {
        Ok(n) => n,
        Err(e) => {
            // SAFETY: `data` was just malloc'ed and not handed out.
            unsafe { libc::free(data.cast()) };
            return Err(e);
        }
    };
    out.sdata = data;
    out.size = size;
    out.name = name;
    Ok(())
}

/// Adds a variable-length metalayer.
///
/// # Safety
/// `vlmeta` is NULL or readable, with a NUL-terminated name and `size`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn caterva_vlmeta_add(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    vlmeta: *mut caterva_metalayer_t,
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
        let m = unsafe { nonnull(vlmeta, "vlmeta")?.as_ref() }.unwrap();
        // SAFETY: per the contract.
        let (name, data) = unsafe { layer_parts(m) }?;
        a.with_core(|core| core.add_vlmetalayer(&name, data))
    })
}

/// Reads a variable-length metalayer; `vlmeta->name` and `vlmeta->sdata`
/// are `malloc`ed for the caller to free.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `vlmeta` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn caterva_vlmeta_get(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    vlmeta: *mut caterva_metalayer_t,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    // SAFETY: forwarded contract.
    run(|| unsafe { get_layer(Family::Variable, ctx, array, name, vlmeta) })
}

/// Whether a variable-length metalayer exists.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `exists` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn caterva_vlmeta_exists(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    exists: *mut bool,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    // SAFETY: forwarded contract.
    run(|| unsafe { layer_exists(Family::Variable, ctx, array, name, exists) })
}

/// Replaces the content of an existing variable-length metalayer.
///
/// # Safety
/// As for [`caterva_vlmeta_add`].
#[no_mangle]
pub unsafe extern "C" fn caterva_vlmeta_update(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    vlmeta: *mut caterva_metalayer_t,
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
        let m = unsafe { nonnull(vlmeta, "vlmeta")?.as_ref() }.unwrap();
        // SAFETY: per the contract.
        let (name, data) = unsafe { layer_parts(m) }?;
        a.with_core(|core| core.with_schunk(|sc| sc.vlmeta_update(&name, data, None).map(|_| ())))
    })
}

/// Reads a fixed-size metalayer; `meta->name` and `meta->sdata` are
/// `malloc`ed for the caller to free.
///
/// # Safety
/// As for [`caterva_vlmeta_get`].
#[no_mangle]
pub unsafe extern "C" fn caterva_meta_get(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    meta: *mut caterva_metalayer_t,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    // SAFETY: forwarded contract.
    run(|| unsafe { get_layer(Family::Fixed, ctx, array, name, meta) })
}

/// Whether a fixed-size metalayer exists.
///
/// # Safety
/// As for [`caterva_vlmeta_exists`].
#[no_mangle]
pub unsafe extern "C" fn caterva_meta_exists(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    name: *const c_char,
    exists: *mut bool,
) -> c_int {
    // SAFETY: `array` is NULL or live per the contract.
    if let Some(rc) = unsafe { super::refuse_plain(array) } {
        return rc;
    }
    // SAFETY: forwarded contract.
    run(|| unsafe { layer_exists(Family::Fixed, ctx, array, name, exists) })
}

/// Replaces the content of a fixed-size metalayer (same size only, as in
/// Caterva). The `caterva` and `b2nd` layers describe the geometry and
/// cannot be replaced this way.
///
/// # Safety
/// As for [`caterva_vlmeta_add`].
#[no_mangle]
pub unsafe extern "C" fn caterva_meta_update(
    ctx: *mut caterva_ctx_t,
    array: *mut caterva_array_t,
    meta: *mut caterva_metalayer_t,
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
        let m = unsafe { nonnull(meta, "meta")?.as_ref() }.unwrap();
        // SAFETY: per the contract.
        let (name, data) = unsafe { layer_parts(m) }?;
        if name == "caterva" || name == "b2nd" {
            crate::bail!(InvalidParam, "the {name:?} layer is managed by the library");
        }
        a.with_core(|core| core.with_schunk(|sc| sc.meta_update(&name, data).map(|_| ())))
    })
}

/// Prints the array's geometry on stdout, as Caterva's `caterva_print_meta`.
///
/// # Safety
/// `array` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn caterva_print_meta(array: *mut caterva_array_t) -> c_int {
    run(|| {
        // SAFETY: per the contract.
        let a = unsafe { array_ref(array) }?;
        let nd = a.c.ndim as usize;
        let join = |v: Vec<String>| v.join(", ");
        println!(
            "Caterva metalayer parameters: \n Ndim:       {}\n Shape:      {}\n Chunkshape: {}\n Blockshape: {}",
            nd,
            join(a.c.shape[..nd].iter().map(i64::to_string).collect()),
            join(a.c.chunkshape[..nd].iter().map(i32::to_string).collect()),
            join(a.c.blockshape[..nd].iter().map(i32::to_string).collect()),
        );
        Ok(())
    })
}

/// Encodes a geometry as a `caterva` metalayer into a `malloc`ed buffer;
/// returns its length, or a negative value on bad input.
///
/// # Safety
/// `shape`, `chunkshape`, `blockshape` are NULL or readable for `ndim`
/// values; `smeta` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn caterva_serialize_meta(
    ndim: i8,
    shape: *mut i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    smeta: *mut *mut u8,
) -> i32 {
    let r = run(|| {
        if !(0..=CATERVA_MAX_DIM as i8).contains(&ndim) {
            crate::bail!(InvalidParam, "ndim {ndim} out of range");
        }
        let out = nonnull(smeta, "smeta")?;
        // SAFETY: readable for ndim values per the contract.
        let (s, c, b) = unsafe { geometry(ndim, shape.cast_const(), chunkshape, blockshape) }?;
        let bytes = super::caterva_layer(s, c, b)?;
        let p = malloc_copy(&bytes)?;
        // SAFETY: non-NULL and writable.
        unsafe { *out = p };
        LAST_LEN.with(|l| l.set(bytes.len() as i32));
        Ok(())
    });
    if r == CATERVA_SUCCEED {
        LAST_LEN.with(|l| l.get())
    } else {
        -r
    }
}

thread_local! {
    /// Length of the last serialized layer (handed from the closure above).
    static LAST_LEN: core::cell::Cell<i32> = const { core::cell::Cell::new(0) };
}

/// Decodes a `caterva` (or `b2nd`) metalayer; returns the bytes consumed
/// (`smeta_len`) or a negative value on bad input. Output arrays get
/// `ndim` values.
///
/// # Safety
/// `smeta` is NULL or readable for `smeta_len` bytes; the outputs are NULL
/// or writable for `CATERVA_MAX_DIM` values.
#[no_mangle]
pub unsafe extern "C" fn caterva_deserialize_meta(
    smeta: *mut u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
) -> i32 {
    let r = run(|| {
        let p = nonnull(smeta, "smeta")?;
        // SAFETY: readable for smeta_len bytes per the contract.
        let bytes = unsafe { items(p.cast_const(), smeta_len, "smeta") }?;
        let m = NdMeta::from_meta_bytes(bytes, 1)?;
        let nd = m.ndim();
        if nd > CATERVA_MAX_DIM as usize {
            crate::bail!(InvalidParam, "{nd} dimensions exceed CATERVA_MAX_DIM");
        }
        let ndim = nonnull(ndim, "ndim")?;
        // SAFETY: writable for CATERVA_MAX_DIM >= nd values per the contract.
        let (s, c, b) = unsafe { geometry_mut(nd as i8, shape, chunkshape, blockshape) }?;
        fill(s, &m.shape);
        fill(c, &m.chunkshape);
        fill(b, &m.blockshape);
        // SAFETY: non-NULL and writable.
        unsafe { *ndim = nd as i8 };
        Ok(())
    });
    if r == CATERVA_SUCCEED {
        smeta_len
    } else {
        -r
    }
}
