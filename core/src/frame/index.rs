//! The offsets index of an open frame, as held in memory.
//!
//! A frame can declare hundreds of millions of chunks in a few dozen bytes:
//! a special fill stores its index as one 40-byte repeated-value chunk, and
//! so can a hostile file. Expanding such an index to 8 bytes per chunk on
//! open would let a 250-byte file take gigabytes and seconds (the fuzzer
//! found exactly that), where the reference only ever reads single entries
//! out of the compressed index. So an index whose entries are all one value
//! stays one value until a change needs the entries, and the expansion, like
//! every allocation sized by the file, is fallible: too little memory is an
//! error, not an abort.
//!
//! A large index of other entries stays compressed too, as the frame stores
//! it, and is read one block at a time for each chunk asked for, through a
//! cache of the block read last. Decoding it whole would cost 8 bytes per
//! declared chunk, and a hostile index that compresses well declares many:
//! a Zstd index of about 17 kB can declare 2^25 chunks, and the format allows
//! up to 2 GiB of entries. Kept compressed, it costs its own bytes plus one
//! block. Nor is it walked on open to check its entries, which takes time in
//! proportion to the chunks declared: the `frame_open` fuzzer flagged a
//! 775-byte frame declaring 169 million chunks as a unit of up to 20 s under
//! its sanitizers. As in the reference, an entry is checked where it is read,
//! and every entry when the index is expanded for a change (`frame::store`).
//! An index of up to [`KEEP_COMPRESSED_ABOVE`] bytes, which is every frame of
//! fewer than 131,072 chunks, is decoded whole and checked on open, so the
//! common case reads a plain vector without a lock. A change to the frame
//! expands the index.

use std::sync::Mutex;

use crate::Result;

/// Decoded size above which an index read from a frame stays compressed.
#[cfg(not(fuzzing))]
pub(crate) const KEEP_COMPRESSED_ABOVE: usize = 1 << 20;
/// Under `cargo fuzz`, frames of more than 8 chunks keep their index
/// compressed, so that the fuzzer's small inputs reach both paths.
#[cfg(fuzzing)]
pub(crate) const KEEP_COMPRESSED_ABOVE: usize = 64;

/// The offsets index: one entry per chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OffsetIndex {
    /// `len` entries that are all `value`; written back as one
    /// repeated-value chunk, as the reference's special fill writes it.
    Repeated { value: i64, len: usize },
    /// The entries themselves.
    Entries(Vec<i64>),
    /// The index chunk as the frame holds it, read a block at a time.
    Compressed(Compressed),
}

/// Reads a range of an index chunk's decoded bytes: `out.len()` bytes from
/// byte `at`. The frame's codec bridge provides it, so this module does not
/// depend on the chunk engine.
pub(crate) type ReadBytes = fn(chunk: &[u8], at: usize, out: &mut [u8]) -> Result<()>;

/// An offsets index kept compressed (see the module doc).
pub(crate) struct Compressed {
    chunk: Vec<u8>,
    len: usize,
    /// Entries per block read: the chunk's own blocks when they hold whole
    /// entries.
    per_block: usize,
    read: ReadBytes,
    /// The block read last, by number, for the next lookups.
    last: Mutex<Option<(usize, Vec<i64>)>>,
}

impl Compressed {
    /// Keeps `chunk`, whose decoded bytes are `len` entries and whose
    /// blocks are `blocksize` bytes.
    pub fn new(chunk: Vec<u8>, len: usize, blocksize: usize, read: ReadBytes) -> Compressed {
        Compressed {
            chunk,
            len,
            per_block: (blocksize / 8).clamp(1, len.max(1)),
            read,
            last: Mutex::new(None),
        }
    }

    /// The chunk, unchanged, for writing the index back.
    pub fn chunk(&self) -> &[u8] {
        &self.chunk
    }

    fn nblocks(&self) -> usize {
        self.len.div_ceil(self.per_block)
    }

    /// The entries of block `b`.
    fn block(&self, b: usize) -> Result<Vec<i64>> {
        let first = b * self.per_block;
        let count = self.per_block.min(self.len - first);
        let mut raw = Vec::new();
        raw.try_reserve_exact(count * 8)
            .map_err(|_| crate::err!(MemoryAlloc, "no memory for {count} offsets"))?;
        raw.resize(count * 8, 0);
        (self.read)(&self.chunk, first * 8, &mut raw)?;
        super::offsets::from_le_bytes(&raw)
    }

    /// Entry `n` (`n < len`), or why its block does not decode.
    fn lookup(&self, n: usize) -> Result<i64> {
        let b = n / self.per_block;
        // A poisoned lock only means another reader panicked mid-lookup; the
        // cache is replaced whole, so what it holds is still consistent.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let entries = match &mut *last {
            Some((k, v)) if *k == b => v,
            slot => &mut slot.insert((b, self.block(b)?)).1,
        };
        Ok(entries[n - b * self.per_block])
    }
}

impl Clone for Compressed {
    fn clone(&self) -> Self {
        Compressed::new(self.chunk.clone(), self.len, self.per_block * 8, self.read)
    }
}

impl PartialEq for Compressed {
    fn eq(&self, other: &Self) -> bool {
        (self.len, self.per_block, &self.chunk) == (other.len, other.per_block, &other.chunk)
    }
}

impl Eq for Compressed {}

impl std::fmt::Debug for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressed")
            .field("len", &self.len)
            .field("per_block", &self.per_block)
            .field("chunk_bytes", &self.chunk.len())
            .finish()
    }
}

