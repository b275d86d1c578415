//! Gathering items at arbitrary positions of a super-chunk
//! (`blosc2_schunk_get_sparse_buffer`).
//!
//! As the reference does: the positions are sorted, grouped by the chunk
//! and block (of the super-chunk's blocksize) that hold them, each chunk
//! touched is fetched once (a lazy chunk for an on-disk frame, whose blocks
//! stay on disk), and the groups are decoded as tasks on the decompression
//! threads, one decoder per thread, with the threads callback when one is
//! set. Each task decodes only the bytes between its first and last item,
//! inside one block. A super-chunk whose chunks need more than their own
//! block to decode one (DELTA against block 0), or whose items go through a
//! postfilter, is read item by item instead, as is a single position, and
//! so are those the reference refuses as not supported yet: chunks of
//! varying sizes, VL blocks, an automatic block size (a super-chunk
//! blocksize of 0), sizes that are not whole items.

use std::sync::{Arc, Mutex};

use super::lazy::FrameSite;
use super::{fetch_chunk, Backend, SChunk};
use crate::chunk::{run_each, threads_for, DParams, Decompressor, Fmt};
use crate::Result;

/// A chunk fetched for the tasks.
enum Held {
    /// Whole, shared with a chunk list.
    Shared(Arc<[u8]>),
    /// Whole, copied out of a frame (or a special chunk built from its offset).
    Owned(Vec<u8>),
    /// The lazy chunk of a stored chunk of an on-disk frame.
    Lazy(Vec<u8>),
}

impl Held {
    fn bytes(&self) -> &[u8] {
        match self {
            Held::Shared(b) => b,
            Held::Owned(b) | Held::Lazy(b) => b,
        }
    }
}

/// The items of one block of one chunk: the chunk's bytes `lo..lo + len`
/// decoded, and where each item goes.
struct Task<'a> {
    chunk: usize,
    lo: usize,
    len: usize,
    /// Offset of the item from `lo`, and its place in the output.
    outs: Vec<(usize, &'a mut [u8])>,
}

/// A thread's decoder, made on its first task.
type Worker = Mutex<Option<(Decompressor, Vec<u8>)>>;

impl SChunk {
    /// Copies the items at `coords` (item indices, any order, repeats
    /// allowed) into `dst`, one `typesize` item after another. Refused with
    /// `InvalidParam`: a coordinate out of range, or `dst` shorter than the
    /// items.
    pub fn get_sparse_buffer(&self, coords: &[i64], dst: &mut [u8]) -> Result<()> {
        if coords.is_empty() {
            return Ok(());
        }
        let ts = usize::try_from(self.typesize())
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| crate::err!(InvalidParam, "the super-chunk has no typesize"))?;
        let want = coords
            .len()
            .checked_mul(ts)
            .ok_or_else(|| crate::err!(InvalidParam, "{} coordinates overflow", coords.len()))?;
        let have = dst.len();
        let dst = dst
            .get_mut(..want)
            .ok_or_else(|| crate::err!(InvalidParam, "buffer has {have} bytes, {want} needed"))?;
        let nitems = self.nbytes / ts as i64;
        let item = |c: i64| -> Result<usize> {
            if c < 0 || c >= nitems {
                crate::bail!(InvalidParam, "coordinate {c} out of range 0..{nitems}");
            }
            Ok(c as usize)
        };
        // The reference refuses super-chunks without a fixed chunk and
        // block size in whole items ("not supported yet"): they are read
        // item by item here, as are those whose blocks do not decode on
        // their own or whose items go through a postfilter.
        let (chunksize, blocksize) = (self.chunksize, self.blocksize);
        let by_blocks = chunksize > 0
            && blocksize > 0
            && !self.vl_blocks
            && chunksize as usize % ts == 0
            && blocksize as usize % ts == 0
            && !self.engine.cparams().filters.contains(&Fmt::DELTA)
            && self.engine.dparams().postfilter.is_none()
            && coords.len() > 1;
        if !by_blocks {
            return self.get_items_one_by_one(coords, dst, ts, item);
        }
        let (chunksize, blocksize) = (chunksize as usize, blocksize as usize);
        let mut order = Vec::new();
        order
            .try_reserve_exact(coords.len())
            .map_err(|_| crate::err!(MemoryAlloc, "no memory for {} coordinates", coords.len()))?;
        for (i, &c) in coords.iter().enumerate() {
            order.push((item(c)?, i));
        }
        order.sort_unstable();

