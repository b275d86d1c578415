//! What each fuzz target does with one input. The same file is compiled into
//! the fuzz crate (`cargo fuzz run <target>`, nightly) and into the stable
//! test `core/tests/fuzz_replay.rs`, which replays the fixtures and mutations of
//! them through these bodies on every CI run.
//!
//! A body may reject its input with an error; it must never panic, hang or
//! read out of bounds. Where a property can be checked (a round trip, a
//! re-serialisation) the body asserts it, so a wrong result is a crash too.

use b2nd_core::chunk::{self, BlockNeeds, CParams, DParams, Decompressor};
use b2nd_core::ndarray::array::NdArray;
use b2nd_core::ndarray::meta::NdMeta;
use b2nd_core::schunk::{packed, SChunk};

/// Most bytes a body lets one decode produce, so a header that claims
/// gigabytes is rejected by the body instead of exhausting memory.
const MAX_DECODED: usize = 16 << 20;

/// A chunk from the wire: every read path of the chunk engine.
pub fn chunk_decode(data: &[u8]) {
    let Ok((nbytes, _cbytes, blocksize)) = chunk::cbuffer_sizes(data) else {
        return;
    };
    if nbytes > MAX_DECODED {
        return;
    }
    let mut out = vec![0u8; nbytes];
    let mut d = Decompressor::new(DParams::default());
    let full = d.decompress(data, &mut out).ok().map(|n| out[..n].to_vec());
    let mut part = vec![0u8; 64];
    let _ = d.getitem(data, 1, 7, &mut part);
    let _ = d.decompress_vl_block(data, 0);
    // Two threads must decode exactly what one thread decodes.
    let mut d2 = Decompressor::new(DParams {
        nthreads: 2,
        ..DParams::default()
    });
    let mut out2 = vec![0u8; nbytes];
    let again = d2
        .decompress(data, &mut out2)
        .ok()
        .map(|n| out2[..n].to_vec());
    assert_eq!(full, again, "1 and 2 threads disagree");
    // Byte ranges (across the first block boundary, and at the end) are
    // the whole decode's bytes.
    if let Some(full) = &full {
        let n = full.len();
        for (lo, len) in [(blocksize.saturating_sub(3), 9), (n.saturating_sub(5), 5)] {
            let len = len.min(n.saturating_sub(lo));
            let mut range = vec![0u8; len];
            if d.decompress_range(data, lo, &mut range).is_ok() {
                assert_eq!(
                    range,
                    full[lo..lo + len],
                    "range {lo}+{len} differs from the decode"
                );
            }
        }
    }
    // Decodes of part of each block (a range of it, or none, as chosen by
    // the input's bytes) give the whole decode's bytes over every range
    // asked for, on one thread and on two. Both start from the same filler:
    // a chunk of uninitialised data writes nothing.
    // (Up to 65,536 blocks: a special chunk may claim 16 MiB of 1-byte
    // blocks, and the needs of each would cost this body more than the
    // decodes.)
    let few_blocks = blocksize > 0 && nbytes.div_ceil(blocksize) <= 1 << 16;
    let mut whole = vec![0xEEu8; nbytes];
    let whole = (few_blocks && d.decompress(data, &mut whole).is_ok()).then_some(whole);
    if let Some(full) = &whole {
        let nblocks = full.len().div_ceil(blocksize);
        let byte = |k: usize| usize::from(data[k % data.len()]);
        let mut needs = BlockNeeds::none(nblocks);
        for j in 0..nblocks {
            let lo = byte(48 + 2 * j) * blocksize / 256;
            let hi = lo + byte(49 + 2 * j) * blocksize / 128;
            needs.add(j, lo..hi.min(blocksize));
        }
        for nthreads in [1, 2] {
            let mut dp = Decompressor::new(DParams {
                nthreads,
                ..DParams::default()
            });
            let mut part = vec![0xEEu8; full.len()];
            dp.set_block_needs(&needs);
            if dp.decompress(data, &mut part).is_err() {
                continue;
            }
            for (j, (got, want)) in part
                .chunks(blocksize)
                .zip(full.chunks(blocksize))
                .enumerate()
            {
                let span = needs.span(j, want.len());
                assert_eq!(
                    got[span.clone()],
                    want[span],
                    "block {j} of a partial decode"
                );
            }
        }
    }
    // With a block shape, chunks that ask for NDCELL/NDMEAN reach the cell
    // decoder (any shape: a wrong one must be an error, not a crash).
    let side = i64::from(data.get(40).copied().unwrap_or(1) % 32) + 1;
    let mut d3 = Decompressor::new(DParams {
        block_shape: Some(vec![side, side * 2].into()),
        ..DParams::default()
    });
    let _ = d3.decompress(data, &mut out);
    // zfp chunks decode only with a block shape: try the 1- to 4-D shapes of
    // the chunk's block size with leading extents of 4 (the ones the replay's
    // zfp seeds use), so mutated zfp streams reach the zfp decoder.
    let typesize = usize::from(data.get(3).copied().unwrap_or(1)).max(1);
    let items = (blocksize / typesize) as i64;
    for lead in 0..4u32 {
        let rest = items / 4i64.pow(lead);
        if rest < 4 {
            break;
        }
        let mut shape = vec![4i64; lead as usize];
        shape.push(rest);
        let mut d4 = Decompressor::new(DParams {
            block_shape: Some(shape.into()),
            ..DParams::default()
        });
        let Ok(n) = d4.decompress(data, &mut out) else {
            continue;
        };
        // Item reads (one zfp cell for fixed-rate streams) give the whole
        // decode's items.
        let total = n / typesize;
        for start in [0, 5, total / 2, total.saturating_sub(1)] {
            let count = total.saturating_sub(start).min(3);
            if count == 0 {
                continue;
            }
            let mut items_out = vec![0u8; count * typesize];
            if d4.getitem(data, start, count, &mut items_out).is_ok() {
                let want = &out[start * typesize..(start + count) * typesize];
                assert_eq!(
                    items_out, want,
                    "getitem {start}+{count} differs from the decode"
                );
            }
        }
    }
}