impl Default for OffsetIndex {
    fn default() -> Self {
        OffsetIndex::Entries(Vec::new())
    }
}

impl OffsetIndex {
    pub fn len(&self) -> usize {
        match self {
            OffsetIndex::Repeated { len, .. } => *len,
            OffsetIndex::Entries(v) => v.len(),
            OffsetIndex::Compressed(c) => c.len,
        }
    }

    /// Entry `n`: `None` past the end, and for an entry of a compressed
    /// index whose block does not decode (see [`OffsetIndex::lookup`]).
    pub fn get(&self, n: usize) -> Option<i64> {
        self.lookup(n).ok()
    }

    /// Entry `n`, or why there is none: past the end, or its block of a
    /// compressed index does not decode.
    pub fn lookup(&self, n: usize) -> Result<i64> {
        if n >= self.len() {
            crate::bail!(
                InvalidIndex,
                "chunk {n} out of range ({} chunks)",
                self.len()
            );
        }
        match self {
            OffsetIndex::Repeated { value, .. } => Ok(*value),
            OffsetIndex::Entries(v) => Ok(v[n]),
            OffsetIndex::Compressed(c) => c.lookup(n),
        }
    }

    /// Calls `f` with each entry and its position, stopping at the first
    /// error; a repeated index is visited once, as entry 0. A compressed
    /// index is decoded one block at a time, and a block that does not
    /// decode is an error.
    pub fn visit(&self, mut f: impl FnMut(usize, i64) -> Result<()>) -> Result<()> {
        match self {
            OffsetIndex::Repeated { len: 0, .. } => Ok(()),
            OffsetIndex::Repeated { value, .. } => f(0, *value),
            OffsetIndex::Entries(v) => v.iter().enumerate().try_for_each(|(i, &o)| f(i, o)),
            OffsetIndex::Compressed(c) => (0..c.nblocks()).try_for_each(|b| {
                let first = b * c.per_block;
                c.block(b)?
                    .into_iter()
                    .enumerate()
                    .try_for_each(|(k, o)| f(first + k, o))
            }),
        }
    }

    /// The entries, expanded if need be, for a change.
    pub fn entries_mut(&mut self) -> Result<&mut Vec<i64>> {
        if !matches!(self, OffsetIndex::Entries(_)) {
            *self = OffsetIndex::Entries(self.to_vec()?);
        }
        match self {
            OffsetIndex::Entries(v) => Ok(v),
            _ => unreachable!("expanded above"),
        }
    }

    /// A copy of the entries (fallible: its size comes from the file).
    pub fn to_vec(&self) -> Result<Vec<i64>> {
        match self {
            OffsetIndex::Repeated { value, len } => filled(*value, *len),
            OffsetIndex::Entries(v) => {
                let mut out = reserve(v.len())?;
                out.extend_from_slice(v);
                Ok(out)
            }
            OffsetIndex::Compressed(c) => {
                let mut out = reserve(c.len)?;
                for b in 0..c.nblocks() {
                    out.extend_from_slice(&c.block(b)?);
                }
                Ok(out)
            }
        }
    }
}

/// An empty vector with room for `n` entries, or a memory error.
pub(crate) fn reserve(n: usize) -> Result<Vec<i64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| crate::err!(MemoryAlloc, "no memory for an offsets index of {n} entries"))?;
    Ok(v)
}

fn filled(value: i64, len: usize) -> Result<Vec<i64>> {
    let mut v = reserve(len)?;
    v.resize(len, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visited(index: &OffsetIndex) -> Vec<(usize, i64)> {
        let mut seen = Vec::new();
        index
            .visit(|i, o| {
                seen.push((i, o));
                Ok(())
            })
            .unwrap();
        seen
    }

    #[test]
    fn a_repeated_index_reads_like_its_entries_and_expands_on_change() {
        let mut r = OffsetIndex::Repeated { value: -7, len: 4 };
        let e = OffsetIndex::Entries(vec![-7; 4]);
        assert_eq!(r.len(), e.len());
        assert_eq!((r.get(3), r.get(4)), (Some(-7), None));
        assert_eq!((e.get(3), e.get(4)), (Some(-7), None));
        assert_eq!(visited(&r), vec![(0, -7)]);
        assert_eq!(visited(&e), vec![(0, -7), (1, -7), (2, -7), (3, -7)]);
        assert_eq!(r.to_vec().unwrap(), vec![-7; 4]);
        r.entries_mut().unwrap()[1] = 5;
        assert_eq!(r, OffsetIndex::Entries(vec![-7, 5, -7, -7]));
        let empty = OffsetIndex::Repeated { value: 1, len: 0 };
        assert!(visited(&empty).is_empty());
    }

    #[test]
    fn visit_stops_at_the_first_error() {
        let e = OffsetIndex::Entries(vec![1, 2, 3, 4]);
        let mut seen = 0;
        let r = e.visit(|_, o| {
            seen += 1;
            if o == 2 {
                crate::bail!(InvalidHeader, "entry 2");
            }
            Ok(())
        });
        assert_eq!((r.unwrap_err().code(), seen), (-11, 2));
    }

    #[test]
    fn an_index_too_large_for_memory_is_an_error_not_an_abort() {
        let mut huge = OffsetIndex::Repeated {
            value: 0,
            len: usize::MAX / 8,
        };
        assert_eq!(huge.len(), usize::MAX / 8);
        assert!(huge.entries_mut().is_err());
        assert!(huge.to_vec().is_err());
        assert!(reserve(usize::MAX / 4).is_err());
    }
}
