//! BloscLZ encoder.
//!
//! One greedy match finder ([`parse`]) drives two consumers: an
//! [`EntropyProbe`] that only counts the bytes a stream would take, run first
//! on a slice of the input to decide whether compressing is worth it, and a
//! [`StreamWriter`] that emits the tokens. The finder hashes four bytes at each
//! position into a table of last-seen positions, checks the one candidate it
//! gets, extends a confirmed match as far as it goes, then gives the last four
//! bytes back: the match stops early so the next search starts on fresh data.
//! These decisions are the reference encoder's, so the output matches it byte
//! for byte.

use super::format::{
    FAR_ESCAPE_HIGH, FAR_ESCAPE_LOW, FAR_LIMIT, LONG_MATCH_FIELD, MATCH_LENGTH_BIAS,
    MAX_LITERAL_RUN, NEAR_LIMIT, STREAM_MARKER,
};
use super::EncodeHint;

/// log2 of the hash table size at the levels that use the full table.
const MAX_HASH_LOG: u32 = 14;
/// Knuth's multiplicative hash constant (2^32 / golden ratio).
const HASH_MULTIPLIER: u32 = 2_654_435_761;

/// Bytes every confirmed match must agree on before it is extended.
const SEED_LEN: usize = 4;
/// Bytes given back from the end of every extended match.
const GIVE_BACK: usize = 4;
/// Smallest length field worth a match token; shorter matches cost more to
/// decode than the literals they replace.
const MIN_LENGTH_FIELD: usize = 4;
/// Far matches need at least this length field: shorter ones are kept as
/// literals because the 4-byte far token barely pays off.
const MIN_FAR_LENGTH_FIELD: usize = 6;
/// Positions this close to the end are never the start of a match search.
const SEARCH_TAIL: usize = 12;
/// Bytes read at once at a search position and at its candidate: the seed
/// and the eight bytes after it. It is SEARCH_TAIL, so it always fits.
const SEARCH_WINDOW: usize = SEED_LEN + 8;
const _: () = assert!(SEARCH_WINDOW == SEARCH_TAIL);

/// Bytes after the seed that must agree for a match to reach
/// [`MIN_LENGTH_FIELD`]: a match ends one past its first differing byte and
/// gives [`GIVE_BACK`] bytes back.
const AGREE_AFTER_SEED: usize = MIN_LENGTH_FIELD + GIVE_BACK - 1 - SEED_LEN;
/// Those bytes in the little-endian XOR of the eight after the seed.
const SHORT_MATCH_MASK: u64 = (1 << (8 * AGREE_AFTER_SEED)) - 1;
const _: () = assert!(AGREE_AFTER_SEED < SEARCH_WINDOW - SEED_LEN);

/// Inputs shorter than this are not compressed.
const MIN_INPUT_LEN: usize = 16;
/// Output buffers smaller than this are refused outright.
const MIN_OUTPUT_LEN: usize = 66;

/// The per-level knobs of the encoder.
struct LevelParams {
    /// log2 of the number of hash table entries in use.
    hash_log: u32,
    /// The probe looks at the last `len / probe_divisor` bytes of the input.
    probe_divisor: usize,
    /// Inputs whose probed compression ratio is below this are not compressed.
    min_probe_ratio: f64,
    /// Whether a second position is hashed after each match (level 9 only).
    double_hash: bool,
}

impl LevelParams {
    fn for_level(clevel: u8) -> Self {
        let clevel = clevel.clamp(1, 9);
        LevelParams {
            hash_log: match clevel {
                1 => MAX_HASH_LOG - 2,
                2 => MAX_HASH_LOG - 1,
                _ => MAX_HASH_LOG,
            },
            probe_divisor: match clevel {
                1 => 8,
                2 | 3 => 4,
                4..=6 => 2,
                _ => 1,
            },
            min_probe_ratio: match clevel {
                1 => 2.0,
                2 => 1.5,
                3..=6 => 1.2,
                7 => 1.15,
                8 => 1.1,
                _ => 1.0,
            },
            double_hash: clevel == 9,
        }
    }
}

