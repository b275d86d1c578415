//! The NumPy `.npy` header (format 1.0, or 2.0 when the header is too long
//! for 1.0's 16-bit length).

/// The `descr` value for a dtype string: NumPy list syntax (structured
/// dtypes) goes in as is, a plain type string is quoted.
fn descr_literal(dtype: &str) -> String {
    if dtype.starts_with('[') {
        dtype.to_string()
    } else {
        format!("'{}'", dtype.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

fn shape_literal(shape: &[i64]) -> String {
    match shape {
        [] => "()".into(),
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(i64::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The bytes before the data of a C-order array of `shape` and `dtype`.
pub fn header(dtype: &str, shape: &[i64]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': {}, 'fortran_order': False, 'shape': {}, }}",
        descr_literal(dtype),
        shape_literal(shape)
    );
    // Magic, version, length, dict, padding and newline: 64-byte aligned.
    for (major, len_bytes) in [(1u8, 2usize), (2, 4)] {
        let fixed = 6 + 2 + len_bytes;
        let unpadded = fixed + dict.len() + 1;
        let total = unpadded.div_ceil(64) * 64;
        let hlen = total - fixed;
        if major == 1 && hlen > usize::from(u16::MAX) {
            continue;
        }
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"\x93NUMPY");
        out.push(major);
        out.push(0);
        if major == 1 {
            out.extend_from_slice(&(hlen as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(hlen as u32).to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out.resize(total - 1, b' ');
        out.push(b'\n');
        return out;
    }
    Vec::new()
}
