//! Replays the fuzz targets' bodies (fuzz/src/bodies.rs) on stable Rust in
//! every test run: valid inputs written here and by the reference, then
//! truncations and random byte mutations of them. A body panics on a crash
//! or on a broken property (a round trip that changes data), so this test
//! fails exactly when a fuzzer would report the input.
//!
//! The long, coverage-guided runs are `cargo +nightly fuzz run <target>` in
//! fuzz/ (docs/fuzzing.md); this keeps their bodies compiling and their
//! seeds clean.

#[path = "../../fuzz/src/bodies.rs"]
mod bodies;
mod common;

use b2nd_core::chunk::{self, CParams};
use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::ndarray::meta::NdMeta;
use b2nd_core::schunk::{packed, SChunk, Storage};
use common::XorShift;

/// Truncations at every interesting length plus `n` random mutations
/// (1 to 4 bytes overwritten, sometimes a length field set to an extreme).
fn mutations(seed: &[u8], n: usize, rng: &mut XorShift) -> Vec<Vec<u8>> {
    let mut out = vec![seed.to_vec()];
    let step = (seed.len() / 64).max(1);
    out.extend((0..seed.len()).step_by(step).map(|l| seed[..l].to_vec()));
    for _ in 0..n {
        let mut m = seed.to_vec();
        if m.is_empty() {
            break;
        }
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(m.len());
            m[at] = rng.next() as u8;
        }
        if rng.below(4) == 0 && m.len() >= 4 {
            let at = rng.below(m.len() - 3);
            let v: [u8; 4] = match rng.below(3) {
                0 => [0xff; 4],
                1 => [0xff, 0xff, 0xff, 0x7f],
                _ => [0, 0, 0, 0x80],
            };
            m[at..at + 4].copy_from_slice(&v);
        }
        out.push(m);
    }
    out
}

fn sample(len: usize, kind: usize) -> Vec<u8> {
    (0..len)
        .map(|i| match kind {
            0 => (i / 13) as u8,
            1 => ((i * 2_654_435_761) >> 7) as u8,
            _ => 7,
        })
        .collect()
}

/// With `B2ND_FUZZ_SEEDS=DIR` set, writes `seeds` (the valid inputs a test
/// mutates) to `DIR/<target>/<name><i>` for each of `targets`: the starting
/// corpus of `cargo fuzz run <target>` (`scripts/fuzz.sh`). A coverage-guided
/// fuzzer started from nothing rarely gets past a frame's magic bytes.
/// Seeds over 64 KiB are left out: libFuzzer mutates inputs up to the
/// longest seed, and the two 4 MB fixtures of the reference's raw shuffle
/// output (not chunks) would slow every run.
fn export_seeds(name: &str, targets: &[&str], seeds: &[Vec<u8>]) {
    let Some(dir) = std::env::var_os("B2ND_FUZZ_SEEDS") else {
        return;
    };
    for target in targets {
        let dir = std::path::Path::new(&dir).join(target);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, seed) in seeds.iter().enumerate().filter(|(_, s)| s.len() <= 1 << 16) {
            std::fs::write(dir.join(format!("{name}{i}")), seed).unwrap();
        }
    }
}