/// Compresses `src` into `dst` at `clevel` (1..=9; larger values act as 9).
///
/// Returns the compressed length, or 0 when the data is not worth compressing
/// or the stream would not fit in `dst` (the caller then stores the block
/// uncompressed). Like the reference, the stream must leave at least one byte
/// of `dst` unused, `dst` must hold at least 66 bytes and `src` at least 16;
/// level 0 never compresses.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8], hint: &EncodeHint) -> usize {
    // Nothing to read from the hint yet; destructuring it makes any field
    // added later show up here.
    let EncodeHint {} = *hint;
    // The reference handles block sizes as C ints.
    if clevel == 0 || src.len() > i32::MAX as usize {
        return 0;
    }
    let params = LevelParams::for_level(clevel);
    let run = |t: &mut Table| {
        // A call that did not finish (a panic, contained at the C
        // boundary) may have left any slot set.
        if !t.clean {
            t.slots.fill(0);
        }
        t.clean = false;
        let whole = &mut t.slots;
        let n = match params.hash_log {
            12 => compress_with_table(src, dst, &params, leading::<{ 1 << 12 }>(whole)),
            13 => compress_with_table(src, dst, &params, leading::<{ 1 << 13 }>(whole)),
            _ => compress_with_table(src, dst, &params, &mut **whole),
        };
        t.clean = true;
        n
    };
    // A table of its own when the thread's is gone (a call from a thread's
    // exit handlers) or in use (a re-entrant call), rather than a panic.
    crate::scratch::with_kept(&TABLE, Table::default, run)
}

/// The largest hash table, one per thread: its 64 KiB on the stack made
/// every compression (the reference keeps it there too) overflow a C
/// caller's thread of 64 KiB. The part a level uses is cleared per call.
type FullTable = Box<[u32; 1 << MAX_HASH_LOG]>;

/// A zeroed table, made from a vector so that it is never on the stack.
fn full_table() -> FullTable {
    vec![0u32; 1 << MAX_HASH_LOG]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has the table's length"))
}

/// The thread's table and whether it is all zeros, as every call leaves it
/// (see [`wipe`]).
struct Table {
    slots: FullTable,
    clean: bool,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            slots: full_table(),
            clean: true,
        }
    }
}

thread_local! {
    static TABLE: core::cell::RefCell<Table> = core::cell::RefCell::new(Table::default());
}

/// The first `N` slots of the thread's table (`N` at most its size).
fn leading<const N: usize>(whole: &mut FullTable) -> &mut [u32; N] {
    let slots: &mut [u32] = &mut whole[..];
    (&mut slots[..N])
        .try_into()
        .unwrap_or_else(|_| unreachable!("a table of {N} slots fits"))
}

/// [`compress`] with a hash table of `N` entries (a power of two), sized at
/// compile time so that slot indices need no bounds checks.
fn compress_with_table<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    params: &LevelParams,
    table: &mut [u32; N],
) -> usize {
    // `table` is all zeros here, and each pass leaves it so.
    let window = probe_window(src, params, N);
    let ratio = probe_ratio(window, params, table);
    wipe(table, window, params);
    if ratio < params.min_probe_ratio {
        return 0;
    }
    if src.len() < MIN_INPUT_LEN || dst.len() < MIN_OUTPUT_LEN {
        return 0;
    }
    let n = compress_src(src, dst, params, table);
    wipe(table, src, params);
    n
}

