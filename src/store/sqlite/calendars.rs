//! The SQLite side of [`CalendarStore`].

use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use crate::store::{CalendarRow, CalendarStore, StoreError};

impl CalendarStore for SqliteStore {
    fn calendar(&self, user_id: &str) -> Result<Option<CalendarRow>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached("SELECT time_zone, weekend FROM calendars WHERE user_id = ?1")
            .map_err(&db)?
            .query_row([user_id], |row| {
                Ok(CalendarRow {
                    time_zone: row.get(0)?,
                    weekend: row.get(1)?,
                })
            })
            .optional()
            .map_err(&db)
    }

    fn put_calendar(&self, user_id: &str, row: &CalendarRow) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "INSERT INTO calendars (user_id, time_zone, weekend) VALUES (?1, ?2, ?3)
             ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone,
                 weekend = excluded.weekend",
        )
        .map_err(&db)?
        .execute(params![user_id, row.time_zone, row.weekend])
        .map_err(&db)?;
        Ok(())
    }
}
