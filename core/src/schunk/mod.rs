//! Super-chunks: ordered sequences of Blosc2 chunks sharing compression
//! parameters, with fixed-size metalayers and variable-length metalayers.
//!
//! A super-chunk lives in one of four places (see [`Storage`]):
//! - memory, as a list of chunks (`contiguous: false`, no `urlpath`);
//! - memory, as a contiguous frame buffer (`contiguous: true`, no `urlpath`);
//! - a contiguous frame file (`contiguous: true`, `urlpath`), possibly
//!   embedded at an offset inside a larger file;
//! - a sparse frame directory (`contiguous: false`, `urlpath`).
//!
//! Frames on disk are never read whole: opening reads the header, the
//! trailer and the offsets index; chunks are read when asked for, and
//! partial reads fetch only the blocks they need (see `lazy`: lazy chunks in
//! the reference's layout). Every mutating call leaves a valid frame behind.
//!
//! On-disk frames can lock a sidecar file around each operation (opt-in:
//! [`SChunk::set_locking`] or `BLOSC_LOCKING`; see `frame::lock`): mutations
//! take it exclusively, reads shared, and a handle that finds the frame
//! written by another one re-reads it first. Without locking,
//! [`SChunk::sync_if_stale`] polls the frame length in the header (and
//! whether another file replaced it), as the reference does before each
//! access; the C API calls it before every call, a Rust caller that shares
//! a file with a writer calls it when it wants to catch up.
//!
//! Decisions worth knowing:
//! - zero, NaN and uninitialized chunks become special offsets (no bytes)
//!   only while the chunk size is fixed, because a reader sizes them from the
//!   chunk size; when a frame turns to variable-size chunks its special
//!   offsets are first stored as real (32-byte) special chunks;
//! - updating or deleting a chunk of a contiguous frame compacts the data
//!   section (the tail moves, once per write: see `frame::store::gaps`), as
//!   the reference 3.3 does for updates but not for deletions, so `cbytes`
//!   is always the size of the stored chunks;
//! - fixed-size metalayers can only be added to a frame before its first
//!   chunk and never grow; vlmetalayers are compressed with the given (or
//!   default) parameters and a frame holds at most 16 of them.

mod batch;
mod compact;
mod engine;
mod lazy;
mod meta;
pub mod packed;
mod read;
mod serial;
mod shared;
mod sparse;
mod write;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::frame::Metalayer;
pub use engine::{BlockSource, CParams, DParams, Special};
pub use shared::SharedSChunk;

use crate::frame::header::{FrameHeader, FrameType};
use crate::frame::lock::{self as frame_lock, FrameLock};
use crate::frame::{Frame, FrameChunk, IoRef, MemFile, Place, StdIo};
use crate::Result;
use engine::Engine;

/// Where and how a super-chunk is stored (the reference's `blosc2_storage`).
#[derive(Clone, Default)]
pub struct Storage {
    /// Contiguous frame (true) or chunk list / sparse directory (false).
    pub contiguous: bool,
    /// File (contiguous) or directory (sparse); `None` keeps it in memory.
    pub urlpath: Option<PathBuf>,
    /// Parameters chunks are compressed with.
    pub cparams: CParams,
    /// Parameters chunks are decompressed with.
    pub dparams: DParams,
    /// I/O backend for files; `None` uses the local file system.
    pub io: Option<IoRef>,
    /// Advisory file locking for a new on-disk frame (see
    /// [`SChunk::set_locking`]; the reference's `blosc2_stdio_params.locking`).
    pub locking: bool,
}

impl Storage {
    /// An in-memory chunk list with the given parameters.
    pub fn in_memory(cparams: CParams) -> Storage {
        Storage {
            cparams,
            ..Storage::default()
        }
    }

    fn io(&self) -> IoRef {
        self.io.clone().unwrap_or_else(StdIo::shared)
    }

    /// The defaults an existing frame is opened with: the process's thread
    /// count (`blosc2_set_nthreads`, `BLOSC_NTHREADS`), as the reference's
    /// `frame_to_schunk` takes it, not the one the frame's header records.
    fn for_opening() -> Storage {
        let nthreads = crate::global::settings().nthreads.max(1);
        let mut s = Storage::default();
        s.cparams.nthreads = nthreads;
        s.dparams.nthreads = nthreads;
        s
    }
}

/// The most vlmetalayers a super-chunk holds (frames hold at most 16).
const MAX_VLMETALAYERS: usize = 8 * 1024;

enum Backend {
    Chunks(Vec<Arc<[u8]>>),
    Frame(Frame),
}

