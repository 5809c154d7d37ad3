//! Ratings in PostgreSQL: which games are rated and the order their ratings were applied
//! in, the change each made, and every player's standings. Writes take one lock, so two
//! nodes never number an application the same.

use tokio_postgres::{Client, Row, Transaction};

use super::games::{query_games, snapshot};
use super::{PgStore, bad_row, bigint, col, pg_error};
use crate::store::ratings::rated_games_sql;
use crate::store::{
    GAME_COLUMNS, RatedGames, RatingChangeRow, RatingRecord, RatingRow, RatingStore, StoreError,
};

/// Held by every write of ratings until its transaction ends.
const RATINGS_LOCK: i64 = 0x5447_454E + 1;

const RATING_COLUMNS: &str =
    "player, pool, rating, deviation, volatility, games, won, lost, last_game_ms";

async fn rated_games(client: &mut Client) -> Result<RatedGames, StoreError> {
    let tx = snapshot(client).await?;
    let (applied, pending) = rated_games_sql(GAME_COLUMNS);
    let games = RatedGames {
        applied: query_games(&tx, &applied, &[]).await?,
        pending: query_games(&tx, &pending, &[]).await?,
    };
    tx.commit().await.map_err(pg_error)?;
    Ok(games)
}

/// Records `records` in order in one transaction, the first made after `after` applied
/// games; with `settled`, first forgets every applied game, change and standing and the
/// rebuilds owed up to that mark (a rebuild).
async fn record(
    client: &mut Client,
    records: Vec<RatingRecord>,
    settled: Option<i64>,
    after: u64,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&RATINGS_LOCK])
        .await
        .map_err(pg_error)?;
    if let Some(settled) = settled {
        tx.batch_execute(
            "DELETE FROM rating_changes; DELETE FROM ratings; UPDATE rated_games SET applied = NULL;",
        )
        .await
        .map_err(pg_error)?;
        tx.execute("DELETE FROM ratings_owed WHERE id <= $1", &[&settled])
            .await
            .map_err(pg_error)?;
    }
    for (after, record) in (after..).zip(&records) {
        record_one(&tx, record, after).await?;
    }
    tx.commit().await.map_err(pg_error)
}

/// One record, placed after `after` applied games (the transaction holds the ratings'
/// lock, so the count cannot change under it).
async fn record_one(
    tx: &Transaction<'_>,
    record: &RatingRecord,
    after: u64,
) -> Result<(), StoreError> {
    let applied = tx
        .query_one("SELECT coalesce(max(applied), 0) FROM rated_games", &[])
        .await
        .map_err(pg_error)?;
    let applied = col::<i64>(&applied, 0)?.unsigned_abs();
    let updated = tx
        .execute(
            "UPDATE rated_games SET applied = $2
             WHERE game_id = $1 AND applied IS NULL AND $3",
            &[&record.game_id, &bigint(after + 1), &(applied == after)],
        )
        .await
        .map_err(pg_error)?;
    if updated == 0 {
        let pending = tx
            .query_opt(
                "SELECT 1 FROM rated_games WHERE game_id = $1 AND applied IS NULL",
                &[&record.game_id],
            )
            .await
            .map_err(pg_error)?;
        return Err(match pending {
            None => StoreError::UnknownGame {
                game_id: record.game_id.clone(),
            },
            Some(_) => StoreError::RatingsMoved { applied, after },
        });
    }
    for c in &record.changes {
        tx.execute(
            "INSERT INTO rating_changes (game_id, pool, color, player, opponent, at_ms,
                 rating_before, deviation_before, volatility_before, rating, deviation, volatility)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &c.game_id,
                &c.pool,
                &c.color,
                &c.player,
                &c.opponent,
                &c.at_ms,
                &c.before[0],
                &c.before[1],
                &c.before[2],
                &c.after[0],
                &c.after[1],
                &c.after[2],
            ],
        )
        .await
        .map_err(pg_error)?;
    }
    for s in &record.standings {
        let (games, won, lost) = (i64::from(s.games), i64::from(s.won), i64::from(s.lost));
        tx.execute(
            "INSERT INTO ratings (player, pool, rating, deviation, volatility, games, won, lost,
                 last_game_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (player, pool) DO UPDATE SET rating = EXCLUDED.rating,
                 deviation = EXCLUDED.deviation, volatility = EXCLUDED.volatility,
                 games = EXCLUDED.games, won = EXCLUDED.won, lost = EXCLUDED.lost,
                 last_game_ms = EXCLUDED.last_game_ms",
            &[
                &s.player,
                &s.pool,
                &s.rating,
                &s.deviation,
                &s.volatility,
                &games,
                &won,
                &lost,
                &s.last_game_ms,
            ],
        )
        .await
        .map_err(pg_error)?;
    }
    Ok(())
}

