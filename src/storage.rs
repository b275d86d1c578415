//! Conversions between the C parameter structs (`blosc2_storage`,
//! `blosc2_cparams`, `blosc2_dparams`) and the core's [`Storage`],
//! [`CParams`] and [`DParams`].
//!
//! C callers fill these structs with the reference's initialisers, so a NULL
//! pointer means "the reference defaults" (`BLOSC2_STORAGE_DEFAULTS`,
//! `BLOSC2_CPARAMS_DEFAULTS`, `BLOSC2_DPARAMS_DEFAULTS`). Prefilters,
//! postfilters and tuner parameters are C callbacks the core cannot call
//! through these conversions; they are not carried over.

use core::ffi::c_char;
use std::path::PathBuf;

use super::types::{blosc2_cparams, blosc2_dparams, blosc2_storage};
use b2nd_core::schunk::{CParams, DParams, Storage};
use crate::Result;

/// The core's compression parameters from a C struct (NULL = defaults).
///
/// # Safety
/// `cp` is NULL or points to a readable `blosc2_cparams`.
pub(crate) unsafe fn cparams_from_c(cp: *const blosc2_cparams) -> CParams {
    let mut out = CParams::default();
    // SAFETY: the caller promises `cp` is NULL or valid; `as_ref` handles NULL.
    if let Some(c) = unsafe { cp.as_ref() } {
        out.compcode = c.compcode;
        out.compcode_meta = c.compcode_meta;
        out.clevel = c.clevel;
        out.use_dict = c.use_dict != 0;
        out.typesize = c.typesize;
        out.nthreads = c.nthreads.max(1);
        out.blocksize = c.blocksize;
        out.splitmode = c.splitmode;
        out.filters = c.filters;
        out.filters_meta = c.filters_meta;
        out.instr_codec = c.instr_codec;
        out.tuner_id = c.tuner_id;
    }
    out
}

/// The core's decompression parameters from a C struct (NULL = defaults).
///
/// # Safety
/// `dp` is NULL or points to a readable `blosc2_dparams`.
pub(crate) unsafe fn dparams_from_c(dp: *const blosc2_dparams) -> DParams {
    let mut out = DParams::default();
    // SAFETY: the caller promises `dp` is NULL or valid; `as_ref` handles NULL.
    if let Some(d) = unsafe { dp.as_ref() } {
        out.nthreads = d.nthreads.max(1);
    }
    out
}

/// A C struct mirroring the core's compression parameters. Pointer fields
/// (prefilter, tuner and codec parameters) are NULL; `schunk` is the owner.
pub(crate) fn cparams_to_c(cp: &CParams, schunk: *mut core::ffi::c_void) -> blosc2_cparams {
    blosc2_cparams {
        compcode: cp.compcode,
        compcode_meta: cp.compcode_meta,
        clevel: cp.clevel,
        use_dict: i32::from(cp.use_dict),
        typesize: cp.typesize,
        nthreads: cp.nthreads,
        blocksize: cp.blocksize,
        splitmode: cp.splitmode,
        schunk,
        filters: cp.filters,
        filters_meta: cp.filters_meta,
        prefilter: None,
        preparams: core::ptr::null_mut(),
        tuner_params: core::ptr::null_mut(),
        tuner_id: cp.tuner_id,
        instr_codec: cp.instr_codec,
        codec_params: core::ptr::null_mut(),
        filter_params: [core::ptr::null_mut(); 6],
    }
}

/// A C struct mirroring the core's decompression parameters.
pub(crate) fn dparams_to_c(
    dp: &DParams,
    typesize: i32,
    schunk: *mut core::ffi::c_void,
) -> blosc2_dparams {
    blosc2_dparams {
        nthreads: dp.nthreads,
        schunk,
        postfilter: None,
        postparams: core::ptr::null_mut(),
        typesize,
    }
}

/// A path from a C string; `what` names the argument in the error.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_from_c(p: *const c_char, what: &str) -> Result<PathBuf> {
    // SAFETY: forwarded contract.
    let s = unsafe { super::convert::c_str(p, what) }?;
    if s.is_empty() {
        crate::bail!(InvalidParam, "{what} is empty");
    }
    // The reference strips one trailing separator from directory paths.
    let trimmed = if s.len() > 1 {
        s.strip_suffix('/').unwrap_or(s)
    } else {
        s
    };
    Ok(PathBuf::from(trimmed))
}

/// The local path a frame `urlpath` names: as the reference does where it opens
/// or creates frames, a leading `file:///` is dropped whole, so `file:///a.b2frame`
/// is `a.b2frame`, relative to the working directory (C-Blosc2's examples rely on
/// that; an RFC 8089 reading would make it `/a.b2frame`).
pub(crate) fn local_frame_path(urlpath: &str) -> &str {
    urlpath.strip_prefix("file:///").unwrap_or(urlpath)
}