/// A super-chunk.
pub struct SChunk {
    storage: Storage,
    /// Bytes per chunk; -1 before the first chunk, 0 for variable sizes.
    chunksize: i32,
    nbytes: i64,
    /// Stored bytes of regular chunks (chunk list: all chunks).
    cbytes: i64,
    blocksize: i32,
    vl_blocks: bool,
    metalayers: Vec<Metalayer>,
    /// vlmetalayer contents, compressed as stored in the frame trailer.
    vlmetalayers: Vec<Metalayer>,
    backend: Backend,
    engine: Engine,
    /// Advisory frame lock, when locking is on (see [`SChunk::set_locking`]).
    lock: Option<FrameLock>,
    /// Names the parameters `engine` was built with (see [`SChunk::codec_id`]).
    codec_id: u64,
    /// Open edit scopes (see [`SChunk::edits`]): while one is, flushes are
    /// put off and one publish ends the outermost.
    edit_depth: u32,
    /// A flush was put off in the open scope: the frame on disk lacks edits
    /// this handle holds.
    unpublished: bool,
    /// How many times this handle re-read its frame (see [`SChunk::rereads`]).
    rereads: u64,
}

impl std::fmt::Debug for SChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunk")
            .field("nchunks", &self.nchunks())
            .field("nbytes", &self.nbytes)
            .field("cbytes", &self.cbytes)
            .field("chunksize", &self.chunksize)
            .field("typesize", &self.typesize())
            .field("frame", &self.is_frame())
            .finish()
    }
}

/// `total + delta` for the size counters, refusing a sum past i64 or below
/// zero. Only a corrupt header gets there (sizes less than its chunks hold,
/// or near i64::MAX), and an edit that wrote such a sum back would leave a
/// frame no reader opens.
fn grow(total: i64, delta: i64) -> Result<i64> {
    total
        .checked_add(delta)
        .filter(|&t| t >= 0)
        .ok_or_else(|| {
            crate::err!(
                InvalidHeader,
                "size counter {total} cannot change by {delta}: the header's sizes disagree with its chunks"
            )
        })
}

/// A number no other codec parameters of any super-chunk in the process have
/// had (see [`SChunk::codec_id`]).
fn next_codec_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// How to build the chunk a special offset stands for.
struct SpecialSpec {
    /// Uncompressed size, or why it cannot be known.
    nbytes: Result<i64>,
    typesize: i32,
    blocksize: i32,
}

/// Chunk `n` of `backend`, borrowed when it is in memory.
fn fetch_chunk(backend: &Backend, n: usize, spec: SpecialSpec) -> Result<Cow<'_, [u8]>> {
    match backend {
        Backend::Chunks(c) => Ok(Cow::Borrowed(&c[n][..])),
        Backend::Frame(f) => match f.chunk(n)? {
            FrameChunk::Bytes(b) => Ok(b),
            FrameChunk::Special(s) => {
                let size = i32::try_from(spec.nbytes?)
                    .map_err(|_| crate::err!(FrameSpecial, "chunk {n} too large"))?;
                let c = crate::frame::codec::special_chunk(s, size, spec.typesize, spec.blocksize)?;
                Ok(Cow::Owned(c))
            }
        },
    }
}

/// Uncompressed bytes of chunk `n` when the last chunk may be short.
fn fixed_chunk_nbytes(chunksize: i32, nbytes: i64, n: usize, nchunks: usize) -> i64 {
    let cs = i64::from(chunksize);
    if n + 1 == nchunks && nbytes % cs != 0 {
        nbytes % cs
    } else {
        cs
    }
}

impl SChunk {
    fn empty(storage: Storage, backend: Backend) -> Result<SChunk> {
        let engine = Engine::new(storage.cparams.clone(), storage.dparams.clone())?;
        Ok(SChunk {
            chunksize: -1,
            nbytes: 0,
            cbytes: 0,
            blocksize: storage.cparams.blocksize,
            vl_blocks: false,
            metalayers: Vec::new(),
            vlmetalayers: Vec::new(),
            backend,
            engine,
            storage,
            lock: None,
            codec_id: next_codec_id(),
            edit_depth: 0,
            unpublished: false,
            rereads: 0,
        })
    }