/// Compress then decompress: the first bytes choose the parameters, the rest
/// is the data. The decoded bytes must equal the source.
pub fn chunk_roundtrip(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let (p, mut src) = data.split_at(4);
    // Half the draws take items of 1 to 16 bytes, each shuffle width its
    // own kernel; the other half take 17 to 255 bytes (records, structured
    // dtypes), which the SIMD shuffles cut into 16-byte windows.
    let typesize = match p[3] {
        0..=127 => usize::from(p[3] % 16) + 1,
        wide => 17 + usize::from(wide - 128) * 238 / 127,
    };
    let mut block_shape = None;
    let mut blocksize = 0;
    let mut filters_meta = [0u8; 6];
    let filters = match p[2] % 8 {
        0 => [0, 0, 0, 0, 0, 0],
        1 => [0, 0, 0, 0, 0, 1],
        2 => [0, 0, 0, 0, 0, 2],
        3 => [0, 0, 0, 0, 3, 1],
        4 => [0, 0, 0, 0, 1, 2],
        // BYTEDELTA after a shuffle, the older variant after a bitshuffle.
        5 => [0, 0, 0, 0, 1, 35],
        6 => [0, 0, 0, 0, 2, 34],
        // NDCELL (cells of 1..4 items a side) over 2-D blocks of rows x 8
        // items, then a shuffle; only whole blocks take the cell layout.
        _ => {
            let rows = usize::from(p[1] % 8) + 1;
            let block = rows * 8 * typesize;
            src = &src[..src.len() / block * block];
            if src.is_empty() {
                return;
            }
            block_shape = Some(vec![rows as i64, 8].into());
            blocksize = block as i32;
            // A side of at most `rows` keeps a cell within the block.
            filters_meta[4] = p[0] % (rows.min(4) as u8) + 1;
            [0, 0, 0, 0, 32, 1]
        }
    };
    let cp = CParams {
        compcode: p[0] % 6,
        clevel: p[1] % 10,
        typesize: typesize as i32,
        filters,
        filters_meta,
        blocksize,
        block_shape: block_shape.clone(),
        ..CParams::default()
    };
    if cp.compcode == 3 {
        // Code 3 (Snappy in Blosc1) is not a codec of Blosc2: these draws
        // go to NDLZ (32) or zfp (33..=35) instead.
        if p[2] & 2 != 0 {
            return zfp_roundtrip(p, src);
        }
        return ndlz_roundtrip(p, src);
    }
    roundtrip(&cp, src);
}

