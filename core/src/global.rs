//! The process-wide state that the Blosc1-style calls (`blosc1_compress`,
//! `blosc2_set_nthreads`, `blosc1_set_compressor`, ...) need.
//!
//! Everything else in the library takes an explicit context; this module is
//! the one place where global settings live, behind a mutex.

use std::sync::Mutex;

/// Settings used by the calls that take no context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalSettings {
    /// Threads for compression and decompression (`blosc2_set_nthreads`).
    pub nthreads: i16,
    /// Codec id (`blosc1_set_compressor`).
    pub compcode: u8,
    /// Forced blocksize, 0 for automatic (`blosc1_set_blocksize`).
    pub blocksize: i32,
    /// Split mode (`blosc1_set_splitmode`).
    pub splitmode: i32,
    /// Whether the delta filter is added (`blosc2_set_delta`).
    pub delta: bool,
}

impl Default for GlobalSettings {
    fn default() -> Self {
        // Defaults of the reference: one thread, blosclz, automatic blocksize,
        // forward-compatible splitting, no delta.
        GlobalSettings {
            nthreads: 1,
            compcode: 0,
            blocksize: 0,
            splitmode: 4,
            delta: false,
        }
    }
}

static SETTINGS: Mutex<Option<GlobalSettings>> = Mutex::new(None);

/// A copy of the current settings (the defaults before any change).
pub fn settings() -> GlobalSettings {
    lock().clone().unwrap_or_default()
}

/// Changes the settings in place.
pub fn update(f: impl FnOnce(&mut GlobalSettings)) {
    let mut guard = lock();
    f(guard.get_or_insert_with(GlobalSettings::default));
}

/// Sets up the global state (idempotent), honouring the reference's
/// environment variables that change the defaults.
pub fn init() {
    let mut guard = lock();
    if guard.is_none() {
        let mut s = GlobalSettings::default();
        if let Some(n) = std::env::var("BLOSC_NTHREADS")
            .ok()
            .and_then(|v| v.parse::<i16>().ok())
        {
            if n > 0 {
                s.nthreads = n;
            }
        }
        *guard = Some(s);
    }
}

/// Drops the global state; the next call starts from the defaults again.
pub fn destroy() {
    *lock() = None;
}

/// A poisoned lock only means another thread panicked while holding it; the
/// settings are plain values that are always valid, so keep using them.
fn lock() -> std::sync::MutexGuard<'static, Option<GlobalSettings>> {
    SETTINGS.lock().unwrap_or_else(|p| p.into_inner())
}
