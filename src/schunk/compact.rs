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
