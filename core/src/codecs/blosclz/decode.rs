//! BloscLZ decoder: turns a token stream back into bytes, validating every
//! length and distance against the input and output it actually has.

use super::format::{
    FAR_ESCAPE_HIGH, FAR_ESCAPE_LOW, LONG_MATCH_FIELD, MATCH_LENGTH_BIAS, MAX_LITERAL_RUN,
    NEAR_LIMIT,
};
use crate::Result;

/// Decompresses a whole BloscLZ stream into `dst` and returns the number of
/// bytes written.
///
/// `dst` bounds the output: a stream that would write past it is an error, as
/// is a match reaching before the start of the output, a token cut short by
/// the end of `src`, or a match that ends the stream (the encoder always ends
/// with literals). An empty `src` decodes to nothing. Bytes of `dst` past the
/// returned length may be overwritten with scratch data.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    decode::<false>(src, dst, 0)
}

/// Decodes the start of a BloscLZ stream into `dst`, at least its first
/// `need` bytes (fewer only when the stream ends before), and returns how many
/// were written; the tokens after the one that reaches `need` are not read.
/// A partial read of a block needs a prefix of each of its streams, and the
/// rest of a stream's decoding would be thrown away. Errors as for
/// [`decompress`], for the tokens it reads.
pub fn decompress_prefix(src: &[u8], dst: &mut [u8], need: usize) -> Result<usize> {
    decode::<true>(src, dst, need)
}

/// The decoder; with `PREFIX` it stops after the token that reaches `stop`
/// bytes of output (a check per token that the whole-stream decoder does not
/// compile).
#[inline(always)]
fn decode<const PREFIX: bool>(src: &[u8], dst: &mut [u8], stop: usize) -> Result<usize> {
    let Some(&first) = src.first() else {
        return Ok(0);
    };
    // The first token is always a literal run; its top bits are a marker.
    let mut ctrl = first & 31;
    let mut ip = 1usize;
    let mut op = 0usize;

    loop {
        if ctrl >> 5 == 0 {
            let count = usize::from(ctrl) + 1;
            copy_literals(src, ip, dst, op, count)?;
            ip += count;
            op += count;
            if PREFIX && op >= stop {
                return Ok(op);
            }
            match src.get(ip) {
                Some(&next) => ctrl = next,
                None => return Ok(op),
            }
            ip += 1;
            continue;
        }

        let room = dst.len() - op;
        let field = ctrl >> 5;
        let mut len = usize::from(field) + MATCH_LENGTH_BIAS;
        if field == LONG_MATCH_FIELD {
            loop {
                let Some(&ext) = src.get(ip) else {
                    crate::bail!(Stream, "blosclz: long match length cut short at byte {ip}");
                };
                ip += 1;
                len += usize::from(ext);
                // Bail as soon as the length cannot fit: this also keeps the
                // sum far from any integer overflow.
                if len > room {
                    crate::bail!(
                        Stream,
                        "blosclz: match of {len}+ bytes at output {op} overflows the {}-byte output",
                        dst.len()
                    );
                }
                if ext != 255 {
                    break;
                }
            }
        }
        let Some(&low) = src.get(ip) else {
            crate::bail!(Stream, "blosclz: match distance cut short at byte {ip}");
        };
        ip += 1;
        let high = ctrl & 31;
        let dist = if high == FAR_ESCAPE_HIGH && low == FAR_ESCAPE_LOW {
            let Some(far) = src.get(ip..ip + 2) else {
                crate::bail!(Stream, "blosclz: far match distance cut short at byte {ip}");
            };
            ip += 2;
            usize::from(u16::from_be_bytes([far[0], far[1]])) + NEAR_LIMIT + 1
        } else {
            usize::from(high) * 256 + usize::from(low) + 1
        };
        if len > room {
            crate::bail!(
                Stream,
                "blosclz: match of {len} bytes at output {op} overflows the {}-byte output",
                dst.len()
            );
        }
        if dist > op {
            crate::bail!(
                Stream,
                "blosclz: match distance {dist} reaches before the start (output at {op})"
            );
        }
        if PREFIX && op + len >= stop {
            copy_match(dst, op, dist, len);
            return Ok(op + len);
        }
        let Some(&next) = src.get(ip) else {
            crate::bail!(
                Stream,
                "blosclz: stream ends with a match instead of literals"
            );
        };
        ip += 1;
        copy_match(dst, op, dist, len);
        op += len;
        ctrl = next;
    }
}

/// Copies a literal run of `count` (1..=32) bytes from `src[ip..]` to
/// `dst[op..]`, checking both ends.
#[inline(always)]
fn copy_literals(src: &[u8], ip: usize, dst: &mut [u8], op: usize, count: usize) -> Result<()> {
    // Fast path: with 32 bytes of slack on both sides, copy a fixed-size block
    // (a couple of vector moves) and let the next token overwrite the excess.
    if let (Some(from), Some(to)) = (
        src.get(ip..ip + MAX_LITERAL_RUN),
        dst.get_mut(op..op + MAX_LITERAL_RUN),
    ) {
        to.copy_from_slice(from);
        return Ok(());
    }
    let Some(from) = src.get(ip..ip + count) else {
        crate::bail!(
            Stream,
            "blosclz: literal run of {count} bytes at byte {ip} passes the end of the {}-byte input",
            src.len()
        );
    };
    let Some(to) = dst.get_mut(op..op + count) else {
        crate::bail!(
            Stream,
            "blosclz: literal run of {count} bytes at output {op} overflows the {}-byte output",
            dst.len()
        );
    };
    to.copy_from_slice(from);
    Ok(())
}

