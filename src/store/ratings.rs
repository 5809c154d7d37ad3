//! The SQLite side of ratings: which games are rated and the order their ratings were
//! applied in (`rated_games`), the change each made (`rating_changes`), and every
//! player's standings (`ratings`). Plain rows: the rating service computes them, this
//! file only writes and reads them.

use rusqlite::{Connection, OptionalExtension, Row};

use super::{GameRecord, StoreError};

/// The rated games, as [`super::Store::rated_games`] gives them.
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

/// Marks a game rated (in its creating batch).
pub(super) fn mark_rated(
    tx: &Connection,
    game_id: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    let exists = tx
        .prepare_cached("SELECT 1 FROM games WHERE id = ?1")
        .map_err(db)?
        .query_row([game_id], |_| Ok(()))
        .optional()
        .map_err(db)?
        .is_some();
    if !exists {
        return Err(StoreError::UnknownGame {
            game_id: game_id.to_owned(),
        });
    }
    tx.prepare_cached("INSERT INTO rated_games (game_id) VALUES (?1) ON CONFLICT DO NOTHING")
        .map_err(db)?
        .execute([game_id])
        .map_err(db)?;
    Ok(())
}

/// Writes one game's record as the next applied.
pub(super) fn record(
    tx: &Connection,
    record: &RatingRecord,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    let updated = tx
        .prepare_cached(
            "UPDATE rated_games
             SET applied = (SELECT coalesce(max(applied), 0) + 1 FROM rated_games)
             WHERE game_id = ?1 AND applied IS NULL",
        )
        .map_err(db)?
        .execute([&record.game_id])
        .map_err(db)?;
    if updated == 0 {
        return Err(StoreError::UnknownGame {
            game_id: record.game_id.clone(),
        });
    }
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO rating_changes (game_id, pool, color, player, opponent, at_ms,
                 rating_before, deviation_before, volatility_before, rating, deviation, volatility)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(db)?;
    for c in &record.changes {
        insert
            .execute(rusqlite::params![
                c.game_id,
                c.pool,
                c.color,
                c.player,
                c.opponent,
                c.at_ms,
                c.before[0],
                c.before[1],
                c.before[2],
                c.after[0],
                c.after[1],
                c.after[2],
            ])
            .map_err(db)?;
    }
    let mut upsert = tx
        .prepare_cached(
            "INSERT INTO ratings (player, pool, rating, deviation, volatility, games, won, lost,
                 last_game_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (player, pool) DO UPDATE SET rating = ?3, deviation = ?4,
                 volatility = ?5, games = ?6, won = ?7, lost = ?8, last_game_ms = ?9",
        )
        .map_err(db)?;
    for s in &record.standings {
        upsert
            .execute(rusqlite::params![
                s.player,
                s.pool,
                s.rating,
                s.deviation,
                s.volatility,
                s.games,
                s.won,
                s.lost,
                s.last_game_ms,
            ])
            .map_err(db)?;
    }
    Ok(())
}

/// Forgets every applied game, change and standing (the first step of a rebuild).
pub(super) fn clear(
    tx: &Connection,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    tx.execute_batch(
        "DELETE FROM rating_changes; DELETE FROM ratings; UPDATE rated_games SET applied = NULL;",
    )
    .map_err(db)
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

const RATING_COLUMNS: &str =
    "player, pool, rating, deviation, volatility, games, won, lost, last_game_ms";

fn rating_row(row: &Row<'_>) -> rusqlite::Result<RatingRow> {
    Ok(RatingRow {
        player: row.get(0)?,
        pool: row.get(1)?,
        rating: row.get(2)?,
        deviation: row.get(3)?,
        volatility: row.get(4)?,
        games: row.get(5)?,
        won: row.get(6)?,
        lost: row.get(7)?,
        last_game_ms: row.get(8)?,
    })
}

pub(super) fn player_ratings(
    conn: &Connection,
    player: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!("SELECT {RATING_COLUMNS} FROM ratings WHERE player = ?1 ORDER BY pool");
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt.query_map([player], rating_row).map_err(db)?;
    rows.map(|r| r.map_err(db)).collect()
}

pub(super) fn leaderboard(
    conn: &Connection,
    pool: &str,
    limit: u32,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!(
        "SELECT {RATING_COLUMNS} FROM ratings WHERE pool = ?1
         ORDER BY rating DESC, player LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(rusqlite::params![pool, limit], rating_row)
        .map_err(db)?;
    rows.map(|r| r.map_err(db)).collect()
}

pub(super) fn rating_history(
    conn: &Connection,
    player: &str,
    limit: u32,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Vec<RatingChangeRow>, StoreError> {
    // The latest `limit` by order of application, returned oldest first.
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.game_id, c.pool, c.color, c.player, c.opponent, c.at_ms,
                    c.rating_before, c.deviation_before, c.volatility_before,
                    c.rating, c.deviation, c.volatility
             FROM rating_changes c JOIN rated_games r ON r.game_id = c.game_id
             WHERE c.player = ?1 ORDER BY r.applied DESC, c.pool LIMIT ?2",
        )
        .map_err(db)?;
    let rows = stmt
        .query_map(rusqlite::params![player, limit], |row| {
            Ok(RatingChangeRow {
                game_id: row.get(0)?,
                pool: row.get(1)?,
                color: row.get(2)?,
                player: row.get(3)?,
                opponent: row.get(4)?,
                at_ms: row.get(5)?,
                before: [row.get(6)?, row.get(7)?, row.get(8)?],
                after: [row.get(9)?, row.get(10)?, row.get(11)?],
            })
        })
        .map_err(db)?;
    let mut history = rows.map(|r| r.map_err(db)).collect::<Result<Vec<_>, _>>()?;
    history.reverse();
    Ok(history)
}

pub(super) fn player_name(
    conn: &Connection,
    player: &str,
    db: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<Option<String>, StoreError> {
    conn.prepare_cached(
        "SELECT CASE WHEN black = ?1 THEN black_name ELSE white_name END FROM games
         WHERE black = ?1 OR white = ?1 ORDER BY created_at_ms DESC, id DESC LIMIT 1",
    )
    .map_err(db)?
    .query_row([player], |row| row.get(0))
    .optional()
    .map_err(db)
}
