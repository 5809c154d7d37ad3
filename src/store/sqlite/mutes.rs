//! The SQLite side of [`MuteStore`].

use rusqlite::params;

use super::SqliteStore;
use crate::store::{MuteStore, StoreError};

impl MuteStore for SqliteStore {
    fn set_mute(&self, muter: &str, muted: &str, on: bool, at_ms: i64) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        match on {
            true => conn
                .prepare_cached(
                    "INSERT INTO mutes (muter, muted, at_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT DO NOTHING",
                )
                .map_err(&db)?
                .execute(params![muter, muted, at_ms]),
            false => conn
                .prepare_cached("DELETE FROM mutes WHERE muter = ?1 AND muted = ?2")
                .map_err(&db)?
                .execute(params![muter, muted]),
        }
        .map_err(&db)?;
        Ok(())
    }

    fn mutes(&self) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached("SELECT muter, muted FROM mutes ORDER BY muter, muted")
            .map_err(&db)?;
        let rows = stmt
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }
}
