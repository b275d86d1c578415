//! User-registered codecs and filters, with the reference's id ranges and
//! registration rules.
//!
//! A codec or filter is a Rust trait object; the C layer wraps C callbacks in
//! these traits. Ids 160..=255 are for users. Ids 32..=159 belong to the
//! reference's globally registered plugins: all five of its plugin filters
//! (NDCELL, NDMEAN, BYTEDELTA, BYTEDELTA_BUGGY, INT_TRUNC) are built into the
//! pipeline (`crate::filters`), and so are its NDLZ codec
//! (`crate::codecs::ndlz`) and its three zfp codecs (`crate::codecs::zfp`).
//! Its other plugin codecs (openhtj2k, grok, openzl, j2k, htj2k: ids
//! 36..=40) exist only as shared libraries in the reference too; the C layer
//! registers them here ([`register_reference_plugin`]) and loads their
//! libraries at first use. Without that registration (the Rust API alone),
//! chunks using them fail with [`crate::ErrorKind::CodecSupport`].
//!
//! Registration semantics follow `blosc2_register_codec`/`_filter`: an id below
//! 160 is refused; re-registering an id under the same name is a no-op success;
//! under another name it is an error; at most 255 entries of each kind.

use std::sync::{Arc, RwLock};

/// First id available to user codecs and filters.
pub(crate) const USER_START: u8 = 160;
/// At most this many entries of each kind (the reference's `UINT8_MAX`).
const MAX_ENTRIES: usize = 255;

/// What a codec or filter callback may want to know about the chunk it works on.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// Type size of the chunk's items.
    pub typesize: i32,
    /// Compression level (0 when decompressing).
    pub clevel: u8,
    /// The codec id of the chunk.
    pub compcode: u8,
    /// `compcode_meta` of the chunk.
    pub compcode_meta: u8,
    /// Threads in use.
    pub nthreads: i16,
    /// Block size of the chunk.
    pub blocksize: i32,
    /// The whole source chunk when decoding (header first), the whole source
    /// buffer when encoding.
    pub chunk: &'a [u8],
    /// The caller's opaque value from `CParams::user_data` (encoding) or
    /// `DParams::user_data` (decoding); the C layer keeps its own parameter
    /// structs there so plugins see `codec_params`/`filter_params`.
    pub user: Option<&'a crate::chunk::UserData>,
}

