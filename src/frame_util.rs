//! Path utilities (`blosc2_remove_urlpath`, `blosc2_remove_dir`,
//! `blosc2_rename_urlpath`), index utilities (`blosc2_unidim_to_multidim`,
//! `blosc2_multidim_to_unidim`, `blosc2_get_slice_nchunks`) and the packed
//! super-chunk pair `b2nd_packed_pack` / `b2nd_packed_unpack`.

use core::ffi::{c_char, c_int};
use std::path::Path;

use super::constants::B2ND_MAX_DIM;
use super::convert;
use super::guard;
use super::schunk::{malloc_copy, this, SchunkBox};
use super::storage::path_from_c;
use super::types::blosc2_schunk;
use crate::Result;

/// Returns 0 or the error's code.
fn code(r: Result<()>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => super::report(&e),
    }
}

/// Removes the directory `path` and the files in it. A missing directory
/// gives `BLOSC2_ERROR_NOT_FOUND`. Returns 0 on success.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_dir(path: *const c_char) -> c_int {
    guard(crate::Error::FAILURE_CODE, || {
        code((|| {
            // SAFETY: forwarded contract.
            let p = unsafe { path_from_c(path, "path") }
                .map_err(|e| crate::err!(InvalidParam, "{}", e.detail()))?;
            remove_dir(&p)
        })())
    })
}

fn remove_dir(p: &Path) -> Result<()> {
    if !p.is_dir() {
        crate::bail!(NotFound, "{}: no such directory", p.display());
    }
    std::fs::remove_dir_all(p).map_err(|e| crate::err!(Failure, "{}: {e}", p.display()))
}

/// Removes the file or directory `path`; NULL and missing paths succeed.
/// Returns 0, or `BLOSC2_ERROR_FILE_REMOVE` when a file cannot be removed.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_urlpath(path: *const c_char) -> c_int {
    guard(crate::Error::FAILURE_CODE, || {
        if path.is_null() {
            return 0;
        }
        code((|| {
            // SAFETY: forwarded contract.
            let p = unsafe { path_from_c(path, "path") }?;
            b2nd_core::schunk::SChunk::remove_urlpath(p)
        })())
    })
}

/// Renames a file or directory. NULL arguments succeed doing nothing; a
/// missing source or a failed rename gives `BLOSC2_ERROR_FAILURE`.
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_rename_urlpath(
    old_urlpath: *mut c_char,
    new_path: *mut c_char,
) -> c_int {
    guard(crate::Error::FAILURE_CODE, || {
        if old_urlpath.is_null() || new_path.is_null() {
            return 0;
        }
        code((|| {
            // SAFETY: forwarded contract.
            let (from, to) = unsafe {
                (
                    path_from_c(old_urlpath, "old_urlpath")?,
                    path_from_c(new_path, "new_path")?,
                )
            };
            std::fs::rename(&from, &to)
                .map_err(|e| crate::err!(Failure, "{} -> {}: {e}", from.display(), to.display()))
        })())
    })
}

/// Writes the C-order multidimensional index of linear position `i` in an
/// array of `shape` (`ndim` entries, at most `B2ND_MAX_DIM`) into `index`.
/// Nothing is written for `ndim == 0`, NULL pointers, too many dimensions
/// or a zero extent.
///
/// # Safety
/// `shape` is readable and `index` writable for `ndim` entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_unidim_to_multidim(
    ndim: u8,
    shape: *mut i64,
    i: i64,
    index: *mut i64,
) {
    guard((), || {
        let n = usize::from(ndim);
        if n == 0 || n > B2ND_MAX_DIM as usize || shape.is_null() || index.is_null() {
            return;
        }
        // SAFETY: readable/writable for `ndim` entries per the contract
        // (both non-NULL, checked above).
        let (Ok(shape), Ok(index)) = (unsafe { convert::items(shape, n, "shape") }, unsafe {
            convert::out_items(index, n, "index")
        }) else {
            return;
        };
        let mut strides = [1i64; B2ND_MAX_DIM as usize];
        for j in (0..n - 1).rev() {
            strides[j] = shape[j + 1].saturating_mul(strides[j + 1]);
        }
        if strides[..n].iter().any(|&s| s == 0) {
            return;
        }
        index[0].write(i / strides[0]);
        for j in 1..n {
            index[j].write((i % strides[j - 1]) / strides[j]);
        }
    })
}

