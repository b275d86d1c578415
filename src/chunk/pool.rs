//! The persistent worker pool that runs blocks in parallel.
//!
//! Threads are created on first use, kept for the life of the process and
//! added when a caller asks for more parallelism than the pool has. A parallel
//! call hands `nthreads - 1` helper loops to the pool and runs one loop on the
//! calling thread; every loop claims block indices from a shared counter, so
//! results never depend on which thread ran a block. Jobs own their inputs
//! (shared through `Arc`), which is what lets the threads outlive each call
//! without any `unsafe`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send + 'static>;

struct Pool {
    tx: Sender<Job>,
    rx: Arc<Mutex<Receiver<Job>>>,
    threads: usize,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

/// A sender to a pool with at least `n` threads (`None` if no thread could be
/// created; callers then run everything themselves).
fn pool_with(n: usize) -> Option<Sender<Job>> {
    let mut guard = POOL.lock().unwrap_or_else(|p| p.into_inner());
    let pool = guard.get_or_insert_with(|| {
        let (tx, rx) = channel::<Job>();
        Pool {
            tx,
            rx: Arc::new(Mutex::new(rx)),
            threads: 0,
        }
    });
    while pool.threads < n {
        let rx = Arc::clone(&pool.rx);
        let spawned = std::thread::Builder::new()
            .name(format!("b2nd-chunk-{}", pool.threads))
            .spawn(move || loop {
                // Hold the lock only while taking a job.
                let job = match rx.lock().unwrap_or_else(|p| p.into_inner()).recv() {
                    Ok(job) => job,
                    Err(_) => return,
                };
                job();
            });
        if spawned.is_err() {
            break;
        }
        pool.threads += 1;
    }
    (pool.threads > 0).then(|| pool.tx.clone())
}

/// Number of threads in the pool (for tests).
#[cfg(test)]
pub(crate) fn pool_threads() -> usize {
    POOL.lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map_or(0, |p| p.threads)
}

/// Computes `f(j)` for every `j < n` with up to `nthreads` threads (the caller
/// included) and returns the results in index order. A panic in `f` becomes an
/// error for that index.
pub(crate) fn run_indexed<T, F>(n: usize, nthreads: usize, f: Arc<F>) -> Vec<crate::Result<T>>
where
    T: Send + 'static,
    F: Fn(usize) -> crate::Result<T> + Send + Sync + 'static,
{
    let mut results: Vec<Option<crate::Result<T>>> = (0..n).map(|_| None).collect();
    let helpers = nthreads.saturating_sub(1).min(n.saturating_sub(1));
    let next = Arc::new(AtomicUsize::new(0));
    let (rtx, rrx) = channel::<(usize, crate::Result<T>)>();
    let mut submitted = 0;
    if helpers > 0 {
        if let Some(tx) = pool_with(helpers) {
            for _ in 0..helpers {
                let (f, next, rtx) = (Arc::clone(&f), Arc::clone(&next), rtx.clone());
                let job: Job = Box::new(move || loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    if j >= n {
                        break;
                    }
                    if rtx.send((j, guarded(&*f, j))).is_err() {
                        break;
                    }
                });
                if tx.send(job).is_ok() {
                    submitted += 1;
                }
            }
        }
    }
    drop(rtx);
    let mut done = 0;
    loop {
        let j = next.fetch_add(1, Ordering::Relaxed);
        if j >= n {
            break;
        }
        results[j] = Some(guarded(&*f, j));
        done += 1;
    }
    if submitted > 0 {
        while done < n {
            match rrx.recv() {
                Ok((j, r)) => {
                    results[j] = Some(r);
                    done += 1;
                }
                Err(_) => break,
            }
        }
    }
    results
        .into_iter()
        .enumerate()
        .map(|(j, r)| {
            r.unwrap_or_else(|| Err(crate::err!(ThreadCreate, "block {j} was not processed")))
        })
        .collect()
}

fn guarded<T, F: Fn(usize) -> crate::Result<T>>(f: &F, j: usize) -> crate::Result<T> {
    catch_unwind(AssertUnwindSafe(|| f(j)))
        .unwrap_or_else(|_| Err(crate::err!(Failure, "a worker panicked on block {j}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_in_order_and_pool_reused() {
        let f = Arc::new(|j: usize| -> crate::Result<usize> { Ok(j * j) });
        let r: Vec<usize> = run_indexed(1000, 4, Arc::clone(&f))
            .into_iter()
            .map(|x| x.unwrap())
            .collect();
        assert_eq!(r, (0..1000).map(|j| j * j).collect::<Vec<_>>());
        let before = pool_threads();
        assert!(before >= 3);
        let _ = run_indexed(100, 3, f);
        assert_eq!(
            pool_threads(),
            before,
            "no new threads for a smaller request"
        );
    }

    #[test]
    fn errors_and_panics_are_reported_per_block() {
        let f = Arc::new(|j: usize| -> crate::Result<usize> {
            match j {
                3 => Err(crate::err!(Data, "three")),
                5 => panic!("five"),
                _ => Ok(j),
            }
        });
        let r = run_indexed(8, 3, f);
        assert_eq!(r[3].as_ref().unwrap_err().code(), -3);
        assert_eq!(r[5].as_ref().unwrap_err().code(), -1);
        assert_eq!(*r[7].as_ref().unwrap(), 7);
    }
}
