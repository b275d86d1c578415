//! The C face of super-chunks: `blosc2_schunk_*` lifecycle, serialization
//! and parameter calls. Chunk-level calls live in [`chunks`], metalayers in
//! `super::meta`.
//!
//! # The C object
//!
//! `blosc2_schunk` is a public struct C callers read directly. Each super-chunk
//! handed to C is a heap [`SchunkBox`] whose *first* field is that struct, so
//! the `blosc2_schunk*` given out is also the address of the box. The box
//! owns the core [`SChunk`] and everything the C fields point into:
//!
//! - `storage` points to the box's own `blosc2_storage`, whose `urlpath`,
//!   `cparams`, `dparams` and `io` point to a `CString`, copies of the
//!   parameters and a copy of the `blosc2_io` (its `name`/`params` stay the
//!   caller's);
//! - `metalayers[i]` point to boxed `blosc2_metalayer`s with owned names and
//!   contents; `vlmetalayers[i]` carry owned names and, as in the reference,
//!   the *compressed* content the frame trailer stores (`content_len` is its
//!   compressed length; `blosc2_vlmeta_get` gives the decompressed bytes);
//! - `frame` is non-NULL exactly when the super-chunk is frame-backed (an
//!   in-memory contiguous frame, a frame file or a sparse directory), NULL for
//!   an in-memory chunk list, as in the reference. It is an opaque token (the
//!   box's address) and must not be dereferenced;
//! - `cctx`/`dctx` are contexts made with `blosc2_create_cctx`/`_dctx` from
//!   the super-chunk's parameters when it is created or opened (NULL if the
//!   environment overrides make them invalid); the box frees them. The core
//!   compresses with its own contexts inside [`SChunk`]; when the storage
//!   given to `blosc2_schunk_new` carries a prefilter (postfilter),
//!   `append_buffer` (`decompress_chunk`) goes through `cctx` (`dctx`)
//!   instead so the C callback runs, with `current_nchunk` set as in the
//!   reference;
//! - `data`/`data_len` are NULL/0: chunk lists are not exposed as pointers.
//!
//! Every public field is refreshed by [`SchunkBox::sync`] after every call.
//! Pointers read from the fields (chunk pointers from `get_chunk` with
//! `needs_free == false`, metalayer contents) stay valid until the next call
//! that changes the super-chunk.
//!
//! Freeing: `blosc2_schunk_free` drops the box (and with it everything
//! above). Buffers returned with `needs_free == true`, from
//! `blosc2_schunk_get_cparams`/`_get_dparams`, `blosc2_meta_get`,
//! `blosc2_vlmeta_get` and `blosc2_frame_get_offsets`-like calls are
//! `malloc`ed: the caller releases them with `free()`. A frame buffer passed
//! to `blosc2_schunk_from_buffer` with `copy == false` is never freed unless
//! the caller asks for it with `blosc2_schunk_avoid_cframe_free(sc, false)`.

mod busy;
mod chunks;

use core::ffi::{c_char, c_int, c_void};
use std::ffi::CString;

use super::guard;
use super::storage::{cparams_to_c, dparams_to_c, frame_path_from_c, path_from_c, storage_from_c};
use super::types::{
    blosc2_cparams, blosc2_dparams, blosc2_frame, blosc2_io, blosc2_metalayer, blosc2_schunk,
    blosc2_storage,
};
use b2nd_core::schunk::{SChunk, SharedSChunk};
use crate::Result;

/// A metalayer entry whose name and content the box owns.
pub(crate) struct OwnedLayer {
    pub(crate) c: blosc2_metalayer,
    name: CString,
    content: Vec<u8>,
}

impl OwnedLayer {
    fn new(name: &str, content: Option<Vec<u8>>) -> Box<OwnedLayer> {
        let name = CString::new(name).unwrap_or_default();
        let has_content = content.is_some();
        let content = content.unwrap_or_default();
        let mut b = Box::new(OwnedLayer {
            c: blosc2_metalayer {
                name: core::ptr::null_mut(),
                content: core::ptr::null_mut(),
                content_len: 0,
            },
            name,
            content,
        });
        b.c.name = b.name.as_ptr() as *mut c_char;
        if has_content {
            b.c.content = b.content.as_mut_ptr();
            b.c.content_len = i32::try_from(b.content.len()).unwrap_or(i32::MAX);
        }
        b
    }
}

/// The values of the public fields a C caller may write, as the library last
/// wrote them (see [`SchunkBox::pull`]).
#[derive(Clone, Copy, PartialEq)]
struct Published {
    compcode: u8,
    compcode_meta: u8,
    clevel: u8,
    splitmode: u8,
    typesize: i32,
    blocksize: i32,
    chunksize: i32,
    use_dict: u8,
    filters: [u8; 6],
    filters_meta: [u8; 6],
}

impl Published {
    fn of(c: &blosc2_schunk) -> Published {
        Published {
            compcode: c.compcode,
            compcode_meta: c.compcode_meta,
            clevel: c.clevel,
            splitmode: c.splitmode,
            typesize: c.typesize,
            blocksize: c.blocksize,
            chunksize: c.chunksize,
            use_dict: c.use_dict,
            filters: c.filters,
            filters_meta: c.filters_meta,
        }
    }

    /// Whether any field the core records as a compression setting differs.
    fn settings_differ(&self, other: &Published) -> bool {
        Published {
            chunksize: 0,
            ..*self
        } != Published {
            chunksize: 0,
            ..*other
        }
    }
}

/// The heap object behind every `blosc2_schunk*` this library hands out.
#[repr(C)]
pub(crate) struct SchunkBox {
    /// Must stay first: the C pointer is the box's address.
    pub(crate) c: blosc2_schunk,
    /// Shared with the arrays built on this super-chunk (`b2nd_array_t`).
    pub(crate) core: SharedSChunk,
    /// `c.storage` points here, and its `cparams`/`dparams` to the two
    /// below: set when the super-chunk is made or opened and then the
    /// caller's to change, as in the reference (python-blosc2 sets its
    /// prefilter and postfilter there before making new contexts from them).
    storage: blosc2_storage,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
    urlpath: Option<CString>,
    metas: Vec<Box<OwnedLayer>>,
    vlmetas: Vec<Box<OwnedLayer>>,
    /// The caller-writable fields as [`SchunkBox::sync`] last wrote them.
    published: Published,
    /// Ids of the contexts (`Ctx::id`) whose parameters the core compresses
    /// and decompresses with (0: none yet).
    installed_cctx: u64,
    installed_dctx: u64,
    /// The chunk pointers `c.data` shows for an in-memory chunk list,
    /// rounded up to whole 4 KiB as the reference grows its array.
    chunk_ptrs: Vec<*mut u8>,
    /// Where the frame starts in its file (`blosc2_schunk_open_offset`).
    pub(crate) file_offset: u64,
    /// The caller's frame buffer given to `from_buffer` without copy.
    borrowed_cframe: *mut u8,
    avoid_cframe_free: bool,
    /// The cell filters' block shape of the core, as the last call left it
    /// (for contexts made inside a call, see `context::schunk_block_shape`).
    pub(crate) shown_block_shape: Option<std::sync::Arc<[i64]>>,
    /// The metalayers `metas` and `vlmetas` show, as a claim hands them to
    /// codecs and filters reading them during a call (see [`busy`]).
    meta_snapshot: busy::Shown,
}

