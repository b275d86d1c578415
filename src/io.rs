//! I/O backends at the C boundary: the registry of `blosc2_io_cb` callback
//! sets (`blosc2_register_io_cb`, `blosc2_get_io_cb`), the adapter that lets
//! the core's [`Io`] trait drive registered C callbacks, and the plain-file
//! callbacks the reference exports (`blosc2_stdio_*`).
//!
//! Ownership: a registered `blosc2_io_cb` is copied into the registry, which
//! lives for the whole process; its `name` pointer is kept as given (as the
//! reference does), so it must stay valid. A super-chunk opened through a
//! user backend holds the backend's `params` pointer without owning it; when
//! the super-chunk is freed the backend's `destroy(params)` is called once,
//! after the last of its streams is closed.
//!
//! Streams: as the reference does with every backend but its own file
//! system's, a user backend's file is opened (`"rb"` to read, `"rb+"` to
//! write, `"wb"` to create) for one operation of the super-chunk and closed
//! before that operation returns; none stays open between calls.
//!
//! The memory-mapped backend (`BLOSC2_IO_FILESYSTEM_MMAP`, the
//! `blosc2_stdio_mmap_*` callbacks) maps one contiguous frame file with the
//! core's `frame::mmap::MmapFile` (Rust callers use `frame::MmapIo`); its
//! `params` is the caller's `blosc2_stdio_mmap`, whose fields show the
//! mapping's state, released by its destroy callback (and `free()`d when
//! `needs_free`). As in the reference it cannot serve sparse frames (a
//! second path is refused).

use core::ffi::{c_char, c_int, c_void, CStr};

use super::convert;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::constants::{BLOSC2_IO_FILESYSTEM, BLOSC2_IO_FILESYSTEM_MMAP, BLOSC2_IO_REGISTERED};
use super::guard;
use super::types::{blosc2_io, blosc2_io_cb, blosc2_stdio_file, blosc2_stdio_mmap};
use b2nd_core::frame::mmap::{MmapFile, MmapMode};
use b2nd_core::frame::{Io, IoFile, IoRef, OpenMode};
use crate::Result;

/// A registry slot. Boxed so the address handed out by `blosc2_get_io_cb`
/// never moves.
struct Slot(Box<blosc2_io_cb>);

// SAFETY: the slot only stores function pointers and the caller's name
// pointer, which the registration contract requires to stay valid and
// immutable; nothing here mutates through them.
unsafe impl Send for Slot {}

static REGISTRY: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

/// The callbacks of the plain file backend, as `blosc2_get_io_cb(0)` returns.
fn stdio_callbacks() -> blosc2_io_cb {
    blosc2_io_cb {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr() as *mut c_char,
        is_allocation_necessary: true,
        open: Some(blosc2_stdio_open),
        close: Some(blosc2_stdio_close),
        size: Some(blosc2_stdio_size),
        write: Some(blosc2_stdio_write),
        read: Some(blosc2_stdio_read),
        truncate: Some(blosc2_stdio_truncate),
        destroy: Some(blosc2_stdio_destroy),
    }
}

/// The callbacks of the memory-mapped backend, as `blosc2_get_io_cb(1)` returns.
fn mmap_callbacks() -> blosc2_io_cb {
    blosc2_io_cb {
        id: BLOSC2_IO_FILESYSTEM_MMAP as u8,
        name: c"filesystem_mmap".as_ptr() as *mut c_char,
        is_allocation_necessary: false,
        open: Some(blosc2_stdio_mmap_open),
        close: Some(blosc2_stdio_mmap_close),
        size: Some(blosc2_stdio_mmap_size),
        write: Some(blosc2_stdio_mmap_write),
        read: Some(blosc2_stdio_mmap_read),
        truncate: Some(blosc2_stdio_mmap_truncate),
        destroy: Some(blosc2_stdio_mmap_destroy),
    }
}

/// Adds `cb` unless its id is taken; same id and name is accepted as a no-op.
fn register(cb: blosc2_io_cb) -> Result<()> {
    let mut reg = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = reg.iter().find(|s| s.0.id == cb.id) {
        // SAFETY: registered names are NUL-terminated strings kept alive by
        // their registrants (or static for the built-in backend).
        let same = unsafe { c_str_eq(old.0.name, cb.name) };
        if same {
            return Ok(());
        }
        crate::bail!(PluginIo, "I/O backend id {} already registered", cb.id);
    }
    if reg.len() >= usize::from(u8::MAX) {
        crate::bail!(PluginIo, "too many I/O backends registered");
    }
    reg.push(Slot(Box::new(cb)));
    Ok(())
}

/// Compares two possibly-NULL C strings.
///
/// # Safety
/// Each pointer is NULL or NUL-terminated.
unsafe fn c_str_eq(a: *const c_char, b: *const c_char) -> bool {
    // SAFETY: each NULL or NUL-terminated per the contract.
    let (a, b) = unsafe { (convert::opt_c_str(a, "name"), convert::opt_c_str(b, "name")) };
    matches!((a, b), (Ok(x), Ok(y)) if x == y)
}

