//! Registration of user codecs, filters and tuners from C.
//!
//! C codecs and filters are adapted to the core's [`UserCodec`] and
//! [`UserFilter`] traits and registered in `b2nd_core::codecs::registry`, which
//! applies the reference's id and name rules.
//!
//! Tuners: in the reference a tuner edits the private fields of
//! `blosc2_context` (block size, codec, level) from its callbacks. Here the
//! context is opaque and has no setters in the public API, so a user tuner is
//! an *observer*: it is validated and stored by `blosc2_register_tuner`, and
//! a context whose `cparams.tuner_id` names it calls its callbacks at the
//! points the reference does (`init` at creation; before each chunk
//! `next_cparams` when `tuner_params` is set, else `next_blocksize`; `update`
//! with the compression time after each chunk and `free` at release, both
//! only when `tuner_params` is set). A negative return fails the call with
//! `BLOSC2_ERROR_TUNER`. The parameters actually used are the context's own,
//! with the built-in block size choice, so chunks are always valid.

use super::guard_code;
use super::types::{
    blosc2_codec, blosc2_codec_decoder_cb, blosc2_codec_encoder_cb, blosc2_context, blosc2_cparams,
    blosc2_dparams, blosc2_filter, blosc2_filter_backward_cb, blosc2_filter_forward_cb,
    blosc2_tuner,
};
use b2nd_core::codecs::registry::{self, CallInfo, CodecEntry, FilterEntry, UserCodec, UserFilter};
use core::ffi::{c_char, c_int, c_void, CStr};
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

/// The caller's `blosc2_cparams`, carried through the core (as
/// `CParams::user_data`) so C codecs and filters see its `codec_params`,
/// `filter_params` and `schunk`, as the reference passes them.
pub(crate) struct CallerCParams(pub(crate) blosc2_cparams);
/// The caller's `blosc2_dparams`, likewise for decoders and backward filters.
pub(crate) struct CallerDParams(pub(crate) blosc2_dparams);
// SAFETY: the raw pointers inside are the caller's; they are only handed back
// to the caller's own callbacks, which the reference also calls from its
// worker threads. Nothing here dereferences them.
unsafe impl Send for CallerCParams {}
// SAFETY: as above; the value is never mutated once built.
unsafe impl Sync for CallerCParams {}
// SAFETY: as for `CallerCParams`.
unsafe impl Send for CallerDParams {}
// SAFETY: as for `CallerCParams`.
unsafe impl Sync for CallerDParams {}

/// The `blosc2_cparams` a C codec or filter sees: the caller's own struct
/// (defaults when the core was driven from Rust), with the chunk's actual
/// parameters filled in.
fn cparams_for(info: &CallInfo<'_>) -> blosc2_cparams {
    let mut cp = info
        .user
        .and_then(|u| u.downcast_ref::<CallerCParams>())
        .map_or(super::defaults::CPARAMS_DEFAULTS, |c| c.0);
    cp.compcode = info.compcode;
    cp.compcode_meta = info.compcode_meta;
    cp.clevel = info.clevel;
    cp.typesize = info.typesize;
    cp.nthreads = info.nthreads;
    cp.blocksize = info.blocksize;
    cp
}

/// The `blosc2_dparams` a C decoder or backward filter sees.
fn dparams_for(info: &CallInfo<'_>) -> blosc2_dparams {
    let mut dp = info
        .user
        .and_then(|u| u.downcast_ref::<CallerDParams>())
        .map_or(super::defaults::DPARAMS_DEFAULTS, |d| d.0);
    dp.nthreads = info.nthreads;
    dp.typesize = info.typesize;
    dp
}

fn len_i32(len: usize) -> crate::Result<i32> {
    i32::try_from(len).map_err(|_| crate::err!(TwoGbLimit, "buffer of {len} bytes"))
}

