//! `b2nd recover`: rebuilds a valid frame from the intact chunks of a
//! damaged or truncated one (the scanning is `b2nd_core::frame::salvage`) and
//! says what was lost. Exit 0 when nothing was, 1 when the frame was written
//! with zero chunks in place of lost ones.

use std::path::PathBuf;

use clap::Args;

use b2nd_core::frame::salvage::{self, SalvagedChunk};

use crate::fail::{cannot_open, failed, Failure, FAILED};
use crate::staged::Staged;

#[derive(Args)]
pub struct RecoverArgs {
    /// The damaged contiguous frame.
    pub input: PathBuf,
    /// Where to write the rebuilt frame.
    pub out: PathBuf,
}

pub fn run(args: &RecoverArgs) -> Result<u8, Failure> {
    if args.input.is_dir() {
        return Err(cannot_open(
            &args.input,
            "recover works on contiguous frame files only",
        ));
    }
    let bytes = std::fs::read(&args.input).map_err(|e| cannot_open(&args.input, e))?;
    let found = salvage::scan(&bytes).map_err(|e| cannot_open(&args.input, e))?;
    let staged = Staged::new(&args.out, Some(&args.input))?;
    let out = salvage::rebuild(&found, &bytes, staged.path())
        .map_err(|e| failed(format!("writing the rebuilt frame: {e}")))?;
    drop(out);
    staged.commit()?;

    let total = found.chunks.len();
    for (n, c) in found.chunks.iter().enumerate() {
        if let SalvagedChunk::Lost { reason } = c {
            println!("chunk {n}: lost ({reason}); stored as zeros");
        }
    }
    if found.vlmetalayers.is_none() {
        println!("vlmetalayers: lost (trailer missing or damaged)");
    }
    if found.unplaced > 0 {
        println!(
            "{} intact chunk(s) found that no chunk number could be given to",
            found.unplaced
        );
    }
    let lost = found.lost();
    println!(
        "{}: recovered {} of {total} chunks ({}), lost {lost}",
        args.out.display(),
        total - lost,
        if found.index_used {
            "numbered by the offsets index"
        } else {
            "numbered in file order"
        }
    );
    Ok(if lost > 0 || found.vlmetalayers.is_none() {
        FAILED
    } else {
        0
    })
}
