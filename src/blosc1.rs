//! The calls without a context: Blosc1-style `blosc1_*`, the context-free
//! `blosc2_compress`/`_decompress`/`_getitem`, and the global settings they
//! use (`b2nd_core::global`), including the `BLOSC_*` environment variables the
//! reference honours.
//!
//! There is no global compression context here: every call builds its own
//! compressor from the current settings, so nothing is locked while data is
//! processed and `BLOSC_NOLOCK` has nothing left to change (it is accepted and
//! ignored).

use super::chunk::{
    chunk_slice, compcode_of, dst_for_chunk, getitem_on, header_slice, src_dst_slices, src_slice,
    trusted_chunk,
};
use super::types::blosc_threads_callback;
use super::{guard, guard_code};
use b2nd_core::chunk::{CParams, ChunkHeader, Compressor, DParams, Decompressor};
use b2nd_core::global;
use core::ffi::{c_char, c_int, c_void, CStr};

/// Reading the reference's `BLOSC_*` environment variables.
pub(crate) mod env_overrides {
    use super::super::types::blosc2_cparams;
    use core::ffi::c_int;

    fn var(name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    /// `strtol(s, NULL, 10)`: optional blanks and sign, then digits; 0 when
    /// there are none (glibc does not flag that case), clamped on overflow.
    pub(crate) fn strtol(s: &str) -> i64 {
        let t = s.trim_start();
        let (neg, digits) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let mut v: i64 = 0;
        for b in digits.bytes().take_while(u8::is_ascii_digit) {
            v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
        }
        if neg {
            -v
        } else {
            v
        }
    }

    fn int(name: &str) -> Option<i64> {
        var(name).map(|s| strtol(&s))
    }

    /// An integer variable of at least `min`, clamped to `max`.
    fn int_at_least(name: &str, min: i64, max: i64) -> Option<i64> {
        int(name).filter(|&v| v >= min).map(|v| v.min(max))
    }

    /// `BLOSC_CLEVEL` (values >= 0).
    pub(crate) fn clevel() -> Option<i32> {
        int_at_least("BLOSC_CLEVEL", 0, i64::from(i32::MAX)).map(|v| v as i32)
    }

    /// A variable holding one of the words of `table`, as its value.
    fn word(name: &str, table: &[(&str, i32)]) -> Option<i32> {
        let v = var(name)?;
        table.iter().find(|(w, _)| *w == v).map(|&(_, code)| code)
    }

    /// `BLOSC_SHUFFLE`: NOSHUFFLE, SHUFFLE or BITSHUFFLE.
    pub(crate) fn shuffle() -> Option<i32> {
        word(
            "BLOSC_SHUFFLE",
            &[("NOSHUFFLE", 0), ("SHUFFLE", 1), ("BITSHUFFLE", 2)],
        )
    }

    /// `BLOSC_DELTA`: "1" or "0".
    pub(crate) fn delta() -> Option<bool> {
        match var("BLOSC_DELTA")?.as_str() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        }
    }

    /// `BLOSC_TYPESIZE` (values > 0).
    pub(crate) fn typesize() -> Option<i32> {
        int_at_least("BLOSC_TYPESIZE", 1, i64::from(i32::MAX)).map(|v| v as i32)
    }

    /// `BLOSC_BLOCKSIZE` (values > 0).
    pub(crate) fn blocksize() -> Option<i32> {
        int_at_least("BLOSC_BLOCKSIZE", 1, i64::from(i32::MAX)).map(|v| v as i32)
    }

    /// `BLOSC_NTHREADS` (values > 0).
    pub(crate) fn nthreads() -> Option<i16> {
        int_at_least("BLOSC_NTHREADS", 1, i64::from(i16::MAX)).map(|v| v as i16)
    }

    /// `BLOSC_SPLITMODE`: ALWAYS, NEVER, AUTO or FORWARD_COMPAT.
    pub(crate) fn splitmode() -> Option<i32> {
        word(
            "BLOSC_SPLITMODE",
            &[
                ("ALWAYS", 1),
                ("NEVER", 2),
                ("AUTO", 3),
                ("FORWARD_COMPAT", 4),
            ],
        )
    }

