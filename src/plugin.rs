//! Dynamically loaded plugins at the C boundary. Finding and opening the
//! library, and looking up the two functions its `info` symbol names, is
//! the core's [`b2nd_core::codecs::plugin`] (which says how a plugin is
//! searched for and why it stays loaded); what stays here is C by nature:
//! giving those addresses the reference's callback types, for
//! `super::registry` to register and call.

use super::types::{
    blosc2_codec_decoder_cb, blosc2_codec_encoder_cb, blosc2_filter_backward_cb,
    blosc2_filter_forward_cb,
};
use b2nd_core::codecs::plugin;

/// The encoder and decoder of codec plugin `name`.
pub(crate) fn codec(
    name: &str,
) -> crate::Result<(blosc2_codec_encoder_cb, blosc2_codec_decoder_cb)> {
    let [enc, dec] = plugin::load_functions(name)?;
    // SAFETY: the plugin contract: the functions `codec_info` names have the
    // reference's encoder and decoder signatures. Both pointers are non-NULL
    // and stay valid (plugin libraries are never closed).
    Ok(unsafe {
        (
            core::mem::transmute::<*mut core::ffi::c_void, blosc2_codec_encoder_cb>(enc.as_ptr()),
            core::mem::transmute::<*mut core::ffi::c_void, blosc2_codec_decoder_cb>(dec.as_ptr()),
        )
    })
}

/// The forward and backward functions of filter plugin `name`.
pub(crate) fn filter(
    name: &str,
) -> crate::Result<(blosc2_filter_forward_cb, blosc2_filter_backward_cb)> {
    let [fwd, bwd] = plugin::load_functions(name)?;
    // SAFETY: as for `codec`, with `filter_info`'s forward and backward
    // signatures.
    Ok(unsafe {
        (
            core::mem::transmute::<*mut core::ffi::c_void, blosc2_filter_forward_cb>(fwd.as_ptr()),
            core::mem::transmute::<*mut core::ffi::c_void, blosc2_filter_backward_cb>(bwd.as_ptr()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_plugin_is_an_error_not_a_crash() {
        let e = codec("b2nd_no_such_plugin_here").unwrap_err();
        assert!(e.kind() == crate::ErrorKind::Failure, "{e}");
        assert!(
            e.to_string()
                .contains("libblosc2_b2nd_no_such_plugin_here.so"),
            "{e}"
        );
        let e = filter("../etc").unwrap_err();
        assert!(e.to_string().contains("invalid plugin name"), "{e}");
    }
}
