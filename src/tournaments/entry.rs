//! What a tournament's log holds: one entry per change, in order. Folding the entries
//! with [`super::state::Tournament::apply`] gives back the tournament that was run, so
//! a restart (or another node taking it over) continues it exactly.

use serde::{Deserialize, Serialize};

use crate::protocol::{TournamentSetup, UserInfo};
use crate::rating::Rank;
use crate::tournament::field::{Outcome, Seat, Status};
use crate::tournament::pairing::Proposed;
use crate::tournament::regulations::HalfPoints;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// The first entry: who created it, its setup, and one secret per round (hex), each
    /// shown only as its commitment until its round is published.
    Created {
        by: UserInfo,
        setup: TournamentSetup,
        secrets: Vec<String>,
    },
    /// A new setup before round one, with fresh secrets (nothing was drawn yet).
    Configured {
        setup: TournamentSetup,
        secrets: Vec<String>,
    },
    Registered {
        user: UserInfo,
        rank: Rank,
        club: String,
        country: String,
        first_round: u8,
    },
    StatusChanged {
        seat: Seat,
        status: Status,
        reason: String,
    },
    /// The director gives `seat` the bye in the next pairing.
    ByeAsked { seat: Seat },
    /// A round proposed, or changed by hand: the whole proposal.
    Paired {
        round: u8,
        boards: Vec<Proposed>,
        byes: Vec<Seat>,
    },
    /// The proposal published: its boards with their final colours (nigiri drawn), each
    /// board's game and referee.
    Published {
        round: u8,
        start_at: i64,
        boards: Vec<Proposed>,
        games: Vec<String>,
        referees: Vec<Option<String>>,
    },
    /// A board's result, or its change (`None`: the game was voided).
    Result {
        round: u8,
        board: usize,
        outcome: Option<Outcome>,
    },
    /// A director's change to a player's score, counted from the score after
    /// `from_round` rounds on.
    Adjusted {
        seat: Seat,
        points: HalfPoints,
        from_round: usize,
        reason: String,
    },
    Appealed {
        from: String,
        message: String,
        at: i64,
    },
    AppealRuled {
        appeal: u32,
        by: String,
        ruling: String,
    },
    /// The last round has every result.
    Finished {},
}

impl Entry {
    /// The entry's kind as the store's log keeps it beside the JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Created { .. } => "created",
            Entry::Configured { .. } => "configured",
            Entry::Registered { .. } => "registered",
            Entry::StatusChanged { .. } => "status_changed",
            Entry::ByeAsked { .. } => "bye_asked",
            Entry::Paired { .. } => "paired",
            Entry::Published { .. } => "published",
            Entry::Result { .. } => "result",
            Entry::Adjusted { .. } => "adjusted",
            Entry::Appealed { .. } => "appealed",
            Entry::AppealRuled { .. } => "appeal_ruled",
            Entry::Finished {} => "finished",
        }
    }
}
