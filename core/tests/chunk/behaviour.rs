//! Chunk behaviours checked against known reference bytes and against full
//! decodes: special chunks, DELTA under partial decodes, VL blocks, lazy
//! chunks, runs and memcpy layouts, thread-count independence, user codecs.

use crate::common;

use b2nd_core::chunk::{
    self, BlockNeeds, BlockSource, CParams, ChunkHeader, Compressor, DParams, Decompressor, Special,
};
use b2nd_core::codecs::registry::{self, CallInfo, CodecEntry, FilterEntry, UserCodec, UserFilter};
use std::borrow::Cow;
use std::sync::Arc;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn ramp(n: usize, typesize: usize) -> Vec<u8> {
    (0..n)
        .map(|i| ((i / typesize) as u32 >> (8 * (i % typesize).min(3))) as u8)
        .collect()
}

fn compress(cp: &CParams, src: &[u8]) -> Vec<u8> {
    let mut dst = vec![0u8; src.len() + 32];
    let n = chunk::compress(cp, src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

#[test]
fn special_chunks_are_byte_identical_to_the_reference() {
    // Bytes from python-blosc2 4.14.1 (C-Blosc2 3.3.5) SChunk.fill_special.
    let cp = CParams {
        typesize: 4,
        ..CParams::default()
    };
    assert_eq!(
        chunk::make_special_with(&cp, Special::Zero, 4000, None).unwrap(),
        unhex("05010504a00f0000a00f00002000000000000000000000000000000000000010")
    );
    let cp = CParams {
        typesize: 4,
        compcode: 1,
        ..CParams::default()
    };
    assert_eq!(
        chunk::make_special_with(&cp, Special::Nan, 4000, None).unwrap(),
        unhex("05010504a00f0000a00f00002000000000000000000000000000000000000020")
    );
    assert_eq!(
        chunk::make_special_with(&cp, Special::Value, 4000, Some(&7i32.to_le_bytes())).unwrap(),
        unhex("05010504a00f0000a00f0000240000000000000000000000000000000000003007000000")
    );
    let cp = CParams {
        typesize: 8,
        compcode: 5,
        clevel: 9,
        ..CParams::default()
    };
    assert_eq!(
        chunk::make_special_with(&cp, Special::Uninit, 400_000, None).unwrap(),
        unhex("05010508801a0600801a06002000000000000000000000000000000000000040")
    );
    // ...and they decode.
    let mut out = vec![1u8; 4000];
    let z = chunk::make_special(Special::Zero, 4000, 4, None).unwrap();
    assert_eq!(chunk::decompress(&z, &mut out).unwrap(), 4000);
    assert!(out.iter().all(|&b| b == 0));
    let v = chunk::make_special(Special::Value, 4000, 4, Some(&[1, 2, 3, 4])).unwrap();
    chunk::decompress(&v, &mut out).unwrap();
    assert!(out.chunks(4).all(|c| c == [1, 2, 3, 4]));
    let n = chunk::make_special(Special::Nan, 4000, 8, None).unwrap();
    chunk::decompress(&n, &mut out).unwrap();
    assert!(out
        .chunks(8)
        .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
    // NaN needs 4- or 8-byte items; nbytes must be a multiple of the typesize.
    let n2 = chunk::make_special(Special::Nan, 4000, 2, None).unwrap();
    assert_eq!(chunk::decompress(&n2, &mut out).unwrap_err().code(), -3);
    assert_eq!(
        chunk::make_special(Special::Nan, 4001, 4, None)
            .unwrap_err()
            .code(),
        -3
    );
}

/// Decodes blocks through a [`BlockSource`] over the full chunk bytes,
/// counting the fetches.
struct Source<'a> {
    chunk: &'a [u8],
    fetched: Vec<usize>,
}

impl BlockSource for Source<'_> {
    fn block(
        &mut self,
        nblock: usize,
        offset: u32,
        _len: Option<usize>,
    ) -> b2nd_core::Result<Cow<'_, [u8]>> {
        self.fetched.push(nblock);
        Ok(Cow::Borrowed(&self.chunk[offset as usize..]))
    }
}

fn lazy_view(c: &[u8]) -> Vec<u8> {
    let h = ChunkHeader::parse(c).unwrap();
    let mut v = c[..32 + 4 * h.nblocks()].to_vec();
    v[31] |= 0x08; // lazy flag
    v
}