/// Zeroes every slot of `table` that a parse of `data` can have set. A
/// parse sets only the slots of 4-byte sequences of `data` (and, at level
/// 9, of those shifted down a byte), so for short data re-hashing them is
/// far cheaper than clearing the table: the reference clears its 64 KiB
/// table twice per stream, and a small chunk split into byte planes has
/// one stream per plane (`scripts/instructions.sh
/// small/compress_ctx/blosclz/256B`: 98% of the call was that memset).
fn wipe<const N: usize>(table: &mut [u32; N], data: &[u8], params: &LevelParams) {
    // Past this, re-hashing costs more instructions than the clear (whose
    // wide stores callgrind counts a few to the instruction).
    if data.len() >= N / 32 {
        table.fill(0);
        return;
    }
    for seq in data
        .windows(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    {
        table[hash_slot::<N>(seq)] = 0;
        if params.double_hash {
            table[hash_slot::<N>(seq >> 8)] = 0;
        }
    }
}

/// The bytes [`probe_ratio`] parses: the last `len / probe_divisor` of
/// `src`, at most `slots` of them.
fn probe_window<'s>(src: &'s [u8], params: &LevelParams, slots: usize) -> &'s [u8] {
    let probed_len = src.len() / params.probe_divisor;
    let start = src.len() - probed_len;
    &src[start..start + probed_len.min(slots)]
}

/// The compression proper of [`compress_with_table`], into a zeroed table.
fn compress_src<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    params: &LevelParams,
    table: &mut [u32; N],
) -> usize {
    // The last byte of `dst` is never used, as in the reference, so that the
    // decision "fits or not" (and with it the chunk layout) is the same.
    let capacity = dst.len() - 1;
    let mut writer = StreamWriter {
        out: dst,
        pos: 0,
        capacity,
    };
    // The first four bytes always start the first literal run.
    let Some(tail) = parse(src, SEED_LEN, table, params, &mut writer) else {
        return 0;
    };
    if writer.literals(&src[tail.literal_start..]).is_none() {
        return 0;
    }
    writer.out[0] |= STREAM_MARKER;
    writer.pos
}

/// Estimates the compression ratio from a dry run over `window`, the end
/// of the input ([`probe_window`]). `table` must be all zeros.
fn probe_ratio<const N: usize>(window: &[u8], params: &LevelParams, table: &mut [u32; N]) -> f64 {
    // The probe counts as if four literals were already pending when it
    // starts (it scans from the first byte nevertheless), like the reference.
    let mut probe = EntropyProbe {
        emitted: 0,
        pending_literals: SEED_LEN,
    };
    let Some(tail) = parse(window, 0, table, params, &mut probe) else {
        return 0.0;
    };
    let pending = probe.pending_literals + (tail.scanned - tail.literal_start);
    // A pending run is counted with a control byte per started 32 bytes plus
    // one for the next run, the way the reference keeps its tally.
    let counted = probe.emitted + pending + pending / MAX_LITERAL_RUN + 1;
    tail.scanned as f64 / counted as f64
}

/// Where [`parse`] stopped.
struct ParseEnd {
    /// First position that was not looked at.
    scanned: usize,
    /// Start of the literal run still pending at that point.
    literal_start: usize,
}

/// Receives the tokens found by [`parse`]. `None` means "stop, out of space".
trait TokenSink {
    /// Whether far matches shorter than [`MIN_FAR_LENGTH_FIELD`] are refused.
    const REFUSES_SHORT_FAR: bool;
    /// Whether full 32-byte literal runs are handed over as soon as they are
    /// complete (lets the writer notice a full output early).
    const TAKES_FULL_RUNS: bool;
    /// Takes literal bytes: full runs of 32 if [`Self::TAKES_FULL_RUNS`], and
    /// the rest of a run before each match (possibly empty).
    fn literals(&mut self, run: &[u8]) -> Option<()>;
    /// Takes a match of `length_field + 2` bytes at `biased_dist + 1` back.
    fn matched(&mut self, length_field: usize, biased_dist: usize) -> Option<()>;
}

#[inline(always)]
fn read_u32(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
}

