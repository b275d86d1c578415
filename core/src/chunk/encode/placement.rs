//! The chunk being filled by a parallel call, block by block in block order.

use super::super::pool;
use super::super::Fmt;
use super::block::BlockPlan;
use super::{with_worker, EncWorker};

/// The chunk being filled by a parallel call: blocks are placed in block
/// order, whatever order the workers finish them in, so the chunk does not
/// depend on the number of threads.
///
/// Only the bookkeeping happens under the lock: a worker claims the room for
/// a block (a piece cut off the unclaimed tail) and copies into it after
/// letting go, so a neighbour finishing meanwhile is not held up by the copy.
struct Placement<'d> {
    /// The part of the chunk not claimed yet; it starts at byte `at`.
    tail: &'d mut [u8],
    /// The next block to place, and where it goes.
    next: usize,
    at: usize,
    /// Where each placed block starts, in block order (the bstarts).
    starts: Vec<i32>,
    /// Blocks finished before their turn: their buffer and encoded length.
    parked: Vec<Option<(Vec<u8>, usize)>>,
    /// Buffers to hand to workers whose own buffer got parked.
    spare: Vec<Vec<u8>>,
    /// A block did not fit: the chunk is abandoned.
    full: bool,
}

impl<'d> Placement<'d> {
    /// Takes block `self.next`'s turn: records its start and returns the
    /// `len` bytes it is to be copied to, or `None` once the chunk is full.
    fn claim(&mut self, len: usize) -> Option<&'d mut [u8]> {
        self.next += 1;
        if self.full || len > self.tail.len() {
            self.full = true;
            return None;
        }
        let (room, rest) = std::mem::take(&mut self.tail).split_at_mut(len);
        self.tail = rest;
        self.starts.push(self.at as i32);
        self.at += len;
        Some(room)
    }
}

/// Buffers of parked blocks, kept for the next parallel call.
static SPARE_BLOCKS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Encodes every block with `nthreads` threads and places them in `dst`
/// from byte `at` on, in block order; returns the chunk size or 0 when the
/// blocks do not fit.
///
/// Each worker encodes into its own reusable buffer. A worker finishing the
/// block whose turn it is copies it into the chunk at once (its neighbours
/// keep encoding meanwhile), then any blocks parked behind it; a worker that
/// finishes early parks its buffer and takes a spare one. No buffer is
/// allocated once the spares have grown to the block size.
pub(super) fn place_in_order(
    plan: &BlockPlan<'_>,
    nthreads: usize,
    dst: &mut [u8],
    at: usize,
) -> crate::Result<usize> {
    let nblocks = plan.nblocks;
    let spare = std::mem::take(&mut *SPARE_BLOCKS.lock().unwrap_or_else(|p| p.into_inner()));
    let (head, tail) = dst.split_at_mut(at);
    let placement = std::sync::Mutex::new(Placement {
        tail,
        next: 0,
        at,
        starts: Vec::with_capacity(nblocks),
        parked: (0..nblocks).map(|_| None).collect(),
        spare,
        full: false,
    });
    let lock = || placement.lock().unwrap_or_else(|p| p.into_inner());
    let give_up = std::sync::atomic::AtomicBool::new(false);
    let r = with_worker(|w| {
        pool::run_scoped(
            (0..nblocks).collect(),
            nthreads,
            w,
            |w: &mut EncWorker, _tid, j: usize| {
                if give_up.load(std::sync::atomic::Ordering::Relaxed) {
                    return Ok(());
                }
                let mut buf = std::mem::take(&mut w.block);
                let need = plan.max_encoded(j);
                crate::mem::grow(&mut buf, need)?;
                let Some(n) = plan.encode(w, j, &mut buf)? else {
                    crate::bail!(Failure, "block {j} overflowed its worst-case size");
                };
                let mut p = lock();
                if p.next != j {
                    p.parked[j] = Some((buf, n));
                    w.block = p.spare.pop().unwrap_or_default();
                    return Ok(());
                }
                // Our turn: place this block, then the parked ones behind it.
                let (mut bytes, mut len, mut own) = (buf, n, true);
                loop {
                    let room = p.claim(len);
                    drop(p);
                    if let Some(room) = room {
                        room.copy_from_slice(&bytes[..len]);
                    }
                    p = lock();
                    if own {
                        w.block = bytes;
                    } else {
                        p.spare.push(bytes);
                    }
                    let k = p.next;
                    let Some((b, n)) = p.parked.get_mut(k).and_then(Option::take) else {
                        break;
                    };
                    (bytes, len, own) = (b, n, false);
                }
                if p.full {
                    give_up.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            },
        )
    });
    let p = placement.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut keep = p.spare;
    keep.extend(p.parked.into_iter().flatten().map(|(b, _)| b));
    SPARE_BLOCKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(keep);
    r?;
    if p.full || give_up.into_inner() {
        return Ok(0);
    }
    if p.starts.len() != nblocks {
        crate::bail!(
            Failure,
            "only {} of {nblocks} blocks were placed",
            p.starts.len()
        );
    }
    for (j, start) in p.starts.iter().enumerate() {
        let bs = Fmt::EXT_HEADER + 4 * j;
        head[bs..bs + 4].copy_from_slice(&start.to_le_bytes());
    }
    Ok(p.at)
}
