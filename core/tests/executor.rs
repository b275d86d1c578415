//! The external executor (`chunk::set_external_executor`) replaces the
//! thread pool with the same bytes. It is process-wide, so these tests have
//! a process of their own (no other test's threads can reach it) and take
//! turns.

#[path = "chunk/pool_util.rs"]
mod pool_util;

use b2nd_core::chunk::{self, CParams, DParams, Decompressor};
use pool_util::{compress, cparams, data, decompress};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Held by each test while it has an executor installed.
static EXECUTOR: Mutex<()> = Mutex::new(());

#[test]
fn an_external_executor_replaces_the_pool() {
    let _g = EXECUTOR.lock().unwrap_or_else(|p| p.into_inner());
    let src = data(1 << 20, 8);
    let base = compress(&cparams(5, 8, 1, 64 * 1024), &src);

    // Runs the jobs in reverse order, each on its own scoped thread.
    let calls = Arc::new(AtomicUsize::new(0));
    let jobs = Arc::new(AtomicUsize::new(0));
    let (c2, j2) = (Arc::clone(&calls), Arc::clone(&jobs));
    chunk::set_external_executor(Some(Arc::new(
        move |njobs: usize, job: &(dyn Fn(usize) + Sync)| {
            c2.fetch_add(1, Ordering::SeqCst);
            j2.fetch_add(njobs, Ordering::SeqCst);
            std::thread::scope(|s| {
                for i in (0..njobs).rev() {
                    s.spawn(move || job(i));
                }
            });
        },
    )));
    let c = compress(&cparams(5, 8, 3, 64 * 1024), &src);
    let out = decompress(&c, src.len(), 4);
    let (ncalls, njobs) = (calls.load(Ordering::SeqCst), jobs.load(Ordering::SeqCst));

    // An executor that runs nothing: the call fails instead of returning
    // unwritten blocks.
    chunk::set_external_executor(Some(Arc::new(
        |_n: usize, _job: &(dyn Fn(usize) + Sync)| {},
    )));
    let mut dst = vec![0u8; src.len() + 64];
    let lazy = chunk::compress(&cparams(5, 8, 2, 64 * 1024), &src, &mut dst);
    let mut back = vec![0u8; src.len()];
    let lazy_d = Decompressor::new(DParams {
        nthreads: 2,
        ..DParams::default()
    })
    .decompress(&base, &mut back);

    // One thread never reaches the executor.
    let single = compress(&cparams(5, 8, 1, 64 * 1024), &src);
    chunk::set_external_executor(None);

    assert_eq!(c, base);
    assert_eq!(out, src);
    assert_eq!(ncalls, 2, "one compression, one decompression");
    assert_eq!(njobs, 3 + 4, "one job per thread asked for");
    assert!(lazy.is_err(), "compression with skipped jobs: {lazy:?}");
    assert!(lazy_d.is_err(), "decompression with skipped jobs");
    assert_eq!(single, base);
    // The pool is back.
    assert_eq!(compress(&cparams(5, 8, 3, 64 * 1024), &src), base);
}

/// A small chunk of several blocks goes to an installed executor, as the
/// reference hands it to its threads callback, whatever its size,
/// compressed or stored (memcpyed) alike: one call, one job per thread asked
/// for but no more jobs than blocks (the reference passes one per thread
/// even then; the extra ones find nothing to do). A chunk of one block, and
/// one thread, stay on the caller. The bytes are the pool's.
#[test]
fn an_external_executor_gets_small_chunks_too() {
    let _g = EXECUTOR.lock().unwrap_or_else(|p| p.into_inner());
    let src: Vec<u8> = (0..512u32).map(|i| (i / 128 + 1) as u8).collect();
    let stored = |nthreads| CParams {
        clevel: 0,
        ..cparams(1, 4, nthreads, 128)
    };
    let base = compress(&cparams(1, 4, 1, 128), &src);
    let base_stored = compress(&stored(1), &src);
    let jobs = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&jobs);
    chunk::set_external_executor(Some(Arc::new(
        move |njobs: usize, job: &(dyn Fn(usize) + Sync)| {
            seen.lock().unwrap().push(njobs);
            for i in 0..njobs {
                job(i);
            }
        },
    )));
    let calls = || std::mem::take(&mut *jobs.lock().unwrap());
    let four = compress(&cparams(1, 4, 4, 128), &src);
    let out = decompress(&four, src.len(), 4);
    let eight = compress(&cparams(1, 4, 8, 128), &src);
    let two = compress(&cparams(1, 4, 2, 128), &src);
    let compressed = calls();
    let copied = compress(&stored(4), &src);
    let copied_back = decompress(&copied, src.len(), 3);
    let stored_calls = calls();
    let one_block = compress(&cparams(1, 4, 4, 512), &src);
    let back = decompress(&one_block, src.len(), 4);
    let single = compress(&cparams(1, 4, 1, 128), &src);
    let single_back = decompress(&four, src.len(), 1);
    let left = calls();
    chunk::set_external_executor(None);
    assert_eq!(
        compressed,
        [4, 4, 4, 2],
        "4 blocks: 4 jobs, even for 8 threads"
    );
    assert_eq!(stored_calls, [4, 3], "a stored chunk of 4 blocks");
    assert_eq!(left, [0usize; 0], "one block, or one thread");
    assert!(four.len() < src.len(), "the blocks compress");
    for c in [&four, &eight, &two, &single] {
        assert_eq!(c, &base);
    }
    assert_eq!(copied, base_stored);
    for d in [&out, &copied_back, &back, &single_back] {
        assert_eq!(d, &src);
    }
}