/// Calls a C encoder or decoder (they differ only in their parameter
/// struct `P`) on live slices and returns what it returned.
fn call_codec<P>(
    f: unsafe extern "C" fn(*const u8, i32, *mut u8, i32, u8, *mut P, *const c_void) -> c_int,
    src: &[u8],
    dst: &mut [u8],
    meta: u8,
    mut params: P,
    info: &CallInfo<'_>,
) -> crate::Result<c_int> {
    let (src_len, dst_len) = (len_i32(src.len())?, len_i32(dst.len())?);
    // SAFETY: `f` is a callback registered by the caller; it reads
    // `src.len()` bytes and writes at most `dst.len()` bytes, both live
    // slices of exactly those lengths; `params` and the chunk pointer are
    // valid for the call.
    Ok(unsafe {
        f(
            src.as_ptr(),
            src_len,
            dst.as_mut_ptr(),
            dst_len,
            meta,
            &mut params,
            info.chunk.as_ptr() as *const c_void,
        )
    })
}

/// Calls a C forward or backward filter (they differ only in their
/// parameter struct `P`); `direction` names it in the errors.
fn call_filter<P>(
    id: u8,
    direction: &str,
    f: Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut P, u8) -> c_int>,
    src: &[u8],
    dst: &mut [u8],
    meta: u8,
    mut params: P,
) -> crate::Result<()> {
    let Some(f) = f else {
        crate::bail!(
            FilterPipeline,
            "user filter {id} has no {direction} function"
        );
    };
    let n = len_i32(src.len().min(dst.len()))?;
    // SAFETY: `f` is a callback registered by the caller; `src` and `dst`
    // are live blocks of at least `n` bytes; `params` is valid for the call.
    let rc = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), n, meta, &mut params, id) };
    if rc != 0 {
        crate::bail!(FilterPipeline, "user filter {id} {direction} returned {rc}");
    }
    Ok(())
}

/// A codec made of the C callbacks of a `blosc2_codec`. A callback the
/// caller left NULL comes from the plugin library named after the codec
/// (`super::plugin`), loaded at first need as in the reference: compressing
/// needs the encoder, decompressing the decoder, and a load supplies both.
struct CCodec {
    name: String,
    encoder: blosc2_codec_encoder_cb,
    decoder: blosc2_codec_decoder_cb,
    loaded: OnceLock<(blosc2_codec_encoder_cb, blosc2_codec_decoder_cb)>,
}

impl CCodec {
    fn new(
        name: String,
        encoder: blosc2_codec_encoder_cb,
        decoder: blosc2_codec_decoder_cb,
    ) -> Self {
        CCodec {
            name,
            encoder,
            decoder,
            loaded: OnceLock::new(),
        }
    }

    /// The callbacks to use when `given` (the registered one) is NULL.
    fn plugin(&self, id: u8) -> crate::Result<(blosc2_codec_encoder_cb, blosc2_codec_decoder_cb)> {
        if let Some(fns) = self.loaded.get() {
            return Ok(*fns);
        }
        let fns = super::plugin::codec(&self.name)
            .map_err(|e| crate::err!(CodecSupport, "could not load codec {id}: {}", e.detail()))?;
        Ok(*self.loaded.get_or_init(|| fns))
    }
}

