//! `b2nd cat`: a region of an array, or a range of items of a plain
//! super-chunk, as `.npy`, raw bytes or CSV, to stdout or a file. The region
//! is read and written one slab of chunk rows at a time, so memory stays
//! bounded by a slab, not by the region.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use b2nd_core::ndarray::array::NdArray;
use b2nd_core::schunk::SChunk;

use crate::csv::ItemFormat;
use crate::fail::{failed, usage, Context, Failure};
use crate::input::{self, Input};
use crate::npy;
use crate::progress::Progress;
use crate::staged::Staged;
use crate::InputArgs;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Npy,
    Raw,
    Csv,
}

#[derive(Args)]
pub struct CatArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Region as START:STOP per dimension, comma separated (`2:5,:,7`);
    /// missing dimensions are taken whole. For a super-chunk: one range of items.
    #[arg(long, allow_hyphen_values = true)]
    pub slice: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "npy")]
    pub format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
}

/// `spec` resolved against `shape`: start and stop of every dimension.
/// Negative bounds count from the end; anything outside the shape is refused.
pub fn parse_slice(spec: Option<&str>, shape: &[i64]) -> Result<(Vec<i64>, Vec<i64>), Failure> {
    let mut start = vec![0; shape.len()];
    let mut stop = shape.to_vec();
    let Some(spec) = spec.filter(|s| !s.trim().is_empty()) else {
        return Ok((start, stop));
    };
    let parts: Vec<&str> = spec.split(',').collect();
    if parts.len() > shape.len() {
        return Err(usage(format!(
            "slice {spec:?} has {} dimensions, the data has {}",
            parts.len(),
            shape.len()
        )));
    }
    for (d, part) in parts.iter().enumerate() {
        let n = shape[d];
        let bound = |s: &str, default: i64| -> Result<i64, Failure> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(default);
            }
            let v: i64 = s
                .parse()
                .map_err(|_| usage(format!("slice bound {s:?} is not an integer")))?;
            Ok(if v < 0 { v + n } else { v })
        };
        let (a, b) = match part.split_once(':') {
            Some((a, b)) => (bound(a, 0)?, bound(b, n)?),
            None => {
                let i = bound(part, 0)?;
                (i, i.saturating_add(1))
            }
        };
        if a < 0 || b < a || b > n {
            return Err(usage(format!(
                "slice {:?} is out of range for dimension {d} of size {n}",
                part.trim()
            )));
        }
        start[d] = a;
        stop[d] = b;
    }
    Ok((start, stop))
}

/// Writes decoded items in the chosen format; `line` items per CSV line.
struct Sink<'a> {
    out: &'a mut dyn Write,
    format: Format,
    item: Option<ItemFormat>,
    line: usize,
}

impl Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let r = match (self.format, self.item) {
            (Format::Csv, Some(item)) => {
                let mut text = String::new();
                for row in bytes.chunks(item.size() * self.line.max(1)) {
                    let cells: Vec<String> = row
                        .chunks_exact(item.size())
                        .map(|v| item.show(v))
                        .collect();
                    text.push_str(&cells.join(","));
                    text.push('\n');
                }
                self.out.write_all(text.as_bytes())
            }
            _ => self.out.write_all(bytes),
        };
        r.or_fail("writing the output")
    }
}

fn byte_len(shape: &[i64], typesize: i32) -> Result<usize, Failure> {
    shape
        .iter()
        .try_fold(typesize as i64, |acc, &d| acc.checked_mul(d))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| usage("the region is too large"))
}

/// A buffer of `len` zero bytes; the size comes from the file's geometry,
/// so too much is an error rather than an allocation abort.
fn zeroed(len: usize) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).map_err(|_| {
        failed(format!(
            "cannot allocate {len} bytes for a slab of the region"
        ))
    })?;
    buf.resize(len, 0);
    Ok(buf)
}

fn csv_format(
    args: &CatArgs,
    item: Option<ItemFormat>,
    dtype: &str,
) -> Result<Option<ItemFormat>, Failure> {
    if args.format == Format::Csv && item.is_none() {
        return Err(usage(format!(
            "csv cannot show items of dtype {dtype}; use npy or raw"
        )));
    }
    Ok(item)
}

