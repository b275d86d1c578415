//! `b2nd convert`: re-encodes a frame with other compression parameters,
//! chunk and block shapes, or storage, keeping every metalayer and
//! vlmetalayer. With the chunk layout unchanged it works chunk by chunk on
//! the super-chunk (which carries the array metalayer along); a new chunk or
//! block shape goes through the array copy, which regrids the data.

use std::path::PathBuf;

use clap::Args;

use b2nd_core::codecs::names::codec_code;
use b2nd_core::filters::names::filter_code;
use b2nd_core::ndarray::array::{ArrayStorage, NdArray};
use b2nd_core::schunk::{CParams, SChunk, Storage};

use crate::fail::{usage, Context, Failure};
use crate::input::{self, Input};
use crate::progress::Progress;
use crate::staged::Staged;
use crate::InputArgs;

#[derive(Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output path (a file, or a directory with --sparse).
    pub out: PathBuf,
    /// Codec: blosclz, lz4, lz4hc, zlib, zstd, ndlz, zfp_acc, zfp_prec, zfp_rate.
    #[arg(long)]
    pub codec: Option<String>,
    /// Compression level, 0 to 9.
    #[arg(long)]
    pub clevel: Option<u8>,
    /// Filter pipeline, applied in order (e.g. `delta,shuffle`; `none` for no filter).
    #[arg(long, value_delimiter = ',')]
    pub filter: Option<Vec<String>>,
    /// Threads for compression and decompression.
    #[arg(long)]
    pub nthreads: Option<i16>,
    /// New chunk shape, comma separated (arrays only).
    #[arg(long)]
    pub chunks: Option<String>,
    /// New block shape, comma separated (arrays only).
    #[arg(long)]
    pub blocks: Option<String>,
    /// Write a sparse frame (a directory).
    #[arg(long, conflicts_with = "contiguous")]
    pub sparse: bool,
    /// Write a contiguous frame (a file).
    #[arg(long)]
    pub contiguous: bool,
}

/// The output's parameters: the input's, changed as asked.
fn cparams(args: &ConvertArgs, mut cp: CParams) -> Result<CParams, Failure> {
    if let Some(name) = &args.codec {
        cp.compcode = codec_code(name).ok_or_else(|| {
            usage(format!(
                "unknown codec {name:?} (blosclz, lz4, lz4hc, zlib, zstd, ndlz, zfp_acc, zfp_prec, zfp_rate)"
            ))
        })?;
        cp.compcode_meta = 0;
    }
    if let Some(level) = args.clevel {
        if level > 9 {
            return Err(usage(format!("clevel {level} is not in 0..=9")));
        }
        cp.clevel = level;
    }
    if let Some(names) = &args.filter {
        if names.len() > 6 {
            return Err(usage("at most 6 filters"));
        }
        // Right-aligned, as the reference's default pipeline puts shuffle in
        // the last slot.
        let mut filters = [0u8; 6];
        let first = 6 - names.len();
        for (i, name) in names.iter().enumerate() {
            filters[first + i] = filter_code(name.trim())
                .ok_or_else(|| usage(format!("unknown filter {name:?}")))?;
        }
        cp.filters = filters;
        cp.filters_meta = [0; 6];
    }
    if let Some(n) = args.nthreads {
        if n < 1 {
            return Err(usage("nthreads must be at least 1"));
        }
        cp.nthreads = n;
    }
    Ok(cp)
}

fn parse_shape(spec: &str, ndim: usize, what: &str) -> Result<Vec<i32>, Failure> {
    let dims: Result<Vec<i32>, _> = spec.split(',').map(|s| s.trim().parse::<i32>()).collect();
    let dims = dims.map_err(|_| usage(format!("{what} {spec:?} is not a list of integers")))?;
    if dims.len() != ndim || dims.iter().any(|&d| d < 1) {
        return Err(usage(format!(
            "{what} {spec:?} needs {ndim} positive integers"
        )));
    }
    Ok(dims)
}

