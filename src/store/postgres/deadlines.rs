//! The PostgreSQL side of [`DeadlineStore`], and the rows the log's batches write.

use tokio_postgres::Client;

use super::prepared::Prepared;
use super::{PgStore, col, pg_error};
use crate::store::{DeadlineStore, DeskRow, StoreError};

/// Sets `game_id`'s deadline and summary in the index, in a log batch's transaction.
pub(super) async fn set_deadline(
    b: &mut Prepared<'_>,
    game_id: &str,
    due_ms: i64,
    summary: Option<&str>,
) -> Result<(), StoreError> {
    b.execute(
        "INSERT INTO correspondence_deadlines (game_id, due_ms, summary) VALUES ($1, $2, $3)
         ON CONFLICT (game_id) DO UPDATE SET due_ms = excluded.due_ms,
             summary = excluded.summary",
        &[&game_id, &due_ms, &summary],
    )
    .await?;
    Ok(())
}

/// Takes a finished game out of the index.
pub(super) async fn clear_deadline(b: &mut Prepared<'_>, game_id: &str) -> Result<(), StoreError> {
    b.execute(
        "DELETE FROM correspondence_deadlines WHERE game_id = $1",
        &[&game_id],
    )
    .await?;
    Ok(())
}

async fn due_games(c: &mut Client, now_ms: i64, limit: i64) -> Result<Vec<String>, StoreError> {
    c.query(
        "SELECT game_id FROM correspondence_deadlines WHERE due_ms <= $1
         ORDER BY due_ms, game_id LIMIT $2",
        &[&now_ms, &limit],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| col::<String>(row, 0))
    .collect()
}

async fn next_deadline(c: &mut Client, now_ms: i64) -> Result<Option<i64>, StoreError> {
    let row = c
        .query_opt(
            "SELECT due_ms FROM correspondence_deadlines WHERE due_ms > $1
             ORDER BY due_ms LIMIT 1",
            &[&now_ms],
        )
        .await
        .map_err(pg_error)?;
    row.map(|row| col::<i64>(&row, 0)).transpose()
}

async fn desk(c: &mut Client, player: String, limit: i64) -> Result<Vec<DeskRow>, StoreError> {
    c.query(
        "SELECT d.game_id, d.summary, EXISTS (SELECT 1 FROM plans p
             WHERE p.game_id = d.game_id
             AND p.color = CASE WHEN g.black = $1 THEN 'black' ELSE 'white' END)
         FROM games g JOIN correspondence_deadlines d ON d.game_id = g.id
         WHERE (g.black = $1 OR g.white = $1) AND g.status = 'live'
         ORDER BY g.created_at_ms DESC, g.id DESC LIMIT $2",
        &[&player, &limit],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| {
        Ok(DeskRow {
            game_id: col(row, 0)?,
            summary: col(row, 1)?,
            planned: col(row, 2)?,
        })
    })
    .collect()
}

impl DeadlineStore for PgStore {
    fn due_games(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        let limit = i64::from(limit);
        self.connections
            .run(move |c| Box::pin(due_games(c, now_ms, limit)))
    }

    fn next_deadline(&self, now_ms: i64) -> Result<Option<i64>, StoreError> {
        self.connections
            .run(move |c| Box::pin(next_deadline(c, now_ms)))
    }

    fn desk(&self, player: &str, limit: u32) -> Result<Vec<DeskRow>, StoreError> {
        let (player, limit) = (player.to_owned(), i64::from(limit));
        self.connections
            .run(move |c| Box::pin(desk(c, player, limit)))
    }
}
