use super::*;
use crate::filters::cpu;
use crate::filters::test_util::{lengths, typesizes, Rng};

/// The definition, bit by bit: bit `b` of item `i` goes to bit `b * n8 + i`.
fn model_bitshuffle(typesize: usize, src: &[u8]) -> Vec<u8> {
    let n8 = src.len() / typesize / 8 * 8;
    let mut out = src.to_vec();
    out[..n8 * typesize].fill(0);
    for i in 0..n8 {
        for b in 0..8 * typesize {
            let bit = (src[i * typesize + b / 8] >> (b % 8)) & 1;
            let pos = b * n8 + i;
            out[pos / 8] |= bit << (pos % 8);
        }
    }
    out
}

#[test]
fn transpose_8x8_swaps_rows_and_columns() {
    let mut rng = Rng::new(3);
    for _ in 0..1000 {
        let x = rng.next_u64();
        let t = scalar::transpose_8x8(x);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!((t >> (8 * r + c)) & 1, (x >> (8 * c + r)) & 1);
            }
        }
    }
}

#[test]
fn scalar_matches_definition_and_round_trips() {
    let mut rng = Rng::new(4);
    for typesize in typesizes() {
        for len in lengths().into_iter().filter(|&l| l <= 4099) {
            let src = rng.bytes(len);
            let mut shuffled = vec![0u8; len];
            bitshuffle_with(SimdLevel::Scalar, typesize, &src, &mut shuffled);
            assert!(
                shuffled == model_bitshuffle(typesize, &src),
                "typesize {typesize} len {len}"
            );
            let mut back = vec![0u8; len];
            bitunshuffle_with(SimdLevel::Scalar, typesize, &shuffled, &mut back);
            assert!(back == src, "typesize {typesize} len {len}");
        }
    }
}

#[test]
fn every_simd_tier_matches_scalar() {
    let mut rng = Rng::new(5);
    for level in cpu::available() {
        for typesize in typesizes() {
            for len in lengths() {
                let src = rng.bytes(len);
                let mut want = vec![0u8; len];
                let mut got = vec![0xa5u8; len];
                bitshuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                bitshuffle_with(level, typesize, &src, &mut got);
                assert!(
                    want == got,
                    "bitshuffle {level:?} typesize {typesize} len {len}"
                );
                bitunshuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                got.fill(0x5a);
                bitunshuffle_with(level, typesize, &src, &mut got);
                assert!(
                    want == got,
                    "bitunshuffle {level:?} typesize {typesize} len {len}"
                );
            }
        }
    }
}

#[test]
fn leftover_items_are_copied() {
    // 11 u16 items + 1 byte: 8 items transposed, 3 items and the byte copied.
    let mut rng = Rng::new(6);
    let src = rng.bytes(23);
    let mut dst = vec![0u8; 23];
    bitshuffle(2, &src, &mut dst).unwrap();
    assert_eq!(dst[16..], src[16..]);
    assert_eq!(dst, model_bitshuffle(2, &src));
    let mut back = vec![0u8; 23];
    bitunshuffle(2, &dst, &mut back).unwrap();
    assert_eq!(back, src);
}

#[test]
fn format2_transposes_only_whole_multiples_of_eight_items() {
    let mut rng = Rng::new(7);
    // 16 u32 items + 3 bytes: transposed, trailing bytes copied.
    let src = rng.bytes(67);
    let mut shuffled = vec![0u8; 67];
    bitshuffle(4, &src, &mut shuffled).unwrap();
    let mut back = vec![0u8; 67];
    bitunshuffle_format2(4, &shuffled, &mut back).unwrap();
    assert_eq!(back, src);
    // 17 items: the block was stored unshuffled by the old format.
    let src = rng.bytes(68);
    let mut out = vec![0u8; 68];
    bitunshuffle_format2(4, &src, &mut out).unwrap();
    assert_eq!(out, src);
}

