//! The b2nd N-dimensional array: a super-chunk whose chunks tile an
//! N-dimensional shape, described by the "b2nd" metalayer.
//!
//! Every function of the reference `b2nd.h` maps to one method of [`NdArray`]
//! (or of [`Context`] for the creation parameters) with the same semantics
//! and the same error categories, so the C wrappers stay thin:
//!
//! | reference                      | here                                   |
//! |--------------------------------|----------------------------------------|
//! | `b2nd_create_ctx`              | [`Context::new`]                       |
//! | `b2nd_uninit/empty/zeros/nans/full` | [`NdArray::uninit`] .. [`NdArray::full`] |
//! | `b2nd_from_cbuffer/to_cbuffer` | [`NdArray::from_cbuffer`], [`NdArray::to_cbuffer`] |
//! | `b2nd_get/set_slice_cbuffer`   | [`NdArray::get_slice_cbuffer`], [`NdArray::set_slice_cbuffer`] |
//! | `b2nd_get_sparse_cbuffer`      | [`NdArray::get_sparse_cbuffer`]        |
//! | `b2nd_get_slice`, `b2nd_copy`, `b2nd_concatenate` | [`NdArray::get_slice`], [`NdArray::copy`], [`NdArray::concatenate`] |
//! | `b2nd_squeeze(_index)`, `b2nd_expand_dims` | [`NdArray::squeeze`], [`NdArray::squeeze_index`], [`NdArray::expand_dims`] |
//! | `b2nd_resize/insert/append/delete` | [`NdArray::resize`], [`NdArray::insert`], [`NdArray::append`], [`NdArray::delete`] |
//! | `b2nd_get/set_orthogonal_selection` | [`NdArray::get_orthogonal_selection`], [`NdArray::set_orthogonal_selection`] |
//! | `b2nd_print_meta`, `b2nd_refresh` | [`NdArray::print_meta`] / [`NdArray::meta_text`], [`NdArray::refresh`] |
//! | `b2nd_from_schunk`, `b2nd_open`, `b2nd_open_offset` | [`NdArray::from_schunk`], [`NdArray::open`], [`NdArray::open_offset`] |
//! | `b2nd_to_cframe`, `b2nd_from_cframe` | [`NdArray::to_cframe`], [`NdArray::from_cframe`] |
//! | `b2nd_save`, `b2nd_save_append` | [`NdArray::save`], [`NdArray::save_append`] |
//! | `b2nd_get_slice_nchunks`       | [`NdArray::get_slice_nchunks`]         |
//! | `caterva_squeeze(_index)` (in place) | [`NdArray::squeeze_in_place`]    |
//! | `array->sc`                    | [`NdArray::with_schunk`]               |
//!
//! Squeeze and expand_dims return views sharing the source's chunks, as in
//! the reference (see `shared_store`); [`NdArray::squeeze_index_copy`] is
//! the copying form. Small reads inside one chunk keep that chunk decoded
//! for the next read (see `schunk_store`).
//!
//! Deliberate differences from the reference: regions, buffers and selection
//! indices are always checked (the reference trusts some of them); views
//! refuse to add or remove chunks and outlive their source safely; reads do
//! not re-sync with other handles implicitly (call [`NdArray::refresh`]).

mod ffi_access;
mod layout;
mod persist;
mod plain;
mod reshape;
mod schunk_store;
mod select;
mod shared_store;
mod slice;
mod squeeze;
mod store;
mod views;

pub use layout::Layout;
pub use reshape::Growth;
pub use store::{ArrayStorage, Encoded};

use layout::MAX_DIM;
use shared_store::SharedStore;
use store::{ChunkStore, Fill};

use super::meta::{DtypeTail, NdMeta};
use crate::Result;

/// The dtype the reference writes when none is given: `|S<typesize>`.
pub fn default_dtype(typesize: i32) -> String {
    format!("|S{typesize}")
}

/// Largest typesize the reference accepts (`BLOSC2_MAXTYPESIZE`).
pub(crate) const MAX_TYPESIZE: i32 = 536_866_816;

/// Creation parameters of an array (the reference `b2nd_context_t`).
#[derive(Debug, Clone)]
pub struct Context {
    /// Where the array's super-chunk lives, with its parameters.
    pub storage: ArrayStorage,
    /// Item size in bytes.
    pub typesize: i32,
    /// Items per dimension of the array.
    pub shape: Vec<i64>,
    /// Items per dimension of a chunk.
    pub chunkshape: Vec<i32>,
    /// Items per dimension of a block.
    pub blockshape: Vec<i32>,
    /// The data type description (NumPy `descr` string when
    /// `dtype_format == 0`).
    pub dtype: String,
    /// Interpretation of `dtype`; 0 means NumPy format.
    pub dtype_format: i8,
    /// User metalayers added after "b2nd", in order.
    pub metalayers: Vec<(String, Vec<u8>)>,
}

