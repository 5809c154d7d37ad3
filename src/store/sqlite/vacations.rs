//! The SQLite side of [`VacationStore`], and the day a log batch takes off a balance.

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::DbErr;
use super::SqliteStore;
use crate::store::{StoreError, VacationRow, VacationStore};

fn vacation(row: &Row, at: usize) -> rusqlite::Result<VacationRow> {
    Ok(VacationRow {
        balance_ms: row.get(at)?,
        as_of_ms: row.get(at + 1)?,
        away_since_ms: row.get(at + 2)?,
        warned: row.get(at + 3)?,
    })
}

/// Takes `ms` off `user_id`'s balance, in a log batch's transaction (the room read the
/// row, so it exists).
pub(super) fn spend(
    tx: &Transaction<'_>,
    user_id: &str,
    ms: i64,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    tx.prepare_cached("UPDATE vacations SET balance_ms = balance_ms - ?2 WHERE user_id = ?1")
        .map_err(db)?
        .execute(params![user_id, ms])
        .map_err(db)?;
    Ok(())
}

impl VacationStore for SqliteStore {
    fn vacation(&self, user_id: &str) -> Result<Option<VacationRow>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "SELECT balance_ms, as_of_ms, away_since_ms, warned FROM vacations WHERE user_id = ?1",
        )
        .map_err(&db)?
        .query_row([user_id], |row| vacation(row, 0))
        .optional()
        .map_err(&db)
    }

    fn put_vacation(&self, user_id: &str, v: &VacationRow) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "INSERT INTO vacations (user_id, balance_ms, as_of_ms, away_since_ms, warned)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (user_id) DO UPDATE SET balance_ms = excluded.balance_ms,
                 as_of_ms = excluded.as_of_ms, away_since_ms = excluded.away_since_ms,
                 warned = excluded.warned",
        )
        .map_err(&db)?
        .execute(params![
            user_id,
            v.balance_ms,
            v.as_of_ms,
            v.away_since_ms,
            v.warned
        ])
        .map_err(&db)?;
        Ok(())
    }

    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT user_id, balance_ms, as_of_ms, away_since_ms, warned FROM vacations
                 WHERE away_since_ms IS NOT NULL ORDER BY user_id",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map([], |row| Ok((row.get(0)?, vacation(row, 1)?)))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }
}