/// NDLZ over 2-D blocks of one-byte items (at least 128 of them, so the
/// chunk engine keeps the block size), cells of 4 or 8 a side.
fn ndlz_roundtrip(p: &[u8], src: &[u8]) {
    let rows = usize::from(p[1] % 32) + 8;
    let cols = usize::from(p[3] % 32) + 16;
    let block = rows * cols;
    let src = &src[..src.len() / block * block];
    if src.is_empty() {
        return;
    }
    let cp = CParams {
        compcode: 32,
        compcode_meta: if p[2] & 1 == 0 { 4 } else { 8 },
        clevel: p[0] % 9 + 1,
        typesize: 1,
        filters: [0; 6],
        blocksize: block as i32,
        block_shape: Some(vec![rows as i64, cols as i64].into()),
        ..CParams::default()
    };
    roundtrip(&cp, src);
}

/// zfp (lossy) over 1- to 4-D blocks of f32 or f64 (the input bytes as
/// floats, NaNs and infinities included): compression succeeds, decoding
/// gives the chunk's size, and decoding again (on two threads) gives the
/// same bytes.
fn zfp_roundtrip(p: &[u8], src: &[u8]) {
    let typesize = if p[1] & 1 == 0 { 4 } else { 8 };
    let dims = usize::from(p[1] >> 1) % 4 + 1;
    let mut shape: Vec<i64> = (0..dims).map(|a| i64::from((p[3] >> a) % 4) + 4).collect();
    shape[dims - 1] += i64::from(p[0] % 8);
    let block = shape.iter().product::<i64>() as usize * typesize;
    let src = &src[..src.len() / block * block];
    if src.is_empty() {
        return;
    }
    let cp = CParams {
        compcode: 33 + p[0] % 3,
        compcode_meta: p[2].wrapping_mul(37),
        typesize: typesize as i32,
        filters: [0; 6],
        blocksize: block as i32,
        splitmode: 2,
        block_shape: Some(shape.into()),
        ..CParams::default()
    };
    let mut c = vec![0u8; src.len() + 32];
    let n = chunk::compress(&cp, src, &mut c).expect("compress with a big enough dest");
    let decode = |nthreads: i16| {
        let mut d = Decompressor::new(DParams {
            block_shape: cp.block_shape.clone(),
            nthreads,
            ..DParams::default()
        });
        let mut back = vec![0u8; src.len()];
        let m = d
            .decompress(&c[..n], &mut back)
            .expect("decompress what we wrote");
        assert_eq!(m, src.len());
        back
    };
    assert_eq!(
        decode(1),
        decode(2),
        "zfp decodes differently on two threads"
    );
}

fn roundtrip(cp: &CParams, src: &[u8]) {
    let block_shape = cp.block_shape.clone();
    // 64 bytes over the usual `src.len() + 32`: room for every stream of a
    // one-block chunk stored (up to 16 of them, 4 bytes each), which a split
    // block needs to be shuffled straight into the chunk (the encoder's
    // `encode_rows_in_place`; the loop takes it otherwise).
    let mut c = vec![0u8; src.len() + 32 + 64];
    let n = chunk::compress(cp, src, &mut c).expect("compress with a big enough dest");
    let mut back = vec![0u8; src.len()];
    let mut d = Decompressor::new(DParams {
        block_shape,
        ..DParams::default()
    });
    let m = d
        .decompress(&c[..n], &mut back)
        .expect("decompress what we wrote");
    assert_eq!(m, src.len());
    assert_eq!(back, src, "round trip changed the data");
}

