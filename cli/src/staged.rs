//! Output written beside its destination and renamed into place only on
//! success, so a failure never leaves a partial file (or directory) behind.

use std::path::{Path, PathBuf};

use crate::fail::{failed, usage, Failure};

pub struct Staged {
    tmp: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl Staged {
    /// Reserves a temporary path next to `dest`. Refuses a `dest` that is
    /// the same file as `input`, which the rename would destroy.
    pub fn new(dest: &Path, input: Option<&Path>) -> Result<Staged, Failure> {
        if let Some(input) = input {
            if let (Ok(a), Ok(b)) = (input.canonicalize(), dest.canonicalize()) {
                if a == b {
                    return Err(usage(format!(
                        "output {} is the input; choose another path",
                        dest.display()
                    )));
                }
            }
        }
        let name = dest
            .file_name()
            .ok_or_else(|| usage(format!("output {} has no file name", dest.display())))?;
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(usage(format!(
                "output directory {} does not exist",
                parent.display()
            )));
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".b2nd-tmp-{}", std::process::id()));
        let tmp = parent.join(tmp_name);
        remove(&tmp);
        Ok(Staged {
            tmp,
            dest: dest.to_path_buf(),
            done: false,
        })
    }

    /// Where to write.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Moves the finished output into place (replacing what was there).
    pub fn commit(mut self) -> Result<(), Failure> {
        if self.dest.is_dir() {
            std::fs::remove_dir_all(&self.dest)
                .map_err(|e| failed(format!("cannot replace {}: {e}", self.dest.display())))?;
        }
        std::fs::rename(&self.tmp, &self.dest)
            .map_err(|e| failed(format!("cannot write {}: {e}", self.dest.display())))?;
        self.done = true;
        Ok(())
    }
}

fn remove(path: &Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            remove(&self.tmp);
        }
    }
}
