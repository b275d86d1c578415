//! The C face of b2nd arrays: contexts, creation, persistence and freeing.
//! Slices, reshaping, selections and views live in [`ops`]; the metalayer
//! (de)serializers and the N-dimensional buffer copies in [`meta`].
//!
//! # The C objects
//!
//! `b2nd_context_t*` is a boxed [`CtxBox`]: the core [`Context`] built from
//! the caller's storage, shapes, dtype and metalayers, plus a copy of the
//! caller's `blosc2_io` (for the super-chunk's `storage->io`).
//!
//! `b2nd_array_t*` is the address of a heap [`ArrayBox`] whose *first* field
//! is the public `b2nd_array_t`. The box owns the core [`NdArray`], the dtype
//! string `dtype` points at, and the super-chunk `sc` points at: a real
//! `blosc2_schunk*` made by `super::schunk` that works with every
//! `blosc2_schunk_*` call.
//!
//! One super-chunk, two owners: the core array reaches its super-chunk
//! through its store, the C super-chunk object owns one too. Between calls
//! the real super-chunk lives in the C object (so `blosc2_schunk_*` calls on
//! `array->sc` see it) and the array holds an empty in-memory stand-in; for
//! the length of each b2nd call the two are swapped ([`lend`]), then both C
//! structs are refreshed.
//!
//! Views (`b2nd_squeeze`, `b2nd_squeeze_index`, `b2nd_expand_dims`) are
//! boxes of their own whose core array shares the source's chunk store and
//! whose `sc` is the source's C super-chunk: lending works the same through
//! either. The C super-chunk is counted ([`ScOwner`]): `b2nd_free` frees the
//! box, and the super-chunk with the last box using it, so an array and its
//! views may be freed in any order (the reference requires views first).
//! `b2nd_from_schunk` takes over the super-chunk it is given, as the
//! reference does (on success only).

mod meta;
mod ops;

use core::ffi::{c_char, c_int, c_void};
use std::ffi::CString;
use std::sync::Arc;

use super::schunk::{this, SchunkBox, SchunkSlot};
use super::storage::{path_from_c, storage_from_c};
use super::types::{
    b2nd_array_t, b2nd_context_t, blosc2_io, blosc2_metalayer, blosc2_schunk, blosc2_storage,
    chunk_cache_s,
};
use super::{convert, guard};
use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::ndarray::padded;
use b2nd_core::schunk::SharedSChunk;
use crate::Result;

/// Most dimensions of an array (the reference `B2ND_MAX_DIM`).
const MAX_DIM: usize = 16;

/// The heap object behind every `b2nd_context_t*`.
///
/// The public fields (`c`) are the context: every call that takes one reads
/// them afresh ([`CtxBox::current`]), as the reference reads its struct, so
/// a caller that writes to them between calls (C-Blosc2's tests set
/// `ctx->b2_storage->urlpath = NULL` to make the next slice in memory) is
/// followed. `b2nd_get_slice`, `b2nd_copy` and `b2nd_concatenate` write the
/// shape they made the new array with back into them, as the reference does.
///
/// The reference's `b2nd_create_ctx` rejects only malformed arguments
/// (see [`reference_ctx_checks`]); geometry it cannot build an array from
/// (overflowing shapes, oversized chunks, a zero chunkshape under a
/// non-empty dimension) fails later, when an array is made from the
/// context with the shape it then has.
#[repr(C)]
pub(crate) struct CtxBox {
    /// Must stay first: the C pointer is the box's address.
    c: CtxFields,
    /// What `c`'s pointers point into.
    dtype: CString,
    urlpath: Option<CString>,
    storage: blosc2_storage,
    cparams: super::types::blosc2_cparams,
    dparams: super::types::blosc2_dparams,
    /// The caller's I/O backend, copied (`storage.io` points here).
    io: Option<blosc2_io>,
    /// Holds the backend's params for the context's life: a backend's
    /// `destroy` runs when nothing holds its params any more (see
    /// `ffi::io`), and arrays made from this context use them after the
    /// call that made it returned.
    io_holder: Option<b2nd_core::frame::IoRef>,
    layers: Vec<(CString, Vec<u8>)>,
}

/// The fields the reference's private `struct b2nd_context_s` holds, in its
/// order. No public header shows them (`b2nd_context_t` is opaque), but
/// C-Blosc2's own tests read and write them through its private
/// `context.h`, and a test-only header with this layout serves them here
/// (`clients/c-blosc2/shim/context.h`). The pointers start out pointing
/// into the box; a caller may point them elsewhere, as with the reference.
#[repr(C)]
struct CtxFields {
    ndim: i8,
    shape: [i64; MAX_DIM],
    chunkshape: [i32; MAX_DIM],
    blockshape: [i32; MAX_DIM],
    dtype: *mut c_char,
    dtype_format: i8,
    b2_storage: *mut blosc2_storage,
    metalayers: [blosc2_metalayer; 16],
    nmetalayers: i32,
}

