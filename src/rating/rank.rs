//! Ranks players know (30k..1k, 1d..9d) read from a rating, and what a handicap is worth
//! in rating points (docs/RATINGS.md).
//!
//! One rank is [`RANK_WIDTH`] rating points everywhere on the scale, and a rank is one
//! handicap stone on 19x19: the traditional promise that a gap of N ranks is an even game
//! with N stones, taken into the expected score so handicap games rate fairly.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::glicko2::Rating;

/// Rating points per rank: a rank apart is an expected score of 0.64 in an even game.
pub const RANK_WIDTH: f64 = 100.0;

/// The rating where 30k begins; 1d begins 30 ranks above it, at 3000. A new player's
/// 1500 is 15k.
pub const SCALE_FLOOR: f64 = 0.0;

/// Above this deviation a rank is shown with "?": it is still a guess.
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// Points one rank is worth on 19x19: a stone, twice a komi of 7.
const POINTS_PER_STONE: f64 = 14.0;

/// A kyu or dan rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// 30 (weakest) to 1.
    Kyu(u8),
    /// 1 to 9 (strongest).
    Dan(u8),
}

impl Rank {
    /// The rank a rating falls in; ratings beyond either end of the scale are 30k or 9d.
    pub fn of(rating: f64) -> Rank {
        let steps = ((rating - SCALE_FLOOR) / RANK_WIDTH)
            .floor()
            .clamp(0.0, 38.0) as u8;
        match steps {
            0..=29 => Rank::Kyu(30 - steps),
            _ => Rank::Dan(steps - 29),
        }
    }

    /// Ranks above 30k: 30k is 0, 1k is 29, 1d is 30, 9d is 38. A McMahon start score
    /// and a rank difference in stones are both counted in these steps.
    pub fn steps(self) -> u8 {
        match self {
            Rank::Kyu(k) => 30 - k.clamp(1, 30),
            Rank::Dan(d) => 29 + d.clamp(1, 9),
        }
    }

    /// The rank `steps` above 30k; past 9d is 9d.
    pub fn from_steps(steps: u8) -> Rank {
        match steps.min(38) {
            s @ 0..=29 => Rank::Kyu(30 - s),
            s => Rank::Dan(s - 29),
        }
    }
}

/// A rank that is not `1k`–`30k` or `1d`–`9d`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a rank is 30k to 1k or 1d to 9d, not {0:?}")]
pub struct BadRank(pub String);

impl FromStr for Rank {
    type Err = BadRank;

    /// `"3d"`, `"15k"`, any case.
    fn from_str(s: &str) -> Result<Rank, BadRank> {
        let bad = || BadRank(s.to_string());
        let lower = s.trim().to_ascii_lowercase();
        let unit = lower.len().checked_sub(1).ok_or_else(bad)?;
        let (number, unit) = lower.split_at(unit);
        let n: u8 = number.parse().map_err(|_| bad())?;
        match unit {
            "k" if (1..=30).contains(&n) => Ok(Rank::Kyu(n)),
            "d" if (1..=9).contains(&n) => Ok(Rank::Dan(n)),
            _ => Err(bad()),
        }
    }
}

impl Serialize for Rank {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Rank {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Rank, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rank::Kyu(k) => write!(f, "{k}k"),
            Rank::Dan(d) => write!(f, "{d}d"),
        }
    }
}

/// A player's rank as shown to others: `"15k?"` while the deviation is high, `"3d"` after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShownRank {
    pub rank: Rank,
    /// The deviation is above [`PROVISIONAL_DEVIATION`].
    pub provisional: bool,
}

impl ShownRank {
    pub fn of(rating: &Rating) -> ShownRank {
        ShownRank {
            rank: Rank::of(rating.rating),
            provisional: rating.deviation > PROVISIONAL_DEVIATION,
        }
    }
}

impl fmt::Display for ShownRank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            self.rank,
            if self.provisional { "?" } else { "" }
        )
    }
}

