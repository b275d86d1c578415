//! The filter pipeline applied to one block: forward before the codec,
//! backward after it. Six slots run in increasing order when compressing and
//! in decreasing order when decompressing; the lossy TRUNC_PREC and INT_TRUNC
//! have no backward step.
//!
//! The reference's globally registered filters (ids 32..=36) run here too:
//! NDCELL and NDMEAN (32, 33; they need the b2nd block shape, see
//! `CParams::block_shape`), BYTEDELTA (35), its older BYTEDELTA_BUGGY (34) and
//! INT_TRUNC (36).

use super::page_buf::PageBuf;
use super::Fmt;
use crate::codecs::registry::{self, CallInfo};
use crate::filters::{bytedelta, shuffle_bytedelta};

/// Whether slot `f` does anything when compressing.
fn active_forward(f: u8) -> bool {
    f != Fmt::NOFILTER
}

/// Whether slot `f` does anything when decompressing.
const fn active_backward(f: u8) -> bool {
    f != Fmt::NOFILTER && f != Fmt::TRUNC_PREC && f != Fmt::INT_TRUNC
}

/// Whether any filter runs when compressing.
pub(crate) fn any_forward(filters: &[u8; 6]) -> bool {
    filters.iter().any(|&f| active_forward(f))
}

/// Whether any filter runs when decompressing.
pub(crate) fn any_backward(filters: &[u8; 6]) -> bool {
    filters.iter().any(|&f| active_backward(f))
}

/// How many bytes a byte shuffle groups: its meta when set, else the
/// typesize (the reference's rule, in both directions).
fn shuffle_group(meta: u8, typesize: usize) -> usize {
    match meta {
        0 => typesize,
        m => usize::from(m),
    }
}

/// The item size of the byte shuffle (see [`shuffle_group`]) when it is the
/// only filter that runs when decompressing; `None` when another filter runs
/// too, or none does. The definition [`Slots::sole_shuffle_group`] is
/// tested against.
#[cfg(test)]
fn sole_shuffle_group(
    filters: &[u8; 6],
    meta: &[u8; 6],
    typesize: usize,
) -> Option<usize> {
    let mut active = (0..6).filter(|&i| active_backward(filters[i]));
    match (active.next(), active.next()) {
        (Some(i), None) if filters[i] == Fmt::SHUFFLE => Some(shuffle_group(meta[i], typesize)),
        _ => None,
    }
}

/// What a decoder needs to know of a chunk's filter slots, from one pass
/// over them: a small call validates its chunk on every call, where a pass
/// per question showed (`scripts/instructions.sh
/// small/decompress_ctx/blosclz/1024B`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slots {
    /// How many slots run when decompressing, and the last of them.
    active: usize,
    last_active: usize,
    /// Whether a slot holds DELTA.
    pub(crate) has_delta: bool,
    /// Whether every slot decodes from its block alone ([`reads_only_its_block`]).
    pub(crate) local: bool,
}

/// Per filter id, what [`Slots::of`] asks of it, as bits: one table load
/// a slot instead of a comparison per question.
const SLOT_ACTIVE: u8 = 1;
const SLOT_DELTA: u8 = 2;
const SLOT_LOCAL: u8 = 4;
static SLOT_BITS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut f = 0;
    while f < 256 {
        let id = f as u8;
        if active_backward(id) {
            t[f] |= SLOT_ACTIVE;
        }
        if id == Fmt::DELTA {
            t[f] |= SLOT_DELTA;
        }
        if reads_only_its_block(id) {
            t[f] |= SLOT_LOCAL;
        }
        f += 1;
    }
    t
};

impl Slots {
    #[inline]
    pub(crate) fn of(filters: &[u8; 6]) -> Self {
        let (mut active, mut last_active, mut any, mut all) = (0, 0, 0u8, !0u8);
        for (i, &f) in filters.iter().enumerate() {
            let bits = SLOT_BITS[usize::from(f)];
            if bits & SLOT_ACTIVE != 0 {
                active += 1;
                last_active = i;
            }
            any |= bits;
            all &= bits;
        }
        Slots {
            active,
            last_active,
            has_delta: any & SLOT_DELTA != 0,
            local: all & SLOT_LOCAL != 0,
        }
    }

    /// Whether any filter runs when decompressing ([`any_backward`]).
    pub(crate) fn any_backward(&self) -> bool {
        self.active > 0
    }