impl CtxBox {
    /// Boxes a context, filling the reference's fields from the arguments
    /// it was made with.
    fn boxed(
        io: Option<blosc2_io>,
        storage: Option<&blosc2_storage>,
        geometry: (&[i64], &[i32], &[i32]),
        dtype: Option<&str>,
        dtype_format: i8,
        typesize: i32,
        layers: Vec<(String, Vec<u8>)>,
    ) -> Box<CtxBox> {
        let (shape, chunkshape, blockshape) = geometry;
        let mut c = CtxFields {
            ndim: shape.len() as i8,
            shape: [0; MAX_DIM],
            chunkshape: [0; MAX_DIM],
            blockshape: [0; MAX_DIM],
            dtype: core::ptr::null_mut(),
            dtype_format,
            b2_storage: core::ptr::null_mut(),
            metalayers: [blosc2_metalayer {
                name: core::ptr::null_mut(),
                content: core::ptr::null_mut(),
                content_len: 0,
            }; 16],
            // As given, even past the 16 slots: an array made from the
            // context then fails for too many metalayers.
            nmetalayers: i32::try_from(layers.len()).unwrap_or(i32::MAX),
        };
        c.shape[..shape.len()].copy_from_slice(shape);
        c.chunkshape[..chunkshape.len()].copy_from_slice(chunkshape);
        c.blockshape[..blockshape.len()].copy_from_slice(blockshape);
        // The reference's default dtype names the item size.
        let dtype = dtype.map_or_else(|| format!("|S{typesize}"), str::to_owned);
        let given = storage
            .copied()
            .unwrap_or(super::defaults::STORAGE_DEFAULTS);
        // SAFETY: the caller's storage pointers are NULL or valid (the
        // contract of `b2nd_create_ctx`); the structs are copied.
        let (cparams, dparams, urlpath) = unsafe {
            (
                given
                    .cparams
                    .as_ref()
                    .copied()
                    .unwrap_or(super::defaults::CPARAMS_DEFAULTS),
                given
                    .dparams
                    .as_ref()
                    .copied()
                    .unwrap_or(super::defaults::DPARAMS_DEFAULTS),
                given
                    .urlpath
                    .as_ref()
                    .map(|_| std::ffi::CStr::from_ptr(given.urlpath).to_owned()),
            )
        };
        let mut b = Box::new(CtxBox {
            c,
            dtype: CString::new(dtype).unwrap_or_default(),
            urlpath,
            storage: given,
            cparams,
            dparams,
            io,
            io_holder: None,
            layers: layers
                .into_iter()
                .map(|(n, v)| (CString::new(n).unwrap_or_default(), v))
                .collect(),
        });
        let b_ref = &mut *b;
        b_ref.c.dtype = b_ref.dtype.as_ptr() as *mut c_char;
        b_ref.storage.cparams = &mut b_ref.cparams;
        b_ref.storage.dparams = &mut b_ref.dparams;
        b_ref.storage.urlpath = b_ref
            .urlpath
            .as_ref()
            .map_or(core::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
        b_ref.storage.io = b_ref
            .io
            .as_mut()
            .map_or(core::ptr::null_mut(), |io| io as *mut blosc2_io);
        b_ref.c.b2_storage = &mut b_ref.storage;
        for (slot, (name, content)) in b_ref.c.metalayers.iter_mut().zip(b_ref.layers.iter_mut()) {
            slot.name = name.as_ptr() as *mut c_char;
            slot.content = content.as_mut_ptr();
            slot.content_len = i32::try_from(content.len()).unwrap_or(i32::MAX);
        }
        b
    }

    /// The context as its public fields now describe it, not yet checked
    /// against its shape (the callers that replace the shape check the
    /// result), and the I/O backend its storage names.
    ///
    /// # Safety
    /// The pointers in the public fields are NULL or valid, as the
    /// reference requires of them: `dtype` a C string, `b2_storage` a
    /// storage whose pointers are NULL or valid, `metalayers` entries with
    /// a C string name and `content_len` readable bytes.
    unsafe fn current(&self) -> Result<(Context, Option<blosc2_io>)> {
        let c = &self.c;
        if !(0..=MAX_DIM as i8).contains(&c.ndim) {
            crate::bail!(InvalidParam, "ndim {} must be in [0, {MAX_DIM}]", c.ndim);
        }
        if c.nmetalayers < 0 {
            crate::bail!(InvalidParam, "negative nmetalayers {}", c.nmetalayers);
        }
        if c.nmetalayers as usize > c.metalayers.len() {
            crate::bail!(Failure, "too many metalayers ({})", c.nmetalayers);
        }
        let n = c.ndim as usize;
        // SAFETY: forwarded contract.
        let (st, io, dtype) = unsafe {
            (
                storage_from_c(c.b2_storage)?,
                c.b2_storage.as_ref().and_then(|s| s.io.as_ref()).copied(),
                convert::opt_c_str(c.dtype, "dtype")?,
            )
        };
        let mut layers = Vec::with_capacity(c.nmetalayers as usize);
        for m in &c.metalayers[..c.nmetalayers as usize] {
            // SAFETY: forwarded contract.
            let (name, content) = unsafe { layer_of(m) }?;
            layers.push((name.to_string(), content.to_vec()));
        }
        let typesize = st.cparams.typesize;
        let ctx = Context::unchecked(
            ArrayStorage::Schunk(st),
            typesize,
            &c.shape[..n],
            &c.chunkshape[..n],
            &c.blockshape[..n],
            dtype,
            c.dtype_format,
            layers,
        );
        Ok((ctx, io))
    }

    /// [`CtxBox::current`], checked: a context an array can be made with
    /// as it is.
    ///
    /// # Safety
    /// As for [`CtxBox::current`].
    unsafe fn checked(&self) -> Result<(Context, Option<blosc2_io>)> {
        // SAFETY: forwarded contract.
        let (ctx, io) = unsafe { self.current() }?;
        ctx.check()?;
        Ok((ctx, io))
    }

    /// Records the shape a new array was made with (ndim and shape), as the
    /// reference's `b2nd_get_slice` and `b2nd_copy` leave their context.
    fn set_shape(&mut self, shape: &[i64]) {
        let n = shape.len().min(MAX_DIM);
        self.c.ndim = n as i8;
        self.c.shape[..n].copy_from_slice(&shape[..n]);
    }
}

/// A metalayer's name and content.
///
/// # Safety
/// `m.name` is a C string and `m.content` is readable for `m.content_len`
/// bytes (or NULL with a length of 0).
unsafe fn layer_of(m: &blosc2_metalayer) -> Result<(&str, &[u8])> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok((
            convert::c_str(m.name, "metalayer name")?,
            convert::items(m.content, m.content_len, "metalayer content")?,
        ))
    }
}

