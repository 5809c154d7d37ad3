//! The PostgreSQL side of [`AccountStore`]: users, refresh-token families and invites.
//! Every change that must hold together (a user and their invite, a rotation, a password
//! and the revocation it causes) is one transaction; a rotation locks its token's row, so
//! two nodes presenting the same token take turns and the second sees it used.

use tokio_postgres::{Client, GenericClient, Row, Transaction};

use super::{PgStore, bad_row, col, pg_error};
use crate::protocol::Role;
use crate::store::accounts::{USER_COLUMNS, parse_role, role_text};
use crate::store::{
    AccountStore, NewInvite, NewRefresh, Origin, Rotation, Sighting, StandingChange, StoreError,
    UserChange, UserRecord,
};

pub(super) fn user_from_row(row: &Row) -> Result<UserRecord, StoreError> {
    let id: String = col(row, 0)?;
    let origin: String = col(row, 1)?;
    let role: String = col(row, 3)?;
    Ok(UserRecord {
        origin: Origin::parse(&origin)
            .ok_or_else(|| bad_row(format!("user {id} has the origin {origin:?}")))?,
        display_name: col(row, 2)?,
        role: parse_role(&role)
            .ok_or_else(|| bad_row(format!("user {id} has the role {role:?}")))?,
        password_hash: col(row, 4)?,
        disabled: col(row, 5)?,
        created_at_ms: col(row, 6)?,
        id,
    })
}

pub(super) async fn read_user(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<UserRecord>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
    match client.query_opt(&sql, &[&id]).await.map_err(pg_error)? {
        Some(row) => Ok(Some(user_from_row(&row)?)),
        None => Ok(None),
    }
}

async fn insert_user(tx: &Transaction<'_>, user: &UserRecord) -> Result<(), StoreError> {
    let inserted = tx
        .execute(
            "INSERT INTO users (id, origin, display_name, role, password_hash, disabled,
                 created_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
            &[
                &user.id,
                &user.origin.as_str(),
                &user.display_name,
                &role_text(user.role),
                &user.password_hash,
                &user.disabled,
                &user.created_at_ms,
            ],
        )
        .await
        .map_err(pg_error)?;
    if inserted == 0 {
        return Err(StoreError::DuplicateUser {
            id: user.id.clone(),
        });
    }
    Ok(())
}

async fn revoke_family(tx: &Transaction<'_>, family: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE refresh_tokens SET state = 'revoked' WHERE family = $1",
        &[&family],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

async fn insert_refresh(
    tx: &Transaction<'_>,
    token: &NewRefresh,
    family: &str,
    user_id: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO refresh_tokens (hash, family, user_id, issued_at_ms, expires_at_ms, state)
         VALUES ($1, $2, $3, $4, $5, 'live')",
        &[
            &token.hash,
            &family,
            &user_id,
            &token.issued_at_ms,
            &token.expires_at_ms,
        ],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

async fn create_user(
    client: &mut Client,
    user: UserRecord,
    invite: Option<String>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    insert_user(&tx, &user).await?;
    if let Some(invite) = invite {
        let used = tx
            .execute(
                "UPDATE invites SET used_by = $1
                 WHERE hash = $2 AND used_by IS NULL AND expires_at_ms > $3",
                &[&user.id, &invite, &now_ms],
            )
            .await
            .map_err(pg_error)?;
        if used == 0 {
            return Err(StoreError::InvalidInvite);
        }
    }
    tx.commit().await.map_err(pg_error)
}

async fn users(
    client: &mut Client,
    after: String,
    limit: u32,
) -> Result<Vec<UserRecord>, StoreError> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id > $1 ORDER BY id LIMIT $2");
    let rows = client
        .query(&sql, &[&after, &i64::from(limit)])
        .await
        .map_err(pg_error)?;
    rows.iter().map(user_from_row).collect()
}

async fn update_user(
    client: &mut Client,
    id: String,
    change: UserChange,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    let (changed, revoke) = match &change {
        UserChange::Password(hash) => (
            tx.execute(
                "UPDATE users SET password_hash = $2 WHERE id = $1",
                &[&id, hash],
            )
            .await,
            true,
        ),
        UserChange::Disabled(disabled) => (
            tx.execute(
                "UPDATE users SET disabled = $2 WHERE id = $1",
                &[&id, disabled],
            )
            .await,
            *disabled,
        ),
        UserChange::Role(role) => (
            tx.execute(
                "UPDATE users SET role = $2 WHERE id = $1",
                &[&id, &role_text(*role)],
            )
            .await,
            false,
        ),
    };
    if changed.map_err(pg_error)? == 0 {
        return Err(StoreError::UnknownUser { id });
    }
    if revoke {
        tx.execute(
            "UPDATE refresh_tokens SET state = 'revoked' WHERE user_id = $1",
            &[&id],
        )
        .await
        .map_err(pg_error)?;
    }
    if matches!(change, UserChange::Disabled(true)) {
        super::push::stop_sending(&tx, &id).await?;
    }
    if matches!(change, UserChange::Disabled(_) | UserChange::Role(_)) {
        tx.execute("INSERT INTO user_changes (user_id) VALUES ($1)", &[&id])
            .await
            .map_err(pg_error)?;
    }
    tx.commit().await.map_err(pg_error)
}

async fn user_changes(
    client: &mut Client,
    after: u64,
    limit: u32,
) -> Result<Vec<StandingChange>, StoreError> {
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT seq, user_id, token FROM user_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&after, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter()
        .map(|row| {
            let seq: i64 = col(row, 0)?;
            Ok(StandingChange {
                seq: seq.max(0) as u64,
                user_id: col(row, 1)?,
                token: col(row, 2)?,
            })
        })
        .collect()
}

async fn last_user_change(client: &mut Client) -> Result<u64, StoreError> {
    let row = client
        .query_one("SELECT coalesce(max(seq), 0) FROM user_changes", &[])
        .await
        .map_err(pg_error)?;
    let last: i64 = col(&row, 0)?;
    Ok(last.max(0) as u64)
}

async fn sight_external(
    client: &mut Client,
    id: String,
    display_name: String,
    now_ms: i64,
) -> Result<Sighting, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    let sighting = match read_user(&tx, &id).await? {
        Some(user) if user.origin != Origin::External => Sighting::Clash(user.origin),
        Some(user) if user.disabled => Sighting::Disabled,
        Some(_) => Sighting::Admitted,
        None => {
            let user = UserRecord {
                id,
                origin: Origin::External,
                display_name,
                role: Role::Player,
                password_hash: None,
                disabled: false,
                created_at_ms: now_ms,
            };
            // Another node may record the same user at the same moment; it is the same
            // user either way.
            match insert_user(&tx, &user).await {
                Ok(()) | Err(StoreError::DuplicateUser { .. }) => Sighting::Admitted,
                Err(e) => return Err(e),
            }
        }
    };
    tx.commit().await.map_err(pg_error)?;
    Ok(sighting)
}

