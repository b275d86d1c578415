//! Admission of calls to objects that many threads share and that the
//! callbacks of a call may reach again (a super-chunk, an array).
//!
//! The rule, for each object (named by an address):
//!
//! - reads run together; a read waits only while a write runs;
//! - a write runs alone: it waits until no read, intent or write runs;
//! - an intent (a write that encodes its chunks before it stores them, and
//!   stores them through the object's own locks) runs beside reads but
//!   apart from other intents and writes: its codecs and prefilters may
//!   read the object meanwhile, and no other writer changes what it read;
//! - a write may be sealed between its steps (it changed the object's
//!   shape and now encodes data for it): it still runs alone, but its own
//!   callbacks may read the object as it left it;
//! - a call made from inside another call on the same object (a codec,
//!   filter, prefilter, postfilter or I/O callback, on the calling thread
//!   or on a worker thread working for it) is told apart from a call of
//!   another thread: a read inside a read or an intent runs at once; a
//!   read inside a write, or a write or intent inside any call, would wait
//!   for the call it is part of and is refused with a clear error instead.
//!
//! Reads never wait for a waiting write (reader preference): a read inside
//! a read must not queue behind a write that waits for the outer read, so
//! a writer waits until no read runs. Calls are identified by the thread
//! that made the outermost one; worker threads adopt it for the work they
//! do for that call (`adopt`, used by `chunk::pool`).

pub mod claim;

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::Result;

/// What a call does to the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// A write whose callbacks may read (see the module comment).
    Intent,
    Write,
    /// A write between its steps: alone, its own callbacks may read.
    Sealed,
}

impl Access {
    /// Whether a call doing `self` must wait while another call does `other`.
    fn waits_for(self, other: Access) -> bool {
        !matches!(
            (self, other),
            (Access::Read, Access::Read | Access::Intent) | (Access::Intent, Access::Read)
        )
    }
}

/// One call admitted to one object (nested reads of the call count once).
struct Holder {
    key: usize,
    call: u64,
    access: Access,
    depth: u32,
}

/// Admitted calls: few at a time (one per call in flight), so a list does.
static HOLDERS: Mutex<Vec<Holder>> = Mutex::new(Vec::new());
/// Signalled when a call leaves an object while others wait.
static LEFT: Condvar = Condvar::new();
/// How many calls wait on [`LEFT`]; changed under the [`HOLDERS`] lock, so a
/// leaving call that sees 0 has nobody to wake and skips the system call a
/// notification costs (one per call otherwise, on every read).
static WAITING: AtomicUsize = AtomicUsize::new(0);

fn holders() -> MutexGuard<'static, Vec<Holder>> {
    // Each change is one push, one counter step or one swap_remove: the
    // list is consistent even if a holder panicked.
    HOLDERS.lock().unwrap_or_else(|p| p.into_inner())
}

static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The call this thread works for (0: not known yet).
    static CALL: Cell<u64> = const { Cell::new(0) };
}

/// The call the current thread works for: its own, or the one it adopted.
pub(crate) fn current_call() -> u64 {
    CALL.with(|c| {
        if c.get() == 0 {
            c.set(NEXT_CALL.fetch_add(1, Ordering::Relaxed));
        }
        c.get()
    })
}

/// Runs `f` on this thread as part of `call` (a worker doing a call's work).
pub(crate) fn adopt<T>(call: u64, f: impl FnOnce() -> T) -> T {
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            CALL.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CALL.with(|c| c.replace(call)));
    f()
}

/// A call admitted to the object `key`; dropping it lets the call out.
#[must_use]
#[derive(Debug)]
pub struct Entry {
    key: usize,
    call: u64,
}

