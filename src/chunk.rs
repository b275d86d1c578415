//! The chunk calls of the C API that take a context or need none: compress,
//! decompress, getitem, masks, VL blocks, special chunks, header queries and
//! codec names.
//!
//! Each function checks its pointers and sizes, builds slices, delegates to
//! `b2nd_core::chunk` and maps the error to its reference code.

use super::context::{core_cparams, ctx_mut, Ctx};
use super::registry::{user_codec_by_name, user_codec_cname, user_complib_cname, TunerStep};
use super::types::{blosc2_context, blosc2_cparams};
use super::{guard, guard_code};
use b2nd_core::chunk::{make_special_with, ChunkHeader, Compressor, Special};
use core::ffi::{c_char, c_int, c_void, CStr};

// ---- Pointer and size checks shared by the C entry points ---------------------
//
// The small ones are always inlined: a call of its own per check, each
// returning its `Result` through memory, was a good part of what a small
// decompression or header query costs (`scripts/instructions.sh
// small/cbuffer_sizes/lz4/256B`).

/// A read-only view of `len` bytes at `p`. NULL is only allowed for `len == 0`.
///
/// # Safety
/// A non-NULL `p` must be readable for `len` bytes for the life of the slice.
pub(super) unsafe fn src_slice<'a>(
    p: *const c_void,
    len: i32,
    what: &str,
) -> crate::Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { super::convert::bytes(p, len, what) }
}

/// A writable view of `len` bytes at `p`. NULL is only allowed for `len == 0`.
///
/// # Safety
/// A non-NULL `p` must be writable for `len` bytes, and not aliased by any
/// other slice, for the life of the slice.
pub(super) unsafe fn dst_slice<'a>(
    p: *mut c_void,
    len: i32,
    what: &str,
) -> crate::Result<&'a mut [u8]> {
    // SAFETY: forwarded contract.
    unsafe { super::convert::bytes_mut(p, len, what) }
}

/// The input and output of a compress-like call, checked as [`src_slice`]
/// and [`dst_slice`] do (source first, as the reference reports).
///
/// # Safety
/// As for [`src_slice`] and [`dst_slice`]; the two regions do not overlap.
#[inline(always)]
pub(super) unsafe fn src_dst_slices<'a, 'b>(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> crate::Result<(&'a [u8], &'b mut [u8])> {
    // SAFETY: forwarded contract.
    let s = unsafe { src_slice(src, srcsize, "src") }?;
    // SAFETY: forwarded contract.
    let d = unsafe { dst_slice(dest, destsize, "dest") }?;
    Ok((s, d))
}

/// The output of a decompress-like call for a chunk of `nbytes` bytes: the
/// reference answers a smaller `destsize` with `BLOSC2_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// As for [`dst_slice`].
#[inline(always)]
pub(super) unsafe fn dst_for_chunk<'a>(
    nbytes: usize,
    dest: *mut c_void,
    destsize: i32,
) -> crate::Result<&'a mut [u8]> {
    if destsize < 0 || nbytes > destsize as usize {
        crate::bail!(
            WriteBuffer,
            "chunk holds {nbytes} bytes, dest has {destsize}"
        );
    }
    // SAFETY: forwarded contract.
    unsafe { dst_slice(dest, destsize, "dest") }
}

/// The compressed buffer of a decompress-like call. The reference answers a
/// source shorter than a header (including a negative size) with
/// `BLOSC2_ERROR_READ_BUFFER`.
///
/// # Safety
/// As for [`src_slice`].
#[inline(always)]
pub(super) unsafe fn chunk_slice<'a>(p: *const c_void, len: i32) -> crate::Result<&'a [u8]> {
    if len < 0 {
        crate::bail!(ReadBuffer, "source size {len} is negative");
    }
    // SAFETY: forwarded contract.
    unsafe { src_slice(p, len, "src") }
}

/// The header bytes of a chunk whose length the caller does not give (the
/// header-query calls): 16 bytes, or 32 when they announce an extended header
/// (which a valid chunk of that kind always holds, `cbytes >= 32`).
///
/// # Safety
/// `p` must be NULL or readable for the header it starts.
#[inline(always)]
pub(super) unsafe fn header_slice<'a>(p: *const c_void) -> crate::Result<&'a [u8]> {
    if p.is_null() {
        crate::bail!(NullPointer, "cbuffer is NULL");
    }
    // SAFETY: every chunk starts with a 16-byte header; the caller vouches it is readable.
    let min = unsafe { core::slice::from_raw_parts(p as *const u8, 16) };
    let extended = min[2] & 0x1 != 0 && min[2] & 0x4 != 0;
    let cbytes = i32::from_le_bytes([min[12], min[13], min[14], min[15]]);
    if extended && cbytes >= 32 {
        // SAFETY: a chunk with an extended header and cbytes >= 32 holds at
        // least 32 bytes (the caller's buffer is such a chunk).
        return Ok(unsafe { core::slice::from_raw_parts(p as *const u8, 32) });
    }
    Ok(min)
}

