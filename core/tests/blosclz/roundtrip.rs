//! BloscLZ encoder tests: round trips at every level, the "does not
//! compress" and "does not fit" conventions, and exact output sizes.

use b2nd_core::codecs::blosclz::{compress, decompress, EncodeHint};

use crate::common;
use common::{shuffle, XorShift};

fn ramp_i32(len: usize) -> Vec<u8> {
    (0..len / 4 + 1)
        .flat_map(|i| (i as u32).to_le_bytes())
        .take(len)
        .collect()
}

fn smooth_f64(len: usize) -> Vec<u8> {
    (0..len / 8 + 1)
        .flat_map(|i| (i as f64 * 1e-3).sin().to_le_bytes())
        .take(len)
        .collect()
}

fn random(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = XorShift(seed);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// Compresses with ample room; returns the stream (empty if not compressed).
fn pack(clevel: u8, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; data.len() + data.len() / 16 + 66];
    let n = compress(clevel, data, &mut out, &EncodeHint::default());
    out.truncate(n);
    out
}

/// Round-trips `data` at `clevel`; returns the compressed size (0 = stored).
fn round_trip(clevel: u8, data: &[u8]) -> usize {
    let stream = pack(clevel, data);
    if !stream.is_empty() {
        let mut out = vec![0u8; data.len()];
        assert_eq!(
            decompress(&stream, &mut out),
            Ok(data.len()),
            "clevel {clevel}"
        );
        assert!(out == data, "clevel {clevel}: contents differ");
    }
    stream.len()
}

#[test]
fn smooth_data_compresses_at_every_level() {
    let size = 256 * 1024;
    let data = shuffle(&ramp_i32(size), 4);
    for clevel in 1..=9 {
        let n = round_trip(clevel, &data);
        assert!(n > 0 && n < data.len() / 50, "clevel {clevel}: {n} bytes");
    }
    // Other smooth data: whether it is worth compressing depends on the level
    // (the entropy probe), but it always round-trips.
    for data in [
        ramp_i32(size),
        smooth_f64(size),
        shuffle(&smooth_f64(size), 8),
    ] {
        for clevel in 1..=9 {
            round_trip(clevel, &data);
        }
    }
}

#[test]
fn constant_data_compresses_to_almost_nothing() {
    for len in [16usize, 100, 4096, 65_536, 1 << 20] {
        for byte in [0u8, 0xA5] {
            let data = vec![byte; len];
            for clevel in 1..=9 {
                let n = round_trip(clevel, &data);
                if len >= 4096 {
                    // One long match (a length byte per 255) plus a few literals.
                    assert!(
                        n > 0 && n < 16 + len / 250,
                        "len {len} clevel {clevel}: {n}"
                    );
                }
            }
        }
    }
}

#[test]
fn random_data_is_not_compressed() {
    for len in [1000usize, 65_536, 300_000] {
        let data = random(len, len as u64);
        for clevel in 1..=9 {
            assert_eq!(round_trip(clevel, &data), 0, "len {len} clevel {clevel}");
        }
    }
}

#[test]
fn short_inputs_round_trip_or_are_refused() {
    let mut rng = XorShift(3);
    for len in 0..=64usize {
        let patterns = [
            vec![9u8; len],
            (0..len).map(|i| (i % 3) as u8).collect::<Vec<_>>(),
            (0..len).map(|_| rng.next() as u8).collect::<Vec<_>>(),
        ];
        for data in &patterns {
            for clevel in 1..=9 {
                let n = round_trip(clevel, data);
                if len < 16 {
                    assert_eq!(n, 0, "len {len} must not be compressed");
                }
            }
        }
    }
}

#[test]
fn mixed_content_round_trips_at_every_level() {
    // Literals, near and far matches, runs and long matches in one buffer.
    let mut rng = XorShift(11);
    let block = random(20_000, 5);
    let mut data = Vec::new();
    while data.len() < 400_000 {
        match rng.next() % 4 {
            0 => {
                let at = (rng.next() % 19_000) as usize;
                data.extend_from_slice(&block[at..at + 1 + (rng.next() % 600) as usize]);
            }
            1 => data.extend(std::iter::repeat_n(
                rng.next() as u8,
                (rng.next() % 400) as usize,
            )),
            2 => data.extend((0..(rng.next() % 50)).map(|_| rng.next() as u8)),
            _ => {
                let back = 1 + (rng.next() as usize % data.len().clamp(1, 70_000));
                let len = (rng.next() % 300) as usize;
                for _ in 0..len {
                    let b = data
                        .get(data.len().wrapping_sub(back))
                        .copied()
                        .unwrap_or(1);
                    data.push(b);
                }
            }
        }
    }
    for clevel in 1..=9 {
        round_trip(clevel, &data);
    }
    // Lower levels probe less of the buffer but must still compress this.
    assert!(round_trip(9, &data) > 0);
}