/// The heap object behind every `b2nd_array_t*`.
#[repr(C)]
pub(crate) struct ArrayBox {
    /// Must stay first: the C pointer is the box's address.
    c: b2nd_array_t,
    core: NdArray,
    dtype: CString,
    /// The C super-chunk `c.sc`, shared with the views taken from this
    /// array (and with the array a view was taken from).
    sc_owner: Arc<ScOwner>,
}

/// Frees a C super-chunk when the last array using it is freed: an array
/// and its views (`b2nd_squeeze*`, `b2nd_expand_dims`) share one, and may
/// be freed in any order.
struct ScOwner(*mut blosc2_schunk);

impl Drop for ScOwner {
    fn drop(&mut self) {
        // SAFETY: `self.0` is NULL or a super-chunk of this library owned by
        // this value alone (every array holding it holds this `Arc`); freed once.
        unsafe { super::schunk::blosc2_schunk_free(self.0) };
    }
}

impl ArrayBox {
    /// Boxes `core`, moving its super-chunk into a new C super-chunk object
    /// (`io` is recorded as its storage's I/O backend).
    pub(crate) fn into_c(core: NdArray, io: Option<blosc2_io>) -> Result<*mut b2nd_array_t> {
        let sc = ArrayBox::schunk_of(&core)?;
        Ok(ArrayBox::wrap(core, SchunkBox::into_c_shared(sc, io)))
    }

    /// Like [`ArrayBox::into_c`], the super-chunk going into `slot`, the C
    /// super-chunk `core` was built to name (see [`named`]).
    pub(crate) fn into_c_at(
        core: NdArray,
        io: Option<blosc2_io>,
        slot: SchunkSlot,
    ) -> Result<*mut b2nd_array_t> {
        let sc = ArrayBox::schunk_of(&core)?;
        Ok(ArrayBox::wrap(core, slot.fill(sc, io)))
    }

    /// The core's super-chunk, which the C super-chunk object shares.
    fn schunk_of(core: &NdArray) -> Result<SharedSChunk> {
        core.schunk_handle().ok_or_else(|| {
            crate::err!(
                NullPointer,
                "this array has no super-chunk (decoded storage)"
            )
        })
    }

    /// Boxes `core` whose super-chunk already lives in the C object `sc`,
    /// which the box then owns.
    fn wrap(core: NdArray, sc: *mut blosc2_schunk) -> *mut b2nd_array_t {
        ArrayBox::wrap_shared(core, Arc::new(ScOwner(sc)))
    }

    /// Boxes `view`, a view taken from the array of `source`: both use the
    /// same C super-chunk, freed with whichever of them goes last.
    fn wrap_view(view: NdArray, source: &ArrayBox) -> *mut b2nd_array_t {
        ArrayBox::wrap_shared(view, Arc::clone(&source.sc_owner))
    }

    fn wrap_shared(core: NdArray, sc_owner: Arc<ScOwner>) -> *mut b2nd_array_t {
        let mut b = Box::new(ArrayBox {
            // SAFETY: b2nd_array_t holds only integers, arrays of them and raw
            // pointers, for all of which all-zero bytes are valid.
            c: unsafe { core::mem::zeroed() },
            core,
            dtype: CString::default(),
            sc_owner,
        });
        b.c.sc = b.sc_owner.0;
        b.sync();
        Box::into_raw(b).cast()
    }

    /// Refreshes every public field from the core array.
    fn sync(&mut self) {
        self.sync_fields();
        // SAFETY: `sc` is NULL or the live super-chunk this box owns.
        if let Ok(sb) = unsafe { this(self.c.sc) } {
            self.c.last_tick = sb.c.change_tick;
        }
    }

    /// [`ArrayBox::sync`] for a call that holds `sb`, the box of `array->sc`.
    fn sync_in(&mut self, sb: &SchunkBox) {
        self.sync_fields();
        self.c.last_tick = sb.c.change_tick;
    }