fn cat_array(args: &CatArgs, arr: &NdArray, out: &mut dyn Write) -> Result<(), Failure> {
    let (start, stop) = parse_slice(args.slice.as_deref(), arr.shape())?;
    let region: Vec<i64> = start.iter().zip(&stop).map(|(a, b)| b - a).collect();
    let ts = arr.typesize();
    let dtype = if arr.dtype_format() == 0 {
        arr.dtype().to_string()
    } else {
        format!("|V{ts}")
    };
    let item = csv_format(
        args,
        ItemFormat::from_dtype(&dtype).filter(|f| f.size() == ts as usize),
        &dtype,
    )?;
    let total = byte_len(&region, ts)?;
    if args.format == Format::Npy {
        out.write_all(&npy::header(&dtype, &region))
            .or_fail("writing the output")?;
    }
    let line = if region.len() >= 2 {
        region[region.len() - 1] as usize
    } else {
        1
    };
    let mut sink = Sink {
        out,
        format: args.format,
        item,
        line,
    };
    if region.is_empty() {
        let mut buf = zeroed(byte_len(&[], ts)?)?;
        arr.get_slice_cbuffer(&[], &[], &mut buf, &[])
            .or_fail("reading the array")?;
        return sink.write(&buf);
    }
    if total == 0 {
        return Ok(());
    }
    // Slabs of whole chunk rows along the first dimension are contiguous in
    // C order, so they are written as they come.
    let step = i64::from(arr.chunkshape()[0].max(1));
    let mut progress = Progress::new("cat", ((region[0] + step - 1) / step) as u64);
    let mut s0 = start[0];
    let mut done = 0;
    while s0 < stop[0] {
        let mut a = start.clone();
        let mut b = stop.clone();
        a[0] = s0;
        b[0] = (s0 + step).min(stop[0]);
        let shape: Vec<i64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let mut buf = zeroed(byte_len(&shape, ts)?)?;
        arr.get_slice_cbuffer(&a, &b, &mut buf, &shape)
            .or_fail("reading the array")?;
        sink.write(&buf)?;
        s0 = b[0];
        done += 1;
        progress.set(done);
    }
    Ok(())
}

fn cat_schunk(args: &CatArgs, sc: &mut SChunk, out: &mut dyn Write) -> Result<(), Failure> {
    let ts = sc.typesize().max(1);
    let nitems = sc.nbytes() / i64::from(ts);
    let (start, stop) = parse_slice(args.slice.as_deref(), &[nitems])?;
    let dtype = if ts == 1 {
        "|u1".to_string()
    } else {
        format!("|V{ts}")
    };
    let item = csv_format(args, ItemFormat::unsigned(ts as usize), &dtype)?;
    if args.format == Format::Npy {
        out.write_all(&npy::header(&dtype, &[stop[0] - start[0]]))
            .or_fail("writing the output")?;
    }
    let mut sink = Sink {
        out,
        format: args.format,
        item,
        line: 1,
    };
    // A chunk at a time; variable-size chunks are read 1 MiB at a time.
    let per_read = if sc.chunksize() > 0 {
        sc.chunksize()
    } else {
        1 << 20
    };
    let step = i64::from((per_read / ts).max(1));
    let mut progress = Progress::new("cat", ((stop[0] - start[0] + step - 1) / step) as u64);
    let mut pos = start[0];
    let mut done = 0;
    while pos < stop[0] {
        let end = (pos + step).min(stop[0]);
        let mut buf = zeroed(byte_len(&[end - pos], ts)?)?;
        sc.get_slice_buffer(pos, end, &mut buf)
            .or_fail("reading the super-chunk")?;
        sink.write(&buf)?;
        pos = end;
        done += 1;
        progress.set(done);
    }
    Ok(())
}

fn cat_to(args: &CatArgs, input: &mut Input, out: &mut dyn Write) -> Result<(), Failure> {
    match input {
        Input::Array(a) => cat_array(args, a, out),
        Input::Schunk(s) => cat_schunk(args, s, out),
    }?;
    out.flush().or_fail("writing the output")
}

pub fn run(args: &CatArgs) -> Result<u8, Failure> {
    let mut input = input::open(&args.input)?;
    match &args.output {
        Some(path) => {
            let staged = Staged::new(path, Some(&args.input.path))?;
            let file = std::fs::File::create(staged.path())
                .map_err(|e| failed(format!("cannot create {}: {e}", path.display())))?;
            let mut w = std::io::BufWriter::new(file);
            cat_to(args, &mut input, &mut w)?;
            let file = w
                .into_inner()
                .map_err(|e| failed(format!("writing the output: {e}")))?;
            file.sync_all().or_fail("writing the output")?;
            drop(file);
            staged.commit()?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            cat_to(args, &mut input, &mut w)?;
        }
    }
    Ok(0)
}
