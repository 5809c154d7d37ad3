//! The SQLite side of [`DeadlineStore`], and the rows the log's batches write.

use rusqlite::{OptionalExtension, Transaction, params};

use super::DbErr;
use super::SqliteStore;
use crate::store::{DeadlineStore, StoreError};

/// Sets `game_id`'s deadline in the index, in a log batch's transaction.
pub(super) fn set_deadline(
    tx: &Transaction<'_>,
    game_id: &str,
    due_ms: i64,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO correspondence_deadlines (game_id, due_ms) VALUES (?1, ?2)
         ON CONFLICT (game_id) DO UPDATE SET due_ms = excluded.due_ms",
    )
    .map_err(db)?
    .execute(params![game_id, due_ms])
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
}