/// The registered callbacks with `id`, registering the built-in backends
/// (file system, memory-mapped file) on first request as the reference does.
fn lookup(id: u8) -> Option<*mut blosc2_io_cb> {
    let find = |reg: &mut Vec<Slot>| {
        reg.iter_mut()
            .find(|s| s.0.id == id)
            .map(|s| &mut *s.0 as *mut blosc2_io_cb)
    };
    {
        let mut reg = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = find(&mut reg) {
            return Some(p);
        }
    }
    let builtin = match i32::from(id) {
        BLOSC2_IO_FILESYSTEM => Some(stdio_callbacks()),
        BLOSC2_IO_FILESYSTEM_MMAP => Some(mmap_callbacks()),
        _ => None,
    };
    if let Some(cb) = builtin {
        register(cb).ok()?;
        let mut reg = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        return find(&mut reg);
    }
    None
}

/// Registers user I/O callbacks. Ids below `BLOSC2_IO_REGISTERED` (160) and
/// ids already registered under another name give `BLOSC2_ERROR_PLUGIN_IO`;
/// NULL gives `BLOSC2_ERROR_INVALID_PARAM`. Returns 0 on success.
///
/// # Safety
/// `io` is NULL or points to a valid `blosc2_io_cb` whose `name` stays valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_io_cb(io: *const blosc2_io_cb) -> c_int {
    guard(crate::Error::FAILURE_CODE, || {
        // SAFETY: NULL or valid per the contract.
        let Some(cb) = (unsafe { io.as_ref() }) else {
            return super::report(&crate::err!(InvalidParam, "io is NULL"));
        };
        if i32::from(cb.id) < BLOSC2_IO_REGISTERED {
            return super::report(&crate::err!(
                PluginIo,
                "user I/O ids start at {BLOSC2_IO_REGISTERED}, got {}",
                cb.id
            ));
        }
        match register(*cb) {
            Ok(()) => 0,
            Err(e) => super::report(&e),
        }
    })
}

/// The callbacks registered under `id` (the file system for id 0, memory
/// mapping for id 1), or NULL.
/// The pointer stays valid for the life of the process.
#[no_mangle]
pub extern "C" fn blosc2_get_io_cb(id: u8) -> *mut blosc2_io_cb {
    guard(core::ptr::null_mut(), || {
        lookup(id).unwrap_or(core::ptr::null_mut())
    })
}

/// The core's I/O backend for a C `blosc2_io`: `None` (the core's own local
/// file system) for NULL or the file-system id; the memory-mapped or a
/// registered user backend otherwise.
///
/// # Safety
/// `io` is NULL or points to a readable `blosc2_io`.
pub(crate) unsafe fn io_from_c(io: *const blosc2_io) -> Result<Option<IoRef>> {
    // SAFETY: NULL or valid per the contract.
    let Some(io) = (unsafe { io.as_ref() }) else {
        return Ok(None);
    };
    let id = i32::from(io.id);
    if id == BLOSC2_IO_FILESYSTEM {
        return Ok(None);
    }
    let cb =
        lookup(io.id).ok_or_else(|| crate::err!(PluginIo, "I/O backend {id} is not registered"))?;
    // SAFETY: registry slots are never freed or moved.
    let cb = unsafe { *cb };
    Ok(Some(Arc::new(CallbackIo {
        backend: Arc::new(Backend::new(cb, io.params)),
    })))
}

/// A registered C backend's callbacks and the params one super-chunk gave
/// them. Its `destroy(params)` runs when the last user goes away: the
/// super-chunk's [`CallbackIo`] and every stream still open ([`CallbackFile`]
/// holds one), so `destroy` always comes after the last `close`, as in the
/// reference, where a backend may free in `destroy` what its streams use.
struct Backend {
    cb: blosc2_io_cb,
    params: *mut c_void,
}

// SAFETY: the reference calls I/O callbacks from whichever thread runs the
// super-chunk operation; backends registered with it must accept that, so
// moving or sharing the callback table and its params between threads adds
// no requirement beyond the reference's.
unsafe impl Send for Backend {}
// SAFETY: as above; the core never calls the backend from two threads at once
// for one super-chunk.
unsafe impl Sync for Backend {}

/// How many [`Backend`]s hold each params pointer (non-NULL ones only).
///
/// The reference calls `destroy(params)` once, when the super-chunk that
/// holds them is freed. Here the same `blosc2_io` is turned into a backend
/// wherever C hands it in (a b2nd context, every use of it, the super-chunk
/// made from it), so `destroy` runs when the last backend holding those
/// params goes: python-blosc2's mmap params, freed by `destroy`, stay valid
/// while any context or super-chunk made from them lives.
static PARAMS_HOLDERS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

fn params_holders() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    // Each change is one push, one increment or one swap_remove: the list
    // stays consistent even if a holder panicked.
    PARAMS_HOLDERS.lock().unwrap_or_else(|e| e.into_inner())
}

impl Backend {
    fn new(cb: blosc2_io_cb, params: *mut c_void) -> Backend {
        if !params.is_null() {
            let mut holders = params_holders();
            match holders.iter_mut().find(|(p, _)| *p == params as usize) {
                Some((_, n)) => *n += 1,
                None => holders.push((params as usize, 1)),
            }
        }
        Backend { cb, params }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if !self.params.is_null() {
            let mut holders = params_holders();
            if let Some(i) = holders.iter().position(|(p, _)| *p == self.params as usize) {
                holders[i].1 -= 1;
                if holders[i].1 > 0 {
                    return;
                }
                holders.swap_remove(i);
            }
        }
        if let Some(destroy) = self.cb.destroy {
            // SAFETY: the backend's own destroy callback with the params it was
            // given; called once, when no backend holds them any more.
            unsafe { destroy(self.params) };
        }
    }
}

