//! AVX2 bit shuffle: the SSE2 scheme (see `super::sse2`) in both 128-bit
//! lanes, runs of 256 items (lane 0 on the first 128, lane 1 on the next), so
//! that each bit row's 32 bytes come out as one store. Shorter runs of 32
//! items use `movemask` and, backwards, the bit transpose of a vector
//! gathered from the 8 bit rows.
//! For items of 2, 4, 8 or 16 bytes both directions fuse the bit and byte steps per
//! run (see `shuffle_fused`, `unshuffle_fused`).

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::scalar;
use super::tiled::{self, RowKernels, TILE_BYTES};
use crate::filters::shuffle;

struct Avx2;

/// Loads the first 32 bytes of `s` (panics if shorter).
#[inline(always)]
unsafe fn load(s: &[u8]) -> __m256i {
    assert!(s.len() >= 32);
    _mm256_loadu_si256(s.as_ptr() as *const __m256i)
}

/// Loads `s[..16]` into lane 0 and `s[128..144]` into lane 1 (panics if short).
#[inline(always)]
unsafe fn load_split(s: &[u8]) -> __m256i {
    assert!(s.len() >= 144);
    let p = s.as_ptr();
    _mm256_loadu2_m128i(p.add(128) as *const __m128i, p as *const __m128i)
}

/// Stores `v` to the first 32 bytes of `s` (panics if shorter).
#[inline(always)]
unsafe fn store(s: &mut [u8], v: __m256i) {
    assert!(s.len() >= 32);
    _mm256_storeu_si256(s.as_mut_ptr() as *mut __m256i, v)
}

/// The three masks of the 8x8 bit transpose, loaded once per call.
#[derive(Clone, Copy)]
struct Masks([__m256i; 3]);

impl Masks {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn new() -> Masks {
        Masks([
            _mm256_set1_epi64x(0x00aa_00aa_00aa_00aa),
            _mm256_set1_epi64x(0x0000_cccc_0000_cccc),
            _mm256_set1_epi64x(0x0000_0000_f0f0_f0f0),
        ])
    }
}

/// The scalar `transpose_8x8` in each 64-bit lane.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn transpose_8x8(x: __m256i, m: Masks) -> __m256i {
    let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<7>(x)), m.0[0]);
    let x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<7>(t)));
    let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<14>(x)), m.0[1]);
    let x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<14>(t)));
    let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<28>(x)), m.0[2]);
    _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<28>(t)))
}

/// [`transpose_8x8`] on all eight vectors, written out so that the compiler
/// keeps them in registers (as a loop it spilled them to the stack).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn transpose_all(v: [__m256i; 8], m: Masks) -> [__m256i; 8] {
    [
        transpose_8x8(v[0], m),
        transpose_8x8(v[1], m),
        transpose_8x8(v[2], m),
        transpose_8x8(v[3], m),
        transpose_8x8(v[4], m),
        transpose_8x8(v[5], m),
        transpose_8x8(v[6], m),
        transpose_8x8(v[7], m),
    ]
}

/// One zip round over 8 vectors, per 128-bit lane, by value.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn zipped(v: [__m256i; 8]) -> [__m256i; 8] {
    [
        _mm256_unpacklo_epi8(v[0], v[4]),
        _mm256_unpackhi_epi8(v[0], v[4]),
        _mm256_unpacklo_epi8(v[1], v[5]),
        _mm256_unpackhi_epi8(v[1], v[5]),
        _mm256_unpacklo_epi8(v[2], v[6]),
        _mm256_unpackhi_epi8(v[2], v[6]),
        _mm256_unpacklo_epi8(v[3], v[7]),
        _mm256_unpackhi_epi8(v[3], v[7]),
    ]
}

impl RowKernels for Avx2 {
    const LANES: usize = 32;
    const BEST: usize = 256;

    fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::avx2::shuffle(typesize, src, dst)
    }

    fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
        shuffle::avx2::unshuffle(typesize, src, dst)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn bits_from_bytes(row: &[u8], dst: &mut [u8], off: usize, stride: usize) {
        let runs = row.len() / 256;
        if runs > 0 {
            // The furthest store ends at `off + 7 * stride + 32 * runs`;
            // checked once here instead of per store.
            assert!(off + 7 * stride + 32 * runs <= dst.len());
            let m = Masks::new();
            let out = dst.as_mut_ptr().add(off);
            for (r, run) in row.chunks_exact(256).enumerate() {
                let mut v = [_mm256_setzero_si256(); 8];
                for (t, x) in v.iter_mut().enumerate() {
                    *x = load_split(&run[16 * t..]);
                }
                let v = zipped(zipped(zipped(zipped(transpose_all(v, m)))));
                for (k, x) in v.iter().enumerate() {
                    // SAFETY: k <= 7 and r < runs, so the 32 bytes lie below
                    // the bound asserted above.
                    _mm256_storeu_si256(out.add(k * stride + 32 * r) as *mut __m256i, *x);
                }
            }
        }
        let done = runs * 256;
        let chunks = (row.len() - done) / 32;
        if chunks == 0 {
            return;
        }
        let col = off + done / 8;
        // The furthest store ends at `col + 7 * stride + 4 * chunks`;
        // checked once here instead of per store, which halved the speed
        // on small blocks (`bash scripts/shuffle-bench.sh --bit`).
        assert!(col + 7 * stride + 4 * chunks <= dst.len());
        let out = dst.as_mut_ptr().add(col);
        for (q, chunk) in row[done..].chunks_exact(32).enumerate() {
            let mut v = load(chunk);
            for k in (0..8).rev() {
                let mask = _mm256_movemask_epi8(v) as u32;
                // SAFETY: k <= 7 and q < chunks: below the bound asserted
                // above.
                (out.add(k * stride + 4 * q) as *mut u32).write_unaligned(mask.to_le());
                v = _mm256_add_epi8(v, v);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn bytes_from_bits(src: &[u8], off: usize, stride: usize, row: &mut [u8]) {
        let runs = row.len() / 256;
        if runs > 0 {
            // The furthest load ends at `off + 7 * stride + 32 * runs`;
            // checked once here instead of per load.
            assert!(off + 7 * stride + 32 * runs <= src.len());
            let m = Masks::new();
            let base = src.as_ptr().add(off);
            for (r, run) in row.chunks_exact_mut(256).enumerate() {
                let mut v = [_mm256_setzero_si256(); 8];
                for (k, x) in v.iter_mut().enumerate() {
                    // SAFETY: k <= 7 and r < runs, so the 32 bytes lie below
                    // the bound asserted above.
                    *x = _mm256_loadu_si256(base.add(k * stride + 32 * r) as *const __m256i);
                }
                let v = transpose_all(zipped(zipped(zipped(v))), m);
                // Vector a: lane 0 = items 16a.., lane 1 = items 128 + 16a..;
                // pair neighbours into contiguous 32-byte runs, stored in
                // address order (measurably faster than interleaved).
                for b in 0..4 {
                    let lo = _mm256_permute2x128_si256::<0x20>(v[2 * b], v[2 * b + 1]);
                    store(&mut run[32 * b..], lo);
                }
                for b in 0..4 {
                    let hi = _mm256_permute2x128_si256::<0x31>(v[2 * b], v[2 * b + 1]);
                    store(&mut run[128 + 32 * b..], hi);
                }
            }
        }
        let done = runs * 256;
        let chunks = (row.len() - done) / 32;
        if chunks == 0 {
            return;
        }
        // Runs of 32 items: the 4 bytes of each of the 8 bit rows (row k's
        // byte b holds bit k of items 8b..8b + 8) gathered into one vector,
        // regrouped so that 64-bit lane b holds byte b of rows 0 to 7, then
        // the bit transpose turns each lane into its 8 items: one store per
        // 32 items, several times faster than a broadcast and test per bit
        // row (`bash scripts/shuffle-bench.sh --bit`).
        let col = off + done / 8;
        // The furthest load ends at `col + 7 * stride + 4 * chunks`;
        // checked once here instead of per load.
        assert!(col + 7 * stride + 4 * chunks <= src.len());
        let m = Masks::new();
        // Per lane (rows 0 to 3, then 4 to 7): byte b of each row together.
        let by_byte = _mm256_setr_epi8(
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, //
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
        );
        // Byte b of rows 0 to 3 next to byte b of rows 4 to 7.
        let pair = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let base = src.as_ptr().add(col);
        for (q, out) in row[done..].chunks_exact_mut(32).enumerate() {
            // SAFETY: k <= 7 and q < chunks, so the 4 bytes lie below the
            // bound asserted above.
            let seg = |k: usize| (base.add(k * stride + 4 * q) as *const i32).read_unaligned();
            let v = _mm256_setr_epi32(
                seg(0),
                seg(1),
                seg(2),
                seg(3),
                seg(4),
                seg(5),
                seg(6),
                seg(7),
            );
            let v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, by_byte), pair);
            store(out, transpose_8x8(v, m));
        }
    }
}

