//! AVX2 byte shuffle: the SSE2 scheme run in both 128-bit lanes at once on
//! groups of 32 items, so each transposed row segment comes out as one
//! contiguous 32-byte store. Which items land in which lane depends on the
//! kernel (whole-vector loads plus a final permute for 4, 8 and 16-byte
//! items, split loads for the windowed sizes); 2-byte items are split by
//! masks, shifts and a saturating pack instead of zips, 12-byte items
//! are unshuffled as an 8-byte and a 4-byte transpose whose words are then
//! packed into whole stores, and items of 3, 5, 6 (and backwards 7) bytes
//! are gathered with byte shuffles (`vpshufb`) 16 bytes at a time. Stores
//! go out in address order, which is faster than interleaved orders. Rows whose write fronts would share an L1 set
//! (8 or 16 rows 4 KiB apart) are shuffled through a small stage first
//! (`shuffle_staged`), and 16 such rows are copied into one before they are
//! unshuffled (`unshuffle_staged`); items wider than 16 bytes do the same a
//! 16-byte window at a time (`shuffle_wide_staged`, `unshuffle_wide_staged`).

use std::arch::x86_64::*;
use std::cell::RefCell;

use super::scalar;
use super::transpose::{whole_groups, windows, Window};
use super::Plane;

/// Items per vector group (16 per lane).
const LANES: usize = 32;

/// One zip round per 128-bit lane (see `super::transpose`); the bit
/// shuffle's fused kernels run it too.
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
pub(crate) unsafe fn zip<const N: usize>(v: &mut [__m256i; N]) {
    let mut out = [_mm256_setzero_si256(); N];
    for a in 0..N / 2 {
        out[2 * a] = _mm256_unpacklo_epi8(v[a], v[a + N / 2]);
        out[2 * a + 1] = _mm256_unpackhi_epi8(v[a], v[a + N / 2]);
    }
    *v = out;
}

/// Unaligned 32-byte load of `s[off..off + 32]`.
///
/// # Safety
/// `off + 32 <= s.len()`; AVX2 is available.
#[inline(always)]
unsafe fn load(s: &[u8], off: usize) -> __m256i {
    debug_assert!(off + 32 <= s.len());
    _mm256_loadu_si256(s.as_ptr().add(off) as *const __m256i)
}

/// Unaligned 32-byte store to `s[off..off + 32]`.
///
/// # Safety
/// `off + 32 <= s.len()`; AVX2 is available.
#[inline(always)]
unsafe fn store(s: &mut [u8], off: usize, v: __m256i) {
    debug_assert!(off + 32 <= s.len());
    _mm256_storeu_si256(s.as_mut_ptr().add(off) as *mut __m256i, v)
}

/// Stores one 128-bit lane (`HI` = 0 or 1) of `v` to `s[off..off + 16]`.
///
/// # Safety
/// `off + 16 <= s.len()`; AVX2 is available.
#[inline(always)]
unsafe fn store_lane<const HI: i32>(s: &mut [u8], off: usize, v: __m256i) {
    debug_assert!(off + 16 <= s.len());
    let half = _mm256_extracti128_si256::<HI>(v);
    _mm_storeu_si128(s.as_mut_ptr().add(off) as *mut __m128i, half)
}

/// Shuffle; requires `src.len() == dst.len()` and `2 <= typesize <= len`.
/// Falls back to scalar if the CPU lacks AVX2.
pub(crate) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    shuffle_rows(typesize, n, n, src, dst);
    scalar::copy_tail(typesize, n, src, dst);
}

/// The `n` whole items at the start of `src`, row `j` to
/// `dst[j * stride..j * stride + n]`; requires `typesize >= 2`,
/// `src.len() >= n * typesize`, `stride >= n` and
/// `dst.len() >= (typesize - 1) * stride + n`. Falls back to scalar if the
/// CPU lacks AVX2.
pub(crate) fn shuffle_rows(typesize: usize, n: usize, stride: usize, src: &[u8], dst: &mut [u8]) {
    assert!(
        stride >= n && src.len() >= n * typesize && dst.len() >= (typesize - 1) * stride + n,
        "shuffle_rows: buffers too short"
    );
    if !is_x86_feature_detected!("avx2") {
        return scalar::shuffle_items(typesize, n, stride, 0, src, dst);
    }
    if n < LANES && matches!(typesize, 2 | 4 | 8 | 16) {
        // No whole group of 32: the SSE2 kernels' groups of 16, or two half
        // groups of 8 for 8 to 15 items (the last one overlapping), not the
        // scalar loop.
        return super::sse2::shuffle_rows(typesize, n, stride, src, dst);
    }
    // SAFETY: AVX2 was detected just above; each kernel only touches the
    // groups it computes to lie inside the buffers (see their docs), which
    // the assert above makes long enough.
    let done = unsafe {
        match typesize {
            2 => shuffle_2(n, stride, src, dst),
            4 => shuffle_pow2::<4>(n, stride, src, dst),
            8 if n >= stage_items(8) && rows_crowd_l1(8, stride) => {
                with_stage(|stage| shuffle_staged::<8>(stage, n, stride, src, dst))
            }
            8 => shuffle_pow2::<8>(n, stride, src, dst),
            16 if n >= stage_items(16) && rows_crowd_l1(16, stride) => {
                with_stage(|stage| shuffle_staged::<16>(stage, n, stride, src, dst))
            }
            16 => shuffle_pow2::<16>(n, stride, src, dst),
            17.. if n >= stage_items(16) && wide_rows_crowd_l1(typesize, stride) => {
                with_stage(|stage| shuffle_wide_staged(stage, typesize, n, stride, src, dst))
            }
            3 => shuffle_narrow::<3>(n, stride, src, dst),
            5 => shuffle_narrow::<5>(n, stride, src, dst),
            6 => shuffle_narrow::<6>(n, stride, src, dst),
            _ => shuffle_windows(typesize, n, stride, src, dst),
        }
    };
    if matches!(typesize, 2 | 4 | 8 | 16) && done < n && n > LANES {
        // The items after the last whole group, as one more group ending
        // at the last item: the items it shares with the group before are
        // written again with the same bytes. Far faster than the scalar
        // loop for up to 31 items. These sizes' kernels do every whole
        // group; the windowed ones stop where a group's 16-byte loads
        // would pass the end, and items wider than 16 bytes already end on
        // such a group (`overlapping_groups`).
        let from = n - LANES;
        return shuffle_rows(
            typesize,
            LANES,
            stride,
            &src[from * typesize..],
            &mut dst[from..],
        );
    }
    scalar::shuffle_items(typesize, n, stride, done, src, dst);
}

/// Unshuffle; requires `src.len() == dst.len()` and `2 <= typesize <= len`.
/// Falls back to scalar if the CPU lacks AVX2.
pub(crate) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    if !is_x86_feature_detected!("avx2") {
        return scalar::unshuffle(typesize, src, dst);
    }
    let n = src.len() / typesize;
    if n < LANES && matches!(typesize, 2 | 4 | 8 | 16) {
        // As in `shuffle_rows`.
        return super::sse2::unshuffle(typesize, src, dst);
    }
    // SAFETY: as in `shuffle`.
    let done = unsafe {
        match typesize {
            2 => unshuffle_pow2::<2, 1, _>(n, &Strided { src, n }, dst),
            4 => unshuffle_pow2::<4, 2, _>(n, &Strided { src, n }, dst),
            8 => unshuffle_pow2::<8, 3, _>(n, &Strided { src, n }, dst),
            16 if n >= stage_items(16) && read_rows_crowd_l1((0..16).map(|j| j * n)) => {
                with_stage(|stage| unshuffle_staged(stage, n, &Strided { src, n }, dst))
            }
            16 => unshuffle_pow2::<16, 4, _>(n, &Strided { src, n }, dst),
            3 => unshuffle_narrow::<3>(n, src, dst),
            5 => unshuffle_narrow::<5>(n, src, dst),
            6 => unshuffle_narrow::<6>(n, src, dst),
            7 => unshuffle_narrow::<7>(n, src, dst),
            12 => unshuffle_12(n, src, dst),
            17.. if n >= stage_items(16) && read_rows_crowd_l1((0..16).map(|j| j * n)) => {
                with_stage(|stage| unshuffle_wide_staged(stage, typesize, n, src, dst))
            }
            17.. => unshuffle_wide(typesize, n, 0, src, dst),
            _ => unshuffle_windows(typesize, n, src, dst),
        }
    };
    let done = match typesize {
        // SAFETY: as above, for the rows' last 32 items.
        2 | 4 | 8 | 16 => unsafe { last_group(typesize, n, done, &Strided { src, n }, dst) },
        _ => done,
    };
    scalar::unshuffle_items(typesize, n, done, src, dst);
    scalar::copy_tail(typesize, n, src, dst);
}

