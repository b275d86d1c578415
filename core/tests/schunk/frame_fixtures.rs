//! Every frame written by the reference in the fixtures opens, from a
//! file and from a buffer, and each chunk decodes to its MANIFEST digest.

use std::collections::BTreeMap;
use std::path::PathBuf;

use b2nd_core::schunk::SChunk;
use sha2::{Digest, Sha256};

/// The folder that holds `fixtures/` (see `tests/fixtures/README.md`).
fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests")
}

struct Expect {
    nchunk: i64,
    decoded: usize,
    covered: usize,
    digest: String,
}

fn manifest() -> BTreeMap<String, Vec<Expect>> {
    let text = std::fs::read_to_string(shared().join("fixtures/MANIFEST.tsv")).unwrap();
    let mut m: BTreeMap<String, Vec<Expect>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 5 || !f[0].ends_with(".b2frame") {
            continue;
        }
        let nchunk = f[1].strip_prefix("chunk ").unwrap().parse().unwrap();
        m.entry(f[0].to_owned()).or_default().push(Expect {
            nchunk,
            decoded: f[2].parse().unwrap(),
            covered: f[3].parse().unwrap(),
            digest: f[4].to_owned(),
        });
    }
    m
}

fn hex(d: &[u8]) -> String {
    Sha256::digest(d)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn check(name: &str, s: &mut SChunk, expects: &[Expect]) {
    assert_eq!(s.nchunks() as usize, expects.len(), "{name}");
    assert_eq!(
        s.nbytes() as usize,
        expects.iter().map(|e| e.decoded).sum::<usize>(),
        "{name}"
    );
    let mut all = Vec::new();
    for e in expects {
        let mut out = vec![0u8; e.decoded + 64];
        let n = s
            .decompress_chunk(e.nchunk, &mut out)
            .unwrap_or_else(|err| panic!("{name} chunk {}: {err}", e.nchunk));
        assert_eq!(n, e.decoded, "{name} chunk {}", e.nchunk);
        assert_eq!(
            hex(&out[..e.covered]),
            e.digest,
            "{name} chunk {}",
            e.nchunk
        );
        all.extend_from_slice(&out[..n]);
    }
    // A slice across every chunk border agrees with the chunk decodes.
    let ts = s.typesize() as usize;
    let nitems = all.len() / ts;
    let (start, stop) = (nitems / 7, nitems - nitems / 5);
    let mut got = vec![0u8; (stop - start) * ts];
    s.get_slice_buffer(start as i64, stop as i64, &mut got)
        .unwrap_or_else(|err| panic!("{name} slice: {err}"));
    assert!(got == all[start * ts..stop * ts], "{name}: slice differs");
}

#[test]
fn every_fixture_frame_decodes_to_its_digest() {
    let m = manifest();
    // Every frame file on disk is in the manifest (and so gets checked).
    for dir in ["frames", "c-blosc2-compat"] {
        for e in std::fs::read_dir(shared().join("fixtures").join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".b2frame") {
                assert!(
                    m.contains_key(&format!("{dir}/{name}")),
                    "{dir}/{name} has no MANIFEST entry"
                );
            }
        }
    }
    assert!(
        m.len() >= 8,
        "expected the frame fixtures, found {}",
        m.len()
    );
    for (file, expects) in &m {
        let path = shared().join("fixtures").join(file);
        let mut s = SChunk::open(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(file, &mut s, expects);
        let bytes = std::fs::read(&path).unwrap();
        let mut b = SChunk::from_buffer(&bytes, false).unwrap();
        check(file, &mut b, expects);
        assert_eq!(
            b.to_buffer().unwrap(),
            bytes,
            "{file}: an untouched frame serializes to itself"
        );
        let mut c = SChunk::from_buffer(&bytes, true).unwrap();
        check(file, &mut c, expects);
    }
}

#[test]
fn fixture_frames_survive_a_round_trip_through_here() {
    let m = manifest();
    for (file, expects) in &m {
        let path = shared().join("fixtures").join(file);
        let mut s = SChunk::open(&path).unwrap();
        let buf = s.to_buffer().unwrap();
        let mut copy = SChunk::from_vec(buf).unwrap();
        check(file, &mut copy, expects);
        // Delete and re-append the first chunk in a writable copy.
        let first = copy.get_chunk(0).unwrap().into_owned();
        copy.delete_chunk(0).unwrap();
        copy.insert_chunk(0, &first).unwrap();
        let mut again = SChunk::from_vec(copy.to_buffer().unwrap()).unwrap();
        check(file, &mut again, expects);
    }
}