/// A whole chunk whose length the caller does not give (Blosc1 calls): the
/// `cbytes` its header states.
///
/// # Safety
/// `p` must be NULL or point to a chunk readable for the `cbytes` it states.
pub(super) unsafe fn trusted_chunk<'a>(p: *const c_void) -> crate::Result<&'a [u8]> {
    // SAFETY: forwarded contract.
    let head = unsafe { header_slice(p) }?;
    let h = ChunkHeader::parse_unchecked_len(head)?;
    // SAFETY: the caller vouches that the chunk holds the `cbytes` it states
    // .
    Ok(unsafe { core::slice::from_raw_parts(p as *const u8, h.cbytes()) })
}

#[inline(always)]
fn as_int(n: usize) -> crate::Result<c_int> {
    c_int::try_from(n).map_err(|_| crate::err!(TwoGbLimit, "{n} does not fit an int"))
}

/// The context behind a handle, or `BLOSC2_ERROR_NULL_POINTER`.
///
/// # Safety
/// As for [`ctx_mut`].
#[inline(always)]
unsafe fn ctx_ref<'a>(ctx: *mut blosc2_context) -> crate::Result<&'a mut Ctx> {
    // SAFETY: forwarded contract.
    unsafe { ctx_mut(ctx) }.ok_or_else(|| crate::err!(NullPointer, "context is NULL"))
}

fn need_cctx(c: &mut Ctx) -> crate::Result<&mut Compressor> {
    if !c.do_compress {
        crate::bail!(InvalidParam, "context is not meant for compression");
    }
    c.comp
        .as_mut()
        .ok_or_else(|| crate::err!(InvalidParam, "context has no compressor"))
}

#[inline(always)]
fn need_dctx(c: &Ctx) -> crate::Result<()> {
    if c.do_compress {
        crate::bail!(InvalidParam, "context is not meant for decompression");
    }
    Ok(())
}

/// Runs one compression with the user tuner's callbacks around it.
fn tuned<T>(c: &mut Ctx, f: impl FnOnce(&mut Compressor) -> crate::Result<T>) -> crate::Result<T> {
    c.tuner_step(TunerStep::Before)?;
    let t0 = std::time::Instant::now();
    let out = f(need_cctx(c)?)?;
    c.tuner_step(TunerStep::Update(t0.elapsed().as_secs_f64()))?;
    Ok(out)
}

// ---- Contexts -----------------------------------------------------------------

/// Compresses `srcsize` bytes of `src` into `dest` with a compression
/// context. Returns the chunk size, 0 when `dest` is too small (discard it),
/// or a negative error (`BLOSC2_ERROR_INVALID_PARAM` for a decompression
/// context, `BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED` when `destsize` < 32, ...).
///
/// # Safety
/// `context` is a live context; `src` is readable for `srcsize` bytes and
/// `dest` writable for `destsize` bytes, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded to each helper.
        let c = unsafe { ctx_ref(context) }?;
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let (src, dst) = unsafe { src_dst_slices(src, srcsize, dest, destsize) }?;
        let n = tuned(c, |comp| comp.compress(src, dst))?;
        if n > 0 {
            // As in the reference, the context now reports the block size it
            // used (`blosc2_ctx_get_cparams`), read back from the chunk.
            if let Ok(h) = ChunkHeader::parse_unchecked_len(&dst[..n]) {
                c.cparams.blocksize = as_int(h.blocksize())?;
            }
        }
        as_int(n)
    })
}

/// Decompresses a chunk into `dest` with a decompression context. Returns
/// the uncompressed size or a negative error (`BLOSC2_ERROR_WRITE_BUFFER`
/// when `destsize` is smaller than the chunk's `nbytes`). A mask set with
/// `blosc2_set_maskout` applies to this call only.
///
/// # Safety
/// `context` is a live context; `src` is readable for `srcsize` bytes and
/// `dest` writable for `destsize` bytes, not overlapping.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded to each helper.
        let c = unsafe { ctx_ref(context) }?;
        need_dctx(c)?;
        let r = (|| {
            // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
            let chunk = unsafe { chunk_slice(src, srcsize) }?;
            let h = ChunkHeader::parse(chunk)?;
            c.last_typesize = h.typesize() as i32;
            // SAFETY: the caller's contract: `dest` writable for `destsize` bytes.
            let dst = unsafe { dst_for_chunk(h.nbytes(), dest, destsize) }?;
            c.decomp.decompress_parsed(&h, chunk, dst)
        })();
        if r.is_err() {
            // The mask is for one call only, whatever its outcome.
            c.decomp = b2nd_core::chunk::Decompressor::new(c.decomp.dparams().clone());
        }
        as_int(r?)
    })
}

