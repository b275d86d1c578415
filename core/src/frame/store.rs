//! A frame attached to its bytes: in a memory buffer, in a file (possibly at
//! an offset inside a larger file), or as a sparse directory.
//!
//! The frame keeps only the header length, the data-section length and the
//! offsets index in memory (decoded, or as its compressed chunk when it is
//! large: see `frame::index`); chunk bytes are read on demand. Every
//! mutation is followed by [`Frame::flush`], which closes the gaps dropped
//! chunks left in the data section (see `gaps`) and rewrites the offsets
//! index, the trailer and the header, so the bytes are a valid frame after
//! each call.
//!
//! The frame file (the index file of a sparse frame) is opened when an
//! operation first needs it: to read, or to write, which reopens a handle
//! opened to read. Whether the handle then stays open for the next
//! operation is the backend's choice ([`super::io::Io::keeps_files_open`]):
//! the local file system keeps it, a C user backend has it closed at the end
//! of every operation ([`Frame::op`]), as the reference closes those.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::codec::{self, ChunkInfo, EXTENDED_HEADER_LEN};
use super::header::{FrameHeader, FrameType, Metalayer, Pos};
use super::index::OffsetIndex;
use super::io::{check_read_len, read_exact_at, IoFile, IoRef, MemFile, OpenMode};
use super::offsets::{ChunkLoc, SpecialOffset};
use super::trailer::{self, TRAILER_MINLEN};
use crate::Result;

mod compact;
mod gaps;
mod publish;

/// Name of the index file inside a sparse frame directory.
pub(crate) const SPARSE_INDEX: &str = "chunks.b2frame";

/// Where the frame bytes live.
pub enum Place {
    /// A contiguous frame in memory.
    Memory(MemFile),
    /// A contiguous frame in a file, starting at `offset`.
    File {
        /// The I/O backend the file is opened through.
        io: IoRef,
        /// The file.
        path: PathBuf,
        /// Byte position of the frame in the file (0 for a file of its own).
        offset: u64,
    },
    /// A sparse frame: `dir/chunks.b2frame` plus one file per chunk.
    Sparse {
        /// The I/O backend the files are opened through.
        io: IoRef,
        /// The frame's directory.
        dir: PathBuf,
    },
}

/// An open frame file and the mode it was opened in.
struct Handle {
    file: Box<dyn IoFile>,
    mode: OpenMode,
}

/// Where [`Frame::chunk`] found a chunk's bytes.
enum ChunkAt {
    Special(SpecialOffset),
    /// In the memory buffer, this many bytes from this position.
    Memory(usize, usize),
    /// Read from a file.
    Read(Vec<u8>),
}

/// A chunk as stored in the frame.
pub enum FrameChunk<'a> {
    /// A stored chunk's bytes (borrowed from an in-memory frame, else read).
    Bytes(Cow<'a, [u8]>),
    /// A chunk that its offsets-index entry alone describes.
    Special(SpecialOffset),
}

/// An open frame.
pub struct Frame {
    place: Place,
    /// Open handle to the frame file (contiguous) or index file (sparse).
    /// Behind a lock so that reads through `&self` from several threads
    /// share it: a backend with positioned reads serves them all at once
    /// under the shared lock; another takes turns under the exclusive one,
    /// held for one read.
    file: RwLock<Option<Handle>>,
    /// The handle is closed when an operation ends (see [`Frame::op`]).
    transient: bool,
    /// How many operations are running, one inside another or on other
    /// threads (see [`Frame::op`]).
    depth: AtomicU32,
    header_len: u64,
    data_len: u64,
    offsets: OffsetIndex,
    frame_len: u64,
    /// Other bytes follow the frame in its file (a frame embedded in a
    /// larger file, or several frames appended to one file): the file is
    /// then never truncated, so that a shrinking frame leaves them where
    /// they are. A growing frame still writes over them, as the reference.
    tail_follows: bool,
    /// Whether the stored chunks of a contiguous frame share no byte,
    /// which is when dropping one's bytes leaves the others as they were.
    layout: ChunkLayout,
    /// Bytes of chunks dropped since the last flush, which closes them
    /// (see `frame::store::gaps`).
    gaps: Vec<gaps::Gap>,
    /// How the writes of a frame in a file are ordered (see `publish`).
    order: publish::Ordering,
}

/// What is known of how the stored chunks of a contiguous frame lie in its
/// data section. This library and the reference write each chunk after the
/// last, so only a corrupt frame has chunks that overlap (one nested in
/// another, say), but then moving the bytes after a dropped chunk over it
/// would move part of a chunk that stays, or leave its offset pointing
/// before the data section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkLayout {
    /// Not looked at since the frame was opened.
    Unchecked,
    /// No two distinct stored chunks share a byte. Edits keep it so: a
    /// new chunk goes after the last, and a compaction moves whole chunks.
    Disjoint,
    /// Some may share bytes, or a header did not read: dropped chunks
    /// leave their bytes where they are, as the reference always does.
    MayOverlap,
}

/// Checks entry `o` of chunk `i` of an index held expanded: it decodes,
/// and a stored chunk can lie where it says, its extended header inside the
/// data section of `data_len` bytes or, in a sparse frame, a chunk file id
/// in the `u32` range.
fn check_entry(sparse: bool, data_len: u64, i: usize, o: i64) -> Result<()> {
    match ChunkLoc::decode(o)? {
        ChunkLoc::Stored(v)
            if !sparse && (v as u64).saturating_add(EXTENDED_HEADER_LEN as u64) > data_len =>
        {
            crate::bail!(
                InvalidHeader,
                "offset {v} of chunk {i} is past the end of the data section ({data_len} bytes)"
            )
        }
        ChunkLoc::Stored(v) if sparse && v > u32::MAX as i64 => {
            crate::bail!(
                InvalidHeader,
                "sparse chunk id {v} of chunk {i} out of range"
            )
        }
        _ => Ok(()),
    }
}

