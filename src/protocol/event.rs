//! Game events: what happened in a game, numbered per game (`seq` 1, 2, 3 … with no gaps).
//! The same values are broadcast to players and spectators, kept for reconnecting
//! clients, and written to the durable log, from which a game is rebuilt after a restart.

use serde::{Deserialize, Serialize};

use super::calendar::Calendar;
use super::referee::Ruling;
use super::settings::GameSettings;
use super::user::UserInfo;
use crate::clock::ClockView;
use crate::rules::{Color, GameResult, HalfPoints, Move, Vertex};

/// Proof that the colours were drawn fairly (see client-protocol/nigiri.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NigiriProof {
    /// sha256 of the secret, hex; shown with the seek before anyone accepted.
    pub commitment: String,
    /// The server's secret, hex; revealed when the game starts.
    pub secret: String,
    /// The accepting player's seed, as sent in `accept` (empty if none).
    pub seed: String,
    /// The colour the draw gave the challenger.
    pub challenger: Color,
}

/// The count of a finished game, in points and in stones (docs/RULES.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreView {
    pub black: HalfPoints,
    pub white: HalfPoints,
    pub komi: HalfPoints,
    /// Black's margin in stones after komi; negative when White wins.
    pub margin_stones: f64,
    /// The result as the Chinese rules say it, e.g. `黑胜3/4子`.
    pub chinese: String,
    /// The stones both players agreed were dead.
    pub dead: Vec<Vertex>,
    /// Under the ancient rules only: the points each side gave back, one per living group
    /// (还棋头, docs/RULES.md §9.1). `black` and `white` are the counts after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax: Option<GroupTax>,
}

/// The group tax of a count: each side's living groups, one point each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupTax {
    pub black: u32,
    pub white: u32,
}

