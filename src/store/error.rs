//! Why the store could not do what was asked: one error for every trait and backend of
//! the store, so a caller handles storage trouble the same way whatever it asked for.

use std::path::PathBuf;
use std::sync::Arc;

/// Why the store could not do what was asked.
///
/// Variants about a database file name it; variants about a request name the game, so the
/// room can tell a bug in its own numbering ([`StoreError::SeqOutOfOrder`]) from storage
/// trouble ([`StoreError::Sqlite`]). It is `Clone` (causes are shared) so the
/// [`StoreWriter`](super::StoreWriter) can give every waiter of a failed group commit the same error. Each
/// message holds its cause, so none is also a [`std::error::Error::source`] (the binary
/// would print it twice).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite could not open the file at all (missing directory, no permission, …).
    #[error("The game database {path} could not be opened: {cause}.")]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        cause: Arc<rusqlite::Error>,
    },
    /// The path names a directory, not a database file.
    #[error("The game database path {path} is a directory, not a database file.")]
    IsDirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The file is not a SQLite database, is damaged, or belongs to another program; it
    /// was left exactly as it was.
    #[error(
        "The game database {path} is damaged or is not a tengen database ({detail}); it was left untouched: restore it from a backup or move it aside."
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What was found wrong.
        detail: String,
    },
    /// The file was written by a newer tengen whose schema this build does not know.
    #[error(
        "The game database {path} has schema version {found}, newer than version {supported} that this build of tengen understands; run a newer tengen instead (the file was left untouched)."
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The file's `user_version`.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A schema migration failed and was rolled back.
    #[error("Upgrading the game database {path} to schema version {version} failed: {cause}.")]
    Migration {
        /// The database file.
        path: PathBuf,
        /// The version that could not be reached.
        version: i64,
        /// SQLite's reason.
        cause: Arc<rusqlite::Error>,
    },
    /// A read or write of the database failed (disk full, read-only file, I/O error, …).
    #[error("The game database {path} could not be read or written: {cause}.")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        cause: Arc<rusqlite::Error>,
    },
    /// A stored row holds a value this build cannot read back.
    #[error("The game database {path} holds an unreadable value: {detail}.")]
    BadRow {
        /// The database file.
        path: PathBuf,
        /// Which value and why.
        detail: String,
    },
    /// [`Append::Create`](super::Append::Create) for an id that is already taken.
    #[error("Game {game_id} already exists.")]
    DuplicateGame {
        /// The id asked for.
        game_id: String,
    },
    /// An event, move count or ending for a game the store does not have.
    #[error("Game {game_id} does not exist.")]
    UnknownGame {
        /// The id asked for.
        game_id: String,
    },
    /// An event whose `seq` is not the game's next number (a duplicate or a gap).
    #[error(
        "Event {seq} of game {game_id} is out of order: the next event must be number {expected}."
    )]
    SeqOutOfOrder {
        /// The game.
        game_id: String,
        /// The number given.
        seq: u64,
        /// The only number the store would accept next.
        expected: u64,
    },
    /// A tournament id that is already taken.
    #[error("Tournament {id} already exists.")]
    DuplicateTournament {
        /// The tournament.
        id: String,
    },
    /// No tournament has this id.
    #[error("Tournament {id} does not exist.")]
    UnknownTournament {
        /// The tournament.
        id: String,
    },
    /// A tournament entry numbered other than the next one: another writer was first.
    #[error(
        "Entry {seq} of tournament {id} is out of order: the next entry must be number {expected}."
    )]
    TournamentOutOfOrder {
        /// The tournament.
        id: String,
        /// The number given.
        seq: u64,
        /// The only number the store would accept next.
        expected: u64,
    },
    /// [`Append::Finish`](super::Append::Finish) for a game that already has a result.
    #[error("Game {game_id} is already finished, so its result cannot be changed.")]
    AlreadyFinished {
        /// The game.
        game_id: String,
    },
    /// A thread panicked while holding the database connection.
    #[error(
        "The game database connection was abandoned by a thread that panicked; restart the server."
    )]
    Poisoned,
    /// Flushing the SQLite write-ahead log to disk failed, so commits written since the
    /// last flush may not be durable; the [`StoreWriter`](super::StoreWriter) takes no more commits after it
    /// (a later flush could succeed without the lost pages, so it is not retried).
    #[error(
        "The game database's log {path} could not be flushed to disk ({cause}); recent commits may be lost, so no more are taken: restart the server."
    )]
    Sync {
        /// The write-ahead log file.
        path: PathBuf,
        /// The operating system's reason.
        cause: Arc<std::io::Error>,
    },
    /// The SQLite store's move log (`<db>-moves-0`, `-1`) could not be read or written.
    #[error("The game database's move log {path} could not be read or written: {cause}.")]
    MoveLog {
        /// The log file, or its lock.
        path: PathBuf,
        /// The operating system's reason.
        cause: Arc<std::io::Error>,
    },
    /// The [`StoreWriter`](super::StoreWriter) thread has stopped, so the commit was not (or not known to be)
    /// written.
    #[error("The store writer has stopped, so the commit was not written.")]
    WriterStopped,
    /// [`AccountStore::create_user`](super::AccountStore::create_user) for an id that is already taken.
    #[error("User {id} already exists.")]
    DuplicateUser {
        /// The id asked for.
        id: String,
    },
    /// A change to a user the store does not have.
    #[error("User {id} does not exist.")]
    UnknownUser {
        /// The id asked for.
        id: String,
    },
    /// [`RatingStore::record_rating`](super::RatingStore::record_rating) of a record computed after fewer (or more) applied games
    /// than the store holds.
    #[error(
        "The ratings moved on: {applied} games are applied, the record was made after {after}."
    )]
    RatingsMoved {
        /// Games applied in the store.
        applied: u64,
        /// Games the record was computed after.
        after: u64,
    },
    /// An invite that does not exist, is used up, or has expired.
    #[error("The invite code is unknown, used or expired.")]
    InvalidInvite,
    /// PostgreSQL could not be reached, refused a statement, or answered something this
    /// build cannot read. The detail never holds the connection URL or its password.
    #[error("The PostgreSQL game database failed: {detail}.")]
    Postgres {
        /// What went wrong.
        detail: String,
    },
    /// [`Append::Fence`](super::Append::Fence) with a number below the game's stored fence: another node has
    /// taken the game over since this one claimed it.
    #[error(
        "Game {game_id} is fenced at {current}, so this node's claim {fence} is stale: another node owns the game now."
    )]
    Fenced {
        /// The game.
        game_id: String,
        /// The number given.
        fence: u64,
        /// The game's stored fence.
        current: u64,
    },
}

impl StoreError {
    /// True when the store refused the request for what it asked (a taken id, an unknown
    /// game, an out-of-order `seq`, a second result): the store itself is healthy, and
    /// sending the same request again fails the same way.
    pub fn is_rejection(&self) -> bool {
        matches!(
            self,
            StoreError::DuplicateGame { .. }
                | StoreError::UnknownGame { .. }
                | StoreError::SeqOutOfOrder { .. }
                | StoreError::AlreadyFinished { .. }
                | StoreError::DuplicateUser { .. }
                | StoreError::UnknownUser { .. }
                | StoreError::InvalidInvite
                | StoreError::Fenced { .. }
                | StoreError::RatingsMoved { .. }
        )
    }
}
