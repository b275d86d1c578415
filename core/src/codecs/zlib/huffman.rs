//! Length-limited Huffman codes for deflate blocks.
//!
//! Lengths come from package-merge, which gives the cheapest code whose
//! lengths stay within the limit (15 bits for literals/lengths and distances,
//! 7 for the code-length alphabet) and is always complete, as zlib's inflate
//! requires of every code that has more than one symbol.

/// The largest alphabet coded here (literal/length: 286 symbols).
const MAX_SYMBOLS: usize = 286;
/// Package-merge lists hold at most the leaves plus half of the level below.
const MAX_ITEMS: usize = 2 * MAX_SYMBOLS;
const MAX_LIMIT: usize = 15;

/// Writes into `lens` the code length of each symbol of `freqs` (0 for
/// unused ones), no longer than `limit`. Fewer than two used symbols get a
/// partner (deflate's decoders want a complete code), so `freqs` must have at
/// least two entries.
pub(super) fn code_lengths(freqs: &[u32], limit: u32, lens: &mut [u8]) {
    let n_all = freqs.len();
    debug_assert!((2..=MAX_SYMBOLS).contains(&n_all) && lens.len() == n_all);
    debug_assert!(limit as usize <= MAX_LIMIT && (1usize << limit) >= n_all);
    lens.fill(0);
    // Used symbols sorted by frequency, ties by symbol (stable, so
    // deterministic across runs and thread counts).
    let mut leaves = [(0u32, 0u16); MAX_SYMBOLS];
    let mut n = 0;
    for (sym, &f) in freqs.iter().enumerate() {
        if f > 0 {
            leaves[n] = (f, sym as u16);
            n += 1;
        }
    }
    if n < 2 {
        let used = leaves[..n].first().map_or(0, |l| l.1 as usize);
        lens[used] = 1;
        lens[if used == 0 { 1 } else { 0 }] = 1;
        return;
    }
    let leaves = &mut leaves[..n];
    leaves.sort_unstable();
    if !huffman_lengths(leaves, limit, lens) {
        package_merge(leaves, limit, lens);
    }
}

/// Plain Huffman lengths for `leaves` (sorted by weight, at least two),
/// written into `lens`; `false` (and `lens` unspecified) when some length
/// exceeds `limit`. The internal nodes come out in nondecreasing weight, so
/// two queues replace a heap.
fn huffman_lengths(leaves: &[(u32, u16)], limit: u32, lens: &mut [u8]) -> bool {
    let n = leaves.len();
    let mut weight = [0u64; MAX_SYMBOLS];
    let mut parent = [0u16; MAX_SYMBOLS];
    let mut leaf_parent = [0u16; MAX_SYMBOLS];
    let (mut li, mut ii) = (0, 0);
    for node in 0..n - 1 {
        let mut sum = 0;
        for _ in 0..2 {
            if li < n && (ii >= node || u64::from(leaves[li].0) <= weight[ii]) {
                sum += u64::from(leaves[li].0);
                leaf_parent[li] = node as u16;
                li += 1;
            } else {
                sum += weight[ii];
                parent[ii] = node as u16;
                ii += 1;
            }
        }
        weight[node] = sum;
    }
    // The root is the last node; parents come after their children.
    let mut depth = [0u8; MAX_SYMBOLS];
    for node in (0..n - 2).rev() {
        depth[node] = depth[parent[node] as usize] + 1;
    }
    let mut deepest = 0;
    for (k, leaf) in leaves.iter().enumerate() {
        let d = depth[leaf_parent[k] as usize] + 1;
        deepest = deepest.max(d);
        lens[leaf.1 as usize] = d;
    }
    u32::from(deepest) <= limit
}

