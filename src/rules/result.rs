//! How a game ended, written as SGF writes it (`B+1.5`, `W+R`, `B+T`, `0`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::points::HalfPoints;
use super::vertex::Color;

/// The result of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameResult {
    /// Counted: the winner (None for a draw) and the margin in points.
    Score {
        winner: Option<Color>,
        margin: HalfPoints,
    },
    Resignation {
        winner: Color,
    },
    Time {
        winner: Color,
    },
    /// Absence, lateness or a referee's award.
    Forfeit {
        winner: Color,
    },
    /// Both players absent past the forfeit limit: both lose.
    DoubleForfeit,
    /// A draw declared by a referee.
    Draw,
    /// No result: a referee ordered the game replayed.
    Void,
}

/// A result string that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a game result such as B+1.5, W+R, B+T, B+F or 0")]
pub struct BadResult(pub String);

impl GameResult {
    /// The winner, if exactly one player won.
    pub fn winner(&self) -> Option<Color> {
        match *self {
            GameResult::Score { winner, .. } => winner,
            GameResult::Resignation { winner }
            | GameResult::Time { winner }
            | GameResult::Forfeit { winner } => Some(winner),
            GameResult::DoubleForfeit | GameResult::Draw | GameResult::Void => None,
        }
    }

    /// A stable one-word reason for the protocol (`score`, `resignation`, `time`, ...).
    pub fn reason(&self) -> &'static str {
        match self {
            GameResult::Score { .. } => "score",
            GameResult::Resignation { .. } => "resignation",
            GameResult::Time { .. } => "time",
            GameResult::Forfeit { .. } => "forfeit",
            GameResult::DoubleForfeit => "double_forfeit",
            GameResult::Draw => "draw",
            GameResult::Void => "void",
        }
    }
}

impl fmt::Display for GameResult {
    /// SGF `RE` notation. A double forfeit has none in SGF; it is written `Void`, and the
    /// protocol's `reason` field tells it apart.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (winner, what) = match *self {
            GameResult::Score { winner: None, .. } | GameResult::Draw => return f.write_str("0"),
            GameResult::Score {
                winner: Some(w),
                margin,
            } => (w, margin.to_string()),
            GameResult::Resignation { winner } => (winner, "R".into()),
            GameResult::Time { winner } => (winner, "T".into()),
            GameResult::Forfeit { winner } => (winner, "F".into()),
            GameResult::DoubleForfeit | GameResult::Void => return f.write_str("Void"),
        };
        write!(f, "{}+{}", winner.letter(), what)
    }
}

impl FromStr for GameResult {
    type Err = BadResult;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadResult(s.to_string());
        match s.trim() {
            "0" | "Draw" | "Jigo" => {
                return Ok(GameResult::Score {
                    winner: None,
                    margin: HalfPoints(0),
                });
            }
            "Void" => return Ok(GameResult::Void),
            _ => {}
        }
        let (who, what) = s.trim().split_once('+').ok_or_else(bad)?;
        let winner = match who {
            "B" => Color::Black,
            "W" => Color::White,
            _ => return Err(bad()),
        };
        Ok(match what {
            "R" | "Resign" => GameResult::Resignation { winner },
            "T" | "Time" => GameResult::Time { winner },
            "F" | "Forfeit" => GameResult::Forfeit { winner },
            // A winner's margin is positive: `B+0` or `B+-3` would contradict the winner.
            points => GameResult::Score {
                winner: Some(winner),
                margin: HalfPoints::parse_points(points)
                    .filter(|m| m.0 > 0)
                    .ok_or_else(bad)?,
            },
        })
    }
}

impl Serialize for GameResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for GameResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_written_and_read_as_sgf_does() {
        for s in ["B+1.5", "W+0.5", "W+R", "B+T", "W+F", "0", "B+12"] {
            assert_eq!(s.parse::<GameResult>().unwrap().to_string(), s);
        }
        assert_eq!("W+Resign".parse::<GameResult>().unwrap().to_string(), "W+R");
        assert!("X+1".parse::<GameResult>().is_err());
        assert!("B+1.25".parse::<GameResult>().is_err());
        assert_eq!(GameResult::DoubleForfeit.to_string(), "Void");
        assert_eq!(GameResult::DoubleForfeit.reason(), "double_forfeit");
    }
}
