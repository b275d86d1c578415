//! Constants of the BloscLZ stream format shared by the encoder and decoder.

/// Longest literal run one control byte can announce.
pub(super) const MAX_LITERAL_RUN: usize = 32;

/// Length field value (top three bits of the control byte) announcing a long
/// match with extension bytes.
pub(super) const LONG_MATCH_FIELD: u8 = 7;

/// Bytes a match copies on top of its encoded length field.
pub(super) const MATCH_LENGTH_BIAS: usize = 2;

/// Largest biased distance (`distance - 1`) expressible in the near form;
/// biased distances from this value on use the far escape.
pub(super) const NEAR_LIMIT: usize = 8191;

/// The encoder only looks for matches strictly closer than this (unbiased).
/// Far distances are stored as `biased - NEAR_LIMIT` in 16 bits.
pub(super) const FAR_LIMIT: usize = 65535 + NEAR_LIMIT - 1;

/// Low five bits of a control byte plus a distance byte of 255 that together
/// escape to a 16-bit far distance.
pub(super) const FAR_ESCAPE_HIGH: u8 = 31;
pub(super) const FAR_ESCAPE_LOW: u8 = 255;

/// Bit set in the first control byte of every encoded stream.
pub(super) const STREAM_MARKER: u8 = 1 << 5;
