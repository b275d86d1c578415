//! The b2nd / caterva metalayer codec against byte strings built by hand
//! from the published layouts (the seed documents), and against bad input.

use b2nd_core::ndarray::{default_dtype_for_typesize, MetaLayout, NdMeta};

/// Byte-level builder following the layout diagrams, independent of the
/// codec under test.
struct Raw(Vec<u8>);

impl Raw {
    fn new(outer_elements: u8, version: u8, ndim: u8) -> Raw {
        Raw(vec![0x90 | outer_elements, version, ndim])
    }
    fn shape(mut self, dims: &[i64]) -> Raw {
        self.0.push(0x90 + dims.len() as u8);
        for d in dims {
            self.0.push(0xd3);
            self.0.extend_from_slice(&d.to_be_bytes());
        }
        self
    }
    fn dims32(mut self, dims: &[i32]) -> Raw {
        self.0.push(0x90 + dims.len() as u8);
        for d in dims {
            self.0.push(0xd2);
            self.0.extend_from_slice(&d.to_be_bytes());
        }
        self
    }
    fn byte(mut self, b: u8) -> Raw {
        self.0.push(b);
        self
    }
    fn str32(mut self, s: &str) -> Raw {
        self.0.push(0xdb);
        self.0.extend_from_slice(&(s.len() as u32).to_be_bytes());
        self.0.extend_from_slice(s.as_bytes());
        self
    }
}

/// Seed 002: the current 7-element b2nd layout (version, ndim, shape,
/// chunkshape, blockshape, dtype_format, dtype).
#[test]
fn seed_002_seven_element_b2nd() {
    let raw = Raw::new(7, 0, 3)
        .shape(&[100, 200, 3])
        .dims32(&[10, 20, 3])
        .dims32(&[5, 5, 1])
        .byte(0)
        .str32("<i4")
        .0;
    let m = NdMeta::from_b2nd_bytes(&raw).unwrap();
    assert_eq!(m.version, 0);
    assert_eq!(m.ndim(), 3);
    assert_eq!(m.shape, [100, 200, 3]);
    assert_eq!(m.chunkshape, [10, 20, 3]);
    assert_eq!(m.blockshape, [5, 5, 1]);
    assert_eq!((m.dtype.as_str(), m.dtype_format), ("<i4", 0));
    assert_eq!(MetaLayout::detect(&raw).unwrap(), MetaLayout::B2nd);
    // The writer produces exactly the hand-built bytes.
    assert_eq!(m.to_b2nd_bytes().unwrap(), raw);
    // A nonzero dtype_format and a long dtype (still str32) survive.
    let long = "x".repeat(300);
    let raw = Raw::new(7, 0, 1)
        .shape(&[-5])
        .dims32(&[7])
        .dims32(&[0])
        .byte(5)
        .str32(&long)
        .0;
    let m = NdMeta::from_b2nd_bytes(&raw).unwrap();
    assert_eq!((m.shape[0], m.dtype_format, m.dtype.len()), (-5, 5, 300));
    assert_eq!(m.to_b2nd_bytes().unwrap(), raw);
}

/// Seed 000: the early 6-element b2nd layout, dtype without dtype_format.
#[test]
fn seed_000_six_element_b2nd() {
    let raw = Raw::new(6, 0, 2)
        .shape(&[10, 20])
        .dims32(&[5, 10])
        .dims32(&[2, 5])
        .str32("int32")
        .0;
    let m = NdMeta::from_b2nd_bytes(&raw).unwrap();
    assert_eq!(MetaLayout::detect(&raw).unwrap(), MetaLayout::B2ndV0);
    assert_eq!(
        m,
        NdMeta::new(vec![10, 20], vec![5, 10], vec![2, 5], "int32", 0)
    );
    // Rewriting it produces the current layout.
    let current = m.to_b2nd_bytes().unwrap();
    assert_eq!(current[0], 0x97);
    assert_eq!(NdMeta::from_b2nd_bytes(&current).unwrap(), m);
}

/// Seeds 001 and 004: the 5-element Caterva layout (shape, chunk or
/// "partition" shape, blockshape; no dtype).
#[test]
fn seeds_001_004_caterva() {
    let raw = Raw::new(5, 0, 2)
        .shape(&[1000, 31])
        .dims32(&[100, 16])
        .dims32(&[20, 8])
        .0;
    assert_eq!(MetaLayout::detect(&raw).unwrap(), MetaLayout::Caterva);
    let m = NdMeta::from_caterva_bytes(&raw, 4).unwrap();
    assert_eq!(m.shape, [1000, 31]);
    assert_eq!(m.chunkshape, [100, 16]);
    assert_eq!(m.blockshape, [20, 8]);
    assert_eq!((m.dtype.as_str(), m.dtype_format), ("|S4", 0));
    assert_eq!(m.to_caterva_bytes().unwrap(), raw);
    // The generic reader accepts it too; the strict b2nd reader does not.
    assert_eq!(NdMeta::from_meta_bytes(&raw, 4).unwrap(), m);
    assert_eq!(NdMeta::from_b2nd_bytes(&raw).unwrap_err().code(), -1);
    assert_eq!(default_dtype_for_typesize(13), "|S13");
    // Caterva arrays of up to 8 dimensions; the version byte is kept as read.
    let raw = Raw::new(5, 3, 8)
        .shape(&[2; 8])
        .dims32(&[1; 8])
        .dims32(&[1; 8])
        .0;
    let m = NdMeta::from_caterva_bytes(&raw, 1).unwrap();
    assert_eq!((m.version, m.ndim()), (3, 8));
    // ...but the writer emits version 0, as the reference does.
    assert_eq!(m.to_caterva_bytes().unwrap()[1], 0);
}

