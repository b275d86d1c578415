//! Instrumented chunks (`blosc2_cparams.instr_codec`, header flag
//! `BLOSC2_INSTR_CODEC`): every stream holds a measurement of how its bytes
//! compressed instead of the bytes themselves.
//!
//! This is what btune-style tools train on. The layout is the reference's:
//! each stream is `csize = 16` followed by one `blosc2_instr` record, the
//! header's `nbytes` becomes `16 * nstreams` and its `blocksize` 16 per
//! stream of a block, so any decoder that copies stored streams (`csize ==
//! neblock`) and skips the filters hands back the records in stream order.
//!
//! Decisions where the reference's output is not a usable chunk (and a user
//! could not rely on it): a chunk that is stored uncompressed (clevel 0,
//! inputs under 32 bytes) carries its data and no records, since no codec
//! ran; records that do not fit the destination give "does not fit" (0)
//! rather than a plain copy with the flag set; VL-block chunks are refused.
//! The dictionary training pass stores data (the samples), not records.

use std::time::Duration;

/// `sizeof(blosc2_instr)`: three floats and four flag bytes.
pub(crate) const RECORD_SIZE: usize = 16;

/// One stream's measurement, laid out as the reference's `blosc2_instr`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Record {
    /// Stream bytes over stored bytes (the 4-byte `csize` included).
    pub cratio: f32,
    /// Stream bytes per second spent encoding it.
    pub cspeed: f32,
    /// Stream bytes per second the block's filters took.
    pub filter_speed: f32,
    /// `flags[0] == 1`: the stream was stored as a run.
    pub flags: [u8; 4],
}

impl Record {
    /// A stream of `neblock` bytes stored as `stored` bytes after its csize.
    pub(crate) fn coded(neblock: usize, stored: usize, ctime: Duration, ftime: Duration) -> Self {
        Record {
            cratio: neblock as f32 / (stored + 4) as f32,
            cspeed: speed(neblock, ctime),
            filter_speed: speed(neblock, ftime),
            flags: [0; 4],
        }
    }

    /// A stream stored as a run of `value` (its csize, plus a token byte for
    /// a non-zero value).
    pub(crate) fn run(neblock: usize, value: u8, ctime: Duration, ftime: Duration) -> Self {
        let stored = if value == 0 { 4 } else { 5 };
        Record {
            cratio: neblock as f32 / stored as f32,
            cspeed: speed(neblock, ctime),
            filter_speed: speed(neblock, ftime),
            flags: [1, 0, 0, 0],
        }
    }

    /// The stream as stored: its csize, then the record.
    pub(crate) fn to_stream(self) -> [u8; 4 + RECORD_SIZE] {
        let mut s = [0u8; 4 + RECORD_SIZE];
        s[..4].copy_from_slice(&(RECORD_SIZE as i32).to_le_bytes());
        s[4..8].copy_from_slice(&self.cratio.to_le_bytes());
        s[8..12].copy_from_slice(&self.cspeed.to_le_bytes());
        s[12..16].copy_from_slice(&self.filter_speed.to_le_bytes());
        s[16..].copy_from_slice(&self.flags);
        s
    }

    /// Reads a record back (e.g. from a decompressed instrumented chunk).
    #[cfg(test)]
    pub(crate) fn from_bytes(b: [u8; RECORD_SIZE]) -> Self {
        let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Record {
            cratio: f(0),
            cspeed: f(4),
            filter_speed: f(8),
            flags: [b[12], b[13], b[14], b[15]],
        }
    }
}