/// Items of `N` bytes, `N` = 4, 8 or 16. Whole 32-byte loads put items in
/// runs of `16 / N` into lane 0 alternating with runs into lane 1, so after
/// the four zips each row holds its runs lane-interleaved; one or two
/// permutes put them back in order (16-byte items go through
/// [`shuffle_16`], the same steps in two halves). Row `j` goes to
/// `dst[j * stride..]`. Returns the number of items done.
///
/// # Safety
/// AVX2 is available; `src` holds at least `n * N` bytes, `stride >= n` and
/// `dst` holds at least `(N - 1) * stride + n` bytes.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_pow2<const N: usize>(
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    debug_assert!(N == 4 || N == 8 || N == 16);
    if N == 16 {
        return shuffle_16(n, stride, src, dst);
    }
    let interleave_words = _mm256_setr_epi8(
        0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15, //
        0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
    );
    let groups = n / LANES;
    for g in 0..groups {
        let e0 = g * LANES;
        let mut v = [_mm256_setzero_si256(); N];
        for (a, x) in v.iter_mut().enumerate() {
            // Items e0..e0 + 32 lie inside the buffer (e0 + 32 <= n).
            *x = load(src, e0 * N + 32 * a);
        }
        for _ in 0..4 {
            zip(&mut v);
        }
        for (j, x) in v.iter().enumerate() {
            let row = if N == 4 {
                // Runs of 4 items (dwords): lane 0 holds runs 0, 2, 4, 6.
                _mm256_permutevar8x32_epi32(*x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
            } else {
                // Runs of 2 items (words), lane 0 holding the even runs:
                // gather the first halves of both lanes in lane 0 and the
                // second halves in lane 1, then interleave the two halves of
                // each lane.
                let halves = _mm256_permute4x64_epi64::<0b11_01_10_00>(*x);
                _mm256_shuffle_epi8(halves, interleave_words)
            };
            store(dst, j * stride + e0, row);
        }
    }
    groups * LANES
}

/// [`shuffle_pow2`] of 16-byte items in two halves of eight rows. The first
/// of its four zip rounds pairs vector `a` with `a + 8`; rows 0 to 7 come
/// from the low halves of those pairs alone and rows 8 to 15 from the high
/// halves, each through three more rounds on eight vectors. So each half
/// loads the 16 vectors again (from L1) and keeps only eight: the same 96
/// shuffle-port operations per 32 items as the 16-vector form, which on
/// AVX2's 16 registers spilled about 15 of them to the stack and back.
///
/// # Safety
/// As for [`shuffle_pow2`] with `N` = 16.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_16(n: usize, stride: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let interleave_bytes = _mm256_setr_epi8(
        0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, //
        0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
    );
    let groups = n / LANES;
    for g in 0..groups {
        let e0 = g * LANES;
        for half in 0..2 {
            let mut v = [_mm256_setzero_si256(); 8];
            for (a, x) in v.iter_mut().enumerate() {
                // Items e0..e0 + 32 lie inside the buffer (e0 + 32 <= n).
                let (p, q) = (
                    load(src, e0 * 16 + 32 * a),
                    load(src, e0 * 16 + 32 * (a + 8)),
                );
                *x = if half == 0 {
                    _mm256_unpacklo_epi8(p, q)
                } else {
                    _mm256_unpackhi_epi8(p, q)
                };
            }
            for _ in 0..3 {
                zip(&mut v);
            }
            for (j, x) in v.iter().enumerate() {
                // Lane 0 holds the even items: gather the first halves of
                // both lanes in lane 0 and the second halves in lane 1, then
                // interleave the two halves of each lane.
                let halves = _mm256_permute4x64_epi64::<0b11_01_10_00>(opaque(*x));
                let row = _mm256_shuffle_epi8(halves, interleave_bytes);
                store(dst, (8 * half + j) * stride + e0, row);
            }
        }
    }
    groups * LANES
}

/// `x`, through an empty `asm!` the optimizer cannot see into, so that it
/// computes the operations before and after it as written. In
/// [`shuffle_16`] LLVM merged the last zip round with each row's permute and
/// byte shuffle into two permutes, two byte shuffles and a blend per row:
/// 104 shuffle-port operations per 32 items where the source has 96, which
/// ran slower on Zen 4.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn opaque(mut x: __m256i) -> __m256i {
    // SAFETY: the template is a comment: no instruction runs, no memory,
    // stack or flags are touched, and `x` comes back in its own register.
    std::arch::asm!("/* {0} */", inout(ymm_reg) x, options(pure, nomem, nostack, preserves_flags));
    x
}

/// Items per piece of [`shuffle_staged`] with `N`-byte items: `N` groups,
/// so a piece is `N * N * 32` bytes (2 KiB of 8-byte items, 8 KiB of
/// 16-byte ones; on Zen 4, halving or doubling either ran slower).
const fn stage_items(n: usize) -> usize {
    n * LANES
}

/// Distance between the rows of a stage for `N`-byte items: a piece's row
/// plus one cache line, so the stage's rows start in different L1 sets.
const fn stage_pitch(n: usize) -> usize {
    stage_items(n) + 64
}

/// Bytes of the largest stage: 16 rows of [`stage_pitch`]`(16)`, for
/// 16-byte items and the 16-byte windows of wider ones. Kernels for `N`-byte
/// items use its first `N` rows of `stage_pitch(N)` bytes.
const STAGE_BYTES: usize = 16 * stage_pitch(16);

