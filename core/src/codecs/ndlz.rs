//! NDLZ, the reference's plugin codec 32: a 2-D Lempel-Ziv over square cells
//! of a b2nd block (4x4 or 8x8 items of one byte, chosen by `compcode_meta`).
//!
//! A stream is `ndim` (always 2), the block's two extents as little-endian
//! `i32`, then one token per cell in row-major cell order. A token says where
//! the cell's bytes come from: the stream itself (a literal cell), one byte
//! repeated, or earlier bytes of the *compressed stream* (a whole cell, or
//! some of its rows with the rest given literally), addressed by a `u16`
//! distance back from the token. Edge cells cut by the block's extents hold
//! only their in-block part. The decoder accepts every token the reference's
//! decoder does, with the same meaning.
//!
//! The encoder is this crate's own: it emits literal, repeated-byte and
//! whole-cell tokens plus the row-pair and row-triple matches, each checked
//! byte for byte against the stream before use, and never the 4x4 two-pair
//! token (valid, but rarely worth its lookups). Its streams decode in the
//! reference; they need not be byte-identical to the reference's own, whose
//! choices depend on its hash function.

/// Header: `ndim` and two `i32` extents.
const HEADER: usize = 9;
/// Farthest back a token can reach (its distance is a `u16`; the reference
/// never writes 65535 itself, so neither do we).
const MAX_DISTANCE: usize = 65_534;

/// Tokens shared by both cell sizes.
const LITERAL: u8 = 0;
const REPEATED: u8 = 1 << 6;
const CELL_MATCH: u8 = (1 << 7) | (1 << 6);

/// The cell side a stream uses, from `compcode_meta`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Four,
    Eight,
}

impl Side {
    fn from_meta(meta: u8) -> crate::Result<Self> {
        match meta {
            4 => Ok(Self::Four),
            8 => Ok(Self::Eight),
            m => crate::bail!(Failure, "NDLZ has no cell size {m} (4 or 8)"),
        }
    }
    const fn len(self) -> usize {
        match self {
            Self::Four => 4,
            Self::Eight => 8,
        }
    }
}

/// One cell's place in the block: where its first item is, and how many of
/// its rows and columns lie inside the block.
#[derive(Clone, Copy)]
struct CellAt {
    origin: usize,
    rows: usize,
    cols: usize,
}

/// The cells of a `shape[0] x shape[1]` block in row-major cell order.
fn cells(shape: [usize; 2], side: usize) -> impl Iterator<Item = CellAt> {
    let across = shape[1].div_ceil(side);
    let down = shape[0].div_ceil(side);
    (0..down).flat_map(move |ci| {
        (0..across).map(move |cj| CellAt {
            origin: ci * side * shape[1] + cj * side,
            rows: side.min(shape[0] - ci * side),
            cols: side.min(shape[1] - cj * side),
        })
    })
}

// ---- Decoding ---------------------------------------------------------------

/// Reads a stream's bytes at absolute positions, failing (never panicking)
/// outside it.
struct Reader<'a> {
    src: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> crate::Result<&'a [u8]> {
        let s = self
            .src
            .get(self.at..self.at.saturating_add(n))
            .ok_or_else(|| crate::err!(Failure, "NDLZ stream ends inside a cell"))?;
        self.at += n;
        Ok(s)
    }
    fn byte(&mut self) -> crate::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn distance(&mut self) -> crate::Result<usize> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_le_bytes([b[0], b[1]])))
    }
    /// `len` bytes that start `distance` bytes before the token at `token`.
    fn back(&self, token: usize, distance: usize, len: usize) -> crate::Result<&'a [u8]> {
        token
            .checked_sub(distance)
            .and_then(|from| self.src.get(from..from + len))
            .ok_or_else(|| crate::err!(Failure, "NDLZ reference outside the stream"))
    }
}

