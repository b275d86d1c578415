//! What the C layer needs beyond the public array API: building an array
//! over a super-chunk without losing the super-chunk when that fails (the C
//! caller of `b2nd_from_schunk` still owns it after an error).

use super::NdArray;
use crate::schunk::SChunk;
use crate::Error;

impl NdArray {
    /// [`NdArray::from_schunk`], handing `sc` back with the error when the
    /// metalayer or the chunks do not describe an array. (A failure after
    /// those checks, while setting up the codec, gives `None`.)
    pub(crate) fn from_schunk_or_back(
        sc: SChunk,
    ) -> std::result::Result<NdArray, (Error, Option<SChunk>)> {
        match NdArray::check_describes_array(&sc) {
            Err(e) => Err((e, Some(sc))),
            Ok(()) => NdArray::from_schunk(sc).map_err(|e| (e, None)),
        }
    }
}
