use super::*;
use crate::filters::cpu;
use crate::filters::test_util::{lengths, typesizes, Rng};

/// The definition, index by index.
fn model_shuffle(typesize: usize, src: &[u8]) -> Vec<u8> {
    let n = src.len() / typesize;
    let mut out = src.to_vec();
    for i in 0..n {
        for j in 0..typesize {
            out[j * n + i] = src[i * typesize + j];
        }
    }
    out
}

#[test]
fn scalar_matches_definition_and_round_trips() {
    let mut rng = Rng::new(1);
    for typesize in typesizes() {
        for len in lengths().into_iter().filter(|&l| l <= 4099) {
            let src = rng.bytes(len);
            let mut shuffled = vec![0u8; len];
            shuffle_with(SimdLevel::Scalar, typesize, &src, &mut shuffled);
            assert_eq!(
                shuffled,
                model_shuffle(typesize, &src),
                "typesize {typesize} len {len}"
            );
            let mut back = vec![0u8; len];
            unshuffle_with(SimdLevel::Scalar, typesize, &shuffled, &mut back);
            assert_eq!(back, src, "typesize {typesize} len {len}");
        }
    }
}

#[test]
fn every_simd_tier_matches_scalar() {
    let mut rng = Rng::new(2);
    for level in cpu::available() {
        for typesize in typesizes() {
            for len in lengths() {
                let src = rng.bytes(len);
                let mut want = vec![0u8; len];
                let mut got = vec![0xa5u8; len];
                shuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                shuffle_with(level, typesize, &src, &mut got);
                assert!(
                    want == got,
                    "shuffle {level:?} typesize {typesize} len {len}"
                );
                unshuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                got.fill(0x5a);
                unshuffle_with(level, typesize, &src, &mut got);
                assert!(
                    want == got,
                    "unshuffle {level:?} typesize {typesize} len {len}"
                );
            }
        }
    }
}

#[test]
fn small_example_by_hand() {
    // Three u16 items and one trailing byte.
    let src = [0x01, 0x02, 0x11, 0x12, 0x21, 0x22, 0xff];
    let mut dst = [0u8; 7];
    shuffle(2, &src, &mut dst);
    assert_eq!(dst, [0x01, 0x11, 0x21, 0x02, 0x12, 0x22, 0xff]);
    let mut back = [0u8; 7];
    unshuffle(2, &dst, &mut back);
    assert_eq!(back, src);
}

#[test]
fn degenerate_typesizes_copy() {
    let src = [1u8, 2, 3, 4, 5];
    for typesize in [0usize, 1, 6, 300] {
        let mut dst = [0u8; 5];
        shuffle(typesize, &src, &mut dst);
        assert_eq!(dst, src);
        unshuffle(typesize, &src, &mut dst);
        assert_eq!(dst, src);
    }
}

#[test]
fn every_tier_reproduces_the_reference_fixture() {
    let cdata = crate::filters::test_util::compat_fixture("shuffle-2.20.0.cdata");
    let ramp = crate::filters::test_util::int32_ramp();
    for level in cpu::available() {
        let mut out = vec![0u8; ramp.len()];
        shuffle_with(level, 4, &ramp, &mut out);
        assert!(out == cdata, "shuffle {level:?}");
        unshuffle_with(level, 4, &cdata, &mut out);
        assert!(out == ramp, "unshuffle {level:?}");
    }
}

