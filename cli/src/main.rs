//! The `b2nd` command: inspect, check, extract, re-encode and salvage Blosc2
//! frames and b2nd arrays. Each subcommand lives in its own module; this file
//! parses the arguments and turns failures into one stderr line and an exit
//! code (docs/cli.md lists them).

mod cat;
mod compact;
mod convert;
mod csv;
mod fail;
mod info;
mod input;
mod npy;
mod progress;
mod recover;
mod staged;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use fail::Failure;

#[derive(Parser)]
#[command(
    name = "b2nd",
    version,
    about = "Inspect, check, extract, convert, salvage and compact Blosc2 frames and b2nd arrays"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The file (or sparse frame directory) a subcommand reads.
#[derive(Args)]
pub struct InputArgs {
    /// Contiguous frame file or sparse frame directory.
    pub path: PathBuf,
    /// Byte offset of a contiguous frame inside a larger file.
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a frame: storage, sizes, parameters, metalayers.
    Info(info::InfoArgs),
    /// Check the index and trailer and decode every chunk.
    Verify(verify::VerifyArgs),
    /// Write a region of an array (or items of a super-chunk).
    Cat(cat::CatArgs),
    /// Re-encode a frame, keeping its metalayers and vlmetalayers.
    Convert(convert::ConvertArgs),
    /// Salvage the intact chunks of a damaged or truncated contiguous frame.
    Recover(recover::RecoverArgs),
    /// Rewrite a frame file without the space replaced and deleted chunks left.
    Compact(compact::CompactArgs),
}

fn run(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Info(a) => info::run(&a),
        Command::Verify(a) => verify::run(&a),
        Command::Cat(a) => cat::run(&a),
        Command::Convert(a) => convert::run(&a),
        Command::Recover(a) => recover::run(&a),
        Command::Compact(a) => compact::run(&a),
    }
}

fn main() -> ExitCode {
    // A bug must still end in one line and a failure code, not a backtrace
    // dump the caller would have to parse.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("b2nd: internal error: {info}");
    }));
    let cli = Cli::parse();
    match std::panic::catch_unwind(move || run(cli)) {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(f)) => {
            eprintln!("b2nd: {}", f.message);
            ExitCode::from(f.code)
        }
        Err(_) => ExitCode::from(fail::FAILED),
    }
}