    /// The fields [`ArrayBox::sync`] refreshes from the core array alone.
    fn sync_fields(&mut self) {
        // The reference's values, as its `update_shape` leaves them: unused
        // dimensions hold 1, strides come from the core's `Geometry` (the
        // one place they are derived).
        let g = self.core.layout().geometry();
        let c = &mut self.c;
        c.ndim = g.ndim.min(MAX_DIM) as i8;
        c.shape = padded(&g.shape, 1);
        c.chunkshape = padded(&g.chunkshape, 1);
        c.blockshape = padded(&g.blockshape, 1);
        c.extshape = padded(&g.extshape, 1);
        c.extchunkshape = padded(&g.extchunkshape, 1);
        c.nitems = g.nitems;
        c.chunknitems = g.chunknitems;
        c.extnitems = g.extnitems;
        c.blocknitems = g.blocknitems;
        c.extchunknitems = g.extchunknitems;
        // The reference declares the cache but never fills it: its fields
        // stay {NULL, -1}. Here the last decoded chunk is kept inside the
        // core's super-chunk store, dropped whenever the super-chunk is
        // lent in or out (so a change made through `sc` directly between
        // calls is never served stale); exposing it would hand C a pointer
        // into memory the next call may replace.
        c.chunk_cache = chunk_cache_s {
            data: core::ptr::null_mut(),
            nchunk: -1,
        };
        c.item_array_strides = padded(&g.item_array_strides, 0);
        c.item_chunk_strides = padded(&g.item_chunk_strides, 0);
        c.item_extchunk_strides = padded(&g.item_extchunk_strides, 0);
        c.item_block_strides = padded(&g.item_block_strides, 0);
        c.block_chunk_strides = padded(&g.block_chunk_strides, 0);
        c.chunk_array_strides = padded(&g.chunk_array_strides, 0);
        if self.dtype.as_bytes() != self.core.dtype().as_bytes() {
            self.dtype = CString::new(self.core.dtype()).unwrap_or_default();
        }
        self.c.dtype = self.dtype.as_ptr() as *mut c_char;
        self.c.dtype_format = self.core.dtype_format();
    }
}

/// A slot for an array made with `ctx` (see [`SchunkSlot`]).
pub(crate) fn slot_for(ctx: &Context) -> Result<SchunkSlot> {
    SchunkSlot::new(&ctx.initial_metalayers()?)
}

/// `ctx` for an array whose C super-chunk will be `slot`'s: the chunks
/// written while the array is made reach C codecs and filters with
/// `cparams->schunk` naming it, as the reference's do.
pub(crate) fn named(ctx: &Context, slot: &SchunkSlot) -> Context {
    let mut ctx = ctx.clone();
    if let ArrayStorage::Schunk(st) = &mut ctx.storage {
        slot.name_in(st);
    }
    ctx
}

/// The box behind an array pointer, or `NullPointer`.
///
/// # Safety
/// `p` is NULL or an array returned by this library and not yet freed.
pub(crate) unsafe fn array<'a>(p: *const b2nd_array_t) -> Result<&'a mut ArrayBox> {
    // SAFETY: every non-NULL `b2nd_array_t*` we hand out is the address of a
    // live `ArrayBox` whose first field is the C struct (repr(C)). The C API
    // takes `const` arrays where the reference still updates their caches.
    unsafe { (p as *mut ArrayBox).as_mut() }
        .ok_or_else(|| crate::err!(NullPointer, "array is NULL"))
}

/// Runs `f` on the core array with its real super-chunk lent from `sc`,
/// then gives it back and refreshes both C structs.
///
/// No reference to the C super-chunk is held while `f` runs, only its
/// claim: codecs and filters `f` calls may read its metalayers through
/// `cparams->schunk`, from worker threads too, and see the array's
/// (see `crate::schunk::read_meta`); other calls on it are refused.
pub(crate) fn lend<T>(ab: &mut ArrayBox, f: impl FnOnce(&mut NdArray) -> Result<T>) -> Result<T> {
    // What other handles or processes changed on disk first, as the
    // reference's calls do (growth-SWMR readers follow a writer's resize).
    lend_with(ab, true, f)
}

/// [`lend`], following changes made on disk by others first when `follow`.
fn lend_with<T>(
    ab: &mut ArrayBox,
    follow: bool,
    f: impl FnOnce(&mut NdArray) -> Result<T>,
) -> Result<T> {
    // SAFETY: `sc` is the live super-chunk this box owns (or NULL: error);
    // the claim this makes is held until `sb` goes, after `f`.
    let mut sb = unsafe { this(ab.c.sc) }?;
    // What the caller wrote to `array->sc` (its contexts, chunk size,
    // settings) first, as for every super-chunk call; and a chunk kept
    // decoded is not trusted, as `array->sc` may have been changed.
    let r = sb.pull().and_then(|()| {
        ab.core.forget_cached();
        if follow {
            ab.core.refresh()?;
        }
        f(&mut ab.core)
    });
    sb.sync();
    // Synced while the claim still keeps other calls out.
    ab.sync_in(&sb);
    r
}

/// Runs `f` on the array behind `p` (see [`lend`]) and returns 0 or the
/// error's code.
///
/// # Safety
/// As for [`array`].
unsafe fn with_array(p: *const b2nd_array_t, f: impl FnOnce(&mut NdArray) -> Result<()>) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { array(p) }?;
        lend(ab, f)?;
        Ok(0)
    }) as c_int
}

/// Runs the read `f` on the array behind `p` and returns 0 or the error's
/// code. Reads of an array (and of its views, which share its super-chunk)
/// run together, admitted as reads of `array->sc`; when the call must
/// first take in changes (see `SchunkBox::needs_exclusive`, and what other
/// handles wrote to the file), it runs as [`with_array`] does, alone.
///
/// # Safety
/// As for [`array`].
unsafe fn read_array(p: *const b2nd_array_t, f: impl FnOnce(&NdArray) -> Result<()>) -> c_int {
    super::guard_code(|| {
        if p.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: a live box (see `array`); its `sc` field is written once,
        // when the box is made, and read here through the raw pointer
        // before any reference to the box exists.
        let sc = unsafe { core::ptr::addr_of!((*p.cast::<ArrayBox>()).c.sc).read() };
        {
            // SAFETY: `sc` is NULL or the live super-chunk the box owns.
            let sb = unsafe { super::schunk::this_shared(sc) }?;
            // SAFETY: the box is changed only by calls admitted to change
            // `sc` (see `lend`), which wait while this read claim lives.
            let ab = unsafe { &*p.cast::<ArrayBox>() };
            // `needs_exclusive` has looked at the file (`SChunk::stale`)
            // for the super-chunk the array shares: once per read is enough.
            if !sb.needs_exclusive() && !ab.core.missed_rereads() {
                // As in `lend`: `array->sc` may have been changed directly
                // since the last call, so a chunk kept decoded is dropped.
                ab.core.forget_cached();
                f(&ab.core)?;
                return Ok(0);
            }
        }
        // SAFETY: forwarded contract.
        let ab = unsafe { array(p) }?;
        lend(ab, |a| f(a))?;
        Ok(0)
    }) as c_int
}