/// Whether a tile of this type size holds a whole 256-item run; if not, the
/// SSE2 kernels (128-item runs) are faster.
fn wide_enough(typesize: usize) -> bool {
    TILE_BYTES / typesize >= Avx2::BEST
}

/// Bit shuffle of a multiple of `8 * typesize` bytes; scalar without AVX2.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if !is_x86_feature_detected!("avx2") {
        return scalar::bitshuffle(typesize, src, dst);
    }
    // Fewer items than one AVX2 vector takes go to the SSE2 kernels' 16-item
    // pieces, as in `bitunshuffle`, where the AVX2 driver would leave them
    // all to the scalar loop.
    if !wide_enough(typesize) || src.len() / typesize < Avx2::LANES {
        return super::sse2::bitshuffle(typesize, src, dst);
    }
    // SAFETY: AVX2 was detected just above; the fused kernels check their
    // bounds, all other memory access goes through bounds-checked slices.
    unsafe {
        let done = match typesize {
            2 => shuffle_fused::<2>(src, dst),
            4 => shuffle_fused::<4>(src, dst),
            8 => shuffle_fused::<8>(src, dst),
            16 => shuffle_fused::<16>(src, dst),
            _ => 0,
        };
        tiled::bitshuffle_from::<Avx2>(typesize, src, dst, done)
    }
}

/// Bit shuffle of the whole 256-item runs of a buffer of `N`-byte items
/// (`N` a power of two, at most 16); returns the items done. The inverse of
/// [`unshuffle_fused`]: per 16 items of each lane, their `16 * N` bytes are
/// loaded as `N` vectors (lane 0 from items 16t.., lane 1 from items
/// 128 + 16t..) and four zip rounds leave byte `j` of those items in vector
/// `j` (a zip round rotates the bits of a byte's (vector, position) index
/// left by one; `16 * N` bytes have `4 + log2 N` index bits, and the item
/// number must move from the top four to the bottom four). That is the
/// lane order the bit transpose wants, so no byte-shuffled tile in item
/// order and no cross-lane permute is needed.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_fused<const N: usize>(src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / N;
    let stride = n / 8;
    let runs = n / 256;
    if batch_stores(8 * N, stride) {
        shuffle_runs::<N, 2>(runs, stride, src, dst);
    } else {
        shuffle_runs::<N, 1>(runs, stride, src, dst);
    }
    256 * runs
}

/// How many sets of the L1 data cache rows `stride` bytes apart fall in (for
/// enough rows): the L1's way (4 KiB) over the largest power of two that
/// divides `stride`, so 1 for a multiple of 4 KiB, as in every block of a
/// power-of-two size holding at least 2^15 items.
///
/// The fused kernels go through a run's 8N bit rows in turn, 32 bytes of
/// each, and come back to each row's 64-byte line one run later. With more
/// rows to a set than its 8 ways hold, that line may have been evicted in
/// between and is fetched twice. Such rows are better reached `R` runs at a
/// time, `32 * R` contiguous bytes of each (the `R` of [`shuffle_runs`] and
/// [`unshuffle_runs`]); elsewhere that costs more than it saves (up to 7%
/// on Zen 4). The thresholds of [`batch_stores`] and [`batch_loads`] are
/// what `bash scripts/shuffle-bench.sh --bit` measured there.
pub(super) fn l1_sets(stride: usize) -> usize {
    let way = shuffle::avx2::L1_WAY;
    (way >> stride.trailing_zeros().min(way.trailing_zeros())).min(way / 64)
}

/// Whether [`shuffle_fused`] should store `rows` rows `stride` bytes apart
/// two runs at a time: when they all share one set and are more than 16.
/// Fewer rows lose nothing in one set, and batches gain nothing in two
/// (`bash scripts/shuffle-bench.sh --bit`).
pub(super) fn batch_stores(rows: usize, stride: usize) -> bool {
    l1_sets(stride) == 1 && rows > 16
}

/// Whether [`unshuffle_fused`] should load `rows` rows `stride` bytes apart
/// four runs at a time: when more than 8 of them share each set, in one or
/// two sets; with more sets the batches lose a little (`bash
/// scripts/shuffle-bench.sh --bit`).
pub(super) fn batch_loads(rows: usize, stride: usize) -> bool {
    let sets = l1_sets(stride);
    sets <= 2 && rows / sets > 8
}

