//! Malformed BloscLZ streams must give an error (or a shorter, correct
//! output), never a panic, an out-of-bounds access or a hang.

use b2nd_core::codecs::blosclz::{compress, decompress, EncodeHint};

use crate::common;
use common::XorShift;

fn sample_data(len: usize) -> Vec<u8> {
    // Text-like data: compresses with literals, near matches and runs.
    let words: [&[u8]; 5] = [
        b"alpha ",
        b"beta ",
        b"gamma ",
        b"delta epsilon ",
        b"zzzzzzzzzzzz",
    ];
    let mut rng = XorShift(42);
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        out.extend_from_slice(words[rng.below(words.len())]);
    }
    out.truncate(len);
    out
}

fn packed(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; data.len() + 100];
    let n = compress(9, data, &mut out, &EncodeHint::default());
    assert!(n > 0, "sample data must compress");
    out.truncate(n);
    out
}

fn is_stream_error(r: &b2nd_core::Result<usize>) -> bool {
    matches!(r, Err(e) if e.kind() == b2nd_core::ErrorKind::Stream)
}

#[test]
fn empty_input_decodes_to_nothing() {
    let mut out = [0u8; 16];
    assert_eq!(decompress(&[], &mut out), Ok(0));
    assert_eq!(decompress(&[], &mut []), Ok(0));
}

#[test]
fn every_truncation_fails_or_gives_a_correct_prefix() {
    let data = sample_data(20_000);
    let stream = packed(&data);
    let mut out = vec![0u8; data.len()];
    let mut errors = 0;
    for cut in 1..stream.len() {
        match decompress(&stream[..cut], &mut out) {
            Ok(n) => {
                assert!(n < data.len(), "cut at {cut} decoded everything");
                assert!(out[..n] == data[..n], "cut at {cut}: wrong prefix");
            }
            Err(e) => {
                assert!(e.kind() == b2nd_core::ErrorKind::Stream, "cut at {cut}: {e}");
                errors += 1;
            }
        }
    }
    // Most cuts land inside a token.
    assert!(
        errors > stream.len() / 2,
        "{errors} errors for {} cuts",
        stream.len()
    );
}

#[test]
fn match_reaching_before_the_start() {
    let mut out = [0u8; 64];
    // Two literals, then a 3-byte match at distance 3.
    assert!(is_stream_error(&decompress(
        &[0x01, b'a', b'b', 0x20, 0x02, 0x00, b'z'],
        &mut out
    )));
    // The same at distance 2 is fine.
    assert_eq!(
        decompress(&[0x01, b'a', b'b', 0x20, 0x01, 0x00, b'z'], &mut out),
        Ok(6)
    );
    assert_eq!(&out[..6], b"ababaz");
    // A far match (escape 31/255) at distance 8192 after only one byte.
    assert!(is_stream_error(&decompress(
        &[0x00, b'a', 0x3F, 0xFF, 0x00, 0x00, 0x00, b'z'],
        &mut out
    )));
    // A match as the very first token is impossible: the first control byte
    // is always read as a literal run, whatever its top bits say.
    assert_eq!(decompress(&[0xE0, b'q'], &mut out), Ok(1));
    assert_eq!(out[0], b'q');
}

#[test]
fn literal_run_past_the_end_of_input() {
    let mut out = [0u8; 64];
    assert!(is_stream_error(&decompress(&[0x05, b'a', b'b'], &mut out)));
    // A second literal token cut short.
    assert!(is_stream_error(&decompress(
        &[0x00, b'a', 0x1F, 1, 2, 3],
        &mut out
    )));
}

#[test]
fn truncated_match_tokens() {
    let mut out = [0u8; 64];
    // Match control byte with no distance byte.
    assert!(is_stream_error(&decompress(
        &[0x01, b'a', b'b', 0x20],
        &mut out
    )));
    // Match with distance but no token after it: streams end with literals.
    assert!(is_stream_error(&decompress(
        &[0x01, b'a', b'b', 0x20, 0x01],
        &mut out
    )));
    // Long match whose extension bytes run out.
    assert!(is_stream_error(&decompress(
        &[0x01, b'a', b'b', 0xE0, 255, 255],
        &mut out
    )));
    // Far escape without its two distance bytes.
    assert!(is_stream_error(&decompress(
        &[0x01, b'a', b'b', 0x3F, 0xFF, 0x00],
        &mut out
    )));
}

#[test]
fn output_one_byte_too_small() {
    // Ends with a literal run.
    let data = sample_data(5_000);
    let stream = packed(&data);
    let mut out = vec![0u8; data.len()];
    assert_eq!(decompress(&stream, &mut out), Ok(data.len()));
    assert!(out == data);
    assert!(is_stream_error(&decompress(
        &stream,
        &mut out[..data.len() - 1]
    )));

    // Overflow inside a match (a run), and inside a literal run.
    let run = [0x00, b'x', 0x60, 0x00, 0x00, b'y']; // x, 5 more x, y
    let mut out = [0u8; 7];
    assert_eq!(decompress(&run, &mut out), Ok(7));
    assert_eq!(&out, b"xxxxxxy");
    assert!(is_stream_error(&decompress(&run, &mut out[..6])));
    assert!(is_stream_error(&decompress(&run, &mut out[..5])));
}

#[test]
fn long_match_length_chain_past_32_bits() {
    // 'x', then a long match whose extension bytes add up to more than 2^32.
    let chain = (u32::MAX as usize) / 255 + 2;
    let mut stream = Vec::with_capacity(chain + 8);
    stream.extend_from_slice(&[0x00, b'x', 0xE0]);
    stream.resize(3 + chain, 255);
    stream.extend_from_slice(&[0x00, 0x00, 0x00, b'y']);
    let mut out = vec![0u8; 1 << 20];
    assert!(is_stream_error(&decompress(&stream, &mut out)));
    // Whatever the output size, the length is checked before any copy.
    assert!(is_stream_error(&decompress(&stream, &mut out[..1])));
}

#[test]
fn random_garbage_never_panics() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut out = vec![0u8; 70_000];
    let mut oks = 0;
    for _ in 0..5_000 {
        let len = rng.below(2_000);
        let stream: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let cap = rng.below(out.len());
        match decompress(&stream, &mut out[..cap]) {
            Ok(n) => {
                assert!(n <= cap);
                oks += 1;
            }
            Err(e) => assert!(e.kind() == b2nd_core::ErrorKind::Stream, "{e}"),
        }
    }
    // Some garbage is a valid stream (e.g. short literal-only ones).
    assert!(oks > 0);
}

#[test]
fn mutated_valid_streams_never_panic() {
    let data = sample_data(30_000);
    let stream = packed(&data);
    let mut rng = XorShift(7);
    let mut out = vec![0u8; data.len()];
    let mut errors = 0;
    for _ in 0..5_000 {
        let mut s = stream.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(s.len());
            s[at] = rng.next() as u8;
        }
        if rng.below(3) == 0 {
            s.truncate(rng.below(s.len()));
        }
        match decompress(&s, &mut out) {
            Ok(n) => assert!(n <= out.len()),
            Err(e) => {
                assert!(e.kind() == b2nd_core::ErrorKind::Stream, "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0);
}