/// Slot of a 4-byte sequence in a table of `N` entries (a power of two).
#[inline(always)]
fn hash_slot<const N: usize>(seq: u32) -> usize {
    (seq.wrapping_mul(HASH_MULTIPLIER) >> (32 - N.trailing_zeros())) as usize
}

#[inline(always)]
fn read_u64(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

/// One past the first differing byte of two blocks that start at `at`, given
/// the trailing zeros of their little-endian XOR (not all zero): the end that
/// [`match_end`] and the window check in [`parse`] return.
#[inline(always)]
fn end_after_difference(at: usize, xor_trailing_zeros: u32) -> usize {
    at + (xor_trailing_zeros / 8) as usize + 1
}

/// Compares `data[pos..]` with `data[cand..]` (`cand < pos`) and returns one
/// past the first position that differs, or `data.len()` if none does.
#[inline(always)]
fn match_end(data: &[u8], pos: usize, cand: usize) -> usize {
    let ahead = &data[pos..];
    // Cut to the length of `ahead`, so that one test on `done` covers the
    // reads from both and the loop needs no other bounds check.
    let behind = &data[cand..][..ahead.len()];
    let mut done = 0;
    // Sixteen bytes a step: what is left to scan here is the long matches.
    // The first differing byte is the XOR's lowest nonzero one.
    for (a, b) in ahead.chunks_exact(16).zip(behind.chunks_exact(16)) {
        let diff =
            u128::from_le_bytes(a.try_into().unwrap()) ^ u128::from_le_bytes(b.try_into().unwrap());
        if diff != 0 {
            return end_after_difference(pos + done, diff.trailing_zeros());
        }
        done += 16;
    }
    for (a, b) in ahead[done..].iter().zip(&behind[done..]) {
        if a != b {
            return pos + done + 1;
        }
        done += 1;
    }
    data.len()
}

/// Copies `src` (at most 32 bytes) to the start of `dst` with at most two
/// fixed-size moves per length class, rather than a call to `memcpy` for a
/// handful of bytes: nearly every literal run the encoder emits is this short.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    let dst = &mut dst[..n];
    // Two moves of `width` bytes, one from each end, overlap in the middle
    // and together cover any length from `width` to twice `width`.
    macro_rules! two_moves {
        ($width:literal) => {{
            dst[..$width].copy_from_slice(&src[..$width]);
            dst[n - $width..].copy_from_slice(&src[n - $width..]);
        }};
    }
    match n {
        16..=32 => two_moves!(16),
        8..=15 => two_moves!(8),
        4..=7 => two_moves!(4),
        _ => dst.copy_from_slice(src),
    }
}

/// A seed match found by [`next_seed`].
struct Seed {
    /// The earlier position whose four bytes equal the search position's.
    cand: usize,
    /// The XOR of the eight bytes after the seed at each position: most
    /// matches end within them, and then no scan is needed.
    following_xor: u64,
}

/// Records each position from `*pos` in `table` until one's candidate holds
/// the same four bytes within reach and agrees on enough of the bytes after
/// them for a match token, and returns that seed with `*pos` left at the
/// position. Returns `None` with `*pos` at the first position it did not
/// look at: `stop`, or an earlier one whose window does not fit.
///
/// Nearly all of the encoder's time is spent here, on positions that do not
/// match, so this loop carries nothing but the position. It is kept out of
/// line because, inlined in [`parse`], the compiler kept the match path's
/// offsets up to date at every position as well; and it refuses short
/// matches itself, as they are most of the seeds and each return costs a
/// call.
#[inline(never)]
fn next_seed<const N: usize>(
    area: &[u8],
    pos: &mut usize,
    stop: usize,
    table: &mut [u32; N],
) -> Option<Seed> {
    let mut at = *pos;
    let found = loop {
        if at >= stop {
            break None;
        }
        let Some(window) = area.get(at..at + SEARCH_WINDOW) else {
            break None;
        };
        let seq = read_u32(window, 0);
        let slot = hash_slot::<N>(seq);
        // An empty slot reads as position 0, which is then a real candidate.
        let cand = table[slot] as usize;
        table[slot] = at as u32;
        // Table entries are earlier positions (or 0), so `cand <= at`:
        // `0 < at - cand < FAR_LIMIT` in one unsigned test (0 wraps),
        // one branch less on the path most positions take. Then `cand` is
        // below `at`, and its window fits too.
        if (at - cand).wrapping_sub(1) < FAR_LIMIT - 1 {
            let cand_window = &area[cand..cand + SEARCH_WINDOW];
            if read_u32(cand_window, 0) == seq {
                let following_xor = read_u64(window, SEED_LEN) ^ read_u64(cand_window, SEED_LEN);
                // Too short for a token whatever the sink: a refusal here
                // costs the caller nothing.
                if following_xor & SHORT_MATCH_MASK != 0 {
                    at += 1;
                    continue;
                }
                break Some(Seed {
                    cand,
                    following_xor,
                });
            }
        }
        at += 1;
    };
    *pos = at;
    found
}

