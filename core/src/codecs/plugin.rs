//! Dynamically loaded plugins: the reference's way of running codecs and
//! filters it does not build in (its JPEG 2000 codecs 36, 37, 39 and 40, the
//! OpenZL codec 38, and any user codec or filter registered without
//! callbacks). This module finds and opens the library and looks up the
//! functions it names; turning those addresses into callable codecs or
//! filters (they have the C callback signatures) is the C layer's.
//!
//! A plugin called `name` is a shared library `libblosc2_<name>.so` that
//! exports a symbol `info`: a struct of C-string pointers naming its two
//! functions (`codec_info { encoder, decoder }` or `filter_info { forward,
//! backward }`, see `include/blosc2/codecs-registry.h` and
//! `filters-registry.h`). The library is looked up as the reference does
//! ([`locate`]):
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
//!   symbol fails here, with an error, instead of aborting the process at
//!   its first call (the reference uses `RTLD_LAZY`);
//! - a trailing newline in the printed path is dropped (the reference keeps
//!   it, so only wheels that print without one load there; all do).
//!
//! A plugin that calls back into the Blosc2 API (grok calls
//! `b2nd_deserialize_meta`) resolves those names in the process's global
//! scope, as under the reference: link this library normally, or load it
//! with `RTLD_GLOBAL`.
//!
//! A [`Library`] is never closed: the codecs and filters made from it are
//! never unregistered, so its code must stay mapped for the life of the
//! process. A name that failed to load is tried again at its next use, as
//! in the reference.

use core::ffi::{c_char, c_void, CStr};
use core::ptr::NonNull;
use std::ffi::{CString, OsStr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::Result;

/// One load at a time: concurrent blocks that need the same plugin load it
/// once, not once per thread (and run Python once).
static LOADING: Mutex<()> = Mutex::new(());

/// Whether `name` can form a plugin library name: ASCII letters, digits and
/// `_` only, as the reference requires (the name goes into a file name and a
/// Python command line).
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The file name the dynamic linker is asked for first: `libblosc2_<name>.so`.
pub fn library_file_name(name: &str) -> String {
    format!("libblosc2_{name}.so")
}

/// An opened shared library, loaded for the rest of the process (see the
/// module documentation).
#[derive(Debug)]
pub struct Library(NonNull<c_void>);

// SAFETY: a `dlopen` handle is a process-wide token: `dlsym` on it is
// thread-safe, and nothing here closes it or mutates through it.
unsafe impl Send for Library {}
// SAFETY: as above; `&Library` only allows `dlsym`.
unsafe impl Sync for Library {}

impl Library {
    /// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`: a bare file name goes through
    /// the dynamic linker's search. `Failure` with the linker's reason.
    pub fn open(path: impl AsRef<Path>) -> Result<Library> {
        let path = path.as_ref();
        let c = c_path(path.as_os_str())?;
        // SAFETY: `c` is NUL-terminated. Opening runs the library's
        // initialisers, which is what loading a plugin means; the reference
        // does the same.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        match NonNull::new(h) {
            Some(h) => Ok(Library(h)),
            None => {
                // The linker's message names the file as a rule; when not, say it.
                let why = dl_error();
                let shown = path.display().to_string();
                if why.contains(&shown) {
                    crate::bail!(Failure, "{why}")
                }
                crate::bail!(Failure, "{shown}: {why}")
            }
        }
    }

    /// The address of symbol `name`, or `None`. What it points to is the
    /// library's: calling or reading it is the caller's contract with it.
    pub fn symbol(&self, name: &str) -> Option<NonNull<c_void>> {
        let name = CString::new(name).ok()?;
        self.symbol_c(&name)
    }

    fn symbol_c(&self, name: &CStr) -> Option<NonNull<c_void>> {
        // SAFETY: `self.0` is a live handle from `dlopen` (never closed);
        // `name` is NUL-terminated.
        NonNull::new(unsafe { libc::dlsym(self.0.as_ptr(), name.as_ptr()) })
    }

    /// The two function names the plugin's `info` struct points to.
    pub fn info_names(&self, plugin: &str) -> Result<[CString; 2]> {
        let Some(info) = self.symbol_c(c"info") else {
            crate::bail!(Failure, "plugin `{plugin}` has no `info` symbol");
        };
        let info = info.as_ptr() as *const [*const c_char; 2];
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

    /// The addresses of both functions `info` names (a codec's encoder and
    /// decoder, a filter's forward and backward); an error if either is
    /// missing.
    pub fn info_functions(&self, plugin: &str) -> Result<[NonNull<c_void>; 2]> {
        let [a, b] = self.info_names(plugin)?;
        match (self.symbol_c(&a), self.symbol_c(&b)) {
            (Some(fa), Some(fb)) => Ok([fa, fb]),
            _ => crate::bail!(
                Failure,
                "plugin `{plugin}` lacks {a:?} or {b:?}, the functions its `info` names"
            ),
        }
    }
}

fn c_path(p: &OsStr) -> Result<CString> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(p).to_vec();
    #[cfg(not(unix))]
    let bytes = p.to_string_lossy().into_owned().into_bytes();
    CString::new(bytes).map_err(|_| crate::err!(InvalidParam, "library path contains NUL"))
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
pub fn libpath_from_python(name: &str) -> Option<PathBuf> {
    if !is_valid_name(name) {
        return None;
    }
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
        if line.is_empty() || line.contains(&0) {
            return None;
        }
        #[cfg(unix)]
        let path = PathBuf::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(line));
        #[cfg(not(unix))]
        let path = PathBuf::from(String::from_utf8_lossy(line).into_owned());
        Some(path)
    })
}