/// Decodes one NDLZ stream into `dst`; returns the bytes written (the
/// block's two extents multiplied).
pub(crate) fn decode(meta: u8, src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
    let side = Side::from_meta(meta)?;
    let n = side.len();
    if src.len() < HEADER {
        crate::bail!(Failure, "NDLZ stream shorter than its header");
    }
    if src[0] != 2 {
        crate::bail!(Failure, "NDLZ stream for {} dimensions (only 2)", src[0]);
    }
    let extent = |at: usize| i32::from_le_bytes([src[at], src[at + 1], src[at + 2], src[at + 3]]);
    let (Ok(rows), Ok(cols)) = (usize::try_from(extent(1)), usize::try_from(extent(5))) else {
        crate::bail!(Failure, "NDLZ block extents are negative");
    };
    let total = rows
        .checked_mul(cols)
        .filter(|&t| t <= dst.len())
        .ok_or_else(|| crate::err!(Failure, "NDLZ block is larger than its output"))?;
    let mut r = Reader { src, at: HEADER };
    // Rows of a matched cell, rebuilt here: side x side at most.
    let mut rebuilt = [0u8; 64];
    for cell in cells([rows, cols], n) {
        let token_at = r.at;
        let token = r.byte()?;
        let part = cell.rows * cell.cols;
        // The cell's in-block bytes, `cell.cols` per row.
        let bytes: &[u8] = match token {
            LITERAL => r.take(part)?,
            CELL_MATCH => {
                let d = r.distance()?;
                r.back(token_at, d, part)?
            }
            REPEATED => {
                let v = r.byte()?;
                rebuilt[..part].fill(v);
                &rebuilt[..part]
            }
            t => {
                rows_match(side, t, token_at, &mut r, &mut rebuilt)?;
                // The reference reads a rebuilt cell with the edge cell's
                // row length, as it does every other source.
                &rebuilt[..part]
            }
        };
        for (i, row) in bytes
            .chunks_exact(cell.cols.max(1))
            .take(cell.rows)
            .enumerate()
        {
            let at = cell.origin + i * cols;
            dst.get_mut(at..at + cell.cols)
                .ok_or_else(|| crate::err!(Failure, "NDLZ cell outside the block"))?
                .copy_from_slice(row);
        }
    }
    Ok(total)
}

/// Rebuilds a cell whose token matches some of its rows (all of `out`'s
/// first side*side bytes are written).
fn rows_match(
    side: Side,
    token: u8,
    token_at: usize,
    r: &mut Reader<'_>,
    out: &mut [u8; 64],
) -> crate::Result<()> {
    let n = side.len();
    match side {
        Side::Four if (40..=63).contains(&token) => {
            // Two pairs: row 0 with row j from one place, the other two rows
            // from another.
            let j = usize::from((token - 32) >> 3);
            let d1 = r.distance()?;
            let d2 = r.distance()?;
            let first = r.back(token_at, d1, 8)?;
            let second = r.back(token_at, d2, 8)?;
            let mut others = (1..4).filter(|&k| k != j);
            let (l, m) = (others.next().unwrap_or(1), others.next().unwrap_or(2));
            out[..4].copy_from_slice(&first[..4]);
            out[j * 4..j * 4 + 4].copy_from_slice(&first[4..]);
            out[l * 4..l * 4 + 4].copy_from_slice(&second[..4]);
            out[m * 4..m * 4 + 4].copy_from_slice(&second[4..]);
            Ok(())
        }
        Side::Four => {
            // Rows taken from the stream; the others follow literally. Pair
            // tokens name rows i and j by bit fields (either may repeat or
            // come in reverse order: the reference decodes those too).
            let rows: [usize; 3];
            let matched: &[usize] = match token {
                224..=231 => &[1, 2, 3],
                232..=239 => &[0, 1, 2],
                240..=247 => &[0, 1, 3],
                248..=255 => &[0, 2, 3],
                128 => &[2, 3],
                129..=191 => {
                    let i = usize::from((token - 128) >> 5);
                    let j = usize::from((token - 128) >> 3) - (i << 2);
                    rows = [i, j, 0];
                    &rows[..2]
                }
                _ => crate::bail!(Failure, "NDLZ token {token} is not defined"),
            };
            let d = r.distance()?;
            let from = r.back(token_at, d, matched.len() * 4)?;
            put_rows(out, n, matched, from, r)
        }
        Side::Eight => {
            let first = usize::from(token & 7);
            let count = match token >> 3 {
                17 => 2,
                21 => 3,
                _ => crate::bail!(Failure, "NDLZ token {token} is not defined"),
            };
            if first + count > n {
                crate::bail!(Failure, "NDLZ row match past the cell");
            }
            let d = r.distance()?;
            let from = r.back(token_at, d, count * n)?;
            let rows = [first, first + 1, first + 2];
            put_rows(out, n, &rows[..count], from, r)
        }
    }
}

