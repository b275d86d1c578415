//! Zstandard through `zstd-sys`: contexts, digested dictionaries and
//! dictionary training.

use std::ffi::c_void;
use zstd_sys as z;

/// The highest compression level of the linked library.
pub(crate) fn max_clevel() -> i32 {
    // SAFETY: a pure query without arguments.
    unsafe { z::ZSTD_maxCLevel() }
}

fn is_error(code: usize) -> bool {
    // SAFETY: a pure query on a return code.
    unsafe { z::ZSTD_isError(code) != 0 }
}

/// A compression context (reused across blocks of one worker).
pub(crate) struct CCtx(*mut z::ZSTD_CCtx);

// SAFETY: a ZSTD_CCtx is a plain heap object without thread affinity; it is
// only used through `&mut self`, so never concurrently.
unsafe impl Send for CCtx {}

impl CCtx {
    pub(crate) fn new() -> Option<CCtx> {
        // SAFETY: no preconditions; null is checked.
        let p = unsafe { z::ZSTD_createCCtx() };
        (!p.is_null()).then_some(CCtx(p))
    }

    /// Compresses at `level`; 0 when the result does not fit (or on error).
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        // SAFETY: the context is valid; both buffers are live slices whose
        // lengths are passed; zstd never writes past `dst.len()`.
        let code = unsafe {
            z::ZSTD_compressCCtx(
                self.0,
                dst.as_mut_ptr().cast::<c_void>(),
                dst.len(),
                src.as_ptr().cast::<c_void>(),
                src.len(),
                level,
            )
        };
        if is_error(code) {
            0
        } else {
            code
        }
    }

    /// Compresses with a digested dictionary; 0 when it does not fit.
    pub(crate) fn compress_dict(&mut self, src: &[u8], dst: &mut [u8], cdict: &CDict) -> usize {
        // SAFETY: context and dictionary are valid; buffers are live slices.
        let code = unsafe {
            z::ZSTD_compress_usingCDict(
                self.0,
                dst.as_mut_ptr().cast::<c_void>(),
                dst.len(),
                src.as_ptr().cast::<c_void>(),
                src.len(),
                cdict.0,
            )
        };
        if is_error(code) {
            0
        } else {
            code
        }
    }
}

impl Drop for CCtx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCCtx, freed once.
        unsafe { z::ZSTD_freeCCtx(self.0) };
    }
}

/// A decompression context.
pub(crate) struct DCtx(*mut z::ZSTD_DCtx);

// SAFETY: as for CCtx, a plain heap object used only through `&mut self`.
unsafe impl Send for DCtx {}

impl DCtx {
    pub(crate) fn new() -> Option<DCtx> {
        // SAFETY: no preconditions; null is checked.
        let p = unsafe { z::ZSTD_createDCtx() };
        (!p.is_null()).then_some(DCtx(p))
    }

    /// Decodes one frame into `dst`; `None` on error.
    pub(crate) fn decompress(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        ddict: Option<&DDict>,
    ) -> Option<usize> {
        // SAFETY: context (and dictionary) valid; the decoder reads at most
        // `src.len()` bytes and writes at most `dst.len()` bytes of live slices.
        let code = unsafe {
            match ddict {
                Some(d) => z::ZSTD_decompress_usingDDict(
                    self.0,
                    dst.as_mut_ptr().cast::<c_void>(),
                    dst.len(),
                    src.as_ptr().cast::<c_void>(),
                    src.len(),
                    d.0,
                ),
                None => z::ZSTD_decompressDCtx(
                    self.0,
                    dst.as_mut_ptr().cast::<c_void>(),
                    dst.len(),
                    src.as_ptr().cast::<c_void>(),
                    src.len(),
                ),
            }
        };
        (!is_error(code)).then_some(code)
    }
}

impl Drop for DCtx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDCtx, freed once.
        unsafe { z::ZSTD_freeDCtx(self.0) };
    }
}

/// A digested compression dictionary (copies the dictionary bytes).
pub(crate) struct CDict(*mut z::ZSTD_CDict);

// SAFETY: a ZSTD_CDict is immutable after creation and documented as usable
// by several contexts at once.
unsafe impl Send for CDict {}
// SAFETY: see above, only read after creation.
unsafe impl Sync for CDict {}

impl CDict {
    pub(crate) fn new(dict: &[u8], level: i32) -> Option<CDict> {
        // SAFETY: pointer/length of a live slice; zstd copies the bytes.
        let p = unsafe { z::ZSTD_createCDict(dict.as_ptr().cast::<c_void>(), dict.len(), level) };
        (!p.is_null()).then_some(CDict(p))
    }
}

impl Drop for CDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCDict, freed once.
        unsafe { z::ZSTD_freeCDict(self.0) };
    }
}

/// A digested decompression dictionary (copies the dictionary bytes).
pub(crate) struct DDict(*mut z::ZSTD_DDict);

// SAFETY: immutable after creation; zstd allows sharing it between contexts.
unsafe impl Send for DDict {}
// SAFETY: see above.
unsafe impl Sync for DDict {}

impl DDict {
    pub(crate) fn new(dict: &[u8]) -> Option<DDict> {
        // SAFETY: pointer/length of a live slice; zstd copies the bytes.
        let p = unsafe { z::ZSTD_createDDict(dict.as_ptr().cast::<c_void>(), dict.len()) };
        (!p.is_null()).then_some(DDict(p))
    }
}

impl Drop for DDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDDict, freed once.
        unsafe { z::ZSTD_freeDDict(self.0) };
    }
}

/// Trains a dictionary of at most `max_size` bytes from the concatenated
/// `samples`, cut into pieces of the given `sizes`. `None` when training fails.
pub(crate) fn train_dict(samples: &[u8], sizes: &[usize], max_size: usize) -> Option<Vec<u8>> {
    if sizes.iter().sum::<usize>() > samples.len() {
        return None;
    }
    let nsamples = u32::try_from(sizes.len()).ok()?;
    let mut dict = vec![0u8; max_size];
    // SAFETY: `dict` has `max_size` writable bytes; the sample sizes add up to
    // at most `samples.len()` (checked above), so zstd reads inside `samples`.
    let code = unsafe {
        z::ZDICT_trainFromBuffer(
            dict.as_mut_ptr().cast::<c_void>(),
            max_size,
            samples.as_ptr().cast::<c_void>(),
            sizes.as_ptr(),
            nsamples,
        )
    };
    // SAFETY: a pure query on a return code.
    if unsafe { z::ZDICT_isError(code) } != 0 {
        return None;
    }
    dict.truncate(code);
    Some(dict)
}

/// The version of the linked Zstd library, as "major.minor.release".
pub(crate) fn version() -> String {
    // SAFETY: a plain query of the linked library; it touches no memory of ours.
    let v = unsafe { zstd_sys::ZSTD_versionNumber() };
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}