impl SchunkBox {
    /// Moves `core` to the heap and returns the C pointer. `storage` is the
    /// caller's (for `blosc2_schunk_new`): its `cparams`/`dparams` are
    /// copied into the super-chunk's storage, prefilter and postfilter
    /// included, and the super-chunk's contexts are made from them, as the
    /// reference does; NULL takes the core's parameters.
    pub(crate) fn into_c(core: SChunk, io: Option<blosc2_io>) -> *mut blosc2_schunk {
        SchunkBox::into_c_with(core, io, None, None)
    }

    /// Like [`SchunkBox::into_c`], for a super-chunk an array holds too.
    pub(crate) fn into_c_shared(core: SharedSChunk, io: Option<blosc2_io>) -> *mut blosc2_schunk {
        SchunkBox::into_c_full(core, io, None, None)
    }

    /// Like [`SchunkBox::into_c`], with the caller's parameter structs.
    pub(crate) fn into_c_with(
        core: SChunk,
        io: Option<blosc2_io>,
        user_cparams: Option<blosc2_cparams>,
        user_dparams: Option<blosc2_dparams>,
    ) -> *mut blosc2_schunk {
        SchunkBox::into_c_full(SharedSChunk::new(core), io, user_cparams, user_dparams)
    }

    fn into_c_full(
        core: SharedSChunk,
        io: Option<blosc2_io>,
        user_cparams: Option<blosc2_cparams>,
        user_dparams: Option<blosc2_dparams>,
    ) -> *mut blosc2_schunk {
        // Built where it lives: `c` alone is 64 KiB (the reference's 8,192
        // variable-length metalayer slots), and a struct literal passed to
        // `Box::new` was built on the stack first, so creating a super-chunk
        // needed 64 KiB more stack than the reference's calloc, and crashed
        // on a C caller's thread of 64 KiB (tests-c/test_small_stack.c).
        let layout = std::alloc::Layout::new::<SchunkBox>();
        // SAFETY: the layout is SchunkBox's, not zero-sized. All-zero bytes
        // are valid for `c`, `storage`, `cparams`, `dparams`, `published`
        // and the two ids (plain C structs of integers, bools, arrays of
        // them, raw pointers and optional function pointers; integers),
        // which stay zeroed; every other field is written below before the
        // box is made (`all_fields_written` fails to compile when a field is
        // added and not listed there), and a zeroed allocation from the
        // global allocator with SchunkBox's layout is what `Box::from_raw` takes.
        let mut b = unsafe {
            let p = std::alloc::alloc_zeroed(layout).cast::<SchunkBox>();
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            core::ptr::addr_of_mut!((*p).core).write(core);
            core::ptr::addr_of_mut!((*p).io).write(io.unwrap_or(blosc2_io {
                id: super::constants::BLOSC2_IO_FILESYSTEM as u8,
                name: c"filesystem".as_ptr(),
                params: core::ptr::null_mut(),
            }));
            core::ptr::addr_of_mut!((*p).urlpath).write(None);
            core::ptr::addr_of_mut!((*p).metas).write(Vec::new());
            core::ptr::addr_of_mut!((*p).vlmetas).write(Vec::new());
            core::ptr::addr_of_mut!((*p).chunk_ptrs).write(Vec::new());
            core::ptr::addr_of_mut!((*p).file_offset).write(0);
            core::ptr::addr_of_mut!((*p).borrowed_cframe).write(core::ptr::null_mut());
            core::ptr::addr_of_mut!((*p).avoid_cframe_free).write(true);
            core::ptr::addr_of_mut!((*p).meta_snapshot).write(busy::Shown::default());
            core::ptr::addr_of_mut!((*p).shown_block_shape).write(None);
            Box::from_raw(p)
        };
        b.c.current_nchunk = -1;
        b.bind(user_cparams, user_dparams);
        Box::into_raw(b).cast()
    }

    /// Lists every field, so that one added to `SchunkBox` fails to compile
    /// here until [`SchunkBox::into_c_with`] writes it too (or it is all-zero
    /// valid and left zeroed there).
    #[allow(dead_code)]
    fn all_fields_written(b: &SchunkBox) {
        let SchunkBox {
            c: _,
            core: _,
            storage: _,
            cparams: _,
            dparams: _,
            io: _,
            urlpath: _,
            metas: _,
            vlmetas: _,
            published: _,
            installed_cctx: _,
            installed_dctx: _,
            chunk_ptrs: _,
            file_offset: _,
            borrowed_cframe: _,
            avoid_cframe_free: _,
            meta_snapshot: _,
            shown_block_shape: _,
        } = b;
    }

    /// Sets up everything derived from the core: the storage and its
    /// parameter structs (from the caller's when given, else from the
    /// core's), the user data naming this object, the C fields and the
    /// `cctx`/`dctx` contexts (replacing any).
    fn bind(&mut self, user_cparams: Option<blosc2_cparams>, user_dparams: Option<blosc2_dparams>) {
        self.urlpath = self
            .core
            .read()
            .storage()
            .urlpath
            .as_ref()
            .and_then(|p| CString::new(p.to_string_lossy().as_bytes()).ok());
        let me = (self as *mut SchunkBox).cast::<c_void>();
        let (cp, dp) = naming(self.core.read().cparams(), self.core.read().dparams(), me);
        self.core.write().set_user_data(Some(cp), Some(dp));
        // The storage's parameters are the core's, with what only C has
        // (pre/postfilters and their params, codec and filter params, tuner
        // params) kept from the caller's structs.
        let own_c = cparams_to_c(self.core.read().cparams(), me);
        let own_d = dparams_to_c(self.core.read().dparams(), self.core.read().typesize(), me);
        self.cparams = match user_cparams {
            Some(u) => blosc2_cparams {
                prefilter: u.prefilter,
                preparams: u.preparams,
                tuner_params: u.tuner_params,
                codec_params: u.codec_params,
                filter_params: u.filter_params,
                ..own_c
            },
            None => own_c,
        };
        self.dparams = match user_dparams {
            Some(u) => blosc2_dparams {
                postfilter: u.postfilter,
                postparams: u.postparams,
                ..own_d
            },
            None => own_d,
        };
        self.storage = blosc2_storage {
            contiguous: self.core.read().storage().contiguous,
            urlpath: self
                .urlpath
                .as_ref()
                .map_or(core::ptr::null_mut(), |u| u.as_ptr() as *mut c_char),
            cparams: &mut self.cparams,
            dparams: &mut self.dparams,
            io: &mut self.io,
        };
        self.c.storage = &mut self.storage;
        self.c.tuner_params = self.cparams.tuner_params;
        // Lazy chunks from `get_lazychunk` decode through any context whose
        // dparams name a super-chunk (as `dctx` does): install the lookup.
        b2nd_core::chunk::Decompressor::set_lazy_resolver(resolve_lazy);
        // The contexts, as the reference makes them: from the storage's
        // parameters (environment overrides applied), their `schunk` field
        // naming this object. The super-chunk compresses and decompresses
        // with whatever contexts these fields hold when a call starts (see
        // `pull`); the box frees whatever they hold when it goes.
        // SAFETY: the old contexts (NULL in a new box) belong to this box
        // and are replaced here, so freed once.
        unsafe {
            super::context::blosc2_free_ctx(self.c.cctx);
            super::context::blosc2_free_ctx(self.c.dctx);
        }
        self.c.cctx = super::context::blosc2_create_cctx(self.cparams);
        self.c.dctx = super::context::blosc2_create_dctx(self.dparams);
        self.installed_cctx = 0;
        self.installed_dctx = 0;
        self.sync();
        // A context that cannot be used leaves the core's own parameters;
        // the next call reports nothing either (the reference would fail at
        // the first compression with a NULL context).
        let _ = self.pull();
    }