#[test]
fn unshuffle_from_separate_planes_matches_the_contiguous_unshuffle() {
    let mut rng = Rng::new(3);
    for level in cpu::available() {
        for typesize in 1..=20usize {
            for n in (0..=140).chain([1021, 4099]) {
                let shuffled = rng.bytes(n * typesize);
                let mut want = vec![0u8; n * typesize];
                unshuffle_with(SimdLevel::Scalar, typesize, &shuffled, &mut want);
                // Each plane in its own allocation, as stored planes lie in
                // the chunk and decoded ones in the scratch.
                let owned: Vec<Vec<u8>> = shuffled
                    .chunks(n.max(1))
                    .take(typesize)
                    .map(<[u8]>::to_vec)
                    .collect();
                let mut planes: Vec<Plane> = owned.iter().map(|p| Plane::Bytes(p)).collect();
                planes.resize(typesize, Plane::Bytes(&[]));
                let mut got = vec![0xa5u8; n * typesize];
                unshuffle_planes_with(level, &planes, &mut got);
                assert!(want == got, "{level:?} typesize {typesize} items {n}");
                // Planes that are one value throughout given as runs: every
                // other one, or all but the first.
                for runs in [|j: usize| j % 2 == 1, |j: usize| j > 0] {
                    let mut with_runs = shuffled.clone();
                    let mut planes = planes.clone();
                    for (j, plane) in planes.iter_mut().enumerate().filter(|&(j, _)| runs(j)) {
                        let value = (j * 37 + 1) as u8;
                        with_runs[j * n..(j + 1) * n].fill(value);
                        *plane = Plane::Run(value);
                    }
                    unshuffle_with(SimdLevel::Scalar, typesize, &with_runs, &mut want);
                    let mut got = vec![0xa5u8; n * typesize];
                    unshuffle_planes_with(level, &planes, &mut got);
                    assert!(want == got, "{level:?} typesize {typesize} items {n}, runs");
                }
            }
        }
    }
}

#[test]
fn planes_of_the_wrong_length_are_refused() {
    let a = [1u8, 2, 3];
    let b = [4u8, 5];
    let mut dst = [0u8; 6];
    let r = std::panic::catch_unwind(move || {
        unshuffle_planes(&[Plane::Bytes(&a), Plane::Bytes(&b)], &mut dst)
    });
    assert!(r.is_err());
}

/// `got` holds the rows of the contiguous shuffle `want` (of `typesize`-byte
/// items) `stride` bytes apart, and the filler 0xa5 between them.
fn assert_rows_are(got: &[u8], want: &[u8], typesize: usize, stride: usize, what: &str) {
    let n = want.len() / typesize;
    for j in 0..typesize {
        let row = &got[j * stride..j * stride + n];
        assert!(row == &want[j * n..(j + 1) * n], "{what}: row {j}");
        let between = &got[j * stride + n..(j + 1) * stride];
        assert!(
            between.iter().all(|&b| b == 0xa5),
            "{what}: wrote between rows"
        );
    }
}

#[test]
fn shuffle_rows_puts_each_row_of_the_contiguous_shuffle_stride_apart() {
    let mut rng = Rng::new(4);
    for level in cpu::available() {
        for typesize in 1..=20usize {
            for n in (0..=140).chain([1021, 4099]) {
                let src = rng.bytes(n * typesize);
                let mut want = vec![0u8; n * typesize];
                shuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                // 4 bytes between rows, as between a split block's streams,
                // and rows flush against each other.
                for gap in [4usize, 0] {
                    let stride = n + gap;
                    let mut got = vec![0xa5u8; typesize * stride + 3];
                    shuffle_rows_with(level, typesize, &src, &mut got, stride);
                    let what = format!("{level:?} typesize {typesize} items {n} gap {gap}");
                    assert_rows_are(&got, &want, typesize, stride, &what);
                    assert_eq!(&got[typesize * stride..], &[0xa5; 3]);
                }
            }
        }
    }
}

#[test]
fn shuffle_rows_refuses_rows_that_do_not_fit() {
    let src = [1u8, 2, 3, 4, 5, 6];
    // 3 items of 2 bytes: rows of 3 cannot be 2 apart, nor fit in 5 bytes 3 apart.
    for (stride, len) in [(2usize, 8usize), (3, 5)] {
        let r = std::panic::catch_unwind(move || {
            let mut dst = vec![0u8; len];
            shuffle_rows(2, &src, &mut dst, stride)
        });
        assert!(r.is_err(), "stride {stride} len {len}");
    }
    let r = std::panic::catch_unwind(|| shuffle_rows(4, &src, &mut [0u8; 16], 2));
    assert!(r.is_err(), "6 bytes are not whole items of 4");
}