    /// The item size of the byte shuffle (see [`shuffle_group`]) when it is
    /// the only filter that runs when decompressing; `None` when another
    /// filter runs too, or none does.
    pub(crate) fn sole_shuffle_group(
        &self,
        filters: &[u8; 6],
        meta: &[u8; 6],
        typesize: usize,
    ) -> Option<usize> {
        let i = self.last_active;
        (self.active == 1 && filters[i] == Fmt::SHUFFLE).then(|| shuffle_group(meta[i], typesize))
    }
}

/// Whether filter `f` decodes a block from that block's bytes alone (plus,
/// for DELTA, the chunk's first block): every built-in filter and the
/// reference's global ones. User filters may read anything, so they do not.
pub(crate) const fn reads_only_its_block(f: u8) -> bool {
    matches!(f, 0..=Fmt::TRUNC_PREC | Fmt::NDCELL..=Fmt::INT_TRUNC)
}

/// Checks that every filter id can be run, before any work is done.
pub(crate) fn check_filters(filters: &[u8; 6]) -> crate::Result<()> {
    for &f in filters {
        match f {
            0..=4 | Fmt::NDCELL..=Fmt::INT_TRUNC => {}
            5..=31 => crate::bail!(InvalidParam, "filter {f} is not defined"),
            32..=159 => crate::bail!(
                CodecSupport,
                "filter {f} is in the reference's global range but not one of its plugins"
            ),
            _ => {
                if registry::filter(f).is_none() {
                    crate::bail!(FilterPipeline, "user filter {f} is not registered");
                }
            }
        }
    }
    Ok(())
}

/// The `filters_meta` a chunk records. BYTEDELTA's meta 0 stands for the
/// typesize, which the reference resolves only inside a super-chunk (it
/// refuses such chunks elsewhere, in both directions); it is recorded as the
/// typesize, as python-blosc2 does, so the chunk opens anywhere.
pub(crate) fn recorded_meta(filters: &[u8; 6], metas: &[u8; 6], typesize: usize) -> [u8; 6] {
    let mut out = *metas;
    for (m, &f) in out.iter_mut().zip(filters) {
        if *m == 0 && (f == Fmt::BYTEDELTA || f == Fmt::BYTEDELTA_BUGGY) {
            *m = u8::try_from(typesize).unwrap_or(0);
        }
    }
    out
}

/// The per-block context of the pipeline.
pub(crate) struct BlockCtx<'a> {
    pub filters: &'a [u8; 6],
    pub filters_meta: &'a [u8; 6],
    pub typesize: usize,
    /// Byte offset of the block in the chunk.
    pub offset: usize,
    /// Chunk format version (bit-unshuffle of version-2 chunks differs).
    pub version: u8,
    /// The b2nd block shape, for NDCELL and NDMEAN.
    pub block_shape: Option<&'a [i64]>,
    pub info: CallInfo<'a>,
}

/// BYTEDELTA's variant and the item size when slot `s` is the byte shuffle
/// and slot `d` BYTEDELTA over the same streams of at least 2 bytes: the
/// pair that `filters::shuffle_bytedelta` runs as one pass.
fn shuffle_bytedelta_pair(
    ctx: &BlockCtx<'_>,
    s: usize,
    d: usize,
) -> Option<(bytedelta::Variant, usize)> {
    let variant = match ctx.filters[d] {
        Fmt::BYTEDELTA => bytedelta::Variant::Fixed,
        Fmt::BYTEDELTA_BUGGY => bytedelta::Variant::Buggy,
        _ => return None,
    };
    let group = shuffle_group(ctx.filters_meta[s], ctx.typesize);
    let streams = match ctx.filters_meta[d] {
        0 => ctx.typesize,
        m => usize::from(m),
    };
    (ctx.filters[s] == Fmt::SHUFFLE && group == streams && group >= 2).then_some((variant, group))
}

