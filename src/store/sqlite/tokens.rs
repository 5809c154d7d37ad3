//! The SQLite side of [`TokenStore`].

use rusqlite::{OptionalExtension, Row, params};

use super::SqliteStore;
use crate::store::accounts::USER_COLUMNS;
use crate::store::tokens::TOKEN_COLUMNS;
use crate::store::{StoreError, TOUCH_MS, TokenRecord, TokenStore, UserRecord};

fn token_from_row(row: &Row<'_>) -> rusqlite::Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.get(0)?,
        user_id: row.get(1)?,
        name: row.get(2)?,
        scopes: row.get(3)?,
        hash: row.get(4)?,
        created_at_ms: row.get(5)?,
        expires_at_ms: row.get(6)?,
        last_used_ms: row.get(7)?,
    })
}

impl TokenStore for SqliteStore {
    fn create_token(&self, token: &TokenRecord, max_per_user: usize) -> Result<bool, StoreError> {
        self.in_transaction(|tx| {
            let db = self.db_err();
            tx.prepare_cached("DELETE FROM api_tokens WHERE user_id = ?1 AND expires_at_ms <= ?2")
                .map_err(&db)?
                .execute(params![token.user_id, token.created_at_ms])
                .map_err(&db)?;
            let held: i64 = tx
                .prepare_cached("SELECT count(*) FROM api_tokens WHERE user_id = ?1")
                .map_err(&db)?
                .query_row([&token.user_id], |row| row.get(0))
                .map_err(&db)?;
            if usize::try_from(held).unwrap_or(usize::MAX) >= max_per_user {
                return Ok(false);
            }
            tx.prepare_cached(&format!(
                "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))
            .map_err(&db)?
            .execute(params![
                token.id,
                token.user_id,
                token.name,
                token.scopes,
                token.hash,
                token.created_at_ms,
                token.expires_at_ms,
                token.last_used_ms,
            ])
            .map_err(&db)?;
            Ok(true)
        })
    }

    fn tokens(&self, user_id: &str) -> Result<Vec<TokenRecord>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE user_id = ?1
                 ORDER BY created_at_ms, id"
            ))
            .map_err(&db)?;
        let rows = stmt.query_map([user_id], token_from_row).map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn revoke_token(&self, user_id: &str, id: &str) -> Result<bool, StoreError> {
        self.in_transaction(|tx| {
            let db = self.db_err();
            let gone = tx
                .prepare_cached("DELETE FROM api_tokens WHERE user_id = ?1 AND id = ?2")
                .map_err(&db)?
                .execute([user_id, id])
                .map_err(&db)?;
            if gone > 0 {
                tx.prepare_cached("INSERT INTO user_changes (user_id, token) VALUES (?1, ?2)")
                    .map_err(&db)?
                    .execute([user_id, id])
                    .map_err(&db)?;
            }
            Ok(gone > 0)
        })
    }

    fn use_token(
        &self,
        hash: &str,
        now_ms: i64,
    ) -> Result<Option<(TokenRecord, UserRecord)>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let token = conn
            .prepare_cached(&format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE hash = ?1"
            ))
            .map_err(&db)?
            .query_row([hash], token_from_row)
            .optional()
            .map_err(&db)?;
        let Some(token) = token else { return Ok(None) };
        let mut stmt = conn
            .prepare_cached(&format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"))
            .map_err(&db)?;
        let mut rows = stmt.query([&token.user_id]).map_err(&db)?;
        let user = match rows.next().map_err(&db)? {
            Some(row) => self.user_from_row(row)?,
            None => return Ok(None),
        };
        drop(rows);
        if token.last_used_ms.is_none_or(|at| at + TOUCH_MS <= now_ms) {
            conn.prepare_cached("UPDATE api_tokens SET last_used_ms = ?2 WHERE id = ?1")
                .map_err(&db)?
                .execute(params![token.id, now_ms])
                .map_err(&db)?;
        }
        Ok(Some((token, user)))
    }
}
