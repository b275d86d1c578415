//! The object behind the opaque `blosc2_context` handle, its creation and
//! release, and the conversion of the C parameter structs into the core's
//! [`CParams`]/[`DParams`].
//!
//! Ownership: `blosc2_create_cctx`/`blosc2_create_dctx` allocate a [`Ctx`]
//! with `Box::into_raw` and hand the pointer to C as `blosc2_context *`. The
//! caller owns it and must release it exactly once with `blosc2_free_ctx`,
//! which turns it back into a `Box` and drops it. Every other function only
//! borrows it for the duration of the call.
//!
//! Prefilters and postfilters are C function pointers; they are wrapped into
//! the core's closures here. The closures keep the address of the `Ctx` (to
//! fill `params.ctx` as the reference does), which is stable because the
//! `Ctx` lives in a `Box` until `blosc2_free_ctx`.

use super::blosc1::env_overrides;
use super::guard;
use super::registry::{find_tuner, TunerStep};
use super::types::{
    blosc2_context, blosc2_cparams, blosc2_dparams, blosc2_postfilter_fn, blosc2_postfilter_params,
    blosc2_prefilter_params, blosc2_schunk, blosc2_tuner,
};
use b2nd_core::chunk::{
    CParams, Compressor, DParams, Decompressor, Postfilter, PostfilterArgs, Prefilter,
    PrefilterArgs, PrefilterOutput,
};
use crate::Error;
use core::ffi::c_int;
use std::sync::Arc;

/// What a `blosc2_context *` points to.
pub(crate) struct Ctx {
    /// A number no other context of the process has had: a super-chunk
    /// tells by it whether the context in its `cctx`/`dctx` field is the one
    /// it compresses with already, even when a freed context's address came
    /// back for a new one.
    pub(crate) id: u64,
    /// True for a compression context (`blosc2_create_cctx`).
    pub(crate) do_compress: bool,
    /// The compressor of a compression context.
    pub(crate) comp: Option<Compressor>,
    /// The decompressor: the whole job of a decompression context; a
    /// compression context keeps one too, for `blosc2_getitem_ctx`, which the
    /// reference accepts on any context.
    pub(crate) decomp: Decompressor,
    /// The effective parameters (environment overrides applied), given back
    /// by `blosc2_ctx_get_cparams`; `preparams` points at our own copy.
    pub(crate) cparams: blosc2_cparams,
    /// Given back by `blosc2_ctx_get_dparams`; `postparams` points at our copy.
    pub(crate) dparams: blosc2_dparams,
    /// Our copies of the caller's `preparams`/`postparams`, as the reference
    /// copies them at creation (so the caller's structs may go away).
    preparams: Option<Box<blosc2_prefilter_params>>,
    postparams: Option<Box<blosc2_postfilter_params>>,
    /// A registered user tuner this context drives (see `registry.rs`).
    pub(crate) tuner: Option<blosc2_tuner>,
    /// Typesize of the last chunk decoded (the reference reports it in
    /// `blosc2_ctx_get_dparams`).
    pub(crate) last_typesize: i32,
}

impl Ctx {
    /// Runs one step of the user tuner, if this context has one.
    pub(crate) fn tuner_step(&mut self, step: TunerStep) -> crate::Result<()> {
        let Some(t) = self.tuner else { return Ok(()) };
        let me = self as *mut Ctx as *mut blosc2_context;
        step.run(&t, self.cparams.tuner_params, me)
    }
}

/// A value made of raw pointers that the closures given to the core carry
/// into worker threads.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: the wrapped values are C pointers (a callback, the caller's
// `user_data`, our `Ctx`, a super-chunk). The reference calls prefilters and
// postfilters from its worker threads with exactly these pointers, so C code
// registering them already accepts concurrent calls; we never dereference
// them in Rust except `schunk`, read-only, as the reference does.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as for `Send`: shared use only copies the pointers.
unsafe impl<T> Sync for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// The wrapped value (a method, so closures capture the whole wrapper).
    fn get(&self) -> T {
        self.0
    }
}

/// Reborrows a context handle; `None` for NULL.
///
/// # Safety
/// `ctx` must be NULL or a pointer returned by `blosc2_create_cctx` /
/// `blosc2_create_dctx` and not yet freed, not used by another thread during
/// the call (the reference has the same rule).
pub(crate) unsafe fn ctx_mut<'a>(ctx: *mut blosc2_context) -> Option<&'a mut Ctx> {
    // SAFETY: per the contract above, a non-NULL `ctx` is a live `Box<Ctx>`
    // pointer with no other borrow in progress.
    unsafe { (ctx as *mut Ctx).as_mut() }
}

