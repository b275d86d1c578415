//! Reads of part of a chunk (`getitem`, `read_chunk_range`, slices, and the
//! byte range of a lazy chunk) decode only the blocks that hold the bytes
//! asked for: a block the range covers whole straight into the caller's
//! buffer, a block it cuts through a scratch. Every range here is checked
//! against the same bytes of the whole chunk, decoded in one call.

use crate::common;

use b2nd_core::chunk::{self, CParams, DParams, Decompressor, Special};
use b2nd_core::schunk::{SChunk, Storage};
use common::TempDir;

const BLOCKSIZE: usize = 256;
/// 15 whole blocks and a short last one.
const NBYTES: usize = 15 * BLOCKSIZE + 160;

/// Starts and lengths around block boundaries (and the chunk's ends).
fn ranges(nbytes: usize) -> Vec<(usize, usize)> {
    let starts = [
        0,
        1,
        3,
        255,
        256,
        257,
        511,
        512,
        1000,
        nbytes - 161,
        nbytes - 160,
        nbytes - 1,
    ];
    let lens = [1, 2, 4, 255, 256, 257, 512, 513, 1024, nbytes];
    let mut out = Vec::new();
    for &lo in &starts {
        for &len in &lens {
            out.push((lo, len.min(nbytes - lo)));
        }
    }
    out
}

/// Parameters for each kind of chunk a range read meets: split and unsplit
/// shuffled blocks, DELTA (every block decoded against block 0), blocks
/// stored verbatim, and a chunk stored whole (clevel 0).
fn kinds() -> Vec<(&'static str, CParams)> {
    let base = CParams {
        typesize: 4,
        blocksize: BLOCKSIZE as i32,
        ..CParams::default()
    };
    vec![
        ("shuffle", base.clone()),
        (
            "shuffle-lz4-split",
            CParams {
                compcode: 1,
                splitmode: 1,
                ..base.clone()
            },
        ),
        (
            "delta",
            CParams {
                filters: [0, 0, 0, 0, 3, 1],
                ..base.clone()
            },
        ),
        (
            "noise",
            CParams {
                filters: [0; 6],
                ..base.clone()
            },
        ),
        ("memcpyed", CParams { clevel: 0, ..base }),
    ]
}

/// Data that compresses in some blocks and not in others.
fn data(kind: &str) -> Vec<u8> {
    let mut rng = common::XorShift(0x5eed_0001);
    (0..NBYTES)
        .map(|i| match kind {
            "noise" => rng.next() as u8,
            _ if (i / BLOCKSIZE) % 3 == 2 => rng.next() as u8,
            _ => (i / 40) as u8,
        })
        .collect()
}

#[test]
fn getitem_and_decompress_range_of_every_range_match_the_whole_chunk() {
    let mut chunks = Vec::new();
    for (kind, cp) in kinds() {
        let src = data(kind);
        let mut c = vec![0u8; NBYTES + 64 + 16 * 4];
        let n = chunk::compress(&cp, &src, &mut c).unwrap();
        c.truncate(n);
        chunks.push((kind, c, src));
    }
    let value = [1u8, 2, 3, 4];
    let special = |kind, value| chunk::make_special(kind, NBYTES, 4, value).unwrap();
    chunks.push(("zeros", special(Special::Zero, None), vec![0; NBYTES]));
    chunks.push((
        "value",
        special(Special::Value, Some(&value[..])),
        value.repeat(NBYTES / 4),
    ));
    let nan = f32::NAN.to_le_bytes();
    chunks.push(("nans", special(Special::Nan, None), nan.repeat(NBYTES / 4)));
    for (kind, c, src) in &chunks {
        let mut d = Decompressor::new(DParams::default());
        for (lo, len) in ranges(NBYTES) {
            // Any bytes: `decompress_range`.
            let mut out = vec![0xa5u8; len];
            d.decompress_range(c, lo, &mut out).unwrap();
            assert_eq!(out, &src[lo..lo + len], "{kind} range {lo}+{len}");
            // Whole items: `getitem`.
            if lo % 4 != 0 || len % 4 != 0 || len == 0 {
                continue;
            }
            let mut out = vec![0xa5u8; len + 3];
            let got = d.getitem(c, lo / 4, len / 4, &mut out).unwrap();
            assert_eq!(got, len, "{kind} {lo}+{len}");
            assert_eq!(&out[..len], &src[lo..lo + len], "{kind} {lo}+{len}");
            assert_eq!(
                &out[len..],
                &[0xa5; 3],
                "{kind} {lo}+{len}: wrote past the items"
            );
        }
    }
}

