//! Tournaments as their own numbered logs: a row per tournament (what a list shows
//! without reading a log) and its entries, each a `(kind, JSON text)` pair numbered 1, 2,
//! 3 … with no gaps. The store never reads an entry; the director task folds them into
//! the tournament (`crate::tournaments`), so a tournament after a restart is the one
//! that was run, and two nodes can never both write entry n.

use serde::{Deserialize, Serialize};

use super::StoreError;

/// A tournament as lists show it (`GET /api/tournaments`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TournamentRecord {
    pub id: String,
    pub name: String,
    /// Server Unix time in milliseconds.
    pub created_at_ms: i64,
    /// Where the event stands (`registration`, `running`, `finished`), as its director
    /// last wrote it.
    pub stage: String,
}

/// One numbered entry of a tournament's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentEntry {
    pub seq: u64,
    pub at_ms: i64,
    pub kind: String,
    pub payload: String,
}

/// Tournaments and their logs.
pub trait TournamentStore {
    /// Stores a new tournament with its first entry (seq 1);
    /// [`StoreError::DuplicateTournament`] if the id is taken.
    fn create_tournament(
        &self,
        record: &TournamentRecord,
        first: &TournamentEntry,
    ) -> Result<(), StoreError>;

    /// Appends `entries` (numbered on from the last one) and sets the tournament's
    /// stage, all or nothing; [`StoreError::TournamentOutOfOrder`] if the first is not
    /// the next number (someone else wrote first), [`StoreError::UnknownTournament`] if
    /// there is no such tournament.
    fn append_tournament(
        &self,
        id: &str,
        entries: &[TournamentEntry],
        stage: &str,
    ) -> Result<(), StoreError>;

    /// The newest tournaments first, at most `limit`.
    fn tournaments(&self, limit: u32) -> Result<Vec<TournamentRecord>, StoreError>;

    /// One tournament and its whole log in order, if it exists.
    fn tournament(
        &self,
        id: &str,
    ) -> Result<Option<(TournamentRecord, Vec<TournamentEntry>)>, StoreError>;

    /// The ids of the tournaments not finished, oldest first: what a server runs again
    /// at start.
    fn unfinished_tournaments(&self) -> Result<Vec<String>, StoreError>;
}
