//! Bot offers: the games a bot account accepts without being asked, so a human who
//! challenges it gets a game at once.

use serde::{Deserialize, Serialize};

use super::settings::GameSettings;
use super::user::UserInfo;
use crate::clock::TimeControl;
use crate::rules::{MAX_HANDICAP, MAX_SIZE, MIN_SIZE, Ruleset};

/// What a bot plays. Empty lists mean "any".
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The most live games the bot plays at once, when lower than the server's limit.
    /// The server matches no challenge or automatch request against the offer past it,
    /// so two challenges that arrive together cannot both start a game the bot has no
    /// room for; a challenge to a full bot waits for the bot to accept it.
    pub max_games: Option<usize>,
}

/// A bot online with its offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Refuses an offer that could never admit a game as written (a size no board has, a
    /// time system's name misspelt, an empty main-time range, more stones than a
    /// handicap has), so a typo does not silently turn every challenge away.
    pub fn check(&self) -> Result<(), String> {
        if let Some(bad) = self
            .board_sizes
            .iter()
            .find(|s| !(MIN_SIZE..=MAX_SIZE).contains(*s))
        {
            return Err(format!(
                "offer.board_sizes: {bad} is not a board size from {MIN_SIZE} to {MAX_SIZE}"
            ));
        }
        if let Some(bad) = self
            .time_systems
            .iter()
            .find(|t| TimeControl::system_names().all(|name| name != t.as_str()))
        {
            let names: Vec<&str> = TimeControl::system_names().collect();
            return Err(format!(
                "offer.time_systems: `{bad}` is not a time system: use {}",
                names.join(", ")
            ));
        }
        if let (Some(min), Some(max)) = (self.min_main_ms, self.max_main_ms)
            && min > max
        {
            return Err(format!(
                "offer.min_main_ms ({min}) is above offer.max_main_ms ({max})"
            ));
        }
        if self.max_games == Some(0) {
            return Err("offer.max_games must be at least 1".into());
        }
        if self.max_handicap > MAX_HANDICAP {
            return Err(format!(
                "offer.max_handicap must be from 0 to {MAX_HANDICAP}"
            ));
        }
        Ok(())
    }

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

    #[test]
    fn an_offer_that_could_never_be_read_as_meant_is_refused_naming_its_field() {
        assert_eq!(BotOffer::default().check(), Ok(()));
        let offer = |json: &str| serde_json::from_str::<BotOffer>(json).unwrap().check();
        assert_eq!(
            offer(
                r#"{"board_sizes":[9,19],"time_systems":["byoyomi"],"min_main_ms":0,"max_main_ms":0,"max_handicap":9}"#
            ),
            Ok(())
        );
        for (json, field) in [
            (r#"{"board_sizes":[1]}"#, "offer.board_sizes"),
            (r#"{"board_sizes":[26]}"#, "offer.board_sizes"),
            (r#"{"time_systems":["blitz"]}"#, "offer.time_systems"),
            (r#"{"min_main_ms":2,"max_main_ms":1}"#, "offer.min_main_ms"),
            (r#"{"max_handicap":10}"#, "offer.max_handicap"),
            (r#"{"max_games":0}"#, "offer.max_games"),
        ] {
            let err = offer(json).unwrap_err();
            assert!(err.starts_with(field), "{json}: {err}");
        }
    }
}
