//! What the C layer needs beyond the public array API: building an array
//! over a super-chunk without losing the super-chunk when that fails (the C
//! caller of `b2nd_from_schunk` still owns it after an error).

use super::schunk_store::SChunkStore;
use super::shared_store::SharedStore;
use super::NdArray;
use crate::schunk::SharedSChunk;
use crate::Result;

impl NdArray {
    /// An array over `sc`, which the C super-chunk object holds too, so that
    /// calls on either reach the same super-chunk (see
    /// [`NdArray::from_schunk`]).
    pub fn from_shared_schunk(sc: SharedSChunk) -> Result<NdArray> {
        let (layout, dtype, dtype_format, expect, blocksize) = {
            let s = sc.read();
            NdArray::check_describes_array(&s)?;
            let (layout, dtype, dtype_format, expect) = NdArray::described_geometry(&s)?;
            let blocksize = NdArray::block_nbytes(&layout, s.typesize())?;
            (layout, dtype, dtype_format, expect, blocksize)
        };
        let store = Box::new(SChunkStore::shared(sc, expect, blocksize)?);
        Ok(NdArray {
            store: SharedStore::new(store),
            layout,
            dtype,
            dtype_format,
        })
    }

    /// The super-chunk behind the array, shared; `None` for decoded storage.
    pub fn schunk_handle(&self) -> Option<SharedSChunk> {
        self.store.schunk_handle()
    }

    /// Whether [`NdArray::refresh`] has something to take in, once the
    /// super-chunk is known not to be stale (`SChunk::stale`).
    pub fn missed_rereads(&self) -> bool {
        self.store.missed_rereads()
    }

    /// Drops the chunk kept decoded for repeated reads: a C caller may have
    /// changed the super-chunk through `array->sc` since the last call.
    pub fn forget_cached(&self) {
        self.store.forget_cached();
    }
}