/// Small chunks of every codec and filter pipeline.
fn chunk_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for compcode in [0u8, 1, 2, 4, 5] {
        for filters in [[0u8, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 3, 1]] {
            for (len, kind) in [(3000usize, 0usize), (1500, 1), (4096, 2)] {
                let cp = CParams {
                    compcode,
                    typesize: 4,
                    filters,
                    blocksize: 1024,
                    ..CParams::default()
                };
                let src = sample(len, kind);
                let mut dst = vec![0u8; len + 32];
                let n = chunk::compress(&cp, &src, &mut dst).unwrap();
                dst.truncate(n);
                seeds.push(dst);
            }
        }
    }
    // Split blocks (BLOSC_ALWAYS_SPLIT) whose low byte planes are noise,
    // stored verbatim, and whose high ones compress: the decoder reads
    // stored planes in place from the chunk, so mutated stream sizes must
    // land on that path too.
    for compcode in [0u8, 1] {
        for typesize in [2usize, 8, 16] {
            let src = common::half_noise(700, typesize, 0, 40);
            let cp = CParams {
                compcode,
                typesize: typesize as i32,
                filters: [0, 0, 0, 0, 0, 1],
                blocksize: (256 * typesize) as i32,
                splitmode: 1,
                ..CParams::default()
            };
            let mut dst = vec![0u8; src.len() + 64];
            let n = chunk::compress(&cp, &src, &mut dst).unwrap();
            dst.truncate(n);
            // Block 0 really mixes the two.
            let (stored, packed) = common::split_stream_kinds(&dst, 0, 256 * typesize, typesize);
            assert!(
                stored > 0 && packed > 0,
                "split seed: {stored} stored, {packed} packed planes"
            );
            seeds.push(dst);
        }
    }
    // zfp, each mode, over blocks of 256 f32 or 64 f64 items shaped as
    // chunk_decode tries them ([n], [4, n/4], [4, 4, n/16], [4, 4, 4, n/64]).
    for (compcode, meta) in [(33u8, 253u8), (34, 14), (35, 40)] {
        for (typesize, shape) in [
            (4, vec![256i64]),
            (4, vec![4, 64]),
            (8, vec![4, 4, 8]),
            (4, vec![4, 4, 4, 4]),
        ] {
            let cp = CParams {
                compcode,
                compcode_meta: meta,
                typesize,
                filters: [0; 6],
                blocksize: 1024,
                splitmode: 2,
                block_shape: Some(shape.into()),
                ..CParams::default()
            };
            let src: Vec<u8> = (0..3 * 1024 / typesize as usize)
                .flat_map(|i| {
                    let v = (i as f64 * 0.1).sin() * 50.0;
                    if typesize == 4 {
                        (v as f32).to_le_bytes().to_vec()
                    } else {
                        v.to_le_bytes().to_vec()
                    }
                })
                .collect();
            let mut dst = vec![0u8; src.len() + 32];
            let n = chunk::compress(&cp, &src, &mut dst).unwrap();
            assert!(n < src.len() * 3 / 4, "zfp seed did not compress: {n}");
            dst.truncate(n);
            // It decodes with the shape chunk_decode gives it.
            let mut d = b2nd_core::chunk::Decompressor::new(b2nd_core::chunk::DParams {
                block_shape: cp.block_shape.clone(),
                ..Default::default()
            });
            let mut back = vec![0u8; src.len()];
            assert_eq!(d.decompress(&dst, &mut back).unwrap(), src.len());
            seeds.push(dst);
        }
    }
    // NDLZ (4x4 and 8x8 cells) over 2-D blocks: its streams come only
    // with a block shape, and decode without one.
    for meta in [4u8, 8] {
        let cp = CParams {
            compcode: 32,
            compcode_meta: meta,
            typesize: 1,
            filters: [0; 6],
            blocksize: 32 * 48,
            block_shape: Some(vec![32, 48].into()),
            ..CParams::default()
        };
        // Rows from a palette of five, each repeating every 16 columns.
        let src: Vec<u8> = (0..4 * 32 * 48usize)
            .map(|i| ((i % 16) * 13 ^ ((i / 96) % 5) * 41) as u8)
            .collect();
        let mut dst = vec![0u8; src.len() + 32];
        let n = chunk::compress(&cp, &src, &mut dst).unwrap();
        assert!(n < src.len() * 3 / 4, "NDLZ seed did not compress: {n}");
        dst.truncate(n);
        seeds.push(dst);
    }
    seeds
}

#[test]
fn chunk_bodies_survive_mutated_chunks() {
    let mut rng = XorShift(0x5eed_c4a1);
    let mut runs = 0;
    let seeds = chunk_seeds();
    for seed in &seeds {
        for m in mutations(seed, 60, &mut rng) {
            bodies::chunk_decode(&m);
            runs += 1;
        }
    }
    // The reference's chunks of every version, as they are and truncated.
    let mut reference = Vec::new();
    let dir = common::fixtures_dir().join("c-blosc2-compat");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cdata") {
            let bytes = std::fs::read(&p).unwrap();
            bodies::chunk_decode(&bytes);
            bodies::chunk_decode(&bytes[..bytes.len().min(200)]);
            runs += 2;
            reference.push(bytes);
        }
    }
    assert!(runs > 3000, "only {runs} inputs replayed");
    export_seeds("chunk", &["chunk_decode"], &[seeds, reference].concat());
}

#[test]
fn roundtrip_body_holds_for_every_parameter_byte() {
    let mut rng = XorShift(0x0dd_ba11);
    let mut inputs = Vec::new();
    // Every codec byte against every filter choice (bytedelta and NDCELL
    // included), each with a few clevel/typesize/geometry draws.
    for p0 in 0u8..6 {
        for p2 in 0u8..8 {
            for _ in 0..3 {
                let len = 4 + rng.below(5000);
                let mut data: Vec<u8> = vec![p0, rng.next() as u8, p2, rng.next() as u8];
                data.extend(sample(len, rng.below(3)));
                bodies::chunk_roundtrip(&data);
                inputs.push(data);
            }
        }
    }
    export_seeds("params", &["chunk_roundtrip"], &inputs);
}