async fn owed(client: &mut Client) -> Result<i64, StoreError> {
    let row = client
        .query_one("SELECT coalesce(max(id), 0) FROM ratings_owed", &[])
        .await
        .map_err(pg_error)?;
    col(&row, 0)
}

fn count(row: &Row, index: usize) -> Result<u32, StoreError> {
    let n: i64 = col(row, index)?;
    u32::try_from(n).map_err(|_| bad_row(format!("a standing counts {n} games")))
}

fn rating_row(row: &Row) -> Result<RatingRow, StoreError> {
    Ok(RatingRow {
        player: col(row, 0)?,
        pool: col(row, 1)?,
        rating: col(row, 2)?,
        deviation: col(row, 3)?,
        volatility: col(row, 4)?,
        games: count(row, 5)?,
        won: count(row, 6)?,
        lost: count(row, 7)?,
        last_game_ms: col(row, 8)?,
    })
}

async fn player_ratings(client: &mut Client, player: String) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!("SELECT {RATING_COLUMNS} FROM ratings WHERE player = $1 ORDER BY pool");
    let rows = client.query(&sql, &[&player]).await.map_err(pg_error)?;
    rows.iter().map(rating_row).collect()
}

async fn leaderboard(
    client: &mut Client,
    pool: String,
    limit: u32,
) -> Result<Vec<RatingRow>, StoreError> {
    let sql = format!(
        "SELECT {RATING_COLUMNS} FROM ratings WHERE pool = $1
         ORDER BY rating DESC, player LIMIT $2"
    );
    let rows = client
        .query(&sql, &[&pool, &i64::from(limit)])
        .await
        .map_err(pg_error)?;
    rows.iter().map(rating_row).collect()
}

async fn rating_history(
    client: &mut Client,
    player: String,
    limit: u32,
) -> Result<Vec<RatingChangeRow>, StoreError> {
    // The latest `limit` by order of application, returned oldest first.
    let rows = client
        .query(
            "SELECT c.game_id, c.pool, c.color, c.player, c.opponent, c.at_ms,
                    c.rating_before, c.deviation_before, c.volatility_before,
                    c.rating, c.deviation, c.volatility
             FROM rating_changes c JOIN rated_games r ON r.game_id = c.game_id
             WHERE c.player = $1 ORDER BY r.applied DESC, c.pool LIMIT $2",
            &[&player, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    let mut history = rows
        .iter()
        .map(|row| {
            Ok(RatingChangeRow {
                game_id: col(row, 0)?,
                pool: col(row, 1)?,
                color: col(row, 2)?,
                player: col(row, 3)?,
                opponent: col(row, 4)?,
                at_ms: col(row, 5)?,
                before: [col(row, 6)?, col(row, 7)?, col(row, 8)?],
                after: [col(row, 9)?, col(row, 10)?, col(row, 11)?],
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    history.reverse();
    Ok(history)
}

async fn player_name(client: &mut Client, player: String) -> Result<Option<String>, StoreError> {
    let row = client
        .query_one(
            "SELECT COALESCE(
                 (SELECT display_name FROM users WHERE id = $1),
                 (SELECT CASE WHEN black = $1 THEN black_name ELSE white_name END FROM games
                  WHERE black = $1 OR white = $1 ORDER BY created_at_ms DESC, id DESC LIMIT 1))",
            &[&player],
        )
        .await
        .map_err(pg_error)?;
    col(&row, 0)
}

impl RatingStore for PgStore {
    fn rated_games(&self) -> Result<RatedGames, StoreError> {
        self.connections.run(|c| Box::pin(self::rated_games(c)))
    }

    fn record_rating(&self, record: &RatingRecord, after: u64) -> Result<(), StoreError> {
        let records = vec![record.clone()];
        self.connections
            .run(move |c| Box::pin(self::record(c, records, None, after)))
    }

    fn replace_ratings(&self, records: &[RatingRecord], settled: i64) -> Result<(), StoreError> {
        let records = records.to_vec();
        self.connections
            .run(move |c| Box::pin(self::record(c, records, Some(settled), 0)))
    }

    fn ratings_owed(&self) -> Result<i64, StoreError> {
        self.connections.run(|c| Box::pin(self::owed(c)))
    }

    fn player_ratings(&self, player: &str) -> Result<Vec<RatingRow>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(self::player_ratings(c, player)))
    }

    fn rating_history(&self, player: &str, limit: u32) -> Result<Vec<RatingChangeRow>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(self::rating_history(c, player, limit)))
    }

    fn leaderboard(&self, pool: &str, limit: u32) -> Result<Vec<RatingRow>, StoreError> {
        let pool = pool.to_owned();
        self.connections
            .run(move |c| Box::pin(self::leaderboard(c, pool, limit)))
    }

    fn player_name(&self, player: &str) -> Result<Option<String>, StoreError> {
        let player = player.to_owned();
        self.connections
            .run(move |c| Box::pin(self::player_name(c, player)))
    }
}