    /// Creates an empty super-chunk (an existing file or directory at
    /// `urlpath` is replaced).
    pub fn new(storage: Storage) -> Result<SChunk> {
        if storage.cparams.typesize <= 0 {
            crate::bail!(
                InvalidParam,
                "typesize {} must be positive",
                storage.cparams.typesize
            );
        }
        let backend = match (&storage.urlpath, storage.contiguous) {
            (None, false) => Backend::Chunks(Vec::new()),
            (None, true) => Backend::Frame(Frame::create(
                Place::Memory(MemFile::default()),
                &FrameHeader::new(FrameType::Contiguous),
                &[],
            )?),
            (Some(p), true) => {
                let place = Place::File {
                    io: storage.io(),
                    path: p.clone(),
                    offset: 0,
                };
                Backend::Frame(Frame::create(
                    place,
                    &FrameHeader::new(FrameType::Contiguous),
                    &[],
                )?)
            }
            (Some(p), false) => {
                if p.is_file() {
                    std::fs::remove_file(p)
                        .map_err(|e| crate::err!(FileRemove, "{}: {e}", p.display()))?;
                } else if p.is_dir() {
                    std::fs::remove_dir_all(p)
                        .map_err(|e| crate::err!(FileRemove, "{}: {e}", p.display()))?;
                }
                let place = Place::Sparse {
                    io: storage.io(),
                    dir: p.clone(),
                };
                Backend::Frame(Frame::create(
                    place,
                    &FrameHeader::new(FrameType::Sparse),
                    &[],
                )?)
            }
        };
        let locking = storage.locking;
        let mut s = SChunk::empty(storage, backend)?;
        s.lock_from_env();
        if locking {
            s.set_locking(true)?;
        }
        s.locked(true, |s| s.flush())?;
        Ok(s)
    }

    /// Opens a frame file or a sparse frame directory.
    pub fn open(path: impl AsRef<Path>) -> Result<SChunk> {
        SChunk::open_with_io(path, 0, None)
    }

    /// Opens a contiguous frame that starts `offset` bytes into a file.
    pub fn open_offset(path: impl AsRef<Path>, offset: u64) -> Result<SChunk> {
        SChunk::open_with_io(path, offset, None)
    }

    /// Opens a frame through a user I/O backend.
    pub fn open_with_io(path: impl AsRef<Path>, offset: u64, io: Option<IoRef>) -> Result<SChunk> {
        SChunk::open_with(path, offset, io, false)
    }

    /// Like [`SChunk::open_with_io`], with file locking on when `locking`
    /// (or `BLOSC_LOCKING`, for the file-system backend) asks for it: the
    /// frame is then read under the shared lock, so a writer holding the
    /// lock cannot be seen half-way.
    pub fn open_with(
        path: impl AsRef<Path>,
        offset: u64,
        io: Option<IoRef>,
        locking: bool,
    ) -> Result<SChunk> {
        let path = path.as_ref();
        let ioref = io.clone().unwrap_or_else(StdIo::shared);
        let sparse = path.is_dir();
        if sparse && offset != 0 {
            crate::bail!(InvalidParam, "sparse frames cannot be opened at an offset");
        }
        if !sparse && io.is_none() && !path.exists() {
            crate::bail!(FileOpen, "{}: no such file or directory", path.display());
        }
        let place = if sparse {
            Place::Sparse {
                io: ioref,
                dir: path.to_owned(),
            }
        } else {
            Place::File {
                io: ioref,
                path: path.to_owned(),
                offset,
            }
        };
        let storage = Storage {
            contiguous: !sparse,
            urlpath: Some(path.to_owned()),
            io,
            ..Storage::for_opening()
        };
        let env = storage.io.is_none() && frame_lock::requested_by_env();
        let mut lock = (locking || env).then(|| FrameLock::new(path, sparse, frame_lock::os_lock()));
        if let Some(l) = lock.as_mut() {
            l.lock(false)?;
        }
        let opened = SChunk::attach(place, storage);
        if let Some(l) = lock.as_mut() {
            let u = l.unlock();
            if opened.is_ok() {
                u?;
            }
        }
        let mut s = opened?;
        s.lock = lock;
        Ok(s)
    }

    /// A super-chunk read from a contiguous frame buffer. With `copy` the
    /// result is an in-memory chunk list, otherwise an in-memory frame that
    /// owns a copy of `bytes` (use [`SChunk::from_vec`] to avoid the copy).
    pub fn from_buffer(bytes: &[u8], copy: bool) -> Result<SChunk> {
        let mut s = SChunk::from_vec(bytes.to_vec())?;
        if copy {
            s.to_chunk_list()
        } else {
            Ok(s)
        }
    }

    /// An in-memory copy holding each chunk on its own (what the reference's
    /// `blosc2_schunk_from_buffer(.., copy = true)` gives): it costs one entry
    /// per chunk, so callers that can reject a frame from its metadata alone
    /// should do that first.
    pub fn to_chunk_list(&mut self) -> Result<SChunk> {
        self.copy(Storage {
            contiguous: false,
            urlpath: None,
            ..Storage::default()
        })
    }

