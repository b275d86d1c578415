use super::prepared::Prepared;
use crate::chunk::prefetch;
use crate::chunk::{CParams, Compressor, Fmt};
use crate::codecs::Codec;

fn chunk_of(compcode: u8) -> Vec<u8> {
    let data: Vec<u8> = (0..40_000u32)
        .flat_map(|i| (i / 3 ^ i % 7).to_le_bytes())
        .collect();
    let cp = CParams {
        compcode,
        typesize: 4,
        blocksize: 16 * 1024,
        ..CParams::default()
    };
    let mut chunk = vec![0u8; data.len() + Fmt::MAX_OVERHEAD];
    let n = Compressor::new(cp)
        .unwrap()
        .compress(&data, &mut chunk)
        .unwrap();
    chunk.truncate(n);
    chunk
}

/// The bytes a partial read prefetches for block `j` are that block's
/// compressed bytes, from its start to the next block's, and nothing
/// for bytes that do not lie in the chunk (a lazy chunk's fetched
/// blocks), for a whole block, or for a read that ends in a block's
/// first quarter with a codec that stops streams early; the prefetch
/// itself takes any slice.
#[test]
fn prefetched_bytes_are_each_blocks_own() {
    const BLOCK: usize = 16 * 1024;
    let chunk = chunk_of(Codec::BLOSCLZ);
    let p = Prepared::new(&chunk, false).unwrap();
    assert_eq!(p.nblocks, 10);
    let starts: Vec<usize> = (0..p.nblocks)
        .map(|j| p.bstart(j).unwrap() as usize)
        .collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    let half = BLOCK / 2..BLOCK / 2 + 8;
    for j in 0..p.nblocks {
        let size = p.block_span(j).1;
        let end = starts.get(j + 1).copied().unwrap_or(chunk.len());
        let bytes = p.block_bytes(j).unwrap();
        let got = p.bytes_to_prefetch(j, bytes, &half, size);
        assert_eq!(got.as_ptr(), chunk[starts[j]..].as_ptr(), "block {j}");
        assert_eq!(got.len(), end - starts[j], "block {j}");
        prefetch::block(got);
        prefetch::block(&got[1..]);
        // Reads of none or all of the block.
        assert!(p.bytes_to_prefetch(j, bytes, &(0..size), size).is_empty());
        assert!(p.bytes_to_prefetch(j, bytes, &(8..8), size).is_empty());
        // Reads ending in the first quarter (BloscLZ stops early).
        let early = 8..size / 4 - 1;
        assert!(p.bytes_to_prefetch(j, bytes, &early, size).is_empty());
        let quarter = 8..size / 4;
        assert_eq!(p.bytes_to_prefetch(j, bytes, &quarter, size), got);
        // The same bytes copied elsewhere (as fetched from a file).
        let fetched = bytes.to_vec();
        assert!(p.bytes_to_prefetch(j, &fetched, &half, size).is_empty());
    }
    // Zstd reads every stream to its end: a read near the start too.
    let zchunk = chunk_of(Codec::ZSTD);
    let z = Prepared::new(&zchunk, false).unwrap();
    let bytes = z.block_bytes(2).unwrap();
    let extent = z.bstart(3).unwrap() - z.bstart(2).unwrap();
    assert_eq!(
        z.bytes_to_prefetch(2, bytes, &(8..16), BLOCK).len(),
        extent as usize
    );
    assert!(z.bytes_to_prefetch(2, bytes, &(8..8), BLOCK).is_empty());
    // Block starts out of order: the rest of the chunk.
    let mut swapped = chunk.clone();
    let at = p.hlen;
    let (a, b) = (at + 4 * 3, at + 4 * 4);
    for k in 0..4 {
        swapped.swap(a + k, b + k);
    }
    let q = Prepared::new(&swapped, false).unwrap();
    let bytes = q.block_bytes(3).unwrap();
    assert_eq!(
        q.bytes_to_prefetch(3, bytes, &half, BLOCK).len(),
        bytes.len()
    );
    // A corrupt next start, as far from this one as an i32 goes.
    let mut corrupt = chunk.clone();
    corrupt[b..b + 4].copy_from_slice(&i32::MIN.to_le_bytes());
    let q = Prepared::new(&corrupt, false).unwrap();
    let bytes = q.block_bytes(3).unwrap();
    assert_eq!(
        q.bytes_to_prefetch(3, bytes, &half, BLOCK).len(),
        bytes.len()
    );
    prefetch::block(&[]);
    prefetch::block(&vec![0u8; 3 * prefetch::MAX_BLOCK_BYTES]);
}
