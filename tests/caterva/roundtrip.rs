//! The Caterva C API and the b2nd Rust API on the same files: arrays created
//! through Caterva open through b2nd (and carry both metalayers), arrays
//! created through b2nd open through Caterva, and Caterva-only files (only a
//! `caterva` metalayer, as Caterva 0.5 writes them) open through both.
//!
//! The C functions are called through their exported symbols (the test links
//! the library's rlib, whose `#[no_mangle]` items it declares below).

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;

use b2nd_core::ndarray::array::{ArrayStorage, Context, NdArray};
use b2nd_core::ndarray::meta::NdMeta;
use b2nd_core::schunk::{SChunk, Storage};

/// `caterva_config_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Config {
    alloc: *mut c_void,
    free: *mut c_void,
    compcodec: u8,
    compmeta: u8,
    complevel: u8,
    splitmode: i32,
    usedict: i32,
    nthreads: i16,
    filters: [u8; 6],
    filtersmeta: [u8; 6],
    prefilter: *mut c_void,
    pparams: *mut c_void,
    udbtune: *mut c_void,
}

#[repr(C)]
struct Meta {
    name: *mut c_char,
    sdata: *mut u8,
    size: i32,
}

#[repr(C)]
struct StorageC {
    chunkshape: [i32; 8],
    blockshape: [i32; 8],
    contiguous: bool,
    urlpath: *mut c_char,
    metalayers: [Meta; 15],
    nmetalayers: i32,
}

#[repr(C)]
struct Params {
    itemsize: u8,
    shape: [i64; 8],
    ndim: i8,
}

/// The leading fields of `caterva_array_t`.
#[repr(C)]
struct ArrayHead {
    cfg: *mut c_void,
    sc: *mut c_void,
    shape: [i64; 8],
    chunkshape: [i32; 8],
    extshape: [i64; 8],
    blockshape: [i32; 8],
    extchunkshape: [i64; 8],
    nitems: i64,
    chunknitems: i32,
    extnitems: i64,
    blocknitems: i32,
    extchunknitems: i64,
    ndim: i8,
}

extern "C" {
    fn caterva_ctx_new(cfg: *mut Config, ctx: *mut *mut c_void) -> c_int;
    fn caterva_ctx_free(ctx: *mut *mut c_void) -> c_int;
    fn caterva_from_buffer(
        ctx: *mut c_void,
        buffer: *mut c_void,
        buffersize: i64,
        params: *mut Params,
        storage: *mut StorageC,
        array: *mut *mut ArrayHead,
    ) -> c_int;
    fn caterva_to_buffer(
        ctx: *mut c_void,
        array: *mut ArrayHead,
        buffer: *mut c_void,
        size: i64,
    ) -> c_int;
    fn caterva_open(ctx: *mut c_void, urlpath: *const c_char, array: *mut *mut ArrayHead) -> c_int;
    fn caterva_resize(
        ctx: *mut c_void,
        array: *mut ArrayHead,
        new_shape: *const i64,
        start: *const i64,
    ) -> c_int;
    fn caterva_squeeze(ctx: *mut c_void, array: *mut ArrayHead) -> c_int;
    fn caterva_free(ctx: *mut c_void, array: *mut *mut ArrayHead) -> c_int;
}

// Keep the library linked in.
use b2nd as _;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("b2nd-caterva-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn new_ctx() -> *mut c_void {
    let mut cfg = Config {
        alloc: std::ptr::null_mut(),
        free: std::ptr::null_mut(),
        compcodec: 5,
        compmeta: 0,
        complevel: 5,
        splitmode: 3,
        usedict: 0,
        nthreads: 1,
        filters: [0, 0, 0, 0, 0, 1],
        filtersmeta: [0; 6],
        prefilter: std::ptr::null_mut(),
        pparams: std::ptr::null_mut(),
        udbtune: std::ptr::null_mut(),
    };
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid pointers to live locals.
    assert_eq!(unsafe { caterva_ctx_new(&mut cfg, &mut ctx) }, 0);
    ctx
}

