//! Running per-block work on several threads.
//!
//! Blocks are claimed from an atomic counter by `workers.len()` threads, each
//! with its own scratch (`W`). Results never depend on which thread ran a
//! block. With one worker everything runs on the caller's thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `f(worker, j, out)` for every block `j < nblocks`; returns the outputs
/// in block order, or the first error (by block index).
pub(crate) fn run_blocks<W, F>(nblocks: usize, workers: &mut [W], f: F) -> crate::Result<Vec<Vec<u8>>>
where
    W: Send,
    F: Fn(&mut W, usize, &mut Vec<u8>) -> crate::Result<()> + Sync,
{
    let mut outs: Vec<Vec<u8>> = (0..nblocks).map(|_| Vec::new()).collect();
    let mut items: Vec<(usize, &mut Vec<u8>)> = outs.iter_mut().enumerate().collect();
    for_each(&mut items, workers, |w, item| f(w, item.0, item.1))?;
    Ok(outs)
}

/// Runs `f(worker, item)` over every item, spread over the workers.
pub(crate) fn for_each<W, T, F>(items: &mut [T], workers: &mut [W], f: F) -> crate::Result<()>
where
    W: Send,
    T: Send,
    F: Fn(&mut W, &mut T) -> crate::Result<()> + Sync,
{
    let nthreads = workers.len().min(items.len());
    if nthreads <= 1 {
        let Some(w) = workers.first_mut() else {
            crate::bail!(Failure, "no worker available");
        };
        for item in items.iter_mut() {
            f(w, item)?;
        }
        return Ok(());
    }
    // Each item sits behind its own lock so any thread can claim it; the
    // counter hands out indices exactly once, so locks are never contended.
    let slots: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<(usize, crate::Error)>> = Mutex::new(None);
    std::thread::scope(|s| {
        for w in workers.iter_mut().take(nthreads) {
            let (slots, next, first_err, f) = (&slots, &next, &first_err, &f);
            s.spawn(move || loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(slot) = slots.get(j) else { break };
                let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = f(w, &mut guard) {
                    let mut fe = first_err.lock().unwrap_or_else(|p| p.into_inner());
                    if fe.as_ref().map_or(true, |(k, _)| j < *k) {
                        *fe = Some((j, e));
                    }
                }
            });
        }
    });
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}