/// A shared view of a context handle, for the getters: tuners, prefilters and
/// postfilters call them with `params->ctx` while the library is inside a call
/// on the same context, so they must not claim exclusive access.
///
/// # Safety
/// `ctx` must be NULL or a live context.
pub(crate) unsafe fn ctx_ref<'a>(ctx: *const blosc2_context) -> Option<&'a Ctx> {
    // SAFETY: per the contract, a non-NULL `ctx` is a live `Box<Ctx>` pointer.
    unsafe { (ctx as *const Ctx).as_ref() }
}

/// A context id (see [`Ctx::id`]).
fn next_ctx_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The chunk number the reference gives to pre/postfilters: the one the
/// library is working on (`known`, when it is a super-chunk's call), else the
/// super-chunk's `current_nchunk` (a caller compressing with `schunk->cctx`
/// sets it first), else -1.
fn schunk_nchunk(schunk: *mut core::ffi::c_void, known: i64) -> i64 {
    let sc = schunk as *const blosc2_schunk;
    if known >= 0 || sc.is_null() {
        return known;
    }
    // SAFETY: `schunk` in cparams/dparams is, by the C API's contract, NULL
    // or a live `blosc2_schunk` owned by the caller for the context's life;
    // we read one plain field.
    unsafe { (*sc).current_nchunk }
}

/// The cell filters' block shape of the super-chunk a `cparams.schunk` or
/// `dparams.schunk` names (NULL: none), read when a context is created.
fn schunk_block_shape(schunk: *mut core::ffi::c_void) -> Option<Arc<[i64]>> {
    let sc = schunk as *const super::schunk::SchunkBox;
    if sc.is_null() {
        return None;
    }
    // SAFETY: a non-NULL `schunk` in cparams/dparams is, by the C API's
    // contract, a live super-chunk from this library (every one is a
    // `SchunkBox`) that outlives the context; one field is cloned here
    // (what the last call on it showed: this may run inside a call
    // changing it, from one of its callbacks).
    unsafe { (*sc).shown_block_shape.clone() }
}

/// Per-thread scratch handed to C callbacks as `ttmp`.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> crate::Result<R> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    // A fresh buffer for a callback re-entering the library on the same
    // thread, and in the thread's exit handlers.
    b2nd_core::scratch::try_with_kept_bytes(&SCRATCH, len, |t| Ok(f(t)))
}

/// Wraps a C prefilter into the core's closure, filling
/// `blosc2_prefilter_params` as the reference does for each block.
fn adapt_prefilter(
    f: unsafe extern "C" fn(*mut blosc2_prefilter_params) -> c_int,
    template: blosc2_prefilter_params,
    schunk: *mut core::ffi::c_void,
    ctx: *mut Ctx,
) -> Prefilter {
    let shared = Shared((f, template, schunk, ctx));
    Arc::new(move |a: &mut PrefilterArgs<'_>| {
        let (f, template, schunk, ctx) = shared.get();
        let mut p = template;
        p.input = a.input.as_ptr();
        p.output = a.output.as_mut_ptr();
        p.output_size = i32::try_from(a.output.len())
            .map_err(|_| crate::err!(FilterPipeline, "block too large for a prefilter"))?;
        p.output_typesize = a.typesize as i32;
        p.output_offset = a.offset as i32;
        p.nblock = a.nblock as i32;
        p.nchunk = schunk_nchunk(schunk, a.nchunk);
        p.tid = a.tid as i32;
        p.ctx = ctx as *mut blosc2_context;
        let rc = with_scratch(4 * a.output.len().max(1), |t| {
            p.ttmp = t.as_mut_ptr();
            p.ttmp_nbytes = t.len();
            // SAFETY: `f` is the caller's prefilter; every pointer in `p`
            // refers to memory live for this call (the block, its output,
            // the scratch, the context), with the sizes stated in `p`.
            unsafe { f(&mut p) }
        })?;
        if rc != 0 {
            crate::bail!(FilterPipeline, "prefilter returned {rc}");
        }
        Ok(())
    })
}