#[test]
fn delta_partial_decodes_equal_full_decode() {
    for typesize in [1usize, 2, 4, 8, 12] {
        for filters in [[0, 0, 0, 0, 3, 1], [0, 0, 0, 0, 3, 0], [0, 0, 0, 3, 0, 2]] {
            let n = 50_000 * typesize + typesize * 3;
            let src = ramp(n, typesize);
            let cp = CParams {
                compcode: 1,
                typesize: typesize as i32,
                filters,
                blocksize: 8192 * typesize as i32,
                ..CParams::default()
            };
            let c = compress(&cp, &src);
            let h = ChunkHeader::parse(&c).unwrap();
            assert!(h.nblocks() > 4);
            assert_ne!(h.flags() & 0x08, 0, "DODELTA flag");
            let mut d = Decompressor::new(DParams::default());
            let mut full = vec![0u8; n];
            d.decompress(&c, &mut full).unwrap();
            assert_eq!(full, src);
            // getitem from blocks other than the first
            let nitems = n / typesize;
            for (start, cnt) in [(nitems / 2, 100), (nitems - 10, 10), (8192 * 3 - 1, 2)] {
                let mut part = vec![0u8; cnt * typesize];
                d.getitem(&c, start, cnt, &mut part).unwrap();
                assert_eq!(
                    part,
                    src[start * typesize..(start + cnt) * typesize],
                    "getitem ts {typesize} {filters:?}"
                );
            }
            // mask out block 0
            let mut mask = vec![false; h.nblocks()];
            mask[0] = true;
            d.set_maskout(&mask).unwrap();
            let mut masked = vec![0u8; n];
            d.decompress(&c, &mut masked).unwrap();
            assert_eq!(
                masked[h.blocksize()..],
                src[h.blocksize()..],
                "mask ts {typesize}"
            );
            assert!(masked[..h.blocksize()].iter().all(|&b| b == 0));
            // lazy chunk, block 0 masked out, threads
            let view = lazy_view(&c);
            let mut src_ = Source {
                chunk: &c,
                fetched: Vec::new(),
            };
            let mut d3 = Decompressor::new(DParams {
                nthreads: 3,
                ..DParams::default()
            });
            let mut lazy = vec![0u8; n];
            d3.decompress_with_source(&view, &mut src_, &mut lazy, Some(&mask))
                .unwrap();
            assert_eq!(
                lazy[h.blocksize()..],
                src[h.blocksize()..],
                "lazy ts {typesize}"
            );
            assert!(
                src_.fetched.contains(&0),
                "block 0 fetched as DELTA reference"
            );
        }
    }
}

#[test]
fn lazy_decode_fetches_only_unmasked_blocks() {
    let src = ramp(200_000, 4);
    let cp = CParams {
        compcode: 5,
        typesize: 4,
        blocksize: 16384,
        ..CParams::default()
    };
    let c = compress(&cp, &src);
    let h = ChunkHeader::parse(&c).unwrap();
    let mask: Vec<bool> = (0..h.nblocks()).map(|j| j != 2).collect();
    let mut s = Source {
        chunk: &c,
        fetched: Vec::new(),
    };
    let mut out = vec![0u8; src.len()];
    Decompressor::new(DParams::default())
        .decompress_with_source(&lazy_view(&c), &mut s, &mut out, Some(&mask))
        .unwrap();
    assert_eq!(s.fetched, vec![2]);
    assert_eq!(out[2 * 16384..3 * 16384], src[2 * 16384..3 * 16384]);
    // The lazy flag is not required for a header+bstarts view.
    let mut plain_view = lazy_view(&c);
    plain_view[31] &= !0x08;
    let mut s2 = Source {
        chunk: &c,
        fetched: Vec::new(),
    };
    let mut out2 = vec![0u8; src.len()];
    Decompressor::new(DParams::default())
        .decompress_with_source(&plain_view, &mut s2, &mut out2, None)
        .unwrap();
    assert_eq!(out2, src);
    // A lazy chunk given to plain decompress is refused.
    assert_eq!(
        chunk::decompress(&lazy_view(&c), &mut out)
            .unwrap_err()
            .code(),
        -12
    );
}

#[test]
fn vl_blocks_round_trip() {
    let blocks: Vec<Vec<u8>> = (0..7).map(|k| ramp(1000 + 357 * k, 1)).collect();
    let refs: Vec<&[u8]> = blocks.iter().map(|b| b.as_slice()).collect();
    for (compcode, filters) in [
        (1u8, [0, 0, 0, 0, 0, 1]),
        (5, [0, 0, 0, 0, 3, 0]),
        (0, [0; 6]),
        (4, [0; 6]),
    ] {
        let cp = CParams {
            compcode,
            typesize: 1,
            filters,
            nthreads: 2,
            ..CParams::default()
        };
        let mut z = Compressor::new(cp).unwrap();
        let mut dst = vec![0u8; 20_000];
        let n = z.compress_vl(&refs, &mut dst).unwrap();
        let c = &dst[..n];
        let h = ChunkHeader::parse(c).unwrap();
        assert!(h.vl_blocks());
        assert_eq!(h.version(), 6);
        assert_eq!(h.nblocks(), 7);
        let mut d = Decompressor::new(DParams::default());
        for (k, b) in blocks.iter().enumerate() {
            assert_eq!(&d.decompress_vl_block(c, k).unwrap(), b);
        }
        let mut all = vec![0u8; h.nbytes()];
        d.decompress(c, &mut all).unwrap();
        assert_eq!(all, blocks.concat());
        // lazy VL chunk
        let view = lazy_view(c);
        let mut s = Source {
            chunk: c,
            fetched: Vec::new(),
        };
        let mut lazy = vec![0u8; h.nbytes()];
        d.decompress_with_source(&view, &mut s, &mut lazy, None)
            .unwrap();
        assert_eq!(lazy, all);
    }
}

