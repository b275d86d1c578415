//! Dynamically loaded plugins: the reference's way of running codecs and
//! filters it does not build in (its JPEG 2000 codecs 36, 37, 39 and 40, the
//! OpenZL codec 38, and any user codec or filter registered without
//! callbacks).
//!
//! A plugin called `name` is a shared library `libblosc2_<name>.so` that
//! exports a symbol `info`: a struct of C-string pointers naming its two
//! functions (`codec_info { encoder, decoder }` or `filter_info { forward,
//! backward }`, see `include/blosc2/codecs-registry.h` and
//! `filters-registry.h`). The library is looked up as the reference does:
//!
//! 1. `dlopen("libblosc2_<name>.so")`: the dynamic linker's own search
//!    (`LD_LIBRARY_PATH`, the cache, the system directories);
//! 2. else the first line `python -c "import blosc2_<name>;
//!    blosc2_<name>.print_libpath()"` prints, then the same with `python3`:
//!    the plugins ship as Python wheels that know where their library is.
//!
//! Two deliberate differences from the reference, both to keep a bad plugin
//! from crashing the caller later:
//! - libraries are opened with `RTLD_NOW`, so a plugin with an unresolvable
//!   symbol fails here, with an error code, instead of aborting the process
//!   at its first call (the reference uses `RTLD_LAZY`);
//! - a trailing newline in the printed path is dropped (the reference keeps
//!   it, so only wheels that print without one load there; all do).
//!
//! A plugin that calls back into the Blosc2 API (grok calls
//! `b2nd_deserialize_meta`) resolves those names in the process's global
//! scope, as under the reference: link this library normally, or load it
//! with `RTLD_GLOBAL`.
//!
//! Loaded libraries stay loaded for the life of the process (the codecs and
//! filters made from them are never unregistered), and a name that failed
//! to load is tried again at its next use, as in the reference.
//!
//! This module is FFI by nature (it opens C libraries and hands out C
//! function pointers); what it loads is wrapped by `super::registry`.

use super::types::{
    blosc2_codec_decoder_cb, blosc2_codec_encoder_cb, blosc2_filter_backward_cb,
    blosc2_filter_forward_cb,
};
use core::ffi::{c_char, c_void, CStr};
use std::ffi::CString;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One load at a time: concurrent blocks that need the same plugin load it
/// once, not once per thread (and run Python once).
static LOADING: Mutex<()> = Mutex::new(());

/// Whether `name` can form a plugin library name: ASCII letters, digits and
/// `_` only, as the reference requires (the name goes into a file name and a
/// Python command line).
pub(crate) fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An opened plugin library (never closed: see the module documentation).
struct Library(*mut c_void);

impl Library {
    /// `dlopen(path, RTLD_NOW)`, or the dynamic linker's reason.
    fn open(path: &CStr) -> Result<Self, String> {
        // SAFETY: `path` is NUL-terminated. Opening runs the library's
        // initialisers, which is what loading a plugin means; the reference
        // does the same.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            Err(dl_error())
        } else {
            Ok(Library(h))
        }
    }

    /// The address of symbol `name`, or NULL.
    fn symbol(&self, name: &CStr) -> *mut c_void {
        // SAFETY: `self.0` is a live handle from `dlopen`; `name` is
        // NUL-terminated.
        unsafe { libc::dlsym(self.0, name.as_ptr()) }
    }

    /// The two function names the plugin's `info` struct points to.
    fn info_names(&self, plugin: &str) -> crate::Result<[CString; 2]> {
        let info = self.symbol(c"info") as *const [*const c_char; 2];
        if info.is_null() {
            crate::bail!(Failure, "plugin `{plugin}` has no `info` symbol");
        }
        // SAFETY: a plugin's `info` is a struct of two `char *` (codec_info or
        // filter_info), the contract every plugin of the reference follows.
        let ptrs = unsafe { info.read() };
        let mut names = [CString::default(), CString::default()];
        for (out, p) in names.iter_mut().zip(ptrs) {
            if p.is_null() {
                crate::bail!(Failure, "plugin `{plugin}` names a NULL function");
            }
            // SAFETY: non-NULL and, per the same contract, NUL-terminated.
            *out = unsafe { CStr::from_ptr(p) }.to_owned();
        }
        Ok(names)
    }

    /// Both functions `info` names; an error if either is missing.
    fn functions(&self, plugin: &str) -> crate::Result<[*mut c_void; 2]> {
        let [a, b] = self.info_names(plugin)?;
        let (fa, fb) = (self.symbol(&a), self.symbol(&b));
        if fa.is_null() || fb.is_null() {
            crate::bail!(
                Failure,
                "plugin `{plugin}` lacks {a:?} or {b:?}, the functions its `info` names"
            );
        }
        Ok([fa, fb])
    }
}

