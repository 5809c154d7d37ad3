//! The SQLite side of [`PlanStore`], and the rows the log's batches write.

use rusqlite::{Transaction, params};

use super::DbErr;
use super::SqliteStore;
use crate::store::{PlanStore, StoreError};

/// Keeps (or with `None` drops) a player's plan, in a log batch's transaction.
pub(super) fn set_plan(
    tx: &Transaction<'_>,
    game_id: &str,
    color: &str,
    plan: Option<&str>,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    match plan {
        Some(plan) => tx
            .prepare_cached(
                "INSERT INTO plans (game_id, color, plan) VALUES (?1, ?2, ?3)
                 ON CONFLICT (game_id, color) DO UPDATE SET plan = excluded.plan",
            )
            .map_err(db)?
            .execute(params![game_id, color, plan]),
        None => tx
            .prepare_cached("DELETE FROM plans WHERE game_id = ?1 AND color = ?2")
            .map_err(db)?
            .execute(params![game_id, color]),
    }
    .map_err(db)?;
    Ok(())
}

impl PlanStore for SqliteStore {
    fn plans(&self, game_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached("SELECT color, plan FROM plans WHERE game_id = ?1 ORDER BY color")
            .map_err(&db)?;
        let rows = stmt
            .query_map([game_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }
}
