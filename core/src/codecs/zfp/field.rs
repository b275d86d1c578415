//! A whole b2nd block as zfp sees it: a 1- to 4-D array of items cut into
//! cells of 4 per side, coded one after the other with the first array
//! dimension outermost and the last (contiguous) one innermost. Cells cut by
//! the array's edge are completed before coding by repeating the items they
//! have (one item is repeated three times; two as a,b,b,a; three as
//! a,b,c,a), one axis after the other, and only their in-array items are
//! written back when decoding.

use super::bitstream::{Reader, Writer};
use super::block::{self, Params, MAX_VALUES};
use super::scalar::Real;

/// Extents and strides (in items) of the array, axis 0 the contiguous one.
pub(super) struct Field {
    dims: usize,
    ext: [usize; 4],
    stride: [usize; 4],
}

impl Field {
    /// The field of a C-order array of `shape` (1 to 4 extents, none zero).
    pub(super) fn new(shape: &[usize]) -> Self {
        let dims = shape.len();
        debug_assert!((1..=4).contains(&dims));
        let mut ext = [1usize; 4];
        let mut stride = [0usize; 4];
        let mut s = 1usize;
        for a in 0..dims {
            ext[a] = shape[dims - 1 - a];
            stride[a] = s;
            s *= ext[a];
        }
        Field { dims, ext, stride }
    }

    /// Calls `f(origin item, in-array extents)` for each cell in coding order.
    fn for_each_cell(&self, mut f: impl FnMut(usize, [usize; 4])) {
        let d = self.dims;
        let mut at = [0usize; 4];
        loop {
            let mut base = 0;
            let mut cnt = [1usize; 4];
            for a in 0..d {
                base += at[a] * self.stride[a];
                cnt[a] = (self.ext[a] - at[a]).min(4);
            }
            f(base, cnt);
            // Next cell: axis 0 fastest.
            let mut a = 0;
            loop {
                if a == d {
                    return;
                }
                at[a] += 4;
                if at[a] < self.ext[a] {
                    break;
                }
                at[a] = 0;
                a += 1;
            }
        }
    }

    /// The cell holding item `item` of the C-order array (its number in
    /// coding order) and the item's place among the cell's values.
    pub(super) fn cell_of(&self, item: usize) -> (usize, usize) {
        let (mut cell, mut cells_before, mut within) = (0, 1, 0);
        for a in 0..self.dims {
            let coord = (item / self.stride[a]) % self.ext[a];
            cell += (coord / 4) * cells_before;
            cells_before *= self.ext[a].div_ceil(4);
            within |= (coord % 4) << (2 * a);
        }
        (cell, within)
    }

    /// Offsets (in items, from a cell's origin) of a whole cell's values,
    /// in the cell's own order (x fastest).
    fn cell_offsets(&self) -> [usize; MAX_VALUES] {
        let mut off = [0usize; MAX_VALUES];
        for (i, o) in off.iter_mut().enumerate().take(1 << (2 * self.dims)) {
            *o = (0..self.dims)
                .map(|a| ((i >> (2 * a)) & 3) * self.stride[a])
                .sum();
        }
        off
    }
}

/// Whether a cell position lies inside extents `cnt`.
fn inside(i: usize, dims: usize, cnt: &[usize; 4]) -> bool {
    (0..dims).all(|a| (i >> (2 * a)) & 3 < cnt[a])
}

/// Completes a cut line of four (`have` of them given) along stride `s`.
fn pad_line<R: Real>(v: &mut [R], at: usize, s: usize, have: usize) {
    match have {
        0 => {
            for j in 0..4 {
                v[at + j * s] = R::default();
            }
        }
        1 => {
            let a = v[at];
            v[at + s] = a;
            v[at + 2 * s] = a;
            v[at + 3 * s] = a;
        }
        2 => {
            v[at + 2 * s] = v[at + s];
            v[at + 3 * s] = v[at];
        }
        3 => v[at + 3 * s] = v[at],
        _ => {}
    }
}