/// Runs a change on the array behind `p` in two steps, as
/// `schunk::intent_schunk` does on `array->sc`: `encode` under a write
/// intent, while its prefilter, codecs and filters may read the array and
/// its super-chunk, and so may other threads; then `publish`, alone once
/// those reads are over, and both C structs are synced. When the call must
/// first take in changes, or locking is on, both run as [`with_array`]
/// does, as one access under the cross-process lock.
///
/// # Safety
/// As for [`array`].
unsafe fn intent_array<E>(
    p: *const b2nd_array_t,
    encode: impl FnOnce(&NdArray) -> Result<E>,
    publish: impl FnOnce(&mut NdArray, E) -> Result<()>,
) -> c_int {
    super::guard_code(|| {
        if p.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: as in `read_array`.
        let sc = unsafe { core::ptr::addr_of!((*p.cast::<ArrayBox>()).c.sc).read() };
        let mut intent = None;
        for _ in 0..2 {
            // SAFETY: `sc` is NULL or the live super-chunk the box owns.
            let i = match unsafe { super::schunk::settled_intent(sc) }? {
                Ok(i) => i,
                Err(code) if code < 0 => return Ok(code as c_int),
                Err(_) => break,
            };
            // SAFETY: the box is changed only by calls admitted to change
            // `sc` alone, which wait while this intent lives; this shared
            // borrow ends here.
            if !unsafe { &*p.cast::<ArrayBox>() }.core.missed_rereads() {
                intent = Some(i);
                break;
            }
            drop(i);
            // What the super-chunk re-read, taken in by the array, alone.
            // SAFETY: forwarded contract.
            lend(unsafe { array(p) }?, |_| Ok(()))?;
        }
        let Some(intent) = intent else {
            // SAFETY: forwarded contract.
            let ab = unsafe { array(p) }?;
            return lend(ab, |a| a.exclusively(|a| publish(a, encode(a)?))).map(|()| 0);
        };
        let made = {
            // SAFETY: as above; this shared borrow ends before the upgrade.
            let ab = unsafe { &*p.cast::<ArrayBox>() };
            ab.core.forget_cached();
            encode(&ab.core)
        };
        let mut sb = intent.upgrade()?;
        // SAFETY: the upgraded claim on `sc` keeps every other call on the
        // array out until `sb` goes.
        let ab = unsafe { array(p) }?;
        let r = made.and_then(|e| publish(&mut ab.core, e));
        sb.sync();
        ab.sync_in(&sb);
        r.map(|()| 0)
    }) as c_int
}

/// Runs a change on the array behind `p` in three steps: `prepare` alone
/// (it may change the array's shape), then, with both C structs synced and
/// the claim on `array->sc` sealed, `encode`: other calls still wait, and
/// its prefilter, codecs and filters may read the array as `prepare` left
/// it; then `publish`, alone again. With locking on, all three run as
/// [`with_array`] does, as one access under the cross-process lock.
///
/// # Safety
/// As for [`array`].
unsafe fn grow_array<G, E>(
    p: *const b2nd_array_t,
    prepare: impl FnOnce(&mut NdArray) -> Result<G>,
    encode: impl FnOnce(&NdArray, &G) -> Result<E>,
    publish: impl FnOnce(&mut NdArray, G, E) -> Result<()>,
) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { array(p) }?;
        let sc = ab.c.sc;
        // SAFETY: `sc` is NULL or the live super-chunk this box owns; the
        // claim keeps every other call on the array out while it lives.
        let mut sb = unsafe { this(sc) }?;
        if sb.core.read().locking() {
            drop(sb);
            return lend(ab, |a| {
                a.exclusively(|a| {
                    let g = prepare(a)?;
                    let e = encode(a, &g)?;
                    publish(a, g, e)
                })
            })
            .map(|()| 0);
        }
        // As `lend` does first.
        let pulled = sb.pull().and_then(|()| {
            ab.core.forget_cached();
            ab.core.refresh()
        });
        // The three steps are one edit scope of the array (as in
        // `NdArray::append`): a file gets the room and the data in one
        // publish. Every way out below closes it.
        let prepared = pulled.and_then(|_| {
            ab.core.begin_edits();
            match prepare(&mut ab.core) {
                Ok(g) => Ok(g),
                Err(e) => ab.core.end_edits(Err(e)),
            }
        });
        sb.sync();
        ab.sync_in(&sb);
        let g = prepared?;
        let sealed = match sb.seal() {
            Ok(s) => s,
            // Only a call nested in another on the array gets here.
            Err(e) => return ab.core.end_edits(Err(e)),
        };
        let made = {
            // SAFETY: a live box (see `array`). Sealed, the claim keeps
            // other calls out, and this call's callbacks only read it: no
            // `&mut` to it is used until the upgrade below.
            let ab = unsafe { &*p.cast::<ArrayBox>() };
            encode(&ab.core, &g)
        };
        let upgraded = sealed.upgrade();
        // SAFETY: forwarded contract; the upgraded claim keeps every other
        // call on the array out until `sb` goes (a failed upgrade, as a
        // failed seal, comes only from a call nested in another).
        let ab = unsafe { array(p) }?;
        let mut sb = match upgraded {
            Ok(sb) => sb,
            Err(e) => return ab.core.end_edits(Err(e)),
        };
        let r = made.and_then(|e| publish(&mut ab.core, g, e));
        let r = ab.core.end_edits(r);
        sb.sync();
        ab.sync_in(&sb);
        r.map(|()| 0)
    }) as c_int
}

