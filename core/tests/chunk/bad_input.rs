//! Malformed chunks give errors (with the reference's error categories where
//! they are defined), never panics, overflows or out-of-bounds accesses.

use b2nd_core::chunk::{self, CParams, ChunkHeader, Compressor, DParams, Decompressor};

fn good_chunk(filters: [u8; 6], compcode: u8, size: usize) -> Vec<u8> {
    good_chunk_split(filters, compcode, size, CParams::default().splitmode)
}

fn good_chunk_split(filters: [u8; 6], compcode: u8, size: usize, splitmode: i32) -> Vec<u8> {
    let src: Vec<u8> = (0..size).map(|i| ((i / 7) % 251) as u8).collect();
    let cp = CParams {
        compcode,
        typesize: 4,
        filters,
        blocksize: 4096,
        splitmode,
        ..CParams::default()
    };
    let mut dst = vec![0u8; size + 32];
    let n = chunk::compress(&cp, &src, &mut dst).unwrap();
    dst.truncate(n);
    dst
}

fn set_i32(c: &mut [u8], at: usize, v: i32) {
    c[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Decodes with every entry point; returns whether the full decode succeeded.
fn try_all(chunk: &[u8]) -> bool {
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 1 << 16];
    let ok = d.decompress(chunk, &mut out).is_ok();
    let _ = d.getitem(chunk, 3, 17, &mut out);
    let _ = d.decompress_vl_block(chunk, 0);
    let _ = chunk::cbuffer_sizes(chunk);
    let _ = ChunkHeader::parse(chunk);
    let mut d2 = Decompressor::new(DParams {
        nthreads: 3,
        ..DParams::default()
    });
    let _ = d2.decompress(chunk, &mut out);
    ok
}

#[test]
fn truncated_chunks_fail_cleanly() {
    for (filters, codec) in [
        ([0, 0, 0, 0, 0, 1], 1u8),
        ([0, 0, 0, 0, 3, 2], 5),
        ([0; 6], 0),
    ] {
        let c = good_chunk(filters, codec, 20_000);
        let mut out = vec![0u8; 20_000];
        assert_eq!(chunk::decompress(&c, &mut out).unwrap(), 20_000);
        for len in 0..c.len() {
            let e = chunk::decompress(&c[..len], &mut out).unwrap_err();
            assert!([-5, -11, -3, -2].contains(&e.code()), "len {len}: {e}");
        }
    }
}

#[test]
fn header_field_corruptions() {
    let c = good_chunk([0, 0, 0, 0, 0, 1], 1, 20_000);
    let mut out = vec![0u8; 20_000];
    // blocksize 0 / negative / huge
    for bs in [0, -1, i32::MIN, 536_866_817] {
        let mut x = c.clone();
        set_i32(&mut x, 8, bs);
        assert_eq!(
            chunk::decompress(&x, &mut out).unwrap_err().code(),
            -11,
            "blocksize {bs}"
        );
    }
    // typesize 0
    let mut x = c.clone();
    x[3] = 0;
    assert_eq!(chunk::decompress(&x, &mut out).unwrap_err().code(), -11);
    // cbytes past the end, or below the header
    for cb in [c.len() as i32 + 1, i32::MAX, 15, -4] {
        let mut x = c.clone();
        set_i32(&mut x, 12, cb);
        assert_eq!(
            chunk::decompress(&x, &mut out).unwrap_err().code(),
            -11,
            "cbytes {cb}"
        );
    }
    // nbytes larger than dst, near i32::MAX, negative
    for nb in [20_001, i32::MAX, i32::MAX - 31, -1] {
        let mut x = c.clone();
        set_i32(&mut x, 4, nb);
        let e = chunk::decompress(&x, &mut out).unwrap_err();
        assert!([-6, -11, -5].contains(&e.code()), "nbytes {nb}: {e}");
    }
    // a dst smaller than nbytes
    let mut small = vec![0u8; 19_999];
    assert_eq!(chunk::decompress(&c, &mut small).unwrap_err().code(), -6);
    // unknown special kind
    let mut x = c.clone();
    x[31] = 0x50;
    assert_eq!(chunk::decompress(&x, &mut out).unwrap_err().code(), -3);
    // future version with unknown features
    let mut x = c.clone();
    x[0] = 7;
    x[30] = 0x2;
    assert_eq!(chunk::decompress(&x, &mut out).unwrap_err().code(), -10);
    // memcpyed flag with inconsistent sizes
    let mut x = c.clone();
    x[2] |= 0x2;
    assert_eq!(chunk::decompress(&x, &mut out).unwrap_err().code(), -3);
}

#[test]
fn bstarts_and_stream_corruptions() {
    // LZ4 splits shuffled blocks into byte planes by default; never split,
    // each block is one stream (`OneStream` in `chunk::decompress`).
    const NEVER_SPLIT: i32 = 2;
    let split = good_chunk([0, 0, 0, 0, 0, 1], 1, 20_000);
    let unsplit = good_chunk_split([0, 0, 0, 0, 0, 1], 1, 20_000, NEVER_SPLIT);
    let raw_unsplit = good_chunk_split([0; 6], 1, 20_000, NEVER_SPLIT);
    assert!(!ChunkHeader::parse(&split).unwrap().dont_split());
    assert!(ChunkHeader::parse(&unsplit).unwrap().dont_split());
    for c in [split, unsplit, raw_unsplit] {
        stream_corruptions(c);
    }
}

fn stream_corruptions(c: Vec<u8>) {
    let h = ChunkHeader::parse(&c).unwrap();
    let nblocks = h.nblocks();
    let mut out = vec![0u8; 20_000];
    // bstarts pointing at 0, past the end, into the header, at i32::MAX
    for v in [0, -5, c.len() as i32, c.len() as i32 + 100, i32::MAX, 3] {
        let mut x = c.clone();
        set_i32(&mut x, 32 + 4 * (nblocks - 1), v);
        assert!(chunk::decompress(&x, &mut out).is_err(), "bstart {v}");
    }
    // the first stream's csize: past the end, invalid runs
    let first = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
    for (v, token, code) in [
        (i32::MAX, None, -5),
        (c.len() as i32, None, -5),
        (-300, Some(1u8), -17),
        (-5, Some(0u8), -17),
    ] {
        let mut x = c.clone();
        set_i32(&mut x, first, v);
        if let Some(t) = token {
            x[first + 4] = t;
        }
        let e = chunk::decompress(&x, &mut out).unwrap_err();
        assert_eq!(e.code(), code, "csize {v}: {e}");
    }
}

#[test]
fn random_garbage_never_panics() {
    let seeds = [
        good_chunk([0, 0, 0, 0, 0, 1], 1, 5000),
        good_chunk([0, 0, 0, 0, 3, 2], 5, 9000),
        good_chunk([0; 6], 4, 3000),
    ];
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut decoded = 0;
    for i in 0..4000 {
        let base = &seeds[i % seeds.len()];
        let mut c = base.clone();
        match i % 4 {
            // flip a few random bytes anywhere
            0 => {
                for _ in 0..1 + next() % 4 {
                    let at = (next() as usize) % c.len();
                    c[at] = next() as u8;
                }
            }
            // flip bytes in the header only
            1 => {
                let at = (next() as usize) % 32;
                c[at] = next() as u8;
            }
            // random bytes after a valid header
            2 => {
                for b in c[32..].iter_mut() {
                    *b = next() as u8;
                }
            }
            // fully random buffer of random length
            _ => {
                let len = (next() % 300) as usize;
                c = (0..len).map(|_| next() as u8).collect();
            }
        }
        if try_all(&c) {
            decoded += 1;
        }
    }
    // Some corruptions hit bytes that do not matter; most must be rejected.
    assert!(decoded < 4000);
}

#[test]
fn getitem_bounds() {
    let c = good_chunk([0, 0, 0, 0, 0, 1], 1, 20_000);
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 20_000];
    assert_eq!(d.getitem(&c, 0, 0, &mut out).unwrap(), 0);
    assert_eq!(d.getitem(&c, 4999, 2, &mut out).unwrap_err().code(), -12);
    assert_eq!(d.getitem(&c, 5001, 1, &mut out).unwrap_err().code(), -12);
    assert_eq!(
        d.getitem(&c, usize::MAX / 2, 1, &mut out)
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        d.getitem(&c, 0, usize::MAX / 2, &mut out)
            .unwrap_err()
            .code(),
        -6
    );
    assert_eq!(
        d.getitem(&c, 0, 100, &mut out[..399]).unwrap_err().code(),
        -6
    );
    assert_eq!(d.getitem(&c, 4990, 10, &mut out).unwrap(), 40);
}