/// Something that happened in a game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GameEvent {
    /// The first event of every game.
    GameCreated {
        settings: Box<GameSettings>,
        black: UserInfo,
        white: UserInfo,
        /// Handicap stones the server placed (fixed placement).
        handicap_stones: Vec<Vertex>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nigiri: Option<NigiriProof>,
        created_at: i64,
    },
    /// Black placed free handicap stones; White moves next.
    HandicapPlaced {
        vertices: Vec<Vertex>,
        /// Both clocks after the placement (timed games): Black's time charged, White's
        /// clock started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A stone or a pass. `captures` lists the stones it removed.
    MovePlayed {
        move_number: u32,
        color: Color,
        vertex: Move,
        captures: Vec<Vertex>,
        /// Both clocks just after the move (timed games), as of `at`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
        /// Server time the move was accepted, Unix milliseconds.
        #[serde(default)]
        at: i64,
        /// Set when this move was sealed at an adjournment: the point that was sealed.
        /// If it was occupied or illegal, `vertex` is `pass` (docs/RULES.md §8.4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sealed: Option<Move>,
        /// Lag compensation given back to the mover, charged to their per-game quota; kept
        /// so that a game rebuilt after a restart has the quota that was left.
        #[serde(default, skip_serializing_if = "is_zero")]
        lag_credit_ms: u64,
        /// Played by the server from the mover's plan of conditional moves
        /// (client-protocol/correspondence.md#plans).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        planned: bool,
    },
    /// A scheduled game's start time came: the first player's clock runs.
    GameBegan {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A player asked to pause; the opponent agrees with `pause`.
    PauseRequested {
        by: Color,
    },
    /// Both agreed: clocks are stopped.
    Paused {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A player asked to resume; the opponent agrees with `resume`.
    ResumeRequested {
        by: Color,
    },
    /// Play goes on; the side to move's clock runs again.
    Resumed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// The player to move sealed a move and the game is adjourned. Others see only that a
    /// move was sealed; the point itself is stored but never sent until it is played.
    MoveSealed {
        by: Color,
        move_number: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vertex: Option<Move>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// Two passes in a row: players now mark dead stones. `disputes` counts earlier
    /// rejections; from the second scoring on, unagreed marks mean all stones live.
    ScoringStarted {
        disputes: u32,
    },
    /// A player marked or unmarked a chain; `marks` is the whole set now, and every
    /// earlier acceptance is void.
    DeadMarked {
        by: Color,
        vertex: Vertex,
        dead: bool,
        marks: Vec<Vertex>,
    },
    ScoreAccepted {
        by: Color,
    },
    /// A player rejected the marks (`by`), or the time for marking ran out (no `by`):
    /// play resumes with `to_move` and settles the question (docs/RULES.md §5).
    PlayResumed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<Color>,
        to_move: Color,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    GameEnded {
        result: GameResult,
        /// `score`, `resignation`, `time`, `forfeit`, `double_forfeit`, `draw`, `void`.
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<ScoreView>,
        /// The clocks as the end stopped them (timed games), so that a game rebuilt from
        /// its log charges the time used on the last move too. Older logs lack it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// Players' chat (spectators' chat is not part of the numbered stream).
    Chat {
        from: UserInfo,
        text: String,
        at: i64,
        /// Sent only to a connection whose user mutes `from`: `text` is left out (empty).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        muted: bool,
    },
    /// A player of a correspondence game went on vacation (`away`) or came back
    /// (client-protocol/correspondence.md#vacation): an away player's clock stands still.
    Vacation {
        color: Color,
        away: bool,
    },
    /// A player's deadline came in a game that allows vacation, and their clock stood
    /// still `ms` from it instead of flagging: a whole day of their vacation was spent
    /// here, unless `covered` (a day they spent at a deadline before, in this game or
    /// another, still ran, and `ms` is what was left of it; nothing more was spent).
    VacationSpent {
        color: Color,
        ms: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        covered: bool,
    },
    /// The calendar a player's clock stands still by in a correspondence game with
    /// `weekends` (client-protocol/correspondence.md#weekends): set at the start, and
    /// again when the player changes it; it counts from their next turn.
    WeekendSet {
        color: Color,
        calendar: Calendar,
    },
    /// The player to move in a correspondence game was warned (a `deadline` notice) that
    /// their time runs out at `deadline` (server Unix ms).
    DeadlineWarned {
        color: Color,
        deadline: u64,
    },
    /// A player's connection came or went, with both clocks as they stood (timed games),
    /// so that a game rebuilt after the server stopped charges the time used up to then.
    /// Older logs lack the clock.
    Presence {
        color: Color,
        online: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A referee warned a player; `warnings` is their count in this game so far.
    Warned {
        color: Color,
        warnings: u8,
        by: UserInfo,
        reason: String,
    },
    /// A referee added time to a player's clock (`delta_ms` > 0) or took it away (< 0);
    /// `clock` is both clocks after it.
    ClockAdjusted {
        color: Color,
        delta_ms: i64,
        by: UserInfo,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A referee stopped the clocks (an organiser's break); only a referee resumes.
    RefereePaused {
        by: UserInfo,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A referee ended the break; the side to move's clock runs again.
    RefereeResumed {
        by: UserInfo,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clock: Option<ClockView>,
    },
    /// A referee scheduled an adjournment at `at` (server Unix ms): the player to move
    /// must seal a move; the referee opens it at resumption (`referee_resumed`).
    AdjournmentScheduled {
        at: i64,
        by: UserInfo,
        reason: String,
    },
    /// A referee ended the game with a ruling; `game_ended` follows. For `replay`,
    /// `replay_game_id` is the new game with the same players and settings.
    Ruled {
        ruling: Ruling,
        by: UserInfo,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay_game_id: Option<String>,
    },
    /// Strict mode (`strict_illegal`): an illegal move attempt, recorded as evidence; the
    /// player's turn is lost, as the pass that follows records (Art. 19, 20.1).
    IllegalAttempt {
        move_number: u32,
        color: Color,
        vertex: Move,
        /// `occupied`, `suicide`, `ko` or `superko`.
        reason: String,
    },
    /// A player called the referee; the call is open until a referee acts in the game or
    /// the game ends.
    RefereeCalled {
        color: Color,
        message: String,
        at: i64,
    },
    /// A referee changed the result of the finished game: `previous` stays in the log,
    /// `result` is in effect. `ruling` is the referee's for `change_result`, `score` the
    /// recount when the count was corrected: one of the two is set.
    ResultChanged {
        previous: GameResult,
        result: GameResult,
        by: UserInfo,
        reason: String,
        /// Kept because `result` alone cannot tell both-lose from annulled (both `Void`)
        /// nor a referee's draw from a counted one (both `0`). Logs written before it
        /// was recorded lack it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ruling: Option<Ruling>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        score: Option<ScoreView>,
    },
}

impl GameEvent {
    /// The event as players and spectators may see it: a sealed move's point removed.
    pub fn public(&self) -> Option<GameEvent> {
        match self {
            GameEvent::MoveSealed {
                by,
                move_number,
                vertex: Some(_),
                clock,
            } => Some(GameEvent::MoveSealed {
                by: *by,
                move_number: *move_number,
                vertex: None,
                clock: *clock,
            }),
            _ => None,
        }
    }

    /// Whether a referee made this event.
    pub fn is_referees(&self) -> bool {
        matches!(
            self,
            GameEvent::Warned { .. }
                | GameEvent::ClockAdjusted { .. }
                | GameEvent::RefereePaused { .. }
                | GameEvent::RefereeResumed { .. }
                | GameEvent::AdjournmentScheduled { .. }
                | GameEvent::Ruled { .. }
                | GameEvent::ResultChanged { .. }
        )
    }

    /// The name stored in the log and used as `type` on the wire: serde's own name for
    /// the variant, so the two cannot differ.
    pub fn kind(&self) -> &'static str {
        super::names::name_of(self, "type")
    }
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

/// An event as it goes on the wire: the game, its number, then the event's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventFrame {
    pub game_id: String,
    pub seq: u64,
    #[serde(flatten)]
    pub event: GameEvent,
}
