//! The PostgreSQL side of [`BotStore`]. Making a bot locks the user's row, so two
//! requests at once find one `player` and one `bot`.

use tokio_postgres::Client;

use super::accounts::{read_user, user_from_row};
use super::{PgStore, col, pg_error};
use crate::protocol::Role;
use crate::store::accounts::{USER_COLUMNS, role_text};
use crate::store::bots::HAS_RATED_GAME;
use crate::store::{BotStore, MadeBot, StoreError, UserRecord};

async fn make_bot(client: &mut Client, id: String) -> Result<MadeBot, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", &[&id])
        .await
        .map_err(pg_error)?;
    let Some(user) = read_user(&tx, &id).await? else {
        return Ok(MadeBot::Unknown);
    };
    if user.role != Role::Player {
        return Ok(MadeBot::NotAPlayer(user.role));
    }
    let row = tx
        .query_one(HAS_RATED_GAME, &[&id])
        .await
        .map_err(pg_error)?;
    if col::<bool>(&row, 0)? {
        return Ok(MadeBot::Rated);
    }
    tx.execute(
        "UPDATE users SET role = $2 WHERE id = $1",
        &[&id, &role_text(Role::Bot)],
    )
    .await
    .map_err(pg_error)?;
    tx.execute("INSERT INTO user_changes (user_id) VALUES ($1)", &[&id])
        .await
        .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)?;
    Ok(MadeBot::Made)
}

async fn set_bot_profile(
    client: &mut Client,
    id: String,
    profile: String,
    at_ms: i64,
) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO bot_profiles (user_id, profile, updated_at_ms) VALUES ($1, $2, $3)
             ON CONFLICT (user_id) DO UPDATE SET profile = $2, updated_at_ms = $3",
            &[&id, &profile, &at_ms],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

async fn bots(
    client: &mut Client,
    after: String,
    limit: u32,
) -> Result<Vec<(UserRecord, Option<String>)>, StoreError> {
    let columns: Vec<String> = USER_COLUMNS
        .split(',')
        .map(|c| format!("u.{}", c.trim()))
        .collect();
    let rows = client
        .query(
            &format!(
                "SELECT {}, p.profile FROM users u LEFT JOIN bot_profiles p ON p.user_id = u.id
                 WHERE u.role = $1 AND NOT u.disabled AND u.id > $2 ORDER BY u.id LIMIT $3",
                columns.join(", ")
            ),
            &[&role_text(Role::Bot), &after, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter()
        .map(|row| Ok((user_from_row(row)?, col(row, 7)?)))
        .collect()
}

impl BotStore for PgStore {
    fn make_bot(&self, id: &str) -> Result<MadeBot, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| Box::pin(make_bot(c, id)))
    }

    fn set_bot_profile(&self, id: &str, profile: &str, at_ms: i64) -> Result<(), StoreError> {
        let (id, profile) = (id.to_owned(), profile.to_owned());
        self.connections
            .run(move |c| Box::pin(set_bot_profile(c, id, profile, at_ms)))
    }

    fn bots(
        &self,
        after: &str,
        limit: u32,
    ) -> Result<Vec<(UserRecord, Option<String>)>, StoreError> {
        let after = after.to_owned();
        self.connections
            .run(move |c| Box::pin(bots(c, after, limit)))
    }
}