#[test]
fn runs_memcpy_and_tiny_buffers() {
    let cp = CParams {
        compcode: 1,
        typesize: 4,
        ..CParams::default()
    };
    // empty
    let c = compress(&cp, &[]);
    assert_eq!(c.len(), 32);
    assert_eq!(chunk::cbuffer_sizes(&c).unwrap(), (0, 32, 1));
    assert_eq!(chunk::decompress(&c, &mut []).unwrap(), 0);
    // below BLOSC_MIN_BUFFERSIZE: plain copy
    for n in [1usize, 7, 31] {
        let src = ramp(n, 1);
        let c = compress(&cp, &src);
        assert_eq!(c.len(), n + 32);
        assert_ne!(c[2] & 0x2, 0, "memcpy flag");
        assert_eq!(&c[32..], &src[..]);
        let mut out = vec![0u8; n];
        chunk::decompress(&c, &mut out).unwrap();
        assert_eq!(out, src);
    }
    // all zeros: the chunk becomes a zero special chunk
    let c = compress(&cp, &vec![0u8; 100_000]);
    assert_eq!(c.len(), 32);
    assert_eq!(
        ChunkHeader::parse(&c).unwrap().special(),
        Some(Special::Zero)
    );
    // one repeated non-zero byte: every stream is a run (csize -value, token 1)
    let c = compress(
        &CParams {
            filters: [0; 6],
            ..cp.clone()
        },
        &vec![9u8; 100_000],
    );
    let h = ChunkHeader::parse(&c).unwrap();
    let first = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
    assert_eq!(
        i32::from_le_bytes(c[first..first + 4].try_into().unwrap()),
        -9
    );
    assert_eq!(c[first + 4], 1);
    let mut out = vec![0u8; 100_000];
    chunk::decompress(&c, &mut out).unwrap();
    assert!(out.iter().all(|&b| b == 9));
    assert!(h.nblocks() >= 1);
    // clevel 0: plain copy
    let src = ramp(5000, 4);
    let c = compress(
        &CParams {
            clevel: 0,
            ..cp.clone()
        },
        &src,
    );
    assert_eq!(c.len(), 5032);
    assert_eq!(c[2], 0x07);
}

#[test]
fn output_does_not_depend_on_threads() {
    let src = ramp(3_000_003, 8);
    for (compcode, filters) in [
        (1u8, [0, 0, 0, 0, 3, 1]),
        (5, [0, 0, 0, 0, 0, 2]),
        (0, [0, 0, 0, 0, 0, 1]),
    ] {
        let base = compress(
            &CParams {
                compcode,
                typesize: 8,
                filters,
                nthreads: 1,
                ..CParams::default()
            },
            &src,
        );
        for nthreads in [2i16, 3, 4] {
            let c = compress(
                &CParams {
                    compcode,
                    typesize: 8,
                    filters,
                    nthreads,
                    ..CParams::default()
                },
                &src,
            );
            assert_eq!(c, base, "codec {compcode} nthreads {nthreads}");
            let mut out = vec![0u8; src.len()];
            Decompressor::new(DParams {
                nthreads,
                ..DParams::default()
            })
            .decompress(&c, &mut out)
            .unwrap();
            assert_eq!(out, src);
        }
    }
}

#[test]
fn typesize_over_255_is_a_byte_stream() {
    let src = ramp(100_000, 1);
    let cp = CParams {
        compcode: 1,
        typesize: 1000,
        ..CParams::default()
    };
    let c = compress(&cp, &src);
    let h = ChunkHeader::parse(&c).unwrap();
    assert_eq!(h.typesize(), 1);
    // blocksize rounded to the original typesize
    assert_eq!(h.blocksize() % 1000, 0);
    let mut out = vec![0u8; src.len()];
    chunk::decompress(&c, &mut out).unwrap();
    assert_eq!(out, src);
}

struct Xor;
impl UserCodec for Xor {
    fn encode(&self, s: &[u8], d: &mut [u8], meta: u8, _: &CallInfo<'_>) -> b2nd_core::Result<usize> {
        if d.len() < s.len() / 2 + 1 {
            return Ok(0);
        }
        // Stores every other byte only when the data allows it (pairs equal).
        if s.len() % 2 != 0 || s.chunks(2).any(|p| p[0] != p[1]) {
            return Ok(0);
        }
        for (o, p) in d.iter_mut().zip(s.chunks(2)) {
            *o = p[0] ^ meta;
        }
        Ok(s.len() / 2)
    }
    fn decode(&self, s: &[u8], d: &mut [u8], meta: u8, _: &CallInfo<'_>) -> b2nd_core::Result<usize> {
        if d.len() != 2 * s.len() {
            return Err(b2nd_core::Error::new(b2nd_core::ErrorKind::Data, "size"));
        }
        for (p, &b) in d.chunks_mut(2).zip(s) {
            p[0] = b ^ meta;
            p[1] = b ^ meta;
        }
        Ok(d.len())
    }
}

struct AddOne;
impl UserFilter for AddOne {
    fn forward(&self, s: &[u8], d: &mut [u8], _: u8, _: &CallInfo<'_>) -> b2nd_core::Result<()> {
        d.iter_mut()
            .zip(s)
            .for_each(|(o, &i)| *o = i.wrapping_add(1));
        Ok(())
    }
    fn backward(&self, s: &[u8], d: &mut [u8], _: u8, _: &CallInfo<'_>) -> b2nd_core::Result<()> {
        d.iter_mut()
            .zip(s)
            .for_each(|(o, &i)| *o = i.wrapping_sub(1));
        Ok(())
    }
}