/// Writes `sum(index[j] * strides[j])` into `*i`.
///
/// # Safety
/// `index` and `strides` are readable for `ndim` entries; `i` is writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_multidim_to_unidim(
    index: *const i64,
    ndim: i8,
    strides: *const i64,
    i: *mut i64,
) {
    guard((), || {
        if i.is_null() {
            return;
        }
        let n = usize::try_from(ndim).unwrap_or(0);
        let mut acc = 0i64;
        if n > 0 && !index.is_null() && !strides.is_null() {
            // SAFETY: readable for `ndim` entries per the contract.
            let (Ok(idx), Ok(st)) = (unsafe { convert::items(index, n, "index") }, unsafe {
                convert::items(strides, n, "strides")
            }) else {
                return;
            };
            acc = idx
                .iter()
                .zip(st)
                .fold(0i64, |a, (&x, &s)| a.wrapping_add(x.wrapping_mul(s)));
        }
        // SAFETY: writable per the contract.
        unsafe { *i = acc };
    })
}

/// Indexes of the chunks a slice touches, in a `malloc`ed array in
/// `*chunks_idx` (NULL when there are none); returns their number. For a
/// b2nd array (a "b2nd" or "caterva" metalayer) `start`/`stop` hold `ndim`
/// item coordinates; otherwise one item index each.
///
/// # Safety
/// `schunk` is NULL or live; `start`/`stop` readable for `ndim` (or 1)
/// entries; `chunks_idx` writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_slice_nchunks(
    schunk: *mut blosc2_schunk,
    start: *mut i64,
    stop: *mut i64,
    chunks_idx: *mut *mut i64,
) -> i64 {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let mut b = unsafe { this(schunk) }?;
        if start.is_null() || stop.is_null() || chunks_idx.is_null() {
            crate::bail!(NullPointer, "start, stop or chunks_idx is NULL");
        }
        // SAFETY: forwarded contract.
        let idx = unsafe { slice_chunks(&mut b, start, stop) }?;
        let p = if idx.is_empty() {
            core::ptr::null_mut()
        } else {
            let bytes: Vec<u8> = idx.iter().flat_map(|v| v.to_ne_bytes()).collect();
            malloc_copy(&bytes)?.cast::<i64>()
        };
        // SAFETY: writable per the contract.
        unsafe { *chunks_idx = p };
        Ok(idx.len() as i64)
    })
}

/// The chunk indexes for `blosc2_get_slice_nchunks`.
///
/// # Safety
/// As for `blosc2_get_slice_nchunks`.
unsafe fn slice_chunks(b: &mut SchunkBox, start: *const i64, stop: *const i64) -> Result<Vec<i64>> {
    let nd_meta = ["b2nd", "caterva"]
        .iter()
        .find_map(|n| b.core.read().meta_get(n).ok());
    let Some(meta) = nd_meta else {
        if b.core.read().nchunks() == 0 {
            return Ok(Vec::new());
        }
        let cs = i64::from(b.core.read().chunksize());
        if cs <= 0 {
            crate::bail!(InvalidParam, "variable-size chunks have no fixed slice map");
        }
        // SAFETY: one entry each per the contract.
        let (s, e) = unsafe { (*start, *stop) };
        let ts = i64::from(b.core.read().typesize());
        let (bs, be) = s
            .checked_mul(ts)
            .zip(e.checked_mul(ts))
            .filter(|&(bs, be)| bs >= 0 && be >= bs)
            .ok_or_else(|| crate::err!(InvalidParam, "bad slice {s}..{e}"))?;
        let first = bs / cs;
        let last = (be + cs - 1) / cs;
        return Ok((first..last).collect());
    };
    let nd = b2nd_core::ndarray::meta::NdMeta::from_meta_bytes(&meta, b.core.read().typesize())?;
    let geo = b2nd_core::ndarray::geometry::Geometry::from_meta(&nd, b.core.read().typesize())?;
    let n = nd.ndim();
    if n == 0 {
        return Ok(vec![0]);
    }
    // SAFETY: `ndim` entries each per the contract.
    let (s, e) = unsafe {
        (
            convert::items(start, n, "start")?,
            convert::items(stop, n, "stop")?,
        )
    };
    let grid = geo.chunk_grid();
    let mut walk = grid.walk(s, e)?;
    let mut out = Vec::new();
    while let Some(cell) = walk.next() {
        out.push(cell.index());
    }
    Ok(out)
}

