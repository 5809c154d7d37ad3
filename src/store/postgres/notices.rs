//! The PostgreSQL side of [`NoticeStore`].

use tokio_postgres::{Client, Row};

use super::{PgStore, bigint, col, pg_error};
use crate::store::{MailPrefs, NewNotice, NoticeRow, NoticeStore, StoreError};

const NOTICE_COLUMNS: &str = "id, account, kind, payload, at_ms, read";

fn notice(row: &Row) -> Result<NoticeRow, StoreError> {
    Ok(NoticeRow {
        // Identity values start at 1.
        id: col::<i64>(row, 0)?.max(0) as u64,
        account: col(row, 1)?,
        kind: col(row, 2)?,
        payload: col(row, 3)?,
        at_ms: col(row, 4)?,
        read: col(row, 5)?,
    })
}

async fn add_notice(client: &mut Client, n: NewNotice, keep: u32) -> Result<u64, StoreError> {
    let tx = client.transaction().await.map_err(pg_error)?;
    let row = tx
        .query_one(
            "INSERT INTO notices (account, kind, payload, at_ms, digest)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[&n.account, &n.kind, &n.payload, &n.at_ms, &n.digest],
        )
        .await
        .map_err(pg_error)?;
    let id: i64 = col(&row, 0)?;
    tx.execute(
        "DELETE FROM notices WHERE account = $1 AND id <= (
             SELECT id FROM notices WHERE account = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
        &[&n.account, &i64::from(keep)],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)?;
    Ok(id.max(0) as u64)
}

async fn notices(
    client: &mut Client,
    account: String,
    before: i64,
    limit: u32,
) -> Result<Vec<NoticeRow>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {NOTICE_COLUMNS} FROM notices WHERE account = $1 AND id < $2
                 ORDER BY id DESC LIMIT $3"
            ),
            &[&account, &before, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(notice).collect()
}

async fn unread(client: &mut Client, account: String) -> Result<u64, StoreError> {
    let row = client
        .query_one(
            "SELECT count(*) FROM notices WHERE account = $1 AND NOT read",
            &[&account],
        )
        .await
        .map_err(pg_error)?;
    Ok(col::<i64>(&row, 0)?.max(0) as u64)
}

async fn mark_read(client: &mut Client, account: String, up_to: i64) -> Result<u64, StoreError> {
    client
        .execute(
            "UPDATE notices SET read = true WHERE account = $1 AND id <= $2 AND NOT read",
            &[&account, &up_to],
        )
        .await
        .map_err(pg_error)
}

async fn mail_prefs(client: &mut Client, account: String) -> Result<Option<MailPrefs>, StoreError> {
    let row = client
        .query_opt(
            "SELECT account, address, verified, modes, last_digest_ms FROM mail_prefs
             WHERE account = $1",
            &[&account],
        )
        .await
        .map_err(pg_error)?;
    row.map(|row| {
        Ok(MailPrefs {
            account: col(&row, 0)?,
            address: col(&row, 1)?,
            verified: col(&row, 2)?,
            modes: col(&row, 3)?,
            last_digest_ms: col(&row, 4)?,
        })
    })
    .transpose()
}

async fn set_mail_prefs(client: &mut Client, p: MailPrefs) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO mail_prefs (account, address, verified, modes, last_digest_ms)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (account) DO UPDATE SET address = $2, verified = $3, modes = $4,
                 last_digest_ms = $5",
            &[
                &p.account,
                &p.address,
                &p.verified,
                &p.modes,
                &p.last_digest_ms,
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

async fn digests_due(
    client: &mut Client,
    sent_before_ms: i64,
    limit: u32,
) -> Result<Vec<String>, StoreError> {
    let rows = client
        .query(
            "SELECT DISTINCT n.account FROM notices n
             LEFT JOIN mail_prefs p ON p.account = n.account
             WHERE n.digest AND (p.last_digest_ms IS NULL OR p.last_digest_ms <= $1)
             ORDER BY n.account LIMIT $2",
            &[&sent_before_ms, &i64::from(limit)],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(|row| col(row, 0)).collect()
}

async fn digest_notices(
    client: &mut Client,
    account: String,
) -> Result<Vec<NoticeRow>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {NOTICE_COLUMNS} FROM notices WHERE account = $1 AND digest ORDER BY id"
            ),
            &[&account],
        )
        .await
        .map_err(pg_error)?;
    rows.iter().map(notice).collect()
}

async fn claim_digest(
    client: &mut Client,
    account: String,
    sent_before_ms: i64,
    at_ms: i64,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "INSERT INTO mail_prefs AS p (account, modes, last_digest_ms) VALUES ($1, '{}', $3)
             ON CONFLICT (account) DO UPDATE SET last_digest_ms = $3
             WHERE p.last_digest_ms IS NULL OR p.last_digest_ms <= $2",
            &[&account, &sent_before_ms, &at_ms],
        )
        .await
        .map_err(pg_error)?;
    Ok(n == 1)
}

async fn digest_sent(client: &mut Client, account: String, up_to: i64) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE notices SET digest = false WHERE account = $1 AND id <= $2",
            &[&account, &up_to],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

impl NoticeStore for PgStore {
    fn add_notice(&self, notice: &NewNotice, keep: u32) -> Result<u64, StoreError> {
        let notice = notice.clone();
        self.connections
            .run(move |c| Box::pin(add_notice(c, notice, keep)))
    }

    fn notices(
        &self,
        account: &str,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<NoticeRow>, StoreError> {
        let account = account.to_owned();
        let before = before.map_or(i64::MAX, bigint);
        self.connections
            .run(move |c| Box::pin(notices(c, account, before, limit)))
    }

    fn unread_notices(&self, account: &str) -> Result<u64, StoreError> {
        let account = account.to_owned();
        self.connections.run(move |c| Box::pin(unread(c, account)))
    }

    fn mark_notices_read(&self, account: &str, up_to: u64) -> Result<u64, StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(mark_read(c, account, bigint(up_to))))
    }

    fn mail_prefs(&self, account: &str) -> Result<Option<MailPrefs>, StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(mail_prefs(c, account)))
    }

    fn set_mail_prefs(&self, prefs: &MailPrefs) -> Result<(), StoreError> {
        let prefs = prefs.clone();
        self.connections
            .run(move |c| Box::pin(set_mail_prefs(c, prefs)))
    }

    fn digests_due(&self, sent_before_ms: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.connections
            .run(move |c| Box::pin(digests_due(c, sent_before_ms, limit)))
    }

    fn digest_notices(&self, account: &str) -> Result<Vec<NoticeRow>, StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(digest_notices(c, account)))
    }

    fn claim_digest(
        &self,
        account: &str,
        sent_before_ms: i64,
        at_ms: i64,
    ) -> Result<bool, StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(claim_digest(c, account, sent_before_ms, at_ms)))
    }

    fn digest_sent(&self, account: &str, up_to: u64) -> Result<(), StoreError> {
        let account = account.to_owned();
        self.connections
            .run(move |c| Box::pin(digest_sent(c, account, bigint(up_to))))
    }
}