/// Runs the forward pipeline over `input` (one block). `dref` is the first
/// block of the (prefiltered) source, the DELTA reference for blocks other than
/// the first. Returns which scratch buffer holds the result (`None`: `input`
/// itself, when no filter ran).
pub(crate) fn forward(
    ctx: &BlockCtx<'_>,
    input: &[u8],
    dref: &[u8],
    a: &mut PageBuf,
    b: &mut PageBuf,
) -> crate::Result<Option<bool>> {
    let n = input.len();
    a.resize(n)?;
    b.resize(n)?;
    // `cur`: None = input, Some(false) = a, Some(true) = b.
    let mut cur: Option<bool> = None;
    let mut done_with = None;
    for (i, &f) in ctx.filters.iter().enumerate() {
        if !active_forward(f) || done_with == Some(i) {
            continue;
        }
        let next = (i + 1..6).find(|&k| active_forward(ctx.filters[k]));
        if let (None, Some(k)) = (cur, next) {
            // The shuffle and BYTEDELTA as one pass, from `input` into `a`,
            // with `b` (free until the next filter) as the scratch.
            if let Some((variant, group)) = shuffle_bytedelta_pair(ctx, i, k) {
                b.resize(n.max(shuffle_bytedelta::scratch_len(group)))?;
                shuffle_bytedelta::encode(variant, group, input, &mut a[..], &mut b[..]);
                b.truncate(n);
                cur = Some(false);
                done_with = Some(k);
                continue;
            }
        }
        let meta = ctx.filters_meta[i];
        let (src, dst): (&[u8], &mut [u8]) = match cur {
            None => (input, &mut a[..]),
            Some(false) => (&a[..], &mut b[..]),
            Some(true) => (&b[..], &mut a[..]),
        };
        // Borrow juggling: `a` and `b` are distinct, `input` is separate.
        apply_forward(ctx, f, meta, src, dst, dref)?;
        cur = Some(match cur {
            None | Some(true) => false,
            Some(false) => true,
        });
    }
    Ok(cur)
}

fn apply_forward(
    ctx: &BlockCtx<'_>,
    f: u8,
    meta: u8,
    src: &[u8],
    dst: &mut [u8],
    dref: &[u8],
) -> crate::Result<()> {
    let ts = ctx.typesize;
    match f {
        Fmt::SHUFFLE => glue::shuffle(shuffle_group(meta, ts), src, dst),
        Fmt::BITSHUFFLE => glue::bitshuffle(ts, src, dst),
        Fmt::DELTA => {
            if ctx.offset == 0 {
                glue::delta_encode(src, 0, ts, src, dst)
            } else {
                glue::delta_encode(dref, ctx.offset, ts, src, dst)
            }
        }
        Fmt::TRUNC_PREC => glue::trunc_prec(meta as i8, ts, src, dst),
        Fmt::NDCELL | Fmt::NDMEAN => {
            glue::ndcell(f, ctx.block_shape, meta, ctx.info.typesize, src, dst, true)
        }
        Fmt::BYTEDELTA | Fmt::BYTEDELTA_BUGGY => glue::bytedelta(f, meta, ts, src, dst, true),
        // Its typesize is the caller's, not the (capped) header's.
        Fmt::INT_TRUNC => glue::int_trunc(meta as i8, ctx.info.typesize, src, dst),
        _ => match registry::filter(f) {
            Some(entry) => entry.filter.forward(src, dst, meta, &ctx.info),
            None => crate::bail!(FilterPipeline, "filter {f} not available when compressing"),
        },
    }
    .map_err(|e| match e.kind() {
        crate::ErrorKind::FilterPipeline => e,
        _ => crate::err!(FilterPipeline, "filter {f}: {e}"),
    })
}