/// [`path_from_c`] for a frame to open or create: `file:///` URLs are local
/// paths (see [`local_frame_path`]).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn frame_path_from_c(p: *const c_char, what: &str) -> Result<PathBuf> {
    // SAFETY: forwarded contract.
    let s = unsafe { super::convert::c_str(p, what) }?;
    let local = local_frame_path(s);
    if local.len() == s.len() {
        // SAFETY: forwarded contract.
        return unsafe { path_from_c(p, what) };
    }
    let local = std::ffi::CString::new(local)
        .map_err(|_| crate::err!(InvalidParam, "{what} holds a NUL byte"))?;
    // SAFETY: `local` is a live NUL-terminated string.
    unsafe { path_from_c(local.as_ptr(), what) }
}

/// The core's storage from a C `blosc2_storage` (NULL = in memory, defaults).
///
/// # Safety
/// `st` is NULL or points to a readable `blosc2_storage` whose pointers are
/// NULL or valid.
pub(crate) unsafe fn storage_from_c(st: *const blosc2_storage) -> Result<Storage> {
    // SAFETY: the caller promises `st` is NULL or valid.
    let Some(s) = (unsafe { st.as_ref() }) else {
        return Ok(Storage::default());
    };
    let urlpath = if s.urlpath.is_null() {
        None
    } else {
        // SAFETY: non-NULL urlpath is a C string per the struct's contract.
        Some(unsafe { frame_path_from_c(s.urlpath, "storage.urlpath") }?)
    };
    // SAFETY: cparams/dparams/io are NULL or valid per the same contract.
    let (cparams, dparams, io) = unsafe {
        (
            cparams_from_c(s.cparams),
            dparams_from_c(s.dparams),
            super::io::io_from_c(s.io)?,
        )
    };
    Ok(Storage {
        contiguous: s.contiguous,
        urlpath,
        cparams,
        dparams,
        io,
        // SAFETY: `s.io` is NULL or valid per the same contract.
        locking: unsafe { locking_param(s.io) },
    })
}

/// Whether `io` asks for file locking through `blosc2_stdio_params`.
///
/// # Safety
/// `io` is NULL or valid; for the file-system backend its `params` are NULL
/// or a `blosc2_stdio_params`.
pub(crate) unsafe fn locking_param(io: *const super::types::blosc2_io) -> bool {
    // SAFETY: per the contract.
    let Some(io) = (unsafe { io.as_ref() }) else {
        return false;
    };
    if i32::from(io.id) != super::constants::BLOSC2_IO_FILESYSTEM || io.params.is_null() {
        return false;
    }
    // SAFETY: the file-system backend's params are a `blosc2_stdio_params`
    // (the reference reads them the same way).
    unsafe { (*io.params.cast::<super::types::blosc2_stdio_params>()).locking }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_means_defaults() {
        // SAFETY: NULL is an accepted input.
        let cp = unsafe { cparams_from_c(core::ptr::null()) };
        assert_eq!(cp.clevel, 5);
        assert_eq!(cp.typesize, 8);
        // SAFETY: NULL is an accepted input.
        let st = unsafe { storage_from_c(core::ptr::null()) }.unwrap();
        assert!(!st.contiguous && st.urlpath.is_none());
    }

    #[test]
    fn cparams_round_trip() {
        let mut cp = CParams::default();
        cp.clevel = 9;
        cp.typesize = 4;
        cp.filters = [0, 0, 0, 0, 1, 2];
        let c = cparams_to_c(&cp, core::ptr::null_mut());
        // SAFETY: `c` is a live local.
        let back = unsafe { cparams_from_c(&c) };
        assert_eq!(back.clevel, 9);
        assert_eq!(back.typesize, 4);
        assert_eq!(back.filters, [0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn file_urls_of_frames_are_local_paths_as_in_the_reference() {
        // SAFETY: literals are NUL-terminated.
        let p = unsafe { frame_path_from_c(c"file:///a/b.b2frame".as_ptr(), "x") }.unwrap();
        assert_eq!(p, PathBuf::from("a/b.b2frame"));
        // SAFETY: as above.
        let p = unsafe { frame_path_from_c(c"x/file:///b".as_ptr(), "x") }.unwrap();
        assert_eq!(
            p,
            PathBuf::from("x/file:///b"),
            "only a leading prefix goes"
        );
        // SAFETY: as above.
        let e = unsafe { frame_path_from_c(c"file:///".as_ptr(), "x") }.unwrap_err();
        assert_eq!(e.code(), crate::ErrorKind::InvalidParam.code());
    }

    #[test]
    fn paths_lose_one_trailing_slash() {
        // SAFETY: literals are NUL-terminated.
        let p = unsafe { path_from_c(c"dir.b2frame/".as_ptr(), "x") }.unwrap();
        assert_eq!(p, PathBuf::from("dir.b2frame"));
        // SAFETY: NULL is accepted and rejected.
        let e = unsafe { path_from_c(core::ptr::null(), "x") }.unwrap_err();
        assert_eq!(e.code(), crate::ErrorKind::NullPointer.code());
    }
}
