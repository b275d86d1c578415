//! Fixed-size metalayers (in the frame header) and variable-length
//! metalayers (compressed, in the frame trailer) of a super-chunk.

use super::{engine, Backend, CParams, Metalayer, SChunk, MAX_VLMETALAYERS};
use crate::frame::header::MAX_METALAYERS;
use crate::Result;

impl SChunk {
    // ----- metalayers -----

    /// Index of metalayer `name`, if present.
    pub fn meta_exists(&self, name: &str) -> Option<usize> {
        self.metalayers.iter().position(|m| m.name == name)
    }

    /// Adds a fixed-size metalayer; frames accept them only before data.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.locked(true, |s| s.meta_add_unlocked(name, content))
    }

    fn meta_add_unlocked(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        crate::frame::header::check_name(name)?;
        if self.meta_exists(name).is_some() {
            crate::bail!(InvalidParam, "metalayer '{name}' already exists");
        }
        if self.metalayers.len() >= MAX_METALAYERS {
            crate::bail!(InvalidParam, "at most {MAX_METALAYERS} metalayers");
        }
        if self.is_frame() && self.nchunks() > 0 {
            crate::bail!(
                InvalidParam,
                "metalayers cannot be added to a frame after data"
            );
        }
        self.metalayers.push(Metalayer {
            name: name.to_owned(),
            content: content.to_vec(),
        });
        self.flush_meta(|s| {
            s.metalayers.pop();
        })?;
        self.bind_cell_geometry()?;
        Ok(self.metalayers.len() - 1)
    }

    /// Content of metalayer `name`.
    pub fn meta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self
            .meta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "metalayer '{name}' not found"))?;
        Ok(self.metalayers[i].content.clone())
    }

    /// Overwrites the start of metalayer `name`; its size never changes, so
    /// `content` may not be longer than the existing content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        self.locked(true, |s| s.meta_update_unlocked(name, content))
    }

    fn meta_update_unlocked(&mut self, name: &str, content: &[u8]) -> Result<usize> {
        let i = self
            .meta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "metalayer '{name}' not found"))?;
        let old = &mut self.metalayers[i].content;
        if content.len() > old.len() {
            crate::bail!(
                InvalidParam,
                "metalayer '{name}' holds {} bytes; cannot grow to {}",
                old.len(),
                content.len()
            );
        }
        let was = old.clone();
        old[..content.len()].copy_from_slice(content);
        self.flush_meta(|s| s.metalayers[i].content = was)?;
        self.bind_cell_geometry()?;
        Ok(i)
    }

    /// Names of the metalayers, in order.
    pub fn meta_names(&self) -> Vec<String> {
        self.metalayers.iter().map(|m| m.name.clone()).collect()
    }

    /// The metalayers, in order, with their contents.
    pub fn metalayers(&self) -> &[Metalayer] {
        &self.metalayers
    }

    // ----- variable-length metalayers -----

    /// The index of the variable-length metalayer `name`, if there is one.
    pub fn vlmeta_exists(&self, name: &str) -> Option<usize> {
        self.vlmetalayers.iter().position(|m| m.name == name)
    }

    pub(super) fn vlmeta_limit(&self) -> usize {
        if self.is_frame() {
            crate::frame::trailer::MAX_FRAME_VLMETALAYERS
        } else {
            MAX_VLMETALAYERS
        }
    }

    /// Adds a vlmetalayer, compressing `content` with `cparams` (reference
    /// defaults when `None`).
    pub fn vlmeta_add(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        self.locked(true, |s| s.vlmeta_add_unlocked(name, content, cparams))
    }

    fn vlmeta_add_unlocked(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        crate::frame::header::check_name(name)?;
        if self.vlmeta_exists(name).is_some() {
            crate::bail!(InvalidParam, "vlmetalayer '{name}' already exists");
        }
        if self.vlmetalayers.len() >= self.vlmeta_limit() {
            crate::bail!(
                InvalidParam,
                "at most {} vlmetalayers here",
                self.vlmeta_limit()
            );
        }
        let packed = engine::compress_with(cparams.unwrap_or(&CParams::default()), content)?;
        self.vlmetalayers.push(Metalayer {
            name: name.to_owned(),
            content: packed,
        });
        self.flush_meta(|s| {
            s.vlmetalayers.pop();
        })?;
        Ok(self.vlmetalayers.len() - 1)
    }

    /// Decompressed content of vlmetalayer `name`.
    pub fn vlmeta_get(&self, name: &str) -> Result<Vec<u8>> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        engine::decompress_once(&self.vlmetalayers[i].content)
    }

    /// Replaces the content of vlmetalayer `name`.
    pub fn vlmeta_update(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        self.locked(true, |s| s.vlmeta_update_unlocked(name, content, cparams))
    }

    fn vlmeta_update_unlocked(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<usize> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        let packed = engine::compress_with(cparams.unwrap_or(&CParams::default()), content)?;
        let old = std::mem::replace(&mut self.vlmetalayers[i].content, packed);
        self.flush_meta(|s| s.vlmetalayers[i].content = old)?;
        Ok(i)
    }

    /// Removes vlmetalayer `name`; returns how many remain.
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<usize> {
        self.locked(true, |s| s.vlmeta_delete_unlocked(name))
    }

    fn vlmeta_delete_unlocked(&mut self, name: &str) -> Result<usize> {
        let i = self
            .vlmeta_exists(name)
            .ok_or_else(|| crate::err!(MetalayerNotFound, "vlmetalayer '{name}' not found"))?;
        let gone = self.vlmetalayers.remove(i);
        self.flush_meta(|s| s.vlmetalayers.insert(i, gone))?;
        Ok(self.vlmetalayers.len())
    }

    /// Writes a metadata edit; when that fails, the handle goes back to
    /// what the frame holds: a file's bytes still hold the frame last
    /// written (see `frame::store::publish`), read again, whether the
    /// failure came before or after the publish; elsewhere `undo` undoes
    /// the edit.
    fn flush_meta(&mut self, undo: impl FnOnce(&mut SChunk)) -> Result<()> {
        let r = self.flush();
        if r.is_err() {
            let on_disk = match &self.backend {
                Backend::Frame(f) => !matches!(f.place(), crate::frame::Place::Memory(_)),
                Backend::Chunks(_) => false,
            };
            if on_disk {
                let _ = self.reload();
            } else {
                undo(self);
            }
        }
        r
    }

    /// Names of the vlmetalayers, in order.
    pub fn vlmeta_names(&self) -> Vec<String> {
        self.vlmetalayers.iter().map(|m| m.name.clone()).collect()
    }

    /// The vlmetalayers, in order, with their contents *compressed* as the
    /// frame trailer stores them (the reference keeps these bytes in
    /// `blosc2_schunk.vlmetalayers[i]->content`).
    pub fn vlmetalayers_stored(&self) -> &[Metalayer] {
        &self.vlmetalayers
    }
}