#[test]
fn inconsistent_arguments_are_errors() {
    let mut dst = [0u8; 16];
    assert_eq!(bitshuffle(0, &[0u8; 16], &mut dst).unwrap_err().code(), -12);
    assert_eq!(bitshuffle(4, &[0u8; 15], &mut dst).unwrap_err().code(), -12);
    assert_eq!(
        bitunshuffle(0, &[0u8; 16], &mut dst).unwrap_err().code(),
        -12
    );
    assert_eq!(
        bitunshuffle(4, &[0u8; 17], &mut dst).unwrap_err().code(),
        -12
    );
    assert_eq!(
        bitunshuffle_format2(4, &[0u8; 8], &mut dst)
            .unwrap_err()
            .code(),
        -12
    );
}

#[test]
fn every_tier_reproduces_the_reference_fixture() {
    let cdata = crate::filters::test_util::compat_fixture("bitshuffle-2.20.0.cdata");
    let ramp = crate::filters::test_util::int32_ramp();
    for level in cpu::available() {
        let mut out = vec![0u8; ramp.len()];
        bitshuffle_with(level, 4, &ramp, &mut out);
        assert!(out == cdata, "bitshuffle {level:?}");
        bitunshuffle_with(level, 4, &cdata, &mut out);
        assert!(out == ramp, "bitunshuffle {level:?}");
    }
}

/// Asserts that tier `level` bit-shuffles and bit-unshuffles `src` as the
/// scalar kernel does, every byte of the output written.
fn assert_tier_is_scalar(level: SimdLevel, typesize: usize, src: &[u8], what: &str) {
    let mut want = vec![0u8; src.len()];
    bitunshuffle_with(SimdLevel::Scalar, typesize, src, &mut want);
    let mut got = vec![0x3cu8; src.len()];
    bitunshuffle_with(level, typesize, src, &mut got);
    assert!(want == got, "unshuffle {what}");
    bitshuffle_with(SimdLevel::Scalar, typesize, src, &mut want);
    got.fill(0xc3);
    bitshuffle_with(level, typesize, src, &mut got);
    assert!(want == got, "shuffle {what}");
}

/// The fused AVX2 kernels (whole 256-item runs of 2-, 4-, 8- and 16-byte
/// items) and the tiled path that finishes the rest: every item count
/// around one and two runs, with trailing bytes, against the scalar kernel,
/// both directions.
#[test]
fn fused_runs_and_their_tails_match_scalar() {
    let mut rng = Rng::new(12);
    for level in cpu::available() {
        for typesize in [2usize, 4, 8, 16] {
            for items in (248..=344).chain(504..=528).chain([1024, 1032, 2047, 2048]) {
                for extra in [0, typesize - 1] {
                    let src = rng.bytes(items * typesize + extra);
                    let what = format!("{level:?} typesize {typesize} items {items} extra {extra}");
                    assert_tier_is_scalar(level, typesize, &src, &what);
                }
            }
        }
    }
}

/// The tile plan of the SIMD tiers (`tiled::next_tile`): item counts around
/// one and two tiles (`TILE_BYTES / typesize` items, or the whole runs in
/// that), around a run of each tier's best size and under a vector, so that
/// the last tile takes what is left whole, its rows ending in an
/// overlapping run, or starts early over items done already, or the scalar
/// loop takes what no vector can; against the scalar kernel, both ways.
#[test]
fn tiles_runs_and_redone_items_match_scalar() {
    let mut rng = Rng::new(13);
    for level in cpu::available() {
        for typesize in [1usize, 3, 8, 24, 40, 48, 100, 127, 128, 129, 200, 255] {
            let cap = super::tiled::TILE_BYTES / typesize / 8 * 8;
            let around = |c: usize| (c.saturating_sub(24)..=c + 24).step_by(8);
            let counts = (8..=72)
                .step_by(8)
                .chain(around(128))
                .chain(around(256))
                .chain(around(384))
                .chain(around(cap))
                .chain(around(cap / 256 * 256 + 128))
                .chain(around(cap + 128))
                .chain(around(cap + 256))
                .chain(around(2 * cap))
                .chain(around(2 * cap + 256));
            for items in counts {
                let extra = rng.next_u64() as usize % (8 * typesize);
                let src = rng.bytes(items * typesize + extra);
                let what = format!("{level:?} typesize {typesize} items {items} extra {extra}");
                assert_tier_is_scalar(level, typesize, &src, &what);
            }
        }
    }
}

