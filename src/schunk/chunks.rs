//! Chunk-level calls on a super-chunk: append, insert, update, delete,
//! reorder, read (whole, lazy, decompressed), slices, sparse items and
//! special fills.
//!
//! Chunks passed in by C are measured from their own header before a slice
//! is built over them: the first 16 bytes (the minimal header) are read, then
//! the slice spans the `cbytes` the header declares.

use core::ffi::{c_int, c_void};

use super::{intent_schunk, malloc_copy, read_schunk, with_schunk, SchunkBox};
use crate::constants::{
    BLOSC2_SPECIAL_NAN, BLOSC2_SPECIAL_UNINIT, BLOSC2_SPECIAL_VALUE, BLOSC2_SPECIAL_ZERO,
    BLOSC_EXTENDED_HEADER_LENGTH, BLOSC_MIN_HEADER_LENGTH,
};
use crate::convert;
use crate::types::blosc2_schunk;
use b2nd_core::schunk::Special;
use crate::Result;
use std::borrow::Cow;

/// The bytes of a compressed chunk given by pointer.
///
/// # Safety
/// `chunk` is NULL or points to a chunk whose header is readable and whose
/// declared `cbytes` bytes are readable.
unsafe fn chunk_slice<'a>(chunk: *const u8) -> Result<&'a [u8]> {
    if chunk.is_null() {
        crate::bail!(NullPointer, "chunk is NULL");
    }
    // SAFETY: every chunk starts with a header of at least the minimal length.
    let head = unsafe { convert::items(chunk, BLOSC_MIN_HEADER_LENGTH, "chunk") }?;
    let cbytes = match b2nd_core::chunk::cbuffer_sizes(head) {
        Ok((_, cbytes, _)) => cbytes,
        // The parser asks for more bytes only for an extended header, after
        // checking that the chunk's cbytes covers one: reading it is in bounds.
        Err(e) if e.kind() == crate::ErrorKind::ReadBuffer => {
            let ext = BLOSC_EXTENDED_HEADER_LENGTH as usize;
            // SAFETY: the chunk declares at least `ext` bytes (see above).
            let head = unsafe { convert::items(chunk, ext, "chunk") }?;
            b2nd_core::chunk::cbuffer_sizes(head)?.1
        }
        Err(e) => return Err(e),
    };
    // SAFETY: the chunk's header says it spans `cbytes` bytes; the caller
    // promises they are readable.
    unsafe { convert::items(chunk, cbytes, "chunk") }
}

/// The reference's index check: negative or past-the-end chunk numbers
/// (past `nchunks` when `allow_end`) are `BLOSC2_ERROR_INVALID_PARAM`.
fn check_nchunk(b: &SchunkBox, nchunk: i64, allow_end: bool) -> Result<()> {
    let n = b.core.read().nchunks();
    let ok = nchunk >= 0 && (nchunk < n || (allow_end && nchunk == n));
    if !ok {
        crate::bail!(InvalidParam, "chunk number {nchunk} outside the {n} chunks");
    }
    Ok(())
}

/// Frees a chunk whose ownership the caller passed with `copy == false`.
///
/// # Safety
/// `chunk` was allocated with `malloc` and is not used by the caller again.
unsafe fn take_chunk(chunk: *mut u8, copy: bool) {
    if !copy {
        // SAFETY: per the contract; the core keeps its own copy of the bytes.
        unsafe { libc::free(chunk.cast()) };
    }
}

/// Compresses `nbytes` of `src` into a new chunk and appends it; returns the
/// number of chunks.
///
/// # Safety
/// `schunk` is NULL or live; `src` is NULL or readable for `nbytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_buffer(
    schunk: *mut blosc2_schunk,
    src: *const c_void,
    nbytes: i32,
) -> i64 {
    // Compressed under a write intent (see `intent_schunk`): the callbacks
    // the compression runs (prefilter, user codecs and filters) may read
    // the super-chunk meanwhile. With the parameters of `sc->cctx` (see
    // `SchunkBox::pull`), prefilter included, which is told the chunk number.
    // SAFETY: forwarded contract.
    unsafe {
        intent_schunk(
            schunk,
            |b| {
                // SAFETY: NULL only with a zero count, else readable for
                // `nbytes` bytes per the contract.
                let data = convert::bytes(src, nbytes, "src")?;
                b.core.read().compress_next(data)
            },
            |b, chunk| {
                let n = b.core.write().append_chunk(&chunk)?;
                b.c.current_nchunk = n - 1;
                Ok(n)
            },
        )
    }
}

