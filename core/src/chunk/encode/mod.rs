//! Compressing a buffer into one chunk, as C-Blosc2's `blosc2_compress_ctx`
//! and `blosc2_vlcompress_ctx` lay it out.
//!
//! Blocks are encoded independently (each into its own buffer, in any worker)
//! and then laid out in block order, so the output does not depend on the
//! number of threads.
//!
//! - `block`: a [`block::BlockPlan`], what every block encoder of one chunk
//!   shares, and the encoding of one block (filters, split streams, runs);
//! - `placement`: laying out blocks encoded in parallel in block order;
//! - `vlblock`: VL-block chunks, one block per buffer.

mod block;
mod placement;
#[cfg(test)]
mod tests;
mod vlblock;

use std::cell::RefCell;
use std::sync::Arc;

use block::{BlockPlan, Source};
use placement::place_in_order;

use super::blocksize::{compute_blocksize, split_block};
use super::header::HeaderOut;
use super::instr;
use super::page_buf::PageBuf;
use super::pipeline;
use super::pool;
use super::stream::{CodecState, EncDict};
use super::{CParams, Fmt, PrefilterArgs, PrefilterOutput, Special};
use crate::codecs::registry;
use crate::codecs::{zstd, Codec};
/// Scratch owned by one worker.
#[derive(Default)]
pub(crate) struct EncWorker {
    codec: CodecState,
    a: PageBuf,
    b: PageBuf,
    /// Codec output when the chunk buffer has too little room left.
    spill: Vec<u8>,
    /// A block encoded by a worker of a parallel call, before it is placed
    /// in the chunk.
    block: Vec<u8>,
    /// Whether the next split block is filtered straight into the chunk
    /// ([`BlockPlan::encode_rows_in_place`]): in the last split block this
    /// worker encoded, the first stream that was not a run was stored
    /// uncompressed. That is when the in-place layout saves a copy; when
    /// that stream compresses, it costs one.
    rows_in_place: bool,
}

/// Scratch of finished helper threads, for the next parallel call.
static SPARE_ENC: std::sync::Mutex<Vec<EncWorker>> = std::sync::Mutex::new(Vec::new());

impl pool::Scratch for EncWorker {
    fn stash() -> &'static std::sync::Mutex<Vec<Self>> {
        &SPARE_ENC
    }
}

thread_local! {
    /// Scratch of the encoder running on this thread (pool workers keep theirs).
    static ENC: RefCell<EncWorker> = RefCell::new(EncWorker::default());
}

/// Runs `f` with this thread's encoder scratch (a fresh one when it is already
/// in use, e.g. by a user callback that compresses re-entrantly, or gone, in
/// the thread's exit handlers: see [`crate::scratch::with_kept`]).
fn with_worker<T>(f: impl FnOnce(&mut EncWorker) -> T) -> T {
    crate::scratch::with_kept(&ENC, EncWorker::default, f)
}

/// A reusable compression context.
///
/// Like the reference context, it remembers the block size chosen for the
/// first chunk and uses it as the forced block size of later chunks (this is
/// what makes the chunks of a super-chunk share one block size). Scratch
/// buffers live with the threads (the caller's and the pool's).
pub struct Compressor {
    cparams: CParams,
    sticky_blocksize: i32,
}