/// A registered C backend seen through the core's [`Io`] trait.
struct CallbackIo {
    backend: Arc<Backend>,
}

impl Io for CallbackIo {
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Box<dyn IoFile>> {
        let cb = &self.backend.cb;
        let open = cb
            .open
            .ok_or_else(|| crate::err!(PluginIo, "backend has no open callback"))?;
        let cpath = std::ffi::CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| crate::err!(InvalidParam, "path contains NUL"))?;
        // The reference's modes: a backend may know no others.
        let cmode: &CStr = match mode {
            OpenMode::Read => c"rb",
            OpenMode::ReadWrite => c"rb+",
            OpenMode::Create => c"wb",
        };
        // SAFETY: both strings are NUL-terminated and live across the call;
        // params is what the caller registered for this backend.
        let stream = unsafe { open(cpath.as_ptr(), cmode.as_ptr(), self.backend.params) };
        if stream.is_null() {
            crate::bail!(FileOpen, "{}: backend could not open it", path.display());
        }
        Ok(Box::new(CallbackFile {
            backend: Arc::clone(&self.backend),
            stream,
        }))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        // The callback set has no remove entry; the reference removes sparse
        // chunk files with the C library in every backend as well.
        std::fs::remove_file(path).map_err(|e| crate::err!(FileRemove, "{}: {e}", path.display()))
    }

    fn create_dir(&self, path: &Path) -> Result<()> {
        std::fs::create_dir_all(path).map_err(|e| crate::err!(FileOpen, "{}: {e}", path.display()))
    }

    /// The reference opens a user backend's file for each operation and
    /// closes it before returning (it keeps handles open only for its own
    /// file system): backends count on that, and may pool or limit streams.
    fn keeps_files_open(&self) -> bool {
        false
    }
}

/// One stream opened by a C backend; closed on drop, before the backend it
/// holds can be destroyed.
struct CallbackFile {
    backend: Arc<Backend>,
    stream: *mut c_void,
}

// SAFETY: see `Backend`; the stream is used by one thread at a time.
unsafe impl Send for CallbackFile {}
// SAFETY: every method that touches the stream takes `&mut self`; the
// `&self` ones (`replaced`, `read_at_shared`) keep the trait's defaults and
// do not touch it, so shared borrows on several threads never reach C.
unsafe impl Sync for CallbackFile {}

impl Drop for CallbackFile {
    fn drop(&mut self) {
        if let Some(close) = self.backend.cb.close {
            // SAFETY: the stream came from this backend's open and is closed
            // once; the backend's params are still alive (`self.backend`).
            unsafe { close(self.stream) };
        }
    }
}

impl IoFile for CallbackFile {
    fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let read = self
            .backend
            .cb
            .read
            .ok_or_else(|| crate::err!(PluginIo, "backend has no read callback"))?;
        let pos = i64::try_from(pos).map_err(|_| crate::err!(FileRead, "position too large"))?;
        let len = buf.len() as i64;
        let mut ptr: *mut c_void = if self.backend.cb.is_allocation_necessary {
            buf.as_mut_ptr().cast()
        } else {
            core::ptr::null_mut()
        };
        // SAFETY: `ptr` is either our buffer of `len` bytes or NULL for the
        // backend to replace with its own memory; the stream is open.
        let mut n = unsafe { read(&mut ptr, 1, len, pos, self.stream) };
        if n <= 0 && len > 0 && !self.backend.cb.is_allocation_necessary {
            // Backends that hand out their own memory (mmap) refuse a range
            // that passes the end instead of returning a short read; ask again
            // for what the stream holds, as the trait promises a short read.
            let avail = self.size()?.saturating_sub(pos as u64).min(len as u64) as i64;
            if avail > 0 {
                ptr = core::ptr::null_mut();
                // SAFETY: as above, for `avail <= len` bytes.
                n = unsafe { read(&mut ptr, 1, avail, pos, self.stream) };
            }
        }
        let n = usize::try_from(n.clamp(0, len)).unwrap_or(0);
        if !self.backend.cb.is_allocation_necessary && n > 0 {
            if ptr.is_null() {
                crate::bail!(FileRead, "backend returned no memory for {n} bytes");
            }
            // SAFETY: the backend says `n` bytes are readable at `ptr`, and
            // `n <= buf.len()`.
            let src = unsafe { convert::items(ptr.cast::<u8>().cast_const(), n, "read buffer") }?;
            buf[..n].copy_from_slice(src);
        }
        Ok(n)
    }

    fn write_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        let write = self
            .backend
            .cb
            .write
            .ok_or_else(|| crate::err!(PluginIo, "backend has no write callback"))?;
        let pos = i64::try_from(pos).map_err(|_| crate::err!(FileWrite, "position too large"))?;
        // SAFETY: `data` is readable for its length; the stream is open.
        let n = unsafe { write(data.as_ptr().cast(), 1, data.len() as i64, pos, self.stream) };
        if n != data.len() as i64 {
            crate::bail!(FileWrite, "backend wrote {n} of {} bytes", data.len());
        }
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        let truncate = self
            .backend
            .cb
            .truncate
            .ok_or_else(|| crate::err!(PluginIo, "backend has no truncate callback"))?;
        let len = i64::try_from(len).map_err(|_| crate::err!(FileTruncate, "size too large"))?;
        // SAFETY: the stream is open.
        if unsafe { truncate(self.stream, len) } != 0 {
            crate::bail!(FileTruncate, "backend could not truncate to {len}");
        }
        Ok(())
    }

    fn size(&mut self) -> Result<u64> {
        let size = self
            .backend
            .cb
            .size
            .ok_or_else(|| crate::err!(PluginIo, "backend has no size callback"))?;
        // SAFETY: the stream is open.
        let n = unsafe { size(self.stream) };
        u64::try_from(n).map_err(|_| crate::err!(FileRead, "backend size failed ({n})"))
    }
}