impl Context {
    /// Validates the parameters the way `b2nd_create_ctx` does (ndim range,
    /// shape/chunkshape/blockshape signs and pairing, block size overflow);
    /// `dtype` defaults to `|S<typesize>`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        storage: ArrayStorage,
        typesize: i32,
        shape: &[i64],
        chunkshape: &[i32],
        blockshape: &[i32],
        dtype: Option<&str>,
        dtype_format: i8,
        metalayers: Vec<(String, Vec<u8>)>,
    ) -> Result<Context> {
        let ctx = Context::unchecked(
            storage,
            typesize,
            shape,
            chunkshape,
            blockshape,
            dtype,
            dtype_format,
            metalayers,
        );
        ctx.validate()?;
        Ok(ctx)
    }

    /// [`Context::new`] without the checks: for a context whose shape is
    /// still to be replaced (`get_slice`, `copy`), whose own shape need not
    /// make an array. The reference's `b2nd_create_ctx` takes, say, shape
    /// {20, 10} with chunkshape {1, 0}, which only a region with an empty
    /// last dimension can be made with. Whatever builds an array from it
    /// checks it first ([`Context::check`]).
    #[allow(clippy::too_many_arguments)]
    pub fn unchecked(
        storage: ArrayStorage,
        typesize: i32,
        shape: &[i64],
        chunkshape: &[i32],
        blockshape: &[i32],
        dtype: Option<&str>,
        dtype_format: i8,
        metalayers: Vec<(String, Vec<u8>)>,
    ) -> Context {
        Context {
            storage,
            typesize,
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            dtype: dtype
                .map(str::to_string)
                .unwrap_or_else(|| default_dtype(typesize)),
            dtype_format,
            metalayers,
        }
    }

    /// The checks [`Context::new`] makes: whether an array can be made
    /// with this context as it is.
    pub fn check(&self) -> Result<()> {
        self.validate().map(|_| ())
    }

    /// The fixed-size metalayers an array made with this context starts
    /// with, in order: its "b2nd" layer, then the context's own.
    pub fn initial_metalayers(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let layout = self.validate()?;
        let smeta = meta_record(&layout, &self.dtype, self.dtype_format).to_b2nd_bytes()?;
        let mut layers = Vec::with_capacity(1 + self.metalayers.len());
        layers.push(("b2nd".to_string(), smeta));
        layers.extend(self.metalayers.iter().cloned());
        Ok(layers)
    }

    /// Checks everything creation depends on, before anything is written.
    fn validate(&self) -> Result<Layout> {
        if self.shape.len() > MAX_DIM {
            crate::bail!(
                InvalidParam,
                "ndim {} must be in [0, {MAX_DIM}]",
                self.shape.len()
            );
        }
        if self.typesize <= 0 || self.typesize > MAX_TYPESIZE {
            crate::bail!(
                InvalidParam,
                "typesize {} must be in [1, {MAX_TYPESIZE}]",
                self.typesize
            );
        }
        if self.dtype_format < 0 {
            crate::bail!(InvalidParam, "dtype_format cannot be negative");
        }
        // An empty dtype is stored as given, as the reference does; only a
        // NUL (which a C string cannot carry) is refused.
        if self.dtype.contains('\0') {
            crate::bail!(InvalidParam, "invalid dtype {:?}", self.dtype);
        }
        // A blockshape larger than the chunkshape is accepted, as by the
        // reference 3.3.5: the chunk is padded up to whole blocks
        // (`extchunkshape`), so it holds a single, partly empty block.
        let layout = Layout::new(&self.shape, &self.chunkshape, &self.blockshape)?;
        layout
            .blocknitems
            .checked_mul(self.typesize as i64)
            .filter(|b| *b <= i32::MAX as i64)
            .ok_or_else(|| {
                crate::err!(
                    InvalidParam,
                    "blockshape product overflows the maximum blocksize"
                )
            })?;
        layout.chunk_nbytes(self.typesize)?;
        if self.metalayers.len() + 1 > store::MAX_METALAYERS {
            crate::bail!(Failure, "too many metalayers ({})", self.metalayers.len());
        }
        for (i, (name, _)) in self.metalayers.iter().enumerate() {
            if name.is_empty() || name.len() > 31 || name == "b2nd" {
                crate::bail!(InvalidParam, "invalid metalayer name {name:?}");
            }
            if self.metalayers[..i].iter().any(|(n, _)| n == name) {
                crate::bail!(Failure, "metalayer {name:?} given twice");
            }
        }
        Ok(layout)
    }
}