    /// Takes in what the caller wrote to the public fields since the last
    /// [`SchunkBox::sync`]: the compression settings the super-chunk records
    /// (`compcode`, `clevel`, `typesize`, `blocksize`, `filters`...), the
    /// `chunksize`, and the contexts in `cctx` and `dctx`, with which the
    /// core compresses and decompresses from then on. Runs at the start of
    /// every call on the super-chunk.
    pub(crate) fn pull(&mut self) -> Result<()> {
        let now = Published::of(&self.c);
        if now.settings_differ(&self.published) {
            let mut cp = self.core.read().cparams().clone();
            cp.compcode = now.compcode;
            cp.compcode_meta = now.compcode_meta;
            cp.clevel = now.clevel;
            cp.splitmode = i32::from(now.splitmode);
            cp.typesize = now.typesize;
            cp.blocksize = now.blocksize;
            cp.use_dict = now.use_dict != 0;
            cp.filters = now.filters;
            cp.filters_meta = now.filters_meta;
            let r = self.core.write().record_cparams(&cp);
            self.published = Published {
                chunksize: self.published.chunksize,
                ..now
            };
            r?;
        }
        if now.chunksize != self.published.chunksize {
            let r = self.core.write().declare_chunksize(now.chunksize);
            self.published.chunksize = now.chunksize;
            r?;
        }
        // SAFETY: `cctx` and `dctx` are NULL or live contexts of this
        // library: the box made them, or the caller put there contexts it
        // made with `blosc2_create_cctx`/`_dctx` (the reference dereferences
        // them the same way). They are only read here.
        let (cctx, dctx) = unsafe {
            (
                super::context::ctx_ref(self.c.cctx),
                super::context::ctx_ref(self.c.dctx),
            )
        };
        let cctx = cctx.filter(|c| c.id != self.installed_cctx);
        let dctx = dctx.filter(|d| d.id != self.installed_dctx);
        if cctx.is_none() && dctx.is_none() {
            return Ok(());
        }
        let cp = match cctx.and_then(|c| c.comp.as_ref()) {
            Some(comp) => comp.cparams().clone(),
            None => self.core.read().codec_cparams().clone(),
        };
        let dp = match dctx {
            Some(d) => d.decomp.dparams().clone(),
            None => self.core.read().codec_dparams().clone(),
        };
        self.installed_cctx = cctx.map_or(self.installed_cctx, |c| c.id);
        self.installed_dctx = dctx.map_or(self.installed_dctx, |d| d.id);
        self.core.write().set_codec_params(cp, dp)
    }

    /// Whether a read must run alone, as a change does: the caller wrote to
    /// the public fields or put other contexts in `cctx`/`dctx` since the
    /// last call (see [`SchunkBox::pull`]), another handle changed the file,
    /// or locking is on.
    pub(crate) fn needs_exclusive(&self) -> bool {
        let now = Published::of(&self.c);
        if now.settings_differ(&self.published) || now.chunksize != self.published.chunksize {
            return true;
        }
        // SAFETY: as in `pull`: NULL or live contexts of this library, read only.
        let (cctx, dctx) = unsafe {
            (
                super::context::ctx_ref(self.c.cctx),
                super::context::ctx_ref(self.c.dctx),
            )
        };
        if cctx.is_some_and(|c| c.id != self.installed_cctx)
            || dctx.is_some_and(|d| d.id != self.installed_dctx)
        {
            return true;
        }
        let core = self.core.read();
        core.locking() || core.stale()
    }

    /// Refreshes every field of the C struct the library writes from the
    /// core, and notes the caller-writable ones as written (see
    /// [`SchunkBox::pull`]).
    pub(crate) fn sync(&mut self) {
        let me = self as *mut SchunkBox;
        let core = self.core.clone();
        let core = core.read();
        let cp = core.cparams();
        self.shown_block_shape = cp.block_shape.clone();
        let c = &mut self.c;
        c.compcode = cp.compcode;
        c.compcode_meta = cp.compcode_meta;
        c.clevel = cp.clevel;
        c.splitmode = u8::try_from(cp.splitmode).unwrap_or(0);
        c.typesize = core.typesize();
        c.blocksize = core.blocksize();
        c.chunksize = core.chunksize();
        c.flags2 = u8::from(self.core.read().vl_blocks());
        c.use_dict = u8::from(cp.use_dict);
        c.filters = cp.filters;
        c.filters_meta = cp.filters_meta;
        c.nchunks = self.core.read().nchunks();
        c.nbytes = self.core.read().nbytes();
        c.cbytes = self.core.read().cbytes();
        c.tuner_id = cp.tuner_id;
        c.frame = if self.core.read().is_frame() {
            me.cast::<blosc2_frame>()
        } else {
            core::ptr::null_mut()
        };
        self.published = Published::of(&self.c);
        self.sync_chunk_ptrs();
        self.storage.urlpath = self
            .urlpath
            .as_ref()
            .map_or(core::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);

        let mut changed = self.sync_metas();
        changed |= self.sync_vlmetas();
        if changed {
            self.c.change_tick += 1;
        }
    }

    /// Points `data[i]` at chunk `i` of an in-memory chunk list, as the
    /// reference's array of chunk pointers (python-blosc2's expression
    /// prefilters read its chunks there); `data_len` is the array's size in
    /// bytes, grown by 4 KiB at a time as the reference does. NULL and 0 for
    /// frames, which have no such array in the reference either.
    fn sync_chunk_ptrs(&mut self) {
        let core = self.core.clone();
        let core = core.read();
        let Some(list) = core.chunk_list() else {
            self.chunk_ptrs = Vec::new();
            self.c.data = core::ptr::null_mut();
            self.c.data_len = 0;
            return;
        };
        let per_page = 4096 / core::mem::size_of::<*mut u8>();
        let slots = list.len().div_ceil(per_page) * per_page;
        self.chunk_ptrs.clear();
        self.chunk_ptrs
            .extend(list.iter().map(|c| c.as_ptr().cast_mut()));
        self.chunk_ptrs.resize(slots, core::ptr::null_mut());
        self.c.data = if slots == 0 {
            core::ptr::null_mut()
        } else {
            self.chunk_ptrs.as_mut_ptr()
        };
        self.c.data_len = slots * core::mem::size_of::<*mut u8>();
    }