/// Admits the current call to `key` for `access`, waiting while the rule
/// says so; refused when the call is nested in one that it would wait for.
pub fn enter(key: usize, access: Access) -> Result<Entry> {
    let call = current_call();
    let mut list = holders();
    if let Some(h) = list.iter_mut().find(|h| h.key == key && h.call == call) {
        if access != Access::Read {
            crate::bail!(
                Failure,
                "a write from inside a call on the same super-chunk (a callback of it): refused, \
                 it would wait for the call it is part of"
            );
        }
        if h.access == Access::Write {
            crate::bail!(
                Failure,
                "the super-chunk is being written by the call this callback runs in: \
                 only its metalayers can be read"
            );
        }
        h.depth += 1;
        return Ok(Entry { key, call });
    }
    let busy = |list: &Vec<Holder>| {
        list.iter()
            .any(|h| h.key == key && access.waits_for(h.access))
    };
    while busy(&list) {
        WAITING.fetch_add(1, Ordering::Relaxed);
        list = LEFT.wait(list).unwrap_or_else(|p| p.into_inner());
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }
    list.push(Holder {
        key,
        call,
        access,
        depth: 1,
    });
    Ok(Entry { key, call })
}

#[cfg(test)]
/// Whether a call writes `key` right now (any thread's).
pub(crate) fn written(key: usize) -> bool {
    holders()
        .iter()
        .any(|h| h.key == key && h.access == Access::Write)
}

impl Entry {
    /// Turns the intent this entry admitted into a write, waiting until the
    /// reads of other calls end (none waits for it, and no other intent or
    /// write runs meanwhile, so the wait ends). From then on the call runs
    /// alone, as if it had entered to write.
    pub fn upgrade(&self) -> Result<()> {
        let mut list = holders();
        let mine = |h: &Holder| h.key == self.key && h.call == self.call;
        match list.iter().find(|h| mine(h)) {
            Some(h) if matches!(h.access, Access::Intent | Access::Sealed) && h.depth == 1 => {}
            _ => crate::bail!(
                Failure,
                "only an intent or a sealed write, outside other calls on its object, becomes a write"
            ),
        }
        while list
            .iter()
            .any(|h| h.key == self.key && h.call != self.call)
        {
            WAITING.fetch_add(1, Ordering::Relaxed);
            list = LEFT.wait(list).unwrap_or_else(|p| p.into_inner());
            WAITING.fetch_sub(1, Ordering::Relaxed);
        }
        if let Some(h) = list.iter_mut().find(|h| mine(h)) {
            h.access = Access::Write;
        }
        Ok(())
    }
}

