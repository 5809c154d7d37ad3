//! A tournament's regulations (竞赛规程): the system, its scores, the handicap and the
//! colour rule, byes, seeding and the order of tie-breaks, fixed before round one.

use serde::{Deserialize, Serialize};

use crate::rating::Rank;

/// How rounds are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum System {
    /// Everyone starts with a McMahon score from their rank, between the floor and the
    /// bar; rounds pair within score groups.
    McMahon { bar: Rank, floor: Rank },
    /// Everyone starts at zero; rounds pair within groups of equal wins.
    Swiss,
    /// Everyone plays everyone, in the rounds of the Berger tables.
    RoundRobin,
    /// Single elimination from a seeded bracket.
    Knockout,
}

/// A tie-break, in the sense of the EGF tournament system rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// Sum of the opponents' scores.
    Sos,
    /// Sum of the opponents' SOS.
    Sosos,
    /// Sum of the scores of the opponents one beat (half for a jigo).
    Sodos,
    /// Cumulative score (累进分): the sum of one's own score after each round.
    Cuss,
    /// Number of wins.
    Wins,
    /// Direct confrontation: among exactly two equal players, the winner of their game.
    Direct,
}

/// Who takes Black in an even game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ColourRule {
    /// By the organisers' draw and pairing (大会抽签编排): the pairing balances colours
    /// and a seeded draw settles the rest.
    Draw,
    /// By nigiri at the board.
    Nigiri,
}

/// How a score group is cut into pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Seeding {
    /// Top half against bottom half, first against last: 1–n, 2–(n−1).
    SplitAndFold,
    /// Top half against bottom half in order: 1–(n/2+1), 2–(n/2+2).
    SplitAndSlip,
    /// Top half against bottom half, by the event's seeded draw.
    SplitAndRandom,
}

/// Handicap from the difference of McMahon scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandicapRule {
    /// Stones taken off the difference (1 makes a one-point difference an even game).
    pub correction: u8,
    /// At most this many stones.
    pub ceiling: u8,
    /// No handicap when the stronger player's rank is at or above this.
    pub threshold: Rank,
}

/// Scores in half points, so a jigo or a half-point bye is exact.
pub type HalfPoints = i32;

/// Everything the pairing and the standings need to know about the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Regulations {
    pub system: System,
    pub rounds: u8,
    /// None: every game is even.
    pub handicap: Option<HandicapRule>,
    pub colours: ColourRule,
    pub seeding: Seeding,
    /// The standings' order after the score.
    pub tie_breaks: Vec<TieBreak>,
    /// What a bye is worth, in half points (2 = a win).
    pub bye: HalfPoints,
    /// What each round missed before a late registration is worth, in half points.
    pub missed_round: HalfPoints,
    /// Keep apart players of the same club, and of the same country.
    pub separate_clubs: bool,
    pub separate_countries: bool,
}

impl Regulations {
    /// A player's McMahon score before round one, in half points: their rank's steps
    /// above 30k, raised to the floor and lowered to the bar; zero outside McMahon.
    pub fn start_score(&self, rank: Rank) -> HalfPoints {
        match self.system {
            System::McMahon { bar, floor } => {
                2 * i32::from(rank.steps().clamp(floor.steps(), bar.steps()))
            }
            _ => 0,
        }
    }

    /// Whether a game between these ranks may carry a handicap at all: never above the
    /// bar, never at or above the threshold.
    pub fn allows_handicap(&self, stronger: Rank) -> bool {
        let Some(rule) = self.handicap else {
            return false;
        };
        let below_bar = match self.system {
            System::McMahon { bar, .. } => stronger.steps() < bar.steps(),
            _ => true,
        };
        below_bar && stronger.steps() < rule.threshold.steps()
    }

    /// The stones for a McMahon-score difference of `difference` half points between
    /// players whose stronger has rank `stronger`.
    pub fn handicap_stones(&self, difference: HalfPoints, stronger: Rank) -> u8 {
        let Some(rule) = self.handicap else {
            return 0;
        };
        if !self.allows_handicap(stronger) {
            return 0;
        }
        let whole = (difference.abs() / 2) as u32;
        whole
            .saturating_sub(u32::from(rule.correction))
            .min(u32::from(rule.ceiling)) as u8
    }
}