/// Appends a compressed chunk; returns the number of chunks. With
/// `copy == false` the super-chunk takes the `malloc`ed chunk and `free()`s
/// it once stored (only on success; on error the caller keeps it).
///
/// # Safety
/// `schunk` is NULL or live; `chunk` is NULL or a readable chunk, `malloc`ed
/// when `copy` is false.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_chunk(
    schunk: *mut blosc2_schunk,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let r = b.core.write().append_chunk(chunk_slice(chunk)?)?;
            take_chunk(chunk, copy);
            Ok(r)
        })
    }
}

/// Inserts a compressed chunk at `nchunk`; returns the number of chunks.
/// Ownership as for `blosc2_schunk_append_chunk`.
///
/// # Safety
/// As for `blosc2_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_insert_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            check_nchunk(b, nchunk, true)?;
            let r = b.core.write().insert_chunk(nchunk, chunk_slice(chunk)?)?;
            take_chunk(chunk, copy);
            Ok(r)
        })
    }
}

/// Replaces chunk `nchunk`; returns the number of chunks. Ownership as for
/// `blosc2_schunk_append_chunk`.
///
/// # Safety
/// As for `blosc2_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_update_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            check_nchunk(b, nchunk, false)?;
            let r = b.core.write().update_chunk(nchunk, chunk_slice(chunk)?)?;
            take_chunk(chunk, copy);
            Ok(r)
        })
    }
}

/// Removes chunk `nchunk`; returns the number of chunks.
///
/// # Safety
/// `schunk` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_delete_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            check_nchunk(b, nchunk, false)?;
            b.core.write().delete_chunk(nchunk)
        })
    }
}

/// Reorders the chunks: new chunk `i` is old chunk `offsets_order[i]`
/// (`nchunks` entries). Returns 0.
///
/// # Safety
/// `schunk` is NULL or live; `offsets_order` is NULL or readable for
/// `nchunks` entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_reorder_offsets(
    schunk: *mut blosc2_schunk,
    offsets_order: *mut i64,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let n = usize::try_from(b.core.read().nchunks()).unwrap_or(0);
            if offsets_order.is_null() {
                crate::bail!(NullPointer, "offsets_order is NULL");
            }
            // SAFETY: readable for `nchunks` entries per the contract.
            let order = convert::items(offsets_order, n, "offsets_order")?;
            // The reference rejects a non-permutation as BLOSC2_ERROR_DATA.
            let mut seen = vec![false; n];
            for &o in order {
                match usize::try_from(o).ok().filter(|&i| i < n) {
                    Some(i) if !seen[i] => seen[i] = true,
                    _ => crate::bail!(Data, "offsets_order is not a permutation (entry {o})"),
                }
            }
            b.core.write().reorder_offsets(order)?;
            Ok(0)
        }) as c_int
    }
}

/// Hands a chunk to C: borrowed bytes are returned in place
/// (`needs_free = false`, valid until the super-chunk changes), owned ones as
/// a `malloc`ed copy (`needs_free = true`). Returns the chunk's length.
///
/// # Safety
/// `chunk` and `needs_free` are writable.
unsafe fn hand_out(c: Cow<'_, [u8]>, chunk: *mut *mut u8, needs_free: *mut bool) -> Result<i64> {
    let len = c.len() as i64;
    let (p, free) = match c {
        Cow::Borrowed(s) => (s.as_ptr() as *mut u8, false),
        Cow::Owned(v) => (malloc_copy(&v)?, true),
    };
    // SAFETY: both out-pointers are writable per the contract.
    unsafe {
        *chunk = p;
        *needs_free = free;
    }
    Ok(len)
}

/// [`read_schunk`] of chunk `nchunk`, which `current_nchunk` then names, as
/// the reference leaves it after a chunk read.
///
/// # Safety
/// As for [`read_schunk`].
unsafe fn read_schunk_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    f: impl FnOnce(&SchunkBox) -> crate::Result<i64>,
) -> i64 {
    // SAFETY: forwarded contract.
    let r = unsafe { read_schunk(schunk, f) };
    if r >= 0 {
        // SAFETY: the read succeeded, so `schunk` is a live box; no
        // reference to it is held here. The field is C's (callbacks read
        // it): concurrent readers store to it with relaxed atomics.
        unsafe {
            let field = core::ptr::addr_of_mut!((*schunk).current_nchunk);
            core::sync::atomic::AtomicI64::from_ptr(field)
                .store(nchunk, core::sync::atomic::Ordering::Relaxed);
        }
    }
    r
}