    /// Rebuilds the metalayer entries if the core's differ; true if they did.
    fn sync_metas(&mut self) -> bool {
        let core = self.core.clone();
        let core = core.read();
        let current = core.metalayers();
        if same_layers(current, &self.metas) {
            return false;
        }
        self.metas = current
            .iter()
            .map(|m| OwnedLayer::new(&m.name, Some(m.content.clone())))
            .collect();
        self.c.metalayers = [core::ptr::null_mut(); 16];
        for (slot, m) in self.c.metalayers.iter_mut().zip(self.metas.iter_mut()) {
            *slot = &mut m.c;
        }
        self.c.nmetalayers = self.metas.len().min(16) as u16;
        self.meta_snapshot.metas = current
            .iter()
            .map(|m| (m.name.clone(), m.content.clone()))
            .collect();
        true
    }

    /// Rebuilds the vlmetalayer entries if the core's names or (compressed)
    /// contents differ; true if they did. As in the reference, each entry's
    /// `content`/`content_len` are the compressed bytes the trailer stores.
    fn sync_vlmetas(&mut self) -> bool {
        let core = self.core.clone();
        let core = core.read();
        let current = core.vlmetalayers_stored();
        if same_layers(current, &self.vlmetas) {
            return false;
        }
        self.vlmetas = current
            .iter()
            .map(|m| OwnedLayer::new(&m.name, Some(m.content.clone())))
            .collect();
        for slot in self.c.vlmetalayers.iter_mut() {
            *slot = core::ptr::null_mut();
        }
        for (slot, m) in self.c.vlmetalayers.iter_mut().zip(self.vlmetas.iter_mut()) {
            *slot = &mut m.c;
        }
        self.c.nvlmetalayers = i16::try_from(self.vlmetas.len()).unwrap_or(i16::MAX);
        self.meta_snapshot.vlmetas = current
            .iter()
            .map(|m| (m.name.clone(), m.content.clone()))
            .collect();
        true
    }
}

/// A C super-chunk made before its contents. The reference creates an
/// array's super-chunk first and fills it after, so every chunk written
/// reaches C codecs and filters with `cparams->schunk` naming it (the JPEG
/// 2000 plugins read the "b2nd" metalayer through it). Here an array is built
/// whole and then handed to C, so its builder is given a live C super-chunk
/// in advance ([`SchunkSlot::name_in`]): it holds a stand-in core carrying
/// the metalayers the array is made with, and receives the real core at
/// [`SchunkSlot::fill`].
pub(crate) struct SchunkSlot {
    p: *mut blosc2_schunk,
    /// Keeps calls other than metalayer reads off the stand-in.
    claim: Option<busy::Claim>,
}

impl SchunkSlot {
    /// A slot whose stand-in carries `metalayers`, in order.
    pub(crate) fn new(metalayers: &[(String, Vec<u8>)]) -> Result<SchunkSlot> {
        let mut stand_in = SChunk::new(b2nd_core::schunk::Storage::default())?;
        for (name, content) in metalayers {
            stand_in.meta_add(name, content)?;
        }
        let p = SchunkBox::into_c(stand_in, None);
        // Made here first so that a failed claim (none can fail: the address
        // is new) would still free the box.
        let mut slot = SchunkSlot { p, claim: None };
        // SAFETY: `p` is the live box just made.
        slot.claim = Some(unsafe { claim(p) }?);
        Ok(slot)
    }

    /// Makes the parameters of `storage` name this slot as their C
    /// super-chunk, for the chunks written before [`SchunkSlot::fill`].
    pub(crate) fn name_in(&self, storage: &mut b2nd_core::schunk::Storage) {
        let (cp, dp) = naming(&storage.cparams, &storage.dparams, self.p.cast());
        storage.cparams.user_data = Some(cp);
        storage.dparams.user_data = Some(dp);
    }

    /// Moves `core` into the slot's super-chunk and returns it.
    pub(crate) fn fill(mut self, core: SharedSChunk, io: Option<blosc2_io>) -> *mut blosc2_schunk {
        let (p, claim) = (self.p, self.claim.take());
        std::mem::forget(self);
        // SAFETY: `p` is the live box this slot made and alone refers to;
        // its claim keeps every other call from making a `&mut` to it.
        let b = unsafe { &mut *p.cast::<SchunkBox>() };
        b.core = core;
        if let Some(io) = io {
            b.io = io;
        }
        b.bind(None, None);
        drop(claim);
        p
    }
}

impl Drop for SchunkSlot {
    /// A slot never filled (the array could not be made) is freed.
    fn drop(&mut self) {
        // Released first: a claimed super-chunk is not freed.
        self.claim = None;
        // SAFETY: the slot owns its box, made by `into_c` and not handed out.
        unsafe { blosc2_schunk_free(self.p) };
    }
}

/// User data for the core's parameters that gives C codecs and filters
/// parameter structs naming the C super-chunk `me`, as the reference's
/// `cparams->schunk` does; the caller's other fields (`codec_params`,
/// `filter_params`) are kept.
fn naming(
    cp: &b2nd_core::chunk::CParams,
    dp: &b2nd_core::chunk::DParams,
    me: *mut c_void,
) -> (b2nd_core::chunk::UserData, b2nd_core::chunk::UserData) {
    let mut caller_c = cp
        .user_data
        .as_ref()
        .and_then(|u| u.downcast_ref::<super::registry::CallerCParams>())
        .map_or_else(|| cparams_to_c(cp, me), |c| c.0);
    caller_c.schunk = me;
    let mut caller_d = dp
        .user_data
        .as_ref()
        .and_then(|u| u.downcast_ref::<super::registry::CallerDParams>())
        .map_or_else(|| dparams_to_c(dp, cp.typesize, me), |d| d.0);
    caller_d.schunk = me;
    (
        std::sync::Arc::new(super::registry::CallerCParams(caller_c)),
        std::sync::Arc::new(super::registry::CallerDParams(caller_d)),
    )
}

/// Where the blocks of a lazy chunk given to a plain decode call are: the
/// super-chunk named by the context's `dparams.schunk` opens its frame for
/// them (the reference reads them through `context->schunk->frame`).
fn resolve_lazy(
    dp: &b2nd_core::chunk::DParams,
    chunk: &[u8],
) -> Result<Box<dyn b2nd_core::chunk::BlockSource>> {
    let sc = dp
        .user_data
        .as_ref()
        .and_then(|u| u.downcast_ref::<super::registry::CallerDParams>())
        .map(|d| d.0.schunk)
        .filter(|p| !p.is_null())
        .ok_or_else(|| crate::err!(InvalidParam, "lazy chunk needs an associated super-chunk"))?;
    // SAFETY: a non-NULL `dparams.schunk` is, by the C API's contract, a live
    // super-chunk from this library (every one is a `SchunkBox`), not being
    // changed while the context decodes; it is only read here, and the block
    // source opens its own file handle, keeping no borrow of it.
    let b = unsafe { &*(sc as *const SchunkBox) };
    b.core.read().lazy_block_source(chunk)
}

