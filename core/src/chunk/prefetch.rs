//! Software prefetch of the compressed bytes a partial read decodes.
//!
//! Why: a partial read (a b2nd slice, an item read) decodes a few blocks
//! at scattered places of a chunk, and with BloscLZ and LZ4 only a prefix
//! of each of a block's streams (`stream::decode`'s `need`), so it reads
//! the block's bytes in jumps: a prefix of the first plane, then the start
//! of the next, whose place the previous stream's size gives. A hardware
//! prefetcher follows a run of ascending addresses, not those jumps; each
//! block's first bytes, and each stream's start, are misses that wait for
//! the ones before. Asking for the block's bytes up front puts them in
//! flight together. A read of whole blocks reads each one from start to
//! end, as the prefetcher expects, and gets no hint
//! (`Prepared::bytes_to_prefetch` in `decompress` decides).

/// The most bytes of one block [`block`] asks for: the compressed bytes of
/// a default block, and at most a few microseconds of memory bandwidth
/// where a read needs only a little of a large block.
pub(crate) const MAX_BLOCK_BYTES: usize = 64 << 10;

/// Cache line size of the x86-64 CPUs this library targets.
#[cfg(target_arch = "x86_64")]
const LINE: usize = 64;

/// Hints the CPU to bring the first [`MAX_BLOCK_BYTES`] of `bytes` into
/// its cache (L2). A hint only: nothing is read, and no result changes.
#[inline]
pub(crate) fn block(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        let bytes = &bytes[..bytes.len().min(MAX_BLOCK_BYTES)];
        // One hint per cache line the bytes touch: the first line is that
        // of the first byte, wherever in the line it falls.
        let first = bytes.as_ptr() as usize % LINE;
        for at in (0..first + bytes.len()).step_by(LINE) {
            let p = bytes.as_ptr().wrapping_sub(first).wrapping_add(at);
            // SAFETY: PREFETCHT1 reads no memory architecturally and cannot
            // fault, whatever the address; every address here is still in
            // a cache line of `bytes`.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(p.cast::<i8>()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
