//! Fair play in the store: who blocks whom, reports to referees, spectators' chat, and
//! the games an escaper record is read from. Plain rows, apart from the game log.

use super::{EventRecord, GameRecord, StoreError};

/// A report as a player files it: about a user, a game (and a range of its events), or
/// both, with a reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReport {
    pub reporter: String,
    pub user: Option<String>,
    pub game_id: Option<String>,
    /// The first and last event `seq` it concerns, inclusive.
    pub seqs: Option<(u64, u64)>,
    pub reason: String,
    pub at_ms: i64,
}

/// A spectators' chat line, kept as evidence (written with [`super::Append::Kibitz`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KibitzRecord {
    pub game_id: String,
    pub at_ms: i64,
    pub user_id: String,
    pub name: String,
    pub text: String,
}

/// A stored report with its number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReport {
    pub id: u64,
    pub report: NewReport,
}

/// Blocks between users, reports to referees, and the evidence referees read: apart
/// from the game log.
pub trait FairPlayStore {
    /// Records that `blocker` blocks `blocked` (`on`), or no longer does; idempotent.
    fn set_block(
        &self,
        blocker: &str,
        blocked: &str,
        on: bool,
        at_ms: i64,
    ) -> Result<(), StoreError>;

    /// Every block as `(blocker, blocked)`, to load at start.
    fn blocks(&self) -> Result<Vec<(String, String)>, StoreError>;

    /// Stores a report; returns its number.
    fn file_report(&self, report: &NewReport) -> Result<u64, StoreError>;

    /// Open reports, oldest first, at most `limit`; only `reporter`'s when given.
    fn open_reports(
        &self,
        reporter: Option<&str>,
        limit: u32,
    ) -> Result<Vec<StoredReport>, StoreError>;

    /// Closes an open report; false when there is no open report `id`.
    fn close_report(&self, id: u64) -> Result<bool, StoreError>;

    /// A game's spectators' chat (kept with [`Append::Kibitz`](super::Append::Kibitz)),
    /// oldest first.
    fn kibitz(&self, game_id: &str) -> Result<Vec<KibitzRecord>, StoreError>;

    /// The finished games `player` lost by forfeit (by the result in effect), the latest
    /// ending first, at most `limit`, each with only its `presence`, `warned`, `ruled` and
    /// `game_ended` events in `seq` order: what an escaper record is read from
    /// ([`crate::archive::escaper`]).
    fn forfeit_losses(
        &self,
        player: &str,
        limit: u32,
    ) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError>;
}