    /// `BLOSC_COMPRESSOR`: a codec name, in any case (the header documents
    /// upper-case names); `None` when unset or unknown.
    pub(crate) fn compressor() -> Option<c_int> {
        let name = var("BLOSC_COMPRESSOR")?.to_ascii_lowercase();
        let c = std::ffi::CString::new(name).ok()?;
        super::compcode_of(&c)
    }

    /// The filter pipeline of a Blosc1-style call: shuffle in the last slot,
    /// delta in the one before.
    pub(crate) fn build_filters(doshuffle: i32, delta: bool, typesize: i32, filters: &mut [u8; 6]) {
        match doshuffle {
            1 if typesize > 1 => filters[5] = 1,
            2 => filters[5] = 2,
            0 => filters[5] = 0,
            _ => {}
        }
        if delta {
            filters[4] = 3;
        }
    }

    /// The overrides `blosc2_create_cctx` applies to its parameters.
    pub(crate) fn apply_to_cparams(cp: &mut blosc2_cparams) -> crate::Result<()> {
        if let Some(t) = typesize() {
            cp.typesize = t;
        }
        let doshuffle = shuffle().unwrap_or(-1);
        let delta = delta().unwrap_or(false);
        build_filters(doshuffle, delta, cp.typesize, &mut cp.filters);
        if let Some(c) = clevel() {
            cp.clevel = u8::try_from(c)
                .map_err(|_| crate::err!(CodecParam, "BLOSC_CLEVEL {c} out of range"))?;
        }
        if let Some(c) = compressor() {
            if c >= 6 {
                crate::bail!(
                    CodecSupport,
                    "user codecs cannot be set with BLOSC_COMPRESSOR"
                );
            }
            cp.compcode = c as u8;
        }
        if let Some(b) = blocksize() {
            cp.blocksize = b;
        }
        if let Some(n) = nthreads() {
            cp.nthreads = n;
        }
        if let Some(s) = splitmode() {
            cp.splitmode = s;
        }
        Ok(())
    }
}

/// Applies the environment variables `blosc2_compress` honours to the global
/// settings and to its own arguments.
fn compress_env(clevel: &mut c_int, doshuffle: &mut c_int, typesize: &mut i32) {
    if let Some(c) = env_overrides::clevel() {
        *clevel = c;
    }
    if let Some(s) = env_overrides::shuffle() {
        *doshuffle = s;
    }
    if let Some(d) = env_overrides::delta() {
        global::update(|g| g.delta = d);
    }
    if let Some(t) = env_overrides::typesize() {
        *typesize = t;
    }
    if let Some(c) = env_overrides::compressor() {
        if c < 6 {
            global::update(|g| g.compcode = c as u8);
        }
    }
    if let Some(b) = env_overrides::blocksize() {
        global::update(|g| g.blocksize = b);
    }
    if let Some(n) = env_overrides::nthreads() {
        global::update(|g| g.nthreads = n);
    }
    if let Some(s) = env_overrides::splitmode() {
        global::update(|g| g.splitmode = s);
    }
}

fn compress_global(
    clevel: c_int,
    doshuffle: c_int,
    typesize: i32,
    src: &[u8],
    dst: &mut [u8],
) -> crate::Result<usize> {
    if !(0..=9).contains(&clevel) {
        crate::bail!(CodecParam, "clevel {clevel} not in 0..=9");
    }
    let g = global::settings();
    let mut filters = [0u8; 6];
    env_overrides::build_filters(doshuffle, g.delta, typesize, &mut filters);
    let cp = CParams {
        compcode: g.compcode,
        clevel: clevel as u8,
        typesize,
        nthreads: g.nthreads,
        blocksize: g.blocksize,
        splitmode: g.splitmode,
        filters,
        ..CParams::default()
    };
    Compressor::new(cp)?.compress(src, dst)
}

