//! The deadline index of correspondence games: for each one not finished, the calendar
//! instant (Unix ms) it must next be woken at (its clock's flag, the end of its
//! dead-stone phase). A correspondence game asleep holds no room; the waker
//! (`registry::waker`) reads this index to wake the one that is due.
//!
//! A row is written in the same batch as the events that move the deadline
//! ([`Append::Deadline`](super::Append::Deadline)), so the index never says later than
//! the log, and it goes with the game's [`Append::Finish`](super::Append::Finish). A
//! game in the index is asleep unless a room holds it, so [`GameStore::unfinished_games`]
//! (what a restart rebuilds) leaves these games out.
//!
//! [`GameStore::unfinished_games`]: super::GameStore::unfinished_games
//!
//! Each row also keeps what a list of the player's games shows of the game meanwhile
//! (`list_correspondence`: its summary, written by its room with every commit), so that
//! listing a player's games reads rows, not boards, and wakes none of them.

use super::StoreError;

/// One of a player's correspondence games not over, as their list of them reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeskRow {
    pub game_id: String,
    /// The summary its room wrote with its last commit, as JSON text; None when it wrote
    /// none (a game whose spectators see it late, or a row older than the summaries).
    pub summary: Option<String>,
    /// Whether the player keeps a plan of conditional moves in it.
    pub planned: bool,
}

/// Reading the deadline index. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait DeadlineStore {
    /// The games due at or before `now_ms`, earliest first, at most `limit`.
    fn due_games(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, StoreError>;

    /// The earliest deadline after `now_ms`, if any.
    fn next_deadline(&self, now_ms: i64) -> Result<Option<i64>, StoreError>;

    /// `player`'s games in the index, newest first (as the game list pages), at most
    /// `limit`: one read for the whole list.
    fn desk(&self, player: &str, limit: u32) -> Result<Vec<DeskRow>, StoreError>;
}
