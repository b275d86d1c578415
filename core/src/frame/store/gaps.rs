//! Closing the gaps that dropped chunks leave in a contiguous frame's data
//! section, and moving bytes within a frame.
//!
//! Replacing or removing a stored chunk leaves its bytes unused. The
//! reference closes that gap when it replaces a chunk and keeps it when it
//! deletes one; this library closes both, so a frame's size follows what it
//! holds. Closing each gap as it appeared
//! moved the whole rest of the data section once per chunk, which made a
//! resize that drops many chunks quadratic in the data, and did it through
//! one buffer as large as that rest, which for a file larger than memory
//! aborted the process. Gaps are now recorded as chunks are dropped and
//! closed together when the frame is next written ([`Frame::flush`]), or
//! before a chunk is stored, since a new chunk goes where the data section
//! ends: one pass over the bytes after the first gap, through a buffer of at
//! most [`MOVE_PIECE`] bytes. The frame written is the same, byte for byte.

use super::Frame;
use super::Place;
use crate::Result;

/// Most bytes a move holds in memory at once.
const MOVE_PIECE: usize = 4 << 20;

/// The bytes of a dropped chunk: `len` bytes at `start` in the data section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Gap {
    pub(super) start: u64,
    pub(super) len: u64,
}

impl Frame {
    /// Bytes held by gaps not yet closed.
    pub(super) fn gap_bytes(&self) -> u64 {
        self.gaps.iter().map(|g| g.len).sum()
    }

    /// Closes every recorded gap: each run of kept bytes moves down over the
    /// gaps before it, and each offsets entry drops by their length.
    pub(super) fn close_gaps(&mut self) -> Result<()> {
        if self.gaps.is_empty() {
            return Ok(());
        }
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.sort_unstable_by_key(|g| g.start);
        // Distinct chunks of a frame whose chunks do not overlap (the only
        // frames that record gaps) never share a byte, and a chunk is
        // dropped once: overlapping gaps mean the bookkeeping is wrong, and
        // closing them would move bytes that stay.
        let mut end = 0;
        for g in &gaps {
            if g.start < end || g.start + g.len > self.data_len {
                crate::bail!(
                    Failure,
                    "dropped chunk bytes at {} ({} bytes) overlap others or the end",
                    g.start,
                    g.len
                );
            }
            end = g.start + g.len;
        }
        // closed_before[i]: bytes of gaps[..i].
        let mut closed_before = Vec::with_capacity(gaps.len() + 1);
        closed_before.push(0u64);
        for (i, g) in gaps.iter().enumerate() {
            let closed = closed_before[i] + g.len;
            closed_before.push(closed);
            let from = g.start + g.len;
            let until = gaps.get(i + 1).map_or(self.data_len, |next| next.start);
            let h = self.header_len;
            self.move_bytes(h + from, h + from - closed, until - from)?;
        }
        for o in self.entries_mut()?.iter_mut().filter(|o| **o >= 0) {
            let below = gaps.partition_point(|g| g.start < *o as u64);
            *o -= closed_before[below] as i64;
        }
        self.data_len -= closed_before[gaps.len()];
        Ok(())
    }

    /// Moves `len` bytes at frame position `from` to `to`; the ranges may
    /// overlap.
    pub(super) fn move_bytes(&mut self, from: u64, to: u64, len: u64) -> Result<()> {
        self.move_bytes_by(from, to, len, MOVE_PIECE)
    }

