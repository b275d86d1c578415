//! One codec stream: encode a slice with the chunk's codec, or decode one.
//! Level and acceleration mappings are the reference's.

use crate::codecs::registry::{self, CallInfo};
use crate::codecs::{blosclz, lz4, ndlz, zfp, zlib, zstd, Codec};

/// Per-worker codec state (Zstd contexts are worth reusing).
#[derive(Default)]
pub(crate) struct CodecState {
    zc: Option<zstd::CCtx>,
    zd: Option<zstd::DCtx>,
    inflater: Option<zlib::Inflater>,
    zlib_encoder: Option<zlib::Encoder>,
    lz4: Option<lz4::FastState>,
    lz4hc: Option<lz4::HcState>,
}

impl CodecState {
    /// LZ4 through a kept state (same bytes as a fresh call; see
    /// `lz4::FastState`).
    fn lz4_compress(&mut self, src: &[u8], dst: &mut [u8], accel: i32) -> usize {
        if self.lz4.is_none() {
            self.lz4 = lz4::FastState::new();
        }
        match &mut self.lz4 {
            Some(s) => s.compress(src, dst, accel),
            None => lz4::compress_fast(src, dst, accel),
        }
    }
    /// LZ4HC through a kept state (see `lz4::HcState`).
    fn lz4hc_compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        if self.lz4hc.is_none() {
            self.lz4hc = lz4::HcState::new();
        }
        match &mut self.lz4hc {
            Some(s) => s.compress(src, dst, level),
            None => lz4::compress_hc(src, dst, level),
        }
    }
    /// Zlib compression: levels 1 and 5 with our own encoder
    /// (`zlib::Encoder`), the others (and inputs it leaves) per call.
    fn zlib_compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        if zlib::encoder_handles(level) {
            let enc = self.zlib_encoder.get_or_insert_with(zlib::Encoder::new);
            if let Some(n) = enc.compress(src, dst, level) {
                return n;
            }
        }
        zlib::compress(src, dst, level)
    }
    /// Zlib decompression with the worker's kept decoder tables.
    fn zlib_decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        self.inflater
            .get_or_insert_with(zlib::Inflater::new)
            .decompress(src, dst)
    }
    fn zc(&mut self) -> crate::Result<&mut zstd::CCtx> {
        if self.zc.is_none() {
            self.zc = zstd::CCtx::new();
        }
        self.zc
            .as_mut()
            .ok_or_else(|| crate::err!(MemoryAlloc, "zstd compression context"))
    }
    fn zd(&mut self) -> crate::Result<&mut zstd::DCtx> {
        if self.zd.is_none() {
            self.zd = zstd::DCtx::new();
        }
        self.zd
            .as_mut()
            .ok_or_else(|| crate::err!(MemoryAlloc, "zstd decompression context"))
    }
}

/// A dictionary ready for compression.
pub(crate) enum EncDict {
    /// Raw bytes for LZ4/LZ4HC.
    Lz4(Vec<u8>),
    /// A digested Zstd dictionary.
    Zstd(zstd::CDict),
}

/// A dictionary ready for decompression.
pub(crate) enum DecDict {
    Lz4(Vec<u8>),
    Zstd(zstd::DDict),
}

/// The Zstd level the reference uses for a Blosc clevel.
pub(crate) fn zstd_level(clevel: u8) -> i32 {
    let clevel = i32::from(clevel);
    let mut level = if clevel < 9 {
        clevel * 2 - 1
    } else {
        zstd::max_clevel()
    };
    if level == 8 {
        level = zstd::max_clevel() - 2;
    }
    level
}

/// What a codec needs to know beyond the bytes.
pub(crate) struct EncodeParams<'a> {
    pub compcode: u8,
    pub clevel: u8,
    pub compcode_meta: u8,
    /// The b2nd block shape, for codecs that work on it (NDLZ, zfp).
    pub block_shape: Option<&'a [i64]>,
    pub info: CallInfo<'a>,
}

