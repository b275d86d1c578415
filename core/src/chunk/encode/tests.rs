use super::*;

/// A disposable prefilter output is never encoded: the prefilter runs on
/// every block (its errors ignored) and the chunk is a zeros chunk; a
/// narrower output fills the front of each block.
#[test]
fn prefilter_output_knobs() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let data: Vec<u8> = (0..50_000u64).flat_map(|i| i.to_le_bytes()).collect();
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let cp = CParams {
        typesize: 8,
        blocksize: 16 * 1024,
        prefilter: Some(Arc::new(move |a: &mut PrefilterArgs<'_>| {
            seen.fetch_add(1, Ordering::Relaxed);
            let n = a.output.len() / a.typesize;
            for k in 0..n {
                let v = u64::from_le_bytes(a.input[8 * k..8 * k + 8].try_into().unwrap());
                a.output[k * a.typesize..][..a.typesize]
                    .copy_from_slice(&v.to_le_bytes()[..a.typesize]);
            }
            crate::bail!(Failure, "only disposable output survives this")
        })),
        prefilter_output: PrefilterOutput {
            typesize: 0,
            disposable: true,
        },
        ..CParams::default()
    };
    let mut out = vec![0u8; data.len() + 32];
    let n = Compressor::new(cp.clone())
        .unwrap()
        .compress(&data, &mut out)
        .unwrap();
    assert_eq!(n, Fmt::EXT_HEADER);
    assert_eq!(out[31] >> 4, Special::ZERO_CODE);
    assert_eq!(
        calls.load(Ordering::Relaxed),
        data.len().div_ceil(16 * 1024)
    );
    // Not disposable: the error is the prefilter's.
    let strict = CParams {
        prefilter_output: PrefilterOutput::default(),
        ..cp.clone()
    };
    assert!(Compressor::new(strict)
        .unwrap()
        .compress(&data, &mut out)
        .is_err());
    // Narrower items, and an Ok prefilter.
    let narrow = CParams {
        prefilter: Some(Arc::new(|a: &mut PrefilterArgs<'_>| {
            assert_eq!((a.typesize, a.output.len() * 2), (4, a.input.len()));
            a.output.fill(0xAB);
            Ok(())
        })),
        prefilter_output: PrefilterOutput {
            typesize: 4,
            disposable: false,
        },
        ..cp.clone()
    };
    let n = Compressor::new(narrow)
        .unwrap()
        .compress(&data, &mut out)
        .unwrap();
    let mut back = vec![0u8; data.len()];
    let mut d = super::super::Decompressor::new(super::super::DParams::default());
    d.decompress(&out[..n], &mut back).unwrap();
    for (b, block) in back.chunks(16 * 1024).enumerate() {
        let half = block.len() / 2;
        assert!(block[..half].iter().all(|&x| x == 0xAB), "block {b}");
        assert!(block[half..].iter().all(|&x| x == 0), "block {b}");
    }
    let wide = CParams {
        prefilter_output: PrefilterOutput {
            typesize: 16,
            disposable: false,
        },
        ..cp
    };
    assert_eq!(Compressor::new(wide).err().map(|e| e.code()), Some(-12));
}

/// Parallel calls place blocks in block order, parking the ones that
/// finish early, and give up like the serial path when the chunk does not
/// fit: same bytes for every thread count and destination size.
#[test]
fn parallel_placement_matches_the_serial_chunk() {
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Compressible (small values) and incompressible (random) data.
    let small: Vec<u8> = (0..600_000).map(|_| (next() % 7) as u8).collect();
    let noise: Vec<u8> = (0..600_000).map(|_| next() as u8).collect();
    for (data, compcode) in [(&small, Codec::LZ4), (&noise, Codec::BLOSCLZ)] {
        let cp = |nthreads: i16| CParams {
            compcode,
            typesize: 4,
            blocksize: 8 * 1024,
            nthreads,
            filters: [0, 0, 0, 0, 0, Fmt::SHUFFLE],
            ..CParams::default()
        };
        let mut want = vec![0u8; data.len() + 64];
        let nw = Compressor::new(cp(1))
            .unwrap()
            .compress(data, &mut want)
            .unwrap();
        // Room for the serial chunk exactly, and slightly less.
        for room in [nw, nw - 1, Fmt::MAX_OVERHEAD + 1000] {
            let mut one = vec![0u8; room];
            let n1 = Compressor::new(cp(1))
                .unwrap()
                .compress(data, &mut one)
                .unwrap();
            for nthreads in [2i16, 3, 4] {
                for _ in 0..3 {
                    let mut got = vec![0u8; room];
                    let n = Compressor::new(cp(nthreads))
                        .unwrap()
                        .compress(data, &mut got)
                        .unwrap();
                    assert_eq!(n, n1, "room {room} nthreads {nthreads}");
                    assert!(got[..n] == one[..n1], "room {room} nthreads {nthreads}");
                }
            }
        }
        let mut back = vec![0u8; data.len()];
        super::super::decompress(&want[..nw], &mut back).unwrap();
        assert!(back == *data);
    }
}