/// The chunk offsets of the frame behind a super-chunk, decoded, in a
/// `malloc`ed array of `nchunks` entries the caller frees (special chunks
/// appear as the negative values the frame format uses). NULL for a
/// super-chunk without a frame (an in-memory chunk list) or on error.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_frame_get_offsets(schunk: *mut blosc2_schunk) -> *mut i64 {
    guard(core::ptr::null_mut(), || {
        let r = (|| {
            // SAFETY: forwarded contract.
            let b = unsafe { this(schunk) }?;
            if !b.core.read().is_frame() {
                crate::bail!(FrameType, "the super-chunk has no frame");
            }
            let (urlpath, contiguous, io) = {
                let core = b.core.read();
                let st = core.storage();
                (st.urlpath.clone(), st.contiguous, st.io.clone())
            };
            let io = io.unwrap_or_else(b2nd_core::frame::StdIo::shared);
            let place = match (&urlpath, contiguous) {
                (Some(p), true) => b2nd_core::frame::Place::File {
                    io,
                    path: p.clone(),
                    offset: b.file_offset,
                },
                (Some(p), false) => b2nd_core::frame::Place::Sparse { io, dir: p.clone() },
                (None, _) => b2nd_core::frame::Place::Memory(b2nd_core::frame::MemFile {
                    data: b.core.write().to_buffer()?,
                }),
            };
            let (frame, _, _) = b2nd_core::frame::Frame::open(place)?;
            let bytes: Vec<u8> = frame
                .offsets()?
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            Ok(malloc_copy(&bytes)?.cast::<i64>())
        })();
        match r {
            Ok(p) => p,
            Err(e) => {
                super::report(&e);
                core::ptr::null_mut()
            }
        }
    })
}

/// Serializes a super-chunk in the packed super-chunk format (the 96-byte
/// "Blosc packed header" of early Blosc2, followed by the data-starts index
/// and the chunks) into a `malloc`ed buffer stored in `*packed`; the caller
/// frees it with `free()`. Returns the buffer's length or a negative
/// `BLOSC2_ERROR_*` code. Not part of the reference API.
///
/// # Safety
/// `schunk` is NULL or live; `packed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_packed_pack(schunk: *mut blosc2_schunk, packed: *mut *mut u8) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        super::schunk::with_schunk(schunk, |b| {
            if packed.is_null() {
                crate::bail!(NullPointer, "packed is NULL");
            }
            let bytes = b2nd_core::schunk::packed::pack(&mut b.core.write())?;
            *packed = malloc_copy(&bytes)?;
            Ok(bytes.len() as i64)
        })
    }
}

/// Rebuilds an in-memory super-chunk from `len` bytes written by
/// `b2nd_packed_pack`; the buffer is only read. Free the result with
/// `blosc2_schunk_free`. NULL on error. Not part of the reference API.
///
/// # Safety
/// `packed` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_packed_unpack(packed: *const u8, len: i64) -> *mut blosc2_schunk {
    guard(core::ptr::null_mut(), || {
        let r = (|| {
            if packed.is_null() {
                crate::bail!(NullPointer, "packed is NULL");
            }
            // SAFETY: readable for `len` bytes per the contract.
            let bytes = unsafe { convert::items(packed, len, "packed") }?;
            let core = b2nd_core::schunk::packed::unpack(bytes)?;
            Ok(SchunkBox::into_c(core, None))
        })();
        match r {
            Ok(p) => p,
            Err(e) => {
                super::report(&e);
                core::ptr::null_mut()
            }
        }
    })
}
