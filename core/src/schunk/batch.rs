//! Many chunk edits with one write of a frame's metadata.
//!
//! Every edit of a frame rewrites its offsets index, trailer and header, so
//! adding or removing chunks one call at a time costs time quadratic in the
//! number of chunks: an array resize that added 16,384 zero chunks took 14 s
//! (found by the ndarray_edit fuzz body). The calls here make the same edits
//! as that many single calls, in the same order and with the same checks,
//! and write the metadata once at the end. The same scope lets a layer
//! above (an array's resize, slice write, append) make all the edits of one
//! of its calls and publish them once.

use super::{Backend, SChunk};
use crate::Result;

impl SChunk {
    /// Inserts `chunk` at each position of `at` in turn, each numbered as
    /// after the inserts before it, so ascending positions are where the
    /// copies end up. It leaves the super-chunk as that many
    /// [`SChunk::insert_chunk`] calls would, but writes a frame's metadata
    /// once. If an insert fails, the ones before it stay, written as single
    /// calls would have left them, and its error is returned. Returns the
    /// new number of chunks.
    pub fn insert_chunks(
        &mut self,
        at: impl IntoIterator<Item = i64>,
        chunk: &[u8],
    ) -> Result<i64> {
        self.batch(at, |s, n| s.insert_chunk(n, chunk))
    }

    /// Deletes the chunk at each position of `at` in turn, each numbered as
    /// after the deletes before it (descending positions delete the chunks
    /// numbered so before the call). As [`SChunk::insert_chunks`], it
    /// leaves what that many [`SChunk::delete_chunk`] calls would, writing a
    /// frame's metadata once. Returns the new number of chunks.
    pub fn delete_chunks(&mut self, at: impl IntoIterator<Item = i64>) -> Result<i64> {
        self.batch(at, |s, n| s.delete_chunk(n))
    }

    /// Makes `edit` at each position of `at` under one exclusive lock, in
    /// one edit scope (see [`SChunk::edits`]) whose edits are kept whether
    /// or not the last one failed: each edit checks before it changes
    /// anything, so what is published is what the edits before a failing
    /// one made, as single calls would have written it, and a first edit
    /// that fails writes nothing.
    fn batch(
        &mut self,
        at: impl IntoIterator<Item = i64>,
        mut edit: impl FnMut(&mut SChunk, i64) -> Result<i64>,
    ) -> Result<i64> {
        self.locked(true, |s| {
            s.begin_edits();
            let mut failed = Ok(());
            for n in at {
                if let Err(e) = edit(s, n) {
                    failed = Err(e);
                    break;
                }
            }
            let ended = s.end_edits(true);
            failed?;
            ended?;
            Ok(s.nchunks())
        })
    }

    /// Runs `f`, a sequence of edits, with one publish at the end: the frame
    /// on disk goes from the frame before to the frame after in one step
    /// (docs/crash-safety.md), whatever instant a writer is killed at. When
    /// `f` fails, the edits it made are dropped where the file still holds
    /// the frame before (see [`SChunk::end_edits`]). Scopes nest: the
    /// outermost publishes. Crate-private because between the edits the
    /// frame's own bytes (a serialisation of the file, another handle)
    /// show the frame before: only this handle's chunk and metadata reads
    /// see the edits.
    pub(crate) fn edits<T>(&mut self, f: impl FnOnce(&mut SChunk) -> Result<T>) -> Result<T> {
        self.begin_edits();
        let r = f(self);
        let ended = self.end_edits(r.is_ok());
        let v = r?;
        ended?;
        Ok(v)
    }

    /// Opens an edit scope, closed by [`SChunk::end_edits`]: until the
    /// outermost closes, flushes are put off (see `SChunk::edits`, for
    /// callers whose edits span several calls on the handle).
    pub fn begin_edits(&mut self) {
        self.edit_depth += 1;
    }

