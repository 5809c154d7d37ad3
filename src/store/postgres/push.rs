//! The PostgreSQL side of [`PushStore`].

use tokio_postgres::{Client, Row, Transaction};

use super::{PgStore, col, pg_error};
use crate::store::{PushStore, PushSubscription, StoreError, Subscribed};

/// Forgets what would send `account` anything, in the transaction that disables it: its
/// browsers' subscriptions, its mail address, and its notices' place in a digest.
pub(super) async fn stop_sending(tx: &Transaction<'_>, account: &str) -> Result<(), StoreError> {
    for sql in [
        "DELETE FROM push_subscriptions WHERE account = $1",
        "UPDATE mail_prefs SET address = NULL, verified = false WHERE account = $1",
        "UPDATE notices SET digest = false WHERE account = $1 AND digest",
    ] {
        tx.execute(sql, &[&account]).await.map_err(pg_error)?;
    }
    Ok(())
}

fn subscription(row: &Row) -> Result<PushSubscription, StoreError> {
    Ok(PushSubscription {
        account: col(row, 0)?,
        endpoint: col(row, 1)?,
        p256dh: col(row, 2)?,
        auth: col(row, 3)?,
        created_ms: col(row, 4)?,
    })
}

async fn add(
    client: &mut Client,
    sub: PushSubscription,
    max: u32,
) -> Result<Subscribed, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    // One subscribe of an account at a time, so two at once cannot both pass the count.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('push_subscriptions'), hashtext($1))",
        &[&sub.account],
    )
    .await
    .map_err(pg_error)?;
    // The account's row, shared: a disable under way (which updates the row, then
    // forgets the subscriptions) commits first and is seen here, or waits for this one
    // and forgets what it adds.
    let disabled = tx
        .query_opt(
            "SELECT disabled FROM users WHERE id = $1 FOR SHARE",
            &[&sub.account],
        )
        .await
        .map_err(pg_error)?;
    if disabled.is_some_and(|row| row.get::<_, bool>(0)) {
        return Ok(Subscribed::Disabled);
    }
    let known = tx
        .query_opt(
            "SELECT 1 FROM push_subscriptions WHERE endpoint = $1",
            &[&sub.endpoint],
        )
        .await
        .map_err(pg_error)?
        .is_some();
    if !known {
        let row = tx
            .query_one(
                "SELECT count(*) FROM push_subscriptions WHERE account = $1",
                &[&sub.account],
            )
            .await
            .map_err(pg_error)?;
        if col::<i64>(&row, 0)? >= i64::from(max) {
            return Ok(Subscribed::Full);
        }
    }
    tx.execute(
        "INSERT INTO push_subscriptions (endpoint, account, p256dh, auth, created_ms)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (endpoint) DO UPDATE SET account = excluded.account,
             p256dh = excluded.p256dh, auth = excluded.auth, created_ms = excluded.created_ms",
        &[
            &sub.endpoint,
            &sub.account,
            &sub.p256dh,
            &sub.auth,
            &sub.created_ms,
        ],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)?;
    Ok(Subscribed::Kept)
}

async fn of_account(
    client: &mut Client,
    account: String,
) -> Result<Vec<PushSubscription>, StoreError> {
    let rows = client
        .query(
            "SELECT account, endpoint, p256dh, auth, created_ms FROM push_subscriptions
             WHERE account = $1 ORDER BY created_ms, endpoint",
            &[&account],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(subscription).collect()
}

async fn remove(
    client: &mut Client,
    endpoint: String,
    account: Option<String>,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "DELETE FROM push_subscriptions
             WHERE endpoint = $1 AND ($2::TEXT IS NULL OR account = $2)",
            &[&endpoint, &account],
        )
        .await
        .map_err(pg_error)?;
    Ok(n > 0)
}

impl PushStore for PgStore {
    fn add_push_subscription(
        &self,
        sub: &PushSubscription,
        max: u32,
    ) -> Result<Subscribed, StoreError> {
        let sub = sub.clone();
        self.connections.run(move |c| Box::pin(add(c, sub, max)))
    }

    fn push_subscriptions(&self, account: &str) -> Result<Vec<PushSubscription>, StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(of_account(c, account)))
    }

    fn remove_push_subscription(
        &self,
        endpoint: &str,
        account: Option<&str>,
    ) -> Result<bool, StoreError> {
        let (endpoint, account) = (endpoint.to_owned(), account.map(str::to_owned));
        self.connections
            .run(move |c| Box::pin(remove(c, endpoint, account)))
    }
}