/// A BloscLZ stream on its own.
pub fn blosclz_decode(data: &[u8]) {
    let mut out = vec![0u8; 1 << 16];
    let full = b2nd_core::codecs::blosclz::decompress(data, &mut out);
    if let Ok(n) = full {
        assert!(n <= out.len());
    }
    // A decode of the stream's first bytes (as many as the last two input
    // bytes say) never panics either, and where the whole stream decodes it
    // succeeds with the whole decode's bytes.
    let need = match data {
        [.., a, b] => usize::from(u16::from_le_bytes([*a, *b])),
        _ => 0,
    };
    let mut part = vec![0u8; 1 << 16];
    let prefix = b2nd_core::codecs::blosclz::decompress_prefix(data, &mut part, need);
    if let Ok(m) = prefix {
        assert!(m <= part.len());
    }
    if let Ok(n) = full {
        let m = prefix.expect("a stream that decodes whole decodes in part");
        assert!(
            m >= need.min(n) && m <= n,
            "prefix of {m} bytes for {need} of {n}"
        );
        assert_eq!(part[..m], out[..m], "prefix differs from the whole decode");
    }
}

/// Reads every metalayer and vlmetalayer of `sc` and decodes its first 64
/// chunks; errors are fine, a panic is not.
fn read_everything(sc: &mut SChunk) {
    for name in sc.meta_names() {
        let _ = sc.meta_get(&name);
    }
    for name in sc.vlmeta_names() {
        let _ = sc.vlmeta_get(&name);
    }
    let chunksize = usize::try_from(sc.chunksize())
        .unwrap_or(0)
        .min(MAX_DECODED);
    let mut out = vec![0u8; chunksize];
    for n in 0..sc.nchunks().min(64) {
        let _ = sc.decompress_chunk(n, &mut out);
    }
}

/// A contiguous frame from memory, in place and as a copy: header,
/// trailer, index, metalayers and chunks.
pub fn frame_open(data: &[u8]) {
    let Ok(mut sc) = SChunk::from_buffer(data, false) else {
        return;
    };
    read_everything(&mut sc);
    // A copy reads every chunk, so it may refuse what opens in place. It
    // holds an entry per chunk, so a few bytes of index can ask for
    // gigabytes (2^28 chunks at most); like MAX_DECODED, the limit keeps
    // the fuzzer's memory for finding bugs.
    if sc.nchunks() <= MAX_COPIED_CHUNKS {
        if let Ok(mut copy) = SChunk::from_buffer(data, true) {
            read_everything(&mut copy);
        }
    }
}

/// Most chunks `frame_open` copies into a chunk list.
const MAX_COPIED_CHUNKS: i64 = 1 << 20;

/// A path of its own for this process and thread, ending in `name`: the
/// bodies that need files rewrite them for every input.
fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "b2nd-fuzz-{}-{:?}-{name}",
        std::process::id(),
        std::thread::current().id()
    ))
}

/// A contiguous frame opened from a file. Besides what `frame_open` reads,
/// this reaches the readers that fetch only part of a chunk from disk, which
/// an in-memory frame never takes: lazy chunks decoded through their block
/// source, byte ranges of a chunk and slices across chunks.
pub fn frame_file(data: &[u8]) {
    let path = scratch("file.b2frame");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(mut sc) = SChunk::open(&path) {
        read_everything(&mut sc);
        read_parts(&mut sc);
    }
    if let Ok(a) = NdArray::open(&path) {
        read_middle_item(&a);
    }
    let _ = std::fs::remove_file(&path);
}

/// A contiguous frame edited, from a file and in memory: a chunk appended,
/// chunk 0 replaced, one inserted and one deleted (new chunks made with the
/// frame's parameters), and a vlmetalayer added and replaced. An edit
/// either takes effect or, refused, changes nothing, so the frame read back
/// afterwards (reopened from its file, or from the bytes of the frame in
/// memory) holds the chunks the edits wrote where they put them, and the
/// chunks it held at first that decoded still decode the same.
pub fn frame_edit(data: &[u8]) {
    let path = scratch("edit.b2frame");
    if std::fs::write(&path, data).is_ok() {
        edit_at(&path, data);
        let _ = std::fs::remove_file(&path);
    }
    if let Ok(mut sc) = SChunk::from_vec(data.to_vec()) {
        if let Some(want) = edit(&mut sc, data) {
            let bytes = sc.to_buffer().expect("an edited frame serialises");
            let mut back = SChunk::from_vec(bytes).expect("an edited frame reopens");
            check_edits(&mut back, &want);
        }
    }
}

