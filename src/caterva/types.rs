//! `repr(C)` mirrors of the Caterva 0.5 public structs and constants, in the
//! reference's field order, so Caterva callers compile and link unchanged.
//!
//! Everything here lands in include/caterva.h only (build.rs keeps these
//! names out of b2nd.h); the blosc2 types come from b2nd.h, which caterva.h
//! includes.

use core::ffi::{c_char, c_int, c_void};

use crate::constants::{BLOSC2_MAX_FILTERS, BLOSC2_MAX_METALAYERS};
use crate::types::{
    blosc2_prefilter_fn, blosc2_prefilter_params, blosc2_schunk, chunk_cache_s,
};

/// Major version of the Caterva API this library provides.
pub const CATERVA_VERSION_MAJOR: i32 = 0;
/// Minor version of the Caterva API this library provides.
pub const CATERVA_VERSION_MINOR: i32 = 5;
/// Release of the Caterva API this library provides.
pub const CATERVA_VERSION_RELEASE: i32 = 1;

/// Success.
pub const CATERVA_SUCCEED: i32 = 0;
/// A parameter is out of range or inconsistent.
pub const CATERVA_ERR_INVALID_ARGUMENT: i32 = 1;
/// The storage engine failed (I/O, codec, metalayer not found, ...).
pub const CATERVA_ERR_BLOSC_FAILED: i32 = 2;
/// Caterva 0.5.0's `caterva_append` (`caterva_append_chunk`) on an array
/// whose chunks are all written.
pub const CATERVA_ERR_CONTAINER_FILLED: i32 = 3;
/// The call needs a super-chunk and the array is a plain buffer
/// (metalayers, serialization, shape changes).
pub const CATERVA_ERR_INVALID_STORAGE: i32 = 4;
/// A required pointer is NULL, or memory could not be allocated.
pub const CATERVA_ERR_NULL_POINTER: i32 = 5;
/// An index is out of range (same value as NULL_POINTER, as in Caterva).
pub const CATERVA_ERR_INVALID_INDEX: i32 = 5;

/// Version of the `caterva` metalayer format written.
pub const CATERVA_METALAYER_VERSION: i32 = 0;
/// Most dimensions a Caterva array has.
pub const CATERVA_MAX_DIM: i32 = 8;
/// Most user metalayers a Caterva storage description holds.
pub const CATERVA_MAX_METALAYERS: i32 = BLOSC2_MAX_METALAYERS - 1;

/// Compression configuration of a Caterva context (`CATERVA_CONFIG_DEFAULTS`
/// gives Caterva's defaults).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct caterva_config_t {
    /// Allocation function for the structs handed to the caller.
    pub alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    /// Release function matching `alloc`.
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
    /// Codec (`BLOSC_ZSTD`, ...).
    pub compcodec: u8,
    /// Codec meta.
    pub compmeta: u8,
    /// Compression level, 0..9.
    pub complevel: u8,
    /// Split mode (`BLOSC_AUTO_SPLIT`, ...).
    pub splitmode: i32,
    /// Non-zero to train a dictionary.
    pub usedict: i32,
    /// Threads.
    pub nthreads: i16,
    /// Filter pipeline.
    pub filters: [u8; BLOSC2_MAX_FILTERS as usize],
    /// Filter metas.
    pub filtersmeta: [u8; BLOSC2_MAX_FILTERS as usize],
    /// Accepted for compatibility; not run on Caterva arrays.
    pub prefilter: blosc2_prefilter_fn,
    /// Accepted for compatibility.
    pub pparams: *mut blosc2_prefilter_params,
    /// Accepted for compatibility (Caterva's `blosc2_btune *`).
    pub udbtune: *mut c_void,
}

/// A Caterva context: a copy of the configuration.
#[repr(C)]
pub struct caterva_ctx_t {
    pub cfg: *mut caterva_config_t,
}

/// A named metalayer or variable-length metalayer.
#[repr(C)]
pub struct caterva_metalayer_t {
    pub name: *mut c_char,
    pub sdata: *mut u8,
    pub size: i32,
}

/// Storage backend of a Caterva 0.5.0 storage description (a C `enum` in
/// caterva.h, written by hand there: see cbindgen-caterva.toml). Read as a
/// plain integer, so any bit pattern a caller leaves is a valid value.
#[allow(non_camel_case_types)]
pub type caterva_storage_backend_t = c_int;

/// `backend`: a Blosc super-chunk (0, so zeroed storage is Blosc).
pub const CATERVA_STORAGE_BLOSC: caterva_storage_backend_t = 0;
/// `backend`: an uncompressed in-memory buffer. A 32-bit tag rather than
/// Caterva 0.5.0's `1`, so that stale bytes left in that slot by a
/// later-API caller (which has no `backend`) are not mistaken for it.
pub const CATERVA_STORAGE_PLAINBUFFER: caterva_storage_backend_t = 0x7062_7566;

/// Where and how an array is stored: the layout both spellings of
/// caterva.h alias (the later API's flat members, Caterva 0.5.0's
/// `backend` plus `properties.blosc.*` / `properties.plainbuffer.urlpath`).
/// `backend` sits in what is padding in the later API's layout, so offsets
/// and size are those of the later API's struct.
#[repr(C)]
pub struct caterva_storage_t {
    pub chunkshape: [i32; CATERVA_MAX_DIM as usize],
    pub blockshape: [i32; CATERVA_MAX_DIM as usize],
    /// Contiguous frame (true) or sparse directory / chunk list (false);
    /// Caterva 0.5.0's `sequencial`.
    pub contiguous: bool,
    pub reserved_: [u8; 3],
    /// Caterva 0.5.0's `backend`; only [`CATERVA_STORAGE_PLAINBUFFER`]
    /// selects a plain buffer, every other value a super-chunk.
    pub backend: caterva_storage_backend_t,
    /// File or directory; NULL keeps the array in memory.
    pub urlpath: *mut c_char,
    pub metalayers: [caterva_metalayer_t; CATERVA_MAX_METALAYERS as usize],
    pub nmetalayers: i32,
}

