//! The SQLite side of [`VacationStore`]: a change is one immediate transaction.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::SqliteStore;
use crate::store::{StoreError, VacationChange, VacationRow, VacationStore};

const COLUMNS: &str = "balance_ms, as_of_ms, away_since_ms, warned, paid_until_ms";

fn vacation(row: &Row, at: usize) -> rusqlite::Result<VacationRow> {
    Ok(VacationRow {
        balance_ms: row.get(at)?,
        as_of_ms: row.get(at + 1)?,
        away_since_ms: row.get(at + 2)?,
        warned: row.get(at + 3)?,
        paid_until_ms: row.get(at + 4)?,
    })
}

impl SqliteStore {
    fn read_vacation(
        &self,
        conn: &Connection,
        user_id: &str,
    ) -> Result<Option<VacationRow>, StoreError> {
        let db = self.db_err();
        conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM vacations WHERE user_id = ?1"
        ))
        .map_err(&db)?
        .query_row([user_id], |row| vacation(row, 0))
        .optional()
        .map_err(&db)
    }

    fn put_vacation(
        &self,
        tx: &Transaction<'_>,
        user_id: &str,
        v: &VacationRow,
    ) -> Result<(), StoreError> {
        let db = self.db_err();
        tx.prepare_cached(&format!(
            "INSERT INTO vacations (user_id, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (user_id) DO UPDATE SET balance_ms = excluded.balance_ms,
                 as_of_ms = excluded.as_of_ms, away_since_ms = excluded.away_since_ms,
                 warned = excluded.warned, paid_until_ms = excluded.paid_until_ms"
        ))
        .map_err(&db)?
        .execute(params![
            user_id,
            v.balance_ms,
            v.as_of_ms,
            v.away_since_ms,
            v.warned,
            v.paid_until_ms
        ])
        .map_err(&db)?;
        Ok(())
    }
}

impl VacationStore for SqliteStore {
    fn vacation(&self, user_id: &str) -> Result<Option<VacationRow>, StoreError> {
        self.read_vacation(&*self.lock()?, user_id)
    }

    fn change_vacation(
        &self,
        user_id: &str,
        change: VacationChange,
    ) -> Result<(Option<VacationRow>, VacationRow), StoreError> {
        self.in_transaction(|tx| {
            let before = self.read_vacation(tx, user_id)?;
            let after = change(before);
            self.put_vacation(tx, user_id, &after)?;
            Ok((before, after))
        })
    }

    fn away_accounts(&self) -> Result<Vec<(String, VacationRow)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT user_id, {COLUMNS} FROM vacations
                 WHERE away_since_ms IS NOT NULL ORDER BY user_id"
            ))
            .map_err(&db)?;
        let rows = stmt
            .query_map([], |row| Ok((row.get(0)?, vacation(row, 1)?)))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }
}