/// The metalayer record describing `layout`.
fn meta_record(layout: &Layout, dtype: &str, dtype_format: i8) -> NdMeta {
    NdMeta::new(
        layout.shape.clone(),
        layout.chunkshape.clone(),
        layout.blockshape.clone(),
        dtype,
        dtype_format,
    )
}

/// An N-dimensional array stored in a super-chunk.
#[derive(Debug)]
pub struct NdArray {
    store: SharedStore,
    layout: Layout,
    dtype: String,
    dtype_format: i8,
}

impl NdArray {
    fn new_filled(ctx: &Context, fill: Fill) -> Result<NdArray> {
        let layout = ctx.validate()?;
        let chunksize = layout.chunk_nbytes(ctx.typesize)?;
        let blocksize = (layout.blocknitems * ctx.typesize as i64) as i32;
        let mut store = store::new_store(&ctx.storage, ctx.typesize, chunksize, blocksize)?;
        for (name, content) in ctx.initial_metalayers()? {
            store.meta_add(&name, &content)?;
        }
        store.append_fill(layout.nchunks(), &fill)?;
        Ok(NdArray {
            store: SharedStore::new(store),
            layout,
            dtype: ctx.dtype.clone(),
            dtype_format: ctx.dtype_format,
        })
    }

    /// An array whose contents are undefined (`b2nd_uninit`; reads give zeros).
    pub fn uninit(ctx: &Context) -> Result<NdArray> {
        NdArray::new_filled(ctx, Fill::Uninit)
    }

    /// An array ready to be written (`b2nd_empty`: zero chunks, so that
    /// compression ratios do not vary).
    pub fn empty(ctx: &Context) -> Result<NdArray> {
        NdArray::new_filled(ctx, Fill::Zero)
    }

    /// An array of zeros (`b2nd_zeros`).
    pub fn zeros(ctx: &Context) -> Result<NdArray> {
        NdArray::new_filled(ctx, Fill::Zero)
    }

    /// An array of NaNs (`b2nd_nans`): typesize must be 4 or 8, else
    /// `Data` as in the reference.
    pub fn nans(ctx: &Context) -> Result<NdArray> {
        if ctx.typesize != 4 && ctx.typesize != 8 {
            crate::bail!(Data, "unsupported typesize {} for NaN", ctx.typesize);
        }
        NdArray::new_filled(ctx, Fill::Nan)
    }

    /// An array with every item equal to `fill_value` (`b2nd_full`); the
    /// value must be exactly one item.
    pub fn full(ctx: &Context, fill_value: &[u8]) -> Result<NdArray> {
        if fill_value.len() != ctx.typesize as usize {
            crate::bail!(
                InvalidParam,
                "fill value has {} bytes, typesize is {}",
                fill_value.len(),
                ctx.typesize
            );
        }
        NdArray::new_filled(ctx, Fill::Value(fill_value.to_vec()))
    }

    /// Builds an array over an existing super-chunk from its "b2nd" (else
    /// "caterva") metalayer (`b2nd_from_schunk`). A metalayer without dtype
    /// gives `|S<typesize>`.
    #[cfg(test)]
    pub(crate) fn from_store(store: Box<dyn ChunkStore>) -> Result<NdArray> {
        let smeta = store.meta_get("b2nd").or_else(|| store.meta_get("caterva"));
        let (layout, dtype, dtype_format) = NdArray::geometry_from_meta(smeta, store.typesize())?;
        let expect = layout.chunk_nbytes(store.typesize())?;
        NdArray::check_chunks(&layout, expect, store.nchunks(), store.chunksize())?;
        Ok(NdArray {
            store: SharedStore::new(store),
            layout,
            dtype,
            dtype_format,
        })
    }

