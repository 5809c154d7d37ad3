//! The last event number of the games this store is appending to, so that an append
//! checks its `seq` without a query.
//!
//! The query ([`LAST_SEQ`]) was half the time of SQLite's statements in
//! a loaded server's group commit (53 of 108 samples, BENCHMARKS.md's seventh pass). This
//! is only a cache in front of it: a game not in it
//! is looked up, and the events' key `(game_id, seq)` still refuses a duplicate. An entry
//! can differ from the file only if another process changed that game's events while
//! this store was open. If it appended, the append here is refused (`SeqOutOfOrder`, or
//! the key's constraint), never misnumbered; nothing in tengen deletes events.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension};

/// Entries past which the cache starts again empty. A game leaves it when it finishes,
/// so this bounds only games that stop without finishing or get events afterwards.
const MAX_GAMES: usize = 1 << 16;

#[derive(Debug, Default)]
pub(super) struct LastSeqs {
    games: HashMap<String, u64>,
}

impl LastSeqs {
    /// The game's last event number, if known.
    pub(super) fn get(&self, game_id: &str) -> Option<u64> {
        self.games.get(game_id).copied()
    }

    /// Records an append. Called inside the transaction: a transaction that then fails
    /// must call [`LastSeqs::forget_all`].
    pub(super) fn appended(&mut self, game_id: &str, seq: u64) {
        if let Some(last) = self.games.get_mut(game_id) {
            *last = seq;
            return;
        }
        if self.games.len() >= MAX_GAMES {
            self.games.clear();
        }
        self.games.insert(game_id.to_owned(), seq);
    }

    /// The game has finished: it will not be appended to often enough to keep.
    pub(super) fn finished(&mut self, game_id: &str) {
        self.games.remove(game_id);
    }

    /// A transaction rolled back: what it recorded is not in the file.
    pub(super) fn forget_all(&mut self) {
        self.games.clear();
    }
}

/// A game's last event number before its first append since the store opened (no row:
/// no such game); until the game ends, later appends know it ([`LastSeqs`]). Its parameter
/// appears once: SQLite re-prepares `SELECT EXISTS (.. ?1), (SELECT max(seq) .. ?1)`
/// on every run, which under load cost a parse and a query plan per move.
pub(super) const LAST_SEQ: &str =
    "SELECT (SELECT max(seq) FROM events WHERE game_id = games.id) FROM games WHERE id = ?1";

/// The game's last event number in the file (0 before its first); None if no such game.
pub(super) fn stored_last_seq(conn: &Connection, game_id: &str) -> rusqlite::Result<Option<u64>> {
    let last: Option<Option<i64>> = conn
        .prepare_cached(LAST_SEQ)?
        .query_row([game_id], |row| row.get(0))
        .optional()?;
    Ok(last.map(|seq| seq.unwrap_or(0).unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_the_latest_number_and_drops_finished_games() {
        let mut seqs = LastSeqs::default();
        assert_eq!(seqs.get("g"), None);
        seqs.appended("g", 1);
        seqs.appended("g", 2);
        seqs.appended("h", 7);
        assert_eq!(seqs.get("g"), Some(2));
        seqs.finished("g");
        assert_eq!(seqs.get("g"), None);
        assert_eq!(seqs.get("h"), Some(7));
        seqs.forget_all();
        assert_eq!(seqs.get("h"), None);
    }

    #[test]
    fn it_starts_again_empty_at_its_bound() {
        let mut seqs = LastSeqs::default();
        for i in 0..MAX_GAMES {
            seqs.appended(&i.to_string(), 1);
        }
        assert_eq!(seqs.games.len(), MAX_GAMES);
        seqs.appended("0", 2);
        assert_eq!(seqs.games.len(), MAX_GAMES, "a known game adds nothing");
        seqs.appended("new", 1);
        assert_eq!(seqs.games.len(), 1);
        assert_eq!(seqs.get("new"), Some(1));
    }
}