impl Compressor {
    /// A context for `cparams` (validated here).
    pub fn new(cparams: CParams) -> crate::Result<Self> {
        if cparams.clevel > 9 {
            crate::bail!(CodecParam, "clevel {} not in 0..=9", cparams.clevel);
        }
        if cparams.typesize <= 0 || cparams.typesize > Fmt::MAX_BLOCKSIZE {
            crate::bail!(InvalidParam, "typesize {} out of range", cparams.typesize);
        }
        if cparams.blocksize < 0 {
            crate::bail!(InvalidParam, "negative blocksize {}", cparams.blocksize);
        }
        let out_typesize = cparams.prefilter_output.typesize;
        if cparams.prefilter.is_some() && out_typesize > cparams.typesize as usize {
            crate::bail!(
                InvalidParam,
                "prefilter output_typesize {out_typesize} is larger than typesize {}: its output \
                 would not fit the block",
                cparams.typesize
            );
        }
        if cparams.tuner_id != 0 {
            crate::bail!(
                InvalidParam,
                "tuner {} is not available (only stune, 0)",
                cparams.tuner_id
            );
        }
        pipeline::check_filters(&cparams.filters)?;
        let sticky_blocksize = cparams.blocksize;
        Ok(Compressor {
            cparams,
            sticky_blocksize,
        })
    }

    /// Replaces `cparams.user_data` (what user codecs and filters receive),
    /// keeping the block size remembered from earlier chunks.
    pub fn set_user_data(&mut self, user_data: Option<super::UserData>) {
        self.cparams.user_data = user_data;
    }

    /// The parameters this context compresses with.
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// Sets the chunk number a prefilter is told (-1: not in a super-chunk).
    pub fn set_nchunk(&mut self, nchunk: i64) {
        self.cparams.nchunk = nchunk;
    }

    /// Forgets the block size remembered from earlier chunks.
    pub fn reset_blocksize(&mut self) {
        self.sticky_blocksize = self.cparams.blocksize;
    }

    fn check_codec(&self) -> crate::Result<()> {
        let c = self.cparams.compcode;
        if !Codec::is_available(c) {
            if (Codec::GLOBAL_START..registry::USER_START).contains(&c) {
                crate::bail!(
                    CodecSupport,
                    "codec {c} is a reference plugin that is not registered \
                     (blosc2_init registers the loadable ones)"
                );
            }
            crate::bail!(CodecSupport, "codec {c} is not available");
        }
        if self.cparams.use_dict && !matches!(c, Codec::ZSTD | Codec::LZ4 | Codec::LZ4HC) {
            crate::bail!(CodecParam, "dictionaries need zstd, lz4 or lz4hc");
        }
        Ok(())
    }

    fn header(&self, nbytes: usize, header_blocksize: i32, typesize: usize) -> HeaderOut {
        let cp = &self.cparams;
        let versionlz = match cp.compcode {
            c if c >= registry::USER_START => registry::codec(c).map_or(0xff, |e| e.version),
            _ => 1,
        };
        HeaderOut {
            version: Fmt::VERSION_STABLE,
            versionlz,
            flags: Fmt::DOSHUFFLE | Fmt::DOBITSHUFFLE,
            typesize: typesize as u8,
            nbytes: nbytes as i32,
            blocksize: header_blocksize,
            cbytes: 0,
            filters: cp.filters,
            udcompcode: cp.compcode,
            compcode_meta: cp.compcode_meta,
            filters_meta: pipeline::recorded_meta(&cp.filters, &cp.filters_meta, typesize),
            blosc2_flags2: 0,
            blosc2_flags: 0,
        }
    }

    /// Runs the prefilter over every block, giving the bytes to compress.
    fn prefiltered(&self, src: &[u8], blocksize: usize) -> crate::Result<Option<Vec<u8>>> {
        let Some(pre) = &self.cparams.prefilter else {
            return Ok(None);
        };
        let typesize = self.cparams.typesize.max(1) as usize;
        let PrefilterOutput {
            typesize: out_typesize,
            disposable,
        } = self.cparams.prefilter_output;
        let mut out = vec![0u8; src.len()];
        for (nblock, (i, o)) in src
            .chunks(blocksize.max(1))
            .zip(out.chunks_mut(blocksize.max(1)))
            .enumerate()
        {
            // A narrower output fills the front of the block; `new` refused a
            // wider one.
            let (output, out_typesize) = match out_typesize {
                0 => (o, typesize),
                t if t == typesize => (o, typesize),
                t => (&mut o[..i.len() / typesize * t], t),
            };
            let mut args = PrefilterArgs {
                input: i,
                output,
                offset: nblock * blocksize,
                nblock,
                nchunk: self.cparams.nchunk,
                tid: 0,
                typesize: out_typesize,
            };
            if let Err(e) = pre(&mut args) {
                if !disposable {
                    crate::bail!(FilterPipeline, "prefilter failed: {e}");
                }
            }
        }
        Ok(Some(out))
    }

