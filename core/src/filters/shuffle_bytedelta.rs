//! The byte shuffle followed by BYTEDELTA over its streams, both
//! directions as one pass over the items instead of two over the streams.
//!
//! BYTEDELTA stores each byte of a stream as its difference from the byte
//! before it in the stream, and stream `j` holds byte `j` of every item. So
//! the differences are those of whole items, bytewise: forwards, each item
//! minus the one before it (two loads and a subtraction per 32 bytes,
//! straight from the items, where along a stream they come after the
//! transpose), then the shuffle; backwards, the unshuffle, then each item
//! plus the sum of those before it. In a vector of whole items that sum
//! takes `log2(16 / typesize)` shifts within each 128-bit lane and at most
//! three shuffles to carry across lanes and vectors; along a stream it
//! takes four shifts and four shuffles per 32 bytes.
//!
//! Either way the block goes a piece at a time, each piece's differences
//! (forwards, in a scratch) or items (backwards, in the output) still in L1
//! for the second step, where the two filters in turn each go over the
//! whole block, which does not fit L1. Same bytes as the two filters (tested
//! against them).
//!
//! Forwards takes every item size on every tier; backwards needs AVX2 and
//! items of 2, 4, 8 or 16 bytes ([`decodes`]), and the pipeline runs the
//! two filters in turn elsewhere.

use super::bytedelta::Variant;
use super::cpu::{self, SimdLevel};
use super::shuffle;

/// Bytes of items per piece forwards (the scratch holds one piece's
/// differences) and backwards: the fastest of pieces from 2 to 64 KiB in
/// the benchmark's shuffle+bytedelta rows on Zen 4 (`bash scripts/bench.sh
/// --only shuffle+bytedelta`); forwards, larger pieces ran slower.
const ENCODE_PIECE_BYTES: usize = 8 * 1024;
const DECODE_PIECE_BYTES: usize = 16 * 1024;

/// Items per piece of `bytes` for `typesize`-byte items: whole groups of
/// 32 (the shuffle kernels' step), at least one.
fn piece_items(bytes: usize, typesize: usize) -> usize {
    (bytes / typesize / 32 * 32).max(32)
}

/// The scratch [`encode_rows`] needs for `typesize`-byte items.
pub(crate) fn scratch_len(typesize: usize) -> usize {
    piece_items(ENCODE_PIECE_BYTES, typesize) * typesize
}

/// [`shuffle::shuffle_rows`] then BYTEDELTA over the same rows (`variant`'s
/// [`super::bytedelta::encode`]): `src` is whole items of `typesize >= 2`
/// bytes, row `j` of the result goes to `dst[j * stride..j * stride + n]`
/// (`n` items) and the bytes between rows are left as they are.
///
/// # Panics
/// As `shuffle_rows`, or if `typesize < 2` or `scratch` is shorter than
/// [`scratch_len`] (caller bugs).
pub(crate) fn encode_rows(
    variant: Variant,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    stride: usize,
    scratch: &mut [u8],
) {
    encode_rows_with(cpu::level(), variant, typesize, src, dst, stride, scratch);
}

/// [`encode_rows`] with the kernels of `level` (which the CPU must support).
fn encode_rows_with(
    level: SimdLevel,
    variant: Variant,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    stride: usize,
    scratch: &mut [u8],
) {
    let n = super::row_len("shuffle_bytedelta", typesize, src.len(), dst.len(), stride);
    assert!(
        typesize >= 2 && scratch.len() >= scratch_len(typesize),
        "shuffle_bytedelta: typesize {typesize}, scratch of {} bytes",
        scratch.len()
    );
    let restart = variant.first_run(n);
    let items_per_piece = piece_items(ENCODE_PIECE_BYTES, typesize);
    let mut p0 = 0;
    while p0 < n {
        let m = items_per_piece.min(n - p0);
        let piece = &mut scratch[..m * typesize];
        if p0 == 0 {
            // The first item has none before it: its bytes are their own
            // differences.
            piece[..typesize].copy_from_slice(&src[..typesize]);
            item_differences(
                level,
                typesize,
                &src[..m * typesize],
                &mut piece[typesize..],
            );
        } else {
            let items = &src[(p0 - 1) * typesize..(p0 + m) * typesize];
            item_differences(level, typesize, items, piece);
        }
        if (p0..p0 + m).contains(&restart) {
            let at = restart * typesize;
            let r = at - p0 * typesize;
            piece[r..r + typesize].copy_from_slice(&src[at..at + typesize]);
        }
        shuffle::shuffle_rows_with(level, typesize, piece, &mut dst[p0..], stride);
        p0 += m;
    }
}

