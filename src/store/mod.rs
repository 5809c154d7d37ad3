//! store: owns the durable event log of every game (the games and their numbered events);
//! it never interprets an event's meaning, never decides what is legal, and no SQL lives
//! outside `src/store/`.
//!
//! The room commits every accepted event here *before* it acknowledges or broadcasts it,
//! so after a crash or restart [`Store::unfinished_games`] gives back exactly what players
//! were told. The store is generic: an event is a `(kind, JSON text)` pair numbered by a
//! per-game `seq` (1, 2, 3 … with no gaps), and the store refuses a duplicate or gapped
//! number instead of overwriting history.
//!
//! [`SqliteStore`] is the embedded backend; [`PgStore`] keeps the same log in PostgreSQL,
//! which several nodes can share (each game owned by one node at a time, fenced with
//! [`Append::Fence`]). [`StoreWriter`] puts many games'
//! commits into one transaction (one fsync) from an async context.

mod accounts;
pub mod copy;
mod fairplay;
mod leases;
mod migrations;
mod mutes;
mod postgres;
mod ratings;
mod sqlite;
mod writer;

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use accounts::{
    AccountStore, NewInvite, NewRefresh, Origin, Rotation, Sighting, UserChange, UserRecord,
};
pub use fairplay::{KibitzRecord, NewReport, StoredReport};
pub use leases::{Claim, Leases};
pub use mutes::MuteStore;
pub use postgres::PgStore;
pub use ratings::{RatedGames, RatingChangeRow, RatingRecord, RatingRow};
pub use sqlite::{SqliteStore, SyncMode};
pub use writer::{MAX_BATCH_REQUESTS, StoreWriter};

/// The columns of [`GameRecord`] but its last, the move count, in the order both backends
/// read them back: a macro, so that the whole list below is one literal too.
macro_rules! game_columns_before_count {
    () => {
        "id, created_at_ms, settings, black, white, black_name, white_name, status, result, \
         ended_at_ms"
    };
}
use game_columns_before_count;

/// The columns of [`GameRecord`] in the order both backends read them back.
const GAME_COLUMNS: &str = concat!(game_columns_before_count!(), ", move_count");

/// Where a game stands, so restart recovery can pick out the games still being played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameStatus {
    /// Being played (or waiting for a move); replayed into a room after a restart.
    Live,
    /// Over, with a result; only read for history and review.
    Finished,
}

impl GameStatus {
    /// The stored and serialised spelling (`"live"`, `"finished"`).
    pub fn as_str(self) -> &'static str {
        match self {
            GameStatus::Live => "live",
            GameStatus::Finished => "finished",
        }
    }

    /// Parses the stored spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "live" => Some(GameStatus::Live),
            "finished" => Some(GameStatus::Finished),
            _ => None,
        }
    }
}

/// One game's summary row: who plays, with what settings, and how it ended.
///
/// The event log is the truth about the game's course; this row is what game lists and
/// player histories read without replaying events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Unique game id, chosen by the caller.
    pub id: String,
    /// Server Unix time in milliseconds when the game was created.
    pub created_at_ms: i64,
    /// The game's settings as JSON text; the store does not look inside.
    pub settings: String,
    /// User id of the player with Black.
    pub black: String,
    /// User id of the player with White.
    pub white: String,
    /// Black's display name at the time of the game.
    pub black_name: String,
    /// White's display name at the time of the game.
    pub white_name: String,
    /// Live or finished.
    pub status: GameStatus,
    /// SGF-style result (`B+1.5`, `W+R`, `B+T`, `0`, `Void`) once finished.
    pub result: Option<String>,
    /// Server Unix time in milliseconds when the game ended.
    pub ended_at_ms: Option<i64>,
    /// Moves played so far, as last set by the caller (see [`Append::MoveCount`]).
    pub move_count: u32,
}

