//! Generates the C headers from the Rust FFI layer with cbindgen.
//!
//! The headers are committed. A build rewrites them only when their content
//! changes, so `git diff --exit-code include/` after a build tells whether the
//! committed header is stale (the test command checks exactly that).

use std::path::Path;

fn generate(crate_dir: &Path, config_name: &str, header_name: &str) {
    let config_path = crate_dir.join(config_name);
    let config = cbindgen::Config::from_file(&config_path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", config_path.display()));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen failed for {header_name}: {e}"));
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let out = crate_dir.join("include").join(header_name);
    let current = std::fs::read(&out).unwrap_or_default();
    if current != fresh {
        std::fs::write(&out, &fresh).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
    }
}

fn main() {
    let crate_dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // A SONAME lets C programs link with -lb2nd and find the library by name at run time.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2nd.so");
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    generate(&crate_dir, "cbindgen.toml", "b2nd.h");
}