/// The kernel of [`shuffle_fused`]: `runs` runs of 256 items from `src`,
/// the 32 bytes of bit row `b` of run `r` stored at
/// `dst[b * stride + 32 * r..]`. It takes `R` runs at a time and stores
/// each row's `32 * R` bytes of them one after the other (see [`l1_sets`]);
/// runs left over go one at a time.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn shuffle_runs<const N: usize, const R: usize>(
    runs: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let steps = runs / R;
    if steps > 0 {
        // Furthest load: item 256 * runs - 1; furthest store: row 8N - 1,
        // run runs - 1. Both checked once here.
        assert!(256 * runs * N <= src.len());
        assert!((8 * N - 1) * stride + 32 * runs <= dst.len());
    }
    let m = Masks::new();
    let inp = src.as_ptr();
    let out = dst.as_mut_ptr();
    // Per run of the step, vector 8j + t: byte j of items 16t.. (lane 0)
    // and 128 + 16t.. (lane 1). Uninitialised, as zeroing R * 4 KiB cost
    // more than the kernel on small blocks: each step writes vectors 0 to
    // 8N - 1 of every tile before it reads them.
    let mut tiles = [[MaybeUninit::<__m256i>::uninit(); 128]; R];
    // Per run of the step, the 32 bytes of bit rows 8j.. 8j + 7.
    let mut rows = [[_mm256_setzero_si256(); 8]; R];
    for step in 0..steps {
        for (q, tile) in tiles.iter_mut().enumerate() {
            let r = R * step + q;
            for t in 0..8 {
                let lo = (256 * r + 16 * t) * N;
                let hi = (256 * r + 128 + 16 * t) * N;
                let mut x = [_mm256_setzero_si256(); N];
                for (c, xc) in x.iter_mut().enumerate() {
                    // SAFETY: lo, hi + 16N <= 256 * (r + 1) * N, within the
                    // bound asserted above.
                    *xc = _mm256_loadu2_m128i(
                        inp.add(hi + 16 * c) as *const __m128i,
                        inp.add(lo + 16 * c) as *const __m128i,
                    );
                }
                for _ in 0..4 {
                    shuffle::avx2::zip(&mut x);
                }
                for (j, xj) in x.iter().enumerate() {
                    tile[8 * j + t] = MaybeUninit::new(*xj);
                }
            }
        }
        for j in 0..N {
            for (tile, row) in tiles.iter().zip(rows.iter_mut()) {
                // SAFETY: vectors 8j.. 8j + 7 were written this step (t =
                // 0 to 7 above).
                let v: [__m256i; 8] = core::array::from_fn(|t| tile[8 * j + t].assume_init());
                *row = zipped(zipped(zipped(zipped(transpose_all(v, m)))));
            }
            for k in 0..8 {
                let p = out.add((8 * j + k) * stride + 32 * R * step);
                for (q, row) in rows.iter().enumerate() {
                    // SAFETY: row 8j + k < 8N, run R * step + q < runs:
                    // below the bound asserted above.
                    _mm256_storeu_si256(p.add(32 * q) as *mut __m256i, row[k]);
                }
            }
        }
    }
    let done = R * steps;
    if done < runs {
        shuffle_runs::<N, 1>(
            runs - done,
            stride,
            &src[256 * done * N..],
            &mut dst[32 * done..],
        );
    }
}

/// Inverse of [`bitshuffle`]; scalar without AVX2.
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if !is_x86_feature_detected!("avx2") {
        return scalar::bitunshuffle(typesize, src, dst);
    }
    // Fewer items than one AVX2 vector takes: the SSE2 kernels' 16-item
    // runs, where the AVX2 driver would leave them all to the scalar loop.
    // (Blocks of 128 to 255 items went to the SSE2 kernels' 128-item run
    // while the AVX2 kernels took a vector of 32 items a bit row at a time;
    // with the gathered transpose they are faster here: `bash
    // scripts/shuffle-bench.sh --bit`.)
    let n = src.len() / typesize;
    if !wide_enough(typesize) || n < Avx2::LANES {
        return super::sse2::bitunshuffle(typesize, src, dst);
    }
    // SAFETY: as in `bitshuffle`; the fused kernels check their bounds.
    unsafe {
        let done = match typesize {
            2 => unshuffle_fused::<2, 1>(src, dst),
            4 => unshuffle_fused::<4, 2>(src, dst),
            8 => unshuffle_fused::<8, 3>(src, dst),
            16 => unshuffle_fused::<16, 4>(src, dst),
            _ => 0,
        };
        tiled::bitunshuffle_from::<Avx2>(typesize, src, dst, done)
    }
}

