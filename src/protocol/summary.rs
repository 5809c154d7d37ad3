//! A game as the lobby lists it, and the stage it is in: shared by the lobby's answers and
//! the referee's lists, so it stands apart from both.

use serde::{Deserialize, Serialize};

use super::user::UserInfo;
use crate::rules::{Color, GameResult};

/// The stage a game is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A scheduled game before its start time.
    Scheduled,
    /// Black is to place free handicap stones.
    Handicap,
    Play,
    /// Two passes ended play; players mark dead stones.
    Scoring,
    Ended,
}

/// A game as the lobby lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GameSummary {
    pub game_id: String,
    pub black: UserInfo,
    pub white: UserInfo,
    /// The players' ranks (lobby.md#ranks): absent for a player with no rated game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_rank: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_rank: Option<String>,
    pub board_size: u8,
    pub move_number: u32,
    pub phase: Phase,
    pub spectators: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<GameResult>,
    /// Correspondence games in play: the player to move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_move: Option<Color>,
    /// Correspondence games in play: when the player to move runs out of time (server
    /// Unix ms); absent while their clock stands still (vacation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<i64>,
}

/// One of your correspondence games, as `list_correspondence` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CorrespondenceGame {
    #[serde(flatten)]
    pub game: GameSummary,
    /// Your colour in it.
    pub you: Color,
    /// Whether you have a plan of conditional moves stored in it.
    pub planned: bool,
}