    /// Compresses `src` into `dst` as one chunk; returns its size, or 0 when
    /// `dst` is too small (`dst.len() >= src.len() + 32` always suffices).
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
        if src.len() > Fmt::MAX_BUFFERSIZE {
            crate::bail!(
                MaxBufsizeExceeded,
                "input of {} bytes over the maximum",
                src.len()
            );
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
        let nbytes = src.len();
        let user_bs = self.sticky_blocksize;
        let blocksize = compute_blocksize(
            cp.clevel,
            cp.typesize,
            nbytes as i32,
            user_bs,
            cp.compcode,
            cp.splitmode,
            &cp.filters,
        );
        self.sticky_blocksize = blocksize;
        let mut header_bs = if user_bs > 0 { user_bs } else { blocksize };
        if nbytes > 0 && header_bs as usize > nbytes {
            header_bs = nbytes as i32;
        }
        let typesize = if cp.typesize as usize > Fmt::MAX_TYPESIZE {
            1
        } else {
            cp.typesize as usize
        };
        let blocksize = blocksize.max(1) as usize;
        let nblocks = nbytes.div_ceil(blocksize);
        let leftover = nbytes % blocksize;
        let mut hdr = self.header(nbytes, header_bs, typesize);

        let pre = self.prefiltered(src, blocksize)?;
        let data: &[u8] = pre.as_deref().unwrap_or(src);

        let use_dict = cp.use_dict && cp.clevel > 0;
        let mut memcpyed = cp.clevel == 0 || nbytes < Fmt::MIN_BUFFERSIZE;
        if !memcpyed && Fmt::EXT_HEADER + 4 * nblocks > dst.len() {
            memcpyed = true;
        }
        if !memcpyed {
            if cp.filters.contains(&Fmt::DELTA) {
                hdr.flags |= Fmt::DODELTA;
            }
            let dont_split = !split_block(
                cp.splitmode,
                cp.compcode,
                cp.clevel,
                &cp.filters,
                typesize as i32,
                blocksize as i32,
            );
            if dont_split {
                hdr.flags |= Fmt::DONT_SPLIT;
            }
            hdr.flags |= Codec::format_of(cp.compcode) << 5;
            let mut plan = BlockPlan {
                cp: cp.clone(),
                typesize,
                blocksize,
                nblocks,
                leftover,
                dont_split,
                training: false,
                dict: None,
                source: Source::Buffer(data),
            };
            let dict = if use_dict {
                self.build_dict(&mut plan, nbytes)?
            } else {
                None
            };
            let raw_dict = dict.as_ref().map(|(_, raw)| raw.clone());
            plan.dict = dict.map(|(d, _)| Arc::new(d));
            let raw_dict = raw_dict.as_deref();
            if raw_dict.is_some() {
                hdr.blosc2_flags |= Fmt::USEDICT;
            }
            let n = self.write_blocks(&plan, dst, raw_dict)?;
            let nstreams = if dont_split {
                nblocks
            } else if leftover > 0 {
                (nblocks - 1) * typesize + 1
            } else {
                nblocks * typesize
            };
            if plan.instrumented() {
                if n == 0 {
                    // The records do not fit; a plain copy would not be one.
                    return Ok(0);
                }
                let stream_bytes = |k: usize| i32::try_from(k * instr::RECORD_SIZE).ok();
                let per_block = if dont_split { 1 } else { typesize };
                let (Some(nbytes), Some(blocksize)) =
                    (stream_bytes(nstreams), stream_bytes(per_block))
                else {
                    crate::bail!(MaxBufsizeExceeded, "too many streams to instrument");
                };
                hdr.blosc2_flags |= Fmt::INSTR_CODEC;
                hdr.nbytes = nbytes;
                hdr.blocksize = blocksize;
                hdr.cbytes = n as i32;
                dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
                return Ok(n);
            }
            if n > 0 {
                let cbytes =
                    if raw_dict.is_none() && n == Fmt::EXT_HEADER + 4 * nblocks + 4 * nstreams {
                        // Every stream is a run of zeros: the chunk becomes special.
                        hdr.blosc2_flags |= Special::ZERO_CODE << 4;
                        Fmt::EXT_HEADER
                    } else {
                        n
                    };
                hdr.cbytes = cbytes as i32;
                // The reference records a forced blocksize as given even when it
                // used it rounded down to the typesize, which makes such chunks
                // undecodable; record the size actually used instead.
                if !(nbytes > 0 && blocksize >= nbytes) {
                    hdr.blocksize = blocksize as i32;
                }
                dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
                return Ok(cbytes);
            }
        }
        // Plain copy of the (prefiltered) data.
        if nbytes + Fmt::EXT_HEADER > dst.len() {
            return Ok(0);
        }
        hdr.flags |= Fmt::MEMCPYED;
        hdr.blosc2_flags &= !Fmt::USEDICT;
        hdr.cbytes = (nbytes + Fmt::EXT_HEADER) as i32;
        dst[..Fmt::EXT_HEADER].copy_from_slice(&hdr.to_bytes());
        let nthreads = pool::threads_for(cp.nthreads, nbytes).min(nblocks.max(1));
        let body = &mut dst[Fmt::EXT_HEADER..Fmt::EXT_HEADER + nbytes];
        with_worker(|w: &mut EncWorker| pool::copy(w, body, data, nthreads))?;
        Ok(nbytes + Fmt::EXT_HEADER)
    }

