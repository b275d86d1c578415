//! The decoder against zlib-rs's `uncompress` on streams from zlib-rs (every
//! level and strategy) and from our encoder, on truncated and corrupted
//! streams, and on hand-built streams that break each of zlib's rules.

use super::super::{compress, Encoder};
use super::Inflate;
use std::os::raw::{c_int, c_ulong};

/// zlib-rs's one-shot decoder, the reference for every case.
fn reference(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    if dst.is_empty() {
        // `uncompress` with no room decodes into a byte of its own and says
        // Z_OK for a 1-byte stream; the contract here is "fits in `dst`".
        let mut one = [0u8; 1];
        return reference(src, &mut one).filter(|&n| n == 0);
    }
    let mut out_len = c_ulong::try_from(dst.len()).unwrap();
    let in_len = c_ulong::try_from(src.len()).unwrap();
    // SAFETY: pointer/length pairs describe live slices; zlib bounds its
    // reads by `in_len` and its writes by `out_len`.
    let rc = unsafe { libz_sys::uncompress(dst.as_mut_ptr(), &mut out_len, src.as_ptr(), in_len) };
    (rc == libz_sys::Z_OK).then_some(out_len as usize)
}

/// zlib-rs's deflate with an explicit strategy.
fn deflate_with(src: &[u8], level: c_int, strategy: c_int) -> Vec<u8> {
    use libz_sys::*;
    let mut out = vec![0u8; src.len() * 2 + 1024];
    let mut strm = z_stream::default();
    // SAFETY: a default stream initialised and ended here; the in/out
    // pointers describe live slices for the duration of the calls.
    unsafe {
        let size = std::mem::size_of::<z_stream>() as c_int;
        assert_eq!(
            deflateInit2_(
                &mut strm,
                level,
                Z_DEFLATED,
                15,
                8,
                strategy,
                zlibVersion(),
                size
            ),
            Z_OK
        );
        strm.next_in = src.as_ptr();
        strm.avail_in = src.len() as u32;
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = out.len() as u32;
        assert_eq!(deflate(&mut strm, Z_FINISH), Z_STREAM_END);
        out.truncate(strm.total_out as usize);
        deflateEnd(&mut strm);
    }
    out
}

use crate::test_rng::XorShift as Rng;

/// Inputs of every shape the decoder's paths care about.
fn inputs() -> Vec<Vec<u8>> {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut v: Vec<Vec<u8>> = vec![vec![], vec![7], vec![0; 3], vec![1, 2]];
    // Runs of one byte (distance 1), short periods (2..7), a word and more.
    for period in 1..=20usize {
        let base: Vec<u8> = (0..period).map(|_| r.next() as u8).collect();
        v.push(base.iter().copied().cycle().take(5000 + period).collect());
    }
    // Small alphabets (long literal codes), text-like, random, ramps.
    for alphabet in [2usize, 5, 17, 64, 200] {
        v.push((0..20_000).map(|_| (r.below(alphabet) * 3) as u8).collect());
    }
    let words = [
        "the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog. ", "\n",
    ];
    let mut text = Vec::new();
    while text.len() < 100_000 {
        text.extend_from_slice(words[r.below(words.len())].as_bytes());
        if r.below(50) == 0 {
            text.push(r.next() as u8);
        }
    }
    v.push(text);
    v.push((0..70_000).map(|_| r.next() as u8).collect());
    v.push((0..65_536).map(|i| (i / 300) as u8).collect());
    v.push(
        (0..300_000u32)
            .flat_map(|i| (i * 7).to_le_bytes())
            .collect(),
    );
    // Skewed: a few very common bytes and every other byte rarely, so that
    // literal codes get longer than the main table.
    v.push(
        (0..200_000)
            .map(|_| {
                if r.below(1000) == 0 {
                    r.next() as u8
                } else {
                    r.below(4) as u8
                }
            })
            .collect(),
    );
    // Sizes around 64 KiB (stored block limits) and 258-byte matches.
    for n in [65_535usize, 65_536, 65_537, 258, 259, 516, 517] {
        let mut x: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        if n < 1000 {
            x = x[..3].iter().copied().cycle().take(n).collect();
        }
        v.push(x);
    }
    // Matches at every distance up to the window's 32768: a random block
    // repeated after gaps of random bytes.
    for gap in [100usize, 1000, 8000, 32_000, 32_765] {
        let chunk: Vec<u8> = (0..600).map(|_| r.next() as u8).collect();
        let filler: Vec<u8> = (0..gap).map(|_| r.next() as u8).collect();
        let mut x = chunk.clone();
        x.extend_from_slice(&filler);
        x.extend_from_slice(&chunk);
        x.extend_from_slice(&chunk[..300]);
        v.push(x);
    }
    // Blocks of noise and runs mixed (many dynamic blocks, small and large
    // distance codes).
    let mut mixed = Vec::new();
    while mixed.len() < 400_000 {
        let n = 1 + r.below(3000);
        match r.below(4) {
            0 => mixed.extend((0..n).map(|_| r.next() as u8)),
            1 => mixed.extend(std::iter::repeat(r.next() as u8).take(n)),
            2 if mixed.len() > 40_000 => {
                let from = mixed.len() - 1 - r.below(32_000);
                for k in 0..n {
                    mixed.push(mixed[from + k % (mixed.len() - from)]);
                }
            }
            _ => mixed.extend((0..n).map(|i| (i % 7) as u8 + r.below(2) as u8)),
        }
    }
    v.push(mixed);
    v
}