impl UserCodec for CCodec {
    fn encode(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<usize> {
        let enc = match self.encoder {
            Some(f) => f,
            None => match self.plugin(info.compcode)?.0 {
                Some(f) => f,
                None => crate::bail!(CodecSupport, "codec {} has no encoder", info.compcode),
            },
        };
        let rc = call_codec(enc, src, dst, meta, cparams_for(info), info)?;
        if rc < 0 {
            crate::bail!(Data, "user codec {} encoder returned {rc}", info.compcode);
        }
        let n = rc as usize;
        if n > dst.len() {
            crate::bail!(
                WriteBuffer,
                "user codec {} wrote past its output",
                info.compcode
            );
        }
        Ok(n)
    }

    fn decode(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<usize> {
        let dec = match self.decoder {
            Some(f) => f,
            None => match self.plugin(info.compcode)?.1 {
                Some(f) => f,
                None => crate::bail!(CodecSupport, "codec {} has no decoder", info.compcode),
            },
        };
        let rc = call_codec(dec, src, dst, meta, dparams_for(info), info)?;
        if rc < 0 || rc as usize != dst.len() {
            crate::bail!(
                Data,
                "user codec {} decoder returned {rc}, expected {}",
                info.compcode,
                dst.len()
            );
        }
        Ok(rc as usize)
    }
}

/// A filter made of the C callbacks of a `blosc2_filter`; a NULL callback
/// comes from the plugin library named after the filter, as for [`CCodec`].
struct CFilter {
    id: u8,
    name: String,
    forward: blosc2_filter_forward_cb,
    backward: blosc2_filter_backward_cb,
    loaded: OnceLock<(blosc2_filter_forward_cb, blosc2_filter_backward_cb)>,
}

impl CFilter {
    fn plugin(&self) -> crate::Result<(blosc2_filter_forward_cb, blosc2_filter_backward_cb)> {
        if let Some(fns) = self.loaded.get() {
            return Ok(*fns);
        }
        let fns = super::plugin::filter(&self.name).map_err(|e| {
            crate::err!(
                FilterPipeline,
                "could not load filter {}: {}",
                self.id,
                e.detail()
            )
        })?;
        Ok(*self.loaded.get_or_init(|| fns))
    }
}

impl UserFilter for CFilter {
    fn forward(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<()> {
        let f = match self.forward {
            Some(f) => Some(f),
            None => self.plugin()?.0,
        };
        let cp = cparams_for(info);
        call_filter(self.id, "forward", f, src, dst, meta, cp)
    }

    fn backward(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<()> {
        let f = match self.backward {
            Some(f) => Some(f),
            None => self.plugin()?.1,
        };
        let dp = dparams_for(info);
        call_filter(self.id, "backward", f, src, dst, meta, dp)
    }
}

/// Reads a C name; NULL or non-UTF-8 names are refused.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn name_of(p: *const c_char) -> crate::Result<String> {
    if p.is_null() {
        crate::bail!(InvalidParam, "name is NULL");
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(str::to_owned)
        .map_err(|_| crate::err!(InvalidParam, "name is not UTF-8"))
}

/// Names of registered codecs as NUL-terminated strings that live as long as
/// the process (entries are never removed, and a `CString`'s bytes do not
/// move when the vector grows), for `blosc2_compcode_to_compname`.
static CODEC_NAMES: Mutex<Vec<(u8, u8, CString)>> = Mutex::new(Vec::new());

/// The static C name of a registered user codec.
pub(crate) fn user_codec_cname(id: u8) -> Option<*const c_char> {
    let names = CODEC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    names
        .iter()
        .find(|(i, _, _)| *i == id)
        .map(|(_, _, n)| n.as_ptr())
}

/// `(compcode, complib)` of the registered user codec called `name`.
pub(crate) fn user_codec_by_name(name: &CStr) -> Option<(u8, u8)> {
    let names = CODEC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    names
        .iter()
        .find(|(_, _, n)| n.as_c_str() == name)
        .map(|(i, l, _)| (*i, *l))
}

/// The static name of the first registered user codec with library code
/// `complib` (the reference names a user library after its codec).
pub(crate) fn user_complib_cname(complib: u8) -> Option<*const c_char> {
    let names = CODEC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    names
        .iter()
        .find(|(_, l, _)| *l == complib)
        .map(|(_, _, n)| n.as_ptr())
}

fn register_codec(codec: *mut blosc2_codec) -> crate::Result<()> {
    // SAFETY: the caller passes NULL or a readable `blosc2_codec`.
    let Some(c) = (unsafe { codec.as_ref() }) else {
        crate::bail!(InvalidParam, "codec is NULL");
    };
    if i32::from(c.compcode) < super::constants::BLOSC2_USER_REGISTERED_CODECS_START {
        crate::bail!(
            CodecParam,
            "user codec ids start at 160, got {}",
            c.compcode
        );
    }
    // SAFETY: `compname` is NULL or NUL-terminated per the C API.
    let name = unsafe { name_of(c.compname) }?;
    let cname = CString::new(name.clone()).map_err(|_| crate::err!(InvalidParam, "bad name"))?;
    registry::register_codec(CodecEntry {
        id: c.compcode,
        name: name.clone(),
        version: c.version,
        codec: Arc::new(CCodec::new(name, c.encoder, c.decoder)),
    })?;
    let mut names = CODEC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if !names.iter().any(|(i, _, _)| *i == c.compcode) {
        names.push((c.compcode, c.complib, cname));
    }
    Ok(())
}

fn register_filter(filter: *mut blosc2_filter) -> crate::Result<()> {
    // SAFETY: the caller passes NULL or a readable `blosc2_filter`.
    let Some(f) = (unsafe { filter.as_ref() }) else {
        crate::bail!(InvalidParam, "filter is NULL");
    };
    if i32::from(f.id) < super::constants::BLOSC2_USER_REGISTERED_FILTERS_START {
        crate::bail!(Failure, "user filter ids start at 160, got {}", f.id);
    }
    // The name only says which plugin library to load, so it is read only
    // when a callback is missing: python-blosc2 registers filters with both
    // callbacks from a stack struct whose `name` it never sets, and the
    // reference, which copies the struct, never reads it either then.
    // Such a filter is known by its callbacks instead: registering its id
    // again with the same ones succeeds, with others fails.
    let name = if let (Some(fw), Some(bw)) = (f.forward, f.backward) {
        format!("<callbacks {:p}, {:p}>", fw as *const (), bw as *const ())
    } else {
        // SAFETY: `name` is NULL or NUL-terminated per the C API.
        unsafe { name_of(f.name) }?
    };
    registry::register_filter(FilterEntry {
        id: f.id,
        name: name.clone(),
        version: f.version,
        filter: Arc::new(CFilter {
            id: f.id,
            name,
            forward: f.forward,
            backward: f.backward,
            loaded: OnceLock::new(),
        }),
    })
}

/// The reference's codecs that exist only as dynamically loaded plugins:
/// (id, name). `blosc2_init` registers them, as the reference's does, so a
/// chunk that uses one loads `libblosc2_<name>.so` at first need.
const LOADABLE_CODECS: [(u8, &str); 5] = [
    (36, "openhtj2k"),
    (37, "grok"),
    (38, "openzl"),
    (39, "j2k"),
    (40, "htj2k"),
];

/// Registers [`LOADABLE_CODECS`]; idempotent (a second registration of the
/// same id and name changes nothing).
pub(crate) fn register_loadable_codecs() -> crate::Result<()> {
    for (id, name) in LOADABLE_CODECS {
        registry::register_reference_plugin(CodecEntry {
            id,
            name: name.to_owned(),
            version: 1,
            codec: Arc::new(CCodec::new(name.to_owned(), None, None)),
        })?;
    }
    Ok(())
}

/// Registers a user codec (`compcode` 160..=255). NULL `encoder` or
/// `decoder` callbacks are loaded from the plugin library named after
/// `compname` when first needed (see `blosc2/codecs-registry.h`). Returns 0;
/// `BLOSC2_ERROR_CODEC_PARAM` for a lower id or an id already registered
/// under another name; `BLOSC2_ERROR_INVALID_PARAM` for NULL; registering the
/// same id and name again succeeds and changes nothing.
///
/// # Safety
/// `codec` must be NULL or point to a `blosc2_codec` whose `compname` is a
/// NUL-terminated string; its callbacks must stay callable for the process.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard_code(|| register_codec(codec).map(|()| 0))
}

/// Registers a user filter (`id` 160..=255); NULL callbacks are loaded
/// from the plugin library named after it, as for codecs. `name` and
/// `version` are not read when both callbacks are given (python-blosc2
/// leaves them unset): such a filter is known by its callbacks. Returns 0;
/// `BLOSC2_ERROR_FAILURE` for a lower id or an id taken under another name
/// (or other callbacks); `BLOSC2_ERROR_INVALID_PARAM` for NULL.
///
/// # Safety
/// As for `blosc2_register_codec`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_filter(filter: *mut blosc2_filter) -> c_int {
    guard_code(|| register_filter(filter).map(|()| 0))
}

// ---- Tuners -------------------------------------------------------------------

/// A registered tuner and its name (compared on re-registration).
#[derive(Clone, Copy)]
struct TunerEntry {
    tuner: blosc2_tuner,
}
// SAFETY: the entry holds C function pointers and the caller's name pointer,
// only copied between threads and called as the reference calls them.
unsafe impl Send for TunerEntry {}

static TUNERS: Mutex<Vec<(TunerEntry, String)>> = Mutex::new(Vec::new());
const MAX_TUNERS: usize = 255;

fn register_tuner(tuner: *mut blosc2_tuner) -> crate::Result<()> {
    // SAFETY: the caller passes NULL or a readable `blosc2_tuner`.
    let Some(t) = (unsafe { tuner.as_ref() }) else {
        crate::bail!(InvalidParam, "tuner is NULL");
    };
    if t.id < super::constants::BLOSC2_USER_REGISTERED_TUNER_START {
        crate::bail!(Failure, "user tuner ids start at 160, got {}", t.id);
    }
    if t.id > super::constants::BLOSC2_USER_REGISTERED_TUNER_STOP {
        crate::bail!(Failure, "tuner ids end at 255, got {}", t.id);
    }
    // SAFETY: `name` is NULL or NUL-terminated per the C API.
    let name = unsafe { name_of(t.name) }?;
    let mut tuners = TUNERS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, old)) = tuners.iter().find(|(e, _)| e.tuner.id == t.id) {
        if *old != name {
            crate::bail!(Failure, "tuner id {} already registered as {old}", t.id);
        }
        return Ok(());
    }
    if tuners.len() >= MAX_TUNERS {
        crate::bail!(CodecSupport, "cannot register more tuners");
    }
    tuners.push((TunerEntry { tuner: *t }, name));
    Ok(())
}