/// Appends `len` bytes at `dst[op..]` copied from `dist` bytes back.
/// The caller has checked `1 <= dist <= op` and `op + len <= dst.len()`.
#[inline(always)]
fn copy_match(dst: &mut [u8], op: usize, dist: usize, len: usize) {
    /// Matches up to this long are copied in fixed-size blocks when the
    /// output has room for the overshoot: no call into memmove.
    const SHORT: usize = 32;
    let from = op - dist;
    let slack = dst.len() - op >= SHORT + 8;
    if dist == 1 {
        let byte = dst[from];
        dst[op..op + len].fill(byte);
    } else if len <= SHORT && slack && dist >= len {
        // Source and destination do not overlap within the first `len`
        // bytes, so one block read before writing gives them all; the excess
        // lands in the slack and the next token overwrites it.
        let block: [u8; SHORT] = dst[from..from + SHORT].try_into().unwrap();
        dst[op..op + SHORT].copy_from_slice(&block);
    } else if len <= SHORT && slack && dist >= 8 {
        // Eight bytes at a time: each block reads bytes at least eight
        // positions back, so they are final before they are read.
        let mut k = 0;
        while k < len {
            let block: [u8; 8] = dst[from + k..from + k + 8].try_into().unwrap();
            dst[op + k..op + k + 8].copy_from_slice(&block);
            k += 8;
        }
    } else if dist >= len {
        dst.copy_within(from..from + len, op);
    } else {
        // Overlapping: grow the copied region by doubling. The region starts
        // one period before `op`, and every copy moves a whole number of
        // periods, so each one is a plain non-overlapping copy.
        let region = &mut dst[from..op + len];
        let mut filled = dist;
        while filled < region.len() {
            let n = filled.min(region.len() - filled);
            region.copy_within(0..n, filled);
            filled += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_only_stream() {
        let stream = [0x22, b'a', b'b', b'c'];
        let mut out = [0u8; 3];
        assert_eq!(decompress(&stream, &mut out), Ok(3));
        assert_eq!(&out, b"abc");
    }

    #[test]
    fn short_near_match_and_run() {
        // "ab", then a 3-byte match at distance 2 ("aba"), then a 4-byte run
        // of 'a' (distance 1), then the closing literal "z".
        let stream = [0x21, b'a', b'b', 0x20, 0x01, 0x40, 0x00, 0x00, b'z'];
        let mut out = [0u8; 10];
        assert_eq!(decompress(&stream, &mut out), Ok(10));
        assert_eq!(&out, b"ababaaaaaz");
    }

    #[test]
    fn long_match_with_extension_bytes() {
        // 'x', then a long match of 9 + 255 + 1 bytes at distance 1, then 'y'.
        let stream = [0x00, b'x', 0xE0, 255, 1, 0x00, 0x00, b'y'];
        let mut out = vec![0u8; 1 + 265 + 1];
        assert_eq!(decompress(&stream, &mut out), Ok(267));
        assert!(out[..266].iter().all(|&b| b == b'x'));
        assert_eq!(out[266], b'y');
    }

    #[test]
    fn far_match_distance() {
        // 8192 literal bytes, then a far match of 4 bytes at distance 8192.
        let data: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut stream = Vec::new();
        for chunk in data.chunks(32) {
            stream.push(chunk.len() as u8 - 1);
            stream.extend_from_slice(chunk);
        }
        stream[0] |= 0x20;
        stream.extend_from_slice(&[(2 << 5) | 31, 255, 0, 0, 0, b'!']);
        let mut out = vec![0u8; 8192 + 4 + 1];
        assert_eq!(decompress(&stream, &mut out), Ok(out.len()));
        assert_eq!(&out[8192..8196], &data[..4]);
        assert_eq!(out[8196], b'!');
    }

    #[test]
    fn distance_past_start_is_an_error() {
        let stream = [0x01, b'a', b'b', 0x20, 0x02, 0x00, b'z'];
        let mut out = [0u8; 64];
        assert!(
            matches!(decompress(&stream, &mut out), Err(e) if e.kind() == crate::ErrorKind::Stream)
        );
    }

    #[test]
    fn match_ending_the_stream_is_an_error() {
        let stream = [0x01, b'a', b'b', 0x20, 0x01];
        let mut out = [0u8; 64];
        assert!(
            matches!(decompress(&stream, &mut out), Err(e) if e.kind() == crate::ErrorKind::Stream)
        );
    }

    #[test]
    fn overlapping_copies_of_every_short_period() {
        for dist in 1..20usize {
            for len in 3..80usize {
                // With and without slack after the match (selects the copy path).
                for slack in [0usize, 3, 16, 40, 64] {
                    let mut dst = vec![0u8; dist + len + slack];
                    for (i, b) in dst[..dist].iter_mut().enumerate() {
                        *b = i as u8 + 1;
                    }
                    copy_match(&mut dst, dist, dist, len);
                    for (i, &b) in dst[..dist + len].iter().enumerate() {
                        assert_eq!(b, (i % dist) as u8 + 1, "dist {dist} len {len} at {i}");
                    }
                }
            }
        }
    }
}