async fn start_refresh_family(
    client: &mut Client,
    user_id: String,
    token: NewRefresh,
    max_families: usize,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.execute(
        "DELETE FROM refresh_tokens WHERE expires_at_ms <= $1",
        &[&token.issued_at_ms],
    )
    .await
    .map_err(pg_error)?;
    let keep = i64::try_from(max_families.saturating_sub(1)).unwrap_or(i64::MAX);
    let stale = tx
        .query(
            "SELECT family FROM refresh_tokens WHERE user_id = $1 AND state = 'live'
             ORDER BY issued_at_ms DESC, hash OFFSET $2",
            &[&user_id, &keep],
        )
        .await
        .map_err(pg_error)?;
    for row in &stale {
        let family: String = col(row, 0)?;
        revoke_family(&tx, &family).await?;
    }
    // A family is named after its first token's hash.
    insert_refresh(&tx, &token, &token.hash, &user_id).await?;
    tx.commit().await.map_err(pg_error)
}

async fn rotate_refresh(
    client: &mut Client,
    old: String,
    new: NewRefresh,
) -> Result<Rotation, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    let rotation = rotate_in(&tx, &old, &new).await?;
    tx.commit().await.map_err(pg_error)?;
    Ok(rotation)
}

async fn rotate_in(
    tx: &Transaction<'_>,
    old: &str,
    new: &NewRefresh,
) -> Result<Rotation, StoreError> {
    let Some(found) = tx
        .query_opt(
            "SELECT family, user_id, expires_at_ms, state FROM refresh_tokens
             WHERE hash = $1 FOR UPDATE",
            &[&old],
        )
        .await
        .map_err(pg_error)?
    else {
        return Ok(Rotation::Invalid);
    };
    let family: String = col(&found, 0)?;
    let user_id: String = col(&found, 1)?;
    let expires_at_ms: i64 = col(&found, 2)?;
    let state: String = col(&found, 3)?;
    let user = read_user(tx, &user_id).await?;
    // Disabling revoked the user's tokens; an unexpired one still names the account, so
    // its holder learns why instead of being told to log in again.
    if user.as_ref().is_some_and(|u| u.disabled) && expires_at_ms > new.issued_at_ms {
        revoke_family(tx, &family).await?;
        return Ok(Rotation::Disabled);
    }
    match state.as_str() {
        "used" => {
            revoke_family(tx, &family).await?;
            return Ok(Rotation::Replayed);
        }
        "live" => {}
        _ => return Ok(Rotation::Invalid),
    }
    if expires_at_ms <= new.issued_at_ms {
        return Ok(Rotation::Invalid);
    }
    let Some(user) = user.filter(|u| !u.disabled) else {
        revoke_family(tx, &family).await?;
        return Ok(Rotation::Disabled);
    };
    tx.execute(
        "UPDATE refresh_tokens SET state = 'used' WHERE hash = $1",
        &[&old],
    )
    .await
    .map_err(pg_error)?;
    insert_refresh(tx, new, &family, &user_id).await?;
    Ok(Rotation::Rotated(user))
}