/// The getitem checks of the reference, in its order, then the core call.
pub(super) fn getitem_on(
    d: &mut b2nd_core::chunk::Decompressor,
    chunk: &[u8],
    start: impl Into<i64>,
    nitems: impl Into<i64>,
    dest: *mut c_void,
    destsize: i32,
) -> crate::Result<c_int> {
    let (start, nitems) = (start.into(), nitems.into());
    let h = ChunkHeader::parse(chunk)?;
    if h.vl_blocks() {
        crate::bail!(InvalidParam, "getitem does not apply to VL-block chunks");
    }
    if nitems == 0 {
        return Ok(0);
    }
    if nitems < 0 {
        crate::bail!(InvalidParam, "nitems {nitems} is negative");
    }
    let want = nitems.checked_mul(h.typesize() as i64).unwrap_or(i64::MAX);
    if want > i64::from(i32::MAX) || want > i64::from(destsize) {
        crate::bail!(WriteBuffer, "nitems * typesize out of dest bounds");
    }
    if start < 0 {
        crate::bail!(InvalidParam, "start {start} is negative");
    }
    // SAFETY: the caller's contract: `dest` is writable for `destsize` bytes.
    let dst = unsafe { dst_slice(dest, destsize, "dest") }?;
    as_int(d.getitem_parsed(&h, chunk, start as usize, nitems as usize, dst)?)
}

/// Decodes `nitems` items (of the typesize the chunk records) from item
/// `start` into `dest`. Returns the bytes written or a negative error.
///
/// # Safety
/// `context` is a live context; `src` readable for `srcsize` bytes; `dest`
/// writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded.
        let c = unsafe { ctx_ref(context) }?;
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        getitem_on(&mut c.decomp, chunk, start, nitems, dest, destsize)
    })
}

/// Decodes `nbytes` bytes from byte `start`; both must be multiples of the
/// typesize the chunk records (else `BLOSC2_ERROR_INVALID_PARAM`).
///
/// # Safety
/// As for `blosc2_getitem_ctx`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_bytes_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: i32,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded.
        let c = unsafe { ctx_ref(context) }?;
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        let h = ChunkHeader::parse(chunk)?;
        if h.vl_blocks() {
            crate::bail!(InvalidParam, "getitem does not apply to VL-block chunks");
        }
        if start < 0 || nbytes < 0 {
            crate::bail!(InvalidParam, "start and nbytes must not be negative");
        }
        let ts = h.typesize() as i32;
        if start % ts != 0 || nbytes % ts != 0 {
            crate::bail!(
                InvalidParam,
                "start {start} and nbytes {nbytes} must be multiples of {ts}"
            );
        }
        getitem_on(
            &mut c.decomp,
            chunk,
            start / ts,
            nbytes / ts,
            dest,
            destsize,
        )
    })
}

/// Sets the blocks (`true`) the next `blosc2_decompress_ctx` skips; `nblocks`
/// must equal the chunk's block count then. Returns 0 or a negative error.
///
/// # Safety
/// `ctx` is a live context; `maskout` readable for `nblocks` bools.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_maskout(
    ctx: *mut blosc2_context,
    maskout: *mut bool,
    nblocks: c_int,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded. Reading the mask as bytes
        // (not `bool`) keeps a C `bool` holding another value from being UB.
        let c = unsafe { ctx_ref(ctx) }?;
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let raw = unsafe { src_slice(maskout as *const c_void, nblocks, "maskout") }?;
        let mask: Vec<bool> = raw.iter().map(|&b| b != 0).collect();
        c.decomp.set_maskout(&mask)?;
        Ok(0)
    })
}

