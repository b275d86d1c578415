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

/// Unused bytes past which a handle that made them reclaims them when it
/// goes (see the `Drop` below).
const RECLAIM_AT_CLOSE: u64 = 4096;

/// A contiguous frame file that this handle's edits left with more than
/// 4 KiB of unused bytes, a sixteenth of the frame or more, is compacted
/// when the handle goes: C-Blosc2's own `test_b2nd_resize` expects a frame
/// grown by many small resizes to end within 4 KiB of one written in one
/// go, and the reference reclaims as it writes. The compaction writes a new
/// file and renames it over the old one, so a crash meanwhile loses
/// nothing; a frame with few unused bytes is left as it is, since
/// rewriting a large file for them on every close would cost more than
/// the space (docs/crash-safety.md). Errors leave the file as it was.
impl Drop for SChunk {
    fn drop(&mut self) {
        let unused = self.unused_bytes();
        if unused <= RECLAIM_AT_CLOSE {
            return;
        }
        let len = match &self.backend {
            Backend::Frame(f) if !f.is_sparse() => f.frame_len(),
            _ => return,
        };
        if unused.saturating_mul(16) >= len {
            let _ = self.compact();
        }
    }
}
