//! Compaction: a file frame written anew without the bytes no chunk uses,
//! into a new file renamed over the old, so that a crash leaves one or the
//! other (see `publish` for why edits leave such bytes).

use std::collections::HashMap;

use super::{Frame, Place};
use crate::frame::codec::{self, ChunkInfo, EXTENDED_HEADER_LEN};
use crate::frame::header::{FrameHeader, FrameType, Metalayer};
use crate::frame::index::OffsetIndex;
use crate::frame::io::{IoFile, OpenMode};
use crate::frame::{durable, trailer};
use crate::Result;

impl Frame {
    /// Rewrites the frame without unused bytes and returns how many bytes
    /// the frame lost. A frame in memory closes its gaps at every write
    /// and a sparse frame removes dropped chunk files: both are left as
    /// they are. Refused (`InvalidParam`) for a frame at an offset in a
    /// larger file or on a backend that cannot rename.
    pub fn compact(&mut self, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<u64> {
        self.op(|f| f.compact_in_op(header, vlmeta))
    }

    fn compact_in_op(&mut self, header: &FrameHeader, vlmeta: &[Metalayer]) -> Result<u64> {
        if !self.ordered() {
            return Ok(0);
        }
        // Whatever is pending is published first: the copy starts from it.
        self.flush_routed(header, vlmeta)?;
        let Some((io, target, tmp)) = self.shadow_target_for_compaction() else {
            crate::bail!(
                InvalidParam,
                "a frame at an offset in a file, or on a backend that cannot rename, is not compacted"
            );
        };
        let before = self.frame_len;
        let mut out = io.open(&tmp, OpenMode::Create)?;
        let written = self.write_compacted(out.as_mut(), header, vlmeta);
        drop(out);
        if let Err(e) = written.and_then(|()| io.rename(&tmp, &target)) {
            let _ = io.remove(&tmp);
            return Err(e);
        }
        if durable::fsync_enabled() {
            io.sync_dir(target.parent().unwrap_or(std::path::Path::new("")))?;
        }
        *self.slot_mut() = None;
        self.load()?;
        Ok(before.saturating_sub(self.frame_len))
    }

    fn shadow_target_for_compaction(
        &self,
    ) -> Option<(crate::frame::IoRef, std::path::PathBuf, std::path::PathBuf)> {
        match &self.place {
            Place::File { offset: 0, .. } => self.shadow_target(),
            _ => None,
        }
    }

    /// Writes the frame's chunks one after another into `out`, each stored
    /// chunk once however many entries share it, then index, trailer and
    /// header.
    fn write_compacted(
        &mut self,
        out: &mut dyn IoFile,
        header: &FrameHeader,
        vlmeta: &[Metalayer],
    ) -> Result<()> {
        let mut h = header.clone();
        h.frame_type = FrameType::Contiguous;
        h.has_vlmetalayers = !vlmeta.is_empty();
        h.frame_len = 0;
        let hlen = h.encode()?.len() as u64;
        let entries = self.offsets.to_vec()?;
        let mut moved: HashMap<i64, i64> = HashMap::new();
        let mut next = super::super::index::reserve(entries.len())?;
        let mut pos = 0u64;
        let mut buf = Vec::new();
        for &o in &entries {
            if o < 0 {
                next.push(o);
                continue;
            }
            if let Some(&n) = moved.get(&o) {
                next.push(n);
                continue;
            }
            let mut head = [0u8; EXTENDED_HEADER_LEN];
            self.read(self.header_len + o as u64, &mut head, "chunk header")?;
            let len = ChunkInfo::parse(&head)?.cbytes as u64;
            if o as u64 + len > self.data_len {
                crate::bail!(InvalidHeader, "chunk at {o} runs past the data section");
            }
            buf.resize(len as usize, 0);
            self.read(self.header_len + o as u64, &mut buf, "chunk data")?;
            out.write_at(hlen + pos, &buf)?;
            moved.insert(o, pos as i64);
            next.push(pos as i64);
            pos += len;
        }
        let mut tail = match &self.offsets {
            OffsetIndex::Repeated { len: 0, .. } => Vec::new(),
            OffsetIndex::Repeated { value, len } => codec::repeated_offsets(*value, *len)?,
            _ if next.is_empty() => Vec::new(),
            _ => codec::compress_offsets(&next)?,
        };
        tail.extend_from_slice(&trailer::encode(vlmeta)?);
        h.cbytes = pos as i64;
        h.frame_len = (hlen + pos + tail.len() as u64) as i64;
        out.write_at(hlen + pos, &tail)?;
        out.write_at(0, &h.encode()?)?;
        if durable::fsync_enabled() {
            out.sync()?;
        }
        Ok(())
    }
}