    /// As [`Frame::move_bytes`], at most `piece` bytes at a time in a file,
    /// front to back when moving down and back to front when moving up, so
    /// no piece overwrites bytes still to move.
    fn move_bytes_by(&mut self, from: u64, to: u64, len: u64, piece: usize) -> Result<()> {
        if len == 0 || from == to {
            return Ok(());
        }
        if let Place::Memory(m) = &mut self.place {
            let span = |p: u64| {
                usize::try_from(p)
                    .ok()
                    .and_then(|p| p.checked_add(usize::try_from(len).ok()?))
                    .ok_or_else(|| crate::err!(MemoryAlloc, "a move of {len} bytes overflows"))
            };
            let (from_end, to_end) = (span(from)?, span(to)?);
            if from_end > m.data.len() {
                crate::bail!(ReadBuffer, "a move reads past the frame's end");
            }
            if to_end > m.data.len() {
                m.data
                    .try_reserve(to_end - m.data.len())
                    .map_err(|_| crate::err!(MemoryAlloc, "no memory to move {len} bytes"))?;
                m.data.resize(to_end, 0);
            }
            m.data.copy_within(from as usize..from_end, to as usize);
            return Ok(());
        }
        let piece = usize::try_from(len).map_or(piece, |l| l.min(piece));
        let mut buf = Vec::new();
        buf.try_reserve_exact(piece)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory to move {len} bytes"))?;
        buf.resize(piece, 0);
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(piece as u64);
            let at = if to < from { done } else { len - done - n };
            let part = &mut buf[..n as usize];
            self.read(from + at, part, "data section")?;
            self.write(to + at, part)?;
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{chunk, reopen};
    use super::*;
    use crate::frame::header::{FrameHeader, FrameType};
    use crate::frame::io::{MemFile, StdIo};
    use crate::frame::FrameChunk;
    use crate::Result;

    fn stored(f: &mut Frame, k: usize) -> Vec<u8> {
        match f.chunk(k).unwrap() {
            FrameChunk::Bytes(b) => b.into_owned(),
            FrameChunk::Special(_) => panic!("chunk {k} should be stored"),
        }
    }

    /// A frame over any bytes, to move them.
    fn raw(place: Place, file: Option<Box<dyn crate::frame::io::IoFile>>) -> Frame {
        Frame {
            place,
            file: std::sync::RwLock::new(file.map(|file| super::super::Handle {
                file,
                mode: crate::frame::io::OpenMode::ReadWrite,
            })),
            transient: false,
            depth: Default::default(),
            header_len: 0,
            data_len: 0,
            offsets: Default::default(),
            frame_len: 0,
            tail_follows: false,
            layout: super::super::ChunkLayout::Unchecked,
            gaps: Vec::new(),
            order: Default::default(),
        }
    }

    /// The frame opened anew from its bytes, in memory or in its file.
    fn again(f: Frame) -> Result<Frame> {
        match &f.place {
            Place::Memory(_) => reopen(f),
            Place::File { io, path, offset } => {
                let place = Place::File {
                    io: io.clone(),
                    path: path.clone(),
                    offset: *offset,
                };
                drop(f);
                Frame::open(place).map(|(f, _, _)| f)
            }
            Place::Sparse { .. } => unreachable!("no sparse frame here"),
        }
    }

    fn header() -> FrameHeader {
        let mut h = FrameHeader::new(FrameType::Contiguous);
        h.nbytes = 1;
        h.chunksize = 0;
        h
    }

    /// Chunks dropped between two writes of a frame (two removed, one
    /// replaced) leave a frame in memory equal, byte for byte, to one built
    /// from the chunks that stay; a file keeps their bytes, unused, until
    /// a compaction makes it the frame of the kept chunks in index order.
    /// Until the write, the chunks still read.
    #[test]
    fn gaps_close_into_the_frame_the_kept_chunks_make() {
        let dir = std::env::temp_dir().join(format!("b2nd-gaps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.b2frame");
        for place in [
            Place::Memory(MemFile::default()),
            Place::File {
                io: StdIo::shared(),
                path: path.clone(),
                offset: 0,
            },
        ] {
            let h = header();
            let mut f = Frame::create(place, &h, &[]).unwrap();
            for k in 0..6 {
                f.insert(k, &chunk(k as i64 * 3 + 1), None).unwrap();
            }
            f.flush(&h, &[]).unwrap();
            f.delete(4).unwrap();
            f.delete(1).unwrap();
            f.update(0, &chunk(100), None).unwrap();
            // Chunks 0, 2, 3 and 5 are left, as 0 (new), 1, 2 and 3.
            let kept = [chunk(100), chunk(7), chunk(10), chunk(16)];
            for (k, want) in kept.iter().enumerate() {
                assert_eq!(&stored(&mut f, k), want, "chunk {k} before the write");
            }
            let live: u64 = kept.iter().map(|c| c.len() as u64).sum();
            let in_file = matches!(f.place, Place::File { .. });
            // A file keeps the dropped chunks' bytes until a compaction:
            // the frame on disk still uses them until the next publish.
            let dropped = [chunk(1), chunk(4), chunk(13)]
                .iter()
                .map(|c| c.len() as u64)
                .sum::<u64>();
            let left = if in_file { live + dropped } else { live };
            assert_eq!(f.data_len(), left);
            f.flush(&h, &[]).unwrap();
            assert!(f.gaps.is_empty());
            assert_eq!(f.data_len(), left);
            assert_eq!(f.unused_bytes(), left - live);
            let build = |order: &[usize]| {
                let mut same = Frame::create(Place::Memory(MemFile::default()), &h, &[]).unwrap();
                for (n, &k) in order.iter().enumerate() {
                    same.insert(n, &kept[k], None).unwrap();
                }
                same
            };
            let mut same = build(&[1, 2, 3]);
            same.insert(0, &kept[0], None).unwrap();
            same.flush(&h, &[]).unwrap();
            if in_file {
                // Compacted, the chunks lie in index order.
                let reclaimed = f.compact(&h, &[]).unwrap();
                assert_eq!(reclaimed, dropped);
                let mut ordered = build(&[0, 1, 2, 3]);
                ordered.flush(&h, &[]).unwrap();
                assert_eq!(f.to_bytes().unwrap(), ordered.to_bytes().unwrap());
                assert_eq!(f.unused_bytes(), 0);
            } else {
                // The replaced chunk went to the end, as `same`'s last insert.
                assert_eq!(f.to_bytes().unwrap(), same.to_bytes().unwrap());
            }
            let mut back = again(f).unwrap();
            for (k, want) in kept.iter().enumerate() {
                assert_eq!(&stored(&mut back, k), want, "chunk {k} reopened");
            }
            assert_eq!(back.data_len(), live);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A move through small pieces gives what one copy gives, down and up,
    /// with the ranges overlapping, in a file.
    #[test]
    fn piecewise_moves_equal_one_copy() {
        let path = std::env::temp_dir().join(format!("b2nd-move-{}", std::process::id()));
        let bytes: Vec<u8> = (0..1000u32).map(|x| (x * 31 % 251) as u8).collect();
        for (from, to, len) in [(300u64, 10u64, 600u64), (10, 300, 600), (0, 999, 1)] {
            std::fs::write(&path, &bytes).unwrap();
            let io = StdIo::shared();
            let file = io
                .open(&path, crate::frame::io::OpenMode::ReadWrite)
                .unwrap();
            let mut f = raw(
                Place::File {
                    io,
                    path: path.clone(),
                    offset: 0,
                },
                Some(file),
            );
            f.move_bytes_by(from, to, len, 7).unwrap();
            drop(f);
            let mut want = bytes.clone();
            want.resize(want.len().max((to + len) as usize), 0);
            want.copy_within(from as usize..(from + len) as usize, to as usize);
            assert_eq!(std::fs::read(&path).unwrap(), want, "{from} -> {to}, {len}");
            let mut m = raw(
                Place::Memory(MemFile {
                    data: bytes.clone(),
                }),
                None,
            );
            m.move_bytes_by(from, to, len, 7).unwrap();
            match &m.place {
                Place::Memory(mem) => assert_eq!(mem.data, want, "memory {from} -> {to}"),
                _ => unreachable!(),
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
}
