//! The `b2nd` and `caterva` metalayers: the msgpack records that turn a
//! super-chunk into an N-dimensional array.
//!
//! Three layouts exist in the wild, all a msgpack fixarray whose first
//! elements are `version, ndim, shape, chunkshape, blockshape`:
//! - current b2nd (7 elements): then `dtype_format` (positive fixint) and
//!   `dtype` (always a str32, `0xdb` + big-endian length);
//! - early b2nd (6 elements): then `dtype` as a str32, no `dtype_format`;
//! - Caterva (5 elements): no dtype at all.
//!
//! The writers use fixed-width encodings on purpose so that a shape can be
//! rewritten in place without changing the metalayer length: every shape
//! entry is an int64 (`0xd3`), every chunk/block entry an int32 (`0xd2`), and
//! each of the three arrays carries the header byte `0x90 + ndim`. For
//! `ndim == 16` that byte is `0xa0`, which msgpack reads as a fixstr; the
//! reference writes it anyway, so this module writes and accepts it too.
//!
//! Parsing is stricter than the reference reader (which skips marker bytes
//! without looking at them): every marker must be the one a writer emits.
//! Like the reference, bytes after a complete record are ignored, because a
//! metalayer updated with shorter content keeps its original length.

use crate::Result;

/// Largest number of dimensions the b2nd layer handles.
pub(crate) const MAX_DIM: usize = 16;

/// msgpack markers the layouts use.
const MARK_INT64: u8 = 0xd3;
const MARK_INT32: u8 = 0xd2;
const MARK_STR32: u8 = 0xdb;
const MARK_FIXARRAY: u8 = 0x90;

/// The content of a `b2nd` (or `caterva`) metalayer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdMeta {
    /// Metalayer format version as read; writers always emit
    /// `NdMeta::VERSION`.
    pub version: u8,
    /// Items per dimension of the array.
    pub shape: Vec<i64>,
    /// Items per dimension of a chunk.
    pub chunkshape: Vec<i32>,
    /// Items per dimension of a block.
    pub blockshape: Vec<i32>,
    /// The data type description (NumPy `descr` string when
    /// `dtype_format == 0`).
    pub dtype: String,
    /// Interpretation of `dtype`; 0 means NumPy format.
    pub dtype_format: i8,
}

/// The dtype the reference gives an array whose metadata carries none (a
/// Caterva array, or a context created without a dtype): a raw byte string
/// of one item, NumPy `|S<typesize>`.
pub fn default_dtype_for_typesize(typesize: i32) -> String {
    format!("|S{typesize}")
}

/// Which of the three layouts a metalayer uses, from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaLayout {
    /// 5 elements, no dtype.
    Caterva,
    /// 6 elements, dtype without dtype_format.
    B2ndV0,
    /// 7 elements, dtype_format then dtype.
    B2nd,
}

impl MetaLayout {
    /// Identifies the layout from the outer fixarray header.
    pub fn detect(bytes: &[u8]) -> Result<MetaLayout> {
        match bytes.first() {
            Some(0x95) => Ok(MetaLayout::Caterva),
            Some(0x96) => Ok(MetaLayout::B2ndV0),
            Some(0x97) => Ok(MetaLayout::B2nd),
            Some(b) => crate::bail!(
                Failure,
                "b2nd metalayer: outer marker {b:#04x} is not a 5, 6 or 7 element fixarray"
            ),
            None => crate::bail!(Failure, "b2nd metalayer: empty content"),
        }
    }
}

impl NdMeta {
    /// The metalayer format version the reference writes (for b2nd and for
    /// Caterva alike).
    pub(crate) const VERSION: u8 = 0;
    /// NumPy dtype format.
    pub(crate) const DTYPE_NUMPY: i8 = 0;
    /// The dtype the reference's serialiser writes when it is given none
    /// (an array opened from a Caterva record and then resized, for
    /// instance). Creating an array without a dtype uses
    /// [`default_dtype_for_typesize`] instead.
    pub const DEFAULT_DTYPE: &'static str = "|u1";

