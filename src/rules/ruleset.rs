//! Rulesets and their choices: repetition rule, counting method, default komi, and what
//! the ancient Chinese rules add (the set stones, White first, the group tax).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::handicap;
use super::points::HalfPoints;
use super::vertex::{Color, Vertex};

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
    /// How Go was played in ancient China (docs/RULES.md §9.1): four set stones (座子) on
    /// the corner star points, White first between equals, area counting less one point
    /// per living group (还棋头).
    AncientChinese,
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
            Ruleset::Chinese | Ruleset::AncientChinese => KoRule::Situational,
            Ruleset::Japanese | Ruleset::Korean => KoRule::Simple,
            Ruleset::TrompTaylor => KoRule::Positional,
        }
    }

    /// Komi for an even game: 3¾ stones (7.5 points) under area rules, 6.5 under territory,
    /// none under the ancient rules, which knew no komi.
    pub fn default_komi(self) -> HalfPoints {
        match self.counting() {
            _ if self == Ruleset::AncientChinese => HalfPoints(0),
            Counting::Area { .. } => HalfPoints(15),
            Counting::Territory => HalfPoints(13),
        }
    }

    pub fn counting(self) -> Counting {
        match self {
            Ruleset::Chinese | Ruleset::AncientChinese => Counting::Area { split_dame: true },
            Ruleset::TrompTaylor => Counting::Area { split_dame: false },
            Ruleset::Japanese | Ruleset::Korean => Counting::Territory,
        }
    }

    /// Whether Black gives back N/2 stones (N points) for N handicap stones at counting.
    pub fn compensates_handicap(self) -> bool {
        self == Ruleset::Chinese
    }

    /// Whether each side gives back one point per living group at the count (还棋头).
    pub fn taxes_groups(self) -> bool {
        self == Ruleset::AncientChinese
    }

    /// The stones on the board before the first move (座子 under the ancient rules: Black
    /// on the lower left and upper right corner star points, White on the other two), or
    /// `None` on a board too small to have corner star points.
    pub fn set_stones(self, size: u8) -> Option<Vec<(Vertex, Color)>> {
        if self != Ruleset::AncientChinese {
            return Some(Vec::new());
        }
        // The fixed four-stone handicap: lower left, upper right, upper left, lower right.
        let corners = handicap::fixed_points(size, 4).ok()?;
        let colors = [Color::Black, Color::Black, Color::White, Color::White];
        Some(corners.into_iter().zip(colors).collect())
    }

    /// Who moves first in a game without handicap stones: White, the side of respect,
    /// under the ancient rules (对手棋), Black under all others.
    pub fn first_in_even_game(self) -> Color {
        match self {
            Ruleset::AncientChinese => Color::White,
            _ => Color::Black,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Ruleset::Chinese => "chinese",
            Ruleset::Japanese => "japanese",
            Ruleset::Korean => "korean",
            Ruleset::TrompTaylor => "tromp-taylor",
            Ruleset::AncientChinese => "ancient-chinese",
        }
    }
}

impl Ruleset {
    /// The name an SGF record gives the rules in `RU[]`, which [`FromStr`] reads back.
    pub fn sgf_name(self) -> &'static str {
        match self {
            Ruleset::Chinese => "Chinese",
            Ruleset::Japanese => "Japanese",
            Ruleset::Korean => "Korean",
            Ruleset::TrompTaylor => "Tromp-Taylor",
            Ruleset::AncientChinese => "Ancient Chinese",
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
    /// `Korean`, `Tromp-Taylor`, `TT`, `CN`, `JP`, `KO`, and `Ancient Chinese` or
    /// `Ancient` as tengen writes the ancient rules).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        match lower.as_str() {
            "chinese" | "cn" => Ok(Ruleset::Chinese),
            "japanese" | "jp" => Ok(Ruleset::Japanese),
            "korean" | "ko" => Ok(Ruleset::Korean),
            "tromp-taylor" | "tt" | "trump-taylor" => Ok(Ruleset::TrompTaylor),
            "ancient-chinese" | "ancient" => Ok(Ruleset::AncientChinese),
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
            Ruleset::AncientChinese,
        ] {
            assert_eq!(r.name().parse::<Ruleset>().unwrap(), r);
            assert_eq!(r.sgf_name().parse::<Ruleset>().unwrap(), r);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.name()));
        }
        assert_eq!(
            "Tromp-Taylor".parse::<Ruleset>().unwrap(),
            Ruleset::TrompTaylor
        );
        assert_eq!("JP".parse::<Ruleset>().unwrap(), Ruleset::Japanese);
        assert_eq!(
            "Ancient Chinese".parse::<Ruleset>().unwrap(),
            Ruleset::AncientChinese
        );
        assert!("ing".parse::<Ruleset>().is_err());
    }

    #[test]
    fn defaults_follow_the_rules_page() {
        assert_eq!(Ruleset::Chinese.default_ko_rule(), KoRule::Situational);
        assert_eq!(Ruleset::Japanese.default_ko_rule(), KoRule::Simple);
        assert_eq!(Ruleset::TrompTaylor.default_ko_rule(), KoRule::Positional);
        assert_eq!(Ruleset::Chinese.default_komi(), HalfPoints(15));
        assert_eq!(Ruleset::Korean.default_komi(), HalfPoints(13));
        assert_eq!(Ruleset::AncientChinese.default_komi(), HalfPoints(0));
        assert_eq!(
            Ruleset::AncientChinese.default_ko_rule(),
            KoRule::Situational
        );
        assert_eq!(Ruleset::AncientChinese.first_in_even_game(), Color::White);
        assert_eq!(Ruleset::Chinese.first_in_even_game(), Color::Black);
    }

    /// 座子: two stones each on the corner star points, each colour on one diagonal.
    #[test]
    fn the_set_stones_are_the_diagonal_star_points() {
        let named = |size| {
            Ruleset::AncientChinese
                .set_stones(size)
                .unwrap()
                .iter()
                .map(|(v, c)| format!("{}{v}", c.letter()))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(named(19), "BD4 BQ16 WD16 WQ4");
        assert_eq!(named(9), "BC3 BG7 WC7 WG3");
        assert_eq!(named(13), "BD4 BK10 WD10 WK4");
        assert_eq!(Ruleset::AncientChinese.set_stones(6), None);
        assert_eq!(Ruleset::Chinese.set_stones(19), Some(Vec::new()));
    }
}
