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
//! partial reads fetch only the blocks they need. Every mutating call leaves
//! a valid frame behind.

mod engine;
mod lazy;
pub mod packed;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

pub use crate::frame::Metalayer;
pub use engine::{BlockSource, CParams, DParams, Special};

use crate::frame::codec::ChunkInfo;
use crate::frame::header::{FrameHeader, FrameType, MAX_METALAYERS};
use crate::frame::{Frame, FrameChunk, IoRef, MemFile, Place, SpecialOffset, StdIo};
use crate::Result;
use engine::Engine;

/// Where and how a super-chunk is stored (the reference's `blosc2_storage`).
#[derive(Clone, Default)]
pub struct Storage {
    /// Contiguous frame (true) or chunk list / sparse directory (false).
    pub contiguous: bool,
    /// File (contiguous) or directory (sparse); `None` keeps it in memory.
    pub urlpath: Option<PathBuf>,
    pub cparams: CParams,
    pub dparams: DParams,
    /// I/O backend for files; `None` uses the local file system.
    pub io: Option<IoRef>,
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
}

/// The most vlmetalayers a super-chunk holds (frames hold at most 16).
const MAX_VLMETALAYERS: usize = 8 * 1024;

enum Backend {
    Chunks(Vec<Vec<u8>>),
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

/// Uncompressed bytes of chunk `n` when the last chunk may be short.
fn fixed_chunk_nbytes(chunksize: i32, nbytes: i64, n: usize, nchunks: usize) -> i64 {
    let cs = i64::from(chunksize);
    if n + 1 == nchunks && nbytes % cs != 0 {
        nbytes % cs
    } else {
        cs
    }
}

fn special_kind(s: SpecialOffset) -> Special {
    match s {
        SpecialOffset::Zero => Special::Zero,
        SpecialOffset::Nan => Special::Nan,
        SpecialOffset::Uninit => Special::Uninit,
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
        })
    }

    /// Creates an empty super-chunk (an existing file or directory at
    /// `urlpath` is replaced).
    pub fn new(storage: Storage) -> Result<SChunk> {
        if storage.cparams.typesize <= 0 || storage.cparams.typesize > 255 {
            crate::bail!(
                InvalidParam,
                "typesize {} must be in 1..=255",
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
        let mut s = SChunk::empty(storage, backend)?;
        s.flush()?;
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
            ..Storage::default()
        };
        SChunk::attach(place, storage)
    }

    /// A super-chunk read from a contiguous frame buffer. With `copy` the
    /// result is an in-memory chunk list, otherwise an in-memory frame that
    /// owns a copy of `bytes` (use [`SChunk::from_vec`] to avoid the copy).
    pub fn from_buffer(bytes: &[u8], copy: bool) -> Result<SChunk> {
        let mut s = SChunk::from_vec(bytes.to_vec())?;
        if copy {
            s.copy(Storage {
                contiguous: false,
                urlpath: None,
                ..Storage::default()
            })
        } else {
            Ok(s)
        }
    }

    /// A super-chunk backed by (and owning) a contiguous frame buffer.
    pub fn from_vec(bytes: Vec<u8>) -> Result<SChunk> {
        let storage = Storage {
            contiguous: true,
            ..Storage::default()
        };
        SChunk::attach(Place::Memory(MemFile { data: bytes }), storage)
    }

    fn attach(place: Place, mut storage: Storage) -> Result<SChunk> {
        let (mut frame, h, vlmeta) = Frame::open(place)?;
        storage.cparams = CParams {
            compcode: h.compcode,
            compcode_meta: h.compcode_meta,
            clevel: h.clevel,
            use_dict: h.use_dict,
            typesize: h.typesize,
            nthreads: h.nthreads_c.max(1),
            blocksize: h.blocksize,
            splitmode: i32::from(h.splitmode),
            filters: h.filters,
            filters_meta: h.filters_meta,
            ..storage.cparams
        };
        storage.dparams = DParams {
            nthreads: h.nthreads_d.max(1),
            ..storage.dparams
        };
        let mut vl_blocks = h.vl_blocks;
        if frame.nchunks() > 0 {
            if let Ok(info) = frame.chunk_info(0)? {
                vl_blocks = info.flags2 & 1 != 0;
            }
        }
        let engine = Engine::new(storage.cparams.clone(), storage.dparams.clone())?;
        Ok(SChunk {
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
        })
    }

    // ----- accessors -----

    pub fn nchunks(&self) -> i64 {
        match &self.backend {
            Backend::Chunks(c) => c.len() as i64,
            Backend::Frame(f) => f.nchunks() as i64,
        }
    }
    pub fn nbytes(&self) -> i64 {
        self.nbytes
    }
    pub fn cbytes(&self) -> i64 {
        self.cbytes
    }
    pub fn typesize(&self) -> i32 {
        self.storage.cparams.typesize
    }
    /// Bytes per chunk: -1 before the first chunk, 0 for variable sizes.
    pub fn chunksize(&self) -> i32 {
        self.chunksize
    }
    pub fn blocksize(&self) -> i32 {
        self.blocksize
    }
    pub fn cparams(&self) -> &CParams {
        &self.storage.cparams
    }
    pub fn dparams(&self) -> &DParams {
        &self.storage.dparams
    }
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

    /// Re-reads header, trailer and offsets of a frame changed by another handle.
    pub fn refresh(&mut self) -> Result<()> {
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
        let fresh = SChunk::attach(place, self.storage.clone())?;
        *self = fresh;
        Ok(())
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
        let h = self.frame_header();
        if let Backend::Frame(f) = &mut self.backend {
            f.flush(&h, &self.vlmetalayers)?;
            if !f.is_sparse() {
                self.cbytes = f.data_len() as i64;
            }
        }
        Ok(())
    }

    // ----- reading chunks -----

    fn check_index(&self, n: i64) -> Result<usize> {
        let nchunks = self.nchunks();
        if n < 0 || n >= nchunks {
            crate::bail!(InvalidIndex, "chunk {n} out of range ({nchunks} chunks)");
        }
        Ok(n as usize)
    }

    fn special_nbytes(&self, n: usize) -> Result<i64> {
        if self.chunksize <= 0 {
            crate::bail!(
                FrameSpecial,
                "special chunk {n} in a frame without a fixed chunksize"
            );
        }
        Ok(fixed_chunk_nbytes(
            self.chunksize,
            self.nbytes,
            n,
            self.nchunks() as usize,
        ))
    }

    /// The compressed chunk `n` (special offsets are expanded into special chunks).
    pub fn get_chunk(&mut self, n: i64) -> Result<Cow<'_, [u8]>> {
        let n = self.check_index(n)?;
        let typesize = self.typesize() as usize;
        let special_size = self.special_nbytes(n);
        match &mut self.backend {
            Backend::Chunks(c) => Ok(Cow::Borrowed(&c[n][..])),
            Backend::Frame(f) => match f.chunk(n)? {
                FrameChunk::Bytes(b) => Ok(b),
                FrameChunk::Special(s) => {
                    let size = special_size? as usize;
                    Ok(Cow::Owned(engine::make_special(
                        special_kind(s),
                        size,
                        typesize,
                        None,
                    )?))
                }
            },
        }
    }

    /// Like [`SChunk::get_chunk`], but for file frames returns only the
    /// chunk header and block starts; the blocks stay on disk.
    pub fn get_lazychunk(&mut self, n: i64) -> Result<Cow<'_, [u8]>> {
        let idx = self.check_index(n)?;
        let on_disk =
            matches!(&self.backend, Backend::Frame(f) if !matches!(f.place(), Place::Memory(_)));
        if !on_disk {
            return self.get_chunk(n);
        }
        match self.lazy_prefix(idx)? {
            Some(p) => Ok(Cow::Owned(p)),
            None => self.get_chunk(n),
        }
    }

    /// Decompresses chunk `n` into `dst`; returns the bytes written.
    pub fn decompress_chunk(&mut self, n: i64, dst: &mut [u8]) -> Result<usize> {
        let chunk = self.get_chunk(n)?.into_owned();
        self.engine.decompress(&chunk, dst)
    }

    /// Uncompressed size of each chunk.
    fn chunk_sizes(&mut self) -> Result<Vec<i64>> {
        let nchunks = self.nchunks() as usize;
        if self.chunksize > 0 {
            return Ok((0..nchunks)
                .map(|i| fixed_chunk_nbytes(self.chunksize, self.nbytes, i, nchunks))
                .collect());
        }
        let mut out = Vec::with_capacity(nchunks);
        for i in 0..nchunks {
            let nb = match &mut self.backend {
                Backend::Chunks(c) => i64::from(ChunkInfo::parse(&c[i])?.nbytes),
                Backend::Frame(f) => match f.chunk_info(i)? {
                    Ok(info) => i64::from(info.nbytes),
                    Err(_) => self.special_nbytes(i)?,
                },
            };
            out.push(nb);
        }
        Ok(out)
    }

    /// Reads items `start..stop` (in units of `typesize`) into `dst`.
    pub fn get_slice_buffer(&mut self, start: i64, stop: i64, dst: &mut [u8]) -> Result<()> {
        let ts = i64::from(self.typesize());
        let nitems = self.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            crate::bail!(InvalidParam, "slice {start}..{stop} outside 0..{nitems}");
        }
        let want = ((stop - start) * ts) as usize;
        if dst.len() < want {
            crate::bail!(
                WriteBuffer,
                "destination has {} bytes, slice needs {want}",
                dst.len()
            );
        }
        let (mut pos, end) = (start * ts, stop * ts);
        let mut chunk_start = 0i64;
        let sizes = self.chunk_sizes()?;
        let mut out = 0usize;
        for (i, &size) in sizes.iter().enumerate() {
            let chunk_end = chunk_start + size;
            if pos < chunk_end && pos < end {
                let lo = (pos - chunk_start) as usize;
                let hi = (end.min(chunk_end) - chunk_start) as usize;
                self.read_chunk_range(i, lo, &mut dst[out..out + hi - lo])?;
                out += hi - lo;
                pos = chunk_start + hi as i64;
            }
            chunk_start = chunk_end;
            if pos >= end {
                break;
            }
        }
        Ok(())
    }

    /// Reads bytes `lo..lo+dst.len()` of chunk `n`'s uncompressed data,
    /// fetching only the needed blocks for file frames.
    pub fn read_chunk_range(&mut self, n: usize, lo: usize, dst: &mut [u8]) -> Result<()> {
        if let Some(done) = self.lazy_range(n, lo, dst)? {
            debug_assert_eq!(done, dst.len());
            return Ok(());
        }
        let chunk = self.get_chunk(n as i64)?.into_owned();
        let info = ChunkInfo::parse(&chunk)?;
        let mut full = vec![0u8; info.nbytes as usize];
        self.engine.decompress(&chunk, &mut full)?;
        let src = full.get(lo..lo + dst.len()).ok_or_else(|| {
            crate::err!(
                InvalidParam,
                "range {lo}+{} outside chunk {n} ({} bytes)",
                dst.len(),
                info.nbytes
            )
        })?;
        dst.copy_from_slice(src);
        Ok(())
    }

    /// Writes items `start..stop` from `src`, recompressing touched chunks.
    pub fn set_slice_buffer(&mut self, start: i64, stop: i64, src: &[u8]) -> Result<()> {
        let ts = i64::from(self.typesize());
        let nitems = self.nbytes / ts;
        if start < 0 || stop < start || stop > nitems {
            crate::bail!(InvalidParam, "slice {start}..{stop} outside 0..{nitems}");
        }
        let want = ((stop - start) * ts) as usize;
        if src.len() < want {
            crate::bail!(
                ReadBuffer,
                "source has {} bytes, slice needs {want}",
                src.len()
            );
        }
        let (mut pos, end) = (start * ts, stop * ts);
        let sizes = self.chunk_sizes()?;
        let mut chunk_start = 0i64;
        let mut used = 0usize;
        for (i, &size) in sizes.iter().enumerate() {
            let chunk_end = chunk_start + size;
            if pos < chunk_end && pos < end {
                let lo = (pos - chunk_start) as usize;
                let hi = (end.min(chunk_end) - chunk_start) as usize;
                let mut data = vec![0u8; size as usize];
                self.decompress_chunk(i as i64, &mut data)?;
                data[lo..hi].copy_from_slice(&src[used..used + hi - lo]);
                used += hi - lo;
                let chunk = self.engine.compress(&data)?;
                self.update_chunk(i as i64, &chunk)?;
                pos = chunk_start + hi as i64;
            }
            chunk_start = chunk_end;
            if pos >= end {
                break;
            }
        }
        Ok(())
    }

    // ----- writing chunks -----

    /// Compresses `src` into a new chunk and appends it; returns the new
    /// number of chunks.
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<i64> {
        let chunk = self.engine.compress(src)?;
        self.append_chunk(&chunk)
    }

    /// Appends a compressed chunk; returns the new number of chunks.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<i64> {
        let n = self.nchunks();
        self.insert_chunk(n, chunk)
    }

    /// Validates a chunk and returns its info and exact bytes.
    fn check_chunk<'a>(&self, chunk: &'a [u8]) -> Result<(ChunkInfo, &'a [u8])> {
        let info = ChunkInfo::parse(chunk)?;
        let bytes = chunk.get(..info.cbytes as usize).ok_or_else(|| {
            crate::err!(
                ReadBuffer,
                "chunk says {} bytes, buffer has {}",
                info.cbytes,
                chunk.len()
            )
        })?;
        if !info.extended {
            crate::bail!(
                InvalidHeader,
                "super-chunks need chunks with a Blosc2 extended header"
            );
        }
        let vl = info.flags2 & 1 != 0;
        if self.nchunks() > 0 && vl != self.vl_blocks {
            crate::bail!(
                ChunkAppend,
                "super-chunks cannot mix regular and variable-length-block chunks"
            );
        }
        Ok((info, bytes))
    }

    /// Decides the new chunksize after placing a chunk of `nb` bytes at `n`
    /// (`replacing` when it overwrites chunk `n`), as the reference does.
    fn next_chunksize(&mut self, n: usize, nb: i64, replacing: bool) -> Result<i32> {
        let nchunks = self.nchunks() as usize;
        let cs = self.chunksize;
        if cs < 0 || (nchunks == 0) || (replacing && nchunks == 1) {
            return Ok(i32::try_from(nb).unwrap_or(0));
        }
        if cs == 0 {
            return Ok(0);
        }
        let cs64 = i64::from(cs);
        let last = nchunks - 1;
        let last_nb = fixed_chunk_nbytes(cs, self.nbytes, last, nchunks);
        let ok = if replacing {
            nb == cs64 || (n == last && nb <= cs64)
        } else if n == nchunks {
            last_nb == cs64 && nb <= cs64
        } else {
            last_nb == cs64 && nb == cs64
        };
        Ok(if ok { cs } else { 0 })
    }

    /// When a frame turns to variable chunk sizes, its special offsets can no
    /// longer be sized on reading: store them as real chunks first.
    fn materialize_specials(&mut self) -> Result<()> {
        let nchunks = self.nchunks() as usize;
        let ts = self.typesize() as usize;
        for i in 0..nchunks {
            let kind = match &mut self.backend {
                Backend::Frame(f) => match f.chunk_info(i)? {
                    Err(s) => s,
                    Ok(_) => continue,
                },
                Backend::Chunks(_) => return Ok(()),
            };
            let size = self.special_nbytes(i)? as usize;
            let chunk = engine::make_special(special_kind(kind), size, ts, None)?;
            if let Backend::Frame(f) = &mut self.backend {
                f.update(i, &chunk, None)?;
                if f.is_sparse() {
                    self.cbytes += chunk.len() as i64;
                }
            }
        }
        Ok(())
    }

    /// Stores `bytes` at `n` in the backend (insert or replace).
    fn place_chunk(
        &mut self,
        n: usize,
        info: &ChunkInfo,
        bytes: &[u8],
        replace: bool,
    ) -> Result<()> {
        let special = if self.chunksize > 0 {
            info.special_offset()
        } else {
            None
        };
        match &mut self.backend {
            Backend::Chunks(c) => {
                if replace {
                    c[n] = bytes.to_vec();
                } else {
                    c.insert(n, bytes.to_vec());
                }
            }
            Backend::Frame(f) => {
                if replace {
                    f.update(n, bytes, special)?;
                } else {
                    f.insert(n, bytes, special)?;
                }
            }
        }
        Ok(())
    }

    /// Stored size of chunk `n` as counted in `cbytes`.
    fn stored_cbytes(&mut self, n: usize) -> Result<i64> {
        match &mut self.backend {
            Backend::Chunks(c) => Ok(i64::from(ChunkInfo::parse(&c[n])?.cbytes)),
            Backend::Frame(f) => Ok(match f.chunk_info(n)? {
                Ok(info) => i64::from(info.cbytes),
                Err(_) => 0,
            }),
        }
    }

    /// Uncompressed size of chunk `n`.
    fn chunk_nbytes(&mut self, n: usize) -> Result<i64> {
        match &mut self.backend {
            Backend::Chunks(c) => Ok(i64::from(ChunkInfo::parse(&c[n])?.nbytes)),
            Backend::Frame(f) => match f.chunk_info(n)? {
                Ok(info) => Ok(i64::from(info.nbytes)),
                Err(_) => self.special_nbytes(n),
            },
        }
    }

    fn set_chunksize(&mut self, cs: i32) -> Result<()> {
        if cs == 0 && self.chunksize > 0 {
            self.materialize_specials()?;
        }
        self.chunksize = cs;
        Ok(())
    }

    /// Inserts a compressed chunk at position `n`; returns the new number of chunks.
    pub fn insert_chunk(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        let nchunks = self.nchunks();
        if n < 0 || n > nchunks {
            crate::bail!(InvalidIndex, "insert position {n} outside 0..={nchunks}");
        }
        let n = n as usize;
        let (info, bytes) = self.check_chunk(chunk)?;
        let nb = i64::from(info.nbytes);
        let cs = self.next_chunksize(n, nb, false)?;
        self.set_chunksize(cs)?;
        if nchunks == 0 {
            self.vl_blocks = info.flags2 & 1 != 0;
        }
        self.place_chunk(n, &info, bytes, false)?;
        self.nbytes += nb;
        let stored = self.stored_cbytes(n)?;
        self.cbytes += stored;
        self.flush()?;
        Ok(self.nchunks())
    }

    /// Replaces chunk `n` with a compressed chunk; returns the number of chunks.
    pub fn update_chunk(&mut self, n: i64, chunk: &[u8]) -> Result<i64> {
        let idx = self.check_index(n)?;
        let (info, bytes) = self.check_chunk(chunk)?;
        let nb = i64::from(info.nbytes);
        let old_nb = self.chunk_nbytes(idx)?;
        let old_cb = self.stored_cbytes(idx)?;
        let cs = self.next_chunksize(idx, nb, true)?;
        self.set_chunksize(cs)?;
        let old_cb = if cs == 0 {
            self.stored_cbytes(idx)?
        } else {
            old_cb
        };
        self.place_chunk(idx, &info, bytes, true)?;
        self.nbytes += nb - old_nb;
        let new_cb = self.stored_cbytes(idx)?;
        self.cbytes += new_cb - old_cb;
        self.flush()?;
        Ok(self.nchunks())
    }

    /// Removes chunk `n`; returns the new number of chunks.
    pub fn delete_chunk(&mut self, n: i64) -> Result<i64> {
        let idx = self.check_index(n)?;
        let old_nb = self.chunk_nbytes(idx)?;
        let old_cb = self.stored_cbytes(idx)?;
        match &mut self.backend {
            Backend::Chunks(c) => {
                c.remove(idx);
            }
            Backend::Frame(f) => f.delete(idx)?,
        }
        self.nbytes -= old_nb;
        self.cbytes -= old_cb;
        if self.nchunks() == 0 {
            self.vl_blocks = false;
        }
        self.flush()?;
        Ok(self.nchunks())
    }

    /// Reorders the chunks: new chunk `i` is old chunk `order[i]`.
    pub fn reorder_offsets(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks() as usize;
        if self.chunksize > 0
            && n > 0
            && fixed_chunk_nbytes(self.chunksize, self.nbytes, n - 1, n)
                != i64::from(self.chunksize)
        {
            crate::bail!(
                InvalidParam,
                "cannot reorder chunks when the last chunk is short"
            );
        }
        match &mut self.backend {
            Backend::Chunks(c) => {
                let mut seen = vec![false; n];
                if order.len() != n {
                    crate::bail!(
                        InvalidParam,
                        "order has {} entries, super-chunk has {n} chunks",
                        order.len()
                    );
                }
                for &o in order {
                    let i = usize::try_from(o)
                        .ok()
                        .filter(|&i| i < n && !seen[i])
                        .ok_or_else(|| {
                            crate::err!(
                                InvalidParam,
                                "order is not a permutation of 0..{n} (bad entry {o})"
                            )
                        })?;
                    seen[i] = true;
                }
                let old = std::mem::take(c);
                let mut slots: Vec<Option<Vec<u8>>> = old.into_iter().map(Some).collect();
                *c = order
                    .iter()
                    .map(|&o| slots[o as usize].take().unwrap_or_default())
                    .collect();
            }
            Backend::Frame(f) => f.reorder(order)?,
        }
        self.flush()
    }

    /// Fills an empty super-chunk with `nitems` special items split into
    /// chunks of `chunksize` bytes. In frames zeros, NaNs and uninitialized
    /// values become special offsets and take no space.
    pub fn fill_special(&mut self, nitems: i64, special: Special, chunksize: i32) -> Result<i64> {
        if self.nchunks() > 0 || self.nbytes > 0 {
            crate::bail!(SchunkSpecial, "fill_special needs an empty super-chunk");
        }
        let ts = i64::from(self.typesize());
        if nitems < 0 || chunksize <= 0 || i64::from(chunksize) % ts != 0 {
            crate::bail!(
                InvalidParam,
                "bad fill: {nitems} items, chunksize {chunksize} (typesize {ts})"
            );
        }
        let total = nitems
            .checked_mul(ts)
            .ok_or_else(|| crate::err!(InvalidParam, "nitems too large"))?;
        let cs = i64::from(chunksize);
        let nchunks = (total + cs - 1) / cs;
        if nchunks > i64::from(i32::MAX) / 8 {
            crate::bail!(
                SchunkSpecial,
                "too many chunks ({nchunks}); use a larger chunksize"
            );
        }
        let offset_kind = match special {
            Special::Zero => Some(SpecialOffset::Zero),
            Special::Nan => Some(SpecialOffset::Nan),
            Special::Uninit => Some(SpecialOffset::Uninit),
            Special::Value => crate::bail!(InvalidParam, "fill_special cannot fill with a value"),
        };
        if special == Special::Nan && ts != 4 && ts != 8 {
            crate::bail!(InvalidParam, "NaN fill needs typesize 4 or 8");
        }
        self.chunksize = chunksize;
        let full = engine::make_special(special, cs as usize, ts as usize, None)?;
        for i in 0..nchunks {
            let nb = if i == nchunks - 1 && total % cs != 0 {
                total % cs
            } else {
                cs
            };
            let chunk = if nb == cs {
                Cow::Borrowed(&full[..])
            } else {
                Cow::Owned(engine::make_special(
                    special,
                    nb as usize,
                    ts as usize,
                    None,
                )?)
            };
            match &mut self.backend {
                Backend::Chunks(c) => {
                    self.cbytes += chunk.len() as i64;
                    c.push(chunk.into_owned());
                }
                Backend::Frame(f) => f.insert(i as usize, &chunk, offset_kind)?,
            }
            self.nbytes += nb;
        }
        self.flush()?;
        Ok(self.nchunks())
    }

    // ----- metalayers -----

    /// Index of metalayer `name`, if present.
    pub fn meta_exists(&self, name: &str) -> Option<usize> {
        self.metalayers.iter().position(|m| m.name == name)
    }

    /// Adds a fixed-size metalayer; frames accept them only before data.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        crate::frame::header::check_name(name)?;
        if self.meta_exists(name).is_some() {
            crate::bail!(InvalidParam, "metalayer '{name}' already exists");
        }
        if self.metalayers.len() >= MAX_METALAYERS {
            crate::bail!(InvalidParam, "at most {MAX_METALAYERS} metalayers");
        }
        if self.is_frame() && self.nchunks() > 0 {
            crate::bail!(
                InvalidParam,
                "metalayers cannot be added to a frame after data"
            );
        }
        self.metalayers.push(Metalayer {
            name: name.to_owned(),
            content: content.to_vec(),
        });
        if let Err(e) = self.flush() {
            self.metalayers.pop();
            return Err(e);
        }
        Ok(self.metalayers.len() - 1)
    }

    /// Content of metalayer `name`.
    pub fn meta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self
            .meta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "metalayer '{name}' not found"))?;
        Ok(self.metalayers[i].content.clone())
    }

    /// Overwrites the start of metalayer `name`; its size never changes, so
    /// `content` may not be longer than the existing content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        let i = self
            .meta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "metalayer '{name}' not found"))?;
        let old = &mut self.metalayers[i].content;
        if content.len() > old.len() {
            crate::bail!(
                InvalidParam,
                "metalayer '{name}' holds {} bytes; cannot grow to {}",
                old.len(),
                content.len()
            );
        }
        old[..content.len()].copy_from_slice(content);
        self.flush()?;
        Ok(i)
    }

    /// Names of the metalayers, in order.
    pub fn meta_names(&self) -> Vec<String> {
        self.metalayers.iter().map(|m| m.name.clone()).collect()
    }

    // ----- variable-length metalayers -----

    pub fn vlmeta_exists(&self, name: &str) -> Option<usize> {
        self.vlmetalayers.iter().position(|m| m.name == name)
    }

    fn vlmeta_limit(&self) -> usize {
        if self.is_frame() {
            crate::frame::trailer::MAX_FRAME_VLMETALAYERS
        } else {
            MAX_VLMETALAYERS
        }
    }

    /// Adds a vlmetalayer, compressing `content` with `cparams` (reference
    /// defaults when `None`).
    pub fn vlmeta_add(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        crate::frame::header::check_name(name)?;
        if self.vlmeta_exists(name).is_some() {
            crate::bail!(InvalidParam, "vlmetalayer '{name}' already exists");
        }
        if self.vlmetalayers.len() >= self.vlmeta_limit() {
            crate::bail!(
                InvalidParam,
                "at most {} vlmetalayers here",
                self.vlmeta_limit()
            );
        }
        let packed = engine::compress_with(cparams.unwrap_or(&CParams::default()), content)?;
        self.vlmetalayers.push(Metalayer {
            name: name.to_owned(),
            content: packed,
        });
        if let Err(e) = self.flush() {
            self.vlmetalayers.pop();
            return Err(e);
        }
        Ok(self.vlmetalayers.len() - 1)
    }

    /// Decompressed content of vlmetalayer `name`.
    pub fn vlmeta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        engine::decompress_once(&self.vlmetalayers[i].content)
    }

    /// Replaces the content of vlmetalayer `name`.
    pub fn vlmeta_update(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        let packed = engine::compress_with(cparams.unwrap_or(&CParams::default()), content)?;
        let old = std::mem::replace(&mut self.vlmetalayers[i].content, packed);
        if let Err(e) = self.flush() {
            self.vlmetalayers[i].content = old;
            return Err(e);
        }
        Ok(i)
    }

    /// Removes vlmetalayer `name`; returns how many remain.
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<usize> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        self.vlmetalayers.remove(i);
        self.flush()?;
        Ok(self.vlmetalayers.len())
    }

    /// Names of the vlmetalayers, in order.
    pub fn vlmeta_names(&self) -> Vec<String> {
        self.vlmetalayers.iter().map(|m| m.name.clone()).collect()
    }

    // ----- copies and serialization -----

    /// A copy of this super-chunk in `storage` (its compression parameters
    /// are kept; `storage.cparams` is ignored).
    pub fn copy(&mut self, storage: Storage) -> Result<SChunk> {
        let storage = Storage {
            cparams: self.storage.cparams.clone(),
            dparams: self.storage.dparams.clone(),
            ..storage
        };
        let mut out = SChunk::new(storage)?;
        out.blocksize = self.blocksize;
        out.metalayers = self.metalayers.clone();
        out.vlmetalayers = self.vlmetalayers.clone();
        if out.vlmetalayers.len() > out.vlmeta_limit() {
            crate::bail!(
                SchunkCopy,
                "{} vlmetalayers do not fit in a frame",
                out.vlmetalayers.len()
            );
        }
        out.flush()?;
        for i in 0..self.nchunks() {
            let c = self.get_chunk(i)?.into_owned();
            out.append_chunk(&c)
                .map_err(|e| crate::err!(SchunkCopy, "chunk {i}: {}", e.detail()))?;
        }
        if self.chunksize == 0 && out.chunksize > 0 {
            out.chunksize = 0;
            out.flush()?;
        }
        Ok(out)
    }

    /// The super-chunk serialized as a contiguous frame.
    pub fn to_buffer(&mut self) -> Result<Vec<u8>> {
        if let Backend::Frame(f) = &mut self.backend {
            if !f.is_sparse() {
                return f.to_bytes();
            }
        }
        let mut c = self.copy(Storage {
            contiguous: true,
            ..Storage::default()
        })?;
        match std::mem::replace(&mut c.backend, Backend::Chunks(Vec::new())) {
            Backend::Frame(f) => f
                .into_memory()
                .ok_or_else(|| crate::err!(Failure, "copy is not in memory")),
            Backend::Chunks(_) => crate::bail!(Failure, "copy is not a frame"),
        }
    }

    /// Writes the super-chunk as a contiguous frame file; returns its length.
    pub fn to_file(&mut self, path: impl AsRef<Path>) -> Result<u64> {
        let bytes = self.to_buffer()?;
        std::fs::write(path.as_ref(), &bytes)
            .map_err(|e| crate::err!(FileWrite, "{}: {e}", path.as_ref().display()))?;
        Ok(bytes.len() as u64)
    }

    /// Appends the super-chunk as a contiguous frame at the end of the file
    /// `path` (created if missing); returns the offset where the frame starts.
    pub fn append_file(&mut self, path: impl AsRef<Path>) -> Result<u64> {
        let bytes = self.to_buffer()?;
        let io = self.storage.io();
        let path = path.as_ref();
        let mode = if path.exists() {
            crate::frame::OpenMode::ReadWrite
        } else {
            crate::frame::OpenMode::Create
        };
        let mut f = io.open(path, mode)?;
        let offset = f.size()?;
        f.write_at(offset, &bytes)?;
        Ok(offset)
    }
}
