//! A progress line on stderr for long loops, shown only when stderr is a
//! terminal and the work has already taken a second (short runs and pipes
//! see nothing).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    label: &'static str,
    total: u64,
    start: Instant,
    last: Option<Instant>,
    enabled: bool,
}

impl Progress {
    pub fn new(label: &'static str, total: u64) -> Progress {
        Progress {
            label,
            total,
            start: Instant::now(),
            last: None,
            enabled: total > 1 && std::io::stderr().is_terminal(),
        }
    }

    /// Records that `done` of the items are finished.
    pub fn set(&mut self, done: u64) {
        if !self.enabled || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let width = 30u64;
        let filled = (done.min(self.total) * width) / self.total.max(1);
        let bar: String = (0..width)
            .map(|i| if i < filled { '#' } else { '-' })
            .collect();
        let mut err = std::io::stderr();
        let _ = write!(err, "\r{} [{bar}] {done}/{}", self.label, self.total);
        let _ = err.flush();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.last.is_some() {
            // Clears the line so later messages start clean.
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
