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
//! Any other index is decoded whole on open, 8 bytes per declared chunk (plus,
//! while it is decoded, the same again as raw bytes). The reference does that
//! too when it opens a frame with a copy; without a copy it keeps the index
//! compressed and reads single entries. So a hostile index that compresses
//! well still costs memory in proportion to what it declares: a Zstd index of
//! about 17 kB can declare 2^25 chunks, 256 MiB of entries, and the format
//! caps an index at 2 GiB. The allocation is fallible, but a system that
//! overcommits grants it and then pays as it is filled. Keeping the index
//! compressed, with a decoded-block cache, would bound this by the file's
//! size; it is not done.

use crate::Result;

/// The offsets index: one entry per chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OffsetIndex {
    /// `len` entries that are all `value`; written back as one
    /// repeated-value chunk, as the reference's special fill writes it.
    Repeated { value: i64, len: usize },
    /// The entries themselves.
    Entries(Vec<i64>),
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
        }
    }

    pub fn get(&self, n: usize) -> Option<i64> {
        match self {
            OffsetIndex::Repeated { value, len } => (n < *len).then_some(*value),
            OffsetIndex::Entries(v) => v.get(n).copied(),
        }
    }

    /// The entries in chunk order, without expanding a repeated index.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len()).map(move |n| match self {
            OffsetIndex::Repeated { value, .. } => *value,
            OffsetIndex::Entries(v) => v[n],
        })
    }

    /// The distinct values an index holds, for checks that look at each
    /// value once: one for a repeated index.
    pub fn values(&self) -> &[i64] {
        match self {
            OffsetIndex::Repeated { value, len } if *len > 0 => std::slice::from_ref(value),
            OffsetIndex::Repeated { .. } => &[],
            OffsetIndex::Entries(v) => v,
        }
    }

    /// The entries, expanded if need be, for a change.
    pub fn entries_mut(&mut self) -> Result<&mut Vec<i64>> {
        if let OffsetIndex::Repeated { value, len } = *self {
            *self = OffsetIndex::Entries(filled(value, len)?);
        }
        match self {
            OffsetIndex::Entries(v) => Ok(v),
            OffsetIndex::Repeated { .. } => unreachable!("expanded above"),
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

    #[test]
    fn a_repeated_index_reads_like_its_entries_and_expands_on_change() {
        let mut r = OffsetIndex::Repeated { value: -7, len: 4 };
        let e = OffsetIndex::Entries(vec![-7; 4]);
        assert_eq!(r.len(), e.len());
        assert_eq!(r.iter().collect::<Vec<_>>(), e.iter().collect::<Vec<_>>());
        assert_eq!((r.get(3), r.get(4)), (Some(-7), None));
        assert_eq!(r.values(), &[-7]);
        assert_eq!(r.to_vec().unwrap(), vec![-7; 4]);
        r.entries_mut().unwrap()[1] = 5;
        assert_eq!(r, OffsetIndex::Entries(vec![-7, 5, -7, -7]));
        let empty = OffsetIndex::Repeated { value: 1, len: 0 };
        assert!(empty.values().is_empty() && empty.iter().next().is_none());
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