// ---- The plain-file callbacks the reference exports ---------------------------

/// The `FILE*` inside a stream handle, or NULL.
///
/// # Safety
/// `stream` is NULL or a handle returned by `blosc2_stdio_open`.
unsafe fn stdio_file(stream: *mut c_void) -> *mut libc::FILE {
    // SAFETY: NULL or one of our handles per the contract.
    match unsafe { stream.cast::<blosc2_stdio_file>().as_ref() } {
        Some(h) => h.file,
        None => core::ptr::null_mut(),
    }
}

/// Positioned transfer on the descriptor behind `file`; returns bytes moved
/// (short on end of file or error).
///
/// # Safety
/// `file` is an open `FILE*`; `buf` is valid for `n` bytes (writable when
/// reading).
unsafe fn positioned(file: *mut libc::FILE, buf: *mut u8, n: usize, pos: i64, write: bool) -> i64 {
    // SAFETY: `file` is open per the contract.
    let fd = unsafe { libc::fileno(file) };
    if fd < 0 {
        return 0;
    }
    if write {
        // Flush stdio's buffer so positioned writes and buffered ones agree.
        // SAFETY: `file` is open.
        unsafe { libc::fflush(file) };
    }
    let mut done = 0usize;
    while done < n {
        let left = (n - done).min(1 << 30);
        let off = pos + done as i64;
        // SAFETY: `buf + done .. buf + done + left` lies inside the caller's
        // buffer of `n` bytes.
        let r = unsafe {
            if write {
                libc::pwrite(fd, buf.add(done).cast(), left, off)
            } else {
                libc::pread(fd, buf.add(done).cast(), left, off)
            }
        };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if r == 0 {
            break;
        }
        done += r as usize;
    }
    done as i64
}

/// Opens `urlpath` with the C library's `fopen` `mode`; returns a handle
/// (a malloc'ed `blosc2_stdio_file`) or NULL.
///
/// # Safety
/// `urlpath` and `mode` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_open(
    urlpath: *const c_char,
    mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    let _ = params;
    guard(core::ptr::null_mut(), || {
        if urlpath.is_null() || mode.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: both are NUL-terminated strings per the contract.
        let file = unsafe { libc::fopen(urlpath, mode) };
        if file.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: plain allocation of a POD struct, checked below.
        let h = unsafe { libc::malloc(core::mem::size_of::<blosc2_stdio_file>()) }
            .cast::<blosc2_stdio_file>();
        if h.is_null() {
            // SAFETY: `file` was opened above and is closed once.
            unsafe { libc::fclose(file) };
            return core::ptr::null_mut();
        }
        // SAFETY: `h` is a fresh allocation of the right size.
        unsafe { h.write(blosc2_stdio_file { file }) };
        h.cast()
    })
}

/// Closes a handle from `blosc2_stdio_open`; returns `fclose`'s result, -1 for NULL.
///
/// # Safety
/// `stream` is NULL or an open handle from `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_close(stream: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: NULL or our handle per the contract.
        let file = unsafe { stdio_file(stream) };
        if file.is_null() {
            return -1;
        }
        // SAFETY: the handle and its FILE are released exactly once here.
        unsafe {
            let r = libc::fclose(file);
            libc::free(stream);
            r
        }
    })
}

/// Size in bytes of the open file, or -1.
///
/// # Safety
/// `stream` is NULL or an open handle from `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: NULL or our handle per the contract.
        let file = unsafe { stdio_file(stream) };
        if file.is_null() {
            return -1;
        }
        // SAFETY: `file` is open; fstat fills a local struct.
        unsafe {
            libc::fflush(file);
            let mut st: libc::stat = core::mem::zeroed();
            if libc::fstat(libc::fileno(file), &mut st) != 0 {
                return -1;
            }
            st.st_size
        }
    })
}

/// Writes `size * nitems` bytes at `position`; returns the items written.
///
/// # Safety
/// `ptr` is valid for `size * nitems` bytes; `stream` is NULL or open.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: NULL or our handle per the contract.
        let file = unsafe { stdio_file(stream) };
        let Some((pos, end)) = byte_range(size, nitems, position) else {
            return 0;
        };
        if file.is_null() || ptr.is_null() {
            return 0;
        }
        let n = end - pos;
        // SAFETY: `ptr` holds `n` bytes per the contract; a write only reads them.
        let done = unsafe { positioned(file, ptr as *mut u8, n, position, true) };
        if size > 0 {
            done / size
        } else {
            0
        }
    })
}

