//! Who blocks whom: a blocked user cannot challenge you, accept your seek, be matched
//! with you or chat to you in a game, and the other way round. Kept in memory for the
//! lobby's checks, loaded from the store at start and written through on every change.

use std::collections::HashSet;

use dashmap::DashMap;

/// The most users one user may block.
pub const MAX_BLOCKS_PER_USER: usize = 1000;

/// Every block, by blocker.
#[derive(Default)]
pub struct Blocks {
    by: DashMap<String, HashSet<String>>,
}

impl Blocks {
    /// Takes the stored blocks, `(blocker, blocked)`.
    pub fn load(&self, pairs: Vec<(String, String)>) {
        for (blocker, blocked) in pairs {
            self.by.entry(blocker).or_default().insert(blocked);
        }
    }

    /// Whether `blocker` has blocked `blocked`.
    pub fn blocks(&self, blocker: &str, blocked: &str) -> bool {
        self.by.get(blocker).is_some_and(|b| b.contains(blocked))
    }

    /// Whether either of `a` and `b` has blocked the other: they do not meet.
    pub fn is_blocked(&self, a: &str, b: &str) -> bool {
        self.blocks(a, b) || self.blocks(b, a)
    }

    /// How many users `blocker` blocks.
    pub fn count(&self, blocker: &str) -> usize {
        self.by.get(blocker).map_or(0, |b| b.len())
    }

    /// Records a block (`on`) or its end, once the store has it.
    pub fn set(&self, blocker: &str, blocked: &str, on: bool) {
        match on {
            true => {
                self.by
                    .entry(blocker.to_string())
                    .or_default()
                    .insert(blocked.to_string());
            }
            false => {
                if let Some(mut b) = self.by.get_mut(blocker) {
                    b.remove(blocked);
                }
            }
        }
    }
}