/// The rating points `stones` handicap stones on a `size` board are worth to Black.
///
/// Under the Chinese rules (docs/RULES.md §7.3) Black places N stones, White moves next, and
/// Black gives back N points at counting instead of komi. Against a fair even game Black
/// is N − ½ stones ahead (White now has the half move komi stood for), less the N points
/// given back: `N − ½ − N/14` stones, one rank each on 19x19. A smaller board makes each
/// point decide more, so the worth scales with the area: `× 361 / size²`. No stones (and
/// one, which the rules do not allow) is worth nothing.
pub fn handicap_worth(size: u8, stones: u8) -> f64 {
    if stones < 2 {
        return 0.0;
    }
    let n = f64::from(stones);
    let ranks = n - 0.5 - n / POINTS_PER_STONE;
    let area = 361.0 / f64::from(size).powi(2);
    ranks * area * RANK_WIDTH
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::glicko2::rate_game;

    fn shown(rating: f64, deviation: f64) -> String {
        ShownRank::of(&Rating {
            rating,
            deviation,
            volatility: 0.06,
        })
        .to_string()
    }

    #[test]
    fn ranks_read_back_from_their_names_and_steps() {
        for steps in 0..=38 {
            let rank = Rank::from_steps(steps);
            assert_eq!(rank.steps(), steps);
            assert_eq!(rank.to_string().parse::<Rank>(), Ok(rank));
        }
        assert_eq!("3D".parse::<Rank>(), Ok(Rank::Dan(3)));
        for bad in ["", "d", "0k", "31k", "10d", "3p", "-1k"] {
            assert!(bad.parse::<Rank>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_scale_runs_from_30k_at_0_through_1d_at_3000_to_9d() {
        let cases = [
            (-500.0, "30k"),
            (0.0, "30k"),
            (99.9, "30k"),
            (100.0, "29k"),
            (1500.0, "15k"),
            (2999.9, "1k"),
            (3000.0, "1d"),
            (3899.9, "9d"),
            (3800.0, "9d"),
            (3799.9, "8d"),
            (9000.0, "9d"),
        ];
        for (rating, rank) in cases {
            assert_eq!(Rank::of(rating).to_string(), rank, "rating {rating}");
        }
    }

    #[test]
    fn a_rank_is_provisional_exactly_while_the_deviation_is_above_the_threshold() {
        assert_eq!(shown(1500.0, 350.0), "15k?");
        assert_eq!(shown(1500.0, 110.01), "15k?");
        assert_eq!(shown(1500.0, 110.0), "15k");
        assert_eq!(shown(3050.0, 60.0), "1d");
    }

    #[test]
    fn a_nineteen_by_nineteen_stone_is_about_a_rank_less_the_compensation() {
        assert_eq!(handicap_worth(19, 0), 0.0);
        assert_eq!(handicap_worth(19, 1), 0.0);
        // 2 stones: 1.5 stones ahead, less 2 points of 14 per stone.
        assert!((handicap_worth(19, 2) - 100.0 * (1.5 - 2.0 / 14.0)).abs() < 1e-9);
        assert!((handicap_worth(19, 9) - 100.0 * (8.5 - 9.0 / 14.0)).abs() < 1e-9);
        let step = handicap_worth(19, 5) - handicap_worth(19, 4);
        assert!((step - 100.0 * 13.0 / 14.0).abs() < 1e-9);
    }

    #[test]
    fn a_new_player_loses_the_question_mark_after_about_ten_games() {
        let established = Rating {
            deviation: 60.0,
            ..Rating::NEW
        };
        let mut player = Rating::NEW;
        let mut shown_after = Vec::new();
        for game in 0..12 {
            player = rate_game(player, established, f64::from(game % 2));
            shown_after.push(ShownRank::of(&player).provisional);
        }
        assert!(shown_after[..8].iter().all(|&provisional| provisional));
        assert!(!shown_after[11]);
    }

    #[test]
    fn winning_the_game_a_handicap_made_fair_moves_ratings_as_an_even_game_does() {
        let white = Rating::NEW.shifted(400.0);
        let black = white.shifted(-handicap_worth(19, 4));
        let handicap = rate_game(black, white.shifted(-handicap_worth(19, 4)), 1.0);
        let even = rate_game(black, black, 1.0);
        assert!((handicap.rating - even.rating).abs() < 1e-9);
        assert!(rate_game(black, white, 1.0).rating > handicap.rating);
    }

    #[test]
    fn a_stone_is_worth_more_on_a_smaller_board() {
        let (nine, thirteen, nineteen) = (
            handicap_worth(9, 2),
            handicap_worth(13, 2),
            handicap_worth(19, 2),
        );
        assert!(nine > thirteen && thirteen > nineteen);
        assert!((nine / nineteen - 361.0 / 81.0).abs() < 1e-9);
    }
}
