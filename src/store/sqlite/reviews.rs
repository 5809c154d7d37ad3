//! The SQLite store's [`ReviewStore`]: saved analysis boards, one row each.

use super::SqliteStore;
use crate::store::{ReviewRecord, ReviewStore, StoreError};

impl ReviewStore for SqliteStore {
    fn save_review(&self, r: &ReviewRecord) -> Result<(), StoreError> {
        let conn = self.lock()?;
        conn.execute(
            "INSERT INTO reviews (id, created_at_ms, owner, game_id, move_number, sgf) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![r.id, r.created_at_ms, r.owner, r.game_id, r.move_number, r.sgf],
        )
        .map_err(self.db_err())?;
        Ok(())
    }

    fn review(&self, id: &str) -> Result<Option<ReviewRecord>, StoreError> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare_cached("SELECT id, created_at_ms, owner, game_id, move_number, sgf FROM reviews WHERE id = ?1")
            .map_err(self.db_err())?;
        let mut rows = stmt
            .query_map([id], |row| {
                Ok(ReviewRecord {
                    id: row.get(0)?,
                    created_at_ms: row.get(1)?,
                    owner: row.get(2)?,
                    game_id: row.get(3)?,
                    move_number: row.get(4)?,
                    sgf: row.get(5)?,
                })
            })
            .map_err(self.db_err())?;
        rows.next().transpose().map_err(self.db_err())
    }

    fn count_reviews(&self, owner: &str) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM reviews WHERE owner = ?1",
                [owner],
                |row| row.get(0),
            )
            .map_err(self.db_err())?;
        Ok(n.unsigned_abs())
    }
}
