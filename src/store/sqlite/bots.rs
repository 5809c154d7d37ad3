//! The SQLite side of [`BotStore`].

use rusqlite::params;

use super::SqliteStore;
use crate::protocol::Role;
use crate::store::accounts::{USER_COLUMNS, role_text};
use crate::store::bots::HAS_RATED_GAME;
use crate::store::{BotStore, MadeBot, StoreError, UserRecord};

impl BotStore for SqliteStore {
    fn make_bot(&self, id: &str) -> Result<MadeBot, StoreError> {
        self.in_transaction(|tx| {
            let db = self.db_err();
            let Some(user) = self.read_user(tx, id)? else {
                return Ok(MadeBot::Unknown);
            };
            if user.role != Role::Player {
                return Ok(MadeBot::NotAPlayer(user.role));
            }
            let rated: bool = tx
                .prepare_cached(HAS_RATED_GAME)
                .map_err(&db)?
                .query_row([id], |row| row.get(0))
                .map_err(&db)?;
            if rated {
                return Ok(MadeBot::Rated);
            }
            tx.prepare_cached("UPDATE users SET role = ?2 WHERE id = ?1")
                .map_err(&db)?
                .execute(params![id, role_text(Role::Bot)])
                .map_err(&db)?;
            tx.prepare_cached("INSERT INTO user_changes (user_id) VALUES (?1)")
                .map_err(&db)?
                .execute([id])
                .map_err(&db)?;
            Ok(MadeBot::Made)
        })
    }

    fn set_bot_profile(&self, id: &str, profile: &str, at_ms: i64) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "INSERT INTO bot_profiles (user_id, profile, updated_at_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (user_id) DO UPDATE SET profile = ?2, updated_at_ms = ?3",
        )
        .map_err(&db)?
        .execute(params![id, profile, at_ms])
        .map_err(&db)?;
        Ok(())
    }

    fn bots(
        &self,
        after: &str,
        limit: u32,
    ) -> Result<Vec<(UserRecord, Option<String>)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let columns: Vec<String> = USER_COLUMNS
            .split(',')
            .map(|c| format!("u.{}", c.trim()))
            .collect();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {}, p.profile FROM users u LEFT JOIN bot_profiles p ON p.user_id = u.id
                 WHERE u.role = ?1 AND u.disabled = 0 AND u.id > ?2 ORDER BY u.id LIMIT ?3",
                columns.join(", ")
            ))
            .map_err(&db)?;
        let mut rows = stmt
            .query(params![role_text(Role::Bot), after, limit])
            .map_err(&db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(&db)? {
            out.push((self.user_from_row(row)?, row.get(7).map_err(&db)?));
        }
        Ok(out)
    }
}