/// Greedy match finder over `data`, starting its search at `start` with the
/// bytes before it pending as literals. Stops [`SEARCH_TAIL`] bytes before the
/// end; the caller deals with what is left.
fn parse<S: TokenSink, const N: usize>(
    data: &[u8],
    start: usize,
    table: &mut [u32; N],
    params: &LevelParams,
    sink: &mut S,
) -> Option<ParseEnd> {
    let mut literal_start = 0;
    let mut pos = start;
    if data.len() <= SEARCH_TAIL {
        return Some(ParseEnd {
            scanned: pos,
            literal_start,
        });
    }
    let bound = data.len() - 1;
    // A search position is at least SEARCH_TAIL bytes before the end, so the
    // SEARCH_WINDOW bytes from it lie below `bound`: `next_seed` takes them
    // through `get`, which makes its loop test and the reads' bounds test one.
    let area = &data[..bound];

    loop {
        // A sink that takes full runs gets each one as the search reaches it.
        let stop = if S::TAKES_FULL_RUNS {
            literal_start + MAX_LITERAL_RUN
        } else {
            usize::MAX
        };
        let Some(Seed {
            cand,
            following_xor,
        }) = next_seed(area, &mut pos, stop, table)
        else {
            if pos != stop {
                // The window no longer fits: the search is over.
                break;
            }
            sink.literals(&data[literal_start..pos])?;
            literal_start = pos;
            continue;
        };
        let anchor = pos;
        let end = if following_xor != 0 {
            end_after_difference(anchor + SEED_LEN, following_xor.trailing_zeros())
        } else {
            // `area` ends at the match bound.
            match_end(area, anchor + SEARCH_WINDOW, cand + SEARCH_WINDOW)
        };
        let length_field = end - GIVE_BACK - anchor;
        // `next_seed` has refused the matches too short for any token.
        debug_assert!(length_field >= MIN_LENGTH_FIELD);
        if S::REFUSES_SHORT_FAR && anchor - cand > NEAR_LIMIT && length_field < MIN_FAR_LENGTH_FIELD
        {
            // If that fills a literal run, `next_seed` stops at once and
            // the run is handed over above.
            pos = anchor + 1;
            continue;
        }

        sink.literals(&data[literal_start..anchor])?;
        sink.matched(length_field, anchor - cand - 1)?;
        pos = anchor + length_field;
        // Seed the table at the match boundary before skipping past it.
        let seq = read_u32(data, pos);
        table[hash_slot::<N>(seq)] = pos as u32;
        if params.double_hash {
            // Level 9 also records `pos + 1`, keyed by the same four bytes
            // shifted down one (three real bytes and a zero) rather than by
            // the bytes at `pos + 1`: that is the reference's key, and output
            // equality depends on it.
            table[hash_slot::<N>(seq >> 8)] = (pos + 1) as u32;
        }
        pos += MATCH_LENGTH_BIAS;
        literal_start = pos;
    }
    Some(ParseEnd {
        scanned: pos,
        literal_start,
    })
}