    /// A super-chunk backed by (and owning) a contiguous frame buffer.
    pub fn from_vec(bytes: Vec<u8>) -> Result<SChunk> {
        let storage = Storage {
            contiguous: true,
            ..Storage::for_opening()
        };
        SChunk::attach(Place::Memory(MemFile { data: bytes }), storage)
    }

    /// Opens the frame at `place` with `storage`'s thread counts (see
    /// [`Storage::for_opening`]). The header records the writer's, which the
    /// reference does not take either. A file must not choose how many
    /// threads its reader starts: pools are kept per thread count for the
    /// life of the process, so a header's could start and keep thousands.
    fn attach(place: Place, mut storage: Storage) -> Result<SChunk> {
        let (frame, h, vlmeta) = Frame::open(place)?;
        storage.cparams = CParams {
            compcode: h.compcode,
            compcode_meta: h.compcode_meta,
            clevel: h.clevel,
            use_dict: h.use_dict,
            typesize: h.typesize,
            blocksize: h.blocksize,
            splitmode: i32::from(h.splitmode),
            filters: h.filters,
            filters_meta: h.filters_meta,
            ..storage.cparams
        };
        let mut vl_blocks = h.vl_blocks;
        if frame.nchunks() > 0 {
            if let Ok(info) = frame.chunk_info(0)? {
                vl_blocks = info.flags2 & 1 != 0;
            }
        }
        let engine = Engine::new(storage.cparams.clone(), storage.dparams.clone())?;
        let mut s = SChunk {
            chunksize: if frame.nchunks() == 0 && h.chunksize <= 0 {
                -1
            } else {
                h.chunksize
            },
            nbytes: h.nbytes,
            cbytes: h.cbytes,
            blocksize: h.blocksize,
            vl_blocks,
            metalayers: h.metalayers,
            vlmetalayers: vlmeta,
            backend: Backend::Frame(frame),
            engine,
            storage,
            lock: None,
            codec_id: next_codec_id(),
            edit_depth: 0,
            unpublished: false,
            rereads: 0,
        };
        s.bind_cell_geometry()?;
        Ok(s)
    }

    // ----- accessors -----

    /// Number of chunks.
    pub fn nchunks(&self) -> i64 {
        match &self.backend {
            Backend::Chunks(c) => c.len() as i64,
            Backend::Frame(f) => f.nchunks() as i64,
        }
    }
    /// Uncompressed bytes of all chunks (the reference's `nbytes`).
    pub fn nbytes(&self) -> i64 {
        self.nbytes
    }
    /// Compressed bytes held for the chunks (the reference's `cbytes`):
    /// chunks a frame keeps as special offsets count nothing, and a
    /// contiguous frame counts its data section once flushed.
    pub fn cbytes(&self) -> i64 {
        self.cbytes
    }
    /// Item size in bytes (of [`cparams`](Self::cparams)).
    pub fn typesize(&self) -> i32 {
        self.storage.cparams.typesize
    }
    /// Bytes per chunk: -1 before the first chunk, 0 for variable sizes.
    pub fn chunksize(&self) -> i32 {
        self.chunksize
    }
    /// Block size in bytes asked of the chunks (0: chosen per chunk), as
    /// the parameters or the frame header give it.
    pub fn blocksize(&self) -> i32 {
        self.blocksize
    }
    /// The super-chunk's own compression parameters (what its frame header
    /// records; see [`SChunk::record_cparams`]).
    pub fn cparams(&self) -> &CParams {
        &self.storage.cparams
    }
    /// The super-chunk's decompression parameters.
    pub fn dparams(&self) -> &DParams {
        &self.storage.dparams
    }
    /// Keeps the block shape of the cell filters (NDCELL, NDMEAN) in step
    /// with this super-chunk's "b2nd" metalayer, which is where the
    /// reference's filters read it every time they run. Called wherever the
    /// metalayers are set (open, add, update), so chunks compress and decode
    /// the same through the b2nd layer and through plain super-chunk calls.
    /// This is the one place the super-chunk reads the array layer's record;
    /// without a parsable "b2nd" layer the shape is `None` and the cell
    /// filters report that they need one.
    fn bind_cell_geometry(&mut self) -> Result<()> {
        let shape: Option<std::sync::Arc<[i64]>> = self
            .meta_exists("b2nd")
            .and_then(|i| crate::ndarray::NdMeta::from_b2nd_bytes(&self.metalayers[i].content).ok())
            .map(|m| m.blockshape.iter().map(|&b| i64::from(b)).collect());
        if shape == self.storage.cparams.block_shape
            && shape == self.storage.dparams.block_shape
            && shape == self.engine.cparams().block_shape
            && shape == self.engine.dparams().block_shape
        {
            return Ok(());
        }
        let mut cparams = self.engine.cparams().clone();
        let mut dparams = self.engine.dparams().clone();
        cparams.block_shape = shape.clone();
        dparams.block_shape = shape.clone();
        self.engine = Engine::new(cparams, dparams)?;
        self.codec_id = next_codec_id();
        self.storage.cparams.block_shape = shape.clone();
        self.storage.dparams.block_shape = shape;
        Ok(())
    }