/// Rows a multiple of 4 KiB apart, or just past one, crowd the L1 cache, and
/// the AVX2 kernel shuffles 8- and 16-byte items through a stage for them.
/// Around every boundary of its pieces (32 * typesize items) and groups (32
/// items) each row must be the contiguous shuffle's, with nothing written
/// between rows.
#[cfg(target_arch = "x86_64")]
#[test]
fn rows_that_crowd_the_l1_cache_are_the_contiguous_shuffles_rows() {
    assert!(avx2::rows_crowd_l1(8, 4096) && avx2::rows_crowd_l1(8, 4100));
    assert!(avx2::rows_crowd_l1(16, 2048) && avx2::rows_crowd_l1(16, 8196));
    assert!(!avx2::rows_crowd_l1(8, 4096 + 64) && !avx2::rows_crowd_l1(16, 2048 + 64));
    assert!(
        !avx2::rows_crowd_l1(4, 4096),
        "4 rows fit in one set's ways"
    );
    let mut rng = Rng::new(5);
    for level in cpu::available() {
        for typesize in [8usize, 16] {
            let piece = 32 * typesize;
            let counts = [
                0,
                31,
                32,
                piece - 1,
                piece,
                piece + 1,
                piece + 32,
                2 * piece + 65,
                4396,
            ];
            for n in counts {
                let src = rng.bytes(n * typesize);
                let mut want = vec![0u8; n * typesize];
                shuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                for stride in [4096usize, 4100, 8192, 8196]
                    .into_iter()
                    .filter(|&s| s >= n)
                {
                    assert!(avx2::rows_crowd_l1(typesize, stride));
                    let mut got = vec![0xa5u8; typesize * stride];
                    shuffle_rows_with(level, typesize, &src, &mut got, stride);
                    let what = format!("{level:?} typesize {typesize} items {n} stride {stride}");
                    assert_rows_are(&got, &want, typesize, stride, &what);
                }
            }
        }
    }
}

/// 16 rows a multiple of 4 KiB apart, or just off one, crowd the L1 cache
/// for reads too, and the AVX2 unshuffle of 16-byte items copies them
/// through a stage: from a contiguous shuffled buffer (the rows `n` bytes
/// apart) and from planes wherever they lie. Around every boundary of its
/// pieces (512 items) and groups (32), the result must be the scalar
/// unshuffle's.
#[cfg(target_arch = "x86_64")]
#[test]
fn rows_that_crowd_the_l1_cache_unshuffle_like_the_scalar_loop() {
    assert!(avx2::read_rows_crowd_l1((0..16).map(|j| j * 4096)));
    assert!(
        !avx2::read_rows_crowd_l1((0..16).map(|j| j * 2048)),
        "8 rows a set fit"
    );
    assert!(!avx2::read_rows_crowd_l1((0..8).map(|j| j * 4096)));
    let mut rng = Rng::new(6);
    for level in cpu::available() {
        // Contiguous: the rows are `n` bytes apart.
        for n in [4096usize, 4097, 8188, 12291] {
            assert!(avx2::read_rows_crowd_l1((0..16).map(|j| j * n)));
            let shuffled = rng.bytes(n * 16);
            let mut want = vec![0u8; n * 16];
            unshuffle_with(SimdLevel::Scalar, 16, &shuffled, &mut want);
            let mut got = vec![0xa5u8; n * 16];
            unshuffle_with(level, 16, &shuffled, &mut got);
            assert!(want == got, "{level:?} contiguous, items {n}");
        }
        // Planes 4 KiB apart in one buffer.
        let buffer = rng.bytes(16 * 4096);
        for n in [0usize, 31, 32, 511, 512, 513, 544, 1089, 4096] {
            let rows: Vec<&[u8]> = (0..16).map(|j| &buffer[j * 4096..j * 4096 + n]).collect();
            assert!(avx2::read_rows_crowd_l1(
                rows.iter().map(|p| p.as_ptr() as usize)
            ));
            let contiguous: Vec<u8> = rows.concat();
            let planes: Vec<Plane> = rows.iter().map(|p| Plane::Bytes(p)).collect();
            let mut want = vec![0u8; n * 16];
            unshuffle_with(SimdLevel::Scalar, 16, &contiguous, &mut want);
            let mut got = vec![0xa5u8; n * 16];
            unshuffle_planes_with(level, &planes, &mut got);
            assert!(want == got, "{level:?} planes, items {n}");
            // One plane a run: the other 15 still crowd one set.
            let mut planes = planes;
            planes[5] = Plane::Run(0xc3);
            let mut contiguous = contiguous;
            contiguous[5 * n..6 * n].fill(0xc3);
            unshuffle_with(SimdLevel::Scalar, 16, &contiguous, &mut want);
            let mut got = vec![0xa5u8; n * 16];
            unshuffle_planes_with(level, &planes, &mut got);
            assert!(want == got, "{level:?} planes and a run, items {n}");
        }
    }
}

