//! The chunk-engine surface the super-chunk uses, in one place: parameters,
//! special kinds, and compression/decompression contexts.

pub use crate::chunk::{BlockSource, CParams, DParams, Special};
use crate::chunk::{Compressor, Decompressor};
use crate::Result;

/// Bytes a chunk may need beyond its source (the reference's MAX_OVERHEAD).
const MAX_OVERHEAD: usize = 32;

/// Compression and decompression contexts of one super-chunk.
pub(crate) struct Engine {
    comp: Compressor,
    dec: Decompressor,
    /// Output buffer reused by [`Engine::compress_reusing`], so appending
    /// does not allocate and zero a chunk-sized buffer per call.
    out: Vec<u8>,
    /// A compressor like `comp` for compressions through `&self` (see
    /// [`Engine::compress_shared`]), kept from one to the next.
    spare: std::sync::Mutex<Option<Compressor>>,
}

impl Engine {
    pub(crate) fn new(cparams: CParams, dparams: DParams) -> Result<Engine> {
        Ok(Engine {
            comp: Compressor::new(cparams)?,
            dec: Decompressor::new(dparams),
            out: Vec::new(),
            spare: std::sync::Mutex::new(None),
        })
    }

    pub(crate) fn cparams(&self) -> &CParams {
        self.comp.cparams()
    }

    pub(crate) fn dparams(&self) -> &DParams {
        self.dec.dparams()
    }

    /// Tells pre- and postfilters which chunk the next calls work on.
    pub(crate) fn set_nchunk(&mut self, nchunk: i64) {
        self.comp.set_nchunk(nchunk);
        self.dec.set_nchunk(nchunk);
    }

    /// Replaces the caller's opaque values in both directions' parameters,
    /// keeping every other piece of state (the remembered block size).
    pub(crate) fn set_user_data(
        &mut self,
        cparams: Option<crate::chunk::UserData>,
        dparams: Option<crate::chunk::UserData>,
    ) {
        self.comp.set_user_data(cparams);
        self.dec.set_user_data(dparams);
        *self.spare.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Compresses `src` into the engine's reusable buffer and hands that
    /// buffer out (give it back with [`Engine::give_back`]); the chunk is
    /// its first `n` bytes, `n` being the returned length.
    pub(crate) fn compress_reusing(&mut self, src: &[u8]) -> Result<(Vec<u8>, usize)> {
        let mut dst = std::mem::take(&mut self.out);
        let need = src.len() + MAX_OVERHEAD;
        if dst.len() < need {
            // Zeroing happens only when the buffer grows.
            dst.resize(need, 0);
        }
        let n = match self.comp.compress(src, &mut dst[..need]) {
            Ok(n) => n,
            Err(e) => {
                self.out = dst;
                return Err(e);
            }
        };
        if n == 0 {
            self.out = dst;
            crate::bail!(WriteBuffer, "compressed chunk did not fit in {need} bytes");
        }
        Ok((dst, n))
    }

    /// Returns the buffer taken by [`Engine::compress_reusing`].
    pub(crate) fn give_back(&mut self, buf: Vec<u8>) {
        self.out = buf;
    }

    /// Compresses `src` as chunk `nchunk` through `&self`: the callbacks it
    /// runs (prefilters, user codecs and filters) may read the super-chunk
    /// meanwhile. The kept compressor is taken out for the compression, so
    /// that another one running at the same time (another thread's, or one
    /// a callback starts) makes its own instead of waiting.
    pub(crate) fn compress_shared(&self, nchunk: i64, src: &[u8]) -> Result<Vec<u8>> {
        let kept = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut comp = match kept {
            Some(c) => c,
            None => Compressor::new(self.comp.cparams().clone())?,
        };
        comp.set_nchunk(nchunk);
        let mut dst = crate::mem::zeroed(src.len() + MAX_OVERHEAD)?;
        let n = comp.compress(src, &mut dst)?;
        *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = Some(comp);
        if n == 0 {
            crate::bail!(
                WriteBuffer,
                "compressed chunk did not fit in {} bytes",
                dst.len()
            );
        }
        dst.truncate(n);
        Ok(dst)
    }

    /// A decoder for one read through `&self`, told which chunk it decodes
    /// (postfilters see it): reads on several threads at once each use
    /// their own. It is the parameters and nothing more; the scratch a
    /// decode needs is the thread's.
    pub(crate) fn decoder(&self, nchunk: i64) -> Decompressor {
        let mut d = Decompressor::new(self.dec.dparams().clone());
        d.set_nchunk(nchunk);
        d
    }

    /// Compresses `blocks` into one variable-length-block chunk.
    pub(crate) fn compress_vl(&mut self, blocks: &[&[u8]]) -> Result<Vec<u8>> {
        let total: usize = blocks.iter().map(|b| b.len()).sum();
        let mut dst = crate::mem::zeroed(total + MAX_OVERHEAD + 16 * blocks.len())?;
        let n = self.comp.compress_vl(blocks, &mut dst)?;
        if n == 0 {
            crate::bail!(
                WriteBuffer,
                "VL-block chunk did not fit in {} bytes",
                dst.len()
            );
        }
        dst.truncate(n);
        Ok(dst)
    }
}

/// One-shot compression.
pub(crate) fn compress_with(cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    let mut dst = crate::mem::zeroed(src.len() + MAX_OVERHEAD)?;
    let n = crate::chunk::compress(cparams, src, &mut dst)?;
    if n == 0 {
        crate::bail!(
            WriteBuffer,
            "compressed chunk did not fit in {} bytes",
            dst.len()
        );
    }
    dst.truncate(n);
    Ok(dst)
}

/// One-shot decompression.
pub(crate) fn decompress_once(chunk: &[u8]) -> Result<Vec<u8>> {
    crate::frame::codec::decompress(chunk)
}
