//! Codecs: the byte compressors a chunk's blocks go through.
pub mod blosclz;