    /// The parameters chunks are compressed with: [`SChunk::cparams`] unless
    /// [`SChunk::set_codec_params`] gave others.
    pub fn codec_cparams(&self) -> &CParams {
        self.engine.cparams()
    }

    /// The parameters chunks are decompressed with (see [`SChunk::codec_cparams`]).
    pub fn codec_dparams(&self) -> &DParams {
        self.engine.dparams()
    }

    /// Changes whenever the codec parameters do, and differs between super-chunks:
    /// whoever keeps contexts built from them (an array's store) can tell
    /// when to rebuild them.
    pub fn codec_id(&self) -> u64 {
        self.codec_id
    }

    /// Compresses and decompresses chunks from now on with these parameters,
    /// leaving those the super-chunk records (its frame header's,
    /// [`SChunk::cparams`]) as they are. This is what the reference does with
    /// a C caller's own `schunk->cctx`/`dctx`: it compresses with the context
    /// and records the super-chunk's fields. Without a block shape of their
    /// own, the parameters get the super-chunk's (its "b2nd" metalayer's).
    pub fn set_codec_params(&mut self, mut cparams: CParams, mut dparams: DParams) -> Result<()> {
        if cparams.block_shape.is_none() {
            cparams.block_shape = self.storage.cparams.block_shape.clone();
        }
        if dparams.block_shape.is_none() {
            dparams.block_shape = self.storage.dparams.block_shape.clone();
        }
        self.engine = Engine::new(cparams, dparams)?;
        self.codec_id = next_codec_id();
        Ok(())
    }

    /// Records `cp`'s codec, level, filters, split mode, dictionary use,
    /// typesize and block size as the super-chunk's own (what its frame header
    /// says from the next write on, and [`SChunk::cparams`]), leaving how
    /// chunks are compressed alone (see [`SChunk::set_codec_params`]). The C
    /// API's callers write these as `schunk->compcode` and its neighbours.
    pub fn record_cparams(&mut self, cp: &CParams) -> Result<()> {
        if cp.typesize <= 0 {
            crate::bail!(InvalidParam, "typesize {} must be positive", cp.typesize);
        }
        if cp.blocksize < 0 {
            crate::bail!(InvalidParam, "negative blocksize {}", cp.blocksize);
        }
        if cp.clevel > 9 {
            crate::bail!(CodecParam, "clevel {} not in 0..=9", cp.clevel);
        }
        let own = &mut self.storage.cparams;
        own.compcode = cp.compcode;
        own.compcode_meta = cp.compcode_meta;
        own.clevel = cp.clevel;
        own.splitmode = cp.splitmode;
        own.use_dict = cp.use_dict;
        own.typesize = cp.typesize;
        own.blocksize = cp.blocksize;
        own.filters = cp.filters;
        own.filters_meta = cp.filters_meta;
        self.blocksize = cp.blocksize;
        Ok(())
    }

    /// Declares the uncompressed size of every chunk but the last, before the
    /// first chunk is stored (the reference's `schunk->chunksize`, which its C
    /// callers set right after creating a super-chunk): -1 leaves it to the
    /// first chunk, 0 allows chunks of any size. Once chunks are stored the
    /// size can only turn to 0; anything else would make the frame header
    /// disagree with its chunks.
    pub fn declare_chunksize(&mut self, chunksize: i32) -> Result<()> {
        if chunksize == self.chunksize {
            return Ok(());
        }
        if chunksize < -1 {
            crate::bail!(
                InvalidParam,
                "chunksize {chunksize} is neither a size, 0 nor -1"
            );
        }
        if self.nchunks() > 0 && chunksize != 0 {
            crate::bail!(
                InvalidParam,
                "chunksize cannot change from {} to {chunksize} once chunks are stored",
                self.chunksize
            );
        }
        self.locked(true, |s| {
            s.set_chunksize(chunksize)?;
            s.flush()
        })
    }