/// Bytes per second; a duration too short for the clock is infinitely fast,
/// as the reference's float division makes it.
fn speed(bytes: usize, t: Duration) -> f32 {
    bytes as f32 / t.as_secs_f32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_their_stream_bytes() {
        let r = Record::coded(4096, 1000, Duration::from_micros(10), Duration::ZERO);
        assert_eq!(r.cratio, 4096.0 / 1004.0);
        assert_eq!(r.filter_speed, f32::INFINITY);
        let s = r.to_stream();
        assert_eq!(&s[..4], &16i32.to_le_bytes());
        assert_eq!(Record::from_bytes(s[4..].try_into().unwrap()), r);
        let run = Record::run(4096, 7, Duration::from_micros(1), Duration::from_micros(1));
        assert_eq!((run.cratio, run.flags), (4096.0 / 5.0, [1, 0, 0, 0]));
        assert_eq!(
            Record::run(4096, 0, Duration::ZERO, Duration::ZERO).cratio,
            1024.0
        );
    }

    use crate::chunk::{CParams, ChunkHeader, Compressor, DParams, Decompressor, Fmt};
    use crate::codecs::Codec;

    fn compress(cp: CParams, data: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; data.len() + 64 * 1024];
        let n = Compressor::new(cp)
            .unwrap()
            .compress(data, &mut out)
            .unwrap();
        assert!(n > 0);
        out.truncate(n);
        out
    }

    /// The streams of a regular chunk as (neblock, stored bytes or run value).
    fn streams(chunk: &[u8]) -> Vec<(usize, Result<usize, u8>)> {
        let h = ChunkHeader::parse(chunk).unwrap();
        let (nbytes, bs, ts) = (h.nbytes(), h.blocksize(), h.typesize());
        let nblocks = nbytes.div_ceil(bs);
        let mut out = Vec::new();
        for j in 0..nblocks {
            let start = Fmt::EXT_HEADER + 4 * j;
            let mut at = i32::from_le_bytes(chunk[start..start + 4].try_into().unwrap()) as usize;
            let bsize = if j + 1 == nblocks && nbytes % bs != 0 {
                nbytes % bs
            } else {
                bs
            };
            let nstreams = if h.dont_split() || bsize != bs { 1 } else { ts };
            for _ in 0..nstreams {
                let csize = i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
                at += 4;
                if csize <= 0 {
                    let value = (-csize) as u8;
                    out.push((bsize / nstreams, Err(value)));
                    at += usize::from(value > 0);
                } else {
                    out.push((bsize / nstreams, Ok(csize as usize)));
                    at += csize as usize;
                }
            }
        }
        out
    }

    /// Each record gives the ratio and run flag of the stream the plain chunk
    /// stores, for every thread count; decoding hands the records back.
    #[test]
    fn records_describe_the_plain_chunks_streams() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut data: Vec<u8> = Vec::new();
        for i in 0..100_003u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Runs, smooth values and noise, so every kind of stream shows up.
            let v = match (i / 8192) % 3 {
                0 if i < 8192 => 0,
                0 => 7,
                1 => i / 64,
                _ => x as u32,
            };
            data.extend_from_slice(&v.to_le_bytes());
        }
        data.truncate(data.len() - 3); // a leftover block
                                       // Zero runs, other runs, compressed and stored streams.
        let mut seen = [false; 4];
        for (compcode, filters, use_dict) in [
            (Codec::BLOSCLZ, [0, 0, 0, 0, 0, Fmt::SHUFFLE], false),
            (Codec::LZ4, [0, 0, 0, 0, 0, Fmt::BITSHUFFLE], false),
            (Codec::ZSTD, [0, 0, 0, 0, Fmt::DELTA, Fmt::SHUFFLE], true),
            (Codec::ZLIB, [0; 6], false),
        ] {
            let cp = |instr_codec: bool, nthreads: i16| CParams {
                compcode,
                clevel: 5,
                typesize: 4,
                blocksize: 16 * 1024,
                nthreads,
                filters,
                use_dict,
                instr_codec,
                ..CParams::default()
            };
            let plain = streams(&compress(cp(false, 1), &data));
            for (neblock, kind) in &plain {
                seen[match kind {
                    Err(0) => 0,
                    Err(_) => 1,
                    Ok(n) if n < neblock => 2,
                    Ok(_) => 3,
                }] = true;
            }
            for nthreads in [1, 2] {
                let chunk = compress(cp(true, nthreads), &data);
                let h = ChunkHeader::parse(&chunk).unwrap();
                assert!(h.is_instrumented());
                assert_eq!(h.nbytes(), plain.len() * RECORD_SIZE);
                assert_eq!(h.blocksize(), if h.dont_split() { 16 } else { 64 });
                let mut records = vec![0u8; h.nbytes()];
                let mut d = Decompressor::new(DParams {
                    nthreads,
                    ..DParams::default()
                });
                assert_eq!(d.decompress(&chunk, &mut records).unwrap(), h.nbytes());
                let stored = streams(&chunk);
                assert_eq!(stored.len(), plain.len());
                for (k, rec) in records.chunks_exact(RECORD_SIZE).enumerate() {
                    assert_eq!(stored[k], (RECORD_SIZE, Ok(RECORD_SIZE)));
                    let r = Record::from_bytes(rec.try_into().unwrap());
                    let (neblock, kind) = plain[k];
                    let (cratio, flag) = match kind {
                        Ok(n) => (neblock as f32 / (n + 4) as f32, 0),
                        Err(0) => (neblock as f32 / 4.0, 1),
                        Err(_) => (neblock as f32 / 5.0, 1),
                    };
                    assert_eq!((r.cratio, r.flags), (cratio, [flag, 0, 0, 0]), "stream {k}");
                    assert!(r.cspeed > 0.0 && r.filter_speed > 0.0);
                }
            }
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn what_is_not_instrumented() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let cp = CParams {
            typesize: 4,
            instr_codec: true,
            ..CParams::default()
        };
        // clevel 0 runs no codec: the data are stored as they are.
        let stored = compress(
            CParams {
                clevel: 0,
                ..cp.clone()
            },
            &data,
        );
        let h = ChunkHeader::parse(&stored).unwrap();
        assert!(!h.is_instrumented());
        let mut back = vec![0u8; data.len()];
        let mut d = Decompressor::new(DParams::default());
        assert_eq!(d.decompress(&stored, &mut back).unwrap(), data.len());
        assert_eq!(back, data);
        // Records that do not fit give "does not fit", not a plain copy.
        let mut small = vec![0u8; 40];
        let mut c = Compressor::new(cp.clone()).unwrap();
        assert_eq!(c.compress(&data, &mut small).unwrap(), 0);
        // VL-block chunks have no instrumented layout.
        let e = c.compress_vl(&[&data[..100], &data[100..200]], &mut vec![0u8; 1024]);
        assert_eq!(e.unwrap_err().code(), -12);
    }
}