/// Compresses `src` into `dst` (whose length is the allowed maximum).
/// `Ok(0)` means the codec could not fit the result.
pub(crate) fn encode(
    state: &mut CodecState,
    p: &EncodeParams<'_>,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&EncDict>,
) -> crate::Result<usize> {
    let n = match p.compcode {
        Codec::BLOSCLZ => blosclz_encode(p, src, dst)?,
        Codec::LZ4 => {
            let accel = 10 - i32::from(p.clevel);
            match dict {
                Some(EncDict::Lz4(d)) => lz4::compress_fast_dict(src, dst, accel, d),
                _ => state.lz4_compress(src, dst, accel),
            }
        }
        Codec::LZ4HC => {
            if src.len() > (2usize << 30) {
                crate::bail!(TwoGbLimit, "lz4hc input over 2 GB");
            }
            match dict {
                Some(EncDict::Lz4(d)) => lz4::compress_hc_dict(src, dst, i32::from(p.clevel), d),
                _ => state.lz4hc_compress(src, dst, i32::from(p.clevel)),
            }
        }
        // Output must not depend on what the kept encoder compressed before
        // (tests/chunk/threads.rs pins this down): see zlib::Encoder.
        Codec::ZLIB => state.zlib_compress(src, dst, i32::from(p.clevel)),
        Codec::ZSTD => {
            let cctx = state.zc()?;
            match dict {
                Some(EncDict::Zstd(cd)) => cctx.compress_dict(src, dst, cd),
                _ => cctx.compress(src, dst, zstd_level(p.clevel)),
            }
        }
        Codec::NDLZ => ndlz::encode(p.compcode_meta, p.block_shape, src, dst)?,
        c if zfp::is_zfp(c) => {
            zfp::encode(c, p.compcode_meta, p.info.typesize, p.block_shape, src, dst)?
        }
        c if c >= Codec::GLOBAL_START => match registry::codec(c) {
            Some(entry) => entry.codec.encode(src, dst, p.compcode_meta, &p.info)?,
            None => crate::bail!(CodecSupport, "codec {c} is not registered"),
        },
        c => crate::bail!(CodecSupport, "codec {c} is not supported"),
    };
    if n > dst.len() {
        crate::bail!(WriteBuffer, "codec wrote past its output");
    }
    Ok(n)
}

fn blosclz_encode(p: &EncodeParams<'_>, src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
    let hint = blosclz::EncodeHint::default();
    Ok(blosclz::compress(p.clevel, src, dst, &hint))
}

fn blosclz_decode(src: &[u8], dst: &mut [u8]) -> crate::Result<usize> {
    blosclz::decompress(src, dst)
}

/// What decoding any stream of a chunk takes besides the stream: the codec
/// named by the header, the chunk's dictionary and what a user codec or zfp
/// is told. The same for every stream of a chunk, so built once per call.
pub(crate) struct StreamCodec<'a> {
    /// The header's codec format.
    pub compformat: u8,
    /// The codec id (user codecs).
    pub compcode: u8,
    pub compcode_meta: u8,
    pub dict: Option<&'a DecDict>,
    pub info: CallInfo<'a>,
    /// The b2nd block shape (zfp needs it).
    pub block_shape: Option<&'a [i64]>,
}

/// Decompresses one stream into exactly `dst.len()` bytes, for a caller
/// that reads only the first `need` of them: BloscLZ and LZ4 streams stop
/// once they have written those (the rest of `dst` is left as it was or
/// holds anything; see [`decode_start`]), the other codecs decode the whole
/// stream. A partial read of a split block needs the same prefix of each of
/// its byte planes.
pub(crate) fn decode(
    state: &mut CodecState,
    codec: &StreamCodec<'_>,
    src: &[u8],
    dst: &mut [u8],
    need: usize,
) -> crate::Result<()> {
    let StreamCodec {
        compformat,
        compcode,
        compcode_meta,
        dict,
        ref info,
        block_shape,
    } = *codec;
    if need < dst.len() {
        if let Some(got) = decode_start(compformat, dict, src, dst, need) {
            return match got {
                Some(n) if n >= need => Ok(()),
                _ => crate::bail!(Data, "stream did not decode to its first {need} bytes"),
            };
        }
    }
    let want = dst.len();
    let got = match compformat {
        Codec::FORMAT_BLOSCLZ => blosclz_decode(src, dst).ok(),
        Codec::FORMAT_LZ4 => match dict {
            Some(DecDict::Lz4(d)) => lz4::decompress_dict(src, dst, d),
            _ => lz4::decompress(src, dst),
        },
        Codec::FORMAT_ZLIB => state.zlib_decompress(src, dst),
        Codec::FORMAT_ZSTD => {
            let ddict = match dict {
                Some(DecDict::Zstd(d)) => Some(d),
                _ => None,
            };
            state.zd()?.decompress(src, dst, ddict)
        }
        Codec::FORMAT_UDCODEC if compcode == Codec::NDLZ => {
            Some(ndlz::decode(compcode_meta, src, dst)?)
        }
        Codec::FORMAT_UDCODEC if zfp::is_zfp(compcode) => Some(zfp::decode(
            compcode,
            compcode_meta,
            info.typesize,
            block_shape,
            src,
            dst,
        )?),
        Codec::FORMAT_UDCODEC => match registry::codec(compcode) {
            Some(entry) if compcode >= Codec::GLOBAL_START => {
                Some(entry.codec.decode(src, dst, compcode_meta, info)?)
            }
            _ => crate::bail!(CodecSupport, "codec {compcode} is not registered"),
        },
        f => crate::bail!(CodecSupport, "codec format {f} is not supported"),
    };
    match got {
        Some(n) if n == want => Ok(()),
        _ => crate::bail!(Data, "stream did not decode to {want} bytes"),
    }
}

