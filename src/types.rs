//! `#[repr(C)]` mirrors of the public structs and typedefs of the reference
//! `blosc2.h`, `blosc2/blosc2-stdio.h` and `b2nd.h` (C-Blosc2 3.3.5).
//!
//! Names, field names, field order and C types follow the reference exactly,
//! because C callers allocate these structs themselves, fill them with the
//! reference's initialisers and read their fields. cbindgen turns each one into
//! `typedef struct name {...} name;`, so both `name` and `struct name` compile.
//! The C test `tests-c/test_layout.c` checks every offset and size against the
//! reference header.
//!
//! Contexts, frames and b2nd contexts are opaque to C: callers only hold
//! pointers, so the C side sees an incomplete `struct ..._s` and the Rust side
//! converts the pointer to its own type.

// The names are the C API's, not Rust's.
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_double, c_float, c_int, c_void};

use super::constants::{
    B2ND_MAX_DIM, BLOSC2_MAX_FILTERS, BLOSC2_MAX_METALAYERS, BLOSC2_MAX_VLMETALAYERS,
};

// ---- Opaque handles -----------------------------------------------------------

/// Compression or decompression context; only used through pointers.
pub struct blosc2_context_s {
    _opaque: [u8; 0],
}
/// The reference's name for a context handle.
pub type blosc2_context = blosc2_context_s;

/// Contiguous frame backing a super-chunk; only used through pointers.
pub struct blosc2_frame_s {
    _opaque: [u8; 0],
}
/// The reference's name for a frame handle.
pub type blosc2_frame = blosc2_frame_s;

/// Creation parameters of a b2nd array; only used through pointers.
pub struct b2nd_context_s {
    _opaque: [u8; 0],
}
/// The reference's name for a b2nd creation context.
pub type b2nd_context_t = b2nd_context_s;

// ---- Instrumentation, threads, timestamps -------------------------------------

/// Measurements recorded per block when a codec is instrumented.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_instr {
    pub cratio: c_float,
    pub cspeed: c_float,
    pub filter_speed: c_float,
    pub flags: [u8; 4],
}

/// A caller-provided threading backend: runs `dojob(jobdata + i * jobdata_elsize)`
/// for `i` in `0..numjobs` and returns when all have finished.
pub type blosc_threads_callback = Option<
    unsafe extern "C" fn(
        callback_data: *mut c_void,
        dojob: Option<unsafe extern "C" fn(*mut c_void)>,
        numjobs: c_int,
        jobdata_elsize: usize,
        jobdata: *mut c_void,
    ),
>;

/// A point in time, as the reference's timing helpers take it.
pub type blosc_timestamp_t = libc::timespec;

// ---- Input/output backends ---------------------------------------------------

/// Opens `urlpath` with `mode`; returns the backend's stream handle or NULL.
pub type blosc2_open_cb = Option<
    unsafe extern "C" fn(
        urlpath: *const c_char,
        mode: *const c_char,
        params: *mut c_void,
    ) -> *mut c_void,
>;
/// Closes a stream; 0 on success.
pub type blosc2_close_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> c_int>;
/// Size in bytes of the stream's content.
pub type blosc2_size_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> i64>;
/// Writes `size * nitems` bytes at `position`; returns the items written.
pub type blosc2_write_cb = Option<
    unsafe extern "C" fn(
        ptr: *const c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
/// Reads `size * nitems` bytes at `position` into `*ptr` (or sets `*ptr` to the
/// backend's own memory); returns the items read.
pub type blosc2_read_cb = Option<
    unsafe extern "C" fn(
        ptr: *mut *mut c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
/// Truncates (or extends) the stream to `size` bytes; 0 on success.
pub type blosc2_truncate_cb = Option<unsafe extern "C" fn(stream: *mut c_void, size: i64) -> c_int>;
/// Releases the backend parameters when the super-chunk is freed; 0 on success.
pub type blosc2_destroy_cb = Option<unsafe extern "C" fn(params: *mut c_void) -> c_int>;

/// A set of I/O callbacks registered under an id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io_cb {
    /// The backend id (`BLOSC2_IO_*` or a registered one).
    pub id: u8,
    /// The backend name.
    pub name: *mut c_char,
    /// True when the caller allocates the read buffer; false when `read`
    /// returns memory owned by the backend.
    pub is_allocation_necessary: bool,
    pub open: blosc2_open_cb,
    pub close: blosc2_close_cb,
    pub size: blosc2_size_cb,
    pub write: blosc2_write_cb,
    pub read: blosc2_read_cb,
    pub truncate: blosc2_truncate_cb,
    pub destroy: blosc2_destroy_cb,
}

/// Which I/O backend a stored super-chunk uses, and its parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io {
    pub id: u8,
    pub name: *const c_char,
    /// Backend parameters (for example a `blosc2_stdio_mmap`), or NULL.
    pub params: *mut c_void,
}