    /// Trains the dictionary as the reference does: a pass storing the
    /// filtered blocks back to back, samples cut from its start, then raw
    /// bytes (LZ4) or `ZDICT_trainFromBuffer` (Zstd). `None`: no useful dict.
    fn build_dict(
        &mut self,
        plan: &mut BlockPlan<'_>,
        nbytes: usize,
    ) -> crate::Result<Option<(EncDict, Vec<u8>)>> {
        let dict_maxsize = Fmt::MAX_DICTSIZE.min(nbytes / 20);
        let mut nsamples = if plan.dont_split {
            plan.nblocks
        } else {
            plan.nblocks * plan.typesize
        };
        if nsamples < 8 && !plan.vl() {
            nsamples = 8;
        }
        // VL-block chunks sample whole blocks and need at least 8 of them.
        let sample_size = nbytes / nsamples.max(1) / 16;
        if dict_maxsize < Fmt::MIN_USEFUL_DICT
            || sample_size == 0
            || (plan.vl() && plan.nblocks < 8)
        {
            return Ok(None);
        }
        plan.training = true;
        let blocks = self.encode_blocks(plan);
        plan.training = false;
        let blocks = blocks?;
        let samples: Vec<u8> = blocks.concat();
        let compcode = plan.cp.compcode;
        if compcode == Codec::LZ4 || compcode == Codec::LZ4HC {
            let wanted = if plan.vl() {
                samples.len()
            } else {
                nsamples * sample_size
            };
            let size = wanted.min(dict_maxsize).min(samples.len());
            let mut raw = samples[..size].to_vec();
            // The reference writes the dictionary size into its output buffer
            // (right after the bstarts) before copying the samples from the
            // start of that same buffer, so these four bytes of the dictionary
            // are the size itself. Reproduced for identical chunks.
            let at = 4 * plan.nblocks;
            for (k, byte) in (size as i32).to_le_bytes().into_iter().enumerate() {
                if let Some(slot) = raw.get_mut(at + k) {
                    *slot = byte;
                }
            }
            return Ok(Some((EncDict::Lz4(raw.clone()), raw)));
        }
        let sizes: Vec<usize> = if plan.vl() {
            blocks.iter().map(Vec::len).collect()
        } else {
            vec![sample_size; nsamples]
        };
        match zstd::train_dict(&samples, &sizes, dict_maxsize) {
            Some(raw) if !raw.is_empty() => {
                let cdict = zstd::CDict::new(&raw, 1)
                    .ok_or_else(|| crate::err!(CodecDict, "zstd dictionary"))?;
                Ok(Some((EncDict::Zstd(cdict), raw)))
            }
            _ => Ok(None),
        }
    }

