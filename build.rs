//! Generates the C headers from the Rust FFI layer with cbindgen.
//!
//! The headers are committed. A build rewrites them only when their content
//! changes, so `git diff --exit-code include/` after a build tells whether the
//! committed header is stale (the test command checks exactly that).

use std::path::Path;

/// What cbindgen reads for one header.
enum Sources {
    /// The whole crate, minus the named items.
    CrateExcept(Vec<String>),
    /// Only these files (no other item of the crate can leak in).
    Files(Vec<std::path::PathBuf>),
}

fn generate(crate_dir: &Path, config_name: &str, header_name: &str, sources: Sources) {
    let config_path = crate_dir.join(config_name);
    let mut config = cbindgen::Config::from_file(&config_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", config_path.display()));
    let mut builder = cbindgen::Builder::new();
    match sources {
        Sources::CrateExcept(names) => {
            config.export.exclude.extend(names);
            builder = builder.with_crate(crate_dir);
        }
        Sources::Files(files) => {
            for f in files {
                builder = builder.with_src(f);
            }
        }
    }
    let bindings = builder
        .with_config(config)
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen failed for {header_name}: {e}"));
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = drop_opaque_self_typedefs(&fresh);
    let out = crate_dir.join("include").join(header_name);
    let current = std::fs::read(&out).unwrap_or_default();
    if current != fresh {
        std::fs::write(&out, &fresh).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
    }
}

fn main() {
    let crate_dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // A versioned SONAME (the crate's major version, as CMakeLists.txt's B2ND_SOVERSION) lets
    // C programs link with -lb2nd and find the ABI they were built for at run time.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2nd.so.{major}");
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=cbindgen-caterva.toml");
    // The Caterva API (src/caterva) goes to caterva.h only, everything
    // else to b2nd.h only: caterva.h is generated from the Caterva files
    // alone, and b2nd.h excludes every item those files declare.
    let caterva_files = caterva_sources(&crate_dir.join("src/caterva"));
    let caterva_names = declared_names(&caterva_files);
    generate(
        &crate_dir,
        "cbindgen.toml",
        "b2nd.h",
        Sources::CrateExcept(caterva_names),
    );
    generate(
        &crate_dir,
        "cbindgen-caterva.toml",
        "caterva.h",
        // cbindgen follows `mod` items from mod.rs; listing the submodules too
        // would declare every function twice.
        Sources::Files(vec![crate_dir.join("src/caterva/mod.rs")]),
    );
}

/// Removes the `typedef struct X_s X_s;` lines (and the comment above each)
/// that cbindgen writes for the opaque handles: the reference's headers name
/// those only `blosc2_context`, `blosc2_frame` and `b2nd_context_t`, and a
/// second typedef of the tag clashes with code of the reference's that
/// declares it (its private `frame.h`).
fn drop_opaque_self_typedefs(header: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(header);
    let is_self_typedef = |l: &str| {
        let words: Vec<&str> = l.trim_end_matches(';').split_whitespace().collect();
        matches!(words.as_slice(), ["typedef", "struct", tag, name] if tag == name && tag.ends_with("_s"))
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut skip_blank = false;
    for line in text.lines() {
        if is_self_typedef(line) {
            while kept.last().is_some_and(|l| l.starts_with("//")) {
                kept.pop();
            }
            skip_blank = true;
            continue;
        }
        if std::mem::take(&mut skip_blank) && line.trim().is_empty() {
            continue;
        }
        kept.push(line);
    }
    let mut out = kept.join("\n");
    out.push('\n');
    out.into_bytes()
}

/// The Rust files of the Caterva C API, sorted for a stable header.
fn caterva_sources(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    files
}

/// Names of the Caterva items (`caterva_*`, `CATERVA_*`) the files declare
/// as consts, statics, structs, enums, unions, type aliases or functions.
fn declared_names(files: &[std::path::PathBuf]) -> Vec<String> {
    const KEYWORDS: [&str; 7] = ["const", "static", "struct", "enum", "union", "type", "fn"];
    let mut names = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            let caterva = pair[1].starts_with("caterva_") || pair[1].starts_with("CATERVA_");
            if caterva && KEYWORDS.contains(&pair[0]) && !names.iter().any(|n| n == pair[1]) {
                names.push(pair[1].to_string());
            }
        }
    }
    names
}
