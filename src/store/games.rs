//! Games and their numbered events as readers see them: a game's row, its events, the
//! game list, and every live game for a restart. Writing them is [`EventLog`]'s.
//!
//! [`EventLog`]: super::EventLog

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::StoreError;

/// The columns of [`GameRecord`] but its last, the move count, in the order both backends
/// read them back: a macro, so that the whole list below is one literal too.
macro_rules! game_columns_before_count {
    () => {
        "id, created_at_ms, settings, black, white, black_name, white_name, status, result, \
         ended_at_ms"
    };
}
pub(super) use game_columns_before_count;

/// The columns of [`GameRecord`] in the order both backends read them back.
pub(super) const GAME_COLUMNS: &str = concat!(game_columns_before_count!(), ", move_count");

/// Where a game stands, so restart recovery can pick out the games still being played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Moves played so far, as last set by the caller (see [`Append::MoveCount`](super::Append::MoveCount)).
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

/// Reads of games and their events.
///
/// Synchronous like every store trait: callers on the async side use `spawn_blocking`.
pub trait GameStore {
    /// Every live game with all its events in `seq` order, oldest game first, so a
    /// restarted server can rebuild its rooms; not the correspondence games in the
    /// deadline index, which sleep until they are due or asked for.
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
}