/// Compresses `nblocks` buffers into one chunk with one block each. Returns
/// the chunk size, 0 when `dest` is too small, or a negative error
/// (`BLOSC2_ERROR_INVALID_PARAM` for NULL lists, `nblocks <= 0` or an empty
/// or NULL block).
///
/// # Safety
/// `srcs` and `srcsizes` hold `nblocks` entries; `srcs[i]` is readable for
/// `srcsizes[i]` bytes; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlcompress_ctx(
    context: *mut blosc2_context,
    srcs: *const *const c_void,
    srcsizes: *const i32,
    nblocks: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded to each helper.
        let c = unsafe { ctx_ref(context) }?;
        need_cctx(c)?;
        if srcs.is_null() || srcsizes.is_null() || nblocks <= 0 {
            crate::bail!(InvalidParam, "invalid sources for VL-block compression");
        }
        // SAFETY: both lists hold `nblocks` entries per the contract.
        let (ptrs, sizes) = unsafe {
            (
                super::convert::items(srcs, nblocks, "srcs")?,
                super::convert::items(srcsizes, nblocks, "srcsizes")?,
            )
        };
        let mut blocks = Vec::with_capacity(ptrs.len());
        for (i, (&p, &n)) in ptrs.iter().zip(sizes).enumerate() {
            if p.is_null() || n <= 0 {
                crate::bail!(InvalidParam, "invalid VL block at index {i}");
            }
            // SAFETY: `p` is readable for `n` bytes per the contract.
            blocks.push(unsafe { src_slice(p, n, "block") }?);
        }
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let dst = unsafe { dst_slice(dest, destsize, "dest") }?;
        let n = tuned(c, |comp| comp.compress_vl(&blocks, dst))?;
        if n > 0 {
            // The reference's context keeps the largest block as its block size.
            c.cparams.blocksize = sizes.iter().copied().max().unwrap_or(0);
        }
        as_int(n)
    })
}

/// Copies `data` into a buffer from `malloc` (the caller frees it with `free`).
fn malloc_copy(data: &[u8]) -> crate::Result<*mut u8> {
    // SAFETY: plain allocation; at least one byte so NULL means failure.
    let p = unsafe { libc::malloc(data.len().max(1)) } as *mut u8;
    if p.is_null() {
        crate::bail!(MemoryAlloc, "malloc of {} bytes failed", data.len());
    }
    // SAFETY: `p` holds at least `data.len()` bytes and does not overlap `data`.
    unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    Ok(p)
}

/// The block count of a VL-block chunk, or `BLOSC2_ERROR_INVALID_PARAM`.
fn vl_nblocks(chunk: &[u8]) -> crate::Result<usize> {
    let h = ChunkHeader::parse(chunk)?;
    if !h.vl_blocks() {
        crate::bail!(InvalidParam, "chunk does not use VL blocks");
    }
    Ok(h.blocksize())
}

/// Decodes every block of a VL-block chunk into buffers allocated with
/// `malloc` (`dests[i]`, `destsizes[i]`); the caller frees them. Returns the
/// number of blocks or a negative error (`BLOSC2_ERROR_INVALID_PARAM` when
/// `maxblocks` is too small).
///
/// # Safety
/// `dests` and `destsizes` are writable for `maxblocks` entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dests: *mut *mut c_void,
    destsizes: *mut i32,
    maxblocks: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded.
        let c = unsafe { ctx_ref(context) }?;
        need_dctx(c)?;
        if dests.is_null() || destsizes.is_null() || maxblocks <= 0 {
            crate::bail!(
                InvalidParam,
                "invalid destinations for VL-block decompression"
            );
        }
        // SAFETY: the caller's contract: `src` readable for `srcsize` bytes.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        let nblocks = vl_nblocks(chunk)?;
        if nblocks > maxblocks as usize {
            crate::bail!(InvalidParam, "{nblocks} blocks, only {maxblocks} entries");
        }
        let blocks = c.decomp.decompress_vl(chunk)?;
        // SAFETY: both lists are writable for `maxblocks >= blocks.len()` entries.
        let (outs, sizes) = unsafe {
            (
                super::convert::out_items(dests, blocks.len(), "dests")?,
                super::convert::out_items(destsizes, blocks.len(), "destsizes")?,
            )
        };
        for (i, b) in blocks.iter().enumerate() {
            match malloc_copy(b) {
                Ok(p) => {
                    outs[i].write(p as *mut c_void);
                    sizes[i].write(as_int(b.len())?);
                }
                Err(e) => {
                    for o in outs.iter_mut().take(i) {
                        // SAFETY: entries before `i` were written above,
                        // each with a pointer from `malloc_copy`.
                        unsafe { libc::free(o.assume_init()) };
                        o.write(core::ptr::null_mut());
                    }
                    return Err(e);
                }
            }
        }
        as_int(blocks.len())
    })
}

