//! Running the blocks of one chunk on several threads.
//!
//! Worker threads are created once per process and reused by every call and
//! every context: a call asking for `n` threads runs on the calling thread
//! plus the `n - 1` workers of a pool kept for that thread count, so `n` is
//! honoured exactly and no thread is started per call (starting threads per
//! call costs tens of microseconds, which dominates small chunks).
//!
//! Why `rayon` (its `ThreadPool`, nothing else): the jobs borrow the caller's
//! data (the source chunk, the destination cut into disjoint per-block
//! pieces, the caller's scratch), and a persistent pool can only run such
//! borrowing jobs if it guarantees they finish before the call returns.
//! `rayon::ThreadPool::in_place_scope` gives exactly that guarantee, checked
//! by the compiler, with no `unsafe` here; a hand-written persistent pool
//! would need lifetime-erasing `unsafe` to hand borrowed closures to
//! long-lived threads. Rayon's pools are also cheap to wake and are
//! well-tested under contention.
//!
//! Every thread claims the next item from a shared queue, so results never
//! depend on which thread ran an item. Workers take their scratch (codec
//! contexts, filter buffers) from a process-wide stash and give it back, so
//! those outlive the call and are not rebuilt for every chunk.
//!
//! An embedding application may supply its own executor instead of the pool
//! (the C API's `blosc2_set_threads_callback`): see [`set_external_executor`].

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Threads worth using for `nbytes` of work when `asked` were requested.
/// Waking a worker and moving a block's data to its core costs a few
/// microseconds, so each thread must get enough bytes (128 KiB) to pay for
/// it; a small chunk stays on the calling thread. Never less than 1.
pub(crate) fn threads_for(asked: i16, nbytes: usize) -> usize {
    const MIN_BYTES_PER_THREAD: usize = 128 * 1024;
    (asked.max(1) as usize).min((nbytes / MIN_BYTES_PER_THREAD).max(1))
}

/// Per-thread scratch that workers borrow from a process-wide stash.
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

/// An executor that replaces the worker pool: called as `exec(njobs, job)`,
/// it must run `job(i)` once for every `i` in `0..njobs` (on any threads,
/// concurrently or not) and return only when all of them have returned.
pub type Executor = Arc<dyn Fn(usize, &(dyn Fn(usize) + Sync)) + Send + Sync>;

static EXECUTOR: RwLock<Option<Executor>> = RwLock::new(None);

/// Hands all parallel chunk work of the process to `exec` instead of the
/// built-in pool (`None` goes back to the pool). The jobs and their indices
/// are the same either way; a job never panics. Calls with one thread never
/// use the executor.
pub fn set_external_executor(exec: Option<Executor>) {
    *EXECUTOR.write().unwrap_or_else(|p| p.into_inner()) = exec;
}

