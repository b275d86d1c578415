//! Items as CSV text: the NumPy numeric and boolean dtypes only.

/// How to print one item.
#[derive(Clone, Copy)]
pub struct ItemFormat {
    kind: u8,
    size: usize,
    big_endian: bool,
}

impl ItemFormat {
    /// The format for a NumPy type string such as `<i4` or `|b1`, if CSV can
    /// show it.
    pub fn from_dtype(dtype: &str) -> Option<ItemFormat> {
        let b = dtype.as_bytes();
        let (order, rest) = match b.first()? {
            b'<' | b'>' | b'|' | b'=' => (b[0], &dtype[1..]),
            _ => (b'=', dtype),
        };
        let mut chars = rest.chars();
        let kind = chars.next()? as u8;
        let size: usize = chars.as_str().parse().ok()?;
        let ok = match kind {
            b'i' | b'u' => matches!(size, 1 | 2 | 4 | 8),
            b'f' => matches!(size, 4 | 8),
            b'b' => size == 1,
            _ => false,
        };
        ok.then_some(ItemFormat {
            kind,
            size,
            big_endian: order == b'>',
        })
    }

    /// Unsigned little-endian integers of `size` bytes (plain super-chunks).
    pub fn unsigned(size: usize) -> Option<ItemFormat> {
        matches!(size, 1 | 2 | 4 | 8).then_some(ItemFormat {
            kind: b'u',
            size,
            big_endian: false,
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// `item` (exactly `size` bytes) as text.
    pub fn show(&self, item: &[u8]) -> String {
        let mut le = [0u8; 8];
        le[..self.size].copy_from_slice(item);
        if self.big_endian {
            le[..self.size].reverse();
        }
        let unsigned = u64::from_le_bytes(le);
        match (self.kind, self.size) {
            (b'b', _) => (if unsigned != 0 { "True" } else { "False" }).to_string(),
            (b'u', _) => unsigned.to_string(),
            (b'i', s) => {
                // Sign-extends the low `s` bytes.
                let shift = 64 - 8 * s as u32;
                (((unsigned << shift) as i64) >> shift).to_string()
            }
            (b'f', 4) => f32::from_bits(unsigned as u32).to_string(),
            _ => f64::from_bits(unsigned).to_string(),
        }
    }
}