/// Decodes block `nblock` of a VL-block chunk into a new `malloc` buffer
/// (`*dest`, `*destsize`; the caller frees it). Returns its size or a
/// negative error (`BLOSC2_ERROR_INVALID_PARAM` for a block out of range).
///
/// # Safety
/// `dest` and `destsize` are writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract, forwarded.
        let c = unsafe { ctx_ref(context) }?;
        need_dctx(c)?;
        if dest.is_null() || destsize.is_null() {
            crate::bail!(InvalidParam, "dest and destsize must not be NULL");
        }
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        let nblocks = vl_nblocks(chunk)?;
        if nblock < 0 || nblock as usize >= nblocks {
            crate::bail!(InvalidParam, "block {nblock} out of range [0, {nblocks})");
        }
        let block = c.decomp.decompress_vl_block(chunk, nblock as usize)?;
        let n = as_int(block.len())?;
        let p = malloc_copy(&block)?;
        // SAFETY: both outputs are writable per the contract (non-NULL checked).
        unsafe {
            *dest = p;
            *destsize = n;
        }
        Ok(n)
    })
}

/// Stores the number of blocks of a VL-block chunk in `*nblocks`. Returns 0
/// or a negative error (`BLOSC2_ERROR_INVALID_PARAM` for NULL pointers or a
/// chunk without VL blocks).
///
/// # Safety
/// `src` readable for `srcsize` bytes; `nblocks` writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlchunk_get_nblocks(
    src: *const c_void,
    srcsize: i32,
    nblocks: *mut i32,
) -> c_int {
    guard_code(|| {
        if src.is_null() || nblocks.is_null() {
            crate::bail!(InvalidParam, "src and nblocks must not be NULL");
        }
        // SAFETY: the caller's contract.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        let n = as_int(vl_nblocks(chunk)?)?;
        // SAFETY: non-NULL and writable per the contract.
        unsafe { *nblocks = n };
        Ok(0)
    })
}

// ---- Special chunks -------------------------------------------------------------

fn special(
    cparams: &blosc2_cparams,
    kind: Special,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    value: *const c_void,
) -> crate::Result<c_int> {
    let extra = if kind == Special::Value {
        cparams.typesize.max(0)
    } else {
        0
    };
    if destsize < 32 + extra {
        crate::bail!(Data, "dest buffer is not long enough");
    }
    if cparams.typesize <= 0 {
        crate::bail!(
            InvalidParam,
            "typesize {} must be positive",
            cparams.typesize
        );
    }
    if nbytes < 0 {
        crate::bail!(InvalidParam, "nbytes {nbytes} is negative");
    }
    if (kind != Special::Zero || nbytes > 0) && nbytes % cparams.typesize != 0 {
        crate::bail!(Data, "nbytes must be a multiple of typesize");
    }
    // The reference builds a compression context (so the same parameter
    // checks and environment overrides apply); creating one failing is
    // reported as a NULL pointer there.
    let mut cp = *cparams;
    cp.prefilter = None;
    super::blosc1::env_overrides::apply_to_cparams(&mut cp)
        .map_err(|e| crate::err!(NullPointer, "cannot create a context: {e}"))?;
    let core = core_cparams(&cp);
    Compressor::new(core.clone())
        .map_err(|e| crate::err!(NullPointer, "cannot create a context: {e}"))?;
    let val = if kind == Special::Value {
        // SAFETY: `value` is readable for `typesize` bytes per the contract.
        Some(unsafe { src_slice(value, cparams.typesize, "repeatval") }?)
    } else {
        None
    };
    let chunk = make_special_with(&core, kind, nbytes as usize, val)?;
    // SAFETY: `dest` is writable for `destsize` bytes per the contract.
    let dst = unsafe { dst_slice(dest, destsize, "dest") }?;
    if chunk.len() > dst.len() {
        crate::bail!(Data, "dest buffer is not long enough");
    }
    dst[..chunk.len()].copy_from_slice(&chunk);
    as_int(chunk.len())
}

/// Writes a chunk of `nbytes` zeros (header only) into `dest`. Returns 32,
/// or a negative error (`BLOSC2_ERROR_DATA` when `destsize` < 32 or `nbytes`
/// is not a multiple of the typesize).
///
/// # Safety
/// `dest` is writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        special(
            &cparams,
            Special::Zero,
            nbytes,
            dest,
            destsize,
            core::ptr::null(),
        )
    })
}

/// Writes a chunk of NaNs (typesize 4 or 8) into `dest`. Returns 32 or a
/// negative error.
///
/// # Safety
/// `dest` is writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        special(
            &cparams,
            Special::Nan,
            nbytes,
            dest,
            destsize,
            core::ptr::null(),
        )
    })
}