/// Decodes `stream` with ours and zlib-rs into buffers of `room` bytes and
/// checks they agree; returns our result.
fn agree(inf: &mut Inflate, stream: &[u8], room: usize) -> Option<usize> {
    let mut ours = vec![0xa5u8; room];
    let mut theirs = vec![0x5au8; room];
    let got = inf.decompress(stream, &mut ours);
    let want = reference(stream, &mut theirs);
    assert_eq!(got, want, "stream of {} bytes, room {room}", stream.len());
    if let Some(n) = got {
        assert!(
            ours[..n] == theirs[..n],
            "stream of {} bytes: output differs",
            stream.len()
        );
    }
    got
}

fn streams_of(src: &[u8]) -> Vec<Vec<u8>> {
    use libz_sys::{Z_DEFAULT_STRATEGY, Z_FILTERED, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE};
    let mut out = Vec::new();
    for level in 0..=9 {
        let mut dst = vec![0u8; src.len() * 2 + 1024];
        let n = compress(src, &mut dst, level);
        assert!(n > 0);
        dst.truncate(n);
        out.push(dst);
    }
    for strategy in [
        Z_DEFAULT_STRATEGY,
        Z_FILTERED,
        Z_HUFFMAN_ONLY,
        Z_RLE,
        Z_FIXED,
    ] {
        for level in [1, 6, 9] {
            out.push(deflate_with(src, level, strategy));
        }
    }
    let mut dst = vec![0u8; src.len() * 2 + 1024];
    let n = Encoder::new().compress(src, &mut dst, 5).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    out.push(dst);
    out
}

#[test]
fn every_level_and_strategy_round_trips_and_matches_zlib_rs() {
    let mut inf = Inflate::new();
    for src in inputs() {
        for stream in streams_of(&src) {
            assert_eq!(agree(&mut inf, &stream, src.len()), Some(src.len()));
            let mut back = vec![0u8; src.len()];
            assert_eq!(inf.decompress(&stream, &mut back), Some(src.len()));
            assert!(back == src, "len {}", src.len());
            // The free function (fresh tables) gives the same.
            let mut again = vec![0u8; src.len() + 300];
            assert_eq!(
                super::super::decompress(&stream, &mut again),
                Some(src.len())
            );
            assert!(again[..src.len()] == src[..]);
        }
    }
}

