//! Ordering a file frame's writes so that a writer killed at any instant,
//! or one whose disk fills up, leaves a frame that opens with everything
//! acknowledged (docs/crash-safety.md).
//!
//! The bytes on disk always hold a *published* frame: the one the header at
//! position 0 describes. Nothing it uses is written until a new frame that
//! no longer uses it is published. New chunks go into bytes the published
//! frame does not use (free bytes of its data section, or past the end of
//! its live chunks); then the new offsets index and trailer; then the
//! header, whose one write publishes them. The index and trailer must follow
//! the data section, so when new bytes would cover the published ones, a
//! copy of those is first written further on and published (the data
//! section then ends with unused bytes, which the reference reads past):
//! the frame stays the same, only where its index lies changes.
//!
//! Changes the format leaves no such order for (a frame with no chunks
//! keeps its trailer right after its header; a header that changes size
//! moves every chunk) are written to a new file renamed over the old
//! (the *shadow*), where the backend can rename; sparse frames rewrite
//! their index file that way, and remove the files of dropped chunks only
//! once the index that drops them is published.

use std::path::{Path, PathBuf};

use super::gaps::Gap;
use super::{Frame, Handle, Place, SPARSE_INDEX};
use crate::frame::durable;
use crate::frame::header::Pos;
use crate::frame::io::{read_exact_at, IoFile, IoRef, OpenMode};
use crate::Result;

/// Most bytes copied through memory at once into a shadow file.
const COPY_PIECE: usize = 4 << 20;

/// The frame the bytes on disk hold now.
#[derive(Clone, Debug)]
pub(super) struct Published {
    /// Its header, as written at position 0.
    pub(super) header: Vec<u8>,
    /// Where its offsets index starts (the end of its data section).
    pub(super) index_at: u64,
    pub(super) frame_len: u64,
    /// It holds no data (nbytes 0): its trailer then follows the header,
    /// where the reference reads it, and nothing can be ordered before it.
    pub(super) empty: bool,
    /// Its index and trailer, when known, so that moving or comparing them
    /// reads nothing back.
    pub(super) tail: Option<Vec<u8>>,
}

/// What a frame keeps to order its writes.
#[derive(Default)]
pub(super) struct Ordering {
    /// The published frame (file frames; `None` in memory, or before the
    /// first publish).
    pub(super) published: Option<Published>,
    /// Bytes of the data section that no chunk of the published frame uses.
    pub(super) free: Vec<Gap>,
    /// Bytes of chunks dropped since the last publish: free once it is done.
    pub(super) pending_free: Vec<Gap>,
    /// The new file being written in place of the frame's, if any.
    pub(super) shadow: Option<PathBuf>,
    /// Where the bytes that followed the frame in its file started when
    /// the shadow began (file position): they are copied into it last.
    pub(super) shadow_suffix: Option<u64>,
    /// Sparse chunk files (id, path) to remove once the index that drops
    /// them is published.
    pub(super) doomed: Vec<(i64, PathBuf)>,
}

/// How a flush writes the frame.
enum Route {
    /// In place, as before: memory frames, and files the backend cannot
    /// rename where no order exists.
    InPlace,
    /// Into a new file renamed over the old; `copy` copies the frame first.
    Shadow { copy: bool },
    /// New bytes in unused space, then one header write.
    Ordered,
}

/// The name of the shadow of `path`: beside it, so that the rename stays
/// on one file system.
fn shadow_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".b2tmp");
    path.with_file_name(name)
}

/// Sets the frame length and data-section length of an encoded header.
pub(super) fn patch_sizes(header: &mut [u8], frame_len: u64, cbytes: u64) -> Result<()> {
    // Each value follows its msgpack marker: uint64 and int64.
    let (fl, cb) = (Pos::FRAME_LEN, Pos::CBYTES);
    if header.len() < cb + 8 || header[fl - 1] != 0xcf || header[cb - 1] != 0xd3 {
        crate::bail!(InvalidHeader, "frame header without its size fields");
    }
    header[fl..fl + 8].copy_from_slice(&frame_len.to_be_bytes());
    header[cb..cb + 8].copy_from_slice(&(cbytes as i64).to_be_bytes());
    Ok(())
}