/// Stream handle of the plain file backend.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_file {
    pub file: *mut libc::FILE,
}

/// Parameters of the plain file backend.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_params {
    /// Take advisory locks on a sidecar file around frame accesses.
    pub locking: bool,
}

/// Parameters and state of the memory-mapped file backend.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_mmap {
    /// "r", "r+", "w+" or "c" (copy-on-write, nothing written back), as numpy's memmap.
    pub mode: *const c_char,
    /// Size of the first mapping for writable modes.
    pub initial_mapping_size: usize,
    /// Whether the destroy callback must free this struct.
    pub needs_free: bool,
    /// Start of the mapping (set by the backend).
    pub addr: *mut c_char,
    /// Path of the mapped file (set by the backend).
    pub urlpath: *mut c_char,
    pub file_size: usize,
    pub mapping_size: usize,
    /// True in "c" mode: changes stay in memory.
    pub is_memory_only: bool,
    pub file: *mut libc::FILE,
    pub fd: c_int,
    pub access_flags: i64,
    pub map_flags: i64,
}

// ---- Tuners -------------------------------------------------------------------

/// A user-defined tuner: picks block sizes and compression parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_tuner {
    pub init: Option<
        unsafe extern "C" fn(
            config: *mut c_void,
            cctx: *mut blosc2_context,
            dctx: *mut blosc2_context,
        ) -> c_int,
    >,
    pub next_blocksize: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub next_cparams: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub update:
        Option<unsafe extern "C" fn(context: *mut blosc2_context, ctime: c_double) -> c_int>,
    pub free: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub id: c_int,
    pub name: *mut c_char,
}

// ---- Prefilters and postfilters -----------------------------------------------

/// What a prefilter gets for each block before compression.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_prefilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub output_size: i32,
    pub output_typesize: i32,
    pub output_offset: i32,
    /// Chunk number in the super-chunk, or -1 outside one.
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    /// Per-thread scratch of `ttmp_nbytes` bytes.
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
    pub output_is_disposable: bool,
}

/// What a postfilter gets for each block after decompression.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_postfilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub size: i32,
    pub typesize: i32,
    pub offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
}

/// A prefilter: 0 on success, negative on error.
pub type blosc2_prefilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_prefilter_params) -> c_int>;
/// A postfilter: 0 on success, negative on error.
pub type blosc2_postfilter_fn =
    Option<unsafe extern "C" fn(params: *mut blosc2_postfilter_params) -> c_int>;

// ---- Compression and decompression parameters ---------------------------------

/// Compression parameters. A zero in a field means "use the default" where the
/// reference says so (typesize 8, clevel 5, one thread, automatic blocksize).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_cparams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: c_int,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    /// The super-chunk these parameters belong to, or NULL.
    pub schunk: *mut c_void,
    pub filters: [u8; BLOSC2_MAX_FILTERS as usize],
    pub filters_meta: [u8; BLOSC2_MAX_FILTERS as usize],
    pub prefilter: blosc2_prefilter_fn,
    pub preparams: *mut blosc2_prefilter_params,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub instr_codec: bool,
    pub codec_params: *mut c_void,
    pub filter_params: [*mut c_void; BLOSC2_MAX_FILTERS as usize],
}

/// Decompression parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_dparams {
    pub nthreads: i16,
    pub schunk: *mut c_void,
    pub postfilter: blosc2_postfilter_fn,
    pub postparams: *mut blosc2_postfilter_params,
    pub typesize: i32,
}

// ---- Codec and filter plugins -------------------------------------------------

/// Compresses `input` into `output`; returns the compressed size, 0 when it
/// does not fit, negative on error.
pub type blosc2_codec_encoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        cparams: *mut blosc2_cparams,
        chunk: *const c_void,
    ) -> c_int,
>;
/// Decompresses `input` into `output`; returns the decompressed size or a negative error.
pub type blosc2_codec_decoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        dparams: *mut blosc2_dparams,
        chunk: *const c_void,
    ) -> c_int,
>;

/// A user-registered codec.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_codec {
    pub compcode: u8,
    pub compname: *mut c_char,
    pub complib: u8,
    pub version: u8,
    pub encoder: blosc2_codec_encoder_cb,
    pub decoder: blosc2_codec_decoder_cb,
}

/// Forward filter: (src, dest, size, meta, cparams, filter id) -> 0 or negative.
pub type blosc2_filter_forward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_cparams, u8) -> c_int>;
/// Backward filter: (src, dest, size, meta, dparams, filter id) -> 0 or negative.
pub type blosc2_filter_backward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_dparams, u8) -> c_int>;