/// Bit unshuffle of the whole 256-item runs of a buffer of `N`-byte items
/// (`N = 2^P`, at most 16); returns the items done.
///
/// The tiled path writes each byte row of a tile in item order (a permute
/// per vector pair), then byte-unshuffles the tile (more zips and permutes):
/// the shuffle port is its bottleneck. Here each run of 256 items goes
/// through a small tile kept in the order the bit transpose leaves it (lane
/// 0 = items 16a.., lane 1 = items 128 + 16a..), the byte unshuffle zips
/// within lanes, and the two lanes are stored as 16-byte halves, so no
/// cross-lane permute is needed at all.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_fused<const N: usize, const P: usize>(src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / N;
    let stride = n / 8;
    let runs = n / 256;
    if batch_loads(8 * N, stride) {
        unshuffle_runs::<N, P, 4>(runs, stride, src, dst);
    } else {
        unshuffle_runs::<N, P, 1>(runs, stride, src, dst);
    }
    256 * runs
}

/// The kernel of [`unshuffle_fused`]: `runs` runs of 256 items into `dst`,
/// the 32 bytes of bit row `b` of run `r` read from
/// `src[b * stride + 32 * r..]`. It takes `R` runs at a time and loads each
/// row's `32 * R` bytes of them one after the other (see [`l1_sets`]); runs
/// left over go one at a time.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn unshuffle_runs<const N: usize, const P: usize, const R: usize>(
    runs: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let steps = runs / R;
    if steps > 0 {
        // Furthest load: row 8N - 1, run runs - 1; furthest store: item
        // 256 * runs - 1. Both checked once here.
        assert!((8 * N - 1) * stride + 32 * runs <= src.len());
        assert!(256 * runs * N <= dst.len());
    }
    let m = Masks::new();
    let base = src.as_ptr();
    let out = dst.as_mut_ptr();
    // Per run of the step, byte j of its items in vectors 8j.. 8j + 7: 256
    // bytes in transpose order. Uninitialised, as in `shuffle_runs`: each
    // step writes vectors 0 to 8N - 1 of every tile before it reads them.
    let mut tiles = [[MaybeUninit::<__m256i>::uninit(); 128]; R];
    for step in 0..steps {
        for j in 0..N {
            for (q, tile) in tiles.iter_mut().enumerate() {
                let mut v = [_mm256_setzero_si256(); 8];
                for (k, x) in v.iter_mut().enumerate() {
                    // SAFETY: row 8j + k < 8N, run R * step + q < runs:
                    // below the bound asserted above.
                    let p = base.add((8 * j + k) * stride + 32 * (R * step + q));
                    *x = _mm256_loadu_si256(p as *const __m256i);
                }
                let v = transpose_all(zipped(zipped(zipped(v))), m);
                for (t, x) in tile[8 * j..8 * j + 8].iter_mut().zip(v) {
                    *t = MaybeUninit::new(x);
                }
            }
        }
        for (q, tile) in tiles.iter().enumerate() {
            let r = R * step + q;
            for a in 0..8 {
                let mut x = [_mm256_setzero_si256(); N];
                for (j, xj) in x.iter_mut().enumerate() {
                    // SAFETY: vectors 8j + a, j < N, were written this step.
                    *xj = tile[8 * j + a].assume_init();
                }
                for _ in 0..P {
                    shuffle::avx2::zip(&mut x);
                }
                // Vector b: bytes 16b.. of the 16 items of each lane, in
                // item order.
                let lo = (256 * r + 16 * a) * N;
                let hi = (256 * r + 128 + 16 * a) * N;
                for (b, xb) in x.iter().enumerate() {
                    // SAFETY: lo, hi + 16N <= 256 * (r + 1) * N, within the
                    // bound asserted above.
                    let p = out.add(lo + 16 * b) as *mut __m128i;
                    _mm_storeu_si128(p, _mm256_castsi256_si128(*xb));
                    let p = out.add(hi + 16 * b) as *mut __m128i;
                    _mm_storeu_si128(p, _mm256_extracti128_si256::<1>(*xb));
                }
            }
        }
    }
    let done = R * steps;
    if done < runs {
        let (src, dst) = (&src[32 * done..], &mut dst[256 * done * N..]);
        unshuffle_runs::<N, P, 1>(runs - done, stride, src, dst);
    }
}
