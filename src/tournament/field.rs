//! The field and its record: who entered, every round's boards and byes, and what each
//! player's score was after each round. Everything else (pairing, standings, exports)
//! reads a [`Record`].

use serde::{Deserialize, Serialize};

use crate::rating::Rank;

use super::regulations::{HalfPoints, Regulations};

/// A player's seat: their index in the field, fixed for the whole event.
pub type Seat = usize;

/// One registered player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entrant {
    /// The account's user id.
    pub id: String,
    pub rank: Rank,
    pub club: String,
    pub country: String,
    /// The first round the player can be paired in (1 for everyone on time); each round
    /// before it scores the regulations' `missed_round`.
    pub first_round: u8,
    pub status: Status,
}

/// Whether a player is still paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Playing,
    /// Left the event of their own accord; their games stand.
    Withdrawn,
    /// Removed by the organisers; their games stand.
    Disqualified,
}

/// How a board's game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Black won, by play, time, resignation or forfeit.
    Black,
    White,
    Jigo,
    /// A referee's ruling: neither wins.
    BothLose,
}

/// One board of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub black: Seat,
    pub white: Seat,
    pub handicap: u8,
    /// None while the game is being played.
    pub outcome: Option<Outcome>,
}

impl Board {
    /// Half points to `seat` from this board, once it has ended.
    pub fn points_of(&self, seat: Seat) -> Option<HalfPoints> {
        let black = seat == self.black;
        Some(match self.outcome? {
            Outcome::Black if black => 2,
            Outcome::White if !black => 2,
            Outcome::Jigo => 1,
            _ => 0,
        })
    }

    pub fn opponent_of(&self, seat: Seat) -> Seat {
        if seat == self.black {
            self.white
        } else {
            self.black
        }
    }

    pub fn has(&self, seat: Seat) -> bool {
        seat == self.black || seat == self.white
    }
}

/// One round as paired: its boards and who had the bye.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    pub boards: Vec<Board>,
    pub byes: Vec<Seat>,
}

impl Round {
    pub fn board_of(&self, seat: Seat) -> Option<&Board> {
        self.boards.iter().find(|b| b.has(seat))
    }

    /// Every game has a result.
    pub fn is_complete(&self) -> bool {
        self.boards.iter().all(|b| b.outcome.is_some())
    }
}

/// What one round was for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Played {
        opponent: Seat,
        black: bool,
        handicap: u8,
        points: Option<HalfPoints>,
    },
    Bye,
    /// A round before the player's first.
    Missed,
    /// Not paired: withdrawn, disqualified, or left out by the organisers.
    Absent,
}

/// The event so far: the field and its rounds, under its regulations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub regulations: Regulations,
    pub field: Vec<Entrant>,
    pub rounds: Vec<Round>,
    /// Changes to scores by hand, in the order they were made.
    #[serde(default)]
    pub adjustments: Vec<Adjustment>,
}

/// A director's change to a player's score by hand, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjustment {
    pub seat: Seat,
    /// Half points added to the score (negative: taken away).
    pub points: HalfPoints,
    /// The rounds published when it was made: it counts in the score after that many
    /// rounds and every later one (0: from the start, as a McMahon start score's
    /// correction would).
    pub from_round: usize,
    pub reason: String,
}

impl Record {
    /// What round `round` (0-based) was for `seat`.
    pub fn turn(&self, seat: Seat, round: usize) -> Turn {
        let r = &self.rounds[round];
        if let Some(board) = r.board_of(seat) {
            return Turn::Played {
                opponent: board.opponent_of(seat),
                black: board.black == seat,
                handicap: board.handicap,
                points: board.points_of(seat),
            };
        }
        if r.byes.contains(&seat) {
            Turn::Bye
        } else if round + 1 < usize::from(self.field[seat].first_round) {
            Turn::Missed
        } else {
            Turn::Absent
        }
    }

    /// Half points a round added to `seat`'s score (a game still in play adds nothing).
    pub fn gained(&self, seat: Seat, round: usize) -> HalfPoints {
        match self.turn(seat, round) {
            Turn::Played { points, .. } => points.unwrap_or(0),
            Turn::Bye => self.regulations.bye,
            Turn::Missed => self.regulations.missed_round,
            Turn::Absent => 0,
        }
    }

    /// The player's score before round one: the McMahon start score, or zero.
    pub fn start(&self, seat: Seat) -> HalfPoints {
        self.regulations.start_score(self.field[seat].rank)
    }

    /// The score after the first `rounds` rounds (McMahon score, or points), with the
    /// adjustments made by then.
    pub fn score_after(&self, seat: Seat, rounds: usize) -> HalfPoints {
        self.start(seat)
            + (0..rounds)
                .map(|r| self.gained(seat, r))
                .sum::<HalfPoints>()
            + self.adjusted(seat, rounds)
    }

    /// Half points added by hand to `seat`'s score after the first `rounds` rounds.
    pub fn adjusted(&self, seat: Seat, rounds: usize) -> HalfPoints {
        self.adjustments
            .iter()
            .filter(|a| a.seat == seat && a.from_round <= rounds)
            .map(|a| a.points)
            .sum()
    }

    /// The score after every round so far.
    pub fn score(&self, seat: Seat) -> HalfPoints {
        self.score_after(seat, self.rounds.len())
    }

    /// Everyone `seat` has played, round by round.
    pub fn opponents(&self, seat: Seat) -> impl Iterator<Item = Seat> + '_ {
        self.rounds
            .iter()
            .filter_map(move |r| r.board_of(seat).map(|b| b.opponent_of(seat)))
    }

    pub fn have_met(&self, a: Seat, b: Seat) -> bool {
        self.opponents(a).any(|o| o == b)
    }

    /// Games with Black less games with White, over even games only: a handicap
    /// decides its colours by strength, not by turn.
    pub fn colour_balance(&self, seat: Seat) -> i32 {
        self.rounds
            .iter()
            .filter_map(|r| r.board_of(seat))
            .filter(|b| b.handicap == 0)
            .map(|b| if b.black == seat { 1 } else { -1 })
            .sum()
    }

    /// Times paired against a higher score (up) and a lower one (down), for balancing.
    pub fn floats(&self, seat: Seat) -> (u8, u8) {
        let (mut up, mut down) = (0u8, 0u8);
        for (round, r) in self.rounds.iter().enumerate() {
            if let Some(b) = r.board_of(seat) {
                let mine = self.score_after(seat, round);
                let theirs = self.score_after(b.opponent_of(seat), round);
                if theirs > mine {
                    up = up.saturating_add(1);
                } else if theirs < mine {
                    down = down.saturating_add(1);
                }
            }
        }
        (up, down)
    }

    pub fn had_bye(&self, seat: Seat) -> bool {
        self.rounds.iter().any(|r| r.byes.contains(&seat))
    }
}