/// Wraps a C postfilter into the core's closure.
fn adapt_postfilter(
    f: unsafe extern "C" fn(*mut blosc2_postfilter_params) -> c_int,
    template: blosc2_postfilter_params,
    schunk: *mut core::ffi::c_void,
    ctx: *mut Ctx,
) -> Postfilter {
    let shared = Shared((f, template, schunk, ctx));
    Arc::new(move |a: &mut PostfilterArgs<'_>| {
        let (f, template, schunk, ctx) = shared.get();
        let mut p = template;
        p.input = a.input.as_ptr();
        p.output = a.output.as_mut_ptr();
        p.size = i32::try_from(a.output.len())
            .map_err(|_| crate::err!(Postfilter, "block too large for a postfilter"))?;
        p.typesize = a.typesize as i32;
        p.offset = a.offset as i32;
        p.nblock = a.nblock as i32;
        p.nchunk = schunk_nchunk(schunk, a.nchunk);
        p.tid = a.tid as i32;
        p.ctx = ctx as *mut blosc2_context;
        let rc = with_scratch(4 * a.output.len().max(1), |t| {
            p.ttmp = t.as_mut_ptr();
            p.ttmp_nbytes = t.len();
            // SAFETY: as for the prefilter: all pointers in `p` are live for
            // this call and sized as `p` says.
            unsafe { f(&mut p) }
        })?;
        if rc != 0 {
            crate::bail!(Postfilter, "postfilter returned {rc}");
        }
        Ok(())
    })
}

/// The core's compression parameters for a C struct (no prefilter).
pub(crate) fn core_cparams(c: &blosc2_cparams) -> CParams {
    CParams {
        compcode: c.compcode,
        compcode_meta: c.compcode_meta,
        clevel: c.clevel,
        use_dict: c.use_dict != 0,
        typesize: c.typesize,
        nthreads: c.nthreads,
        blocksize: c.blocksize,
        splitmode: c.splitmode,
        filters: c.filters,
        filters_meta: c.filters_meta,
        instr_codec: c.instr_codec,
        // User tuners (ids >= 160) are driven by this layer around the core's
        // own block size choice (stune), see `registry.rs`.
        tuner_id: if c.tuner_id >= super::constants::BLOSC2_USER_REGISTERED_TUNER_START {
            0
        } else {
            c.tuner_id
        },
        prefilter: None,
        prefilter_output: PrefilterOutput::default(),
        block_shape: schunk_block_shape(c.schunk),
        // Read from the super-chunk when the prefilter runs (see `schunk_nchunk`).
        nchunk: -1,
        user_data: Some(std::sync::Arc::new(super::registry::CallerCParams(*c))),
    }
}

/// Builds a compression context; the error says why the reference would
/// return NULL.
fn create_cctx(cparams: blosc2_cparams) -> crate::Result<*mut Ctx> {
    let mut cp = cparams;
    env_overrides::apply_to_cparams(&mut cp)?;
    if cp.prefilter.is_some() && cp.preparams.is_null() {
        crate::bail!(NullPointer, "a prefilter needs preparams");
    }
    let tuner = if cp.tuner_id >= super::constants::BLOSC2_USER_REGISTERED_TUNER_START {
        Some(find_tuner(cp.tuner_id)?)
    } else {
        None
    };
    // SAFETY: checked non-NULL above when a prefilter is set; the caller
    // guarantees it points to a readable struct, copied as the reference does.
    let preparams = cp.prefilter.map(|_| Box::new(unsafe { *cp.preparams }));
    let mut ctx = Box::new(Ctx {
        id: next_ctx_id(),
        do_compress: true,
        comp: None,
        decomp: Decompressor::new(DParams::default()),
        cparams: cp,
        dparams: super::defaults::DPARAMS_DEFAULTS,
        preparams,
        postparams: None,
        tuner,
        last_typesize: 0,
    });
    let me: *mut Ctx = &mut *ctx;
    let mut core = core_cparams(&cp);
    if let (Some(f), Some(pp)) = (cp.prefilter, ctx.preparams.as_deref_mut()) {
        ctx.cparams.preparams = pp;
        core.prefilter = Some(adapt_prefilter(f, *pp, cp.schunk, me));
        core.prefilter_output = PrefilterOutput {
            typesize: usize::try_from(pp.output_typesize).unwrap_or(0),
            disposable: pp.output_is_disposable,
        };
    }
    ctx.comp = Some(Compressor::new(core)?);
    let raw = Box::into_raw(ctx);
    if let Some(t) = tuner {
        // SAFETY: `raw` was just created from a Box and is not shared yet.
        let init = TunerStep::Init.run(&t, cp.tuner_params, raw as *mut blosc2_context);
        if let Err(e) = init {
            // SAFETY: `raw` came from Box::into_raw above and is dropped once.
            drop(unsafe { Box::from_raw(raw) });
            return Err(e);
        }
    }
    Ok(raw)
}

