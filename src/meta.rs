//! Fixed-size metalayers (`blosc2_meta_*`) and variable-length metalayers
//! (`blosc2_vlmeta_*`) of a super-chunk.
//!
//! Return conventions follow the reference: the index of the (vl)metalayer
//! on success; `BLOSC2_ERROR_NOT_FOUND` for a missing name;
//! `BLOSC2_ERROR_INVALID_PARAM` for NULL arguments, negative lengths, names
//! longer than 31 bytes and duplicate adds. As in the reference, an update
//! of a fixed-size metalayer with more bytes than it holds changes nothing
//! and still returns the index (the error is traced).
//!
//! Contents returned by `blosc2_meta_get` and `blosc2_vlmeta_get` are
//! `malloc`ed copies the caller frees (NULL for empty content).

use core::ffi::{c_char, c_int};

use super::constants::BLOSC2_METALAYER_NAME_MAXLEN;
use super::convert;
use super::schunk::{claimed_vlmetas, malloc_copy, read_meta, read_schunk, with_schunk};
use super::storage::cparams_from_c;
use super::types::{blosc2_cparams, blosc2_schunk};
use crate::Result;

/// A metalayer name from C, checked for NULL, UTF-8 and length.
///
/// # Safety
/// `name` is NULL or NUL-terminated.
unsafe fn name_from_c<'a>(name: *const c_char) -> Result<&'a str> {
    if name.is_null() {
        crate::bail!(InvalidParam, "name is NULL");
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    let s = unsafe { convert::c_str(name, "name") }?;
    if s.len() > BLOSC2_METALAYER_NAME_MAXLEN as usize {
        crate::bail!(
            InvalidParam,
            "metalayer names hold at most {BLOSC2_METALAYER_NAME_MAXLEN} bytes"
        );
    }
    Ok(s)
}

/// Content bytes from C, checked for negative lengths and NULL.
///
/// # Safety
/// `content` is NULL or readable for `len` bytes.
unsafe fn content_from_c<'a>(content: *const u8, len: i32) -> Result<&'a [u8]> {
    // The reference answers a NULL content with a positive length with
    // INVALID_PARAM (the shared helper would say NULL_POINTER).
    if content.is_null() && len > 0 {
        crate::bail!(InvalidParam, "content is NULL with length {len}");
    }
    // SAFETY: NULL only with a zero length (checked above), else readable
    // for `len` bytes per the contract.
    unsafe { convert::items(content, len, "content") }
}

/// Writes a `malloc`ed copy of `bytes` (NULL when empty) and its length.
///
/// # Safety
/// `content` and `content_len` are writable.
unsafe fn hand_out(bytes: &[u8], content: *mut *mut u8, content_len: *mut i32) -> Result<()> {
    let len = i32::try_from(bytes.len())
        .map_err(|_| crate::err!(Data, "content of {} bytes too large", bytes.len()))?;
    let p = if bytes.is_empty() {
        core::ptr::null_mut()
    } else {
        malloc_copy(bytes)?
    };
    // SAFETY: writable per the contract.
    unsafe {
        *content = p;
        *content_len = len;
    }
    Ok(())
}

/// Index of the fixed-size metalayer `name`, or `BLOSC2_ERROR_NOT_FOUND`.
///
/// # Safety
/// `schunk` is NULL or live; `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_exists(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let name = unsafe { name_from_c(name) }?;
        // SAFETY: forwarded contract.
        let found = match unsafe { read_meta(schunk, name) } {
            Ok(m) => m.map(|(i, _)| i),
            Err(e) if e.kind() == crate::ErrorKind::NullPointer => {
                crate::bail!(InvalidParam, "schunk is NULL")
            }
            Err(e) => return Err(e),
        };
        found
            .map(|i| i as i64)
            .ok_or_else(|| crate::err!(NotFound, "metalayer '{name}' not found"))
    }) as c_int
}

/// Adds a fixed-size metalayer; returns its index.
///
/// # Safety
/// `schunk` is NULL or live; `name` NULL or NUL-terminated; `content` NULL
/// or readable for `content_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            let content = content_from_c(content, content_len)?;
            Ok(b.core.write().meta_add(name, content)? as i64)
        }) as c_int
    }
}

/// Overwrites the start of metalayer `name` with `content_len` bytes; returns
/// its index. Longer content than the metalayer holds changes nothing (see
/// the module notes).
///
/// # Safety
/// As for `blosc2_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            let i = b
                .core
                .read()
                .meta_exists(name)
                .ok_or_else(|| crate::err!(NotFound, "metalayer '{name}' not found"))?;
            let content = content_from_c(content, content_len)?;
            match b.core.write().meta_update(name, content) {
                Ok(i) => Ok(i as i64),
                Err(e) if e.kind() == crate::ErrorKind::InvalidParam => {
                    // The reference's convention: rejected, index returned.
                    super::trace_error(e.detail());
                    Ok(i as i64)
                }
                Err(e) => Err(e),
            }
        }) as c_int
    }
}

/// A `malloc`ed copy of metalayer `name` in `*content` (NULL when empty) and
/// its length in `*content_len`; returns the index.
///
/// # Safety
/// `schunk` is NULL or live; `name` NULL or NUL-terminated; `content` and
/// `content_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    super::guard_code(|| {
        if schunk.is_null() || name.is_null() || content.is_null() || content_len.is_null() {
            crate::bail!(InvalidParam, "NULL argument");
        }
        // SAFETY: forwarded contract.
        let name = unsafe { name_from_c(name) }?;
        // SAFETY: forwarded contract; `content`/`content_len` writable.
        let (i, bytes) = unsafe { read_meta(schunk, name) }?
            .ok_or_else(|| crate::err!(NotFound, "metalayer '{name}' not found"))?;
        // SAFETY: both checked non-NULL above, writable per the contract.
        unsafe { hand_out(&bytes, content, content_len) }?;
        Ok(i as i64)
    }) as c_int
}