/// One numbered event of one game, stored as `(kind, JSON text)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The game this event belongs to; the game must already exist (or be created earlier
    /// in the same batch).
    pub game_id: String,
    /// Per-game sequence number: the first event is 1 and each next one is one more.
    pub seq: u64,
    /// The event's type name (for example `move_played`), chosen by the caller.
    pub kind: String,
    /// The event's body as JSON text; the store does not look inside.
    pub payload: String,
    /// Server Unix time in milliseconds when the event was accepted.
    pub at_ms: i64,
}

/// One change in an atomic batch given to [`Store::append`].
///
/// A batch may mix creations, events and endings of several games; either all of it is
/// written or none of it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Append {
    /// Create a game; refused if the id already exists.
    Create(GameRecord),
    /// Append the next event of a game; refused unless `seq` is exactly one more than the
    /// game's last stored `seq` (1 for the first).
    Event(EventRecord),
    /// Record how many moves a game has, so lists can show it without replaying events.
    /// The store does not know which event kinds are moves, so the room says so here.
    MoveCount {
        /// The game to update.
        game_id: String,
        /// Moves played so far.
        move_count: u32,
    },
    /// Mark a live game finished with its result; refused if it is already finished,
    /// so a result is never overwritten.
    Finish {
        /// The game that ended.
        game_id: String,
        /// SGF-style result (`B+1.5`, `W+R`, `B+T`, `0`, `Void`).
        result: String,
        /// Server Unix time in milliseconds when the game ended.
        ended_at_ms: i64,
    },
    /// Replace a finished game's result (a referee's correction; the original stays in
    /// the game's events); refused unless the game is finished.
    Rejudge {
        /// The finished game.
        game_id: String,
        /// The result now in effect, SGF-style.
        result: String,
    },
    /// Keep a spectators' chat line: evidence for referees, not an event of the game
    /// (the players must not see it while they play).
    Kibitz(KibitzRecord),
    /// Mark a game rated, in the batch that creates it: once it is finished its result
    /// is owed to the ratings ([`Store::rated_games`]).
    Rated {
        /// The game, created earlier in the batch or before.
        game_id: String,
    },
    /// This node's claim on the game: refused with [`StoreError::Fenced`] unless the game's
    /// stored fence is at most `fence`, then the stored fence becomes `fence`. A node that
    /// takes a game over appends this alone before reading the log, so a former owner
    /// (paused, partitioned) with a lower number can never write to the game again.
    Fence {
        /// The game claimed.
        game_id: String,
        /// The claiming lease's fencing number; it only grows.
        fence: u64,
    },
}

impl Append {
    /// The game this change is about, for logs and for isolating a failed request.
    pub fn game_id(&self) -> &str {
        match self {
            Append::Create(game) => &game.id,
            Append::Event(event) => &event.game_id,
            Append::Kibitz(line) => &line.game_id,
            Append::MoveCount { game_id, .. }
            | Append::Finish { game_id, .. }
            | Append::Rejudge { game_id, .. }
            | Append::Rated { game_id }
            | Append::Fence { game_id, .. } => game_id,
        }
    }
}

/// A page of the game list, newest first.
///
/// Paging: pass the last game's `created_at_ms` as `before_ms` and its `id` as
/// `before_id` to get the next page. With `before_id` the cursor is the pair
/// `(created_at_ms, id)`, so games created in the same millisecond are never skipped;
/// with only `before_ms` every game created at that millisecond or later is excluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameQuery {
    /// Only games where this user id plays Black or White.
    pub player: Option<String>,
    /// Only games in this status.
    pub status: Option<GameStatus>,
    /// Only games created before this instant (see the type's doc for the cursor).
    pub before_ms: Option<i64>,
    /// Tie-breaker for `before_ms`: also include games created exactly at `before_ms`
    /// whose id sorts before this one. Ignored without `before_ms`.
    pub before_id: Option<String>,
    /// How many games at most; values above [`GameQuery::MAX_LIMIT`] are capped.
    pub limit: u32,
}

impl GameQuery {
    /// The most games one query returns, so a single request cannot read the whole table.
    pub const MAX_LIMIT: u32 = 200;
    /// The page size of [`GameQuery::default`].
    pub const DEFAULT_LIMIT: u32 = 50;

