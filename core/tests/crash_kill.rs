//! Kill -9 of a real writer process: the test binary runs itself as a
//! writer (`writer_child`, which does nothing unless the parent sets
//! B2ND_CRASH_CHILD), which appends, updates and deletes chunks and
//! rewrites a vlmetalayer of a frame file, printing each edit once its call
//! returned; the parent kills it with SIGKILL after a varying number of
//! edits and delay, reopens the file and checks that it holds every
//! acknowledged edit, and the interrupted one either whole or not at all.
//! A second writer does the same with b2nd calls on a file array (appends
//! of rows that straddle chunks, slice writes over two chunks, shrinks),
//! checked against the same calls replayed on an array in memory.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::schunk::{CParams, SChunk, Storage};

fn cparams() -> CParams {
    CParams {
        typesize: 4,
        clevel: 5,
        ..CParams::default()
    }
}

fn data(k: u64) -> Vec<u8> {
    (0..20_000u32)
        .flat_map(|i| (i.wrapping_mul(7) ^ (k as u32).wrapping_mul(1_000_003)).to_le_bytes())
        .collect()
}

fn compressed(k: u64) -> Vec<u8> {
    let mut t = SChunk::new(Storage::in_memory(cparams())).unwrap();
    t.append_buffer(&data(k)).unwrap();
    t.get_chunk(0).unwrap().into_owned()
}

/// What edit `k` of the writer is, for a frame of `n` chunks.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Edit {
    Append,
    Update(usize),
    Delete,
    Vlmeta,
}

fn edit(k: u64, n: usize) -> Edit {
    if k % 4 == 3 && n > 1 {
        Edit::Update(k as usize % n)
    } else if k % 7 == 5 && n > 2 {
        Edit::Delete
    } else if k % 5 == 4 {
        Edit::Vlmeta
    } else {
        Edit::Append
    }
}

/// The frame after edits `1..=k`: chunk keys and the vlmetalayer.
fn apply(state: &mut (Vec<u64>, Vec<u8>), k: u64) {
    match edit(k, state.0.len()) {
        Edit::Append => state.0.push(k),
        Edit::Update(n) => state.0[n] = k,
        Edit::Delete => {
            state.0.pop();
        }
        Edit::Vlmeta => state.1 = k.to_string().repeat(40).into_bytes(),
    }
}

#[test]
fn writer_child() {
    let Some(path) = std::env::var_os("B2ND_CRASH_CHILD") else {
        return;
    };
    let path = PathBuf::from(path);
    let mut s = SChunk::new(Storage {
        contiguous: std::env::var_os("B2ND_CRASH_SPARSE").is_none(),
        urlpath: Some(path),
        cparams: cparams(),
        ..Storage::default()
    })
    .unwrap();
    s.vlmeta_add("step", b"0", None).unwrap();
    println!("ready");
    let mut n = 0usize;
    for k in 1u64.. {
        match edit(k, n) {
            Edit::Append => {
                s.append_buffer(&data(k)).unwrap();
                n += 1;
            }
            Edit::Update(i) => {
                s.update_chunk(i as i64, &compressed(k)).unwrap();
            }
            Edit::Delete => {
                s.delete_chunk(n as i64 - 1).unwrap();
                n -= 1;
            }
            Edit::Vlmeta => {
                let v = k.to_string().repeat(40);
                s.vlmeta_update("step", v.as_bytes(), None).unwrap();
            }
        }
        println!("ack {k}");
    }
}

fn holds(path: &Path, state: &(Vec<u64>, Vec<u8>)) -> Result<bool, String> {
    let s = SChunk::open(path).map_err(|e| format!("does not open: {e}"))?;
    if s.nchunks() as usize != state.0.len() {
        return Ok(false);
    }
    for (i, &k) in state.0.iter().enumerate() {
        let mut out = vec![0u8; 80_000];
        let n = s
            .decompress_chunk(i as i64, &mut out)
            .map_err(|e| format!("chunk {i} fails: {e}"))?;
        if out[..n] != data(k)[..] {
            return Ok(false);
        }
    }
    Ok(s.vlmeta_get("step").map_err(|e| e.to_string())? == state.1)
}

