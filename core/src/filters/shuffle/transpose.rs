//! Geometry shared by the SIMD byte-shuffle kernels.
//!
//! Why unpacks transpose: take `N` vectors of 16 bytes as one array of
//! `16 * N` bytes. Interleaving the first half of the array with the second
//! half (vector `a` with vector `a + N/2`, low and high unpacks) sends the
//! byte at index `x` to index `rotl(x, 1)` over the `log2(16 * N)` index bits.
//! For 16 items of `N` bytes the index is `item * N + byte`; four such zips
//! rotate the 4 item bits to the bottom, giving `byte * 16 + item`: the
//! transpose. Going back needs `log2(N)` zips. The AVX2 kernels do the same in
//! each 128-bit lane, on two groups of 16 items at once.

/// A 16-byte window of every item: bytes `start..start + 16` of the item,
/// of which the first `rows` are real bytes of the item (the rest belong to
/// the next item when the item is narrower than 16 bytes).
#[derive(Clone, Copy)]
pub(crate) struct Window {
    pub(crate) start: usize,
    pub(crate) rows: usize,
}

/// The windows covering every byte of an item of `typesize` bytes: one window
/// for items up to 16 bytes; otherwise windows every 16 bytes, the last one
/// moved back to end at the item's end (overlapping rows are simply computed
/// twice, with the same result).
pub(crate) fn windows(typesize: usize) -> impl Iterator<Item = Window> {
    let count = typesize.div_ceil(16);
    (0..count).map(move |w| {
        if typesize < 16 {
            Window {
                start: 0,
                rows: typesize,
            }
        } else {
            Window {
                start: (16 * w).min(typesize - 16),
                rows: 16,
            }
        }
    })
}

/// How many whole groups of `lanes` items the window kernels may process so
/// that every 16-byte access stays inside a buffer of `len` bytes holding `n`
/// items: items narrower than 16 bytes read and write past their own end.
pub(crate) fn whole_groups(typesize: usize, n: usize, len: usize, lanes: usize) -> usize {
    let mut groups = n / lanes;
    if typesize < 16 {
        // The last item of group g starts at ((g + 1) * lanes - 1) * typesize
        // and is accessed 16 bytes wide.
        while groups > 0 && (groups * lanes - 1) * typesize + 16 > len {
            groups -= 1;
        }
    }
    groups
}