/// The parameter byte's upper half, items of 17 to 255 bytes, with at
/// least 32 items a chunk so the SIMD shuffles' wide windows (groups of 32
/// items) run, not only their scalar remainder.
#[test]
fn roundtrip_body_reaches_wide_items() {
    let mut rng = XorShift(0x51de_17e5);
    for p3 in (128u8..=255).step_by(9).chain([255]) {
        let typesize = 17 + usize::from(p3 - 128) * 238 / 127;
        // Shuffle, bitshuffle, shuffle then BYTEDELTA, over each codec.
        for (p0, p2) in [(0u8, 1u8), (1, 2), (4, 5), (5, 1), (2, 1)] {
            let len = typesize * (32 + rng.below(40)) + rng.below(typesize);
            let mut data: Vec<u8> = vec![p0, rng.next() as u8, p2, p3];
            data.extend(sample(len, rng.below(3)));
            bodies::chunk_roundtrip(&data);
        }
    }
}

#[test]
fn blosclz_body_survives_mutated_streams() {
    let mut rng = XorShift(0xb105_c12);
    let src = sample(20_000, 0);
    let mut enc = vec![0u8; 20_100];
    let cp = CParams {
        compcode: 0,
        filters: [0; 6],
        typesize: 1,
        blocksize: 20_000,
        splitmode: 2,
        ..CParams::default()
    };
    let n = chunk::compress(&cp, &src, &mut enc).unwrap();
    // The stream after the 32-byte header and 4-byte block start (one
    // block) and its 4-byte stream size.
    let stream = &enc[40..n];
    for m in mutations(stream, 400, &mut rng) {
        bodies::blosclz_decode(&m);
    }
    export_seeds("stream", &["blosclz_decode"], &[stream.to_vec()]);
}

#[test]
fn frame_bodies_survive_mutated_frames() {
    let mut rng = XorShift(0xf4a3_e5);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    let fixtures = common::fixtures_dir();
    for sub in ["frames", "c-blosc2-compat"] {
        for e in std::fs::read_dir(fixtures.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "b2frame") {
                seeds.push(std::fs::read(&p).unwrap());
            }
        }
    }
    // A frame written here with metalayers, a vlmetalayer and a zero chunk.
    let mut sc = SChunk::new(Storage::default()).unwrap();
    sc.meta_add("fuzz", b"\x93\x01\x02\x03").unwrap();
    sc.append_buffer(&sample(4000, 0)).unwrap();
    sc.vlmeta_add("note", b"replayed", None).unwrap();
    seeds.push(sc.to_buffer().unwrap());
    let mut runs = 0;
    for seed in &seeds {
        for m in mutations(seed, 40, &mut rng) {
            bodies::frame_open(&m);
            bodies::frame_file(&m);
            bodies::frame_edit(&m);
            runs += 1;
        }
    }
    assert!(runs > 300, "only {runs} frames replayed");
    export_seeds("frame", &["frame_open", "frame_file", "frame_edit"], &seeds);
}

/// A metalayer, three chunks of different kinds (of typesize 4) and a
/// vlmetalayer, so mutations reach every section of a seed's layout.
fn fill_seed(sc: &mut SChunk) {
    sc.meta_add("fuzz", b"\x93\x01\x02\x03").unwrap();
    for kind in 0..3 {
        sc.append_buffer(&sample(4000, kind)).unwrap();
    }
    sc.vlmeta_add("note", b"replayed", None).unwrap();
}