/// [`encode_rows`] of a whole block into `dst` (same length) with its rows
/// `n = len / typesize` apart; the `len % typesize` bytes after the last
/// whole item are copied, as both filters do.
///
/// # Panics
/// If the lengths differ, or as [`encode_rows`].
pub(crate) fn encode(
    variant: Variant,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    scratch: &mut [u8],
) {
    assert_eq!(src.len(), dst.len(), "shuffle_bytedelta: lengths differ");
    let body = src.len() / typesize * typesize;
    let n = body / typesize;
    encode_rows(
        variant,
        typesize,
        &src[..body],
        &mut dst[..body],
        n,
        scratch,
    );
    dst[body..].copy_from_slice(&src[body..]);
}

/// `out[i] = items[i + typesize] - items[i]`: each item's bytes minus those
/// of the item before it (`out` is one item shorter than `items`).
fn item_differences(level: SimdLevel, typesize: usize, items: &[u8], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if level == SimdLevel::Avx2 {
        // SAFETY: `level` is AVX2 only when the running CPU has it.
        return unsafe { item_differences_avx2(typesize, items, out) };
    }
    let _ = level;
    item_differences_body(typesize, items, out);
}

/// [`item_differences`] compiled for AVX2: the compiler vectorises the loop
/// with 32-byte vectors (with SSE2's 16 elsewhere).
///
/// # Safety
/// AVX2 is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn item_differences_avx2(typesize: usize, items: &[u8], out: &mut [u8]) {
    item_differences_body(typesize, items, out);
}

#[inline(always)]
fn item_differences_body(typesize: usize, items: &[u8], out: &mut [u8]) {
    let (before, cur) = (&items[..items.len() - typesize], &items[typesize..]);
    for ((o, &c), &b) in out.iter_mut().zip(cur).zip(before) {
        *o = c.wrapping_sub(b);
    }
}

/// Whether [`decode`] takes `typesize`-byte items on this machine.
pub(crate) fn decodes(typesize: usize) -> bool {
    decodes_with(cpu::level(), typesize)
}

fn decodes_with(level: SimdLevel, typesize: usize) -> bool {
    level == SimdLevel::Avx2 && matches!(typesize, 2 | 4 | 8 | 16)
}

/// BYTEDELTA's inverse then the unshuffle, for `typesize`-byte items where
/// [`decodes`] says so: `src` is the shuffled, differenced block, `dst` (of
/// the same length) gets the items; the `len % typesize` bytes after the
/// last whole item are copied, as both filters do.
///
/// # Panics
/// If the lengths differ or [`decodes`] is false (caller bugs).
pub(crate) fn decode(variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    decode_with(cpu::level(), variant, typesize, src, dst);
}