/// Stores a new array in `*out`; NULL `out` is `NullPointer`.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn put_array(out: *mut *mut b2nd_array_t, p: *mut b2nd_array_t) {
    // SAFETY: checked non-NULL by callers before any work is done.
    unsafe { *out = p };
}

/// The context behind a C pointer, or `NullPointer`.
///
/// # Safety
/// `p` is NULL or a context from `b2nd_create_ctx` not yet freed.
unsafe fn context<'a>(p: *mut b2nd_context_t) -> Result<&'a mut CtxBox> {
    // SAFETY: every non-NULL context pointer is a `Box<CtxBox>` we made.
    unsafe { p.cast::<CtxBox>().as_mut() }.ok_or_else(|| crate::err!(NullPointer, "ctx is NULL"))
}

/// The three per-dimension arrays describing a geometry, `ndim` entries
/// each (NULL only when `ndim` is 0).
///
/// # Safety
/// Each pointer is NULL or readable for `ndim` items.
unsafe fn geometry_of<'a>(
    ndim: usize,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
) -> Result<(&'a [i64], &'a [i32], &'a [i32])> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok((
            convert::items(shape, ndim, "shape")?,
            convert::items(chunkshape, ndim, "chunkshape")?,
            convert::items(blockshape, ndim, "blockshape")?,
        ))
    }
}

/// A coordinate array of `ndim` entries (start, stop, buffershape...) that
/// must not be NULL, even for a 0-d array (the reference dereferences it).
///
/// # Safety
/// `p` is NULL or readable for `ndim` items.
unsafe fn coords<'a>(p: *const i64, ndim: usize, what: &str) -> Result<&'a [i64]> {
    if p.is_null() {
        crate::bail!(NullPointer, "{what} is NULL");
    }
    // SAFETY: forwarded contract.
    unsafe { convert::items(p, ndim, what) }
}

/// Builds the context box from the C arguments of `b2nd_create_ctx`,
/// after the checks the reference makes there.
///
/// # Safety
/// Pointers are NULL or valid for `ndim` (`nmetalayers`) items.
#[allow(clippy::too_many_arguments)]
unsafe fn ctx_from_c(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> Result<Box<CtxBox>> {
    if !(0..=MAX_DIM as i8).contains(&ndim) {
        crate::bail!(InvalidParam, "ndim {ndim} must be in [0, {MAX_DIM}]");
    }
    // SAFETY: forwarded contract: each is readable for `ndim` items.
    let (shape, chunkshape, blockshape) =
        unsafe { geometry_of(ndim as usize, shape, chunkshape, blockshape) }?;
    // SAFETY: forwarded contract.
    let st = unsafe { storage_from_c(b2_storage) }?;
    // SAFETY: forwarded contract: storage and its io are NULL or valid.
    let io = unsafe { b2_storage.as_ref().and_then(|s| s.io.as_ref()).copied() };
    // SAFETY: forwarded contract: NULL or a NUL-terminated string.
    let dtype = unsafe { convert::opt_c_str(dtype, "dtype") }?;
    // SAFETY: forwarded contract: readable for `nmetalayers` entries.
    let metas = unsafe { convert::items(metalayers, nmetalayers, "metalayers") }?;
    let mut layers = Vec::with_capacity(metas.len());
    for m in metas {
        // SAFETY: forwarded contract: each entry names a C string and
        // `content_len` readable bytes.
        let (name, content) = unsafe { layer_of(m) }?;
        layers.push((name.to_string(), content.to_vec()));
    }
    let typesize = st.cparams.typesize;
    reference_ctx_checks(shape, chunkshape, blockshape, typesize)?;
    // SAFETY: forwarded contract: NULL or valid.
    let storage = unsafe { b2_storage.as_ref() };
    let mut b = CtxBox::boxed(
        io,
        storage,
        (shape, chunkshape, blockshape),
        dtype,
        dtype_format,
        typesize,
        layers,
    );
    b.io_holder = st.io;
    Ok(b)
}

/// The argument checks the reference's `b2nd_create_ctx` makes (it returns
/// NULL for these): negative extents, a zero blockshape under a non-zero
/// chunkshape, and a block whose byte size overflows `int32_t`.
fn reference_ctx_checks(
    shape: &[i64],
    chunkshape: &[i32],
    blockshape: &[i32],
    typesize: i32,
) -> Result<()> {
    for ((&s, &c), &b) in shape.iter().zip(chunkshape).zip(blockshape) {
        if s < 0 || c < 0 || b < 0 {
            crate::bail!(InvalidParam, "negative shape, chunkshape or blockshape");
        }
        if b == 0 && c != 0 {
            crate::bail!(InvalidParam, "blockshape 0 under a non-zero chunkshape");
        }
    }
    blockshape
        .iter()
        .try_fold(typesize, |acc, &b| acc.checked_mul(b))
        .ok_or_else(|| crate::err!(InvalidParam, "blockshape product overflows the blocksize"))?;
    Ok(())
}

/// Creates the parameters of a new array: where and how its super-chunk is
/// stored (NULL: in memory, default parameters; the typesize comes from
/// `b2_storage->cparams`), its geometry, dtype (NULL: `|S<typesize>`) and
/// extra metalayers. NULL on invalid parameters. Free with `b2nd_free_ctx`.
///
/// # Safety
/// `b2_storage` is NULL or valid; `shape`, `chunkshape` and `blockshape` are
/// readable for `ndim` items; `dtype` is NULL or a C string; `metalayers` is
/// readable for `nmetalayers` entries.
#[no_mangle]
pub unsafe extern "C" fn b2nd_create_ctx(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> *mut b2nd_context_t {
    guard(core::ptr::null_mut(), || {
        // SAFETY: forwarded contract.
        let r = unsafe {
            ctx_from_c(
                b2_storage,
                ndim,
                shape,
                chunkshape,
                blockshape,
                dtype,
                dtype_format,
                metalayers,
                nmetalayers,
            )
        };
        match r {
            Ok(c) => Box::into_raw(c).cast(),
            Err(e) => {
                super::report(&e);
                core::ptr::null_mut()
            }
        }
    })
}

/// Frees a context made by `b2nd_create_ctx` (NULL accepted). Returns 0.
///
/// # Safety
/// `ctx` is NULL or a live context, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free_ctx(ctx: *mut b2nd_context_t) -> c_int {
    guard(0, || {
        if !ctx.is_null() {
            // SAFETY: made by `Box::into_raw` in `b2nd_create_ctx`, freed once.
            drop(unsafe { Box::from_raw(ctx.cast::<CtxBox>()) });
        }
        0
    })
}

/// Shared body of the constructors that build an array from a context.
///
/// # Safety
/// `ctx` is NULL or live; `out` is NULL or writable.
unsafe fn with_new_array(
    ctx: *mut b2nd_context_t,
    out: *mut *mut b2nd_array_t,
    make: impl FnOnce(&Context) -> Result<NdArray>,
) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let c = unsafe { context(ctx) }?;
        if out.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: a live context's fields hold what the reference allows.
        let (cx, io) = unsafe { c.checked() }?;
        let slot = slot_for(&cx)?;
        let a = make(&named(&cx, &slot))?;
        let p = ArrayBox::into_c_at(a, io, slot)?;
        // SAFETY: `out` is non-NULL and writable per the contract.
        unsafe { put_array(out, p) };
        Ok(0)
    }) as c_int
}