    /// The chunks of an in-memory chunk list, in order (`None` for frames):
    /// their bytes stay where they are until the chunk is replaced or removed.
    pub fn chunk_list(&self) -> Option<&[Arc<[u8]>]> {
        match &self.backend {
            Backend::Chunks(c) => Some(c),
            Backend::Frame(_) => None,
        }
    }
    /// Replaces the caller's opaque values that user codecs, filters and
    /// hooks receive with this super-chunk's chunks (`CParams::user_data`,
    /// `DParams::user_data`). The C layer puts its parameter structs there,
    /// naming the C super-chunk object, which the reference hands its
    /// plugins as `cparams->schunk`/`dparams->schunk`.
    pub fn set_user_data(
        &mut self,
        cparams: Option<crate::chunk::UserData>,
        dparams: Option<crate::chunk::UserData>,
    ) {
        self.engine.set_user_data(cparams.clone(), dparams.clone());
        self.storage.cparams.user_data = cparams;
        self.storage.dparams.user_data = dparams;
    }

    /// Where and how the super-chunk is stored, with its current parameters.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
    /// Whether the chunks use variable-length blocks.
    pub fn vl_blocks(&self) -> bool {
        self.vl_blocks
    }
    /// Whether this super-chunk is backed by a frame (memory, file or directory).
    pub fn is_frame(&self) -> bool {
        matches!(self.backend, Backend::Frame(_))
    }

    /// Length of the frame this super-chunk is (or would serialize to).
    pub fn frame_len(&mut self) -> Result<u64> {
        match &self.backend {
            Backend::Frame(f) if !f.is_sparse() => Ok(f.frame_len()),
            _ => Ok(self.to_buffer()?.len() as u64),
        }
    }

    /// Re-reads header, trailer and offsets of a frame changed by another
    /// handle (under the shared lock when locking is on).
    pub fn refresh(&mut self) -> Result<()> {
        let Some(lock) = self.lock.as_mut() else {
            return self.reload();
        };
        lock.lock(false)?;
        let r = self.reload();
        self.unlock_once(r)
    }

    /// Re-reads what another handle may have changed (sizes, chunk count and
    /// offsets, metalayers, vlmetalayers) from the frame's current bytes.
    /// This handle's own settings stay: its parameters, codec state and
    /// lock, as the reference's refresh leaves them.
    fn reload(&mut self) -> Result<()> {
        let place = match &self.backend {
            Backend::Frame(f) => match f.place() {
                Place::File { io, path, offset } => Place::File {
                    io: io.clone(),
                    path: path.clone(),
                    offset: *offset,
                },
                Place::Sparse { io, dir } => Place::Sparse {
                    io: io.clone(),
                    dir: dir.clone(),
                },
                Place::Memory(_) => return Ok(()),
            },
            Backend::Chunks(_) => return Ok(()),
        };
        let mut fresh = SChunk::attach(place, self.storage.clone())?;
        self.chunksize = fresh.chunksize;
        self.nbytes = fresh.nbytes;
        self.cbytes = fresh.cbytes;
        self.blocksize = fresh.blocksize;
        self.vl_blocks = fresh.vl_blocks;
        self.metalayers = std::mem::take(&mut fresh.metalayers);
        self.vlmetalayers = std::mem::take(&mut fresh.vlmetalayers);
        // What is left of `fresh` (an empty chunk list) is dropped.
        self.backend = std::mem::replace(&mut fresh.backend, Backend::Chunks(Vec::new()));
        self.rereads += 1;
        self.bind_cell_geometry()
    }

    /// How many times this handle re-read its frame for changes made by
    /// others (refreshes, stale syncs, taking the lock after another
    /// writer). A layer that keeps its own view of the metadata (the array
    /// geometry) compares it with the count it last followed: the re-read
    /// may have happened in a call made on the super-chunk directly.
    pub fn rereads(&self) -> u64 {
        self.rereads
    }

    /// Whether the frame on disk differs from this handle's view of it, by
    /// the one test that needs no lock: its header records another length,
    /// or another file now lives at the path. A rewrite that keeps the
    /// length goes unseen this way (the generation counter of locking sees
    /// it). An unreadable header (a writer mid-write) is not a change.
    /// Whether another handle or process changed the frame since this one
    /// last looked, so that [`SChunk::sync_if_stale`] would re-read it
    /// (with locking off; with locking on only the lock tells).
    pub fn stale(&self) -> bool {
        self.is_frame() && self.lock.is_none() && self.changed_on_disk()
    }

    fn changed_on_disk(&self) -> bool {
        if self.edit_depth > 0 {
            // Our own edits are not on disk yet.
            return false;
        }
        let Backend::Frame(f) = &self.backend else {
            return false;
        };
        match f.poll_len() {
            Some((len, replaced)) => replaced || len != f.frame_len(),
            None => false,
        }
    }

    // ----- opt-in file locking -----