fn external_executor() -> Option<Executor> {
    EXECUTOR.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The worker pools, by number of workers. Created on first use, kept for
/// the life of the process.
static POOLS: Mutex<BTreeMap<usize, Arc<rayon::ThreadPool>>> = Mutex::new(BTreeMap::new());

/// The pool of `workers` threads, built on first request; `None` when the
/// system cannot create the threads (the caller then works alone).
fn pool_of(workers: usize) -> Option<Arc<rayon::ThreadPool>> {
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(&workers) {
        return Some(Arc::clone(p));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(move |i| format!("b2nd-{workers}w-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(workers, Arc::clone(&pool));
    Some(pool)
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
    let finished = AtomicUsize::new(0);
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
        finished.fetch_add(1, Ordering::Relaxed);
    };
    let njobs = nthreads.min(n).max(1);
    if njobs == 1 {
        work(caller, 0);
    } else if let Some(exec) = external_executor() {
        // Job 0 keeps the caller's scratch, whichever thread runs it.
        let caller = Mutex::new(caller);
        let job = |tid: usize| {
            if tid == 0 {
                let mut w = caller.lock().unwrap_or_else(|p| p.into_inner());
                work(&mut w, 0);
            } else {
                let mut w = take::<W>();
                work(&mut w, tid);
                give_back(w);
            }
        };
        // A panicking executor is the embedder's bug; it must not unwind
        // through the chunk code (the items it skipped are reported below).
        let _ = catch_unwind(AssertUnwindSafe(|| exec(njobs, &job)));
    } else if let Some(pool) = pool_of(njobs - 1) {
        // The caller works too instead of waiting; the scope returns once
        // every spawned job has returned, so the borrows end here.
        pool.in_place_scope(|s| {
            let work = &work;
            for tid in 1..njobs {
                s.spawn(move |_| {
                    let mut w = take::<W>();
                    work(&mut w, tid);
                    give_back(w);
                });
            }
            work(caller, 0);
        });
    } else {
        work(caller, 0);
    }
    if let Some((_, e)) = first_err.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if finished.into_inner() != n {
        crate::bail!(Failure, "the thread executor did not run every job");
    }
    Ok(())
}

/// Copies `src` into `dst` (same length) with up to `nthreads` threads, the
/// caller (with its scratch `caller`) included: the body of a stored
/// (memcpyed) chunk, both ways. Each thread takes one contiguous range, not
/// a queue item per block: on the small blocks of clevel 1 the queue's lock
/// and the per-block decode steps made two threads copy random bytes at
/// 0.88x the reference (`scripts/bench.sh --only randbytes`). A range is
/// copied in [`COPY_PIECE`]-byte pieces, below the size (the L2 cache's,
/// on the machines seen) where glibc's memcpy leaves `rep movsb` for a
/// vector loop: in an ad-hoc timing here, one 4 MiB memcpy ran at 0.98x the
/// speed of the same bytes in 64 to 512 KiB pieces.
pub(crate) fn copy<W: Scratch>(
    caller: &mut W,
    dst: &mut [u8],
    src: &[u8],
    nthreads: usize,
) -> crate::Result<()> {
    if dst.len() != src.len() {
        crate::bail!(Failure, "copy of {} bytes into {}", src.len(), dst.len());
    }
    let copy_range = |out: &mut [u8], from: &[u8]| {
        for (o, s) in out.chunks_mut(COPY_PIECE).zip(from.chunks(COPY_PIECE)) {
            o.copy_from_slice(s);
        }
    };
    let nthreads = nthreads.min(dst.len().div_ceil(COPY_PIECE)).max(1);
    if nthreads == 1 {
        copy_range(dst, src);
        return Ok(());
    }
    // Ranges of whole pieces, so only the last piece of all can be short.
    let per_thread = dst.len().div_ceil(COPY_PIECE).div_ceil(nthreads) * COPY_PIECE;
    let ranges: Vec<(&mut [u8], &[u8])> = dst.chunks_mut(per_thread).zip(src.chunks(per_thread)).collect();
    run_scoped(ranges, nthreads, caller, |_, _, (out, from)| {
        copy_range(out, from);
        Ok(())
    })
}

/// The size of the pieces [`copy`] copies at once.
const COPY_PIECE: usize = 256 * 1024;

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

    /// Scratch of the error test: its own stash, so the tests, which run at
    /// the same time, do not take each other's scratch.
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
            "workers gave their scratch back"
        );
    }

    #[test]
    fn copy_gives_the_source_for_every_length_and_thread_count() {
        let mut mine = Quiet;
        let lengths = [
            0,
            1,
            COPY_PIECE - 1,
            COPY_PIECE,
            COPY_PIECE + 1,
            2 * COPY_PIECE,
            3 * COPY_PIECE + 7,
            (5 << 20) + 13,
        ];
        for n in lengths {
            let src: Vec<u8> = (0..n).map(|i| (i * 131 + i / 251) as u8).collect();
            for nthreads in 1..=4 {
                let mut dst = vec![0xa5u8; n];
                copy(&mut mine, &mut dst, &src, nthreads).unwrap();
                assert!(dst == src, "{n} bytes, {nthreads} threads");
            }
        }
        let mut short = vec![0u8; 9];
        let r = copy(&mut mine, &mut short, &[1u8; 10], 2);
        assert_eq!(r.unwrap_err().code(), -1);
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

    #[test]
    fn a_pool_is_built_once_per_thread_count() {
        // 7 threads: no other test of this binary asks for them.
        let mut mine = Quiet;
        let first = pool_of(6).unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20 {
            let ids = Mutex::new(Vec::new());
            run_scoped(
                (0..64).collect::<Vec<usize>>(),
                7,
                &mut mine,
                |_, tid, _| {
                    if tid != 0 {
                        ids.lock().unwrap().push(std::thread::current().id());
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    } else {
                        // The caller works too: slow it down so that, even on a
                        // loaded machine, the workers wake before it drains the
                        // queue alone.
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    Ok(())
                },
            )
            .unwrap();
            seen.extend(ids.into_inner().unwrap());
        }
        let last = pool_of(6).unwrap();
        assert!(
            Arc::ptr_eq(&first, &last),
            "the same pool served every call"
        );
        assert!(!seen.is_empty(), "workers took part");
        assert!(seen.len() <= 6, "{} distinct worker threads", seen.len());
    }
}
