//! The deadline index of correspondence games: for each one not finished, the calendar
//! instant (Unix ms) it must next be woken at (its clock's flag, the end of its
//! dead-stone phase). A correspondence game asleep holds no room; the waker
//! (`correspondence::waker`) reads this index to wake the one that is due.
//!
//! A row is written in the same batch as the events that move the deadline
//! ([`Append::Deadline`](super::Append::Deadline)), so the index never says later than
//! the log, and it goes with the game's [`Append::Finish`](super::Append::Finish). A
//! game in the index is asleep unless a room holds it, so [`GameStore::unfinished_games`]
//! (what a restart rebuilds) leaves these games out.
//!
//! [`GameStore::unfinished_games`]: super::GameStore::unfinished_games

use super::StoreError;

/// Reading the deadline index. Synchronous like the rest; async callers use
/// `spawn_blocking`.
pub trait DeadlineStore {
    /// The games due at or before `now_ms`, earliest first, at most `limit`.
    fn due_games(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, StoreError>;

    /// The earliest deadline after `now_ms`, if any.
    fn next_deadline(&self, now_ms: i64) -> Result<Option<i64>, StoreError>;
}
