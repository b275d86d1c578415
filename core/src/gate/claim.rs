//! Claims on a shared object (a super-chunk, named by an address) that
//! pair `crate::gate`'s admission with what the object *shows* while a call
//! changes it.
//!
//! A call that changes an object is admitted alone (see `crate::gate`), yet
//! a codec, filter or I/O callback of that very call may read the object's
//! metalayers and vlmetalayers, from any thread: a user codec reading its
//! super-chunk's vlmetalayer while it compresses (C-Blosc2's
//! `test_urcodecs`), the JPEG 2000 plugins reading "b2nd". So a change
//! claim leaves a snapshot of them ([`Shown`]), taken once admitted, and
//! such reads are served from it ([`claimed_metas`], [`claimed_vlmetas`])
//! without touching the object being changed. The snapshot goes when the
//! claim is sealed (the call synced the object first, so its callbacks read
//! the object itself) or dropped.
//!
//! Nothing here knows what the object is: the key is any address the
//! caller keeps unique while the object lives (the C layer uses the address
//! of its super-chunk box), and the snapshot is plain names and bytes.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Access, Entry};
use crate::Result;

/// Metalayers as names and contents, in index order.
pub type Metalayers = Arc<[(String, Vec<u8>)]>;

/// What a super-chunk being changed shows: its metalayers, and its
/// vlmetalayers with their contents compressed as stored.
#[derive(Clone, Default)]
pub struct Shown {
    pub metas: Metalayers,
    pub vlmetas: Metalayers,
}

/// Super-chunks being changed, by address, with what they show. Few at a
/// time (one per call in flight), so a list does.
static SHOWN: Mutex<Vec<(usize, Shown)>> = Mutex::new(Vec::new());

fn shown() -> MutexGuard<'static, Vec<(usize, Shown)>> {
    // The list stays consistent even if a holder panicked (each change is
    // one push or one swap_remove), so a poisoned lock is still usable.
    SHOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held while a call works on the super-chunk at `addr`; dropping it lets
/// the call out.
#[must_use]
pub struct Claim {
    addr: usize,
    writes: bool,
    // Dropped after the fields above are used by `drop`.
    _entry: Entry,
}

/// Admits the current call to the object at `addr` to change it,
/// waiting for the calls running on it; `metas` gives what it shows, asked
/// for once admitted. Refused (`BLOSC2_ERROR_FAILURE`) from inside a call
/// on it.
pub fn claim(addr: usize, metas: impl FnOnce() -> Shown) -> Result<Claim> {
    let entry = super::enter(addr, Access::Write)?;
    shown().push((addr, metas()));
    Ok(Claim {
        addr,
        writes: true,
        _entry: entry,
    })
}

/// Admits the current call to the object at `addr` to read it,
/// waiting while another call changes it.
pub fn claim_read(addr: usize) -> Result<Claim> {
    Ok(Claim {
        addr,
        writes: false,
        _entry: super::enter(addr, Access::Read)?,
    })
}

/// Admits the current call to the object at `addr` to change it with
/// its codecs and filters free to read it (see `Access::Intent`):
/// reads of other calls run meanwhile, other changes wait.
pub fn claim_intent(addr: usize) -> Result<Claim> {
    Ok(Claim {
        addr,
        writes: false,
        _entry: super::enter(addr, Access::Intent)?,
    })
}

impl Claim {
    /// Turns an intent claim into a change claim (see `Entry::upgrade`):
    /// from then on the call runs alone.
    pub fn upgrade(&mut self) -> Result<()> {
        self._entry.upgrade()
    }

    /// Seals a change claim between its steps (see `Entry::seal`):
    /// other calls keep waiting, while this call's callbacks read the
    /// super-chunk itself, whose fields the call synced first, rather than
    /// what it showed when admitted.
    pub fn seal(&mut self) -> Result<()> {
        self._entry.seal()?;
        if std::mem::take(&mut self.writes) {
            let mut list = shown();
            if let Some(i) = list.iter().position(|(a, _)| *a == self.addr) {
                list.swap_remove(i);
            }
        }
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.writes {
            return;
        }
        let mut list = shown();
        if let Some(i) = list.iter().position(|(a, _)| *a == self.addr) {
            list.swap_remove(i);
        }
    }
}

/// The metalayers the super-chunk at `addr` showed when the call changing
/// it was admitted; `None` when no call changes it, and then its fields
/// are free to be read.
pub fn claimed_metas(addr: usize) -> Option<Metalayers> {
    Some(shown().iter().find(|(a, _)| *a == addr)?.1.metas.clone())
}

/// The vlmetalayers (compressed contents) the super-chunk at `addr` showed
/// when the call changing it was admitted; `None` when no call changes it.
pub fn claimed_vlmetas(addr: usize) -> Option<Metalayers> {
    Some(shown().iter().find(|(a, _)| *a == addr)?.1.vlmetas.clone())
}

/// Index and content of metalayer `name` in `metas`.
pub fn find_meta<'m>(metas: &'m Metalayers, name: &str) -> Option<(usize, &'m [u8])> {
    let i = metas.iter().position(|(n, _)| n == name)?;
    Some((i, metas[i].1.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers() -> Shown {
        Shown {
            metas: Arc::from(vec![("b2nd".to_string(), vec![1, 2, 3])]),
            vlmetas: Arc::from(vec![("attrs".to_string(), vec![9])]),
        }
    }

    #[test]
    fn a_call_inside_a_change_is_refused_and_reads_the_shown_layers() {
        // An address no live box has (boxes are aligned, this is odd).
        let addr = 0x5eed_0001;
        assert!(claimed_metas(addr).is_none());
        let held = claim(addr, layers).unwrap();
        let again = claim(addr, || unreachable!("not asked for a claimed address"));
        assert_eq!(claim_read(addr).err().map(|e| e.code()), Some(-1));
        assert_eq!(again.err().map(|e| e.code()), Some(-1));
        let metas = claimed_metas(addr).unwrap();
        assert_eq!(find_meta(&metas, "b2nd"), Some((0, &[1u8, 2, 3][..])));
        assert_eq!(find_meta(&metas, "caterva"), None);
        let vl = claimed_vlmetas(addr).unwrap();
        assert_eq!(find_meta(&vl, "attrs"), Some((0, &[9u8][..])));
        drop(held);
        assert!(claimed_metas(addr).is_none());
        assert!(claimed_vlmetas(addr).is_none());
        drop(claim(addr, layers).unwrap());
    }
}