#[test]
fn packed_body_survives_mutated_packed_buffers() {
    let mut rng = XorShift(0x9ac_4ed);
    let mut seeds = Vec::new();
    // Empty; and three chunks of different kinds with a metalayer and a
    // vlmetalayer, so mutations reach every section of the layout.
    let mut sc = SChunk::new(Storage::default()).unwrap();
    seeds.push(packed::pack(&mut sc).unwrap());
    let mut sc = SChunk::new(Storage {
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    fill_seed(&mut sc);
    seeds.push(packed::pack(&mut sc).unwrap());
    let mut runs = 0;
    for seed in &seeds {
        // Each seed must unpack, or the mutations below test only refusals.
        assert!(packed::unpack(seed).is_ok());
        for m in mutations(seed, 300, &mut rng) {
            bodies::packed_unpack(&m);
            runs += 1;
        }
    }
    assert!(runs > 600, "only {runs} packed buffers replayed");
    export_seeds("packed", &["packed_unpack"], &seeds);
}

#[test]
fn nd_bodies_survive_mutated_meta_and_arrays() {
    let mut rng = XorShift(0x0b2_0d);
    let meta = NdMeta::new(vec![10, 0, 7], vec![4, 1, 7], vec![2, 1, 3], "<f8", 0);
    let b2nd = meta.to_b2nd_bytes().unwrap();
    let caterva = meta.to_caterva_bytes().unwrap();
    for seed in [&b2nd, &caterva] {
        for m in mutations(seed, 300, &mut rng) {
            bodies::nd_meta(&m);
        }
    }
    export_seeds("meta", &["nd_meta"], &[b2nd, caterva]);
    let ctx = Context::new(
        ArrayStorage::Schunk(Storage::default()),
        8,
        &[9, 5],
        &[4, 4],
        &[2, 3],
        Some("<f8"),
        0,
        Vec::new(),
    )
    .unwrap();
    let src: Vec<u8> = sample(9 * 5 * 8, 0);
    let frame = NdArray::from_cbuffer(&ctx, &src)
        .unwrap()
        .to_cframe()
        .unwrap();
    for m in mutations(&frame, 150, &mut rng) {
        bodies::ndarray_cframe(&m);
        bodies::ndarray_edit(&m);
        bodies::frame_file(&m);
    }
    export_seeds(
        "array",
        &["ndarray_cframe", "ndarray_edit", "frame_open", "frame_file"],
        &[frame],
    );
}

/// The `ndarray_cframe` fuzzer found frames of a few hundred bytes that
/// declare ~10^8 special chunks under a metalayer describing some other
/// array: copying chunk by chunk before checking took seconds and gigabytes.
/// The metalayer is now checked first, so even 2^27 declared chunks are
/// refused at once (before the fix this test would exhaust memory).
#[test]
fn a_frame_declaring_far_more_chunks_than_its_array_is_refused_before_copying() {
    use b2nd_core::chunk::Special;
    let mut sc = SChunk::new(Storage {
        contiguous: true,
        cparams: CParams {
            typesize: 8,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    // A b2nd layer for a 4-item array in one chunk of 32 bytes.
    let meta = NdMeta::new(vec![4], vec![4], vec![4], "<f8", 0);
    sc.meta_add("b2nd", &meta.to_b2nd_bytes().unwrap()).unwrap();
    sc.fill_special(1 << 27, Special::Zero, 8).unwrap();
    let frame = sc.to_buffer().unwrap();
    assert!(frame.len() < 1024, "frame of {} bytes", frame.len());
    for copy in [false, true] {
        let err = NdArray::from_cframe(&frame, copy).unwrap_err();
        assert!(err.to_string().contains("does not match"), "{err}");
    }
}

#[test]
fn sparse_body_survives_mutated_sparse_frames() {
    let mut rng = XorShift(0x5ba_45e);
    let dir = common::TempDir::new("fuzz_replay_sparse");
    let mut seeds = Vec::new();
    // A super-chunk of compressed, stored (incompressible) and zero chunks,
    // with a metalayer and a vlmetalayer; then the same after a chunk
    // deletion, whose chunk ids no longer follow the chunk numbers.
    let path = dir.join("schunk");
    let mut sc = SChunk::new(Storage {
        contiguous: false,
        urlpath: Some(path.clone()),
        cparams: CParams {
            typesize: 4,
            blocksize: 1024,
            ..CParams::default()
        },
        ..Storage::default()
    })
    .unwrap();
    fill_seed(&mut sc);
    let zeros = chunk::make_special(chunk::Special::Zero, 4000, 4, None).unwrap();
    sc.append_chunk(&zeros).unwrap();
    seeds.push(bodies::pack_sparse(&path).unwrap());
    sc.delete_chunk(0).unwrap();
    drop(sc);
    seeds.push(bodies::pack_sparse(&path).unwrap());
    // A b2nd array over four chunks, one block of which a middle item needs.
    let array = dir.join("array");
    let ctx = Context::new(
        ArrayStorage::Schunk(Storage {
            contiguous: false,
            urlpath: Some(array.clone()),
            ..Storage::default()
        }),
        8,
        &[9, 10],
        &[5, 6],
        &[2, 3],
        Some("<f8"),
        0,
        Vec::new(),
    )
    .unwrap();
    drop(NdArray::from_cbuffer(&ctx, &sample(9 * 10 * 8, 0)).unwrap());
    seeds.push(bodies::pack_sparse(&array).unwrap());
    // Each seed opens, or the mutations below test only refusals.
    let unpacked = dir.join("unpacked");
    for seed in &seeds {
        bodies::unpack_sparse(seed, &unpacked).unwrap();
        let sc = SChunk::open(&unpacked).unwrap();
        let mut out = vec![0u8; sc.chunksize() as usize];
        for n in 0..sc.nchunks() {
            sc.decompress_chunk(n, &mut out).unwrap();
        }
        std::fs::remove_dir_all(&unpacked).unwrap();
    }
    export_seeds("sparse", &["sparse_dir", "sparse_edit"], &seeds);
    let mut runs = 0;
    for seed in &seeds {
        for m in mutations(seed, 100, &mut rng) {
            bodies::sparse_dir(&m);
            bodies::sparse_edit(&m);
            runs += 1;
        }
    }
    assert!(runs > 300, "only {runs} sparse frames replayed");
}