/// Where `stored` keeps its super-chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    /// A chunk list in memory.
    Memory,
    /// A contiguous frame file, reopened.
    File,
    /// A sparse frame directory, reopened.
    Sparse,
}

/// A super-chunk of one chunk of each kind (and two special chunks) at
/// `place`, with the bytes each chunk holds.
fn stored(dir: &TempDir, place: Place) -> (SChunk, Vec<Vec<u8>>) {
    let path = match place {
        Place::Memory => None,
        Place::File => Some(dir.join("parts.b2frame")),
        Place::Sparse => Some(dir.join("parts.b2dir")),
    };
    let mut sc = SChunk::new(Storage {
        contiguous: place == Place::File,
        urlpath: path.clone(),
        cparams: CParams {
            typesize: 4,
            blocksize: BLOCKSIZE as i32,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    let mut expect = Vec::new();
    for (kind, cp) in kinds() {
        let src = data(kind);
        let mut c = vec![0u8; NBYTES + 64 + 16 * 4];
        let n = chunk::compress(&cp, &src, &mut c).unwrap();
        sc.append_chunk(&c[..n]).unwrap();
        expect.push(src);
    }
    // Special chunks: a frame keeps a zero chunk as a special offset.
    let value = [9u8, 8, 7, 6];
    for (kind, value, src) in [
        (Special::Zero, None, vec![0u8; NBYTES]),
        (Special::Value, Some(&value[..]), value.repeat(NBYTES / 4)),
    ] {
        let c = chunk::make_special(kind, NBYTES, 4, value).unwrap();
        sc.append_chunk(&c).unwrap();
        expect.push(src);
    }
    match path {
        Some(path) => {
            drop(sc);
            (SChunk::open(path).unwrap(), expect)
        }
        None => (sc, expect),
    }
}

#[test]
fn byte_ranges_of_stored_chunks_match_the_whole_chunk() {
    let dir = TempDir::new("partial_reads");
    for place in [Place::Memory, Place::File, Place::Sparse] {
        let (sc, expect) = stored(&dir, place);
        assert_eq!(sc.nchunks() as usize, expect.len());
        let mut d = Decompressor::new(DParams::default());
        for (n, src) in expect.iter().enumerate() {
            let lazy = sc.get_lazychunk(n as i64).unwrap().into_owned();
            // Special chunks, and every chunk in memory, are handed out whole.
            let is_lazy = lazy[31] & 0x08 != 0;
            let on_disk = place != Place::Memory;
            assert_eq!(is_lazy, on_disk && n < kinds().len(), "chunk {n}");
            for (lo, len) in ranges(NBYTES) {
                let what = format!("{place:?} chunk {n} {lo}+{len}");
                let mut out = vec![0xa5u8; len];
                sc.read_chunk_range(n, lo, &mut out).unwrap();
                assert_eq!(out, &src[lo..lo + len], "read_chunk_range, {what}");

                if !is_lazy {
                    continue;
                }
                let mut out = vec![0xa5u8; len];
                let mut blocks = sc.lazy_block_source(&lazy).unwrap();
                d.decompress_range_with_source(&lazy, &mut *blocks, lo, &mut out)
                    .unwrap();
                assert_eq!(out, &src[lo..lo + len], "lazy range, {what}");
            }
        }
        // Slices across chunk boundaries, in items.
        let all: Vec<u8> = expect.concat();
        for (start, stop) in [
            (0, 1),
            (NBYTES / 4 - 3, NBYTES / 4 + 70),
            (100, all.len() / 4),
        ] {
            let mut out = vec![0u8; (stop - start) * 4];
            sc.get_slice_buffer(start as i64, stop as i64, &mut out)
                .unwrap();
            assert_eq!(out, &all[start * 4..stop * 4], "slice {start}..{stop}");
        }
    }
}

#[test]
fn a_range_outside_the_chunk_is_refused() {
    let dir = TempDir::new("partial_reads_bounds");
    let (sc, _) = stored(&dir, Place::File);
    let lazy = sc.get_lazychunk(0).unwrap().into_owned();
    let mut blocks = sc.lazy_block_source(&lazy).unwrap();
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 10];
    for lo in [NBYTES - 9, NBYTES, usize::MAX - 4] {
        let e = d
            .decompress_range_with_source(&lazy, &mut *blocks, lo, &mut out)
            .unwrap_err();
        assert_eq!(e.code(), -12, "BLOSC2_ERROR_INVALID_PARAM for {lo}");
        let e = sc.read_chunk_range(0, lo, &mut out).unwrap_err();
        assert_eq!(e.code(), -12, "BLOSC2_ERROR_INVALID_PARAM for {lo}");
    }
    // The same from memory.
    let (_, cp) = &kinds()[0];
    let mut c = vec![0u8; NBYTES + 64 + 16 * 4];
    let n = chunk::compress(cp, &data("shuffle"), &mut c).unwrap();
    for lo in [NBYTES - 9, NBYTES, usize::MAX - 4] {
        let e = d.decompress_range(&c[..n], lo, &mut out).unwrap_err();
        assert_eq!(
            e.code(),
            -12,
            "BLOSC2_ERROR_INVALID_PARAM for {lo} in memory"
        );
    }
}

#[test]
fn getitem_of_an_uninitialised_chunk_writes_nothing() {
    // As the reference's getitem: the bytes of such a chunk are undefined,
    // and nothing is written for them.
    let c = chunk::make_special(Special::Uninit, 4096, 4, None).unwrap();
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0xa5u8; 400];
    assert_eq!(d.getitem(&c, 10, 100, &mut out).unwrap(), 400);
    assert_eq!(out, vec![0xa5u8; 400]);
}

/// A block source that has no blocks: a special chunk needs none.
struct NoBlocks;

impl b2nd_core::chunk::BlockSource for NoBlocks {
    fn block(
        &mut self,
        nblock: usize,
        _offset: u32,
        _len_hint: Option<usize>,
    ) -> b2nd_core::Result<std::borrow::Cow<'_, [u8]>> {
        panic!("block {nblock} fetched for a special chunk");
    }
}

