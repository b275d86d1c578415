//! Parallel compression and decompression: the bytes never depend on the
//! thread count, the worker threads are created once and reused across
//! calls, concurrent callers with different thread counts stay correct, and
//! an external executor replaces the pool with the same results.

use b2nd::chunk::{self, CParams, DParams, Decompressor, PostfilterArgs};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::ThreadId;

/// The external executor is process-wide: its test holds this for writing,
/// every other test for reading, so none runs while it is installed.
static EXECUTOR_GUARD: RwLock<()> = RwLock::new(());

/// Data that compresses a little: a noisy ramp of `typesize`-byte items.
fn data(n: usize, typesize: usize) -> Vec<u8> {
    let mut x = 0x1234_5678u32;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let item = (i / typesize) as u32;
            ((item >> (8 * (i % typesize).min(3))) as u8).wrapping_add((x & 3) as u8)
        })
        .collect()
}

fn cparams(compcode: u8, typesize: i32, nthreads: i16, blocksize: i32) -> CParams {
    CParams {
        compcode,
        typesize,
        nthreads,
        blocksize,
        clevel: 5,
        ..CParams::default()
    }
}

fn compress(cp: &CParams, src: &[u8]) -> Vec<u8> {
    let mut dst = vec![0u8; src.len() + 64];
    let n = chunk::compress(cp, src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

fn decompress(c: &[u8], nbytes: usize, nthreads: i16) -> Vec<u8> {
    let mut out = vec![0u8; nbytes];
    let n = Decompressor::new(DParams {
        nthreads,
        ..DParams::default()
    })
    .decompress(c, &mut out)
    .unwrap();
    assert_eq!(n, nbytes);
    out
}

#[test]
fn bytes_are_identical_for_one_to_four_threads() {
    let _g = EXECUTOR_GUARD.read().unwrap();
    // Sizes around the 128 KiB-per-thread threshold, forced small blocks
    // (many blocks per chunk) and automatic ones.
    let sizes = [
        1usize,
        1000,
        128 * 1024 - 1,
        256 * 1024 + 3,
        700_001,
        2 << 20,
    ];
    // Zlib (4) is left out: its kept deflate stream makes the output depend
    // on what the stream compressed before (see the ignored test below).
    for &compcode in &[0u8, 1, 2, 5] {
        for &(typesize, blocksize) in &[(1i32, 16 * 1024), (4, 0), (8, 40_000)] {
            for &n in &sizes {
                // lz4hc is slow in the dev profile: skip the biggest.
                if compcode == 2 && n > 1 << 20 {
                    continue;
                }
                let src = data(n, typesize as usize);
                let base = compress(&cparams(compcode, typesize, 1, blocksize), &src);
                assert_eq!(decompress(&base, n, 1), src);
                for nthreads in 2..=4i16 {
                    let c = compress(&cparams(compcode, typesize, nthreads, blocksize), &src);
                    assert_eq!(
                        c, base,
                        "codec {compcode} typesize {typesize} blocksize {blocksize} size {n} nthreads {nthreads}"
                    );
                    assert_eq!(decompress(&base, n, nthreads), src);
                }
            }
        }
    }
}

/// Stored (memcpyed) chunks decode as one copy split over the threads, and
/// through the per-block path when a block mask is set: both give the data,
/// for every thread count, with a short last block and across the 256 KiB
/// pieces the copy is cut into.
#[test]
fn stored_chunks_decode_whole_and_masked_on_any_thread_count() {
    let _g = EXECUTOR_GUARD.read().unwrap();
    for &(n, blocksize) in &[
        (1usize, 0i32),
        (100, 0),
        (300_001, 16 * 1024),
        ((3 << 20) + 5, 0),
        ((1 << 20) + 100, 40_000),
    ] {
        let src = data(n, 1);
        let mut cp = cparams(1, 1, 1, blocksize);
        cp.clevel = 0;
        let c = compress(&cp, &src);
        assert_ne!(c[2] & 0x02, 0, "{n} bytes: a stored chunk");
        for nthreads in 1..=4i16 {
            assert!(
                decompress(&c, n, nthreads) == src,
                "{n} bytes, {nthreads} threads"
            );
            // Every other block masked out: those keep the destination's bytes.
            let bs = u32::from_le_bytes(c[8..12].try_into().unwrap()) as usize;
            let nblocks = n.div_ceil(bs);
            let mask: Vec<bool> = (0..nblocks).map(|j| j % 2 == 1).collect();
            let mut d = Decompressor::new(DParams {
                nthreads,
                ..DParams::default()
            });
            d.set_maskout(&mask).unwrap();
            let mut out = vec![0xeeu8; n];
            assert_eq!(d.decompress(&c, &mut out).unwrap(), n);
            for (j, (o, s)) in out.chunks(bs).zip(src.chunks(bs)).enumerate() {
                if mask[j] {
                    assert!(o.iter().all(|&b| b == 0xee), "{n} bytes: block {j} masked");
                } else {
                    assert!(o == s, "{n} bytes: block {j}");
                }
            }
        }
    }
}

/// Decompresses `c` with a postfilter that copies each block and records the
/// thread it ran on (slowly, so that the workers get blocks too).
fn threads_seen(c: &[u8], nbytes: usize, nthreads: i16) -> (Vec<u8>, HashSet<ThreadId>) {
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let rec = Arc::clone(&seen);
    let pf: chunk::Postfilter = Arc::new(move |a: &mut PostfilterArgs<'_>| {
        a.output.copy_from_slice(a.input);
        rec.lock().unwrap().insert(std::thread::current().id());
        std::thread::sleep(std::time::Duration::from_micros(300));
        Ok(())
    });
    let mut out = vec![0u8; nbytes];
    Decompressor::new(DParams {
        nthreads,
        postfilter: Some(pf),
        ..DParams::default()
    })
    .decompress(c, &mut out)
    .unwrap();
    let mut seen = seen.lock().unwrap().clone();
    seen.remove(&std::thread::current().id());
    (out, seen)
}

#[test]
fn worker_threads_persist_across_calls() {
    let _g = EXECUTOR_GUARD.read().unwrap();
    let src = data(2 << 20, 4);
    let c = compress(&cparams(1, 4, 1, 32 * 1024), &src);
    let mut workers = HashSet::new();
    for _ in 0..8 {
        let (out, seen) = threads_seen(&c, src.len(), 3);
        assert_eq!(out, src);
        workers.extend(seen);
    }
    // Threads started per call would each have a new id: 8 calls with 2
    // helpers each would show up to 16.
    assert!(!workers.is_empty(), "worker threads took blocks");
    assert!(
        workers.len() <= 2,
        "{} distinct worker threads for nthreads = 3",
        workers.len()
    );
    // One thread asked for: everything on the calling thread.
    let (out, seen) = threads_seen(&c, src.len(), 1);
    assert_eq!(out, src);
    assert!(seen.is_empty());
}

#[test]
fn concurrent_callers_with_different_thread_counts() {
    let _g = EXECUTOR_GUARD.read().unwrap();
    let cases: Vec<(u8, Vec<u8>)> = [(1u8, 1 << 20), (5, 900_000), (0, 600_000), (2, 300_000)]
        .iter()
        .map(|&(code, n)| (code, data(n, 8)))
        .collect();
    let expected: Vec<Vec<u8>> = cases
        .iter()
        .map(|(code, src)| compress(&cparams(*code, 8, 1, 0), src))
        .collect();
    std::thread::scope(|s| {
        for user in 0..4usize {
            let (cases, expected) = (&cases, &expected);
            s.spawn(move || {
                let nthreads = (user + 1) as i16;
                for round in 0..4 {
                    for k in 0..cases.len() {
                        let k = (k + user + round) % cases.len();
                        let (code, src) = &cases[k];
                        let c = compress(&cparams(*code, 8, nthreads, 0), src);
                        assert_eq!(c, expected[k], "user {user} codec {code}");
                        assert_eq!(decompress(&c, src.len(), nthreads), *src);
                    }
                }
            });
        }
    });
}

#[test]
fn an_external_executor_replaces_the_pool() {
    let _g = EXECUTOR_GUARD.write().unwrap_or_else(|p| p.into_inner());
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
    let _g = EXECUTOR_GUARD.write().unwrap_or_else(|p| p.into_inner());
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

/// On one thread, with no parallelism at all, a zlib chunk must come out the
/// same after the thread's kept encoder has compressed other data first (a
/// bug once seen with a reused zlib-rs stream).
#[test]
fn zlib_output_does_not_depend_on_stream_history() {
    // The levels the own encoder runs (1: one-candidate parse, 2, 5 and 6:
    // greedy on chains, 7 and 8: lazy), and 9 (zlib-rs).
    for clevel in [1u8, 2, 5, 6, 7, 8, 9] {
        let src = data(262_147, 8);
        let cp = move |ts: i32, bs: i32| CParams {
            clevel,
            ..cparams(4, ts, 1, bs)
        };
        let fresh = {
            let src = src.clone();
            std::thread::spawn(move || compress(&cp(8, 40_000), &src))
                .join()
                .unwrap()
        };
        let after_other_work = std::thread::spawn(move || {
            for &(n, ts, bs) in &[
                (1000usize, 1i32, 16 * 1024),
                (262_147, 1, 16 * 1024),
                (700_001, 4, 0),
            ] {
                compress(&cp(ts, bs), &data(n, ts as usize));
            }
            compress(&cp(8, 40_000), &src)
        })
        .join()
        .unwrap();
        assert!(
            fresh == after_other_work,
            "zlib clevel {clevel} bytes depend on the encoder's history"
        );
    }
}