/// Which row strides the AVX2 kernels batch, and blocks that take the
/// batched paths (rows a multiple of 4 KiB apart): 2^15 and 2^16 transposed
/// items, with 7 more items and trailing bytes left to the tail
/// code, against the scalar kernel both ways.
#[cfg(target_arch = "x86_64")]
#[test]
fn rows_in_one_l1_set_transpose_like_the_scalar_loop() {
    let sets = [4096, 12288, 2048, 6144, 1024, 4112, 8, 0].map(avx2::l1_sets);
    assert_eq!(sets, [1, 1, 2, 2, 4, 64, 64, 1]);
    // Forward: one set and more than 16 rows.
    assert!(avx2::batch_stores(32, 4096) && avx2::batch_stores(64, 8192));
    assert!(!avx2::batch_stores(16, 4096) && !avx2::batch_stores(64, 2048));
    // Backward: more than 8 rows to each of one or two sets.
    assert!(avx2::batch_loads(16, 4096) && avx2::batch_loads(32, 2048));
    assert!(!avx2::batch_loads(16, 2048) && !avx2::batch_loads(128, 1024));
    assert!(!avx2::batch_loads(64, 4112));
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    let mut rng = Rng::new(13);
    for typesize in [2usize, 4, 8, 16] {
        for items in [1 << 15, (1 << 16) + 7] {
            let len = items * typesize + typesize - 1;
            let src = rng.bytes(len);
            let mut want = vec![0u8; len];
            let mut got = vec![0x3cu8; len];
            bitshuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
            bitshuffle_with(SimdLevel::Avx2, typesize, &src, &mut got);
            assert!(want == got, "shuffle typesize {typesize} items {items}");
            bitunshuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
            got.fill(0xc3);
            bitunshuffle_with(SimdLevel::Avx2, typesize, &src, &mut got);
            assert!(want == got, "unshuffle typesize {typesize} items {items}");
        }
    }
}

/// The batched AVX2 kernels (2 runs at a time forward, 4 back) against one
/// run at a time, on run counts that leave every remainder, with rows
/// further apart than the runs so that bytes between rows must stay as
/// they were.
#[cfg(target_arch = "x86_64")]
#[test]
fn batched_runs_match_single_runs() {
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    fn check<const N: usize, const P: usize>(rng: &mut Rng) {
        for runs in 1..=9 {
            let stride = 32 * runs + 96;
            let items = 256 * runs;
            let src = rng.bytes(items * N);
            let rows = rng.bytes(8 * N * stride);
            let (mut want, mut got) = (rows.clone(), rows.clone());
            // SAFETY: AVX2 was detected by the caller; the kernels check
            // their bounds.
            unsafe {
                avx2::shuffle_runs::<N, 1>(runs, stride, &src, &mut want);
                avx2::shuffle_runs::<N, 2>(runs, stride, &src, &mut got);
            }
            assert!(want == got, "shuffle typesize {N} runs {runs}");
            let (mut want, mut got) = (src.clone(), vec![0x5au8; items * N]);
            // SAFETY: as above.
            unsafe {
                avx2::unshuffle_runs::<N, P, 1>(runs, stride, &rows, &mut want);
                avx2::unshuffle_runs::<N, P, 4>(runs, stride, &rows, &mut got);
            }
            assert!(want == got, "unshuffle typesize {N} runs {runs}");
        }
    }
    let mut rng = Rng::new(14);
    check::<2, 1>(&mut rng);
    check::<4, 2>(&mut rng);
    check::<8, 3>(&mut rng);
    check::<16, 4>(&mut rng);
}
