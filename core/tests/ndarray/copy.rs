//! copy_nd against a naive item-by-item copy over random shapes, boxes and
//! typesizes, including buffers cut short (which must fail untouched).

use b2nd_core::ndarray::copy_nd;

use crate::common;
use common::Rng;

/// Item-by-item reference: visit every item of the box in C order.
#[allow(clippy::too_many_arguments)]
fn naive_copy(
    ts: usize,
    src: &[u8],
    src_shape: &[i64],
    start: &[i64],
    stop: &[i64],
    dst: &mut [u8],
    dst_shape: &[i64],
    dst_start: &[i64],
) {
    let n = src_shape.len();
    let counts: Vec<i64> = (0..n).map(|i| stop[i] - start[i]).collect();
    let total: i64 = counts.iter().product();
    for k in 0..total {
        let mut rest = k;
        let mut pos = vec![0i64; n];
        for i in (0..n).rev() {
            pos[i] = rest % counts[i];
            rest /= counts[i];
        }
        let (mut s, mut d) = (0i64, 0i64);
        for i in 0..n {
            s = s * src_shape[i] + start[i] + pos[i];
            d = d * dst_shape[i] + dst_start[i] + pos[i];
        }
        let (s, d) = (s as usize * ts, d as usize * ts);
        dst[d..d + ts].copy_from_slice(&src[s..s + ts]);
    }
}

struct Case {
    ts: usize,
    src_shape: Vec<i64>,
    start: Vec<i64>,
    stop: Vec<i64>,
    dst_shape: Vec<i64>,
    dst_start: Vec<i64>,
}

fn random_case(rng: &mut Rng) -> Case {
    let ts = [1usize, 2, 4, 8, 13][rng.below(5) as usize];
    let n = rng.below(6) as usize;
    let mut c = Case {
        ts,
        src_shape: vec![],
        start: vec![],
        stop: vec![],
        dst_shape: vec![],
        dst_start: vec![],
    };
    for _ in 0..n {
        let s = rng.below(7);
        // Whole dimension half of the time, to exercise row merging.
        let (a, b) = if rng.below(2) == 0 {
            (0, s)
        } else {
            let a = rng.below(s + 1);
            (a, a + rng.below(s - a + 1))
        };
        let len = b - a;
        // The destination is often exactly the box (contiguous), else padded.
        let (ds, d0) = if rng.below(2) == 0 {
            (len, 0)
        } else {
            let extra = rng.below(4);
            let d0 = rng.below(extra + 1);
            (len + extra, d0)
        };
        c.src_shape.push(s);
        c.start.push(a);
        c.stop.push(b);
        c.dst_shape.push(ds);
        c.dst_start.push(d0);
    }
    c
}

fn nbytes(shape: &[i64], ts: usize) -> usize {
    shape.iter().product::<i64>() as usize * ts
}

#[test]
fn matches_naive_copy_on_random_boxes() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let mut nonempty = 0;
    for _ in 0..6000 {
        let c = random_case(&mut rng);
        let src: Vec<u8> = (0..nbytes(&c.src_shape, c.ts))
            .map(|_| rng.next() as u8)
            .collect();
        let fill: Vec<u8> = (0..nbytes(&c.dst_shape, c.ts))
            .map(|_| rng.next() as u8)
            .collect();
        let mut want = fill.clone();
        naive_copy(
            c.ts,
            &src,
            &c.src_shape,
            &c.start,
            &c.stop,
            &mut want,
            &c.dst_shape,
            &c.dst_start,
        );
        let mut got = fill.clone();
        copy_nd(
            c.ts,
            &src,
            &c.src_shape,
            &c.start,
            &c.stop,
            &mut got,
            &c.dst_shape,
            &c.dst_start,
        )
        .unwrap();
        assert_eq!(
            got, want,
            "ts {} src {:?} box {:?}..{:?} dst {:?} at {:?}",
            c.ts, c.src_shape, c.start, c.stop, c.dst_shape, c.dst_start
        );
        nonempty += (want != fill) as usize;
    }
    assert!(nonempty > 2000, "too few copies moved data ({nonempty})");
}

/// A buffer shorter than the last item the copy touches is refused, and the
/// destination is left untouched; one exactly long enough is accepted.
#[test]
fn short_buffers_fail_cleanly() {
    let mut rng = Rng(0x5eed);
    let mut refused = 0;
    for _ in 0..3000 {
        let c = random_case(&mut rng);
        let n = c.src_shape.len();
        if (0..n).any(|i| c.start[i] == c.stop[i]) {
            continue;
        }
        // Bytes needed: up to and including the box's last item.
        let last = |shape: &[i64], at: &dyn Fn(usize) -> i64| -> usize {
            let mut lin = 0i64;
            for i in 0..n {
                lin = lin * shape[i] + at(i);
            }
            (lin as usize + 1) * c.ts
        };
        let src_need = last(&c.src_shape, &|i| c.stop[i] - 1);
        let dst_need = last(&c.dst_shape, &|i| {
            c.dst_start[i] + c.stop[i] - c.start[i] - 1
        });
        let src: Vec<u8> = (0..src_need).map(|_| rng.next() as u8).collect();
        let mut dst = vec![0xa5u8; dst_need];
        copy_nd(
            c.ts,
            &src,
            &c.src_shape,
            &c.start,
            &c.stop,
            &mut dst,
            &c.dst_shape,
            &c.dst_start,
        )
        .expect("exact-length buffers suffice");
        let cut = 1 + rng.below(c.ts as i64) as usize;
        let mut dst2 = vec![0xa5u8; dst_need];
        let e = copy_nd(
            c.ts,
            &src[..src_need - cut],
            &c.src_shape,
            &c.start,
            &c.stop,
            &mut dst2,
            &c.dst_shape,
            &c.dst_start,
        );
        assert_eq!(e.unwrap_err().code(), -12);
        let mut short = vec![0xa5u8; dst_need - cut];
        let e = copy_nd(
            c.ts,
            &src,
            &c.src_shape,
            &c.start,
            &c.stop,
            &mut short,
            &c.dst_shape,
            &c.dst_start,
        );
        assert_eq!(e.unwrap_err().code(), -12);
        assert!(short.iter().all(|&b| b == 0xa5), "nothing written on error");
        refused += 1;
    }
    assert!(refused > 500);
}

#[test]
fn large_copies_use_the_merged_paths_correctly() {
    // 3-D source 40 x 50 x 64 (typesize 4). Copy (a) whole rows of the last
    // two dimensions, (b) a window with partial rows, (c) a window whose
    // middle dimension is full in both buffers so two loops merge.
    let shape = [40i64, 50, 64];
    let ts = 4;
    let src: Vec<u8> = (0..nbytes(&shape, ts))
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    let cases: [([i64; 3], [i64; 3], [i64; 3], [i64; 3]); 3] = [
        ([5, 0, 0], [25, 50, 64], [20, 50, 64], [0, 0, 0]),
        ([3, 7, 11], [30, 41, 60], [30, 40, 55], [1, 2, 3]),
        ([0, 0, 8], [40, 50, 40], [41, 50, 32], [1, 0, 0]),
    ];
    for (start, stop, dst_shape, dst_start) in cases {
        let mut want = vec![0u8; nbytes(&dst_shape, ts)];
        naive_copy(
            ts, &src, &shape, &start, &stop, &mut want, &dst_shape, &dst_start,
        );
        let mut got = vec![0u8; want.len()];
        copy_nd(
            ts, &src, &shape, &start, &stop, &mut got, &dst_shape, &dst_start,
        )
        .unwrap();
        assert!(got == want, "box {start:?}..{stop:?}");
    }
}
