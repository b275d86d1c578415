//! Helpers shared by the integration tests: deterministic generators, the
//! location of the reference fixtures and their MANIFEST.tsv, digests, the
//! python-blosc2 oracle and scratch directories.
//!
//! Each test file pulls this in with `mod common;`, so a file uses only some
//! of it; hence the `dead_code` allowance.
#![allow(dead_code)]

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// xorshift64, the same generator the crate's unit tests use.
#[path = "../../src/test_rng.rs"]
mod test_rng;
#[allow(unused_imports)] // as `dead_code` above: not every test file draws numbers
pub use test_rng::XorShift;

/// xorshift64* (shifts 12, 25, 27 and a multiply): the generator of the
/// n-dimensional tests, which draw signed sizes and coordinates.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: i64) -> i64 {
        (self.next() % n as u64) as i64
    }

    /// A random sub-range [a, b) of [0, n).
    pub fn range(&mut self, n: i64) -> (i64, i64) {
        let a = self.below(n + 1);
        let b = a + self.below(n - a + 1);
        (a, b)
    }

    /// A random array layout of `ndim` dimensions: each dimension is empty
    /// one time in `empty_one_in`, else 1..=`max_dim` long; chunks are
    /// 1..=`max_chunk` and blocks 1..=chunk.
    pub fn layout(
        &mut self,
        ndim: usize,
        empty_one_in: i64,
        max_dim: i64,
        max_chunk: i64,
    ) -> (Vec<i64>, Vec<i32>, Vec<i32>) {
        let mut shape = vec![0i64; ndim];
        let mut chunks = vec![0i32; ndim];
        let mut blocks = vec![0i32; ndim];
        for i in 0..ndim {
            shape[i] = if self.below(empty_one_in) == 0 {
                0
            } else {
                1 + self.below(max_dim)
            };
            chunks[i] = 1 + self.below(max_chunk) as i32;
            blocks[i] = 1 + self.below(chunks[i] as i64) as i32;
        }
        (shape, chunks, blocks)
    }
}

/// Transposes the leading `rows * cols` bytes of `src`, read as a row-major
/// `rows` x `cols` matrix; the bytes after them stay as they are.
fn transpose(src: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    let mut out = src.to_vec();
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = src[r * cols + c];
        }
    }
    out
}

/// Byte shuffle: the bytes of `typesize`-byte items regrouped plane by
/// plane; trailing bytes that do not fill an item stay as they are.
pub fn shuffle(src: &[u8], typesize: usize) -> Vec<u8> {
    transpose(src, src.len() / typesize, typesize)
}

/// Inverse of [`shuffle`].
pub fn unshuffle(src: &[u8], typesize: usize) -> Vec<u8> {
    transpose(src, typesize, src.len() / typesize)
}

/// The reference's files the tests decode, kept in the repository
/// (`tests/fixtures`, with their digests in `MANIFEST.tsv`).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The bytes of a fixture, by its path relative to the fixtures folder.
pub fn read_fixture(rel: &str) -> Vec<u8> {
    let path = fixtures_dir().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// One line of the fixtures' MANIFEST.tsv.
pub struct ManifestRow {
    /// Path relative to the fixtures folder.
    pub file: String,
    /// `-` for the whole file, else which part (`chunk 3`, ...).
    pub part: String,
    /// Length of the decoded contents.
    pub nbytes: usize,
    /// How many leading decoded bytes the digest covers.
    pub covered: usize,
    /// SHA-256 (lower-case hex) of the covered bytes.
    pub digest: String,
}

/// Every data line of MANIFEST.tsv (the header line is skipped).
pub fn manifest() -> Vec<ManifestRow> {
    let path = fixtures_dir().join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() < 5 {
                return None;
            }
            Some(ManifestRow {
                file: cols[0].to_string(),
                part: cols[1].to_string(),
                nbytes: cols[2].parse().expect("decoded_bytes column"),
                covered: cols[3].parse().expect("digest_covers_first_bytes column"),
                digest: cols[4].to_string(),
            })
        })
        .collect()
}

