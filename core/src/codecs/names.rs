//! Codec names as the reference spells them (`blosc2_compcode_to_compname`),
//! for tools that print or parse them. The C layer keeps its own C-string
//! table; this one is for Rust callers.

/// (code, name) of every codec the reference names: the built-in ones, then
/// its plugin codecs (only ndlz and the three zfp modes run here).
const NAMES: [(u8, &str); 11] = [
    (0, "blosclz"),
    (1, "lz4"),
    (2, "lz4hc"),
    (4, "zlib"),
    (5, "zstd"),
    (32, "ndlz"),
    (33, "zfp_acc"),
    (34, "zfp_prec"),
    (35, "zfp_rate"),
    (36, "openhtj2k"),
    (37, "grok"),
];

/// The lower-case name of codec `code`, if the reference names it.
pub fn codec_name(code: u8) -> Option<&'static str> {
    NAMES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The code of the codec called `name` (case-insensitive), if this crate can
/// compress with it.
pub fn codec_code(name: &str) -> Option<u8> {
    NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(c, _)| *c)
        .filter(|&c| super::Codec::is_builtin(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_for_builtin_codecs() {
        for name in [
            "blosclz", "lz4", "lz4hc", "zlib", "zstd", "ndlz", "zfp_rate",
        ] {
            let code = codec_code(name).unwrap();
            assert_eq!(codec_name(code), Some(name));
        }
        assert_eq!(codec_code("ZSTD"), Some(5));
        // Named by the reference, but not runnable here.
        assert_eq!(codec_name(37), Some("grok"));
        assert_eq!(codec_code("grok"), None);
        assert_eq!(codec_code("nope"), None);
        assert_eq!(codec_name(3), None);
    }
}
