//! Per-thread scratch kept between calls, and what a call does when it
//! cannot have this thread's.

use std::cell::RefCell;
use std::thread::LocalKey;

/// Runs `f` with this thread's kept value of `key`, or with a `fresh()` one
/// when the kept value is in use (a re-entrant call: a user callback calling
/// back into the library) or gone. It is gone in a thread's exit handlers,
/// which run after its thread-locals are destroyed: a C program that
/// compresses from a `pthread_key_create` destructor, say. There the
/// reference works; a plain `LocalKey::with` would panic and the call fail.
pub(crate) fn with_kept<S: 'static, T>(
    key: &'static LocalKey<RefCell<S>>,
    fresh: impl FnOnce() -> S,
    f: impl FnOnce(&mut S) -> T,
) -> T {
    // `f` is taken only by the closure that runs it: when `try_with` cannot
    // run that closure, or the value is borrowed, it is still here.
    let mut f = Some(f);
    let kept = key.try_with(|cell| {
        let mut value = cell.try_borrow_mut().ok()?;
        f.take().map(|f| f(&mut value))
    });
    match (kept, f) {
        (Ok(Some(out)), _) => out,
        (_, Some(f)) => f(&mut fresh()),
        (_, None) => unreachable!("`f` ran, so its output was returned"),
    }
}

/// [`with_kept`] for a byte buffer: `f` gets `len` bytes of it, grown (with
/// zeros) when shorter; contents otherwise unspecified.
pub(crate) fn with_kept_bytes<T>(
    key: &'static LocalKey<RefCell<Vec<u8>>>,
    len: usize,
    f: impl FnOnce(&mut [u8]) -> T,
) -> T {
    with_kept(key, Vec::new, |buf| {
        if buf.len() < len {
            buf.resize(len, 0);
        }
        f(&mut buf[..len])
    })
}

/// `with_kept_bytes` for a buffer sized by data, which may be large:
/// `MemoryAlloc` instead of an abort when the system refuses the room (the
/// kept buffer, if any, stays as it was).
pub fn try_with_kept_bytes<T>(
    key: &'static LocalKey<RefCell<Vec<u8>>>,
    len: usize,
    f: impl FnOnce(&mut [u8]) -> crate::Result<T>,
) -> crate::Result<T> {
    with_kept(key, Vec::new, |buf| {
        crate::mem::grow(buf, len)?;
        f(&mut buf[..len])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    thread_local! {
        static KEPT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    #[test]
    fn a_nested_call_gets_a_fresh_value_and_the_kept_one_stays() {
        let (outer, inner) = with_kept_bytes(&KEPT, 4, |a| {
            a.copy_from_slice(&[1, 2, 3, 4]);
            let inner = with_kept_bytes(&KEPT, 2, |b| b.to_vec());
            (a.to_vec(), inner)
        });
        assert_eq!(outer, [1, 2, 3, 4]);
        assert_eq!(inner, [0, 0]);
        assert_eq!(with_kept_bytes(&KEPT, 4, |a| a.to_vec()), [1, 2, 3, 4]);
    }

    #[test]
    fn a_call_from_a_thread_exit_handler_gets_a_fresh_value() {
        // Thread-locals are destroyed in the reverse order of their first
        // use: `KEPT`, used after `AT_EXIT` was set, is gone when it drops.
        struct AtExit(mpsc::Sender<Vec<u8>>);
        impl Drop for AtExit {
            fn drop(&mut self) {
                let _ = self.0.send(with_kept_bytes(&KEPT, 3, |b| b.to_vec()));
            }
        }
        thread_local! {
            static AT_EXIT: RefCell<Option<AtExit>> = const { RefCell::new(None) };
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            AT_EXIT.with(|a| *a.borrow_mut() = Some(AtExit(tx)));
            with_kept_bytes(&KEPT, 3, |b| b.fill(9));
        })
        .join()
        .unwrap();
        assert_eq!(rx.recv().unwrap(), [0, 0, 0]);
    }
}