#[test]
fn a_mask_of_the_wrong_length_is_refused_for_a_special_lazy_chunk() {
    // The special-chunk path of decompress_with_source skipped the mask's
    // length check and indexed the mask by block.
    let mut c = chunk::make_special(Special::Zero, NBYTES, 4, None).unwrap();
    c[31] |= 0x08; // the lazy bit
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0xa5u8; NBYTES];
    let e = d
        .decompress_with_source(&c, &mut NoBlocks, &mut out, Some(&[]))
        .unwrap_err();
    assert_eq!(e.code(), -3, "BLOSC2_ERROR_DATA");
    let e = d
        .decompress_with_source(&c, &mut NoBlocks, &mut out[..10], None)
        .unwrap_err();
    assert_eq!(e.code(), -6, "BLOSC2_ERROR_WRITE_BUFFER");
    assert_eq!(
        d.decompress_with_source(&c, &mut NoBlocks, &mut out, None)
            .unwrap(),
        NBYTES
    );
    assert_eq!(out, vec![0u8; NBYTES]);
}

/// A block source that passes every call on to `inner`, counting the
/// block fetches and, per read in place, its (offset, length).
struct Counted {
    inner: Box<dyn b2nd_core::chunk::BlockSource>,
    blocks: usize,
    in_place: Vec<(usize, usize)>,
}