/// Creates an array whose contents are undefined. Returns 0 or a negative
/// error code.
///
/// # Safety
/// `ctx` is NULL or live; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_uninit(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, array, NdArray::uninit) }
}

/// Creates an array ready to be filled (reads give zeros).
///
/// # Safety
/// `ctx` is NULL or live; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_empty(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, array, NdArray::empty) }
}

/// Creates an array of zeros.
///
/// # Safety
/// `ctx` is NULL or live; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_zeros(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, array, NdArray::zeros) }
}

/// Creates an array of NaNs; the typesize must be 4 or 8
/// (`BLOSC2_ERROR_DATA` otherwise).
///
/// # Safety
/// `ctx` is NULL or live; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_nans(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { with_new_array(ctx, array, NdArray::nans) }
}

/// Creates an array whose every item is the `typesize` bytes at `fill_value`.
///
/// # Safety
/// `ctx` is NULL or live; `array` is NULL or writable; `fill_value` is NULL
/// or readable for the context's typesize.
#[no_mangle]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_new_array(ctx, array, |c| {
            if fill_value.is_null() {
                crate::bail!(NullPointer, "fill_value is NULL");
            }
            // SAFETY: readable for one item per the contract.
            let v = convert::bytes(fill_value, c.typesize, "fill_value")?;
            NdArray::full(c, v)
        })
    }
}

/// Frees an array, its super-chunk and its dtype (on-disk data stays).
/// NULL gives `BLOSC2_ERROR_NULL_POINTER`, as in the reference.
///
/// # Safety
/// `array` is NULL or a live array, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    super::guard_code(|| {
        if array.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: made by `Box::into_raw` in `ArrayBox::wrap`; freed once.
        drop(unsafe { Box::from_raw(array.cast::<ArrayBox>()) });
        Ok(0)
    }) as c_int
}

/// An array over a super-chunk described by its "b2nd" (else "caterva")
/// metalayer. On success the array owns `schunk` (`b2nd_free` frees it); on
/// error the caller keeps it.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk of this library; `array` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        unsafe { adopt(schunk, array) }?;
        Ok(0)
    }) as c_int
}

/// Builds an array over the C super-chunk `schunk`, which it then owns.
///
/// # Safety
/// As for `b2nd_from_schunk`.
pub(crate) unsafe fn adopt(schunk: *mut blosc2_schunk, out: *mut *mut b2nd_array_t) -> Result<()> {
    // SAFETY: forwarded contract.
    let mut sb = unsafe { this(schunk) }?;
    if out.is_null() {
        crate::bail!(NullPointer, "array is NULL");
    }
    let core = NdArray::from_shared_schunk(sb.core.clone())?;
    sb.sync();
    // Released before the array box syncs from it.
    drop(sb);
    // SAFETY: `out` is non-NULL and writable per the contract.
    unsafe { put_array(out, ArrayBox::wrap(core, schunk)) };
    Ok(())
}