/// Index of the vlmetalayer `name`, or `BLOSC2_ERROR_NOT_FOUND`.
///
/// # Safety
/// `schunk` is NULL or live; `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_exists(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    if let Some(vl) = claimed_vlmetas(schunk) {
        // A codec or filter of a call on this super-chunk asks.
        return super::guard_code(|| {
            // SAFETY: forwarded contract.
            let name = unsafe { name_from_c(name) }?;
            super::schunk::find_layer(&vl, name)
                .map(|(i, _)| i as i64)
                .ok_or_else(|| crate::err!(NotFound, "vlmetalayer '{name}' not found"))
        }) as c_int;
    }
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            b.core
                .read()
                .vlmeta_exists(name)
                .map(|i| i as i64)
                .ok_or_else(|| crate::err!(NotFound, "vlmetalayer '{name}' not found"))
        }) as c_int
    }
}

/// Adds a vlmetalayer, compressed with `cparams` (NULL: the defaults);
/// returns its index.
///
/// # Safety
/// `schunk` is NULL or live; `name` NULL or NUL-terminated; `content` NULL
/// or readable for `content_len` bytes; `cparams` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            let content = content_from_c(content, content_len)?;
            let cp = cparams_from_c(cparams);
            Ok(b.core.write().vlmeta_add(name, content, Some(&cp))? as i64)
        }) as c_int
    }
}

/// Replaces the content of vlmetalayer `name`; returns its index.
///
/// # Safety
/// As for `blosc2_vlmeta_add`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            if b.core.read().vlmeta_exists(name).is_none() {
                crate::bail!(NotFound, "vlmetalayer '{name}' not found");
            }
            let content = content_from_c(content, content_len)?;
            let cp = cparams_from_c(cparams);
            // sync() sees the new compressed content and bumps change_tick.
            Ok(b.core.write().vlmeta_update(name, content, Some(&cp))? as i64)
        }) as c_int
    }
}

/// A `malloc`ed copy of the decompressed vlmetalayer `name` in `*content`
/// and its length in `*content_len`; returns the index.
///
/// # Safety
/// `schunk` is NULL or live; `name` NULL or NUL-terminated; `content` and
/// `content_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    if let Some(vl) = claimed_vlmetas(schunk) {
        // A codec or filter of a call on this super-chunk reads it (as
        // C-Blosc2's test_urcodecs does): served from what the call showed.
        return super::guard_code(|| {
            if name.is_null() || content.is_null() || content_len.is_null() {
                crate::bail!(InvalidParam, "NULL argument");
            }
            // SAFETY: forwarded contract.
            let name = unsafe { name_from_c(name) }?;
            let (i, stored) = super::schunk::find_layer(&vl, name)
                .ok_or_else(|| crate::err!(NotFound, "vlmetalayer '{name}' not found"))?;
            let bytes = b2nd_core::chunk::decompress_to_vec(stored)?;
            // SAFETY: checked non-NULL above, writable per the contract.
            unsafe { hand_out(&bytes, content, content_len) }?;
            Ok(i as i64)
        }) as c_int;
    }
    // SAFETY: forwarded contract.
    unsafe {
        read_schunk(schunk, |b| {
            if name.is_null() || content.is_null() || content_len.is_null() {
                crate::bail!(InvalidParam, "NULL argument");
            }
            let name = name_from_c(name)?;
            let i = b
                .core
                .read()
                .vlmeta_exists(name)
                .ok_or_else(|| crate::err!(NotFound, "vlmetalayer '{name}' not found"))?;
            let bytes = b.core.read().vlmeta_get(name)?;
            hand_out(&bytes, content, content_len)?;
            Ok(i as i64)
        }) as c_int
    }
}

/// Removes vlmetalayer `name`; returns how many remain.
///
/// # Safety
/// `schunk` is NULL or live; `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_delete(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let name = name_from_c(name)?;
            if b.core.read().vlmeta_exists(name).is_none() {
                crate::bail!(NotFound, "vlmetalayer '{name}' not found");
            }
            Ok(b.core.write().vlmeta_delete(name)? as i64)
        }) as c_int
    }
}

/// Stores pointers to the vlmetalayer names in `names` (room for
/// `nvlmetalayers` pointers); returns their number. The names belong to the
/// super-chunk and stay valid until its vlmetalayers change.
///
/// # Safety
/// `schunk` is NULL or live; `names` is NULL or writable for
/// `schunk->nvlmetalayers` pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get_names(
    schunk: *mut blosc2_schunk,
    names: *mut *mut c_char,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            b.sync();
            let n = usize::try_from(b.c.nvlmetalayers).unwrap_or(0);
            if n > 0 && names.is_null() {
                crate::bail!(InvalidParam, "names is NULL");
            }
            for (i, &layer) in b.c.vlmetalayers[..n].iter().enumerate() {
                // SAFETY: `layer` points to an entry owned by the box (see
                // `sync`); `names` has room for `n` pointers per the contract.
                *names.add(i) = (*layer).name;
            }
            Ok(n as i64)
        }) as c_int
    }
}