fn storage(cs: &[i32], bs: &[i32], contiguous: bool, urlpath: &CString) -> StorageC {
    // SAFETY: all-zero is valid for this plain C struct (NULL pointers).
    let mut st: StorageC = unsafe { std::mem::zeroed() };
    st.chunkshape[..cs.len()].copy_from_slice(cs);
    st.blockshape[..bs.len()].copy_from_slice(bs);
    st.contiguous = contiguous;
    st.urlpath = urlpath.as_ptr() as *mut c_char;
    st
}

#[test]
fn caterva_created_files_open_through_b2nd_with_both_layers() {
    let dir = scratch("c2b");
    let ctx = new_ctx();
    let (shape, cs, bs) = ([6i64, 5, 4], [4i32, 3, 4], [2i32, 3, 2]);
    for contiguous in [true, false] {
        let path = dir.join(format!("arr-{contiguous}.b2nd"));
        let cpath = CString::new(path.to_str().unwrap()).unwrap();
        let mut data: Vec<u8> = (0..120u32 * 4).map(|i| (i * 7 % 251) as u8).collect();
        let mut params = Params {
            itemsize: 4,
            shape: [0; 8],
            ndim: 3,
        };
        params.shape[..3].copy_from_slice(&shape);
        let mut st = storage(&cs, &bs, contiguous, &cpath);
        let mut arr = std::ptr::null_mut();
        // SAFETY: valid pointers; the buffer holds `len` bytes.
        let rc = unsafe {
            caterva_from_buffer(
                ctx,
                data.as_mut_ptr().cast(),
                data.len() as i64,
                &mut params,
                &mut st,
                &mut arr,
            )
        };
        assert_eq!(rc, 0);
        // SAFETY: `arr` is live; shape grows along the first axis.
        assert_eq!(
            unsafe { caterva_resize(ctx, arr, [8i64, 5, 4].as_ptr(), std::ptr::null()) },
            0
        );
        // SAFETY: `arr` is live.
        assert_eq!(unsafe { (*arr).shape[0] }, 8);
        // SAFETY: live, freed once.
        assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);

        let a = NdArray::open(&path).unwrap();
        assert_eq!(a.shape(), &[8, 5, 4]);
        assert_eq!((a.chunkshape(), a.blockshape()), (&cs[..], &bs[..]));
        let got = a.to_vec().unwrap();
        assert_eq!(&got[..data.len()], &data[..]);
        assert!(got[data.len()..].iter().all(|&b| b == 0));
        // Both layers, in step: b2nd first (python-blosc2 reads it).
        assert_eq!(a.metalayer_names()[0], "b2nd");
        let cat = NdMeta::from_caterva_bytes(&a.metalayer("caterva").unwrap(), 4).unwrap();
        assert_eq!(cat.shape, vec![8, 5, 4]);
        assert_eq!((cat.chunkshape, cat.blockshape), (cs.to_vec(), bs.to_vec()));
        assert_eq!(a.metalayer("caterva").unwrap()[0], 0x95);
    }
    let mut ctx = ctx;
    // SAFETY: live context, freed once.
    assert_eq!(unsafe { caterva_ctx_free(&mut ctx) }, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reads a whole array through the Caterva API.
fn caterva_read(ctx: *mut c_void, path: &std::path::Path, nbytes: usize) -> (Vec<i64>, Vec<u8>) {
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut arr = std::ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
    let mut out = vec![0u8; nbytes];
    // SAFETY: `arr` is live; `out` holds nbytes.
    assert_eq!(
        unsafe { caterva_to_buffer(ctx, arr, out.as_mut_ptr().cast(), nbytes as i64) },
        0
    );
    // SAFETY: `arr` is live.
    let shape = unsafe { (*arr).shape.to_vec() };
    // SAFETY: live, freed once.
    assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
    (shape, out)
}

#[test]
fn b2nd_and_caterva_only_files_open_through_caterva() {
    let dir = scratch("b2c");
    let ctx = new_ctx();
    let (shape, cs, bs) = ([5i64, 7], [3i32, 4], [2i32, 2]);
    let data: Vec<u8> = (0..70).collect();
    // A b2nd-only file.
    let path = dir.join("b2nd-only.b2frame");
    let mut cp = b2nd_core::schunk::CParams::default();
    cp.typesize = 2;
    let st = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cp.clone(),
        ..Storage::default()
    };
    let ctx_b = Context::new(
        ArrayStorage::Schunk(st),
        2,
        &shape,
        &cs,
        &bs,
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    let a = NdArray::from_cbuffer(&ctx_b, &data).unwrap();
    let chunks: Vec<Vec<u8>> = a
        .with_schunk(|sc| {
            (0..sc.nchunks())
                .map(|i| sc.get_chunk(i).map(|c| c.into_owned()))
                .collect()
        })
        .unwrap();
    drop(a);
    let (s, got) = caterva_read(ctx, &path, 70);
    assert_eq!((&s[..2], got.as_slice()), (&shape[..], data.as_slice()));

    // A Caterva-only file, laid out as Caterva 0.5 writes it.
    let cat = NdMeta::new(shape.to_vec(), cs.to_vec(), bs.to_vec(), "", 0)
        .to_caterva_bytes()
        .unwrap();
    for contiguous in [true, false] {
        let path = dir.join(format!("caterva-only-{contiguous}"));
        let mut sc = SChunk::new(Storage {
            contiguous,
            urlpath: Some(path.clone()),
            cparams: cp.clone(),
            ..Storage::default()
        })
        .unwrap();
        sc.meta_add("caterva", &cat).unwrap();
        for c in &chunks {
            sc.append_chunk(c).unwrap();
        }
        drop(sc);
        let (s, got) = caterva_read(ctx, &path, 70);
        assert_eq!((&s[..2], got.as_slice()), (&shape[..], data.as_slice()));
        assert_eq!(NdArray::open(&path).unwrap().to_vec().unwrap(), data);
        // A shape change through Caterva: a frame cannot gain a "b2nd"
        // layer after its data, so the caterva layer alone is rewritten.
        let cpath = CString::new(path.to_str().unwrap()).unwrap();
        let mut arr = std::ptr::null_mut();
        // SAFETY: valid pointers.
        assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
        // SAFETY: live array; ndim 2 values.
        let rc = unsafe { caterva_resize(ctx, arr, [6i64, 7].as_ptr(), std::ptr::null()) };
        assert_eq!(rc, 0);
        // SAFETY: live, freed once.
        assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
        let b = NdArray::open(&path).unwrap();
        assert_eq!(b.shape(), &[6, 7]);
        let m = NdMeta::from_caterva_bytes(&b.metalayer("caterva").unwrap(), 2).unwrap();
        assert_eq!(m.shape, vec![6, 7]);
        let mut grown = data.clone();
        grown.extend_from_slice(&[0; 14]);
        let (s, got) = caterva_read(ctx, &path, 84);
        assert_eq!(
            (&s[..2], got.as_slice()),
            (&[6i64, 7][..], grown.as_slice())
        );
    }
    let mut ctx = ctx;
    // SAFETY: live context, freed once.
    assert_eq!(unsafe { caterva_ctx_free(&mut ctx) }, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn squeeze_works_in_place_on_b2nd_only_and_caterva_arrays() {
    let dir = scratch("squeeze");
    let ctx = new_ctx();
    let data: Vec<u8> = (0..15).collect();
    let path = dir.join("unit-dims.b2frame");
    let mut cp = b2nd_core::schunk::CParams::default();
    cp.typesize = 1;
    let st = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cp,
        ..Storage::default()
    };
    let c = Context::new(
        ArrayStorage::Schunk(st),
        1,
        &[1, 5, 1, 3],
        &[1, 2, 1, 3],
        &[1, 2, 1, 1],
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    drop(NdArray::from_cbuffer(&c, &data).unwrap());
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut arr = std::ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
    // SAFETY: live array.
    assert_eq!(unsafe { caterva_squeeze(ctx, arr) }, 0);
    // SAFETY: live array.
    let (nd, shape, nitems) = unsafe { ((*arr).ndim, (*arr).shape, (*arr).nitems) };
    assert_eq!((nd, &shape[..3], nitems), (2, &[5i64, 3, 1][..], 15));
    let mut out = vec![0u8; 15];
    // SAFETY: live array; `out` holds 15 bytes.
    assert_eq!(
        unsafe { caterva_to_buffer(ctx, arr, out.as_mut_ptr().cast(), 15) },
        0
    );
    assert_eq!(out, data);
    // SAFETY: live, freed once.
    assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
    // In place: the file itself now describes the squeezed array.
    let b = NdArray::open(&path).unwrap();
    assert_eq!(b.shape(), &[5, 3]);
    // The dtype field fills the freed room (19 bytes a dimension) with
    // zeros NumPy ignores: still `|S1`.
    assert_eq!(b.dtype(), format!("|S{}1", "0".repeat(2 * 19)));
    assert_eq!(b.to_vec().unwrap(), data);
    drop(b);

    // Arrays carrying the caterva layer are squeezed the same way.
    let mut params = Params {
        itemsize: 1,
        shape: [0; 8],
        ndim: 2,
    };
    params.shape[..2].copy_from_slice(&[1, 15]);
    let none = CString::new("").unwrap();
    let mut st = storage(&[1, 5], &[1, 5], false, &none);
    st.urlpath = std::ptr::null_mut();
    let mut buf = data.clone();
    // SAFETY: valid pointers; `buf` holds 15 bytes.
    let rc = unsafe {
        caterva_from_buffer(
            ctx,
            buf.as_mut_ptr().cast(),
            15,
            &mut params,
            &mut st,
            &mut arr,
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: live array.
    assert_eq!(unsafe { caterva_squeeze(ctx, arr) }, 0);
    // SAFETY: live array.
    assert_eq!(unsafe { ((*arr).ndim, (*arr).shape[0]) }, (1, 15));
    // SAFETY: live array; `out` holds 15 bytes.
    assert_eq!(
        unsafe { caterva_to_buffer(ctx, arr, out.as_mut_ptr().cast(), 15) },
        0
    );
    assert_eq!(out, data);
    // SAFETY: live, freed once.
    assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
    let mut ctx = ctx;
    // SAFETY: live context, freed once.
    assert_eq!(unsafe { caterva_ctx_free(&mut ctx) }, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Caterva-only file (as Caterva 0.5 writes it) squeezed in place: the
/// `caterva` record is rewritten in its slot so that Caterva's positional
/// reader, the b2nd reader and a later resize all work on it.
#[test]
fn caterva_only_files_squeeze_in_place_and_stay_readable() {
    let dir = scratch("squeeze-cat");
    let ctx = new_ctx();
    let (shape, cs, bs) = ([1i64, 6, 1, 4], [1i32, 3, 1, 2], [1i32, 2, 1, 1]);
    let data: Vec<u8> = (0..48).map(|i| (i * 5 + 1) as u8).collect();
    let mut cp = b2nd_core::schunk::CParams::default();
    cp.typesize = 2;
    // The chunks, from an in-memory b2nd array of the same geometry.
    let c = Context::new(
        ArrayStorage::default(),
        2,
        &shape,
        &cs,
        &bs,
        None,
        0,
        Vec::new(),
    )
    .unwrap();
    let chunks: Vec<Vec<u8>> = NdArray::from_cbuffer(&c, &data)
        .unwrap()
        .with_schunk(|sc| {
            (0..sc.nchunks())
                .map(|i| sc.get_chunk(i).map(|c| c.into_owned()))
                .collect()
        })
        .unwrap();
    let cat = NdMeta::new(shape.to_vec(), cs.to_vec(), bs.to_vec(), "", 0)
        .to_caterva_bytes()
        .unwrap();
    for contiguous in [true, false] {
        let path = dir.join(format!("caterva-only-{contiguous}"));
        let mut sc = SChunk::new(Storage {
            contiguous,
            urlpath: Some(path.clone()),
            cparams: cp.clone(),
            ..Storage::default()
        })
        .unwrap();
        sc.meta_add("caterva", &cat).unwrap();
        for c in &chunks {
            sc.append_chunk(c).unwrap();
        }
        drop(sc);
        let cpath = CString::new(path.to_str().unwrap()).unwrap();
        let mut arr = std::ptr::null_mut();
        // SAFETY: valid pointers.
        assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
        // SAFETY: live array.
        let sc_before = unsafe { (*arr).sc };
        // SAFETY: live array.
        assert_eq!(unsafe { caterva_squeeze(ctx, arr) }, 0);
        // SAFETY: live array.
        let (nd, sh, sc_after) = unsafe { ((*arr).ndim, (*arr).shape, (*arr).sc) };
        assert_eq!((nd, &sh[..2]), (2, &[6i64, 4][..]));
        assert_eq!(sc_before, sc_after);
        // SAFETY: live, freed once.
        assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);

        // Still a Caterva-only file, of the stored slot's length.
        let sc = SChunk::open(&path).unwrap();
        assert!(sc.meta_get("b2nd").is_err());
        let stored = sc.meta_get("caterva").unwrap();
        assert_eq!(stored.len(), cat.len());
        let fresh = NdMeta::new(vec![6, 4], vec![3, 2], vec![2, 1], "", 0)
            .to_caterva_bytes()
            .unwrap();
        // A 7-element msgpack record (its dtype fills the slot); Caterva's
        // reader skips the header byte and reads the squeezed geometry.
        assert_eq!(stored[0], 0x97);
        assert_eq!(&stored[1..fresh.len()], &fresh[1..]);
        drop(sc);
        let b = NdArray::open(&path).unwrap();
        assert_eq!(b.shape(), &[6, 4]);
        assert_eq!(b.to_vec().unwrap(), data);
        drop(b);
        let (s, got) = caterva_read(ctx, &path, 48);
        assert_eq!((&s[..2], got.as_slice()), (&[6i64, 4][..], data.as_slice()));

        // A resize after the squeeze rewrites the record in place again.
        // SAFETY: valid pointers.
        assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
        // SAFETY: live array; ndim 2 values.
        let rc = unsafe { caterva_resize(ctx, arr, [7i64, 4].as_ptr(), std::ptr::null()) };
        assert_eq!(rc, 0);
        // SAFETY: live, freed once.
        assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
        let mut grown = data.clone();
        grown.extend_from_slice(&[0; 8]);
        let (s, got) = caterva_read(ctx, &path, 56);
        assert_eq!(
            (&s[..2], got.as_slice()),
            (&[7i64, 4][..], grown.as_slice())
        );
    }
    let mut ctx = ctx;
    // SAFETY: live context, freed once.
    assert_eq!(unsafe { caterva_ctx_free(&mut ctx) }, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A dtype that cannot be widened to fill the squeezed `b2nd` slot (not
/// `<code><size>`) makes the squeeze a refusal that leaves the file as it
/// was.
#[test]
fn squeeze_refuses_dtypes_it_cannot_widen() {
    let dir = scratch("squeeze-dtype");
    let ctx = new_ctx();
    let path = dir.join("datetime.b2frame");
    let mut cp = b2nd_core::schunk::CParams::default();
    cp.typesize = 8;
    let st = Storage {
        contiguous: true,
        urlpath: Some(path.clone()),
        cparams: cp,
        ..Storage::default()
    };
    let c = Context::new(
        ArrayStorage::Schunk(st),
        8,
        &[1, 4],
        &[1, 2],
        &[1, 1],
        Some("<M8[ns]"),
        0,
        Vec::new(),
    )
    .unwrap();
    let data: Vec<u8> = (0..32).collect();
    drop(NdArray::from_cbuffer(&c, &data).unwrap());
    let before = std::fs::read(&path).unwrap();
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut arr = std::ptr::null_mut();
    // SAFETY: valid pointers.
    assert_eq!(unsafe { caterva_open(ctx, cpath.as_ptr(), &mut arr) }, 0);
    // SAFETY: live array.
    assert_eq!(unsafe { caterva_squeeze(ctx, arr) }, 1);
    // SAFETY: live array, unchanged.
    assert_eq!(unsafe { ((*arr).ndim, (*arr).shape[0]) }, (2, 1));
    // SAFETY: live, freed once.
    assert_eq!(unsafe { caterva_free(ctx, &mut arr) }, 0);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(NdArray::open(&path).unwrap().dtype(), "<M8[ns]");
    let mut ctx = ctx;
    // SAFETY: live context, freed once.
    assert_eq!(unsafe { caterva_ctx_free(&mut ctx) }, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
