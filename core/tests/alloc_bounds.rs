//! A chunk's header says how many bytes it decodes to (up to 2 GiB), and a
//! reader that trusts it before checking the rest of the chunk can be made
//! to allocate and zero gigabytes for a few bytes of input. These tests
//! watch the largest allocation a read asks for.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use b2nd_core::chunk::{self, CParams};
use b2nd_core::schunk::{SChunk, Storage};

/// The system allocator, noting the largest request made on each thread.
struct Watching;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the allocator also runs while a thread's locals are torn down.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is passed unchanged to `System`, which upholds the
// `GlobalAlloc` contract; noting a size touches only a const-initialised
// thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

/// The largest single allocation `f` asks for on this thread.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    let out = f();
    (out, LARGEST.with(Cell::get))
}

const MIB: usize = 1 << 20;

/// What the fuzzer found: 10 bytes stored verbatim (42 bytes with the
/// header) whose header claims 2,000,000,000.
fn stored_chunk_claiming_2gb() -> Vec<u8> {
    let cp = CParams {
        clevel: 0,
        typesize: 1,
        ..CParams::default()
    };
    let mut c = vec![0u8; 64];
    let n = chunk::compress(&cp, b"0123456789", &mut c).unwrap();
    assert_eq!(n, 42, "a stored chunk of 10 bytes");
    c.truncate(n);
    c[4..8].copy_from_slice(&2_000_000_000i32.to_le_bytes());
    c
}

#[test]
fn a_chunk_is_checked_before_its_claimed_size_is_allocated() {
    let (r, largest) =
        largest_allocation(|| chunk::decompress_to_vec(&stored_chunk_claiming_2gb()));
    assert_eq!(r.unwrap_err().code(), -3, "BLOSC2_ERROR_DATA");
    assert!(largest < MIB, "asked for {largest} bytes");

    // The watch sees a real decode's buffer.
    let data: Vec<u8> = (0..4 * MIB).map(|i| (i / 1000) as u8).collect();
    let mut c = vec![0u8; data.len() + 64];
    let n = chunk::compress(&CParams::default(), &data, &mut c).unwrap();
    let (r, largest) = largest_allocation(|| chunk::decompress_to_vec(&c[..n]));
    assert_eq!(r.unwrap(), data);
    assert!(largest >= 4 * MIB, "asked for {largest} bytes");
}

#[test]
fn a_vlmetalayer_is_checked_before_its_claimed_size_is_allocated() {
    let cp = CParams {
        clevel: 0,
        typesize: 1,
        ..CParams::default()
    };
    let content = *b"vlmeta-\x01\x02\x03\x04\x05\x06\x07\x08\x09";
    let mut s = SChunk::new(Storage::in_memory(cp.clone())).unwrap();
    s.vlmeta_add("note", &content, Some(&cp)).unwrap();
    let frame = s.to_buffer().unwrap();

    let s = SChunk::from_buffer(&frame, false).unwrap();
    assert_eq!(s.vlmeta_get("note").unwrap(), content);

    // The content is stored verbatim behind its 32-byte header, whose
    // nbytes now claims 2,000,000,000.
    let at = frame
        .windows(content.len())
        .position(|w| w == content)
        .expect("stored content in the frame");
    let mut bad = frame.clone();
    bad[at - 28..at - 24].copy_from_slice(&2_000_000_000i32.to_le_bytes());
    let s = SChunk::from_buffer(&bad, false).unwrap();
    let (r, largest) = largest_allocation(|| s.vlmeta_get("note"));
    assert_eq!(r.unwrap_err().code(), -3, "BLOSC2_ERROR_DATA");
    assert!(largest < MIB, "asked for {largest} bytes");
}

/// A contiguous frame file (named after `tag` and the process) holding one
/// chunk.
fn frame_file_of(tag: &str, cparams: CParams, chunk: &[u8]) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("b2nd_alloc_{tag}_{}.b2frame", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut sc = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams,
        ..Storage::default()
    })
    .unwrap();
    sc.append_chunk(chunk).unwrap();
    path
}

/// [`frame_file_of`], then `patch` rewrites the chunk where the frame file
/// stores it (header fields no honest writer would set).
fn frame_file_with_patched_chunk(
    tag: &str,
    cparams: CParams,
    chunk: &[u8],
    patch: impl FnOnce(&mut [u8]),
) -> std::path::PathBuf {
    let path = frame_file_of(tag, cparams, chunk);
    let mut frame = std::fs::read(&path).unwrap();
    let at = frame
        .windows(chunk.len())
        .position(|w| w == chunk)
        .expect("the chunk stored verbatim");
    patch(&mut frame[at..at + chunk.len()]);
    std::fs::write(&path, &frame).unwrap();
    path
}

