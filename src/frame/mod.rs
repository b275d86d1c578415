//! Contiguous (cframe) and sparse (sframe) frames.
