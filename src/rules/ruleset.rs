//! Rulesets and their choices: repetition rule, counting method and default komi.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::points::HalfPoints;

/// A named set of rules a game is played under. `chinese` is the default everywhere.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Ruleset {
    #[default]
    Chinese,
    Japanese,
    Korean,
    TrompTaylor,
}

/// Which repetitions of the whole board are forbidden (docs/RULES.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KoRule {
    /// No move may recreate an earlier board with the same player to move.
    Situational,
    /// No move may recreate any earlier board, whoever was to move.
    Positional,
    /// Only the immediate recapture of a single stone in a ko is forbidden.
    Simple,
}

/// How the final position is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// Stones plus surrounded points; `split_dame` gives each side half of every empty
    /// region that touches both colours (the Chinese rule), otherwise nobody gets it.
    Area { split_dame: bool },
    /// Surrounded points plus prisoners.
    Territory,
}

/// A ruleset or ko-rule name that is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a known {1}")]
pub struct UnknownName(pub String, pub &'static str);

impl Ruleset {
    /// The repetition rule this ruleset uses unless a game says otherwise.
    pub fn default_ko_rule(self) -> KoRule {
        match self {
            Ruleset::Chinese => KoRule::Situational,
            Ruleset::Japanese | Ruleset::Korean => KoRule::Simple,
            Ruleset::TrompTaylor => KoRule::Positional,
        }
    }

    /// Komi for an even game: 3¾ stones (7.5 points) under area rules, 6.5 under territory.
    pub fn default_komi(self) -> HalfPoints {
        match self.counting() {
            Counting::Area { .. } => HalfPoints(15),
            Counting::Territory => HalfPoints(13),
        }
    }

    pub fn counting(self) -> Counting {
        match self {
            Ruleset::Chinese => Counting::Area { split_dame: true },
            Ruleset::TrompTaylor => Counting::Area { split_dame: false },
            Ruleset::Japanese | Ruleset::Korean => Counting::Territory,
        }
    }

    /// Whether Black gives back N/2 stones (N points) for N handicap stones at counting.
    pub fn compensates_handicap(self) -> bool {
        self == Ruleset::Chinese
    }

    pub fn name(self) -> &'static str {
        match self {
            Ruleset::Chinese => "chinese",
            Ruleset::Japanese => "japanese",
            Ruleset::Korean => "korean",
            Ruleset::TrompTaylor => "tromp-taylor",
        }
    }
}

impl fmt::Display for Ruleset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Ruleset {
    type Err = UnknownName;

    /// Accepts our names and the usual SGF `RU[]` spellings (`Chinese`, `Japanese`,
    /// `Korean`, `Tromp-Taylor`, `TT`, `CN`, `JP`, `KO`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        match lower.as_str() {
            "chinese" | "cn" => Ok(Ruleset::Chinese),
            "japanese" | "jp" => Ok(Ruleset::Japanese),
            "korean" | "ko" => Ok(Ruleset::Korean),
            "tromp-taylor" | "tt" | "trump-taylor" => Ok(Ruleset::TrompTaylor),
            _ => Err(UnknownName(s.to_string(), "ruleset")),
        }
    }
}

impl KoRule {
    pub fn name(self) -> &'static str {
        match self {
            KoRule::Situational => "situational",
            KoRule::Positional => "positional",
            KoRule::Simple => "simple",
        }
    }
}

impl FromStr for KoRule {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "situational" => Ok(KoRule::Situational),
            "positional" => Ok(KoRule::Positional),
            "simple" => Ok(KoRule::Simple),
            _ => Err(UnknownName(s.to_string(), "superko rule")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sgf_spellings_are_understood() {
        for r in [
            Ruleset::Chinese,
            Ruleset::Japanese,
            Ruleset::Korean,
            Ruleset::TrompTaylor,
        ] {
            assert_eq!(r.name().parse::<Ruleset>().unwrap(), r);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.name()));
        }
        assert_eq!(
            "Tromp-Taylor".parse::<Ruleset>().unwrap(),
            Ruleset::TrompTaylor
        );
        assert_eq!("JP".parse::<Ruleset>().unwrap(), Ruleset::Japanese);
        assert!("ing".parse::<Ruleset>().is_err());
    }

    #[test]
    fn defaults_follow_the_rules_page() {
        assert_eq!(Ruleset::Chinese.default_ko_rule(), KoRule::Situational);
        assert_eq!(Ruleset::Japanese.default_ko_rule(), KoRule::Simple);
        assert_eq!(Ruleset::TrompTaylor.default_ko_rule(), KoRule::Positional);
        assert_eq!(Ruleset::Chinese.default_komi(), HalfPoints(15));
        assert_eq!(Ruleset::Korean.default_komi(), HalfPoints(13));
    }
}
