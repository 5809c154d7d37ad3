//! The SQLite side of [`DeadlineStore`], and the rows the log's batches write.

use rusqlite::{OptionalExtension, Transaction, params};

use super::DbErr;
use super::SqliteStore;
use crate::store::{DeadlineStore, DeskRow, StoreError};

/// Sets `game_id`'s deadline and summary in the index, in a log batch's transaction.
pub(super) fn set_deadline(
    tx: &Transaction<'_>,
    game_id: &str,
    due_ms: i64,
    summary: Option<&str>,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO correspondence_deadlines (game_id, due_ms, summary) VALUES (?1, ?2, ?3)
         ON CONFLICT (game_id) DO UPDATE SET due_ms = excluded.due_ms,
             summary = excluded.summary",
    )
    .map_err(db)?
    .execute(params![game_id, due_ms, summary])
    .map_err(db)?;
    Ok(())
}

/// Takes a finished game out of the index.
pub(super) fn clear_deadline(
    tx: &Transaction<'_>,
    game_id: &str,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    tx.prepare_cached("DELETE FROM correspondence_deadlines WHERE game_id = ?1")
        .map_err(db)?
        .execute([game_id])
        .map_err(db)?;
    Ok(())
}

impl DeadlineStore for SqliteStore {
    fn due_games(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT game_id FROM correspondence_deadlines WHERE due_ms <= ?1
                 ORDER BY due_ms, game_id LIMIT ?2",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(params![now_ms, limit], |row| row.get(0))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn next_deadline(&self, now_ms: i64) -> Result<Option<i64>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "SELECT due_ms FROM correspondence_deadlines WHERE due_ms > ?1
             ORDER BY due_ms LIMIT 1",
        )
        .map_err(&db)?
        .query_row([now_ms], |row| row.get(0))
        .optional()
        .map_err(&db)
    }

    fn desk(&self, player: &str, limit: u32) -> Result<Vec<DeskRow>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT d.game_id, d.summary, EXISTS (SELECT 1 FROM plans p
                     WHERE p.game_id = d.game_id
                     AND p.color = CASE WHEN g.black = ?1 THEN 'black' ELSE 'white' END)
                 FROM games g JOIN correspondence_deadlines d ON d.game_id = g.id
                 WHERE (g.black = ?1 OR g.white = ?1) AND g.status = 'live'
                 ORDER BY g.created_at_ms DESC, g.id DESC LIMIT ?2",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(params![player, limit], |row| {
                Ok(DeskRow {
                    game_id: row.get(0)?,
                    summary: row.get(1)?,
                    planned: row.get(2)?,
                })
            })
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }
}