#[test]
fn user_codec_and_filter() {
    registry::register_codec(CodecEntry {
        id: 180,
        name: "halver".into(),
        version: 3,
        codec: Arc::new(Xor),
    })
    .unwrap();
    registry::register_filter(FilterEntry {
        id: 190,
        name: "addone".into(),
        version: 1,
        filter: Arc::new(AddOne),
    })
    .unwrap();
    let src: Vec<u8> = (0..40_000u32).map(|i| (i / 2 % 200) as u8).collect();
    let cp = CParams {
        compcode: 180,
        compcode_meta: 0x55,
        typesize: 2,
        filters: [0, 0, 0, 0, 190, 0],
        splitmode: 2,
        ..CParams::default()
    };
    let c = compress(&cp, &src);
    let h = ChunkHeader::parse(&c).unwrap();
    assert_eq!(h.compcode(), 180);
    assert_eq!(h.flags() >> 5, 6);
    assert_eq!(h.versionlz(), 3);
    assert!(c.len() < src.len() / 2 + 1000);
    let mut out = vec![0u8; src.len()];
    chunk::decompress(&c, &mut out).unwrap();
    assert_eq!(out, src);
}

#[test]
fn prefilter_and_postfilter_run_per_block() {
    use b2nd_core::chunk::{PostfilterArgs, PrefilterArgs};
    let src = ramp(100_000, 4);
    let pre: b2nd_core::chunk::Prefilter = Arc::new(|a: &mut PrefilterArgs<'_>| {
        for (o, &i) in a.output.iter_mut().zip(a.input) {
            *o = i.wrapping_add(3);
        }
        Ok(())
    });
    let cp = CParams {
        compcode: 1,
        typesize: 4,
        blocksize: 8192,
        prefilter: Some(pre),
        nthreads: 2,
        ..CParams::default()
    };
    let c = compress(&cp, &src);
    let mut plain = vec![0u8; src.len()];
    chunk::decompress(&c, &mut plain).unwrap();
    assert!(plain
        .iter()
        .zip(&src)
        .all(|(&p, &s)| p == s.wrapping_add(3)));
    let post: b2nd_core::chunk::Postfilter = Arc::new(|a: &mut PostfilterArgs<'_>| {
        assert_eq!(a.offset, a.nblock * 8192);
        for (o, &i) in a.output.iter_mut().zip(a.input) {
            *o = i.wrapping_sub(3);
        }
        Ok(())
    });
    for nthreads in [1, 3] {
        let mut d = Decompressor::new(DParams {
            nthreads,
            postfilter: Some(post.clone()),
            ..DParams::default()
        });
        let mut out = vec![0u8; src.len()];
        d.decompress(&c, &mut out).unwrap();
        assert_eq!(out, src);
    }
}