/// Reads `size * nitems` bytes at `position` into `*ptr`; returns the items read.
///
/// # Safety
/// `ptr` is NULL or points to a pointer valid for `size * nitems` writable
/// bytes; `stream` is NULL or open.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: NULL or our handle per the contract.
        let file = unsafe { stdio_file(stream) };
        let Some((pos, end)) = byte_range(size, nitems, position) else {
            return 0;
        };
        if file.is_null() || ptr.is_null() {
            return 0;
        }
        // SAFETY: `ptr` is non-NULL and points to the destination pointer.
        let dst = unsafe { *ptr }.cast::<u8>();
        let n = end - pos;
        if dst.is_null() {
            return 0;
        }
        // SAFETY: `dst` is writable for `n` bytes per the contract.
        let done = unsafe { positioned(file, dst, n, position, false) };
        if size > 0 {
            done / size
        } else {
            0
        }
    })
}

/// Sets the file size; 0 on success, -1 on failure.
///
/// # Safety
/// `stream` is NULL or an open handle from `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        // SAFETY: NULL or our handle per the contract.
        let file = unsafe { stdio_file(stream) };
        if file.is_null() || size < 0 {
            return -1;
        }
        // SAFETY: `file` is open.
        unsafe {
            libc::fflush(file);
            if libc::ftruncate(libc::fileno(file), size) != 0 {
                return -1;
            }
        }
        0
    })
}

/// The plain file backend keeps no state in its params; returns 0.
#[no_mangle]
pub extern "C" fn blosc2_stdio_destroy(params: *mut c_void) -> c_int {
    let _ = params;
    0
}

// ---- The memory-mapped file callbacks the reference exports -------------------
//
// The mapping is the core's `frame::mmap::MmapFile`; these callbacks convert
// and delegate to it. The C `blosc2_stdio_mmap` is the caller's, with a
// layout fixed by the reference and no room for a Rust object, so the
// mapping each one opened is kept in `MAPPED`, keyed by its address, and
// its public fields (addr, file_size, mapping_size, fd, file, flags) are
// rewritten after every change, since C callers read them.

/// The mappings opened by `blosc2_stdio_mmap_open`, by the address of their
/// `blosc2_stdio_mmap` (few at a time: one per mapped super-chunk).
static MAPPED: Mutex<Vec<(usize, MmapFile)>> = Mutex::new(Vec::new());

fn mapped() -> std::sync::MutexGuard<'static, Vec<(usize, MmapFile)>> {
    // Each change is one push or one swap_remove, and a mapping's own
    // changes complete or fail before they return: usable after a panic.
    MAPPED.lock().unwrap_or_else(|p| p.into_inner())
}

/// The caller's mmap parameters behind a stream or params pointer.
///
/// # Safety
/// `p` is NULL or points to a live `blosc2_stdio_mmap`.
unsafe fn mmap_state<'a>(p: *mut c_void) -> Option<&'a mut blosc2_stdio_mmap> {
    // SAFETY: NULL or valid per the contract.
    unsafe { p.cast::<blosc2_stdio_mmap>().as_mut() }
}

/// Runs `f` on the mapping this library opened for `m`, then shows its
/// state in `m`'s fields; `None` when `m` holds no mapping of ours (never
/// opened, destroyed, or state a caller filled in by hand).
fn with_mapping<T>(
    m: &mut blosc2_stdio_mmap,
    f: impl FnOnce(&mut MmapFile) -> crate::Result<T>,
) -> Option<crate::Result<T>> {
    let key = m as *mut blosc2_stdio_mmap as usize;
    let mut list = mapped();
    let (_, file) = list
        .iter_mut()
        .find(|(k, f)| *k == key && f.as_ptr() == m.addr.cast_const().cast())?;
    let r = f(file);
    show(m, file);
    Some(r)
}

/// Writes the mapping's live state into the C struct.
fn show(m: &mut blosc2_stdio_mmap, f: &MmapFile) {
    use std::os::unix::io::AsRawFd;
    m.addr = f.as_ptr().cast_mut().cast();
    m.file_size = f.len();
    m.mapping_size = f.mapping_size();
    m.is_memory_only = f.mode().is_memory_only();
    m.fd = f.as_raw_fd();
    let (prot, flags) = match f.mode() {
        MmapMode::Read => (libc::PROT_READ, libc::MAP_SHARED),
        MmapMode::ReadWrite | MmapMode::Create => {
            (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED)
        }
        MmapMode::CopyOnWrite => (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE),
    };
    m.access_flags = i64::from(prot);
    m.map_flags = i64::from(flags);
}

/// The number of bytes `size * nitems` at `position` spans, and where it
/// ends; `None` for negative or overflowing arguments.
fn byte_range(size: i64, nitems: i64, position: i64) -> Option<(usize, usize)> {
    if size < 0 || nitems < 0 || position < 0 {
        return None;
    }
    let n = usize::try_from(size.checked_mul(nitems)?).ok()?;
    let pos = usize::try_from(position).ok()?;
    Some((pos, pos.checked_add(n)?))
}

