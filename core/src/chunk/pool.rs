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
//! long-lived threads. Rayon's idle loop is the one part not used as it
//! is: between calls the workers wait in [`Idle`], blocked, instead of
//! yielding the CPU over and over (why is there).
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
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Threads worth using for `nbytes` of work when `asked` were requested.
/// Waking a worker of the pool and moving a block's data to its core costs
/// a few microseconds, so each thread must get enough bytes (128 KiB) to pay
/// for it; a small chunk stays on the calling thread. Never less than 1.
///
/// With an external executor installed (`blosc2_set_threads_callback`) the
/// threads asked for are used whatever the size, as the reference hands
/// every multi-threaded call with more than one block to the callback: what
/// its jobs cost is the embedder's to weigh, and the callers still use no
/// more threads than they have blocks.
pub(crate) fn threads_for(asked: i16, nbytes: usize) -> usize {
    const MIN_BYTES_PER_THREAD: usize = 128 * 1024;
    let asked = asked.max(1) as usize;
    if asked > 1 && external_executor_installed() {
        return asked;
    }
    asked.min((nbytes / MIN_BYTES_PER_THREAD).max(1))
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

fn external_executor_installed() -> bool {
    EXECUTOR.read().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// The worker pools, by number of workers, of the process that made them.
/// Created on first use, kept for the life of the process.
static POOLS: Mutex<Pools> = Mutex::new(Pools {
    pid: 0,
    by_workers: BTreeMap::new(),
});

struct Pools {
    /// The process the pools' threads run in.
    pid: u32,
    by_workers: BTreeMap<usize, Arc<Pool>>,
}

/// A pool's threads and the place where they wait for the next call.
struct Pool {
    threads: rayon::ThreadPool,
    idle: Arc<Idle>,
}

/// Where a pool's workers wait between calls: spinning for a few
/// microseconds, then blocked on a condition variable, not in rayon's idle
/// loop.
///
/// Why: a rayon worker that runs out of jobs calls `yield_now` 32 times
/// before it sleeps, and when another thread is busy on its CPU each yield
/// can hand that thread a whole time slice (milliseconds), so a worker still
/// yielding when the next chunk's job arrives misses most of that chunk,
/// and the calling thread decodes it alone. A worker woken from a blocking
/// wait runs at once instead (the scheduler favours threads waking from
/// sleep), as the reference's workers, which block between calls, do.
/// The short spin first keeps the pick-up of back-to-back calls as quick as
/// rayon's: waking a blocked thread takes a system call on each side.
///
/// So each job, as its last step, queues an [`Idle::wait`] on its own
/// thread, which rayon runs right after the job, and each call announces
/// its jobs here once they are queued. `pending` counts jobs announced and
/// not yet started: a waiting worker leaves as soon as it is above zero, so
/// a wait never holds a worker while a job is queued for the pool. It is
/// signed because a job may start before its call announces it.
#[derive(Default)]
struct Idle {
    pending: AtomicIsize,
    /// Workers inside [`Idle::wait`] (read by tests).
    waiting: AtomicUsize,
    lock: Mutex<()>,
    work: Condvar,
}

/// How long a worker spins for the next call before it blocks.
const IDLE_SPIN: Duration = Duration::from_micros(20);

/// The longest a worker waits in [`Idle::wait`] before going back to
/// rayon's own idle loop (and then rayon's sleep): a bound that keeps a
/// worker from waiting on a count gone wrong, never reached by a pool in
/// use.
const IDLE_WAIT: Duration = Duration::from_secs(1);

impl Idle {
    /// `jobs` jobs of a call are queued: wake the waiting workers.
    fn announce(&self, jobs: usize) {
        self.pending.fetch_add(jobs as isize, Ordering::SeqCst);
        // Taken so that a worker between its check of `pending` and its
        // wait cannot miss the notification.
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.work.notify_all();
    }

    /// A job announced by [`Idle::announce`] has started.
    fn started(&self) {
        self.pending.fetch_sub(1, Ordering::SeqCst);
    }

    /// Returns once a job is announced (or [`IDLE_WAIT`] has passed); at
    /// once on a thread inside a call of its own ([`InCall`]).
    fn wait(&self) {
        if InCall::here() {
            return;
        }
        let no_job = || self.pending.load(Ordering::SeqCst) <= 0;
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        let mut spins = 0u32;
        // The clock is read once every 64 spins.
        while no_job() && (spins % 64 != 0 || start.elapsed() < IDLE_SPIN) {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
        }
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .work
            .wait_timeout_while(guard, IDLE_WAIT, |_| no_job())
            .unwrap_or_else(|p| p.into_inner());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Marks the calling thread as inside [`run_scoped`] while it lives.
///
/// A worker whose job makes a call of its own (a user's filter callback
/// that compresses with several threads) waits inside that call for the
/// call's jobs, and meanwhile runs jobs of the pool's queues, which may
/// hold another job's [`Idle::wait`]: blocking there would hold up the
/// call until the next announcement, so such a wait returns at once.
struct InCall;

thread_local! {
    static CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl InCall {
    fn enter() -> InCall {
        CALLS.with(|c| c.set(c.get() + 1));
        InCall
    }

    /// Whether this thread is inside a call.
    fn here() -> bool {
        CALLS.with(|c| c.get() > 0)
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        CALLS.with(|c| c.set(c.get() - 1));
    }
}

/// The pool of `workers` threads, built on first request; `None` when the
/// system cannot create the threads (the caller then works alone).
fn pool_of(workers: usize) -> Option<Arc<Pool>> {
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if pools.pid != pid {
        // A child made by fork() inherits the pools but none of their
        // threads: jobs queued there would never run and the call would
        // wait for them for ever (as the reference's does). It makes pools
        // of its own. The inherited ones are leaked, not dropped: their
        // state may be mid-update by threads that no longer exist.
        std::mem::forget(std::mem::take(&mut pools.by_workers));
        pools.pid = pid;
    }
    if let Some(p) = pools.by_workers.get(&workers) {
        return Some(Arc::clone(p));
    }
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(move |i| format!("b2nd-{workers}w-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(Pool {
        threads,
        idle: Arc::default(),
    });
    pools.by_workers.insert(workers, Arc::clone(&pool));
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
    // Workers do this call's work: calls their callbacks make on the
    // objects it works on are part of it (see `crate::gate`).
    let call = crate::gate::current_call();
    let work = |w: &mut W, tid: usize| loop {
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
        let Some((k, item)) = next else {
            break;
        };
        let r = catch_unwind(AssertUnwindSafe(|| {
            crate::gate::adopt(call, || f(w, tid, item))
        }))
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
        let _in_call = InCall::enter();
        pool.threads.in_place_scope(|s| {
            let work = &work;
            let idle = &pool.idle;
            for tid in 1..njobs {
                s.spawn(move |_| {
                    idle.started();
                    let mut w = take::<W>();
                    work(&mut w, tid);
                    give_back(w);
                    // Rayon runs this thread's own queue first: the wait
                    // comes next, not its idle loop.
                    let idle = Arc::clone(idle);
                    rayon::spawn(move || idle.wait());
                });
            }
            idle.announce(njobs - 1);
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

/// Runs `f(tid, item)` for every item with up to `nthreads` threads, the
/// caller (tid 0) included, on the pool or the external executor as chunk
/// work does; `tid` is below `nthreads`, and no two items run at once with
/// the same `tid`. Returns the error of the first failing item in item
/// order. For work built from chunk calls (a super-chunk's gathers), whose
/// scratch is the caller's to keep by `tid`.
pub(crate) fn run_each<I, F>(items: Vec<I>, nthreads: usize, f: F) -> crate::Result<()>
where
    I: Send,
    F: Fn(usize, I) -> crate::Result<()> + Sync,
{
    #[derive(Default)]
    struct NoScratch;
    static NO_SCRATCH: Mutex<Vec<NoScratch>> = Mutex::new(Vec::new());
    impl Scratch for NoScratch {
        fn stash() -> &'static Mutex<Vec<Self>> {
            &NO_SCRATCH
        }
    }
    run_scoped(items, nthreads, &mut NoScratch, |_, tid, item| f(tid, item))
}

/// Copies `src` into `dst` (same length) with up to `nthreads` threads, the
/// caller (with its scratch `caller`) included: the body of a stored
/// (memcpyed) chunk, both ways. Each thread takes one contiguous range, not
/// a queue item per block, whose lock and per-block steps cost more than the
/// copy on small blocks (`bash scripts/bench.sh --only randbytes`). A range
/// is copied in [`COPY_PIECE`]-byte pieces, below the size (the L2 cache's,
/// on the machines seen) where glibc's memcpy leaves `rep movsb` for a
/// slightly slower vector loop.
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
    // An external executor gets the threads asked for (see `threads_for`),
    // each its share of the bytes; the pool gets whole pieces.
    let external = external_executor_installed();
    let nthreads = if external {
        nthreads.min(dst.len())
    } else {
        nthreads.min(dst.len().div_ceil(COPY_PIECE))
    }
    .max(1);
    if nthreads == 1 {
        copy_range(dst, src);
        return Ok(());
    }
    // Ranges of whole pieces, so only the last piece of all can be short.
    let per_thread = if external {
        dst.len().div_ceil(nthreads)
    } else {
        dst.len().div_ceil(COPY_PIECE).div_ceil(nthreads) * COPY_PIECE
    };
    let ranges: Vec<(&mut [u8], &[u8])> = dst
        .chunks_mut(per_thread)
        .zip(src.chunks(per_thread))
        .collect();
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
    fn workers_wait_for_the_next_call_in_the_pool() {
        // 9 threads: no other test of this binary asks for them.
        let mut mine = Quiet;
        for _ in 0..3 {
            run_scoped((0..64).collect::<Vec<usize>>(), 9, &mut mine, |_, _, _| {
                Ok(())
            })
            .unwrap();
            let idle = Arc::clone(&pool_of(8).unwrap().idle);
            // Each worker's job ends by queueing its wait, which the worker
            // runs next: it is seen there well within the wait's limit.
            let start = Instant::now();
            while idle.waiting.load(Ordering::SeqCst) == 0 {
                assert!(
                    start.elapsed() < IDLE_WAIT / 2,
                    "no worker waits in the pool after a call"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    #[test]
    fn waiting_workers_never_hold_back_a_call() {
        // Several callers share one pool (10 threads, no other test's), so
        // jobs of one call are queued while workers finish another's: a
        // worker that waited with a job queued would hold that call up to
        // IDLE_WAIT, and the calls below would take minutes.
        let (done, finished) = std::sync::mpsc::channel();
        for caller in 0..4usize {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut mine = Quiet;
                let mut ok = true;
                for call in 0..200usize {
                    let mut out = vec![0usize; 40];
                    let items: Vec<(usize, &mut usize)> = out.iter_mut().enumerate().collect();
                    run_scoped(items, 10, &mut mine, |_: &mut Quiet, _tid, (j, o)| {
                        *o = j * caller + call;
                        Ok(())
                    })
                    .unwrap();
                    ok &= out.iter().enumerate().all(|(j, o)| *o == j * caller + call);
                }
                done.send(ok).unwrap();
            });
        }
        for _ in 0..4 {
            let ok = finished
                .recv_timeout(Duration::from_secs(60))
                .expect("800 small calls took over a minute: a worker held a queued job");
            assert!(ok, "a call's items were not all run");
        }
    }

    /// Starts a thread in `idle.wait()`, checks that it is still waiting
    /// 20 ms after it got there, then announces one job and joins it.
    fn waits_until_announced(idle: &Arc<Idle>) {
        let waiter = {
            let idle = Arc::clone(idle);
            std::thread::spawn(move || idle.wait())
        };
        while idle.waiting.load(Ordering::SeqCst) == 0 && !waiter.is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert!(!waiter.is_finished(), "returned with no job announced");
        idle.announce(1);
        waiter.join().unwrap();
    }

    #[test]
    fn a_wait_lasts_until_a_job_is_announced() {
        let idle = Arc::new(Idle::default());
        waits_until_announced(&idle);
        // The announced job starts: the next wait blocks again.
        idle.started();
        waits_until_announced(&idle);
        idle.started();
        // A job that starts before its call announces it: the call's
        // announcement then leaves nothing queued, and waits still block.
        idle.started();
        idle.announce(1);
        waits_until_announced(&idle);
        // A thread inside a call of its own does not wait at all.
        idle.started();
        let start = Instant::now();
        {
            let _in_call = InCall::enter();
            idle.wait();
        }
        assert!(
            start.elapsed() < IDLE_WAIT / 2,
            "waited with no job inside a call"
        );
        assert!(!InCall::here(), "the mark ends with the call");
    }

    #[test]
    fn calls_made_inside_jobs_run_every_item() {
        // Items of a 3-thread call each make a 3-thread call of their own,
        // whose jobs run on the same pool's workers.
        let mut mine = Quiet;
        let total = AtomicUsize::new(0);
        run_scoped((0..12).collect::<Vec<usize>>(), 3, &mut mine, |_, _, i| {
            let mut inner = Quiet;
            run_scoped((0..30).collect::<Vec<usize>>(), 3, &mut inner, |_, _, j| {
                total.fetch_add(i * 100 + j, Ordering::SeqCst);
                Ok(())
            })
        })
        .unwrap();
        let want: usize = (0..12)
            .flat_map(|i| (0..30).map(move |j| i * 100 + j))
            .sum();
        assert_eq!(total.into_inner(), want);
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
