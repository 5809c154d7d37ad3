//! Game settings as a challenge carries them, and their validation. A challenge may leave
//! fields out; [`GameSettings::resolve`] fills in the defaults so every game stores and
//! shows complete settings.

use serde::{Deserialize, Serialize};

use super::error::{ErrorCode, Refusal};
use crate::clock::{ClockLimits, TimeControl};
use crate::rules::{self, HalfPoints, KoRule, MAX_SIZE, MIN_SIZE, Ruleset};

/// Where handicap stones go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandicapPlacement {
    /// The traditional star points, placed by the server.
    #[default]
    Fixed,
    /// Black chooses the points with `place_handicap`.
    Free,
}

/// The colour the challenger takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    Black,
    White,
    /// A fair draw by the server that both players can verify afterwards.
    #[default]
    Nigiri,
}

fn default_size() -> u8 {
    19
}

/// Everything that fixes how a game is played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameSettings {
    #[serde(default = "default_size")]
    pub board_size: u8,
    #[serde(default)]
    pub ruleset: Ruleset,
    /// Defaults to the ruleset's rule (situational superko for `chinese`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ko_rule: Option<KoRule>,
    /// Komi in points. Defaults to the ruleset's (7.5 = 3¾ stones for `chinese`), or 0 in a
    /// handicap game, where Black gives back N/2 stones instead (docs/RULES.md §7.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi: Option<HalfPoints>,
    #[serde(default)]
    pub handicap: u8,
    #[serde(default)]
    pub handicap_placement: HandicapPlacement,
    /// The challenger's colour.
    #[serde(default)]
    pub color: ColorChoice,
    #[serde(default = "untimed")]
    pub clock: TimeControl,
    /// Scheduled start, server Unix ms. Clocks run from then whether or not the players
    /// are there; a player absent `forfeit_after_ms` past it loses by forfeit, and if
    /// both are, both lose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<i64>,
    /// Lateness allowed after a scheduled start.
    #[serde(default = "default_forfeit_after")]
    pub forfeit_after_ms: u64,
    /// How long a player may stay away from a running game before the opponent may
    /// claim it with `claim_win`.
    #[serde(default = "default_claim_after")]
    pub claim_after_ms: u64,
    /// How long the dead-stone phase may last (see client-protocol/scoring.md for what
    /// happens then).
    #[serde(default = "default_scoring")]
    pub scoring_ms: u64,
}

fn default_forfeit_after() -> u64 {
    15 * 60 * 1000
}

fn default_claim_after() -> u64 {
    2 * 60 * 1000
}

fn default_scoring() -> u64 {
    5 * 60 * 1000
}

fn untimed() -> TimeControl {
    TimeControl::None
}

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            board_size: default_size(),
            ruleset: Ruleset::default(),
            ko_rule: None,
            komi: None,
            handicap: 0,
            handicap_placement: HandicapPlacement::default(),
            color: ColorChoice::default(),
            clock: untimed(),
            start_at: None,
            forfeit_after_ms: default_forfeit_after(),
            claim_after_ms: default_claim_after(),
            scoring_ms: default_scoring(),
        }
    }
}

fn bad(message: String) -> Refusal {
    Refusal::new(ErrorCode::BadRequest, message)
}

impl GameSettings {
    /// Checks every field and fills in the defaults; refusals name the field.
    pub fn resolve(mut self, clock_limits: &ClockLimits) -> Result<GameSettings, Refusal> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.board_size) {
            return Err(bad(format!(
                "settings.board_size must be from {MIN_SIZE} to {MAX_SIZE}, not {}",
                self.board_size
            )));
        }
        rules::check_handicap(self.handicap).map_err(|e| bad(format!("settings.handicap: {e}")))?;
        let area = u16::from(self.board_size) * u16::from(self.board_size);
        if u16::from(self.handicap) >= area {
            return Err(bad(
                "settings.handicap: more stones than the board has points".into(),
            ));
        }
        if self.handicap >= 2 && self.handicap_placement == HandicapPlacement::Fixed {
            rules::fixed_handicap(self.board_size, self.handicap).map_err(|e| {
                bad(format!(
                    "settings.handicap: {e}; use handicap_placement free"
                ))
            })?;
        }
        if let Some(komi) = self.komi
            && komi.0.abs() > 2 * 500
        {
            return Err(bad("settings.komi must be within ±500 points".into()));
        }
        const DAY: u64 = 24 * 3600 * 1000;
        for (field, value, min) in [
            ("forfeit_after_ms", self.forfeit_after_ms, 0),
            ("claim_after_ms", self.claim_after_ms, 1000),
            ("scoring_ms", self.scoring_ms, 10_000),
        ] {
            if value < min || value > DAY {
                return Err(bad(format!(
                    "settings.{field} must be from {min} ms to one day"
                )));
            }
        }
        if let Some(start) = self.start_at
            && (start < 0 || start > crate::time::wall_ms() + 366 * DAY as i64)
        {
            return Err(bad(
                "settings.start_at must be a Unix time in ms within a year".into(),
            ));
        }
        self.clock
            .validate(clock_limits)
            .map_err(|e| bad(format!("settings.clock.{}: {e}", e.field())))?;
        self.ko_rule.get_or_insert(self.ruleset.default_ko_rule());
        let komi = if self.handicap >= 2 {
            HalfPoints(0)
        } else {
            self.ruleset.default_komi()
        };
        self.komi.get_or_insert(komi);
        Ok(self)
    }

    /// The repetition rule (the ruleset's unless set).
    pub fn ko_rule(&self) -> KoRule {
        self.ko_rule.unwrap_or(self.ruleset.default_ko_rule())
    }

    /// Komi in half points (the resolved default unless set).
    pub fn komi(&self) -> HalfPoints {
        self.komi.unwrap_or(self.ruleset.default_komi())
    }

    /// What counting needs.
    pub fn score_rules(&self) -> rules::ScoreRules {
        rules::ScoreRules {
            ruleset: self.ruleset,
            komi: self.komi(),
            handicap: self.handicap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_filled_in() {
        let s: GameSettings = serde_json::from_str("{}").unwrap();
        let s = s.resolve(&ClockLimits::default()).unwrap();
        assert_eq!(s.board_size, 19);
        assert_eq!(s.ko_rule, Some(KoRule::Situational));
        assert_eq!(s.komi, Some(HalfPoints(15)));
        let h: GameSettings = serde_json::from_str(r#"{"board_size":9,"handicap":3}"#).unwrap();
        assert_eq!(
            h.resolve(&ClockLimits::default()).unwrap().komi,
            Some(HalfPoints(0))
        );
    }

    #[test]
    fn refusals_name_the_field() {
        let limits = ClockLimits::default();
        for (json, field) in [
            (r#"{"board_size":26}"#, "board_size"),
            (r#"{"handicap":1}"#, "handicap"),
            (r#"{"board_size":5,"handicap":2}"#, "handicap"),
            (r#"{"komi":600}"#, "komi"),
            (
                r#"{"clock":{"system":"byoyomi","main_ms":0,"periods":0,"period_ms":30000}}"#,
                "clock",
            ),
        ] {
            let s: GameSettings = serde_json::from_str(json).unwrap();
            let err = s.resolve(&limits).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadRequest);
            assert!(err.message.contains(field), "{json}: {}", err.message);
        }
        assert!(serde_json::from_str::<GameSettings>(r#"{"komi":7.25}"#).is_err());
        assert!(serde_json::from_str::<GameSettings>(r#"{"boardsize":9}"#).is_err());
    }
}