/// Places `matched` rows from `from`, then reads every other row literally.
fn put_rows(
    out: &mut [u8; 64],
    n: usize,
    matched: &[usize],
    from: &[u8],
    r: &mut Reader<'_>,
) -> crate::Result<()> {
    for (k, &row) in matched.iter().enumerate() {
        out[row * n..row * n + n].copy_from_slice(&from[k * n..k * n + n]);
    }
    for row in (0..n).filter(|row| !matched.contains(row)) {
        out[row * n..row * n + n].copy_from_slice(r.take(n)?);
    }
    Ok(())
}

// ---- Encoding ---------------------------------------------------------------

/// Bits of each lookup table's index.
const TABLE_BITS: u32 = 12;

/// Stream positions of earlier literal bytes, by a hash of those bytes.
/// Position 0 (inside the header) means empty.
struct Table(Box<[u32; 1 << TABLE_BITS]>);

impl Table {
    fn new() -> Self {
        Self(Box::new([0; 1 << TABLE_BITS]))
    }
    fn slot(key: &[u8]) -> usize {
        let mut h: u64 = key.len() as u64;
        for w in key.chunks(4) {
            let mut b = [0u8; 4];
            b[..w.len()].copy_from_slice(w);
            h = (h.rotate_left(23) ^ u64::from(u32::from_le_bytes(b)))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        (h >> (64 - TABLE_BITS)) as usize
    }
    /// Where `key` was last seen literally, if it is still there and near.
    fn find(&self, out: &[u8], token_at: usize, key: &[u8]) -> Option<u16> {
        let pos = self.0[Self::slot(key)] as usize;
        if pos == 0 || token_at - pos > MAX_DISTANCE || out.get(pos..pos + key.len())? != key {
            return None;
        }
        u16::try_from(token_at - pos).ok()
    }
    fn remember(&mut self, key: &[u8], pos: usize) {
        if let Ok(p) = u32::try_from(pos) {
            self.0[Self::slot(key)] = p;
        }
    }
}

/// An output stream that reports, instead of overrunning, when it is full.
struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        self.out
            .get_mut(self.at..self.at + bytes.len())?
            .copy_from_slice(bytes);
        self.at += bytes.len();
        Some(())
    }
}

/// Compresses one block of `block_shape` (2-D, one byte per item) into `dst`.
/// `Ok(0)` when the stream would not be smaller than `src` or not fit `dst`.
pub(crate) fn encode(
    meta: u8,
    block_shape: Option<&[i64]>,
    src: &[u8],
    dst: &mut [u8],
) -> crate::Result<usize> {
    let side = Side::from_meta(meta)?;
    let shape = match block_shape {
        Some(&[r, c]) => [r, c],
        Some(s) => crate::bail!(Failure, "NDLZ needs a 2-D array, not {}-D", s.len()),
        None => crate::bail!(Failure, "NDLZ needs the block shape of a b2nd array"),
    };
    let (Ok(rows), Ok(cols)) = (usize::try_from(shape[0]), usize::try_from(shape[1])) else {
        crate::bail!(Failure, "NDLZ block extents are negative");
    };
    if rows.checked_mul(cols) != Some(src.len()) {
        crate::bail!(
            Failure,
            "NDLZ block of {rows}x{cols} items does not match {} bytes (one byte per item)",
            src.len()
        );
    }
    let (Ok(r32), Ok(c32)) = (i32::try_from(rows), i32::try_from(cols)) else {
        crate::bail!(Failure, "NDLZ block extents over 2^31");
    };
    let limit = dst.len().min(src.len());
    let mut w = Writer {
        out: &mut dst[..limit],
        at: 0,
    };
    let header_fits = w
        .put(&[2])
        .and_then(|()| w.put(&r32.to_le_bytes()))
        .and_then(|()| w.put(&c32.to_le_bytes()));
    if header_fits.is_none() {
        return Ok(0);
    }
    let mut enc = Encoder {
        side,
        cells: Table::new(),
        pairs: Table::new(),
        triples: Table::new(),
    };
    for cell in cells([rows, cols], side.len()) {
        if enc.cell(&mut w, src, cols, cell).is_none() {
            return Ok(0);
        }
    }
    Ok(w.at)
}