/// Shared body of `get_chunk` and `get_lazychunk`.
///
/// # Safety
/// `schunk` is NULL or live; `chunk` and `needs_free` are NULL or writable.
unsafe fn get_chunk_with(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
    lazy: bool,
) -> c_int {
    // SAFETY: forwarded contract.
    let r = unsafe {
        read_schunk_chunk(schunk, nchunk, |b: &SchunkBox| {
            if chunk.is_null() || needs_free.is_null() {
                crate::bail!(NullPointer, "chunk or needs_free is NULL");
            }
            check_nchunk(b, nchunk, false)?;
            let core = b.core.read();
            let c = if lazy {
                core.get_lazychunk(nchunk)?
            } else {
                core.get_chunk(nchunk)?
            };
            hand_out(c, chunk, needs_free)
        })
    };
    i32::try_from(r).unwrap_or(i32::MAX)
}

/// The compressed chunk `nchunk` in `*chunk`; see `hand_out` for
/// `needs_free`. Returns the chunk's size or a negative code.
///
/// # Safety
/// `schunk` is NULL or live; `chunk` and `needs_free` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { get_chunk_with(schunk, nchunk, chunk, needs_free, false) }
}

/// Like `blosc2_schunk_get_chunk`, but for stored chunks of on-disk frames
/// only the chunk's header and block starts are read: the result is the
/// reference's lazy chunk (lazy bit set, plus a trailer with the chunk
/// number, its offset in the frame and each block's compressed size),
/// always `malloc`ed. `blosc2_decompress_ctx`/`blosc2_getitem_ctx` with the
/// super-chunk's `dctx` decode it, reading only the blocks they need.
///
/// # Safety
/// As for `blosc2_schunk_get_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_lazychunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { get_chunk_with(schunk, nchunk, chunk, needs_free, true) }
}

/// Decompresses chunk `nchunk` into `dest` (`nbytes` bytes of room);
/// returns the bytes written or a negative code.
///
/// # Safety
/// `schunk` is NULL or live; `dest` is NULL or writable for `nbytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_decompress_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    dest: *mut c_void,
    nbytes: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk_chunk(schunk, nchunk, |b| {
            if dest.is_null() {
                crate::bail!(NullPointer, "dest is NULL");
            }
            // SAFETY: writable for `nbytes` bytes per the contract.
            let dst = convert::bytes_mut(dest, nbytes, "dest")?;
            check_nchunk(b, nchunk, false)?;
            Ok(b.core.read().decompress_chunk(nchunk, dst)? as i64)
        }) as c_int
    }
}

/// Bytes between items `start` and `stop`, checked.
fn slice_len(b: &SchunkBox, start: i64, stop: i64) -> Result<usize> {
    let ts = i64::from(b.core.read().typesize());
    let nitems = b.core.read().nbytes() / ts.max(1);
    if start < 0 || stop < start || stop > nitems {
        crate::bail!(InvalidParam, "slice {start}..{stop} outside 0..{nitems}");
    }
    usize::try_from((stop - start) * ts).map_err(|_| crate::err!(InvalidParam, "slice too large"))
}

/// Decompresses items `start..stop` into `buffer`. Returns 0.
///
/// # Safety
/// `schunk` is NULL or live; `buffer` is NULL or writable for
/// `(stop - start) * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk(schunk, |b| {
            let n = slice_len(b, start, stop)?;
            if buffer.is_null() {
                crate::bail!(NullPointer, "buffer is NULL");
            }
            // SAFETY: writable for `n` bytes per the contract.
            let dst = convert::bytes_mut(buffer, n, "buffer")?;
            b.core.read().get_slice_buffer(start, stop, dst)?;
            Ok(0)
        }) as c_int
    }
}

/// Overwrites items `start..stop` from `buffer`. Returns 0.
///
/// # Safety
/// `schunk` is NULL or live; `buffer` is NULL or readable for
/// `(stop - start) * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_set_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        // Under a write intent, as `blosc2_schunk_append_buffer`: the
        // callbacks of the compression may read the super-chunk.
        intent_schunk(
            schunk,
            |b| {
                let n = slice_len(b, start, stop)?;
                if buffer.is_null() {
                    crate::bail!(NullPointer, "buffer is NULL");
                }
                // SAFETY: readable for `n` bytes per the contract.
                let src = convert::bytes(buffer, n, "buffer")?;
                b.core.read().encode_slice(start, stop, src)
            },
            |b, chunks| b.core.write().update_chunks(chunks).map(|()| 0),
        ) as c_int
    }
}