/// Builds a decompression context.
fn create_dctx(dparams: blosc2_dparams) -> crate::Result<*mut Ctx> {
    let mut dp = dparams;
    if let Some(n) = env_overrides::nthreads() {
        dp.nthreads = n;
    }
    if dp.postfilter.is_some() && dp.postparams.is_null() {
        crate::bail!(NullPointer, "a postfilter needs postparams");
    }
    // SAFETY: non-NULL when a postfilter is set (checked above); copied as
    // the reference copies it.
    let postparams = dp.postfilter.map(|_| Box::new(unsafe { *dp.postparams }));
    let mut ctx = Box::new(Ctx {
        id: next_ctx_id(),
        do_compress: false,
        comp: None,
        decomp: Decompressor::new(DParams::default()),
        cparams: super::defaults::CPARAMS_DEFAULTS,
        dparams: dp,
        preparams: None,
        postparams,
        tuner: None,
        last_typesize: 0,
    });
    let me: *mut Ctx = &mut *ctx;
    let mut core = DParams {
        nthreads: dp.nthreads,
        postfilter: None,
        nchunk: -1,
        user_data: Some(std::sync::Arc::new(super::registry::CallerDParams(dp))),
        block_shape: schunk_block_shape(dp.schunk),
    };
    let pf: blosc2_postfilter_fn = dp.postfilter;
    if let (Some(f), Some(pp)) = (pf, ctx.postparams.as_deref_mut()) {
        ctx.dparams.postparams = pp;
        core.postfilter = Some(adapt_postfilter(f, *pp, dp.schunk, me));
    }
    ctx.decomp = Decompressor::new(core);
    Ok(Box::into_raw(ctx))
}

/// Creates a compression context for `cparams` (environment variables
/// `BLOSC_*` override fields as in the reference). NULL on invalid
/// parameters. Free it with `blosc2_free_ctx`.
#[no_mangle]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(core::ptr::null_mut(), || match create_cctx(cparams) {
        Ok(p) => p as *mut blosc2_context,
        Err(e) => {
            super::report(&e);
            core::ptr::null_mut()
        }
    })
}

/// Creates a decompression context for `dparams` (`BLOSC_NTHREADS`
/// overrides `nthreads`). NULL on invalid parameters. Free it with
/// `blosc2_free_ctx`.
#[no_mangle]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(core::ptr::null_mut(), || match create_dctx(dparams) {
        Ok(p) => p as *mut blosc2_context,
        Err(e) => {
            super::report(&e);
            core::ptr::null_mut()
        }
    })
}

/// Releases a context created by `blosc2_create_cctx`/`_dctx` (NULL is
/// ignored). A user tuner's `free` callback runs first when `tuner_params`
/// is set, as in the reference.
///
/// # Safety
/// `context` must be NULL or a live context not used concurrently; it is
/// invalid after the call.
#[no_mangle]
pub unsafe extern "C" fn blosc2_free_ctx(context: *mut blosc2_context) {
    guard((), || {
        if context.is_null() {
            return;
        }
        // SAFETY: per the contract, `context` is a live context; we borrow it
        // for the tuner call and then reclaim the Box exactly once.
        if let Some(ctx) = unsafe { ctx_mut(context) } {
            if let Err(e) = ctx.tuner_step(TunerStep::Free) {
                super::report(&e);
            }
        }
        // SAFETY: `context` came from Box::into_raw in create_*ctx.
        drop(unsafe { Box::from_raw(context as *mut Ctx) });
    })
}

/// Copies the compression parameters of a context into `*cparams`.
/// Returns 0, or `BLOSC2_ERROR_NULL_POINTER`.
///
/// # Safety
/// `ctx` must be a live context; `cparams` must point to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_cparams(
    ctx: *mut blosc2_context,
    cparams: *mut blosc2_cparams,
) -> c_int {
    guard(Error::FAILURE_CODE, || {
        // SAFETY: per the contract; NULL is checked by `ctx_mut`/`as_mut`.
        let (Some(c), Some(out)) = (unsafe { ctx_ref(ctx) }, unsafe { cparams.as_mut() }) else {
            return super::report(&crate::err!(NullPointer, "ctx or cparams is NULL"));
        };
        *out = c.cparams;
        0
    })
}

/// Copies the decompression parameters of a context into `*dparams`
/// (`typesize` is that of the last chunk decoded). Returns 0, or
/// `BLOSC2_ERROR_NULL_POINTER`.
///
/// # Safety
/// `ctx` must be a live context; `dparams` must point to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_dparams(
    ctx: *mut blosc2_context,
    dparams: *mut blosc2_dparams,
) -> c_int {
    guard(Error::FAILURE_CODE, || {
        // SAFETY: per the contract; NULL is checked by `ctx_mut`/`as_mut`.
        let (Some(c), Some(out)) = (unsafe { ctx_ref(ctx) }, unsafe { dparams.as_mut() }) else {
            return super::report(&crate::err!(NullPointer, "ctx or dparams is NULL"));
        };
        *out = c.dparams;
        out.typesize = if c.do_compress {
            c.cparams.typesize
        } else {
            c.last_typesize
        };
        0
    })
}
