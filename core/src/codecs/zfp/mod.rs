//! zfp, the reference's plugin codecs 33 (fixed accuracy), 34 (fixed
//! precision) and 35 (fixed rate): lossy compression of `f32`/`f64` b2nd
//! blocks of 1 to 4 dimensions, in pure Rust.
//!
//! A stream is the bare zfp bit stream of one whole b2nd block (no zfp
//! header): the block is the zfp array, its last dimension the contiguous
//! one, cut into cells of 4 per side ([`field`]); each cell is a flag bit and
//! common exponent followed by its bit planes ([`block`], [`coder`]), and the
//! stream ends padded to a multiple of 8 bytes ([`bitstream`]). The decoder
//! needs the block shape of the array (the b2nd metalayer's), as the
//! reference's does.
//!
//! `compcode_meta` picks the mode's parameter as the reference's plugin does:
//!
//! - accuracy: the tolerance is `10^m` with `m` the meta read as an `i8`
//!   (253 is 1e-3); bit planes below its power of two are dropped;
//! - precision: `meta + 5`, `+ 7`, `+ 9` or `+ 11` bit planes for 1- to 4-D
//!   blocks (at most 64);
//! - rate: `meta` is the percentage of the input size to spend, so
//!   `meta / 100 * 8 * typesize` bits per item, rounded to a whole number of
//!   bits per cell (at least 9 for `f32`, 12 for `f64`).
//!
//! The arithmetic is the reference's (zfp 1.0.1 with its default build
//! options) step for step, so our streams are byte-identical to the
//! reference's for the same input and parameters, and its streams decode here
//! to bit-identical values.
//!
//! What the reference refuses (no block shape when one is needed, a shape
//! that is not 1- to 4-D or has an extent under 4 when compressing, items
//! that are not 4 or 8 bytes) is [`crate::Error::Failure`] (-1) when
//! compressing, as the reference's plugin returns. Blocks that are not a
//! whole b2nd block (a split stream, a short last block) are left
//! uncompressed, as there. Every decoding failure — including a stream too
//! short for its block, where the reference would read past its input — is
//! [`crate::Error::Data`], what the reference's chunk decoder turns any
//! failure of this codec into.

mod bitstream;
mod block;
mod coder;
mod field;
mod scalar;
mod transform;

use block::Params;
use field::Field;

/// The three codec ids.
pub(crate) const ACCURACY: u8 = 33;
pub(crate) const PRECISION: u8 = 34;
pub(crate) const RATE: u8 = 35;

/// Smallest exponent a bit plane can stand for (that of the least `f64`
/// subnormal): no planes are dropped for accuracy.
const MIN_EXP: i32 = -1074;
/// Bit planes at most.
const MAX_PREC: u32 = 64;
/// Per-cell bit limit of the variable-rate modes (never reached by them).
const MAX_BITS: u64 = 16658;

/// The item type of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    F32,
    F64,
}

impl Item {
    fn of(typesize: i32) -> Option<Item> {
        match typesize {
            4 => Some(Item::F32),
            8 => Some(Item::F64),
            _ => None,
        }
    }
    fn bytes(self) -> usize {
        match self {
            Item::F32 => 4,
            Item::F64 => 8,
        }
    }
}

/// The zfp parameters of codec `compcode` with `meta` for a `dims`-D block
/// of `item`s.
/// The field of a block of `shape` (extents already checked positive) and
/// the coding parameters for it.
fn field_and_params(compcode: u8, meta: u8, shape: &[i64], item: Item) -> (Field, Params) {
    let dims: Vec<usize> = shape.iter().map(|&e| e as usize).collect();
    (Field::new(&dims), params(compcode, meta, dims.len(), item))
}

