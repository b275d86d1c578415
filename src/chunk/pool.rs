//! Running the blocks of one chunk on several threads.
//!
//! A parallel call spawns `nthreads - 1` scoped helper threads and works on
//! the calling thread too; every thread claims the next item from a shared
//! queue, so results never depend on which thread ran an item. Scoped threads
//! may borrow the caller's slices (the chunk, the destination pieces), so
//! nothing is copied to share it. Helper threads take their scratch (codec
//! contexts, filter buffers) from a stash that outlives the call, so those
//! are not rebuilt for every chunk.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Threads worth using for `nbytes` of work when `asked` were requested: a
/// thread is started for each call, so each must get enough bytes (128 KiB)
/// to pay for its start-up. Never less than 1.
pub(crate) fn threads_for(asked: i16, nbytes: usize) -> usize {
    const MIN_BYTES_PER_THREAD: usize = 128 * 1024;
    (asked.max(1) as usize).min((nbytes / MIN_BYTES_PER_THREAD).max(1))
}

/// Per-thread scratch that helper threads borrow from a process-wide stash.
pub(crate) trait Scratch: Default + Send + 'static {
    fn stash() -> &'static Mutex<Vec<Self>>;
}

fn take<W: Scratch>() -> W {
    W::stash()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop()
        .unwrap_or_default()
}

fn give_back<W: Scratch>(w: W) {
    W::stash().lock().unwrap_or_else(|p| p.into_inner()).push(w);
}

/// Runs `f(scratch, tid, item)` for every item with up to `nthreads` threads,
/// the caller (tid 0, with `caller`'s scratch) included. Returns the error of
/// the first failing item in item order; a panic in `f` is an error too.
pub(crate) fn run_scoped<I, W, F>(
    items: Vec<I>,
    nthreads: usize,
    caller: &mut W,
    f: F,
) -> crate::Result<()>
where
    I: Send,
    W: Scratch,
    F: Fn(&mut W, usize, I) -> crate::Result<()> + Sync,
{
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let first_err: Mutex<Option<(usize, crate::Error)>> = Mutex::new(None);
    let work = |w: &mut W, tid: usize| loop {
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
        let Some((k, item)) = next else {
            break;
        };
        let r = catch_unwind(AssertUnwindSafe(|| f(w, tid, item)))
            .unwrap_or_else(|_| Err(crate::err!(Failure, "a worker panicked on item {k}")));
        if let Err(e) = r {
            let mut slot = first_err.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().map_or(true, |(k0, _)| k < *k0) {
                *slot = Some((k, e));
            }
        }
    };
    let helpers = nthreads.saturating_sub(1).min(n.saturating_sub(1));
    std::thread::scope(|s| {
        let work = &work;
        for tid in 1..=helpers {
            // When a thread cannot be created the others (and the caller)
            // simply take its share of the queue.
            let _ = std::thread::Builder::new()
                .name(format!("b2nd-chunk-{tid}"))
                .spawn_scoped(s, move || {
                    let mut w = take::<W>();
                    work(&mut w, tid);
                    give_back(w);
                });
        }
        work(caller, 0);
    });
    match first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Probe {
        uses: usize,
    }

    static PROBES: Mutex<Vec<Probe>> = Mutex::new(Vec::new());

    impl Scratch for Probe {
        fn stash() -> &'static Mutex<Vec<Self>> {
            &PROBES
        }
    }

    /// Scratch of the error test: its own stash, so the two tests, which run
    /// at the same time, do not take each other's scratch.
    #[derive(Default)]
    struct Quiet;

    static QUIET: Mutex<Vec<Quiet>> = Mutex::new(Vec::new());

    impl Scratch for Quiet {
        fn stash() -> &'static Mutex<Vec<Self>> {
            &QUIET
        }
    }

    #[test]
    fn small_jobs_stay_on_fewer_threads() {
        assert_eq!(threads_for(0, 10 << 20), 1);
        assert_eq!(threads_for(4, 1000), 1);
        assert_eq!(threads_for(4, 256 * 1024), 2);
        assert_eq!(threads_for(4, 10 << 20), 4);
    }

    #[test]
    fn every_item_runs_once_and_scratch_is_kept() {
        let mut slots = vec![0usize; 1000];
        let items: Vec<(usize, &mut usize)> = slots.iter_mut().enumerate().collect();
        let mut mine = Probe::default();
        run_scoped(items, 4, &mut mine, |w: &mut Probe, _tid, (j, out)| {
            w.uses += 1;
            *out += j * j;
            Ok(())
        })
        .unwrap();
        assert_eq!(slots, (0..1000).map(|j| j * j).collect::<Vec<_>>());
        let helper_uses: usize = PROBES.lock().unwrap().iter().map(|p| p.uses).sum();
        assert_eq!(mine.uses + helper_uses, 1000);
        assert!(
            !PROBES.lock().unwrap().is_empty(),
            "helpers gave their scratch back"
        );
    }

    #[test]
    fn the_first_error_in_item_order_is_reported() {
        let mut mine = Quiet;
        let r = run_scoped(
            (0..8).collect::<Vec<usize>>(),
            3,
            &mut mine,
            |_: &mut Quiet, _tid, j| match j {
                3 => Err(crate::err!(Data, "three")),
                5 => panic!("five"),
                _ => Ok(()),
            },
        );
        assert_eq!(r.unwrap_err().code(), -3);
        let r = run_scoped(
            vec![5usize],
            1,
            &mut mine,
            |_: &mut Quiet, _tid, _j| -> crate::Result<()> { panic!("five") },
        );
        assert_eq!(r.unwrap_err().code(), -1);
    }
}
