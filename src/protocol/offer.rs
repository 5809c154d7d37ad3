//! Bot offers: the games a bot account accepts without being asked, so a human who
//! challenges it gets a game at once.

use serde::{Deserialize, Serialize};

use super::settings::GameSettings;
use super::user::UserInfo;
use crate::clock::TimeControl;
use crate::rules::Ruleset;

/// What a bot plays. Empty lists mean "any".
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BotOffer {
    pub board_sizes: Vec<u8>,
    pub rulesets: Vec<Ruleset>,
    /// Time systems by name: `none`, `absolute`, `fischer`, `byoyomi`, `canadian`, `simple`.
    pub time_systems: Vec<String>,
    /// Main time range in milliseconds (inclusive), when set.
    pub min_main_ms: Option<u64>,
    pub max_main_ms: Option<u64>,
    /// Largest handicap accepted (0: even games only).
    pub max_handicap: u8,
}

/// A bot online with its offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BotListing {
    pub user: UserInfo,
    pub offer: BotOffer,
}

/// The name of a time system, as offers list them.
pub fn time_system(tc: &TimeControl) -> &'static str {
    match tc {
        TimeControl::None => "none",
        TimeControl::Absolute { .. } => "absolute",
        TimeControl::Fischer { .. } => "fischer",
        TimeControl::Byoyomi { .. } => "byoyomi",
        TimeControl::Canadian { .. } => "canadian",
        TimeControl::Simple { .. } => "simple",
    }
}

/// The time an offer's main-time range is about: for `simple`, the time per move.
fn main_ms(tc: &TimeControl) -> u64 {
    match *tc {
        TimeControl::Simple { per_move_ms } => per_move_ms,
        _ => tc.main_ms().unwrap_or(0),
    }
}

impl BotOffer {
    /// Whether a game with `s` fits the offer; the error says which setting does not.
    pub fn admits(&self, s: &GameSettings) -> Result<(), String> {
        if !self.board_sizes.is_empty() && !self.board_sizes.contains(&s.board_size) {
            return Err(format!("this bot plays board sizes {:?}", self.board_sizes));
        }
        if !self.rulesets.is_empty() && !self.rulesets.contains(&s.ruleset) {
            let names: Vec<&str> = self.rulesets.iter().map(|r| r.name()).collect();
            return Err(format!("this bot plays the rulesets {names:?}"));
        }
        let system = time_system(&s.clock);
        if !self.time_systems.is_empty() && !self.time_systems.iter().any(|t| t == system) {
            return Err(format!(
                "this bot plays the time systems {:?}",
                self.time_systems
            ));
        }
        let main = main_ms(&s.clock);
        if s.clock.is_timed()
            && (self.min_main_ms.is_some_and(|m| main < m)
                || self.max_main_ms.is_some_and(|m| main > m))
        {
            return Err(format!(
                "this bot plays main times from {} to {} ms",
                self.min_main_ms.unwrap_or(0),
                self.max_main_ms
                    .map_or("any".to_string(), |m| m.to_string())
            ));
        }
        if s.handicap > self.max_handicap {
            return Err(format!(
                "this bot takes at most {} handicap stones",
                self.max_handicap
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_admits_what_it_lists_and_names_what_it_does_not() {
        let offer: BotOffer = serde_json::from_str(
            r#"{"board_sizes":[9,13],"rulesets":["chinese"],"time_systems":["none","byoyomi"],"max_handicap":4}"#,
        )
        .unwrap();
        let ok: GameSettings = serde_json::from_str(r#"{"board_size":9}"#).unwrap();
        assert!(offer.admits(&ok).is_ok());
        let big: GameSettings = serde_json::from_str(r#"{"board_size":19}"#).unwrap();
        assert!(offer.admits(&big).unwrap_err().contains("board sizes"));
        let jp: GameSettings =
            serde_json::from_str(r#"{"board_size":9,"ruleset":"japanese"}"#).unwrap();
        assert!(offer.admits(&jp).unwrap_err().contains("rulesets"));
        let fischer: GameSettings = serde_json::from_str(
            r#"{"board_size":9,"clock":{"system":"fischer","main_ms":60000,"increment_ms":1000}}"#,
        )
        .unwrap();
        assert!(offer.admits(&fischer).unwrap_err().contains("time systems"));
        let h: GameSettings = serde_json::from_str(r#"{"board_size":9,"handicap":5}"#).unwrap();
        assert!(offer.admits(&h).unwrap_err().contains("handicap"));
        assert!(BotOffer::default().admits(&big).is_ok() || BotOffer::default().max_handicap == 0);
    }
}
