//! Caterva's parameter structs to the core's creation [`Context`].

use super::types::*;
use b2nd_core::chunk::CParams;
use b2nd_core::ndarray::array::{ArrayStorage, Context};
use b2nd_core::schunk::Storage;
use crate::Result;

/// Compression parameters from a Caterva configuration (typesize and
/// blocksize are set by the array engine from the geometry).
pub(super) fn cparams_from_cfg(cfg: &caterva_config_t) -> CParams {
    CParams {
        compcode: cfg.compcodec,
        compcode_meta: cfg.compmeta,
        clevel: cfg.complevel,
        use_dict: cfg.usedict != 0,
        nthreads: cfg.nthreads.max(1),
        splitmode: cfg.splitmode,
        filters: cfg.filters,
        filters_meta: cfg.filtersmeta,
        ..CParams::default()
    }
}

/// Number of dimensions of a Caterva parameter struct, checked.
fn ndim_of(ndim: i8) -> Result<usize> {
    if !(0..=CATERVA_MAX_DIM as i8).contains(&ndim) {
        crate::bail!(
            InvalidParam,
            "ndim {ndim} must be in [0, {CATERVA_MAX_DIM}]"
        );
    }
    Ok(ndim as usize)
}

/// Core storage (memory, contiguous file or sparse directory) for a Caterva
/// storage description.
///
/// # Safety
/// `st.urlpath` is NULL or NUL-terminated.
unsafe fn storage_of(cfg: &caterva_config_t, st: &caterva_storage_t) -> Result<ArrayStorage> {
    let urlpath = if st.urlpath.is_null() {
        None
    } else {
        // SAFETY: non-NULL and NUL-terminated per the caller's contract.
        Some(unsafe { crate::storage::frame_path_from_c(st.urlpath, "urlpath") }?)
    };
    Ok(ArrayStorage::Schunk(Storage {
        contiguous: st.contiguous,
        urlpath,
        cparams: cparams_from_cfg(cfg),
        ..Storage::default()
    }))
}

/// The user metalayers of a storage description, checked (names non-NULL
/// UTF-8, sizes non-negative, count within `CATERVA_MAX_METALAYERS`).
///
/// # Safety
/// The first `nmetalayers` entries have NUL-terminated names and `sdata`
/// readable for `size` bytes (or NULL with size 0).
unsafe fn user_layers(st: &caterva_storage_t) -> Result<Vec<(String, Vec<u8>)>> {
    if !(0..=CATERVA_MAX_METALAYERS).contains(&st.nmetalayers) {
        crate::bail!(InvalidParam, "nmetalayers {} out of range", st.nmetalayers);
    }
    let mut out = Vec::with_capacity(st.nmetalayers as usize);
    for m in &st.metalayers[..st.nmetalayers as usize] {
        // SAFETY: forwarded contract for entry `m`.
        let (name, data) = unsafe { layer_parts(m) }?;
        out.push((name, data.to_vec()));
    }
    Ok(out)
}

/// Name and content of a caller's metalayer struct.
///
/// # Safety
/// `m.name` is NULL or NUL-terminated; `m.sdata` is NULL or readable for
/// `m.size` bytes.
pub(super) unsafe fn layer_parts(m: &caterva_metalayer_t) -> Result<(String, &[u8])> {
    if m.name.is_null() || m.sdata.is_null() {
        crate::bail!(NullPointer, "metalayer name or data is NULL");
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    let name = unsafe { c_name(m.name) }?;
    // SAFETY: non-NULL and readable for `size` bytes per the contract.
    let data = unsafe { crate::convert::items(m.sdata.cast_const(), m.size, "metalayer") }?;
    Ok((name, data))
}

/// A caller's NUL-terminated name as a Rust string.
///
/// # Safety
/// `p` is NULL or NUL-terminated.
pub(super) unsafe fn c_name(p: *const core::ffi::c_char) -> Result<String> {
    // SAFETY: forwarded contract.
    Ok(unsafe { crate::convert::c_str(p, "name") }?.to_string())
}

/// Chunk and block shapes of a storage description for `nd` dimensions.
pub(super) fn partition_of(st: &caterva_storage_t, nd: usize) -> (Vec<i32>, Vec<i32>) {
    (st.chunkshape[..nd].to_vec(), st.blockshape[..nd].to_vec())
}

/// The core context for a new array of `shape` (ndim from `params` or the
/// source array) with Caterva's storage, carrying the `caterva` layer
/// (unless `with_caterva_layer` is false, e.g. copies that carry the
/// source's layers over) and the user layers.
///
/// # Safety
/// As for [`storage_of`] and [`user_layers`].
pub(super) unsafe fn context_for(
    cfg: &caterva_config_t,
    itemsize: u8,
    shape: &[i64],
    st: &caterva_storage_t,
    with_caterva_layer: bool,
) -> Result<Context> {
    if st.is_plainbuffer() {
        // Caterva 0.5.0's plain buffer: its partitions are the array
        // itself; `properties.blosc` (shapes, urlpath, metalayers) does not
        // apply, as in Caterva 0.5.0.
        return Context::plain(itemsize as i32, shape);
    }
    let nd = shape.len();
    let (chunkshape, blockshape) = partition_of(st, nd);
    // SAFETY: forwarded contract.
    let mut layers = unsafe { user_layers(st) }?;
    if with_caterva_layer {
        // Geometry problems are reported by Context::new below; the layer
        // is only encodable for a valid geometry.
        if let Ok(bytes) = super::caterva_layer(shape, &chunkshape, &blockshape) {
            layers.insert(0, ("caterva".to_string(), bytes));
        }
    }
    // SAFETY: forwarded contract.
    let storage = unsafe { storage_of(cfg, st) }?;
    Context::new(
        storage,
        itemsize as i32,
        shape,
        &chunkshape,
        &blockshape,
        None,
        0,
        layers,
    )
}

/// Shape of a Caterva parameter struct.
pub(super) fn shape_of(params: &caterva_params_t) -> Result<Vec<i64>> {
    let nd = ndim_of(params.ndim)?;
    Ok(params.shape[..nd].to_vec())
}

/// A `malloc`ed, NUL-terminated copy of `s`.
pub(super) fn malloc_cstr(s: &str) -> Result<*mut core::ffi::c_char> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    Ok(crate::schunk::malloc_copy(&v)?.cast())
}
