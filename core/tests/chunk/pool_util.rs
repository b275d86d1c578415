//! Data and one-call helpers shared by the thread tests (`chunk::threads`)
//! and the external-executor tests (tests/executor.rs).

use b2nd_core::chunk::{self, CParams, DParams, Decompressor};

/// Data that compresses a little: a noisy ramp of `typesize`-byte items.
pub fn data(n: usize, typesize: usize) -> Vec<u8> {
    let mut x = 0x1234_5678u32;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let item = (i / typesize) as u32;
            ((item >> (8 * (i % typesize).min(3))) as u8).wrapping_add((x & 3) as u8)
        })
        .collect()
}

pub fn cparams(compcode: u8, typesize: i32, nthreads: i16, blocksize: i32) -> CParams {
    CParams {
        compcode,
        typesize,
        nthreads,
        blocksize,
        clevel: 5,
        ..CParams::default()
    }
}

pub fn compress(cp: &CParams, src: &[u8]) -> Vec<u8> {
    let mut dst = vec![0u8; src.len() + 64];
    let n = chunk::compress(cp, src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

pub fn decompress(c: &[u8], nbytes: usize, nthreads: i16) -> Vec<u8> {
    let mut out = vec![0u8; nbytes];
    let n = Decompressor::new(DParams {
        nthreads,
        ..DParams::default()
    })
    .decompress(c, &mut out)
    .unwrap();
    assert_eq!(n, nbytes);
    out
}
