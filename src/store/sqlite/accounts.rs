//! The SQLite side of [`AccountStore`]: users, refresh-token families and invites. Every
//! change that must hold together (a user and their invite, a rotation, a password and
//! the revocation it causes) is one immediate transaction.

use rusqlite::{OptionalExtension, Row, Transaction, TransactionBehavior, params};

use super::SqliteStore;
use crate::protocol::Role;
use crate::store::accounts::{HAS_PLAYED, USER_COLUMNS, parse_role, role_text};
use crate::store::{
    AccountStore, NewInvite, NewRefresh, Origin, Rotation, Sighting, StandingChange, StoreError,
    UserChange, UserRecord,
};

impl SqliteStore {
    /// Runs `work` in one immediate transaction, committed when it returns `Ok`.
    pub(super) fn in_transaction<T>(
        &self,
        work: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock()?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db_err())?;
        let out = work(&tx)?;
        tx.commit().map_err(self.db_err())?;
        Ok(out)
    }

    pub(super) fn user_from_row(&self, row: &Row<'_>) -> Result<UserRecord, StoreError> {
        let db = self.db_err();
        let bad = |detail: String| StoreError::BadRow {
            path: self.path.clone(),
            detail,
        };
        let id: String = row.get(0).map_err(&db)?;
        let origin: String = row.get(1).map_err(&db)?;
        let role: String = row.get(3).map_err(&db)?;
        Ok(UserRecord {
            origin: Origin::parse(&origin)
                .ok_or_else(|| bad(format!("user {id} has the origin {origin:?}")))?,
            display_name: row.get(2).map_err(&db)?,
            role: parse_role(&role)
                .ok_or_else(|| bad(format!("user {id} has the role {role:?}")))?,
            password_hash: row.get(4).map_err(&db)?,
            disabled: row.get::<_, i64>(5).map_err(&db)? != 0,
            created_at_ms: row.get(6).map_err(&db)?,
            id,
        })
    }

    pub(super) fn read_user(
        &self,
        tx: &rusqlite::Connection,
        id: &str,
    ) -> Result<Option<UserRecord>, StoreError> {
        let db = self.db_err();
        let mut stmt = tx
            .prepare_cached(&format!("SELECT {USER_COLUMNS} FROM users WHERE id = ?1"))
            .map_err(&db)?;
        let mut rows = stmt.query([id]).map_err(&db)?;
        match rows.next().map_err(&db)? {
            Some(row) => Ok(Some(self.user_from_row(row)?)),
            None => Ok(None),
        }
    }

    fn insert_user(&self, tx: &Transaction<'_>, user: &UserRecord) -> Result<(), StoreError> {
        let inserted = tx
            .prepare_cached(
                "INSERT INTO users (id, origin, display_name, role, password_hash, disabled,
                     created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
            )
            .map_err(self.db_err())?
            .execute(params![
                user.id,
                user.origin.as_str(),
                user.display_name,
                role_text(user.role),
                user.password_hash,
                i64::from(user.disabled),
                user.created_at_ms,
            ])
            .map_err(self.db_err())?;
        if inserted == 0 {
            return Err(StoreError::DuplicateUser {
                id: user.id.clone(),
            });
        }
        Ok(())
    }

    fn revoke_family(&self, tx: &Transaction<'_>, family: &str) -> Result<(), StoreError> {
        tx.prepare_cached("UPDATE refresh_tokens SET state = 'revoked' WHERE family = ?1")
            .map_err(self.db_err())?
            .execute([family])
            .map_err(self.db_err())?;
        Ok(())
    }

    fn revoke_user(&self, tx: &Transaction<'_>, user_id: &str) -> Result<(), StoreError> {
        tx.prepare_cached("UPDATE refresh_tokens SET state = 'revoked' WHERE user_id = ?1")
            .map_err(self.db_err())?
            .execute([user_id])
            .map_err(self.db_err())?;
        Ok(())
    }

    fn insert_refresh(
        &self,
        tx: &Transaction<'_>,
        token: &NewRefresh,
        family: &str,
        user_id: &str,
    ) -> Result<(), StoreError> {
        tx.prepare_cached(
            "INSERT INTO refresh_tokens (hash, family, user_id, issued_at_ms, expires_at_ms, state)
             VALUES (?1, ?2, ?3, ?4, ?5, 'live')",
        )
        .map_err(self.db_err())?
        .execute(params![
            token.hash,
            family,
            user_id,
            token.issued_at_ms,
            token.expires_at_ms
        ])
        .map_err(self.db_err())?;
        Ok(())
    }
}