/// Completes a cut cell: axis by axis, the lines whose later coordinates
/// are inside the array.
fn pad_cell<R: Real>(v: &mut [R], dims: usize, cnt: &[usize; 4]) {
    let n = 1usize << (2 * dims);
    for a in 0..dims {
        if cnt[a] == 4 {
            continue;
        }
        let s = 1usize << (2 * a);
        for i in 0..n {
            let start_of_line = (i >> (2 * a)) & 3 == 0;
            let later_inside = (a + 1..dims).all(|b| (i >> (2 * b)) & 3 < cnt[b]);
            if start_of_line && later_inside {
                pad_line(v, i, s, cnt[a]);
            }
        }
    }
}

/// Codes the array in `src` (items of `R`, little-endian). The caller has
/// checked that `src` holds exactly the field's items.
pub(super) fn encode<R: Real>(f: &Field, p: &Params, src: &[u8], w: &mut Writer<'_>) {
    let n = 1usize << (2 * f.dims);
    let off = f.cell_offsets();
    let mut cell = [R::default(); MAX_VALUES];
    f.for_each_cell(|base, cnt| {
        let whole = cnt[..f.dims].iter().all(|&c| c == 4);
        for i in 0..n {
            if whole || inside(i, f.dims, &cnt) {
                let at = (base + off[i]) * R::BYTES;
                cell[i] = R::from_le(&src[at..at + R::BYTES]);
            }
        }
        if !whole {
            pad_cell(&mut cell[..n], f.dims, &cnt);
        }
        block::encode(w, p, f.dims, &cell[..n]);
    });
}

/// Decodes the array into `dst` (exactly the field's items).
pub(super) fn decode<R: Real>(f: &Field, p: &Params, r: &mut Reader<'_>, dst: &mut [u8]) {
    let n = 1usize << (2 * f.dims);
    let off = f.cell_offsets();
    let mut cell = [R::default(); MAX_VALUES];
    f.for_each_cell(|base, cnt| {
        block::decode(r, p, f.dims, &mut cell[..n]);
        let whole = cnt[..f.dims].iter().all(|&c| c == 4);
        for i in 0..n {
            if whole || inside(i, f.dims, &cnt) {
                let at = (base + off[i]) * R::BYTES;
                cell[i].put_le(&mut dst[at..at + R::BYTES]);
            }
        }
    });
}

/// Decodes the cell at `r` and writes its values from number `within` on
/// (consecutive along the contiguous axis) into `dst`.
pub(super) fn decode_cell_items<R: Real>(
    f: &Field,
    p: &Params,
    r: &mut Reader<'_>,
    within: usize,
    dst: &mut [u8],
) {
    let n = 1usize << (2 * f.dims);
    let mut cell = [R::default(); MAX_VALUES];
    block::decode(r, p, f.dims, &mut cell[..n]);
    for (v, out) in cell[within..n].iter().zip(dst.chunks_exact_mut(R::BYTES)) {
        v.put_le(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_go_last_axis_fastest_with_cut_extents() {
        let f = Field::new(&[5, 9]);
        let mut seen = vec![];
        f.for_each_cell(|base, cnt| seen.push((base, cnt[0], cnt[1])));
        assert_eq!(
            seen,
            vec![
                (0, 4, 4),
                (4, 4, 4),
                (8, 1, 4),
                (36, 4, 1),
                (40, 4, 1),
                (44, 1, 1)
            ]
        );
    }

    #[test]
    fn cut_cells_are_completed_by_repetition() {
        // 2-D cell with 3 columns and 2 rows given.
        let mut v = [0f32; 16];
        for y in 0..2 {
            for x in 0..3 {
                v[4 * y + x] = (10 * y + x) as f32 + 1.0;
            }
        }
        pad_cell(&mut v, 2, &[3, 2, 1, 1]);
        let want = [
            1.0, 2.0, 3.0, 1.0, //
            11.0, 12.0, 13.0, 11.0, //
            11.0, 12.0, 13.0, 11.0, //
            1.0, 2.0, 3.0, 1.0,
        ];
        assert_eq!(v, want);
        let mut v = [7f64, 0.0, 0.0, 0.0];
        pad_cell(&mut v, 1, &[1, 1, 1, 1]);
        assert_eq!(v, [7.0; 4]);
    }
}