fn params(compcode: u8, meta: u8, dims: usize, item: Item) -> Params {
    let variable = |maxprec, minexp| Params {
        minbits: 1,
        maxbits: MAX_BITS,
        maxprec,
        minexp,
    };
    match compcode {
        ACCURACY => {
            // The exponent e of the tolerance t = f * 2^e, 0.5 <= f < 1,
            // minus one: the plane of t's leading bit. 10^m is a normal
            // double for every i8 m.
            let tolerance = 10f64.powf(f64::from(meta as i8));
            let e = ((tolerance.to_bits() >> 52) & 0x7ff) as i32 - 1022;
            variable(MAX_PREC, e - 1)
        }
        PRECISION => {
            let extra = 3 + 2 * dims as u32;
            variable((u32::from(meta) + extra).min(MAX_PREC), MIN_EXP)
        }
        _ => {
            // Same operations, in the same order, as the reference.
            let ratio = f64::from(meta) / 100.0;
            let rate = ratio * item.bytes() as f64 * 8.0;
            let values = (1u32 << (2 * dims)) as f64;
            let bits = (values * rate + 0.5).floor() as u64;
            let least = match item {
                Item::F32 => 1 + 8,
                Item::F64 => 1 + 11,
            };
            let bits = bits.max(least);
            Params {
                minbits: bits,
                maxbits: bits,
                maxprec: MAX_PREC,
                minexp: MIN_EXP,
            }
        }
    }
}

/// Whether `compcode` is one of the zfp codecs.
pub(crate) fn is_zfp(compcode: u8) -> bool {
    (ACCURACY..=RATE).contains(&compcode)
}

/// Compresses one block `src` (items of `typesize` bytes, the b2nd block of
/// `block_shape`) into `dst`. `Ok(0)` means "store it uncompressed": no block
/// shape (no b2nd array), `src` not a whole block, or no gain.
pub(crate) fn encode(
    compcode: u8,
    meta: u8,
    typesize: i32,
    block_shape: Option<&[i64]>,
    src: &[u8],
    dst: &mut [u8],
) -> crate::Result<usize> {
    let Some(shape) = block_shape else {
        // The reference's plugin stores blocks of a context without a
        // super-chunk uncompressed.
        return Ok(0);
    };
    if shape.is_empty() || shape.len() > 4 {
        crate::bail!(
            Failure,
            "zfp needs a 1- to 4-D block, not {}-D",
            shape.len()
        );
    }
    if let Some(e) = shape.iter().find(|&&e| e < 4) {
        crate::bail!(Failure, "zfp needs block extents of 4 or more, not {e}");
    }
    let whole = shape
        .iter()
        .try_fold(i64::from(typesize), |n, &e| n.checked_mul(e));
    if whole != Some(src.len() as i64) {
        return Ok(0);
    }
    let Some(item) = Item::of(typesize) else {
        crate::bail!(
            Failure,
            "zfp codes 4- or 8-byte floats, not {typesize}-byte items"
        );
    };
    let (field, p) = field_and_params(compcode, meta, shape, item);
    let mut w = bitstream::Writer::new(dst);
    match item {
        Item::F32 => field::encode::<f32>(&field, &p, src, &mut w),
        Item::F64 => field::encode::<f64>(&field, &p, src, &mut w),
    }
    let n = w.finish();
    if w.overflowed() || n >= src.len() {
        return Ok(0);
    }
    Ok(n)
}

/// Decodes one stream into `dst` (the block's `neblock` bytes); returns
/// `dst.len()`.
pub(crate) fn decode(
    compcode: u8,
    meta: u8,
    typesize: i32,
    block_shape: Option<&[i64]>,
    src: &[u8],
    dst: &mut [u8],
) -> crate::Result<usize> {
    let Some(shape) = block_shape else {
        crate::bail!(
            Data,
            "zfp streams decode only with the block shape of a b2nd array"
        );
    };
    if shape.is_empty() || shape.len() > 4 {
        crate::bail!(Data, "zfp decodes 1- to 4-D blocks, not {}-D", shape.len());
    }
    if typesize <= 0 {
        crate::bail!(Data, "zfp item size {typesize}");
    }
    if let Some(e) = shape.iter().find(|&&e| e <= 0 || e > i64::from(i32::MAX)) {
        crate::bail!(Data, "zfp block extent {e}");
    }
    let size = shape
        .iter()
        .try_fold(typesize as usize, |n, &e| n.checked_mul(e as usize))
        .filter(|&n| n <= dst.len());
    let Some(size) = size else {
        crate::bail!(
            Data,
            "zfp block of {shape:?} is larger than its {} bytes",
            dst.len()
        );
    };
    let Some(item) = Item::of(typesize) else {
        crate::bail!(
            Data,
            "zfp decodes 4- or 8-byte floats, not {typesize}-byte items"
        );
    };
    let (field, p) = field_and_params(compcode, meta, shape, item);
    let mut r = bitstream::Reader::new(src);
    let (out, rest) = dst.split_at_mut(size);
    match item {
        Item::F32 => field::decode::<f32>(&field, &p, &mut r, out),
        Item::F64 => field::decode::<f64>(&field, &p, &mut r, out),
    }
    if r.overrun() {
        crate::bail!(
            Data,
            "zfp stream of {} bytes is too short for its block",
            src.len()
        );
    }
    // A block shape smaller than the block (a metalayer at odds with the
    // chunk): the reference leaves the rest as it was; here it is zeros.
    rest.fill(0);
    Ok(dst.len())
}