/// [`decode`] with the kernels of `level` (which the CPU must support).
fn decode_with(level: SimdLevel, variant: Variant, typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert!(
        src.len() == dst.len() && decodes_with(level, typesize),
        "shuffle_bytedelta: {} bytes into {}, typesize {typesize} on {level:?}",
        src.len(),
        dst.len()
    );
    let n = src.len() / typesize;
    let body = n * typesize;
    // Where the sums restart from 0: an item index, the same in every stream.
    let restart = variant.first_run(n);
    let items_per_piece = piece_items(DECODE_PIECE_BYTES, typesize);
    let mut sum = Sum::default();
    let mut p0 = 0;
    while p0 < n {
        let m = items_per_piece.min(n - p0);
        let mut planes = [shuffle::Plane::Run(0); 16];
        for (j, plane) in planes.iter_mut().enumerate().take(typesize) {
            *plane = shuffle::Plane::Bytes(&src[j * n + p0..j * n + p0 + m]);
        }
        let piece = &mut dst[p0 * typesize..(p0 + m) * typesize];
        shuffle::unshuffle_planes_with(level, &planes[..typesize], piece);
        if (p0..p0 + m).contains(&restart) {
            let (before, after) = piece.split_at_mut((restart - p0) * typesize);
            sum.add_items(typesize, before);
            sum = Sum::default();
            sum.add_items(typesize, after);
        } else {
            sum.add_items(typesize, piece);
        }
        p0 += m;
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// The running sum of the items so far, repeated across 32 bytes.
#[derive(Default)]
struct Sum([u8; 32]);

impl Sum {
    /// Replaces each item of `items` (whole `typesize`-byte items, 2, 4, 8
    /// or 16 bytes, AVX2 available) by the sum of the items so far.
    fn add_items(&mut self, typesize: usize, items: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `decode_with` checked that AVX2 runs here and the
            // item size is one the kernel takes.
            let done = unsafe {
                match typesize {
                    2 => x86::add_items::<2>(items, &mut self.0),
                    4 => x86::add_items::<4>(items, &mut self.0),
                    8 => x86::add_items::<8>(items, &mut self.0),
                    _ => x86::add_items::<16>(items, &mut self.0),
                }
            };
            self.add_items_scalar(typesize, &mut items[done..]);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.add_items_scalar(typesize, items);
    }

    /// The same one item at a time.
    fn add_items_scalar(&mut self, typesize: usize, items: &mut [u8]) {
        for item in items.chunks_exact_mut(typesize) {
            for (k, b) in item.iter_mut().enumerate() {
                *b = b.wrapping_add(self.0[k]);
            }
            // Keep the sum repeated across the 32 bytes.
            for k in 0..32 {
                self.0[k] = item[k % typesize];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// For each byte of a 128-bit lane, the same byte of the lane's last
    /// `T`-byte item.
    const fn last_item_mask<const T: usize>() -> [i8; 32] {
        let mut m = [0i8; 32];
        let mut p = 0;
        while p < 32 {
            m[p] = (16 - T + p % T) as i8;
            p += 1;
        }
        m
    }

    /// The sums of [`super::Sum::add_items`] over the whole vectors of
    /// `items`, continuing from `sum` (the running item repeated across 32
    /// bytes) and leaving it there; returns the bytes done.
    ///
    /// # Safety
    /// AVX2 is available; `T` is 2, 4, 8 or 16.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn add_items<const T: usize>(items: &mut [u8], sum: &mut [u8; 32]) -> usize {
        let n = items.len() / 32 * 32;
        let mask_bytes = const { last_item_mask::<T>() };
        // SAFETY: AVX2 is available (the caller); the loads and stores of
        // 32 bytes are at k + 32 <= n <= items.len() and of `sum`'s 32.
        unsafe {
            let mask = _mm256_loadu_si256(mask_bytes.as_ptr().cast());
            let mut carry = _mm256_loadu_si256(sum.as_ptr().cast());
            let p = items.as_mut_ptr();
            let mut k = 0;
            while k < n {
                let mut x = _mm256_loadu_si256(p.add(k).cast());
                // Sums within each lane: shifts by 1, 2, 4 items while
                // they are less than a lane.
                if T <= 2 {
                    x = _mm256_add_epi8(x, _mm256_slli_si256::<2>(x));
                }
                if T <= 4 {
                    x = _mm256_add_epi8(x, _mm256_slli_si256::<4>(x));
                }
                if T <= 8 {
                    x = _mm256_add_epi8(x, _mm256_slli_si256::<8>(x));
                }
                // Each lane's total (its last item), across that lane.
                let last = if T < 16 {
                    _mm256_shuffle_epi8(x, mask)
                } else {
                    x
                };
                // Lane 1 adds lane 0's total; both add the sum so far.
                let lane0 = _mm256_permute2x128_si256::<0x08>(last, last);
                let out = _mm256_add_epi8(_mm256_add_epi8(x, lane0), carry);
                _mm256_storeu_si256(p.add(k).cast(), out);
                let swapped = _mm256_permute2x128_si256::<0x01>(last, last);
                carry = _mm256_add_epi8(carry, _mm256_add_epi8(last, swapped));
                k += 32;
            }
            _mm256_storeu_si256(sum.as_mut_ptr().cast(), carry);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::bytedelta;
    use crate::filters::test_util::Rng;

    const VARIANTS: [Variant; 2] = [Variant::Fixed, Variant::Buggy];

    /// Item counts around `piece` items: within the first piece, on and
    /// next to its end (where the old variant's restart can fall on a
    /// piece's first item), in a third piece, and a few that leave items
    /// past a vector's worth.
    fn counts(piece: usize) -> Vec<usize> {
        let mut c = vec![1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 100];
        c.extend([piece - 1, piece, piece + 1, piece + 16, 2 * piece + 5]);
        c
    }

    /// The two filters in turn.
    fn shuffle_then_bytedelta(variant: Variant, typesize: usize, src: &[u8]) -> Vec<u8> {
        let mut shuffled = vec![0u8; src.len()];
        shuffle::shuffle(typesize, src, &mut shuffled);
        let mut want = vec![0u8; src.len()];
        bytedelta::encode(variant, typesize, &shuffled, &mut want);
        want
    }

    #[test]
    fn encode_rows_is_the_shuffle_then_bytedelta_on_every_tier() {
        let mut rng = Rng::new(35);
        for typesize in (2..=20).chain([24, 32, 64, 255]) {
            for n in counts(piece_items(ENCODE_PIECE_BYTES, typesize)) {
                let src = rng.bytes(n * typesize);
                for variant in VARIANTS {
                    let want = shuffle_then_bytedelta(variant, typesize, &src);
                    for level in cpu::available() {
                        for gap in [0usize, 4] {
                            let stride = n + gap;
                            let mut got = vec![0xa5u8; typesize * stride];
                            let mut scratch = vec![0x5au8; scratch_len(typesize)];
                            encode_rows_with(
                                level,
                                variant,
                                typesize,
                                &src,
                                &mut got,
                                stride,
                                &mut scratch,
                            );
                            for j in 0..typesize {
                                let (row, rest) = got[j * stride..(j + 1) * stride].split_at(n);
                                assert!(
                                    row == &want[j * n..(j + 1) * n],
                                    "{level:?} {variant:?} typesize {typesize} n {n} gap {gap} row {j}"
                                );
                                assert!(rest.iter().all(|&b| b == 0xa5), "wrote between rows");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn encode_copies_the_bytes_past_the_last_item() {
        let mut rng = Rng::new(36);
        for typesize in [2usize, 3, 8, 16, 17] {
            for len in [typesize, 5 * typesize + 1, 1000 * typesize + typesize - 1] {
                let src = rng.bytes(len);
                for variant in VARIANTS {
                    let mut got = vec![0u8; len];
                    let mut scratch = vec![0u8; scratch_len(typesize)];
                    encode(variant, typesize, &src, &mut got, &mut scratch);
                    let want = shuffle_then_bytedelta(variant, typesize, &src);
                    assert!(got == want, "{variant:?} typesize {typesize} length {len}");
                }
            }
        }
    }

    #[test]
    fn decode_is_bytedelta_then_the_unshuffle_and_inverts_encode() {
        let mut rng = Rng::new(37);
        assert!(
            [1usize, 3, 5, 6, 12, 32]
                .iter()
                .all(|&t| !decodes_with(SimdLevel::Avx2, t))
                && !decodes_with(SimdLevel::Sse2, 8)
                && !decodes_with(SimdLevel::Scalar, 8)
        );
        for level in cpu::available() {
            for typesize in [2usize, 4, 8, 16] {
                if !decodes_with(level, typesize) {
                    continue;
                }
                for n in counts(piece_items(DECODE_PIECE_BYTES, typesize)) {
                    for extra in [0, 1, typesize - 1] {
                        let items = rng.bytes(n * typesize + extra);
                        for variant in VARIANTS {
                            let coded = shuffle_then_bytedelta(variant, typesize, &items);
                            let mut sums = vec![0u8; coded.len()];
                            bytedelta::decode(variant, typesize, &coded, &mut sums);
                            let mut want = vec![0u8; coded.len()];
                            shuffle::unshuffle(typesize, &sums, &mut want);
                            assert_eq!(want, items, "the two filters invert");
                            let mut got = vec![0xa5u8; coded.len()];
                            decode_with(level, variant, typesize, &coded, &mut got);
                            assert!(
                                got == want,
                                "{level:?} {variant:?} typesize {typesize} n {n} extra {extra}"
                            );
                        }
                    }
                }
            }
        }
    }
}