impl b2nd_core::chunk::BlockSource for Counted {
    fn block(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
    ) -> b2nd_core::Result<std::borrow::Cow<'_, [u8]>> {
        self.blocks += 1;
        self.inner.block(nblock, offset, len_hint)
    }

    fn read_raw(&mut self, offset: usize, dst: &mut [u8]) -> b2nd_core::Result<bool> {
        self.in_place.push((offset, dst.len()));
        self.inner.read_raw(offset, dst)
    }
}

#[test]
fn a_stored_chunk_on_disk_is_read_in_place_one_read_per_run_of_blocks() {
    let dir = TempDir::new("partial_reads_stored");
    let (sc, expect) = stored(&dir, Place::File);
    let n = kinds().iter().position(|(k, _)| *k == "memcpyed").unwrap();
    let src = &expect[n];
    let lazy = sc.get_lazychunk(n as i64).unwrap().into_owned();
    assert_ne!(lazy[2] & 0x02, 0, "the chunk is stored (memcpyed)");
    let mut d = Decompressor::new(DParams::default());
    let counted = |sc: &SChunk| Counted {
        inner: sc.lazy_block_source(&lazy).unwrap(),
        blocks: 0,
        in_place: Vec::new(),
    };

    // A range over six blocks, cut at both ends: one read, of just its bytes.
    let (lo, len) = (BLOCKSIZE + 7, 5 * BLOCKSIZE + 9);
    let mut c = counted(&sc);
    let mut out = vec![0xa5u8; len];
    d.decompress_range_with_source(&lazy, &mut c, lo, &mut out)
        .unwrap();
    assert_eq!(out, &src[lo..lo + len]);
    assert_eq!((c.blocks, c.in_place), (0, vec![(32 + lo, len)]));

    // The whole chunk, with blocks 2, 3 and 9 masked out: one read per run
    // of kept blocks, and the masked blocks left as they were.
    let nblocks = NBYTES.div_ceil(BLOCKSIZE);
    let mask: Vec<bool> = (0..nblocks).map(|j| [2, 3, 9].contains(&j)).collect();
    let mut c = counted(&sc);
    let mut out = vec![0xa5u8; NBYTES];
    assert_eq!(
        d.decompress_with_source(&lazy, &mut c, &mut out, Some(&mask))
            .unwrap(),
        NBYTES
    );
    let runs = [
        (0, 2 * BLOCKSIZE),
        (4 * BLOCKSIZE, 9 * BLOCKSIZE),
        (10 * BLOCKSIZE, NBYTES),
    ];
    let reads: Vec<(usize, usize)> = runs.iter().map(|&(a, b)| (32 + a, b - a)).collect();
    assert_eq!((c.blocks, c.in_place), (0, reads));
    for j in 0..nblocks {
        let (a, b) = (j * BLOCKSIZE, ((j + 1) * BLOCKSIZE).min(NBYTES));
        if mask[j] {
            assert!(out[a..b].iter().all(|&x| x == 0xa5), "block {j} masked out");
        } else {
            assert_eq!(out[a..b], src[a..b], "block {j}");
        }
    }

    // A postfilter sees each block, so then they are fetched one by one.
    let plus_one: b2nd_core::chunk::Postfilter = std::sync::Arc::new(|a| {
        for (o, i) in a.output.iter_mut().zip(a.input) {
            *o = i.wrapping_add(1);
        }
        Ok(())
    });
    let dp = DParams {
        postfilter: Some(plus_one),
        ..DParams::default()
    };
    let mut d = Decompressor::new(dp);
    let mut c = counted(&sc);
    let mut out = vec![0xa5u8; len];
    d.decompress_range_with_source(&lazy, &mut c, lo, &mut out)
        .unwrap();
    let want: Vec<u8> = src[lo..lo + len]
        .iter()
        .map(|x| x.wrapping_add(1))
        .collect();
    assert_eq!(out, want);
    assert_eq!((c.blocks, c.in_place.len()), (6, 0));
}