#[test]
fn bad_parameters() {
    let src = vec![1u8; 1000];
    let mut dst = vec![0u8; 2000];
    let bad = |cp: CParams| {
        Compressor::new(cp)
            .and_then(|mut z| z.compress(&src, &mut dst.clone()))
            .unwrap_err()
            .code()
    };
    assert_eq!(
        bad(CParams {
            clevel: 10,
            ..CParams::default()
        }),
        -8
    );
    assert_eq!(
        bad(CParams {
            typesize: 0,
            ..CParams::default()
        }),
        -12
    );
    assert_eq!(
        bad(CParams {
            compcode: 3,
            ..CParams::default()
        }),
        -7
    );
    // A reference plugin codec that is not built in (openhtj2k).
    assert_eq!(
        bad(CParams {
            compcode: 36,
            ..CParams::default()
        }),
        -7
    );
    // NDLZ needs a 2-D block shape of one-byte items (the b2nd layer's).
    let varied: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    for (typesize, shape) in [
        (1, None),
        (1, Some(vec![10i64, 10, 10])),
        (4, Some(vec![10i64, 25])),
    ] {
        let cp = CParams {
            compcode: 32,
            compcode_meta: 4,
            typesize,
            filters: [0; 6],
            blocksize: 1000,
            block_shape: shape.map(Into::into),
            ..CParams::default()
        };
        let err = Compressor::new(cp)
            .and_then(|mut z| z.compress(&varied, &mut dst.clone()))
            .unwrap_err();
        assert_eq!(err.code(), -1, "{err}");
    }
    // zfp refuses what the reference's plugin refuses (-1 as there): block
    // extents under 4, more than 4 dimensions, items that are not floats.
    let floats: Vec<u8> = (0..1024u32)
        .flat_map(|i| (i as f32).sin().to_le_bytes())
        .collect();
    for compcode in [33u8, 34, 35] {
        for (typesize, shape) in [
            (4, vec![2i64, 128]),
            (4, vec![4i64, 4, 4, 2, 2]),
            (2, vec![16i64, 32]),
        ] {
            let cp = CParams {
                compcode,
                compcode_meta: 20,
                typesize,
                filters: [0; 6],
                blocksize: 1024,
                block_shape: Some(shape.into()),
                ..CParams::default()
            };
            let err = Compressor::new(cp)
                .and_then(|mut z| z.compress(&floats[..1024], &mut dst.clone()))
                .unwrap_err();
            assert_eq!(err.code(), -1, "{compcode}: {err}");
        }
    }
    assert_eq!(
        bad(CParams {
            compcode: 200,
            ..CParams::default()
        }),
        -7
    );
    assert_eq!(
        bad(CParams {
            filters: [0, 0, 0, 0, 0, 7],
            ..CParams::default()
        }),
        -12
    );
    assert_eq!(
        bad(CParams {
            // In the reference's global plugin range, but no plugin has it.
            filters: [0, 0, 0, 0, 0, 37],
            ..CParams::default()
        }),
        -7
    );
    assert_eq!(
        bad(CParams {
            // NDCELL without the b2nd block shape it cuts cells from: the
            // filter fails, and the pipeline reports it.
            filters: [0, 0, 0, 0, 0, 32],
            filters_meta: [0, 0, 0, 0, 0, 2],
            ..CParams::default()
        }),
        -18
    );
    assert_eq!(
        bad(CParams {
            use_dict: true,
            compcode: 0,
            ..CParams::default()
        }),
        -8
    );
    // dst below the 32-byte minimum
    let mut z = Compressor::new(CParams::default()).unwrap();
    assert_eq!(z.compress(&src, &mut dst[..31]).unwrap_err().code(), -35);
    // dst that cannot hold the result: 0, the reference's "did not fit"
    let noise: Vec<u8> = (0..1000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert_eq!(z.compress(&noise, &mut dst[..500]).unwrap(), 0);
    assert_eq!(z.compress(&noise, &mut dst[..1031]).unwrap(), 0);
    assert_eq!(z.compress(&noise, &mut dst[..1032]).unwrap(), 1032);
}

#[test]
fn lazy_views_with_bad_sources() {
    use b2nd_core::chunk::BlockSource;
    use std::borrow::Cow;
    struct Short(Vec<u8>, usize);
    impl BlockSource for Short {
        fn block(
            &mut self,
            _n: usize,
            offset: u32,
            _h: Option<usize>,
        ) -> b2nd_core::Result<Cow<'_, [u8]>> {
            let o = (offset as usize).min(self.0.len());
            let end = (o + self.1).min(self.0.len());
            Ok(Cow::Owned(self.0[o..end].to_vec()))
        }
    }
    let c = good_chunk([0, 0, 0, 0, 3, 1], 5, 20_000);
    let h = ChunkHeader::parse(&c).unwrap();
    let view = c[..32 + 4 * h.nblocks()].to_vec();
    let mut out = vec![0u8; 20_000];
    for cut in [0usize, 1, 3, 4, 5, 17, 100] {
        let mut s = Short(c.clone(), cut);
        let r = Decompressor::new(DParams::default())
            .decompress_with_source(&view, &mut s, &mut out, None);
        assert!(r.is_err(), "cut {cut}");
    }
    // A view shorter than its bstarts, and a special-value header without its value.
    let mut s = Short(c.clone(), usize::MAX);
    assert!(Decompressor::new(DParams::default())
        .decompress_with_source(&view[..40], &mut s, &mut out, None)
        .is_err());
    let v = chunk::make_special(chunk::Special::Value, 400, 4, Some(&[1, 2, 3, 4])).unwrap();
    assert!(Decompressor::new(DParams::default())
        .decompress_with_source(&v[..32], &mut s, &mut out, None)
        .is_err());
}