/// Writes a chunk of `typesize`-byte copies of `*repeatval` into `dest`.
/// Returns `32 + typesize` or a negative error.
///
/// # Safety
/// `dest` is writable for `destsize` bytes; `repeatval` readable for
/// `cparams.typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    guard_code(|| special(&cparams, Special::Value, nbytes, dest, destsize, repeatval))
}

/// Writes a chunk of uninitialised contents (decoding leaves `dest` as it
/// is) into `dest`. Returns 32 or a negative error.
///
/// # Safety
/// `dest` is writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        special(
            &cparams,
            Special::Uninit,
            nbytes,
            dest,
            destsize,
            core::ptr::null(),
        )
    })
}

// ---- Header queries -----------------------------------------------------------

/// Reads `nbytes`, `cbytes` and `blocksize` from a chunk header (NULL outputs
/// are skipped). Returns 0, or a negative error with the outputs set to 0.
///
/// # Safety
/// `cbuffer` points to a chunk header; the outputs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut i32,
    cbytes: *mut i32,
    blocksize: *mut i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract.
        let r = match unsafe { header_slice(cbuffer) } {
            Ok(head) => b2nd_core::chunk::cbuffer_sizes(head),
            Err(e) => Err(e),
        };
        let (n, c, b) = match &r {
            Ok((n, c, b)) => (*n as i32, *c as i32, *b as i32),
            Err(_) => (0, 0, 0),
        };
        // SAFETY: each output is NULL or writable per the contract.
        unsafe {
            if let Some(p) = nbytes.as_mut() {
                *p = n;
            }
            if let Some(p) = cbytes.as_mut() {
                *p = c;
            }
            if let Some(p) = blocksize.as_mut() {
                *p = b;
            }
        }
        r.map(|_| 0)
    })
}

/// Reads the format and codec versions of a chunk (0 and 0 on a bad header).
///
/// # Safety
/// `cbuffer` points to a chunk header; the outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    versionlz: *mut c_int,
) {
    guard((), || {
        // SAFETY: the caller's contract.
        let h = unsafe { header_slice(cbuffer) }.and_then(ChunkHeader::parse_unchecked_len);
        let (v, vlz) = match h {
            Ok(h) => (c_int::from(h.version()), c_int::from(h.versionlz())),
            Err(_) => (0, 0),
        };
        // SAFETY: the outputs are NULL or writable per the contract.
        unsafe {
            if let Some(p) = version.as_mut() {
                *p = v;
            }
            if let Some(p) = versionlz.as_mut() {
                *p = vlz;
            }
        }
    })
}

/// Library names by library code (`BLOSC_*_LIB`).
fn clibname(code: u8) -> Option<&'static CStr> {
    match code {
        0 => Some(c"BloscLZ"),
        1 => Some(c"LZ4"),
        3 => Some(c"Zlib"),
        4 => Some(c"Zstd"),
        _ => None,
    }
}

/// The name of the library a chunk was compressed with (a static string), or
/// NULL on a bad header.
///
/// # Safety
/// `cbuffer` points to a chunk header.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard(core::ptr::null(), || {
        // SAFETY: the caller's contract.
        let Ok(h) = (unsafe { header_slice(cbuffer) }).and_then(ChunkHeader::parse_unchecked_len)
        else {
            return core::ptr::null();
        };
        let code = (h.flags() & 0xe0) >> 5;
        match clibname(code) {
            Some(n) => n.as_ptr(),
            None => user_complib_cname(code).unwrap_or(core::ptr::null()),
        }
    })
}

// ---- Codec names ----------------------------------------------------------------

/// Built-in codecs: (code, name, library code).
const BUILTIN: [(u8, &CStr, u8); 5] = [
    (0, c"blosclz", 0),
    (1, c"lz4", 1),
    (2, c"lz4hc", 1),
    (4, c"zlib", 3),
    (5, c"zstd", 4),
];

/// The reference's plugin codecs: (code, name), the first four built in
/// here, the others loaded from their plugin libraries (`super::plugin`).
/// Like the reference after `blosc2_init`, they answer name lookups but are
/// not in `blosc2_list_compressors`.
const PLUGINS: [(u8, &CStr); 9] = [
    (32, c"ndlz"),
    (33, c"zfp_acc"),
    (34, c"zfp_prec"),
    (35, c"zfp_rate"),
    (36, c"openhtj2k"),
    (37, c"grok"),
    (38, c"openzl"),
    (39, c"j2k"),
    (40, c"htj2k"),
];