/// The MANIFEST.tsv line for `file` and `part`; panics when there is none.
pub fn manifest_row(file: &str, part: &str) -> ManifestRow {
    manifest()
        .into_iter()
        .find(|r| r.file == file && r.part == part)
        .unwrap_or_else(|| panic!("{file} ({part}) not in MANIFEST.tsv"))
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower-case hex SHA-256 of `data`, as MANIFEST.tsv writes it.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The python interpreter with `blosc2` importable: `$B2ND_PYTHON`, else
/// `/tmp/venv/bin/python`. Without one, prints a note naming `what` is
/// skipped and gives None, so the caller returns early.
pub fn python_oracle(what: &str) -> Option<PathBuf> {
    let p = std::env::var_os("B2ND_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/venv/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", "import blosc2"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!(
            "note: python with blosc2 not found at {} (set B2ND_PYTHON); {what} skipped",
            p.display()
        );
    }
    ok.then_some(p)
}

/// Runs `script` (`python -c`) with `args` as `sys.argv[1..]`; asserts that
/// it succeeds and returns its standard output.
pub fn run_python<A: AsRef<std::ffi::OsStr>>(py: &Path, script: &str, args: &[A]) -> String {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("python prints UTF-8")
}

/// A fresh path `name` inside this test binary's scratch folder,
/// `<target>/tmp/<binary>`. The folder is emptied at the binary's first call,
/// so each run replaces the last run's files instead of piling them up in the
/// system temp dir, and the files of a failed run stay there to be looked at.
pub fn scratch_path(binary: &str, name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(binary);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        dir
    });
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    let _ = std::fs::remove_dir_all(&p);
    p
}

/// A fresh scratch folder under the system temp dir, named after the test
/// and the process. It is removed when dropped, except after a failure or
/// with `B2ND_KEEP` set, so that what went wrong can be looked at.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("b2nd_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() || std::env::var_os("B2ND_KEEP").is_some() {
            eprintln!("kept {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// How block `nblock` of a split chunk (one stream per byte plane, `nstreams`
/// of them, `bsize` bytes) was encoded: (streams stored verbatim, streams
/// compressed). Runs (size 0 or negative) count as neither.
pub fn split_stream_kinds(
    chunk: &[u8],
    nblock: usize,
    bsize: usize,
    nstreams: usize,
) -> (usize, usize) {
    let rd = |at: usize| i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
    let mut pos = rd(32 + 4 * nblock) as usize;
    let (mut stored, mut packed) = (0, 0);
    for _ in 0..nstreams {
        let csize = rd(pos);
        pos += 4;
        if csize as usize == bsize / nstreams {
            stored += 1;
        } else if csize > 0 {
            packed += 1;
        }
        pos += csize.max(0) as usize;
    }
    (stored, packed)
}

/// `items` items of `typesize` bytes, then `trailing` bytes: the low half of
/// each item is noise (its byte planes end up stored verbatim) and the high
/// half climbs by one every `climb_every` items (its planes compress). This
/// is the shape of float data that makes a split block mix stored and
/// compressed streams.
pub fn half_noise(items: usize, typesize: usize, trailing: usize, climb_every: usize) -> Vec<u8> {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::with_capacity(items * typesize + trailing);
    for i in 0..items {
        for b in 0..typesize {
            let noise = rng.next() as u8;
            out.push(if b < typesize / 2 {
                noise
            } else {
                (i / climb_every + b) as u8
            });
        }
    }
    out.extend((0..trailing).map(|t| t as u8 ^ 0x5a));
    out
}

/// Storage for a frame file (`contiguous`) or sparse directory at `path`, of
/// 4-byte items and otherwise default parameters.
pub fn file_storage(path: &Path, contiguous: bool) -> b2nd_core::schunk::Storage {
    b2nd_core::schunk::Storage {
        contiguous,
        urlpath: Some(path.to_owned()),
        cparams: b2nd_core::schunk::CParams {
            typesize: 4,
            ..b2nd_core::schunk::CParams::default()
        },
        ..b2nd_core::schunk::Storage::default()
    }
}