/// A zfp chunk of 4x4 f32 blocks of 16x16 items, and its source.
fn zfp_chunk(compcode: u8, meta: u8) -> (Vec<u8>, Vec<u8>) {
    let src: Vec<u8> = (0..4 * 256u32)
        .flat_map(|i| ((i as f32) * 0.05).sin().to_le_bytes())
        .collect();
    let cp = CParams {
        compcode,
        compcode_meta: meta,
        typesize: 4,
        filters: [0; 6],
        blocksize: 1024,
        splitmode: 2,
        block_shape: Some(vec![16i64, 16].into()),
        ..CParams::default()
    };
    let mut dst = vec![0u8; src.len() + 64];
    let n = chunk::compress(&cp, &src, &mut dst).unwrap();
    dst.truncate(n);
    assert!(n < src.len() / 2, "zfp did not compress: {n}");
    (dst, src)
}

fn zfp_decode(chunk: &[u8], shape: Option<Vec<i64>>) -> Result<Vec<u8>, i32> {
    let mut d = Decompressor::new(DParams {
        block_shape: shape.map(Into::into),
        ..DParams::default()
    });
    let mut out = vec![0u8; 4096];
    d.decompress(chunk, &mut out)
        .map(|_| out)
        .map_err(|e| e.code())
}

