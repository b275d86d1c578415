//! This library's own zlib decoder (RFC 1950 framing around RFC 1951
//! deflate data).
//!
//! Why not zlib's streaming inflate: Blosc hands over one whole stream per
//! block and a buffer of the block's size, so nothing has to stop and resume
//! mid-symbol. Without that state machine the decoder is a loop over symbols
//! with its bit buffer and positions in registers (`body`), and the whole
//! output is the window: matches are copied straight out of it in chunks
//! (`copy`). Tables take one read for most symbols (`table`), the fixed
//! code's are built once per process, and a dynamic block's are rebuilt in
//! buffers kept in [`Inflate`] (one per worker thread), so decoding allocates
//! nothing.
//!
//! What it accepts is what zlib's `uncompress` accepts (the tests compare the
//! two on valid, truncated and corrupted streams): a 2-byte header with
//! method 8, a window of at most 32 KiB and no preset dictionary; stored,
//! fixed and dynamic blocks under zlib's code rules (`dynamic`); no distance
//! before the start of the output; and a matching Adler-32 after the last
//! block. Bytes after that are ignored.
//!
//! The code is safe Rust: table reads are masked into fixed-size arrays and
//! the fast loop's input and output reads are bounded by its per-iteration
//! room checks, which leaves few bounds checks for the compiler to keep.

mod bits;
mod body;
mod copy;
mod dynamic;
mod table;
#[cfg(test)]
mod tests;

use bits::Bits;
use table::{BlockCodes, CodeLenTable};

/// The decoder, holding the tables for dynamic blocks between streams (one
/// per worker thread, so that decoding a block allocates nothing).
pub(crate) struct Inflate {
    codelen: Box<CodeLenTable>,
    codes: Box<BlockCodes>,
}

impl Inflate {
    /// Never inlined: the tables are built on the stack before they are
    /// boxed, about 40 KiB of it, and inlined into the stream decoder
    /// (`get_or_insert_with`) that became part of its frame, 41.5 KiB for
    /// every stream of any codec: a plain LZ4 decompression overflowed a C
    /// caller's 32 KiB thread (tests-c/test_small_stack.c). Out of line, the
    /// decoder's frame is 1.7 KiB and the 40 KiB are needed once per thread,
    /// when it first meets zlib.
    #[inline(never)]
    pub(crate) fn new() -> Self {
        Inflate {
            codelen: Box::new(CodeLenTable::new()),
            codes: BlockCodes::new(),
        }
    }

    /// Decodes the zlib stream at the start of `src` into `dst`: the decoded
    /// size, or `None` when the stream is invalid or truncated, its output
    /// does not fit `dst`, or its checksum does not match.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let (&[cmf, flg], _) = src.split_first_chunk::<2>()?;
        let method_ok = cmf & 0x0f == 8 && cmf >> 4 <= 7;
        let check_ok = (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0;
        let preset_dict = flg & 0x20 != 0;
        if !method_ok || !check_ok || preset_dict {
            return None;
        }
        let mut bits = Bits::new(src, 2);
        let n = self.deflate(&mut bits, dst)?;
        let end = bits.byte_position();
        let trailer = src.get(end..)?.first_chunk::<4>()?;
        let produced = dst.get(..n)?;
        (zlib_rs::adler32::adler32(1, produced) == u32::from_be_bytes(*trailer)).then_some(n)
    }

    /// Decodes deflate blocks up to the last one; returns the output size.
    fn deflate(&mut self, bits: &mut Bits<'_>, out: &mut [u8]) -> Option<usize> {
        let mut op = 0;
        loop {
            bits.refill()?;
            let header = bits.take(3);
            op = match header >> 1 {
                0 => stored(bits, out, op)?,
                1 => body::decode_block(bits, out, op, table::fixed())?,
                2 => {
                    dynamic::read_tables(bits, &mut self.codelen, &mut self.codes)?;
                    body::decode_block(bits, out, op, &self.codes)?
                }
                _ => return None,
            };
            if header & 1 != 0 {
                return Some(op);
            }
        }
    }
}

/// A stored block: from the next byte boundary, its length, the length's
/// complement, and that many bytes.
fn stored(bits: &mut Bits<'_>, out: &mut [u8], op: usize) -> Option<usize> {
    let at = bits.byte_position();
    let input = bits.input;
    let &[a, b, c, d] = input.get(at..)?.first_chunk::<4>()?;
    let len = u16::from_le_bytes([a, b]);
    if len != !u16::from_le_bytes([c, d]) {
        return None;
    }
    let len = usize::from(len);
    let data = input.get(at + 4..at + 4 + len)?;
    out.get_mut(op..op + len)?.copy_from_slice(data);
    bits.restart_at(at + 4 + len);
    Some(op + len)
}