impl Entry {
    /// Seals the write this entry admitted (see the module comment): other
    /// calls keep waiting, this call's own reads are admitted, until
    /// [`Entry::upgrade`] makes it a write again.
    pub fn seal(&self) -> Result<()> {
        let mut list = holders();
        match list
            .iter_mut()
            .find(|h| h.key == self.key && h.call == self.call)
        {
            Some(h) if h.access == Access::Write && h.depth == 1 => {
                h.access = Access::Sealed;
                Ok(())
            }
            _ => crate::bail!(
                Failure,
                "only a write, outside other calls on its object, is sealed"
            ),
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut list = holders();
        if let Some(i) = list
            .iter()
            .position(|h| h.key == self.key && h.call == self.call)
        {
            list[i].depth -= 1;
            if list[i].depth == 0 {
                list.swap_remove(i);
                if WAITING.load(Ordering::Relaxed) > 0 {
                    LEFT.notify_all();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    // Keys no object has (objects are aligned; these are odd).
    const K1: usize = 0x6a7e_0001;
    const K2: usize = 0x6a7e_0003;
    const K3: usize = 0x6a7e_0005;
    const K4: usize = 0x6a7e_0007;
    const K5: usize = 0x6a7e_0009;

    #[test]
    fn reads_nest_and_writes_inside_a_call_are_refused() {
        let outer = enter(K1, Access::Read).unwrap();
        let inner = enter(K1, Access::Read).unwrap();
        assert_eq!(enter(K1, Access::Write).err().map(|e| e.code()), Some(-1));
        drop(inner);
        drop(outer);
        let w = enter(K1, Access::Write).unwrap();
        assert!(written(K1));
        assert_eq!(enter(K1, Access::Read).err().map(|e| e.code()), Some(-1));
        // A worker working for the call is part of it.
        let call = current_call();
        let refused = std::thread::spawn(move || {
            adopt(call, || enter(K1, Access::Read).err().map(|e| e.code()))
        })
        .join()
        .unwrap();
        assert_eq!(refused, Some(-1));
        drop(w);
        assert!(!written(K1));
    }

    #[test]
    fn readers_run_together_and_a_writer_waits_for_them() {
        let r = enter(K2, Access::Read).unwrap();
        // Another thread's read is admitted while this one reads.
        std::thread::spawn(|| drop(enter(K2, Access::Read).unwrap()))
            .join()
            .unwrap();
        let wrote = Arc::new(AtomicUsize::new(0));
        let w = {
            let wrote = Arc::clone(&wrote);
            std::thread::spawn(move || {
                let e = enter(K2, Access::Write).unwrap();
                wrote.store(1, Ordering::SeqCst);
                drop(e);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            wrote.load(Ordering::SeqCst),
            0,
            "the writer waits for the reader"
        );
        // A read nested in this one runs while the writer waits.
        drop(enter(K2, Access::Read).unwrap());
        drop(r);
        w.join().unwrap();
        assert_eq!(wrote.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_read_waits_for_a_running_write() {
        let w = enter(K3, Access::Write).unwrap();
        let done = Arc::new(AtomicUsize::new(0));
        let r = {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let e = enter(K3, Access::Read).unwrap();
                done.store(1, Ordering::SeqCst);
                drop(e);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(done.load(Ordering::SeqCst), 0);
        drop(w);
        r.join().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_intent_runs_beside_reads_and_apart_from_writers() {
        let i = enter(K4, Access::Intent).unwrap();
        // Its own callbacks read; they cannot write or start another intent.
        drop(enter(K4, Access::Read).unwrap());
        assert_eq!(enter(K4, Access::Intent).err().map(|e| e.code()), Some(-1));
        assert_eq!(enter(K4, Access::Write).err().map(|e| e.code()), Some(-1));
        // Another thread reads at once...
        std::thread::spawn(|| drop(enter(K4, Access::Read).unwrap()))
            .join()
            .unwrap();
        // ...while its intent and its write wait.
        let done = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = [Access::Intent, Access::Write]
            .into_iter()
            .map(|access| {
                let done = Arc::clone(&done);
                std::thread::spawn(move || {
                    let e = enter(K4, access).unwrap();
                    done.fetch_add(1, Ordering::SeqCst);
                    drop(e);
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            done.load(Ordering::SeqCst),
            0,
            "other writers wait for the intent"
        );
        drop(i);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), 2);
        // A read in progress keeps a write out, not an intent; the intent
        // becomes a write once the read ends, and then reads wait.
        let r = enter(K4, Access::Read).unwrap();
        let upgraded = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let writer = {
            let upgraded = Arc::clone(&upgraded);
            std::thread::spawn(move || {
                let e = enter(K4, Access::Intent).unwrap();
                tx.send(()).unwrap();
                e.upgrade().unwrap();
                upgraded.store(1, Ordering::SeqCst);
                assert!(written(K4));
                std::thread::sleep(Duration::from_millis(50));
                drop(e);
            })
        };
        rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            upgraded.load(Ordering::SeqCst),
            0,
            "the upgrade waits for the read"
        );
        drop(r);
        while upgraded.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        // Admitted only once the write is over.
        let late = enter(K4, Access::Read).unwrap();
        assert!(!written(K4));
        drop(late);
        writer.join().unwrap();
        // Only an intent upgrades.
        let r = enter(K4, Access::Read).unwrap();
        assert_eq!(r.upgrade().err().map(|e| e.code()), Some(-1));
    }

    #[test]
    fn a_sealed_write_admits_its_own_reads_only() {
        let w = enter(K5, Access::Write).unwrap();
        assert_eq!(enter(K5, Access::Read).err().map(|e| e.code()), Some(-1));
        w.seal().unwrap();
        drop(enter(K5, Access::Read).unwrap());
        assert_eq!(enter(K5, Access::Write).err().map(|e| e.code()), Some(-1));
        let done = Arc::new(AtomicUsize::new(0));
        let other = {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let e = enter(K5, Access::Read).unwrap();
                done.store(1, Ordering::SeqCst);
                drop(e);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            done.load(Ordering::SeqCst),
            0,
            "other calls wait for a sealed write"
        );
        w.upgrade().unwrap();
        assert!(written(K5));
        assert_eq!(enter(K5, Access::Read).err().map(|e| e.code()), Some(-1));
        assert_eq!(w.seal().map_err(|e| e.code()), Ok(()));
        w.upgrade().unwrap();
        drop(w);
        other.join().unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }
}