#[test]
fn vl_blocks_with_dictionaries() {
    let blocks: Vec<Vec<u8>> = (0..12)
        .map(|k| {
            let text = format!("record {k}: the quick brown fox jumps over the lazy dog; ");
            text.repeat(40 + k).into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = blocks.iter().map(|b| b.as_slice()).collect();
    for compcode in [1u8, 2, 5] {
        let cp = CParams {
            compcode,
            typesize: 1,
            use_dict: true,
            filters: [0; 6],
            ..CParams::default()
        };
        let mut z = Compressor::new(cp).unwrap();
        let mut dst = vec![0u8; 100_000];
        let n = z.compress_vl(&refs, &mut dst).unwrap();
        let c = &dst[..n];
        let h = ChunkHeader::parse(c).unwrap();
        assert!(h.uses_dict(), "codec {compcode}: dictionary expected");
        let mut d = Decompressor::new(DParams::default());
        for (k, b) in blocks.iter().enumerate() {
            assert_eq!(
                &d.decompress_vl_block(c, k).unwrap(),
                b,
                "codec {compcode} block {k}"
            );
        }
    }
}

#[test]
fn lazy_chunk_with_dictionary() {
    let src = ramp(400_000, 4);
    for compcode in [1u8, 5] {
        let cp = CParams {
            compcode,
            typesize: 4,
            use_dict: true,
            ..CParams::default()
        };
        let c = compress(&cp, &src);
        assert!(ChunkHeader::parse(&c).unwrap().uses_dict());
        let mut s = Source {
            chunk: &c,
            fetched: Vec::new(),
        };
        let mut out = vec![0u8; src.len()];
        Decompressor::new(DParams {
            nthreads: 2,
            ..DParams::default()
        })
        .decompress_with_source(&lazy_view(&c), &mut s, &mut out, None)
        .unwrap();
        assert_eq!(out, src);
        assert_eq!(s.fetched[0], usize::MAX, "dictionary fetched first");
    }
}

/// The decoder copies a block whose stored bytes repeat those of the block
/// before it instead of decoding it again (constant data). The copies must
/// be exact: constant and periodic blocks, every filter, and the one trap,
/// DELTA, where block 0 is coded against itself and the others against
/// block 0, so equal stored bytes in blocks 0 and 1 mean different data.
#[test]
fn blocks_with_repeated_bytes_decode_like_the_others() {
    // 32 KiB blocks and chunks of at least 256 KiB, so that two decoding
    // threads really run two threads (`pool::threads_for` wants 128 KiB each).
    let bs = 32 * 1024usize;
    let mut rng = 0x1234_5678u32;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 17;
                rng ^= rng << 5;
                (rng % 7) as u8
            })
            .collect()
    };
    // Compressible: each value repeated 8 times.
    let p: Vec<u8> = noise(bs / 8).iter().flat_map(|&v| [v; 8]).collect();
    // Block 0 is P; block 1 is R with delta(R against P) == delta(P against itself).
    let mut q = vec![0u8; bs];
    b2nd_core::filters::delta::encode(&p, 0, 1, &p, &mut q);
    let r: Vec<u8> = p.iter().zip(&q).map(|(a, b)| a ^ b).collect();
    let mut trap = p.clone();
    trap.extend_from_slice(&r);
    trap.extend_from_slice(&r);
    trap.extend_from_slice(&noise(bs * 6));
    let periodic: Vec<u8> = p.iter().copied().cycle().take(bs * 9 + 100).collect();
    let constant = vec![9u8; bs * 8];
    // Runs that break and start again: A A B A A A B B, then a short tail of A.
    let a = p.clone();
    let b: Vec<u8> = p.iter().map(|v| v ^ 0x55).collect();
    let broken: Vec<u8> = [&a, &a, &b, &a, &a, &a, &b, &b]
        .iter()
        .flat_map(|blk| blk.iter().copied())
        .chain(a[..bs / 2].iter().copied())
        .collect();
    for (name, src) in [
        ("trap", &trap),
        ("periodic", &periodic),
        ("constant", &constant),
        ("broken", &broken),
    ] {
        for typesize in [1usize, 4] {
            let t = typesize as u8;
            for (filters, metas) in [
                ([0, 0, 0, 0, 0, 0], [0; 6]),
                ([0, 0, 0, 0, 0, 1], [0; 6]),
                ([0, 0, 0, 0, 0, 2], [0; 6]),
                ([0, 0, 0, 0, 0, 3], [0; 6]),
                ([0, 0, 0, 0, 3, 1], [0; 6]),
                // Shuffle, then BYTEDELTA (the reference's global filter 35).
                ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 0, t]),
            ] {
                for compcode in [0u8, 1, 5] {
                    let cp = CParams {
                        compcode,
                        typesize: typesize as i32,
                        filters,
                        filters_meta: metas,
                        blocksize: bs as i32,
                        ..CParams::default()
                    };
                    let case = format!("{name} ts{typesize} {filters:?} codec {compcode}");
                    if src.len() % typesize != 0 {
                        continue;
                    }
                    let c = compress(&cp, src);
                    let start = |j: usize| {
                        i32::from_le_bytes(c[32 + 4 * j..36 + 4 * j].try_into().unwrap()) as usize
                    };
                    if name == "trap" && typesize == 1 && filters == [0, 0, 0, 0, 0, 3] {
                        assert_eq!(c[2] & 0x02, 0, "{case}: memcpyed");
                        // The premise: blocks 0 and 1 are stored as the same bytes.
                        let (b0, b1, b2) = (start(0), start(1), start(2));
                        assert_eq!(c[b0..b1], c[b1..b2], "{case}");
                    }
                    if name == "constant" {
                        // The premise of the copies: blocks 1 and 2 are stored
                        // as the same bytes.
                        assert_eq!(c[2] & 0x02, 0, "{case}: memcpyed");
                        let (b1, b2, b3) = (start(1), start(2), start(3));
                        assert_eq!(c[b1..b2], c[b2..b3], "{case}");
                    }
                    for nthreads in [1i16, 2] {
                        let mut d = Decompressor::new(DParams {
                            nthreads,
                            ..DParams::default()
                        });
                        let mut out = vec![0u8; src.len()];
                        d.decompress(&c, &mut out).unwrap();
                        assert!(out == *src, "{case} t{nthreads}");
                        // Blocks masked out are neither decoded nor copied into.
                        let nblocks = src.len().div_ceil(bs);
                        let mask: Vec<bool> = (0..nblocks).map(|j| j % 3 == 1).collect();
                        let mut part = vec![0xEEu8; src.len()];
                        d.set_maskout(&mask).unwrap();
                        d.decompress(&c, &mut part).unwrap();
                        for (j, (got, want)) in part.chunks(bs).zip(src.chunks(bs)).enumerate() {
                            if mask[j] {
                                assert!(
                                    got.iter().all(|&v| v == 0xEE),
                                    "{case} t{nthreads} block {j}"
                                );
                            } else {
                                assert!(got == want, "{case} t{nthreads} block {j}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A decompressor on `nthreads` threads, once it has decoded the whole of
/// `chunk` to `want` (checked).
fn decoder_after_full_decode(chunk: &[u8], nthreads: i16, want: &[u8], what: &str) -> Decompressor {
    let mut d = Decompressor::new(DParams {
        nthreads,
        ..DParams::default()
    });
    let mut out = vec![0u8; want.len()];
    let n = d.decompress(chunk, &mut out).unwrap();
    assert_eq!(n, want.len(), "{what} t{nthreads}");
    assert!(out == want, "{what} t{nthreads}");
    d
}

#[test]
fn split_blocks_mixing_stored_and_compressed_planes_round_trip() {
    // BLOSC_ALWAYS_SPLIT: one stream per byte plane, whatever the codec.
    const ALWAYS_SPLIT: i32 = 1;
    for compcode in [0u8, 1] {
        for typesize in [2usize, 3, 4, 8, 16] {
            for trailing in [0usize, typesize - 1] {
                let bsize = 4096 * typesize;
                // Five whole blocks and a short last one.
                let src = common::half_noise(5 * 4096 + 333, typesize, trailing, 700);
                let cp = CParams {
                    compcode,
                    typesize: typesize as i32,
                    blocksize: bsize as i32,
                    splitmode: ALWAYS_SPLIT,
                    ..CParams::default()
                };
                let c = compress(&cp, &src);
                let what = format!("codec {compcode} typesize {typesize} trailing {trailing}");
                // The case under test really occurs: block 1 keeps some
                // planes verbatim and compresses the others.
                let (stored, packed) = common::split_stream_kinds(&c, 1, bsize, typesize);
                assert!(
                    stored > 0 && packed > 0,
                    "{what}: {stored} stored, {packed} packed"
                );
                for nthreads in [1i16, 2] {
                    let mut d = decoder_after_full_decode(&c, nthreads, &src, &what);
                    // A partial read from the middle of a block.
                    let start = 4096 + 17;
                    let mut items = vec![0u8; 100 * typesize];
                    d.getitem(&c, start, 100, &mut items).unwrap();
                    assert!(
                        items[..] == src[start * typesize..(start + 100) * typesize],
                        "{what} getitem"
                    );
                }
            }
        }
    }
}

/// A chunk with a special value has no blocks, so its lazy flag means
/// nothing: it decodes to its value, as in the reference ("chunks with
/// special values cannot be lazy"), whole and in part. Before, it was
/// refused in a chunk list while the same chunk, written into a frame as a
/// special offset, read as zeros (found by the ndarray_edit fuzz body: an
/// array's item changed when the array went through a frame). A chunk with
/// blocks and the lazy flag is still refused without its source.
#[test]
fn a_special_chunk_flagged_lazy_decodes_to_its_value() {
    let mut zeros = chunk::make_special(chunk::Special::Zero, 100, 4, None).unwrap();
    zeros[31] |= 0x08;
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![9u8; 100];
    assert_eq!(d.decompress(&zeros, &mut out).unwrap(), 100);
    assert_eq!(out, vec![0u8; 100]);
    let mut part = vec![9u8; 8];
    assert_eq!(d.getitem(&zeros, 3, 2, &mut part).unwrap(), 8);
    assert_eq!(part, vec![0u8; 8]);
    let cparams = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let src: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
    let mut stored = vec![0u8; 4100];
    let n = chunk::compress(&cparams, &src, &mut stored).unwrap();
    stored.truncate(n);
    stored[31] |= 0x08;
    let mut out = vec![0u8; 4000];
    assert_eq!(d.decompress(&stored, &mut out).unwrap_err().code(), -12);
}

/// Blocks coded as one stream each (never split, or typesize 1), with no
/// filter or the byte shuffle alone, take their own decoding path
/// (`OneStream` in `chunk::decompress`). Every kind of stream such a block
/// can hold decodes there: a zero run, a run of one byte value, stored bytes
/// and a codec stream, a short last block too, whole, masked, in part and on
/// two threads.
#[test]
fn unsplit_blocks_of_every_stream_kind_round_trip() {
    const NEVER_SPLIT: i32 = 2;
    // 64 KiB blocks, so that the 352 KiB chunk is decoded on two threads
    // when asked (`pool::threads_for` wants 128 KiB each).
    let bs = 64 * 1024usize;
    let mut rng = common::XorShift(0x0bad_cafe_dead_beef);
    let noise: Vec<u8> = (0..bs).map(|_| rng.next() as u8).collect();
    let steps: Vec<u8> = (0..bs).map(|i| (i / 64) as u8).collect();
    // Blocks: coded, zeros, one repeated byte, noise, coded, and half a
    // block of noise last.
    let src: Vec<u8> = [
        &steps[..],
        &vec![0u8; bs],
        &vec![7u8; bs],
        &noise,
        &steps,
        &noise[..bs / 2],
    ]
    .concat();
    let kind = |csize: i32| match csize {
        0 => "zeros",
        c if c < 0 => "run",
        c if c as usize == bs => "stored",
        _ => "coded",
    };
    for typesize in [1usize, 2, 8, 16] {
        for filters in [[0u8; 6], [0, 0, 0, 0, 0, 1]] {
            for compcode in [0u8, 1, 2, 4, 5] {
                let cp = CParams {
                    compcode,
                    typesize: typesize as i32,
                    filters,
                    blocksize: bs as i32,
                    splitmode: NEVER_SPLIT,
                    ..CParams::default()
                };
                let c = compress(&cp, &src);
                let case = format!("typesize {typesize} filters {filters:?} codec {compcode}");
                // The premise: blocks 0 to 3 hold one stream of each kind.
                let h = ChunkHeader::parse(&c).unwrap();
                assert!(h.dont_split(), "{case}");
                let rd = |at: usize| i32::from_le_bytes(c[at..at + 4].try_into().unwrap());
                let kinds: Vec<&str> = (0..4).map(|j| kind(rd(rd(32 + 4 * j) as usize))).collect();
                assert_eq!(kinds, ["coded", "zeros", "run", "stored"], "{case}");
                for nthreads in [1i16, 2] {
                    let mut d = decoder_after_full_decode(&c, nthreads, &src, &case);
                    let mask = [false, true, false, true, false, false];
                    let mut part = vec![0xEEu8; src.len()];
                    d.set_maskout(&mask).unwrap();
                    d.decompress(&c, &mut part).unwrap();
                    for (j, (got, want)) in part.chunks(bs).zip(src.chunks(bs)).enumerate() {
                        let ok = if mask[j] {
                            got.iter().all(|&v| v == 0xEE)
                        } else {
                            got == want
                        };
                        assert!(ok, "{case} t{nthreads} masked, block {j}");
                    }
                    // Items across blocks 0 to 4.
                    let (start, n) = (bs / typesize - 3, 3 * bs / typesize + 5);
                    let mut items = vec![0u8; n * typesize];
                    d.getitem(&c, start, n, &mut items).unwrap();
                    let at = start * typesize;
                    assert!(items[..] == src[at..at + n * typesize], "{case} getitem");
                }
            }
        }
    }
}

/// What [`Decompressor::set_block_needs`] asks for of block `j` of `nblocks`
/// blocks of `len` bytes (the last may be shorter) in the tests below: the
/// first skipped, then spans that cut items at both ends, run to the end,
/// cover the whole block, and one that asks past the block's end.
fn test_need(needs: &mut BlockNeeds, j: usize, nblocks: usize, len: usize, typesize: usize) {
    match (j % 4, j + 1 == nblocks) {
        (_, true) => needs.add(j, 1..len - 2),
        (0, _) => {}
        (1, _) => needs.add(j, 3 * typesize + 1..len / 2 + 5),
        (2, _) => needs.add_whole(j),
        _ => needs.add(j, len - 7 * typesize - 1..usize::MAX),
    }
}

/// A decode told what it needs of each block writes at least those bytes,
/// right, and nothing of a skipped block, through each way a shuffled block
/// is put back: split blocks whose planes are stored, compressed or coded as
/// runs, and unsplit blocks; item sizes with and without a vector kernel for
/// only some items; blocks that end in bytes past the last whole item; a
/// short last block; lazy chunks; one and two threads. And without the
/// shuffle, split and unsplit blocks decoded straight into the output. The
/// BloscLZ and LZ4 streams of these blocks are decoded only as far as the
/// bytes needed reach (`stream::decode`), Zstd's whole.
#[test]
fn block_needs_decode_at_least_the_bytes_asked_for() {
    const ALWAYS_SPLIT: i32 = 1;
    const NEVER_SPLIT: i32 = 2;
    let mut dict_chunks = 0;
    for typesize in [2usize, 3, 4, 8, 12, 16] {
        // 16,384 items a block, so that even 2-byte items give a chunk of
        // more than 256 KiB, which two threads really share.
        let bsize = 16384 * typesize;
        for trailing in [0, typesize / 2] {
            for climb in [700usize, 1 << 30] {
                let src = common::half_noise(8 * 16384 + 5000, typesize, trailing, climb);
                for (splitmode, shuffled) in [
                    (ALWAYS_SPLIT, true),
                    (NEVER_SPLIT, true),
                    (ALWAYS_SPLIT, false),
                    (NEVER_SPLIT, false),
                ] {
                    for (compcode, use_dict) in [(0u8, false), (1, false), (1, true), (5, false)] {
                        let mut cp = CParams {
                            compcode,
                            typesize: typesize as i32,
                            blocksize: bsize as i32,
                            splitmode,
                            use_dict,
                            ..CParams::default()
                        };
                        if !shuffled {
                            cp.filters = [0; 6];
                        }
                        let c = compress(&cp, &src);
                        // A dictionary is kept only where training makes one.
                        dict_chunks += usize::from(ChunkHeader::parse(&c).unwrap().uses_dict());
                        let what = format!(
                            "typesize {typesize} trailing {trailing} climb {climb} \
                             split {splitmode} shuffled {shuffled} codec {compcode} \
                             dict {use_dict}"
                        );
                        let nblocks = src.len().div_ceil(bsize);
                        let mut needs = BlockNeeds::none(nblocks);
                        for (j, block) in src.chunks(bsize).enumerate() {
                            test_need(&mut needs, j, nblocks, block.len(), typesize);
                        }
                        let check = |out: &[u8], how: &str| {
                            for (j, (got, want)) in
                                out.chunks(bsize).zip(src.chunks(bsize)).enumerate()
                            {
                                let span = needs.span(j, want.len());
                                if span.is_empty() {
                                    assert!(
                                        got.iter().all(|&v| v == 0xEE),
                                        "{what} {how} block {j}"
                                    );
                                }
                                assert!(got[span.clone()] == want[span], "{what} {how} block {j}");
                            }
                        };
                        for nthreads in [1i16, 2] {
                            let mut d = Decompressor::new(DParams {
                                nthreads,
                                ..DParams::default()
                            });
                            let mut out = vec![0xEEu8; src.len()];
                            d.set_block_needs(&needs);
                            assert_eq!(d.decompress(&c, &mut out).unwrap(), src.len());
                            check(&out, &format!("t{nthreads}"));
                        }
                        let mut s = Source {
                            chunk: &c,
                            fetched: Vec::new(),
                        };
                        let mut out = vec![0xEEu8; src.len()];
                        Decompressor::new(DParams::default())
                            .decompress_with_source_needs(
                                &lazy_view(&c),
                                &mut s,
                                &mut out,
                                Some(&needs),
                            )
                            .unwrap();
                        check(&out, "lazy");
                        // `usize::MAX` is the dictionary, fetched first.
                        let mut blocks = s.fetched.iter().filter(|&&j| j != usize::MAX);
                        assert!(blocks.all(|&j| !needs.skips(j)), "{what} fetched");
                    }
                }
            }
        }
    }
    assert!(dict_chunks >= 12, "{dict_chunks} chunks with a dictionary");
}

/// A block decoded in part is never the source of a copy: a later block
/// stored as the same bytes and needed whole is decoded (or copied from a
/// block decoded whole), on one thread and on two.
#[test]
fn blocks_decoded_in_part_are_not_copied() {
    let typesize = 8;
    let bs = 32 * 1024usize;
    // Every block the same shuffled, compressible, non-constant bytes.
    let block: Vec<u8> = (0..bs)
        .map(|i| ((i / 8) % 251) as u8 ^ (i % 8) as u8)
        .collect();
    let src: Vec<u8> = block.iter().copied().cycle().take(bs * 9).collect();
    for compcode in [0u8, 1, 5] {
        let cp = CParams {
            compcode,
            typesize,
            blocksize: bs as i32,
            ..CParams::default()
        };
        let c = compress(&cp, &src);
        let start =
            |j: usize| i32::from_le_bytes(c[32 + 4 * j..36 + 4 * j].try_into().unwrap()) as usize;
        // The premise: blocks are stored as the same bytes.
        assert_eq!(
            c[start(0)..start(1)],
            c[start(1)..start(2)],
            "codec {compcode}"
        );
        for nthreads in [1i16, 2] {
            // Every other block in part, the others whole.
            let mut needs = BlockNeeds::none(9);
            for j in 0..9 {
                match j % 2 {
                    0 => needs.add(j, 100..200),
                    _ => needs.add_whole(j),
                }
            }
            let mut d = Decompressor::new(DParams {
                nthreads,
                ..DParams::default()
            });
            let mut out = vec![0u8; src.len()];
            d.set_block_needs(&needs);
            d.decompress(&c, &mut out).unwrap();
            for (j, got) in out.chunks(bs).enumerate() {
                let span = if j % 2 == 0 { 100..200 } else { 0..bs };
                assert!(
                    got[span.clone()] == block[span],
                    "codec {compcode} t{nthreads} block {j}"
                );
            }
        }
    }
}

/// Special chunks read in part fill the ranges asked for with their value,
/// in its phase (a range may start inside an item), and nothing else: an
/// uninitialised one writes nothing at all.
#[test]
fn special_chunks_read_in_part_fill_only_the_ranges_asked_for() {
    let cp = CParams {
        typesize: 4,
        blocksize: 1024,
        ..CParams::default()
    };
    let seven = 7i32.to_le_bytes();
    for (kind, value) in [
        (Special::Zero, None),
        (Special::Nan, None),
        (Special::Value, Some(&seven[..])),
        (Special::Uninit, None),
    ] {
        let c = chunk::make_special_with(&cp, kind, 4000, value).unwrap();
        let h = ChunkHeader::parse(&c).unwrap();
        assert_eq!((h.blocksize(), h.nblocks()), (1024, 4), "{kind:?}");
        let mut whole = vec![0xEEu8; 4000];
        Decompressor::new(DParams::default())
            .decompress(&c, &mut whole)
            .unwrap();
        let mut needs = BlockNeeds::none(4);
        needs.add(1, 5..13);
        needs.add_whole(2);
        needs.add(3, 900..usize::MAX);
        let mut part = vec![0xEEu8; 4000];
        let mut d = Decompressor::new(DParams::default());
        d.set_block_needs(&needs);
        d.decompress(&c, &mut part).unwrap();
        let asked = |i: usize| (1029..1037).contains(&i) || (2048..3072).contains(&i) || i >= 3972;
        for (i, (&got, &want)) in part.iter().zip(&whole).enumerate() {
            let want = if asked(i) { want } else { 0xEE };
            assert_eq!(got, want, "{kind:?} byte {i}");
        }
        // Every byte of every block asked for reads as the whole chunk.
        let mut all = vec![0xEEu8; 4000];
        d.set_block_needs(&BlockNeeds::whole(4));
        d.decompress(&c, &mut all).unwrap();
        assert_eq!(all, whole, "{kind:?}");
        if kind == Special::Uninit {
            assert!(part.iter().all(|&b| b == 0xEE));
        } else {
            assert_ne!(part[1029..1037], [0xEE; 8], "{kind:?}");
        }
    }
}