/// Optimal lengths within `limit` for `leaves` (sorted by weight, at least
/// two) by package-merge; `lens` must start zeroed for the used symbols.
fn package_merge(leaves: &[(u32, u16)], limit: u32, lens: &mut [u8]) {
    let n = leaves.len();
    for leaf in leaves {
        lens[leaf.1 as usize] = 0;
    }
    // Level `limit - 1` (the deepest) holds the leaves alone; each level up
    // merges the leaves with the pairs ("packages") of the level below.
    // `is_leaf[level][k]` says what the k-th item of that level's list is.
    let levels = limit as usize;
    let mut is_leaf = [[false; MAX_ITEMS]; MAX_LIMIT];
    let mut below = [0u64; MAX_ITEMS];
    let mut cur = [0u64; MAX_ITEMS];
    for (k, leaf) in leaves.iter().enumerate() {
        below[k] = u64::from(leaf.0);
        is_leaf[levels - 1][k] = true;
    }
    let mut below_len = n;
    for level in (0..levels - 1).rev() {
        let packages = below_len / 2;
        let (mut li, mut pi, mut len) = (0, 0, 0);
        while li < n || pi < packages {
            let leaf_w = leaves.get(li).map(|l| u64::from(l.0));
            let pack_w = (pi < packages).then(|| below[2 * pi] + below[2 * pi + 1]);
            let take_leaf = match (leaf_w, pack_w) {
                (Some(l), Some(p)) => l <= p,
                (Some(_), None) => true,
                _ => false,
            };
            if take_leaf {
                cur[len] = leaf_w.unwrap_or(0);
                li += 1;
            } else {
                cur[len] = pack_w.unwrap_or(0);
                pi += 1;
            }
            is_leaf[level][len] = take_leaf;
            len += 1;
        }
        below[..len].copy_from_slice(&cur[..len]);
        below_len = len;
    }

    // The cheapest 2n - 2 items of the top list make the code; a leaf's
    // length is the number of levels whose chosen items include it, and the
    // chosen leaves of a level are always its lightest ones.
    let mut take = 2 * n - 2;
    for flags in is_leaf.iter().take(levels) {
        let chosen_leaves = flags[..take].iter().filter(|&&f| f).count();
        for leaf in &leaves[..chosen_leaves] {
            lens[leaf.1 as usize] += 1;
        }
        take = 2 * (take - chosen_leaves);
        if take == 0 {
            break;
        }
    }
}