        // One task per block touched, in position order.
        let mut slots: Vec<Option<&mut [u8]>> = dst.chunks_exact_mut(ts).map(Some).collect();
        let mut touched: Vec<usize> = Vec::new();
        let mut tasks: Vec<Task<'_>> = Vec::new();
        let mut current: Option<(usize, usize)> = None;
        for &(it, i) in &order {
            let at = it * ts;
            let (n, in_chunk) = (at / chunksize, at % chunksize);
            let key = (n, in_chunk / blocksize);
            if current != Some(key) {
                current = Some(key);
                if touched.last() != Some(&n) {
                    touched.push(n);
                }
                tasks.push(Task {
                    chunk: touched.len() - 1,
                    lo: in_chunk,
                    len: 0,
                    outs: Vec::new(),
                });
            }
            let Some(task) = tasks.last_mut() else {
                crate::bail!(Failure, "no task for coordinate {it}");
            };
            task.len = in_chunk + ts - task.lo;
            let Some(out) = slots[i].take() else {
                crate::bail!(Failure, "output slot {i} taken twice");
            };
            task.outs.push((in_chunk - task.lo, out));
        }

        let mut held = Vec::with_capacity(touched.len());
        for &n in &touched {
            held.push(self.hold_chunk(n)?);
        }
        let site = self.frame_site();
        let dp = DParams {
            nthreads: 1,
            ..self.engine.dparams().clone()
        };
        let asked = self.engine.dparams().nthreads;
        let nthreads = threads_for(asked, tasks.len().saturating_mul(blocksize)).min(tasks.len());
        let workers: Vec<Worker> = (0..nthreads.max(1)).map(|_| Mutex::new(None)).collect();
        run_each(tasks, nthreads, |tid, task| {
            let mut slot = workers[tid].lock().unwrap_or_else(|p| p.into_inner());
            let (dec, buf) =
                slot.get_or_insert_with(|| (Decompressor::new(dp.clone()), Vec::new()));
            decode_task(dec, buf, &held[task.chunk], site.as_ref(), task)
        })
    }

    /// The items at `coords` into `dst`, each read on its own from the
    /// chunk holding it (chunks of any sizes).
    fn get_items_one_by_one(
        &self,
        coords: &[i64],
        dst: &mut [u8],
        ts: usize,
        item: impl Fn(i64) -> Result<usize>,
    ) -> Result<()> {
        // Where each chunk starts, in bytes.
        let mut starts = Vec::new();
        let mut end = 0usize;
        for size in self.chunk_sizes()? {
            starts.push(end);
            end = end.saturating_add(usize::try_from(size).unwrap_or(0));
        }
        for (&c, out) in coords.iter().zip(dst.chunks_exact_mut(ts)) {
            let at = item(c)? * ts;
            let n = starts.partition_point(|&s| s <= at).saturating_sub(1);
            self.read_chunk_range(n, at - starts[n], out)?;
        }
        Ok(())
    }

    /// Chunk `n` as the tasks read it.
    fn hold_chunk(&self, n: usize) -> Result<Held> {
        if let Backend::Chunks(c) = &self.backend {
            return Ok(Held::Shared(Arc::clone(&c[n])));
        }
        if let Some(lazy) = self.lazy_chunk(n)? {
            return Ok(Held::Lazy(lazy));
        }
        let (n, spec) = self.chunk_request(n as i64)?;
        Ok(Held::Owned(
            fetch_chunk(&self.backend, n, spec)?.into_owned(),
        ))
    }
}

/// Decodes the bytes of `task` from `chunk` into `buf` and copies its items out.
fn decode_task(
    dec: &mut Decompressor,
    buf: &mut Vec<u8>,
    chunk: &Held,
    site: Option<&FrameSite>,
    task: Task<'_>,
) -> Result<()> {
    crate::mem::grow(buf, task.len)?;
    let out = &mut buf[..task.len];
    match (chunk, site) {
        (Held::Lazy(lazy), Some(site)) => {
            let mut src = site.block_source(lazy)?;
            dec.decompress_range_with_source(lazy, &mut *src, task.lo, out)?;
        }
        (Held::Lazy(_), None) => crate::bail!(Failure, "a lazy chunk without its frame"),
        _ => dec.decompress_range(chunk.bytes(), task.lo, out)?,
    }
    for (off, item) in task.outs {
        item.copy_from_slice(&out[off..off + item.len()]);
    }
    Ok(())
}
