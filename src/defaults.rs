//! Default parameter structs, as values for Rust code and through the
//! `blosc2_get_blosc2_*_defaults` functions for C callers (bindings that cannot
//! read the header's `static const` initialisers call these instead).
//!
//! The values equal the reference's `BLOSC2_*_DEFAULTS` initialisers, which the
//! generated header also defines (cbindgen.toml); the C test `test_layout`
//! compares the functions' results with those initialisers field by field and
//! the initialisers with the reference header's.

use super::constants::{
    BLOSC2_IO_FILESYSTEM, BLOSC_BLOSCLZ, BLOSC_FORWARD_COMPAT_SPLIT, BLOSC_SHUFFLE,
};
use super::guard;
use super::types::{blosc2_cparams, blosc2_dparams, blosc2_io, blosc2_stdio_mmap, blosc2_storage};
use core::ptr::null_mut;

/// Compression defaults: BloscLZ at level 5, typesize 8, one thread, automatic
/// blocksize, forward-compatible splitting, and a single shuffle in the last
/// filter slot.
pub(crate) const CPARAMS_DEFAULTS: blosc2_cparams = blosc2_cparams {
    compcode: BLOSC_BLOSCLZ as u8,
    compcode_meta: 0,
    clevel: 5,
    use_dict: 0,
    typesize: 8,
    nthreads: 1,
    blocksize: 0,
    splitmode: BLOSC_FORWARD_COMPAT_SPLIT,
    schunk: null_mut(),
    filters: [0, 0, 0, 0, 0, BLOSC_SHUFFLE as u8],
    filters_meta: [0; 6],
    prefilter: None,
    preparams: null_mut(),
    tuner_params: null_mut(),
    tuner_id: 0,
    instr_codec: false,
    codec_params: null_mut(),
    filter_params: [null_mut(); 6],
};

/// Decompression defaults: one thread, typesize 8, no postfilter.
pub(crate) const DPARAMS_DEFAULTS: blosc2_dparams = blosc2_dparams {
    nthreads: 1,
    schunk: null_mut(),
    postfilter: None,
    postparams: null_mut(),
    typesize: 8,
};

/// Storage defaults: an in-memory sparse super-chunk with default parameters.
pub(crate) const STORAGE_DEFAULTS: blosc2_storage = blosc2_storage {
    contiguous: false,
    urlpath: null_mut(),
    cparams: null_mut(),
    dparams: null_mut(),
    io: null_mut(),
};

/// I/O defaults: the plain file backend, without parameters.
pub(crate) const IO_DEFAULTS: blosc2_io = blosc2_io {
    id: BLOSC2_IO_FILESYSTEM as u8,
    name: c"filesystem".as_ptr(),
    params: null_mut(),
};

/// Memory-mapped file defaults: read-only, a 1 GiB first mapping for writable
/// modes, and "not open yet" markers (-1) in the state fields.
pub(crate) const STDIO_MMAP_DEFAULTS: blosc2_stdio_mmap = blosc2_stdio_mmap {
    mode: c"r".as_ptr(),
    initial_mapping_size: 1 << 30,
    needs_free: false,
    addr: null_mut(),
    urlpath: null_mut(),
    file_size: 0,
    mapping_size: 0,
    is_memory_only: false,
    file: null_mut(),
    fd: -1,
    access_flags: -1,
    map_flags: -1,
};

/// Returns the default compression parameters (same as `BLOSC2_CPARAMS_DEFAULTS`).
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_cparams_defaults() -> blosc2_cparams {
    guard(CPARAMS_DEFAULTS, || CPARAMS_DEFAULTS)
}

/// Returns the default decompression parameters (same as `BLOSC2_DPARAMS_DEFAULTS`).
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_dparams_defaults() -> blosc2_dparams {
    guard(DPARAMS_DEFAULTS, || DPARAMS_DEFAULTS)
}

/// Returns the default storage (same as `BLOSC2_STORAGE_DEFAULTS`).
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_storage_defaults() -> blosc2_storage {
    guard(STORAGE_DEFAULTS, || STORAGE_DEFAULTS)
}

/// Returns the default I/O backend (same as `BLOSC2_IO_DEFAULTS`); its name
/// points to a static string.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_io_defaults() -> blosc2_io {
    guard(IO_DEFAULTS, || IO_DEFAULTS)
}

/// Returns the default memory-mapping parameters (same as
/// `BLOSC2_STDIO_MMAP_DEFAULTS`); its mode points to a static string.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_stdio_mmap_defaults() -> blosc2_stdio_mmap {
    guard(STDIO_MMAP_DEFAULTS, || STDIO_MMAP_DEFAULTS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    #[test]
    fn cparams_defaults_match_the_reference_values() {
        let c = blosc2_get_blosc2_cparams_defaults();
        assert_eq!(
            (c.compcode, c.compcode_meta, c.clevel, c.use_dict),
            (0, 0, 5, 0)
        );
        assert_eq!(
            (c.typesize, c.nthreads, c.blocksize, c.splitmode),
            (8, 1, 0, 4)
        );
        assert_eq!(c.filters, [0, 0, 0, 0, 0, 1]);
        assert_eq!(c.filters_meta, [0; 6]);
        assert!(c.schunk.is_null() && c.prefilter.is_none() && c.preparams.is_null());
        assert!(c.tuner_params.is_null() && c.codec_params.is_null());
        assert_eq!((c.tuner_id, c.instr_codec), (0, false));
        assert!(c.filter_params.iter().all(|p| p.is_null()));
    }

    #[test]
    fn dparams_storage_io_defaults() {
        let d = blosc2_get_blosc2_dparams_defaults();
        assert_eq!((d.nthreads, d.typesize), (1, 8));
        assert!(d.schunk.is_null() && d.postfilter.is_none() && d.postparams.is_null());

        let s = blosc2_get_blosc2_storage_defaults();
        assert!(!s.contiguous);
        assert!(
            s.urlpath.is_null() && s.cparams.is_null() && s.dparams.is_null() && s.io.is_null()
        );

        let io = blosc2_get_blosc2_io_defaults();
        assert_eq!(io.id, 0);
        assert!(io.params.is_null());
        // SAFETY: `name` points to a static NUL-terminated literal.
        assert_eq!(unsafe { CStr::from_ptr(io.name) }, c"filesystem");
    }

    #[test]
    fn stdio_mmap_defaults() {
        let m = blosc2_get_blosc2_stdio_mmap_defaults();
        // SAFETY: `mode` points to a static NUL-terminated literal.
        assert_eq!(unsafe { CStr::from_ptr(m.mode) }, c"r");
        assert_eq!(m.initial_mapping_size, 1usize << 30);
        assert!(!m.needs_free && !m.is_memory_only);
        assert!(m.addr.is_null() && m.urlpath.is_null() && m.file.is_null());
        assert_eq!((m.file_size, m.mapping_size), (0, 0));
        assert_eq!((m.fd, m.access_flags, m.map_flags), (-1, -1, -1));
    }
}
