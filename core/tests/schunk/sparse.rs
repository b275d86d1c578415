//! Gathering items at arbitrary positions (`SChunk::get_sparse_buffer`):
//! the same items as reading each on its own, on every storage, thread
//! count, typesize and filter; the refusals of the reference; and the
//! decoding tasks handed to an external executor (the C API's threads
//! callback) however small the chunks.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use b2nd_core::chunk;
use b2nd_core::schunk::{CParams, DParams, SChunk, Storage};
use common::{TempDir, XorShift};

/// The external executor is process-wide: its test holds this for writing,
/// the others for reading.
static EXECUTOR_GUARD: RwLock<()> = RwLock::new(());

/// Items that compress a little: a noisy ramp.
fn items(n: usize, typesize: usize, seed: u64) -> Vec<u8> {
    let mut r = XorShift(seed);
    (0..n)
        .flat_map(|i| {
            let v = (i as u64).wrapping_mul(2654435761) ^ (r.next() % 16);
            v.to_le_bytes().into_iter().cycle().take(typesize)
        })
        .collect()
}

struct Case {
    contiguous: bool,
    file: bool,
    typesize: usize,
    filters: [u8; 6],
    nthreads: i16,
}

/// A super-chunk of `nitems` items in chunks of `chunk_items`, blocks of
/// `block_items` (the last chunk short when they do not divide).
fn build(
    case: &Case,
    dir: &TempDir,
    nitems: usize,
    chunk_items: usize,
    block_items: usize,
) -> (SChunk, Vec<u8>) {
    let ts = case.typesize;
    let path = dir.join(format!(
        "s-{}-{}-{ts}-{}-{}.b2frame",
        case.contiguous, case.file, case.filters[4], case.nthreads
    ));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&path);
    let mut s = SChunk::new(Storage {
        contiguous: case.contiguous,
        urlpath: case.file.then(|| path.clone()),
        cparams: CParams {
            typesize: ts as i32,
            blocksize: (block_items * ts) as i32,
            clevel: 5,
            filters: case.filters,
            nthreads: case.nthreads,
            ..CParams::default()
        },
        dparams: DParams {
            nthreads: case.nthreads,
            ..DParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    let data = items(nitems, ts, 7 + ts as u64);
    for piece in data.chunks(chunk_items * ts) {
        s.append_buffer(piece).unwrap();
    }
    (s, data)
}

/// Coordinates that hit block edges, chunk edges, repeats and both orders.
fn coords(nitems: usize, seed: u64) -> Vec<i64> {
    let mut r = XorShift(seed);
    let n = nitems as i64;
    let mut c: Vec<i64> = vec![0, 1, n - 1, n - 2, 31, 32, 33, 127, 128, 129, 128, 0, n - 1];
    c.extend((0..200).map(|_| (r.next() % nitems as u64) as i64));
    c.retain(|&x| x < n);
    c
}

#[test]
fn gathered_items_equal_the_items_read_one_by_one() {
    let _g = EXECUTOR_GUARD.read().unwrap_or_else(|p| p.into_inner());
    let dir = TempDir::new("schunk-sparse");
    let shuffle = [0, 0, 0, 0, 0, 1];
    let bitshuffle = [0, 0, 0, 0, 0, 2];
    let delta = [0, 0, 0, 0, 3, 2];
    let mut cases = Vec::new();
    for (contiguous, file) in [(false, false), (true, false), (true, true), (false, true)] {
        for nthreads in [1, 4] {
            cases.push(Case {
                contiguous,
                file,
                typesize: 4,
                filters: shuffle,
                nthreads,
            });
        }
    }
    for (typesize, filters) in [
        (1, shuffle),
        (2, [0; 6]),
        (8, bitshuffle),
        (4, delta),
        (8, delta),
    ] {
        cases.push(Case {
            contiguous: true,
            file: true,
            typesize,
            filters,
            nthreads: 3,
        });
        cases.push(Case {
            contiguous: false,
            file: false,
            typesize,
            filters,
            nthreads: 3,
        });
    }
    for case in &cases {
        let nitems = 1000;
        let (s, data) = build(case, &dir, nitems, 128, 32);
        let ts = case.typesize;
        let c = coords(nitems, 99);
        let mut got = vec![0xEEu8; c.len() * ts];
        s.get_sparse_buffer(&c, &mut got).unwrap();
        for (k, &x) in c.iter().enumerate() {
            let x = x as usize;
            assert_eq!(
                &got[k * ts..(k + 1) * ts],
                &data[x * ts..(x + 1) * ts],
                "item {x} (entry {k}), contiguous {}, file {}, typesize {ts}, filters {:?}, {} threads",
                case.contiguous,
                case.file,
                case.filters,
                case.nthreads
            );
        }
        // One coordinate, and none.
        let mut one = vec![0u8; ts];
        s.get_sparse_buffer(&[999], &mut one).unwrap();
        assert_eq!(&one[..], &data[999 * ts..]);
        s.get_sparse_buffer(&[], &mut []).unwrap();
    }
}

#[test]
fn out_of_range_coordinates_and_short_buffers_are_refused() {
    let _g = EXECUTOR_GUARD.read().unwrap_or_else(|p| p.into_inner());
    let dir = TempDir::new("schunk-sparse-refused");
    let case = Case {
        contiguous: false,
        file: false,
        typesize: 4,
        filters: [0, 0, 0, 0, 0, 1],
        nthreads: 2,
    };
    let (s, _) = build(&case, &dir, 1000, 128, 32);
    let invalid =
        |r: b2nd_core::Result<()>| matches!(r, Err(e) if e.kind() == b2nd_core::ErrorKind::InvalidParam);
    let mut out = vec![0u8; 8];
    assert!(
        invalid(s.get_sparse_buffer(&[3, 1000], &mut out)),
        "past the end"
    );
    assert!(invalid(s.get_sparse_buffer(&[-1, 3], &mut out)), "negative");
    assert!(
        invalid(s.get_sparse_buffer(&[1000], &mut out[..4])),
        "one, past the end"
    );
    assert!(
        invalid(s.get_sparse_buffer(&[1, 2, 3], &mut out)),
        "buffer too short"
    );
}

/// What the reference refuses as not supported yet is read item by item:
/// chunks of varying sizes, VL blocks, an automatic block size.
#[test]
fn chunks_of_any_shape_are_read_item_by_item() {
    let _g = EXECUTOR_GUARD.read().unwrap_or_else(|p| p.into_inner());
    let gather = |s: &mut SChunk, data: &[u8], c: &[i64], ts: usize| {
        let mut out = vec![0u8; c.len() * ts];
        s.get_sparse_buffer(c, &mut out).unwrap();
        for (k, &x) in c.iter().enumerate() {
            let x = x as usize;
            assert_eq!(
                &out[k * ts..(k + 1) * ts],
                &data[x * ts..(x + 1) * ts],
                "item {x}"
            );
        }
    };
    // Chunks of different sizes: no fixed chunksize.
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut v = SChunk::new(Storage::in_memory(cp.clone())).unwrap();
    let parts = [items(100, 4, 1), items(60, 4, 2), items(130, 4, 3)];
    for p in &parts {
        v.append_buffer(p).unwrap();
    }
    assert_eq!(v.chunksize(), 0);
    let data = parts.concat();
    gather(&mut v, &data, &[289, 0, 100, 159, 160, 99, 5, 289], 4);
    // An automatic block size (0 in the super-chunk).
    let mut auto = SChunk::new(Storage::in_memory(cp)).unwrap();
    let data = items(3000, 4, 4);
    for p in data.chunks(1000 * 4) {
        auto.append_buffer(p).unwrap();
    }
    assert_eq!(auto.blocksize(), 0);
    gather(&mut auto, &data, &[2999, 0, 950, 2500, 1000, 999], 4);
    // VL blocks.
    let mut vl = SChunk::new(Storage::in_memory(CParams {
        typesize: 1,
        ..CParams::default()
    }))
    .unwrap();
    vl.append_vlblocks(&[b"abcd".as_slice(), b"efghij".as_slice()])
        .unwrap();
    assert!(vl.vl_blocks());
    gather(&mut vl, b"abcdefghij", &[9, 0, 4, 5, 3], 1);
}

/// Counts the executor's calls and jobs, running every job on its own thread.
fn counting_executor(calls: Arc<AtomicUsize>, jobs: Arc<AtomicUsize>) -> chunk::Executor {
    Arc::new(move |njobs: usize, job: &(dyn Fn(usize) + Sync)| {
        calls.fetch_add(1, Ordering::SeqCst);
        jobs.fetch_add(njobs, Ordering::SeqCst);
        std::thread::scope(|s| {
            for i in 0..njobs {
                s.spawn(move || job(i));
            }
        });
    })
}

/// Chunks of 512 bytes, 4 threads: the gather's block tasks go to the
/// executor, at most one job per thread and per task, as the reference's go
/// to its threads callback; with one thread, one task or one coordinate
/// they stay on the caller. The items are the same either way.
#[test]
fn an_external_executor_runs_the_tasks_of_small_chunks() {
    let _g = EXECUTOR_GUARD.write().unwrap_or_else(|p| p.into_inner());
    let dir = TempDir::new("schunk-sparse-exec");
    let case = |nthreads, file| Case {
        contiguous: file,
        file,
        typesize: 4,
        filters: [0, 0, 0, 0, 0, 1],
        nthreads,
    };
    let (four, data) = build(&case(4, false), &dir, 1024, 128, 32);
    let (on_disk, _) = build(&case(4, true), &dir, 1024, 128, 32);
    let (one, _) = build(&case(1, false), &dir, 1024, 128, 32);
    let c = coords(1024, 5);
    let mut want = vec![0u8; c.len() * 4];
    four.get_sparse_buffer(&c, &mut want).unwrap();

    let (calls, jobs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    chunk::set_external_executor(Some(counting_executor(calls.clone(), jobs.clone())));
    let take = || {
        (
            calls.swap(0, Ordering::SeqCst),
            jobs.swap(0, Ordering::SeqCst),
        )
    };
    let mut got = vec![0u8; c.len() * 4];
    four.get_sparse_buffer(&c, &mut got).unwrap();
    let memory = take();
    let mut got_disk = vec![0u8; c.len() * 4];
    on_disk.get_sparse_buffer(&c, &mut got_disk).unwrap();
    let disk = take();
    let mut got_one = vec![0u8; c.len() * 4];
    one.get_sparse_buffer(&c, &mut got_one).unwrap();
    let single_thread = take();
    let mut same_block = [0u8; 8];
    four.get_sparse_buffer(&[5, 6], &mut same_block).unwrap();
    let one_task = take();
    chunk::set_external_executor(None);

    assert_eq!(memory, (1, 4), "in memory: one call, a job per thread");
    assert_eq!(disk, (1, 4), "on disk: one call, a job per thread");
    assert_eq!(single_thread, (0, 0));
    assert_eq!(one_task, (0, 0));
    assert_eq!(got, want);
    assert_eq!(got_disk, want);
    assert_eq!(got_one, want);
    assert_eq!(&same_block[..], &data[20..28]);
}