/// Adds `gaps` to the sorted list `free`, merging neighbours.
fn add_free(free: &mut Vec<Gap>, gaps: Vec<Gap>) {
    if gaps.is_empty() {
        return;
    }
    free.extend(gaps);
    free.sort_unstable_by_key(|g| g.start);
    let mut merged: Vec<Gap> = Vec::with_capacity(free.len());
    for g in free.drain(..) {
        match merged.last_mut() {
            Some(last) if last.start + last.len >= g.start => {
                let end = (last.start + last.len).max(g.start + g.len);
                last.len = end - last.start;
            }
            _ => merged.push(g),
        }
    }
    *free = merged;
}

impl Frame {
    /// Whether this frame's writes are ordered: a contiguous frame in a
    /// file that nothing follows. Bytes after a frame (another frame, or a
    /// container's data) leave no free space to write into that is not
    /// theirs: such a frame is edited in place, as the reference does.
    pub(super) fn ordered(&self) -> bool {
        matches!(self.place, Place::File { .. }) && !self.tail_follows
    }

    /// Whether other bytes follow the frame's `frame_len` bytes in its file
    /// of `avail` bytes from the frame start (see `Frame::tail_follows`). A
    /// frame that starts its file is followed only by another frame (as
    /// `SChunk::append_file` makes): other bytes there are what a writer
    /// stopped before its last truncation left, unused.
    pub(super) fn bytes_follow(&mut self, frame_len: u64, avail: u64) -> bool {
        match &self.place {
            Place::File { offset: 0, .. } if avail > frame_len => {
                let mut magic = [0u8; 10];
                let read = self.read(frame_len, &mut magic, "bytes after the frame");
                read.is_err() || &magic[..] == b"\x9e\xa8b2frame\0"
            }
            Place::File { .. } => avail > frame_len,
            _ => false,
        }
    }

    /// Bytes of the data section no chunk uses (published or pending).
    pub fn unused_bytes(&self) -> u64 {
        let sum = |v: &[Gap]| v.iter().map(|g| g.len).sum::<u64>();
        sum(&self.order.free) + sum(&self.order.pending_free)
    }

    /// Whether every write of this frame goes into a shadow of its whole
    /// file: other bytes follow it, so no byte past its end is free, and
    /// the backend can rename.
    pub(super) fn whole_file_shadow(&self) -> bool {
        self.tail_follows && matches!(&self.place, Place::File { io, .. } if io.can_rename())
    }

    /// The backend, the file a shadow replaces and the shadow's path, when
    /// the backend can rename. A frame at an offset shares its file: its
    /// shadow holds the bytes before and after it too.
    pub(super) fn shadow_target(&self) -> Option<(IoRef, PathBuf, PathBuf)> {
        match &self.place {
            Place::File { io, path, .. } if io.can_rename() => {
                Some((io.clone(), path.clone(), shadow_name(path)))
            }
            Place::Sparse { io, dir } if io.can_rename() => {
                let p = dir.join(SPARSE_INDEX);
                let s = shadow_name(&p);
                Some((io.clone(), p, s))
            }
            _ => None,
        }
    }

    /// The path the frame file opens at: its shadow while one is written.
    pub(super) fn shadow_path(&self) -> Option<&Path> {
        self.order.shadow.as_deref()
    }

    /// Starts a shadow, unless one is being written already; with `copy`,
    /// the frame's bytes are copied into it first. Returns false when the
    /// backend or place allows none.
    pub(super) fn begin_shadow(&mut self, copy: bool) -> Result<bool> {
        if self.order.shadow.is_some() {
            return Ok(true);
        }
        let Some((io, _, tmp)) = self.shadow_target() else {
            return Ok(false);
        };
        let mut out = io.open(&tmp, OpenMode::Create)?;
        // The bytes before a frame at an offset, then the frame if asked.
        let base = self.base();
        let len = base + if copy { self.frame_len } else { 0 };
        if let Err(e) = self.copy_out(out.as_mut(), 0, 0, len) {
            drop(out);
            let _ = io.remove(&tmp);
            return Err(e);
        }
        *self.slot_mut() = Some(Handle {
            file: out,
            mode: OpenMode::Create,
        });
        self.order.shadow = Some(tmp);
        self.order.shadow_suffix = self.tail_follows.then_some(base + self.frame_len);
        Ok(true)
    }