/// Items wider than 16 bytes go through 16-byte windows (the last one only
/// in part when an earlier one made half of it), a stage when their
/// rows crowd the L1 cache (both directions), and a last group of 32 items
/// that overlaps the one before when the count is not a multiple of 32.
/// Around every boundary of the stage's pieces (512 items) and the groups,
/// contiguous and with rows a multiple of 4 KiB (or just past one) apart,
/// each row must be the scalar shuffle's, with nothing written between
/// rows, and the unshuffle must be the scalar one's.
#[cfg(target_arch = "x86_64")]
#[test]
fn wide_items_through_stages_and_overlapping_groups_match_scalar() {
    assert!(avx2::wide_rows_crowd_l1(32, 4096) && avx2::wide_rows_crowd_l1(24, 4100));
    assert!(
        avx2::wide_rows_crowd_l1(128, 1024),
        "128 rows 1 KiB apart, 32 a set"
    );
    assert!(
        !avx2::wide_rows_crowd_l1(64, 512) && !avx2::wide_rows_crowd_l1(32, 1024),
        "8 rows a set"
    );
    let mut rng = Rng::new(7);
    for level in cpu::available() {
        for typesize in [17usize, 24, 25, 32, 40, 56, 64, 128, 255] {
            let counts = [
                0usize, 1, 31, 32, 33, 63, 64, 65, 511, 512, 513, 543, 1031, 4096, 4097,
            ];
            for n in counts {
                let src = rng.bytes(n * typesize);
                let mut want = vec![0u8; n * typesize];
                shuffle_with(SimdLevel::Scalar, typesize, &src, &mut want);
                for stride in [n, n + 4, 4096, 4100, 8192].into_iter().filter(|&s| s >= n) {
                    let mut got = vec![0xa5u8; typesize * stride];
                    shuffle_rows_with(level, typesize, &src, &mut got, stride);
                    let what = format!("{level:?} typesize {typesize} items {n} stride {stride}");
                    assert_rows_are(&got, &want, typesize, stride, &what);
                }
                let mut back = vec![0x5au8; n * typesize];
                unshuffle_with(level, typesize, &want, &mut back);
                assert!(
                    back == src,
                    "{level:?} unshuffle typesize {typesize} items {n}"
                );
            }
        }
    }
    // The paths the counts above reach on AVX2: staged both ways with a few
    // items left after the last piece (4097), and directly (1031).
    assert!(avx2::wide_rows_crowd_l1(40, 4097) && !avx2::wide_rows_crowd_l1(40, 1031));
    assert!(avx2::read_rows_crowd_l1((0..16).map(|j| j * 4097)));
    assert!(!avx2::read_rows_crowd_l1((0..16).map(|j| j * 1031)));
}