/// Compresses `srcsize` bytes of `src` into `dest` with the global settings
/// (codec, threads, blocksize, split mode, delta), `clevel` 0..=9, shuffle
/// mode `doshuffle` (`BLOSC_NOSHUFFLE`, `BLOSC_SHUFFLE`, `BLOSC_BITSHUFFLE`)
/// and `typesize`. Honours `BLOSC_CLEVEL`, `BLOSC_SHUFFLE`, `BLOSC_DELTA`,
/// `BLOSC_TYPESIZE`, `BLOSC_COMPRESSOR`, `BLOSC_BLOCKSIZE`, `BLOSC_NTHREADS`,
/// `BLOSC_SPLITMODE` (which also change the global settings, as in the
/// reference). Returns the chunk size, 0 when it does not fit, or a negative
/// error.
///
/// # Safety
/// `src` readable for `srcsize` bytes; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: i32,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        global::init();
        let (mut clevel, mut doshuffle, mut typesize) = (clevel, doshuffle, typesize);
        compress_env(&mut clevel, &mut doshuffle, &mut typesize);
        // SAFETY: the caller's contract (the function's `# Safety`) covers these pointers.
        let (src, dst) = unsafe { src_dst_slices(src, srcsize, dest, destsize) }?;
        Ok(compress_global(clevel, doshuffle, typesize, src, dst)? as c_int)
    })
}

fn decompress_global(chunk: &[u8], dest: *mut c_void, destsize: i32) -> crate::Result<c_int> {
    let h = ChunkHeader::parse(chunk)?;
    // SAFETY: the caller's contract: `dest` writable for `destsize` bytes.
    let dst = unsafe { dst_for_chunk(h.nbytes(), dest, destsize) }?;
    let dp = DParams {
        nthreads: global::settings().nthreads,
        ..DParams::default()
    };
    Ok(Decompressor::new(dp).decompress_parsed(&h, chunk, dst)? as c_int)
}

/// `BLOSC_NTHREADS` as `blosc2_decompress` reads it: a set but
/// out-of-range value is an error.
fn decompress_env() -> crate::Result<()> {
    if let Ok(s) = std::env::var("BLOSC_NTHREADS") {
        let n = env_overrides::strtol(&s);
        if n <= 0 || n > i64::from(i16::MAX) {
            crate::bail!(InvalidParam, "BLOSC_NTHREADS must be in 1..={}", i16::MAX);
        }
        global::update(|g| g.nthreads = n as i16);
    }
    Ok(())
}

/// Decompresses a chunk into `dest` with the global thread count (honours
/// `BLOSC_NTHREADS`). Returns the uncompressed size or a negative error.
///
/// # Safety
/// `src` readable for `srcsize` bytes; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        global::init();
        decompress_env()?;
        // SAFETY: the caller's contract.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        decompress_global(chunk, dest, destsize)
    })
}

/// Decodes `nitems` items from item `start` of a chunk into `dest`, on the
/// calling thread. Returns the bytes written or a negative error.
///
/// # Safety
/// `src` readable for `srcsize` bytes; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem(
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract.
        let chunk = unsafe { chunk_slice(src, srcsize) }?;
        let mut d = Decompressor::new(DParams::default());
        getitem_on(&mut d, chunk, start, nitems, dest, destsize)
    })
}

/// Changes the global settings (set up first from the environment), as the
/// `blosc1_set_*` calls do; a contained panic changes nothing more.
fn set_global(f: impl FnOnce(&mut global::GlobalSettings)) {
    guard((), || {
        global::init();
        global::update(f);
    })
}

/// Reads one global setting (set up first from the environment), or
/// `on_panic` if that panics.
fn get_global<T>(on_panic: T, f: impl FnOnce(&global::GlobalSettings) -> T) -> T {
    guard(on_panic, || {
        global::init();
        f(&global::settings())
    })
}