/// Compressing repeated items with SHUFFLE (which skips the shuffle)
/// must give the streams that compressing the shuffled blocks with no
/// filter gives.
#[test]
fn repeated_items_under_shuffle_match_the_shuffled_streams() {
    for ts in [2usize, 3, 4, 8, 16] {
        for splitmode in [Fmt::ALWAYS_SPLIT, Fmt::NEVER_SPLIT] {
            let item: Vec<u8> = (0..ts).map(|k| (k * 37 + 1) as u8).collect();
            let blocksize = 256 * ts;
            // Two whole blocks and a leftover one.
            let data: Vec<u8> = item
                .iter()
                .copied()
                .cycle()
                .take(blocksize * 2 + 5 * ts)
                .collect();
            let mut pre = vec![0u8; data.len()];
            for (s, d) in data.chunks(blocksize).zip(pre.chunks_mut(blocksize)) {
                crate::filters::shuffle::shuffle(ts, s, d);
            }
            let cp = |filters: [u8; 6]| CParams {
                compcode: Codec::LZ4,
                typesize: ts as i32,
                blocksize: blocksize as i32,
                splitmode,
                filters,
                ..CParams::default()
            };
            let mut a = vec![0u8; data.len() + 64];
            let mut b = vec![0u8; data.len() + 64];
            let na = Compressor::new(cp([0, 0, 0, 0, 0, Fmt::SHUFFLE]))
                .unwrap()
                .compress(&data, &mut a)
                .unwrap();
            let nb = Compressor::new(cp([0; 6]))
                .unwrap()
                .compress(&pre, &mut b)
                .unwrap();
            assert_eq!(na, nb, "ts {ts} split {splitmode}");
            assert_eq!(a[32..na], b[32..nb], "ts {ts} split {splitmode}");
            let mut back = vec![0u8; data.len()];
            super::super::decompress(&a[..na], &mut back).unwrap();
            assert_eq!(back, data);
        }
    }
}

/// A split block filtered straight into the chunk
/// (`encode_rows_in_place`: the shuffle, alone or followed by
/// BYTEDELTA) gives the bytes the copying loop gives, for planes that
/// are by turns stored, runs and compressed, in every order,
/// with room for the chunk and less. Which layout a block takes follows
/// the worker's `rows_in_place`, set here before each call.
#[test]
fn rows_in_place_match_the_copying_loop() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let compress = |hint: bool, cp: &CParams, src: &[u8], room: usize| {
        ENC.with(|c| c.borrow_mut().rows_in_place = hint);
        let mut dst = vec![0u8; room];
        let n = Compressor::new(cp.clone())
            .unwrap()
            .compress(src, &mut dst)
            .unwrap();
        dst.truncate(n);
        dst
    };
    let mut in_place_blocks = 0;
    for case in 0..200 {
        let typesize = 2 + case % 15;
        let items = 512 + (next() % 3000) as usize;
        // Each plane: random, one byte, a slow ramp, or a ramp with
        // every 16th byte random (compresses, but not to a run).
        let kinds: Vec<u64> = (0..typesize).map(|_| next() % 4).collect();
        let mut src = vec![0u8; items * typesize];
        for (i, item) in src.chunks_exact_mut(typesize).enumerate() {
            for (j, b) in item.iter_mut().enumerate() {
                *b = match kinds[j] {
                    0 => next() as u8,
                    1 => 0x3c,
                    2 => (i / 50) as u8,
                    _ if i % 16 == 0 => next() as u8,
                    _ => (i / 7) as u8,
                };
            }
        }
        let cp = CParams {
            compcode: [0u8, 1, 2, 4, 5][case % 5],
            clevel: [1u8, 5, 9][case / 5 % 3],
            typesize: typesize as i32,
            splitmode: Fmt::ALWAYS_SPLIT,
            // One block, so the hint set decides its layout; every
            // fourth case several, each block following the one before.
            blocksize: if case % 4 == 3 { 0 } else { src.len() as i32 },
            // The shuffle alone, or followed by either BYTEDELTA, with
            // the typesize given or left to the header's.
            filters: match case / 15 % 3 {
                0 => [0, 0, 0, 0, 0, Fmt::SHUFFLE],
                1 => [0, 0, 0, 0, Fmt::SHUFFLE, Fmt::BYTEDELTA],
                _ => [0, 0, 0, 0, Fmt::SHUFFLE, Fmt::BYTEDELTA_BUGGY],
            },
            filters_meta: [0, 0, 0, 0, 0, (case / 45 % 2 * typesize) as u8],
            ..CParams::default()
        };
        let want = compress(false, &cp, &src, src.len() + Fmt::MAX_OVERHEAD);
        let mut back = vec![0u8; src.len()];
        super::super::decompress(&want, &mut back).unwrap();
        assert!(back == src, "case {case}: round trip");
        // The first room takes every stream of a one-block chunk stored,
        // which the in-place layout needs (`src.len() + MAX_OVERHEAD`
        // leaves it `4 * typesize + 4` bytes short, and the loop runs);
        // the others are just enough for the chunk, and not quite.
        let all_stored = Fmt::EXT_HEADER + 4 + src.len() + 4 * typesize;
        for room in [all_stored, want.len(), want.len() - 1] {
            let want = compress(false, &cp, &src, room);
            let got = compress(true, &cp, &src, room);
            assert!(got == want, "case {case} room {room}: kinds {kinds:?}");
            let split = want.len() > 2 && want[2] & (Fmt::DONT_SPLIT | Fmt::MEMCPYED) == 0;
            if room == all_stored && split && case % 4 != 3 {
                in_place_blocks += 1;
            }
        }
    }
    assert!(
        in_place_blocks > 100,
        "{in_place_blocks} split one-block chunks"
    );
}