#[test]
fn zfp_streams_without_their_block_or_bits_fail_cleanly() {
    for (compcode, meta) in [(33u8, 253u8), (34, 12), (35, 30)] {
        let (chunk, src) = zfp_chunk(compcode, meta);
        let good = zfp_decode(&chunk, Some(vec![16, 16])).unwrap();
        assert_eq!(good.len(), src.len());
        // Without a block shape (not a b2nd array), or one the block cannot
        // hold, or outside 1..=4 dimensions: Data (-3), as the reference's
        // chunk decoder reports its plugin failing.
        for shape in [
            None,
            Some(vec![16, 17]),
            Some(vec![0, 16]),
            Some(vec![-4, 16]),
            Some(vec![2, 2, 2, 2, 16]),
        ] {
            let got = zfp_decode(&chunk, shape.clone()).map(|_| ());
            assert_eq!(got, Err(-3), "{compcode} {shape:?}");
        }
        // Another whole shape of the same size decodes (to other values).
        assert!(zfp_decode(&chunk, Some(vec![4, 4, 16])).is_ok());
        // A stream a word (or all but a byte) shorter than the bits its
        // cells need: -3, not a read past the stream (the reference reads on
        // into what follows). The last word always holds some of those bits.
        let start = i32::from_le_bytes(chunk[32..36].try_into().unwrap()) as usize;
        let csize = i32::from_le_bytes(chunk[start..start + 4].try_into().unwrap());
        for cut in [8, csize - 1] {
            let mut c = chunk.clone();
            set_i32(&mut c, start, csize - cut);
            let got = zfp_decode(&c, Some(vec![16, 16])).map(|_| ());
            assert_eq!(got, Err(-3), "{compcode} cut {cut}");
        }
        // Every byte of the first stream flipped in turn: any outcome but a
        // panic (a flipped bit can leave a valid stream).
        for at in start + 4..start + 4 + csize as usize {
            let mut c = chunk.clone();
            c[at] ^= 0xa5;
            let _ = zfp_decode(&c, Some(vec![16, 16]));
        }
    }
}

