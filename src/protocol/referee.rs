//! The referee's vocabulary on the wire: the rulings a referee can give, and the longest
//! reason a referee action carries (client-protocol/referee.md).

use serde::{Deserialize, Serialize};

use super::summary::GameSummary;
use super::user::UserInfo;
use crate::rules::{Color, GameResult};

/// Longest reason given with a referee action, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// How a referee ends a game in play (`rule`) or settles a finished one
/// (`change_result`), Art. 23.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ruling {
    BlackWins,
    WhiteWins,
    Draw,
    /// Both players lose (Art. 23.2).
    BothLose,
    /// No result: the game is played again as a new game with the same players and
    /// settings (`rule` only).
    Replay,
    /// No result, and no new game (`change_result` only).
    Annul,
}

impl Ruling {
    /// Its wire name (`both_lose`), for the SGF's comments.
    pub fn name(self) -> &'static str {
        super::names::name_of(&self, "")
    }

    /// The result this ruling gives. A referee's win is recorded as a forfeit (`B+F`).
    pub fn result(self) -> GameResult {
        match self {
            Ruling::BlackWins => GameResult::Forfeit {
                winner: Color::Black,
            },
            Ruling::WhiteWins => GameResult::Forfeit {
                winner: Color::White,
            },
            Ruling::Draw => GameResult::Draw,
            Ruling::BothLose => GameResult::DoubleForfeit,
            Ruling::Replay | Ruling::Annul => GameResult::Void,
        }
    }
}

/// A player's open call for the referee (Art. 16.2), as referees see it listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefereeCall {
    /// The `referee_called` event's seq.
    pub seq: u64,
    pub color: Color,
    pub from: UserInfo,
    pub message: String,
    /// Server Unix ms.
    pub at: i64,
}

/// A game with open calls, and its state now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalledGame {
    pub game: GameSummary,
    pub calls: Vec<RefereeCall>,
}

/// A report to the referees, as they see it listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub report_id: u64,
    /// The reporting user's id.
    pub reporter: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    /// The first and last event `seq` of the game it concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_seq: Option<u64>,
    pub reason: String,
    /// Server Unix ms.
    pub at: i64,
}
