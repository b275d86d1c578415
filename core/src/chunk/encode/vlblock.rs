//! VL-block chunks: one block per buffer, each of its own size.

use std::sync::Arc;

use super::super::Fmt;
use super::block::{BlockPlan, Source};
use super::Compressor;
use crate::codecs::Codec;

impl Compressor {
    /// Compresses several buffers into one VL-block chunk (one block each).
    pub fn compress_vl(&mut self, srcs: &[&[u8]], dst: &mut [u8]) -> crate::Result<usize> {
        if srcs.is_empty() || srcs.len() > i32::MAX as usize {
            crate::bail!(InvalidParam, "a VL-block chunk needs at least one block");
        }
        if self.cparams.instr_codec {
            // The reference writes such chunks with csizes that disagree with
            // their records; there is no layout to be compatible with.
            crate::bail!(InvalidParam, "VL-block chunks cannot be instrumented");
        }
        let mut total = 0usize;
        let mut max_block = 0usize;
        for (i, s) in srcs.iter().enumerate() {
            if s.is_empty() {
                crate::bail!(InvalidParam, "VL block {i} is empty");
            }
            total += s.len();
            if total > Fmt::MAX_BUFFERSIZE {
                crate::bail!(
                    MaxBufsizeExceeded,
                    "VL blocks add up to more than the maximum"
                );
            }
            max_block = max_block.max(s.len());
        }
        if dst.len() < Fmt::MAX_OVERHEAD {
            crate::bail!(
                MaxBufsizeExceeded,
                "output buffer must hold at least {} bytes",
                Fmt::MAX_OVERHEAD
            );
        }
        self.check_codec()?;
        let cp = self.cparams.clone();
        let typesize = if cp.typesize as usize > Fmt::MAX_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let nblocks = srcs.len();
        // As in the reference, the context keeps the largest block as its
        // block size for later chunks.
        self.sticky_blocksize = max_block as i32;
        let mut hdr = self.header(total, nblocks as i32, typesize);
        hdr.version = Fmt::VERSION_VL_BLOCKS;
        hdr.blosc2_flags2 = Fmt::VL_BLOCKS;
        if Fmt::EXT_HEADER + 4 * nblocks > dst.len() {
            return Ok(0);
        }
        if cp.filters.contains(&Fmt::DELTA) {
            hdr.flags |= Fmt::DODELTA;
        }
        hdr.flags |= Fmt::DONT_SPLIT | (Codec::format_of(cp.compcode) << 5);
        let plan = BlockPlan {
            cp: cp.clone(),
            typesize,
            blocksize: max_block,
            nblocks,
            leftover: 0,
            dont_split: true,
            training: false,
            dict: None,
            source: Source::VlBlocks(srcs.to_vec()),
        };
        let mut plan = plan;
        let dict = if cp.use_dict && cp.clevel > 0 {
            self.build_dict(&mut plan, total)?
        } else {
            None
        };
        let raw_dict = dict.as_ref().map(|(_, raw)| raw.clone());
        plan.dict = dict.map(|(d, _)| Arc::new(d));
        if raw_dict.is_some() {
            hdr.blosc2_flags |= Fmt::USEDICT;
        }
        let n = self.write_blocks(&plan, dst, raw_dict.as_deref())?;
        if n == 0 {
            return Ok(0);
        }
        hdr.cbytes = n as i32;
        dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
        Ok(n)
    }
}
