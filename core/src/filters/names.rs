//! Filter names, for tools that print or parse a filter pipeline. The names
//! follow the reference's enum constants (`BLOSC_SHUFFLE` → "shuffle",
//! `BLOSC_FILTER_NDCELL` → "ndcell"...), lower-cased.

/// (code, name) of every filter the reference defines.
const NAMES: [(u8, &str); 10] = [
    (0, "nofilter"),
    (1, "shuffle"),
    (2, "bitshuffle"),
    (3, "delta"),
    (4, "trunc_prec"),
    (32, "ndcell"),
    (33, "ndmean"),
    (34, "bytedelta_buggy"),
    (35, "bytedelta"),
    (36, "int_trunc"),
];

/// The name of filter `code`, if it has one.
pub fn filter_name(code: u8) -> Option<&'static str> {
    NAMES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The code of the filter called `name` (case-insensitive); "none" is
/// accepted for "nofilter".
pub fn filter_code(name: &str) -> Option<u8> {
    if name.eq_ignore_ascii_case("none") {
        return Some(0);
    }
    NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(c, _)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (code, name) in NAMES {
            assert_eq!(filter_code(name), Some(code));
            assert_eq!(filter_name(code), Some(name));
        }
        assert_eq!(filter_code("none"), Some(0));
        assert_eq!(filter_code("Shuffle"), Some(1));
        assert_eq!(filter_code("zip"), None);
        assert_eq!(filter_name(7), None);
    }
}