fn clamp_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `blosc2_compress` with `size_t` sizes (sizes above `INT32_MAX` are
/// refused for the source and clamped for the destination).
///
/// # Safety
/// `src` readable for `nbytes` bytes; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc1_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard_code(|| {
        let Ok(nbytes) = i32::try_from(nbytes) else {
            crate::bail!(MaxBufsizeExceeded, "{nbytes} bytes over the maximum");
        };
        let typesize =
            i32::try_from(typesize).map_err(|_| crate::err!(InvalidParam, "typesize too large"))?;
        // SAFETY: the caller's contract, forwarded.
        Ok(unsafe {
            blosc2_compress(
                clevel,
                doshuffle,
                typesize,
                src,
                nbytes,
                dest,
                clamp_i32(destsize),
            )
        })
    })
}

/// Decompresses a chunk whose size is read from its header (the Blosc1
/// call has none) into `dest`. Returns the uncompressed size or a negative
/// error.
///
/// # Safety
/// `src` is a complete chunk; `dest` writable for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc1_decompress(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard_code(|| {
        global::init();
        decompress_env()?;
        // SAFETY: the caller's contract.
        let chunk = unsafe { trusted_chunk(src) }?;
        decompress_global(chunk, dest, clamp_i32(destsize))
    })
}

/// `blosc2_getitem` for a chunk whose size is read from its header; `dest`
/// must hold `nitems * typesize` bytes.
///
/// # Safety
/// `src` is a complete chunk; `dest` writable for the items asked.
#[no_mangle]
pub unsafe extern "C" fn blosc1_getitem(
    src: *const c_void,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: the caller's contract.
        let chunk = unsafe { trusted_chunk(src) }?;
        let ts = ChunkHeader::parse(chunk)?.typesize() as i64;
        let want = (i64::from(nitems.max(0)) * ts).min(i64::from(i32::MAX)) as i32;
        let mut d = Decompressor::new(DParams::default());
        getitem_on(&mut d, chunk, start, nitems, dest, want)
    })
}

/// Reads `nbytes`, `cbytes` and `blocksize` from a chunk header (zeros on a
/// bad header).
///
/// # Safety
/// `cbuffer` points to a chunk header; the outputs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut usize,
    cbytes: *mut usize,
    blocksize: *mut usize,
) {
    guard((), || {
        // SAFETY: the caller's contract.
        let r = unsafe { header_slice(cbuffer) }.and_then(b2nd_core::chunk::cbuffer_sizes);
        let (n, c, b) = r.unwrap_or((0, 0, 0));
        // SAFETY: outputs NULL or writable.
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
    })
}

/// Checks that a buffer of `cbytes` bytes holds one whole chunk and stores
/// its uncompressed size in `*nbytes` (0 on error). Returns 0, or
/// `BLOSC2_ERROR_WRITE_BUFFER` (buffer shorter than a header),
/// `BLOSC2_ERROR_INVALID_HEADER` (size mismatch) or a header error.
///
/// # Safety
/// `cbuffer` readable for `cbytes` bytes; `nbytes` writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: usize,
    nbytes: *mut usize,
) -> c_int {
    guard_code(|| {
        let r = (|| {
            if cbytes < 16 {
                crate::bail!(WriteBuffer, "{cbytes} bytes cannot hold a header");
            }
            // SAFETY: readable for `cbytes >= 16` bytes per the contract.
            let b = unsafe { src_slice(cbuffer, clamp_i32(cbytes.min(32)), "cbuffer") }?;
            let (n, c, _) = b2nd_core::chunk::cbuffer_sizes(b)?;
            if c != cbytes {
                crate::bail!(InvalidHeader, "header says {c} bytes, buffer has {cbytes}");
            }
            if n > b2nd_core::chunk::Fmt::MAX_BUFFERSIZE {
                crate::bail!(MemoryAlloc, "{n} bytes over the maximum buffer size");
            }
            Ok(n)
        })();
        // SAFETY: `nbytes` is NULL or writable.
        if let Some(p) = unsafe { nbytes.as_mut() } {
            *p = *r.as_ref().unwrap_or(&0);
        }
        r.map(|_| 0)
    })
}