thread_local! {
    /// This thread's stage, allocated and zeroed once. A zeroed stage on
    /// the stack, as it was, cost 2.5 KiB of writes per call for 8-byte
    /// items and 9 KiB for 16-byte ones: more than the kernel itself for
    /// small blocks, and for every 8 KiB piece the shuffle+BYTEDELTA
    /// encoder hands over. Its contents never matter: every byte a kernel
    /// reads from it, it wrote first. On the heap, not in the thread-local
    /// itself: glibc carves a library's static thread-locals out of every
    /// thread's stack, and 9 KiB of them overflowed a C caller's 32 KiB
    /// thread (`tests-c/test_small_stack.c`).
    static STAGE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's stage ([`STAGE`]; a fresh one where
/// [`crate::scratch::with_kept`] says), [`STAGE_BYTES`] long and starting
/// on a cache line, so that its rows start where [`stage_pitch`] puts them
/// relative to the L1 sets and no 32-byte access splits a line.
fn with_stage<T>(f: impl FnOnce(&mut [u8]) -> T) -> T {
    crate::scratch::with_kept_bytes(&STAGE, STAGE_BYTES + 63, |buf| {
        // At most 63 for bytes; `min` only keeps the slice in bounds.
        let at = buf.as_ptr().align_offset(64).min(63);
        f(&mut buf[at..at + STAGE_BYTES])
    })
}

/// Bytes of one way of the L1 data cache (its sets times its line): 4 KiB on
/// the x86-64 cores this was measured on (Zen 4, and Intel's since Sandy
/// Bridge). Addresses a multiple of this apart fall in the same set.
pub(crate) const L1_WAY: usize = 4096;

/// Whether `rows` rows `stride` bytes apart would put more than four of
/// their write fronts in one L1 set. [`shuffle_pow2`] stores 32 bytes to
/// every row in turn, so the lines at those fronts are all live at once; a
/// stride that is a multiple of 4 KiB (the contiguous shuffle of a
/// power-of-two block) or just past one (a split block's rows written into
/// the chunk, each behind its 4-byte size) puts all of them in one set, and
/// 8 or 16 such lines overflow its ways (`bash scripts/shuffle-bench.sh`
/// shows it: a 256 KiB block shuffles markedly slower than a 257 KiB one).
pub(super) fn rows_crowd_l1(rows: usize, stride: usize) -> bool {
    crowd_l1((0..rows).map(|j| j * stride), 4)
}

/// Whether the rows [`shuffle_windows`] writes for items of `typesize > 16`
/// bytes, `stride` bytes apart, crowd the L1 cache: a window's 16 rows as
/// in [`rows_crowd_l1`], or all the item's rows (each group writes to every
/// one) more than 16 to a set: below that the stage costs more than it
/// saves (`bash scripts/shuffle-bench.sh --typesizes 64,128`).
pub(super) fn wide_rows_crowd_l1(typesize: usize, stride: usize) -> bool {
    rows_crowd_l1(16, stride) || crowd_l1((0..typesize).map(|j| j * stride), 16)
}

/// Whether more than `most` of `addresses` fall in one L1 set.
fn crowd_l1(mut addresses: impl Iterator<Item = usize>, most: u8) -> bool {
    let mut per_set = [0u8; L1_WAY / 64];
    addresses.any(|a| {
        let set = &mut per_set[a % L1_WAY / 64];
        *set += 1;
        *set > most
    })
}

/// Whether the rows an unshuffle of 16-byte items reads, starting at
/// `addresses`, crowd the L1 cache. Loads tolerate more rows per set than
/// stores: 8 rows a multiple of 4 KiB apart (8-byte items) unshuffle at full
/// speed, 16 do not.
pub(super) fn read_rows_crowd_l1(addresses: impl Iterator<Item = usize>) -> bool {
    crowd_l1(addresses, 8)
}

/// [`shuffle_pow2`] through a stage, for rows that crowd the L1 cache
/// ([`rows_crowd_l1`]): each piece of [`stage_items`] items is transposed
/// into a small buffer (which stays in L1) whose rows are
/// [`stage_pitch`] apart, then each row of the piece is copied out whole,
/// one row after the other, so the writes to `dst` go to one row at a time.
/// `stage` is at least [`STAGE_BYTES`] long. Returns the number of items
/// done.
///
/// # Safety
/// As for [`shuffle_pow2`].
#[target_feature(enable = "avx2")]
unsafe fn shuffle_staged<const N: usize>(
    stage: &mut [u8],
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let (items, pitch) = (stage_items(N), stage_pitch(N));
    assert!(stage.len() >= N * pitch);
    let pieces = n / items;
    for p in 0..pieces {
        let e0 = p * items;
        // The piece's items lie inside `src` (e0 + items <= n), and the
        // stage holds `N` rows of `pitch >= items` bytes.
        shuffle_pow2::<N>(items, pitch, &src[e0 * N..], stage);
        for j in 0..N {
            for k in (0..items).step_by(32) {
                // Row j of `dst` holds `n >= e0 + items` bytes.
                store(dst, j * stride + e0 + k, load(stage, j * pitch + k));
            }
        }
    }
    let done = pieces * items;
    // The items after the last whole piece, directly.
    done + shuffle_pow2::<N>(n - done, stride, &src[done * N..], &mut dst[done..])
}

/// Two-byte items, 32 per step, without a byte shuffle: masking each item
/// to its low byte (or shifting its high byte down) and packing two such
/// vectors with unsigned saturation gives a row's bytes of both, lane by
/// lane, so one qword permute puts each row's 32 bytes in order: four
/// shuffle-port operations and two whole stores per 32 items, fewer than a
/// byte shuffle per vector takes (`bash scripts/shuffle-bench.sh`). Row 1
/// goes to `dst[stride..]`.
/// Returns the number of items done.
///
/// # Safety
/// AVX2 is available; `src` holds at least `n * 2` bytes, `stride >= n` and
/// `dst` holds at least `stride + n` bytes.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_2(n: usize, stride: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let low = _mm256_set1_epi16(0xff);
    let groups = n / LANES;
    for g in 0..groups {
        let e0 = g * LANES;
        let a = load(src, 2 * e0);
        let b = load(src, 2 * e0 + 32);
        // Lane by lane: a's 8 bytes of the row, then b's.
        let row0 = _mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
        let row1 = _mm256_packus_epi16(_mm256_srli_epi16::<8>(a), _mm256_srli_epi16::<8>(b));
        store(dst, e0, _mm256_permute4x64_epi64::<0b11_01_10_00>(row0));
        store(
            dst,
            stride + e0,
            _mm256_permute4x64_epi64::<0b11_01_10_00>(row1),
        );
    }
    groups * LANES
}

/// Where an unshuffle kernel finds row (byte plane) `j`: its 32 bytes from
/// item `e0` on.
trait Rows {
    /// # Safety
    /// AVX2 is available; row `j` holds at least `e0 + 32` bytes.
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i;
}

/// Rows of `n` bytes one after the other in `src` (a shuffled buffer).
struct Strided<'a> {
    src: &'a [u8],
    n: usize,
}

impl Rows for Strided<'_> {
    #[inline(always)]
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i {
        load(self.src, j * self.n + e0)
    }
}

/// Rows wherever they lie, one slice each.
struct Planes<'a>([&'a [u8]; 16]);

impl Rows for Planes<'_> {
    #[inline(always)]
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i {
        // The caller's contract covers `j` as well as the bytes.
        load(self.0.get_unchecked(j), e0)
    }
}

/// Rows given as an array, as the block decoder gathers them (see
/// [`unshuffle_byte_rows`]): read in place, not copied into [`Planes`].
impl Rows for [&[u8]; 16] {
    #[inline(always)]
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i {
        // The caller's contract covers `j` as well as the bytes.
        load(self.get_unchecked(j), e0)
    }
}

/// [`Planes`] some of which are one value throughout: such a row is a
/// vector of its value, read at offset 0 for every item (its `at` mask is
/// 0), so the kernels take both kinds without a branch. A type of its own
/// because the masks cost registers the kernels of all-bytes planes (the
/// usual case) would rather keep: with them those ran slower.
struct PlanesAndRuns<'a> {
    rows: [&'a [u8]; 16],
    at: [usize; 16],
}

impl Rows for PlanesAndRuns<'_> {
    #[inline(always)]
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i {
        // The caller's contract covers `j` as well as the bytes (a run's 32
        // bytes are read at 0).
        load(self.rows.get_unchecked(j), e0 & self.at.get_unchecked(j))
    }
}