/// Opens and maps `urlpath` as `params->mode` says ("r", "r+", "w+" or "c",
/// the modes of numpy's memmap; see `frame::mmap`). A second open of the
/// same path returns the same stream; another path (a sparse frame) gives
/// NULL. Returns `params` as the stream, or NULL.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated; `params` is NULL or a valid
/// `blosc2_stdio_mmap` whose `mode` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_open(
    urlpath: *const c_char,
    mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    let _ = mode;
    guard(core::ptr::null_mut(), || {
        // SAFETY: forwarded contract.
        let Some(m) = (unsafe { mmap_state(params) }) else {
            return core::ptr::null_mut();
        };
        if urlpath.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: NUL-terminated per the contract.
        let Ok(path) = (unsafe { convert::c_str(urlpath, "urlpath") }) else {
            return core::ptr::null_mut();
        };
        if !m.addr.is_null() {
            // SAFETY: `urlpath` in the state was set by this backend (a
            // malloc'ed NUL-terminated copy) or is NULL.
            let same = matches!(unsafe { convert::opt_c_str(m.urlpath, "urlpath") }, Ok(Some(p)) if p == path);
            if !same {
                super::trace_error(&format!(
                    "the memory-mapped file is open with another path, so {path} cannot be \
                     (memory-mapped files do not hold sparse frames)"
                ));
            }
            return if same { params } else { core::ptr::null_mut() };
        }
        if m.mode.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: NUL-terminated per the contract.
        let Ok(mode_str) = (unsafe { convert::c_str(m.mode, "mode") }) else {
            return core::ptr::null_mut();
        };
        let Some(mmap_mode) = MmapMode::from_mode_str(mode_str) else {
            super::trace_error(&format!(
                "mode {mode_str} not supported for memory-mapped files"
            ));
            return core::ptr::null_mut();
        };
        let file = match MmapFile::open(path, mmap_mode, m.initial_mapping_size) {
            Ok(f) => f,
            Err(e) => {
                super::report(&e);
                return core::ptr::null_mut();
            }
        };
        // The reference's `FILE*` for C readers of the struct: a stream on a
        // duplicate of the mapping's descriptor, closed by destroy.
        let stream_mode = if mmap_mode.writable() && !mmap_mode.is_memory_only() {
            c"rb+"
        } else {
            c"rb"
        };
        // SAFETY: `dup` of the descriptor `file` holds open; `fdopen` takes
        // the duplicate (closed right here if it fails) and a static mode.
        let stream = unsafe {
            use std::os::unix::io::AsRawFd;
            let fd = libc::dup(file.as_raw_fd());
            let s = if fd < 0 {
                core::ptr::null_mut()
            } else {
                libc::fdopen(fd, stream_mode.as_ptr())
            };
            if s.is_null() && fd >= 0 {
                libc::close(fd);
            }
            s
        };
        // SAFETY: strdup of a NUL-terminated string (released in destroy).
        m.urlpath = unsafe { libc::strdup(urlpath) };
        m.file = stream;
        show(m, &file);
        super::trace_info(&format!(
            "Opened memory-mapped file {path} in mode {mode_str} with an mapping size of {} bytes.",
            file.mapping_size()
        ));
        let key = params as usize;
        let mut list = mapped();
        // A struct reset and reused without destroy leaves its old mapping
        // here: it is released now that the struct names another.
        list.retain(|(k, _)| *k != key);
        list.push((key, file));
        // The mode string belongs to the caller and may not outlive this call.
        m.mode = core::ptr::null();
        params
    })
}

/// Streams of the mmap backend stay open until destroy; returns 0.
#[no_mangle]
pub extern "C" fn blosc2_stdio_mmap_close(stream: *mut c_void) -> c_int {
    let _ = stream;
    0
}

/// The logical size of the mapped file (-1 for NULL).
///
/// # Safety
/// `stream` is NULL or a stream from `blosc2_stdio_mmap_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: forwarded contract.
        match unsafe { mmap_state(stream) } {
            Some(m) => i64::try_from(m.file_size).unwrap_or(i64::MAX),
            None => -1,
        }
    })
}

/// Copies `size * nitems` bytes to `position` of the mapping, growing it as
/// needed; returns the items written (0 on error). A mapping the caller set
/// up in the struct by hand is written inside its `file_size` only.
///
/// # Safety
/// `ptr` is readable for `size * nitems` bytes; `stream` is NULL or open
/// (or a struct whose `addr` holds `file_size` writable bytes).
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: forwarded contract.
        let Some(m) = (unsafe { mmap_state(stream) }) else {
            return 0;
        };
        if ptr.is_null() || m.addr.is_null() {
            return 0;
        }
        let Some((pos, end)) = byte_range(size, nitems, position) else {
            return 0;
        };
        if end == pos {
            return 0;
        }
        // SAFETY: `ptr` holds `end - pos` bytes per the contract.
        let Ok(data) = (unsafe { convert::items(ptr.cast::<u8>(), end - pos, "ptr") }) else {
            return 0;
        };
        match with_mapping(m, |f| f.write_at(pos as u64, data)) {
            Some(Ok(())) => nitems,
            Some(Err(e)) => {
                super::report(&e);
                0
            }
            None if end <= m.file_size => {
                // SAFETY: the caller's mapping holds `file_size >= end` bytes
                // per the contract; `data` is the caller's other buffer.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        m.addr.cast::<u8>().add(pos),
                        data.len(),
                    )
                };
                nitems
            }
            None => 0,
        }
    })
}