/// Canonical codes for `lens`, bit-reversed so that they can be written
/// lowest bit first.
pub(super) fn canonical_codes(lens: &[u8], codes: &mut [u16]) {
    let mut count = [0u16; MAX_LIMIT + 1];
    for &l in lens {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u16; MAX_LIMIT + 2];
    let mut code = 0u16;
    for bits in 1..=MAX_LIMIT {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    for (sym, &l) in lens.iter().enumerate() {
        if l > 0 {
            let c = next[l as usize];
            next[l as usize] += 1;
            codes[sym] = c.reverse_bits() >> (16 - u32::from(l));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kraft(lens: &[u8], limit: u32) -> u64 {
        lens.iter()
            .filter(|&&l| l > 0)
            .map(|&l| 1u64 << (limit - u32::from(l)))
            .sum()
    }

    fn cost(freqs: &[u32], lens: &[u8]) -> u64 {
        freqs
            .iter()
            .zip(lens)
            .map(|(&f, &l)| u64::from(f) * u64::from(l))
            .sum()
    }

    /// Brute force: the cheapest complete code within the limit, by trying
    /// every assignment of lengths (tiny alphabets only).
    fn best_cost(freqs: &[u32], limit: u8) -> u64 {
        fn go(i: usize, freqs: &[u32], limit: u8, lens: &mut Vec<u8>, best: &mut u64) {
            if i == freqs.len() {
                if kraft(lens, u32::from(limit)) == 1u64 << limit {
                    *best = (*best).min(cost(freqs, lens));
                }
                return;
            }
            for l in 1..=limit {
                lens.push(l);
                go(i + 1, freqs, limit, lens, best);
                lens.pop();
            }
        }
        let mut best = u64::MAX;
        go(0, freqs, limit, &mut Vec::new(), &mut best);
        best
    }

    #[test]
    fn lengths_are_complete_optimal_and_limited() {
        let mut x = 0x2545_f491u32;
        for round in 0..300 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let n = 2 + (x as usize % 5);
            let limit = 3 + (round % 3) as u8;
            let freqs: Vec<u32> = (0..n)
                .map(|i| {
                    let v = x.rotate_left(i as u32 * 7);
                    // Skewed: some huge, some tiny, some equal.
                    if v % 3 == 0 {
                        1
                    } else {
                        1 + (v >> (v % 24)) % 10_000
                    }
                })
                .collect();
            let mut lens = vec![0u8; n];
            code_lengths(&freqs, u32::from(limit), &mut lens);
            assert!(
                lens.iter().all(|&l| (1..=limit).contains(&l)),
                "{freqs:?} {lens:?}"
            );
            assert_eq!(
                kraft(&lens, u32::from(limit)),
                1 << limit,
                "{freqs:?} {lens:?}"
            );
            assert_eq!(
                cost(&freqs, &lens),
                best_cost(&freqs, limit),
                "{freqs:?} {lens:?}"
            );
        }
    }

    /// Where plain Huffman fits the limit, package-merge costs the same
    /// (both are optimal), on alphabets of deflate's sizes.
    #[test]
    fn package_merge_agrees_with_huffman_when_the_limit_is_not_hit() {
        let mut x = 0x9e37_79b9u32;
        let mut compared = 0;
        for round in 0..200 {
            let n = [19usize, 30, 286][round % 3];
            let freqs: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    if x % 4 == 0 {
                        0
                    } else {
                        (x >> 8) % (1 + (x % 5000))
                    }
                })
                .collect();
            let mut leaves: Vec<(u32, u16)> = freqs
                .iter()
                .enumerate()
                .filter(|p| *p.1 > 0)
                .map(|(s, &f)| (f, s as u16))
                .collect();
            if leaves.len() < 2 {
                continue;
            }
            leaves.sort_unstable();
            let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
            if huffman_lengths(&leaves, 15, &mut a) {
                package_merge(&leaves, 15, &mut b);
                assert_eq!(cost(&freqs, &a), cost(&freqs, &b));
                assert_eq!(kraft(&b, 15), 1 << 15);
                compared += 1;
            }
        }
        assert!(compared > 150);
    }

    #[test]
    fn the_limit_holds_on_fibonacci_frequencies() {
        // Fibonacci weights make the unlimited Huffman tree as deep as the alphabet.
        let mut freqs = vec![0u32; 286];
        let (mut a, mut b) = (1u32, 1u32);
        for f in freqs.iter_mut().take(30) {
            *f = a;
            (a, b) = (b, a.saturating_add(b));
        }
        let mut lens = vec![0u8; 286];
        code_lengths(&freqs, 15, &mut lens);
        assert!(lens[..30].iter().all(|&l| (1..=15).contains(&l)));
        assert!(lens[30..].iter().all(|&l| l == 0));
        assert_eq!(kraft(&lens, 15), 1 << 15);
    }

    #[test]
    fn one_or_no_used_symbol_still_gives_a_complete_code() {
        let mut lens = [0u8; 30];
        code_lengths(&[0; 30], 15, &mut lens);
        assert_eq!((lens[0], lens[1], kraft(&lens, 15)), (1, 1, 1 << 15));
        let mut f = [0u32; 30];
        f[0] = 5;
        code_lengths(&f, 15, &mut lens);
        assert_eq!((lens[0], lens[1], kraft(&lens, 15)), (1, 1, 1 << 15));
        f = [0; 30];
        f[7] = 5;
        code_lengths(&f, 15, &mut lens);
        assert_eq!((lens[0], lens[7], kraft(&lens, 15)), (1, 1, 1 << 15));
    }

    #[test]
    fn canonical_codes_follow_rfc_1951() {
        // The example of RFC 1951 section 3.2.2: lengths (3,3,3,3,3,2,4,4)
        // give codes 010,011,100,101,110,00,1110,1111 (written reversed).
        let lens = [3u8, 3, 3, 3, 3, 2, 4, 4];
        let mut codes = [0u16; 8];
        canonical_codes(&lens, &mut codes);
        let want = [0b010u16, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111];
        for i in 0..8 {
            let rev = want[i].reverse_bits() >> (16 - lens[i]);
            assert_eq!(codes[i], rev, "symbol {i}");
        }
    }
}