#[test]
fn zfp_fixed_rate_getitem_reads_one_cell() {
    let (chunk, src) = zfp_chunk(35, 30);
    let whole = zfp_decode(&chunk, Some(vec![16, 16])).unwrap();
    let mut d = Decompressor::new(DParams {
        block_shape: Some(vec![16i64, 16].into()),
        ..DParams::default()
    });
    // Every item alone and in runs, inside a cell row or across cells and
    // blocks: the whole decode's values either way.
    let items = src.len() / 4;
    for start in 0..items {
        for n in [1, 2, 3, 5, 300].into_iter().filter(|n| start + n <= items) {
            let mut out = vec![0u8; 4 * n];
            assert_eq!(d.getitem(&chunk, start, n, &mut out).unwrap(), out.len());
            assert_eq!(out, whole[4 * start..4 * (start + n)], "{start} {n}");
        }
    }
    // The first block's stream cut to the words its first cell needs (30%
    // of 16 f32 items: 154 bits): a whole decode fails, but the items of
    // that cell are read from it alone; those of the next cell are not there.
    let start = i32::from_le_bytes(chunk[32..36].try_into().unwrap()) as usize;
    let mut cut = chunk.clone();
    set_i32(&mut cut, start, 24);
    assert_eq!(zfp_decode(&cut, Some(vec![16, 16])).map(|_| ()), Err(-3));
    for (item, n) in [(0, 1), (1, 3), (16, 4), (48, 2)] {
        let mut out = vec![0u8; 4 * n];
        assert_eq!(
            d.getitem(&cut, item, n, &mut out).unwrap(),
            out.len(),
            "{item}"
        );
        assert_eq!(out, whole[4 * item..4 * (item + n)]);
    }
    let mut out = [0u8; 4];
    assert_eq!(d.getitem(&cut, 4, 1, &mut out).unwrap_err().code(), -3);
}

#[test]
fn zfp_without_a_block_shape_stores_blocks_raw() {
    // As the reference's plugin does for a context with no super-chunk.
    let src: Vec<u8> = (0..1024u32)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let cp = CParams {
        compcode: 33,
        compcode_meta: 253,
        typesize: 4,
        filters: [0; 6],
        blocksize: 1024,
        ..CParams::default()
    };
    let mut dst = vec![0u8; src.len() + 64];
    let n = chunk::compress(&cp, &src, &mut dst).unwrap();
    let mut back = vec![0u8; src.len()];
    assert_eq!(chunk::decompress(&dst[..n], &mut back).unwrap(), src.len());
    assert_eq!(back, src);
}