    /// The geometry, dtype, dtype format and chunk size in bytes that `sc`'s
    /// "b2nd" (else "caterva") metalayer describes, checked against the
    /// chunks `sc` holds. Reads metadata only.
    ///
    /// A geometry whose padded chunk holds more bytes than a chunk can
    /// (`BLOSC2_MAX_BUFFERSIZE`) describes an array too when `sc` holds no
    /// chunks, as in the reference, whose `b2nd_from_schunk` checks the
    /// geometry's products but not its chunk size in bytes (only making a
    /// new array does): C-Blosc2's test_b2nd_shape_overflow builds one
    /// (shape and chunkshape {1073741952}, typesize 4) and expects it to
    /// open, and every slice of it to be refused. Its chunk size is then 0
    /// (no chunk fits), and [`NdArray::check_chunk_buffer`] refuses every
    /// access to its items.
    pub(crate) fn described_geometry(
        sc: &crate::schunk::SChunk,
    ) -> Result<(Layout, String, i8, i32)> {
        let smeta = sc.meta_get("b2nd").or_else(|_| sc.meta_get("caterva")).ok();
        let (layout, dtype, dtype_format) = NdArray::geometry_from_meta(smeta, sc.typesize())?;
        let expect = match layout.chunk_nbytes(sc.typesize()) {
            Ok(n) => n,
            Err(_) if sc.nchunks() == 0 && sc.nbytes() == 0 => {
                NdArray::block_nbytes(&layout, sc.typesize())?;
                return Ok((layout, dtype, dtype_format, 0));
            }
            Err(e) => return Err(e),
        };
        NdArray::check_chunks(&layout, expect, sc.nchunks(), sc.chunksize())?;
        // Every chunk of an array holds `expect` bytes. A header whose
        // nbytes says otherwise (a corrupt frame) would size a special last
        // chunk short, and the next whole chunk an edit appends would turn
        // the chunk size variable, which no array reopens with.
        if i64::from(expect).checked_mul(sc.nchunks()) != Some(sc.nbytes()) {
            crate::bail!(
                InvalidParam,
                "metalayer geometry ({} chunks of {expect} bytes) does not match the \
                 super-chunk's {} bytes",
                layout.nchunks(),
                sc.nbytes()
            );
        }
        Ok((layout, dtype, dtype_format, expect))
    }

