//! Malformed chunks give errors (with the reference's error categories where
//! they are defined), never panics, overflows or out-of-bounds accesses.

use b2nd::chunk::{self, CParams, ChunkHeader, Compressor, DParams, Decompressor};

fn good_chunk(filters: [u8; 6], compcode: u8, size: usize) -> Vec<u8> {
    let src: Vec<u8> = (0..size).map(|i| ((i / 7) % 251) as u8).collect();
    let cp = CParams {
        compcode,
        typesize: 4,
        filters,
        blocksize: 4096,
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
    let c = good_chunk([0, 0, 0, 0, 0, 1], 1, 20_000);
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
    for (typesize, shape) in [(1, None), (1, Some(vec![10i64, 10, 10])), (4, Some(vec![10i64, 25]))] {
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
    use b2nd::chunk::BlockSource;
    use std::borrow::Cow;
    struct Short(Vec<u8>, usize);
    impl BlockSource for Short {
        fn block(
            &mut self,
            _n: usize,
            offset: u32,
            _h: Option<usize>,
        ) -> b2nd::Result<Cow<'_, [u8]>> {
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
