//! Tournament messages (client-protocol/tournament.md): what a director sets up, the
//! requests about one tournament (each with its `tournament_id`, as a game action has
//! its `game_id`), and the views of a tournament that replies, channel events and HTTP
//! reads share.

use serde::{Deserialize, Serialize};

use super::settings::GameSettings;
use super::user::UserInfo;
use crate::rating::Rank;
use crate::tournament::field::{Outcome, Status};
use crate::tournament::pairing::Costs;
use crate::tournament::regulations::{HalfPoints, Regulations};

/// What a director fixes before round one (`create_tournament`, `configure`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TournamentSetup {
    pub name: String,
    pub regulations: Regulations,
    /// Every game's settings: board, rules, komi, clock, lateness, rated. Handicap,
    /// colours, the start, fair play and the referee are set board by board.
    pub settings: GameSettings,
    /// Registration is open from this server Unix ms until (not including) the next.
    pub registration_opens: i64,
    pub registration_closes: i64,
    /// The weakest and strongest rank that may register.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rank: Option<Rank>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rank: Option<Rank>,
    /// Directors beside the one who created it (user ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directors: Vec<String>,
    /// The chief referee (裁判长), who rules on appeals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chief_referee: Option<String>,
    /// Board referees, given to the boards in turn (the chief referee when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub referees: Vec<String>,
    /// How long after a round is published its games start.
    #[serde(default)]
    pub start_delay_ms: u64,
    /// Pair and publish each next round as soon as the last one has every result,
    /// instead of on the director's word.
    #[serde(default)]
    pub auto_pair: bool,
}

/// A request about one tournament.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TournamentAction {
    /// Receive the tournament's channel (a `tournament` view, then its events).
    WatchTournament {},
    UnwatchTournament {},
    /// Director: change the setup before round one is paired.
    Configure {
        setup: Box<TournamentSetup>,
    },
    /// Enter, with a declared rank (else the rank of your rating), club and country.
    Register {
        #[serde(default)]
        rank: Option<Rank>,
        #[serde(default)]
        club: String,
        #[serde(default)]
        country: String,
    },
    /// Leave the event (a director may name a player); your games stand.
    Withdraw {
        #[serde(default)]
        player: Option<String>,
    },
    /// Director or chief referee: remove a player; their games stand.
    Disqualify {
        player: String,
        reason: String,
    },
    /// Director: give a player the bye in the next pairing.
    Bye {
        player: String,
    },
    /// Director: pair the next round (the proposal can be changed until published).
    Pair {},
    /// Director: exchange two players of the proposed round (or one with the bye).
    Swap {
        a: String,
        b: String,
    },
    /// Director: publish the proposed round; its games start `start_delay_ms` later.
    Publish {},
    /// Director: add `points` half points (negative: take them away) to a player's
    /// score, with the reason.
    Adjust {
        player: String,
        points: HalfPoints,
        reason: String,
    },
    /// A player: appeal to the chief referee (申诉).
    Appeal {
        message: String,
    },
    /// Chief referee: rule on appeal `appeal`.
    RuleAppeal {
        appeal: u32,
        ruling: String,
    },
}

/// Where a tournament stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// No round paired yet.
    Registration,
    /// A round is proposed and not yet published.
    Paired,
    /// The last published round has games without a result.
    Playing,
    /// The last round has every result; the next can be paired.
    Ready,
    Finished,
}

/// A registered player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlayerView {
    pub user: UserInfo,
    pub rank: Rank,
    pub club: String,
    pub country: String,
    /// The first round they can be paired in (later rounds for a late registration).
    pub first_round: u8,
    pub status: Status,
}

/// One board of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BoardView {
    /// 1 for the top board.
    pub board: u16,
    pub black: String,
    pub white: String,
    pub handicap: u8,
    /// Colours decided by nigiri at the board (`black` and `white` are then only the
    /// order of names until the round is published).
    pub by_nigiri: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Why these two were paired: directors only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<Costs>,
}

/// A round as paired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundView {
    /// 1 for the first round.
    pub round: u8,
    pub published: bool,
    /// The games' scheduled start, once published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<i64>,
    pub boards: Vec<BoardView>,
    pub byes: Vec<String>,
}

/// One line of the standings, with its row of the crosstable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StandingView {
    pub place: usize,
    pub player: String,
    /// McMahon score (McMahon) or points, in half points; the tie-breaks likewise.
    pub score: HalfPoints,
    pub wins: HalfPoints,
    pub sos: i64,
    pub sosos: i64,
    pub sodos: i64,
    pub cuss: i64,
    /// Direct confrontation, when the regulations name it: 1 for a player placed above
    /// their one equal by winning their games, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<i64>,
    /// Each published round: the opponent's place, `+`, `-` or `=`, `/`, the colour and
    /// the handicap (`3+/b0`); `0+`, `0-` or `0=` for a round without a game; `?` after
    /// the slash's part while the game is played.
    pub rounds: Vec<String>,
    /// The changes to the score by hand, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<AdjustmentView>,
}

/// A director's change to a player's score by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AdjustmentView {
    /// Half points added (negative: taken away).
    pub points: HalfPoints,
    /// The rounds published when it was made; it counts from the score after them on.
    pub after_round: usize,
    pub reason: String,
}

/// An appeal to the chief referee and its ruling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppealView {
    /// 1 for the first appeal.
    pub appeal: u32,
    pub from: String,
    pub message: String,
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruling: Option<String>,
}

/// A round's verifiable draw: the commitment (hex sha256 of the round's secret) shown
/// from the start, the secret once the round is published.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DrawView {
    pub round: u8,
    pub commitment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// A tournament as anyone may see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TournamentView {
    pub tournament_id: String,
    pub setup: TournamentSetup,
    pub directors: Vec<String>,
    pub stage: Stage,
    pub players: Vec<PlayerView>,
    /// Published rounds, then the proposed one (`published: false`).
    pub rounds: Vec<RoundView>,
    pub standings: Vec<StandingView>,
    pub draws: Vec<DrawView>,
    pub appeals: Vec<AppealView>,
}