/// Gathers the items at `coords` (item indices) into `buffer`, one
/// `typesize` item after another, decoding the blocks they are in on the
/// decompression context's threads (or the threads callback). Returns 0;
/// `BLOSC2_ERROR_INVALID_PARAM` for negative `ncoords`, NULL arrays or
/// coordinates out of range. Super-chunks that the reference refuses as not
/// supported yet (chunks of varying sizes, VL blocks, an automatic block
/// size) are read item by item.
///
/// # Safety
/// `schunk` is NULL or live; `coords` is readable for `ncoords` entries and
/// `buffer` writable for `ncoords * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_sparse_buffer(
    schunk: *mut blosc2_schunk,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk(schunk, |b| {
            let n = usize::try_from(ncoords)
                .map_err(|_| crate::err!(InvalidParam, "ncoords {ncoords} is negative"))?;
            if n == 0 {
                return Ok(0);
            }
            if coords.is_null() || buffer.is_null() {
                crate::bail!(InvalidParam, "coords and buffer must not be NULL");
            }
            let ts = usize::try_from(b.core.read().typesize())
                .ok()
                .filter(|&t| t > 0)
                .ok_or_else(|| crate::err!(InvalidParam, "the super-chunk has no typesize"))?;
            let total = n
                .checked_mul(ts)
                .ok_or_else(|| crate::err!(InvalidParam, "ncoords too large"))?;
            // SAFETY: readable for `n` entries and writable for `total`
            // bytes per the contract.
            let coords = convert::items(coords, n, "coords")?;
            let dst = convert::bytes_mut(buffer, total, "buffer")?;
            b.core.read().get_sparse_buffer(coords, dst)?;
            Ok(0)
        }) as c_int
    }
}

/// Fills an empty super-chunk with `nitems` zeros, NaNs or uninitialized
/// items in chunks of `chunksize` bytes; returns the number of chunks.
/// `BLOSC2_SPECIAL_VALUE` and unknown kinds give `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `schunk` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_fill_special(
    schunk: *mut blosc2_schunk,
    nitems: i64,
    special_value: c_int,
    chunksize: i32,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let kind = match special_value {
                BLOSC2_SPECIAL_ZERO => Special::Zero,
                BLOSC2_SPECIAL_NAN => Special::Nan,
                BLOSC2_SPECIAL_UNINIT => Special::Uninit,
                BLOSC2_SPECIAL_VALUE => Special::Value,
                other => crate::bail!(InvalidParam, "special value {other} not supported"),
            };
            b.core.write().fill_special(nitems, kind, chunksize)
        })
    }
}

/// Decompresses block `nblock` of the variable-length-block chunk `nchunk`
/// into a new `malloc`ed buffer (`*dest`, the caller frees it) and stores its
/// size in `*destsize`; returns that size. A chunk without VL blocks or a
/// block out of range gives `BLOSC2_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `schunk` is NULL or live; `dest` and `destsize` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_vlblock(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk(schunk, |b| {
            if dest.is_null() || destsize.is_null() {
                crate::bail!(InvalidParam, "dest or destsize is NULL");
            }
            let nb = usize::try_from(nblock)
                .map_err(|_| crate::err!(InvalidParam, "block {nblock} is negative"))?;
            check_nchunk(b, nchunk, false)?;
            let core = b.core.read();
            let dparams = core.dparams().clone();
            let chunk = core.get_chunk(nchunk)?;
            let block = b2nd_core::chunk::Decompressor::new(dparams)
                .decompress_vl_block(&chunk, nb)
                .map_err(|e| match e.kind() {
                    // The reference reports a block out of range as a bad parameter.
                    crate::ErrorKind::InvalidIndex => {
                        crate::Error::new(crate::ErrorKind::InvalidParam, e.detail())
                    }
                    _ => e,
                })?;
            let size = i32::try_from(block.len())
                .map_err(|_| crate::err!(TwoGbLimit, "block of {} bytes", block.len()))?;
            let p = malloc_copy(&block)?;
            // SAFETY: both out-pointers are writable per the contract.
            *dest = p;
            *destsize = size;
            Ok(i64::from(size))
        }) as c_int
    }
}