/// Emits tokens into the output buffer, refusing any that would pass
/// `capacity`.
struct StreamWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    capacity: usize,
}

impl StreamWriter<'_> {
    /// Reserves `len` bytes and returns them, or `None` if they do not fit.
    #[inline(always)]
    fn reserve(&mut self, len: usize) -> Option<&mut [u8]> {
        if len > self.capacity - self.pos {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        Some(&mut self.out[start..start + len])
    }
}

impl TokenSink for StreamWriter<'_> {
    const REFUSES_SHORT_FAR: bool = true;
    const TAKES_FULL_RUNS: bool = true;

    #[inline(always)]
    fn literals(&mut self, run: &[u8]) -> Option<()> {
        if run.is_empty() {
            return Some(());
        }
        if run.len() <= MAX_LITERAL_RUN {
            // The common case: full runs go out as they fill, so a run ended
            // by a match is short.
            let out = self.reserve(1 + run.len())?;
            out[0] = (run.len() - 1) as u8;
            copy_short(&mut out[1..], run);
            return Some(());
        }
        let out = self.reserve(run.len() + run.len().div_ceil(MAX_LITERAL_RUN))?;
        for (piece, to) in run
            .chunks(MAX_LITERAL_RUN)
            .zip(out.chunks_mut(MAX_LITERAL_RUN + 1))
        {
            to[0] = (piece.len() - 1) as u8;
            to[1..].copy_from_slice(piece);
        }
        Some(())
    }

    #[inline(always)]
    fn matched(&mut self, length_field: usize, biased_dist: usize) -> Option<()> {
        let (high, low, far) = if biased_dist < NEAR_LIMIT {
            ((biased_dist >> 8) as u8, biased_dist as u8, None)
        } else {
            let far = (biased_dist - NEAR_LIMIT) as u16;
            (FAR_ESCAPE_HIGH, FAR_ESCAPE_LOW, Some(far.to_be_bytes()))
        };
        let far_len = if far.is_some() { 2 } else { 0 };
        let field = LONG_MATCH_FIELD as usize;
        if length_field < field {
            let out = self.reserve(2 + far_len)?;
            out[0] = ((length_field as u8) << 5) | high;
            out[1] = low;
            if let Some(far) = far {
                out[2..4].copy_from_slice(&far);
            }
        } else {
            let extra = length_field - field;
            let saturated = extra / 255;
            let out = self.reserve(1 + saturated + 2 + far_len)?;
            let (head, rest) = out.split_at_mut(1 + saturated);
            head[0] = (LONG_MATCH_FIELD << 5) | high;
            head[1..].fill(255);
            rest[0] = (extra % 255) as u8;
            rest[1] = low;
            if let Some(far) = far {
                rest[2..4].copy_from_slice(&far);
            }
        }
        Some(())
    }
}

/// Counts the bytes a stream would take without writing it.
struct EntropyProbe {
    /// Bytes of finished tokens.
    emitted: usize,
    /// Literals waiting for the next match.
    pending_literals: usize,
}

impl TokenSink for EntropyProbe {
    const REFUSES_SHORT_FAR: bool = false;
    const TAKES_FULL_RUNS: bool = false;

    #[inline(always)]
    fn literals(&mut self, run: &[u8]) -> Option<()> {
        self.pending_literals += run.len();
        Some(())
    }