/// Whether the C entries already mirror `layers` (names and contents).
fn same_layers(layers: &[b2nd_core::frame::Metalayer], entries: &[Box<OwnedLayer>]) -> bool {
    layers.len() == entries.len()
        && layers
            .iter()
            .zip(entries)
            .all(|(l, e)| e.name.as_bytes() == l.name.as_bytes() && e.content == l.content)
}

impl Drop for SchunkBox {
    fn drop(&mut self) {
        // SAFETY: the contexts were created in `into_c` for this box only
        // (or are NULL) and are freed once, here.
        unsafe {
            super::context::blosc2_free_ctx(self.c.cctx);
            super::context::blosc2_free_ctx(self.c.dctx);
        }
        if !self.borrowed_cframe.is_null() && !self.avoid_cframe_free {
            // SAFETY: the caller gave up this malloc'ed buffer by calling
            // `blosc2_schunk_avoid_cframe_free(sc, false)`; freed once.
            unsafe { libc::free(self.borrowed_cframe.cast()) };
        }
    }
}

/// Claims the super-chunk behind `p` for the call running (see [`busy`]):
/// `NullPointer` for NULL, `BLOSC2_ERROR_FAILURE` when a call already works
/// on it.
///
/// # Safety
/// `p` is NULL or a pointer returned by this library and not yet freed.
pub(crate) unsafe fn claim(p: *mut blosc2_schunk) -> Result<busy::Claim> {
    let raw = p.cast::<SchunkBox>().cast_const();
    if raw.is_null() {
        crate::bail!(NullPointer, "schunk is NULL");
    }
    busy::claim(raw as usize, || {
        // SAFETY: every non-NULL `blosc2_schunk*` we hand out is the address
        // of a live `SchunkBox` (its first field is the C struct, repr(C)).
        // It is not claimed, so no call holds a `&mut` to it; this shared
        // borrow ends within the closure.
        unsafe { &*raw }.meta_snapshot.clone()
    })
}

/// The box behind a C pointer, claimed for the call running until the
/// returned [`Held`] is dropped.
///
/// # Safety
/// `p` is NULL or a pointer returned by this library and not yet freed.
pub(crate) unsafe fn this<'a>(p: *mut blosc2_schunk) -> Result<Held<'a>> {
    // SAFETY: forwarded contract.
    let claim = unsafe { claim(p) }?;
    // SAFETY: `p` is a live box (see `claim`), and the claim just made keeps
    // every other call from making a reference to it while this one lives.
    let b = unsafe { &mut *p.cast::<SchunkBox>() };
    Ok(Held { b, _claim: claim })
}

/// The box behind a C pointer, admitted for a read until the returned
/// [`SharedHeld`] is dropped: other reads may hold it at the same time.
///
/// # Safety
/// `p` is NULL or a pointer returned by this library and not yet freed.
pub(crate) unsafe fn this_shared<'a>(p: *mut blosc2_schunk) -> Result<SharedHeld<'a>> {
    let raw = p.cast::<SchunkBox>().cast_const();
    if raw.is_null() {
        crate::bail!(NullPointer, "schunk is NULL");
    }
    let claim = busy::claim_read(raw as usize)?;
    // SAFETY: `p` is a live box (see `claim`); while the read claim lives
    // no call holds a `&mut` to it (changes wait for reads to end).
    let b = unsafe { &*raw };
    Ok(SharedHeld { b, _claim: claim })
}

/// The box behind a C pointer, admitted for a change whose codecs and
/// filters may read it (see `busy::claim_intent`) until the returned
/// [`Intent`] is dropped or made a [`Held`].
///
/// # Safety
/// As for [`this`].
pub(crate) unsafe fn this_intent(p: *mut blosc2_schunk) -> Result<Intent> {
    let raw = p.cast::<SchunkBox>();
    if raw.is_null() {
        crate::bail!(NullPointer, "schunk is NULL");
    }
    let claim = busy::claim_intent(raw as usize)?;
    Ok(Intent { raw, claim })
}

/// A super-chunk's box under a write intent (shared with the reads of other
/// calls and of this call's callbacks) or a sealed change (shared with
/// this call's callbacks only), until [`Intent::upgrade`].
pub(crate) struct Intent {
    raw: *mut SchunkBox,
    claim: busy::Claim,
}

impl Intent {
    /// The box, to read and to encode with.
    pub(crate) fn shared(&self) -> &SchunkBox {
        // SAFETY: `raw` is a live box (see `claim`); while the intent lives
        // no call holds a `&mut` to it (changes wait for intents to end).
        unsafe { &*self.raw }
    }

    /// The box alone, once the reads of other calls are over.
    pub(crate) fn upgrade<'a>(mut self) -> Result<Held<'a>> {
        self.claim.upgrade()?;
        // SAFETY: a live box, and the claim now keeps every other call from
        // making a reference to it while the `Held` lives.
        let b = unsafe { &mut *self.raw };
        Ok(Held {
            b,
            _claim: self.claim,
        })
    }
}

/// A super-chunk's box shared by the reads running on it (see [`this_shared`]).
pub(crate) struct SharedHeld<'a> {
    b: &'a SchunkBox,
    _claim: busy::Claim,
}

impl core::ops::Deref for SharedHeld<'_> {
    type Target = SchunkBox;
    fn deref(&self) -> &SchunkBox {
        self.b
    }
}

/// A super-chunk's box with the claim that makes this `&mut` the only way
/// in (see [`this`]); the claim is released when it is dropped.
pub(crate) struct Held<'a> {
    b: &'a mut SchunkBox,
    _claim: busy::Claim,
}

impl Held<'_> {
    /// The box sealed between two steps of this call's change (see
    /// `busy::Claim::seal`): shared with this call's callbacks only, until
    /// [`Intent::upgrade`] gives it back alone.
    pub(crate) fn seal(self) -> Result<Intent> {
        let Held {
            b,
            _claim: mut claim,
        } = self;
        claim.seal()?;
        Ok(Intent { raw: b, claim })
    }
}

impl core::ops::Deref for Held<'_> {
    type Target = SchunkBox;
    fn deref(&self) -> &SchunkBox {
        self.b
    }
}

impl core::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut SchunkBox {
        self.b
    }
}

/// The vlmetalayers of a super-chunk that a call is working on, as it
/// showed them then (compressed contents), for codecs and filters of that
/// call reading them through `cparams->schunk`; `None` between calls (then
/// the box is free to be read).
pub(crate) fn claimed_vlmetas(p: *mut blosc2_schunk) -> Option<busy::Metalayers> {
    busy::claimed_vlmetas(p as usize)
}

