//! Which C super-chunks calls are working on right now, and how.
//!
//! Calls on a C super-chunk are admitted by `b2nd_core::gate`: reads run
//! together, a call that changes the super-chunk (or the C struct's fields)
//! runs alone or, when it compresses, encodes under a write intent beside
//! reads and then stores alone; a call made by a codec, filter or I/O
//! callback of a call on the same super-chunk is told apart (on worker
//! threads too). The admission is kept outside the box, in the gate's list:
//! a call makes its `&SchunkBox` or `&mut SchunkBox` only once admitted.
//!
//! The claims and the metalayers a change shows meanwhile are core logic,
//! in `b2nd_core::gate::claim`, keyed by an address. What stays here (in
//! `super`: `claim`, `this`, `read_meta`) is about the C struct: the key is
//! the `SchunkBox`'s address, because the `blosc2_schunk*` is all a
//! reentrant callback hands back (`cparams->schunk`); and the snapshot is
//! the box's `meta_snapshot`, rebuilt with the C metalayer entries only when
//! they change, so a claim costs an `Arc` clone rather than a copy of the
//! layers, and reads between calls go to the C entries C callers may edit.

pub(crate) use b2nd_core::gate::claim::{
    claim, claim_intent, claim_read, claimed_metas, claimed_vlmetas, find_meta, Claim, Metalayers,
    Shown,
};
