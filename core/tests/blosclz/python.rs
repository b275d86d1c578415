//! Byte-for-byte comparison of the BloscLZ encoder with the reference, through
//! the python-blosc2 oracle (C-Blosc2 3.3.5) when it is installed.
//!
//! Each input is compressed by the reference as a one-block, one-stream chunk
//! with no filter; the BloscLZ stream is cut out of that chunk and compared
//! with what [`compress`] produces for the same input, level and output limit.
//! Without python (set `B2ND_PYTHON`, default `/tmp/venv/bin/python`) the test
//! prints a note and checks nothing else.

use b2nd_core::codecs::blosclz::{compress, decompress, EncodeHint};

use crate::common;
use common::{python_oracle, run_python, TempDir, XorShift};

/// For every `<dir>/<name>.in` and level 1..=9, writes `<name>.<level>.out`:
/// the BloscLZ stream, or one of the words `stored` (kept uncompressed) and
/// `special` (a whole-block run, no codec involved).
const ORACLE: &str = r#"
import blosc2, struct, sys, pathlib
d = pathlib.Path(sys.argv[1])
for f in sorted(d.glob("*.in")):
    data = f.read_bytes()
    for cl in range(1, 10):
        c = blosc2.compress2(data, codec=blosc2.Codec.BLOSCLZ, clevel=cl,
                             filters=[blosc2.Filter.NOFILTER], typesize=1,
                             blocksize=len(data), splitmode=blosc2.SplitMode.NEVER_SPLIT)
        out = d / f"{f.stem}.{cl}.out"
        flags, blosc2_flags = c[2], c[31]
        if flags & 2:
            out.write_bytes(b"stored")
            continue
        if (blosc2_flags >> 4) & 7:
            out.write_bytes(b"special")
            continue
        bstart = struct.unpack("<i", c[32:36])[0]
        csize = struct.unpack("<i", c[bstart:bstart + 4])[0]
        if csize <= 0:
            out.write_bytes(b"special")
        elif csize == len(data):
            out.write_bytes(b"stored")
        else:
            out.write_bytes(c[bstart + 4:bstart + 4 + csize])
"#;

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut rng = XorShift(0xB10C);
    let mut v: Vec<(String, Vec<u8>)> = Vec::new();
    let n = 1 << 17;
    let ramp: Vec<u8> = (0..n / 4).flat_map(|i| (i as u32).to_le_bytes()).collect();
    let mut planes = vec![0u8; n];
    for (i, chunk) in ramp.chunks_exact(4).enumerate() {
        for (b, &byte) in chunk.iter().enumerate() {
            planes[b * (n / 4) + i] = byte;
        }
    }
    v.push(("ramp".into(), ramp));
    v.push(("ramp_planes".into(), planes));
    v.push((
        "sine".into(),
        (0..n / 8)
            .flat_map(|i| (i as f64 * 1e-3).sin().to_le_bytes())
            .collect(),
    ));
    v.push((
        "lowent".into(),
        (0..n).map(|_| (rng.next() % 4) as u8).collect(),
    ));
    let words: [&[u8]; 5] = [b"alpha ", b"beta ", b"gamma ", b"delta epsilon ", b"z"];
    let mut text = Vec::new();
    while text.len() < n {
        text.extend_from_slice(words[(rng.next() % 5) as usize]);
    }
    text.truncate(n);
    v.push(("words_small".into(), text[..3000].to_vec()));
    v.push(("words".into(), text));
    let mut runs = Vec::new();
    while runs.len() < n {
        let b = rng.next() as u8;
        runs.extend(std::iter::repeat(b).take((rng.next() % 300) as usize));
    }
    runs.truncate(n);
    v.push(("runs".into(), runs));
    let block: Vec<u8> = (0..9000).map(|_| rng.next() as u8).collect();
    let mut far = Vec::new();
    while far.len() < n {
        let s = (rng.next() % 8000) as usize;
        far.extend_from_slice(&block[s..s + 1000]);
        far.push(rng.next() as u8);
    }
    far.truncate(n);
    v.push(("farrep".into(), far));
    // Copies of every length from 0 to 47 at near, far and overlapping
    // distances, each ended by a random byte: matches that end inside the
    // eight bytes after the seed, right after them, and well beyond.
    let mut lengths: Vec<u8> = (0..64).map(|_| rng.next() as u8).collect();
    for len in 0..48 {
        for dist in [1, 2, 3, 4, 7, 8, 9, 12, 16, 100, 5000, 8300] {
            let from = lengths.len().saturating_sub(dist);
            for k in 0..len {
                lengths.push(lengths[from + k]);
            }
            lengths.push(rng.next() as u8);
        }
    }
    v.push(("match_lengths".into(), lengths));
    // A random head, then a run to the very end: the last match runs into
    // the bound that every match stops at, from each of a range of starts.
    for head in 40..56 {
        let mut d: Vec<u8> = (0..head).map(|_| rng.next() as u8).collect();
        d.resize(head + 37, 0xAB);
        v.push((format!("tail_run{head}"), d));
    }
    // Mostly random with a zero tail: compressed sizes straddle the output
    // limit, so whether a stream "fits" is compared too.
    for r in (3930..3990).step_by(3) {
        let mut d: Vec<u8> = (0..r).map(|_| rng.next() as u8).collect();
        d.resize(4096, 0);
        v.push((format!("edge{r}"), d));
    }
    v
}

#[test]
fn encoder_matches_the_reference_byte_for_byte() {
    let Some(py) = python_oracle("comparison") else {
        return;
    };
    let dir = TempDir::new("blosclz_py");
    let cases = inputs();
    for (name, data) in &cases {
        std::fs::write(dir.join(format!("{name}.in")), data).unwrap();
    }
    run_python(&py, ORACLE, &[dir.path()]);

    let (mut compared, mut streams) = (0, 0);
    let mut failures = Vec::new();
    for (name, data) in &cases {
        for clevel in 1..=9u8 {
            let want = std::fs::read(dir.join(format!("{name}.{clevel}.out"))).unwrap();
            if want == b"special" {
                continue;
            }
            // The reference gives the codec the chunk's remaining room: the
            // block size minus the 8 bytes of bstarts and csize beyond the
            // 32-byte overhead the destination was sized for.
            let mut dst = vec![0u8; data.len() - 8];
            let n = compress(clevel, data, &mut dst, &EncodeHint::default());
            compared += 1;
            if want == b"stored" {
                if n != 0 {
                    failures.push(format!(
                        "{name} clevel {clevel}: reference stored, we wrote {n} bytes"
                    ));
                }
                continue;
            }
            streams += 1;
            if dst[..n] != want[..] {
                failures.push(format!(
                    "{name} clevel {clevel}: {n} bytes vs reference {}",
                    want.len()
                ));
            }
            let mut back = vec![0u8; data.len()];
            assert_eq!(
                decompress(&want, &mut back),
                Ok(data.len()),
                "{name} clevel {clevel}"
            );
            assert!(
                back == *data,
                "{name} clevel {clevel}: reference stream decodes wrong"
            );
        }
    }
    drop(dir);
    println!("compared {compared} cases, {streams} of them compressed streams");
    assert!(
        failures.is_empty(),
        "{} mismatches: {:#?}",
        failures.len(),
        failures
    );
    assert!(
        streams > 50,
        "too few compressed streams compared ({streams})"
    );
}
