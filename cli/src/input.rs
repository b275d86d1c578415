//! Opening what a subcommand reads: a b2nd array when the frame carries an
//! array metalayer, else a plain super-chunk.

use std::io::Read;
use std::path::Path;

use b2nd_core::frame::FrameHeader;
use b2nd_core::ndarray::array::NdArray;
use b2nd_core::schunk::SChunk;

use crate::fail::{cannot_open, Failure};
use crate::InputArgs;

pub enum Input {
    Array(NdArray),
    Schunk(SChunk),
}

/// Name of the file holding a sparse frame's header and index.
const SPARSE_INDEX: &str = "chunks.b2frame";

pub fn open(args: &InputArgs) -> Result<Input, Failure> {
    let path = &args.path;
    if path.is_dir() && !path.join(SPARSE_INDEX).is_file() {
        return Err(cannot_open(path, "a directory that is not a sparse frame"));
    }
    if path.is_dir() && args.offset != 0 {
        return Err(cannot_open(
            path,
            "--offset applies to contiguous frames only",
        ));
    }
    let sc = SChunk::open_offset(path, args.offset).map_err(|e| cannot_open(path, e))?;
    if sc.meta_exists("b2nd").is_some() || sc.meta_exists("caterva").is_some() {
        let arr = NdArray::from_schunk(sc).map_err(|e| cannot_open(path, e))?;
        Ok(Input::Array(arr))
    } else {
        Ok(Input::Schunk(sc))
    }
}

/// Runs `f` on the super-chunk of either kind of input.
pub fn with_schunk<T>(
    input: &mut Input,
    f: impl FnOnce(&mut SChunk) -> b2nd_core::Result<T>,
) -> b2nd_core::Result<T> {
    match input {
        Input::Array(a) => a.with_schunk(f),
        Input::Schunk(s) => f(s),
    }
}

/// The frame's header as stored (for what the super-chunk does not keep,
/// such as the format version).
pub fn read_header(args: &InputArgs) -> Option<FrameHeader> {
    let file = if args.path.is_dir() {
        args.path.join(SPARSE_INDEX)
    } else {
        args.path.clone()
    };
    let mut f = std::fs::File::open(Path::new(&file)).ok()?;
    if args.offset > 0 {
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(args.offset)).ok()?;
    }
    let mut buf = vec![0u8; 87];
    f.read_exact(&mut buf).ok()?;
    FrameHeader::decode_fixed(&buf).ok()
}
