//! Ratings in the store (docs/RATINGS.md): which games are rated and the order their
//! ratings were applied in, the change each made, and every player's standings. The
//! store keeps what the rating service derived from results; it never computes a rating
//! itself.

use super::{GameRecord, StoreError};

/// The rated games, as [`RatingStore::rated_games`] gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RatedGames {
    /// Already applied, in their order of application.
    pub applied: Vec<GameRecord>,
    /// Finished but not yet applied (a crash came between), by when they ended.
    pub pending: Vec<GameRecord>,
}

/// One player's standing in one pool.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingRow {
    pub player: String,
    /// `overall`, `9x9`, `13x13` or `19x19`.
    pub pool: String,
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    pub games: u32,
    pub won: u32,
    pub lost: u32,
    pub last_game_ms: Option<i64>,
}

/// What one game did to one player's rating in one pool.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingChangeRow {
    pub game_id: String,
    pub pool: String,
    /// `black` or `white`.
    pub color: String,
    pub player: String,
    pub opponent: String,
    /// When the game ended.
    pub at_ms: i64,
    /// Rating, deviation and volatility before the game (before growth for time away).
    pub before: [f64; 3],
    /// Rating, deviation and volatility after it.
    pub after: [f64; 3],
}

/// Everything applying one rated game writes.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingRecord {
    pub game_id: String,
    /// Empty when the result rates nothing (a void game).
    pub changes: Vec<RatingChangeRow>,
    /// Both players' standings after the game, in the pools it changed.
    pub standings: Vec<RatingRow>,
}

/// The `SELECT` of rated games' rows, given the game columns.
pub(super) fn rated_games_sql(columns: &str) -> (String, String) {
    let prefixed: Vec<String> = columns
        .split(',')
        .map(|c| format!("g.{}", c.trim()))
        .collect();
    let columns = prefixed.join(", ");
    (
        format!(
            "SELECT {columns} FROM rated_games r JOIN games g ON g.id = r.game_id
             WHERE r.applied IS NOT NULL ORDER BY r.applied"
        ),
        format!(
            "SELECT {columns} FROM rated_games r JOIN games g ON g.id = r.game_id
             WHERE r.applied IS NULL AND g.status = 'finished' ORDER BY g.ended_at_ms, g.id"
        ),
    )
}

/// The rating service's rows: rated games in their order of application, the changes
/// each made, and the standings after them.
pub trait RatingStore {
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
    /// (what [`RatingStore::ratings_owed`] said before the rebuild read the games).
    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError>;

    /// The latest mark of a rebuild the ratings owe (0 when none): an
    /// [`Append::Rejudge`](super::Append::Rejudge) of a rated game leaves one, in the
    /// transaction that changes the result.
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
}
