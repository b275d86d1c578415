//! The chunk-engine surface the super-chunk uses, in one place.
//!
//! Until `crate::chunk` lands this holds stand-ins with the agreed shapes:
//! parameters, special kinds, and a codec that stores chunks as plain
//! copies (valid Blosc2 chunks every reader accepts).

use std::borrow::Cow;

use crate::frame::codec::{ChunkInfo, EXTENDED_HEADER_LEN};
use crate::Result;

/// Compression parameters (the reference's `blosc2_cparams`).
#[derive(Debug, Clone)]
pub struct CParams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: bool,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
}

impl Default for CParams {
    fn default() -> Self {
        CParams {
            compcode: 0,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: 4,
            filters: [0, 0, 0, 0, 0, 1],
            filters_meta: [0; 6],
        }
    }
}

/// Decompression parameters.
#[derive(Debug, Clone)]
pub struct DParams {
    pub nthreads: i16,
}

impl Default for DParams {
    fn default() -> Self {
        DParams { nthreads: 1 }
    }
}

/// Kinds of special chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Zero,
    Nan,
    Value,
    Uninit,
}

/// Supplies block bytes for lazy decompression.
pub trait BlockSource {
    fn block(
        &mut self,
        nblock: usize,
        offset: u32,
        len_hint: Option<usize>,
    ) -> Result<Cow<'_, [u8]>>;
}

/// Compression and decompression contexts of one super-chunk.
pub(crate) struct Engine {
    cparams: CParams,
}

impl Engine {
    pub(crate) fn new(cparams: CParams, _dparams: DParams) -> Result<Engine> {
        Ok(Engine { cparams })
    }

    pub(crate) fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        compress_with(&self.cparams, src)
    }

    pub(crate) fn decompress(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        let out = crate::frame::codec::decompress(chunk)?;
        let d = dst
            .get_mut(..out.len())
            .ok_or_else(|| crate::err!(WriteBuffer, "destination too small"))?;
        d.copy_from_slice(&out);
        Ok(out.len())
    }

    /// Decodes a chunk whose blocks come from `source`; `mask[i]` true skips block i.
    pub(crate) fn decompress_with_source(
        &mut self,
        header_and_bstarts: &[u8],
        source: &mut dyn BlockSource,
        dst: &mut [u8],
        _mask: Option<&[bool]>,
    ) -> Result<usize> {
        let info = ChunkInfo::parse(header_and_bstarts)?;
        let mut whole = header_and_bstarts[..EXTENDED_HEADER_LEN].to_vec();
        if info.special == 0 {
            whole.extend_from_slice(&source.block(
                0,
                EXTENDED_HEADER_LEN as u32,
                Some(info.nbytes as usize),
            )?);
        }
        self.decompress(&whole, dst)
    }
}

/// One-shot compression.
pub(crate) fn compress_with(cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    let n = i32::try_from(src.len())
        .map_err(|_| crate::err!(MaxBufsizeExceeded, "buffer too large"))?;
    let ts = u8::try_from(cparams.typesize).unwrap_or(1);
    let mut h = vec![0u8; EXTENDED_HEADER_LEN];
    h[0] = 5;
    h[1] = 1;
    h[2] = 0x07;
    h[3] = ts;
    h[4..8].copy_from_slice(&n.to_le_bytes());
    h[8..12].copy_from_slice(&n.to_le_bytes());
    h[12..16].copy_from_slice(&(n + EXTENDED_HEADER_LEN as i32).to_le_bytes());
    h.extend_from_slice(src);
    Ok(h)
}

/// One-shot decompression.
pub(crate) fn decompress_once(chunk: &[u8]) -> Result<Vec<u8>> {
    crate::frame::codec::decompress(chunk)
}

/// A special chunk of `nbytes`.
pub(crate) fn make_special(
    kind: Special,
    nbytes: usize,
    typesize: usize,
    _value: Option<&[u8]>,
) -> Result<Vec<u8>> {
    use crate::frame::SpecialOffset;
    let k = match kind {
        Special::Zero => SpecialOffset::Zero,
        Special::Nan => SpecialOffset::Nan,
        Special::Uninit => SpecialOffset::Uninit,
        Special::Value => crate::bail!(InvalidParam, "value chunks need the chunk engine"),
    };
    crate::frame::codec::special_chunk(k, nbytes as i32, typesize as i32, 0)
}