/// A block source that reads every block in place through `inner`,
/// recording per read the length of the buffer it was handed, where in it
/// the block went, and how long the block is.
struct InPlace {
    inner: Box<dyn b2nd_core::chunk::BlockSource>,
    reads: Vec<(usize, usize, usize)>,
}

impl b2nd_core::chunk::BlockSource for InPlace {
    fn block(
        &mut self,
        nblock: usize,
        _offset: u32,
        _len_hint: Option<usize>,
    ) -> b2nd_core::Result<std::borrow::Cow<'_, [u8]>> {
        panic!("block {nblock} fetched into a buffer of its own");
    }

    fn block_into(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
        buf: &mut Vec<u8>,
        at: usize,
    ) -> b2nd_core::Result<usize> {
        let on_entry = buf.len();
        let n = self.inner.block_into(nblock, offset, len_hint, buf, at)?;
        self.reads.push((on_entry, at, n));
        Ok(n)
    }
}

#[test]
fn blocks_fetched_from_a_file_share_one_buffer_kept_from_call_to_call() {
    // Each fetched block had a zeroed buffer of its own: the zeroing alone
    // was a sixth of the instructions of slices of a file-backed array.
    let dir = TempDir::new("partial_reads_fetch_buf");
    let (sc, expect) = stored(&dir, Place::File);
    let n = kinds()
        .iter()
        .position(|(k, _)| *k == "shuffle-lz4-split")
        .unwrap();
    let lazy = sc.get_lazychunk(n as i64).unwrap().into_owned();
    assert_eq!(lazy[2] & 0x02, 0, "the chunk is compressed, not stored");
    let mut d = Decompressor::new(DParams::default());
    let in_place = |sc: &SChunk, lazy: &[u8]| InPlace {
        inner: sc.lazy_block_source(lazy).unwrap(),
        reads: Vec::new(),
    };

    // A range over blocks 1 to 3: three reads, back to back in one buffer.
    let (lo, len) = (BLOCKSIZE + 5, 2 * BLOCKSIZE + 10);
    let mut src = in_place(&sc, &lazy);
    let mut out = vec![0xa5u8; len];
    d.decompress_range_with_source(&lazy, &mut src, lo, &mut out)
        .unwrap();
    assert_eq!(out, &expect[n][lo..lo + len]);
    assert_eq!(src.reads.len(), 3);
    let mut at = 0;
    for &(_, got_at, got) in &src.reads {
        assert_eq!(got_at, at);
        assert!(got > 0);
        at += got;
    }

    // The next call on this thread gets that buffer back, at its length:
    // nothing to allocate or zero for blocks that fit.
    let mask: Vec<bool> = (0..NBYTES.div_ceil(BLOCKSIZE)).map(|j| j > 4).collect();
    let mut src = in_place(&sc, &lazy);
    let mut out = vec![0xa5u8; NBYTES];
    d.decompress_with_source(&lazy, &mut src, &mut out, Some(&mask))
        .unwrap();
    assert_eq!(out[..5 * BLOCKSIZE], expect[n][..5 * BLOCKSIZE]);
    assert_eq!(src.reads.len(), 5);
    assert!(
        src.reads[0].0 >= at,
        "the buffer of the first call is reused ({} bytes on entry, {at} fetched before)",
        src.reads[0].0
    );

    // A buffer grown past 1 MiB (a large chunk read whole) is not kept.
    let big_path = dir.join("big.b2frame");
    let mut big = SChunk::new(Storage {
        contiguous: true,
        urlpath: Some(big_path.clone()),
        cparams: CParams {
            typesize: 4,
            blocksize: 64 * 1024,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    // Random bytes but for the last quarter of each block: the blocks
    // compress to about three quarters, more than 1 MiB in all.
    let mut rng = common::XorShift(0x5eed_0002);
    let data: Vec<u8> = (0..(2usize << 20))
        .map(|i| {
            if i % (64 * 1024) < 48 * 1024 {
                rng.next() as u8
            } else {
                0
            }
        })
        .collect();
    big.append_buffer(&data).unwrap();
    drop(big);
    let big = SChunk::open(&big_path).unwrap();
    let big_lazy = big.get_lazychunk(0).unwrap().into_owned();
    assert_eq!(
        big_lazy[2] & 0x02,
        0,
        "the big chunk is compressed, not stored"
    );
    let mut src = in_place(&big, &big_lazy);
    let mut out = vec![0u8; data.len()];
    d.decompress_with_source(&big_lazy, &mut src, &mut out, None)
        .unwrap();
    assert_eq!(out, data);
    let fetched: usize = src.reads.iter().map(|r| r.2).sum();
    assert!(fetched > 1 << 20, "{fetched} bytes fetched");
    let mut src = in_place(&sc, &lazy);
    let mut out = vec![0xa5u8; len];
    d.decompress_range_with_source(&lazy, &mut src, lo, &mut out)
        .unwrap();
    assert_eq!(out, &expect[n][lo..lo + len]);
    assert_eq!(src.reads[0].0, 0, "the 1 MiB buffer was freed, not kept");
}

#[test]
fn a_range_of_a_special_chunk_is_filled_whatever_its_blocksize() {
    // A special chunk's bytes do not depend on its blocks. Ranges are filled
    // in one pass: with blocksize 1 they were filled a byte per block, and
    // a value chunk whose blocksize is not a multiple of the value was
    // refused (the reference's getitem fills such a range too). Its whole
    // decode, block by block, was refused too; each block now takes the
    // pattern from where it starts.
    let nbytes = (1 << 20) + 12;
    let value = [1u8, 2, 3, 4];
    let nan = f32::NAN.to_le_bytes();
    for (kind, v, pattern) in [
        (Special::Zero, None, [0u8; 4]),
        (Special::Value, Some(&value[..]), value),
        (Special::Nan, None, nan),
    ] {
        let mut c = chunk::make_special(kind, nbytes, 4, v).unwrap();
        for blocksize in [1i32, 6] {
            c[8..12].copy_from_slice(&blocksize.to_le_bytes());
            let mut d = Decompressor::new(DParams::default());
            for (lo, len) in [(0, nbytes), (3, 1001), (nbytes - 5, 5)] {
                let mut out = vec![0xa5u8; len];
                d.decompress_range(&c, lo, &mut out).unwrap();
                let want: Vec<u8> = (lo..lo + len).map(|i| pattern[i % 4]).collect();
                assert_eq!(out, want, "{kind:?} blocksize {blocksize} {lo}+{len}");
            }
            // A whole decode gives the same pattern, on one thread and on
            // two (whose ranges start mid-pattern: nbytes / 2 is odd).
            let want: Vec<u8> = (0..nbytes).map(|i| pattern[i % 4]).collect();
            for nthreads in [1, 2] {
                let mut d = Decompressor::new(DParams {
                    nthreads,
                    ..DParams::default()
                });
                let mut out = vec![0xa5u8; nbytes];
                assert_eq!(d.decompress(&c, &mut out).unwrap(), nbytes);
                assert_eq!(
                    out, want,
                    "{kind:?} blocksize {blocksize}, whole, {nthreads} threads"
                );
            }
        }
    }
}