#[test]
fn output_exactly_large_enough_and_one_byte_smaller() {
    // The encoder, like the reference, keeps one byte of `dst` unused and
    // never works with fewer than 66 bytes of output.
    let inputs = [
        shuffle(&ramp_i32(100_000), 4),
        vec![1u8; 5_000],
        (0..50_000)
            .map(|i| ((i / 5) % 251) as u8)
            .collect::<Vec<_>>(),
    ];
    for data in &inputs {
        for clevel in 1..=9 {
            let stream = pack(clevel, data);
            assert!(!stream.is_empty(), "clevel {clevel}");
            let needed = (stream.len() + 1).max(66);
            let mut out = vec![0u8; needed];
            let n = compress(clevel, data, &mut out, &EncodeHint::default());
            assert_eq!(
                n,
                stream.len(),
                "clevel {clevel}: size with an exact buffer"
            );
            assert!(
                out[..n] == stream[..],
                "clevel {clevel}: bytes with an exact buffer"
            );
            for smaller in [needed - 1, needed / 2, 1, 0] {
                let mut out = vec![0u8; smaller];
                assert_eq!(
                    compress(clevel, data, &mut out, &EncodeHint::default()),
                    0,
                    "clevel {clevel}, {smaller}-byte dst"
                );
            }
        }
    }
}

#[test]
fn level_zero_never_compresses_and_high_levels_act_as_nine() {
    let data = vec![7u8; 10_000];
    let mut out = vec![0u8; 20_000];
    assert_eq!(compress(0, &data, &mut out, &EncodeHint::default()), 0);
    assert_eq!(pack(10, &data), pack(9, &data));
    assert_eq!(pack(255, &data), pack(9, &data));
}

#[test]
fn known_stream_bytes() {
    // 64 bytes "abcd" repeated: literals "abcd", then one long match at
    // distance 4 covering up to the match bound, then closing literals.
    let data: Vec<u8> = b"abcd".iter().copied().cycle().take(64).collect();
    let stream = pack(5, &data);
    // Match: length field 63 - 4 - 4 = 55 -> long (7 + 48), biased distance 3;
    // it copies 57 bytes (4..61), leaving 3 literals.
    assert_eq!(
        stream,
        [0x23, b'a', b'b', b'c', b'd', 0xE0, 48, 3, 0x02, b'b', b'c', b'd']
    );
}

#[test]
fn compresses_from_a_thread_exit_handler() {
    // A C program may compress from a thread's exit handlers, after this
    // thread's own hash table is gone (thread-local values are destroyed in
    // the reverse order of their first use, so the table, used after the
    // handler below was set, goes first): the encoder then takes a table of
    // its own rather than panicking.
    use std::cell::RefCell;
    use std::sync::mpsc;
    struct AtExit(mpsc::Sender<(Vec<u8>, Vec<u8>)>);
    impl Drop for AtExit {
        fn drop(&mut self) {
            let data = shuffle(&ramp_i32(20_000), 4);
            let _ = self.0.send((pack(5, &data), data));
        }
    }
    thread_local! {
        static AT_EXIT: RefCell<Option<AtExit>> = const { RefCell::new(None) };
    }
    let (tx, rx) = mpsc::channel();
    let expected = pack(5, &shuffle(&ramp_i32(20_000), 4));
    std::thread::spawn(move || {
        AT_EXIT.with(|a| *a.borrow_mut() = Some(AtExit(tx)));
        assert!(!pack(5, &shuffle(&ramp_i32(20_000), 4)).is_empty());
    })
    .join()
    .unwrap();
    let (stream, data) = rx.recv().unwrap();
    assert!(!stream.is_empty());
    assert_eq!(stream, expected);
    let mut out = vec![0u8; data.len()];
    assert_eq!(decompress(&stream, &mut out), Ok(data.len()));
    assert_eq!(out, data);
}
