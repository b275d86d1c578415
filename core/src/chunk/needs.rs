//! What a partial decode needs of each block of a chunk.

use std::ops::Range;

/// The bytes of each block of a chunk that a decode must write: none (the
/// block is skipped, as `blosc2_set_maskout` skips it), all of them, or one
/// range. A block needed in part may come out whole; the decoder uses the
/// range to spare work its caller will not read: a small slice of an array
/// reads a few rows of each block it touches (a tenth to a half of its
/// items, `benches/bench.c`'s 10x10x10 slices of 16x16x32 blocks). The byte
/// unshuffle puts back only the items holding the range, and BloscLZ and LZ4
/// streams are decoded only as far as the range's last byte reaches into
/// them (the first bytes of each byte plane, for a split block).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockNeeds {
    /// One range per block, in bytes from the block's start; empty for a
    /// skipped block, [`WHOLE`] for all of it whatever its size. 32 bits
    /// hold any offset in a block (at most 2 GiB), in half the memory of a
    /// `usize` range: a C caller's mask of n blocks costs 8n bytes here.
    spans: Vec<Range<u32>>,
}

/// A whole block, whatever its size (the last block of a chunk may be short).
const WHOLE: Range<u32> = 0..u32::MAX;

impl BlockNeeds {
    /// All of each of `nblocks` blocks.
    pub fn whole(nblocks: usize) -> Self {
        BlockNeeds {
            spans: vec![WHOLE; nblocks],
        }
    }

    /// None of `nblocks` blocks: a start for [`BlockNeeds::add`].
    pub fn none(nblocks: usize) -> Self {
        BlockNeeds {
            spans: vec![0..0; nblocks],
        }
    }

    /// The blocks whose `maskout` entry is false, whole.
    pub fn from_maskout(maskout: &[bool]) -> Self {
        BlockNeeds {
            spans: maskout
                .iter()
                .map(|&out| if out { 0..0 } else { WHOLE })
                .collect(),
        }
    }

    /// Marks every block as not needed, keeping the count.
    pub fn clear(&mut self) {
        self.spans.fill(0..0);
    }

    /// Number of blocks described.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether no blocks are described (`len() == 0`).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Adds `bytes` of block `j` to what is needed of it: the need becomes
    /// the smallest range covering both. An empty range adds nothing.
    ///
    /// # Panics
    /// If `j` is not a block index (a caller bug).
    pub fn add(&mut self, j: usize, bytes: Range<usize>) {
        if bytes.is_empty() {
            return;
        }
        // Offsets past 32 bits are past any block: they saturate, and the
        // range stays non-empty, as asked.
        let start = u32::try_from(bytes.start)
            .unwrap_or(u32::MAX)
            .min(u32::MAX - 1);
        let bytes = start..u32::try_from(bytes.end).unwrap_or(u32::MAX);
        let had = self.spans[j].clone();
        self.spans[j] = if had.is_empty() {
            bytes
        } else {
            had.start.min(bytes.start)..had.end.max(bytes.end)
        };
    }

    /// Marks all of block `j` as needed.
    pub fn add_whole(&mut self, j: usize) {
        self.spans[j] = WHOLE;
    }

    /// Whether block `j` is not needed at all.
    pub fn skips(&self, j: usize) -> bool {
        self.spans[j].is_empty()
    }

    /// Whether some block is not needed at all.
    pub fn skips_any(&self) -> bool {
        self.spans.iter().any(|s| s.is_empty())
    }

    /// The bytes needed of block `j`, which is `len` bytes long (empty when
    /// it is skipped).
    pub fn span(&self, j: usize, len: usize) -> Range<usize> {
        let s = &self.spans[j];
        let end = (s.end as usize).min(len);
        (s.start as usize).min(end)..end
    }

    /// The `maskout` form: true for each block not needed.
    pub fn maskout(&self) -> Vec<bool> {
        self.spans.iter().map(|s| s.is_empty()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_grow_to_cover_what_is_added_and_clip_to_the_block() {
        let mut n = BlockNeeds::none(3);
        assert_eq!(n.maskout(), [true, true, true]);
        n.add(1, 40..48);
        n.add(1, 8..16);
        n.add(1, 20..20);
        assert_eq!(n.span(1, 64), 8..48);
        assert_eq!(n.span(1, 30), 8..30);
        assert_eq!(n.span(1, 4), 4..4);
        n.add(2, 5..6);
        n.add_whole(2);
        assert_eq!(n.span(2, 100), 0..100);
        assert_eq!(n.maskout(), [true, false, false]);
        assert!(n.skips(0) && !n.skips(1) && n.skips_any());
        assert_eq!(n.span(0, 64), 0..0);
        n.clear();
        assert_eq!(n, BlockNeeds::none(3));
        assert_eq!(
            BlockNeeds::from_maskout(&[false, true]).maskout(),
            [false, true]
        );
        assert_eq!(BlockNeeds::whole(2).span(1, 7), 0..7);
    }

    #[test]
    fn offsets_past_32_bits_saturate_and_stay_needed() {
        let mut n = BlockNeeds::none(3);
        n.add(0, 10..usize::MAX);
        assert_eq!(n.span(0, 1 << 31), 10..1 << 31);
        n.add(1, usize::MAX - 1..usize::MAX);
        assert!(!n.skips(1));
        assert_eq!(n.span(1, 64), 64..64);
        // A span of a block as large as a block gets is kept exactly.
        n.add(2, (1 << 31) - 3..(1 << 31) - 1);
        assert_eq!(n.span(2, 1 << 31), (1 << 31) - 3..(1 << 31) - 1);
    }
}