    /// Copies `len` bytes of the frame's file at file position `from` to
    /// `to` in `out`, a piece at a time.
    fn copy_out(&self, out: &mut dyn IoFile, from: u64, to: u64, len: u64) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let piece = usize::try_from(len).unwrap_or(COPY_PIECE).min(COPY_PIECE);
        let mut buf = crate::mem::zeroed(piece)?;
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(piece as u64) as usize;
            let at = from + done;
            self.with_reader(|f| read_exact_at(f, at, &mut buf[..n], "frame file"))?;
            out.write_at(to + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// Copies the bytes that followed the frame into its shadow: where they
    /// were if the new frame ends before, else right after it (so nothing
    /// of them is lost, though a reader of them must then look there).
    fn copy_suffix(&mut self, from: u64) -> Result<()> {
        let Some((io, target, _)) = self.shadow_target() else {
            return Ok(());
        };
        let mut old = io.open(&target, OpenMode::Read)?;
        let size = old.size()?;
        let to = from.max(self.base() + self.frame_len);
        let Some(Handle { file: out, .. }) = self.slot_mut().as_mut() else {
            crate::bail!(Failure, "the frame's shadow is not open");
        };
        let mut done = 0u64;
        let len = size.saturating_sub(from);
        let piece = usize::try_from(len).unwrap_or(COPY_PIECE).min(COPY_PIECE);
        let mut buf = crate::mem::zeroed(piece)?;
        while done < len {
            let n = (len - done).min(piece as u64) as usize;
            read_exact_at(
                old.as_mut(),
                from + done,
                &mut buf[..n],
                "bytes after the frame",
            )?;
            out.write_at(to + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// Puts the shadow in the frame file's place: synced first when fsync
    /// is on, then renamed, then the directory synced.
    fn end_shadow(&mut self) -> Result<()> {
        if self.order.shadow.is_none() {
            return Ok(());
        }
        let synced = match self.order.shadow_suffix.take() {
            Some(from) => self.copy_suffix(from).and_then(|()| self.sync_point()),
            None => self.sync_point(),
        };
        let tmp = self.order.shadow.take().unwrap_or_default();
        *self.slot_mut() = None;
        let Some((io, target, _)) = self.shadow_target() else {
            crate::bail!(Failure, "the frame's place lost its shadow");
        };
        let r = synced.and_then(|()| io.rename(&tmp, &target));
        if r.is_err() {
            let _ = io.remove(&tmp);
            return r;
        }
        if durable::fsync_enabled() {
            io.sync_dir(target.parent().unwrap_or(Path::new("")))?;
        }
        Ok(())
    }

    /// Drops a shadow left by a failed write: the frame file is as published.
    pub(super) fn abandon_shadow(&mut self) {
        self.order.shadow_suffix = None;
        if let Some(tmp) = self.order.shadow.take() {
            *self.slot_mut() = None;
            if let Some((io, _, _)) = self.shadow_target() {
                let _ = io.remove(&tmp);
            }
        }
    }

    /// Whether the bytes on disk still hold the published frame intact:
    /// the edits since wrote only where it has no bytes (ordered edits of a
    /// file frame that holds data, writes into a shadow, new sparse chunk
    /// files), so dropping them loses nothing. False in memory and for
    /// frames edited in place.
    pub(crate) fn published_intact(&self) -> bool {
        match &self.place {
            Place::Memory(_) => false,
            Place::Sparse { .. } => true,
            Place::File { .. } => {
                self.order.shadow.is_some()
                    || (self.ordered() && self.order.published.as_ref().is_some_and(|p| !p.empty))
            }
        }
    }

    /// Drops the shadow of unpublished edits, before the handle re-reads
    /// the published frame (see [`Frame::published_intact`]).
    pub(crate) fn discard_unpublished(&mut self) {
        self.abandon_shadow();
    }

    /// Renames the frame's file, one it starts and that has no edits being
    /// written, to `target`, replacing what is there: a new frame written
    /// beside its path and moved onto it once whole, so that the path holds
    /// the old file or the whole new one. The directory is synced after
    /// when fsync is on (the frame was at its publish).
    pub(crate) fn move_file(&mut self, target: &Path) -> Result<()> {
        let Place::File {
            io,
            path,
            offset: 0,
        } = &self.place
        else {
            crate::bail!(InvalidParam, "only a frame that starts its file moves");
        };
        if self.order.shadow.is_some() || !io.can_rename() {
            crate::bail!(Failure, "the frame file cannot be moved now");
        }
        let (io, from) = (io.clone(), path.clone());
        // Reopened at the new path by the next access.
        *self.slot_mut() = None;
        io.rename(&from, target)?;
        if let Place::File { path, .. } = &mut self.place {
            *path = target.to_owned();
        }
        if durable::fsync_enabled() {
            io.sync_dir(target.parent().unwrap_or(Path::new("")))?;
        }
        Ok(())
    }

    /// An fsync of the frame file, when asked for (see `frame::durable`).
    pub(super) fn sync_point(&mut self) -> Result<()> {
        if matches!(self.place, Place::Memory(_)) || !durable::fsync_enabled() {
            return Ok(());
        }
        self.handle(true)?.sync()
    }

    /// Records the frame just written as the published one, and the bytes
    /// its dropped chunks held as free.
    pub(super) fn note_published(
        &mut self,
        header: Vec<u8>,
        index_at: u64,
        nbytes: i64,
        tail: Option<Vec<u8>>,
    ) {
        if !self.ordered() {
            return;
        }
        let tail = tail.filter(|t| index_at + t.len() as u64 == self.frame_len);
        self.order.published = Some(Published {
            header,
            index_at,
            frame_len: self.frame_len,
            empty: nbytes == 0,
            tail,
        });
        let pending = std::mem::take(&mut self.order.pending_free);
        add_free(&mut self.order.free, pending);
    }

    /// Forgets the free bytes: the data section was rewritten.
    pub(super) fn forget_free(&mut self) {
        self.order.free.clear();
        self.order.pending_free.clear();
    }

    /// Makes sure that frame bytes `from..to` hold nothing of the published
    /// index and trailer: if they do, a copy of those is written at `at`
    /// or later (past the published end) and published first.
    fn clear_published_tail(&mut self, from: u64, to: u64, at: u64) -> Result<()> {
        let Some(p) = &self.order.published else {
            return Ok(());
        };
        if to <= p.index_at || from >= p.frame_len {
            return Ok(());
        }
        let (index_at, end) = (p.index_at, p.frame_len);
        let mut header = p.header.clone();
        let x = at.max(to).max(end);
        let tail = match p.tail.clone() {
            Some(t) => t,
            None => {
                let mut t = crate::mem::zeroed((end - index_at) as usize)?;
                self.read(index_at, &mut t, "offsets index and trailer")?;
                t
            }
        };
        self.write(x, &tail)?;
        self.sync_point()?;
        let new_len = x + tail.len() as u64;
        patch_sizes(&mut header, new_len, x - self.header_len)?;
        self.write(0, &header[..Pos::CBYTES + 8])?;
        self.sync_point()?;
        self.frame_len = new_len;
        if let Some(p) = self.order.published.as_mut() {
            p.header = header;
            p.index_at = x;
            p.frame_len = new_len;
        }
        Ok(())
    }

    /// Stores a chunk of a file frame where the published frame has no
    /// byte: in free bytes it fits, else after the data section (moving
    /// the published index out of the way first). Returns its offset.
    pub(super) fn store_ordered(&mut self, chunk: &[u8]) -> Result<i64> {
        let len = chunk.len() as u64;
        if let Some(i) = self.order.free.iter().position(|g| g.len >= len) {
            let g = self.order.free[i];
            self.write(self.header_len + g.start, chunk)?;
            if g.len == len {
                self.order.free.remove(i);
            } else {
                self.order.free[i] = Gap {
                    start: g.start + len,
                    len: g.len - len,
                };
            }
            return Ok(g.start as i64);
        }
        let off = self.data_len;
        let from = self.header_len + off;
        let to = from + len;
        // Room after the chunk for the index and trailer the next publish
        // writes there, so that it need not move the published ones again.
        let room = self
            .order
            .published
            .as_ref()
            .map_or(0, |p| p.frame_len - p.index_at)
            + 8 * (self.offsets.len() as u64 + 2)
            + 64;
        self.clear_published_tail(from, to, to + room)?;
        self.write(from, chunk)?;
        self.data_len += len;
        Ok(off as i64)
    }

    /// How a flush writing header `hlen` bytes long goes.
    fn route(&mut self, hlen: u64) -> Route {
        match &self.place {
            Place::Memory(_) => return Route::InPlace,
            Place::Sparse { .. } => return Route::Shadow { copy: false },
            Place::File { .. } if self.whole_file_shadow() => return Route::Shadow { copy: true },
            Place::File { .. } if !self.ordered() => return Route::InPlace,
            Place::File { .. } => {}
        }
        if self.order.shadow.is_some() {
            return Route::Shadow { copy: false };
        }
        let Some(p) = &self.order.published else {
            return Route::InPlace;
        };
        if self.offsets.len() == 0 && self.data_len > 0 {
            // No chunk is left: the trailer goes right after the header,
            // over the chunks the published frame still has.
            self.data_len = 0;
            self.forget_free();
            return Route::Shadow { copy: false };
        }
        if p.empty {
            return Route::Shadow {
                copy: self.data_len > 0,
            };
        }
        if hlen != self.header_len && self.data_len > 0 {
            return Route::Shadow { copy: true };
        }
        Route::Ordered
    }

    /// Rewrites offsets index, trailer and header (see `Frame::flush`) in
    /// the order the place allows.
    pub(super) fn flush_routed(
        &mut self,
        header: &crate::frame::FrameHeader,
        vlmeta: &[crate::frame::Metalayer],
    ) -> Result<()> {
        if matches!(self.place, Place::Memory(_)) {
            return self.flush_in_place(header, vlmeta);
        }
        let (mut h, index, tr) = self.meta_parts(header, vlmeta)?;
        h.frame_len = 0;
        let hlen = h.encode()?.len() as u64;
        let r = match self.route(hlen) {
            Route::InPlace => self.flush_in_place(header, vlmeta),
            Route::Shadow { copy } => {
                let shadowed = self.begin_shadow(copy)?;
                self.flush_in_place(header, vlmeta)?;
                if shadowed {
                    self.end_shadow()?;
                    if self.ordered() {
                        self.forget_free();
                    }
                }
                Ok(())
            }
            Route::Ordered => self.flush_ordered(h, index, tr),
        };
        if r.is_ok() {
            self.remove_doomed();
        }
        r
    }

    /// The ordered publish: index and trailer where the data section ends
    /// (the published ones moved first if they are there), then the header.
    fn flush_ordered(
        &mut self,
        mut h: crate::frame::FrameHeader,
        mut index: Vec<u8>,
        tr: Vec<u8>,
    ) -> Result<()> {
        let pos = self.header_len + self.data_len;
        index.extend_from_slice(&tr);
        let tail = index;
        let end = pos + tail.len() as u64;
        h.frame_len = end as i64;
        let hbytes = h.encode()?;
        if !self.published_tail_is(pos, &tail)? {
            self.clear_published_tail(pos, end, end)?;
            self.write(pos, &tail)?;
            self.sync_point()?;
        }
        self.write(0, &hbytes)?;
        self.sync_point()?;
        if !self.tail_follows {
            // What lies past the published end is unused: a failure to
            // drop it loses nothing.
            let _ = self.truncate(end);
        }
        self.frame_len = end;
        self.note_published(hbytes, pos, h.nbytes, Some(tail));
        Ok(())
    }

    /// Whether the published index and trailer are `tail`, at `pos`.
    fn published_tail_is(&mut self, pos: u64, tail: &[u8]) -> Result<bool> {
        let Some(p) = &self.order.published else {
            return Ok(false);
        };
        if p.index_at != pos || p.frame_len != pos + tail.len() as u64 {
            return Ok(false);
        }
        if let Some(t) = &p.tail {
            return Ok(t == tail);
        }
        let mut now = crate::mem::zeroed(tail.len())?;
        self.read(pos, &mut now, "offsets index and trailer")?;
        Ok(now == tail)
    }

    /// Removes the sparse chunk files the published index no longer lists.
    fn remove_doomed(&mut self) {
        let doomed = std::mem::take(&mut self.order.doomed);
        if let Place::Sparse { io, .. } = &self.place {
            for (_, path) in doomed {
                // A file left behind costs space, never data.
                let _ = io.remove(&path);
            }
        }
    }

    /// A sparse chunk file to remove after the next publish.
    pub(super) fn doom(&mut self, id: i64, path: PathBuf) -> Result<()> {
        self.order
            .doomed
            .try_reserve(1)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to record a dropped chunk"))?;
        self.order.doomed.push((id, path));
        Ok(())
    }

    /// The highest sparse chunk id that a file may still hold for the
    /// published index (dropped ones until their removal).
    pub(super) fn doomed_max_id(&self) -> Option<i64> {
        self.order.doomed.iter().map(|(id, _)| *id).max()
    }
}