/// A user codec.
pub trait UserCodec: Send + Sync {
    /// Compresses `src` into `dst`; `Ok(0)` means "does not fit / not compressible".
    fn encode(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<usize>;
    /// Decompresses `src` into `dst`, returning the bytes written (must equal `dst.len()`).
    fn decode(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<usize>;
}

/// A user filter: `forward` on compression, `backward` on decompression.
/// `src` and `dst` always have the same length (one block).
pub trait UserFilter: Send + Sync {
    /// Applies the filter to block `src` into `dst` when compressing; `meta`
    /// is the filter's `filters_meta` byte.
    fn forward(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<()>;
    /// Undoes [`forward`](Self::forward): restores block `src` into `dst`
    /// when decompressing.
    fn backward(
        &self,
        src: &[u8],
        dst: &mut [u8],
        meta: u8,
        info: &CallInfo<'_>,
    ) -> crate::Result<()>;
}

/// A registered codec.
#[derive(Clone)]
pub struct CodecEntry {
    /// The codec id chunks name it by: 160..=255 for user codecs, or a
    /// reference plugin's id (see [`register_reference_plugin`]).
    pub id: u8,
    /// The codec's name; registering the same id again must use the same one.
    pub name: String,
    /// Written into the chunk header's `versionlz` byte.
    pub version: u8,
    /// Written into the header's codec-format bits is always the user-codec slot (6).
    pub codec: Arc<dyn UserCodec>,
}

/// A registered filter.
#[derive(Clone)]
pub struct FilterEntry {
    /// The filter id chunks name it by (160..=255).
    pub id: u8,
    /// The filter's name; registering the same id again must use the same one.
    pub name: String,
    /// The filter's version (kept as registered; nothing stores it in chunks).
    pub version: u8,
    /// The implementation.
    pub filter: Arc<dyn UserFilter>,
}

static CODECS: RwLock<Vec<CodecEntry>> = RwLock::new(Vec::new());
static FILTERS: RwLock<Vec<FilterEntry>> = RwLock::new(Vec::new());

/// Registers a user codec (id 160..=255).
pub fn register_codec(entry: CodecEntry) -> crate::Result<()> {
    if entry.id < USER_START {
        crate::bail!(
            CodecParam,
            "user codec id {} must be >= {}",
            entry.id,
            USER_START
        );
    }
    insert_codec(entry)
}

/// Registers a codec of the reference's global range (32..=159) that is not
/// built in here: one of its plugin-only codecs, whose implementation the C
/// layer loads from a shared library. Ids this crate implements are refused.
pub fn register_reference_plugin(entry: CodecEntry) -> crate::Result<()> {
    if entry.id < crate::codecs::Codec::GLOBAL_START
        || entry.id >= USER_START
        || crate::codecs::Codec::is_builtin(entry.id)
    {
        crate::bail!(
            CodecParam,
            "codec id {} is not a loadable plugin id",
            entry.id
        );
    }
    insert_codec(entry)
}

fn insert_codec(entry: CodecEntry) -> crate::Result<()> {
    let mut codecs = CODECS.write().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = codecs.iter().find(|c| c.id == entry.id) {
        if old.name != entry.name {
            crate::bail!(
                CodecParam,
                "codec id {} already registered as {}",
                entry.id,
                old.name
            );
        }
        return Ok(());
    }
    if codecs.len() >= MAX_ENTRIES {
        crate::bail!(CodecSupport, "cannot register more codecs");
    }
    codecs.push(entry);
    Ok(())
}

/// Registers a user filter (id 160..=255).
pub fn register_filter(entry: FilterEntry) -> crate::Result<()> {
    if entry.id < USER_START {
        crate::bail!(
            Failure,
            "user filter id {} must be >= {}",
            entry.id,
            USER_START
        );
    }
    let mut filters = FILTERS.write().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = filters.iter().find(|f| f.id == entry.id) {
        if old.name != entry.name {
            crate::bail!(
                Failure,
                "filter id {} already registered as {}",
                entry.id,
                old.name
            );
        }
        return Ok(());
    }
    if filters.len() >= MAX_ENTRIES {
        crate::bail!(CodecSupport, "cannot register more filters");
    }
    filters.push(entry);
    Ok(())
}

/// The registered codec with this id, if any.
pub fn codec(id: u8) -> Option<CodecEntry> {
    CODECS
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|c| c.id == id)
        .cloned()
}

/// The registered filter with this id, if any.
pub fn filter(id: u8) -> Option<FilterEntry> {
    FILTERS
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|f| f.id == id)
        .cloned()
}

/// All registered codecs (for `blosc2_list_compressors`-style listings).
pub fn codecs() -> Vec<CodecEntry> {
    CODECS.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The registered codec with this name, if any.
pub fn codec_by_name(name: &str) -> Option<CodecEntry> {
    CODECS
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|c| c.name == name)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Copy;
    impl UserCodec for Copy {
        fn encode(&self, s: &[u8], d: &mut [u8], _: u8, _: &CallInfo<'_>) -> crate::Result<usize> {
            if d.len() < s.len() {
                return Ok(0);
            }
            d[..s.len()].copy_from_slice(s);
            Ok(s.len())
        }
        fn decode(&self, s: &[u8], d: &mut [u8], _: u8, _: &CallInfo<'_>) -> crate::Result<usize> {
            let n = s.len().min(d.len());
            d[..n].copy_from_slice(&s[..n]);
            Ok(n)
        }
    }

    #[test]
    fn registration_rules() {
        let mk = |id, name: &str| CodecEntry {
            id,
            name: name.into(),
            version: 1,
            codec: Arc::new(Copy),
        };
        assert_eq!(register_codec(mk(100, "x")).unwrap_err().code(), -8);
        register_codec(mk(201, "copy201")).unwrap();
        register_codec(mk(201, "copy201")).unwrap();
        assert_eq!(register_codec(mk(201, "other")).unwrap_err().code(), -8);
        assert_eq!(codec(201).unwrap().name, "copy201");
        assert!(codec(202).is_none());
    }
}