/// Unshuffle from `planes.len()` separate byte planes of `n` items each
/// into `dst` (`n * planes.len()` bytes): see `super::unshuffle_planes`.
/// Item sizes 2, 4, 8 and 16 run the vector kernel, others the scalar loop.
///
/// On a small block the setup is most of the cost, so the rows are
/// gathered and checked in one pass, and the table of run vectors is only
/// built when some plane is a run (the usual planes are all bytes; see
/// `scripts/instructions.sh small/decompress_ctx/blosclz/1024B`).
///
/// # Panics
/// If a plane of bytes is not `n` bytes long or `dst` is shorter than `n *
/// planes.len()`.
pub(crate) fn unshuffle_planes(planes: &[Plane<'_>], n: usize, dst: &mut [u8]) {
    let typesize = planes.len();
    assert!(dst.len() >= n * typesize, "unshuffle_planes: dst too short");
    if !is_x86_feature_detected!("avx2") || !matches!(typesize, 2 | 4 | 8 | 16) {
        assert!(
            planes.iter().all(|p| match p {
                Plane::Bytes(b) => b.len() == n,
                Plane::Run(_) => true,
            }),
            "unshuffle_planes: a plane is not {n} bytes long"
        );
        return scalar::unshuffle_plane_items(planes, n, 0, dst);
    }
    let mut rows = Planes([&[]; 16]);
    let mut any_run = false;
    for (row, plane) in rows.0.iter_mut().zip(planes) {
        match *plane {
            Plane::Bytes(bytes) => {
                assert!(
                    bytes.len() == n,
                    "unshuffle_planes: a plane is not {n} bytes long"
                );
                *row = bytes;
            }
            Plane::Run(_) => any_run = true,
        }
    }
    // Only 16 rows can crowd a set for reads (`read_rows_crowd_l1`).
    let crowded = typesize == 16
        && read_rows_crowd_l1(planes.iter().filter_map(|p| match p {
            Plane::Bytes(b) => Some(b.as_ptr() as usize),
            Plane::Run(_) => None,
        }));
    let done = if any_run {
        unshuffle_planes_and_runs(planes, rows.0, n, crowded, dst)
    } else {
        // SAFETY: AVX2 was detected just above; the loop gave each of the
        // `typesize` rows `n` bytes, and `dst` has `n * typesize` bytes.
        unsafe {
            let done = unshuffle_rows(typesize, n, &rows, crowded, dst);
            last_group(typesize, n, done, &rows, dst)
        }
    };
    if done < n {
        scalar::unshuffle_plane_items(planes, n, done, dst);
    }
}

/// [`unshuffle_planes`] of planes that are all bytes, given as the rows
/// `rows[..typesize]`, each `dst.len() / typesize` bytes long: the split
/// block decoder's usual case. It gathers its rows itself, and wrapping
/// each in a [`Plane`] only for them to be sorted back into rows here cost
/// ten times the vector kernel's own setup on a 1 KiB block
/// (`scripts/instructions.sh small/decompress_ctx/blosclz/1024B`).
///
/// # Panics
/// If `typesize` is 0 or above 16, `dst.len()` is not a multiple of it, or
/// a row is not `dst.len() / typesize` bytes long.
pub(crate) fn unshuffle_byte_rows(rows: &[&[u8]; 16], typesize: usize, dst: &mut [u8]) {
    assert!(
        (1..=16).contains(&typesize) && dst.len() % typesize == 0,
        "unshuffle_byte_rows: {} bytes are not whole items of {typesize}",
        dst.len()
    );
    let n = dst.len() / typesize;
    assert!(
        rows[..typesize].iter().all(|r| r.len() == n),
        "unshuffle_byte_rows: a row is not {n} bytes long"
    );
    if !is_x86_feature_detected!("avx2") || !matches!(typesize, 2 | 4 | 8 | 16) {
        return rows_by_scalar(rows, typesize, n, 0, dst);
    }
    // Only 16 rows can crowd a set for reads (`read_rows_crowd_l1`).
    let crowded = typesize == 16 && read_rows_crowd_l1(rows.iter().map(|r| r.as_ptr() as usize));
    // SAFETY: AVX2 was detected just above; each of the `typesize` rows
    // was checked to hold `n` bytes, and `dst` has `n * typesize` bytes.
    let done = unsafe {
        let done = unshuffle_rows(typesize, n, rows, crowded, dst);
        last_group(typesize, n, done, rows, dst)
    };
    if done < n {
        rows_by_scalar(rows, typesize, n, done, dst);
    }
}

/// The scalar loop over `rows[..typesize]` from item `first` on, for what
/// [`unshuffle_byte_rows`] leaves to it (rare: no vector kernel, or a block
/// of at most 32 items).
#[cold]
#[inline(never)]
fn rows_by_scalar(rows: &[&[u8]; 16], typesize: usize, n: usize, first: usize, dst: &mut [u8]) {
    let mut planes = [Plane::Run(0); 16];
    for (plane, row) in planes.iter_mut().zip(rows) {
        *plane = Plane::Bytes(row);
    }
    scalar::unshuffle_plane_items(&planes[..typesize], n, first, dst);
}

/// [`unshuffle_planes`]' vector kernels when some planes are runs: `rows`
/// holds the planes of bytes, each `n` bytes long, and each run becomes a
/// vector of its value read at 0 for every item. Returns the items done.
/// AVX2 must be available (the caller detected it).
#[inline(never)]
fn unshuffle_planes_and_runs(
    planes: &[Plane<'_>],
    rows: [&[u8]; 16],
    n: usize,
    crowded: bool,
    dst: &mut [u8],
) -> usize {
    let mut runs = [[0u8; 32]; 16];
    let mut at = [usize::MAX; 16];
    for (j, plane) in planes.iter().enumerate() {
        if let Plane::Run(value) = *plane {
            runs[j] = [value; 32];
            at[j] = 0;
        }
    }
    let mut rows: [&[u8]; 16] = rows;
    for (j, plane) in planes.iter().enumerate() {
        if let Plane::Run(_) = *plane {
            rows[j] = &runs[j];
        }
    }
    let rows = PlanesAndRuns { rows, at };
    // SAFETY: the caller detected AVX2 and checked every plane of bytes
    // (`planes.len()` of them, 2, 4, 8 or 16) to hold `n` bytes; every run
    // row is read at 0 (`at`), and `dst` has `n * planes.len()` bytes.
    unsafe {
        let done = unshuffle_rows(planes.len(), n, &rows, crowded, dst);
        last_group(planes.len(), n, done, &rows, dst)
    }
}

/// After [`unshuffle_rows`] did `done` of `n` items: the items left (fewer
/// than a group) as one more group ending at the last item, whose items
/// shared with the group before are written again with the same bytes.
/// Far faster than the scalar loop for up to 31 items; only blocks of at
/// most 32 items leave any to it. Returns the items done.
///
/// # Safety
/// As for [`unshuffle_rows`] with `crowded` false.
#[inline(always)]
unsafe fn last_group<R: Rows>(
    typesize: usize,
    n: usize,
    done: usize,
    rows: &R,
    dst: &mut [u8],
) -> usize {
    if done >= n || n <= LANES || n - done >= LANES {
        return done;
    }
    let from = n - LANES;
    let rest = RowsFrom { rows, at: from };
    from + unshuffle_rows(typesize, LANES, &rest, false, &mut dst[from * typesize..])
}

/// The unshuffle of `n` items of `typesize` = 2, 4, 8 or 16 bytes from
/// `rows`, through the stage for 16 `crowded` rows; returns the items done.
///
/// # Safety
/// AVX2 is available; each of the `typesize` rows holds what [`Rows`]
/// reads for `n` items and `dst` at least `n * typesize` bytes.
#[inline(always)]
unsafe fn unshuffle_rows<R: Rows>(
    typesize: usize,
    n: usize,
    rows: &R,
    crowded: bool,
    dst: &mut [u8],
) -> usize {
    match typesize {
        2 => unshuffle_pow2::<2, 1, _>(n, rows, dst),
        4 => unshuffle_pow2::<4, 2, _>(n, rows, dst),
        8 => unshuffle_pow2::<8, 3, _>(n, rows, dst),
        _ if crowded && n >= stage_items(16) => {
            with_stage(|stage| unshuffle_staged(stage, n, rows, dst))
        }
        _ => unshuffle_pow2::<16, 4, _>(n, rows, dst),
    }
}

/// Rows of another [`Rows`] from item `at` on.
struct RowsFrom<'a, R: Rows> {
    rows: &'a R,
    at: usize,
}

impl<R: Rows> Rows for RowsFrom<'_, R> {
    #[inline(always)]
    unsafe fn row(&self, j: usize, e0: usize) -> __m256i {
        self.rows.row(j, self.at + e0)
    }
}

