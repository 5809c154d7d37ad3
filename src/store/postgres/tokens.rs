//! The PostgreSQL side of [`TokenStore`]. Creating a token locks its user's row, so two
//! nodes creating tokens for one user at once count one after the other and the bound
//! holds.

use tokio_postgres::{Client, Row};

use super::accounts::read_user;
use super::{PgStore, col, pg_error};
use crate::store::tokens::TOKEN_COLUMNS;
use crate::store::{StoreError, TOUCH_MS, TokenRecord, TokenStore, UserRecord};

fn token_from_row(row: &Row) -> Result<TokenRecord, StoreError> {
    Ok(TokenRecord {
        id: col(row, 0)?,
        user_id: col(row, 1)?,
        name: col(row, 2)?,
        scopes: col(row, 3)?,
        hash: col(row, 4)?,
        created_at_ms: col(row, 5)?,
        expires_at_ms: col(row, 6)?,
        last_used_ms: col(row, 7)?,
    })
}

async fn create_token(
    client: &mut Client,
    token: TokenRecord,
    max_per_user: usize,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute(
        "SELECT 1 FROM users WHERE id = $1 FOR UPDATE",
        &[&token.user_id],
    )
    .await
    .map_err(pg_error)?;
    tx.execute(
        "DELETE FROM api_tokens WHERE user_id = $1 AND expires_at_ms <= $2",
        &[&token.user_id, &token.created_at_ms],
    )
    .await
    .map_err(pg_error)?;
    let row = tx
        .query_one(
            "SELECT count(*) FROM api_tokens WHERE user_id = $1",
            &[&token.user_id],
        )
        .await
        .map_err(pg_error)?;
    let held: i64 = col(&row, 0)?;
    if usize::try_from(held).unwrap_or(usize::MAX) >= max_per_user {
        return Ok(false);
    }
    tx.execute(
        &format!(
            "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ),
        &[
            &token.id,
            &token.user_id,
            &token.name,
            &token.scopes,
            &token.hash,
            &token.created_at_ms,
            &token.expires_at_ms,
            &token.last_used_ms,
        ],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)?;
    Ok(true)
}

async fn tokens(client: &mut Client, user_id: String) -> Result<Vec<TokenRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE user_id = $1
                 ORDER BY created_at_ms, id"
            ),
            &[&user_id],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(token_from_row).collect()
}

async fn revoke_token(
    client: &mut Client,
    user_id: String,
    id: String,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    let gone = tx
        .execute(
            "DELETE FROM api_tokens WHERE user_id = $1 AND id = $2",
            &[&user_id, &id],
        )
        .await
        .map_err(pg_error)?;
    if gone > 0 {
        tx.execute(
            "INSERT INTO user_changes (user_id, token) VALUES ($1, $2)",
            &[&user_id, &id],
        )
        .await
        .map_err(pg_error)?;
    }
    tx.commit().await.map_err(pg_error)?;
    Ok(gone > 0)
}

async fn use_token(
    client: &mut Client,
    hash: String,
    now_ms: i64,
) -> Result<Option<(TokenRecord, UserRecord)>, StoreError> {
    let row = client
        .query_opt(
            &format!("SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE hash = $1"),
            &[&hash],
        )
        .await
        .map_err(pg_error)?;
    let Some(row) = row else { return Ok(None) };
    let token = token_from_row(&row)?;
    let Some(user) = read_user(&*client, &token.user_id).await? else {
        return Ok(None);
    };
    if token.last_used_ms.is_none_or(|at| at + TOUCH_MS <= now_ms) {
        client
            .execute(
                "UPDATE api_tokens SET last_used_ms = $2 WHERE id = $1",
                &[&token.id, &now_ms],
            )
            .await
            .map_err(pg_error)?;
    }
    Ok(Some((token, user)))
}

impl TokenStore for PgStore {
    fn create_token(&self, token: &TokenRecord, max_per_user: usize) -> Result<bool, StoreError> {
        let token = token.clone();
        self.connections
            .run(move |c| Box::pin(create_token(c, token, max_per_user)))
    }

    fn tokens(&self, user_id: &str) -> Result<Vec<TokenRecord>, StoreError> {
        let user_id = user_id.to_owned();
        self.connections.run(move |c| Box::pin(tokens(c, user_id)))
    }

    fn revoke_token(&self, user_id: &str, id: &str) -> Result<bool, StoreError> {
        let (user_id, id) = (user_id.to_owned(), id.to_owned());
        self.connections
            .run(move |c| Box::pin(revoke_token(c, user_id, id)))
    }

    fn use_token(
        &self,
        hash: &str,
        now_ms: i64,
    ) -> Result<Option<(TokenRecord, UserRecord)>, StoreError> {
        let hash = hash.to_owned();
        self.connections
            .run(move |c| Box::pin(use_token(c, hash, now_ms)))
    }
}