/// Reads the typesize and flags byte of a chunk header (zeros on a bad header).
///
/// # Safety
/// `cbuffer` points to a chunk header; the outputs are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut usize,
    flags: *mut c_int,
) {
    guard((), || {
        // SAFETY: the caller's contract.
        let h = unsafe { header_slice(cbuffer) }.and_then(ChunkHeader::parse_unchecked_len);
        let (t, f) = h
            .map(|h| (h.typesize(), c_int::from(h.flags())))
            .unwrap_or((0, 0));
        // SAFETY: outputs NULL or writable.
        unsafe {
            if let Some(p) = typesize.as_mut() {
                *p = t;
            }
            if let Some(p) = flags.as_mut() {
                *p = f;
            }
        }
    })
}

/// Selects the global codec by name ("blosclz", "lz4", "lz4hc", "zlib",
/// "zstd"). Returns its code; -1 for an unknown name (the setting is then
/// left unchanged); `BLOSC2_ERROR_CODEC_SUPPORT` for a user codec.
///
/// # Safety
/// `compname` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc1_set_compressor(compname: *const c_char) -> c_int {
    guard_code(|| {
        if compname.is_null() {
            return Ok(-1);
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(compname) };
        let Some(code) = compcode_of(name) else {
            return Ok(-1);
        };
        if code >= 6 {
            crate::bail!(CodecSupport, "user codecs cannot be set here");
        }
        global::init();
        global::update(|g| g.compcode = code as u8);
        Ok(code)
    })
}

/// The name of the global codec (a static string).
#[no_mangle]
pub extern "C" fn blosc1_get_compressor() -> *const c_char {
    get_global(core::ptr::null(), |g| {
        let mut name: *const c_char = core::ptr::null();
        // SAFETY: `name` is a valid place for the result.
        unsafe { super::chunk::blosc2_compcode_to_compname(c_int::from(g.compcode), &mut name) };
        name
    })
}

/// Forces the global block size (0: automatic).
#[no_mangle]
pub extern "C" fn blosc1_set_blocksize(blocksize: usize) {
    set_global(|g| g.blocksize = clamp_i32(blocksize))
}

/// The forced global block size (0: automatic).
#[no_mangle]
pub extern "C" fn blosc1_get_blocksize() -> c_int {
    get_global(0, |g| g.blocksize)
}

/// Sets the global split mode (`BLOSC_*_SPLIT`).
#[no_mangle]
pub extern "C" fn blosc1_set_splitmode(splitmode: c_int) {
    set_global(|g| g.splitmode = splitmode)
}

/// Sets the global thread count; returns the previous one, or
/// `BLOSC2_ERROR_INVALID_PARAM` for `nthreads <= 0`.
#[no_mangle]
pub extern "C" fn blosc2_set_nthreads(nthreads: i16) -> i16 {
    guard(-1, || {
        global::init();
        if nthreads <= 0 {
            return super::report(&crate::err!(InvalidParam, "nthreads must be >= 1")) as i16;
        }
        let old = global::settings().nthreads;
        global::update(|g| g.nthreads = nthreads);
        old
    })
}

/// The global thread count.
#[no_mangle]
pub extern "C" fn blosc2_get_nthreads() -> i16 {
    get_global(1, |g| g.nthreads)
}

/// Adds (`dodelta > 0`) or removes the delta filter in the global settings.
#[no_mangle]
pub extern "C" fn blosc2_set_delta(dodelta: c_int) {
    set_global(|g| g.delta = dodelta > 0)
}

/// One job handed to the C threads callback: which core job to run, and its index.
#[repr(C)]
struct JobRecord {
    job: *const (dyn Fn(usize) + Sync),
    index: usize,
}