/// Stores the (static) name of codec `compcode` in `*compname` and returns
/// the code, or -1 (and NULL) for an unknown code.
///
/// # Safety
/// `compname` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compcode_to_compname(
    compcode: c_int,
    compname: *mut *const c_char,
) -> c_int {
    guard(-1, || {
        let found = BUILTIN
            .iter()
            .find(|(c, _, _)| c_int::from(*c) == compcode)
            .map(|(_, n, _)| n.as_ptr())
            .or_else(|| {
                PLUGINS
                    .iter()
                    .find(|(c, _)| c_int::from(*c) == compcode)
                    .map(|(_, n)| n.as_ptr())
            })
            .or_else(|| u8::try_from(compcode).ok().and_then(user_codec_cname));
        // SAFETY: NULL or writable per the contract.
        if let Some(out) = unsafe { compname.as_mut() } {
            *out = found.unwrap_or(core::ptr::null());
        }
        if found.is_some() {
            compcode
        } else {
            -1
        }
    })
}

/// The code of the codec called `compname`, or -1.
///
/// # Safety
/// `compname` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compname_to_compcode(compname: *const c_char) -> c_int {
    guard(-1, || {
        if compname.is_null() {
            return -1;
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(compname) };
        compcode_of(name).unwrap_or(-1)
    })
}

/// The code of a built-in or registered codec name.
pub(super) fn compcode_of(name: &CStr) -> Option<c_int> {
    BUILTIN
        .iter()
        .find(|(_, n, _)| *n == name)
        .map(|(c, _, _)| c_int::from(*c))
        .or_else(|| {
            PLUGINS
                .iter()
                .find(|(_, n)| *n == name)
                .map(|(c, _)| c_int::from(*c))
        })
        .or_else(|| user_codec_by_name(name).map(|(c, _)| c_int::from(c)))
}

/// The built-in codecs as a static comma-separated list.
#[no_mangle]
pub extern "C" fn blosc2_list_compressors() -> *const c_char {
    c"blosclz,lz4,lz4hc,zlib,zstd".as_ptr()
}

/// Copies `s` into a `malloc` buffer the caller frees.
fn malloc_cstr(s: &[u8]) -> crate::Result<*mut c_char> {
    let mut v = s.to_vec();
    v.push(0);
    Ok(malloc_copy(&v)? as *mut c_char)
}

/// Stores the library name and version behind codec `compname` in
/// `*complib` and `*version` (strings from `malloc`; the caller frees them)
/// and returns the library code, or `BLOSC2_ERROR_NOT_FOUND` (outputs NULL).
///
/// # Safety
/// `compname` is NUL-terminated; `complib` and `version` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_complib_info(
    compname: *const c_char,
    complib: *mut *mut c_char,
    version: *mut *mut c_char,
) -> c_int {
    guard_code(|| {
        if compname.is_null() {
            crate::bail!(NullPointer, "compname is NULL");
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(compname) };
        let (code, lib): (u8, Vec<u8>) =
            if let Some((_, _, l)) = BUILTIN.iter().find(|(_, n, _)| *n == name) {
                (
                    *l,
                    clibname(*l)
                        .map(|c| c.to_bytes().to_vec())
                        .unwrap_or_default(),
                )
            } else if let Some((c, n)) = PLUGINS.iter().find(|(_, n)| *n == name) {
                // The reference registers these at init, each its own
                // library named after the codec, of unknown version.
                (*c, n.to_bytes().to_vec())
            } else if let Some((_, l)) = user_codec_by_name(name) {
                (l, name.to_bytes().to_vec())
            } else {
                // SAFETY: outputs NULL or writable.
                unsafe {
                    if let Some(p) = complib.as_mut() {
                        *p = core::ptr::null_mut();
                    }
                    if let Some(p) = version.as_mut() {
                        *p = core::ptr::null_mut();
                    }
                }
                crate::bail!(NotFound, "codec {name:?} not found");
            };
        let ver = b2nd_core::codecs::library_version(code).unwrap_or_else(|| "unknown".into());
        let lib_p = malloc_cstr(&lib)?;
        let ver_p = match malloc_cstr(ver.as_bytes()) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: allocated just above by malloc.
                unsafe { libc::free(lib_p as *mut c_void) };
                return Err(e);
            }
        };
        // SAFETY: outputs NULL or writable; on NULL the string is freed.
        unsafe {
            match complib.as_mut() {
                Some(p) => *p = lib_p,
                None => libc::free(lib_p as *mut c_void),
            }
            match version.as_mut() {
                Some(p) => *p = ver_p,
                None => libc::free(ver_p as *mut c_void),
            }
        }
        Ok(c_int::from(code))
    })
}

