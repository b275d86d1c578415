//! `caterva_squeeze_index` in place: the logic is the core's
//! [`NdArray::squeeze_in_place`] (core/src/ndarray/array/squeeze.rs, which says
//! how the metalayers are rewritten); the C functions in `api` convert
//! their arguments and call it through this.

use b2nd_core::ndarray::array::NdArray;
use crate::Result;

/// Removes the dimensions flagged in `index` from `core` in place (see
/// [`NdArray::squeeze_in_place`]).
pub(super) fn squeeze_in_place(core: &mut NdArray, index: &[bool]) -> Result<()> {
    core.squeeze_in_place(index)
}