#[test]
fn sixteen_dimensions_use_the_0xa0_header() {
    let raw = Raw::new(7, 0, 16)
        .shape(&[1; 16])
        .dims32(&[1; 16])
        .dims32(&[1; 16])
        .byte(0)
        .str32("|u1")
        .0;
    assert_eq!(raw[3], 0xa0);
    let m = NdMeta::from_b2nd_bytes(&raw).unwrap();
    assert_eq!(m.to_b2nd_bytes().unwrap(), raw);
}

fn good() -> Vec<u8> {
    Raw::new(7, 0, 2)
        .shape(&[10, 20])
        .dims32(&[5, 10])
        .dims32(&[2, 5])
        .byte(0)
        .str32("<f8")
        .0
}

#[test]
fn malformed_b2nd_is_rejected_with_failure() {
    let mut cases: Vec<(&str, Vec<u8>)> = vec![("empty", vec![])];
    let mut edit = |what: &'static str, f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good();
        f(&mut b);
        cases.push((what, b));
    };
    edit("outer 4 elements", &|b| b[0] = 0x94);
    edit("outer 8 elements", &|b| b[0] = 0x98);
    edit("outer map", &|b| b[0] = 0x87);
    edit("version not fixint", &|b| b[1] = 0x80);
    edit("ndim 17", &|b| b[2] = 17);
    edit("ndim negative", &|b| b[2] = 0xff);
    edit("ndim disagrees with arrays", &|b| b[2] = 3);
    edit("shape header", &|b| b[3] = 0x93);
    edit("shape int32 marker", &|b| b[4] = 0xd2);
    edit("chunkshape header", &|b| b[22] = 0x91);
    edit("chunkshape int64 marker", &|b| b[23] = 0xd3);
    edit("blockshape header", &|b| b[33] = 0xdc);
    edit("blockshape marker", &|b| b[34] = 0xcc);
    edit("dtype_format not fixint", &|b| b[44] = 0x80);
    edit("dtype str8 marker", &|b| b[45] = 0xd9);
    edit("dtype negative length", &|b| b[46] = 0x80);
    edit("dtype length past end", &|b| b[49] = 4);
    edit("dtype huge length", &|b| {
        b[46..50].copy_from_slice(&[0x7f, 0xff, 0xff, 0xff])
    });
    edit("dtype not utf-8", &|b| b[50] = 0xff);
    for len in 0..good().len() {
        cases.push(("truncated", good()[..len].to_vec()));
    }
    for (what, bytes) in &cases {
        let err = NdMeta::from_b2nd_bytes(bytes).expect_err(what);
        assert_eq!(err.code(), -1, "{what}: {err}");
    }
    // Sanity: the untouched record parses, and the offsets used above point
    // where they claim to.
    let b = good();
    assert_eq!((b[22], b[33], b[44], b[45]), (0x92, 0x92, 0x00, 0xdb));
    assert!(NdMeta::from_b2nd_bytes(&b).is_ok());
}

#[test]
fn malformed_caterva_is_rejected() {
    let c = Raw::new(5, 0, 1).shape(&[4]).dims32(&[2]).dims32(&[1]).0;
    for len in 0..c.len() {
        assert_eq!(
            NdMeta::from_caterva_bytes(&c[..len], 1).unwrap_err().code(),
            -1
        );
    }
    assert_eq!(
        NdMeta::from_caterva_bytes(&good(), 1).unwrap_err().code(),
        -1
    );
    let mut bad = c.clone();
    bad[2] = 20;
    assert_eq!(NdMeta::from_caterva_bytes(&bad, 1).unwrap_err().code(), -1);
}

#[test]
fn trailing_bytes_after_a_complete_record_are_ignored() {
    // The reference reads only as far as the record goes (a shrunk metalayer
    // keeps its old length), so trailing bytes are not an error.
    let mut b = good();
    b.extend_from_slice(&[0xc1; 7]);
    assert_eq!(
        NdMeta::from_b2nd_bytes(&b).unwrap(),
        NdMeta::from_b2nd_bytes(&good()).unwrap()
    );
}

/// Every single-byte mutation and many random inputs: never a panic, and
/// whatever parses serialises again.
#[test]
fn mutations_never_panic() {
    let seeds = [
        good(),
        Raw::new(6, 0, 1)
            .shape(&[4])
            .dims32(&[2])
            .dims32(&[1])
            .str32("ab")
            .0,
        Raw::new(5, 0, 1).shape(&[4]).dims32(&[2]).dims32(&[1]).0,
    ];
    for seed in &seeds {
        for pos in 0..seed.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0x90, 0x97, 0xa0, 0xd2, 0xd3, 0xdb, 0xff] {
                let mut b = seed.clone();
                b[pos] = v;
                if let Ok(m) = NdMeta::from_meta_bytes(&b, 2) {
                    if m.ndim() <= 16 {
                        let again = m.to_b2nd_bytes();
                        assert!(again.is_ok() || m.dtype.contains('\0'));
                    }
                }
            }
        }
    }
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (x % 64) as usize;
        let mut b: Vec<u8> = (0..len)
            .map(|i| (x >> (i % 8 * 8)) as u8 ^ i as u8)
            .collect();
        if let Some(first) = b.first_mut() {
            *first = 0x95 + (x % 3) as u8;
        }
        let _ = NdMeta::from_meta_bytes(&b, 1);
    }
}