/// Index and content of layer `name` in `layers`.
pub(crate) fn find_layer<'m>(
    layers: &'m busy::Metalayers,
    name: &str,
) -> Option<(usize, &'m [u8])> {
    busy::find_meta(layers, name)
}

/// Index and content of the fixed-size metalayer `name` as the super-chunk
/// behind `p` shows it (`None`: there is none). Between calls this is what
/// its public `metalayers` entries hold, read as the reference's header
/// inline `blosc2_meta_get` reads them (a caller's edits of an entry's
/// `content`/`content_len` included: a negative length is
/// `BLOSC2_ERROR_DATA`). During a call on the super-chunk, codecs and filters
/// that call runs read them through `cparams->schunk`, from the claim and
/// without touching the box (an array call shows the array's metalayers
/// meanwhile).
///
/// # Safety
/// As for [`this`]; the `metalayers` entries are the library's or point to
/// memory the caller keeps valid, as in the reference.
pub(crate) unsafe fn read_meta(
    p: *mut blosc2_schunk,
    name: &str,
) -> Result<Option<(usize, Vec<u8>)>> {
    let raw = p.cast::<SchunkBox>().cast_const();
    if raw.is_null() {
        crate::bail!(NullPointer, "schunk is NULL");
    }
    if let Some(metas) = busy::claimed_metas(raw as usize) {
        return Ok(busy::find_meta(&metas, name).map(|(i, c)| (i, c.to_vec())));
    }
    // SAFETY: a live box (see `claim`), not claimed: no call holds a `&mut`
    // to it. Only the C struct's metalayer fields are read, through raw
    // pointers, as C code reads them.
    unsafe {
        let c = core::ptr::addr_of!((*raw).c);
        let n = usize::from(core::ptr::addr_of!((*c).nmetalayers).read()).min(16);
        for i in 0..n {
            let m = core::ptr::addr_of!((*c).metalayers[i]).read();
            if m.is_null() || (*m).name.is_null() {
                continue;
            }
            if std::ffi::CStr::from_ptr((*m).name).to_bytes() != name.as_bytes() {
                continue;
            }
            let len = (*m).content_len;
            if len < 0 {
                crate::bail!(
                    Data,
                    "metalayer \"{name}\" has a corrupt content length {len}"
                );
            }
            if len > 0 && (*m).content.is_null() {
                crate::bail!(
                    Data,
                    "metalayer \"{name}\" has no content for its length {len}"
                );
            }
            let bytes = super::convert::items((*m).content.cast_const(), len, "content")?;
            return Ok(Some((i, bytes.to_vec())));
        }
    }
    Ok(None)
}

/// Runs `f` on the box behind `p`, syncs the C fields, and returns the value
/// or the error's code.
///
/// # Safety
/// As for [`this`].
pub(crate) unsafe fn with_schunk(
    p: *mut blosc2_schunk,
    f: impl FnOnce(&mut SchunkBox) -> Result<i64>,
) -> i64 {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let mut b = unsafe { this(p) }?;
        // What the caller wrote to the public fields first; then, with
        // locking on, what other handles wrote (the reference checks for a
        // stale frame on each access; a no-op otherwise).
        let r = b
            .pull()
            .and_then(|_| b.core.write().sync_if_stale())
            .and_then(|_| f(&mut b));
        b.sync();
        r
    })
}

/// Runs the read `f` on the box behind `p` and returns its value or the
/// error's code. Reads run together; when the call must first take in what
/// the caller wrote to the public fields, or what another handle wrote to
/// the file, or when locking is on (each read is then one access under the
/// cross-process lock), it runs as [`with_schunk`] does, alone.
///
/// # Safety
/// As for [`this`].
pub(crate) unsafe fn read_schunk(
    p: *mut blosc2_schunk,
    f: impl FnOnce(&SchunkBox) -> Result<i64>,
) -> i64 {
    super::guard_code(|| {
        {
            // SAFETY: forwarded contract.
            let b = unsafe { this_shared(p) }?;
            if !b.needs_exclusive() {
                return f(&b);
            }
        }
        // SAFETY: forwarded contract.
        let mut b = unsafe { this(p) }?;
        let r = b.pull().and_then(|_| b.core.write().sync_if_stale());
        let r = r.and_then(|_| {
            if !b.core.read().locking() {
                return f(&b);
            }
            // One access under the cross-process lock (taken whole: the
            // bracket a caller's `blosc2_schunk_lock` nests in), which also
            // catches up with what other handles wrote first.
            b.core.write().lock()?;
            let r = f(&b);
            let u = b.core.write().unlock();
            let v = r?;
            u?;
            Ok(v)
        });
        b.sync();
        r
    })
}

/// Runs a change on the box behind `p` in two steps: `encode` under a
/// write intent (see [`this_intent`]), while its prefilter, codecs and
/// filters may read the super-chunk, and so may other threads; then
/// `publish` with what it made, alone, once those reads are over (so no
/// read sees half of it), and the C fields are synced. When the call must
/// first take in changes, or locking is on, both run as [`with_schunk`]
/// does.
///
/// # Safety
/// As for [`this`].
pub(crate) unsafe fn intent_schunk<E>(
    p: *mut blosc2_schunk,
    encode: impl FnOnce(&SchunkBox) -> Result<E>,
    publish: impl FnOnce(&mut SchunkBox, E) -> Result<i64>,
) -> i64 {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let intent = match unsafe { settled_intent(p) }? {
            Ok(intent) => intent,
            Err(code) if code < 0 => return Ok(code),
            // SAFETY: forwarded contract.
            Err(_) => return Ok(unsafe { with_schunk(p, |b| publish(b, encode(b)?)) }),
        };
        let made = encode(intent.shared());
        let mut b = intent.upgrade()?;
        let r = made.and_then(|e| publish(&mut b, e));
        b.sync();
        r
    })
}

/// A write intent on the box behind `p` once it has taken in what the
/// caller changed in its fields and what other handles wrote to its file
/// (alone, first, as [`with_schunk`] does). `Err(code)`: that failed with
/// `code`, or (`code` 0) locking is on, where each call is one access under
/// the cross-process lock and runs alone.
///
/// # Safety
/// As for [`this`].
pub(crate) unsafe fn settled_intent(
    p: *mut blosc2_schunk,
) -> Result<core::result::Result<Intent, i64>> {
    for _ in 0..2 {
        // SAFETY: forwarded contract.
        let intent = unsafe { this_intent(p) }?;
        let b = intent.shared();
        if !b.needs_exclusive() {
            return Ok(Ok(intent));
        }
        if b.core.read().locking() {
            break;
        }
        drop(intent);
        // SAFETY: forwarded contract.
        let code = unsafe { with_schunk(p, |_| Ok(0)) };
        if code < 0 {
            return Ok(Err(code));
        }
    }
    // Still changing under it (another thread's edits of the fields, or a
    // writer on the file): alone, then.
    Ok(Err(0))
}