struct Encoder {
    side: Side,
    cells: Table,
    pairs: Table,
    triples: Table,
}

impl Encoder {
    /// Writes one cell's token; `None` when the output is full.
    fn cell(&mut self, w: &mut Writer<'_>, src: &[u8], cols: usize, cell: CellAt) -> Option<()> {
        let n = self.side.len();
        let mut buf = [0u8; 64];
        for i in 0..cell.rows {
            let at = cell.origin + i * cols;
            buf[i * cell.cols..(i + 1) * cell.cols].copy_from_slice(&src[at..at + cell.cols]);
        }
        let part = cell.rows * cell.cols;
        let bytes = &buf[..part];
        let token_at = w.at;
        if cell.rows < n || cell.cols < n {
            // Edge cells go literally, as the reference writes them.
            w.put(&[LITERAL])?;
            return w.put(bytes);
        }
        if bytes.iter().all(|&b| b == bytes[0]) {
            return w.put(&[REPEATED, bytes[0]]);
        }
        if let Some(d) = self.cells.find(w.out, token_at, bytes) {
            w.put(&[CELL_MATCH])?;
            return w.put(&d.to_le_bytes());
        }
        if self.rows(w, bytes, token_at)? {
            return Some(());
        }
        w.put(&[LITERAL])?;
        w.put(bytes)?;
        let lit = token_at + 1;
        self.cells.remember(bytes, lit);
        for first in 0..n - 1 {
            self.pairs
                .remember(&bytes[first * n..(first + 2) * n], lit + first * n);
        }
        for first in 0..n - 2 {
            self.triples
                .remember(&bytes[first * n..(first + 3) * n], lit + first * n);
        }
        Some(())
    }

    /// Tries the row-match tokens, triples first; `Some(true)` when one was
    /// written.
    fn rows(&self, w: &mut Writer<'_>, cell: &[u8], token_at: usize) -> Option<bool> {
        let n = self.side.len();
        let candidates: &[(u8, &[usize])] = match self.side {
            Side::Four => &[
                (224, &[1, 2, 3]),
                (232, &[0, 1, 2]),
                (240, &[0, 1, 3]),
                (248, &[0, 2, 3]),
                (136, &[0, 1]),
                (144, &[0, 2]),
                (152, &[0, 3]),
                (176, &[1, 2]),
                (184, &[1, 3]),
                (128, &[2, 3]),
            ],
            Side::Eight => &[
                (168, &[0, 1, 2]),
                (169, &[1, 2, 3]),
                (170, &[2, 3, 4]),
                (171, &[3, 4, 5]),
                (172, &[4, 5, 6]),
                (173, &[5, 6, 7]),
                (136, &[0, 1]),
                (137, &[1, 2]),
                (138, &[2, 3]),
                (139, &[3, 4]),
                (140, &[4, 5]),
                (141, &[5, 6]),
                (142, &[6, 7]),
            ],
        };
        let mut key = [0u8; 24];
        for &(token, matched) in candidates {
            let len = matched.len() * n;
            for (k, &row) in matched.iter().enumerate() {
                key[k * n..(k + 1) * n].copy_from_slice(&cell[row * n..(row + 1) * n]);
            }
            let table = if matched.len() == 3 {
                &self.triples
            } else {
                &self.pairs
            };
            let Some(d) = table.find(w.out, token_at, &key[..len]) else {
                continue;
            };
            w.put(&[token])?;
            w.put(&d.to_le_bytes())?;
            for row in (0..n).filter(|row| !matched.contains(row)) {
                w.put(&cell[row * n..(row + 1) * n])?;
            }
            return Some(true);
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(meta: u8, rows: usize, cols: usize, src: &[u8]) -> usize {
        let shape = [rows as i64, cols as i64];
        let mut enc = vec![0u8; src.len() + 64];
        let n = encode(meta, Some(&shape), src, &mut enc).unwrap();
        if n == 0 {
            return 0;
        }
        let mut back = vec![0u8; src.len()];
        assert_eq!(decode(meta, &enc[..n], &mut back).unwrap(), src.len());
        assert_eq!(back, src, "meta {meta} {rows}x{cols}");
        n
    }

    /// Tiles of a few distinct 8x8 patterns, so every token kind has
    /// something to find.
    fn tiled(rows: usize, cols: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let rowpats: Vec<[u8; 8]> = (0..6).map(|_| next().to_le_bytes()).collect();
        (0..rows * cols)
            .map(|k| {
                let (i, j) = (k / cols, k % cols);
                let pick = ((i / 2) % 3 + (j / 8) % 2) % rowpats.len();
                if (i / 8 + j / 8) % 5 == 0 {
                    9
                } else {
                    rowpats[pick][j % 8]
                }
            })
            .collect()
    }

    #[test]
    fn round_trips_every_shape_and_cell_size() {
        for meta in [4u8, 8] {
            for (rows, cols) in [
                (4, 4),
                (8, 8),
                (16, 16),
                (7, 9),
                (33, 64),
                (64, 31),
                (1, 40),
                (40, 1),
            ] {
                for seed in 1..4 {
                    round_trip(meta, rows, cols, &tiled(rows, cols, seed));
                }
            }
        }
    }

    #[test]
    fn repetitive_blocks_compress() {
        let src = tiled(64, 64, 7);
        for meta in [4u8, 8] {
            let n = round_trip(meta, 64, 64, &src);
            assert!(n > 0 && n < src.len() / 2, "meta {meta}: {n}");
        }
    }

    #[test]
    fn random_blocks_are_left_to_the_caller() {
        let mut s = 99u64;
        let src: Vec<u8> = (0..32 * 32)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                (s >> 33) as u8
            })
            .collect();
        let mut out = vec![0u8; src.len()];
        assert_eq!(encode(4, Some(&[32, 32]), &src, &mut out).unwrap(), 0);
    }