    /// A metalayer record with the current version.
    pub fn new(
        shape: Vec<i64>,
        chunkshape: Vec<i32>,
        blockshape: Vec<i32>,
        dtype: impl Into<String>,
        dtype_format: i8,
    ) -> NdMeta {
        NdMeta {
            version: Self::VERSION,
            shape,
            chunkshape,
            blockshape,
            dtype: dtype.into(),
            dtype_format,
        }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Serialises in the current 7-element b2nd layout, byte for byte as the
    /// reference writer does (version byte always `NdMeta::VERSION`).
    pub fn to_b2nd_bytes(&self) -> Result<Vec<u8>> {
        let ndim = self.check_dims()?;
        let (dtype, dtype_len) = self.dtype_parts()?;
        if dtype.contains(&0) {
            crate::bail!(InvalidParam, "dtype contains a NUL byte");
        }
        let mut out = Vec::with_capacity(Self::encoded_len(ndim, 7) + dtype.len());
        Self::put_fixarray(&mut out, 7)?;
        self.put_dims(&mut out, ndim)?;
        rmp::encode::write_pfix(&mut out, self.dtype_format as u8).map_err(io_fail)?;
        put_str32(&mut out, dtype, dtype_len);
        Ok(out)
    }

    /// Serialises in the 5-element Caterva layout (no dtype).
    pub fn to_caterva_bytes(&self) -> Result<Vec<u8>> {
        let ndim = self.check_dims()?;
        let mut out = Vec::with_capacity(Self::encoded_len(ndim, 5));
        Self::put_fixarray(&mut out, 5)?;
        self.put_dims(&mut out, ndim)?;
        Ok(out)
    }

    /// Parses a `b2nd` metalayer in the 7-element layout or the early
    /// 6-element one (whose dtype_format is taken as NumPy).
    pub fn from_b2nd_bytes(bytes: &[u8]) -> Result<NdMeta> {
        match MetaLayout::detect(bytes)? {
            MetaLayout::Caterva => crate::bail!(
                Failure,
                "b2nd metalayer: 5-element (Caterva) layout has no dtype; use from_meta_bytes"
            ),
            layout => Self::parse(bytes, layout, 0),
        }
    }

    /// Parses a 5-element `caterva` metalayer. The dtype, absent from the
    /// format, is [`default_dtype_for_typesize`] of the super-chunk's
    /// typesize, with NumPy dtype_format.
    pub fn from_caterva_bytes(bytes: &[u8], typesize: i32) -> Result<NdMeta> {
        match MetaLayout::detect(bytes)? {
            MetaLayout::Caterva => Self::parse(bytes, MetaLayout::Caterva, typesize),
            _ => crate::bail!(Failure, "caterva metalayer: not a 5-element fixarray"),
        }
    }

    /// Parses any of the three layouts, as the reference does with whatever it
    /// finds under the `b2nd` or `caterva` name; `typesize` only matters when
    /// the content carries no dtype.
    pub fn from_meta_bytes(bytes: &[u8], typesize: i32) -> Result<NdMeta> {
        let layout = MetaLayout::detect(bytes)?;
        Self::parse(bytes, layout, typesize)
    }

    /// Bytes of the fixed part: outer header, version, ndim, three arrays.
    fn encoded_len(ndim: usize, elements: usize) -> usize {
        let fixed = 3 + (1 + ndim * 9) + 2 * (1 + ndim * 5);
        if elements == 7 {
            fixed + 1 + 5
        } else {
            fixed
        }
    }

    fn check_dims(&self) -> Result<usize> {
        let ndim = self.shape.len();
        if ndim > MAX_DIM {
            crate::bail!(InvalidParam, "ndim {ndim} exceeds the maximum of {MAX_DIM}");
        }
        if self.chunkshape.len() != ndim || self.blockshape.len() != ndim {
            crate::bail!(
                InvalidParam,
                "shape, chunkshape and blockshape lengths differ ({}, {}, {})",
                ndim,
                self.chunkshape.len(),
                self.blockshape.len()
            );
        }
        Ok(ndim)
    }

    /// The dtype bytes and their str32 length, after checking that both
    /// `dtype_format` and the length can be written.
    fn dtype_parts(&self) -> Result<(&[u8], i32)> {
        if self.dtype_format < 0 {
            crate::bail!(
                Failure,
                "dtype_format {} cannot be negative",
                self.dtype_format
            );
        }
        let dtype = self.dtype.as_bytes();
        let dtype_len = i32::try_from(dtype.len())
            .map_err(|_| crate::err!(Failure, "dtype is too large ({} bytes)", dtype.len()))?;
        Ok((dtype, dtype_len))
    }

    fn put_fixarray(out: &mut Vec<u8>, len: u32) -> Result<()> {
        rmp::encode::write_array_len(out, len).map_err(|e| crate::err!(Failure, "{e}"))?;
        Ok(())
    }

    /// Version, ndim and the three dimension arrays.
    fn put_dims(&self, out: &mut Vec<u8>, ndim: usize) -> Result<()> {
        rmp::encode::write_pfix(out, Self::VERSION).map_err(io_fail)?;
        rmp::encode::write_pfix(out, ndim as u8).map_err(io_fail)?;
        // `0x90 + ndim` even for ndim 16 (see the module comment), so the
        // header byte is written directly rather than by write_array_len.
        out.push(MARK_FIXARRAY + ndim as u8);
        for &v in &self.shape {
            rmp::encode::write_i64(out, v).map_err(|e| crate::err!(Failure, "{e}"))?;
        }
        for dims in [&self.chunkshape, &self.blockshape] {
            out.push(MARK_FIXARRAY + ndim as u8);
            for &v in dims.iter() {
                rmp::encode::write_i32(out, v).map_err(|e| crate::err!(Failure, "{e}"))?;
            }
        }
        Ok(())
    }

    fn parse(bytes: &[u8], layout: MetaLayout, typesize: i32) -> Result<NdMeta> {
        let mut rd = Reader {
            rest: &bytes[1..],
            strict: true,
        };
        let version = rd.byte("version")?;
        if version > 0x7f {
            crate::bail!(
                Failure,
                "b2nd metalayer: version {version:#04x} is not a positive fixint"
            );
        }
        let (shape, chunkshape, blockshape) = rd.dims()?;
        let (dtype, dtype_format) = match layout {
            MetaLayout::Caterva => (default_dtype_for_typesize(typesize), Self::DTYPE_NUMPY),
            MetaLayout::B2ndV0 => (rd.str32()?, Self::DTYPE_NUMPY),
            MetaLayout::B2nd => {
                let format = rd.byte("dtype_format")?;
                if format > 0x7f {
                    crate::bail!(
                        Failure,
                        "b2nd metalayer: dtype_format {format:#04x} is not a positive fixint"
                    );
                }
                (rd.str32()?, format as i8)
            }
        };
        Ok(NdMeta {
            version,
            shape,
            chunkshape,
            blockshape,
            dtype,
            dtype_format,
        })
    }

    /// Reads a stored record by position, the way the reference reads
    /// whatever it finds under `b2nd` or `caterva` when it opens an array:
    /// the outer header may announce 5, 6 or 7 elements whatever follows,
    /// the version and the element markers are skipped rather than checked,
    /// and a dtype is present exactly when bytes follow the blockshape (a
    /// `dtype_format` byte first unless the next byte is a str32 marker).
    /// Without a dtype, the record gets [`default_dtype_for_typesize`].
    /// The returned [`DtypeTail`] says which of those endings was found, so
    /// that `NdMeta::to_bytes_like` can rewrite the record in its shape.
    pub fn from_stored_bytes(bytes: &[u8], typesize: i32) -> Result<(NdMeta, DtypeTail)> {
        MetaLayout::detect(bytes)?;
        let mut rd = Reader {
            rest: &bytes[1..],
            strict: false,
        };
        let version = rd.byte("version")?;
        let (shape, chunkshape, blockshape) = rd.dims()?;
        let (tail, dtype_format, dtype) = match rd.rest.first() {
            None => (
                DtypeTail::Absent,
                Self::DTYPE_NUMPY,
                default_dtype_for_typesize(typesize),
            ),
            Some(&MARK_STR32) => (DtypeTail::Str, Self::DTYPE_NUMPY, rd.str32()?),
            Some(_) => {
                let format = rd.byte("dtype_format")? as i8;
                (DtypeTail::FormatAndStr, format, rd.str32()?)
            }
        };
        let meta = NdMeta {
            version,
            shape,
            chunkshape,
            blockshape,
            dtype,
            dtype_format,
        };
        Ok((meta, tail))
    }

    /// Serialises this record in the shape of the stored record `existing`
    /// (its first two bytes, and a dtype ending like its own, or none), so a
    /// metalayer of any layout can be updated in place. Fails when the
    /// result would not have the length of `existing` (a different ndim, or
    /// a dtype of another length).
    pub(crate) fn to_bytes_like(&self, existing: &[u8]) -> Result<Vec<u8>> {
        let (old, tail) = NdMeta::from_stored_bytes(existing, 1)?;
        let ndim = self.check_dims()?;
        let (dtype, dtype_len) = self.dtype_parts()?;
        let mut out = Vec::with_capacity(existing.len());
        out.push(existing[0]);
        self.put_dims(&mut out, ndim)?;
        out[1] = existing[1];
        match tail {
            DtypeTail::Absent => {}
            DtypeTail::Str => put_str32(&mut out, dtype, dtype_len),
            DtypeTail::FormatAndStr => {
                rmp::encode::write_pfix(&mut out, self.dtype_format as u8).map_err(io_fail)?;
                put_str32(&mut out, dtype, dtype_len);
            }
        }
        if old.ndim() != ndim || out.len() != existing.len() {
            crate::bail!(
                Failure,
                "the new record does not fit the existing metalayer"
            );
        }
        Ok(out)
    }
}

/// How a stored record ends after its blockshape (see
/// [`NdMeta::from_stored_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeTail {
    /// Nothing follows: the dtype comes from the typesize.
    Absent,
    /// A str32 dtype alone.
    Str,
    /// A `dtype_format` byte, then a str32 dtype.
    FormatAndStr,
}