/// Logs the error and returns NULL, for constructors.
fn null_on_err(r: Result<*mut blosc2_schunk>) -> *mut blosc2_schunk {
    match r {
        Ok(p) => p,
        Err(e) => {
            super::report(&e);
            core::ptr::null_mut()
        }
    }
}

/// The caller's `blosc2_io`, copied, when the storage names one.
///
/// # Safety
/// `st` is NULL or a valid `blosc2_storage`.
unsafe fn io_copy(st: *const blosc2_storage) -> Option<blosc2_io> {
    // SAFETY: NULL or valid per the contract; its io is NULL or valid.
    unsafe { st.as_ref().and_then(|s| s.io.as_ref()).copied() }
}

/// Creates an empty super-chunk as `storage` says (NULL: in memory, default
/// parameters). Existing files or directories at `urlpath` are replaced.
/// Returns NULL on error.
///
/// # Safety
/// `storage` is NULL or a valid `blosc2_storage` whose pointers are NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_new(storage: *mut blosc2_storage) -> *mut blosc2_schunk {
    guard(core::ptr::null_mut(), || {
        null_on_err((|| {
            // SAFETY: forwarded contract.
            let st = unsafe { storage_from_c(storage) }?;
            let core = SChunk::new(st)?;
            // SAFETY: forwarded contract: the storage and its parameter
            // pointers are NULL or valid.
            let (io, cp, dp) = unsafe {
                let s = storage.as_ref();
                (
                    io_copy(storage),
                    s.and_then(|s| s.cparams.as_ref()).copied(),
                    s.and_then(|s| s.dparams.as_ref()).copied(),
                )
            };
            Ok(SchunkBox::into_c_with(core, io, cp, dp))
        })())
    })
}

/// Copies a super-chunk (chunks, metalayers, vlmetalayers) into `storage`;
/// the copy keeps the source's compression parameters. NULL on error.
///
/// # Safety
/// `schunk` is a live super-chunk; `storage` as for `blosc2_schunk_new`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *mut blosc2_storage,
) -> *mut blosc2_schunk {
    guard(core::ptr::null_mut(), || {
        null_on_err((|| {
            // SAFETY: forwarded contracts.
            let mut b = unsafe { this(schunk) }?;
            // SAFETY: forwarded contract.
            let st = unsafe { storage_from_c(storage) }?;
            let copy = b.core.write().copy(st);
            b.sync();
            // SAFETY: forwarded contract.
            Ok(SchunkBox::into_c(copy?, unsafe { io_copy(storage) }))
        })())
    })
}

/// Opens a frame as `blosc2_schunk_open_offset_udio` with the defaults.
///
/// # Safety
/// `urlpath` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open(urlpath: *const c_char) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract; NULL io means the file system.
    unsafe { blosc2_schunk_open_offset_udio(urlpath, 0, core::ptr::null()) }
}

/// Opens a contiguous frame that starts `offset` bytes into a file.
///
/// # Safety
/// `urlpath` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset(
    urlpath: *const c_char,
    offset: i64,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    unsafe { blosc2_schunk_open_offset_udio(urlpath, offset, core::ptr::null()) }
}

/// Opens a frame through the I/O backend `udio` names.
///
/// # Safety
/// `urlpath` is NULL or a NUL-terminated string; `udio` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_udio(
    urlpath: *const c_char,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: forwarded contract.
    unsafe { blosc2_schunk_open_offset_udio(urlpath, 0, udio) }
}

/// Opens a frame file (at `offset`) or sparse frame directory through the
/// I/O backend `udio` (NULL: the file system). NULL on error, including a
/// negative offset, a missing path and bytes that are not a frame.
///
/// # Safety
/// `urlpath` is NULL or a NUL-terminated string; `udio` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset_udio(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    guard(core::ptr::null_mut(), || {
        null_on_err((|| {
            // SAFETY: forwarded contract.
            let path = unsafe { frame_path_from_c(urlpath, "urlpath") }?;
            let offset = u64::try_from(offset)
                .map_err(|_| crate::err!(InvalidParam, "offset {offset} is negative"))?;
            // SAFETY: forwarded contract.
            let io = unsafe { super::io::io_from_c(udio) }?;
                // SAFETY: forwarded contract.
            let locking = unsafe { super::storage::locking_param(udio) };
            let core = SChunk::open_with(&path, offset, io, locking)?;
            // SAFETY: NULL or valid per the contract.
            let p = SchunkBox::into_c(core, unsafe { udio.as_ref() }.copied());
            // SAFETY: `p` was just created by `into_c`.
            let mut b = unsafe { this(p) }?;
            b.file_offset = offset;
            // `storage->urlpath` is the string opened, `file:///` and all,
            // as the reference keeps it.
            // SAFETY: checked a C string by `frame_path_from_c` above.
            b.urlpath = Some(unsafe { std::ffi::CStr::from_ptr(urlpath) }.to_owned());
            b.sync();
            drop(b);
            Ok(p)
        })())
    })
}

/// A super-chunk from a contiguous frame buffer of `len` bytes. With `copy`
/// the result is an in-memory chunk list; without, an in-memory frame that
/// remembers `cframe` but never writes to it: the caller's buffer is never
/// freed unless `blosc2_schunk_avoid_cframe_free(sc, false)` hands it over.
/// NULL on error (NULL buffer, length not the frame's, not a frame).
///
/// # Safety
/// `cframe` is NULL or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> *mut blosc2_schunk {
    guard(core::ptr::null_mut(), || {
        null_on_err((|| {
            if cframe.is_null() {
                crate::bail!(NullPointer, "cframe is NULL");
            }
            // SAFETY: non-NULL and readable for `len` bytes per the contract.
            let bytes = unsafe { super::convert::items(cframe, len, "cframe") }?;
            let core = SChunk::from_buffer(bytes, copy)?;
            let p = SchunkBox::into_c(core, None);
            if !copy {
                // SAFETY: `p` was just created by `into_c`.
                unsafe { this(p) }?.borrowed_cframe = cframe;
            }
            Ok(p)
        })())
    })
}

/// Whether freeing the super-chunk leaves the buffer given to
/// `blosc2_schunk_from_buffer(.., copy = false)` alone (the default, true)
/// or `free()`s it (false). No effect on other super-chunks.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_avoid_cframe_free(
    schunk: *mut blosc2_schunk,
    avoid_cframe_free: bool,
) {
    guard((), || {
        // SAFETY: forwarded contract.
        if let Ok(mut b) = unsafe { this(schunk) } {
            if b.core.read().is_frame() {
                b.avoid_cframe_free = avoid_cframe_free;
            }
        }
    })
}

/// Takes the exclusive frame lock and holds it until
/// `blosc2_schunk_unlock`: operations in between nest in it, so the sequence
/// is atomic against other locking handles and processes. Re-entrant. A
/// no-op returning 0 unless locking is on for the handle (the `locking`
/// member of `blosc2_stdio_params`, or the `BLOSC_LOCKING` environment
/// variable, for on-disk frames through the file-system backend). Returns 0
/// or `BLOSC2_ERROR_LOCK`.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_lock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            b.core.write().lock()?;
            Ok(0)
        }) as c_int
    }
}