/// [`unshuffle_pow2`] of 16-byte items through a stage, for rows that crowd
/// the L1 cache: the kernel loads 32 bytes from each of its 16 rows in turn,
/// and 16 rows a multiple of 4 KiB apart overflow the ways of the set they
/// share ([`read_rows_crowd_l1`]; `bash scripts/shuffle-bench.sh` shows
/// the drop at 64 and 256 KiB blocks). Each piece of [`stage_items`] items
/// is copied first, row after row, into a buffer whose rows are
/// [`stage_pitch`] apart, and unshuffled from there. `stage` is at least
/// [`STAGE_BYTES`] long. Returns the number of items done.
///
/// # Safety
/// As for [`unshuffle_pow2`] with `N` = 16.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_staged<R: Rows>(stage: &mut [u8], n: usize, src: &R, dst: &mut [u8]) -> usize {
    const N: usize = 16;
    let (items, pitch) = (stage_items(N), stage_pitch(N));
    assert!(stage.len() >= N * pitch);
    let pieces = n / items;
    for p in 0..pieces {
        let e0 = p * items;
        for j in 0..N {
            for k in (0..items).step_by(32) {
                // Row j of `src` holds `n >= e0 + items` bytes; the stage
                // holds N rows of `pitch >= items` bytes.
                store(stage, j * pitch + k, src.row(j, e0 + k));
            }
        }
        let staged = Strided {
            src: &*stage,
            n: pitch,
        };
        // `dst` holds n * N >= (e0 + items) * N bytes.
        unshuffle_pow2::<N, 4, _>(items, &staged, &mut dst[e0 * N..]);
    }
    let done = pieces * items;
    // The items after the last whole piece, directly.
    let rest = RowsFrom {
        rows: src,
        at: done,
    };
    done + unshuffle_pow2::<N, 4, _>(n - done, &rest, &mut dst[done * N..])
}

/// Inverse of [`shuffle_pow2`], `P = log2(N)`, reading the `N` rows (byte
/// planes) through `src`.
///
/// # Safety
/// AVX2 is available; each of `src`'s first `N` rows holds at least `n`
/// bytes and `dst` at least `n * N`.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_pow2<const N: usize, const P: usize, R: Rows>(
    n: usize,
    src: &R,
    dst: &mut [u8],
) -> usize {
    let groups = n / LANES;
    // Last items first. The rows usually come straight from a codec that
    // wrote them front to back, so their ends are what is still in L1
    // cache; read front first, those ends are evicted by the output's
    // stores before the loop reaches them. (On Zen 4 this made the one-thread
    // decompression of `noisysine-f4/lz4hc/c1/shuffle/t1`, 32 KiB blocks
    // whose 4 rows and output fill L1 twice over, about 2% faster.)
    for g in (0..groups).rev() {
        let e0 = g * LANES;
        let mut v = [_mm256_setzero_si256(); N];
        for (j, x) in v.iter_mut().enumerate() {
            *x = src.row(j, e0);
        }
        for _ in 0..P {
            zip(&mut v);
        }
        // Vector a holds output bytes 16a.. of items e0.. (lane 0) and of
        // items e0 + 16.. (lane 1): pair them into contiguous 32-byte runs.
        // Stored in address order.
        for b in 0..N / 2 {
            let lo = _mm256_permute2x128_si256::<0x20>(v[2 * b], v[2 * b + 1]);
            store(dst, e0 * N + 32 * b, lo);
        }
        for b in 0..N / 2 {
            let hi = _mm256_permute2x128_si256::<0x31>(v[2 * b], v[2 * b + 1]);
            store(dst, (e0 + 16) * N + 32 * b, hi);
        }
    }
    groups * LANES
}

/// Any other item size, by 16-byte windows (see `super::transpose`); row
/// `j` goes to `dst[j * stride..]`. Each window's 16x16 transpose runs in
/// two halves of eight rows, as in [`shuffle_16`]: the first zip round pairs
/// item `a` with item `a + 8`, its low halves alone make rows 0 to 7 and its
/// high halves rows 8 to 15, each through three more rounds on eight
/// vectors. Loading the items twice (from L1) costs less than the stack
/// spills of the 16-vector form (`bash scripts/shuffle-bench.sh
/// --typesizes 24,40`). Items of up to eight bytes need one half, and so
/// does the last window of an item whose other half an earlier window made
/// ([`first_half_done`]). Items wider than 16 bytes are covered to the
/// last one by [`overlapping_groups`].
///
/// # Safety
/// AVX2 is available; `src` holds at least `n * typesize` bytes, `stride >=
/// n` and `dst` holds at least `(typesize - 1) * stride + n` bytes.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_windows(
    typesize: usize,
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let (groups, done) = if typesize > 16 {
        overlapping_groups(0, n)
    } else {
        let whole = whole_groups(typesize, n, n * typesize, LANES);
        (
            GroupStarts {
                from: 0,
                whole,
                tail: None,
            },
            whole * LANES,
        )
    };
    for e0 in groups {
        for Window { start, rows } in windows(typesize) {
            // whole_groups keeps (e0 + 31) * typesize + start + 16 <= len,
            // and overlapping_groups keeps e0 + 32 <= n.
            let at = e0 * typesize + start;
            if !first_half_done(typesize, start) {
                let v = window_half::<0>(src, at, typesize);
                store_rows(dst, (start * stride + e0, stride), v, rows);
            }
            if rows > 8 {
                let v = window_half::<1>(src, at, typesize);
                store_rows(dst, ((start + 8) * stride + e0, stride), v, rows - 8);
            }
        }
    }
    done
}

/// Whether the first eight rows of the window at `start` of a
/// `typesize`-byte item are rows an earlier window of the item made: for
/// the last window of an item wider than 16 bytes, moved back to end at the
/// item's end, when the item's last partial 16 bytes are at most 8 (24- or
/// 40-byte items, say). The shuffle skips them, saving a quarter of the
/// work on 24-byte items and a sixth on 40-byte ones; the unshuffle
/// transposes the window's last 8 rows alone ([`rows_last8`]; `bash
/// scripts/shuffle-bench.sh --typesizes 17,24`).
#[inline(always)]
fn first_half_done(typesize: usize, start: usize) -> bool {
    typesize > 16 && start % 16 != 0 && typesize % 16 <= 8
}

/// The first items of groups of [`LANES`] items: `whole` groups one after
/// the other from `from`, then `tail` if any (see [`overlapping_groups`]; the
/// narrow windowed sizes have no tail).
#[derive(Clone)]
struct GroupStarts {
    from: usize,
    whole: usize,
    tail: Option<usize>,
}

impl Iterator for GroupStarts {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.whole > 0 {
            self.whole -= 1;
            let e0 = self.from;
            self.from += LANES;
            return Some(e0);
        }
        self.tail.take()
    }
}

/// The groups a kernel whose groups write their own items and nothing else
/// (items wider than 16 bytes, each window inside its item; 12-byte items;
/// the narrow gathers) runs on to cover items `from..n` (`from <= n`), and
/// where the items it covers end. Whole groups from `from` on, then, when items are
/// left over and there are at least [`LANES`] items, one more group ending
/// at item `n`: it overlaps the group before, whose items it writes again
/// with the same bytes. Left to the scalar loop, those few items cost much
/// of the time of a small block (`bash scripts/shuffle-bench.sh
/// --typesizes 40,100 --blocksizes 32768`).
fn overlapping_groups(from: usize, n: usize) -> (GroupStarts, usize) {
    let whole = (n - from) / LANES;
    let end = from + whole * LANES;
    let tail = (end < n && n >= LANES).then(|| n - LANES);
    let done = if tail.is_some() { n } else { end };
    (GroupStarts { from, whole, tail }, done)
}