fn io_fail(e: std::io::Error) -> crate::Error {
    crate::err!(Failure, "{e}")
}

/// A str32 whatever the length: the reference always uses this encoding so
/// the dtype's header has a fixed size.
fn put_str32(out: &mut Vec<u8>, s: &[u8], len: i32) {
    out.push(MARK_STR32);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(s);
}

/// A bounds-checked cursor over the metalayer bytes. A strict reader
/// checks every marker against what a writer emits; a lenient one skips
/// them, as the reference's reader does.
struct Reader<'a> {
    rest: &'a [u8],
    strict: bool,
}

impl<'a> Reader<'a> {
    fn truncated(what: &str) -> crate::Error {
        crate::err!(Failure, "b2nd metalayer: truncated at {what}")
    }

    fn byte(&mut self, what: &str) -> Result<u8> {
        let (&b, rest) = self
            .rest
            .split_first()
            .ok_or_else(|| Self::truncated(what))?;
        self.rest = rest;
        Ok(b)
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let bytes: [u8; N] = self
            .rest
            .get(..N)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| Self::truncated(what))?;
        self.rest = &self.rest[N..];
        Ok(bytes)
    }

    /// ndim, then the shape, chunkshape and blockshape arrays.
    #[allow(clippy::type_complexity)]
    fn dims(&mut self) -> Result<(Vec<i64>, Vec<i32>, Vec<i32>)> {
        let ndim_byte = self.byte("ndim")?;
        let ndim = ndim_byte as usize;
        if ndim > MAX_DIM {
            crate::bail!(
                Failure,
                "b2nd metalayer: ndim {ndim_byte} is out of range [0, {MAX_DIM}]"
            );
        }
        self.array_header(ndim, "shape")?;
        let mut shape = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            self.marker(MARK_INT64, "shape", "int64")?;
            shape.push(i64::from_be_bytes(self.take("shape")?));
        }
        let mut parts = [Vec::with_capacity(ndim), Vec::with_capacity(ndim)];
        for (part, what) in parts.iter_mut().zip(["chunkshape", "blockshape"]) {
            self.array_header(ndim, what)?;
            for _ in 0..ndim {
                self.marker(MARK_INT32, "chunkshape/blockshape", "int32")?;
                part.push(i32::from_be_bytes(self.take("chunkshape/blockshape")?));
            }
        }
        let [chunkshape, blockshape] = parts;
        Ok((shape, chunkshape, blockshape))
    }

    fn array_header(&mut self, ndim: usize, what: &str) -> Result<()> {
        let b = self.byte(what)?;
        if self.strict && b as usize != MARK_FIXARRAY as usize + ndim {
            crate::bail!(
                Failure,
                "b2nd metalayer: {what} header {b:#04x} does not announce {ndim} elements"
            );
        }
        Ok(())
    }

    /// Consumes an element marker, checking it when strict.
    fn marker(&mut self, want: u8, what: &str, expected: &str) -> Result<()> {
        let b = self.byte(what)?;
        if self.strict && b != want {
            crate::bail!(
                Failure,
                "b2nd metalayer: {what} entry marker {b:#04x} is not {expected}"
            );
        }
        Ok(())
    }

    /// A str32 dtype; its declared length must lie within the input.
    fn str32(&mut self) -> Result<String> {
        let marker = self.byte("dtype")?;
        if marker != MARK_STR32 {
            crate::bail!(
                Failure,
                "b2nd metalayer: dtype marker {marker:#04x} is not str32"
            );
        }
        let len = i32::from_be_bytes(self.take("dtype length")?);
        if len < 0 {
            crate::bail!(Failure, "b2nd metalayer: negative dtype length {len}");
        }
        let len = len as usize;
        if len > self.rest.len() {
            crate::bail!(
                Failure,
                "b2nd metalayer: dtype length {len} runs past the end ({} bytes left)",
                self.rest.len()
            );
        }
        let (text, rest) = self.rest.split_at(len);
        self.rest = rest;
        // The reference hands the dtype to C callers as a NUL-terminated
        // string, so they see it up to its first NUL byte; so do we.
        let text = text.split(|&b| b == 0).next().unwrap_or(&[]);
        String::from_utf8(text.to_vec())
            .map_err(|_| crate::err!(Failure, "b2nd metalayer: dtype is not valid UTF-8"))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn dtype_ends_at_its_first_nul_as_c_readers_see_it() {
        // 7 elements, version 0, ndim 0, three empty arrays, dtype_format 0,
        // str32 "<f\0junk": a C reader sees "<f".
        let mut b = vec![0x97, 0, 0, 0x90, 0x90, 0x90, 0];
        b.extend([0xdb, 0, 0, 0, 7]);
        b.extend(b"<f\0junk");
        let m = NdMeta::from_b2nd_bytes(&b).unwrap();
        assert_eq!(m.dtype, "<f");
        let again = NdMeta::from_b2nd_bytes(&m.to_b2nd_bytes().unwrap()).unwrap();
        assert_eq!(again.dtype, "<f");
    }
    use super::*;

    fn sample() -> NdMeta {
        NdMeta::new(vec![10, 20], vec![5, 10], vec![2, 5], "<f8", 0)
    }

    #[test]
    fn b2nd_bytes_match_python_blosc2_output() {
        // blosc2.zeros((10,20), chunks=(5,10), blocks=(2,5), dtype='f8')
        let expected =
            "97000292d3000000000000000ad3000000000000001492d200000005d20000000a92d2000000\
                        02d20000000500db000000033c6638";
        let hex: String = sample()
            .to_b2nd_bytes()
            .unwrap()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }

    #[test]
    fn roundtrip_all_layouts() {
        let m = sample();
        assert_eq!(
            NdMeta::from_b2nd_bytes(&m.to_b2nd_bytes().unwrap()).unwrap(),
            m
        );
        let c = NdMeta::from_caterva_bytes(&m.to_caterva_bytes().unwrap(), 8).unwrap();
        assert_eq!(c.dtype, "|S8");
        assert_eq!(c.shape, m.shape);
        assert_eq!(
            NdMeta::from_meta_bytes(&m.to_caterva_bytes().unwrap(), 3)
                .unwrap()
                .dtype,
            "|S3"
        );
    }

    #[test]
    fn zero_dims_and_sixteen_dims() {
        let m0 = NdMeta::new(vec![], vec![], vec![], "<i4", 0);
        let b = m0.to_b2nd_bytes().unwrap();
        assert_eq!(
            b,
            [0x97, 0, 0, 0x90, 0x90, 0x90, 0, 0xdb, 0, 0, 0, 3, b'<', b'i', b'4']
        );
        assert_eq!(NdMeta::from_b2nd_bytes(&b).unwrap(), m0);
        let m16 = NdMeta::new(vec![1; 16], vec![1; 16], vec![1; 16], "|u1", 0);
        let b = m16.to_b2nd_bytes().unwrap();
        assert_eq!(&b[..4], &[0x97, 0x00, 0x10, 0xa0]);
        assert_eq!(b.len(), 3 + 1 + 16 * 9 + 2 * (1 + 16 * 5) + 1 + 5 + 3);
        assert_eq!(NdMeta::from_b2nd_bytes(&b).unwrap(), m16);
    }

    #[test]
    fn serialisation_rejections() {
        let mut m = sample();
        m.dtype_format = -1;
        assert_eq!(m.to_b2nd_bytes().unwrap_err().code(), -1);
        let mut m = sample();
        m.chunkshape.pop();
        assert_eq!(m.to_b2nd_bytes().unwrap_err().code(), -12);
        assert_eq!(m.to_caterva_bytes().unwrap_err().code(), -12);
        let m = NdMeta::new(vec![1; 17], vec![1; 17], vec![1; 17], "", 0);
        assert_eq!(m.to_b2nd_bytes().unwrap_err().code(), -12);
        let m = NdMeta::new(vec![1], vec![1], vec![1], "a\0b", 0);
        assert!(m.to_b2nd_bytes().is_err());
    }

    #[test]
    fn every_truncation_is_rejected() {
        let b = sample().to_b2nd_bytes().unwrap();
        for len in 0..b.len() {
            assert!(
                NdMeta::from_b2nd_bytes(&b[..len]).is_err(),
                "prefix of {len} accepted"
            );
        }
        let c = sample().to_caterva_bytes().unwrap();
        for len in 0..c.len() {
            assert!(
                NdMeta::from_caterva_bytes(&c[..len], 1).is_err(),
                "prefix of {len} accepted"
            );
        }
    }

    #[test]
    fn trailing_bytes_are_ignored_like_the_reference() {
        let mut b = sample().to_b2nd_bytes().unwrap();
        b.extend_from_slice(&[0xff, 0x00, 0x12]);
        assert_eq!(NdMeta::from_b2nd_bytes(&b).unwrap(), sample());
    }

    fn seven(shape: &[i64], cs: &[i32], bs: &[i32], dtype: &str) -> Vec<u8> {
        NdMeta::new(shape.to_vec(), cs.to_vec(), bs.to_vec(), dtype, 0)
            .to_b2nd_bytes()
            .unwrap()
    }

    #[test]
    fn stored_records_are_read_by_position() {
        let m = seven(&[3], &[2], &[1], "<i4");
        let (d, tail) = NdMeta::from_stored_bytes(&m, 4).unwrap();
        assert_eq!(
            (d.shape, tail, d.dtype.as_str()),
            (vec![3], DtypeTail::FormatAndStr, "<i4")
        );
        // 6-entry header, nothing after the blockshape: the default dtype.
        let mut six = m[..m.len() - 9].to_vec();
        six[0] = 0x96;
        let (d, tail) = NdMeta::from_stored_bytes(&six, 4).unwrap();
        assert_eq!(
            (tail, d.dtype.as_str(), d.dtype_format),
            (DtypeTail::Absent, "|S4", 0)
        );
        // 6 entries with the dtype string but no dtype_format (seed 000).
        let six_dt = [&six[..], &[0xdb, 0, 0, 0, 3], b"<i4"].concat();
        let (d, tail) = NdMeta::from_stored_bytes(&six_dt, 4).unwrap();
        assert_eq!((tail, d.dtype.as_str()), (DtypeTail::Str, "<i4"));
        // 5-entry caterva layout (seeds 001, 004).
        let mut five = six.clone();
        five[0] = 0x95;
        assert_eq!(
            NdMeta::from_stored_bytes(&five, 2).unwrap().0.blockshape,
            vec![1]
        );
        let scalar = seven(&[], &[], &[], "<f8");
        assert_eq!(NdMeta::from_stored_bytes(&scalar, 8).unwrap().0.ndim(), 0);
        // Markers are skipped, as the reference's reader does.
        let mut odd = m.clone();
        odd[4] = 0xcf;
        assert_eq!(NdMeta::from_stored_bytes(&odd, 4).unwrap().0.shape, vec![3]);
    }

    #[test]
    fn rewrites_keep_the_existing_layout() {
        let old = seven(&[3, 4], &[2, 2], &[1, 2], "<u2");
        let new = NdMeta::new(vec![9, 4], vec![2, 2], vec![1, 2], "<u2", 0);
        assert_eq!(
            new.to_bytes_like(&old).unwrap(),
            new.to_b2nd_bytes().unwrap()
        );
        let mut six = old[..old.len() - 9].to_vec();
        six[0] = 0x96;
        let s2 = NdMeta::new(vec![9, 4], vec![2, 2], vec![1, 2], "|S2", 0);
        let six2 = s2.to_bytes_like(&six).unwrap();
        assert_eq!(
            (
                six2.len(),
                six2[0],
                NdMeta::from_stored_bytes(&six2, 2).unwrap().0.shape
            ),
            (six.len(), 0x96, vec![9, 4])
        );
        let six_dt = [&six[..], &[0xdb, 0, 0, 0, 3], b"<u2"].concat();
        let r = NdMeta::new(vec![1, 4], vec![2, 2], vec![1, 2], "<u2", 0)
            .to_bytes_like(&six_dt)
            .unwrap();
        let (d, tail) = NdMeta::from_stored_bytes(&r, 2).unwrap();
        assert_eq!(
            (r.len(), tail, d.dtype.as_str(), d.shape),
            (six_dt.len(), DtypeTail::Str, "<u2", vec![1, 4])
        );
        let other_ndim = NdMeta::new(vec![9], vec![2], vec![1], "|S2", 0);
        assert_eq!(other_ndim.to_bytes_like(&six).unwrap_err().code(), -1);
    }

    #[test]
    fn corrupt_stored_records_fail_cleanly() {
        let m = seven(&[3, 4], &[2, 2], &[1, 1], "<i4");
        for cut in 0..m.len() {
            if cut == m.len() - 9 {
                continue; // ends right after the blockshape: a dtype-less layout
            }
            assert_eq!(
                NdMeta::from_stored_bytes(&m[..cut], 1).unwrap_err().code(),
                -1,
                "cut {cut}"
            );
        }
        let mut bad = m.clone();
        bad[2] = 17;
        assert_eq!(NdMeta::from_stored_bytes(&bad, 1).unwrap_err().code(), -1);
        let mut bad = m.clone();
        let n = bad.len();
        bad[n - 8] = 0xd9;
        assert!(NdMeta::from_stored_bytes(&bad, 1).is_err());
        assert!(NdMeta::from_stored_bytes(&[0x80], 1).is_err());
    }
}