    /// Closes an edit scope. Closing the outermost one with edits put off:
    /// with `keep`, publishes them (a failure re-reads the frame, as after
    /// any failed edit: the handle holds what the file does); without, drops
    /// them when the file still holds the frame before intact (file frames
    /// write edits only where that frame has no bytes, or into a new file)
    /// and re-reads it, so the handle and the file agree on the frame
    /// before; elsewhere (in memory, or a frame edited in place) what was
    /// made is published, as single edits would have left it.
    pub fn end_edits(&mut self, keep: bool) -> Result<()> {
        self.edit_depth = self.edit_depth.saturating_sub(1);
        if self.edit_depth > 0 || !std::mem::take(&mut self.unpublished) {
            return Ok(());
        }
        if !keep {
            if let Backend::Frame(f) = &mut self.backend {
                if f.published_intact() {
                    f.discard_unpublished();
                    return self.reload();
                }
            }
        }
        self.flush_edit()
    }

    /// Whether edits made in an open scope are not on disk yet.
    pub(crate) fn has_unpublished(&self) -> bool {
        self.unpublished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schunk::{CParams, Storage};

    fn storage(contiguous: bool, urlpath: Option<std::path::PathBuf>) -> Storage {
        Storage {
            contiguous,
            urlpath,
            cparams: CParams {
                typesize: 4,
                ..CParams::default()
            },
            ..Storage::default()
        }
    }

    /// Three data chunks of 400 bytes, and a zero chunk of the same size.
    fn filled(s: &mut SChunk) -> Vec<u8> {
        for k in 1..=3u8 {
            s.append_buffer(&[k; 400]).unwrap();
        }
        let mut zeros = SChunk::new(storage(false, None)).unwrap();
        zeros
            .fill_special(100, super::super::Special::Zero, 400)
            .unwrap();
        zeros.get_chunk(0).unwrap().into_owned()
    }

    /// Inserts and deletes made in one call give the bytes, counters and
    /// contents the same edits give one call at a time: in a chunk list, an
    /// in-memory frame, a frame file and a sparse frame.
    #[test]
    fn many_edits_in_one_call_equal_the_single_calls() {
        let dir = std::env::temp_dir().join(format!("b2nd-batch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let kinds: [(bool, Option<&str>); 4] = [
            (false, None),
            (true, None),
            (true, Some("c.b2frame")),
            (false, Some("s.b2frame")),
        ];
        for (contiguous, name) in kinds {
            let path = |tag: &str| name.map(|n| dir.join(format!("{tag}-{n}")));
            let mut one = SChunk::new(storage(contiguous, path("one"))).unwrap();
            let mut many = SChunk::new(storage(contiguous, path("many"))).unwrap();
            let zero = filled(&mut one);
            filled(&mut many);
            // Final positions 0, 2, 3 and 6: before chunk 0, between 1 and
            // 2 (twice) and at the end.
            let at = [0i64, 2, 3, 6];
            for &n in &at {
                one.insert_chunk(n, &zero).unwrap();
            }
            assert_eq!(many.insert_chunks(at, &zero).unwrap(), 7);
            let what = format!("contiguous {contiguous}, file {name:?}");
            let same = |many: &mut SChunk, one: &mut SChunk| {
                assert_eq!(many.nbytes(), one.nbytes(), "{what}");
                assert_eq!(many.cbytes(), one.cbytes(), "{what}");
                assert_eq!(
                    many.to_buffer().unwrap(),
                    one.to_buffer().unwrap(),
                    "{what}"
                );
            };
            same(&mut many, &mut one);
            let mut out = [0u8; 400];
            let firsts: Vec<u8> = (0..7)
                .map(|i| {
                    assert_eq!(many.decompress_chunk(i, &mut out).unwrap(), 400);
                    out[0]
                })
                .collect();
            assert_eq!(firsts, [0, 1, 0, 0, 2, 3, 0], "{what}");
            // Deleting from the last keeps each position meaningful.
            let doomed = [6i64, 4, 0];
            for &n in &doomed {
                one.delete_chunk(n).unwrap();
            }
            assert_eq!(many.delete_chunks(doomed).unwrap(), 4);
            same(&mut many, &mut one);
            if let Some(p) = path("many") {
                drop(many);
                let mut back = SChunk::open(&p).unwrap();
                assert_eq!(
                    back.to_buffer().unwrap(),
                    one.to_buffer().unwrap(),
                    "{what}"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// When an insert part way fails, the inserts before it are kept and
    /// written, as single calls would have left them, and the failing one's
    /// error comes back: a frame file reopens with exactly those chunks.
    #[test]
    fn a_failing_edit_keeps_and_writes_the_ones_before_it() {
        let path = std::env::temp_dir().join(format!("b2nd-batch-fail-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut s = SChunk::new(storage(true, Some(path.clone()))).unwrap();
        let zero = filled(&mut s);
        // Position 9 is past the 5 chunks there are by then.
        let e = s.insert_chunks([3, 4, 9, 0], &zero).unwrap_err();
        assert_eq!(e.code(), -33, "{}", e.detail());
        assert_eq!(s.nchunks(), 5);
        let mut back = SChunk::open(&path).unwrap();
        assert_eq!(back.nchunks(), 5);
        assert_eq!(back.nbytes(), 2000);
        assert_eq!(back.to_buffer().unwrap(), s.to_buffer().unwrap());
        drop(back);
        let e = s.delete_chunks([0, 7]).unwrap_err();
        assert_eq!(e.code(), -33, "{}", e.detail());
        assert_eq!(SChunk::open(&path).unwrap().nchunks(), 4);
        std::fs::remove_file(&path).unwrap();
    }

    /// Edits in a scope reach the file in one publish when the outermost
    /// scope ends: until then the file holds the frame before. A scope
    /// that fails drops its edits, and the handle reads as the file does.
    #[test]
    fn a_scope_publishes_once_or_drops_its_edits() {
        let path = std::env::temp_dir().join(format!("b2nd-scope-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut s = SChunk::new(storage(true, Some(path.clone()))).unwrap();
        let zero = filled(&mut s);
        // The chunks, decompressed (an append may move the published
        // index further on: the same frame in other bytes).
        let chunks = |s: &mut SChunk| -> Vec<Vec<u8>> {
            (0..s.nchunks())
                .map(|i| {
                    let mut out = vec![0u8; 400];
                    assert_eq!(s.decompress_chunk(i, &mut out).unwrap(), 400);
                    out
                })
                .collect()
        };
        let on_disk = || chunks(&mut SChunk::open(&path).unwrap());
        let before = chunks(&mut s);
        s.begin_edits();
        s.edits(|s| {
            s.append_buffer(&[9; 400])?;
            s.update_chunk(0, &zero)
        })
        .unwrap();
        s.delete_chunk(1).unwrap();
        assert_eq!(on_disk(), before, "published before the outer scope ended");
        let after = chunks(&mut s);
        let firsts: Vec<u8> = after.iter().map(|c| c[0]).collect();
        assert_eq!(firsts, [0, 3, 9], "the handle sees its edits");
        // A serialisation gives the handle's frame, not the file's.
        let ser = SChunk::from_vec(s.to_buffer().unwrap()).unwrap();
        assert_eq!(chunks(&mut { ser }), after);
        s.end_edits(true).unwrap();
        assert_eq!(on_disk(), after);
        let e = s
            .edits(|s| {
                s.append_buffer(&[7; 400])?;
                s.delete_chunk(9).map(|_| ())
            })
            .unwrap_err();
        assert_eq!(e.code(), -33, "{}", e.detail());
        assert_eq!(on_disk(), after, "a failed scope published");
        assert_eq!(
            chunks(&mut s),
            after,
            "the handle kept what the file dropped"
        );
        drop(s);
        std::fs::remove_file(&path).unwrap();
    }
}
