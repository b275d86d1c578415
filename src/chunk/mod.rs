//! The Blosc2 chunk format and the compression pipeline.
