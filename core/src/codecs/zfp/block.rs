//! One block of 4^d floats to bits and back: a flag bit (all zero or not),
//! the common exponent, then the transformed, reordered coefficients through
//! the bit-plane coder, padded to the mode's minimum size.

use super::bitstream::{Reader, Writer};
use super::coder;
use super::scalar::Real;
use super::transform::{self, BlockInt};

/// The four numbers that make up a zfp compression mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Params {
    /// Each block takes at least this many bits (padding with zeros).
    pub minbits: u64,
    /// And at most this many.
    pub maxbits: u64,
    /// Bit planes coded at most.
    pub maxprec: u32,
    /// Bit planes below this exponent are not coded.
    pub minexp: i32,
}

/// Largest values per block (4-D).
pub(super) const MAX_VALUES: usize = 256;

/// The planes a block with largest exponent `emax` gets: enough to reach
/// `minexp` (plus the slack the transform's growth needs), at most `maxprec`.
fn planes(emax: i32, p: &Params, dims: usize) -> u32 {
    let wanted = i64::from(emax) - i64::from(p.minexp) + 2 * dims as i64 + 2;
    (wanted.max(0) as u64).min(u64::from(p.maxprec)) as u32
}

/// Writes the block `values` (4^`dims` of them).
pub(super) fn encode<R: Real>(w: &mut Writer<'_>, p: &Params, dims: usize, values: &[R]) {
    let n = values.len();
    let emax = R::max_exponent(values);
    let maxprec = planes(emax, p, dims);
    let biased = if maxprec > 0 { emax + R::BIAS } else { 0 };
    if biased <= 0 {
        w.bit(false);
        w.zeros(p.minbits.saturating_sub(1));
        return;
    }
    let head = 1 + u64::from(R::EBITS);
    w.bits(((biased as u64) << 1) | 1, head as u32);
    let mut ints = [<R::Int>::default(); MAX_VALUES];
    let ints = &mut ints[..n];
    R::quantize(values, emax, ints);
    transform::forward(ints, dims);
    let mut words = [<<R::Int as BlockInt>::Word>::default(); MAX_VALUES];
    let words = &mut words[..n];
    for (w, &at) in words.iter_mut().zip(transform::order(dims)) {
        *w = ints[usize::from(at)].to_word();
    }
    let bits = coder::encode(w, p.maxbits.saturating_sub(head), maxprec, words);
    let floor = p.minbits.saturating_sub(head);
    if bits < floor {
        w.zeros(floor - bits);
    }
}

/// Reads one block into `values` (4^`dims` of them).
pub(super) fn decode<R: Real>(r: &mut Reader<'_>, p: &Params, dims: usize, values: &mut [R]) {
    let n = values.len();
    if !r.bit() {
        values.fill(R::default());
        r.skip(p.minbits.saturating_sub(1));
        return;
    }
    let head = 1 + u64::from(R::EBITS);
    let emax = r.bits(R::EBITS) as i32 - R::BIAS;
    let maxprec = planes(emax, p, dims);
    let mut words = [<<R::Int as BlockInt>::Word>::default(); MAX_VALUES];
    let words = &mut words[..n];
    let bits = coder::decode(r, p.maxbits.saturating_sub(head), maxprec, words);
    let floor = p.minbits.saturating_sub(head);
    if bits < floor {
        r.skip(floor - bits);
    }
    let mut ints = [<R::Int>::default(); MAX_VALUES];
    let ints = &mut ints[..n];
    for (&w, &at) in words.iter().zip(transform::order(dims)) {
        ints[usize::from(at)] = <R::Int>::from_word(w);
    }
    transform::inverse(ints, dims);
    R::dequantize(ints, emax, values);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOSSLESS_ISH: Params = Params {
        minbits: 1,
        maxbits: 16658,
        maxprec: 64,
        minexp: -1074,
    };

    #[test]
    fn a_zero_block_is_one_bit_or_the_minimum() {
        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        encode::<f32>(&mut w, &LOSSLESS_ISH, 2, &[0.0; 16]);
        assert_eq!(w.tell(), 1);
        let fixed = Params {
            minbits: 160,
            maxbits: 160,
            ..LOSSLESS_ISH
        };
        encode::<f64>(&mut w, &fixed, 2, &[0.0; 16]);
        assert_eq!(w.tell(), 161);
        w.finish();
        let mut r = Reader::new(&buf);
        let mut back = [1f32; 16];
        decode::<f32>(&mut r, &LOSSLESS_ISH, 2, &mut back);
        assert_eq!(back, [0.0; 16]);
        let mut back = [1f64; 16];
        decode::<f64>(&mut r, &fixed, 2, &mut back);
        assert_eq!(r.tell(), 161);
    }

    #[test]
    fn smooth_blocks_come_back_close_and_fixed_rate_blocks_are_exact_size() {
        for dims in 1..=4 {
            let n = 1 << (2 * dims);
            let vals: Vec<f64> = (0..n).map(|i| 1.5 + (i as f64 * 0.37).sin()).collect();
            let mut buf = vec![0u8; 8 * 4096];
            let mut w = Writer::new(&mut buf);
            encode(&mut w, &LOSSLESS_ISH, dims, &vals);
            let rate = Params {
                minbits: 16 * n as u64,
                maxbits: 16 * n as u64,
                ..LOSSLESS_ISH
            };
            let at = w.tell();
            encode(&mut w, &rate, dims, &vals);
            assert_eq!(w.tell() - at, rate.maxbits);
            w.finish();
            let mut r = Reader::new(&buf);
            let mut back = vec![0f64; n];
            decode(&mut r, &LOSSLESS_ISH, dims, &mut back);
            assert_eq!(r.tell(), at);
            for (a, b) in vals.iter().zip(&back) {
                assert!((a - b).abs() < 1e-14, "{dims}: {a} {b}");
            }
            decode(&mut r, &rate, dims, &mut back);
            assert_eq!(r.tell(), at + rate.maxbits);
            for (a, b) in vals.iter().zip(&back) {
                assert!((a - b).abs() < 0.01, "{dims}: {a} {b}");
            }
        }
    }
}