/// Rows `8 * HALF..8 * HALF + 8` of the 16x16 transpose of a window: the
/// 16 bytes at `src[at + i * typesize..]` of items `i` = 0 to 31 (lane 0
/// items 0 to 15, lane 1 items 16 to 31), as eight vectors, each a row's
/// 32 bytes in item order.
///
/// # Safety
/// AVX2 is available; `src` holds `at + 31 * typesize + 16` bytes.
#[inline(always)]
unsafe fn window_half<const HALF: usize>(src: &[u8], at: usize, typesize: usize) -> [__m256i; 8] {
    // Opaque: LLVM, knowing that `src` and the output do not overlap,
    // otherwise loads the window once for both halves and keeps its 16
    // vectors live across them, spilling.
    let mut p = src.as_ptr().add(opaque_index(at));
    let step = 8 * typesize;
    let mut v = [_mm256_setzero_si256(); 8];
    for x in v.iter_mut() {
        // Items a and a + 16, then a + 8 and a + 24.
        let lo = _mm256_loadu2_m128i(p.add(2 * step) as *const __m128i, p as *const __m128i);
        let hi = _mm256_loadu2_m128i(
            p.add(3 * step) as *const __m128i,
            p.add(step) as *const __m128i,
        );
        *x = if HALF == 0 {
            _mm256_unpacklo_epi8(lo, hi)
        } else {
            _mm256_unpackhi_epi8(lo, hi)
        };
        p = p.add(typesize);
    }
    for _ in 0..3 {
        zip(&mut v);
    }
    v
}

/// Stores the first `count` (at most 8) of `v` to `dst`, vector `t` at
/// `first + t * stride` for `(first, stride) = rows`.
///
/// # Safety
/// AVX2 is available; every store lies inside `dst`.
#[inline(always)]
unsafe fn store_rows(dst: &mut [u8], rows: (usize, usize), v: [__m256i; 8], count: usize) {
    let (mut at, stride) = rows;
    if count >= 8 {
        for x in v {
            store(dst, at, x);
            at += stride;
        }
    } else {
        for x in v.into_iter().take(count) {
            store(dst, at, x);
            at += stride;
        }
    }
}

/// [`shuffle_windows`] for items wider than 16 bytes whose rows crowd the
/// L1 cache ([`wide_rows_crowd_l1`]): a piece of [`stage_items`]`(16)` items at
/// a time, each window's 16 rows are transposed into a stage whose rows
/// are [`stage_pitch`] apart, then copied out one row after the other, as
/// [`shuffle_staged`] does for 8- and 16-byte items. Returns the number of
/// items done.
///
/// # Safety
/// As for [`shuffle_windows`], with `typesize > 16`.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_wide_staged(
    stage: &mut [u8],
    typesize: usize,
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    debug_assert!(typesize > 16);
    let (items, pitch) = (stage_items(16), stage_pitch(16));
    assert!(stage.len() >= 16 * pitch);
    let pieces = n / items;
    for p in 0..pieces {
        let e0 = p * items;
        for Window { start, .. } in windows(typesize) {
            // Stage rows 0 to 7 stay stale (and are not copied out) when an
            // earlier window made them.
            let first = if first_half_done(typesize, start) {
                8
            } else {
                0
            };
            for g in (0..items).step_by(LANES) {
                // Item e0 + g + 31's window ends inside the item, by
                // n * typesize; the stage holds 16 rows of pitch >= items.
                let at = (e0 + g) * typesize + start;
                if first == 0 {
                    let v = window_half::<0>(src, at, typesize);
                    store_rows(stage, (g, pitch), v, 8);
                }
                let v = window_half::<1>(src, at, typesize);
                store_rows(stage, (8 * pitch + g, pitch), v, 8);
            }
            for j in first..16 {
                for k in (0..items).step_by(32) {
                    // Row start + j of `dst` holds n >= e0 + items bytes.
                    store(
                        dst,
                        (start + j) * stride + e0 + k,
                        load(stage, j * pitch + k),
                    );
                }
            }
        }
    }
    // The items after the last whole piece, directly, from far enough back
    // for a whole group when there are fewer left (pieces > 0 here only
    // when n >= items > LANES).
    let done = pieces * items;
    let from = if n - done < LANES && pieces > 0 {
        n - LANES
    } else {
        done
    };
    from + shuffle_windows(
        typesize,
        n - from,
        stride,
        &src[from * typesize..],
        &mut dst[from..],
    )
}

/// `i`, through an empty `asm!` that the optimizer must assume has an
/// effect, so that it neither merges two uses of the same index nor hoists
/// the loads that depend on it out of their loop.
#[inline(always)]
fn opaque_index(mut i: usize) -> usize {
    // SAFETY: the template is a comment: no instruction runs, no memory,
    // stack or flags are touched, and `i` comes back in its own register.
    unsafe { std::arch::asm!("/* {0} */", inout(reg) i, options(nomem, nostack, preserves_flags)) };
    i
}

/// Inverse of [`shuffle_windows`]. Narrow items spill into the next item,
/// so all lane-0 items are stored before the lane-1 items, in increasing order.
///
/// # Safety
/// AVX2 is available; `src` and `dst` hold at least `n * typesize` bytes.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_windows(typesize: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let groups = whole_groups(typesize, n, n * typesize, LANES);
    for g in 0..groups {
        let e0 = g * LANES;
        for Window { start, rows } in windows(typesize) {
            let mut v = [_mm256_setzero_si256(); 16];
            for (t, x) in v.iter_mut().enumerate() {
                // Rows past the item (narrow items) are don't-cares: reload
                // row `start` rather than branch, so the loop fully unrolls.
                let t = if t < rows { t } else { 0 };
                *x = load(src, (start + t) * n + e0);
            }
            for _ in 0..4 {
                zip(&mut v);
            }
            for (i, x) in v.iter().enumerate() {
                store_lane::<0>(dst, (e0 + i) * typesize + start, *x);
            }
            for (i, x) in v.iter().enumerate() {
                store_lane::<1>(dst, (e0 + 16 + i) * typesize + start, *x);
            }
        }
    }
    groups * LANES
}

/// [`unshuffle_windows`] for items wider than 16 bytes, from item `from`
/// on ([`overlapping_groups`]); returns where the items done end. Each window lies
/// inside its item, so the stores may go in any order. One window at a time
/// over all the items (the reference's order): each pass reads 16 rows
/// rather than every row of the item: all the windows of a group at a time
/// win on small blocks but lose badly where the rows are 2 KiB apart
/// (`bash scripts/shuffle-bench.sh`). The
/// transpose runs in two halves like [`window_half`]'s: items 0 to 7 of each
/// lane come from the low halves of the first zip round alone, items 8 to
/// 15 from the high halves.
///
/// # Safety
/// AVX2 is available; `typesize > 16`; `from <= n`; `src` and `dst` hold
/// at least `n * typesize` bytes.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_wide(
    typesize: usize,
    n: usize,
    from: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    debug_assert!(typesize > 16 && from <= n);
    let (starts, done) = overlapping_groups(from, n);
    for Window { start, .. } in windows(typesize) {
        for e0 in starts.clone() {
            // Rows start.. from item e0 on, and window `start` of item e0:
            // rows hold n >= e0 + 32 bytes, items end by n * typesize.
            let rows_at = start * n + e0;
            let items_at = e0 * typesize + start;
            if first_half_done(typesize, start) {
                // Only the item's last 8 bytes are left.
                let v = rows_last8(src, rows_at + 8 * n, n);
                store_items8(dst, items_at + 8, typesize, v);
                continue;
            }
            let v = rows_half::<0>(src, rows_at, n);
            store_items(dst, items_at, typesize, v);
            let v = rows_half::<1>(src, rows_at, n);
            store_items(dst, items_at + 8 * typesize, typesize, v);
        }
    }
    done
}