/// Decodes every chunk of `src` and appends it to `out` (same chunk layout).
fn reencode_into(src: &mut SChunk, out: &mut SChunk, cp: &CParams) -> b2nd_core::Result<()> {
    for m in src.metalayers().to_vec() {
        out.meta_add(&m.name, &m.content)?;
    }
    for name in src.vlmeta_names() {
        let content = src.vlmeta_get(&name)?;
        out.vlmeta_add(&name, &content, Some(cp))?;
    }
    let mut progress = Progress::new("convert", src.nchunks().max(0) as u64);
    let mut buf = Vec::new();
    for n in 0..src.nchunks() {
        let nbytes = b2nd_core::chunk::ChunkHeader::parse(&src.get_chunk(n)?)?.nbytes();
        // The size comes from the file: reserve fallibly, so a hostile claim
        // is an error, not an abort.
        buf.clear();
        buf.try_reserve(nbytes).map_err(|e| {
            b2nd_core::Error::new(b2nd_core::ErrorKind::MemoryAlloc, format!("chunk {n}: {e}"))
        })?;
        buf.resize(nbytes, 0);
        let len = src.decompress_chunk(n, &mut buf)?;
        out.append_buffer(&buf[..len])?;
        progress.set(n as u64 + 1);
    }
    Ok(())
}

pub fn run(args: &ConvertArgs) -> Result<u8, Failure> {
    let mut input = input::open(&args.input)?;
    let contiguous = if args.sparse {
        false
    } else if args.contiguous {
        true
    } else {
        !args.input.path.is_dir()
    };
    let (src_cp, src_dp, blocksize) = input::with_schunk(&mut input, |sc| {
        Ok((sc.cparams().clone(), sc.dparams().clone(), sc.blocksize()))
    })
    .or_fail("reading the input")?;
    let mut cp = cparams(args, src_cp)?;
    let mut dp = src_dp;
    dp.nthreads = cp.nthreads;
    let staged = Staged::new(&args.out, Some(&args.input.path))?;
    let regrid = args.chunks.is_some() || args.blocks.is_some();
    match &mut input {
        Input::Schunk(_) if regrid => {
            return Err(usage("--chunks and --blocks apply to b2nd arrays only"));
        }
        Input::Array(arr) if regrid => {
            let chunkshape = match &args.chunks {
                Some(s) => parse_shape(s, arr.ndim(), "chunk shape")?,
                None => arr.chunkshape().to_vec(),
            };
            let blockshape = match &args.blocks {
                Some(s) => parse_shape(s, arr.ndim(), "block shape")?,
                None => arr
                    .blockshape()
                    .iter()
                    .zip(&chunkshape)
                    .map(|(&b, &c)| b.min(c))
                    .collect(),
            };
            if blockshape.iter().zip(&chunkshape).any(|(b, c)| b > c) {
                return Err(usage("every block dimension must fit in the chunk's"));
            }
            let mut ctx = arr.like_context();
            ctx.chunkshape = chunkshape;
            ctx.blockshape = blockshape;
            ctx.storage = ArrayStorage::Schunk(Storage {
                contiguous,
                urlpath: Some(staged.path().to_owned()),
                cparams: cp,
                dparams: dp,
                ..Storage::default()
            });
            let out: NdArray = arr.copy(&ctx).or_fail("converting")?;
            drop(out);
        }
        _ => {
            cp.blocksize = blocksize;
            let storage = Storage {
                contiguous,
                urlpath: Some(staged.path().to_owned()),
                cparams: cp.clone(),
                dparams: dp,
                ..Storage::default()
            };
            let mut out = SChunk::new(storage).or_fail("creating the output")?;
            input::with_schunk(&mut input, |src| reencode_into(src, &mut out, &cp))
                .or_fail("converting")?;
            drop(out);
        }
    }
    staged.commit()?;
    Ok(0)
}
