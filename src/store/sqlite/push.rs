//! The SQLite side of [`PushStore`].

use rusqlite::{OptionalExtension, Row, Transaction, params};

use super::{DbErr, SqliteStore};
use crate::store::{PushStore, PushSubscription, StoreError, Subscribed};

/// Forgets what would send `account` anything, in the transaction that disables it: its
/// browsers' subscriptions, its mail address, and its notices' place in a digest.
pub(super) fn stop_sending(
    tx: &Transaction<'_>,
    account: &str,
    db: DbErr<'_>,
) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM push_subscriptions WHERE account = ?1",
        "UPDATE mail_prefs SET address = NULL, verified = 0 WHERE account = ?1",
        "UPDATE notices SET digest = 0 WHERE account = ?1 AND digest",
    ] {
        tx.prepare_cached(sql)
            .map_err(db)?
            .execute([account])
            .map_err(db)?;
    }
    Ok(())
}

fn subscription(row: &Row) -> rusqlite::Result<PushSubscription> {
    Ok(PushSubscription {
        account: row.get(0)?,
        endpoint: row.get(1)?,
        p256dh: row.get(2)?,
        auth: row.get(3)?,
        created_ms: row.get(4)?,
    })
}

impl PushStore for SqliteStore {
    fn add_push_subscription(
        &self,
        sub: &PushSubscription,
        max: u32,
    ) -> Result<Subscribed, StoreError> {
        let mut conn = self.lock()?;
        let db = self.db_err();
        let tx = conn.transaction().map_err(&db)?;
        // One connection: a disable is before this transaction or after it (and then
        // forgets what it adds).
        let disabled: Option<bool> = tx
            .prepare_cached("SELECT disabled FROM users WHERE id = ?1")
            .map_err(&db)?
            .query_row(params![sub.account], |row| row.get(0))
            .optional()
            .map_err(&db)?;
        if disabled == Some(true) {
            return Ok(Subscribed::Disabled);
        }
        let known = tx
            .prepare_cached("SELECT 1 FROM push_subscriptions WHERE endpoint = ?1")
            .map_err(&db)?
            .query_row(params![sub.endpoint], |_| Ok(()))
            .optional()
            .map_err(&db)?
            .is_some();
        if !known {
            let held: i64 = tx
                .prepare_cached("SELECT count(*) FROM push_subscriptions WHERE account = ?1")
                .map_err(&db)?
                .query_row(params![sub.account], |row| row.get(0))
                .map_err(&db)?;
            if held >= i64::from(max) {
                return Ok(Subscribed::Full);
            }
        }
        tx.prepare_cached(
            "INSERT INTO push_subscriptions (endpoint, account, p256dh, auth, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (endpoint) DO UPDATE SET account = excluded.account,
                 p256dh = excluded.p256dh, auth = excluded.auth, created_ms = excluded.created_ms",
        )
        .map_err(&db)?
        .execute(params![
            sub.endpoint,
            sub.account,
            sub.p256dh,
            sub.auth,
            sub.created_ms
        ])
        .map_err(&db)?;
        tx.commit().map_err(&db)?;
        Ok(Subscribed::Kept)
    }

    fn push_subscriptions(&self, account: &str) -> Result<Vec<PushSubscription>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT account, endpoint, p256dh, auth, created_ms FROM push_subscriptions
                 WHERE account = ?1 ORDER BY created_ms, endpoint",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(params![account], subscription)
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn remove_push_subscription(
        &self,
        endpoint: &str,
        account: Option<&str>,
    ) -> Result<bool, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let n = conn
            .prepare_cached(
                "DELETE FROM push_subscriptions
                 WHERE endpoint = ?1 AND (?2 IS NULL OR account = ?2)",
            )
            .map_err(&db)?
            .execute(params![endpoint, account])
            .map_err(&db)?;
        Ok(n > 0)
    }
}