    /// Turns advisory file locking on or off for this handle (the
    /// reference's `blosc2_stdio_params.locking`). Only on-disk frames lock;
    /// elsewhere this is a no-op. Turning it off while the lock is held is
    /// an error, and so is turning it on before the OS lock primitive is
    /// installed (see `frame::lock`).
    pub fn set_locking(&mut self, on: bool) -> Result<()> {
        if !on {
            if self.lock.as_ref().is_some_and(|l| l.depth() > 0) {
                crate::bail!(Lock, "cannot turn locking off while the lock is held");
            }
            self.lock = None;
            return Ok(());
        }
        if self.lock.is_some() {
            return Ok(());
        }
        let sparse = match &self.backend {
            Backend::Frame(f) => match f.place() {
                Place::File { .. } => false,
                Place::Sparse { .. } => true,
                Place::Memory(_) => return Ok(()),
            },
            Backend::Chunks(_) => return Ok(()),
        };
        let os = frame_lock::os_lock();
        if let Some(p) = &self.storage.urlpath {
            self.lock = Some(FrameLock::new(p, sparse, os));
        }
        Ok(())
    }

    /// Whether this handle locks its frame.
    pub fn locking(&self) -> bool {
        self.lock.is_some()
    }

    /// Locking asked for by `BLOSC_LOCKING`, for the file-system backend only.
    fn lock_from_env(&mut self) {
        if self.storage.io.is_none() && frame_lock::requested_by_env() {
            // Without the OS primitive locking stays off, as on platforms
            // the reference cannot lock either.
            let _ = self.set_locking(true);
        }
    }

    /// Re-reads the frame when another handle or process wrote it since
    /// this one last looked; returns whether it did (the reference's
    /// `frame_check_stale`, run before each access). With locking on, under
    /// the shared lock, and the generation counter catches every write;
    /// without, a changed frame length or a replaced file does, and a frame
    /// caught mid-rewrite (which only an unlocked writer leaves) keeps the
    /// view this handle had, to be polled again on the next access.
    pub fn sync_if_stale(&mut self) -> Result<bool> {
        if !self.is_frame() || self.edit_depth > 0 {
            return Ok(false);
        }
        let Some(lock) = self.lock.as_mut() else {
            if !self.changed_on_disk() {
                return Ok(false);
            }
            return Ok(self.reload().is_ok());
        };
        let r = match lock.lock(false) {
            Ok(counted) => {
                if counted || self.changed_on_disk() {
                    self.reload().map(|_| true)
                } else {
                    Ok(false)
                }
            }
            Err(e) => return Err(e),
        };
        self.unlock_once(r)
    }