/// Releases one level of `blosc2_schunk_lock` (a no-op when locking is off
/// or the lock is not held). Returns 0 or `BLOSC2_ERROR_LOCK`.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_unlock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            b.core.write().unlock()?;
            Ok(0)
        }) as c_int
    }
}

/// Re-reads an on-disk frame changed through another handle or process
/// (see `SChunk::sync_if_stale`). Returns 1 when it did, 0 when the view was
/// current, negative on error.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_refresh(schunk: *mut blosc2_schunk) -> c_int {
    super::guard_code(|| {
        // SAFETY: forwarded contract.
        let mut b = unsafe { this(schunk) }?;
        let r = b.pull().and_then(|_| b.core.write().sync_if_stale());
        b.sync();
        Ok(i64::from(r?))
    }) as c_int
}

/// The super-chunk as a contiguous frame. For an in-memory contiguous frame
/// this is the frame's own buffer (`*needs_free` false, as in the
/// reference): it stays valid until the super-chunk changes or is freed and
/// must not be written to. Otherwise a `malloc`ed serialization
/// (`*needs_free` true: the caller frees it). Returns its length.
///
/// # Safety
/// `schunk` is NULL or live; `cframe` and `needs_free` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            if cframe.is_null() || needs_free.is_null() {
                crate::bail!(NullPointer, "cframe or needs_free is NULL");
            }
            if let Some(own) = b.core.read().frame_bytes() {
                // SAFETY: both out-pointers are non-NULL and writable per the
                // contract; the pointer is into the frame's buffer, which the
                // box owns and only a later call on it can move or free.
                *cframe = own.as_ptr() as *mut u8;
                *needs_free = false;
                return Ok(own.len() as i64);
            }
            let bytes = b.core.write().to_buffer()?;
            let p = malloc_copy(&bytes)?;
            // SAFETY: both out-pointers are non-NULL and writable per the contract.
            *cframe = p;
            *needs_free = true;
            Ok(bytes.len() as i64)
        })
    }
}

/// A `malloc`ed copy of `bytes` (at least one byte is allocated).
pub(crate) fn malloc_copy(bytes: &[u8]) -> Result<*mut u8> {
    // SAFETY: plain allocation, checked for NULL below.
    let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
    if p.is_null() {
        crate::bail!(MemoryAlloc, "malloc of {} bytes failed", bytes.len());
    }
    // SAFETY: `p` is a fresh allocation of at least `bytes.len()` bytes.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(p)
}

/// Writes the super-chunk as a contiguous frame file; returns its length.
///
/// # Safety
/// `schunk` is NULL or live; `urlpath` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let path = path_from_c(urlpath, "urlpath")?;
            Ok(b.core.write().to_file(&path)? as i64)
        })
    }
}

/// Appends the super-chunk as a contiguous frame to the end of `urlpath`
/// (created if missing); returns the offset where the frame starts.
///
/// # Safety
/// `schunk` is NULL or live; `urlpath` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            let path = path_from_c(urlpath, "urlpath")?;
            Ok(b.core.write().append_file(&path)? as i64)
        })
    }
}

/// Frees a super-chunk and everything it owns (on-disk data stays). NULL is
/// accepted. Returns 0, or `BLOSC2_ERROR_FAILURE` without freeing when a
/// codec or filter calls it on the super-chunk its call works on.
///
/// # Safety
/// `schunk` is NULL or a live super-chunk, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    super::guard_code(|| {
        if schunk.is_null() {
            return Ok(0);
        }
        // A codec or filter of a call on it cannot free it under that call.
        // SAFETY: forwarded contract.
        let claim = unsafe { claim(schunk) }?;
        // SAFETY: `schunk` came from `Box::into_raw` of a `SchunkBox` (see
        // `into_c`) and is released exactly once here; the claim shows no
        // call is using it.
        drop(unsafe { Box::from_raw(schunk.cast::<SchunkBox>()) });
        drop(claim);
        Ok(0)
    })
}

/// Length of the frame behind the super-chunk (or that it would serialize to).
///
/// # Safety
/// `schunk` is NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    // SAFETY: forwarded contract.
    unsafe { with_schunk(schunk, |b| Ok(b.core.write().frame_len()? as i64)) }
}

/// Stores in `*cparams` a `malloc`ed struct with the super-chunk's
/// compression settings as its public fields hold them, `nthreads` from its
/// `cctx` and `schunk` naming it, as the reference does. Returns 0.
///
/// # Safety
/// `schunk` is NULL or live; `cparams` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_cparams(
    schunk: *mut blosc2_schunk,
    cparams: *mut *mut blosc2_cparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            if cparams.is_null() {
                crate::bail!(NullPointer, "cparams is NULL");
            }
            let me = (b as *mut SchunkBox).cast::<c_void>();
            let mut out = cparams_to_c(b.core.read().cparams(), me);
            // SAFETY: NULL or a live context (see `SchunkBox::pull`).
            out.nthreads = match super::context::ctx_ref(b.c.cctx) {
                Some(ctx) => ctx.cparams.nthreads,
                None => b2nd_core::global::settings().nthreads,
            };
            let p = malloc_struct(out)?;
            // SAFETY: non-NULL and writable per the contract.
            *cparams = p;
            Ok(0)
        }) as c_int
    }
}

/// Stores in `*dparams` a `malloc`ed struct with `nthreads` from the
/// super-chunk's `dctx` and `schunk` naming it, as the reference does.
/// Returns 0.
///
/// # Safety
/// `schunk` is NULL or live; `dparams` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_dparams(
    schunk: *mut blosc2_schunk,
    dparams: *mut *mut blosc2_dparams,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        with_schunk(schunk, |b| {
            if dparams.is_null() {
                crate::bail!(NullPointer, "dparams is NULL");
            }
            let me = (b as *mut SchunkBox).cast::<c_void>();
            let mut out = dparams_to_c(b.core.read().dparams(), 0, me);
            // SAFETY: NULL or a live context (see `SchunkBox::pull`).
            out.nthreads = match super::context::ctx_ref(b.c.dctx) {
                Some(ctx) => ctx.dparams.nthreads,
                None => b2nd_core::global::settings().nthreads,
            };
            let p = malloc_struct(out)?;
            // SAFETY: non-NULL and writable per the contract.
            *dparams = p;
            Ok(0)
        }) as c_int
    }
}

/// A `malloc`ed copy of a plain C struct.
fn malloc_struct<T: Copy>(v: T) -> Result<*mut T> {
    // SAFETY: plain allocation of `size_of::<T>()` bytes, checked for NULL.
    let p = unsafe { libc::malloc(core::mem::size_of::<T>()) }.cast::<T>();
    if p.is_null() {
        crate::bail!(MemoryAlloc, "malloc failed");
    }
    // SAFETY: malloc returns memory aligned for any C struct; `p` is fresh.
    unsafe { p.write(v) };
    Ok(p)
}