impl caterva_storage_t {
    /// True when the caller asked for Caterva 0.5.0's plain buffer.
    pub(crate) fn is_plainbuffer(&self) -> bool {
        self.backend == CATERVA_STORAGE_PLAINBUFFER
    }
}

/// Item size, ndim and shape of a new array.
#[repr(C)]
pub struct caterva_params_t {
    pub itemsize: u8,
    pub shape: [i64; CATERVA_MAX_DIM as usize],
    pub ndim: i8,
}

/// A Caterva array. Its fields are kept in step with the array after every
/// call; the struct is allocated and freed by this library only.
#[repr(C)]
pub struct caterva_array_t {
    pub cfg: *mut caterva_config_t,
    /// The array's super-chunk: works with every `blosc2_schunk_*` and
    /// `blosc2_(vl)meta_*` call between `caterva_*` calls; owned by the
    /// array (freed by `caterva_free`).
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; CATERVA_MAX_DIM as usize],
    pub chunkshape: [i32; CATERVA_MAX_DIM as usize],
    pub extshape: [i64; CATERVA_MAX_DIM as usize],
    pub blockshape: [i32; CATERVA_MAX_DIM as usize],
    pub extchunkshape: [i64; CATERVA_MAX_DIM as usize],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub itemsize: u8,
    pub nchunks: i64,
    /// Unused here (always empty: `data` NULL, `nchunk` -1).
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; CATERVA_MAX_DIM as usize],
    pub item_chunk_strides: [i64; CATERVA_MAX_DIM as usize],
    pub item_extchunk_strides: [i64; CATERVA_MAX_DIM as usize],
    pub item_block_strides: [i64; CATERVA_MAX_DIM as usize],
    pub block_chunk_strides: [i64; CATERVA_MAX_DIM as usize],
    pub chunk_array_strides: [i64; CATERVA_MAX_DIM as usize],
    /// Caterva 0.5.0's `storage`: [`CATERVA_STORAGE_PLAINBUFFER`] or
    /// [`CATERVA_STORAGE_BLOSC`] (appended after the later API's fields so
    /// their offsets do not move).
    pub storage: caterva_storage_backend_t,
    /// Caterva 0.5.0's `buf`: a plain buffer's items (C order, `nitems *
    /// itemsize` bytes), valid until the next call on the array; NULL for a
    /// super-chunk array.
    pub buf: *mut u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    /// caterva_storage_t and the backend enum are written by hand in
    /// cbindgen-caterva.toml (an anonymous union): they must say what the
    /// mirrors here say.
    #[test]
    fn hand_written_storage_matches_the_mirror() {
        let toml = include_str!("../../cbindgen-caterva.toml");
        assert!(toml.contains(&format!(
            "CATERVA_STORAGE_PLAINBUFFER = 0x{:08x}",
            CATERVA_STORAGE_PLAINBUFFER
        )));
        assert!(toml.contains(&format!("CATERVA_STORAGE_BLOSC = {CATERVA_STORAGE_BLOSC}")));
        // backend right after the flag, at the offset the C view pads to.
        assert!(toml.contains(
            "int32_t backend_at_shapes_[2 * CATERVA_MAX_DIM];\n            \
             bool backend_at_flag_;\n            \
             caterva_storage_backend_t backend;"
        ));
    }

    /// Offsets of the Caterva 0.5 structs on LP64 (computed from the
    /// reference header's field order and C alignment rules).
    #[test]
    fn layouts_match_caterva() {
        assert_eq!(offset_of!(caterva_config_t, compcodec), 16);
        assert_eq!(offset_of!(caterva_config_t, splitmode), 20);
        assert_eq!(offset_of!(caterva_config_t, nthreads), 28);
        assert_eq!(offset_of!(caterva_config_t, filters), 30);
        assert_eq!(offset_of!(caterva_config_t, prefilter), 48);
        assert_eq!(size_of::<caterva_config_t>(), 72);
        assert_eq!(size_of::<caterva_metalayer_t>(), 24);
        assert_eq!(offset_of!(caterva_storage_t, contiguous), 64);
        assert_eq!(offset_of!(caterva_storage_t, backend), 68);
        assert_eq!(offset_of!(caterva_storage_t, urlpath), 72);
        assert_eq!(size_of::<caterva_storage_t>(), 80 + 15 * 24 + 8);
        assert_eq!(offset_of!(caterva_storage_t, nmetalayers), 80 + 15 * 24);
        assert_eq!(offset_of!(caterva_params_t, shape), 8);
        assert_eq!(offset_of!(caterva_params_t, ndim), 72);
        assert_eq!(offset_of!(caterva_array_t, shape), 16);
        assert_eq!(
            offset_of!(caterva_array_t, nitems),
            16 + 64 + 32 + 64 + 32 + 64
        );
        assert_eq!(offset_of!(caterva_array_t, extchunknitems), 304);
        assert_eq!(offset_of!(caterva_array_t, ndim), 312);
        assert_eq!(offset_of!(caterva_array_t, nchunks), 320);
        assert_eq!(offset_of!(caterva_array_t, chunk_cache), 328);
        assert_eq!(offset_of!(caterva_array_t, storage), 344 + 6 * 64);
        assert_eq!(offset_of!(caterva_array_t, buf), 344 + 6 * 64 + 8);
        assert_eq!(size_of::<caterva_array_t>(), 344 + 6 * 64 + 16);
    }
}
