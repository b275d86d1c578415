//! The Caterva C API: its header beside b2nd.h, and round trips.
//! One test binary, one module per subject.

mod headers;
mod roundtrip;