fn dl_error() -> String {
    // SAFETY: `dlerror` returns NULL or a NUL-terminated string valid until
    // the next dl call on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown dynamic linker error".to_owned()
    } else {
        // SAFETY: see above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The library path the plugin's Python package prints, from `python` or
/// else `python3`: its first line, without the line break.
fn path_from_python(name: &str) -> Option<CString> {
    let script = format!("import blosc2_{name}; blosc2_{name}.print_libpath()");
    ["python", "python3"].iter().find_map(|python| {
        let out = Command::new(python)
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let line = out.stdout.split(|&b| b == b'\n').next()?;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        (!line.is_empty())
            .then(|| CString::new(line).ok())
            .flatten()
    })
}

/// Opens plugin `name` the reference's way (see the module documentation).
fn open_plugin(name: &str) -> crate::Result<Library> {
    if !is_valid_name(name) {
        crate::bail!(InvalidParam, "invalid plugin name {name:?}");
    }
    let file = CString::new(format!("libblosc2_{name}.so")).expect("validated name has no NUL");
    let direct = match Library::open(&file) {
        Ok(lib) => return Ok(lib),
        Err(e) => e,
    };
    let Some(path) = path_from_python(name) else {
        crate::bail!(
            Failure,
            "plugin `{name}`: {direct}; and no `blosc2_{name}` Python package printed its path"
        );
    };
    Library::open(&path).map_err(|e| crate::err!(Failure, "plugin `{name}` at {path:?}: {e}"))
}

/// The encoder and decoder of codec plugin `name`.
pub(crate) fn codec(
    name: &str,
) -> crate::Result<(blosc2_codec_encoder_cb, blosc2_codec_decoder_cb)> {
    let _one = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    let [enc, dec] = open_plugin(name)?.functions(name)?;
    // SAFETY: the plugin contract: the functions `codec_info` names have the
    // reference's encoder and decoder signatures. Both pointers are non-NULL.
    Ok(unsafe {
        (
            core::mem::transmute::<*mut c_void, blosc2_codec_encoder_cb>(enc),
            core::mem::transmute::<*mut c_void, blosc2_codec_decoder_cb>(dec),
        )
    })
}

/// The forward and backward functions of filter plugin `name`.
pub(crate) fn filter(
    name: &str,
) -> crate::Result<(blosc2_filter_forward_cb, blosc2_filter_backward_cb)> {
    let _one = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    let [fwd, bwd] = open_plugin(name)?.functions(name)?;
    // SAFETY: as for `codec`, with `filter_info`'s forward and backward
    // signatures.
    Ok(unsafe {
        (
            core::mem::transmute::<*mut c_void, blosc2_filter_forward_cb>(fwd),
            core::mem::transmute::<*mut c_void, blosc2_filter_backward_cb>(bwd),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_letters_digits_and_underscores() {
        for ok in ["openhtj2k", "grok", "zfp_acc", "A9_"] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "a b", "../x", "x;rm", "x.so", "naïve", "a-b"] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

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
