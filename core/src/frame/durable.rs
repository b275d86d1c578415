//! Whether frames fsync at their publishing points (power-loss durability).
//!
//! Off by default, as in the reference: the write order alone makes a frame
//! survive a killed writer (docs/crash-safety.md), but only an fsync makes
//! what was acknowledged survive a power loss or a kernel crash. Turned on
//! for the process by `B2ND_FSYNC=1` in the environment, or from Rust by
//! [`set_fsync`], which wins over the environment.

use std::sync::atomic::{AtomicU8, Ordering};

const UNSET: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

static SETTING: AtomicU8 = AtomicU8::new(UNSET);

/// Turns fsync at publishing points on or off for every frame of the
/// process; `None` goes back to what `B2ND_FSYNC` says.
pub fn set_fsync(on: Option<bool>) {
    let v = match on {
        None => UNSET,
        Some(false) => OFF,
        Some(true) => ON,
    };
    SETTING.store(v, Ordering::Relaxed);
}

/// Whether frames fsync now. The environment is read on each call, so a
/// program (or a benchmark) may change `B2ND_FSYNC` between writes.
pub fn fsync_enabled() -> bool {
    match SETTING.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => std::env::var_os("B2ND_FSYNC").is_some_and(|v| v != "0" && !v.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rust_setting_wins_over_the_environment() {
        set_fsync(Some(true));
        assert!(fsync_enabled());
        set_fsync(Some(false));
        assert!(!fsync_enabled());
        set_fsync(None);
        let env = std::env::var_os("B2ND_FSYNC").is_some_and(|v| v != "0" && !v.is_empty());
        assert_eq!(fsync_enabled(), env);
    }
}
