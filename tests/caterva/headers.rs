//! include/b2nd.h declares no Caterva item and include/caterva.h declares
//! nothing but Caterva items (both headers go into one translation unit).

use std::path::Path;

fn header(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("include")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Names the header declares: macros, typedefs, struct tags, functions and
/// static objects, read from the lines that start a declaration.
fn declared(text: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    let mut depth = 0i32;
    let mut prev = "";
    for line in text.lines() {
        let in_cxx_guard = prev.trim_start().starts_with("#ifdef __cplusplus");
        prev = line;
        let t = line.trim_start();
        if t.starts_with("//") || t.starts_with("/*") || t.starts_with('*') {
            continue;
        }
        if let Some(rest) = t.strip_prefix("#define ") {
            names.push(ident(rest));
        } else if depth == 1 && line.starts_with('}') && t.ends_with(';') {
            // `} name;` closes a typedef.
            names.push(ident(t.trim_start_matches('}').trim()));
        } else if depth == 0 && !t.starts_with('#') && !line.starts_with(' ') && t.contains('(') {
            // `type name(args` or `type *name(args`: a function declaration.
            let head = &t[..t.find('(').unwrap()];
            if let Some(word) = head
                .split(|c: char| c == ' ' || c == '*')
                .filter(|w| !w.is_empty())
                .last()
            {
                names.push(word.to_string());
            }
        } else if depth == 0 && t.starts_with("static const ") && t.contains('=') {
            let head = &t[..t.find('=').unwrap()];
            names.push(head.split_whitespace().last().unwrap_or("").to_string());
        }
        // The `extern "C" {` guard does not nest declarations.
        // (nor does its closing brace, alone inside `#ifdef __cplusplus`).
        if !t.starts_with('#') && !line.contains("extern \"C\"") && !in_cxx_guard {
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

fn is_caterva(name: &str) -> bool {
    name.starts_with("caterva_") || name.starts_with("CATERVA_")
}

#[test]
fn b2nd_h_declares_no_caterva_item() {
    let names = declared(&header("b2nd.h"));
    assert!(
        names.iter().any(|n| n == "blosc2_schunk_new"),
        "parser found no b2nd declarations"
    );
    let leaked: Vec<_> = names.iter().filter(|n| is_caterva(n)).collect();
    assert!(leaked.is_empty(), "caterva items in b2nd.h: {leaked:?}");
    // No caterva identifier anywhere outside comments either.
    for line in header("b2nd.h").lines() {
        let t = line.trim_start();
        if !(t.starts_with("//") || t.starts_with("/*") || t.starts_with('*')) {
            assert!(
                !line.contains("caterva_") && !line.contains("CATERVA_"),
                "b2nd.h: {line}"
            );
        }
    }
}

#[test]
fn caterva_h_declares_only_caterva_items() {
    let text = header("caterva.h");
    let names = declared(&text);
    for must in [
        "caterva_ctx_new",
        "caterva_array_t",
        "caterva_open",
        "CATERVA_MAX_DIM",
        "CATERVA_CONFIG_DEFAULTS",
    ] {
        assert!(
            names.iter().any(|n| n == must),
            "{must} missing from caterva.h ({names:?})"
        );
    }
    // Caterva 0.5.0's header defines DEBUG_PRINT (its CATERVA_ERROR uses it);
    // ours does too, only where nobody defined it before.
    let foreign: Vec<_> = names
        .iter()
        .filter(|n| !is_caterva(n) && n.as_str() != "DEBUG_PRINT")
        .collect();
    assert!(
        foreign.is_empty(),
        "non-caterva items in caterva.h: {foreign:?}"
    );
    assert!(text.contains("#include \"b2nd.h\""));
}

#[test]
fn caterva_h_has_every_caterva_0_5_function() {
    let names = declared(&header("caterva.h"));
    let api = [
        "caterva_ctx_new",
        "caterva_ctx_free",
        "caterva_uninit",
        "caterva_empty",
        "caterva_zeros",
        "caterva_full",
        "caterva_free",
        "caterva_from_schunk",
        "caterva_to_cframe",
        "caterva_from_cframe",
        "caterva_open",
        "caterva_save",
        "caterva_from_buffer",
        "caterva_to_buffer",
        "caterva_get_slice",
        "caterva_squeeze",
        "caterva_squeeze_index",
        "caterva_get_slice_buffer",
        "caterva_set_slice_buffer",
        "caterva_copy",
        "caterva_remove",
        "caterva_vlmeta_add",
        "caterva_vlmeta_get",
        "caterva_vlmeta_exists",
        "caterva_vlmeta_update",
        "caterva_meta_get",
        "caterva_meta_exists",
        "caterva_meta_update",
        "caterva_print_meta",
        "caterva_resize",
        "caterva_insert",
        "caterva_append",
        "caterva_delete",
        "caterva_get_orthogonal_selection",
        "caterva_set_orthogonal_selection",
        "caterva_serialize_meta",
        "caterva_deserialize_meta",
        // Caterva 0.5.0 only (its 4-argument caterva_append is
        // caterva_append_chunk behind the caterva_append macro).
        "caterva_from_serial_schunk",
        "caterva_append_chunk",
    ];
    for f in api {
        assert!(names.iter().any(|n| n == f), "{f} missing from caterva.h");
    }
}

#[test]
fn caterva_h_declares_each_caterva_item_once() {
    let mut seen = std::collections::HashSet::new();
    let twice: Vec<String> = declared(&header("caterva.h"))
        .into_iter()
        .filter(|n| is_caterva(n) && !seen.insert(n.clone()))
        .collect();
    // The legitimate repeats: macros defined on both sides of an #if, the
    // static helper's prototype before its definition, and caterva_append,
    // a function and the macro that dispatches on the argument count.
    let expected = [
        "CATERVA_ANONYMOUS_",
        "CATERVA_ATTRIBUTE_UNUSED",
        "caterva_error_string",
        "caterva_append",
    ];
    assert_eq!(twice, expected, "caterva.h declares items more than once");
}