/// A user-registered filter.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_filter {
    pub id: u8,
    pub name: *mut c_char,
    pub version: u8,
    pub forward: blosc2_filter_forward_cb,
    pub backward: blosc2_filter_backward_cb,
}

// ---- Storage and super-chunks -------------------------------------------------

/// Where and how a super-chunk is stored.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_storage {
    /// Contiguous frame (true) or sparse directory of chunks (false).
    pub contiguous: bool,
    /// File or directory path; NULL keeps the super-chunk in memory.
    pub urlpath: *mut c_char,
    pub cparams: *mut blosc2_cparams,
    pub dparams: *mut blosc2_dparams,
    pub io: *mut blosc2_io,
}

/// A named, fixed-size metadata entry of a super-chunk.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_metalayer {
    pub name: *mut c_char,
    pub content: *mut u8,
    pub content_len: i32,
}

/// A super-chunk, with the fields C callers read directly.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_schunk {
    pub version: u8,
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    /// Uncompressed size of each chunk; 0 while unknown or variable.
    pub chunksize: i32,
    pub flags2: u8,
    pub use_dict: u8,
    pub filters: [u8; BLOSC2_MAX_FILTERS as usize],
    pub filters_meta: [u8; BLOSC2_MAX_FILTERS as usize],
    pub nchunks: i64,
    pub current_nchunk: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    /// Chunk pointers of an in-memory sparse super-chunk.
    pub data: *mut *mut u8,
    pub data_len: usize,
    pub storage: *mut blosc2_storage,
    pub frame: *mut blosc2_frame,
    pub cctx: *mut blosc2_context,
    pub dctx: *mut blosc2_context,
    pub metalayers: [*mut blosc2_metalayer; BLOSC2_MAX_METALAYERS as usize],
    pub nmetalayers: u16,
    pub vlmetalayers: [*mut blosc2_metalayer; BLOSC2_MAX_VLMETALAYERS as usize],
    pub nvlmetalayers: i16,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub ndim: i8,
    pub blockshape: *mut i64,
    pub view: bool,
    /// Incremented whenever the metalayers change, so cached views can tell
    /// they are stale.
    pub change_tick: i64,
}

// ---- b2nd arrays --------------------------------------------------------------

/// The one-chunk cache of a b2nd array.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct chunk_cache_s {
    pub data: *mut u8,
    /// Number of the cached chunk, or -1 when the cache is empty.
    pub nchunk: i64,
}

/// An N-dimensional array stored in a super-chunk.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct b2nd_array_t {
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; B2ND_MAX_DIM as usize],
    pub chunkshape: [i32; B2ND_MAX_DIM as usize],
    /// Shape rounded up to whole chunks.
    pub extshape: [i64; B2ND_MAX_DIM as usize],
    pub blockshape: [i32; B2ND_MAX_DIM as usize],
    /// Chunk shape rounded up to whole blocks.
    pub extchunkshape: [i64; B2ND_MAX_DIM as usize],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; B2ND_MAX_DIM as usize],
    pub item_chunk_strides: [i64; B2ND_MAX_DIM as usize],
    pub item_extchunk_strides: [i64; B2ND_MAX_DIM as usize],
    pub item_block_strides: [i64; B2ND_MAX_DIM as usize],
    pub block_chunk_strides: [i64; B2ND_MAX_DIM as usize],
    pub chunk_array_strides: [i64; B2ND_MAX_DIM as usize],
    /// Data type description in the format given by `dtype_format`.
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    /// The super-chunk's `change_tick` this array last synchronised with.
    pub last_tick: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    // Spot checks of the x86-64/aarch64 LP64 layout; the C test compares every
    // field against the reference header.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn lp64_layout_spot_checks() {
        // Values printed by tests-c/layout/ref_layout.c built against the reference.
        assert_eq!(size_of::<blosc2_cparams>(), 136);
        assert_eq!(offset_of!(blosc2_cparams, schunk), 24);
        assert_eq!(offset_of!(blosc2_cparams, filter_params), 88);
        assert_eq!(size_of::<blosc2_dparams>(), 40);
        assert_eq!(size_of::<blosc2_storage>(), 40);
        assert_eq!(size_of::<blosc2_io>(), 24);
        assert_eq!(size_of::<blosc2_io_cb>(), 80);
        assert_eq!(size_of::<blosc2_stdio_mmap>(), 96);
        assert_eq!(size_of::<blosc2_prefilter_params>(), 88);
        assert_eq!(offset_of!(blosc2_schunk, nmetalayers), 248);
        assert_eq!(offset_of!(blosc2_schunk, change_tick), 65832);
        assert_eq!(size_of::<blosc2_schunk>(), 65840);
        assert_eq!(offset_of!(b2nd_array_t, chunk_cache), 568);
        assert_eq!(size_of::<b2nd_array_t>(), 1376);
    }
}