#[test]
fn output_must_fit_exactly_or_is_refused() {
    let mut inf = Inflate::new();
    for src in inputs() {
        for stream in streams_of(&src).iter().step_by(3) {
            assert_eq!(agree(&mut inf, stream, src.len()), Some(src.len()));
            assert_eq!(agree(&mut inf, stream, src.len() + 1), Some(src.len()));
            if !src.is_empty() {
                assert_eq!(agree(&mut inf, stream, src.len() - 1), None);
                assert_eq!(agree(&mut inf, stream, src.len() / 2), None);
            }
        }
    }
}

#[test]
fn every_truncation_is_refused() {
    let mut inf = Inflate::new();
    let mut r = Rng(77);
    let noise: Vec<u8> = (0..3000).map(|_| r.next() as u8).collect();
    let text: Vec<u8> = b"abracadabra, abracadabra; cadabra! ".repeat(200);
    let runs: Vec<u8> = (0..20_000).map(|i| (i / 700) as u8).collect();
    for src in [noise, text, runs] {
        for stream in streams_of(&src).iter().step_by(4) {
            let mut back = vec![0u8; src.len()];
            for cut in 0..stream.len() {
                assert_eq!(inf.decompress(&stream[..cut], &mut back), None, "cut {cut}");
            }
            // Trailing bytes after the checksum are ignored.
            let mut longer = stream.clone();
            longer.extend_from_slice(&[0xff, 0, 1]);
            assert_eq!(agree(&mut inf, &longer, src.len()), Some(src.len()));
        }
    }
}

#[test]
fn corrupted_streams_give_what_zlib_rs_gives() {
    let mut inf = Inflate::new();
    let mut r = Rng(0x1234_5678);
    let all = inputs();
    let mut failures = 0;
    for (k, src) in all.iter().enumerate() {
        let streams = streams_of(src);
        for stream in streams.iter().skip(k % 5).step_by(5) {
            if stream.len() < 3 {
                continue;
            }
            for _ in 0..40 {
                let mut bad = stream.clone();
                for _ in 0..1 + r.below(3) {
                    let at = r.below(bad.len());
                    bad[at] ^= 1 << r.below(8);
                }
                let room = [src.len(), src.len() + 100, src.len() / 2][r.below(3)];
                if agree(&mut inf, &bad, room).is_none() {
                    failures += 1;
                }
            }
        }
    }
    // The flips must have exercised the error paths.
    assert!(failures > 100, "{failures}");
}

/// Random byte strings behind a valid header: zlib-rs and ours must agree.
#[test]
fn random_bodies_give_what_zlib_rs_gives() {
    let mut inf = Inflate::new();
    let mut r = Rng(99);
    for i in 0..20_000 {
        let n = 3 + r.below(if i % 10 == 0 { 2000 } else { 40 });
        let mut s: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        s[0] = 0x78;
        s[1] = 0x9c;
        // Mostly fixed or dynamic blocks, so decoding gets somewhere.
        if i % 2 == 0 {
            s[2] = (s[2] & !6) | [2, 4][r.below(2)];
        }
        agree(&mut inf, &s, r.below(3000));
    }
}

