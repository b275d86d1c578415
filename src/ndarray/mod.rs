//! b2nd N-dimensional arrays over super-chunks.
pub mod array;