/// The caller's callback and its data, made shareable with the core's worker
/// dispatch.
struct ThreadsCallback {
    callback: unsafe extern "C" fn(
        *mut c_void,
        Option<unsafe extern "C" fn(*mut c_void)>,
        c_int,
        usize,
        *mut c_void,
    ),
    data: *mut c_void,
}
// SAFETY: the reference documents the callback as callable from any thread
// with its `callback_data`; we only pass both back to it unchanged.
unsafe impl Send for ThreadsCallback {}
// SAFETY: as above; nothing is mutated through the shared reference.
unsafe impl Sync for ThreadsCallback {}

/// Runs one job record; this is the `dojob` the C callback calls per job.
unsafe extern "C" fn run_job_record(p: *mut c_void) {
    // SAFETY: `p` points at one `JobRecord` of the array built in
    // `ThreadsCallback::execute`, which stays alive (and its `job` borrowed)
    // until the callback returns, and the reference's contract is that the
    // callback returns only after every `dojob` call has. A panic must not
    // unwind into C: the core's jobs catch their own panics, and the guard
    // stops anything else here.
    let record = unsafe { &*(p as *const JobRecord) };
    // SAFETY: `record.job` is the caller's `job`, borrowed until the callback returns (above).
    let job = unsafe { &*record.job };
    guard((), || job(record.index));
}

impl ThreadsCallback {
    fn execute(&self, njobs: usize, job: &(dyn Fn(usize) + Sync)) {
        // SAFETY: lifetime erasure; the pointer is used only by
        // `run_job_record` during the callback below, while `job` is borrowed.
        let job: *const (dyn Fn(usize) + Sync) = unsafe { core::mem::transmute(job) };
        let mut records: Vec<JobRecord> =
            (0..njobs).map(|index| JobRecord { job, index }).collect();
        let Ok(n) = c_int::try_from(njobs) else {
            return;
        };
        // SAFETY: a C function pointer the caller registered, called with its
        // own data and an array of `njobs` records of the size we pass; the
        // array outlives the call.
        unsafe {
            (self.callback)(
                self.data,
                Some(run_job_record),
                n,
                core::mem::size_of::<JobRecord>(),
                records.as_mut_ptr().cast(),
            )
        };
    }
}

/// Sets the threading backend: multi-threaded compression and decompression
/// hand their per-thread jobs to `callback` (which must run them all before it
/// returns, as the reference requires) instead of the library's worker pool.
/// NULL restores the library's own threads.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_threads_callback(
    callback: blosc_threads_callback,
    callback_data: *mut c_void,
) {
    guard((), || {
        let executor = callback.map(|cb| {
            let backend = ThreadsCallback {
                callback: cb,
                data: callback_data,
            };
            let exec: b2nd_core::chunk::Executor =
                std::sync::Arc::new(move |njobs, job| backend.execute(njobs, job));
            exec
        });
        b2nd_core::chunk::set_external_executor(executor);
    })
}

#[cfg(test)]
mod tests {
    use super::env_overrides::{build_filters, strtol};

    #[test]
    fn strtol_like_c() {
        assert_eq!(strtol("12"), 12);
        assert_eq!(strtol("  -3x"), -3);
        assert_eq!(strtol("+7"), 7);
        assert_eq!(strtol("abc"), 0);
        assert_eq!(strtol(""), 0);
        assert_eq!(strtol("99999999999999999999999"), i64::MAX);
    }

    #[test]
    fn filters_as_the_reference_builds_them() {
        let mut f = [0u8; 6];
        build_filters(1, true, 4, &mut f);
        assert_eq!(f, [0, 0, 0, 0, 3, 1]);
        let mut f = [0u8; 6];
        build_filters(1, false, 1, &mut f);
        assert_eq!(f, [0; 6], "no shuffle for single bytes");
        let mut f = [0, 0, 0, 0, 0, 1];
        build_filters(-1, false, 4, &mut f);
        assert_eq!(f, [0, 0, 0, 0, 0, 1], "-1 keeps the slot");
        build_filters(2, false, 4, &mut f);
        assert_eq!(f[5], 2);
        build_filters(0, false, 4, &mut f);
        assert_eq!(f[5], 0);
    }
}
