//! Scratch buffers for block work (codec output, filter stages) whose
//! contents start on a page boundary.
//!
//! Why: a worker's scratch lives as long as its thread, so where it lands
//! is decided once per process. At an arbitrary offset in its page a 32 KiB
//! scratch spans 9 pages, and block decoding ran at full speed in only some
//! processes, at the same instruction count (`benches/bench.c --exact ROW`,
//! one fresh process per run, shows the spread); the reference's block
//! buffers come from `posix_memalign` too. The alignment also keeps the SIMD
//! filters' 32-byte loads within cache lines.
//!
//! The buffer behaves like a `Vec<u8>` (new bytes are zero, contents are
//! kept when it grows); only where the bytes live differs. The alignment is
//! reached by starting inside a larger vector, so no `unsafe` is needed.

/// Where the contents start: a page.
const ALIGN: usize = 4096;

/// A growable byte buffer whose first byte is `ALIGN`-aligned.
#[derive(Default)]
pub(crate) struct PageBuf {
    /// Backing store; the contents are `buf[start..start + len]`.
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageBuf {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Sets the length to `len`: bytes past the old length are zero, bytes
    /// before it are kept (as `Vec::resize(len, 0)`). `MemoryAlloc` when
    /// the system refuses the room, the buffer unchanged then.
    pub(crate) fn resize(&mut self, len: usize) -> crate::Result<()> {
        if len <= self.buf.len() - self.start {
            if len > self.len {
                self.buf[self.start + self.len..self.start + len].fill(0);
            }
            self.len = len;
            return Ok(());
        }
        // Room for the contents wherever the allocation puts the alignment.
        // (Saturated, a length past memory is refused like any other.)
        let mut buf = crate::mem::zeroed(len.saturating_add(ALIGN - 1))?;
        let start = buf.as_ptr().align_offset(ALIGN).min(ALIGN - 1);
        buf[start..start + self.len].copy_from_slice(&self.buf[self.start..self.start + self.len]);
        *self = PageBuf { buf, start, len };
        Ok(())
    }

    /// Shortens to `len` bytes (no effect when already shorter).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

impl std::ops::Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_vec_and_starts_on_a_page() {
        let mut s = PageBuf::default();
        let mut v: Vec<u8> = Vec::new();
        // Grow, shrink, regrow within room, grow past it: same bytes as a Vec.
        for (k, len) in [100usize, 5000, 3, 4000, 70_000, 10, 70_000, 200_000]
            .into_iter()
            .enumerate()
        {
            s.resize(len).unwrap();
            v.resize(len, 0);
            assert_eq!(&s[..], &v[..], "step {k}");
            assert_eq!(s.len(), len);
            assert_eq!(s.as_ptr() as usize % ALIGN, 0, "step {k}");
            for (i, (a, b)) in s.iter_mut().zip(v.iter_mut()).enumerate() {
                let x = (i * 7 + k) as u8;
                *a = x;
                *b = x;
            }
            s.truncate(len / 2);
            v.truncate(len / 2);
            assert_eq!(&s[..], &v[..], "step {k} truncated");
        }
        // Room past memory is refused, and the contents stay.
        for len in [usize::MAX, 1 << 62] {
            assert!(matches!(s.resize(len), Err(e) if e.kind() == crate::ErrorKind::MemoryAlloc));
            assert_eq!(&s[..], &v[..], "after refusing {len} bytes");
        }
    }
}
