//! Filters: reversible byte transforms applied to a block before the codec.