/// Points `*ptr` into the mapping at `position` (no copy); returns `nitems`,
/// or 0 (and NULL) when the range passes the end of the file.
///
/// # Safety
/// `ptr` is NULL or writable; `stream` is NULL or open.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: forwarded contract.
        let m = unsafe { mmap_state(stream) };
        match (m, byte_range(size, nitems, position)) {
            (Some(m), Some((pos, end))) if end <= m.file_size && !m.addr.is_null() => {
                // SAFETY: `pos <= end <= file_size <= mapping_size` (the
                // fields show the mapping's state); `ptr` is writable per
                // the contract.
                unsafe { *ptr = m.addr.add(pos).cast() };
                nitems
            }
            _ => {
                // SAFETY: `ptr` is writable per the contract.
                unsafe { *ptr = core::ptr::null_mut() };
                0
            }
        }
    })
}

/// Sets the logical file size (and the file's, unless in "c" mode); 0 on success.
///
/// # Safety
/// `stream` is NULL or open.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        // SAFETY: forwarded contract.
        let Some(m) = (unsafe { mmap_state(stream) }) else {
            return -1;
        };
        let Ok(target) = u64::try_from(size) else {
            return -1;
        };
        match with_mapping(m, |f| f.truncate(target)) {
            Some(Ok(())) => 0,
            Some(Err(e)) => {
                super::report(&e);
                -1
            }
            // A mapping set up by hand only shrinks, logically.
            None if target <= m.file_size as u64 => {
                m.file_size = target as usize;
                0
            }
            None => -1,
        }
    })
}