    /// A stream with one token of each 4x4 kind, written by hand.
    #[test]
    fn decodes_every_4x4_token() {
        // Block 4 x 28: seven cells in one row.
        let mut s = vec![2u8];
        s.extend_from_slice(&4i32.to_le_bytes());
        s.extend_from_slice(&28i32.to_le_bytes());
        let lit: Vec<u8> = (1..=16).collect();
        s.push(0);
        s.extend_from_slice(&lit); // cell 0: literal at 10..26
        let token = s.len();
        s.push(CELL_MATCH);
        s.extend_from_slice(&((token - 10) as u16).to_le_bytes()); // cell 1 = cell 0
        s.extend_from_slice(&[REPEATED, 77]); // cell 2
        let token = s.len();
        s.push(144); // rows 0 and 2 from lit rows 1..2 (bytes 14..22)
        s.extend_from_slice(&((token - 14) as u16).to_le_bytes());
        s.extend_from_slice(&[21, 22, 23, 24, 25, 26, 27, 28]); // rows 1, 3
        let token = s.len();
        s.push(248); // rows 0, 2, 3 from lit rows 0..2 (bytes 10..22)
        s.extend_from_slice(&((token - 10) as u16).to_le_bytes());
        s.extend_from_slice(&[31, 32, 33, 34]); // row 1
        let token = s.len();
        s.push(48); // two pairs: rows 0,2 from 10..18; rows 1,3 from 18..26
        s.extend_from_slice(&((token - 10) as u16).to_le_bytes());
        s.extend_from_slice(&((token - 18) as u16).to_le_bytes());
        let token = s.len();
        s.push(128); // rows 2, 3 from lit rows 0..1
        s.extend_from_slice(&((token - 10) as u16).to_le_bytes());
        s.extend_from_slice(&[41, 42, 43, 44, 45, 46, 47, 48]); // rows 0, 1
        let mut out = vec![0u8; 4 * 28];
        assert_eq!(decode(4, &s, &mut out).unwrap(), 112);
        let cell = |c: usize| -> Vec<u8> {
            (0..4)
                .flat_map(|i| out[i * 28 + c * 4..i * 28 + c * 4 + 4].to_vec())
                .collect()
        };
        assert_eq!(cell(0), lit);
        assert_eq!(cell(1), lit);
        assert_eq!(cell(2), vec![77; 16]);
        assert_eq!(
            cell(3),
            [5, 6, 7, 8, 21, 22, 23, 24, 9, 10, 11, 12, 25, 26, 27, 28]
        );
        assert_eq!(
            cell(4),
            [1, 2, 3, 4, 31, 32, 33, 34, 5, 6, 7, 8, 9, 10, 11, 12]
        );
        assert_eq!(
            cell(5),
            [1, 2, 3, 4, 9, 10, 11, 12, 5, 6, 7, 8, 13, 14, 15, 16]
        );
        assert_eq!(
            cell(6),
            [41, 42, 43, 44, 45, 46, 47, 48, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn decodes_8x8_row_matches() {
        let mut s = vec![2u8];
        s.extend_from_slice(&8i32.to_le_bytes());
        s.extend_from_slice(&16i32.to_le_bytes());
        let lit: Vec<u8> = (0..64).collect();
        s.push(0);
        s.extend_from_slice(&lit); // at 10..74
        let token = s.len();
        s.push(168 + 5); // rows 5, 6, 7 from lit rows 2..5 (bytes 26..50)
        s.extend_from_slice(&((token - 26) as u16).to_le_bytes());
        let rest: Vec<u8> = (100..140).collect();
        s.extend_from_slice(&rest); // rows 0..5
        let mut out = vec![0u8; 128];
        assert_eq!(decode(8, &s, &mut out).unwrap(), 128);
        for i in 0..8 {
            let row = &out[i * 16 + 8..i * 16 + 16];
            let want: Vec<u8> = if i < 5 {
                rest[i * 8..i * 8 + 8].to_vec()
            } else {
                lit[(i - 3) * 8..(i - 3) * 8 + 8].to_vec()
            };
            assert_eq!(row, &want[..], "row {i}");
        }
    }

    #[test]
    fn bad_streams_fail_cleanly() {
        let mut good = vec![0u8; 512];
        let src = tiled(16, 32, 3);
        let n = encode(8, Some(&[16, 32]), &src, &mut good).unwrap();
        assert!(n > 0);
        let good = &good[..n];
        let mut out = vec![0u8; 512];
        // Every truncation, every single-byte corruption: an error or some
        // output, never a panic or a read outside the stream.
        for cut in 0..good.len() {
            assert!(decode(8, &good[..cut], &mut out).is_err(), "cut {cut}");
        }
        for at in 0..good.len() {
            for v in [0u8, 1, 0x40, 0x88, 0xA8, 0xC0, 0xFF] {
                let mut bad = good.to_vec();
                bad[at] = v;
                let _ = decode(8, &bad, &mut out);
                let _ = decode(4, &bad, &mut out);
            }
        }
        let mut hdr = good.to_vec();
        hdr[0] = 3;
        assert!(decode(8, &hdr, &mut out).is_err());
        let mut neg = good.to_vec();
        neg[4] = 0x80;
        assert!(decode(8, &neg, &mut out).is_err());
        assert!(decode(8, good, &mut out[..511]).is_err());
        assert!(decode(5, good, &mut out).is_err());
        // A back-reference before the stream's start.
        let mut s = vec![2u8, 4, 0, 0, 0, 4, 0, 0, 0, CELL_MATCH, 200, 0];
        assert!(decode(4, &s, &mut out[..16]).is_err());
        s[9] = 0x30;
        assert!(decode(4, &s, &mut out[..16]).is_err());
    }

    #[test]
    fn encoding_needs_a_matching_2d_block() {
        let mut out = vec![0u8; 100];
        assert!(encode(4, None, &[0; 16], &mut out).is_err());
        assert!(encode(4, Some(&[2, 2, 4]), &[0; 16], &mut out).is_err());
        assert!(encode(4, Some(&[4, 8]), &[0; 16], &mut out).is_err());
        assert!(encode(6, Some(&[4, 4]), &[0; 16], &mut out).is_err());
        assert!(encode(4, Some(&[-4, -4]), &[0; 16], &mut out).is_err());
    }
}
