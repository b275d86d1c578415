//! The filter kernels against data written by the reference C-Blosc2, and
//! their cross-block behaviour (delta) and lossy results (trunc_prec) against
//! values computed independently here.

use b2nd_core::filters::{bitshuffle, delta, shuffle, trunc_prec};

use crate::common;
use common::{read_fixture, sha256_hex};

/// SHA-256 of the int32 ramp 0..999999 (little-endian), from MANIFEST.tsv.
const RAMP_SHA256: &str = "02e21fa3c89fa7d7b61826918a8bd35d3127827b4ef3f3ee47ade5e64e3c2a80";

fn fixture(name: &str) -> Vec<u8> {
    read_fixture(&format!("c-blosc2-compat/{name}"))
}

fn ramp() -> Vec<u8> {
    (0..1_000_000i32).flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn ramp_digest_is_the_manifest_one() {
    assert_eq!(sha256_hex(&ramp()), RAMP_SHA256);
}

#[test]
fn byte_shuffle_fixture() {
    let cdata = fixture("shuffle-2.20.0.cdata");
    assert_eq!(cdata.len(), 4_000_000);
    let mut plain = vec![0u8; cdata.len()];
    shuffle::unshuffle(4, &cdata, &mut plain);
    assert_eq!(sha256_hex(&plain), RAMP_SHA256);
    let mut again = vec![0u8; cdata.len()];
    shuffle::shuffle(4, &ramp(), &mut again);
    assert!(
        again == cdata,
        "shuffling the ramp differs from the reference output"
    );
}

#[test]
fn bit_shuffle_fixture() {
    let cdata = fixture("bitshuffle-2.20.0.cdata");
    assert_eq!(cdata.len(), 4_000_000);
    let mut plain = vec![0u8; cdata.len()];
    bitshuffle::bitunshuffle(4, &cdata, &mut plain).unwrap();
    assert_eq!(sha256_hex(&plain), RAMP_SHA256);
    let mut again = vec![0u8; cdata.len()];
    bitshuffle::bitshuffle(4, &ramp(), &mut again).unwrap();
    assert!(
        again == cdata,
        "bit-shuffling the ramp differs from the reference output"
    );
}

#[test]
fn bit_shuffle_of_ramp_has_the_expected_rows() {
    // Independent check of the layout: row b holds bit b of every item, LSB
    // first. For the ramp, bit 0 alternates 0,1 => bytes 0xaa; bit 1 => 0xcc.
    let src: Vec<u8> = (0..64u32).flat_map(|v| v.to_le_bytes()).collect();
    let mut dst = vec![0u8; src.len()];
    bitshuffle::bitshuffle(4, &src, &mut dst).unwrap();
    let row = |b: usize| &dst[b * 8..b * 8 + 8];
    assert_eq!(row(0), [0xaa; 8]);
    assert_eq!(row(1), [0xcc; 8]);
    assert_eq!(row(2), [0xf0; 8]);
    assert_eq!(row(3), [0x00, 0xff, 0x00, 0xff, 0x00, 0xff, 0x00, 0xff]);
    assert_eq!(row(5), [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert!(dst[6 * 8..].iter().all(|&b| b == 0));
}

/// Splits a chunk into blocks, delta-encodes each as the reference pipeline
/// does (block 0 against itself, the others against the original block 0),
/// then decodes block 0 first and the rest against the decoded block 0.
fn delta_round_trip(chunk: &[u8], blocksize: usize, typesize: usize) -> Vec<u8> {
    let mut encoded = vec![0u8; chunk.len()];
    for (nblock, (src, dst)) in chunk
        .chunks(blocksize)
        .zip(encoded.chunks_mut(blocksize))
        .enumerate()
    {
        delta::encode(chunk, nblock * blocksize, typesize, src, dst);
    }
    let mut decoded = encoded.clone();
    let (first, rest) = decoded.split_at_mut(blocksize.min(chunk.len()));
    delta::decode(&[], 0, typesize, first);
    for (i, block) in rest.chunks_mut(blocksize).enumerate() {
        delta::decode(first, (i + 1) * blocksize, typesize, block);
    }
    decoded
}

#[test]
fn delta_across_blocks() {
    // u32 ramp 1000..: block 0 holds item deltas, later blocks XOR block 0.
    let chunk: Vec<u8> = (1000u32..1000 + 3 * 256 + 100)
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let blocksize = 1024;
    let mut enc = vec![0u8; blocksize];
    delta::encode(&chunk, 0, 4, &chunk[..blocksize], &mut enc);
    assert_eq!(enc[..4], 1000u32.to_le_bytes());
    assert_eq!(enc[4..8], (1000u32 ^ 1001).to_le_bytes());
    let mut enc2 = vec![0u8; blocksize];
    delta::encode(
        &chunk,
        2 * blocksize,
        4,
        &chunk[2 * blocksize..3 * blocksize],
        &mut enc2,
    );
    assert_eq!(enc2[..4], (1000u32 ^ 1512).to_le_bytes());
    for typesize in [1usize, 2, 3, 4, 8, 16, 12] {
        let round = delta_round_trip(&chunk, 1024, typesize);
        assert!(round == chunk, "typesize {typesize}");
    }
    // A short last block.
    let round = delta_round_trip(&chunk[..2600], 1024, 4);
    assert!(round == chunk[..2600]);
}

#[test]
fn trunc_prec_positive_and_negative() {
    let vals32 = [
        1.0f32,
        -std::f32::consts::PI,
        1.0e-30,
        123_456.79,
        f32::INFINITY,
    ];
    let src: Vec<u8> = vals32.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut dst = vec![0u8; src.len()];
    for (prec, zeroed) in [(10i8, 13u32), (23, 0), (1, 22), (-5, 5), (-22, 22)] {
        trunc_prec::truncate(prec, 4, &src, &mut dst).unwrap();
        for (i, v) in vals32.iter().enumerate() {
            let want = v.to_bits() >> zeroed << zeroed;
            let got = u32::from_le_bytes(dst[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(got, want, "prec {prec} value {v}");
        }
    }
    // The same values through python-blosc2 4.14.1 (C-Blosc2 3.3.5) with
    // filters [TRUNC_PREC, SHUFFLE]: decompressing gives the truncated words.
    let oracle: [(i8, [u32; 5]); 2] = [
        (
            10,
            [
                0x3f80_0000,
                0xc049_0000,
                0x0da2_4000,
                0x47f1_2000,
                0x7f80_0000,
            ],
        ),
        (
            -5,
            [
                0x3f80_0000,
                0xc049_0fc0,
                0x0da2_4260,
                0x47f1_2060,
                0x7f80_0000,
            ],
        ),
    ];
    for (prec, words) in oracle {
        trunc_prec::truncate(prec, 4, &src, &mut dst).unwrap();
        let want: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(dst, want, "prec {prec}");
    }
    // Known bit patterns: pi as f64 keeping 8 mantissa bits.
    let pi = std::f64::consts::PI.to_le_bytes();
    let mut out = [0u8; 8];
    trunc_prec::truncate(8, 8, &pi, &mut out).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0x4009_2000_0000_0000);
    trunc_prec::truncate(-20, 8, &pi, &mut out).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0x4009_21fb_5440_0000);
    // Trailing bytes that are not a whole item pass through.
    let mut src = vec![0xffu8; 11];
    src[..8].copy_from_slice(&1.5f64.to_le_bytes());
    let mut out = vec![0u8; 11];
    trunc_prec::truncate(1, 8, &src, &mut out).unwrap();
    assert_eq!(out[..8], 1.5f64.to_le_bytes());
    assert_eq!(out[8..], [0xff; 3]);
    for bad in [0i8, 53, -52, -128] {
        assert_eq!(
            trunc_prec::truncate(bad, 8, &pi, &mut out[..8])
                .unwrap_err()
                .code(),
            -12
        );
    }
}
