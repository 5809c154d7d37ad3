//! Every rated player's rank as others see it (the overall pool's, `"14k?"` while
//! provisional), kept in memory by the rating task so the lobby can show ranks beside
//! names without a store read per message. Only the rating task writes it; a player who
//! has no rated game in the ledger is not in it.

use std::sync::Arc;

use dashmap::DashMap;

use crate::rating::{Ledger, Pool, ShownRank};

/// A cheap handle to the shared map: clones see the same ranks.
#[derive(Clone, Default)]
pub struct Ranks(Arc<DashMap<String, ShownRank>>);

impl Ranks {
    /// The player's shown rank, or `None` for a player with no rated game (yet, or not
    /// since the server started and caught up with the store).
    pub fn of(&self, player: &str) -> Option<String> {
        self.0.get(player).map(|r| r.to_string())
    }

    /// Makes these ranks `fresh`'s (after a rebuild): players not in it lose theirs.
    pub(super) fn replace_with(&self, fresh: &Ranks) {
        self.0.retain(|player, _| fresh.0.contains_key(player));
        for entry in fresh.0.iter() {
            self.0.insert(entry.key().clone(), *entry.value());
        }
    }

    /// Takes the player's overall standing from the ledger after a game was folded in.
    pub(super) fn update(&self, ledger: &Ledger, player: &str) {
        let standing = ledger.standing(player, Pool::Overall);
        if standing.games > 0 {
            self.0
                .insert(player.to_string(), ShownRank::of(&standing.rating));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::RatedResult;

    #[test]
    fn a_player_has_a_rank_once_a_rated_game_is_in_the_ledger() {
        let ranks = Ranks::default();
        let mut ledger = Ledger::default();
        ranks.update(&ledger, "alice");
        assert_eq!(ranks.of("alice"), None);
        let result = RatedResult {
            game_id: "g".into(),
            ended_at_ms: 1,
            black: "alice".into(),
            white: "bob".into(),
            size: 9,
            handicap: 0,
            result: "B+R".parse().unwrap(),
        };
        ledger.apply(&result).unwrap();
        let shared = ranks.clone();
        ranks.update(&ledger, "alice");
        ranks.update(&ledger, "bob");
        let shown = |p: &str| ShownRank::of(&ledger.standing(p, Pool::Overall).rating).to_string();
        assert_eq!(shared.of("alice"), Some(shown("alice")));
        assert_eq!(shared.of("bob"), Some(shown("bob")));
        assert!(
            shared.of("alice").unwrap().ends_with('?'),
            "one game is provisional"
        );
        assert_eq!(shared.of("carol"), None);
    }
}