/// Finds and opens plugin `name` the reference's way (see the module
/// documentation). `InvalidParam` for a name [`is_valid_name`] refuses;
/// `Failure` naming the library file when neither search finds it.
pub fn locate(name: &str) -> Result<Library> {
    if !is_valid_name(name) {
        crate::bail!(InvalidParam, "invalid plugin name {name:?}");
    }
    let direct = match Library::open(library_file_name(name)) {
        Ok(lib) => return Ok(lib),
        Err(e) => e,
    };
    let Some(path) = libpath_from_python(name) else {
        crate::bail!(
            Failure,
            "plugin `{name}`: {}; and no `blosc2_{name}` Python package printed its path",
            direct.detail()
        );
    };
    Library::open(&path).map_err(|e| crate::err!(Failure, "plugin `{name}`: {}", e.detail()))
}

/// Locates plugin `name` and returns the addresses of the two functions its
/// `info` names, one load at a time across threads.
pub fn load_functions(name: &str) -> Result<[NonNull<c_void>; 2]> {
    let _one = LOADING.lock().unwrap_or_else(|p| p.into_inner());
    locate(name)?.info_functions(name)
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
        assert!(libpath_from_python("../x").is_none());
    }

    #[test]
    fn a_missing_plugin_is_a_clear_error() {
        let e = locate("b2nd_no_such_plugin_here").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Failure, "{e}");
        let msg = e.to_string();
        assert!(msg.contains("libblosc2_b2nd_no_such_plugin_here.so"), "{e}");
        assert!(msg.contains("blosc2_b2nd_no_such_plugin_here"), "{e}");
        let e = load_functions("../etc").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidParam);
        assert!(e.to_string().contains("invalid plugin name"), "{e}");
        assert!(Library::open("/nonexistent/libx.so").is_err());
    }

    #[test]
    fn an_opened_library_gives_symbol_addresses_and_no_info() {
        // The C library is loaded in every process: a library without `info`.
        let lib = Library::open("libc.so.6").unwrap();
        assert!(lib.symbol("malloc").is_some());
        assert!(lib.symbol("b2nd_no_such_symbol").is_none());
        let e = lib.info_functions("libc").unwrap_err();
        assert!(e.to_string().contains("no `info` symbol"), "{e}");
    }
}