    /// The limit actually applied.
    pub fn effective_limit(&self) -> u32 {
        self.limit.min(Self::MAX_LIMIT)
    }
}

impl Default for GameQuery {
    /// All games, newest first, one page of [`GameQuery::DEFAULT_LIMIT`].
    fn default() -> Self {
        GameQuery {
            player: None,
            status: None,
            before_ms: None,
            before_id: None,
            limit: Self::DEFAULT_LIMIT,
        }
    }
}

/// Why the store could not do what was asked.
///
/// Variants about a database file name it; variants about a request name the game, so the
/// room can tell a bug in its own numbering ([`StoreError::SeqOutOfOrder`]) from storage
/// trouble ([`StoreError::Sqlite`]). It is `Clone` (causes are shared) so the
/// [`StoreWriter`] can give every waiter of a failed group commit the same error. Each
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
    /// [`Append::Create`] for an id that is already taken.
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
    /// [`Append::Finish`] for a game that already has a result.
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
    /// last flush may not be durable; the [`StoreWriter`] takes no more commits after it
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
    /// The [`StoreWriter`] thread has stopped, so the commit was not (or not known to be)
    /// written.
    #[error("The store writer has stopped, so the commit was not written.")]
    WriterStopped,
    /// [`AccountStore::create_user`] for an id that is already taken.
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
    /// [`Store::record_rating`] of a record computed after fewer (or more) applied games
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
    /// [`Append::Fence`] with a number below the game's stored fence: another node has
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

/// What is left to do before a batch written by [`Store::append_unsynced`] is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Nothing: it was durable (to the store's sync mode) when the write returned.
    Durable,
    /// A [`Store::sync_log`] that starts after the write returned.
    AfterSyncLog,
}

/// A saved analysis board (a review): a tree of moves as SGF, from a position of a game
/// or from a loaded file, kept so that its link can be shared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub id: String,
    /// Server Unix time in milliseconds when it was saved.
    pub created_at_ms: i64,
    /// The user id that saved it.
    pub owner: String,
    /// The game it starts from, if any.
    pub game_id: Option<String>,
    /// The move of that game it starts after.
    pub move_number: Option<u32>,
    pub sgf: String,
}