    #[inline(always)]
    fn matched(&mut self, length_field: usize, biased_dist: usize) -> Option<()> {
        let run = std::mem::take(&mut self.pending_literals);
        let mut cost = run + run.div_ceil(MAX_LITERAL_RUN);
        cost += if biased_dist < NEAR_LIMIT { 2 } else { 4 };
        if length_field >= LONG_MATCH_FIELD as usize {
            cost += (length_field - LONG_MATCH_FIELD as usize) / 255 + 1;
        }
        self.emitted += cost;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::blosclz::decompress;

    fn round_trip(clevel: u8, data: &[u8]) -> usize {
        let mut packed = vec![0u8; data.len() + data.len() / 16 + 66];
        let n = compress(clevel, data, &mut packed, &EncodeHint::default());
        if n > 0 {
            let mut out = vec![0u8; data.len()];
            assert_eq!(
                decompress(&packed[..n], &mut out),
                Ok(data.len()),
                "clevel {clevel}"
            );
            assert!(out == data, "clevel {clevel}: round trip differs");
        }
        n
    }

    /// A prefix decode writes the stream's first bytes right, at least as
    /// many as asked for, and stops within one token of them: at most a
    /// longest match (or a literal run) past the bytes asked for.
    #[test]
    fn prefix_decodes_stop_after_the_bytes_asked_for() {
        // Runs, repeats at several distances and noise, so that every kind
        // of token ends somewhere.
        let mut x = 0x2545_f491u32;
        let data: Vec<u8> = (0..20_000usize)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                match (i / 700) % 4 {
                    0 => 9,
                    1 => (i % 37) as u8,
                    2 => (x >> 24) as u8 & 7,
                    _ => (x >> 24) as u8,
                }
            })
            .collect();
        let mut packed = vec![0u8; data.len() * 2];
        let n = compress(5, &data, &mut packed, &EncodeHint::default());
        assert!(n > 0 && n < data.len() * 3 / 4, "{n}");
        let stream = &packed[..n];
        let mut out = vec![0u8; data.len()];
        for need in (0..=data.len() + 3).step_by(97).chain([1, data.len() - 1]) {
            out.fill(0xEE);
            let got = crate::codecs::blosclz::decompress_prefix(stream, &mut out, need).unwrap();
            assert!(got >= need.min(data.len()), "need {need}: {got}");
            assert!(got <= data.len(), "need {need}: {got}");
            assert!(out[..got] == data[..got], "need {need}");
            // One token past `need` at most: a literal run of 32 bytes or a
            // match, under 700 bytes in this input.
            assert!(got < need + 1024, "need {need}: {got}");
        }
        // A stream cut short is still refused where it is read.
        assert!(
            crate::codecs::blosclz::decompress_prefix(&stream[..n / 2], &mut out, n * 2).is_err()
        );
    }

    #[test]
    fn constant_input_compresses_at_every_level() {
        let data = vec![7u8; 100_000];
        for clevel in 1..=9 {
            let n = round_trip(clevel, &data);
            assert!(n > 0 && n < 2_000, "clevel {clevel}: {n} bytes");
        }
    }

    #[test]
    fn level_zero_and_tiny_inputs_are_not_compressed() {
        let data = vec![0u8; 1000];
        let mut out = vec![0u8; 2000];
        assert_eq!(compress(0, &data, &mut out, &EncodeHint::default()), 0);
        assert_eq!(
            compress(9, &data[..15], &mut out, &EncodeHint::default()),
            0
        );
        assert_eq!(
            compress(9, &data, &mut out[..65], &EncodeHint::default()),
            0
        );
    }

    #[test]
    fn known_stream_for_a_simple_input() {
        // 32 zero bytes: one literal run of 4, a run match, and 2 closing literals.
        let data = [0u8; 32];
        let mut out = [0u8; 80];
        let n = compress(9, &data, &mut out, &EncodeHint::default());
        // Literals 0..4, then at 4 the candidate 0 (dist 4) matches up to the
        // bound 31: length field 31 - 4 - 4 = 23 (long: 7 + 16), distance
        // biased 3; then bytes 29..32 stay literal.
        assert_eq!(&out[..n], &[0x23, 0, 0, 0, 0, 0xE0, 16, 3, 0x02, 0, 0, 0]);
    }
}