impl AccountStore for SqliteStore {
    fn create_user(
        &self,
        user: &UserRecord,
        invite: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            self.insert_user(tx, user)?;
            if let Some(invite) = invite {
                let used = tx
                    .prepare_cached(
                        "UPDATE invites SET used_by = ?1
                         WHERE hash = ?2 AND used_by IS NULL AND expires_at_ms > ?3",
                    )
                    .map_err(self.db_err())?
                    .execute(params![user.id, invite, now_ms])
                    .map_err(self.db_err())?;
                if used == 0 {
                    return Err(StoreError::InvalidInvite);
                }
            }
            Ok(())
        })
    }

    fn user(&self, id: &str) -> Result<Option<UserRecord>, StoreError> {
        let conn = self.lock()?;
        self.read_user(&conn, id)
    }

    fn non_ascii_local_ids(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        // SQLite's length counts a text's characters and a blob's bytes.
        let mut stmt = conn
            .prepare_cached(
                "SELECT id FROM users WHERE origin = 'local'
                 AND length(id) <> length(CAST(id AS BLOB)) ORDER BY id",
            )
            .map_err(&db)?;
        let ids = stmt.query_map([], |row| row.get(0)).map_err(&db)?;
        ids.collect::<Result<_, _>>().map_err(&db)
    }

    fn has_played(&self, id: &str) -> Result<bool, StoreError> {
        let conn = self.lock()?;
        conn.prepare_cached(HAS_PLAYED)
            .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
            .map_err(self.db_err())
    }

    fn users_named(&self, name: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {USER_COLUMNS} FROM users WHERE display_name = ?1 ORDER BY id LIMIT ?2"
            ))
            .map_err(&db)?;
        let mut rows = stmt.query(params![name, limit]).map_err(&db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(&db)? {
            out.push(self.user_from_row(row)?);
        }
        Ok(out)
    }

    fn users(&self, after: &str, limit: u32) -> Result<Vec<UserRecord>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {USER_COLUMNS} FROM users WHERE id > ?1 ORDER BY id LIMIT ?2"
            ))
            .map_err(&db)?;
        let mut rows = stmt.query(params![after, limit]).map_err(&db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(&db)? {
            out.push(self.user_from_row(row)?);
        }
        Ok(out)
    }

    fn update_user(&self, id: &str, change: &UserChange) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            let (sql, value, revoke): (&str, rusqlite::types::Value, bool) = match change {
                UserChange::Password(hash) => (
                    "UPDATE users SET password_hash = ?2 WHERE id = ?1",
                    hash.clone().into(),
                    true,
                ),
                UserChange::Disabled(disabled) => (
                    "UPDATE users SET disabled = ?2 WHERE id = ?1",
                    i64::from(*disabled).into(),
                    *disabled,
                ),
                UserChange::Role(role) => (
                    "UPDATE users SET role = ?2 WHERE id = ?1",
                    role_text(*role).into(),
                    false,
                ),
            };
            let changed = tx
                .prepare_cached(sql)
                .map_err(self.db_err())?
                .execute(params![id, value])
                .map_err(self.db_err())?;
            if changed == 0 {
                return Err(StoreError::UnknownUser { id: id.to_string() });
            }
            if revoke {
                self.revoke_user(tx, id)?;
            }
            if matches!(change, UserChange::Disabled(true)) {
                super::push::stop_sending(tx, id, &self.db_err())?;
            }
            if matches!(change, UserChange::Disabled(_) | UserChange::Role(_)) {
                tx.prepare_cached("INSERT INTO user_changes (user_id) VALUES (?1)")
                    .map_err(self.db_err())?
                    .execute([id])
                    .map_err(self.db_err())?;
            }
            Ok(())
        })
    }

    fn user_changes(&self, after: u64, limit: u32) -> Result<Vec<StandingChange>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, user_id, token FROM user_changes WHERE seq > ?1 ORDER BY seq
                 LIMIT ?2",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(params![after, limit], |row| {
                Ok(StandingChange {
                    seq: row.get::<_, i64>(0)?.max(0) as u64,
                    user_id: row.get(1)?,
                    token: row.get(2)?,
                })
            })
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn last_user_change(&self) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let last: i64 = conn
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM user_changes")
            .map_err(self.db_err())?
            .query_row([], |row| row.get(0))
            .map_err(self.db_err())?;
        Ok(last.max(0) as u64)
    }

    fn sight_external(
        &self,
        id: &str,
        display_name: &str,
        now_ms: i64,
    ) -> Result<Sighting, StoreError> {
        self.in_transaction(|tx| match self.read_user(tx, id)? {
            Some(user) if user.origin != Origin::External => Ok(Sighting::Clash(user.origin)),
            Some(user) if user.disabled => Ok(Sighting::Disabled),
            Some(_) => Ok(Sighting::Admitted),
            None => {
                self.insert_user(
                    tx,
                    &UserRecord {
                        id: id.to_string(),
                        origin: Origin::External,
                        display_name: display_name.to_string(),
                        role: Role::Player,
                        password_hash: None,
                        disabled: false,
                        created_at_ms: now_ms,
                    },
                )?;
                Ok(Sighting::Admitted)
            }
        })
    }

    fn start_refresh_family(
        &self,
        user_id: &str,
        token: &NewRefresh,
        max_families: usize,
    ) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            let db = self.db_err();
            tx.prepare_cached("DELETE FROM refresh_tokens WHERE expires_at_ms <= ?1")
                .map_err(&db)?
                .execute([token.issued_at_ms])
                .map_err(&db)?;
            let keep = max_families.saturating_sub(1);
            let stale: Vec<String> = tx
                .prepare_cached(
                    "SELECT family FROM refresh_tokens WHERE user_id = ?1 AND state = 'live'
                     ORDER BY issued_at_ms DESC, hash LIMIT -1 OFFSET ?2",
                )
                .map_err(&db)?
                .query_map(params![user_id, keep as i64], |row| row.get(0))
                .map_err(&db)?
                .collect::<Result<_, _>>()
                .map_err(&db)?;
            for family in stale {
                self.revoke_family(tx, &family)?;
            }
            // A family is named after its first token's hash.
            self.insert_refresh(tx, token, &token.hash, user_id)
        })
    }

    fn rotate_refresh(&self, old: &str, new: &NewRefresh) -> Result<Rotation, StoreError> {
        self.in_transaction(|tx| {
            let db = self.db_err();
            let found: Option<(String, String, i64, String)> = tx
                .prepare_cached(
                    "SELECT family, user_id, expires_at_ms, state FROM refresh_tokens
                     WHERE hash = ?1",
                )
                .map_err(&db)?
                .query_row([old], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .optional()
                .map_err(&db)?;
            let Some((family, user_id, expires_at_ms, state)) = found else {
                return Ok(Rotation::Invalid);
            };
            let user = self.read_user(tx, &user_id)?;
            // Disabling revoked the user's tokens; an unexpired one still names the
            // account, so its holder learns why instead of being told to log in again.
            if user.as_ref().is_some_and(|u| u.disabled) && expires_at_ms > new.issued_at_ms {
                self.revoke_family(tx, &family)?;
                return Ok(Rotation::Disabled);
            }
            match state.as_str() {
                "used" => {
                    self.revoke_family(tx, &family)?;
                    return Ok(Rotation::Replayed);
                }
                "live" => {}
                _ => return Ok(Rotation::Invalid),
            }
            if expires_at_ms <= new.issued_at_ms {
                return Ok(Rotation::Invalid);
            }
            let Some(user) = user.filter(|u| !u.disabled) else {
                self.revoke_family(tx, &family)?;
                return Ok(Rotation::Disabled);
            };
            tx.prepare_cached("UPDATE refresh_tokens SET state = 'used' WHERE hash = ?1")
                .map_err(&db)?
                .execute([old])
                .map_err(&db)?;
            self.insert_refresh(tx, new, &family, &user_id)?;
            Ok(Rotation::Rotated(user))
        })
    }

    fn revoke_refresh_family(&self, hash: &str) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            let family: Option<String> = tx
                .prepare_cached("SELECT family FROM refresh_tokens WHERE hash = ?1")
                .map_err(self.db_err())?
                .query_row([hash], |r| r.get(0))
                .optional()
                .map_err(self.db_err())?;
            match family {
                Some(family) => self.revoke_family(tx, &family),
                None => Ok(()),
            }
        })
    }

    fn create_invite(&self, invite: &NewInvite) -> Result<(), StoreError> {
        self.in_transaction(|tx| {
            tx.prepare_cached(
                "INSERT INTO invites (hash, created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3)",
            )
            .map_err(self.db_err())?
            .execute(params![
                invite.hash,
                invite.created_at_ms,
                invite.expires_at_ms
            ])
            .map_err(self.db_err())?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SyncMode;

    fn open() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("t.db"), SyncMode::Normal).expect("open");
        (dir, store)
    }

    fn user(id: &str, origin: Origin) -> UserRecord {
        UserRecord {
            id: id.into(),
            origin,
            display_name: id.to_uppercase(),
            role: Role::Player,
            password_hash: (origin == Origin::Local).then(|| "$argon2id$x".to_string()),
            disabled: false,
            created_at_ms: 1,
        }
    }

    fn token(hash: &str, at: i64) -> NewRefresh {
        NewRefresh {
            hash: hash.into(),
            issued_at_ms: at,
            expires_at_ms: at + 1000,
        }
    }

    #[test]
    fn users_round_trip_and_ids_are_unique() {
        let (_dir, store) = open();
        let alice = user("alice", Origin::Local);
        store.create_user(&alice, None, 1).expect("create");
        assert_eq!(store.user("alice").expect("read"), Some(alice.clone()));
        assert!(matches!(
            store.create_user(&user("alice", Origin::Guest), None, 1),
            Err(StoreError::DuplicateUser { .. })
        ));
        store
            .update_user("alice", &UserChange::Role(Role::Referee))
            .expect("role");
        assert_eq!(
            store.user("alice").expect("read").expect("row").role,
            Role::Referee
        );
        assert!(matches!(
            store.update_user("nobody", &UserChange::Disabled(true)),
            Err(StoreError::UnknownUser { .. })
        ));
        assert_eq!(store.users("", 10).expect("list").len(), 1);
    }

    #[test]
    fn an_invite_is_used_once_and_only_before_it_expires() {
        let (_dir, store) = open();
        let invite = NewInvite {
            hash: "h".into(),
            created_at_ms: 0,
            expires_at_ms: 100,
        };
        store.create_invite(&invite).expect("invite");
        assert!(matches!(
            store.create_user(&user("late", Origin::Local), Some("h"), 100),
            Err(StoreError::InvalidInvite)
        ));
        assert_eq!(store.user("late").expect("read"), None, "rolled back");
        store
            .create_user(&user("bob", Origin::Local), Some("h"), 50)
            .expect("invited");
        assert!(matches!(
            store.create_user(&user("carol", Origin::Local), Some("h"), 60),
            Err(StoreError::InvalidInvite)
        ));
    }

    #[test]
    fn a_replayed_refresh_token_revokes_its_family_only() {
        let (_dir, store) = open();
        store
            .create_user(&user("alice", Origin::Local), None, 1)
            .expect("create");
        store
            .start_refresh_family("alice", &token("a1", 10), 5)
            .expect("a");
        store
            .start_refresh_family("alice", &token("b1", 10), 5)
            .expect("b");
        assert!(matches!(
            store
                .rotate_refresh("a1", &token("a2", 20))
                .expect("rotate"),
            Rotation::Rotated(_)
        ));
        assert_eq!(
            store
                .rotate_refresh("a1", &token("a3", 30))
                .expect("replay"),
            Rotation::Replayed
        );
        assert_eq!(
            store
                .rotate_refresh("a2", &token("a4", 30))
                .expect("revoked"),
            Rotation::Invalid
        );
        assert_eq!(
            store
                .rotate_refresh("a1", &token("a5", 30))
                .expect("replayed again"),
            Rotation::Invalid,
            "the family is already revoked"
        );
        assert!(matches!(
            store
                .rotate_refresh("b1", &token("b2", 30))
                .expect("other family"),
            Rotation::Rotated(_)
        ));
        assert_eq!(
            store
                .rotate_refresh("b2", &token("b3", 2000))
                .expect("expired"),
            Rotation::Invalid
        );
        assert_eq!(
            store
                .rotate_refresh("zz", &token("zz2", 30))
                .expect("unknown"),
            Rotation::Invalid
        );
    }

    #[test]
    fn a_user_keeps_at_most_max_families_and_a_password_change_revokes_all() {
        let (_dir, store) = open();
        store
            .create_user(&user("alice", Origin::Local), None, 1)
            .expect("create");
        for (i, hash) in ["f1", "f2", "f3"].iter().enumerate() {
            store
                .start_refresh_family("alice", &token(hash, 10 + i as i64), 2)
                .expect("family");
        }
        assert_eq!(
            store.rotate_refresh("f1", &token("x", 20)).expect("oldest"),
            Rotation::Invalid
        );
        assert!(matches!(
            store
                .rotate_refresh("f3", &token("f3b", 20))
                .expect("newest"),
            Rotation::Rotated(_)
        ));
        store
            .update_user("alice", &UserChange::Password("$argon2id$y".into()))
            .expect("password");
        assert_eq!(
            store
                .rotate_refresh("f3b", &token("f3c", 30))
                .expect("revoked"),
            Rotation::Invalid
        );
    }

    #[test]
    fn a_disabled_users_unexpired_token_says_so_and_stays_revoked() {
        let (_dir, store) = open();
        store
            .create_user(&user("alice", Origin::Local), None, 1)
            .expect("create");
        store
            .start_refresh_family("alice", &token("a1", 10), 5)
            .expect("family");
        store
            .update_user("alice", &UserChange::Disabled(true))
            .expect("disable");
        assert_eq!(
            store
                .rotate_refresh("a1", &token("a2", 20))
                .expect("disabled"),
            Rotation::Disabled
        );
        assert_eq!(
            store
                .rotate_refresh("a1", &token("a3", 2000))
                .expect("expired"),
            Rotation::Invalid
        );
        store
            .update_user("alice", &UserChange::Disabled(false))
            .expect("enable");
        assert_eq!(
            store
                .rotate_refresh("a1", &token("a4", 30))
                .expect("revoked"),
            Rotation::Invalid
        );
    }

    #[test]
    fn an_external_id_never_takes_a_local_or_guest_row() {
        let (_dir, store) = open();
        store
            .create_user(&user("alice", Origin::Local), None, 1)
            .expect("create");
        assert_eq!(
            store.sight_external("alice", "Alice", 5).expect("look"),
            Sighting::Clash(Origin::Local)
        );
        assert_eq!(
            store.sight_external("ext-1", "Ext", 5).expect("look"),
            Sighting::Admitted
        );
        assert_eq!(
            store.user("ext-1").expect("read").expect("row").origin,
            Origin::External
        );
        store
            .update_user("ext-1", &UserChange::Disabled(true))
            .expect("disable");
        assert_eq!(
            store.sight_external("ext-1", "Ext", 6).expect("look"),
            Sighting::Disabled
        );
    }
}