/// Runs the backward pipeline and leaves the final block in `out`. `data`
/// holds the codec output on entry (at least `out.len()` bytes, clobbered);
/// `tmp` is scratch of any size. The last filter writes straight into `out`,
/// so no copy is made when a filter runs last. `dref` is the final first
/// block of the chunk (DELTA reference) for blocks other than the first.
pub(crate) fn backward(
    ctx: &BlockCtx<'_>,
    data: &mut PageBuf,
    tmp: &mut PageBuf,
    dref: Option<&[u8]>,
    out: &mut [u8],
) -> crate::Result<()> {
    let n = out.len();
    if data.len() < n {
        crate::bail!(FilterPipeline, "filter input shorter than the block");
    }
    data.truncate(n);
    // The last slot (in decompression order) that does anything.
    let last = (0..6).find(|&i| active_backward(ctx.filters[i]));
    // Whether the current result is in `out` (else in `data`).
    let mut in_out = false;
    let mut done_with = None;
    for i in (0..6).rev() {
        let f = ctx.filters[i];
        if !active_backward(f) || done_with == Some(i) {
            continue;
        }
        // BYTEDELTA and the unshuffle as one pass when the unshuffle is the
        // last step: from `data` into `out`.
        let next = (0..i).rev().find(|&k| active_backward(ctx.filters[k]));
        if let Some(k) = next.filter(|&k| Some(k) == last && !in_out) {
            if let Some((variant, group)) = shuffle_bytedelta_pair(ctx, k, i) {
                if shuffle_bytedelta::decodes(group) {
                    shuffle_bytedelta::decode(variant, group, &data[..], out);
                    in_out = true;
                    done_with = Some(k);
                    continue;
                }
            }
        }
        let meta = ctx.filters_meta[i];
        let ts = ctx.typesize;
        if f == Fmt::DELTA {
            // In place, in whichever buffer holds the result; when it is the
            // last step, move the result to `out` first.
            if Some(i) == last && !in_out {
                out.copy_from_slice(data);
                in_out = true;
            }
            let buf: &mut [u8] = if in_out { &mut *out } else { &mut data[..] };
            // The first block references itself, the others block 0.
            if ctx.offset == 0 {
                glue::delta_decode(None, 0, ts, buf)?;
            } else {
                let Some(r) = dref else {
                    crate::bail!(FilterPipeline, "delta needs the first block of the chunk");
                };
                if r.len() < n {
                    crate::bail!(FilterPipeline, "delta reference shorter than the block");
                }
                glue::delta_decode(Some(&r[..n]), ctx.offset, ts, buf)?;
            }
            continue;
        }
        let to_out = Some(i) == last;
        if !to_out && tmp.len() < n {
            tmp.resize(n)?;
        }
        let dst: &mut [u8] = if to_out { &mut *out } else { &mut tmp[..n] };
        match f {
            Fmt::SHUFFLE => glue::unshuffle(shuffle_group(meta, ts), data, dst)?,
            Fmt::BITSHUFFLE => {
                glue::bitunshuffle(ts, data, dst, ctx.version)?;
            }
            Fmt::BYTEDELTA | Fmt::BYTEDELTA_BUGGY => {
                glue::bytedelta(f, meta, ts, data, dst, false)?;
            }
            Fmt::NDCELL | Fmt::NDMEAN => {
                glue::ndcell(
                    f,
                    ctx.block_shape,
                    meta,
                    ctx.info.typesize,
                    data,
                    dst,
                    false,
                )?;
            }
            _ => match registry::filter(f) {
                Some(entry) => entry
                    .filter
                    .backward(data, dst, meta, &ctx.info)
                    .map_err(|e| crate::err!(FilterPipeline, "user filter {f}: {e}"))?,
                None if (Fmt::FILTERS_GLOBAL_START..=Fmt::FILTERS_GLOBAL_STOP).contains(&f) => {
                    crate::bail!(
                        CodecSupport,
                        "filter {f} is in the reference's global range but not one of its plugins"
                    )
                }
                None => crate::bail!(
                    FilterPipeline,
                    "filter {f} not available when decompressing"
                ),
            },
        }
        if to_out {
            in_out = true;
        } else {
            tmp.truncate(n);
            std::mem::swap(data, tmp);
        }
    }
    if !in_out {
        out.copy_from_slice(data);
    }
    Ok(())
}

/// The calls into `crate::filters`, in one place (lengths are equal by construction).
mod glue {
    use crate::filters::{bitshuffle, bytedelta, delta, int_trunc, ndcell, shuffle, trunc_prec};