/// [`unshuffle_wide`] for rows that crowd the L1 cache
/// ([`read_rows_crowd_l1`]; rows a multiple of 4 KiB apart, as in a
/// power-of-two block of 32-byte items from 128 KiB or 64-byte ones from
/// 256 KiB): each window's 16 rows are copied a piece at a time into a
/// stage whose rows are [`stage_pitch`] apart, and unshuffled from there,
/// as [`unshuffle_staged`] does for 16-byte items. Returns the number of
/// items done.
///
/// # Safety
/// As for [`unshuffle_wide`] with `from` = 0.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_wide_staged(
    stage: &mut [u8],
    typesize: usize,
    n: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let (items, pitch) = (stage_items(16), stage_pitch(16));
    assert!(stage.len() >= 16 * pitch);
    let pieces = n / items;
    for Window { start, .. } in windows(typesize) {
        // The last 8 rows alone when the window's first 8 are done.
        let last8 = first_half_done(typesize, start);
        let first = if last8 { 8 } else { 0 };
        for p in 0..pieces {
            let e0 = p * items;
            for j in first..16 {
                for k in (0..items).step_by(32) {
                    // Row start + j holds n >= e0 + items bytes; the stage
                    // holds 16 rows of pitch >= items bytes.
                    store(stage, j * pitch + k, load(src, (start + j) * n + e0 + k));
                }
            }
            for g in (0..items).step_by(LANES) {
                let items_at = (e0 + g) * typesize + start;
                if last8 {
                    let v = rows_last8(stage, 8 * pitch + g, pitch);
                    store_items8(dst, items_at + 8, typesize, v);
                    continue;
                }
                store_items(dst, items_at, typesize, rows_half::<0>(stage, g, pitch));
                let v = rows_half::<1>(stage, g, pitch);
                store_items(dst, items_at + 8 * typesize, typesize, v);
            }
        }
    }
    // The items after the last whole piece, directly.
    unshuffle_wide(typesize, n, pieces * items, src, dst)
}

/// Items `8 * HALF..8 * HALF + 8` (lane 0) and `16 + 8 * HALF..` (lane 1)
/// of the 16x16 transpose of 16 rows `n` bytes apart from `src[at..]`: eight
/// vectors, each two items' 16 bytes.
///
/// # Safety
/// AVX2 is available; `src` holds `at + 15 * n + 32` bytes.
#[inline(always)]
unsafe fn rows_half<const HALF: usize>(src: &[u8], at: usize, n: usize) -> [__m256i; 8] {
    // Opaque for the reason `window_half` gives.
    let p = src.as_ptr().add(opaque_index(at));
    let mut v = [_mm256_setzero_si256(); 8];
    for (a, x) in v.iter_mut().enumerate() {
        let lo = _mm256_loadu_si256(p.add(a * n) as *const __m256i);
        let hi = _mm256_loadu_si256(p.add((a + 8) * n) as *const __m256i);
        *x = if HALF == 0 {
            _mm256_unpacklo_epi8(lo, hi)
        } else {
            _mm256_unpackhi_epi8(lo, hi)
        };
    }
    for _ in 0..3 {
        zip(&mut v);
    }
    v
}

/// The 8x8 transpose of 8 rows `n` bytes apart from `src[at..]` (32
/// items' last 8 bytes): vector `a` holds items `2a` and `2a + 1` in lane 0
/// and items `16 + 2a` and `17 + 2a` in lane 1, 8 bytes each, as in
/// [`unshuffle_pow2`] of 8-byte items. For the last window of an item
/// whose first 8 rows an earlier window made ([`first_half_done`]): half
/// the loads and shuffles of a 16-row window.
///
/// # Safety
/// AVX2 is available; `src` holds `at + 7 * n + 32` bytes.
#[inline(always)]
unsafe fn rows_last8(src: &[u8], at: usize, n: usize) -> [__m256i; 8] {
    let p = src.as_ptr().add(at);
    let mut v = [_mm256_setzero_si256(); 8];
    for (j, x) in v.iter_mut().enumerate() {
        *x = _mm256_loadu_si256(p.add(j * n) as *const __m256i);
    }
    for _ in 0..3 {
        zip(&mut v);
    }
    v
}

/// Stores [`rows_last8`]'s vectors: the 8 bytes of item `i` at `at + i *
/// typesize`.
///
/// # Safety
/// AVX2 is available; every 8-byte store lies inside `dst`.
#[inline(always)]
unsafe fn store_items8(dst: &mut [u8], at: usize, typesize: usize, v: [__m256i; 8]) {
    let p = dst.as_mut_ptr().add(at);
    for (a, x) in v.into_iter().enumerate() {
        let q = p.add(2 * a * typesize);
        for (lane, q) in [
            (_mm256_castsi256_si128(x), q),
            (_mm256_extracti128_si256::<1>(x), q.add(16 * typesize)),
        ] {
            _mm_storel_epi64(q as *mut __m128i, lane);
            _mm_storeh_pd(q.add(typesize) as *mut f64, _mm_castsi128_pd(lane));
        }
    }
}

/// Stores [`rows_half`]'s vectors: vector `i`'s lane 0 at `at + i *
/// typesize`, its lane 1 sixteen items further.
///
/// # Safety
/// AVX2 is available; every 16-byte store lies inside `dst`.
#[inline(always)]
unsafe fn store_items(dst: &mut [u8], at: usize, typesize: usize, v: [__m256i; 8]) {
    let p = dst.as_mut_ptr().add(at);
    let far = 16 * typesize;
    for (i, x) in v.into_iter().enumerate() {
        let q = p.add(i * typesize);
        _mm256_storeu2_m128i(q.add(far) as *mut __m128i, q as *mut __m128i, x);
    }
}

/// The byte masks of [`unshuffle_narrow`] for `T`-byte items: entry
/// `[c][k]` picks, for each byte of the `c`-th 16 output bytes of a lane's
/// 16 items, that item's byte from row `k` where that byte is row `k`'s,
/// and zero (0x80) elsewhere; the same in both lanes.
const fn narrow_masks<const T: usize>() -> [[[i8; 32]; T]; T] {
    let mut m = [[[0i8; 32]; T]; T];
    let mut c = 0;
    while c < T {
        let mut i = 0;
        while i < 32 {
            let at = 16 * c + i % 16;
            let (item, row) = (at / T, at % T);
            let mut k = 0;
            while k < T {
                m[c][k][i] = if row == k { item as i8 } else { -128 };
                k += 1;
            }
            i += 1;
        }
        c += 1;
    }
    m
}

/// The byte masks of [`shuffle_narrow`] for `T`-byte items: entry `[c][k]`
/// picks, for each of a lane's 16 items, its byte of row `k` from the
/// `c`-th 16 bytes of the lane's items where it lies there, and zero (0x80)
/// elsewhere; the same in both lanes.
const fn narrow_row_masks<const T: usize>() -> [[[i8; 32]; T]; T] {
    let mut m = [[[0i8; 32]; T]; T];
    let mut c = 0;
    while c < T {
        let mut k = 0;
        while k < T {
            let mut i = 0;
            while i < 32 {
                let at = (i % 16) * T + k;
                m[c][k][i] = if at / 16 == c { (at % 16) as i8 } else { -128 };
                i += 1;
            }
            k += 1;
        }
        c += 1;
    }
    m
}

/// Shuffle of `T` = 3, 5 or 6-byte items, 32 at a time, row `j` to
/// `dst[j * stride..]`: the items' bytes are loaded 16 at a time, lane 0
/// from the first 16 items and lane 1 from the next, and each row's 32
/// bytes gathered from them with one byte shuffle (`vpshufb`) per 16 bytes,
/// or-ed together, for one whole store. The last group, if the items are
/// not whole groups, overlaps the one before. Returns the number of items
/// done. It beats [`shuffle_windows`] for 3, 5 and 6-byte items; 7-byte
/// ones (49 shuffles a group) stay with the windows (`bash
/// scripts/shuffle-bench.sh --typesizes 3,5,6,7 --blocksizes 32768,262144`).
///
/// # Safety
/// AVX2 is available; `src` holds at least `n * T` bytes, `stride >= n` and
/// `dst` holds at least `(T - 1) * stride + n` bytes.
#[target_feature(enable = "avx2")]
unsafe fn shuffle_narrow<const T: usize>(
    n: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let (groups, done) = overlapping_groups(0, n);
    for e0 in groups {
        shuffle_narrow_group::<T>(e0, stride, src, dst);
    }
    done
}

