//! Reclaiming the bytes that edits of a frame file leave unused.

use super::{Backend, SChunk};
use crate::Result;

impl SChunk {
    /// Rewrites a contiguous frame file without the bytes no chunk uses
    /// (replaced and deleted chunks leave them: docs/crash-safety.md), as
    /// a new file renamed over the old, and returns how many bytes the
    /// file lost. Frames in memory, chunk lists and sparse frames hold no
    /// such bytes: 0. A frame at an offset inside a larger file, or on a
    /// backend that cannot rename, is refused with `InvalidParam`.
    pub fn compact(&mut self) -> Result<u64> {
        self.locked(true, |s| {
            let h = s.frame_header();
            let Backend::Frame(f) = &mut s.backend else {
                return Ok(0);
            };
            let saved = f.compact(&h, &s.vlmetalayers)?;
            if !f.is_sparse() {
                s.cbytes = f.data_len() as i64;
            }
            Ok(saved)
        })
    }

    /// Bytes of a contiguous frame file's data section that no chunk uses.
    pub fn unused_bytes(&self) -> u64 {
        match &self.backend {
            Backend::Frame(f) => f.unused_bytes(),
            Backend::Chunks(_) => 0,
        }
    }
}

/// Unused bytes past which a handle that made them reclaims them (see
/// [`SChunk::reclaim_if_worth`]).
const RECLAIM_AT: u64 = 4096;

impl SChunk {
    /// Compacts a contiguous frame file whose unused bytes (which this
    /// handle's edits left) exceed 4 KiB and a sixteenth of the frame: run
    /// after every published edit and when the handle goes. The reference
    /// closes such gaps as it writes, and its clients count on the file
    /// shrinking (C-Blosc2's `test_b2nd_resize`: an incrementally grown
    /// frame within 4 KiB of a one-go one; python-blosc2's bounded disk
    /// caches). Compaction writes a new file and renames it over the old,
    /// so a crash meanwhile loses nothing; the sixteenth keeps its cost
    /// proportional to the bytes edits free, not to the file on every
    /// edit. Its errors leave the file as it was and are not the edit's.
    pub(super) fn reclaim_if_worth(&mut self) {
        // A compaction writes what the handle holds: never edits that an
        // open scope has not published (see `SChunk::edits`).
        if self.edit_depth > 0 {
            return;
        }
        let unused = self.unused_bytes();
        if unused <= RECLAIM_AT {
            return;
        }
        let len = match &self.backend {
            Backend::Frame(f)
                if !f.is_sparse() && !matches!(f.place(), crate::frame::Place::Memory(_)) =>
            {
                f.frame_len()
            }
            _ => return,
        };
        if unused.saturating_mul(16) >= len {
            let _ = self.compact();
        }
    }
}

/// See `SChunk::reclaim_if_worth`.
impl Drop for SChunk {
    fn drop(&mut self) {
        self.reclaim_if_worth();
    }
}