async fn revoke_refresh_family(client: &mut Client, hash: String) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE refresh_tokens SET state = 'revoked'
             WHERE family = (SELECT family FROM refresh_tokens WHERE hash = $1)",
            &[&hash],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

async fn create_invite(client: &mut Client, invite: NewInvite) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO invites (hash, created_at_ms, expires_at_ms) VALUES ($1, $2, $3)",
            &[&invite.hash, &invite.created_at_ms, &invite.expires_at_ms],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

impl AccountStore for PgStore {
    fn create_user(
        &self,
        user: &UserRecord,
        invite: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (user, invite) = (user.clone(), invite.map(str::to_owned));
        self.connections
            .run(move |c| Box::pin(create_user(c, user, invite, now_ms)))
    }

    fn user(&self, id: &str) -> Result<Option<UserRecord>, StoreError> {
        let id = id.to_owned();
        self.connections
            .run(move |c| Box::pin(async move { read_user(&*c, &id).await }))
    }

    fn non_ascii_local_ids(&self) -> Result<Vec<String>, StoreError> {
        self.connections.run(move |c| {
            Box::pin(async move {
                let sql = "SELECT id FROM users WHERE origin = 'local'
                           AND octet_length(id) <> char_length(id) ORDER BY id";
                let rows = c.query(sql, &[]).await.map_err(pg_error)?;
                Ok(rows.iter().map(|row| row.get(0)).collect())
            })
        })
    }

    fn has_played(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.connections.run(move |c| {
            Box::pin(async move {
                let sql = crate::store::accounts::HAS_PLAYED;
                let row = c.query_one(sql, &[&id]).await.map_err(pg_error)?;
                Ok(row.get(0))
            })
        })
    }

    fn users_named(&self, name: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError> {
        let name = name.to_owned();
        self.connections.run(move |c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE display_name = $1 ORDER BY id LIMIT $2"
                );
                let rows = (c.query(&sql, &[&name, &i64::from(limit)]).await).map_err(pg_error)?;
                rows.iter().map(user_from_row).collect()
            })
        })
    }

    fn users(&self, after: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError> {
        let after = after.to_owned();
        self.connections
            .run(move |c| Box::pin(users(c, after, limit)))
    }

    fn update_user(&self, id: &str, change: &UserChange) -> Result<(), StoreError> {
        let (id, change) = (id.to_owned(), change.clone());
        self.connections
            .run(move |c| Box::pin(update_user(c, id, change)))
    }

    fn sight_external(
        &self,
        id: &str,
        display_name: &str,
        now_ms: i64,
    ) -> Result<Sighting, StoreError> {
        let (id, name) = (id.to_owned(), display_name.to_owned());
        self.connections
            .run(move |c| Box::pin(sight_external(c, id, name, now_ms)))
    }

    fn start_refresh_family(
        &self,
        user_id: &str,
        token: &NewRefresh,
        max_families: usize,
    ) -> Result<(), StoreError> {
        let (user_id, token) = (user_id.to_owned(), token.clone());
        self.connections
            .run(move |c| Box::pin(start_refresh_family(c, user_id, token, max_families)))
    }

    fn rotate_refresh(&self, old: &str, new: &NewRefresh) -> Result<Rotation, StoreError> {
        let (old, new) = (old.to_owned(), new.clone());
        self.connections
            .run(move |c| Box::pin(rotate_refresh(c, old, new)))
    }

    fn revoke_refresh_family(&self, hash: &str) -> Result<(), StoreError> {
        let hash = hash.to_owned();
        self.connections
            .run(move |c| Box::pin(revoke_refresh_family(c, hash)))
    }

    fn create_invite(&self, invite: &NewInvite) -> Result<(), StoreError> {
        let invite = invite.clone();
        self.connections
            .run(move |c| Box::pin(create_invite(c, invite)))
    }

    fn user_changes(&self, after: u64, limit: u32) -> Result<Vec<StandingChange>, StoreError> {
        self.connections
            .run(move |c| Box::pin(user_changes(c, after, limit)))
    }

    fn last_user_change(&self) -> Result<u64, StoreError> {
        self.connections.run(|c| Box::pin(last_user_change(c)))
    }
}
