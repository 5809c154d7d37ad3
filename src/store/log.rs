//! The durable event log's write side: every change to a game is an [`Append`] in an
//! atomic batch, which the room commits (through the [`StoreWriter`](super::StoreWriter))
//! *before* it acknowledges or broadcasts anything.

use super::{EventRecord, GameRecord, KibitzRecord, StoreError};

/// One change in an atomic batch given to [`EventLog::append`].
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
    /// is owed to the ratings ([`RatingStore::rated_games`](super::RatingStore::rated_games)).
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
    /// A player's plan of conditional moves in a correspondence game
    /// ([`PlanStore`](super::PlanStore)): kept as JSON text, or dropped (`None`). In the
    /// batch of the move it follows, when there is one.
    Plan {
        /// The game.
        game_id: String,
        /// `black` or `white`.
        color: String,
        /// The plan, or None to drop it.
        plan: Option<String>,
    },
    /// A correspondence game's next deadline in the deadline index
    /// ([`DeadlineStore`](super::DeadlineStore)), in calendar Unix ms: in the batch that
    /// moves it, so the index is never behind the log. `Finish` takes the row away.
    Deadline {
        /// The correspondence game.
        game_id: String,
        /// When it must next be woken.
        due_ms: i64,
        /// What a list of the player's games shows of it meanwhile, as JSON text the
        /// store does not read ([`DeadlineStore::desk`](super::DeadlineStore::desk)).
        summary: Option<String>,
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
            | Append::Fence { game_id, .. }
            | Append::Deadline { game_id, .. }
            | Append::Plan { game_id, .. } => game_id,
        }
    }
}

/// What is left to do before a batch written by [`EventLog::append_unsynced`] is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Nothing: it was durable (to the store's sync mode) when the write returned.
    Durable,
    /// A [`EventLog::sync_log`] that starts after the write returned.
    AfterSyncLog,
}

/// Writes to the event log: what the [`StoreWriter`](super::StoreWriter) needs, and all
/// it needs, so a test can stand in for a store by implementing this trait alone.
pub trait EventLog: Send + Sync + 'static {
    /// Creates a game; [`StoreError::DuplicateGame`] if its id is taken.
    fn create_game(&self, game: &GameRecord) -> Result<(), StoreError> {
        self.append(&[Append::Create(game.clone())])
    }

    /// Writes the whole batch in one transaction, in order, or nothing of it.
    ///
    /// Later items see earlier ones, so a batch may create a game and append its first
    /// events. Once this returns `Ok` the batch is durable to the degree the backend's
    /// sync mode promises.
    fn append(&self, batch: &[Append]) -> Result<(), StoreError>;

    /// Writes the batch as [`EventLog::append`] does, but may return before it is durable,
    /// saying so: the [`StoreWriter`](super::StoreWriter) then makes the whole group
    /// durable with one [`EventLog::sync_log`] before it answers, however many
    /// transactions isolating a refused request took.
    ///
    /// The default is `append`, durable on return: a store (or a wrapper around one)
    /// that does not split the flush from the write keeps its guarantee without doing
    /// anything.
    fn append_unsynced(&self, batch: &[Append]) -> Result<Durability, StoreError> {
        self.append(batch).map(|()| Durability::Durable)
    }

    /// Makes durable every batch that [`EventLog::append_unsynced`] wrote before this call
    /// started and answered [`Durability::AfterSyncLog`]. Required, so that a wrapper
    /// which forwards `append_unsynced` cannot forget to forward this too.
    fn sync_log(&self) -> Result<(), StoreError>;

    /// Copies into the database proper the events the store keeps beside it (SQLite's
    /// move log), so that another opener of the file sees every one. The writer calls
    /// it when it stops. The default has nothing beside the database to copy.
    fn fold_log(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Proves the store can take a write right now without changing anything, for the
    /// readiness probe: a read-only file, a full lock or a lost connection fails it.
    fn check_writable(&self) -> Result<(), StoreError>;
}