/// Flushes (writable modes), unmaps and closes the file, releases the path
/// copy, and `free()`s the params when `needs_free`. Returns 0, or -1 when a
/// step failed or `params` held no mapping this library opened.
///
/// # Safety
/// `params` is NULL or a `blosc2_stdio_mmap` used with this backend.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_destroy(params: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: forwarded contract.
        let Some(m) = (unsafe { mmap_state(params) }) else {
            return -1;
        };
        let key = params as usize;
        let mine = {
            let mut list = mapped();
            list.iter()
                .position(|(k, f)| *k == key && f.as_ptr() == m.addr.cast_const().cast())
                .map(|i| list.swap_remove(i).1)
        };
        let ours = mine.is_some();
        let mut err = match mine.map(MmapFile::close) {
            Some(Ok(())) => 0,
            Some(Err(e)) => {
                super::report(&e);
                -1
            }
            None => -1,
        };
        // SAFETY: `file` and `urlpath` were made by `blosc2_stdio_mmap_open`
        // for this state (or are NULL) and are released exactly once here;
        // the params are the caller's allocation when `needs_free` says so.
        unsafe {
            if ours {
                if !m.file.is_null() && libc::fclose(m.file) != 0 {
                    err = -1;
                }
                libc::free(m.urlpath.cast());
            }
            m.file = core::ptr::null_mut();
            m.addr = core::ptr::null_mut();
            m.urlpath = core::ptr::null_mut();
            if m.needs_free {
                libc::free(params);
            }
        }
        err
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_rules() {
        assert!(!blosc2_get_io_cb(0).is_null());
        assert!(blosc2_get_io_cb(200).is_null());
        let mut cb = stdio_callbacks();
        cb.id = 10;
        // SAFETY: `cb` is a live local with a static name.
        assert_eq!(unsafe { blosc2_register_io_cb(&cb) }, -30);
        cb.id = 201;
        cb.name = c"mine".as_ptr() as *mut c_char;
        // SAFETY: as above.
        assert_eq!(unsafe { blosc2_register_io_cb(&cb) }, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { blosc2_register_io_cb(&cb) }, 0);
        cb.name = c"other".as_ptr() as *mut c_char;
        // SAFETY: as above.
        assert_eq!(unsafe { blosc2_register_io_cb(&cb) }, -30);
        // SAFETY: NULL is rejected.
        assert_eq!(unsafe { blosc2_register_io_cb(core::ptr::null()) }, -12);
        let got = blosc2_get_io_cb(201);
        // SAFETY: registry slots stay valid for the process.
        assert_eq!(unsafe { (*got).id }, 201);
    }

    #[test]
    fn callback_io_round_trips_through_stdio() {
        let dir = std::env::temp_dir().join(format!("b2nd-ffi-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        let io = CallbackIo {
            backend: Arc::new(Backend::new(stdio_callbacks(), core::ptr::null_mut())),
        };
        {
            // Created "wb": written, not read.
            let mut f = io.open(&path, OpenMode::Create).unwrap();
            f.write_at(3, b"hello").unwrap();
            assert_eq!(f.size().unwrap(), 8);
        }
        {
            let mut f = io.open(&path, OpenMode::ReadWrite).unwrap();
            let mut b = [0u8; 5];
            assert_eq!(f.read_at(3, &mut b).unwrap(), 5);
            assert_eq!(&b, b"hello");
            f.truncate(4).unwrap();
            assert_eq!(f.size().unwrap(), 4);
        }
        assert!(io.open(&dir.join("missing"), OpenMode::Read).is_err());
        assert!(
            !io.keeps_files_open(),
            "user backends get a file per operation"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What the logging backend below saw, in order.
    static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn log(e: String) {
        EVENTS.lock().unwrap().push(e);
    }

    unsafe extern "C" fn log_open(
        p: *const c_char,
        mode: *const c_char,
        _: *mut c_void,
    ) -> *mut c_void {
        // SAFETY: NUL-terminated strings from `CallbackIo::open`.
        let mode_str = unsafe { CStr::from_ptr(mode) };
        log(format!("open {}", mode_str.to_string_lossy()));
        // SAFETY: forwarded.
        unsafe { blosc2_stdio_open(p, mode, core::ptr::null_mut()) }
    }

    unsafe extern "C" fn log_close(stream: *mut c_void) -> c_int {
        log("close".into());
        // SAFETY: a stream of `log_open`.
        unsafe { blosc2_stdio_close(stream) }
    }

    unsafe extern "C" fn log_destroy(_: *mut c_void) -> c_int {
        log("destroy".into());
        0
    }

    /// A backend's `destroy` runs after its last stream is closed, even
    /// when the super-chunk's handle on it goes first: a backend may free
    /// in `destroy` what its streams use.
    #[test]
    fn destroy_comes_after_the_last_close() {
        let path = std::env::temp_dir().join(format!("b2nd-ffi-io-log-{}", std::process::id()));
        let mut cb = stdio_callbacks();
        cb.open = Some(log_open);
        cb.close = Some(log_close);
        cb.destroy = Some(log_destroy);
        let io = CallbackIo {
            backend: Arc::new(Backend::new(cb, core::ptr::null_mut())),
        };
        let mut f = io.open(&path, OpenMode::Create).unwrap();
        f.write_at(0, b"x").unwrap();
        drop(io);
        assert_eq!(*EVENTS.lock().unwrap(), ["open wb"]);
        drop(f);
        assert_eq!(*EVENTS.lock().unwrap(), ["open wb", "close", "destroy"]);
        std::fs::remove_file(&path).unwrap();
    }

    /// The mmap callbacks delegate to the core's mapping and keep the
    /// caller's struct showing its live state, as C callers read it.
    #[test]
    fn mmap_callbacks_keep_the_struct_live() {
        let path = std::env::temp_dir().join(format!("b2nd-ffi-mmap-{}", std::process::id()));
        let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        let mut m = super::super::defaults::STDIO_MMAP_DEFAULTS;
        m.mode = c"w+".as_ptr();
        m.initial_mapping_size = 8;
        let p = (&mut m as *mut blosc2_stdio_mmap).cast::<c_void>();
        // SAFETY: `m` is a live struct with a static mode; the path is NUL-terminated.
        let s = unsafe { blosc2_stdio_mmap_open(cpath.as_ptr(), c"wb".as_ptr(), p) };
        assert_eq!(s, p);
        assert!(!m.addr.is_null() && !m.file.is_null() && m.fd >= 0 && m.mode.is_null());
        assert_eq!((m.file_size, m.mapping_size), (0, 8));
        let data = [7u8; 20];
        // SAFETY: `data` holds 20 bytes; `s` is the open stream.
        assert_eq!(
            unsafe { blosc2_stdio_mmap_write(data.as_ptr().cast(), 1, 20, 4, s) },
            20
        );
        // Grown: the file to 24 bytes, the mapping (maybe moved) to twice that.
        assert_eq!((m.file_size, m.mapping_size), (24, 48));
        let mut got: *mut c_void = core::ptr::null_mut();
        // SAFETY: `got` is writable; `s` is open.
        assert_eq!(unsafe { blosc2_stdio_mmap_read(&mut got, 1, 20, 4, s) }, 20);
        assert_eq!(got, m.addr.wrapping_add(4).cast());
        // SAFETY: `s` is open.
        assert_eq!(unsafe { blosc2_stdio_mmap_truncate(s, 10) }, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { blosc2_stdio_mmap_size(s) }, 10);
        // Same path: the same stream; another path: refused (sparse frames).
        // SAFETY: as above.
        assert_eq!(
            unsafe { blosc2_stdio_mmap_open(cpath.as_ptr(), c"rb".as_ptr(), p) },
            p
        );
        // SAFETY: as above.
        let other = unsafe { blosc2_stdio_mmap_open(c"/tmp/other".as_ptr(), c"rb".as_ptr(), p) };
        assert!(other.is_null());
        // SAFETY: `p` holds the mapping opened above; destroyed once.
        assert_eq!(unsafe { blosc2_stdio_mmap_destroy(p) }, 0);
        assert!(m.addr.is_null() && m.file.is_null() && m.urlpath.is_null());
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [0, 0, 0, 0, 7, 7, 7, 7, 7, 7]
        );
        // Destroyed: nothing of ours is left to release.
        // SAFETY: as above.
        assert_eq!(unsafe { blosc2_stdio_mmap_destroy(p) }, -1);
        std::fs::remove_file(&path).unwrap();
    }

    static PARAM_DESTROYS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    unsafe extern "C" fn count_destroy(_: *mut c_void) -> c_int {
        PARAM_DESTROYS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        0
    }

    /// Backends made from the same params (a b2nd context and the
    /// super-chunk made from it, say) destroy them once, after the last
    /// one goes.
    #[test]
    fn params_shared_by_backends_are_destroyed_once_after_the_last() {
        let mut cb = stdio_callbacks();
        cb.destroy = Some(count_destroy);
        let mut params = 7u8;
        let p = (&mut params as *mut u8).cast::<c_void>();
        let a = Backend::new(cb, p);
        let b = Backend::new(cb, p);
        drop(a);
        assert_eq!(PARAM_DESTROYS.load(std::sync::atomic::Ordering::SeqCst), 0);
        drop(b);
        assert_eq!(PARAM_DESTROYS.load(std::sync::atomic::Ordering::SeqCst), 1);
        let c = Backend::new(cb, p);
        drop(c);
        assert_eq!(PARAM_DESTROYS.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