/// [`shuffle_narrow`] of items `e0..e0 + 32`.
///
/// # Safety
/// AVX2 is available; `src` holds at least `(e0 + 32) * T` bytes and each
/// row `j * stride + e0 + 32` bytes of `dst`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn shuffle_narrow_group<const T: usize>(
    e0: usize,
    stride: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    let masks = &const { narrow_row_masks::<T>() };
    debug_assert!((e0 + 32) * T <= src.len());
    let lo = src.as_ptr().add(e0 * T);
    let hi = lo.add(16 * T);
    let mut pieces = [_mm256_setzero_si256(); T];
    for (c, x) in pieces.iter_mut().enumerate() {
        *x = _mm256_loadu2_m128i(
            hi.add(16 * c) as *const __m128i,
            lo.add(16 * c) as *const __m128i,
        );
    }
    for k in 0..T {
        let mut acc = _mm256_setzero_si256();
        for (c, piece) in pieces.iter().enumerate() {
            let m = _mm256_loadu_si256(masks[c][k].as_ptr() as *const __m256i);
            acc = _mm256_or_si256(acc, _mm256_shuffle_epi8(*piece, m));
        }
        store(dst, k * stride + e0, acc);
    }
}

/// Items of `T` = 3, 5, 6 or 7 bytes, 32 at a time: each 16 output bytes
/// of a lane's 16 items are gathered from the `T` rows with one byte
/// shuffle (`vpshufb`) per row, or-ed together, and stored 16 bytes at a
/// time, the first lane's then the second's, where the 16-byte windows of
/// [`unshuffle_windows`] take a whole 16x16 transpose (`bash
/// scripts/shuffle-bench.sh --typesizes 3,5,6,7 --blocksizes
/// 32768,262144`). The last group, if the items are not whole groups, overlaps the
/// one before. Returns the number of items done.
///
/// # Safety
/// AVX2 is available; `src` and `dst` hold at least `n * T` bytes.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_narrow<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let (groups, done) = overlapping_groups(0, n);
    for e0 in groups {
        unshuffle_narrow_group::<T>(n, e0, src, dst);
    }
    done
}

/// [`unshuffle_narrow`] of items `e0..e0 + 32`.
///
/// # Safety
/// AVX2 is available; `e0 + 32 <= n` and `src`, `dst` hold at least `n * T`
/// bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn unshuffle_narrow_group<const T: usize>(n: usize, e0: usize, src: &[u8], dst: &mut [u8]) {
    let masks = &const { narrow_masks::<T>() };
    let mut rows = [_mm256_setzero_si256(); T];
    for (k, x) in rows.iter_mut().enumerate() {
        *x = load(src, k * n + e0);
    }
    let mut out = [_mm256_setzero_si256(); T];
    for (c, o) in out.iter_mut().enumerate() {
        let mut acc = _mm256_setzero_si256();
        for (k, row) in rows.iter().enumerate() {
            let m = _mm256_loadu_si256(masks[c][k].as_ptr() as *const __m256i);
            acc = _mm256_or_si256(acc, _mm256_shuffle_epi8(*row, m));
        }
        *o = acc;
    }
    let at = e0 * T;
    for (c, o) in out.iter().enumerate() {
        _mm_storeu_si128(
            dst.as_mut_ptr().add(at + 16 * c) as *mut __m128i,
            _mm256_castsi256_si128(*o),
        );
    }
    for (c, o) in out.iter().enumerate() {
        store_lane::<1>(dst, at + 16 * T + 16 * c, *o);
    }
}

/// 12-byte items (three 32-bit words, e.g. xyz float triples), 32 at a
/// time: rows 0 to 7 are transposed as for 8-byte items (three zip rounds:
/// each vector lane then holds two items' first 8 bytes) and rows 8 to 11
/// as for 4-byte items (two rounds: four items' last 4 bytes), and each 8
/// items' 96 bytes are put together from those words with `vpermd` and
/// blends into three whole stores: 68 shuffles and 16 blends per 32 items,
/// where the transpose of all 12 rows as 16 (four rows of padding, four zip
/// rounds over 16 vectors) takes 96 (`bash scripts/shuffle-bench.sh
/// --typesizes 12 --blocksizes 32768,262144`). The last group, if the items
/// are not whole groups, overlaps the one before. Returns the number of
/// items done.
///
/// # Safety
/// AVX2 is available; `src` and `dst` hold at least `n * 12` bytes.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_12(n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let (groups, done) = overlapping_groups(0, n);
    for e0 in groups {
        unshuffle_12_group(n, e0, src, dst);
    }
    done
}

/// [`unshuffle_12`] of items `e0..e0 + 32`.
///
/// # Safety
/// AVX2 is available; `e0 + 32 <= n` and `src`, `dst` hold at least `n * 12`
/// bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn unshuffle_12_group(n: usize, e0: usize, src: &[u8], dst: &mut [u8]) {
    let mut head = [_mm256_setzero_si256(); 8];
    for (r, x) in head.iter_mut().enumerate() {
        *x = load(src, r * n + e0);
    }
    let mut tail = [_mm256_setzero_si256(); 4];
    for (r, x) in tail.iter_mut().enumerate() {
        *x = load(src, (8 + r) * n + e0);
    }
    for _ in 0..3 {
        zip(&mut head);
    }
    for _ in 0..2 {
        zip(&mut tail);
    }
    // head[k], lane L: bytes 0..8 of items 16L + 2k and 16L + 2k + 1;
    // tail[k], lane L: bytes 8..12 of items 16L + 4k .. 16L + 4k + 4.
    let at = e0 * 12;
    items8_of_12::<0x20>(dst, at, &head[0..4], &tail[0..2]);
    items8_of_12::<0x20>(dst, at + 96, &head[4..8], &tail[2..4]);
    items8_of_12::<0x31>(dst, at + 192, &head[0..4], &tail[0..2]);
    items8_of_12::<0x31>(dst, at + 288, &head[4..8], &tail[2..4]);
}

/// Eight 12-byte items to `dst[at..at + 96]` from lane `SEL` (0x20: lane 0,
/// 0x31: lane 1) of four [`unshuffle_12_group`] head vectors (two items'
/// first 8 bytes each) and two tail vectors (four items' last 4 bytes).
///
/// # Safety
/// AVX2 is available; `at + 96 <= dst.len()`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn items8_of_12<const SEL: i32>(
    dst: &mut [u8],
    at: usize,
    head: &[__m256i],
    tail: &[__m256i],
) {
    // In 32-bit words, item i's first 8 bytes are a_i, a'_i, its last 4 b_i.
    // x = a0 a0' a1 a1' a2 a2' a3 a3', y = a4 .. a7', b = b0 .. b7.
    let x = _mm256_permute2x128_si256::<SEL>(head[0], head[1]);
    let y = _mm256_permute2x128_si256::<SEL>(head[2], head[3]);
    let b = _mm256_permute2x128_si256::<SEL>(tail[0], tail[1]);
    // a0 a0' b0 a1 a1' b1 a2 a2'
    let out0 = _mm256_blend_epi32::<0x24>(
        _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 1, 0, 2, 3, 0, 4, 5)),
        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 0, 0)),
    );
    // b2 a3 a3' b3 a4 a4' b4 a5, from y's first six words and x's last two.
    let w = _mm256_blend_epi32::<0x3f>(x, y);
    let out1 = _mm256_blend_epi32::<0x49>(
        _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 6, 7, 0, 0, 1, 0, 2)),
        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(2, 0, 0, 3, 0, 0, 4, 0)),
    );
    // a5' b5 a6 a6' b6 a7 a7' b7
    let out2 = _mm256_blend_epi32::<0x92>(
        _mm256_permutevar8x32_epi32(y, _mm256_setr_epi32(3, 0, 4, 5, 0, 6, 7, 0)),
        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 5, 0, 0, 6, 0, 0, 7)),
    );
    store(dst, at, out0);
    store(dst, at + 32, out1);
    store(dst, at + 64, out2);
}
