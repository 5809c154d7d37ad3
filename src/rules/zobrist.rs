//! Zobrist keys: one fixed random 64-bit number per (colour, cell), made at compile time
//! so every process, test and stored game hashes positions the same way.

use super::cells::CELLS;
use super::vertex::Color;

/// Mixed into a position key when White is to move (situational superko).
pub const WHITE_TO_MOVE: u64 = splitmix(0x7e46_3e4e_5ea1_0001);

static KEYS: [[u64; CELLS]; 2] = make_keys();

const fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const fn make_keys() -> [[u64; CELLS]; 2] {
    let mut keys = [[0u64; CELLS]; 2];
    let mut i = 0;
    while i < CELLS {
        keys[0][i] = splitmix(2 * i as u64 + 0x1234_5678);
        keys[1][i] = splitmix(2 * i as u64 + 1 + 0x1234_5678);
        i += 1;
    }
    keys
}

/// The key of a `color` stone on padded cell `cell`.
#[inline]
pub fn key(color: Color, cell: usize) -> u64 {
    KEYS[color.index()][cell]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct() {
        let mut all: Vec<u64> = KEYS.iter().flatten().copied().collect();
        all.push(WHITE_TO_MOVE);
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