#[cfg(test)]
mod tests {
    use super::super::context::{blosc2_create_cctx, blosc2_create_dctx, blosc2_free_ctx};
    use super::super::defaults::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};
    use super::*;

    fn data() -> Vec<u8> {
        (0..40_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect()
    }

    #[test]
    fn ctx_round_trip_getitem_and_errors() {
        let src = data();
        let mut cp = CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.compcode = 1; // lz4
        let cctx = blosc2_create_cctx(cp);
        let dctx = blosc2_create_dctx(DPARAMS_DEFAULTS);
        assert!(!cctx.is_null() && !dctx.is_null());
        let mut chunk = vec![0u8; src.len() + 32];
        let mut out = vec![0u8; src.len()];
        // SAFETY: every buffer is live and sized as passed.
        unsafe {
            let n = blosc2_compress_ctx(
                cctx,
                src.as_ptr().cast(),
                src.len() as i32,
                chunk.as_mut_ptr().cast(),
                chunk.len() as i32,
            );
            assert!(n > 32 && (n as usize) < src.len(), "{n}");
            let d = blosc2_decompress_ctx(
                dctx,
                chunk.as_ptr().cast(),
                n,
                out.as_mut_ptr().cast(),
                out.len() as i32,
            );
            assert_eq!(d as usize, src.len());
            assert_eq!(out, src);
            let mut part = [0u8; 40];
            assert_eq!(
                blosc2_getitem_ctx(
                    dctx,
                    chunk.as_ptr().cast(),
                    n,
                    1000,
                    10,
                    part.as_mut_ptr().cast(),
                    40
                ),
                40
            );
            assert_eq!(&part[..], &src[4000..4040]);
            // Errors: wrong kind of context, small dest, NULLs, truncation.
            assert_eq!(
                blosc2_decompress_ctx(
                    cctx,
                    chunk.as_ptr().cast(),
                    n,
                    out.as_mut_ptr().cast(),
                    out.len() as i32
                ),
                -12
            );
            assert_eq!(
                blosc2_decompress_ctx(dctx, chunk.as_ptr().cast(), n, out.as_mut_ptr().cast(), 100),
                -6
            );
            assert_eq!(
                blosc2_decompress_ctx(dctx, core::ptr::null(), n, out.as_mut_ptr().cast(), 100),
                -32
            );
            assert_eq!(
                blosc2_decompress_ctx(
                    dctx,
                    chunk.as_ptr().cast(),
                    -1,
                    out.as_mut_ptr().cast(),
                    100
                ),
                -5
            );
            assert!(
                blosc2_decompress_ctx(
                    dctx,
                    chunk.as_ptr().cast(),
                    n - 10,
                    out.as_mut_ptr().cast(),
                    out.len() as i32
                ) < 0
            );
            assert_eq!(
                blosc2_compress_ctx(
                    core::ptr::null_mut(),
                    src.as_ptr().cast(),
                    10,
                    chunk.as_mut_ptr().cast(),
                    100
                ),
                -32
            );
            let (mut nb, mut cb, mut bs) = (0, 0, 0);
            assert_eq!(
                blosc2_cbuffer_sizes(chunk.as_ptr().cast(), &mut nb, &mut cb, &mut bs),
                0
            );
            assert_eq!((nb as usize, cb), (src.len(), n));
            blosc2_free_ctx(cctx);
            blosc2_free_ctx(dctx);
        }
    }

    #[test]
    fn names() {
        let mut p: *const c_char = core::ptr::null();
        // SAFETY: `p` is a valid out-pointer; names are static C strings.
        unsafe {
            assert_eq!(blosc2_compcode_to_compname(5, &mut p), 5);
            assert_eq!(CStr::from_ptr(p), c"zstd");
            assert_eq!(blosc2_compcode_to_compname(3, &mut p), -1);
            assert!(p.is_null());
            assert_eq!(blosc2_compname_to_compcode(c"lz4hc".as_ptr()), 2);
            assert_eq!(blosc2_compname_to_compcode(c"nope".as_ptr()), -1);
            let (mut lib, mut ver) = (core::ptr::null_mut(), core::ptr::null_mut());
            assert_eq!(
                blosc2_get_complib_info(c"zstd".as_ptr(), &mut lib, &mut ver),
                4
            );
            assert_eq!(CStr::from_ptr(lib), c"Zstd");
            assert!(CStr::from_ptr(ver).to_bytes().starts_with(b"1."));
            libc::free(lib.cast());
            libc::free(ver.cast());
            assert_eq!(
                blosc2_get_complib_info(c"nope".as_ptr(), &mut lib, &mut ver),
                -16
            );
        }
    }
}