/// LSB-first bit writer for hand-made streams.
#[derive(Default)]
struct Stream {
    bytes: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Stream {
    fn bits(&mut self, v: u32, n: u32) -> &mut Self {
        self.acc |= u64::from(v) << self.n;
        self.n += n;
        while self.n >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
        self
    }
    /// A Huffman codeword, most significant bit first.
    fn code(&mut self, code: u32, len: u32) -> &mut Self {
        for i in (0..len).rev() {
            self.bits(code >> i & 1, 1);
        }
        self
    }
    fn align(&mut self) -> &mut Self {
        if self.n > 0 {
            self.bits(0, 8 - self.n);
        }
        self
    }
    /// Header, the body written so far, and the Adler-32 of `data`.
    fn zlib(&mut self, data: &[u8]) -> Vec<u8> {
        self.align();
        let mut s = vec![0x78, 0x9c];
        s.extend_from_slice(&self.bytes);
        s.extend_from_slice(&zlib_rs::adler32::adler32(1, data).to_be_bytes());
        s
    }
}

/// Canonical codewords (RFC 1951 3.2.2) of `lens`.
fn canonical(lens: &[u8]) -> Vec<u32> {
    let mut count = [0u32; 16];
    for &l in lens {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for l in 1..16 {
        code = (code + count[l - 1]) << 1;
        next[l] = code;
    }
    lens.iter()
        .map(|&l| {
            let c = next[l as usize];
            next[l as usize] += 1;
            c
        })
        .collect()
}

/// Fixed-code writers.
fn fixed_literal(s: &mut Stream, sym: u32) {
    match sym {
        0..=143 => s.code(0x30 + sym, 8),
        144..=255 => s.code(0x190 + sym - 144, 9),
        256..=279 => s.code(sym - 256, 7),
        _ => s.code(0xc0 + sym - 280, 8),
    };
}

/// The code-length code every hand-made dynamic header here uses: symbols
/// 0..=12 get 4 bits, 13..=18 get 5 (complete).
const CL_LENS: [u8; 19] = [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5];
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// A dynamic block header: counts, the code-length code `cl_lens`, then the
/// code-length symbols `syms` (symbol, extra value, extra bits).
fn dynamic_header(
    s: &mut Stream,
    last: bool,
    nlit: u32,
    ndist: u32,
    cl_lens: &[u8; 19],
    syms: &[(u32, u32, u32)],
) {
    s.bits(u32::from(last), 1).bits(2, 2);
    s.bits(nlit - 257, 5).bits(ndist - 1, 5).bits(19 - 4, 4);
    for &i in &CL_ORDER {
        s.bits(u32::from(cl_lens[i]), 3);
    }
    let codes = canonical(cl_lens);
    for &(sym, extra, nextra) in syms {
        s.code(codes[sym as usize], u32::from(cl_lens[sym as usize]));
        s.bits(extra, nextra);
    }
}

/// Code-length symbols that send `lens` literally.
fn literal_lens(lens: &[u8]) -> Vec<(u32, u32, u32)> {
    lens.iter().map(|&l| (u32::from(l), 0, 0)).collect()
}

/// A last dynamic block with the given code lengths (sent literally), then
/// `body`: (whether a distance, symbol, extra value, extra bits).
fn dynamic_block(
    s: &mut Stream,
    lit_lens: &[u8],
    dist_lens: &[u8],
    body: &[(bool, u32, u32, u32)],
) {
    let mut all = lit_lens.to_vec();
    all.extend_from_slice(dist_lens);
    dynamic_header(
        s,
        true,
        lit_lens.len() as u32,
        dist_lens.len() as u32,
        &CL_LENS,
        &literal_lens(&all),
    );
    let lc = canonical(lit_lens);
    let dc = canonical(dist_lens);
    for &(is_dist, sym, extra, nextra) in body {
        if is_dist {
            s.code(dc[sym as usize], u32::from(dist_lens[sym as usize]));
        } else {
            s.code(lc[sym as usize], u32::from(lit_lens[sym as usize]));
        }
        s.bits(extra, nextra);
    }
}

/// Ours agrees with zlib-rs on `stream` into `room` bytes and gives `want`.
fn check(stream: &[u8], room: usize, want: Option<&[u8]>) {
    let mut inf = Inflate::new();
    let got = agree(&mut inf, stream, room);
    match want {
        None => assert_eq!(got, None),
        Some(w) => {
            assert_eq!(got, Some(w.len()));
            let mut out = vec![0u8; room];
            inf.decompress(stream, &mut out);
            assert_eq!(&out[..w.len()], w);
        }
    }
}

#[test]
fn header_rules() {
    let mut s = Stream::default();
    s.bits(1, 1).bits(1, 2);
    fixed_literal(&mut s, b'a' as u32);
    fixed_literal(&mut s, 256);
    let good = s.zlib(b"a");
    check(&good, 10, Some(b"a"));
    let with = |cmf: u8, flg: u8| {
        let mut v = good.clone();
        v[0] = cmf;
        v[1] = flg;
        v
    };
    // Every valid window size; 64 KiB and a method other than 8 are not.
    for cinfo in 0..8u8 {
        let cmf = cinfo << 4 | 8;
        let flg = (31 - (u16::from(cmf) << 8) % 31) as u8;
        check(&with(cmf, flg), 10, Some(b"a"));
    }
    let fcheck =
        |cmf: u8, flg: u8| flg + (31 - ((u16::from(cmf) << 8 | u16::from(flg)) % 31) as u8) % 31;
    // CINFO 8 (a 64 KiB window) and method 7, with valid checks.
    check(&with(0x88, fcheck(0x88, 0)), 10, None);
    check(&with(0x77, fcheck(0x77, 0)), 10, None);
    // A bad check.
    check(&with(0x78, 0x9d), 10, None);
    // A preset dictionary (FDICT, with a valid check) is refused.
    assert_eq!(fcheck(0x78, 0xa0), 0xbb);
    check(&with(0x78, 0xbb), 10, None);
    // A bad checksum.
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 1;
    check(&bad, 10, None);
    check(&good[..1], 10, None);
    check(&[], 10, None);
}

#[test]
fn block_rules() {
    // Block type 3.
    let mut s = Stream::default();
    s.bits(1, 1).bits(3, 2);
    check(&s.zlib(b""), 10, None);
    // Stored blocks: good, bad complement, truncated data, too long for the
    // output; and an empty one.
    let stored = |len: u16, nlen: u16, data: &[u8]| {
        let mut s = Stream::default();
        s.bits(1, 1).bits(0, 2).align();
        s.bits(u32::from(len), 16).bits(u32::from(nlen), 16);
        for &b in data {
            s.bits(u32::from(b), 8);
        }
        s.zlib(data)
    };
    check(&stored(3, !3, b"xyz"), 3, Some(b"xyz"));
    check(&stored(3, !3, b"xyz"), 2, None);
    check(&stored(3, !4, b"xyz"), 3, None);
    check(&stored(0, !0, b""), 0, Some(b""));
    let mut short = stored(3, !3, b"xyz");
    short.truncate(2 + 1 + 4 + 2);
    check(&short, 3, None);
    // Fixed block: lengths 286/287 and distances 30/31 are invalid.
    for sym in [286, 287] {
        let mut s = Stream::default();
        s.bits(1, 1).bits(1, 2);
        fixed_literal(&mut s, b'a' as u32);
        fixed_literal(&mut s, sym);
        s.code(0, 5);
        fixed_literal(&mut s, 256);
        check(&s.zlib(b"aaaa"), 100, None);
    }
    for dcode in [29, 30, 31] {
        let mut s = Stream::default();
        s.bits(1, 1).bits(1, 2);
        fixed_literal(&mut s, b'a' as u32);
        fixed_literal(&mut s, 257);
        s.code(dcode, 5).bits(0, 13);
        fixed_literal(&mut s, 256);
        // Code 29 is valid but reaches 24577 back: too far.
        check(&s.zlib(b"aaaa"), 100, None);
    }
    // Distance 1 after one byte is fine; 2 is before the start.
    for (dcode, ok) in [(0u32, true), (1, false)] {
        let mut s = Stream::default();
        s.bits(1, 1).bits(1, 2);
        fixed_literal(&mut s, b'a' as u32);
        fixed_literal(&mut s, 257);
        s.code(dcode, 5);
        fixed_literal(&mut s, 256);
        check(&s.zlib(b"aaaa"), 100, ok.then_some(&b"aaaa"[..]));
    }
    // A match of 258 (symbol 285) at distance 1, then fill exactly.
    let mut s = Stream::default();
    s.bits(1, 1).bits(1, 2);
    fixed_literal(&mut s, b'z' as u32);
    fixed_literal(&mut s, 285);
    s.code(0, 5);
    fixed_literal(&mut s, 256);
    let want = vec![b'z'; 259];
    check(&s.zlib(&want), 259, Some(&want));
    check(&s.zlib(&want), 258, None);
    // No final block: the data just ends.
    let mut s = Stream::default();
    s.bits(0, 1).bits(1, 2);
    fixed_literal(&mut s, b'a' as u32);
    fixed_literal(&mut s, 256);
    check(&s.zlib(b"a"), 10, None);
}

/// Code lengths for `n` symbols: the listed ones, 0 elsewhere.
fn lit_lens(pairs: &[(usize, u8)], n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    for &(s, l) in pairs {
        v[s] = l;
    }
    v
}

#[test]
fn dynamic_header_rules() {
    // A valid block: 'a' (1 bit), EOB and length 3 (2 bits each); one
    // distance code.
    let lit = lit_lens(&[(97, 1), (256, 2), (257, 2)], 258);
    let block = |dist_lens: &[u8], body: &[(bool, u32, u32, u32)]| {
        let mut s = Stream::default();
        dynamic_block(&mut s, &lit, dist_lens, body);
        s
    };
    let aaaa = [
        (false, 97, 0, 0),
        (false, 257, 0, 0),
        (true, 0, 0, 0),
        (false, 256, 0, 0),
    ];
    check(&block(&[1], &aaaa).zlib(b"aaaa"), 10, Some(b"aaaa"));
    // A single one-bit distance code: its unused codeword is an error.
    let mut s = block(&[1], &[(false, 97, 0, 0), (false, 257, 0, 0)]);
    s.bits(1, 1);
    fixed_literal(&mut s, 256);
    check(&s.zlib(b"aaaa"), 10, None);
    // No distance code at all: fine for literals only, an error on a match.
    check(
        &block(&[0], &[(false, 97, 0, 0), (false, 256, 0, 0)]).zlib(b"a"),
        10,
        Some(b"a"),
    );
    check(&block(&[0], &aaaa).zlib(b"aaaa"), 10, None);
    // Incomplete distance code of more than one codeword.
    check(&block(&[2, 2, 2], &aaaa).zlib(b"aaaa"), 10, None);
    // Over-subscribed distance code.
    check(&block(&[1, 1, 1], &aaaa).zlib(b"aaaa"), 10, None);
    // Distance symbols 30/31 (HDIST 31/32) are refused in the header.
    let mut d31 = vec![0u8; 31];
    d31[0] = 1;
    d31[30] = 1;
    check(&block(&d31, &aaaa).zlib(b"aaaa"), 10, None);

    let header_only = |nlit: u32, ndist: u32, cl: &[u8; 19], syms: &[(u32, u32, u32)]| {
        let mut s = Stream::default();
        dynamic_header(&mut s, true, nlit, ndist, cl, syms);
        // End of block, where the lengths would make it the one-bit code 0.
        s.bits(0, 1);
        s.zlib(b"")
    };
    // A block with only an end-of-block code of one bit: a valid empty block.
    let mut only_eob = vec![(0u32, 0u32, 0u32); 256];
    only_eob.extend([(1, 0, 0), (1, 0, 0)]);
    let mut s = Stream::default();
    dynamic_header(&mut s, true, 257, 1, &CL_LENS, &only_eob);
    s.code(0, 1);
    check(&s.zlib(b""), 0, Some(b""));
    // HLIT 287 and 288: refused even though the lengths (EOB and symbol 286
    // of one bit each) and the block (just EOB) would be valid.
    for nlit in [287usize, 288] {
        let mut syms = vec![(0u32, 0u32, 0u32); 256];
        syms.push((1, 0, 0));
        syms.extend(vec![(0, 0, 0); 29]);
        syms.push((1, 0, 0));
        syms.extend(vec![(0, 0, 0); nlit - 287]);
        syms.push((1, 0, 0));
        check(&header_only(nlit as u32, 1, &CL_LENS, &syms), 10, None);
        // The same at HLIT 286 without symbol 286 decodes.
        let mut ok = vec![(0u32, 0u32, 0u32); 256];
        ok.extend([(1, 0, 0), (0, 0, 0), (1, 0, 0)]);
        ok.extend(vec![(0, 0, 0); 27]);
        ok.push((1, 0, 0));
        assert_eq!(ok.len(), 286 + 1);
        check(&header_only(286, 1, &CL_LENS, &ok), 10, Some(b""));
    }
    // Missing end-of-block code.
    let mut syms = vec![(1u32, 0u32, 0u32); 2];
    syms.extend(vec![(0, 0, 0); 255]);
    syms.push((1, 0, 0));
    check(&header_only(257, 1, &CL_LENS, &syms), 10, None);
    // Over-subscribed (three 1-bit codes and EOB) and incomplete (two 2-bit
    // codes and EOB) literal/length codes.
    for (n, l) in [(3usize, 1u32), (2, 2)] {
        let mut syms = vec![(l, 0, 0); n];
        syms.extend(vec![(0, 0, 0); 256 - n]);
        syms.extend([(l, 0, 0), (1, 0, 0)]);
        check(&header_only(257, 1, &CL_LENS, &syms), 10, None);
    }
    // Repeat code 16 first; repeats past the declared count (16, 17, 18),
    // each after lengths that would otherwise make a valid empty block.
    check(&header_only(257, 1, &CL_LENS, &[(16, 0, 2)]), 10, None);
    let zeros_256 = [(18u32, 127u32, 7u32), (18, 107, 7)];
    for tail in [(16u32, 0u32, 2u32), (17, 0, 3), (18, 0, 7)] {
        let mut syms = zeros_256.to_vec();
        syms.push((1, 0, 0));
        syms.push(tail);
        check(&header_only(257, 1, &CL_LENS, &syms), 10, None);
        let mut fits = zeros_256.to_vec();
        fits.extend([(1, 0, 0), (1, 0, 0)]);
        check(&header_only(257, 1, &CL_LENS, &fits), 10, Some(b""));
    }
    // Code-length codes: over-subscribed, incomplete, a single codeword.
    let mut over = CL_LENS;
    over[18] = 4;
    check(&header_only(257, 1, &over, &[]), 10, None);
    let mut incomplete = CL_LENS;
    incomplete[18] = 6;
    check(&header_only(257, 1, &incomplete, &[]), 10, None);
    let mut single = [0u8; 19];
    single[0] = 1;
    check(&header_only(257, 1, &single, &[(0, 0, 0); 10]), 10, None);
    check(&header_only(257, 1, &[0; 19], &[]), 10, None);
}

/// Repeat codes that carry lengths across the literal/distance boundary, and
/// long literal and distance codes (subtables).
#[test]
fn repeats_and_long_codes_decode() {
    // Literal lengths: symbols 0..=15 get 4..15 bits in a complete code
    // (Kraft: 1/2 + 1/4 + ... ), EOB and 257 too.
    let mut lens = vec![0u8; 258];
    let chain = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 15];
    let syms = [
        b'a' as usize,
        257,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        256,
        200,
    ];
    for (&s, &l) in syms.iter().zip(&chain) {
        lens[s] = l;
    }
    // Distances: codes 0..=15 with the same chain, so the long ones sit in
    // subtables of the 8-bit main table; code 15 reaches 193..=256 back.
    let dist = chain.to_vec();
    let mut all = lens.clone();
    all.extend_from_slice(&dist);
    let mut s = Stream::default();
    dynamic_header(&mut s, true, 258, 16, &CL_LENS, &literal_lens(&all));
    let lc = canonical(&lens);
    let dc = canonical(&dist);
    let mut want = Vec::new();
    for b in [b'a', 200, 12, 1, 11] {
        s.code(lc[b as usize], u32::from(lens[b as usize]));
        want.push(b);
    }
    for _ in 0..300 {
        s.code(lc[b'a' as usize], 1);
    }
    want.resize(want.len() + 300, b'a');
    // Length 3 at distance 5 (code 4, one extra bit 0), then at distance
    // 256 (code 15, extra 63 in 6 bits).
    for (code, extra, nextra, d) in [(4usize, 0u32, 1u32, 5usize), (15, 63, 6, 256)] {
        s.code(lc[257], 2);
        s.code(dc[code], u32::from(dist[code]));
        s.bits(extra, nextra);
        for _ in 0..3 {
            want.push(want[want.len() - d]);
        }
    }
    s.code(lc[256], u32::from(lens[256]));
    check(&s.zlib(&want), want.len(), Some(&want));
    check(&s.zlib(&want), want.len() + 1000, Some(&want));

    // Code 16 repeating a length across the boundary into the distances:
    // literals 253..=255 and EOB of 2 bits, four distance codes of 2 bits.
    let mut s = Stream::default();
    let syms = [
        (18u32, 127u32, 7u32),
        (18, 104, 7),
        (2, 0, 0),
        (16, 1, 2),
        (16, 0, 2),
    ];
    dynamic_header(&mut s, true, 257, 4, &CL_LENS, &syms);
    // Canonical codes: 253 = 00, 254 = 01, 255 = 10, EOB = 11.
    s.code(0, 2).code(2, 2).code(3, 2);
    check(&s.zlib(&[253, 255]), 2, Some(&[253, 255]));
}

/// A length and distance in the fixed code, with their extra bits.
fn fixed_match(s: &mut Stream, len: u32, dist: u32) {
    const LEN_BASE: [u32; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const DIST_BASE: [u32; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    let lc = LEN_BASE.iter().rposition(|&b| b <= len).unwrap();
    fixed_literal(s, 257 + lc as u32);
    let lextra = if (8..28).contains(&lc) {
        (lc as u32 - 4) / 4
    } else {
        0
    };
    s.bits(len - LEN_BASE[lc], lextra);
    let dc = DIST_BASE.iter().rposition(|&b| b <= dist).unwrap();
    s.code(dc as u32, 5);
    let dextra = if dc < 4 { 0 } else { (dc as u32 - 2) / 2 };
    s.bits(dist - DIST_BASE[dc], dextra);
}

/// Every copy path (short and long, overlapping or not, periods below a
/// word, runs, chunk-rounding edges) in the fast loop and, at the end of the
/// output, in the careful one, against a byte-by-byte expansion.
#[test]
fn matches_of_every_shape_copy_like_lz77() {
    let lens = [
        3u32, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 258,
    ];
    let dists = [
        1u32, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 258, 259,
        287, 288, 289, 1000, 32768,
    ];
    let mut r = Rng(5);
    let mut s = Stream::default();
    s.bits(1, 1).bits(1, 2);
    let mut want = Vec::new();
    let literal = |s: &mut Stream, want: &mut Vec<u8>, b: u8| {
        fixed_literal(s, u32::from(b));
        want.push(b);
    };
    for _ in 0..33_000 {
        literal(&mut s, &mut want, r.next() as u8);
    }
    let mut pairs: Vec<(u32, u32)> = lens
        .iter()
        .flat_map(|&l| dists.iter().map(move |&d| (l, d)))
        .collect();
    // The same pairs again at the very end, where the careful loop copies.
    let tail: Vec<(u32, u32)> = pairs.iter().rev().take(40).copied().collect();
    pairs.extend(tail);
    for (i, &(len, dist)) in pairs.iter().enumerate() {
        fixed_match(&mut s, len, dist);
        for _ in 0..len {
            want.push(want[want.len() - dist as usize]);
        }
        if i % 3 == 0 {
            literal(&mut s, &mut want, r.next() as u8);
        }
    }
    fixed_literal(&mut s, 256);
    let stream = s.zlib(&want);
    for room in [
        want.len(),
        want.len() + 1,
        want.len() + 40,
        want.len() + 5000,
    ] {
        check(&stream, room, Some(&want));
    }
    check(&stream, want.len() - 1, None);
}
