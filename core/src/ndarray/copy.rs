//! Strided copies between N-dimensional C-order buffers.
//!
//! [`copy_nd`] moves the box `[src_start, src_stop)` of one buffer to
//! `dst_start` in another, both buffers being dense C-order arrays of their
//! (padded) shapes: the semantics of the reference's `b2nd_copy_buffer2`,
//! with every bound checked before the first byte moves.
//!
//! Speed comes from shrinking the loop nest before running it: dimensions
//! copied with length 1 disappear, the innermost dimensions that are whole in
//! both buffers fold into one contiguous run (one `copy_from_slice` each),
//! and outer dimensions that are contiguous with each other merge. A copy of
//! whole rows thus becomes a single memcpy.

use super::meta::MAX_DIM;
use crate::Result;

/// One loop of the reduced nest: iteration count and the byte step in each
/// buffer.
#[derive(Debug, Clone, Copy)]
struct Loop {
    count: usize,
    src_step: usize,
    dst_step: usize,
}

/// C-order item strides of `shape`, checked for overflow.
fn strides(shape: &[i64], out: &mut [i64; MAX_DIM]) -> Result<()> {
    let mut s = 1i64;
    for i in (0..shape.len()).rev() {
        out[i] = s;
        s = s
            .checked_mul(shape[i])
            .ok_or_else(|| crate::err!(InvalidParam, "buffer shape {shape:?} overflows int64"))?;
    }
    Ok(())
}

