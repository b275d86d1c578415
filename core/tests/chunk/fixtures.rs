//! Chunks written by C-Blosc 1.x and C-Blosc2 2.x/3.x decode to the digests
//! recorded in the shared fixtures' MANIFEST.tsv; partial decodes of them
//! (getitem, block masks) agree with the full decode.

use b2nd_core::chunk::{ChunkHeader, DParams, Decompressor};

use crate::common;
use common::{manifest, read_fixture, sha256_hex, ManifestRow};

/// The MANIFEST rows of whole chunks (the raw shuffle fixtures are not chunks).
fn chunk_rows() -> Vec<ManifestRow> {
    manifest()
        .into_iter()
        .filter(|r| {
            r.file.ends_with(".cdata") && r.part == "-" && !r.file.ends_with("shuffle-2.20.0.cdata")
        })
        .collect()
}

#[test]
fn every_fixture_chunk_decodes_to_its_digest() {
    let rows = chunk_rows();
    assert!(
        rows.len() >= 25,
        "expected the c-blosc2-compat chunk fixtures, found {}",
        rows.len()
    );
    for nthreads in [1i16, 3] {
        let mut dec = Decompressor::new(DParams {
            nthreads,
            ..DParams::default()
        });
        for r in &rows {
            let chunk = read_fixture(&r.file);
            let h = ChunkHeader::parse(&chunk).unwrap_or_else(|e| panic!("{}: {e}", r.file));
            assert_eq!(h.nbytes(), r.nbytes, "{}", r.file);
            let mut out = vec![0u8; r.nbytes];
            let n = dec
                .decompress(&chunk, &mut out)
                .unwrap_or_else(|e| panic!("{}: {e}", r.file));
            assert_eq!(n, r.nbytes);
            assert_eq!(
                sha256_hex(&out[..r.covered]),
                r.digest,
                "{} (nthreads {nthreads})",
                r.file
            );
        }
    }
}

#[test]
fn fixture_partial_decodes_match_full_decode() {
    let mut dec = Decompressor::new(DParams::default());
    for r in chunk_rows() {
        let chunk = read_fixture(&r.file);
        let h = ChunkHeader::parse(&chunk).unwrap();
        let mut full = vec![0u8; r.nbytes];
        dec.decompress(&chunk, &mut full).unwrap();
        let ts = h.typesize();
        let nitems = r.nbytes / ts;
        // A few windows, including ones straddling block boundaries.
        let bs_items = (h.blocksize() / ts).max(1);
        for (start, n) in [
            (0, 1),
            (bs_items - 1, 2),
            (nitems / 2, bs_items + 3),
            (nitems - 5, 5),
        ] {
            let n = n.min(nitems - start);
            let mut part = vec![0u8; n * ts];
            let got = dec
                .getitem(&chunk, start, n, &mut part)
                .unwrap_or_else(|e| panic!("{}: {e}", r.file));
            assert_eq!(got, n * ts);
            assert_eq!(
                part,
                full[start * ts..(start + n) * ts],
                "{} getitem({start}, {n})",
                r.file
            );
        }
        // Mask out every other block: unmasked blocks equal the full decode,
        // masked ones are left untouched.
        let nblocks = h.nblocks();
        let mask: Vec<bool> = (0..nblocks).map(|j| j % 2 == 1).collect();
        dec.set_maskout(&mask).unwrap();
        let mut masked = vec![0xeeu8; r.nbytes];
        dec.decompress(&chunk, &mut masked).unwrap();
        for j in 0..nblocks {
            let a = j * h.blocksize();
            let b = (a + h.blocksize()).min(r.nbytes);
            if mask[j] {
                assert!(
                    masked[a..b].iter().all(|&x| x == 0xee),
                    "{} block {j} should be skipped",
                    r.file
                );
            } else {
                assert_eq!(masked[a..b], full[a..b], "{} block {j}", r.file);
            }
        }
    }
}