/// Opens the frame at `path` (a file, or a sparse frame's folder), makes
/// [`edit`]'s edits, closes it, and checks that it reopens holding them.
fn edit_at(path: &std::path::Path, data: &[u8]) {
    if let Ok(mut sc) = SChunk::open(path) {
        if let Some(want) = edit(&mut sc, data) {
            drop(sc);
            let mut back = SChunk::open(path).expect("an edited frame reopens from its path");
            check_edits(&mut back, &want);
        }
    }
}

/// Most chunks of a frame `frame_edit` edits: each edit rewrites the index,
/// an entry per chunk.
const MAX_EDITED_CHUNKS: i64 = 1 << 16;

/// What `frame_edit` expects to read back: each chunk's decoded bytes where
/// they are known, and the vlmetalayer it added.
struct Edited {
    chunks: Vec<Option<Vec<u8>>>,
    vlmeta: Option<Vec<u8>>,
}

/// Edits `sc` as [`frame_edit`] says; `None` when it holds too many chunks.
fn edit(sc: &mut SChunk, data: &[u8]) -> Option<Edited> {
    if sc.nchunks() > MAX_EDITED_CHUNKS {
        return None;
    }
    let chunksize = usize::try_from(sc.chunksize()).unwrap_or(0);
    // A chunk's bytes are known when decoding it into two buffers filled
    // differently gives the same bytes: an uninitialized special chunk
    // decodes to whatever its destination held, as in the reference.
    let mut zeros = vec![0u8; chunksize.min(MAX_DECODED)];
    let mut ones = zeros.clone();
    let mut chunks: Vec<Option<Vec<u8>>> = (0..sc.nchunks())
        .map(|n| {
            if n >= 64 {
                return None;
            }
            zeros.fill(0);
            ones.fill(0xff);
            let k = sc.decompress_chunk(n, &mut zeros).ok()?;
            let same = sc.decompress_chunk(n, &mut ones).ok() == Some(k) && zeros[..k] == ones[..k];
            same.then(|| zeros[..k].to_vec())
        })
        .collect();
    // New chunks of the frame's chunk size (so that they fit among its
    // chunks) when that is small, compressed with the frame's parameters.
    let nbytes = if (1..=1 << 16).contains(&chunksize) {
        chunksize
    } else {
        256
    };
    let payload = |tag: u8| -> Vec<u8> {
        (0..nbytes)
            .map(|i| data[i % data.len()] ^ tag ^ (i / 7) as u8)
            .collect()
    };
    // A new chunk and the bytes it decodes to, which a lossy filter or
    // codec among the frame's parameters makes other than the payload.
    let cparams = sc.cparams().clone();
    let dparams = sc.dparams().clone();
    let made = |tag: u8| -> Option<(Vec<u8>, Vec<u8>)> {
        let src = payload(tag);
        let mut chunk = vec![0u8; src.len() + 64];
        let n = chunk::compress(&cparams, &src, &mut chunk).ok()?;
        chunk.truncate(n);
        let mut back = vec![0u8; src.len()];
        let k = Decompressor::new(dparams.clone())
            .decompress(&chunk, &mut back)
            .ok()?;
        back.truncate(k);
        Some((chunk, back))
    };
    if let Some((c, bytes)) = made(1) {
        if sc.append_chunk(&c).is_ok() {
            chunks.push(Some(bytes));
        }
    }
    if let Some((c, bytes)) = made(2) {
        if sc.update_chunk(0, &c).is_ok() {
            chunks[0] = Some(bytes);
        }
    }
    let at = chunks.len().min(1);
    if let Some((c, bytes)) = made(3) {
        if sc.insert_chunk(at as i64, &c).is_ok() {
            chunks.insert(at, Some(bytes));
        }
    }
    let gone = chunks.len() / 2;
    if sc.delete_chunk(gone as i64).is_ok() {
        chunks.remove(gone);
    }
    let note = &data[..data.len().min(40)];
    let mut vlmeta = sc
        .vlmeta_add("fuzz-edit", b"first", None)
        .ok()
        .map(|_| b"first".to_vec());
    if sc.vlmeta_update("fuzz-edit", note, None).is_ok() {
        vlmeta = Some(note.to_vec());
    }
    Some(Edited { chunks, vlmeta })
}

