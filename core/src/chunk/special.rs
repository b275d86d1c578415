//! Special chunks: a header only (zeros, NaNs, uninitialised), or a header
//! followed by one value repeated over the whole chunk.

use super::blocksize::compute_blocksize;
use super::header::HeaderOut;
use super::{CParams, Fmt, Special};

/// Builds a special chunk with the reference's default parameters (except
/// `typesize`). `value` is required for [`Special::Value`] and must be
/// `typesize` bytes long.
pub fn make_special(
    kind: Special,
    nbytes: usize,
    typesize: usize,
    value: Option<&[u8]>,
) -> crate::Result<Vec<u8>> {
    let cp = CParams {
        typesize: i32::try_from(typesize).unwrap_or(i32::MAX),
        ..CParams::default()
    };
    make_special_with(&cp, kind, nbytes, value)
}

/// Builds a special chunk as `blosc2_chunk_zeros/nans/uninit/repeatval` do for
/// `cparams` (the blocksize field is the one `cparams` would give).
pub fn make_special_with(
    cp: &CParams,
    kind: Special,
    nbytes: usize,
    value: Option<&[u8]>,
) -> crate::Result<Vec<u8>> {
    if cp.typesize <= 0 {
        crate::bail!(InvalidParam, "typesize {} must be positive", cp.typesize);
    }
    if nbytes > Fmt::MAX_BUFFERSIZE {
        crate::bail!(MaxBufsizeExceeded, "{nbytes} bytes over the maximum");
    }
    if cp.typesize > Fmt::MAX_BLOCKSIZE {
        crate::bail!(InvalidParam, "typesize {} over the maximum", cp.typesize);
    }
    let ts = cp.typesize as usize;
    // Zero chunks only check the multiple when non-empty (as the reference).
    if (kind != Special::Zero || nbytes > 0) && nbytes % ts != 0 {
        crate::bail!(Data, "nbytes {nbytes} is not a multiple of typesize {ts}");
    }
    if cp.clevel > 9 {
        crate::bail!(CodecParam, "clevel {} not in 0..=9", cp.clevel);
    }
    let blocksize = compute_blocksize(
        cp.clevel,
        cp.typesize,
        nbytes as i32,
        cp.blocksize,
        cp.compcode,
        cp.splitmode,
        &cp.filters,
    );
    let stored_ts = if ts > Fmt::MAX_TYPESIZE { 1 } else { ts };
    let extra = if kind == Special::Value { ts } else { 0 };
    let hdr = HeaderOut {
        version: Fmt::VERSION_STABLE,
        versionlz: 1,
        flags: Fmt::DOSHUFFLE | Fmt::DOBITSHUFFLE,
        typesize: stored_ts as u8,
        nbytes: nbytes as i32,
        blocksize,
        cbytes: (Fmt::EXT_HEADER + extra) as i32,
        filters: [0; 6],
        udcompcode: 0,
        compcode_meta: 0,
        filters_meta: [0; 6],
        blosc2_flags2: 0,
        blosc2_flags: kind.code() << 4,
    };
    let mut out = hdr.to_bytes().to_vec();
    if kind == Special::Value {
        match value {
            Some(v) if v.len() == ts => out.extend_from_slice(v),
            _ => crate::bail!(
                InvalidParam,
                "a repeated-value chunk needs a value of {ts} bytes"
            ),
        }
    }
    Ok(out)
}