/// Whether the backend of `place` keeps files open between operations (a
/// memory buffer has none to close).
fn place_keeps_files_open(place: &Place) -> bool {
    match place {
        Place::Memory(_) => true,
        Place::File { io, .. } | Place::Sparse { io, .. } => io.keeps_files_open(),
    }
}

/// The path of chunk file `id` of a sparse frame.
pub(crate) fn sparse_chunk_path(dir: &Path, id: i64) -> Result<PathBuf> {
    let id = u32::try_from(id)
        .map_err(|_| crate::err!(InvalidIndex, "sparse chunk id {id} out of range"))?;
    Ok(dir.join(format!("{id:08X}.chunk")))
}

impl Frame {
    /// Writes a new, empty frame at `place` and returns it.
    pub fn create(place: Place, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<Frame> {
        let mode = match &place {
            Place::Memory(_) => None,
            Place::File { offset: 0, .. } => Some(OpenMode::Create),
            // A frame written into a larger file keeps what comes before.
            Place::File { .. } => Some(OpenMode::ReadWrite),
            Place::Sparse { io, dir } => {
                io.create_dir(dir)?;
                Some(OpenMode::Create)
            }
        };
        let mut f = Frame {
            transient: !place_keeps_files_open(&place),
            place,
            file: RwLock::new(None),
            depth: AtomicU32::new(0),
            header_len: 0,
            data_len: 0,
            offsets: OffsetIndex::default(),
            frame_len: 0,
            tail_follows: false,
            layout: ChunkLayout::Disjoint,
            gaps: Vec::new(),
            order: Default::default(),
        };
        f.op(|f| {
            if let Some(mode) = mode {
                // A new file is written beside the path and renamed onto
                // it, so the path never holds half a frame. A frame added
                // at an offset writes past what the file holds: in place.
                if f.base() > 0 || !f.begin_shadow(false)? {
                    f.open_handle(mode)?;
                }
            }
            f.flush(header, vlmeta)
        })?;
        Ok(f)
    }

    /// Opens an existing frame, reading only its header, trailer and offsets.
    pub fn open(place: Place) -> Result<(Frame, FrameHeader, Vec<Metalayer>)> {
        let mut f = Frame {
            transient: !place_keeps_files_open(&place),
            place,
            file: RwLock::new(None),
            depth: AtomicU32::new(0),
            header_len: 0,
            data_len: 0,
            offsets: OffsetIndex::default(),
            frame_len: 0,
            tail_follows: false,
            layout: ChunkLayout::Unchecked,
            gaps: Vec::new(),
            order: Default::default(),
        };
        let (header, vlmeta) = f.op(|f| {
            if !matches!(f.place, Place::Memory(_)) {
                f.open_handle(OpenMode::Read).map_err(|e| match &f.place {
                    Place::Sparse { dir, .. } => crate::err!(
                        FileOpen,
                        "{} is not a sparse frame (no {SPARSE_INDEX}): {}",
                        dir.display(),
                        e.detail()
                    ),
                    _ => e,
                })?;
            }
            f.load()
        })?;
        Ok((f, header, vlmeta))
    }

    /// Runs one operation on the frame's bytes. An operation run inside
    /// another is part of it; when the outermost one ends, whatever its
    /// result, a handle that the backend does not keep between operations
    /// is closed.
    pub(crate) fn op<T>(&mut self, f: impl FnOnce(&mut Frame) -> Result<T>) -> Result<T> {
        *self.depth.get_mut() += 1;
        let r = f(self);
        *self.depth.get_mut() -= 1;
        if *self.depth.get_mut() == 0 && r.is_err() && self.shadow_path().is_some() {
            // The edit wrote part of a new file: the frame file still holds
            // the frame last published, which the handle goes back to (a
            // failure to read it is reported by the next read).
            self.abandon_shadow();
            let _ = self.load();
        }
        if *self.depth.get_mut() == 0 && self.transient {
            *self.slot_mut() = None;
        }
        r
    }

    /// [`Frame::op`] for reads through `&self`, which may run on several
    /// threads at once: the last one to end closes a transient handle.
    pub(crate) fn read_op<T>(&self, f: impl FnOnce(&Frame) -> Result<T>) -> Result<T> {
        self.depth.fetch_add(1, Ordering::AcqRel);
        let r = f(self);
        if self.depth.fetch_sub(1, Ordering::AcqRel) == 1 && self.transient {
            *self.slot() = None;
        }
        r
    }

    fn slot(&self) -> RwLockWriteGuard<'_, Option<Handle>> {
        // A handle stays usable after a panic elsewhere: at worst a read
        // through it fails and reports so.
        self.file.write().unwrap_or_else(|p| p.into_inner())
    }

