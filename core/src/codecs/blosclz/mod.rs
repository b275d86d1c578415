//! BloscLZ: the LZ77 codec native to Blosc, written here in safe Rust.
//!
//! # Stream format
//!
//! A stream is a sequence of tokens. Each token starts with a control byte
//! whose top three bits select the kind:
//!
//! * `000` — a literal run: the low five bits hold `count - 1`, and `count`
//!   (1..=32) raw bytes follow.
//! * `001`..=`110` — a short match of `(ctrl >> 5) + 2` bytes (3..=8).
//! * `111` — a long match: extension bytes follow, each added to the length,
//!   until one is not 255; the match copies `9 + sum` bytes.
//!
//! After the (possibly extended) length comes one distance byte. Together with
//! the low five bits of the control byte it forms a "near" distance
//! `(ctrl & 31) * 256 + byte + 1` (1..=8191). The combination low bits = 31
//! and byte = 255 is an escape: two more bytes follow, big-endian, giving a
//! "far" distance `value + 8192`.
//!
//! The first control byte is always a literal run; the encoder sets bit 5 of
//! it as a format marker and the decoder ignores its top three bits. Streams
//! written by the encoder always end with a literal run.
//!
//! # Compatibility
//!
//! The encoder makes the same decisions as the reference implementation
//! (C-Blosc2 3.3.x): same hash, same match-length rules, same entropy probe
//! deciding when a buffer is not worth compressing, and the same output-size
//! limit. Its output is therefore byte-identical, so compression ratios and
//! the chunks built from them match the reference exactly. The length of the
//! `dst` slice given to [`compress`] plays the role of the reference's
//! `maxout`.
//!
//! The decoder accepts every stream the reference encoders write (Blosc 1.x to
//! C-Blosc2 3.x share this format) and rejects malformed ones with
//! [`crate::ErrorKind::Stream`]. It is a little stricter than the reference in one
//! corner: a stream whose last token is a far match is an error here, where
//! the reference silently drops that match and returns a short output (which
//! its caller then rejects as a size mismatch).

mod decode;
mod encode;
mod format;

pub use decode::{decompress, decompress_prefix};
pub use encode::compress;

/// What the encoder may learn about its input from the surrounding pipeline.
///
/// The reference BloscLZ encoder of the format version this crate writes reads
/// nothing from its compression context (earlier 2.x releases looked at the
/// type size and split mode, later releases dropped that), so this carries no
/// fields today. It exists so callers pass it now and future heuristics can
/// be added without changing the signature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EncodeHint {}