/// A read of a few bytes of a chunk in an on-disk frame fetches and decodes
/// only the block holding them. It used to decode those blocks into a
/// buffer of the chunk's whole nbytes (16 MiB here), which a header can set
/// to 2 GiB.
#[test]
fn a_partial_read_of_an_on_disk_chunk_needs_one_block() {
    let data: Vec<u8> = (0..16 * MIB).map(|i| (i / 1000) as u8).collect();
    let cp = CParams {
        typesize: 8,
        ..CParams::default()
    };
    let mut c = vec![0u8; data.len() + 64];
    let n = chunk::compress(&cp, &data, &mut c).unwrap();
    let path = frame_file_of("bounds", cp, &c[..n]);

    let sc = SChunk::open(&path).unwrap();
    let lo = 8 * MIB + 4;
    let mut out = [0u8; 80];
    let (r, largest) = largest_allocation(|| sc.read_chunk_range(0, lo, &mut out));
    r.unwrap();
    assert_eq!(out, data[lo..lo + 80]);
    assert!(largest < 2 * MIB, "a byte range asked for {largest} bytes");

    let (r, largest) = largest_allocation(|| sc.get_slice_buffer(1000, 1010, &mut out));
    r.unwrap();
    assert_eq!(out, data[8000..8080]);
    assert!(largest < 2 * MIB, "a slice asked for {largest} bytes");
    let _ = std::fs::remove_file(&path);
}

/// A chunk in a file frame whose header claims more compressed bytes than
/// the frame holds is refused before a read sized by that claim: its lazy
/// chunk's last block would otherwise run to the claimed end, and reading
/// that block allocated and zeroed the claimed size first (the fuzzer's
/// `frame_file` found a 775-byte frame doing so).
#[test]
fn a_file_chunk_claiming_more_bytes_than_the_frame_holds_is_refused() {
    let data: Vec<u8> = (0..MIB)
        .map(|i| (i % 251) as u8 ^ (i / 4096) as u8)
        .collect();
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let mut c = vec![0u8; data.len() + 64];
    let n = chunk::compress(&cp, &data, &mut c).unwrap();
    c.truncate(n);
    let path = frame_file_with_patched_chunk("claim", cp, &c, |h| {
        h[12..16].copy_from_slice(&1_900_000_000i32.to_le_bytes());
    });

    let sc = SChunk::open(&path).unwrap();
    let mut out = [0u8; 80];
    let (r, largest) = largest_allocation(|| sc.read_chunk_range(0, MIB - 100, &mut out));
    assert_eq!(r.unwrap_err().code(), -11, "BLOSC2_ERROR_INVALID_HEADER");
    assert!(largest < 2 * MIB, "asked for {largest} bytes");
    let (r, largest) = largest_allocation(|| sc.get_lazychunk(0).map(|c| c.len()));
    assert_eq!(r.unwrap_err().code(), -11, "BLOSC2_ERROR_INVALID_HEADER");
    assert!(largest < 2 * MIB, "asked for {largest} bytes");
    let _ = std::fs::remove_file(&path);
}

/// A stored (memcpyed) chunk in a file whose header claims far more data
/// than it holds, in small blocks, is refused before its lazy chunk, 8 bytes
/// a block, is sized by the claim. The sparse_dir fuzzer found 320-byte chunk
/// files claiming 1 GiB that made each partial read build a 165 MB lazy chunk.
#[test]
fn a_stored_file_chunk_claiming_more_data_than_it_holds_is_refused() {
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let cp = CParams {
        typesize: 4,
        clevel: 0,
        blocksize: 1024,
        ..CParams::default()
    };
    let mut c = vec![0u8; data.len() + 64];
    let n = chunk::compress(&cp, &data, &mut c).unwrap();
    c.truncate(n);
    assert_ne!(c[2] & 0x02, 0, "the chunk is stored");
    // nbytes 1 GiB in blocks of 64 bytes: 2^24 blocks.
    let path = frame_file_with_patched_chunk("stored_claim", cp, &c, |h| {
        h[4..8].copy_from_slice(&(1i32 << 30).to_le_bytes());
        h[8..12].copy_from_slice(&64i32.to_le_bytes());
    });

    let sc = SChunk::open(&path).unwrap();
    let mut out = [0u8; 80];
    let (r, largest) = largest_allocation(|| sc.read_chunk_range(0, 100, &mut out));
    assert_eq!(r.unwrap_err().code(), -11, "BLOSC2_ERROR_INVALID_HEADER");
    assert!(largest < 2 * MIB, "a byte range asked for {largest} bytes");
    let (r, largest) = largest_allocation(|| sc.get_lazychunk(0).map(|c| c.len()));
    assert_eq!(r.unwrap_err().code(), -11, "BLOSC2_ERROR_INVALID_HEADER");
    assert!(largest < 2 * MIB, "get_lazychunk asked for {largest} bytes");
    let _ = std::fs::remove_file(&path);
}