/// Asserts that `back` holds what [`edit`] left.
fn check_edits(back: &mut SChunk, want: &Edited) {
    assert_eq!(
        back.nchunks(),
        want.chunks.len() as i64,
        "chunks after the edits"
    );
    let longest = want
        .chunks
        .iter()
        .flatten()
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    let mut out = vec![0u8; longest];
    for (n, chunk) in want.chunks.iter().enumerate() {
        if let Some(chunk) = chunk {
            let k = back
                .decompress_chunk(n as i64, &mut out)
                .unwrap_or_else(|e| panic!("chunk {n} does not decode after the edits: {e}"));
            let got = &out[..k];
            if got != &chunk[..] {
                let at = got.iter().zip(chunk).position(|(a, b)| a != b);
                panic!(
                    "chunk {n} after the edits: {k} bytes, want {}; first difference at {at:?}",
                    chunk.len()
                );
            }
        }
    }
    if let Some(note) = &want.vlmeta {
        assert_eq!(
            back.vlmeta_get("fuzz-edit").expect("the vlmetalayer added"),
            *note,
            "the vlmetalayer after the edits"
        );
    }
}

/// A sparse frame: a folder holding the index frame `chunks.b2frame` and one
/// file per chunk. The input packs the folder as records, each a `u32` (LE)
/// length and that many bytes (a length past the end takes what is left):
/// the first record is the index frame, the next ones are the files of chunks
/// 0, 1, ... ([`pack_sparse`] makes such inputs). Opened as a super-chunk
/// and as an array, it is read like [`frame_file`] reads a contiguous frame.
pub fn sparse_dir(data: &[u8]) {
    let dir = scratch("sparse");
    let _ = std::fs::remove_dir_all(&dir);
    if unpack_sparse(data, &dir).is_err() {
        return;
    }
    if let Ok(mut sc) = SChunk::open(&dir) {
        read_everything(&mut sc);
        read_parts(&mut sc);
    }
    if let Ok(a) = NdArray::open(&dir) {
        read_middle_item(&a);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sparse frame, packed as [`sparse_dir`] takes it, edited as
/// [`frame_edit`] edits a contiguous one: each chunk edit rewrites the index
/// frame and writes or leaves chunk files, so a hostile index or chunk file
/// must never make an edit leave behind a folder that does not reopen with
/// what the edits wrote.
pub fn sparse_edit(data: &[u8]) {
    let dir = scratch("sparse-edit");
    let _ = std::fs::remove_dir_all(&dir);
    if unpack_sparse(data, &dir).is_ok() {
        edit_at(&dir, data);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Most chunk files `sparse_dir` writes.
const MAX_SPARSE_FILES: usize = 16;

/// The name of the file of chunk id `id` in a sparse frame's folder.
fn sparse_chunk_file(id: usize) -> String {
    format!("{id:08X}.chunk")
}

/// Writes the files an input of [`sparse_dir`] packs into folder `dir`.
pub fn unpack_sparse(data: &[u8], dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut rest = data;
    for n in 0..=MAX_SPARSE_FILES {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            break;
        };
        let len = (u32::from_le_bytes(*len) as usize).min(tail.len());
        let name = match n {
            0 => "chunks.b2frame".to_string(),
            _ => sparse_chunk_file(n - 1),
        };
        std::fs::write(dir.join(name), &tail[..len])?;
        rest = &tail[len..];
    }
    Ok(())
}

/// The input [`sparse_dir`] reads for the sparse frame in folder `dir`:
/// its index frame, then the files of chunk ids 0 to 15 up to the last one
/// there (an id with no file, as a special chunk has, gives an empty one).
pub fn pack_sparse(dir: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let files: Vec<Option<Vec<u8>>> = (0..MAX_SPARSE_FILES)
        .map(|id| std::fs::read(dir.join(sparse_chunk_file(id))).ok())
        .collect();
    let used = files.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    let mut out = Vec::new();
    let index = std::fs::read(dir.join("chunks.b2frame"))?;
    let chunks = files[..used].iter().map(|f| f.as_deref().unwrap_or(&[]));
    for bytes in std::iter::once(&index[..]).chain(chunks) {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// Reads the one item in the middle of an array from a file: its chunk is
/// decoded only in the block holding it, which is read alone from disk.
fn read_middle_item(a: &NdArray) {
    if chunk_fits(a) {
        let _ = read_item(a, &middle(a));
    }
}

/// Whether one chunk of `a`, padded to whole blocks (a block shape larger
/// than the chunk shape is legal, as in the reference), decodes within
/// [`MAX_DECODED`] bytes.
fn chunk_fits(a: &NdArray) -> bool {
    a.layout()
        .chunk_nbytes(a.typesize())
        .is_ok_and(|b| usize::try_from(b).is_ok_and(|b| b <= MAX_DECODED))
}

/// The coordinates of the middle item of `a`.
fn middle(a: &NdArray) -> Vec<i64> {
    a.shape().iter().map(|&s| s / 2).collect()
}

/// The bytes of the item of `a` at `at` (none when `at` is outside it).
fn read_item(a: &NdArray, at: &[i64]) -> b2nd_core::Result<Vec<u8>> {
    let stop: Vec<i64> = at
        .iter()
        .zip(a.shape())
        .map(|(&b, &s)| (b + 1).min(s))
        .collect();
    let shape: Vec<i64> = at.iter().zip(&stop).map(|(&b, &e)| e - b).collect();
    let mut item = vec![0u8; usize::try_from(a.typesize()).unwrap_or(0)];
    a.get_slice_cbuffer(at, &stop, &mut item, &shape)?;
    Ok(item)
}

/// Reads the first 64 chunks of `sc` as lazy chunks and in parts: a few
/// bytes at each end, a range across the first block boundary and one
/// through the middle; then a slice across the first two chunks.
fn read_parts(sc: &mut SChunk) {
    let mut d = Decompressor::new(sc.dparams().clone());
    let mut out = vec![0u8; MAX_DECODED];
    for n in 0..sc.nchunks().min(64) {
        let Ok(lazy) = sc.get_lazychunk(n).map(|c| c.into_owned()) else {
            continue;
        };
        if let Ok(mut src) = sc.lazy_block_source(&lazy) {
            let _ = d.decompress_with_source(&lazy, &mut *src, &mut out, None);
        }
        let field = |at: usize| {
            lazy.get(at..at + 4).map_or(0, |b| {
                i32::from_le_bytes([b[0], b[1], b[2], b[3]]).max(0) as usize
            })
        };
        let (nbytes, blocksize) = (field(4), field(8).max(1));
        let ranges = [
            (0, 5),
            (nbytes.saturating_sub(7), 7),
            (blocksize.saturating_sub(3), 9),
            (nbytes / 3, nbytes / 3),
        ];
        for (lo, len) in ranges {
            let len = len.min(nbytes.saturating_sub(lo)).min(MAX_DECODED);
            let _ = sc.read_chunk_range(n as usize, lo, &mut out[..len]);
        }
    }
    let typesize = i64::from(sc.typesize().max(1));
    let items = i64::from(sc.chunksize().max(0)) / typesize;
    let (start, stop) = (items / 2, (items + items / 2).min(sc.nbytes() / typesize));
    if start < stop && ((stop - start) * typesize) as usize <= MAX_DECODED {
        let _ = sc.get_slice_buffer(
            start,
            stop,
            &mut out[..((stop - start) * typesize) as usize],
        );
    }
}

/// A packed super-chunk (`b2nd_packed_unpack`): every chunk and metalayer it
/// holds is read, and when it unpacks, packing it gives a buffer that unpacks
/// and packs to the same bytes.
pub fn packed_unpack(data: &[u8]) {
    let Ok(mut sc) = packed::unpack(data) else {
        return;
    };
    read_everything(&mut sc);
    let repacked = packed::pack(&mut sc).expect("an unpacked super-chunk packs");
    let mut again = packed::unpack(&repacked).expect("what we packed unpacks");
    assert_eq!(
        packed::pack(&mut again).expect("it packs again"),
        repacked,
        "packing is not stable"
    );
}

/// A b2nd or caterva metalayer: when it parses, writing it back and parsing
/// again gives the same description.
pub fn nd_meta(data: &[u8]) {
    let Ok(meta) = NdMeta::from_meta_bytes(data, 8) else {
        return;
    };
    let bytes = meta.to_b2nd_bytes().expect("a parsed meta serialises");
    let again = NdMeta::from_b2nd_bytes(&bytes).expect("what we wrote parses");
    // Writers always emit the current version; everything else must survive.
    let expect = NdMeta {
        version: again.version,
        ..meta
    };
    assert_eq!(expect, again, "meta changed through a round trip");
}

/// An array from a contiguous frame (on the frame's bytes, or copied into a
/// chunk list, as the input's last bit says), edited: its middle item
/// written, its first dimension grown by one and that row deleted again.
/// After each edit that succeeds the array has the shape the edit gives it,
/// and serialises to a frame that reopens with that shape and the same
/// middle item. That item is compared with what the edited array itself
/// reads, since a lossy codec or filter among its parameters may change
/// what was written.
pub fn ndarray_edit(data: &[u8]) {
    let copy = data.last().is_some_and(|b| b & 1 == 1);
    let Ok(mut a) = NdArray::from_cframe(data, copy) else {
        return;
    };
    let chunks_per_dim = a.shape().iter().zip(a.chunkshape()).map(|(&s, &c)| {
        let c = i64::from(c);
        (c > 0)
            .then(|| s.checked_add(c - 1).map(|s| s / c))
            .flatten()
    });
    let grown_chunks = chunks_per_dim.enumerate().try_fold(1i64, |n, (d, c)| {
        n.checked_mul(c?.checked_add(i64::from(d == 0))?)
    });
    if a.ndim() == 0 || !chunk_fits(&a) || grown_chunks.map_or(true, |n| n > MAX_EDITED_CHUNKS) {
        return;
    }
    let at = middle(&a);
    if a.shape().iter().all(|&s| s > 0) {
        let typesize = usize::try_from(a.typesize()).unwrap_or(0);
        let item: Vec<u8> = (0..typesize).map(|i| data[i % data.len()] ^ 0x5a).collect();
        let stop: Vec<i64> = at.iter().map(|&b| b + 1).collect();
        let ones = vec![1i64; at.len()];
        if a.set_slice_cbuffer(&item, &ones, &at, &stop).is_ok() {
            read_item(&a, &at).expect("an item just written reads back");
            check_reopens(&a, &at);
        }
    }
    let mut grown = a.shape().to_vec();
    grown[0] += 1;
    if a.resize(&grown, None).is_ok() {
        assert_eq!(a.shape(), &grown[..], "shape after growing");
        check_reopens(&a, &at);
        if a.delete(0, grown[0] - 1, 1).is_ok() {
            grown[0] -= 1;
            assert_eq!(a.shape(), &grown[..], "shape after deleting a row");
            check_reopens(&a, &at);
        }
    }
}

/// Asserts that `a` serialises to a frame that reopens with its shape and
/// its item at `at`.
fn check_reopens(a: &NdArray, at: &[i64]) {
    let frame = a.to_cframe().expect("an edited array serialises");
    let back = NdArray::from_cframe(&frame, false).expect("an edited array reopens");
    assert_eq!(back.shape(), a.shape(), "shape after a reopen");
    assert_eq!(
        read_item(&back, at).ok(),
        read_item(a, at).ok(),
        "item at {at:?} after a reopen"
    );
}

/// A whole array from a contiguous frame, read back in full.
pub fn ndarray_cframe(data: &[u8]) {
    let Ok(a) = NdArray::from_cframe(data, true) else {
        return;
    };
    let Ok(n) = usize::try_from(a.nbytes()) else {
        return;
    };
    if n > MAX_DECODED {
        return;
    }
    let mut out = vec![0u8; n];
    let _ = a.to_cbuffer(&mut out);
}