/// The registered tuner with this id (creating a context with an unknown
/// tuner fails, as in the reference).
pub(crate) fn find_tuner(id: c_int) -> crate::Result<blosc2_tuner> {
    let tuners = TUNERS.lock().unwrap_or_else(|p| p.into_inner());
    match tuners.iter().find(|(e, _)| e.tuner.id == id) {
        Some((e, _)) => Ok(e.tuner),
        None => crate::bail!(InvalidParam, "user-defined tuner {id} not found"),
    }
}

/// The points where a context calls its user tuner.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TunerStep {
    /// At context creation: `init(tuner_params, cctx, NULL)`.
    Init,
    /// Before each chunk: `next_cparams` with `tuner_params`, else `next_blocksize`.
    Before,
    /// After each chunk, with the compression time in seconds (only with `tuner_params`).
    Update(f64),
    /// At release (only with `tuner_params`).
    Free,
}

impl TunerStep {
    pub(crate) fn run(
        self,
        t: &blosc2_tuner,
        params: *mut c_void,
        ctx: *mut blosc2_context,
    ) -> crate::Result<()> {
        let has_params = !params.is_null();
        // Each callback comes from a registered `blosc2_tuner`; `ctx` is a
        // live context and `params` the caller's own pointer, passed through.
        let call0 = |f: unsafe extern "C" fn(*mut blosc2_context) -> c_int| {
            // SAFETY: see above; the callback only receives the live context.
            unsafe { f(ctx) }
        };
        let rc = match self {
            TunerStep::Init => t.init.map(|f| {
                // SAFETY: see above; `dctx` is NULL as in the reference.
                unsafe { f(params, ctx, core::ptr::null_mut()) }
            }),
            TunerStep::Before if has_params => t.next_cparams.map(call0),
            TunerStep::Before => t.next_blocksize.map(call0),
            TunerStep::Update(secs) if has_params => t.update.map(|f| {
                // SAFETY: see above.
                unsafe { f(ctx, secs) }
            }),
            TunerStep::Free if has_params => t.free.map(call0),
            TunerStep::Update(_) | TunerStep::Free => Some(0),
        };
        match rc {
            None => crate::bail!(Failure, "tuner {} lacks the callback for {self:?}", t.id),
            Some(rc) if rc < 0 => crate::bail!(Tuner, "tuner {} {self:?} returned {rc}", t.id),
            Some(_) => Ok(()),
        }
    }
}

/// Registers a user tuner (`id` 160..=255); see the module documentation for
/// what a tuner does here. Returns 0; `BLOSC2_ERROR_FAILURE` for an id out of
/// range or taken under another name; `BLOSC2_ERROR_INVALID_PARAM` for NULL.
///
/// # Safety
/// `tuner` must be NULL or point to a `blosc2_tuner` whose `name` is a
/// NUL-terminated string; its callbacks must stay callable for the process.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_tuner(tuner: *mut blosc2_tuner) -> c_int {
    guard_code(|| register_tuner(tuner).map(|()| 0))
}
