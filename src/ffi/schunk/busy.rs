//! Which C super-chunks a call is working on right now.
//!
//! A call on a super-chunk can run C codecs and filters that are handed the
//! same super-chunk (`cparams->schunk`, `dparams->schunk`), on the calling
//! thread or on workers. The JPEG 2000 plugins read its metalayers that way;
//! a plugin could as well call anything else on it. The reference lets those
//! calls run on the object being changed. Here the call's `&mut` to the box
//! must be the only way in while it lives, so the claim is kept outside the
//! box, in this process-wide list:
//!
//! - a call claims the super-chunk before it makes its `&mut` and releases it
//!   after that `&mut` ends ([`Claim`]);
//! - a second claim of a claimed super-chunk is refused, so a nested call is
//!   refused before it touches the box;
//! - the claim carries the metalayers and vlmetalayers the super-chunk
//!   showed when it was made, and their reads of a claimed super-chunk are
//!   served from them ([`claimed_metas`], [`claimed_vlmetas`]), without
//!   touching the box either (a user codec reading its super-chunk's
//!   vlmetalayer while it compresses, as C-Blosc2's `test_urcodecs` does).
//!
//! The lock is held only to look up, add or remove an entry, never while
//! the call runs, so codecs on worker threads reading metalayers do not wait
//! for it.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::Result;

/// Metalayers as names and contents, in index order.
pub(crate) type Metalayers = Arc<[(String, Vec<u8>)]>;

/// What a claimed super-chunk shows: its metalayers, and its vlmetalayers
/// with their contents compressed as stored.
#[derive(Clone, Default)]
pub(crate) struct Shown {
    pub(crate) metas: Metalayers,
    pub(crate) vlmetas: Metalayers,
}

/// Claimed super-chunks, by address, with what they show. Few at a time
/// (one per call in flight), so a list does.
static CLAIMED: Mutex<Vec<(usize, Shown)>> = Mutex::new(Vec::new());

fn claimed() -> MutexGuard<'static, Vec<(usize, Shown)>> {
    // The list stays consistent even if a holder panicked (each change is
    // one push or one swap_remove), so a poisoned lock is still usable.
    CLAIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Held while a call works on the super-chunk at `addr`; dropping it
/// releases the super-chunk.
#[must_use]
pub(crate) struct Claim(usize);

/// Claims the super-chunk at `addr`, which shows `metas` (called only when
/// it is free, under the lock, so nothing changes them meanwhile). Refused
/// with `BLOSC2_ERROR_FAILURE` when a call already works on it.
pub(crate) fn claim(addr: usize, metas: impl FnOnce() -> Shown) -> Result<Claim> {
    let mut list = claimed();
    if list.iter().any(|(a, _)| *a == addr) {
        crate::bail!(
            Failure,
            "the super-chunk is in use by the call running: only its metalayers can be read"
        );
    }
    list.push((addr, metas()));
    Ok(Claim(addr))
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut list = claimed();
        if let Some(i) = list.iter().position(|(a, _)| *a == self.0) {
            list.swap_remove(i);
        }
    }
}

/// The metalayers the super-chunk at `addr` showed when it was claimed;
/// `None` when it is not claimed, and then the box itself is free to be read.
pub(crate) fn claimed_metas(addr: usize) -> Option<Metalayers> {
    Some(claimed().iter().find(|(a, _)| *a == addr)?.1.metas.clone())
}

/// The vlmetalayers (compressed contents) the super-chunk at `addr` showed
/// when it was claimed; `None` when it is not claimed.
pub(crate) fn claimed_vlmetas(addr: usize) -> Option<Metalayers> {
    Some(
        claimed()
            .iter()
            .find(|(a, _)| *a == addr)?
            .1
            .vlmetas
            .clone(),
    )
}

/// Index and content of metalayer `name` in `metas`.
pub(crate) fn find_meta<'m>(metas: &'m Metalayers, name: &str) -> Option<(usize, &'m [u8])> {
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
    fn a_claimed_super_chunk_refuses_a_second_claim_until_released() {
        // An address no live box has (boxes are aligned, this is odd).
        let addr = 0x5eed_0001;
        assert!(claimed_metas(addr).is_none());
        let held = claim(addr, layers).unwrap();
        let again = claim(addr, || unreachable!("not asked for a claimed address"));
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