/// Decodes the items `first..first + out.len() / typesize` of a fixed-rate
/// stream ([`RATE`]) of one whole block by decoding only the cell that holds
/// them, when one does (they sit in one row of one cell); `Ok(false)` when
/// not, and then the caller decodes the block. Every cell of a fixed-rate
/// stream takes exactly the same number of bits, so a cell's bits are found
/// without reading those before it; the values are the ones a whole decode
/// gives. This is the reference's `getitem` shortcut for one item, which it
/// takes for runs of a few items too (and then reads values of another row).
pub(crate) fn decode_items(
    meta: u8,
    typesize: i32,
    block_shape: &[i64],
    src: &[u8],
    first: usize,
    out: &mut [u8],
) -> crate::Result<bool> {
    let (Some(item), 1..=4) = (Item::of(typesize), block_shape.len()) else {
        return Ok(false);
    };
    if block_shape
        .iter()
        .any(|&e| e <= 0 || e > i64::from(i32::MAX))
    {
        return Ok(false);
    }
    let count = out.len() / item.bytes();
    let row = *block_shape.last().unwrap_or(&1) as usize;
    let last = first + count.max(1) - 1;
    let total = block_shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e as usize));
    if count == 0 || !matches!(total, Some(t) if last < t) {
        return Ok(false);
    }
    // One cell row: the same row of the block and the same four columns.
    if first / row != last / row || (first % row) / 4 != (last % row) / 4 {
        return Ok(false);
    }
    let (field, p) = field_and_params(RATE, meta, block_shape, item);
    let (cell, within) = field.cell_of(first);
    let mut r = bitstream::Reader::new(src);
    r.skip(cell as u64 * p.maxbits);
    match item {
        Item::F32 => field::decode_cell_items::<f32>(&field, &p, &mut r, within, out),
        Item::F64 => field::decode_cell_items::<f64>(&field, &p, &mut r, within, out),
    }
    if r.overrun() {
        crate::bail!(
            Data,
            "zfp stream of {} bytes is too short for its block",
            src.len()
        );
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fnv(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    }

    /// Streams python-blosc2 4.14.1 (C-Blosc2 3.3.5, zfp 1.0.1) writes for
    /// one block of `((i * 7) % 13) * 0.25 - 1 + (i % 5) * 0.001` (computed
    /// in f64, stored as the item type): (block shape, item size, codec,
    /// meta, stream length, FNV-1a of the stream, FNV-1a of the values the
    /// reference decodes from it).
    type Case = (&'static [i64], i32, u8, u8, usize, u64, u64);
    const REFERENCE_STREAMS: [Case; 6] = [
        (
            &[37],
            4,
            33,
            253,
            80,
            0x3417_8889_c642_723b,
            0xbe79_8530_877b_5449,
        ),
        (
            &[9, 10],
            4,
            34,
            15,
            320,
            0xfbed_780f_4e62_42af,
            0x4554_b033_f7d2_1f82,
        ),
        (
            &[9, 10],
            8,
            35,
            30,
            352,
            0x44bd_42cd_a5c4_3fcf,
            0x83b7_86be_770a_8420,
        ),
        (
            &[4, 5, 6],
            8,
            33,
            250,
            720,
            0xd46e_b8ae_2037_be2b,
            0x6a07_3a86_08bb_9f39,
        ),
        (
            &[4, 4, 5, 4],
            4,
            35,
            20,
            416,
            0xeda4_6a77_ed33_b080,
            0xa3ea_38dc_b7f9_544f,
        ),
        (
            &[6, 4, 4, 5],
            8,
            34,
            20,
            3288,
            0x2479_87ca_1046_9173,
            0x8bb1_34bf_b272_dce3,
        ),
    ];

    #[test]
    fn streams_and_values_are_the_references() {
        for (shape, typesize, compcode, meta, len, stream_hash, values_hash) in REFERENCE_STREAMS {
            let n = shape.iter().product::<i64>() as usize;
            let src: Vec<u8> = (0..n)
                .flat_map(|i| {
                    let v = ((i * 7) % 13) as f64 * 0.25 - 1.0 + (i % 5) as f64 * 1e-3;
                    if typesize == 4 {
                        (v as f32).to_le_bytes().to_vec()
                    } else {
                        v.to_le_bytes().to_vec()
                    }
                })
                .collect();
            let mut stream = vec![0u8; src.len()];
            let got = encode(compcode, meta, typesize, Some(shape), &src, &mut stream).unwrap();
            assert_eq!(got, len, "{shape:?} {compcode}");
            assert_eq!(fnv(&stream[..got]), stream_hash, "{shape:?} {compcode}");
            let mut back = vec![0u8; src.len()];
            decode(
                compcode,
                meta,
                typesize,
                Some(shape),
                &stream[..got],
                &mut back,
            )
            .unwrap();
            assert_eq!(fnv(&back), values_hash, "{shape:?} {compcode}");
        }
    }

    #[test]
    fn items_of_one_cell_decode_alone_to_the_whole_decodes_values() {
        for (shape, typesize) in [
            (&[37][..], 4),
            (&[9, 10][..], 8),
            (&[4, 5, 6][..], 4),
            (&[5, 4, 6, 5][..], 8),
        ] {
            let n = shape.iter().product::<i64>() as usize;
            let src: Vec<u8> = (0..n)
                .flat_map(|i| {
                    let v = ((i * 7) % 13) as f64 * 0.25 - 1.0 + (i % 5) as f64 * 1e-3;
                    if i % 17 == 3 {
                        // Some all-zero cells as well.
                        vec![0u8; typesize as usize]
                    } else if typesize == 4 {
                        (v as f32).to_le_bytes().to_vec()
                    } else {
                        v.to_le_bytes().to_vec()
                    }
                })
                .collect();
            for meta in [5u8, 12, 25] {
                let mut stream = vec![0u8; src.len()];
                let got = encode(RATE, meta, typesize, Some(shape), &src, &mut stream).unwrap();
                assert!(got > 0);
                let stream = &stream[..got];
                let mut whole = vec![0u8; src.len()];
                decode(RATE, meta, typesize, Some(shape), stream, &mut whole).unwrap();
                let ts = typesize as usize;
                let row = *shape.last().unwrap() as usize;
                for first in 0..n {
                    for count in 1..=4 {
                        let mut out = vec![0u8; count * ts];
                        let last = first + count - 1;
                        let one_cell = last < n
                            && first / row == last / row
                            && (first % row) / 4 == (last % row) / 4;
                        let done =
                            decode_items(meta, typesize, shape, stream, first, &mut out).unwrap();
                        assert_eq!(done, one_cell, "{shape:?} {first} {count}");
                        if done {
                            let want = &whole[first * ts..(last + 1) * ts];
                            assert_eq!(out, want, "{shape:?} {first}");
                        }
                    }
                }
                // The cell's own bits are all it reads: a stream cut right
                // after the first cell still gives that cell's items, which a
                // whole decode refuses.
                let p = params(RATE, meta, shape.len(), Item::of(typesize).unwrap());
                let cut = &stream[..(p.maxbits as usize).div_ceil(64) * 8];
                let mut out = vec![0u8; ts];
                assert!(decode_items(meta, typesize, shape, cut, 0, &mut out).unwrap());
                assert_eq!(out, whole[..ts]);
                let mut again = vec![0u8; src.len()];
                assert!(decode(RATE, meta, typesize, Some(shape), cut, &mut again).is_err());
                // Past the stream: an error, not a read out of bounds.
                let last_item = n - 1;
                assert_eq!(
                    decode_items(meta, typesize, shape, cut, last_item, &mut out)
                        .unwrap_err()
                        .code(),
                    -3
                );
            }
        }
    }

    #[test]
    fn meta_maps_to_the_reference_parameters() {
        // 1e-3 = 0.512 * 2^-9: planes down to 2^-10.
        assert_eq!(params(ACCURACY, 253, 3, Item::F32).minexp, -10);
        assert_eq!(params(ACCURACY, 0, 3, Item::F32).minexp, 0);
        assert_eq!(params(ACCURACY, 2, 1, Item::F64).minexp, 6);
        assert_eq!(params(PRECISION, 20, 1, Item::F32).maxprec, 25);
        assert_eq!(params(PRECISION, 20, 4, Item::F64).maxprec, 31);
        assert_eq!(params(PRECISION, 60, 2, Item::F64).maxprec, 64);
        // 37% of 32 bits per item, 16 items: 189.44 -> 189 bits.
        assert_eq!(params(RATE, 37, 2, Item::F32).maxbits, 189);
        assert_eq!(params(RATE, 37, 2, Item::F32).minbits, 189);
        assert_eq!(params(RATE, 1, 1, Item::F32).maxbits, 9);
        assert_eq!(params(RATE, 1, 1, Item::F64).maxbits, 12);
        assert_eq!(params(RATE, 255, 4, Item::F64).maxbits, 41779);
    }

    #[test]
    fn refusals_and_pass_throughs() {
        let src = vec![0u8; 4 * 64];
        let mut dst = vec![0u8; src.len()];
        let enc = |shape: Option<&[i64]>, ts: i32, src: &[u8], dst: &mut [u8]| {
            encode(ACCURACY, 253, ts, shape, src, dst)
        };
        assert_eq!(enc(None, 4, &src, &mut dst).unwrap(), 0);
        // Not a whole block (a split stream).
        assert_eq!(enc(Some(&[8, 16]), 4, &src, &mut dst).unwrap(), 0);
        for bad in [&[][..], &[4, 4, 4, 4, 1][..], &[4, 3][..]] {
            assert_eq!(enc(Some(bad), 4, &src, &mut dst).unwrap_err().code(), -1);
        }
        assert_eq!(
            enc(Some(&[8, 16]), 2, &src, &mut dst).unwrap_err().code(),
            -1
        );
        // Zeros compress to one bit a cell.
        assert_eq!(enc(Some(&[8, 8]), 4, &src, &mut dst).unwrap(), 8);
        let dec = |shape: Option<&[i64]>, ts: i32, dst: &mut [u8]| {
            decode(ACCURACY, 253, ts, shape, &[0u8; 8], dst)
        };
        for (shape, ts) in [
            (None, 4),
            (Some(&[8, 9][..]), 4),
            (Some(&[0, 8][..]), 4),
            (Some(&[-8, 8][..]), 4),
            (Some(&[8, 8][..]), 2),
            (Some(&[8, 8][..]), 0),
            (Some(&[1, 1, 1, 1, 1][..]), 4),
            (Some(&[i64::MAX, 2][..]), 4),
        ] {
            assert_eq!(
                dec(shape, ts, &mut dst).unwrap_err().code(),
                -3,
                "{shape:?}"
            );
        }
        assert_eq!(dec(Some(&[8, 8]), 4, &mut dst).unwrap(), dst.len());
        assert!(dst.iter().all(|&b| b == 0));
        // A cell that asks for more bits than the stream has.
        let mut ones = [0xffu8; 8];
        ones[7] = 0x7f;
        assert_eq!(
            decode(PRECISION, 10, 4, Some(&[4]), &ones, &mut dst[..16])
                .unwrap_err()
                .code(),
            -3
        );
    }
}
