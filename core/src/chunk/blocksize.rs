//! The automatic block size (the reference's `stune` tuner) and the rule
//! deciding whether a block is split into one stream per byte of the type.

use super::Fmt;
use crate::codecs::Codec;

const L1: i32 = 32 * 1024;
/// Types wider than this are never split.
const MAX_STREAMS: i32 = 16;

/// Codecs meant for high compression ratios get bigger blocks.
fn is_hcr(compcode: u8) -> bool {
    matches!(compcode, Codec::LZ4HC | Codec::ZLIB | Codec::ZSTD)
}

/// Whether blocks of `blocksize` bytes are stored as `typesize` streams.
/// `filters` is the pipeline; only the presence of byte-shuffle matters.
pub fn split_block(
    splitmode: i32,
    compcode: u8,
    clevel: u8,
    filters: &[u8; 6],
    typesize: i32,
    blocksize: i32,
) -> bool {
    match splitmode {
        Fmt::ALWAYS_SPLIT => return true,
        Fmt::NEVER_SPLIT => return false,
        _ => {}
    }
    let fast_codec = compcode == Codec::BLOSCLZ
        || compcode == Codec::LZ4
        || (compcode == Codec::ZSTD && clevel <= 5);
    let shuffled = filters.contains(&Fmt::SHUFFLE);
    fast_codec
        && shuffled
        && typesize <= MAX_STREAMS
        && typesize > 0
        && blocksize / typesize >= Fmt::MIN_BUFFERSIZE as i32
}

/// The block size the reference picks for `nbytes` of input. `typesize` is the
/// caller's value (before the cap to 1 for types wider than 255 bytes, as in
/// the reference) and `user_blocksize` is the forced size or 0.
#[allow(clippy::too_many_arguments)]
pub fn compute_blocksize(
    clevel: u8,
    typesize: i32,
    nbytes: i32,
    user_blocksize: i32,
    compcode: u8,
    splitmode: i32,
    filters: &[u8; 6],
) -> i32 {
    if nbytes < typesize {
        return 1;
    }
    let split = split_block(splitmode, compcode, clevel, filters, typesize, nbytes);
    let mut blocksize = nbytes;
    if user_blocksize != 0 {
        blocksize = user_blocksize;
    } else {
        if nbytes >= L1 {
            blocksize = L1;
            if is_hcr(compcode) {
                blocksize *= 2;
            }
            match clevel {
                0 => blocksize /= 4,
                1 => blocksize /= 2,
                2 => {}
                3 => blocksize *= 2,
                4 | 5 => blocksize *= 4,
                6..=8 => blocksize *= 8,
                9 => {
                    blocksize *= 8;
                    if is_hcr(compcode) {
                        blocksize *= 2;
                    }
                }
                _ => {}
            }
        }
        if clevel > 0 && split {
            blocksize = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            blocksize = blocksize.saturating_mul(typesize);
            blocksize = blocksize.min(4 * 1024 * 1024).max(32 * 1024);
        }
    }
    if blocksize > nbytes {
        blocksize = nbytes;
    }
    if blocksize > typesize {
        blocksize = blocksize / typesize * typesize;
    }
    blocksize
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHUF: [u8; 6] = [0, 0, 0, 0, 0, 1];
    const NONE: [u8; 6] = [0; 6];

    #[test]
    fn reference_values() {
        // lz4, clevel 5, shuffle, typesize 4, 4 MB: split → 64K*4.
        assert_eq!(
            compute_blocksize(5, 4, 4_000_000, 0, Codec::LZ4, 4, &SHUF),
            256 * 1024
        );
        // zstd clevel 9 without shuffle: 32K*2*8*2 = 1 MB.
        assert_eq!(
            compute_blocksize(9, 4, 4_000_000, 0, Codec::ZSTD, 4, &NONE),
            1024 * 1024
        );
        // small buffers are one block.
        assert_eq!(compute_blocksize(5, 4, 1000, 0, Codec::LZ4, 4, &SHUF), 1000);
        assert_eq!(compute_blocksize(5, 8, 3, 0, Codec::LZ4, 4, &SHUF), 1);
        // a forced blocksize is rounded to the typesize.
        assert_eq!(
            compute_blocksize(5, 3, 3000, 1000, Codec::LZ4, 4, &SHUF),
            999
        );
    }
}