    fn slot_shared(&self) -> RwLockReadGuard<'_, Option<Handle>> {
        self.file.read().unwrap_or_else(|p| p.into_inner())
    }

    fn slot_mut(&mut self) -> &mut Option<Handle> {
        self.file.get_mut().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the frame file (the index file of a sparse frame) in `mode`,
    /// closing the handle open before, if any, first.
    fn open_handle(&mut self, mode: OpenMode) -> Result<()> {
        *self.slot_mut() = None;
        let handle = self.new_handle(mode)?;
        *self.slot_mut() = Some(handle);
        Ok(())
    }

    fn new_handle(&self, mode: OpenMode) -> Result<Handle> {
        let file = match &self.place {
            Place::Memory(_) => crate::bail!(Failure, "an in-memory frame has no file"),
            Place::File { io, .. } | Place::Sparse { io, .. } if self.shadow_path().is_some() => {
                io.open(self.shadow_path().unwrap_or(Path::new("")), mode)?
            }
            Place::File { io, path, .. } => io.open(path, mode)?,
            Place::Sparse { io, dir } => io.open(&dir.join(SPARSE_INDEX), mode)?,
        };
        Ok(Handle { file, mode })
    }

    /// Whether a handle open in `mode` may serve a read.
    fn reads_through(&self, mode: OpenMode) -> bool {
        // A created file of a backend that keeps files open is read through
        // the same handle (the file system's reads); one closed after each
        // operation may not read it ("wb"), and is reopened.
        mode != OpenMode::Create || !self.transient
    }

    /// The open frame file, to write to it when `write` (else to read it),
    /// opened (or reopened, when the handle open does not allow that) now.
    fn handle(&mut self, write: bool) -> Result<&mut dyn IoFile> {
        let fits = match self.slot_mut().as_ref().map(|h| h.mode) {
            None => false,
            Some(OpenMode::Read) => !write,
            Some(OpenMode::ReadWrite) => true,
            Some(mode @ OpenMode::Create) => write || self.reads_through(mode),
        };
        if !fits {
            // Written once, the file stays open for writing.
            let mode = if write || self.slot_mut().is_some() {
                OpenMode::ReadWrite
            } else {
                OpenMode::Read
            };
            self.open_handle(mode)?;
        }
        match self.slot_mut().as_mut() {
            Some(h) => Ok(h.file.as_mut()),
            None => crate::bail!(Failure, "the frame file did not open"),
        }
    }

    /// Runs `f` on the open frame file for a read through `&self`, opening
    /// it first (for reading, or for writing if it was open so before).
    fn with_reader<T>(&self, f: impl FnOnce(&mut dyn IoFile) -> Result<T>) -> Result<T> {
        let mut slot = self.slot();
        let fits = slot.as_ref().is_some_and(|h| self.reads_through(h.mode));
        if !fits {
            let mode = if slot.is_some() {
                OpenMode::ReadWrite
            } else {
                OpenMode::Read
            };
            *slot = None;
            *slot = Some(self.new_handle(mode)?);
        }
        match slot.as_mut() {
            Some(h) => f(h.file.as_mut()),
            None => crate::bail!(Failure, "the frame file did not open"),
        }
    }

    fn base(&self) -> u64 {
        match &self.place {
            Place::File { offset, .. } => *offset,
            _ => 0,
        }
    }

    /// Whether this is a sparse frame (a directory of chunk files).
    pub fn is_sparse(&self) -> bool {
        matches!(self.place, Place::Sparse { .. })
    }

    /// Where the frame's bytes live.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// Reads `buf.len()` bytes at frame position `pos`.
    fn read(&self, pos: u64, buf: &mut [u8], what: &str) -> Result<()> {
        let abs = self
            .base()
            .checked_add(pos)
            .ok_or_else(|| crate::err!(ReadBuffer, "{what}: position overflow"))?;
        if let Place::Memory(m) = &self.place {
            let got = m.read_into(abs, buf);
            if got != buf.len() {
                crate::bail!(
                    FileRead,
                    "{what}: wanted {} bytes at {abs}, the frame ends after {got}",
                    buf.len()
                );
            }
            return Ok(());
        }
        {
            let slot = self.slot_shared();
            if let Some(h) = slot.as_ref().filter(|h| self.reads_through(h.mode)) {
                if let Some(n) = h.file.read_at_shared(abs, buf) {
                    return check_read_len(n?, abs, buf.len(), what);
                }
            }
        }
        self.with_reader(|f| read_exact_at(f, abs, buf, what))
    }

    fn write(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let abs = self.base() + pos;
        if let Place::Memory(m) = &mut self.place {
            return m.write_at(abs, data);
        }
        self.shadow_if_shared()?;
        self.handle(true)?.write_at(abs, data)
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let abs = self.base() + len;
        if let Place::Memory(m) = &mut self.place {
            return m.truncate(abs);
        }
        self.shadow_if_shared()?;
        self.handle(true)?.truncate(abs)
    }

    /// A frame that other bytes follow is never written in its file: the
    /// first write of an edit starts a shadow of the whole file, which the
    /// flush renames over it (see `publish`).
    fn shadow_if_shared(&mut self) -> Result<()> {
        if self.order.shadow.is_none() && self.whole_file_shadow() {
            self.begin_shadow(true)?;
        }
        Ok(())
    }

    fn size(&mut self) -> Result<u64> {
        if let Place::Memory(m) = &mut self.place {
            return Ok(m.data.len() as u64);
        }
        self.handle(false)?.size()
    }

    /// Reads and checks header, trailer and offsets index.
    fn load(&mut self) -> Result<(FrameHeader, Vec<Metalayer>)> {
        let size = self.size()?;
        let base = self.base();
        if base > size {
            crate::bail!(
                InvalidParam,
                "frame offset {base} is past the end of the file ({size} bytes)"
            );
        }
        let avail = size - base;
        if avail < Pos::MINLEN as u64 {
            crate::bail!(
                InvalidHeader,
                "only {avail} bytes: too short for a frame header"
            );
        }
        let mut fixed = [0u8; Pos::MINLEN];
        self.read(0, &mut fixed, "frame header")?;
        let fh = FrameHeader::decode_fixed(&fixed)?;
        let want_type = if self.is_sparse() {
            FrameType::Sparse
        } else {
            FrameType::Contiguous
        };
        if fh.frame_type != want_type {
            crate::bail!(
                FrameType,
                "frame type is {:?}, expected {want_type:?}",
                fh.frame_type
            );
        }
        let frame_len = fh.frame_len as u64;
        if frame_len < (Pos::MINLEN + TRAILER_MINLEN) as u64 {
            crate::bail!(InvalidHeader, "frame length {frame_len} is too small");
        }
        if frame_len > avail {
            crate::bail!(
                InvalidHeader,
                "frame length {frame_len} exceeds the {avail} bytes available"
            );
        }
        let header_len = fh.header_len as u64;
        let mut hbuf = vec![0u8; header_len as usize];
        self.read(0, &mut hbuf, "frame header")?;
        let header = FrameHeader::decode(&hbuf)?;

        let mut tail = [0u8; TRAILER_MINLEN];
        self.read(
            frame_len - TRAILER_MINLEN as u64,
            &mut tail,
            "frame trailer",
        )?;
        let trailer_len =
            trailer::trailer_len_from_tail(&tail, frame_len as i64, header_len as i64)? as u64;
        let trailer_off = frame_len - trailer_len;
        let mut tbuf = vec![0u8; trailer_len as usize];
        self.read(trailer_off, &mut tbuf, "frame trailer")?;
        let vlmeta = trailer::decode(&tbuf)?;

        let data_len = if self.is_sparse() {
            0
        } else {
            header.cbytes as u64
        };
        let off_pos = header_len
            .checked_add(data_len)
            .ok_or_else(|| crate::err!(InvalidHeader, "cbytes {} overflows", header.cbytes))?;
        if off_pos > trailer_off {
            crate::bail!(
                InvalidHeader,
                "data section ({data_len} bytes) runs into the trailer"
            );
        }
        let mut offsets = OffsetIndex::default();
        // The index and trailer as read, kept when they are all that follows
        // the data section (see `publish`).
        let mut tail = (off_pos == trailer_off).then(|| tbuf.clone());
        if header.nbytes > 0 {
            if off_pos + EXTENDED_HEADER_LEN as u64 > trailer_off {
                crate::bail!(
                    InvalidHeader,
                    "no room for the offsets index before the trailer"
                );
            }
            let mut ch = [0u8; EXTENDED_HEADER_LEN];
            self.read(off_pos, &mut ch, "offsets index")?;
            let info = ChunkInfo::parse(&ch)?;
            if off_pos + info.cbytes as u64 > trailer_off {
                crate::bail!(
                    InvalidHeader,
                    "offsets index ({} bytes) runs past the trailer",
                    info.cbytes
                );
            }
            let nchunks = info.nbytes as usize / 8;
            if header.chunksize > 0 {
                let cs = header.chunksize as i64;
                let expect = header.nbytes / cs + i64::from(header.nbytes % cs != 0);
                if expect != nchunks as i64 {
                    crate::bail!(
                        InvalidHeader,
                        "offsets index has {nchunks} entries, header sizes imply {expect}"
                    );
                }
            }
            let mut obuf = crate::mem::zeroed(info.cbytes as usize)?;
            self.read(off_pos, &mut obuf, "offsets index")?;
            offsets = codec::decompress_offsets(&obuf, nchunks)?;
            if off_pos + obuf.len() as u64 == trailer_off {
                obuf.extend_from_slice(&tbuf);
                tail = Some(obuf);
            }
            // A compressed index is not walked here: that takes time in
            // proportion to the chunks it declares, which a few hundred
            // bytes can put at 2^28 (`frame::index`). Its entries are
            // checked where they are read (see `Frame::loc`), and all of
            // them when it is expanded for a change (`Frame::entries_mut`).
            if !matches!(offsets, OffsetIndex::Compressed(_)) {
                let sparse = self.is_sparse();
                offsets.visit(|i, o| check_entry(sparse, data_len, i, o))?;
            }
        } else if off_pos + EXTENDED_HEADER_LEN as u64 <= trailer_off {
            // A header that says its chunks hold no bytes while its offsets
            // index lists chunks is corrupt: opened as empty, the chunks'
            // data would silently disappear (the reference refuses it too).
            let mut ch = [0u8; EXTENDED_HEADER_LEN];
            self.read(off_pos, &mut ch, "offsets index")?;
            if let Ok(info) = ChunkInfo::parse(&ch) {
                let listed = info.nbytes as usize / 8;
                if listed > 0 {
                    crate::bail!(
                        InvalidHeader,
                        "the header says nbytes 0, but the offsets index lists {listed} chunks"
                    );
                }
            }
        }
        self.header_len = header_len;
        self.data_len = data_len;
        self.offsets = offsets;
        self.layout = ChunkLayout::Unchecked;
        // Any gaps recorded were positions in the data section just re-read.
        self.gaps.clear();
        self.frame_len = frame_len;
        self.tail_follows = self.bytes_follow(frame_len, avail);
        self.forget_free();
        self.note_published(hbuf, off_pos, header.nbytes, tail);
        Ok((header, vlmeta))
    }

    /// Number of chunks (entries of the offsets index).
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// The offsets-index entry of chunk `n`: equal entries stand for the
    /// same bytes (a stored chunk, a chunk file, or a special kind).
    pub fn entry(&self, n: usize) -> Option<i64> {
        self.offsets.get(n)
    }

    /// The index entries, for tests that make chunks share bytes.
    #[cfg(test)]
    pub(crate) fn entries_for_tests(&mut self) -> &mut Vec<i64> {
        self.entries_mut().unwrap()
    }

    /// The offsets index, one entry per chunk (a copy: a repeated index is
    /// kept as one value, see `frame::index`).
    pub fn offsets(&self) -> Result<Vec<i64>> {
        self.offsets.to_vec()
    }

    /// The frame's length in bytes as its header records it after the last
    /// open or flush: header, data section, offsets index and trailer.
    pub fn frame_len(&self) -> u64 {
        self.frame_len
    }

    /// What the frame as stored says of itself now, for a handle that must
    /// notice the writes of another handle or process (the reference polls
    /// the same way): the frame length its header records, and whether the
    /// file at the path was replaced under an open handle (which is then
    /// dropped, so the next read opens the new file). `None` when the header
    /// cannot be read right now (another writer mid-write, or a frame in
    /// memory): the caller keeps its view and polls again later.
    pub(crate) fn poll_len(&self) -> Option<(u64, bool)> {
        if matches!(self.place, Place::Memory(_)) {
            return None;
        }
        let replaced = self
            .slot_shared()
            .as_ref()
            .is_some_and(|h| h.file.replaced());
        if replaced {
            *self.slot() = None;
        }
        let mut field = [0u8; 9];
        let read = self.read_op(|f| f.read(Pos::FRAME_LEN as u64 - 1, &mut field, "frame header"));
        // A msgpack uint64 (0xcf, then 8 bytes big-endian), as every frame writes it.
        if read.is_err() || field[0] != 0xcf {
            return None;
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&field[1..]);
        Some((u64::from_be_bytes(len), replaced))
    }

    /// Bytes in the data section (0 for sparse frames), not counting those
    /// of chunks dropped since the last flush, which removes them.
    pub fn data_len(&self) -> u64 {
        self.data_len - self.gap_bytes()
    }

    /// Where chunk `n` is. A stored chunk's bytes are checked against its
    /// storage where they are read (`read_stored`, `check_stored_len`,
    /// `chunk_file`), which is what guards an entry of a compressed index
    /// (not checked on open).
    fn loc(&self, n: usize) -> Result<ChunkLoc> {
        ChunkLoc::decode(self.offsets.lookup(n)?)
    }

    /// Whether chunk `n` is a special offset (no stored bytes).
    pub(crate) fn is_special(&self, n: usize) -> Result<bool> {
        Ok(matches!(self.loc(n)?, ChunkLoc::Special(_)))
    }

    /// The index's entries, for a change: a compressed index is expanded,
    /// and its entries checked as an index decoded on open is.
    fn entries_mut(&mut self) -> Result<&mut Vec<i64>> {
        if matches!(self.offsets, OffsetIndex::Compressed(_)) {
            let entries = self.offsets.to_vec()?;
            for (i, &o) in entries.iter().enumerate() {
                check_entry(self.is_sparse(), self.data_len, i, o)?;
            }
            self.offsets = OffsetIndex::Entries(entries);
        }
        self.offsets.entries_mut()
    }

    fn chunk_file(&self, id: i64) -> Result<(IoRef, PathBuf)> {
        match &self.place {
            Place::Sparse { io, dir } => Ok((io.clone(), sparse_chunk_path(dir, id)?)),
            _ => crate::bail!(Failure, "not a sparse frame"),
        }
    }

    /// Reads `buf.len()` bytes at `pos` inside stored chunk `n`, checking
    /// the range against the chunk's own size limit `limit`.
    pub fn read_stored(&self, n: usize, pos: u64, buf: &mut [u8]) -> Result<()> {
        self.read_op(|f| f.read_stored_in_op(n, pos, buf))
    }

    fn read_stored_in_op(&self, n: usize, pos: u64, buf: &mut [u8]) -> Result<()> {
        match self.loc(n)? {
            ChunkLoc::Special(_) => {
                crate::bail!(Failure, "chunk {n} is special and has no stored bytes")
            }
            ChunkLoc::Stored(off) if self.is_sparse() => {
                let (io, path) = self.chunk_file(off)?;
                let mut f = io.open(&path, OpenMode::Read).map_err(|e| {
                    crate::err!(
                        FileOpen,
                        "chunk file of chunk {n} missing from sparse frame: {}",
                        e.detail()
                    )
                })?;
                read_exact_at(f.as_mut(), pos, buf, "sparse chunk")
            }
            ChunkLoc::Stored(off) => {
                let end = (off as u64)
                    .checked_add(pos)
                    .and_then(|p| p.checked_add(buf.len() as u64));
                if end.map_or(true, |e| e > self.data_len) {
                    crate::bail!(ReadBuffer, "read of chunk {n} runs past the data section");
                }
                let at = self.header_len + off as u64 + pos;
                self.read(at, buf, "chunk data")
            }
        }
    }

    /// The location fields of a lazy chunk for stored chunk `n` (see
    /// `schunk::lazy`): contiguous frames give the chunk number and the
    /// chunk's position from the frame start, sparse ones the chunk file id
    /// twice.
    pub(crate) fn lazy_location(&self, n: usize) -> Result<(i32, i64)> {
        let ChunkLoc::Stored(off) = self.loc(n)? else {
            crate::bail!(Failure, "chunk {n} is special and has no stored bytes");
        };
        if self.is_sparse() {
            let id = i32::try_from(off)
                .map_err(|_| crate::err!(InvalidIndex, "sparse chunk id {off} out of range"))?;
            return Ok((id, off));
        }
        let nchunk = i32::try_from(n)
            .map_err(|_| crate::err!(InvalidIndex, "chunk {n} out of the int32 range"))?;
        Ok((nchunk, self.header_len as i64 + off))
    }

    /// The header (first 32 bytes) of chunk `n`, or its special kind.
    pub(crate) fn chunk_info(
        &self,
        n: usize,
    ) -> Result<std::result::Result<ChunkInfo, SpecialOffset>> {
        Ok(self.chunk_header(n)?.map(|(info, _)| info))
    }

    /// Like [`Frame::chunk_info`], also giving the header bytes.
    pub(crate) fn chunk_header(
        &self,
        n: usize,
    ) -> Result<std::result::Result<(ChunkInfo, [u8; EXTENDED_HEADER_LEN]), SpecialOffset>> {
        if let ChunkLoc::Special(s) = self.loc(n)? {
            return Ok(Err(s));
        }
        let mut h = [0u8; EXTENDED_HEADER_LEN];
        self.read_stored(n, 0, &mut h)?;
        let info = ChunkInfo::parse(&h)?;
        if !info.extended {
            crate::bail!(
                InvalidHeader,
                "chunk {n} in frame lacks a Blosc2 extended header"
            );
        }
        Ok(Ok((info, h)))
    }

    /// Checks that stored chunk `n`, `cbytes` long by its header, lies within
    /// its storage: the data section, or for a sparse frame its own file
    /// (returned open, for the read that follows). So nothing sized by a
    /// header is allocated for bytes that are not there.
    pub(crate) fn check_stored_len(
        &self,
        n: usize,
        cbytes: usize,
    ) -> Result<Option<Box<dyn IoFile>>> {
        match self.loc(n)? {
            ChunkLoc::Special(_) => Ok(None),
            ChunkLoc::Stored(id) if self.is_sparse() => {
                let (io, path) = self.chunk_file(id)?;
                let mut f = io.open(&path, OpenMode::Read)?;
                let size = f.size()?;
                if cbytes as u64 > size {
                    crate::bail!(
                        InvalidHeader,
                        "chunk {n} says {cbytes} bytes, its file has {size}"
                    );
                }
                Ok(Some(f))
            }
            ChunkLoc::Stored(off) => {
                if off as u64 + cbytes as u64 > self.data_len {
                    crate::bail!(
                        InvalidHeader,
                        "chunk {n} ({cbytes} bytes at {off}) runs past the data section"
                    );
                }
                Ok(None)
            }
        }
    }

    /// Chunk `n` as stored: its bytes, or the special kind its offset encodes.
    pub fn chunk(&self, n: usize) -> Result<FrameChunk<'_>> {
        Ok(match self.read_op(|f| f.find_chunk(n))? {
            ChunkAt::Special(s) => FrameChunk::Special(s),
            ChunkAt::Memory(start, len) => match &self.place {
                Place::Memory(m) => FrameChunk::Bytes(Cow::Borrowed(&m.data[start..start + len])),
                _ => crate::bail!(Failure, "frame place changed"),
            },
            ChunkAt::Read(bytes) => FrameChunk::Bytes(Cow::Owned(bytes)),
        })
    }

    /// Where chunk `n`'s bytes are, reading them from a file.
    fn find_chunk(&self, n: usize) -> Result<ChunkAt> {
        let (info, header) = match self.chunk_header(n)? {
            Err(s) => return Ok(ChunkAt::Special(s)),
            Ok(i) => i,
        };
        let cb = info.cbytes as usize;
        let mut sparse_file = self.check_stored_len(n, cb)?;
        let loc = self.loc(n)?;
        if let (ChunkLoc::Stored(off), true) = (loc, matches!(self.place, Place::Memory(_))) {
            return Ok(ChunkAt::Memory(self.header_len as usize + off as usize, cb));
        }
        // The header was just read by `chunk_header`: fetch only the rest.
        // (`check_stored_len` bounded `cb` by the bytes stored.)
        let mut buf = crate::mem::zeroed(cb)?;
        buf[..EXTENDED_HEADER_LEN].copy_from_slice(&header);
        let dst = &mut buf[EXTENDED_HEADER_LEN..cb];
        match sparse_file.as_mut() {
            Some(f) => read_exact_at(f.as_mut(), EXTENDED_HEADER_LEN as u64, dst, "sparse chunk")?,
            None => self.read_stored(n, EXTENDED_HEADER_LEN as u64, dst)?,
        }
        Ok(ChunkAt::Read(buf))
    }

    /// Stores `chunk` and returns its offset entry (contiguous: appended to
    /// the data section; sparse: a new chunk file).
    fn store(&mut self, chunk: &[u8], special: Option<SpecialOffset>) -> Result<i64> {
        if let Some(s) = special {
            return Ok(s.encode());
        }
        if self.is_sparse() {
            // Past the files of dropped chunks too: the published index may
            // still list them.
            let doomed = self.doomed_max_id();
            let id = self
                .entries_mut()?
                .iter()
                .copied()
                .filter(|&o| o >= 0)
                .chain(doomed)
                .max()
                .map_or(0, |m| m + 1);
            self.write_chunk_file(id, chunk)?;
            return Ok(id);
        }
        if self.ordered() && self.order.shadow.is_none() {
            match &self.order.published {
                // The published frame's trailer follows its header, where
                // the chunk goes: it is written into a shadow.
                Some(p) if p.empty => {
                    let copy = self.data_len > 0;
                    self.begin_shadow(copy)?;
                }
                Some(_) => return self.store_ordered(chunk),
                None => {}
            }
        }
        // A new chunk goes where the data section ends once its gaps are
        // closed, so the frame never reaches past the end that the chunks
        // it keeps give it (bytes may follow a frame in its file).
        self.close_gaps()?;
        let off = self.data_len;
        self.write(self.header_len + off, chunk)?;
        self.data_len += chunk.len() as u64;
        Ok(off as i64)
    }

    fn write_chunk_file(&mut self, id: i64, chunk: &[u8]) -> Result<()> {
        let (io, path) = self.chunk_file(id)?;
        let mut f = io.open(&path, OpenMode::Create)?;
        f.write_at(0, chunk)?;
        if crate::frame::durable::fsync_enabled() {
            f.sync()?;
        }
        Ok(())
    }

    /// Whether an entry other than `n` holds location `loc` (only a frame
    /// not written by this library or the reference shares stored chunks).
    fn shared(&mut self, n: usize, loc: i64) -> Result<bool> {
        Ok(self
            .entries_mut()?
            .iter()
            .enumerate()
            .any(|(i, &o)| i != n && o == loc))
    }

    /// Drops the stored bytes of entry `old` (unless another entry shares
    /// them): a sparse chunk's file is removed; in a contiguous frame the
    /// bytes become a gap, closed at the next flush.
    fn unstore(&mut self, skip: usize, old: i64) -> Result<()> {
        if old < 0 || self.shared(skip, old)? {
            return Ok(());
        }
        if self.is_sparse() {
            // Removed once an index without it is published.
            let (_, path) = self.chunk_file(old)?;
            return self.doom(old, path);
        }
        let mut h = [0u8; EXTENDED_HEADER_LEN];
        self.read(self.header_len + old as u64, &mut h, "chunk header")?;
        let len = ChunkInfo::parse(&h)?.cbytes as u64;
        let src = old as u64 + len;
        if src > self.data_len {
            crate::bail!(InvalidHeader, "chunk at {old} runs past the data section");
        }
        if !self.chunks_disjoint() {
            return Ok(());
        }
        // A file frame's chunk stays in use until the next publish.
        let list = if self.ordered() {
            &mut self.order.pending_free
        } else {
            &mut self.gaps
        };
        list.try_reserve(1)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to record a dropped chunk"))?;
        list.push(gaps::Gap {
            start: old as u64,
            len,
        });
        Ok(())
    }

    /// Whether no two distinct stored chunks of this contiguous frame share
    /// a byte (see [`ChunkLayout`]). Learnt once per opened frame from the
    /// header of each stored chunk: a compaction, the only caller, moves the
    /// rest of the data section anyway. A header that does not read counts
    /// as a possible overlap.
    fn chunks_disjoint(&mut self) -> bool {
        if self.layout == ChunkLayout::Unchecked {
            self.layout = match self.stored_chunks_disjoint() {
                Ok(true) => ChunkLayout::Disjoint,
                _ => ChunkLayout::MayOverlap,
            };
        }
        self.layout == ChunkLayout::Disjoint
    }

    fn stored_chunks_disjoint(&mut self) -> Result<bool> {
        let entries = self.entries_mut()?;
        // As many starts as entries, which a corrupt index can make more
        // than memory holds (an error here leaves the bytes in place).
        let mut starts: Vec<u64> = Vec::new();
        starts.try_reserve_exact(entries.len()).map_err(|_| {
            crate::err!(MemoryAlloc, "no memory for {} chunk starts", entries.len())
        })?;
        starts.extend(entries.iter().filter(|&&o| o >= 0).map(|&o| o as u64));
        starts.sort_unstable();
        starts.dedup();
        let mut end = 0;
        let mut h = [0u8; EXTENDED_HEADER_LEN];
        for start in starts {
            if start < end {
                return Ok(false);
            }
            self.read(self.header_len + start, &mut h, "chunk header")?;
            end = start + ChunkInfo::parse(&h)?.cbytes as u64;
        }
        Ok(end <= self.data_len)
    }

    /// Inserts `chunk` at position `n` (`n == nchunks` appends).
    pub fn insert(&mut self, n: usize, chunk: &[u8], special: Option<SpecialOffset>) -> Result<()> {
        self.op(|f| f.insert_in_op(n, chunk, special))
    }

    fn insert_in_op(
        &mut self,
        n: usize,
        chunk: &[u8],
        special: Option<SpecialOffset>,
    ) -> Result<()> {
        if n > self.offsets.len() {
            crate::bail!(
                InvalidIndex,
                "insert position {n} past {} chunks",
                self.offsets.len()
            );
        }
        self.entries_mut()?
            .try_reserve(1)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory for one more offsets entry"))?;
        let loc = self.store(chunk, special)?;
        self.entries_mut()?.insert(n, loc);
        Ok(())
    }

    /// Replaces chunk `n`.
    pub fn update(&mut self, n: usize, chunk: &[u8], special: Option<SpecialOffset>) -> Result<()> {
        self.op(|f| f.update_in_op(n, chunk, special))
    }

    fn update_in_op(
        &mut self,
        n: usize,
        chunk: &[u8],
        special: Option<SpecialOffset>,
    ) -> Result<()> {
        let old = self.loc(n)?.encode();
        // Expanded before anything is written, so a memory error leaves the
        // frame as it was.
        self.entries_mut()?;
        // A sparse chunk gets a new file, where the reference rewrites its
        // file in place: the published index reads the old one until the
        // new index is published.
        let gaps = self.gaps.len();
        let pending = self.order.pending_free.len();
        let doomed = self.order.doomed.len();
        self.unstore(n, old)?;
        let loc = match self.store(chunk, special) {
            Ok(loc) => loc,
            Err(e) => {
                // Entry `n` still points at the old bytes: they must stay.
                self.gaps.truncate(gaps);
                self.order.pending_free.truncate(pending);
                self.order.doomed.truncate(doomed);
                return Err(e);
            }
        };
        self.entries_mut()?[n] = loc;
        Ok(())
    }

    /// Removes chunk `n`.
    pub fn delete(&mut self, n: usize) -> Result<()> {
        self.op(|f| f.delete_in_op(n))
    }

    fn delete_in_op(&mut self, n: usize) -> Result<()> {
        let old = self.loc(n)?.encode();
        self.entries_mut()?;
        self.unstore(n, old)?;
        self.entries_mut()?.remove(n);
        Ok(())
    }

    /// Appends `count` entries that all stand for the special chunk `kind`
    /// (a special fill), keeping the index as one repeated-value chunk when
    /// the frame holds nothing else, as the reference does.
    pub fn fill_special(&mut self, kind: SpecialOffset, count: usize) -> Result<()> {
        let v = kind.encode();
        if self.offsets.len() == 0 {
            self.offsets = OffsetIndex::Repeated {
                value: v,
                len: count,
            };
            return Ok(());
        }
        let entries = self.entries_mut()?;
        entries
            .try_reserve(count)
            .map_err(|_| crate::err!(MemoryAlloc, "no room for {count} offsets"))?;
        entries.extend(std::iter::repeat(v).take(count));
        Ok(())
    }

    /// Permutes the index: new entry `i` is old entry `order[i]`.
    pub fn reorder(&mut self, order: &[i64]) -> Result<()> {
        let n = self.offsets.len();
        if order.len() != n {
            crate::bail!(
                InvalidParam,
                "order has {} entries, frame has {n} chunks",
                order.len()
            );
        }
        let mut seen = vec![false; n];
        let current = self.offsets.to_vec()?;
        let mut next = super::index::reserve(n)?;
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
            next.push(current[i]);
        }
        self.offsets = OffsetIndex::Entries(next);
        Ok(())
    }

    /// Rewrites offsets index, trailer and header from `header` (whose
    /// `cbytes` is replaced by the data-section length for contiguous
    /// frames) and truncates the file to the frame's new end, unless other
    /// bytes follow the frame (see `tail_follows`).
    pub fn flush(&mut self, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<()> {
        self.op(|f| f.flush_in_op(header, vlmeta))
    }

    fn flush_in_op(&mut self, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<()> {
        let r = self.flush_routed(header, vlmeta);
        if r.is_err() {
            self.abandon_shadow();
        }
        r
    }

    /// The header (sizes but the frame length set), offsets index and
    /// trailer that `header` and `vlmeta` make for the frame as it is.
    fn meta_parts(
        &self,
        header: &FrameHeader,
        vlmeta: &[Metalayer],
    ) -> Result<(FrameHeader, Vec<u8>, Vec<u8>)> {
        let mut h = header.clone();
        h.frame_type = if self.is_sparse() {
            FrameType::Sparse
        } else {
            FrameType::Contiguous
        };
        if !self.is_sparse() {
            h.cbytes = self.data_len as i64;
        }
        h.has_vlmetalayers = !vlmeta.is_empty();
        let index = match &self.offsets {
            OffsetIndex::Repeated { len: 0, .. } => Vec::new(),
            OffsetIndex::Repeated { value, len } => codec::repeated_offsets(*value, *len)?,
            OffsetIndex::Entries(v) if v.is_empty() => Vec::new(),
            OffsetIndex::Entries(v) => codec::compress_offsets(v)?,
            OffsetIndex::Compressed(c) => c.chunk().to_vec(),
        };
        let tr = trailer::encode(vlmeta)?;
        Ok((h, index, tr))
    }

    /// Writes the frame's metadata over the old (in memory, in a shadow
    /// file, or where no order is possible).
    fn flush_in_place(&mut self, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<()> {
        self.close_gaps()?;
        let (mut h, index, tr) = self.meta_parts(header, vlmeta)?;
        h.frame_len = 0;
        let hlen = h.encode()?.len() as u64;
        if hlen != self.header_len && self.data_len > 0 {
            // The header changed size: move the data section after it.
            self.move_bytes(self.header_len, hlen, self.data_len)?;
        }
        self.header_len = hlen;
        let frame_len = hlen + self.data_len + index.len() as u64 + tr.len() as u64;
        h.frame_len = frame_len as i64;
        let hbytes = h.encode()?;
        let pos = hlen + self.data_len;
        self.write(pos, &index)?;
        self.write(pos + index.len() as u64, &tr)?;
        self.write(0, &hbytes)?;
        if !self.tail_follows {
            self.truncate(frame_len)?;
        }
        self.frame_len = frame_len;
        let mut tail = index;
        tail.extend_from_slice(&tr);
        self.note_published(hbytes, pos, h.nbytes, Some(tail));
        Ok(())
    }

    /// The whole frame as bytes (contiguous frames; the index file for sparse ones).
    pub fn to_bytes(&mut self) -> Result<Vec<u8>> {
        self.op(|f| f.to_bytes_in_op())
    }

    fn to_bytes_in_op(&mut self) -> Result<Vec<u8>> {
        let mut v = crate::mem::zeroed(self.frame_len as usize)?;
        self.read(0, &mut v, "frame")?;
        Ok(v)
    }

    /// The frame bytes of an in-memory frame, borrowed.
    pub fn memory_bytes(&self) -> Option<&[u8]> {
        match &self.place {
            Place::Memory(m) => m.data.get(..usize::try_from(self.frame_len).ok()?),
            _ => None,
        }
    }

    /// Gives back the memory buffer of an in-memory frame.
    pub fn into_memory(self) -> Option<Vec<u8>> {
        match self.place {
            Place::Memory(m) => Some(m.data),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