/// Serializes the array as a contiguous frame into a `malloc`ed buffer
/// (`*needs_free` set: the caller frees it).
///
/// # Safety
/// `array` is NULL or live; the out-pointers are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_array(array, |a| {
            if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
                crate::bail!(NullPointer, "cframe, cframe_len or needs_free is NULL");
            }
            let bytes = a.to_cframe()?;
            let p = super::schunk::malloc_copy(&bytes)?;
            // SAFETY: the out-pointers are non-NULL and writable.
            *cframe = p;
            *cframe_len = bytes.len() as i64;
            *needs_free = true;
            Ok(())
        })
    }
}

/// An array from a contiguous frame of `cframe_len` bytes (`copy`: chunks
/// copied into memory; otherwise the array reads its own copy of the frame
/// and never frees `cframe`). Errors give `BLOSC2_ERROR_FAILURE` for bytes
/// that are not a frame, as the reference.
///
/// # Safety
/// `cframe` is NULL or readable for `cframe_len` bytes; `array` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    super::guard_code(|| {
        if cframe.is_null() || array.is_null() {
            crate::bail!(NullPointer, "cframe or array is NULL");
        }
        if copy {
            // The core checks the metalayer before copying chunk by chunk.
            // SAFETY: forwarded contract.
            let frame =
                unsafe { super::convert::bytes(cframe.cast_const().cast(), cframe_len, "cframe") }
                    .and_then(|bytes| b2nd_core::schunk::SChunk::from_buffer(bytes, false))
                    .map_err(|e| crate::err!(Failure, "not a contiguous frame: {}", e.detail()))?;
            let core = NdArray::from_frame(frame, true)?;
            // SAFETY: `array` is non-NULL and writable per the contract.
            unsafe { put_array(array, ArrayBox::into_c(core, None)?) };
            return Ok(0);
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { super::schunk::blosc2_schunk_from_buffer(cframe, cframe_len, copy) };
        if sc.is_null() {
            crate::bail!(Failure, "not a contiguous frame");
        }
        // SAFETY: `sc` is live; `array` non-NULL and writable.
        let r = unsafe { adopt(sc, array) };
        if r.is_err() {
            // SAFETY: not adopted, so still ours to free.
            unsafe { super::schunk::blosc2_schunk_free(sc) };
        }
        r.map(|_| 0)
    }) as c_int
}

/// Opens an array stored in a frame file or sparse directory.
///
/// # Safety
/// `urlpath` is NULL or a C string; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: forwarded contract.
    guard(crate::Error::FAILURE_CODE, || unsafe {
        b2nd_open_offset(urlpath, array, 0)
    })
}

/// Opens an array stored in a contiguous frame that starts `offset` bytes
/// into a file (see `b2nd_save_append`).
///
/// # Safety
/// `urlpath` is NULL or a C string; `array` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        unsafe { path_from_c(urlpath, "urlpath") }?;
        if array.is_null() {
            crate::bail!(NullPointer, "array is NULL");
        }
        // SAFETY: forwarded contract.
        let sc = unsafe { super::schunk::blosc2_schunk_open_offset(urlpath, offset) };
        if sc.is_null() {
            // The reference hands the NULL super-chunk on, which fails so.
            crate::bail!(NullPointer, "cannot open a frame at the urlpath");
        }
        // SAFETY: `sc` is live; `array` non-NULL and writable.
        let r = unsafe { adopt(sc, array) };
        if r.is_err() {
            // SAFETY: not adopted, so still ours to free.
            unsafe { super::schunk::blosc2_schunk_free(sc) };
        }
        r.map(|_| 0)
    }) as c_int
}

/// Saves a copy of the array at `urlpath`: a frame file when the array is
/// contiguous, else a sparse directory.
///
/// # Safety
/// `array` is NULL or live; `urlpath` is NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_array(array, |a| {
            let path = super::storage::frame_path_from_c(urlpath, "urlpath")?;
            a.save(path)
        })
    }
}

/// Appends the array as a contiguous frame to the end of `urlpath` (created
/// if missing); returns the offset where it starts (for
/// `b2nd_open_offset`), or a negative error code.
///
/// # Safety
/// `array` is NULL or live; `urlpath` is NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save_append(
    array: *const b2nd_array_t,
    urlpath: *const c_char,
) -> i64 {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { self::array(array) }?;
        lend(ab, |a| {
            // SAFETY: forwarded contract.
            let path = unsafe { super::storage::frame_path_from_c(urlpath, "urlpath") }?;
            a.save_append(path)
        })
    })
}

/// Prints the array's b2nd metalayer (shape, chunkshape, dtype, blockshape)
/// on stdout.
///
/// # Safety
/// `array` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_print_meta(array: *const b2nd_array_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_array(array, |a| {
            let text = a.meta_text()?;
            // The C caller may print with stdio too: keep the order.
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            // SAFETY: flushing every C stdio stream is always allowed.
            libc::fflush(core::ptr::null_mut());
            out.write_all(text.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| crate::err!(Failure, "cannot print: {e}"))
        })
    }
}

/// Follows the changes another handle or process made to an on-disk array
/// (see `NdArray::refresh`). Returns 1 when it re-read them, 0 when the
/// array was current, or a negative error code.
///
/// # Safety
/// `array` is NULL or live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let ab = unsafe { self::array(array) }?;
        lend_with(ab, false, |a| a.refresh()).map(i64::from)
    }) as c_int
}

#[cfg(test)]
mod tests;