/// Whether [`decode`] stops a stream of codec format `compformat` once it
/// has the bytes needed (those of [`decode_start`]); other codecs read
/// every stream to its end.
pub(crate) fn stops_early(compformat: u8) -> bool {
    matches!(compformat, Codec::FORMAT_BLOSCLZ | Codec::FORMAT_LZ4)
}

/// The first `need` bytes of a BloscLZ or LZ4 stream, decoded into `dst`,
/// and the decode stopped there: `Some` of the bytes decoded (`None` inside
/// when the stream is invalid). `None` for the other codecs, which decode
/// whole streams only (a Zstd stream of a plane is one Zstd block, decoded as
/// a unit; zlib's checksum needs all of the output).
fn decode_start(
    compformat: u8,
    dict: Option<&DecDict>,
    src: &[u8],
    dst: &mut [u8],
    need: usize,
) -> Option<Option<usize>> {
    // `stops_early` is the one list of these codecs (the prefetch of
    // partial reads asks it too).
    if !stops_early(compformat) {
        return None;
    }
    if compformat == Codec::FORMAT_BLOSCLZ {
        return Some(blosclz::decompress_prefix(src, dst, need).ok());
    }
    let dict = match dict {
        Some(DecDict::Lz4(d)) => Some(&d[..]),
        _ => None,
    };
    Some(lz4::decompress_prefix(src, dst, need, dict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_levels_follow_the_reference() {
        let max = zstd::max_clevel();
        let got: Vec<i32> = (1..=9).map(zstd_level).collect();
        assert_eq!(got, vec![1, 3, 5, 7, 9, 11, 13, 15, max]);
    }

    #[test]
    fn every_builtin_codec_round_trips_a_stream() {
        let src: Vec<u8> = (0..10_000u32).map(|i| (i / 10) as u8).collect();
        let info = CallInfo {
            typesize: 1,
            clevel: 5,
            compcode: 0,
            compcode_meta: 0,
            nthreads: 1,
            blocksize: 0,
            chunk: &[],
            user: None,
        };
        let mut st = CodecState::default();
        for compcode in [
            Codec::BLOSCLZ,
            Codec::LZ4,
            Codec::LZ4HC,
            Codec::ZLIB,
            Codec::ZSTD,
        ] {
            let p = EncodeParams {
                compcode,
                clevel: 5,
                compcode_meta: 0,
                block_shape: None,
                info,
            };
            let mut dst = vec![0u8; src.len()];
            let n = encode(&mut st, &p, &src, &mut dst, None).unwrap();
            assert!(n > 0 && n < src.len() / 4, "codec {compcode}: {n}");
            let mut back = vec![0u8; src.len()];
            let codec = StreamCodec {
                compformat: Codec::format_of(compcode),
                compcode,
                compcode_meta: 0,
                dict: None,
                info,
                block_shape: None,
            };
            decode(&mut st, &codec, &dst[..n], &mut back, src.len()).unwrap();
            assert_eq!(back, src);
            // A corrupted stream is an error, not a panic.
            let mut bad = dst[..n].to_vec();
            bad.truncate(n / 2);
            assert!(decode(&mut st, &codec, &bad, &mut back, src.len()).is_err());
        }
    }
}