    /// Bytes of one block of `layout` for items of `typesize` bytes.
    pub(crate) fn block_nbytes(layout: &Layout, typesize: i32) -> Result<i32> {
        layout
            .blocknitems
            .checked_mul(i64::from(typesize))
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| crate::err!(InvalidParam, "block size overflows int32"))
    }

    /// Refuses to read or write the items of an array whose padded chunk is
    /// larger than a chunk can be (one opened over a super-chunk without
    /// chunks, see `NdArray::described_geometry`): with `InvalidParam`, as
    /// the reference refuses to allocate such a chunk buffer. An array
    /// without items has nothing to read, and passes.
    /// Stores the chunks an `encode_*` method made (one write of the store).
    pub fn publish(&mut self, chunks: store::Encoded) -> Result<()> {
        self.store.write_encoded(chunks)
    }

    pub(crate) fn check_chunk_buffer(&self) -> Result<()> {
        if self.layout.nitems == 0 {
            return Ok(());
        }
        match self.layout.chunk_nbytes(self.typesize()) {
            Ok(_) => Ok(()),
            Err(_) => crate::bail!(
                InvalidParam,
                "a chunk of {} items of {} bytes is larger than a chunk buffer can be",
                self.layout.extchunknitems,
                self.typesize()
            ),
        }
    }

    /// Whether `sc` describes an array (see [`NdArray::described_geometry`]).
    pub(crate) fn check_describes_array(sc: &crate::schunk::SChunk) -> Result<()> {
        NdArray::described_geometry(sc).map(|_| ())
    }

    /// Geometry and dtype from a "b2nd"/"caterva" metalayer content.
    pub(crate) fn geometry_from_meta(
        smeta: Option<Vec<u8>>,
        typesize: i32,
    ) -> Result<(Layout, String, i8)> {
        let smeta = smeta.ok_or_else(|| {
            crate::err!(
                MetalayerNotFound,
                "neither a \"b2nd\" nor a \"caterva\" metalayer"
            )
        })?;
        let (m, _) = NdMeta::from_stored_bytes(&smeta, typesize)?;
        let layout = Layout::new(&m.shape, &m.chunkshape, &m.blockshape)?;
        Ok((layout, m.dtype, m.dtype_format))
    }

    /// The super-chunk must hold exactly the chunks the geometry implies.
    pub(crate) fn check_chunks(
        layout: &Layout,
        expect: i32,
        nchunks: i64,
        chunksize: i32,
    ) -> Result<()> {
        if layout.nchunks() != nchunks || (nchunks > 0 && expect != chunksize) {
            crate::bail!(
                InvalidParam,
                "metalayer geometry ({} chunks of {expect} bytes) does not match the super-chunk ({nchunks} chunks of {chunksize} bytes)",
                layout.nchunks()
            );
        }
        Ok(())
    }

    /// Writes the current geometry into the "b2nd" metalayer (adding it when
    /// the array came from a caterva-only super-chunk) and into a "caterva"
    /// metalayer when there is one (arrays made through the Caterva API carry
    /// both), so readers of either layer see the same shape. Both records
    /// are built before either is written.
    fn publish_meta(&mut self) -> Result<()> {
        let meta = meta_record(&self.layout, &self.dtype, self.dtype_format);
        let b2nd_old = self.store.meta_get("b2nd");
        let b2nd = match &b2nd_old {
            Some(old) => Some(meta.to_bytes_filling(old)?),
            None => None,
        };
        let caterva = match self.store.meta_get("caterva") {
            Some(old) => Some(match meta.to_bytes_filling(&old) {
                Ok(r) => r,
                // A dtype that cannot fill the slot: b2nd readers read the
                // b2nd layer; Caterva's reader stops after the blockshape
                // of a plain record written over the slot's start.
                Err(_) if b2nd_old.is_some() => meta.to_caterva_bytes()?,
                Err(e) => return Err(e),
            }),
            None => None,
        };
        if let Some(b) = b2nd {
            self.store.meta_update("b2nd", &b)?;
        } else if let Err(e) = self.store.meta_add("b2nd", &meta.to_b2nd_bytes()?) {
            // Frames take no new metalayer once they hold data; a
            // caterva-only array stays described by its caterva layer.
            if caterva.is_none() {
                return Err(e);
            }
        }
        if let Some(c) = caterva {
            self.store.meta_update("caterva", &c)?;
        }
        Ok(())
    }

    /// Follows the changes another handle or process made to the array's
    /// frame since this handle last looked (`b2nd_refresh`; the C API runs
    /// it before every call, as the reference does): re-reads the frame when
    /// it changed, then the geometry from its "b2nd" metalayer. Returns
    /// whether the frame was re-read. Only shape changes are followed: a
    /// different ndim, chunkshape or blockshape is `Data`, as in the
    /// reference. In memory nothing else can change the array: false.
    pub fn refresh(&mut self) -> Result<bool> {
        if !self.store.is_persistent() || !self.store.sync_if_stale()? {
            return Ok(false);
        }
        self.reload_geometry()?;
        Ok(true)
    }

    /// Runs `f` holding the store's cross-process lock exclusively (when the
    /// array's frame locks), so other locking handles see its chunk writes
    /// and metalayer update all at once or not at all, as the reference's
    /// slice writes and resizes are. A store re-read on taking the lock
    /// brings its geometry along first.
    ///
    /// The chunk and metalayer changes of `f` are one edit scope (see
    /// [`NdArray::begin_edits`]): a writer killed at any instant leaves the
    /// array's file with the array before or after, and when `f` fails its
    /// changes are dropped where the file still holds the array before.
    pub fn exclusively<T>(
        &mut self,
        f: impl FnOnce(&mut NdArray) -> Result<T>,
    ) -> Result<T> {
        if self.store.begin_exclusive()? {
            if let Err(e) = self.reload_geometry() {
                let _ = self.store.end_exclusive();
                return Err(e);
            }
        }
        self.begin_edits();
        let r = f(self);
        let r = self.end_edits(r);
        let u = self.store.end_exclusive();
        let v = r?;
        u?;
        Ok(v)
    }

    /// Opens an edit scope on the array's store: its chunk and metalayer
    /// changes until [`NdArray::end_edits`] reach a file in one publish.
    /// For a change made in steps over several calls (the C layer's
    /// appends and inserts); every begin must be matched by an end.
    pub fn begin_edits(&mut self) {
        self.store.begin_edits();
    }

    /// Closes the scope [`NdArray::begin_edits`] opened, keeping its changes
    /// when `r`, the result of the change, is a success. When the store
    /// went back to its file (changes dropped, or a failed publish), the
    /// geometry follows the metalayer there.
    pub fn end_edits<T>(&mut self, r: Result<T>) -> Result<T> {
        let ended = self.store.end_edits(r.is_ok());
        if !matches!(ended, Ok(false)) {
            let followed = self.reload_geometry();
            if r.is_ok() && ended.is_ok() {
                followed?;
            }
        }
        let v = r?;
        ended?;
        Ok(v)
    }

    /// Re-reads the geometry from the metalayer; the work behind `refresh`.
    fn reload_geometry(&mut self) -> Result<bool> {
        let Some(smeta) = self
            .store
            .meta_get("b2nd")
            .or_else(|| self.store.meta_get("caterva"))
        else {
            return Ok(false);
        };
        let (m, _) = NdMeta::from_stored_bytes(&smeta, self.store.typesize())?;
        if m.shape.len() != self.ndim()
            || m.chunkshape != self.layout.chunkshape
            || m.blockshape != self.layout.blockshape
        {
            crate::bail!(
                Data,
                "ndim/chunkshape/blockshape changed behind this handle"
            );
        }
        if m.shape == self.layout.shape {
            return Ok(false);
        }
        self.layout = Layout::new(&m.shape, &m.chunkshape, &m.blockshape)?;
        Ok(true)
    }

    /// The text `b2nd_print_meta` prints, read back from the metalayer.
    pub fn meta_text(&self) -> Result<String> {
        let smeta = self
            .store
            .meta_get("b2nd")
            .or_else(|| self.store.meta_get("caterva"))
            .ok_or_else(|| crate::err!(MetalayerNotFound, "no b2nd metalayer"))?;
        let (m, tail) = NdMeta::from_stored_bytes(&smeta, self.store.typesize())?;
        let join = |v: Vec<String>| {
            if v.is_empty() {
                "0".to_string()
            } else {
                v.join(", ")
            }
        };
        let mut s = format!("b2nd metalayer parameters:\n Ndim:       {}", m.shape.len());
        s += &format!(
            "\n shape:      {}",
            join(m.shape.iter().map(|x| x.to_string()).collect())
        );
        s += &format!(
            "\n chunkshape: {}",
            join(m.chunkshape.iter().map(|x| x.to_string()).collect())
        );
        if tail != DtypeTail::Absent {
            s += &format!("\n dtype: {}", m.dtype);
        }
        s += &format!(
            "\n blockshape: {}\n",
            join(m.blockshape.iter().map(|x| x.to_string()).collect())
        );
        Ok(s)
    }

    /// Prints [`NdArray::meta_text`] to stdout (`b2nd_print_meta`).
    pub fn print_meta(&self) -> Result<()> {
        print!("{}", self.meta_text()?);
        Ok(())
    }

    /// The array's geometry: shapes, padded shapes and item counts.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }
    /// Items per dimension of the array.
    pub fn shape(&self) -> &[i64] {
        &self.layout.shape
    }
    /// Items per dimension of a chunk.
    pub fn chunkshape(&self) -> &[i32] {
        &self.layout.chunkshape
    }
    /// Items per dimension of a block.
    pub fn blockshape(&self) -> &[i32] {
        &self.layout.blockshape
    }
    /// Items in the array (the product of the shape).
    pub fn nitems(&self) -> i64 {
        self.layout.nitems
    }
    /// Item size in bytes.
    pub fn typesize(&self) -> i32 {
        self.store.typesize()
    }
    /// The data type description (NumPy `descr` string when
    /// [`dtype_format`](Self::dtype_format) is 0).
    pub fn dtype(&self) -> &str {
        &self.dtype
    }
    /// Interpretation of [`dtype`](Self::dtype); 0 means NumPy format.
    pub fn dtype_format(&self) -> i8 {
        self.dtype_format
    }
    /// Chunks in the underlying super-chunk.
    pub fn nchunks(&self) -> i64 {
        self.store.nchunks()
    }
    /// Names of the fixed-size metalayers, "b2nd" included.
    pub fn metalayer_names(&self) -> Vec<String> {
        self.store.meta_names()
    }
    /// The content of fixed-size metalayer `name`, if there is one.
    pub fn metalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.store.meta_get(name)
    }
    /// Names of the variable-length metalayers, in order.
    pub fn vlmetalayer_names(&self) -> Vec<String> {
        self.store.vlmeta_names()
    }
    /// The (decompressed) content of variable-length metalayer `name`, if
    /// there is one that decodes.
    pub fn vlmetalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.store.vlmeta_get(name)
    }
    /// Adds variable-length metalayer `name` (compressed with the array's
    /// parameters when it has a super-chunk); fails when the name is taken
    /// and, with a super-chunk, when it is invalid, when there are too
    /// many, or when writing the frame fails.
    pub fn add_vlmetalayer(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.store.vlmeta_add(name, content)
    }

    /// The creation context that reproduces this array's geometry and dtype
    /// in memory (used for slices, views and copies).
    pub fn like_context(&self) -> Context {
        let storage = match self.store.cparams() {
            Some(cp) => ArrayStorage::Schunk(crate::schunk::Storage::in_memory(cp)),
            None if self.store.has_schunk() => ArrayStorage::default(),
            None => ArrayStorage::Decoded,
        };
        Context {
            storage,
            typesize: self.typesize(),
            shape: self.layout.shape.clone(),
            chunkshape: self.layout.chunkshape.clone(),
            blockshape: self.layout.blockshape.clone(),
            dtype: self.dtype.clone(),
            dtype_format: self.dtype_format,
            metalayers: Vec::new(),
        }
    }

    /// Bytes of the array's items (`nitems * typesize`).
    pub fn nbytes(&self) -> i64 {
        self.layout.nitems * self.typesize() as i64
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub(crate) fn ctx(ts: i32, shape: &[i64], cs: &[i32], bs: &[i32]) -> Context {
        Context::new(
            ArrayStorage::Decoded,
            ts,
            shape,
            cs,
            bs,
            None,
            0,
            Vec::new(),
        )
        .unwrap()
    }

    /// A 7-entry "b2nd" metalayer record.
    pub(crate) fn b2nd_bytes(shape: &[i64], cs: &[i32], bs: &[i32], dtype: &str) -> Vec<u8> {
        NdMeta::new(shape.to_vec(), cs.to_vec(), bs.to_vec(), dtype, 0)
            .to_b2nd_bytes()
            .unwrap()
    }

    /// A deterministic, item-distinct test pattern.
    pub(crate) fn pattern(nbytes: usize) -> Vec<u8> {
        (0..nbytes).map(|i| (i * 7 + i / 251) as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    #[test]
    fn shape_changes_rewrite_a_caterva_layer_too() {
        // An array made through the Caterva API carries both layers; a
        // resize through any API must leave them describing the same shape.
        let mut c = ctx(2, &[6, 5], &[4, 3], &[2, 3]);
        let cat = NdMeta::new(vec![6, 5], vec![4, 3], vec![2, 3], "", 0)
            .to_caterva_bytes()
            .unwrap();
        c.metalayers.push(("caterva".into(), cat.clone()));
        let mut a = NdArray::zeros(&c).unwrap();
        a.resize(&[9, 2], None).unwrap();
        let stored = a.metalayer("caterva").unwrap();
        assert_eq!(stored.len(), cat.len());
        let m = NdMeta::from_caterva_bytes(&stored, 2).unwrap();
        assert_eq!(
            (m.shape, m.chunkshape, m.blockshape),
            (vec![9, 2], vec![4, 3], vec![2, 3])
        );
        let (b, _) = NdMeta::from_stored_bytes(&a.metalayer("b2nd").unwrap(), 2).unwrap();
        assert_eq!(b.shape, vec![9, 2]);
    }

    #[test]
    fn creation_writes_the_b2nd_metalayer_and_special_chunks() {
        let mut c = ctx(4, &[10, 7], &[4, 3], &[2, 3]);
        c.metalayers.push(("user".into(), vec![1, 2, 3]));
        let a = NdArray::full(&c, &[1, 0, 0, 0]).unwrap();
        assert_eq!(a.nchunks(), 9);
        assert_eq!(
            a.metalayer_names(),
            vec!["b2nd".to_string(), "user".to_string()]
        );
        let (m, tail) = NdMeta::from_stored_bytes(&a.metalayer("b2nd").unwrap(), 4).unwrap();
        assert_eq!(
            (m.shape, m.chunkshape, m.blockshape),
            (vec![10, 7], vec![4, 3], vec![2, 3])
        );
        assert_eq!(
            (tail, m.dtype_format, m.dtype.as_str()),
            (DtypeTail::FormatAndStr, 0, "|S4")
        );
        let mut out = vec![0u8; 280];
        a.to_cbuffer(&mut out).unwrap();
        assert!(out.chunks_exact(4).all(|c| c == [1, 0, 0, 0]));
        assert_eq!(
            NdArray::nans(&ctx(2, &[3], &[2], &[1])).unwrap_err().code(),
            -3
        );
        assert_eq!(NdArray::full(&c, &[1]).unwrap_err().code(), -12);
    }

    #[test]
    fn arrays_are_send_and_sync_and_take_wide_items() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<NdArray>();
        // Items wider than a chunk header's typesize byte: decoded storage.
        let c = ctx(300, &[5], &[2], &[1]);
        let data = testutil::pattern(1500);
        let a = NdArray::from_cbuffer(&c, &data).unwrap();
        let mut out = vec![0u8; 600];
        a.get_slice_cbuffer(&[3], &[5], &mut out, &[2]).unwrap();
        assert_eq!(out, data[900..]);
    }

    #[test]
    fn bad_contexts_are_rejected() {
        let mk = |ts, s: &[i64], cs: &[i32], bs: &[i32]| {
            Context::new(ArrayStorage::Decoded, ts, s, cs, bs, None, 0, Vec::new())
                .map(|_| ())
                .unwrap_err()
                .code()
        };
        // The reference accepts a blockshape larger than the chunkshape.
        assert!(Context::new(ArrayStorage::Decoded, 4, &[10], &[4], &[5], None, 0, vec![]).is_ok());
        assert!(Context::new(
            ArrayStorage::Decoded,
            4,
            &[1],
            &[1],
            &[1],
            Some(""),
            0,
            vec![]
        )
        .is_ok());
        assert_eq!(mk(0, &[10], &[4], &[2]), -12);
        assert_eq!(mk(4, &[10], &[0], &[0]), -12);
        assert_eq!(mk(4, &[-1], &[4], &[2]), -12);
        assert_eq!(mk(4, &[1; 17], &[1; 17], &[1; 17]), -12);
        assert_eq!(mk(4, &[1 << 30], &[1 << 29], &[1 << 10]), -35);
    }

    #[test]
    fn blocks_larger_than_chunks_and_empty_dtypes_work_as_in_the_reference() {
        // Reference 3.3.5, shape 10, chunkshape 4, blockshape 5: 3 chunks
        // padded to 5 items (extchunkshape 5), one block each.
        for storage in [ArrayStorage::default(), ArrayStorage::Decoded] {
            let c = Context::new(storage, 4, &[10], &[4], &[5], Some(""), 0, Vec::new()).unwrap();
            let data = testutil::pattern(40);
            let a = NdArray::from_cbuffer(&c, &data).unwrap();
            let l = a.layout();
            assert_eq!((l.extchunkshape[0], l.nchunks(), l.nblocks()), (5, 3, 1));
            assert_eq!(a.dtype(), "");
            assert_eq!(a.to_vec().unwrap(), data);
            let mut out = [0u8; 12];
            a.get_slice_cbuffer(&[3], &[6], &mut out, &[3]).unwrap();
            assert_eq!(out, data[12..24]);
            let (m, _) = NdMeta::from_stored_bytes(&a.metalayer("b2nd").unwrap(), 4).unwrap();
            assert_eq!((m.blockshape, m.dtype), (vec![5], String::new()));
        }
    }

    #[test]
    fn from_store_reads_b2nd_six_entry_and_caterva_metalayers() {
        let seven = b2nd_bytes(&[3, 2], &[2, 2], &[1, 2], "<u2");
        let mut six = seven[..seven.len() - 9].to_vec();
        six[0] = 0x96;
        for (name, meta, dtype) in [
            ("b2nd", &seven, "<u2"),
            ("b2nd", &six, "|S2"),
            ("caterva", &six, "|S2"),
        ] {
            let mut s = store::MemStore::new(2, 8, 4).unwrap();
            s.meta_add(name, meta).unwrap();
            s.append_fill(2, &Fill::Value(vec![7, 0])).unwrap();
            let a = NdArray::from_store(Box::new(s)).unwrap();
            assert_eq!((a.shape(), a.dtype()), (&[3i64, 2][..], dtype));
            assert_eq!(a.to_vec().unwrap(), [7, 0].repeat(6));
        }
        // Geometry that disagrees with the chunks, no metalayer, corrupt bytes.
        let mut s = store::MemStore::new(2, 8, 4).unwrap();
        s.meta_add("b2nd", &seven).unwrap();
        s.append_fill(1, &Fill::Zero).unwrap();
        assert_eq!(NdArray::from_store(Box::new(s)).unwrap_err().code(), -12);
        let s = store::MemStore::new(2, 8, 4).unwrap();
        assert_eq!(NdArray::from_store(Box::new(s)).unwrap_err().code(), -34);
        let mut s = store::MemStore::new(2, 8, 4).unwrap();
        s.meta_add("b2nd", &seven[..20]).unwrap();
        assert_eq!(NdArray::from_store(Box::new(s)).unwrap_err().code(), -1);
    }

    #[test]
    fn print_meta_text_and_refresh() {
        let mut a = NdArray::zeros(&ctx(1, &[5, 6], &[2, 3], &[1, 3])).unwrap();
        assert_eq!(
            a.meta_text().unwrap(),
            "b2nd metalayer parameters:\n Ndim:       2\n shape:      5, 6\n chunkshape: 2, 3\n dtype: |S1\n blockshape: 1, 3\n"
        );
        assert!(!a.reload_geometry().unwrap());
        let m = b2nd_bytes(&[3, 6], &[2, 3], &[1, 3], "|S1");
        a.store.meta_update("b2nd", &m).unwrap();
        // In memory nothing else can change the array: refresh is a no-op.
        assert!(!a.refresh().unwrap());
        assert!(a.reload_geometry().unwrap());
        assert_eq!(a.shape(), &[3, 6]);
        let m = b2nd_bytes(&[3, 6], &[3, 3], &[1, 3], "|S1");
        a.store.meta_update("b2nd", &m).unwrap();
        assert_eq!(a.reload_geometry().unwrap_err().code(), -3);
    }
}
