//! Decodes the BloscLZ streams inside chunks written by the reference Blosc
//! libraries (Blosc 1.3 to C-Blosc2 3.0) and checks the result against the
//! digests in the fixtures' MANIFEST.tsv.
//!
//! The chunk walking here is deliberately minimal (only what these fixtures
//! use: byte shuffle, split blocks, BloscLZ); the real chunk reader lives
//! elsewhere in the crate.

use b2nd_core::codecs::blosclz::{compress, decompress, EncodeHint};

use crate::common;
use common::{manifest_row, read_fixture, sha256_hex, unshuffle, ManifestRow};

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// One compressed stream of a block, as found in the chunk.
struct Stream<'a> {
    /// The BloscLZ bytes (None for the special encodings: runs, raw copies).
    packed: Option<&'a [u8]>,
    decoded: Vec<u8>,
}

/// Decodes a whole BloscLZ chunk and returns its contents plus every
/// compressed stream with what it decoded to.
fn decode_chunk(chunk: &[u8]) -> (Vec<u8>, Vec<Stream<'_>>) {
    let flags = chunk[2];
    let typesize = chunk[3] as usize;
    let nbytes = le_i32(chunk, 4) as usize;
    let blocksize = le_i32(chunk, 8) as usize;
    assert_eq!(le_i32(chunk, 12) as usize, chunk.len(), "cbytes");
    assert_eq!(flags >> 5, 0, "compressor must be BloscLZ");
    assert_eq!(flags & 0x02, 0, "memcpyed chunks are not expected here");
    let extended = flags & 0x05 == 0x05;
    let (header_len, shuffled) = if extended {
        (32, chunk[16..22].contains(&1))
    } else {
        (16, flags & 0x01 != 0)
    };
    let dont_split = flags & 0x10 != 0;

    let nblocks = nbytes.div_ceil(blocksize);
    let mut out = Vec::with_capacity(nbytes);
    let mut streams = Vec::new();
    for nblock in 0..nblocks {
        let leftover = nblock == nblocks - 1 && nbytes % blocksize != 0;
        let bsize = if leftover {
            nbytes % blocksize
        } else {
            blocksize
        };
        let nstreams = if !dont_split && !leftover {
            typesize
        } else {
            1
        };
        let neblock = bsize / nstreams;
        let mut pos = le_i32(chunk, header_len + 4 * nblock) as usize;
        let mut block = Vec::with_capacity(bsize);
        for _ in 0..nstreams {
            let csize = le_i32(chunk, pos);
            pos += 4;
            let (packed, decoded) = if csize == 0 {
                (None, vec![0u8; neblock])
            } else if csize < 0 {
                let token = chunk[pos];
                pos += 1;
                assert_eq!(token & 1, 1, "unknown stream token");
                (None, vec![(-csize) as u8; neblock])
            } else if csize as usize == neblock {
                let raw = &chunk[pos..pos + neblock];
                pos += neblock;
                (None, raw.to_vec())
            } else {
                let packed = &chunk[pos..pos + csize as usize];
                pos += csize as usize;
                let mut decoded = vec![0u8; neblock];
                assert_eq!(
                    decompress(packed, &mut decoded),
                    Ok(neblock),
                    "block {nblock}"
                );
                (Some(packed), decoded)
            };
            block.extend_from_slice(&decoded);
            streams.push(Stream { packed, decoded });
        }
        if shuffled {
            block = unshuffle(&block, typesize);
        }
        out.extend_from_slice(&block);
    }
    (out, streams)
}

fn check_fixture(name: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let rel = format!("c-blosc2-compat/{name}");
    let chunk = read_fixture(&rel);
    let ManifestRow {
        nbytes: len,
        digest,
        ..
    } = manifest_row(&rel, "-");
    let (data, streams) = decode_chunk(&chunk);
    assert_eq!(data.len(), len, "{name}: decoded length");
    assert_eq!(
        sha256_hex(&data),
        digest,
        "{name}: digest of decoded contents"
    );
    let packed: Vec<_> = streams
        .iter()
        .filter_map(|s| Some((s.packed?.to_vec(), s.decoded.clone())))
        .collect();
    assert!(!packed.is_empty(), "{name}: no BloscLZ stream exercised");
    packed
}

#[test]
fn blosc_1_3_0() {
    check_fixture("blosc-1.3.0-blosclz.cdata");
}

#[test]
fn blosc_1_7_0() {
    check_fixture("blosc-1.7.0-blosclz.cdata");
}

#[test]
fn blosc_1_11_1() {
    check_fixture("blosc-1.11.1-blosclz.cdata");
}

#[test]
fn blosc_1_14_0() {
    check_fixture("blosc-1.14.0-blosclz.cdata");
}

#[test]
fn blosc2_3_0_0() {
    check_fixture("blosc-blosclz-3.0.0.cdata");
}

/// The chunks of a C-Blosc2 2.x frame. The frame layout is not parsed here:
/// its ten data chunks sit one after the other and are found by their header
/// (format version 4, typesize 4, 200,000 bytes).
#[test]
fn frame_simple_blosclz_chunks() {
    let rel = "frames/frame_simple-blosclz.b2frame";
    let frame = read_fixture(rel);
    let mut starts = Vec::new();
    let mut p = 0;
    while p + 32 <= frame.len() {
        if frame[p] == 4
            && frame[p + 1] == 1
            && frame[p + 3] == 4
            && le_i32(&frame, p + 4) == 200_000
        {
            starts.push(p);
            p += le_i32(&frame, p + 12) as usize;
        } else {
            p += 1;
        }
    }
    assert_eq!(starts.len(), 10, "data chunks found in the frame");
    let mut exercised = 0;
    for (i, &start) in starts.iter().enumerate() {
        let cbytes = le_i32(&frame, start + 12) as usize;
        let (data, streams) = decode_chunk(&frame[start..start + cbytes]);
        let ManifestRow {
            nbytes: len,
            digest,
            ..
        } = manifest_row(rel, &format!("chunk {i}"));
        assert_eq!(data.len(), len, "chunk {i}: decoded length");
        assert_eq!(sha256_hex(&data), digest, "chunk {i}: digest");
        exercised += streams.iter().filter(|s| s.packed.is_some()).count();
    }
    assert!(
        exercised >= 10,
        "only {exercised} BloscLZ streams in the frame"
    );
}

/// The C-Blosc2 3.0 encoder makes the same decisions as this one: re-encoding
/// what its streams decode to at the same level (9) gives the same bytes.
#[test]
fn blosc2_3_0_0_streams_reencode_identically() {
    let streams = check_fixture("blosc-blosclz-3.0.0.cdata");
    for (i, (packed, decoded)) in streams.iter().enumerate() {
        let mut out = vec![0u8; decoded.len()];
        let n = compress(9, decoded, &mut out, &EncodeHint::default());
        assert_eq!(n, packed.len(), "stream {i}: compressed size");
        assert!(out[..n] == packed[..], "stream {i}: bytes differ");
    }
}