/// The durable event log, as the room and the HTTP handlers see it.
///
/// Synchronous on purpose: SQLite is a blocking library, and [`PgStore`] runs its async
/// client on a runtime of its own, so a call is safe from any thread. Async callers go through [`StoreWriter`] for
/// writes (which batches them) and `spawn_blocking` for reads. The account half is the
/// supertrait [`AccountStore`], the mutes [`MuteStore`].
pub trait Store: AccountStore + MuteStore + Send + Sync + 'static {
    /// Creates a game; [`StoreError::DuplicateGame`] if its id is taken.
    fn create_game(&self, game: &GameRecord) -> Result<(), StoreError>;

    /// Writes the whole batch in one transaction, in order, or nothing of it.
    ///
    /// Later items see earlier ones, so a batch may create a game and append its first
    /// events. Once this returns `Ok` the batch is durable to the degree the backend's
    /// sync mode promises.
    fn append(&self, batch: &[Append]) -> Result<(), StoreError>;

    /// Writes the batch as [`Store::append`] does, but may return before it is durable,
    /// saying so: the [`StoreWriter`] then makes the whole group durable with one
    /// [`Store::sync_log`] before it answers, however many transactions isolating a
    /// refused request took.
    ///
    /// The default is `append`, durable on return: a store (or a wrapper around one)
    /// that does not split the flush from the write keeps its guarantee without doing
    /// anything.
    fn append_unsynced(&self, batch: &[Append]) -> Result<Durability, StoreError> {
        self.append(batch).map(|()| Durability::Durable)
    }

    /// Makes durable every batch that [`Store::append_unsynced`] wrote before this call
    /// started and answered [`Durability::AfterSyncLog`]. Required, so that a wrapper
    /// which forwards `append_unsynced` cannot forget to forward this too.
    fn sync_log(&self) -> Result<(), StoreError>;

    /// Copies into the database proper the events the store keeps beside it (SQLite's
    /// move log), so that another opener of the file sees every one. The writer calls
    /// it when it stops. The default has nothing beside the database to copy.
    fn fold_log(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Every live game with all its events in `seq` order, oldest game first, so a
    /// restarted server can rebuild its rooms.
    fn unfinished_games(&self) -> Result<Vec<(GameRecord, Vec<EventRecord>)>, StoreError>;

    /// One game's summary row, if it exists.
    fn game(&self, id: &str) -> Result<Option<GameRecord>, StoreError>;

    /// One game's events in `seq` order (empty if the game has none or does not exist).
    fn events(&self, id: &str) -> Result<Vec<EventRecord>, StoreError> {
        self.events_in(id, 1..u64::MAX)
    }

    /// One game's events with a seq in `seqs`, in order: what a reconnecting client
    /// missed, without reading the whole game.
    fn events_in(&self, id: &str, seqs: Range<u64>) -> Result<Vec<EventRecord>, StoreError>;

    /// A page of games, newest first (see [`GameQuery`]).
    fn list_games(&self, query: &GameQuery) -> Result<Vec<GameRecord>, StoreError>;

    /// Proves the store can take a write right now without changing anything, for the
    /// readiness probe: a read-only file, a full lock or a lost connection fails it.
    fn check_writable(&self) -> Result<(), StoreError>;

    // Fair play (store/fairplay.rs): blocks between users and reports to referees,
    // apart from the game log.

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

    /// A game's spectators' chat (kept with [`Append::Kibitz`]), oldest first.
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
    // Ratings (docs/RATINGS.md). The store keeps what the rating service derived from
    // results; it never computes a rating itself.

    /// Every rated game's row: those already applied in their order of application, then
    /// the finished ones not yet applied, by when they ended (then id).
    fn rated_games(&self) -> Result<RatedGames, StoreError>;

    /// Records one rated game as applied next: its place in the order, the changes it
    /// made, and the standings after it, in one transaction. Refused with
    /// [`StoreError::UnknownGame`] unless the game is rated and not yet applied, and with
    /// [`StoreError::RatingsMoved`] unless exactly `after` games were applied before it:
    /// the record was computed from the standings after those, and another server
    /// sharing the store may have applied one since.
    fn record_rating(&self, record: &RatingRecord, after: u64) -> Result<(), StoreError>;

    /// Replaces every applied game, change and standing with `records` applied in order
    /// (a rebuild), in one transaction, settling the rebuilds owed up to mark `settled`
    /// (what [`Store::ratings_owed`] said before the rebuild read the games).
    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError>;

    /// The latest mark of a rebuild the ratings owe (0 when none): an [`Append::Rejudge`]
    /// of a rated game leaves one, in the transaction that changes the result.
    fn ratings_owed(&self) -> Result<i64, StoreError>;

    /// A player's standings, one per pool played (in [`RatingRow::pool`] order).
    fn player_ratings(&self, player: &str) -> Result<Vec<RatingRow>, StoreError>;

    /// A player's latest rating changes, at most `limit`, oldest first.
    fn rating_history(&self, player: &str, limit: u32) -> Result<Vec<RatingChangeRow>, StoreError>;

    /// A pool's standings, highest rating first (then player id), at most `limit`.
    fn leaderboard(&self, pool: &str, limit: u32) -> Result<Vec<RatingRow>, StoreError>;

    /// The name to show for a player: their account's display name, else the name they
    /// had in their latest game; None for an id that is neither.
    fn player_name(&self, player: &str) -> Result<Option<String>, StoreError>;

    /// Saves a review under its (fresh) id.
    fn save_review(&self, review: &ReviewRecord) -> Result<(), StoreError>;

    /// One review, if it exists.
    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError>;

    /// How many reviews `owner` has saved (each user's are bounded).
    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError>;
}