    /// Takes the exclusive lock and keeps it until [`SChunk::unlock`]; the
    /// operations in between nest in it, so the sequence is atomic against
    /// other locking handles. Re-entrant; a no-op when locking is off.
    /// Returns whether the frame was re-read because another handle wrote
    /// it since this one last held the lock.
    pub fn lock(&mut self) -> Result<bool> {
        let Some(lock) = self.lock.as_mut() else {
            return Ok(false);
        };
        let counted = lock.lock(true)?;
        if counted || (lock.depth() == 1 && self.changed_on_disk()) {
            if let Err(e) = self.reload() {
                return self.unlock_once(Err(e));
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// Releases one level of [`SChunk::lock`].
    pub fn unlock(&mut self) -> Result<()> {
        match self.lock.as_mut() {
            Some(l) => l.unlock(),
            None => Ok(()),
        }
    }

    /// Releases one lock level after an operation, keeping its error first.
    fn unlock_once<T>(&mut self, r: Result<T>) -> Result<T> {
        let u = self.unlock();
        let v = r?;
        u?;
        Ok(v)
    }

    /// Runs the reads of `f` as one access the way the reference runs each
    /// read: first following what other handles wrote (see
    /// [`SChunk::sync_if_stale`]), and with locking on under the shared
    /// lock, so that no locking writer is half-way through meanwhile. The
    /// reads through `&self` alone see this handle's view as it is.
    pub fn read_locked<T>(&mut self, f: impl FnOnce(&SChunk) -> Result<T>) -> Result<T> {
        if self.lock.is_none() {
            self.sync_if_stale()?;
            return f(self);
        }
        self.locked(false, |s| f(s))
    }

    /// Runs `f` under the frame lock (exclusive for mutations), first
    /// re-reading the frame if another handle wrote it since this one last
    /// held the lock. Without locking, just runs `f`.
    pub(crate) fn locked<T>(
        &mut self,
        exclusive: bool,
        f: impl FnOnce(&mut SChunk) -> Result<T>,
    ) -> Result<T> {
        let Some(lock) = self.lock.as_mut() else {
            return f(self);
        };
        let counted = lock.lock(exclusive)?;
        // A writer that does not lock is caught by the length, as unlocked.
        if counted || (lock.depth() == 1 && self.changed_on_disk()) {
            if let Err(e) = self.reload() {
                return self.unlock_once(Err(e));
            }
        }
        let r = f(self);
        self.unlock_once(r)
    }

    // ----- persistence of the metadata -----

    fn frame_header(&self) -> FrameHeader {
        let cp = &self.storage.cparams;
        let mut h = FrameHeader::new(FrameType::Contiguous);
        h.compcode = cp.compcode;
        h.compcode_meta = cp.compcode_meta;
        h.clevel = cp.clevel;
        h.splitmode = u8::try_from(cp.splitmode).unwrap_or(4);
        h.use_dict = cp.use_dict;
        h.typesize = cp.typesize;
        h.blocksize = self.blocksize;
        h.chunksize = if self.chunksize < 0 {
            0
        } else {
            self.chunksize
        };
        if self.nchunks() == 0 && self.chunksize < 0 {
            h.chunksize = -1;
        }
        h.nthreads_c = cp.nthreads;
        h.nthreads_d = self.storage.dparams.nthreads;
        h.filters = cp.filters;
        h.filters_meta = cp.filters_meta;
        h.vl_blocks = self.vl_blocks;
        h.nbytes = self.nbytes;
        h.cbytes = self.cbytes;
        h.metalayers = self.metalayers.clone();
        h
    }

    /// Writes header, offsets and trailer of a frame backend.
    fn flush(&mut self) -> Result<()> {
        if self.edit_depth > 0 {
            self.unpublished = true;
            return Ok(());
        }
        let h = self.frame_header();
        // A corrupt frame can open with sizes its chunks disagree with
        // (nbytes, but no chunks); a metadata edit must not write them back
        // in a header that then fails to open.
        self.check_frame_sizes(
            self.nchunks() as usize,
            self.nbytes,
            h.chunksize,
            crate::ErrorKind::InvalidHeader,
        )?;
        let flushed = match &mut self.backend {
            Backend::Frame(f) => f.flush(&h, &self.vlmetalayers).map(|()| {
                if !f.is_sparse() {
                    self.cbytes = f.data_len() as i64;
                }
            }),
            Backend::Chunks(_) => Ok(()),
        };
        if flushed.is_ok() {
            self.reclaim_if_worth();
        }
        flushed
    }

    /// [`SChunk::flush`] after a chunk edit. When it fails, the bytes on
    /// disk still hold the frame last written (see `frame::store::publish`):
    /// the handle goes back to it, so that the failed edit is absent here
    /// as it is there. (Metadata edits undo their own change instead.)
    pub(super) fn flush_edit(&mut self) -> Result<()> {
        let flushed = self.flush();
        if flushed.is_err() {
            let _ = self.reload();
        }
        flushed
    }
}

/// Reads through `&self` may run on many threads at once.
const _: () = {
    const fn shared_between_threads<T: Send + Sync>() {}
    shared_between_threads::<SChunk>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::header::Pos;

    /// A frame whose header records 64 threads for each direction (its
    /// writer's) opens, from memory and from a file, with the process's
    /// count (1 by default), as in the reference. Before, the header's were
    /// taken, and a hostile one started a pool of that many threads, kept
    /// for the life of the process (found by the ndarray_edit fuzz body,
    /// whose process grew pools of 39, 79 and 119 threads).
    #[test]
    fn an_opened_frame_runs_on_the_process_threads_not_the_headers() {
        let mut sc = SChunk::new(Storage {
            contiguous: true,
            cparams: CParams {
                typesize: 4,
                nthreads: 2,
                ..CParams::default()
            },
            ..Storage::default()
        })
        .unwrap();
        sc.append_buffer(&[7u8; 4000]).unwrap();
        let mut frame = sc.to_buffer().unwrap();
        assert_eq!(
            frame[Pos::NTHREADS_C..][..2],
            2i16.to_be_bytes(),
            "the writer's"
        );
        for pos in [Pos::NTHREADS_C, Pos::NTHREADS_D] {
            frame[pos..pos + 2].copy_from_slice(&64i16.to_be_bytes());
        }
        let path = std::env::temp_dir().join(format!("b2nd-open-threads-{}", std::process::id()));
        std::fs::write(&path, &frame).unwrap();
        // The process's count is 1 unless a test of the C API changes it
        // meanwhile; it is never the header's 64.
        for sc in [
            SChunk::from_vec(frame).unwrap(),
            SChunk::open(&path).unwrap(),
        ] {
            let got = (sc.cparams().nthreads, sc.dparams().nthreads);
            assert!(got.0 != 64 && got.1 != 64, "{got:?}: the header's");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
