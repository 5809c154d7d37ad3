//! Short random ids for games, seeks, reports and node incarnations: one alphabet, one
//! length, used by every layer (so none need reach up into another for it).

/// A short random id (base 36).
pub fn new_id() -> String {
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..10)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}
