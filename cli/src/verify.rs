//! `b2nd verify`: opening checks the header, the offsets index and the
//! trailer; then every chunk is read and decoded, and the sizes the header
//! declares are checked against what the chunks hold.

use clap::Args;

use b2nd_core::chunk::ChunkHeader;
use b2nd_core::schunk::SChunk;

use crate::fail::{Context, Failure, FAILED};
use crate::input;
use crate::progress::Progress;
use crate::InputArgs;

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

/// Why chunk `n` is bad, if it is; adds its decoded size to `total`.
fn check_chunk(sc: &mut SChunk, n: i64, buf: &mut Vec<u8>, total: &mut i64) -> Result<(), String> {
    let nbytes = {
        let chunk = sc.get_chunk(n).map_err(|e| e.to_string())?;
        ChunkHeader::parse(&chunk)
            .map_err(|e| e.to_string())?
            .nbytes()
    };
    let cs = sc.chunksize();
    if cs > 0 && nbytes > cs as usize {
        return Err(format!(
            "holds {nbytes} bytes, more than the chunk size {cs}"
        ));
    }
    buf.clear();
    buf.try_reserve(nbytes).map_err(|e| e.to_string())?;
    buf.resize(nbytes, 0);
    let got = sc.decompress_chunk(n, buf).map_err(|e| e.to_string())?;
    if got != nbytes {
        return Err(format!("decoded {got} bytes, header says {nbytes}"));
    }
    *total += got as i64;
    Ok(())
}

pub fn run(args: &VerifyArgs) -> Result<u8, Failure> {
    let mut input = input::open(&args.input)?;
    let (nchunks, bad) = input::with_schunk(&mut input, |sc| {
        let nchunks = sc.nchunks();
        let mut progress = Progress::new("verify", nchunks.max(0) as u64);
        let mut bad = 0u64;
        let mut buf = Vec::new();
        let mut total = 0i64;
        for n in 0..nchunks {
            if let Err(why) = check_chunk(sc, n, &mut buf, &mut total) {
                println!("chunk {n}: {why}");
                bad += 1;
            }
            progress.set(n as u64 + 1);
        }
        drop(progress);
        if bad == 0 && total != sc.nbytes() {
            println!("header: nbytes {} but the chunks hold {total}", sc.nbytes());
            bad += 1;
        }
        Ok((nchunks, bad))
    })
    .or_fail("reading the super-chunk")?;
    if bad > 0 {
        println!(
            "{}: {bad} problem(s) in {nchunks} chunks",
            args.input.path.display()
        );
        return Ok(FAILED);
    }
    println!("{}: ok ({nchunks} chunks)", args.input.path.display());
    Ok(0)
}