/// Byte offset of `coords` and the number of bytes needed up to the item
/// at `last` inclusive, checked against the buffer length.
fn byte_span(
    strides: &[i64; MAX_DIM],
    first: &[i64],
    last: impl Iterator<Item = i64>,
    typesize: usize,
    buf_len: usize,
    which: &str,
) -> Result<usize> {
    let overflow = || crate::err!(InvalidParam, "{which} offsets overflow");
    let mut first_item = 0i64;
    for (i, &c) in first.iter().enumerate() {
        first_item = first_item
            .checked_add(c.checked_mul(strides[i]).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
    }
    let mut last_item = 0i64;
    for (i, c) in last.enumerate() {
        last_item = last_item
            .checked_add(c.checked_mul(strides[i]).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
    }
    let end = usize::try_from(last_item)
        .ok()
        .and_then(|l| l.checked_add(1))
        .and_then(|n| n.checked_mul(typesize))
        .ok_or_else(overflow)?;
    if end > buf_len {
        crate::bail!(
            InvalidParam,
            "{which} buffer of {buf_len} bytes is too small: the copy reaches byte {end}"
        );
    }
    // first_item <= last_item, so this fits too.
    Ok(first_item as usize * typesize)
}

/// Copies the box `[src_start, src_stop)` of `src` (a C-order array of shape
/// `src_shape`, items of `typesize` bytes) into `dst` (shape `dst_shape`) at
/// `dst_start`. All shapes and coordinates have `ndim` entries; `ndim == 0`
/// copies the single item.
///
/// Errors (`InvalidParam`): `typesize == 0`, `ndim > 16` or mismatched
/// lengths, a source box not inside `[0, src_shape)`, a destination box not
/// inside `[0, dst_shape)`, or a buffer too short for the items the copy
/// touches. Nothing is written when an error is returned. An empty box
/// copies nothing (its bounds are still checked).
#[allow(clippy::too_many_arguments)]
pub fn copy_nd(
    typesize: usize,
    src: &[u8],
    src_shape: &[i64],
    src_start: &[i64],
    src_stop: &[i64],
    dst: &mut [u8],
    dst_shape: &[i64],
    dst_start: &[i64],
) -> Result<()> {
    let ndim = src_shape.len();
    if typesize == 0 {
        crate::bail!(InvalidParam, "typesize must be positive");
    }
    if ndim > MAX_DIM {
        crate::bail!(InvalidParam, "ndim {ndim} exceeds the maximum of {MAX_DIM}");
    }
    if src_start.len() != ndim
        || src_stop.len() != ndim
        || dst_shape.len() != ndim
        || dst_start.len() != ndim
    {
        crate::bail!(
            InvalidParam,
            "copy_nd: shapes and coordinates must all have {ndim} entries"
        );
    }
    let mut count = [0i64; MAX_DIM];
    for i in 0..ndim {
        if src_start[i] < 0 || src_start[i] > src_stop[i] || src_stop[i] > src_shape[i] {
            crate::bail!(
                InvalidParam,
                "source box [{}, {}) not inside [0, {}) in dimension {i}",
                src_start[i],
                src_stop[i],
                src_shape[i]
            );
        }
        count[i] = src_stop[i] - src_start[i];
        let fits = dst_start[i]
            .checked_add(count[i])
            .is_some_and(|end| dst_start[i] >= 0 && end <= dst_shape[i]);
        if !fits {
            crate::bail!(
                InvalidParam,
                "destination box at {} of length {} not inside [0, {}) in dimension {i}",
                dst_start[i],
                count[i],
                dst_shape[i]
            );
        }
    }
    if count[..ndim].contains(&0) {
        return Ok(());
    }

    let mut src_strides = [0i64; MAX_DIM];
    let mut dst_strides = [0i64; MAX_DIM];
    strides(src_shape, &mut src_strides)?;
    strides(dst_shape, &mut dst_strides)?;
    let src_base = byte_span(
        &src_strides,
        src_start,
        src_stop.iter().map(|&s| s - 1),
        typesize,
        src.len(),
        "source",
    )?;
    let dst_last = (0..ndim).map(|i| dst_start[i] + count[i] - 1);
    let dst_base = byte_span(
        &dst_strides,
        dst_start,
        dst_last,
        typesize,
        dst.len(),
        "destination",
    )?;

    // From here on every offset is below the end checked above, so the
    // usize arithmetic cannot overflow.
    let mut loops = [Loop {
        count: 0,
        src_step: 0,
        dst_step: 0,
    }; MAX_DIM];
    let mut nloops = 0;
    let mut run = 1usize; // contiguous items per copy
    let mut folding = true;
    for i in (0..ndim).rev() {
        let n = count[i] as usize;
        if n == 1 {
            continue;
        }
        let (ss, ds) = (src_strides[i] as usize, dst_strides[i] as usize);
        if folding && ss == run && ds == run {
            run *= n;
            continue;
        }
        folding = false;
        // Merge with the loop just inside when this dimension steps over
        // exactly all of it in both buffers.
        if nloops > 0 {
            let inner = loops[nloops - 1];
            if ss * typesize == inner.src_step * inner.count
                && ds * typesize == inner.dst_step * inner.count
            {
                loops[nloops - 1].count *= n;
                continue;
            }
        }
        loops[nloops] = Loop {
            count: n,
            src_step: ss * typesize,
            dst_step: ds * typesize,
        };
        nloops += 1;
    }
    // Innermost loop first in `loops`; run it outermost-last.
    let run_bytes = run * typesize;
    let src = &src[src_base..];
    let dst = &mut dst[dst_base..];
    match nloops {
        0 => dst[..run_bytes].copy_from_slice(&src[..run_bytes]),
        1 => copy_rows(src, dst, loops[0], run_bytes),
        _ => copy_nest(src, dst, &loops[..nloops], run_bytes),
    }
    Ok(())
}

/// `l.count` runs of `run_bytes`, each `l.src_step` / `l.dst_step` apart
/// (both steps are at least `run_bytes`, and the buffers were checked to
/// hold the last run). Short runs of common item sizes get a fixed-size copy
/// instead of a `memcpy` call per run.
fn copy_rows(src: &[u8], dst: &mut [u8], l: Loop, run_bytes: usize) {
    match run_bytes {
        1 => rows_fixed::<1>(src, dst, l),
        2 => rows_fixed::<2>(src, dst, l),
        4 => rows_fixed::<4>(src, dst, l),
        8 => rows_fixed::<8>(src, dst, l),
        16 => rows_fixed::<16>(src, dst, l),
        _ => {
            let rows = src
                .chunks(l.src_step)
                .zip(dst.chunks_mut(l.dst_step))
                .take(l.count);
            for (s, d) in rows {
                d[..run_bytes].copy_from_slice(&s[..run_bytes]);
            }
        }
    }
}

fn rows_fixed<const N: usize>(src: &[u8], dst: &mut [u8], l: Loop) {
    let rows = src
        .chunks(l.src_step)
        .zip(dst.chunks_mut(l.dst_step))
        .take(l.count);
    for (s, d) in rows {
        d[..N].copy_from_slice(&s[..N]);
    }
}

/// The general nest: an odometer over the outer loops (all but the
/// innermost, which `copy_rows` runs), keeping byte offsets incrementally.
fn copy_nest(src: &[u8], dst: &mut [u8], loops: &[Loop], run_bytes: usize) {
    let (inner, outer) = loops.split_first().expect("at least two loops");
    let mut idx = [0usize; MAX_DIM];
    let (mut so, mut doff) = (0usize, 0usize);
    loop {
        copy_rows(&src[so..], &mut dst[doff..], *inner, run_bytes);
        let mut k = 0;
        loop {
            if k == outer.len() {
                return;
            }
            let l = outer[k];
            if idx[k] + 1 < l.count {
                idx[k] += 1;
                so += l.src_step;
                doff += l.dst_step;
                break;
            }
            so -= l.src_step * idx[k];
            doff -= l.dst_step * idx[k];
            idx[k] = 0;
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_a_2d_window() {
        // 4 x 5 source of bytes 0..20, window rows 1..3, cols 2..5, into a
        // 3 x 4 destination at (0, 1).
        let src: Vec<u8> = (0..20).collect();
        let mut dst = vec![0xeeu8; 12];
        copy_nd(
            1,
            &src,
            &[4, 5],
            &[1, 2],
            &[3, 5],
            &mut dst,
            &[3, 4],
            &[0, 1],
        )
        .unwrap();
        assert_eq!(
            dst,
            [0xee, 7, 8, 9, 0xee, 12, 13, 14, 0xee, 0xee, 0xee, 0xee]
        );
    }

    #[test]
    fn whole_rows_become_one_copy_and_zero_d_copies_one_item() {
        let src: Vec<u8> = (0..24).collect();
        let mut dst = vec![0u8; 24];
        copy_nd(
            2,
            &src,
            &[3, 4],
            &[1, 0],
            &[3, 4],
            &mut dst,
            &[3, 4],
            &[0, 0],
        )
        .unwrap();
        assert_eq!(&dst[..16], &src[8..24]);
        assert_eq!(&dst[16..], &[0; 8]);
        let mut one = [0u8; 3];
        copy_nd(3, &[7, 8, 9], &[], &[], &[], &mut one, &[], &[]).unwrap();
        assert_eq!(one, [7, 8, 9]);
    }

    #[test]
    fn empty_box_writes_nothing() {
        let mut dst = vec![1u8; 4];
        copy_nd(
            1,
            &[],
            &[0, 4],
            &[0, 0],
            &[0, 4],
            &mut dst,
            &[1, 4],
            &[0, 0],
        )
        .unwrap();
        assert_eq!(dst, [1; 4]);
    }

    #[test]
    fn rejections() {
        let src = [0u8; 16];
        let mut dst = [0u8; 16];
        let mut run = |ts, ss: &[i64], a: &[i64], b: &[i64], ds: &[i64], d: &[i64], dl: usize| {
            copy_nd(ts, &src, ss, a, b, &mut dst[..dl], ds, d)
                .unwrap_err()
                .code()
        };
        assert_eq!(run(0, &[4], &[0], &[1], &[4], &[0], 16), -12);
        assert_eq!(run(1, &[4], &[0], &[5], &[8], &[0], 16), -12);
        assert_eq!(run(1, &[4], &[3], &[2], &[8], &[0], 16), -12);
        assert_eq!(run(1, &[4], &[-1], &[2], &[8], &[0], 16), -12);
        assert_eq!(run(1, &[4], &[0], &[4], &[8], &[5], 16), -12);
        assert_eq!(run(1, &[4], &[0], &[4], &[8], &[-1], 16), -12);
        assert_eq!(run(1, &[4], &[0], &[4], &[8], &[i64::MAX], 16), -12);
        assert_eq!(run(1, &[4, 4], &[0], &[4], &[8], &[0], 16), -12);
        assert_eq!(run(1, &[32], &[0], &[20], &[32], &[0], 16), -12);
        assert_eq!(run(8, &[4], &[0], &[4], &[4], &[0], 16), -12);
        assert_eq!(run(1, &[4], &[0], &[4], &[4], &[0], 3), -12);
        assert_eq!(
            run(1, &[1; 17], &[0; 17], &[1; 17], &[1; 17], &[0; 17], 16),
            -12
        );
        assert_eq!(
            run(1, &[i64::MAX, 4], &[0, 0], &[1, 1], &[1, 1], &[0, 0], 16),
            -12
        );
        assert_eq!(dst, [0; 16]);
    }
}
