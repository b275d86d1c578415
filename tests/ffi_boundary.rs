//! Every function exported to C must contain panics at the boundary: its body
//! runs inside one of the guard helpers of `src/guard.rs` (directly or
//! through a wrapper built on it), or it is on the short list below of bodies
//! that cannot panic (constant returns) or only forward to a guarded export.
//!
//! This reads the FFI sources as text, so a new export without a guard fails
//! here before it can let a panic unwind into a C caller.

use std::path::Path;

/// Exports whose bodies need no guard, with the reason.
const UNGUARDED_OK: &[(&str, &str)] = &[
    ("blosc2_get_version_string", "returns a static string"),
    ("blosc2_error_string", "table lookup of static strings"),
    ("blosc2_list_compressors", "returns a static string"),
    ("blosc2_stdio_destroy", "returns 0"),
    ("blosc2_stdio_mmap_close", "returns 0"),
    ("blosc2_schunk_open", "forwards to a guarded export"),
    ("blosc2_schunk_open_offset", "forwards to a guarded export"),
    ("blosc2_schunk_open_udio", "forwards to a guarded export"),
    ("blosc2_shuffle", "forwards to a guarded helper"),
    ("blosc2_unshuffle", "forwards to a guarded helper"),
    ("blosc2_bitshuffle", "forwards to a guarded helper"),
    ("blosc2_bitunshuffle", "forwards to a guarded helper"),
    ("blosc2_schunk_get_chunk", "forwards to a guarded helper"),
    (
        "blosc2_schunk_get_lazychunk",
        "forwards to a guarded helper",
    ),
    ("caterva_from_serial_schunk", "forwards to a guarded export"),
];

/// Names of the guard helpers (and wrappers built on them) an export may call.
const GUARDS: &[&str] = &[
    "guard",
    "guard_code",
    "run",
    "run_ptr",
    "run_int",
    "run_code",
    "with_",
    "set_global",
    "get_global",
    "read_schunk",
    "read_schunk_chunk",
    "read_array",
    "intent_schunk",
    "intent_array",
    "grow_array",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ readable") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of the function body that starts after `from` (up to the first
/// line that is a lone closing brace at column 0).
fn body_after(src: &str, from: usize) -> &str {
    let rest = &src[from..];
    let end = rest.find("\n}\n").unwrap_or(rest.len());
    &rest[..end]
}

fn calls_a_guard(body: &str) -> bool {
    // The identifier right before each '(' is a called name.
    let bytes = body.as_bytes();
    (0..bytes.len()).filter(|&i| bytes[i] == b'(').any(|i| {
        let start = body[..i]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let name = &body[start..i];
        GUARDS.iter().any(|g| {
            if g.ends_with('_') {
                name.starts_with(g)
            } else {
                name == *g
            }
        })
    })
}

#[test]
fn every_export_contains_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut exports = 0;
    let mut unguarded = Vec::new();
    for file in files {
        let src = std::fs::read_to_string(&file).expect("source readable");
        for marker in ["pub extern \"C\" fn ", "pub unsafe extern \"C\" fn "] {
            let mut at = 0;
            while let Some(pos) = src[at..].find(marker) {
                let start = at + pos + marker.len();
                let name: String = src[start..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                exports += 1;
                if !calls_a_guard(body_after(&src, start))
                    && !UNGUARDED_OK.iter().any(|(n, _)| *n == name)
                {
                    unguarded.push(format!("{} in {}", name, file.display()));
                }
                at = start;
            }
        }
    }
    assert!(
        exports > 100,
        "found only {exports} exports: the scan is broken"
    );
    assert!(
        unguarded.is_empty(),
        "exports without a panic guard:\n{}",
        unguarded.join("\n")
    );
}