fn kill_rounds(sparse: bool, rounds: u64) {
    let dir = std::env::temp_dir().join(format!("b2nd-crash-kill-{}-{sparse}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let me = std::env::current_exe().unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64 ^ u64::from(sparse);
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..rounds {
        let path = dir.join(format!("killed-{sparse}-{round}.b2frame"));
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir_all(&path);
        let mut cmd = Command::new(&me);
        cmd.args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
            .env("B2ND_CRASH_CHILD", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if sparse {
            cmd.env("B2ND_CRASH_SPARSE", "1");
        }
        let mut child = cmd.spawn().unwrap();
        let wanted = 1 + next() % 30;
        let pause = next() % 3000;
        let acked = kill_after_acks(&mut child, wanted, pause, round);
        let mut state = (Vec::new(), b"0".to_vec());
        for k in 1..=acked {
            apply(&mut state, k);
        }
        let mut next_state = state.clone();
        apply(&mut next_state, acked + 1);
        let now = holds(&path, &state).unwrap_or_else(|e| panic!("round {round}: {e}"));
        let then = holds(&path, &next_state).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(
            now || then,
            "round {round} (sparse {sparse}): after {acked} acknowledged edits the file holds neither them nor the next"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_killed_writer_leaves_every_acknowledged_edit_in_a_frame_file() {
    kill_rounds(false, 40);
}

#[test]
fn a_killed_writer_leaves_every_acknowledged_edit_in_a_sparse_frame() {
    kill_rounds(true, 20);
}

// ----- b2nd calls on a file array -----

const COLS: i64 = 2000;

/// An empty array of rows of `COLS` 4-byte items, chunks of 8 rows.
fn array_ctx(urlpath: Option<PathBuf>) -> Context {
    let storage = Storage {
        contiguous: true,
        urlpath,
        cparams: cparams(),
        ..Storage::default()
    };
    Context::new(
        ArrayStorage::Schunk(storage),
        4,
        &[0, COLS],
        &[8, COLS as i32],
        &[4, 500],
        Some("<u4"),
        0,
        vec![],
    )
    .unwrap()
}

fn rows(n: i64, k: u64) -> Vec<u8> {
    data(k)
        .into_iter()
        .cycle()
        .take((n * COLS * 4) as usize)
        .collect()
}

/// Call `k` of the array writer: append 5 rows (a resize, then data over
/// two chunks), write the last 12 rows, or drop the last 6.
fn nd_edit(a: &mut NdArray, k: u64) -> b2nd_core::Result<()> {
    let n = a.shape()[0];
    if k % 3 == 0 && n >= 12 {
        a.set_slice_cbuffer(&rows(12, k), &[12, COLS], &[n - 12, 0], &[n, COLS])
    } else if k % 7 == 6 && n > 10 {
        a.resize(&[n - 6, COLS], None)
    } else {
        a.append(&rows(5, k), 0)
    }
}

#[test]
fn array_writer_child() {
    let Some(path) = std::env::var_os("B2ND_CRASH_ARRAY_CHILD") else {
        return;
    };
    let mut a = NdArray::zeros(&array_ctx(Some(PathBuf::from(path)))).unwrap();
    println!("ready");
    for k in 1u64.. {
        nd_edit(&mut a, k).unwrap();
        println!("ack {k}");
    }
}

/// The items (shape, bytes) after calls `1..=k`, replayed in memory.
fn nd_state(k: u64) -> (Vec<i64>, Vec<u8>) {
    let mut a = NdArray::zeros(&array_ctx(None)).unwrap();
    for j in 1..=k {
        nd_edit(&mut a, j).unwrap();
    }
    (a.shape().to_vec(), a.to_vec().unwrap())
}

#[test]
fn a_killed_array_writer_leaves_every_acknowledged_call() {
    let dir = std::env::temp_dir().join(format!("b2nd-crash-kill-nd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let me = std::env::current_exe().unwrap();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..30 {
        let path = dir.join(format!("killed-{round}.b2nd"));
        let _ = std::fs::remove_file(&path);
        let mut child = Command::new(&me)
            .args([
                "--exact",
                "array_writer_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("B2ND_CRASH_ARRAY_CHILD", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let wanted = 1 + next() % 20;
        let pause = next() % 2000;
        let acked = kill_after_acks(&mut child, wanted, pause, round);
        let a = NdArray::open(&path)
            .unwrap_or_else(|e| panic!("round {round}: no longer opens as an array: {e}"));
        let now = (a.shape().to_vec(), a.to_vec().unwrap());
        assert!(
            now == nd_state(acked) || now == nd_state(acked + 1),
            "round {round}: after {acked} acknowledged calls the array (shape {:?}) is neither them nor the next",
            now.0
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits until `child` has acknowledged `wanted` writes ("ack N" lines),
/// SIGKILLs it `pause_us` microseconds later, and returns the last write it
/// acknowledged before it died.
fn kill_after_acks(
    child: &mut std::process::Child,
    wanted: u64,
    pause_us: u64,
    round: impl std::fmt::Display,
) -> u64 {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut acked = 0u64;
    let mut line = String::new();
    while acked < wanted {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            panic!("round {round}: the writer ended");
        }
        if let Some(k) = line.trim().strip_prefix("ack ") {
            acked = k.parse().unwrap();
        }
    }
    std::thread::sleep(std::time::Duration::from_micros(pause_us));
    child.kill().unwrap(); // SIGKILL
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    child.wait().unwrap();
    for l in rest.lines() {
        if let Some(k) = l.trim().strip_prefix("ack ") {
            acked = k.parse().unwrap();
        }
    }
    acked
}