    /// Encodes every block, each into its own buffer, in parallel when asked
    /// to; results in block order.
    fn encode_blocks(&mut self, plan: &BlockPlan<'_>) -> crate::Result<Vec<Vec<u8>>> {
        fn one(plan: &BlockPlan<'_>, w: &mut EncWorker, j: usize) -> crate::Result<Vec<u8>> {
            let mut out = vec![0u8; plan.max_encoded(j)];
            match plan.encode(w, j, &mut out)? {
                Some(n) => {
                    out.truncate(n);
                    Ok(out)
                }
                None => crate::bail!(Failure, "block {j} overflowed its worst-case size"),
            }
        }
        let nthreads =
            pool::threads_for(self.cparams.nthreads, plan.total_bytes()).min(plan.nblocks.max(1));
        if nthreads <= 1 {
            return with_worker(|w| (0..plan.nblocks).map(|j| one(plan, w, j)).collect());
        }
        let mut blocks: Vec<Vec<u8>> = vec![Vec::new(); plan.nblocks];
        let items: Vec<(usize, &mut Vec<u8>)> = blocks.iter_mut().enumerate().collect();
        with_worker(|w| {
            pool::run_scoped(items, nthreads, w, |w, _tid, (j, out)| {
                *out = one(plan, w, j)?;
                Ok(())
            })
        })?;
        Ok(blocks)
    }

    /// Writes the bstarts, the optional dictionary and every encoded block
    /// after the header; returns the chunk size, or 0 when it does not fit in
    /// `dst`. With one thread the blocks are encoded straight into `dst`.
    fn write_blocks(
        &mut self,
        plan: &BlockPlan<'_>,
        dst: &mut [u8],
        dict: Option<&[u8]>,
    ) -> crate::Result<usize> {
        // Offsets are stored as int32.
        let cap = dst.len().min(i32::MAX as usize);
        let dst = &mut dst[..cap];
        let nblocks = plan.nblocks;
        let mut at = Fmt::EXT_HEADER + 4 * nblocks;
        if at > dst.len() {
            return Ok(0);
        }
        if let Some(d) = dict {
            if at + 4 + d.len() > dst.len() {
                return Ok(0);
            }
            dst[at..at + 4].copy_from_slice(&(d.len() as i32).to_le_bytes());
            dst[at + 4..at + 4 + d.len()].copy_from_slice(d);
            at += 4 + d.len();
        }
        let nthreads =
            pool::threads_for(self.cparams.nthreads, plan.total_bytes()).min(nblocks.max(1));
        if nthreads <= 1 {
            return with_worker(|w| {
                for j in 0..nblocks {
                    let (bstarts, body) = dst.split_at_mut(at);
                    let Some(n) = plan.encode(w, j, body)? else {
                        return Ok(0);
                    };
                    let bs = Fmt::EXT_HEADER + 4 * j;
                    bstarts[bs..bs + 4].copy_from_slice(&(at as i32).to_le_bytes());
                    at += n;
                }
                Ok(at)
            });
        }
        place_in_order(plan, nthreads, dst, at)
    }
}
