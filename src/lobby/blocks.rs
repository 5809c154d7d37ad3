//! Who blocks whom: a blocked user cannot challenge you, accept your seek, be matched
//! with you or chat to you in a game, and the other way round. Kept in memory for the
//! lobby's checks, loaded from the store at start and written through on every change.

use std::collections::HashSet;

use dashmap::DashMap;

use crate::protocol::{ErrorCode, Refusal};

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

    /// Why `actor` may not meet `other` (challenge them, accept their seek), said from the
    /// actor's side: that the actor blocked `other`, which the actor can undo, or else that
    /// `other` does not accept them; never more about `other`'s blocks than that one fact.
    /// `None` when neither blocks the other.
    pub fn refusal(&self, actor: &str, other: &str) -> Option<Refusal> {
        let message = if self.blocks(actor, other) {
            format!("you have blocked `{other}`; `unblock` them first")
        } else if self.blocks(other, actor) {
            format!("`{other}` does not accept games with you")
        } else {
            return None;
        };
        Some(Refusal::new(ErrorCode::Forbidden, message))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_who_blocked_whom_from_the_asker_s_side() {
        let blocks = Blocks::default();
        assert!(blocks.refusal("ann", "bob").is_none());
        blocks.set("bob", "ann", true);
        let to_ann = blocks.refusal("ann", "bob").expect("bob blocks ann");
        assert_eq!(to_ann.code, ErrorCode::Forbidden);
        assert_eq!(to_ann.message, "`bob` does not accept games with you");
        let to_bob = blocks.refusal("bob", "ann").expect("bob blocks ann");
        assert_eq!(
            to_bob.message,
            "you have blocked `ann`; `unblock` them first"
        );
        // Both ways: each hears of their own block, not of the other's.
        blocks.set("ann", "bob", true);
        let to_ann = blocks.refusal("ann", "bob").expect("both block");
        assert_eq!(
            to_ann.message,
            "you have blocked `bob`; `unblock` them first"
        );
        blocks.set("ann", "bob", false);
        blocks.set("bob", "ann", false);
        assert!(blocks.refusal("ann", "bob").is_none());
    }
}