    pub(super) fn shuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
        shuffle::shuffle(ts, src, dst);
        Ok(())
    }
    pub(super) fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
        shuffle::unshuffle(ts, src, dst);
        Ok(())
    }
    pub(super) fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
        bitshuffle::bitshuffle(ts, src, dst)
    }
    pub(super) fn bitunshuffle(
        ts: usize,
        src: &[u8],
        dst: &mut [u8],
        version: u8,
    ) -> crate::Result<()> {
        if version == 2 {
            bitshuffle::bitunshuffle_format2(ts, src, dst)
        } else {
            bitshuffle::bitunshuffle(ts, src, dst)
        }
    }
    pub(super) fn delta_encode(
        dref: &[u8],
        offset: usize,
        ts: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> crate::Result<()> {
        delta::encode(dref, offset, ts, src, dst);
        Ok(())
    }
    pub(super) fn delta_decode(
        dref: Option<&[u8]>,
        offset: usize,
        ts: usize,
        buf: &mut [u8],
    ) -> crate::Result<()> {
        delta::decode(dref.unwrap_or(&[]), offset, ts, buf);
        Ok(())
    }
    pub(super) fn trunc_prec(bits: i8, ts: usize, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
        trunc_prec::truncate(bits, ts, src, dst)
    }
    /// BYTEDELTA and BYTEDELTA_BUGGY: `meta` is the number of streams, 0 for
    /// the chunk's typesize (the reference takes its super-chunk's, the same
    /// number, and refuses meta 0 outside a super-chunk).
    pub(super) fn bytedelta(
        id: u8,
        meta: u8,
        ts: usize,
        src: &[u8],
        dst: &mut [u8],
        forward: bool,
    ) -> crate::Result<()> {
        let variant = if id == super::Fmt::BYTEDELTA {
            bytedelta::Variant::Fixed
        } else {
            bytedelta::Variant::Buggy
        };
        let streams = if meta == 0 { ts } else { usize::from(meta) };
        if streams == 0 {
            crate::bail!(FilterPipeline, "bytedelta: no typesize");
        }
        if forward {
            bytedelta::encode(variant, streams, src, dst);
        } else {
            bytedelta::decode(variant, streams, src, dst);
        }
        Ok(())
    }
    /// NDCELL and NDMEAN on one block of the array's `block_shape`.
    pub(super) fn ndcell(
        id: u8,
        block_shape: Option<&[i64]>,
        meta: u8,
        ts: i32,
        src: &[u8],
        dst: &mut [u8],
        forward: bool,
    ) -> crate::Result<()> {
        let Some(shape) = block_shape else {
            crate::bail!(
                FilterPipeline,
                "filter {id} needs a block shape: no super-chunk with a \"b2nd\" metalayer given (cparams.schunk / dparams.schunk)"
            );
        };
        let kind = if id == super::Fmt::NDCELL {
            ndcell::Kind::Cell
        } else {
            ndcell::Kind::Mean
        };
        let ts = usize::try_from(ts).unwrap_or(0);
        if forward {
            ndcell::encode(kind, shape, meta, ts, src, dst)
        } else {
            ndcell::decode(kind, shape, meta, ts, src, dst)
        }
    }
    pub(super) fn int_trunc(bits: i8, ts: i32, src: &[u8], dst: &mut [u8]) -> crate::Result<()> {
        int_trunc::truncate(bits, usize::try_from(ts).unwrap_or(0), src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sole_shuffle_group_names_the_shuffle_only_when_nothing_else_runs_backward() {
        let (sh, bit, delta, trunc) = (Fmt::SHUFFLE, Fmt::BITSHUFFLE, Fmt::DELTA, Fmt::TRUNC_PREC);
        let cases: [([u8; 6], [u8; 6], Option<usize>); 7] = [
            ([0; 6], [0; 6], None),
            ([0, 0, 0, 0, 0, sh], [0; 6], Some(8)),
            ([0, 0, 0, 0, 0, sh], [0, 0, 0, 0, 0, 2], Some(2)),
            // TRUNC_PREC has no backward step, so the shuffle is still alone.
            ([0, 0, 0, 0, trunc, sh], [0, 0, 0, 0, 10, 0], Some(8)),
            ([0, 0, 0, 0, delta, sh], [0; 6], None),
            ([0, 0, 0, 0, 0, bit], [0; 6], None),
            ([sh, 0, 0, 0, 0, sh], [0; 6], None),
        ];
        for (filters, meta, want) in cases {
            assert_eq!(
                sole_shuffle_group(&filters, &meta, 8),
                want,
                "{filters:?} {meta:?}"
            );
            let slots = Slots::of(&filters);
            assert_eq!(slots.sole_shuffle_group(&filters, &meta, 8), want);
            assert_eq!(slots.any_backward(), any_backward(&filters));
            assert_eq!(slots.has_delta, filters.contains(&Fmt::DELTA));
            assert_eq!(slots.local, filters.iter().all(|&f| reads_only_its_block(f)));
        }
        // Every filter id, alone and next to a shuffle.
        for f in 0..=255u8 {
            for filters in [[0, 0, f, 0, 0, 0], [0, 0, 0, f, 0, Fmt::SHUFFLE]] {
                let slots = Slots::of(&filters);
                let meta = [0; 6];
                assert_eq!(
                    slots.sole_shuffle_group(&filters, &meta, 8),
                    sole_shuffle_group(&filters, &meta, 8),
                    "{filters:?}"
                );
                assert_eq!(slots.any_backward(), any_backward(&filters), "{filters:?}");
                assert_eq!(slots.has_delta, filters.contains(&Fmt::DELTA), "{filters:?}");
                let local = filters.iter().all(|&f| reads_only_its_block(f));
                assert_eq!(slots.local, local, "{filters:?}");
            }
        }
    }
}
