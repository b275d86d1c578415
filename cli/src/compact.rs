//! `b2nd compact`: rewrites a contiguous frame file without the bytes that
//! replaced and deleted chunks left unused (docs/crash-safety.md), as a new
//! file renamed over the old, so that an interrupted compaction leaves the
//! old file as it was.

use std::path::PathBuf;

use clap::Args;

use b2nd_core::schunk::SChunk;

use crate::fail::{cannot_open, usage, Context, Failure};

#[derive(Args)]
pub struct CompactArgs {
    /// Contiguous frame file.
    pub path: PathBuf,
}

pub fn run(args: &CompactArgs) -> Result<u8, Failure> {
    if args.path.is_dir() {
        return Err(usage(format!(
            "{}: a sparse frame removes dropped chunk files itself; only frame files are compacted",
            args.path.display()
        )));
    }
    let mut sc = SChunk::open(&args.path).map_err(|e| cannot_open(&args.path, e))?;
    let saved = sc.compact().or_fail("compacting")?;
    let len = sc.frame_len().or_fail("reading the new frame length")?;
    println!(
        "{}: {saved} bytes reclaimed, frame now {len} bytes",
        args.path.display()
    );
    Ok(0)
}
