//! The stages of a game, each holding only the data it has, so that impossible
//! combinations (paused while scoring, a sealed move with a pending pause) cannot be
//! built at all.

use crate::clock::Millis;
use crate::protocol::{Phase, ScoreView};
use crate::rules::{Color, DeadStones, GameResult, Move};

/// Where a game is.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    Scheduled(Scheduled),
    /// Black places free handicap stones; Black's clock runs.
    Handicap,
    Play(Play),
    Scoring(Scoring),
    Ended(Ended),
}

/// Before a scheduled start.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    /// The start, on the room's clock.
    pub begins_at: Millis,
    /// The start passed while the server was down: the game begins with no clock
    /// running, as after any restart, until the player to move is back.
    pub missed: bool,
}

/// Play, with the clocks running, stopped by agreement, by a sealed move, or by a referee.
#[derive(Debug, Clone, PartialEq)]
pub enum Play {
    Running {
        pause_requested_by: Option<Color>,
    },
    Paused {
        resume_requested_by: Option<Color>,
    },
    Adjourned {
        sealed: Sealed,
        resume_requested_by: Option<Color>,
    },
    /// Stopped by a referee (an organiser's break): only a referee resumes.
    Halted,
}

impl Play {
    /// Play with nothing pending.
    pub const RUNNING: Play = Play::Running {
        pause_requested_by: None,
    };
}

/// The move sealed at an adjournment, played when the game resumes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sealed {
    pub by: Color,
    pub mv: Move,
}

/// The dead-stone phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoring {
    pub dead: DeadStones,
    /// By [`Color::index`]; any change of marks voids both.
    pub accepted: [bool; 2],
    /// The seq of the event that last changed the marks.
    pub marks_seq: u64,
    /// When the phase runs out, on the room's clock.
    pub until: Millis,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub result: GameResult,
    pub reason: String,
    pub score: Option<ScoreView>,
    /// Whether the game ended by counting, whatever a referee made of the result since:
    /// its count can still be corrected.
    pub counted: bool,
    /// The dead-stone phase the game ended in, if it did: its marks and acceptances stay
    /// on show.
    pub scoring: Option<Scoring>,
}

impl Stage {
    /// The stage as the wire names it.
    pub fn phase(&self) -> Phase {
        match self {
            Stage::Scheduled(_) => Phase::Scheduled,
            Stage::Handicap => Phase::Handicap,
            Stage::Play(_) => Phase::Play,
            Stage::Scoring(_) => Phase::Scoring,
            Stage::Ended(_) => Phase::Ended,
        }
    }

    /// Whether the side to move's clock should run.
    pub fn clock_runs(&self) -> bool {
        matches!(self, Stage::Handicap | Stage::Play(Play::Running { .. }))
    }

    /// The stage in words, for refusals and replay errors.
    pub fn describe(&self) -> &'static str {
        match self {
            Stage::Scheduled(_) => "waiting for its scheduled start",
            Stage::Handicap => "waiting for Black's handicap stones",
            Stage::Play(Play::Running { .. }) => "in play",
            Stage::Play(Play::Paused { .. }) => "paused",
            Stage::Play(Play::Adjourned { .. }) => "adjourned with a sealed move",
            Stage::Play(Play::Halted) => "paused by the referee",
            Stage::Scoring(_) => "in the dead-stone phase",
            Stage::Ended(_) => "over",
        }
    }
}
